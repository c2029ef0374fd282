// Tools on Gemini Nano, end to end: the real dist/ with the fake Prompt API (the machines
// have no model), the example provider built from the SDK (dist-tools/tabs), and a local
// server speaking OpenAI's wire format as the cloud. Nano has no native tool calling in
// stable Chrome: a call is a reply constrained to {"tool", "arguments"} or {"answer"}, and
// the result goes back on the same session. Every claim is checked on what the user sees
// (the panel, the tabs), on what the fake Nano was asked, and on what the server received.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchExtension } from './lib/browser.mjs';
import { startMockProvider } from './lib/mock-provider.mjs';
import { lastAnswer as lastAnswerOf, nanoReplies as scriptNano, openChatMode, openSettings, sendMessage, toolProviders, useProvider, waitIdle } from './lib/panel.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const PROVIDER_DIR = path.join(repoRoot, 'dist-tools', 'tabs');
const TANDEM_ID = 'bkkhgefimkkanagkjaoehnjcmpolnojf';
const SITE = 'https://docs.tandem.test';

let browser, mock, panel, site, openName, learned;

before(async () => {
  mock = await startMockProvider({ delayMs: 5 });
  browser = await launchExtension({
    extensionId: TANDEM_ID,
    others: [PROVIDER_DIR],
    fakeLanguageModel: { availability: 'available', delayMs: 5 },
  });
  await browser.context.route(`${SITE}/**`, (route) => route.fulfill({
    status: 200, contentType: 'text/html', body: `<!doctype html><title>Docs ${new URL(route.request().url()).pathname}</title><h1>Docs</h1>`,
  }));
  panel = await browser.openPanel();
  await openSettings(panel);
  // On-device first (the default), the cloud when Nano cannot.
  assert.equal(await panel.getByLabel('On-device model', { exact: true }).inputValue(), 'auto');
  await useProvider(panel, { baseUrl: `${mock.url}/v1`, model: 'cloud-model', key: 'sk-cloud-key-123456' });
  // The provider asked to register when it started: the user allows it.
  const approval = panel.getByRole('group', { name: 'Tool provider' });
  await approval.getByRole('button', { name: 'Allow' }).click();
  await approval.waitFor({ state: 'hidden' });
  await (await toolProviders(panel)).getByRole('combobox', { name: 'tab.open from Tandem Tabs' }).waitFor();
  // The conversation belongs to this tab; the panel shows the conversation of the active one.
  site = await browser.context.newPage();
  await site.goto(`${SITE}/start`);
  await backToConversation();
});

after(async () => {
  await browser?.close();
  await mock?.close();
});

const fake = (fn, arg) => browser.serviceWorker.evaluate(fn, arg);
const fakeCalls = () => fake(() => globalThis.__fakeLanguageModel.calls);
const openTabs = () => browser.context.pages().map((p) => p.url());
const lastAnswer = () => lastAnswerOf(panel);
const idle = () => waitIdle(panel);
const policy = async () => (await toolProviders(panel)).getByRole('combobox', { name: 'tab.open from Tandem Tabs' });

/** The tab the tool opened comes to the front: the conversation's tab goes back there. */
async function backToConversation() {
  await site.bringToFront();
  await openChatMode(panel);
  await panel.getByRole('status', { name: 'Memory' }).filter({ hasText: 'Remembered for docs.tandem.test in this tab' }).waitFor();
}

const ask = (text) => sendMessage(panel, text);

async function until(cond, what, ms = 10000) {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) assert.fail(what());
    await new Promise((r) => setTimeout(r, 50));
  }
}

const nanoReplies = (script) => scriptNano(browser.serviceWorker, script);

/**
 * The model-facing name of tab.open, as Nano's session instructions list it: a first message
 * creates the conversation's session with the tools described (once per file). Resolves with
 * that session's number and its system prompt.
 */
async function learnToolName() {
  if (learned) return learned;
  await nanoReplies({ answer: 'unused' });
  await ask('hello device');
  await lastAnswer().getByText('You said: hello device', { exact: true }).waitFor();
  await idle();
  assert.equal(await lastAnswer().locator('.text').textContent(), 'You said: hello device', 'the answer\'s text, not its JSON');
  const calls = await fakeCalls();
  const creates = calls.filter((c) => c.method === 'create');
  assert.equal(creates.length, 1, 'one session for the conversation');
  const system = creates[0].options.initialPrompts[0].content;
  openName = system.match(/- (\S+tab_open): /)?.[1];
  assert.ok(openName, `the tools are described to Nano: ${system}`);
  learned = { conversation: calls.find((c) => c.input === 'hello device').session, system };
  return learned;
}

test('on Nano, a chat turn calls tab.open: the tab opens, the result goes back on the same session, the answer and the card show', async () => {
  await (await policy()).selectOption('allow');
  const { conversation, system } = await learnToolName();
  assert.match(system, /⟦untrusted[^⟧]*⟧[\s\S]*tab_open[\s\S]*⟦\/untrusted/, 'the tool list is fenced as outside data');

  const url = `${SITE}/nano-opened`;
  await nanoReplies({
    calls: { 'Open the docs on the device.': { tool: openName, arguments: { url } } },
    answer: 'I opened the docs in a new tab for you.',
  });
  const seen = (await fakeCalls()).length;
  await ask('Open the docs on the device.');
  await until(() => openTabs().includes(url), () => `the tab opened: ${openTabs().join(', ')}`);
  // What the panel shows now is the conversation as the tab's session memory recorded it,
  // tool card included.
  await backToConversation();
  const answer = lastAnswer();
  await answer.getByText('I opened the docs in a new tab for you.').waitFor();
  await idle();
  assert.equal(await answer.locator('.text').textContent(), 'I opened the docs in a new tab for you.', 'the answer\'s text, not its JSON');
  assert.match(await answer.textContent(), /via Gemini Nano \(on device\)/);
  const card = answer.getByRole('group', { name: 'Tool call Open a tab' });
  assert.match(await card.textContent(), /Tandem Tabs/);
  assert.match(await card.getByLabel('Tool result').textContent(), /^Done/);

  const calls = (await fakeCalls()).slice(seen).filter((c) => c.method !== 'availability');
  assert.deepEqual(calls.map((c) => c.method), ['promptStreaming', 'promptStreaming'], 'no new session, nothing destroyed');
  const [turn, result] = calls;
  assert.equal(turn.session, conversation, 'the conversation\'s session continues');
  assert.equal(result.session, turn.session, 'the result goes back on the same session');
  assert.equal(turn.input, 'Open the docs on the device.');
  assert.ok(turn.options.responseConstraint, 'the reply is constrained to a call or an answer');
  assert.ok(JSON.stringify(turn.options.responseConstraint).includes(openName));
  assert.match(result.input, new RegExp(`^Result of ${openName}:`));
  assert.ok(result.input.includes(url) && result.input.includes('(id '), `the provider's real answer: ${result.input}`);
  assert.ok(result.input.includes('⟦untrusted'), 'fenced as outside data');
  assert.equal(mock.requests.length, 0, 'nothing went to the cloud');
});

test('Nano destroyed between the tool call and the answer: the cloud continues from the call and its result, and the tool runs once', async () => {
  await learnToolName();
  await panel.getByRole('button', { name: 'Clear conversation' }).click();
  await (await policy()).selectOption('ask');
  mock.reset();
  mock.setDefault({ reply: 'The cloud finished it: the tab is open.' });
  const url = `${SITE}/failover`;
  await nanoReplies({
    calls: { 'Open the failover docs.': { tool: openName, arguments: { url } } },
    answer: 'Nano never gets to say this.',
  });
  const seen = (await fakeCalls()).length;
  const cloud = mock.waitForRequest(() => true, 20000);
  await ask('Open the failover docs.');
  // The call waits for the user; meanwhile the on-device session is destroyed.
  const question = lastAnswer().getByRole('group', { name: 'Run Open a tab?' });
  await question.waitFor();
  await fake(() => globalThis.__fakeLanguageModel.sessions.at(-1).destroy());
  await question.getByRole('button', { name: 'Approve' }).click();
  const request = await cloud;
  await until(() => openTabs().includes(url), () => `the tab opened: ${openTabs().join(', ')}`);
  await backToConversation();

  const messages = request.body.messages;
  const assistant = messages.filter((m) => m.role === 'assistant' && (m.tool_calls ?? []).length > 0);
  assert.equal(assistant.length, 1, JSON.stringify(messages));
  const call = assistant[0].tool_calls[0];
  assert.equal(call.function.name, openName);
  assert.deepEqual(JSON.parse(call.function.arguments), { url });
  assert.equal(request.toolResults.length, 1);
  assert.equal(request.toolResults[0].id, call.id, 'the result answers that call');
  assert.ok(request.toolResults[0].content.includes(url), request.toolResults[0].content);
  assert.ok(request.toolResults[0].content.includes('⟦untrusted'), 'fenced as outside data');
  assert.equal(messages.filter((m) => m.role === 'user').at(-1).content, 'Open the failover docs.', 'the user\'s turn comes before its call');

  const answer = lastAnswer();
  await answer.getByText('The cloud finished it: the tab is open.').waitFor();
  await idle();
  assert.match(await answer.textContent(), /via OpenAI-compatible/);
  assert.match(await answer.getByRole('group', { name: 'Tool call Open a tab' }).getByLabel('Tool result').textContent(), /^Done/);
  assert.equal(mock.requests.length, 1, 'one cloud request finished the turn');
  assert.equal(openTabs().filter((u) => u === url).length, 1, 'the provider ran the call once');

  const calls = (await fakeCalls()).slice(seen);
  const prompts = calls.filter((c) => c.method.startsWith('prompt'));
  assert.deepEqual(prompts.map((c) => c.input), ['Open the failover docs.'], 'the result never reached the destroyed session, nor a new one');
});
