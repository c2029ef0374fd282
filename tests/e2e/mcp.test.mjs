// MCP servers as tool providers, end to end: the real dist/ in Chromium, REAL MCP servers
// built here with the official TypeScript SDK (Streamable HTTP on 127.0.0.1: one answering
// with event streams, one with plain JSON), and a local model server speaking OpenAI's wire
// format, scripted to call tools. Every claim is checked on what the person sees (the
// panel), on what the MCP server received, or on what the model received next.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { launchExtension, TANDEM_ID } from './lib/browser.mjs';
import { startMcpServer } from './lib/mcp-server.mjs';
import { fillMcpServer, mcpStatus as mcpStatusOf } from './lib/mcp-panel.mjs';
import { lastAnswer as lastAnswerOf, openChatMode, sendMessage, toolProviders, useProvider, waitIdle } from './lib/panel.mjs';
import { panelSuite } from './lib/suites.mjs';

const KEY = 'sk-mcp-abcdefgh12345678';
const TOKEN = 'mcp-secret-token-7f3kq9wxyz';
const HEADER_SECRET = 'hdr-secret-value-p4m8z2';

let browser, mock, panel, sse, plain, panelConsole, workerConsole;

// Ollama is configured for extensions (OLLAMA_ORIGINS), as its users must.
panelSuite({
  mock: { delayMs: 5, ollamaOrigins: ['chrome-extension://*'] },
  launch: { extensionId: TANDEM_ID },
  consoles: true,
  provider: { key: KEY, onDevice: 'cloud' },
  ready: (env) => ({ browser, mock, panel, workerConsole, panelConsole } = env),
});
before(async () => {
  sse = await startMcpServer({ name: 'Files', token: TOKEN });
  plain = await startMcpServer({ name: 'Notes', json: true });
});

after(async () => {
  await sse?.close().catch(() => {});
  await plain?.close().catch(() => {});
});

const servers = () => toolProviders(panel);
const mcpStatus = () => mcpStatusOf(panel);
const registry = () => panel.evaluate(() => chrome.storage.local.get('toolRegistry').then((x) => x.toolRegistry ?? { providers: {} }));

const ask = (text) => sendMessage(panel, text);
const idle = () => waitIdle(panel);
const lastAnswer = () => lastAnswerOf(panel);

const fillServer = (options) => fillMcpServer(panel, options);

/** The model-facing name of `tool`, from what the model was offered. */
async function offeredName(suffix) {
  mock.setDefault({ reply: 'Fine.' });
  const offered = mock.waitForRequest((r) => (r.tools ?? []).some((t) => t.endsWith(suffix)), 10000);
  await ask('What tools do you have?');
  const req = await offered;
  await idle();
  mock.reset();
  return req.tools.find((t) => t.endsWith(suffix));
}

test('Test names the exact problem (401: needs a token; nothing listening), then lists the tools; Add makes the server a provider with per-tool policies', async () => {
  const form = await fillServer({ name: 'My files', url: sse.url });
  await form.getByRole('button', { name: 'Test server' }).click();
  await mcpStatus().filter({ hasText: 'needs a token' }).waitFor();

  await fillServer({ name: 'Nobody', url: 'http://127.0.0.1:9/mcp' });
  await form.getByRole('button', { name: 'Test server' }).click();
  await mcpStatus().filter({ hasText: 'could not reach the MCP server at http://127.0.0.1:9/mcp: nothing answers there' }).waitFor();

  // A web page answering 200 with HTML is not an MCP endpoint, and is called so.
  const page = http.createServer((req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Hello</title><p>A site.'));
  await new Promise((r) => page.listen(0, '127.0.0.1', r));
  try {
    await fillServer({ name: 'A page', url: `http://127.0.0.1:${page.address().port}/` });
    await form.getByRole('button', { name: 'Test server' }).click();
    await mcpStatus().filter({ hasText: 'This URL is not an MCP endpoint: it answered with an HTML page.' }).waitFor();
  } finally {
    page.closeAllConnections();
    page.close();
  }

  await fillServer({ name: 'My files', url: sse.url, token: TOKEN });
  await form.getByRole('button', { name: 'Test server' }).click();
  await mcpStatus().filter({ hasText: 'Connected to «Files»: 3 tools: echo, write_note, slow.' }).waitFor();
  const listed = form.getByRole('list', { name: 'Tools the server offers' });
  assert.deepEqual(await listed.getByRole('listitem').allTextContents(), ['echo', 'write_note', 'slow']);
  // The test session was initialized with the token and the protocol version, then ended.
  const init = sse.received.find((m) => m.rpc === 'initialize' && m.headers.authorization);
  assert.equal(init.params.protocolVersion, '2025-11-25');
  assert.equal(init.headers.authorization, `Bearer ${TOKEN}`);
  const later = sse.received.find((m) => m.rpc === 'tools/list');
  assert.ok(later.headers['mcp-session-id'], 'the session id goes on later requests');
  assert.equal(later.headers['mcp-protocol-version'], '2025-11-25');

  await form.getByRole('button', { name: 'Add server' }).click();
  await mcpStatus().filter({ hasText: 'Added. Connected to «Files»' }).waitFor();
  await (await servers()).getByText(`MCP server «My files» (${sse.url}, token …wxyz)`).waitFor();
  assert.equal(await (await servers()).getByRole('combobox', { name: 'echo from My files' }).inputValue(), 'allow', 'read-only: Allow');
  assert.equal(await (await servers()).getByRole('combobox', { name: 'write_note from My files' }).inputValue(), 'ask', 'not read-only: Ask');
  assert.equal(await form.getByLabel('Bearer token (optional)').inputValue(), '', 'the token field is emptied');

  // The token is nowhere the panel renders, nor in the registry it reads.
  const html = await panel.evaluate(() => document.documentElement.outerHTML
    + [...document.querySelectorAll('input, textarea')].map((i) => i.value).join('\n'));
  assert.ok(!html.includes(TOKEN) && !html.includes('7f3kq9'), 'the token is not in the DOM');
  assert.ok(!JSON.stringify(await registry()).includes(TOKEN), 'nor in the registry');
});

test('a server that pages its tool list (nextCursor): Test follows every page and lists all the tools', async () => {
  const paged = await startMcpServer({ name: 'Paged', pageSize: 2 });
  try {
    const form = await fillServer({ name: 'Paged', url: paged.url });
    await form.getByRole('button', { name: 'Test server' }).click();
    await mcpStatus().filter({ hasText: 'Connected to «Paged»: 3 tools: echo, write_note, slow.' }).waitFor();
    const pages = paged.received.filter((m) => m.rpc === 'tools/list');
    assert.deepEqual(pages.map((m) => m.params?.cursor ?? null), [null, '2'], 'the second page was asked for with the server\'s cursor');
  } finally {
    await paged.close();
  }
});

test('a chat turn on an event-stream server calls its tool: the server gets the arguments, the model gets the text (image described, fenced)', async () => {
  const echo = await offeredName('__echo');
  assert.ok(echo, 'the MCP tool is offered to the model');
  mock.script({ toolCall: { name: echo, arguments: { text: 'hello there' } } });
  mock.setDefault({ reply: 'It echoed.' });
  const next = mock.waitForRequest((r) => (r.toolResults ?? []).length > 0, 15000);
  await ask('Echo hello there.');
  const result = (await next).toolResults[0];
  const call = sse.calls().at(-1);
  assert.deepEqual(call.params, { name: 'echo', arguments: { text: 'hello there' } });
  assert.equal(call.headers.authorization, `Bearer ${TOKEN}`);
  assert.ok(result.content.includes('echo from Files: hello there'), result.content);
  // gpt-test reads no images: the image's line inside the fence, Tandem's sentence after it.
  assert.ok(result.content.includes('[image: PNG, 8 bytes]'), result.content);
  assert.ok(result.content.endsWith('\nThe tool returned an image (PNG, 8 bytes) that this model cannot see.'), result.content);
  assert.ok(result.content.includes('⟦untrusted data'), 'fenced as outside data');
  await idle();
  await lastAnswer().getByText('It echoed.').waitFor();
});

test('an isError result reaches the model as an error, after the user approved the Ask tool', async () => {
  const write = await offeredName('__write_note');
  mock.script({ toolCall: { name: write, arguments: { note: 'remember milk' } } });
  mock.setDefault({ reply: 'The disk is full.' });
  const next = mock.waitForRequest((r) => (r.toolResults ?? []).length > 0, 15000);
  await ask('Write a note.');
  const card = lastAnswer().getByRole('group', { name: 'Run write_note?' });
  await card.getByRole('button', { name: 'Approve' }).click();
  const result = (await next).toolResults[0];
  assert.equal(sse.calls().at(-1).params.arguments.note, 'remember milk');
  assert.ok(result.content.includes('reported an error') && result.content.includes('the disk is full'), result.content);
  await idle();
});

test('a plain-JSON server works the same, and a forgotten session is initialized again', async () => {
  const form = await fillServer({ name: 'Notes', url: plain.url });
  await form.getByRole('button', { name: 'Add server' }).click();
  await (await servers()).getByRole('combobox', { name: 'echo from Notes' }).waitFor();
  const echo = await offeredName('notes__echo');
  plain.forgetSessions(); // as a restarted server would: the next request gets 404
  mock.script({ toolCall: { name: echo, arguments: { text: 'json please' } } });
  mock.setDefault({ reply: 'Done.' });
  const next = mock.waitForRequest((r) => (r.toolResults ?? []).length > 0, 15000);
  await ask('Echo on notes.');
  const result = (await next).toolResults[0];
  assert.ok(result.content.includes('echo from Notes: json please'), result.content);
  const inits = plain.received.filter((m) => m.rpc === 'initialize');
  assert.ok(inits.length >= 2, `once on Add, again after the 404: ${inits.length}`);
  await idle();
});

test('notifications/tools/list_changed adds the new tool mid-session', async () => {
  await sse.addTool({ name: 'late_tool', description: 'Arrived later.', annotations: { readOnlyHint: true, openWorldHint: false },
    inputSchema: { type: 'object', properties: {} } });
  await (await servers()).getByRole('combobox', { name: 'late_tool from My files' }).waitFor({ timeout: 10000 });
  const late = await offeredName('__late_tool');
  assert.ok(late);
});

test('More headers: a server that wants its own header gets it on every request; only the name is shown back', async () => {
  const keyed = await startMcpServer({ name: 'Keyed', json: true, header: ['x-api-key', HEADER_SECRET] });
  try {
    const form = await fillServer({ name: 'Keyed', url: keyed.url });
    const headers = form.getByLabel('More headers (optional)');
    await headers.fill('X-Api-Key k');
    await form.getByRole('button', { name: 'Test server' }).click();
    await mcpStatus().filter({ hasText: "Header line 1 has no ':'" }).waitFor();
    await headers.fill('');
    await form.getByRole('button', { name: 'Test server' }).click();
    await mcpStatus().filter({ hasText: 'needs a token (the Bearer token field) or a header of its own' }).waitFor();
    await headers.fill(`X-Api-Key: ${HEADER_SECRET}`);
    await form.getByRole('button', { name: 'Add server' }).click();
    await mcpStatus().filter({ hasText: 'Added. Connected to «Keyed»' }).waitFor();
    await (await servers()).getByText(`MCP server «Keyed» (${keyed.url}, headers X-Api-Key)`).waitFor();
    assert.equal(await headers.inputValue(), '', 'the box is emptied');
    const echo = await offeredName('keyed__echo');
    mock.script({ toolCall: { name: echo, arguments: { text: 'with a key' } } });
    mock.setDefault({ reply: 'Keyed.' });
    const next = mock.waitForRequest((r) => (r.toolResults ?? []).length > 0, 15000);
    await ask('Echo with the key.');
    const result = (await next).toolResults[0];
    assert.ok(result.content.includes('echo from Keyed: with a key'), result.content);
    assert.equal(keyed.calls().at(-1).headers['x-api-key'], HEADER_SECRET, 'the call carries the header');
    await idle();
    const html = await panel.evaluate(() => document.documentElement.outerHTML
      + [...document.querySelectorAll('input, textarea')].map((i) => i.value).join('\n'));
    assert.ok(!html.includes(HEADER_SECRET), 'the value is not in the DOM');
    assert.ok(!JSON.stringify(await registry()).includes(HEADER_SECRET), 'nor in the registry');
    await (await servers()).getByRole('button', { name: 'Remove server Keyed' }).click();
    await (await servers()).getByRole('button', { name: 'Remove server Keyed' }).waitFor({ state: 'detached' });
  } finally {
    await keyed.close();
  }
});

test('turned off, a server offers nothing; turned on again, it does', async () => {
  await (await servers()).getByRole('button', { name: 'Turn off Notes' }).click();
  await (await servers()).getByText(/MCP server «Notes» .* — turned off/).waitFor();
  mock.setDefault({ reply: 'Fine.' });
  const offered = mock.waitForRequest(() => true, 10000);
  await ask('Tools now?');
  const req = await offered;
  assert.ok(!(req.tools ?? []).some((t) => t.startsWith('notes__')), req.tools?.join(', '));
  assert.ok((req.tools ?? []).some((t) => t.endsWith('__echo')), 'the other server still is');
  await idle();
  await (await servers()).getByRole('button', { name: 'Turn on Notes' }).click();
  await (await servers()).getByRole('button', { name: 'Turn off Notes' }).waitFor();
});

test('after Tandem\'s worker is stopped, it initializes a new session with each server and a call works', async () => {
  const before = plain.received.filter((m) => m.rpc === 'initialize').length;
  await browser.stopServiceWorker();
  mock.setDefault({ reply: 'ok' });
  await ask('wake up');
  await browser.waitForServiceWorker();
  await idle();
  mock.reset();
  const echo = await offeredName('notes__echo');
  mock.script({ toolCall: { name: echo, arguments: { text: 'after the restart' } } });
  mock.setDefault({ reply: 'Still here.' });
  const next = mock.waitForRequest((r) => (r.toolResults ?? []).length > 0, 15000);
  await ask('Echo again.');
  const result = (await next).toolResults[0];
  assert.equal(result.isError, false, result.content);
  assert.ok(result.content.includes('echo from Notes: after the restart'), result.content);
  const after = plain.received.filter((m) => m.rpc === 'initialize').length;
  assert.ok(after > before, `a new session after the restart (${before} → ${after})`);
  await idle();
});

// The MCP call does not depend on the model's wire format: each one declares the server's
// tool in its shape and gets the server's answer back in its shape.
const formats = [
  { label: 'Anthropic', base: () => `${mock.url}/v1`, model: 'claude-sonnet-4-5' },
  { label: 'Gemini', base: () => `${mock.url}/v1beta`, model: 'gemini-2.5-flash' },
  { label: 'Ollama', base: () => mock.url, model: 'llama3.2' },
];
for (const f of formats) {
  test(`a chat on ${f.label} calls the MCP server's tool and answers from its result`, async () => {
    await useProvider(panel, { provider: f.label, baseUrl: f.base(), model: f.model, key: KEY });
    const echo = await offeredName('files__echo');
    assert.ok(echo, `declared in ${f.label}'s shape`);
    mock.script({ toolCall: { name: echo, arguments: { text: `via ${f.label}` } } });
    mock.setDefault({ reply: `Echoed on ${f.label}.` });
    const next = mock.waitForRequest((r) => (r.toolResults ?? []).length > 0, 15000);
    await ask(`Echo via ${f.label}.`);
    const result = (await next).toolResults[0];
    assert.ok(result.content.includes(`echo from Files: via ${f.label}`), result.content);
    assert.deepEqual(sse.calls().at(-1).params.arguments, { text: `via ${f.label}` });
    await idle();
    await lastAnswer().getByText(`Echoed on ${f.label}.`).waitFor();
    assert.match(await lastAnswer().getByRole('group', { name: 'Tool call echo' }).getByLabel('Tool result').textContent(), /^Done/);
  });
}

test('the server cuts its event stream: Tandem opens it again, and list_changed still arrives', async () => {
  assert.ok(sse.openStreams() >= 1, 'Tandem listens on the server\'s event stream');
  const gets = () => sse.received.filter((m) => m.method === 'GET' && m.headers['mcp-session-id']).length;
  const before = gets();
  sse.dropStreams();
  const deadline = Date.now() + 15000;
  while (!(gets() > before && sse.openStreams() >= 1) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  assert.ok(sse.openStreams() >= 1 && gets() > before, 'the stream was opened again on the same session');
  await sse.addTool({ name: 'after_reopen', description: 'Arrived on the reopened stream.', annotations: { readOnlyHint: true, openWorldHint: false },
    inputSchema: { type: 'object', properties: {} } });
  await (await servers()).getByRole('combobox', { name: 'after_reopen from My files' }).waitFor({ timeout: 10000 });
});

test('the server stopped mid-call: the turn ends with a sentence, not a hang; Settings shows the problem', async () => {
  const slow = await offeredName('files__slow');
  mock.script({ toolCall: { name: slow, arguments: {} } });
  mock.setDefault({ reply: 'The server went away.' });
  const next = mock.waitForRequest((r) => (r.toolResults ?? []).length > 0, 20000);
  await ask('Run the slow one.');
  await sse.slowCalled;
  await sse.close();
  const result = (await next).toolResults[0];
  assert.match(result.content, /stopped answering|could not reach/, result.content);
  await idle();
  await lastAnswer().getByText('The server went away.').waitFor();
  await (await servers()).getByLabel('Problem with My files').waitFor();
});

test('a server that went away offers no tools; back at its address, it offers them again by itself', async () => {
  mock.setDefault({ reply: 'Fine.' });
  let offered = mock.waitForRequest(() => true, 10000);
  await ask('Tools while it is gone?');
  let req = await offered;
  assert.ok(!(req.tools ?? []).some((t) => t.startsWith('files__')), `not offered: ${req.tools?.join(', ')}`);
  await idle();
  await (await servers()).getByLabel('Problem with My files').filter({ hasText: 'nothing answers there' }).waitFor();
  // The same server again, on the same address (it forgot every session, as a restart does).
  const port = new URL(sse.url).port;
  sse = await startMcpServer({ name: 'Files', token: TOKEN, port: Number(port) });
  mock.reset();
  mock.setDefault({ reply: 'Fine.' });
  offered = mock.waitForRequest(() => true, 10000);
  await ask('And now?');
  req = await offered;
  assert.ok((req.tools ?? []).some((t) => t.endsWith('files__echo')), `offered again: ${req.tools?.join(', ')}`);
  await idle();
  await (await servers()).getByLabel('Problem with My files').waitFor({ state: 'detached' });
  assert.ok(sse.received.some((m) => m.rpc === 'initialize'), 'a new session with the restarted server');
});

test('Settings says whether this browser offers page tools (WebMCP), as the browser itself reports', async () => {
  const has = await panel.evaluate(() => 'modelContext' in navigator || 'modelContext' in document);
  const said = await panel.getByLabel('Page tools').textContent();
  if (has) assert.match(said, /this browser offers them/);
  else assert.match(said, /This browser does not offer page tools \(WebMCP\)/);
});

test('in a Chromium started with WebMCP on (--enable-blink-features=WebMCP), Settings says the browser offers page tools', async () => {
  const flagged = await launchExtension({ extensionId: TANDEM_ID, args: ['--enable-blink-features=WebMCP'] });
  try {
    const p = await flagged.openPanel();
    assert.ok(await p.evaluate(() => 'modelContext' in document), 'the flag exposes document.modelContext');
    const settings = p.getByRole('region', { name: 'Settings' });
    if (!(await settings.isVisible())) await p.getByRole('button', { name: 'Settings' }).click();
    await p.getByLabel('Page tools').filter({ hasText: 'this browser offers them' }).waitFor();
  } finally {
    await flagged.close();
  }
});

test('Remove forgets the server and its token; the token never reached the console', async () => {
  await (await servers()).getByRole('button', { name: 'Remove server Notes' }).click();
  await (await servers()).getByRole('button', { name: 'Remove server Notes' }).waitFor({ state: 'detached' });
  const tokens = await browser.serviceWorker.evaluate(() => chrome.storage.local.get('mcpTokens').then((x) => x.mcpTokens ?? {}));
  assert.equal(Object.keys(tokens).length, 1, 'only My files keeps a token');
  assert.ok(plain.received.some((m) => m.method === 'DELETE'), 'the session was ended');
  const logged = [...panelConsole.messages, ...workerConsole.messages].map((m) => m.text).join('\n');
  assert.ok(!logged.includes(TOKEN), 'the token is in no console line');
  assert.ok(!logged.includes(HEADER_SECRET), 'nor the header value');
});
