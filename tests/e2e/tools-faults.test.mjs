// Tool providers that misbehave, end to end: a provider extension (written here, loaded beside
// the real dist/) that takes TOOL_EXECUTE and never answers. A call to it must end with a
// sentence at the timeout, and a call the user withdraws by removing the provider in Settings
// must end at once — the turn is never left hanging. Checked on the panel and on what the
// model server received.
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { launchExtension } from './lib/browser.mjs';
import { startMockProvider } from './lib/mock-provider.mjs';
import { lastAnswer as lastAnswerOf, openChatMode, sendMessage, toolProviders, useProvider } from './lib/panel.mjs';

const TANDEM_ID = 'bkkhgefimkkanagkjaoehnjcmpolnojf';

// A provider that registers two read-only tools and then sits on every call: it keeps the
// message channel open (returns true) and never calls sendResponse. It records what it got.
const SLOW_PROVIDER = `
const TANDEM = ${JSON.stringify(TANDEM_ID)};
self.calls = [];
const tools = ['wait', 'hold'].map((name) => ({
  name, label: name, description: 'Never answers.',
  parameters: { type: 'object', properties: {} },
  annotations: { readOnlyHint: true, openWorldHint: false },
}));
const register = () => chrome.runtime.sendMessage(TANDEM, { type: 'REGISTER_TOOLS', name: 'Slow Tools', tools }).catch(() => {});
chrome.runtime.onMessageExternal.addListener((msg, sender) => {
  if (sender.id !== TANDEM) return false;
  if (msg.type === 'ORCHESTRATOR_READY') { register(); return false; }
  if (msg.type === 'TOOL_EXECUTE') { self.calls.push(msg); return true; }
  return false;
});
register();
`;

let browser, mock, panel, dir, slow;

before(async () => {
  mock = await startMockProvider({ delayMs: 5 });
  dir = await mkdtemp(path.join(os.tmpdir(), 'tandem-slow-'));
  await writeFile(path.join(dir, 'manifest.json'), JSON.stringify({
    manifest_version: 3, name: 'Slow Tools', version: '1.0', background: { service_worker: 'slow.js' },
  }));
  await writeFile(path.join(dir, 'slow.js'), SLOW_PROVIDER);
  browser = await launchExtension({ extensionId: TANDEM_ID, others: [dir] });
  const { context } = browser;
  const isSlow = (w) => w.url().endsWith('/slow.js');
  slow = context.serviceWorkers().find(isSlow) ?? await context.waitForEvent('serviceworker', { predicate: isSlow });
  panel = await browser.openPanel();
  await useProvider(panel, { baseUrl: `${mock.url}/v1`, model: 'gpt-test', key: 'sk-faults-abcdefgh12345678', onDevice: 'cloud' });
  const approval = panel.getByRole('group', { name: 'Tool provider' });
  await approval.waitFor();
  assert.match(await approval.textContent(), /«Slow Tools»/);
  await approval.getByRole('button', { name: 'Allow' }).click();
  await (await toolProviders(panel)).getByRole('combobox', { name: 'hold from Slow Tools' }).waitFor();
});

after(async () => {
  await browser?.close();
  await mock?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

beforeEach(() => mock.reset());

const ask = (text) => sendMessage(panel, text);
const idle = () => panel.waitForFunction(() => !document.querySelector('[aria-busy="true"]'), null, { timeout: 60000 });
const lastAnswer = () => lastAnswerOf(panel);
const received = () => slow.evaluate(() => self.calls.map((c) => c.toolName));

async function toolName(suffix) {
  mock.setDefault({ reply: 'ok' });
  const probe = mock.waitForRequest((r) => (r.tools ?? []).length > 0);
  await ask(`which tools (${suffix})?`);
  const name = (await probe).tools.find((t) => t.endsWith(`__${suffix}`));
  assert.ok(name, (await probe).tools.join(', '));
  await idle();
  mock.reset();
  return name;
}

test('a provider that never answers: the call ends at 30 s with a sentence, the model is told, the answer comes', async () => {
  const name = await toolName('wait');
  mock.script({ toolCall: { name, arguments: {} } });
  mock.setDefault({ reply: 'The tool did not answer; here is what I know.' });
  const back = mock.waitForRequest((r) => (r.toolResults ?? []).length > 0, 45000);
  await ask('Use the wait tool.');
  const sent = await back;
  assert.deepEqual(await received(), ['wait'], 'the provider got the call');
  assert.match(sent.toolResults[0].content, /did not answer within 30 s/);
  await idle();
  const answer = lastAnswer();
  await answer.getByText('The tool did not answer; here is what I know.').waitFor();
  assert.match(await answer.getByRole('group', { name: 'Tool call wait' }).getByLabel('Tool result').textContent(), /did not answer within 30 s/);
});

test('removing the provider while its call runs ends the call with a sentence, not at the timeout', async () => {
  const name = await toolName('hold');
  const before = (await received()).length;
  mock.script({ toolCall: { name, arguments: {} } });
  mock.setDefault({ reply: 'That provider is gone.' });
  const back = mock.waitForRequest((r) => (r.toolResults ?? []).length > 0, 45000);
  await ask('Use the hold tool.');
  // The provider has the call, and it will never answer it.
  const end = Date.now() + 10000;
  while ((await received()).length === before) {
    assert.ok(Date.now() < end, 'the provider never got TOOL_EXECUTE');
    await new Promise((r) => setTimeout(r, 50));
  }
  const settings = panel.getByRole('region', { name: 'Settings' });
  if (!(await settings.isVisible())) await panel.getByRole('button', { name: 'Settings' }).click();
  await panel.getByRole('button', { name: 'Remove provider Slow Tools' }).click();
  const sent = await back;
  // Not the timeout's sentence: the call ended because of the removal.
  assert.match(sent.toolResults[0].content, /removed or turned off «Slow Tools» while it ran/);
  await idle();
  await openChatMode(panel);
  await lastAnswer().getByText('That provider is gone.').waitFor();
  assert.match(await lastAnswer().getByRole('group', { name: 'Tool call hold' }).getByLabel('Tool result').textContent(), /removed or turned off/);
  // Its tools are no longer offered.
  mock.reset();
  mock.setDefault({ reply: 'ok' });
  const next = mock.waitForRequest(() => true);
  await ask('anything else?');
  assert.deepEqual(((await next).tools ?? []).filter((t) => t.includes('hold') || t.includes('wait')), []);
  await idle();
});
