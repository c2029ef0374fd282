// An MCP server's tool called by Gemini Nano: the real dist/ with the fake Prompt API (the
// machines have no model), a REAL MCP server built with the official SDK, and a local server
// speaking OpenAI's wire format as the cloud that must stay unused. Nano has no native tool
// calling: its reply is constrained to a call or an answer, the call goes through the same
// registry, Ask and MCP `tools/call` as a cloud model's, and the result goes back on the same
// session. Checked on what the MCP server received, what Nano was asked, and the panel.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launchExtension } from './lib/browser.mjs';
import { startMockProvider } from './lib/mock-provider.mjs';
import { startMcpServer } from './lib/mcp-server.mjs';
import { lastAnswer as lastAnswerOf, nanoReplies as scriptNano, openChatMode, openSettings, sendMessage, useProvider, waitIdle } from './lib/panel.mjs';

const TANDEM_ID = 'bkkhgefimkkanagkjaoehnjcmpolnojf';

let browser, mock, panel, files;

before(async () => {
  mock = await startMockProvider({ delayMs: 5 });
  files = await startMcpServer({ name: 'Files' });
  browser = await launchExtension({
    extensionId: TANDEM_ID,
    fakeLanguageModel: { availability: 'available', delayMs: 5 },
  });
  panel = await browser.openPanel();
  await openSettings(panel);
  // On-device first (the default), the cloud only if Nano could not.
  assert.equal(await panel.getByLabel('On-device model', { exact: true }).inputValue(), 'auto');
  await useProvider(panel, { baseUrl: `${mock.url}/v1`, model: 'cloud-model', key: 'sk-cloud-key-123456', keepOpen: true });
  const form = panel.getByRole('group', { name: 'New MCP server' });
  if (!(await form.isVisible())) await panel.getByRole('button', { name: 'Add MCP server' }).click();
  await form.getByLabel('Server name').fill('Files');
  await form.getByLabel('Server URL').fill(files.url);
  await form.getByRole('button', { name: 'Add server' }).click();
  await panel.getByRole('status', { name: 'MCP server status' }).filter({ hasText: 'Added. Connected to «Files»' }).waitFor();
});

after(async () => {
  await browser?.close();
  await mock?.close();
  await files?.close().catch(() => {});
});

const fake = (fn, arg) => browser.serviceWorker.evaluate(fn, arg);
const fakeCalls = () => fake(() => globalThis.__fakeLanguageModel.calls);
const lastAnswer = () => lastAnswerOf(panel);
const idle = () => waitIdle(panel);

const ask = (text) => sendMessage(panel, text);

const nanoReplies = (script) => scriptNano(browser.serviceWorker, script);

test('on Nano, a chat turn calls the MCP server\'s tool: the server runs it, Nano reads the fenced result on the same session, the cloud is not used', async () => {
  // A first message creates the conversation's session, its instructions listing the tools.
  await nanoReplies({ answer: 'unused' });
  await ask('hello device');
  await lastAnswer().getByText('You said: hello device', { exact: true }).waitFor();
  await idle();
  const creates = (await fakeCalls()).filter((c) => c.method === 'create');
  const system = creates.at(-1).options.initialPrompts[0].content;
  const echo = system.match(/- (\S+__echo): /)?.[1];
  assert.ok(echo, `the MCP server's tools are described to Nano: ${system}`);
  assert.match(system, /⟦untrusted[^⟧]*⟧[\s\S]*__echo[\s\S]*⟦\/untrusted/, 'fenced as outside data');

  await nanoReplies({
    calls: { 'Echo on the device.': { tool: echo, arguments: { text: 'from Nano' } } },
    answer: 'The server echoed it back.',
  });
  const seen = (await fakeCalls()).length;
  await ask('Echo on the device.');
  await lastAnswer().getByText('The server echoed it back.').waitFor();
  await idle();
  assert.deepEqual(files.calls().at(-1).params, { name: 'echo', arguments: { text: 'from Nano' } }, 'the server ran it');
  const calls = (await fakeCalls()).slice(seen).filter((c) => c.method === 'promptStreaming');
  assert.equal(calls.length, 2, 'the turn, then the result');
  assert.equal(calls[1].session, calls[0].session, 'the result goes back on the same session');
  assert.ok(calls[1].input.includes('echo from Files: from Nano'), calls[1].input);
  assert.ok(calls[1].input.includes('⟦untrusted'), 'fenced as outside data');
  const card = lastAnswer().getByRole('group', { name: 'Tool call echo' });
  assert.match(await card.getByLabel('Tool result').textContent(), /^Done/);
  assert.match(await lastAnswer().textContent(), /via Gemini Nano \(on device\)/);
  assert.equal(mock.requests.filter((r) => r.path.includes('chat/completions')).length, 0, 'nothing went to the cloud');
});
