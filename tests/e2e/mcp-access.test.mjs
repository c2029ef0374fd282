// MCP servers when the user withholds Tandem's site access (issue 16: Test and Settings name
// the exact problem — unreachable, CORS, …). The user does it where users do: chrome://extensions
// → Tandem → Site access → "On click" (the page's own developerPrivate call, as its switch
// makes). From then on Chrome applies each server's CORS rules to Tandem's requests. The world:
// the real dist/ in Chromium, REAL MCP servers built with the official TypeScript SDK on
// 127.0.0.1 (one without CORS headers, as most are; one that lets any origin read it), and a
// local model server speaking OpenAI's wire format (which, like OpenAI's, allows CORS). Every
// claim is checked on what the person sees in Settings, what the servers received, or what
// the model received.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launchExtension } from './lib/browser.mjs';
import { startMockProvider } from './lib/mock-provider.mjs';
import { startMcpServer } from './lib/mcp-server.mjs';
import { closeSettings, openChatMode, toolProviders, useProvider } from './lib/panel.mjs';

const TANDEM_ID = 'bkkhgefimkkanagkjaoehnjcmpolnojf';

let browser, panel, mock, closed, open, gone;

before(async () => {
  mock = await startMockProvider({ delayMs: 5 });
  closed = await startMcpServer({ name: 'Closed' });
  open = await startMcpServer({ name: 'Open', cors: true });
  gone = await startMcpServer({ name: 'Gone' });
  browser = await launchExtension({ extensionId: TANDEM_ID });
  panel = await browser.openPanel();
  await useProvider(panel, { baseUrl: `${mock.url}/v1`, model: 'gpt-test', key: 'sk-mcp-access-12345678', onDevice: 'cloud', keepOpen: true });
  // Added while Tandem still has its site access: each lists its tools.
  for (const [name, server] of [['Closed server', closed], ['Open server', open], ['Gone server', gone]]) {
    const form = panel.getByRole('group', { name: 'New MCP server' });
    if (!(await form.isVisible())) await panel.getByRole('button', { name: 'Add MCP server' }).click();
    await form.getByLabel('Server name').fill(name);
    await form.getByLabel('Server URL').fill(server.url);
    await form.getByRole('button', { name: 'Add server' }).click();
    await (await toolProviders(panel)).getByRole('combobox', { name: `echo from ${name}` }).waitFor({ timeout: 15_000 });
  }
  await closeSettings(panel);
});

after(async () => {
  await browser?.close();
  await mock?.close();
  for (const s of [closed, open, gone]) await s?.close().catch(() => {});
});

/** A chat request, not the CORS preflight Chrome now sends before it. */
const isChat = (r) => r.body != null;

/** Tandem's Site access, set on chrome://extensions as the user sets it there. */
async function setSiteAccess(hostAccess) {
  const page = await browser.context.newPage();
  await page.goto(`chrome://extensions/?id=${TANDEM_ID}`);
  const hosts = await page.evaluate(async ([id, access]) => {
    await chrome.developerPrivate.updateExtensionConfiguration({ extensionId: id, hostAccess: access });
    return (await chrome.developerPrivate.getExtensionInfo(id)).permissions.runtimeHostPermissions;
  }, [TANDEM_ID, hostAccess]);
  await page.close();
  return hosts;
}

test('site access withheld: a server without CORS is named as refusing Tandem, one that allows other origins keeps working, a stopped one is told apart', async () => {
  const hosts = await setSiteAccess('ON_CLICK');
  assert.equal(hosts.hostAccess, 'ON_CLICK');
  assert.ok(hosts.hosts.every((h) => !h.granted), JSON.stringify(hosts));
  await gone.close();
  // The worker connects to every server again when it starts: stop it, and let the panel wake it.
  const initialized = closed.received.filter((m) => m.rpc === 'initialize').length;
  await browser.stopServiceWorker();
  await panel.evaluate(() => chrome.runtime.sendMessage({ type: 'wake' }).catch(() => {}));
  await browser.waitForServiceWorker();

  const servers = await toolProviders(panel);
  const refused = servers.getByLabel('Problem with Closed server');
  await refused.filter({ hasText: 'answers, but Chrome does not let Tandem read its answers' }).waitFor({ timeout: 20_000 });
  assert.match(await refused.textContent(), /give Tandem access to that site \(chrome:\/\/extensions → Tandem → Site access\), or let the server accept requests from other origins \(CORS\)/);
  await servers.getByLabel('Problem with Gone server').filter({ hasText: 'nothing answers there' }).waitFor({ timeout: 20_000 });
  assert.equal(await servers.getByLabel('Problem with Open server').count(), 0, 'the server that allows other origins has no problem');
  // The refused server did hear Tandem (Chrome sent the request; it kept the answer from Tandem).
  assert.ok(closed.received.length > 0 && closed.received.filter((m) => m.rpc === 'initialize').length >= initialized);
  await closeSettings(panel);

  // A chat turn: only the server Tandem can read offers its tools, and its tool runs.
  mock.reset();
  const offered = mock.waitForRequest(isChat, 15_000);
  mock.setDefault({ reply: 'Listed.' });
  await openChatMode(panel);
  await panel.getByRole('textbox', { name: 'Message' }).fill('Which tools do you have?');
  await panel.getByRole('textbox', { name: 'Message' }).press('Enter');
  const first = await offered;
  const tools = first.tools ?? [];
  const echo = tools.find((t) => /open/.test(t) && t.endsWith('__echo'));
  assert.ok(echo, `the open server's tools are offered: ${tools.join(', ')}`);
  assert.ok(!tools.some((t) => /closed|gone/.test(t)), `not the others: ${tools.join(', ')}`);
  await panel.waitForFunction(() => !document.querySelector('[aria-busy="true"]'));
  mock.reset();
  mock.script({ toolCall: { name: echo, arguments: { text: 'through CORS' } } });
  mock.setDefault({ reply: 'It answered.' });
  const back = mock.waitForRequest((r) => isChat(r) && (r.toolResults ?? []).length > 0, 15_000);
  await panel.getByRole('textbox', { name: 'Message' }).fill('Echo through CORS.');
  await panel.getByRole('textbox', { name: 'Message' }).press('Enter');
  const result = (await back).toolResults[0];
  assert.ok(result.content.includes('echo from Open: through CORS'), result.content);
  assert.deepEqual(open.calls().at(-1).params, { name: 'echo', arguments: { text: 'through CORS' } });
  await panel.waitForFunction(() => !document.querySelector('[aria-busy="true"]'));

  // Site access given back: the refused server offers its tools again by itself.
  await setSiteAccess('ON_ALL_SITES');
  mock.reset();
  mock.setDefault({ reply: 'Listed again.' });
  const again = mock.waitForRequest(isChat, 15_000);
  await panel.getByRole('textbox', { name: 'Message' }).fill('And now?');
  await panel.getByRole('textbox', { name: 'Message' }).press('Enter');
  const now = (await again).tools ?? [];
  assert.ok(now.some((t) => /closed/.test(t)), `offered again: ${now.join(', ')}`);
  await panel.waitForFunction(() => !document.querySelector('[aria-busy="true"]'));
});
