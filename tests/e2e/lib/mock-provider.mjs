// One local HTTP server that impersonates the four LLM APIs Tandem talks to:
// OpenAI Chat Completions, Anthropic Messages, Gemini (AI Studio and the Firebase
// AI Logic path shape) and Ollama. The wire formats, status codes and error bodies
// copy what the real services send, quirks included, because the adapters under
// test must survive the real thing, not a friendly imitation:
//   - Anthropic answers 401 to a request that carries an Origin header but not
//     `anthropic-dangerous-direct-browser-access: true`, and leaves out the CORS
//     header then (so a page-context fetch fails outright, as it does for real).
//   - Ollama answers 403 with an empty body to any Origin outside OLLAMA_ORIGINS;
//     its default list does not include chrome-extension://. Tests that play a user
//     who configured Ollama pass `ollamaOrigins: ['chrome-extension://*']`.
//   - Gemini rejects a bad key with 400 INVALID_ARGUMENT (not 401) and a missing
//     key with 403 PERMISSION_DENIED; Anthropic's missing version header is a 400.
//   - Gemini SSE separates events with CRLF CRLF and has no end marker; Ollama
//     streams unless the body says `"stream": false`.
//
// Every generation request consumes at most one scripted behaviour (see script()),
// so a test can line up "first call fails with 429, second succeeds" precisely.
//
// A behaviour may also make the answer a tool call, in each provider's own wire format:
// `{ toolCall: { name, arguments } }` (or `toolCalls: [...]` for parallel calls), after
// the `reply` text if one is given. OpenAI and Anthropic stream the arguments as JSON
// text in pieces (`argPieces`, 3 by default); Gemini and Ollama send each call whole.

import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

// Ollama's built-in allow-list (what it accepts with OLLAMA_ORIGINS unset).
const OLLAMA_DEFAULT_ORIGINS = [
  'http://localhost', 'https://localhost', 'http://localhost:*', 'https://localhost:*',
  'http://127.0.0.1', 'https://127.0.0.1', 'http://127.0.0.1:*', 'https://127.0.0.1:*',
  'http://0.0.0.0', 'https://0.0.0.0', 'http://0.0.0.0:*', 'https://0.0.0.0:*',
  'app://*', 'file://*', 'tauri://*', 'vscode-webview://*', 'vscode-file://*',
];

const STATUS_TO_KIND = { 401: 'bad_key', 404: 'unknown_model', 429: 'rate_limit', 500: 'server', 503: 'overloaded', 529: 'overloaded' };

/** Splits text into word-ish tokens that keep their leading space, like BPE tokens do. */
export function tokenize(text) {
  return String(text).match(/\s*\S+\s*$|\s*\S+/g) ?? [];
}

/**
 * Starts the mock. Options: port (0 = any free one), delayMs per token (30), apiKey
 * (when set, any other key is rejected as the provider would), retryAfter seconds for
 * 429s (1), contextWindow used in overflow messages (8192), ollamaOrigins (extra
 * allowed Origin patterns), ollamaModels (names listed by /api/tags).
 */
export async function startMockProvider({
  port = 0, delayMs = 30, apiKey, retryAfter = 1, contextWindow = 8192,
  ollamaOrigins = [], ollamaModels = ['llama3.2:latest', 'gemma3:1b'],
} = {}) {
  const requests = [];
  const queue = [];
  let fallback = {};
  const sockets = new Set();
  const waiters = new Set();
  const opts = { delayMs, apiKey, retryAfter, contextWindow, ollamaModels,
    ollamaOrigins: [...OLLAMA_DEFAULT_ORIGINS, ...ollamaOrigins] };

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err) => {
      // A bug in the mock must be loud in the test output, not look like a provider error.
      console.error('[mock-provider]', err);
      if (!res.headersSent) res.writeHead(599).end(String(err?.stack ?? err));
      else res.destroy();
    });
  });
  server.on('connection', (s) => { s.setNoDelay(true); sockets.add(s); s.on('close', () => sockets.delete(s)); });

  async function handle(req, res) {
    const rec = await record(req);
    const route = routeOf(req.method, rec.path, rec.headers);
    rec.provider = route?.provider ?? null;
    Object.assign(rec, toolsOf(rec.provider, rec.body));
    requests.push(rec);
    for (const w of waiters) w(rec);
    // `aborted`: the response never finished (the client left, or cutAfter cut it).
    const gone = new AbortController();
    res.on('close', () => { rec.status = res.statusCode; if (!res.writableFinished) rec.aborted = true; gone.abort(); });
    // `finishedAt`: when the last byte of the response was handed to the network (benchmarks).
    res.on('finish', () => { rec.finishedAt = Date.now(); });

    if (req.method === 'OPTIONS') return preflight(req, res, rec, opts);
    if (!route) return send(res, 404, { error: `mock-provider: no route for ${req.method} ${rec.path}` });

    const p = PROVIDERS[route.provider];
    const ctx = { rec, res, opts, signal: gone.signal, model: route.model ?? rec.body?.model ?? 'unknown-model' };
    // The real services check the caller before anything else; so do we, and a
    // rejected call does not use up a scripted behaviour.
    const denied = p.gate?.(ctx);
    if (denied) return denied();
    if (route.list) return p.list(ctx);

    const b = await nextBehaviour(rec);
    ctx.b = b;
    if (b.latencyMs) await sleep(b.latencyMs, null, { signal: gone.signal }).catch(() => {});
    if (gone.signal.aborted) return;
    // Bytes no well-behaved provider sends (a captive portal's page, a malformed frame, a
    // redirect) are written by the test itself: `respond(res, helpers)`.
    if (b.respond) return b.respond(res, { cors: CORS, signal: gone.signal, cut: () => cutConnection(res) });
    const kind = b.error ?? (b.status ? STATUS_TO_KIND[b.status] ?? 'generic' : null);
    if (kind) return sendError(ctx, kind, b.status);

    ctx.calls = toolCallsOf(b);
    // An answer that calls a tool has no text unless the script gives some.
    const text = b.reply ?? (ctx.calls.length ? '' : `You said: ${p.lastUserText(rec.body) ?? ''}`);
    ctx.tokens = b.tokens ?? tokenize(text);
    // `usage` ({input, output}): the counts to report instead of the mock's own estimate.
    ctx.usage = b.usage ?? { input: promptTokens(rec.body), output: ctx.tokens.length + ctx.calls.length };
    ctx.finish = b.finish === 'length' ? 'length' : ctx.calls.length ? 'tool_calls' : 'stop';
    if (!route.stream(rec)) return p.whole(ctx, ctx.tokens.join(''));
    return p.stream(ctx, streamer(ctx));
  }

  async function nextBehaviour(rec) {
    const i = queue.findIndex((q) => !q.match || (typeof q.match === 'string' ? q.match === rec.provider : q.match(rec)));
    const entry = i >= 0 ? queue.splice(i, 1)[0].b : fallback;
    const b = typeof entry === 'function' ? await entry(rec) : entry;
    return { ...b, delayMs: b?.delayMs ?? opts.delayMs };
  }

  await new Promise((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
  const actualPort = server.address().port;

  return {
    url: `http://127.0.0.1:${actualPort}`,
    port: actualPort,
    /**
     * Every request in arrival order: {method, path, query, headers, body, provider, status,
     * aborted, finishedAt, tools, toolResults}. `tools` lists the tool names the request declared and
     * `toolResults` the results it sent back ({id, name, content, isError}; Anthropic gives
     * no name, OpenAI no name or error flag, Ollama no id), whatever the provider's format.
     */
    requests,
    /**
     * Queues a one-shot behaviour for the next generation request (or the next one
     * `match` accepts: a provider name or a predicate on the recorded request). `b` is
     * an object, or a function of the recorded request that returns one. Fields:
     * reply, tokens, delayMs, latencyMs, error ('bad_key' | 'unknown_model' |
     * 'rate_limit' | 'server' | 'overloaded' | 'context_overflow'), status, retryAfter,
     * cutAfter, stall, stallAfter, streamError, errorAfter, finish ('stop' | 'length'),
     * batch (tokens written back to back between two `delayMs` pauses; 1),
     * respond (async (res, {cors, signal, cut}) => writes the whole response itself),
     * toolCall ({name, arguments, id?}: the answer calls that tool, after `reply` if set),
     * toolCalls (several such calls, made in parallel), argPieces (how many pieces the
     * streamed formats cut the arguments into; 3). With tool calls the finish reason is
     * the provider's own: tool_calls, tool_use, STOP, stop. The pieces of the calls count
     * as tokens for cutAfter, stallAfter and errorAfter. usage ({input, output}): the
     * token counts reported (in each provider's own usage fields) instead of an estimate.
     */
    script(b, { match } = {}) { queue.push({ b, match }); },
    /** Behaviour used when no scripted one matches (object or function, as in script). */
    setDefault(b) { fallback = b ?? {}; },
    /**
     * Resolves with the first request `pred` accepts: among those already recorded,
     * else the next to arrive (judged on arrival, before it is answered).
     */
    waitForRequest(pred = () => true, timeoutMs = 5000) {
      const hit = requests.find(pred);
      if (hit) return Promise.resolve(hit);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => { waiters.delete(w); reject(new Error(`mock-provider: no matching request within ${timeoutMs} ms`)); }, timeoutMs);
        const w = (rec) => { if (pred(rec)) { clearTimeout(t); waiters.delete(w); resolve(rec); } };
        waiters.add(w);
      });
    },
    /** Forgets recorded requests and scripted behaviours (the array object is kept). */
    reset() { requests.length = 0; queue.length = 0; fallback = {}; },
    /** Stops listening and cuts every open connection, stalled streams included. */
    async close() {
      const closed = new Promise((resolve) => server.close(resolve));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

// ---------------------------------------------------------------- plumbing

// The scripted tool calls of a behaviour, whole: [{id, name, arguments, text, pieces}].
// `arguments` is an object (or a string, to play a model that writes broken JSON); `text`
// is it as JSON text and `pieces` that text cut in `argPieces` parts for the formats that
// stream it.
function toolCallsOf(b) {
  const list = b.toolCalls ?? (b.toolCall ? [b.toolCall] : []);
  return list.map((c, i) => {
    const args = c.arguments ?? {};
    const text = typeof args === 'string' ? args : JSON.stringify(args);
    const n = Math.max(1, b.argPieces ?? 3);
    const size = Math.max(1, Math.ceil(text.length / n));
    const pieces = [];
    for (let at = 0; at < text.length; at += size) pieces.push(text.slice(at, at + size));
    return { id: c.id, name: c.name ?? `tool_${i + 1}`, arguments: args, text, pieces };
  });
}

// What a request offered and sent back about tools, in one shape for every provider:
// the declared tool names, and the results it returned ({id, name, content, isError}).
function toolsOf(provider, body) {
  if (!body || typeof body !== 'object') return { tools: [], toolResults: [] };
  const str = (v) => (typeof v === 'string' ? v : partsText(v));
  if (provider === 'openai' || provider === 'ollama') {
    return {
      tools: (body.tools ?? []).map((t) => t.function?.name ?? t.name),
      toolResults: (body.messages ?? []).filter((m) => m.role === 'tool')
        .map((m) => ({ id: m.tool_call_id ?? null, name: m.tool_name ?? m.name ?? null, content: str(m.content), isError: false })),
    };
  }
  if (provider === 'anthropic') {
    const blocks = (body.messages ?? []).filter((m) => m.role === 'user' && Array.isArray(m.content)).flatMap((m) => m.content);
    return {
      tools: (body.tools ?? []).map((t) => t.name),
      toolResults: blocks.filter((x) => x?.type === 'tool_result')
        .map((x) => ({ id: x.tool_use_id, name: null, content: str(x.content), isError: x.is_error === true })),
    };
  }
  if (provider === 'gemini') {
    const parts = (body.contents ?? []).flatMap((c) => c.parts ?? []);
    return {
      tools: (body.tools ?? []).flatMap((t) => t.functionDeclarations ?? []).map((d) => d.name),
      toolResults: parts.filter((x) => x.functionResponse).map(({ functionResponse: r }) => ({
        id: r.id ?? null, name: r.name, isError: r.response?.error != null,
        content: str(r.response?.error ?? r.response?.content ?? r.response?.output ?? JSON.stringify(r.response ?? {})),
      })),
    };
  }
  return { tools: [], toolResults: [] };
}

async function record(req) {
  const u = new URL(req.url, 'http://mock');
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const raw = Buffer.concat(chunks).toString('utf8');
  let body = raw || null;
  try { if (raw) body = JSON.parse(raw); } catch { /* keep the raw text: the test may want to see it */ }
  return {
    method: req.method, path: u.pathname, query: Object.fromEntries(u.searchParams),
    headers: { ...req.headers }, body, provider: null, status: null, aborted: false, at: Date.now(),
  };
}

function routeOf(method, path, headers) {
  if (method === 'OPTIONS') {
    // Preflights name the provider only through the path; good enough for recording.
    const r = routeOf('POST', path, headers) ?? routeOf('GET', path, headers);
    return r && { provider: r.provider };
  }
  if (method === 'POST' && path === '/v1/chat/completions') return { provider: 'openai', stream: (r) => r.body?.stream === true };
  if (method === 'POST' && path === '/v1/messages') return { provider: 'anthropic', stream: (r) => r.body?.stream === true };
  const g = path.match(/^\/(?:v1beta|v1|v1alpha)\/(?:.+\/)?models\/([^/:]+):(streamGenerateContent|generateContent)$/);
  if (method === 'POST' && g) return { provider: 'gemini', model: g[1], stream: () => g[2] === 'streamGenerateContent' };
  // Ollama streams unless told not to: the opposite default of the other three.
  if (method === 'POST' && path === '/api/chat') return { provider: 'ollama', stream: (r) => r.body?.stream !== false };
  if (method === 'GET' && (path === '/api/tags' || path === '/api/version')) return { provider: 'ollama', list: true };
  if (method === 'GET' && path === '/v1/models') return { provider: headers['anthropic-version'] || headers['x-api-key'] ? 'anthropic' : 'openai', list: true };
  if (method === 'GET' && /^\/(?:v1beta|v1)\/models$/.test(path)) return { provider: 'gemini', list: true };
  return null;
}

const CORS = { 'access-control-allow-origin': '*', 'access-control-expose-headers': '*' };

function preflight(req, res, rec, opts) {
  if (rec.provider === 'ollama' && !originAllowed(req.headers.origin, opts.ollamaOrigins)) return res.writeHead(403, { 'content-length': 0 }).end();
  res.writeHead(204, {
    ...CORS,
    'access-control-allow-methods': 'GET, POST, OPTIONS',
    'access-control-allow-headers': req.headers['access-control-request-headers'] ?? '*',
    'access-control-max-age': '600',
  }).end();
}

function send(res, status, json, headers = {}) {
  const body = JSON.stringify(json);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...CORS, ...headers }).end(body);
}

// Flushes what was written, then drops the TCP connection with no end marker: what a dying
// proxy or a crashed upstream looks like to the client.
function cutConnection(res) {
  return new Promise((r) => res.socket.write('', r)).then(() => res.socket.destroy());
}

// Drives one token stream: the per-token delay, cutAfter, stall and in-stream
// errors are handled here once, so each provider only says how a piece looks.
function streamer(ctx) {
  const { res, b, signal } = ctx;
  const cut = () => cutConnection(res);
  // `tail`: pre-rendered pieces written after the tokens (tool calls), paced like them.
  return async function run({ headers, open = [], piece, errorPiece, close, tail = [] }) {
    const { tokens } = ctx; // read late: a provider may adjust them before running
    const total = tokens.length + tail.length;
    res.writeHead(200, { ...CORS, 'cache-control': 'no-cache', ...headers });
    for (const s of open) res.write(s);
    try {
      for (let i = 0; i < total; i++) {
        if (b.cutAfter != null && i >= b.cutAfter) return await cut();
        if (b.stall && i >= (b.stallAfter ?? 2)) return await new Promise((r) => res.once('close', r));
        if (b.streamError && i >= (b.errorAfter ?? 2)) return res.end(errorPiece(b.streamError));
        // `batch`: tokens written back to back between two pauses (a fast flood).
        if (i % Math.max(1, b.batch ?? 1) === 0) await sleep(b.delayMs, null, { signal });
        res.write(i < tokens.length ? piece(tokens[i], i, i === tokens.length - 1 && tail.length === 0) : tail[i - tokens.length]);
      }
      if (b.cutAfter != null && total <= b.cutAfter) return await cut();
      if (b.stall) return await new Promise((r) => res.once('close', r));
      if (b.streamError) return res.end(errorPiece(b.streamError));
      res.end(close());
    } catch (err) {
      if (err.name !== 'AbortError') throw err; // the client went away: nothing left to do
    }
  };
}

function sse(data, event) {
  return `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`;
}

// A rough count (4 characters a token) is enough: tests only need usage to be
// present, positive and deterministic.
function promptTokens(body) {
  return Math.max(1, Math.ceil(JSON.stringify(body ?? '').length / 4));
}

function partsText(content) {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (typeof p === 'string' ? p : p?.text ?? '')).join('');
  return '';
}

function lastOf(list, pred) {
  for (let i = (list?.length ?? 0) - 1; i >= 0; i--) if (pred(list[i])) return list[i];
  return undefined;
}

function keyFrom(ctx, key) {
  return { missing: !key, wrong: !!key && ctx.opts.apiKey != null && key !== ctx.opts.apiKey };
}

function maskKey(key) {
  return key.length > 8 ? `${key.slice(0, 3)}${'*'.repeat(key.length - 7)}${key.slice(-4)}` : key;
}

function overflowCounts(ctx) {
  const max = ctx.opts.contextWindow;
  return { max, got: Math.max(promptTokens(ctx.rec.body), max + 1) };
}

function sendError(ctx, kind, status) {
  const all = PROVIDERS[ctx.rec.provider].errors(ctx);
  const e = all[kind] ?? all.generic;
  const retry = ctx.b?.retryAfter ?? ctx.opts.retryAfter;
  const headers = kind === 'rate_limit' ? { 'retry-after': String(retry) } : {};
  send(ctx.res, status ?? e.status, e.body, headers);
}

function originAllowed(origin, patterns) {
  if (!origin) return true; // curl, Node and other non-browser callers send none
  return patterns.some((p) => (p.endsWith('*') ? origin.startsWith(p.slice(0, -1)) : origin === p));
}

// ---------------------------------------------------------------- providers

const now = () => Math.floor(Date.now() / 1000);

const openai = {
  lastUserText: (body) => partsText(lastOf(body?.messages, (m) => m.role === 'user')?.content),

  gate(ctx) {
    const auth = ctx.rec.headers.authorization ?? '';
    const key = auth.startsWith('Bearer ') ? auth.slice(7).trim() : '';
    const k = keyFrom(ctx, key);
    if (k.missing) return () => send(ctx.res, 401, { error: { message: "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username and password. You can obtain an API key from https://platform.openai.com/account/api-keys.", type: 'invalid_request_error', param: null, code: null } });
    if (k.wrong) return () => sendError({ ...ctx, key }, 'bad_key');
    ctx.key = key;
    return null;
  },

  errors: ({ model, key = '', opts, rec }) => {
    const err = (status, message, type, code = null, param = null) => ({ status, body: { error: { message, type, param, code } } });
    const { max, got } = overflowCounts({ opts, rec });
    return {
      bad_key: err(401, `Incorrect API key provided: ${maskKey(key || 'sk-mock-key')}. You can find your API key at https://platform.openai.com/account/api-keys.`, 'invalid_request_error', 'invalid_api_key'),
      unknown_model: err(404, `The model \`${model}\` does not exist or you do not have access to it.`, 'invalid_request_error', 'model_not_found'),
      rate_limit: err(429, `Rate limit reached for ${model} in organization org-mock on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s. Visit https://platform.openai.com/account/rate-limits to learn more.`, 'requests', 'rate_limit_exceeded'),
      server: err(500, 'The server had an error while processing your request. Sorry about that!', 'server_error'),
      overloaded: err(503, 'The server is overloaded or not ready yet.', 'server_error'),
      context_overflow: err(400, `This model's maximum context length is ${max} tokens. However, your messages resulted in ${got} tokens. Please reduce the length of the messages.`, 'invalid_request_error', 'context_length_exceeded', 'messages'),
      generic: err(400, 'Invalid request (mock-provider generic error).', 'invalid_request_error'),
    };
  },

  list(ctx) {
    send(ctx.res, 200, { object: 'list', data: ['gpt-4o-mini', 'gpt-4o'].map((id) => ({ id, object: 'model', created: 1715367049, owned_by: 'system' })) });
  },

  callId: (c) => c.id ?? `call_${randomUUID().replaceAll('-', '').slice(0, 24)}`,

  whole(ctx, text) {
    const { input, output } = ctx.usage;
    const calls = ctx.calls.map((c) => ({ id: openai.callId(c), type: 'function', function: { name: c.name, arguments: c.text } }));
    const message = { role: 'assistant', content: calls.length && !text ? null : text, ...(calls.length ? { tool_calls: calls } : {}), refusal: null };
    send(ctx.res, 200, {
      id: `chatcmpl-${randomUUID()}`, object: 'chat.completion', created: now(), model: ctx.model,
      choices: [{ index: 0, message, logprobs: null, finish_reason: ctx.finish }],
      usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output },
      service_tier: 'default', system_fingerprint: 'fp_mock',
    });
  },

  stream(ctx, run) {
    const id = `chatcmpl-${randomUUID()}`;
    const created = now();
    const withUsage = ctx.rec.body?.stream_options?.include_usage === true;
    // With include_usage every chunk carries `usage: null` until the last one.
    const chunk = (choices, extra = {}) => sse({
      id, object: 'chat.completion.chunk', created, model: ctx.model, service_tier: 'default',
      system_fingerprint: 'fp_mock', choices, ...(withUsage ? { usage: null } : {}), ...extra,
    });
    const choice = (delta, finish = null) => [{ index: 0, delta, logprobs: null, finish_reason: finish }];
    const { input, output } = ctx.usage;
    // Each call: a first piece with its id, name and empty arguments, then the arguments
    // in pieces, all keyed by the call's index.
    const tail = ctx.calls.flatMap((c, index) => [
      chunk(choice({ tool_calls: [{ index, id: openai.callId(c), type: 'function', function: { name: c.name, arguments: '' } }] })),
      ...c.pieces.map((arguments_) => chunk(choice({ tool_calls: [{ index, function: { arguments: arguments_ } }] }))),
    ]);
    return run({
      headers: { 'content-type': 'text/event-stream; charset=utf-8' },
      // An answer that opens with a call has `content: null`, as OpenAI sends it.
      open: [chunk(choice({ role: 'assistant', content: ctx.calls.length && !ctx.tokens.length ? null : '', refusal: null }))],
      tail,
      piece: (t) => chunk(choice({ content: t })),
      errorPiece: () => sse({ error: { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', param: null, code: null } }),
      close: () => chunk(choice({}, ctx.finish))
        + (withUsage ? chunk([], { usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output } }) : '')
        + 'data: [DONE]\n\n',
    });
  },
};

const anthropic = {
  lastUserText: (body) => partsText(lastOf(body?.messages, (m) => m.role === 'user')?.content),

  gate(ctx) {
    const h = ctx.rec.headers;
    const reply = (status, type, message, cors = true) => () => {
      const body = JSON.stringify({ type: 'error', error: { type, message }, request_id: `req_mock${randomUUID().replaceAll('-', '')}` });
      ctx.res.writeHead(status, { 'content-type': 'application/json', ...(cors ? CORS : {}) }).end(body);
    };
    // Browser callers must opt in; without it the real API answers 401 and no CORS header.
    if (h.origin && h['anthropic-dangerous-direct-browser-access'] !== 'true') return reply(401, 'authentication_error', "CORS requests must set 'anthropic-dangerous-direct-browser-access' header", false);
    const k = keyFrom(ctx, h['x-api-key']);
    if (k.missing) return reply(401, 'authentication_error', 'x-api-key header is required');
    if (k.wrong) return reply(401, 'authentication_error', 'invalid x-api-key');
    if (!h['anthropic-version']) return reply(400, 'invalid_request_error', 'anthropic-version: header is required');
    return null;
  },

  errors: ({ model, opts, rec }) => {
    const err = (status, type, message) => ({ status, body: { type: 'error', error: { type, message }, request_id: `req_mock${randomUUID().replaceAll('-', '')}` } });
    const { max, got } = overflowCounts({ opts, rec });
    return {
      bad_key: err(401, 'authentication_error', 'invalid x-api-key'),
      unknown_model: err(404, 'not_found_error', `model: ${model}`),
      rate_limit: err(429, 'rate_limit_error', 'This request would exceed the rate limit for your organization of 50 requests per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later.'),
      server: err(500, 'api_error', 'Internal server error'),
      overloaded: err(529, 'overloaded_error', 'Overloaded'),
      context_overflow: err(400, 'invalid_request_error', `prompt is too long: ${got} tokens > ${max} maximum`),
      generic: err(400, 'invalid_request_error', 'Invalid request (mock-provider generic error).'),
    };
  },

  list(ctx) {
    const data = ['claude-sonnet-4-5', 'claude-haiku-4-5'].map((id) => ({ type: 'model', id, display_name: id, created_at: '2025-09-29T00:00:00Z' }));
    send(ctx.res, 200, { data, has_more: false, first_id: data[0].id, last_id: data.at(-1).id });
  },

  stopReason: (finish) => ({ length: 'max_tokens', tool_calls: 'tool_use' })[finish] ?? 'end_turn',

  callId: (c) => c.id ?? `toolu_01${randomUUID().replaceAll('-', '').slice(0, 22)}`,

  // A call's input as an object (a broken-JSON string cannot be one: it is wrapped).
  input: (c) => (typeof c.arguments === 'string' ? { raw: c.arguments } : c.arguments),

  whole(ctx, text) {
    const calls = ctx.calls.map((c) => ({ type: 'tool_use', id: anthropic.callId(c), name: c.name, input: anthropic.input(c) }));
    send(ctx.res, 200, {
      id: `msg_mock${randomUUID().replaceAll('-', '')}`, type: 'message', role: 'assistant', model: ctx.model,
      content: [...(text || !calls.length ? [{ type: 'text', text }] : []), ...calls], stop_reason: anthropic.stopReason(ctx.finish), stop_sequence: null,
      usage: { input_tokens: ctx.usage.input, output_tokens: ctx.usage.output },
    });
  },

  stream(ctx, run) {
    const message = {
      id: `msg_mock${randomUUID().replaceAll('-', '')}`, type: 'message', role: 'assistant', model: ctx.model,
      content: [], stop_reason: null, stop_sequence: null,
      usage: { input_tokens: ctx.usage.input, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 },
    };
    const ev = (type, data) => sse({ type, ...data }, type);
    // Without text and with calls, the answer opens with its first tool_use block.
    const textBlock = ctx.tokens.length > 0 || ctx.calls.length === 0;
    const first = textBlock ? 1 : 0;
    // Each call: a tool_use block, its input as input_json_delta pieces (the first one
    // empty, as Anthropic sends it), then its stop. The text block stops first.
    const tail = ctx.calls.length === 0 ? [] : [
      ...(textBlock ? [ev('content_block_stop', { index: 0 })] : []),
      ...ctx.calls.flatMap((c, k) => [
        ev('content_block_start', { index: first + k, content_block: { type: 'tool_use', id: anthropic.callId(c), name: c.name, input: {} } }),
        ...['', ...c.pieces].map((partial_json) => ev('content_block_delta', { index: first + k, delta: { type: 'input_json_delta', partial_json } })),
        ev('content_block_stop', { index: first + k }),
      ]),
    ];
    return run({
      headers: { 'content-type': 'text/event-stream; charset=utf-8' },
      open: [
        ev('message_start', { message }),
        ...(textBlock ? [ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } })] : []),
        ev('ping', {}),
      ],
      tail,
      piece: (t) => ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: t } }),
      errorPiece: () => sse({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, 'error'),
      close: () => (ctx.calls.length ? '' : ev('content_block_stop', { index: 0 }))
        + ev('message_delta', { delta: { stop_reason: anthropic.stopReason(ctx.finish), stop_sequence: null }, usage: { output_tokens: ctx.usage.output } })
        + ev('message_stop', {}),
    });
  },
};

const gemini = {
  lastUserText: (body) => lastOf(body?.contents, (c) => (c.role ?? 'user') === 'user')?.parts?.map((p) => p.text ?? '').join(''),

  gate(ctx) {
    const key = ctx.rec.headers['x-goog-api-key'] || ctx.rec.query.key;
    const k = keyFrom(ctx, key);
    if (k.missing) return () => send(ctx.res, 403, { error: { code: 403, message: "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.", status: 'PERMISSION_DENIED' } });
    if (k.wrong) return () => sendError(ctx, 'bad_key');
    return null;
  },

  errors: ({ model, opts, rec, b }) => {
    const err = (code, status, message, details) => ({ status: code, body: { error: { code, message, status, ...(details ? { details } : {}) } } });
    const { max, got } = overflowCounts({ opts, rec });
    const retry = b?.retryAfter ?? opts.retryAfter;
    return {
      bad_key: err(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', [
        { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com', metadata: { service: 'generativelanguage.googleapis.com' } },
        { '@type': 'type.googleapis.com/google.rpc.LocalizedMessage', locale: 'en-US', message: 'API key not valid. Please pass a valid API key.' },
      ]),
      unknown_model: err(404, 'NOT_FOUND', `models/${model} is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.`),
      rate_limit: err(429, 'RESOURCE_EXHAUSTED', 'You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.', [
        { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${retry}s` },
      ]),
      server: err(500, 'INTERNAL', 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting'),
      overloaded: err(503, 'UNAVAILABLE', 'The model is overloaded. Please try again later.'),
      context_overflow: err(400, 'INVALID_ARGUMENT', `The input token count (${got}) exceeds the maximum number of tokens allowed (${max}).`),
      generic: err(400, 'INVALID_ARGUMENT', 'Request contains an invalid argument.'),
    };
  },

  list(ctx) {
    // As the real API lists them: limits included, and models that cannot chat among them.
    const models = ['gemini-2.5-flash', 'gemini-2.5-pro'].map((m) => ({ name: `models/${m}`, displayName: m, inputTokenLimit: 1048576, outputTokenLimit: 65536, supportedGenerationMethods: ['generateContent', 'countTokens'] }));
    models.push({ name: 'models/text-embedding-004', displayName: 'Text Embedding 004', inputTokenLimit: 2048, outputTokenLimit: 1, supportedGenerationMethods: ['embedContent'] });
    send(ctx.res, 200, { models });
  },

  finishReason: (finish) => (finish === 'length' ? 'MAX_TOKENS' : 'STOP'),

  // Calls come whole, one functionCall part each, without ids.
  callParts: (ctx) => ctx.calls.map((c) => ({ functionCall: { name: c.name, args: c.arguments } })),

  // usageMetadata rides on every chunk and is cumulative; only the last has the output count.
  response(ctx, text, { last, outSoFar, parts }) {
    const { input } = ctx.usage;
    return {
      candidates: [{ content: { parts: parts ?? [{ text }], role: 'model' }, ...(last ? { finishReason: gemini.finishReason(ctx.finish) } : {}), index: 0 }],
      usageMetadata: {
        promptTokenCount: input,
        ...(last ? { candidatesTokenCount: outSoFar } : {}),
        totalTokenCount: input + (last ? outSoFar : 0),
        promptTokensDetails: [{ modality: 'TEXT', tokenCount: input }],
      },
      modelVersion: ctx.model,
      responseId: ctx.responseId,
    };
  },

  whole(ctx, text) {
    ctx.responseId = randomUUID().replaceAll('-', '').slice(0, 22);
    const parts = [...(text || !ctx.calls.length ? [{ text }] : []), ...gemini.callParts(ctx)];
    send(ctx.res, 200, gemini.response(ctx, text, { last: true, outSoFar: ctx.usage.output, parts }));
  },

  stream(ctx, run) {
    ctx.responseId = randomUUID().replaceAll('-', '').slice(0, 22);
    // Without alt=sse the same endpoint streams one JSON array instead of events.
    const asSse = ctx.rec.query.alt === 'sse';
    const errorBody = { error: { code: 500, message: 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting', status: 'INTERNAL' } };
    const frame = (obj, i) => (asSse ? `data: ${JSON.stringify(obj)}\r\n\r\n` : `${i === 0 ? '[' : ',\r\n'}${JSON.stringify(obj)}`);
    // Zero tokens still needs one chunk to carry finishReason (the calls' chunk does).
    if (ctx.tokens.length === 0 && ctx.calls.length === 0) ctx.tokens = [''];
    // All calls in one last chunk, with finishReason and the final usage.
    const tail = ctx.calls.length === 0 ? [] : [frame(gemini.response(ctx, '', { last: true, outSoFar: ctx.usage.output, parts: gemini.callParts(ctx) }), ctx.tokens.length)];
    return run({
      headers: { 'content-type': asSse ? 'text/event-stream' : 'application/json; charset=UTF-8' },
      tail,
      piece: (t, i, last) => frame(gemini.response(ctx, t, { last, outSoFar: ctx.usage.output }), i),
      errorPiece: () => (asSse ? `data: ${JSON.stringify(errorBody)}\r\n\r\n` : `,\r\n${JSON.stringify(errorBody)}]`),
      close: () => (asSse ? '' : ']'),
    });
  },
};

const ollama = {
  lastUserText: (body) => partsText(lastOf(body?.messages, (m) => m.role === 'user')?.content),

  // Ollama has no keys; its one gate is the Origin allow-list (403, empty body).
  gate(ctx) {
    if (!originAllowed(ctx.rec.headers.origin, ctx.opts.ollamaOrigins)) return () => ctx.res.writeHead(403, { 'content-length': 0 }).end();
    return null;
  },

  errors: ({ model }) => {
    const err = (status, error) => ({ status, body: { error } });
    return {
      bad_key: err(401, 'unauthorized'),
      unknown_model: err(404, `model "${model}" not found, try pulling it first`),
      rate_limit: err(429, 'too many requests'),
      server: err(500, 'llama runner process has terminated: exit status 2'),
      overloaded: err(503, 'server busy, please try again.  maximum pending requests exceeded'),
      context_overflow: err(400, 'the input length exceeds the context length'),
      generic: err(400, 'invalid request'),
    };
  },

  list(ctx) {
    if (ctx.rec.path === '/api/version') return send(ctx.res, 200, { version: '0.12.6' });
    const models = ctx.opts.ollamaModels.map((name) => ({
      name, model: name, modified_at: '2025-10-01T12:00:00.000000000Z', size: 2019393189,
      digest: 'a80c4f17acd55265feec403c7aef86be0c25983ab279d83f3bcd3abbcb5b8b72',
      details: { parent_model: '', format: 'gguf', family: 'llama', families: ['llama'], parameter_size: '3.2B', quantization_level: 'Q4_K_M' },
    }));
    send(ctx.res, 200, { models });
  },

  // Calls come whole in one line, arguments as an object, without ids.
  callsMessage: (ctx) => ({ role: 'assistant', content: '', tool_calls: ctx.calls.map((c) => ({ function: { name: c.name, arguments: c.arguments } })) }),

  final(ctx, content, { withCalls = false } = {}) {
    const message = withCalls && ctx.calls.length ? { ...ollama.callsMessage(ctx), content } : { role: 'assistant', content };
    return {
      model: ctx.model, created_at: new Date().toISOString(), message,
      // Ollama says "stop" for an answer that called tools.
      done_reason: ctx.finish === 'tool_calls' ? 'stop' : ctx.finish, done: true, total_duration: 1_000_000_000, load_duration: 50_000_000,
      prompt_eval_count: ctx.usage.input, prompt_eval_duration: 100_000_000,
      eval_count: ctx.usage.output, eval_duration: 800_000_000,
    };
  },

  whole(ctx, text) { send(ctx.res, 200, ollama.final(ctx, text, { withCalls: true })); },

  stream(ctx, run) {
    const line = (o) => `${JSON.stringify(o)}\n`;
    return run({
      headers: { 'content-type': 'application/x-ndjson' },
      tail: ctx.calls.length ? [line({ model: ctx.model, created_at: new Date().toISOString(), message: ollama.callsMessage(ctx), done: false })] : [],
      piece: (t) => line({ model: ctx.model, created_at: new Date().toISOString(), message: { role: 'assistant', content: t }, done: false }),
      errorPiece: () => line({ error: 'an error was encountered while running the model: unexpected EOF' }),
      close: () => line(ollama.final(ctx, '')),
    });
  },
};

const PROVIDERS = { openai, anthropic, gemini, ollama };
