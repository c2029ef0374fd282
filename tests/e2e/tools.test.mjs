// Tools from other extensions, end to end: the real dist/, the example provider built from
// the SDK (dist-tools/tabs), and an unapproved "stranger" extension, in one Chromium. The
// model is a local server speaking OpenAI's wire format, scripted to call tools; every claim
// is checked on what the user sees (the panel, the tabs) and on what the server received.
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchExtension } from './lib/browser.mjs';
import { startMockProvider } from './lib/mock-provider.mjs';
import { lastAnswer as lastAnswerOf, openChatMode, sendMessage, toolProviders, useProvider, waitIdle, waitUntil } from './lib/panel.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const PROVIDER_DIR = path.join(repoRoot, 'dist-tools', 'tabs');
const TANDEM_ID = 'bkkhgefimkkanagkjaoehnjcmpolnojf';
const SITE = 'https://docs.tandem.test';
const KEY = 'sk-tools-abcdefgh12345678';

let browser, mock, panel, strangerDir, stranger, providerId;

before(async () => {
  // Ollama is configured for extensions (OLLAMA_ORIGINS), as its users must.
  mock = await startMockProvider({ delayMs: 5, ollamaOrigins: ['chrome-extension://*'] });
  strangerDir = await mkdtemp(path.join(os.tmpdir(), 'tandem-stranger-'));
  await writeFile(path.join(strangerDir, 'manifest.json'), JSON.stringify({
    manifest_version: 3, name: 'Stranger', version: '1.0', background: { service_worker: 'stranger.js' },
  }));
  await writeFile(path.join(strangerDir, 'stranger.js'), '// its messages are sent by the test\n');
  browser = await launchExtension({ extensionId: TANDEM_ID, others: [PROVIDER_DIR, strangerDir] });
  assert.equal(browser.extensionId, TANDEM_ID, 'the manifest key pins Tandem\'s id');
  const { context } = browser;
  const find = (pred) => context.serviceWorkers().find(pred) ?? context.waitForEvent('serviceworker', { predicate: pred });
  const provider = await find((w) => w.url().endsWith('/background.js') && !w.url().startsWith(`chrome-extension://${TANDEM_ID}/`));
  providerId = new URL(provider.url()).host;
  stranger = await find((w) => w.url().endsWith('/stranger.js'));
  await context.route(`${SITE}/**`, (route) => route.fulfill({
    status: 200, contentType: 'text/html', body: `<!doctype html><title>Docs ${new URL(route.request().url()).pathname}</title><h1>Docs</h1>`,
  }));
  panel = await browser.openPanel();
  await useProvider(panel, { baseUrl: `${mock.url}/v1`, model: 'gpt-test', key: KEY, onDevice: 'cloud' });
});

after(async () => {
  await browser?.close();
  await mock?.close();
  if (strangerDir) await rm(strangerDir, { recursive: true, force: true });
});

beforeEach(() => mock.reset());

const approval = () => panel.getByRole('group', { name: 'Tool provider' });
const registry = () => panel.evaluate(() => chrome.storage.local.get('toolRegistry').then((x) => x.toolRegistry ?? { providers: {} }));
const openTabs = () => browser.context.pages().map((p) => p.url());

async function until(cond, what, ms = 5000) {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) assert.fail(what());
    await new Promise((r) => setTimeout(r, 50));
  }
}

const ask = (text) => sendMessage(panel, text);
const idle = () => waitIdle(panel);
const lastAnswer = () => lastAnswerOf(panel);

test('a provider\'s first registration asks the user; Allow lists its tools in Settings with their policies', async () => {
  // The provider registered when it started, before anyone approved it: it is held.
  await approval().waitFor();
  const text = await approval().textContent();
  assert.match(text, /«Tandem Tabs» \(extension [a-p]{32}\) wants to give Tandem 4 tools: tab\.list, tab\.open, tab\.close, tab\.group/);
  let stored = await registry();
  assert.equal(stored.providers[providerId]?.decision, 'pending');
  await approval().getByRole('button', { name: 'Allow' }).click();
  await approval().waitFor({ state: 'hidden' });
  // ORCHESTRATOR_READY → the provider registers again, this time for real.
  const tools = (await toolProviders(panel));
  await tools.getByRole('combobox', { name: 'tab.open from Tandem Tabs' }).waitFor();
  assert.equal(await tools.getByRole('combobox', { name: 'tab.open from Tandem Tabs' }).inputValue(), 'ask', 'not read-only: Ask');
  assert.equal(await tools.getByRole('combobox', { name: 'tab.list from Tandem Tabs' }).inputValue(), 'allow', 'read-only: Allow');
  stored = await registry();
  assert.equal(stored.providers[providerId].decision, 'allowed');
});

test('a read-only tool runs at once: the result goes back to the model, the card shows it, the answer streams', async () => {
  const page = await browser.context.newPage();
  await page.goto(`${SITE}/list-me`);
  mock.setDefault({ reply: 'There are several tabs open.' });
  const offered = mock.waitForRequest((r) => (r.tools ?? []).length > 0);
  await ask('Which tabs are open?');
  const first = await offered;
  const listName = first.tools.find((t) => t.endsWith('tab_list'));
  assert.ok(listName, first.tools.join(', '));
  await idle();
  // Now with the name known: a turn that calls it.
  mock.reset();
  mock.script({ toolCall: { name: listName, arguments: {} } });
  mock.setDefault({ reply: 'You have the docs page open.' });
  const followUp = mock.waitForRequest((r) => (r.toolResults ?? []).length > 0, 15000);
  await ask('List my tabs with the tool.');
  const second = await followUp;
  const result = second.toolResults[0];
  assert.ok(result.content.includes(`${SITE}/list-me`), `the tool's real answer reached the model: ${result.content}`);
  assert.ok(result.content.includes('⟦untrusted data'), 'fenced as outside data');
  await idle();
  const answer = lastAnswer();
  await answer.getByText('You have the docs page open.').waitFor();
  const card = answer.getByRole('group', { name: 'Tool call List tabs' });
  assert.match(await card.textContent(), /Tandem Tabs/);
  assert.match(await card.getByLabel('Tool result').textContent(), /^Done/);
  await page.close();
});

test('Ask → Approve opens the tab; Ask → Deny does not, and the model is told', async () => {
  mock.setDefault({ reply: 'ok' });
  const probe = mock.waitForRequest((r) => (r.tools ?? []).length > 0);
  await ask('ping');
  const openName = (await probe).tools.find((t) => t.endsWith('tab_open'));
  await idle();

  mock.reset();
  mock.script({ toolCall: { name: openName, arguments: { url: `${SITE}/approved` } } });
  mock.setDefault({ reply: 'Opened it.' });
  const back = mock.waitForRequest((r) => (r.toolResults ?? []).length > 0, 20000);
  await ask('Open the docs in a new tab.');
  const question = lastAnswer().getByRole('group', { name: 'Run Open a tab?' });
  await question.waitFor();
  assert.match(await question.textContent(), /approved/);
  assert.ok(!openTabs().some((u) => u.endsWith('/approved')), 'nothing opens before the user approves');
  await question.getByRole('button', { name: 'Approve' }).click();
  const sent = await back;
  assert.equal(sent.toolResults[0].isError, false);
  await idle();
  await until(() => openTabs().some((u) => u === `${SITE}/approved`), () => `the tab opened: ${openTabs().join(', ')}`);

  mock.reset();
  mock.script({ toolCall: { name: openName, arguments: { url: `${SITE}/denied` } } });
  mock.setDefault({ reply: 'Understood.' });
  const refused = mock.waitForRequest((r) => (r.toolResults ?? []).length > 0, 20000);
  await ask('Open the other page too.');
  const second = lastAnswer().getByRole('group', { name: 'Run Open a tab?' });
  await second.waitFor();
  await second.getByRole('button', { name: 'Deny' }).click();
  const told = await refused;
  assert.match(told.toolResults[0].content, /declined/i);
  await idle();
  assert.ok(!openTabs().some((u) => u.endsWith('/denied')), 'a denied call never reaches the provider');
});

test('arguments that fail the schema go back to the model as an error; the provider is not called', async () => {
  mock.setDefault({ reply: 'ok' });
  const probe = mock.waitForRequest((r) => (r.tools ?? []).length > 0);
  await ask('ping again');
  const openName = (await probe).tools.find((t) => t.endsWith('tab_open'));
  await idle();
  mock.reset();
  mock.script({ toolCall: { name: openName, arguments: { url: 42 } } });
  mock.setDefault({ reply: 'Sorry.' });
  const back = mock.waitForRequest((r) => (r.toolResults ?? []).length > 0, 15000);
  const tabsBefore = openTabs().length;
  await ask('Open something odd.');
  const sent = await back;
  assert.match(sent.toolResults[0].content, /url: expected string/);
  await idle();
  assert.equal(openTabs().length, tabsBefore, 'no tab opened');
  const card = lastAnswer().getByRole('group', { name: 'Tool call Open a tab' });
  assert.match(await card.getByLabel('Tool result').textContent(), /^Failed/);
});

test('an extension the user denied gets nothing: no tools, no prompt the second time, no TOOL_EXECUTE served', async () => {
  const send = (message) => stranger.evaluate(([id, m]) => chrome.runtime.sendMessage(id, m), [TANDEM_ID, message]);
  const tool = { name: 'steal', label: 'Steal', description: 'x', parameters: { type: 'object', properties: {} } };
  const firstAnswer = await send({ type: 'REGISTER_TOOLS', name: 'Tandem Tabs', tools: [tool] });
  assert.equal(firstAnswer.ok, false, 'held until the user decides');
  await approval().waitFor();
  assert.match(await approval().textContent(), /«Tandem Tabs» \(extension [a-p]{32}\)/);
  assert.ok(!(await approval().textContent()).includes(providerId), 'told apart from the real one by its id');
  await approval().getByRole('button', { name: 'Deny' }).click();
  await approval().waitFor({ state: 'hidden' });
  const again = await send({ type: 'REGISTER_TOOLS', tools: [tool] });
  assert.equal(again.ok, false);
  assert.equal(await approval().isVisible(), false, 'a denied provider is not asked about again');
  const execute = await send({ type: 'TOOL_EXECUTE', toolName: 'tab.open', params: { url: `${SITE}/stranger` }, toolCallId: 'x' });
  assert.equal(execute.ok, false);
  // Whatever it sent, the model is never offered its tool.
  mock.setDefault({ reply: 'ok' });
  const probe = mock.waitForRequest((r) => r.body?.messages?.at(-1)?.content === 'anything from the stranger?');
  await ask('anything from the stranger?');
  const request = await probe;
  assert.ok(!(request.tools ?? []).some((t) => t.includes('steal')), (request.tools ?? []).join(', '));
  await idle();
  assert.ok(!openTabs().some((u) => u.endsWith('/stranger')));
});

test('after Tandem\'s worker is stopped, it wakes, says ORCHESTRATOR_READY, the provider registers again and a call works', async () => {
  // The stored registration loses the provider's tools, as if the provider had changed
  // while Tandem slept: only a fresh registration brings them back.
  await panel.evaluate(async (id) => {
    const { toolRegistry } = await chrome.storage.local.get('toolRegistry');
    toolRegistry.providers[id].tools = [];
    await chrome.storage.local.set({ toolRegistry });
  }, providerId);
  await browser.stopServiceWorker();
  // Any event wakes it; the panel's next message does.
  mock.setDefault({ reply: 'ok' });
  await ask('wake up');
  await browser.waitForServiceWorker();
  await waitUntil(panel, async (id) => {
    const { toolRegistry } = await chrome.storage.local.get('toolRegistry');
    return (toolRegistry?.providers?.[id]?.tools ?? []).length === 4;
  }, providerId, { timeout: 15000 });
  await idle();
  mock.reset();
  mock.setDefault({ reply: 'ok' });
  const probe = mock.waitForRequest((r) => (r.tools ?? []).length > 0);
  await ask('and now?');
  const name = (await probe).tools.find((t) => t.endsWith('tab_list'));
  await idle();
  mock.reset();
  mock.script({ toolCall: { name, arguments: {} } });
  mock.setDefault({ reply: 'Listed.' });
  const back = mock.waitForRequest((r) => (r.toolResults ?? []).length > 0, 15000);
  await ask('List them again.');
  const sent = await back;
  assert.equal(sent.toolResults[0].isError, false, sent.toolResults[0].content);
  await idle();
});

test('the API key reaches no tool provider and no tool card', async () => {
  const text = await panel.locator('#messages').textContent();
  assert.ok(!text.includes(KEY));
  const stored = JSON.stringify(await registry());
  assert.ok(!stored.includes(KEY));
});

// Every wire format: the tools are declared in its shape, the call comes back in its shape,
// the provider runs it, and the result goes back in its shape (the mock reads all four).
const formats = [
  { label: 'Anthropic', base: () => `${mock.url}/v1`, model: 'claude-sonnet-4-5' },
  { label: 'Gemini', base: () => `${mock.url}/v1beta`, model: 'gemini-2.5-flash' },
  { label: 'Ollama', base: () => mock.url, model: 'llama3.2' },
  { label: 'OpenAI', base: () => `${mock.url}/v1`, model: 'gpt-4o-mini' },
];
for (const f of formats) {
  test(`a chat on ${f.label} calls a tool and answers from its result`, async () => {
    await useProvider(panel, { provider: f.label, baseUrl: f.base(), model: f.model, key: KEY });
    const page = await browser.context.newPage();
    await page.goto(`${SITE}/${f.label.toLowerCase()}`);
    mock.setDefault({ reply: 'ok' });
    const probe = mock.waitForRequest((r) => (r.tools ?? []).length > 0);
    await ask(`which tools on ${f.label}?`);
    const name = (await probe).tools.find((t) => t.endsWith('tab_list'));
    assert.ok(name, `declared in ${f.label}'s shape: ${(await probe).tools}`);
    await idle();
    mock.reset();
    mock.script({ reply: 'Let me look.', toolCall: { name, arguments: {} } });
    mock.setDefault({ reply: `Your ${f.label} tab is open.` });
    const back = mock.waitForRequest((r) => (r.toolResults ?? []).length > 0, 15000);
    await ask(`List my tabs via ${f.label}.`);
    const sent = await back;
    assert.ok(sent.toolResults[0].content.includes(`${SITE}/${f.label.toLowerCase()}`), sent.toolResults[0].content);
    await idle();
    const answer = lastAnswer();
    await answer.getByText(`Your ${f.label} tab is open.`).waitFor();
    assert.match(await answer.getByRole('group', { name: 'Tool call List tabs' }).getByLabel('Tool result').textContent(), /^Done/);
    await page.close();
  });
}

// Firebase AI Logic: the worker plans the turn and runs the tools, the panel performs each
// HTTP exchange (the relay); tool calls and results travel in Gemini's shape.
test('a chat on Firebase AI Logic calls a tool through the panel relay and answers from its result', async () => {
  await browser.context.route('https://firebasevertexai.googleapis.com/**', async (route) => {
    const req = route.request();
    const url = new URL(req.url());
    const res = await fetch(`${mock.url}${url.pathname}${url.search}`, { method: 'POST', headers: req.headers(), body: req.postData() });
    await route.fulfill({ status: res.status, headers: Object.fromEntries(res.headers), body: Buffer.from(await res.arrayBuffer()) }).catch(() => {});
  });
  const settings = panel.getByRole('region', { name: 'Settings' });
  if (!(await settings.isVisible())) await panel.getByRole('button', { name: 'Settings' }).click();
  await panel.getByLabel('Provider', { exact: true }).selectOption({ label: 'Firebase AI Logic' });
  await panel.getByLabel('Project ID').fill('tandem-tools');
  await panel.getByLabel('App ID').fill('1:123:web:tools');
  await panel.getByLabel('Model', { exact: true }).fill('gemini-2.5-flash');
  await panel.getByLabel('API key').fill('AIzaFirebaseToolsKey1234');
  await panel.getByRole('button', { name: 'Save' }).click();
  await panel.getByRole('status', { name: 'Settings status' }).filter({ hasText: 'Saved' }).waitFor();
  const page = await browser.context.newPage();
  await page.goto(`${SITE}/firebase`);
  mock.setDefault({ reply: 'ok' });
  const probe = mock.waitForRequest((r) => (r.tools ?? []).length > 0);
  await ask('which tools on Firebase?');
  const first = await probe;
  assert.match(first.path, /^\/v1beta\/projects\/tandem-tools\/models\/gemini-2\.5-flash:streamGenerateContent/);
  const name = first.tools.find((t) => t.endsWith('tab_list'));
  assert.ok(name, `declared as functionDeclarations: ${first.tools}`);
  await idle();
  mock.reset();
  mock.script({ toolCall: { name, arguments: {} } });
  mock.setDefault({ reply: 'Your Firebase tab is open.' });
  const back = mock.waitForRequest((r) => (r.toolResults ?? []).length > 0, 15000);
  await ask('List my tabs via Firebase.');
  const sent = await back;
  assert.ok(sent.toolResults[0].content.includes(`${SITE}/firebase`), sent.toolResults[0].content);
  assert.ok(sent.toolResults[0].content.includes('⟦untrusted data'), 'fenced as outside data');
  await idle();
  const answer = lastAnswer();
  await answer.getByText('Your Firebase tab is open.').waitFor();
  assert.match(await answer.getByRole('group', { name: 'Tool call List tabs' }).getByLabel('Tool result').textContent(), /^Done/);
  await page.close();
});
