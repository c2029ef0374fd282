// The agent calls registered tools too (issue 12): a task answers with a `tool` action, the
// call goes through the same registry, question and TOOL_EXECUTE as chat, and its result is
// the step's result. The world: the real dist/ (with the fake Prompt API for the Nano case),
// the example provider built from the SDK (dist-tools/tabs) beside it, a task on an https
// fixture origin the manifest does not list, and the model scripted at the mock server (or
// in the fake LanguageModel). Every claim is checked on what the person sees (the task view),
// what the provider did (a real tab, the site it loaded) or what the model received.
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { TABS_PROVIDER_DIR, TANDEM_ID } from './lib/browser.mjs';
import { closeSettings, lastUserText, openSettings, scriptedModel, startAgentEnv } from './lib/agent-harness.mjs';
import { page } from './lib/shop-site.mjs';
import { waitUntil } from './lib/panel.mjs';

const NOTES = 'https://notes.tandem.test';
const DOCS = 'https://docs.tandem.test';
/** tab.open of «Tandem Tabs», as the model is told to call it. */
const OPEN = 'tandem_tabs__tab_open';

const docsPage = (name) => () => page(`Docs ${name}`, `<h1>${name}</h1><p>The ${name} page.</p>`);

let env, browser, panel, tab, ui, mock;
const turns = [];
/** The navigator's script for the cloud: call tab.open on `target`, then say done. */
let target = '';
/** The arguments of the call: the URL of `target` unless a test wants others. */
let args = () => ({ url: `${DOCS}/${target}` });
const navigator = (turn) => {
  if (/Result of the previous step: the tool tandem_tabs__tab_open (answered|failed)/.test(turn)) {
    return { action: 'done', success: true, answer: 'Handled the docs tab.' };
  }
  return { action: 'tool', tool: OPEN, arguments: args() };
};
const planner = (turn) => ({ plan: '1. open the docs in a new tab', complete: /navigator says the task is done/.test(turn) });

before(async () => {
  env = await startAgentEnv({
    origin: NOTES,
    routes: { '/': page('Reading list', '<h1>Reading list</h1><p>Read the docs guide next.</p>') },
    more: { [DOCS]: { '/guide': docsPage('guide'), '/declined': docsPage('declined'), '/from-nano': docsPage('from-nano') } },
    key: 'sk-agent-tools-12345678',
    extensionId: TANDEM_ID,
    others: [TABS_PROVIDER_DIR],
    // The fake Prompt API is there from the start; the cloud tests keep Tandem on the cloud.
    fakeLanguageModel: { availability: 'available', delayMs: 1, contextWindow: 32_000 },
    onDevice: 'cloud',
  });
  ({ browser, panel, tab, ui, mock } = env);
  // The provider registered when it started: the user allows it, as a person would.
  const approval = panel.getByRole('group', { name: 'Tool provider' });
  await approval.waitFor({ timeout: 15_000 });
  assert.match(await approval.textContent(), /«Tandem Tabs»/);
  await approval.getByRole('button', { name: 'Allow' }).dispatchEvent('click');
  await openSettings(panel);
  const open = panel.getByRole('list', { name: 'Tool providers' }).getByRole('combobox', { name: 'tab.open from Tandem Tabs' });
  await open.waitFor({ timeout: 15_000 });
  assert.equal(await open.inputValue(), 'ask', 'tab.open is not read-only: the user is asked');
  await closeSettings(panel);
});
after(async () => {
  await env?.close();
});
beforeEach(() => {
  args = () => ({ url: `${DOCS}/${target}` });
  mock.reset();
  mock.setDefault(scriptedModel({ planner, navigator, turns }));
  turns.length = 0;
});

async function until(cond, what, ms = 5000) {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) assert.fail(what());
    await new Promise((r) => setTimeout(r, 50));
  }
}

const openUrls = () => browser.context.pages().map((p) => p.url());
const docsRequests = (p) => env.sites[DOCS].requests.filter((r) => r.path === p);
/** The Approve / Deny of a tool call in the task view, named like chat's. */
const runQuestion = () => panel.getByRole('group', { name: 'Run Open a tab?' });
/** The timeline line holding the card of the call to `url`. */
const toolLine = (url) => ui.list().getByRole('listitem')
  .filter({ has: panel.getByRole('group', { name: 'Tool call Open a tab' }) })
  .filter({ hasText: url });
const navigatorTurns = () => mock.requests.map((r) => lastUserText(r.body)).filter((t) => t.startsWith('ROLE: NAVIGATOR'));

test('a task calls tab.open: asked in the task view, Approve runs it, the tab opens and the model reads the result fenced', async () => {
  target = 'guide';
  await ui.startTask(tab, 'Open the docs guide in a new tab', `${NOTES}/`);
  const question = runQuestion();
  await question.waitFor({ timeout: 20_000 });
  assert.match(await question.textContent(), /Allow «Tandem Tabs» to run Open a tab with url "https:\/\/docs\.tandem\.test\/guide"\?/);
  assert.deepEqual(docsRequests('/guide'), [], 'nothing runs before the user approves');
  assert.ok(!openUrls().includes(`${DOCS}/guide`));

  // The model was told about the tool once, in the system text, and offered the action.
  const first = mock.requests[0].body.messages;
  assert.equal(first[0].role, 'system');
  const system = typeof first[0].content === 'string' ? first[0].content : JSON.stringify(first[0].content);
  assert.match(system, /- tandem_tabs__tab_open: «Tandem Tabs»: Opens a URL in a new tab\./);
  assert.match(system, /"action":"tool","tool":"<tool name>"/);

  await browser.screenshot(panel, 'agent-tool-question');
  await question.getByRole('button', { name: 'Approve' }).dispatchEvent('click');
  await ui.waitStatus(/^Done/);

  // The provider really opened it: a tab shows the page, and the site served it.
  await until(() => openUrls().includes(`${DOCS}/guide`), () => `${openUrls().join(', ')} ${JSON.stringify(env.sites[DOCS].requests.map((r) => r.path))}`);
  assert.equal(docsRequests('/guide').length, 1);

  // The next navigator request carries the provider's answer, inside the fence.
  const after = navigatorTurns().find((t) => /Result of the previous step: the tool/.test(t));
  assert.ok(after, navigatorTurns().join('\n---\n'));
  assert.match(after, /Result of the previous step: the tool tandem_tabs__tab_open answered:\n⟦untrusted data: result of tab\.open from Tandem Tabs⟧\nOpened https:\/\/docs\.tandem\.test\/guide in a new tab \(id \d+\)\.\n⟦\/untrusted data⟧/);
  // The system text was sent once and is the same in every request of the task.
  const systems = new Set(mock.requests.map((r) => JSON.stringify(r.body.messages[0])));
  assert.equal(systems.size, 1, 'one system text per task');

  // The timeline shows the step: tool, provider, arguments, result.
  const line = toolLine('docs.tandem.test/guide');
  await line.waitFor();
  const text = await line.textContent();
  assert.match(text, /Tool Open a tab from Tandem Tabs/);
  assert.ok(text.includes('{"url":"https://docs.tandem.test/guide"}'), text);
  assert.match(await line.getByLabel('Tool result').textContent(), /^Done: Opened https:\/\/docs\.tandem\.test\/guide in a new tab/);
  assert.match(text, /· OpenAI-compatible/);
  assert.equal(await runQuestion().count(), 0, 'the question is gone');
  await browser.screenshot(panel, 'agent-tool-approved');
});

test('a tool on Ask, denied in the task view: the provider does nothing and the model is told it was declined', async () => {
  target = 'declined';
  await ui.startTask(tab, 'Open the declined docs in a new tab', `${NOTES}/`);
  const question = runQuestion();
  await question.waitFor({ timeout: 20_000 });
  await question.getByRole('button', { name: 'Deny' }).dispatchEvent('click');
  await ui.waitStatus(/^Done/);
  assert.ok(!openUrls().includes(`${DOCS}/declined`), openUrls().join(', '));
  assert.deepEqual(docsRequests('/declined'), [], 'the provider saw nothing');
  const told = navigatorTurns().find((t) => /Result of the previous step: the tool/.test(t));
  assert.ok(told, navigatorTurns().join('\n---\n'));
  assert.match(told, /Result of the previous step: the tool tandem_tabs__tab_open failed: The user declined to run tab\.open\.\n/);
  const line = toolLine('docs.tandem.test/declined');
  await line.waitFor();
  assert.match(await line.getByLabel('Tool result').textContent(), /^Failed: The user declined to run tab\.open\./);
});

test('Cancel while the tool call waits for the user: the task ends, nothing runs, the question goes away', async () => {
  target = 'guide';
  const served = docsRequests('/guide').length;
  await ui.startTask(tab, 'Open the docs guide again', `${NOTES}/`);
  await runQuestion().waitFor({ timeout: 20_000 });
  await ui.button('Cancel').dispatchEvent('click');
  await ui.waitStatus(/^Cancelled/);
  await runQuestion().waitFor({ state: 'detached' });
  assert.equal(docsRequests('/guide').length, served, 'the provider was not called');
  const stored = await ui.stored();
  assert.equal(stored.pending ?? null, null);
});

test('arguments that do not fit the tool\'s schema are refused before anyone is asked; the model reads why', async () => {
  args = () => ({ url: 42 });
  const before = openUrls().length;
  await ui.startTask(tab, 'Open something odd in a new tab', `${NOTES}/`);
  await ui.waitStatus(/^Done/);
  const told = navigatorTurns().find((t) => /Result of the previous step: the tool/.test(t));
  assert.ok(told, navigatorTurns().join('\n---\n'));
  assert.match(told, /Result of the previous step: the tool tandem_tabs__tab_open failed: params\.url: expected string\n/);
  assert.equal(openUrls().length, before, 'no tab opened');
  const line = ui.list().getByRole('listitem').filter({ has: panel.getByRole('group', { name: 'Tool call Open a tab' }) }).filter({ hasText: '{"url":42}' });
  await line.waitFor();
  assert.match(await line.getByLabel('Tool result').textContent(), /^Failed: params\.url: expected string/);
});

test('on Gemini Nano the same action runs an allowed tool without asking, and the result is the next prompt\'s, fenced', async () => {
  // The user allows tab.open in Settings → Tools and keeps Tandem on the device.
  await openSettings(panel);
  await panel.getByRole('list', { name: 'Tool providers' }).getByRole('combobox', { name: 'tab.open from Tandem Tabs' }).selectOption('allow');
  await waitUntil(panel, async () => {
    const { toolRegistry } = await chrome.storage.local.get('toolRegistry');
    return Object.values(toolRegistry?.providers ?? {}).some((p) => JSON.stringify(p).includes('"tab.open":"allow"'));
  });
  await panel.getByLabel('On-device model', { exact: true }).selectOption('nano');
  await panel.getByRole('button', { name: 'Save' }).click();
  await panel.getByRole('status', { name: 'Settings status' }).filter({ hasText: 'Saved' }).waitFor();
  await closeSettings(panel);
  await browser.serviceWorker.evaluate(() => {
    const cfg = globalThis.__fakeLanguageModel;
    cfg.calls.length = 0;
    cfg.reply = (turn) => JSON.stringify(turn.startsWith('ROLE: PLANNER')
      ? { plan: '1. open the docs', complete: /navigator says the task is done/.test(turn) }
      : /the tool tandem_tabs__tab_open answered/.test(turn)
        ? { action: 'done', success: true, answer: 'Opened.' }
        : { action: 'tool', tool: 'tandem_tabs__tab_open', arguments: { url: 'https://docs.tandem.test/from-nano' } });
  });
  await ui.startTask(tab, 'Open the docs in a new tab, on the device', `${NOTES}/`);
  await ui.waitStatus(/^Done/);
  await until(() => openUrls().includes(`${DOCS}/from-nano`), () => openUrls().join(', '));
  assert.equal(docsRequests('/from-nano').length, 1);
  assert.equal(mock.requests.length, 0, 'nothing went to the cloud');

  const calls = await browser.serviceWorker.evaluate(() => globalThis.__fakeLanguageModel.calls);
  const created = calls.filter((c) => c.method === 'create');
  assert.equal(created.length, 1, 'one on-device session for the task');
  const initial = JSON.stringify(created[0].options.initialPrompts ?? []);
  assert.ok(initial.includes('- tandem_tabs__tab_open: «Tandem Tabs»: Opens a URL in a new tab.'), 'the tools are in the initial prompts');
  const prompts = calls.filter((c) => c.method.startsWith('prompt'));
  const navigatorPrompts = prompts.filter((c) => JSON.stringify(c.input).includes('ROLE: NAVIGATOR'));
  assert.ok(navigatorPrompts.length >= 2, JSON.stringify(prompts.map((c) => c.input)));
  assert.deepEqual(navigatorPrompts[0].options.responseConstraint.properties.tool.enum.includes(OPEN), true, 'Nano may name only the listed tools');
  const next = navigatorPrompts.map((c) => (typeof c.input === 'string' ? c.input : JSON.stringify(c.input))).find((t) => t.includes('the tool tandem_tabs__tab_open answered'));
  assert.ok(next, 'a prompt carries the result');
  assert.ok(next.includes('⟦untrusted data: result of tab.open from Tandem Tabs⟧'), next);
  assert.ok(next.includes('Opened https://docs.tandem.test/from-nano in a new tab'), next);

  const line = toolLine('docs.tandem.test/from-nano');
  await line.waitFor();
  assert.match(await line.textContent(), /· Gemini Nano/);
  assert.equal(await runQuestion().count(), 0, 'an allowed tool is not asked about');
});
