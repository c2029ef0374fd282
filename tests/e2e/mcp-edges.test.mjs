// MCP servers at their edges (issue 35): servers that are slow, failing, cut off, added twice,
// paging hundreds of tools, speaking the current protocol (2025-11-25) or an older one,
// declaring output schemas, giving long tool names; calls that are stopped. REAL MCP servers
// built with the official TypeScript SDK on 127.0.0.1 (or plain node servers where the point
// is a server that misbehaves below MCP), the real dist/ in Chromium, a local model server
// speaking OpenAI's wire format. Claims are checked on what the person sees (the panel), on
// what the MCP server received, and on what the model received next.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { TANDEM_ID } from './lib/browser.mjs';
import { startMcpServer } from './lib/mcp-server.mjs';
import { addMcpServer, callMcpTool, fillMcpServer, mcpStatus as mcpStatusOf, offeredTools } from './lib/mcp-panel.mjs';
import { lastAnswer as lastAnswerOf, sendMessage, toolProviders, waitIdle } from './lib/panel.mjs';
import { panelSuite } from './lib/suites.mjs';

const KEY = 'sk-edges-abcdefgh12345678';
const TOKEN = 'probe-secret-token-k2m9';

let mock, panel, workerConsole;
const servers = [];

panelSuite({
  mock: { delayMs: 5 },
  launch: { extensionId: TANDEM_ID },
  consoles: true,
  provider: { key: KEY, onDevice: 'cloud' },
  ready: (env) => ({ mock, panel, workerConsole } = env),
});

after(async () => {
  for (const s of servers) await s.close().catch(() => {});
});

const mcpStatus = () => mcpStatusOf(panel);
const lastAnswer = () => lastAnswerOf(panel);
const registry = () => panel.evaluate(() => chrome.storage.local.get('toolRegistry').then((x) => x.toolRegistry ?? { providers: {} }));

async function server(options) {
  const s = await startMcpServer(options);
  servers.push(s);
  return s;
}

/** A plain node server (not MCP) answering each request with `answer(req, res)`. */
async function rawServer(answer) {
  const s = http.createServer(answer);
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  const handle = {
    url: `http://127.0.0.1:${s.address().port}/mcp`,
    close: async () => { s.closeAllConnections(); await new Promise((r) => s.close(r)); },
  };
  servers.push(handle);
  return handle;
}

const fillServer = (options) => fillMcpServer(panel, options);
const addServer = (options) => addMcpServer(panel, options);

async function removeServer(name) {
  const list = await toolProviders(panel);
  await list.getByRole('button', { name: `Remove server ${name}` }).click();
  await list.getByRole('button', { name: `Remove server ${name}` }).waitFor({ state: 'detached' });
}

/** The tools the model is offered on the next turn. */
const offered = () => offeredTools(panel, mock);

/** Has the model call the tool offered as `…__suffix` with `args`; resolves with the next request. */
const callTool = (suffix, args, reply = 'Done.') => callMcpTool(panel, mock, suffix, args, reply);

test('a server that takes the connection but never answers initialize is running but too slow, not absent', async () => {
  const mute = await rawServer(() => { /* never answers */ });
  const form = await fillServer({ name: 'Mute', url: mute.url });
  await form.getByRole('button', { name: 'Test server' }).click();
  await mcpStatus().filter({ hasText: `The MCP server at ${mute.url} took the connection but did not answer within 15 s: it is running, but too slow or stuck` })
    .waitFor({ timeout: 25000 });
  assert.doesNotMatch(await mcpStatus().textContent(), /nothing answers there/);
});

test('an HTTP 500 shows the server\'s own words, one capped line with the token masked', async () => {
  const down = await rawServer((req, res) => res.writeHead(500, { 'content-type': 'text/plain' })
    .end(`the database is down\n(while checking Bearer ${TOKEN})\n${'x'.repeat(5000)}`));
  const form = await fillServer({ name: 'Down', url: down.url, token: TOKEN });
  await form.getByRole('button', { name: 'Test server' }).click();
  await mcpStatus().filter({ hasText: 'The MCP server answered HTTP 500: «the database is down (while checking Bearer …k2m9) xxx' }).waitFor();
  const said = await mcpStatus().textContent();
  assert.ok(!said.includes(TOKEN), 'the token is masked');
  assert.ok(said.length < 600, `capped: ${said.length} characters`);
});

test('Tandem\'s own failure to get a tool\'s answer is Tandem\'s sentence; the server\'s words stay fenced', async () => {
  const failing = await server({ name: 'Failing', json: true, failCalls: { status: 500, body: 'the database is down' } });
  await addServer({ name: 'Failing', url: failing.url });
  const { next } = await callTool('failing__echo', { text: 'hi' }, 'It failed.');
  const result = (await next).toolResults[0];
  assert.match(result.content, /^Tandem could not run the tool echo from «Failing»: The MCP server answered HTTP 500\. It said:\n⟦untrusted data/, result.content);
  assert.ok(result.content.includes('the database is down'), result.content);
  assert.ok(!result.content.includes('reported an error'), result.content);
  await waitIdle(panel);
  await removeServer('Failing');
});

test('adding the same server twice says it is already added', async () => {
  const once = await server({ name: 'Once', json: true });
  await addServer({ name: 'Once', url: once.url });
  const form = await fillServer({ name: 'Once again', url: `${once.url}/` });
  await form.getByRole('button', { name: 'Add server' }).click();
  await mcpStatus().filter({ hasText: `«Once» at ${once.url}/ is already added` }).waitFor();
  const same = Object.values((await registry()).providers).filter((p) => p.mcp?.url?.startsWith(once.url));
  assert.equal(same.length, 1, 'one server, not two');
  assert.equal(await (await toolProviders(panel)).getByRole('button', { name: 'Remove server Once again' }).count(), 0);
  await removeServer('Once');
});

test('people read the tool\'s title and the server\'s name on the card, the question and the progress line; structured results are checked against the output schema', async () => {
  const sumSchema = { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] };
  const shop = await server({
    name: 'Probe shop server', json: true,
    extraTools: [
      { tool: { name: 'add', title: 'Add two numbers', description: 'Adds a and b.', outputSchema: sumSchema, annotations: { openWorldHint: false },
        inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] } },
      run: ({ a, b }) => ({ content: [{ type: 'text', text: JSON.stringify({ sum: a + b }) }], structuredContent: { sum: a + b } }) },
      { tool: { name: 'add_badly', title: 'Add badly', description: 'Adds, wrongly.', outputSchema: sumSchema,
        annotations: { readOnlyHint: true, openWorldHint: false }, inputSchema: { type: 'object', properties: {} } },
      run: () => ({ content: [{ type: 'text', text: '{"sum":"five"}' }], structuredContent: { sum: 'five' } }) },
    ],
  });
  await addServer({ name: 'Probe shop', url: shop.url });
  const { name, next } = await callTool('probe_shop__add', { a: 2, b: 3 }, 'Five.');
  const question = lastAnswer().getByRole('group', { name: 'Run Add two numbers?' });
  await question.waitFor();
  assert.equal(await question.locator('p').textContent(), 'Allow «Probe shop» to run Add two numbers with a 2, b 3?');
  const card = lastAnswer().getByRole('group', { name: 'Tool call Add two numbers' });
  assert.equal(await card.locator(':scope > summary').textContent(), 'Tool Add two numbers from Probe shop');
  assert.equal(await panel.getByRole('status', { name: 'Progress' }).textContent(), 'Waiting for your answer: run Add two numbers from Probe shop?');
  assert.ok(!(await lastAnswer().textContent()).includes(name), `the model-facing ${name} is not shown`);
  await question.getByRole('button', { name: 'Approve' }).click();
  const result = (await next).toolResults[0];
  assert.equal(result.isError, false, result.content);
  assert.ok(result.content.includes('{"sum":5}'), result.content);
  await waitIdle(panel);
  assert.match(await card.getByLabel('Tool result').textContent(), /^Done/);

  const bad = await callTool('probe_shop__add_badly', {}, 'Odd.');
  const badResult = (await bad.next).toolResults[0];
  assert.match(badResult.content, /^The tool add_badly from «Probe shop» reported an error:[\s\S]*its structured result does not fit the output schema it declared: [^\n]*sum/, badResult.content);
  await waitIdle(panel);
  await removeServer('Probe shop');
});

test('Stop during a call: the card says Stopped and the server is sent notifications/cancelled for that request', async () => {
  let sawAbort = null;
  const aborted = new Promise((r) => { sawAbort = r; });
  const waiting = await server({
    name: 'Waiting', json: true,
    extraTools: [{ tool: { name: 'wait', title: 'Wait a while', annotations: { readOnlyHint: true, openWorldHint: false }, inputSchema: { type: 'object', properties: {} } },
      run: (_args, extra) => new Promise((resolve) => extra.signal.addEventListener('abort', () => { sawAbort(extra.signal.reason); resolve({ content: [] }); })) }],
  });
  await addServer({ name: 'Waiting', url: waiting.url });
  await callTool('waiting__wait', {});
  const deadline = Date.now() + 10000;
  while (!waiting.calls().some((c) => c.params?.name === 'wait') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const call = waiting.calls().find((c) => c.params?.name === 'wait');
  assert.ok(call, 'the server got the call');
  await panel.getByRole('button', { name: 'Stop' }).click();
  await waitIdle(panel);
  const card = lastAnswer().getByRole('group', { name: 'Tool call Wait a while' });
  assert.equal(await card.getByLabel('Tool result').textContent(), 'Stopped');
  const reason = await Promise.race([aborted, new Promise((r) => setTimeout(() => r('no cancellation arrived'), 5000))]);
  const cancelled = waiting.received.find((m) => m.rpc === 'notifications/cancelled');
  assert.ok(cancelled, 'notifications/cancelled arrived');
  assert.equal(cancelled.params.requestId, call.id, 'for the call\'s request id');
  assert.equal(cancelled.params.reason, 'The user stopped the call.');
  assert.equal(cancelled.headers['mcp-session-id'], call.headers['mcp-session-id'], 'on the call\'s session');
  assert.equal(reason, 'The user stopped the call.', 'the SDK ended the tool\'s work');
  await removeServer('Waiting');
});

test('a server paging 300 tools: Test follows nextCursor until Tandem\'s limit, and says where it cut', async () => {
  const extra = Array.from({ length: 297 }, (_, i) => ({
    tool: { name: `t${String(i + 1).padStart(3, '0')}`, annotations: { readOnlyHint: true, openWorldHint: false }, inputSchema: { type: 'object', properties: {} } },
    run: () => ({ content: [{ type: 'text', text: 'ok' }] }),
  }));
  const all = ['echo', 'write_note', 'slow', ...extra.map((t) => t.tool.name)];
  const many = await server({ name: 'Many', json: true, pageSize: 50, extraTools: extra });
  const form = await fillServer({ name: 'Many', url: many.url });
  await form.getByRole('button', { name: 'Test server' }).click();
  await mcpStatus().filter({ hasText: 'Connected to «Many»: 64 tools: echo, write_note, slow, t001,' }).waitFor();
  assert.ok((await mcpStatus().textContent()).includes(`Tandem takes at most 64 tools from one server: "${all[64]}" and the tools after it are left out.`),
    await mcpStatus().textContent());
  const pages = many.received.filter((m) => m.rpc === 'tools/list').map((m) => m.params?.cursor ?? null);
  assert.deepEqual(pages, [null, '50'], 'every page up to the limit, none after it');
  const listed = form.getByRole('list', { name: 'Tools the server offers' }).getByRole('listitem');
  assert.equal(await listed.count(), 64);
});

test('the current protocol (2025-11-25) is asked for; a server speaking 2025-06-18 is spoken to in it', async () => {
  const current = await server({ name: 'Current', json: true });
  let form = await fillServer({ name: 'Current', url: current.url });
  await form.getByRole('button', { name: 'Test server' }).click();
  await mcpStatus().filter({ hasText: 'Connected to «Current»' }).waitFor();
  assert.equal(current.received.find((m) => m.rpc === 'initialize').params.protocolVersion, '2025-11-25');
  assert.equal(current.received.find((m) => m.rpc === 'tools/list').headers['mcp-protocol-version'], '2025-11-25');

  const older = await server({ name: 'Older', json: true, speaks: '2025-06-18' });
  form = await fillServer({ name: 'Older', url: older.url });
  await form.getByRole('button', { name: 'Test server' }).click();
  await mcpStatus().filter({ hasText: 'Connected to «Older»' }).waitFor();
  assert.equal(older.received.find((m) => m.rpc === 'tools/list').headers['mcp-protocol-version'], '2025-06-18');
});

test('a tool name of 120 characters is offered under a shorter model-facing name, and called by its own', async () => {
  const long = `search_${'knowledge_base_'.repeat(8)}`.slice(0, 120);
  const librarian = await server({
    name: 'Librarian', json: true,
    extraTools: [{ tool: { name: long, description: 'Searches.', annotations: { readOnlyHint: true, openWorldHint: false },
      inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } },
    run: ({ q }) => ({ content: [{ type: 'text', text: `found ${q}` }] }) }],
  });
  await addServer({ name: 'Librarian', url: librarian.url });
  const name = (await offered()).find((t) => t.startsWith('librarian__search_'));
  assert.ok(name && name.length <= 64, `offered as ${name}`);
  mock.script({ toolCall: { name, arguments: { q: 'owls' } } });
  mock.setDefault({ reply: 'Found.' });
  const next = mock.waitForRequest((r) => (r.toolResults ?? []).length > 0, 15000);
  await sendMessage(panel, 'Search for owls.');
  const result = (await next).toolResults[0];
  assert.ok(result.content.includes('found owls'), result.content);
  assert.equal(librarian.calls().at(-1).params.name, long, 'the server is called by the tool\'s own name');
  await waitIdle(panel);
  await removeServer('Librarian');
});

test('after the server\'s event stream is cut and cannot be opened again, its tools are not offered', async () => {
  const streaming = await server({ name: 'Streaming' });
  await addServer({ name: 'Streaming', url: streaming.url });
  const deadline = Date.now() + 10000;
  while (streaming.openStreams() < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  assert.ok(streaming.openStreams() >= 1, 'Tandem listens on the server\'s event stream');
  await streaming.close();
  await (await toolProviders(panel)).getByLabel('Problem with Streaming').waitFor({ timeout: 5000 });
  const tools = await offered();
  assert.ok(!tools.some((t) => t.startsWith('streaming__')), `not offered: ${tools.join(', ')}`);
  const logged = workerConsole.messages.map((m) => m.text).join('\n');
  assert.ok(!logged.includes(TOKEN), 'no token in the worker\'s console');
});
