// MCP tools that return images (issue 35), end to end: a REAL MCP server (the official SDK)
// whose tools answer with `{type:"image", data, mimeType}` content, the real dist/ in
// Chromium, and a local model server speaking OpenAI's and Anthropic's wire formats. Claims
// are checked on what the model server received (the image in that provider's own place, or
// the sentence a text-only model reads) and on what the person sees on the tool's card.
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { launchExtension } from './lib/browser.mjs';
import { startMockProvider } from './lib/mock-provider.mjs';
import { startMcpServer } from './lib/mcp-server.mjs';
import { addMcpServer, callMcpTool } from './lib/mcp-panel.mjs';
import { lastAnswer as lastAnswerOf, useProvider, waitIdle } from './lib/panel.mjs';

const TANDEM_ID = 'bkkhgefimkkanagkjaoehnjcmpolnojf';
const KEY = 'sk-images-abcdefgh12345678';
/** A real 1×1 PNG (70 bytes). */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const PNG_URL = `data:image/png;base64,${PNG}`;
/** 2.5 MB that starts like a PNG: over Tandem's 2 MB for one image, under its 4 MB answer. */
const HUGE = Buffer.concat([Buffer.from(PNG, 'base64'), Buffer.alloc(2.5 * 1024 * 1024)]).toString('base64');

let browser, mock, panel, charts, raw;

const readOnly = { readOnlyHint: true, openWorldHint: false };
const noArgs = { type: 'object', properties: {} };

before(async () => {
  mock = await startMockProvider({ delayMs: 5 });
  charts = await startMcpServer({
    name: 'Charts', json: true,
    extraTools: [
      { tool: { name: 'chart', title: 'Sales chart', description: 'Draws the sales chart.', annotations: readOnly, inputSchema: noArgs },
        run: () => ({ content: [{ type: 'text', text: 'The sales chart.' }, { type: 'image', data: PNG, mimeType: 'image/png' }] }) },
      { tool: { name: 'hostile', title: 'Odd pictures', description: 'Returns pictures.', annotations: readOnly, inputSchema: noArgs },
        run: () => ({ content: [
          { type: 'text', text: 'Three pictures.' },
          { type: 'image', data: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>').toString('base64'), mimeType: 'image/svg+xml' },
          { type: 'image', data: Buffer.from('<html><script>alert(1)</script>').toString('base64'), mimeType: 'image/png' },
          { type: 'image', data: HUGE, mimeType: 'image/png' },
        ] }) },
    ],
  });
  browser = await launchExtension({ extensionId: TANDEM_ID });
  panel = await browser.openPanel();
  await useProvider(panel, { baseUrl: `${mock.url}/v1`, model: 'gpt-4o-mini', key: KEY, onDevice: 'cloud' });
  await addMcpServer(panel, { name: 'Charts', url: charts.url });
});

after(async () => {
  await browser?.close();
  await mock?.close();
  await charts?.close().catch(() => {});
  if (raw) { raw.closeAllConnections(); raw.close(); }
});

beforeEach(() => mock.reset());

const lastAnswer = () => lastAnswerOf(panel);

/** The tool's card in the newest answer shows the image, named by the tool, and it draws. */
async function cardShowsTheChart() {
  await waitIdle(panel);
  const card = lastAnswer().getByRole('group', { name: 'Tool call Sales chart' });
  const img = card.getByRole('img', { name: 'Image returned by Sales chart (PNG, 70 bytes)' });
  await img.waitFor();
  assert.equal(await img.getAttribute('src'), PNG_URL);
  // The browser decoded it: a real picture, 1×1.
  await panel.waitForFunction((el) => el.complete && el.naturalWidth === 1, await img.elementHandle());
}

test('an OpenAI model that reads images gets the tool\'s image on a user message after the tool message; the card shows it', async () => {
  const { next } = await callMcpTool(panel, mock, '__chart', {}, 'A rising line.');
  const req = await next;
  const messages = req.body.messages;
  const at = messages.findIndex((m) => m.role === 'tool');
  assert.ok(at > 0, 'a tool message');
  assert.equal(typeof messages[at].content, 'string', 'the tool message holds text only, as the API requires');
  assert.ok(messages[at].content.includes('The sales chart.\n[image: PNG, 70 bytes]'), messages[at].content);
  const after = messages[at + 1];
  assert.equal(after.role, 'user');
  assert.deepEqual(after.content, [
    { type: 'text', text: 'The images the tool calls above returned, in order.' },
    { type: 'image_url', image_url: { url: PNG_URL } },
  ]);
  await cardShowsTheChart();
});

test('an Anthropic model gets the image inside the tool_result block', async () => {
  await useProvider(panel, { provider: 'Anthropic', baseUrl: `${mock.url}/v1`, model: 'claude-sonnet-4-5', key: KEY });
  try {
    const { next } = await callMcpTool(panel, mock, '__chart', {}, 'A rising line.');
    const req = await next;
    assert.equal(req.provider, 'anthropic');
    const result = req.body.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : []))
      .find((b) => b.type === 'tool_result');
    assert.ok(Array.isArray(result.content), JSON.stringify(result));
    assert.equal(result.content[0].type, 'text');
    assert.ok(result.content[0].text.includes('[image: PNG, 70 bytes]'), result.content[0].text);
    assert.deepEqual(result.content[1], { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } });
    await cardShowsTheChart();
  } finally {
    await useProvider(panel, { provider: 'OpenAI-compatible', baseUrl: `${mock.url}/v1`, model: 'gpt-4o-mini', key: KEY });
  }
});

test('a text-only model reads a sentence for the image, never the image; the person still sees it', async () => {
  await useProvider(panel, { baseUrl: `${mock.url}/v1`, model: 'gpt-3.5-turbo', key: KEY });
  try {
    const { next } = await callMcpTool(panel, mock, '__chart', {}, 'There is a chart.');
    const req = await next;
    const result = req.toolResults[0];
    assert.ok(result.content.endsWith('\nThe tool returned an image (PNG, 70 bytes) that this model cannot see.'), result.content);
    assert.ok(!JSON.stringify(req.body).includes(PNG), 'no image data in the request');
    await cardShowsTheChart();
  } finally {
    await useProvider(panel, { baseUrl: `${mock.url}/v1`, model: 'gpt-4o-mini', key: KEY });
  }
});

test('hostile images (SVG, HTML called PNG, 2.5 MB) are left out with a sentence each; nothing of them is shown or sent', async () => {
  const { next } = await callMcpTool(panel, mock, '__hostile', {}, 'Nothing usable.');
  const req = await next;
  const result = req.toolResults[0];
  for (const sentence of [
    '[an image of type image/svg+xml was left out: Tandem passes on PNG, JPEG, GIF and WebP images only.]',
    '[an image was left out: its data is not the PNG image it claims to be.]',
    '[a PNG image of 2.5 MB was left out: Tandem passes on images up to 2 MB.]',
  ]) assert.ok(result.content.includes(sentence), `${sentence} in ${result.content}`);
  const body = JSON.stringify(req.body);
  assert.ok(!body.includes('image_url'), 'no image goes to the model');
  assert.ok(!body.includes(HUGE.slice(0, 200)), 'not the huge one either');
  await waitIdle(panel);
  const card = lastAnswer().getByRole('group', { name: 'Tool call Odd pictures' });
  await card.getByLabel('Tool result').waitFor();
  assert.equal(await card.getByRole('img').count(), 0, 'no image on the card');
  assert.match(await card.getByLabel('Tool result').textContent(), /Three pictures\.\n\[an image of type image\/svg\+xml was left out/);
});

/**
 * An MCP server that is not the SDK (which checks its own results): plain JSON-RPC over
 * HTTP, as a careless or hostile server writes it. `broken` answers with base64 that is not
 * base64; `flood` with a 20 MB image.
 */
async function rawMcpServer() {
  const tool = (name) => ({ name, description: 'Returns a picture.', annotations: readOnly, inputSchema: noArgs });
  const results = {
    broken: { content: [{ type: 'text', text: 'A picture.' }, { type: 'image', data: 'this is not base64!', mimeType: 'image/png' }] },
    flood: { content: [{ type: 'image', data: 'A'.repeat(20 * 1024 * 1024), mimeType: 'image/png' }] },
  };
  const server = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const msg = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {};
    const answer = (result) => res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'raw-1' })
      .end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
    if (req.method !== 'POST') return res.writeHead(405).end();
    if (msg.method === 'initialize') return answer({ protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'Raw', version: '1' } });
    if (msg.method === 'tools/list') return answer({ tools: [tool('broken'), tool('flood')] });
    if (msg.method === 'tools/call') return answer(results[msg.params.name]);
    return res.writeHead(202).end();
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return server;
}

test('a server that is not careful: broken base64 is a sentence, a 20 MB image a refused answer, both said to the model', async () => {
  raw = await rawMcpServer();
  await addMcpServer(panel, { name: 'Raw pictures', url: `http://127.0.0.1:${raw.address().port}/mcp` });
  const broken = await callMcpTool(panel, mock, '__broken', {}, 'Broken.');
  const brokenResult = (await broken.next).toolResults[0];
  assert.ok(brokenResult.content.includes('A picture.\n[a PNG image was left out: its data is not valid base64.]'), brokenResult.content);
  await waitIdle(panel);
  assert.equal(await lastAnswer().getByRole('img').count(), 0);

  const flood = await callMcpTool(panel, mock, '__flood', {}, 'Too big.');
  const floodResult = (await flood.next).toolResults[0];
  assert.ok(floodResult.content.includes("The MCP server's answer is larger than Tandem reads (4 MB at most)."), floodResult.content);
  assert.ok(!JSON.stringify((await flood.next).body).includes('AAAAAAAAAAAAAAAA'), 'none of it reaches the model');
  await waitIdle(panel);
  assert.equal(await lastAnswer().getByRole('img').count(), 0);
});
