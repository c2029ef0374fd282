// A REAL MCP server for the e2e tests, built with the official TypeScript SDK (Streamable
// HTTP on 127.0.0.1), with a few knobs to make it misbehave the way real servers do.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

/**
 * `fetch_url` as MCP's fetch servers declare it, for `more`: it says it only reads and says
 * nothing about the open world, so it may go to any address it is given.
 */
export const FETCH_URL_TOOL = {
  name: 'fetch_url', description: 'Fetches a web page and returns its text.', annotations: { readOnlyHint: true },
  inputSchema: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] },
};

/**
 * A real MCP server (the SDK's low-level Server + StreamableHTTPServerTransport, one pair per
 * session, as the SDK's examples do), behind a plain `http.createServer`. `json`: answers as
 * application/json instead of event streams. `token`: the Bearer token it demands.
 * `received` records every JSON-RPC message with the headers it came with. `cors`: the server
 * lets any origin read its answers (CORS headers and preflight answers, as a server meant for
 * browser clients does); without it, a browser client without host access cannot read them.
 * `pageSize`: `tools/list` answers that many tools a page, with a `nextCursor` to the next.
 * `more`: tools listed after the usual ones (`fetch_url` has a handler: it answers with the
 * URL it was given, as a tool that fetched it would).
 * `extraTools`: more tools, each `{ tool, run }` (`run(args)` gives the call's result).
 * `failCalls`: `{ status, body }`, the HTTP answer to every `tools/call` (a server whose
 * backend is down still initializes and lists). `speaks`: the newest protocol version the
 * server speaks (it answers a client asking for a newer one with this one, as an older SDK does).
 * `oauth`: `{ issuer, accepts(token) }` (filled in once the authorization server runs): the
 * server signs people in, as the MCP authorization spec has it: its Protected Resource
 * Metadata (RFC 9728) at /.well-known/oauth-protected-resource/mcp names `issuer`, and a
 * request without a token `accepts` is answered 401 with `WWW-Authenticate: Bearer
 * resource_metadata=…`.
 */
export async function startMcpServer({ name, json = false, token = null, port = 0, header = null, cors = false, pageSize = 0, more = [], extraTools = [], failCalls = null, speaks = null, oauth = null }) {
  const received = [];
  let url = '';
  const streams = new Set(); // open GET event streams
  const sessions = new Map(); // session id → { transport, server }
  const tools = [
    { name: 'echo', description: 'Echoes the text back.', annotations: { readOnlyHint: true, openWorldHint: false },
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
    { name: 'write_note', description: 'Writes a note.',
      inputSchema: { type: 'object', properties: { note: { type: 'string' } }, required: ['note'] } },
    { name: 'slow', description: 'Takes its time.', annotations: { readOnlyHint: true, openWorldHint: false },
      inputSchema: { type: 'object', properties: {} } },
    ...more,
  ];
  let slowStarted = null;
  const slowCalled = new Promise((r) => { slowStarted = r; });
  const handlers = {
    echo: async ({ text }) => ({ content: [{ type: 'text', text: `echo from ${name}: ${text}` },
      { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' }] }),
    write_note: async () => ({ isError: true, content: [{ type: 'text', text: 'the disk is full' }] }),
    slow: async () => { slowStarted(); return new Promise(() => {}); },
    late_tool: async () => ({ content: [{ type: 'text', text: 'late and here' }] }),
    fetch_url: async ({ url }) => ({ content: [{ type: 'text', text: `fetched ${url}` }] }),
  };
  for (const { tool, run } of extraTools) {
    tools.push(tool);
    handlers[tool.name] = run;
  }
  const newServer = () => {
    const server = new Server({ name, version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
    server.setRequestHandler(ListToolsRequestSchema, async (req) => {
      if (!pageSize) return { tools };
      const start = Number(req.params?.cursor ?? 0);
      const end = start + pageSize;
      return end < tools.length ? { tools: tools.slice(start, end), nextCursor: String(end) } : { tools: tools.slice(start) };
    });
    server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
      const run = handlers[req.params.name];
      if (!run) return { isError: true, content: [{ type: 'text', text: `no tool ${req.params.name}` }] };
      return run(req.params.arguments ?? {}, extra);
    });
    return server;
  };
  const httpServer = http.createServer(async (req, res) => {
    if (cors) {
      res.setHeader('access-control-allow-origin', '*');
      res.setHeader('access-control-expose-headers', 'mcp-session-id, mcp-protocol-version');
      if (req.method === 'OPTIONS') {
        res.writeHead(204, {
          'access-control-allow-methods': 'GET, POST, DELETE',
          'access-control-allow-headers': 'content-type, accept, authorization, mcp-session-id, mcp-protocol-version, last-event-id',
        }).end();
        return;
      }
    }
    if (oauth && req.url === '/.well-known/oauth-protected-resource/mcp') {
      res.writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ resource: url, authorization_servers: [oauth.issuer], scopes_supported: ['mcp:tools'] }));
      return;
    }
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const text = Buffer.concat(chunks).toString('utf8');
    const body = text ? JSON.parse(text) : undefined;
    received.push({ method: req.method, rpc: body?.method, id: body?.id, params: body?.params, headers: req.headers });
    if (req.method === 'GET') {
      streams.add(res);
      res.on('close', () => streams.delete(res));
    }
    if (oauth && !oauth.accepts((req.headers.authorization ?? '').replace(/^Bearer /, ''))) {
      received.at(-1).refused = true; // answered 401: the token was missing, stale or unknown
      const metadata = `${new URL(url).origin}/.well-known/oauth-protected-resource/mcp`;
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': `Bearer error="invalid_token", resource_metadata="${metadata}"` })
        .end('{"error":"invalid_token"}');
      return;
    }
    if ((token && req.headers.authorization !== `Bearer ${token}`)
      || (header && req.method !== 'GET' && req.headers[header[0]] !== header[1])) {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
      return;
    }
    if (failCalls && body?.method === 'tools/call') {
      res.writeHead(failCalls.status, { 'content-type': 'text/plain' }).end(failCalls.body);
      return;
    }
    if (speaks && body?.method === 'initialize' && body.params?.protocolVersion > speaks) {
      body.params = { ...body.params, protocolVersion: speaks };
    }
    const sid = req.headers['mcp-session-id'];
    let entry = sid ? sessions.get(sid) : undefined;
    if (!entry && !sid && body?.method === 'initialize') {
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: json,
        onsessioninitialized: (id) => sessions.set(id, entry),
      });
      entry = { transport, server: newServer() };
      await entry.server.connect(entry.transport);
    }
    if (!entry) {
      res.writeHead(sid ? 404 : 400, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'no such session' }, id: null }));
      return;
    }
    await entry.transport.handleRequest(req, res, body);
  });
  await new Promise((r) => httpServer.listen(port, '127.0.0.1', r));
  url = `http://127.0.0.1:${httpServer.address().port}/mcp`;
  return {
    url, received, slowCalled,
    calls: () => received.filter((m) => m.rpc === 'tools/call'),
    /** Adds a tool and tells every open session (notifications/tools/list_changed). */
    async addTool(tool) {
      tools.push(tool);
      for (const { server } of sessions.values()) await server.sendToolListChanged().catch(() => {});
    },
    /** Cuts every open event stream (GET), as a proxy's idle limit would. */
    dropStreams() { for (const res of streams) res.socket?.destroy(); },
    openStreams: () => streams.size,
    /** Forgets every session, as a restarted server would. */
    forgetSessions() { sessions.clear(); },
    async close() {
      httpServer.closeAllConnections();
      await new Promise((r) => httpServer.close(r));
    },
  };
}

/**
 * Serves the SDK `server` at `origin` (https, an origin the manifest does not list by name)
 * through the browser's routing, as a remote MCP server on the web is reached. Each POST and
 * DELETE goes on to the server with its headers and body, and its answer comes back whole
 * (the SDK ends a POST's event stream once the response is in it). The long-lived GET stream
 * is answered 405, as a server that offers none answers: routing cannot stream. Returns the
 * server's https URL.
 */
export async function routeMcpServer(context, origin, server) {
  const local = new URL(server.url);
  await context.route(`${origin}/**`, async (route) => {
    const request = route.request();
    if (request.method() === 'GET') return route.fulfill({ status: 405, headers: { allow: 'POST, DELETE' } });
    const url = new URL(request.url());
    url.protocol = local.protocol;
    url.host = local.host;
    await route.fulfill({ response: await route.fetch({ url: url.toString() }) });
  });
  return `${origin}${local.pathname}`;
}
