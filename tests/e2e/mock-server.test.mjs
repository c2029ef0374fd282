// Tests of the mock providers themselves (and the tiny site server), with Node's
// fetch. The browser tests lean on these servers to judge the extension, so the
// servers have to be right first: each format must end with its own marker, each
// scripted failure must look like the provider's.
//
//   cd tests/e2e && node --test mock-server.test.mjs

import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { startMockProvider } from './lib/mock-provider.mjs';
import { startSite } from './lib/fixtures.mjs';

let mock;
before(async () => { mock = await startMockProvider({ delayMs: 2 }); });
after(() => mock.close());
beforeEach(() => mock.reset());

const KEYS = {
  openai: { authorization: 'Bearer sk-test-1234567890' },
  anthropic: { 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01' },
  gemini: { 'x-goog-api-key': 'AIza-test' },
  ollama: {},
};

// One request per provider that asks for a stream saying "hello world".
const CALLS = {
  openai: { path: '/v1/chat/completions', body: { model: 'gpt-4o-mini', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hello world' }] } },
  anthropic: { path: '/v1/messages', body: { model: 'claude-sonnet-4-5', max_tokens: 64, stream: true, messages: [{ role: 'user', content: [{ type: 'text', text: 'hello world' }] }] } },
  gemini: { path: '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse', body: { contents: [{ role: 'user', parts: [{ text: 'hello world' }] }] } },
  ollama: { path: '/api/chat', body: { model: 'llama3.2', messages: [{ role: 'user', content: 'hello world' }] } },
};

function call(provider, { headers = {}, body, path, signal } = {}) {
  const c = CALLS[provider];
  return fetch(mock.url + (path ?? c.path), {
    method: 'POST', signal,
    headers: { 'content-type': 'application/json', ...KEYS[provider], ...headers },
    body: JSON.stringify(body ?? c.body),
  });
}

// Splits an SSE body into {event, data} records; tolerant of LF and CRLF, as a
// real client must be.
function parseSse(text) {
  return text.split(/\r?\n\r?\n/).filter(Boolean).map((block) => {
    const ev = {};
    for (const line of block.split(/\r?\n/)) {
      const m = line.match(/^(event|data): ?(.*)$/);
      if (m) ev[m[1]] = m[2];
    }
    return ev;
  });
}

const json = (s) => (s === '[DONE]' ? s : JSON.parse(s));

// The server learns of a closed connection a moment after the client does.
async function until(cond, ms = 1000) {
  for (const t0 = Date.now(); !cond(); await new Promise((r) => setTimeout(r, 5))) {
    if (Date.now() - t0 > ms) throw new Error(`condition not met within ${ms} ms`);
  }
}

test('OpenAI streams role, tokens, stop, usage, then [DONE]', async () => {
  const res = await call('openai');
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /^text\/event-stream/);
  assert.equal(res.headers.get('access-control-allow-origin'), '*');
  const events = parseSse(await res.text()).map((e) => json(e.data));
  assert.equal(events.at(-1), '[DONE]');
  const chunks = events.slice(0, -1);
  for (const c of chunks) {
    assert.equal(c.object, 'chat.completion.chunk');
    assert.equal(c.id, chunks[0].id);
    assert.equal(typeof c.created, 'number');
    assert.equal(c.model, 'gpt-4o-mini');
  }
  assert.equal(chunks[0].choices[0].delta.role, 'assistant');
  const usageChunk = chunks.at(-1);
  assert.deepEqual(usageChunk.choices, []);
  assert.equal(usageChunk.usage.completion_tokens, 4);
  assert.equal(usageChunk.usage.total_tokens, usageChunk.usage.prompt_tokens + 4);
  const stop = chunks.at(-2);
  assert.equal(stop.choices[0].finish_reason, 'stop');
  assert.deepEqual(stop.choices[0].delta, {});
  for (const c of chunks.slice(0, -1)) assert.equal(c.usage, null);
  const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
  assert.equal(text, 'You said: hello world');
  assert.equal(chunks.filter((c) => c.choices[0]?.delta.content).length, 4, 'one chunk per token');
});

test('OpenAI without include_usage sends no usage chunk; non-stream answers chat.completion', async () => {
  const plain = parseSse(await (await call('openai', { body: { ...CALLS.openai.body, stream_options: undefined } })).text()).map((e) => json(e.data));
  assert.equal(plain.at(-1), '[DONE]');
  assert.equal(plain.at(-2).choices[0].finish_reason, 'stop');
  assert.ok(plain.slice(0, -1).every((c) => !('usage' in c)));

  const res = await call('openai', { body: { ...CALLS.openai.body, stream: false } });
  const body = await res.json();
  assert.equal(body.object, 'chat.completion');
  assert.equal(body.choices[0].message.content, 'You said: hello world');
  assert.equal(body.choices[0].finish_reason, 'stop');
  assert.equal(body.usage.completion_tokens, 4);
});

test('Anthropic streams the full event sequence', async () => {
  const res = await call('anthropic');
  assert.equal(res.status, 200);
  const events = parseSse(await res.text());
  for (const e of events) assert.equal(json(e.data).type, e.event, 'event name matches data.type');
  assert.deepEqual(events.map((e) => e.event), [
    'message_start', 'content_block_start', 'ping',
    'content_block_delta', 'content_block_delta', 'content_block_delta', 'content_block_delta',
    'content_block_stop', 'message_delta', 'message_stop',
  ]);
  const data = events.map((e) => json(e.data));
  assert.equal(data[0].message.role, 'assistant');
  assert.equal(data[0].message.model, 'claude-sonnet-4-5');
  assert.ok(data[0].message.usage.input_tokens > 0);
  assert.equal(data.filter((d) => d.type === 'content_block_delta').map((d) => d.delta.text).join(''), 'You said: hello world');
  assert.ok(data.filter((d) => d.type === 'content_block_delta').every((d) => d.delta.type === 'text_delta'));
  const delta = data.find((d) => d.type === 'message_delta');
  assert.equal(delta.delta.stop_reason, 'end_turn');
  assert.equal(delta.usage.output_tokens, 4);
});

test('Anthropic checks key, version and browser opt-in like the real API', async () => {
  const noKey = await call('anthropic', { headers: { 'x-api-key': '' } });
  assert.equal(noKey.status, 401);
  assert.deepEqual((await noKey.json()).error, { type: 'authentication_error', message: 'x-api-key header is required' });

  const noVersion = await call('anthropic', { headers: { 'anthropic-version': '' } });
  assert.equal(noVersion.status, 400);
  const nv = await noVersion.json();
  assert.equal(nv.type, 'error');
  assert.equal(nv.error.type, 'invalid_request_error');
  assert.match(nv.request_id, /^req_/);

  const browser = await call('anthropic', { headers: { origin: 'chrome-extension://abcdef' } });
  assert.equal(browser.status, 401);
  assert.equal(browser.headers.get('access-control-allow-origin'), null, 'no CORS header without the opt-in');
  assert.match((await browser.json()).error.message, /anthropic-dangerous-direct-browser-access/);

  const optedIn = await call('anthropic', { headers: { origin: 'chrome-extension://abcdef', 'anthropic-dangerous-direct-browser-access': 'true' } });
  assert.equal(optedIn.status, 200);
  await optedIn.text();
});

test('Anthropic non-stream answers a message', async () => {
  const body = await (await call('anthropic', { body: { ...CALLS.anthropic.body, stream: false } })).json();
  assert.equal(body.type, 'message');
  assert.deepEqual(body.content, [{ type: 'text', text: 'You said: hello world' }]);
  assert.equal(body.stop_reason, 'end_turn');
});

test('Gemini SSE: GenerateContentResponse chunks, last has STOP + usage, no [DONE]', async () => {
  const res = await call('gemini');
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /^text\/event-stream/);
  const raw = await res.text();
  assert.ok(raw.includes('\r\n\r\n'), 'Gemini separates events with CRLF CRLF');
  assert.ok(!raw.includes('[DONE]'));
  const chunks = parseSse(raw).map((e) => json(e.data));
  assert.equal(chunks.length, 4);
  for (const c of chunks) {
    assert.equal(c.candidates[0].content.role, 'model');
    assert.equal(c.modelVersion, 'gemini-2.5-flash');
    assert.ok(c.usageMetadata.promptTokenCount > 0);
  }
  assert.equal(chunks.map((c) => c.candidates[0].content.parts[0].text).join(''), 'You said: hello world');
  assert.ok(chunks.slice(0, -1).every((c) => !c.candidates[0].finishReason));
  const last = chunks.at(-1);
  assert.equal(last.candidates[0].finishReason, 'STOP');
  assert.equal(last.usageMetadata.candidatesTokenCount, 4);
  assert.equal(last.usageMetadata.totalTokenCount, last.usageMetadata.promptTokenCount + 4);
});

test('Gemini takes the key from ?key=, serves the Firebase path, and refuses a missing key', async () => {
  const viaQuery = await call('gemini', { headers: { 'x-goog-api-key': '' }, path: '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse&key=AIza-q' });
  assert.equal(viaQuery.status, 200);
  await viaQuery.text();

  const firebase = await call('gemini', { path: '/v1beta/projects/my-proj/models/gemini-2.5-flash:streamGenerateContent?alt=sse' });
  assert.equal(firebase.status, 200);
  assert.equal(parseSse(await firebase.text()).map((e) => json(e.data).candidates[0].content.parts[0].text).join(''), 'You said: hello world');
  const rec = mock.requests.at(-1);
  assert.equal(rec.provider, 'gemini');
  assert.equal(rec.path, '/v1beta/projects/my-proj/models/gemini-2.5-flash:streamGenerateContent');

  const noKey = await call('gemini', { headers: { 'x-goog-api-key': '' } });
  assert.equal(noKey.status, 403);
  assert.equal((await noKey.json()).error.status, 'PERMISSION_DENIED');
});

test('Ollama streams NDJSON and ends with done:true; /api/tags lists models', async () => {
  const res = await call('ollama');
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'application/x-ndjson');
  const lines = (await res.text()).trim().split('\n').map((l) => JSON.parse(l));
  assert.ok(lines.slice(0, -1).every((l) => l.done === false && l.message.role === 'assistant' && l.model === 'llama3.2'));
  assert.equal(lines.slice(0, -1).map((l) => l.message.content).join(''), 'You said: hello world');
  const last = lines.at(-1);
  assert.equal(last.done, true);
  assert.equal(last.done_reason, 'stop');
  assert.equal(last.eval_count, 4);
  assert.ok(last.prompt_eval_count > 0);

  const whole = await (await call('ollama', { body: { ...CALLS.ollama.body, stream: false } })).json();
  assert.equal(whole.message.content, 'You said: hello world');
  assert.equal(whole.done, true);

  const tags = await (await fetch(`${mock.url}/api/tags`)).json();
  assert.ok(tags.models.some((m) => m.name === 'llama3.2:latest'));
});

test('Ollama refuses extension origins unless allowed, like OLLAMA_ORIGINS', async () => {
  const refused = await call('ollama', { headers: { origin: 'chrome-extension://abcdef' } });
  assert.equal(refused.status, 403);
  assert.equal(await refused.text(), '');

  const open = await startMockProvider({ delayMs: 0, ollamaOrigins: ['chrome-extension://*'] });
  try {
    const ok = await fetch(`${open.url}/api/chat`, { method: 'POST', headers: { origin: 'chrome-extension://abcdef' }, body: JSON.stringify(CALLS.ollama.body) });
    assert.equal(ok.status, 200);
    await ok.text();
  } finally { await open.close(); }
});

// Each provider's real status and body for each kind of failure.
const ERRORS = {
  openai: {
    bad_key: [401, (b) => b.error.code === 'invalid_api_key' && b.error.type === 'invalid_request_error' && /Incorrect API key/.test(b.error.message)],
    unknown_model: [404, (b) => b.error.code === 'model_not_found'],
    rate_limit: [429, (b) => b.error.code === 'rate_limit_exceeded'],
    server: [500, (b) => b.error.type === 'server_error'],
    overloaded: [503, (b) => b.error.type === 'server_error'],
    context_overflow: [400, (b) => b.error.code === 'context_length_exceeded' && b.error.param === 'messages' && b.error.type === 'invalid_request_error' && /^This model's maximum context length is \d+ tokens/.test(b.error.message)],
  },
  anthropic: {
    bad_key: [401, (b) => b.error.type === 'authentication_error'],
    unknown_model: [404, (b) => b.error.type === 'not_found_error' && b.error.message === 'model: claude-sonnet-4-5'],
    rate_limit: [429, (b) => b.error.type === 'rate_limit_error'],
    server: [500, (b) => b.error.type === 'api_error'],
    overloaded: [529, (b) => b.error.type === 'overloaded_error' && b.error.message === 'Overloaded'],
    context_overflow: [400, (b) => b.error.type === 'invalid_request_error' && /^prompt is too long: \d+ tokens > \d+ maximum$/.test(b.error.message)],
  },
  gemini: {
    bad_key: [400, (b) => b.error.status === 'INVALID_ARGUMENT' && b.error.details[0].reason === 'API_KEY_INVALID'],
    unknown_model: [404, (b) => b.error.status === 'NOT_FOUND' && b.error.message.startsWith('models/gemini-2.5-flash is not found')],
    rate_limit: [429, (b) => b.error.status === 'RESOURCE_EXHAUSTED' && b.error.details.some((d) => d.retryDelay === '1s')],
    server: [500, (b) => b.error.status === 'INTERNAL'],
    overloaded: [503, (b) => b.error.status === 'UNAVAILABLE'],
    context_overflow: [400, (b) => b.error.code === 400 && b.error.status === 'INVALID_ARGUMENT' && /^The input token count \(\d+\) exceeds the maximum number of tokens allowed \(\d+\)\.$/.test(b.error.message)],
  },
  ollama: {
    bad_key: [401, (b) => b.error === 'unauthorized'],
    unknown_model: [404, (b) => b.error === 'model "llama3.2" not found, try pulling it first'],
    rate_limit: [429, (b) => typeof b.error === 'string'],
    server: [500, (b) => typeof b.error === 'string'],
    overloaded: [503, (b) => /server busy/.test(b.error)],
    context_overflow: [400, (b) => /exceeds the context length/.test(b.error)],
  },
};

for (const [provider, kinds] of Object.entries(ERRORS)) {
  test(`${provider}: every scripted error has the provider's status and body`, async () => {
    for (const [kind, [status, check]] of Object.entries(kinds)) {
      mock.script({ error: kind });
      const res = await call(provider);
      assert.equal(res.status, status, `${provider} ${kind}`);
      assert.match(res.headers.get('content-type'), /application\/json/);
      const body = await res.json();
      assert.ok(check(body), `${provider} ${kind}: ${JSON.stringify(body)}`);
      assert.equal(res.headers.get('retry-after'), kind === 'rate_limit' ? '1' : null);
    }
    // The queue is empty again: the next call succeeds.
    assert.equal((await call(provider)).status, 200);
  });
}

test('`status` alone picks the matching kind; an explicit status overrides the real one', async () => {
  mock.script({ status: 429, retryAfter: 7 });
  const limited = await call('anthropic');
  assert.equal(limited.status, 429);
  assert.equal(limited.headers.get('retry-after'), '7');
  assert.equal((await limited.json()).error.type, 'rate_limit_error');

  mock.script({ error: 'bad_key', status: 401 });
  const gem = await call('gemini');
  assert.equal(gem.status, 401);
  assert.equal((await gem.json()).error.details[0].reason, 'API_KEY_INVALID');
});

test('a configured apiKey makes other keys fail as the provider would', async () => {
  const strict = await startMockProvider({ apiKey: 'right', delayMs: 0 });
  try {
    const post = (path, headers) => fetch(strict.url + path, { method: 'POST', headers, body: JSON.stringify(CALLS.openai.body) });
    const wrong = await post('/v1/chat/completions', { authorization: 'Bearer sk-wrong-key-123456' });
    assert.equal(wrong.status, 401);
    assert.match((await wrong.json()).error.message, /^Incorrect API key provided: sk-\*+3456\. You can find your API key at/);
    const right = await post('/v1/chat/completions', { authorization: 'Bearer right' });
    assert.equal(right.status, 200);
    await right.text();
    assert.equal(strict.requests.length, 2);
  } finally { await strict.close(); }
});

test('cutAfter sends n tokens then drops the connection without an end marker', async () => {
  for (const provider of Object.keys(CALLS)) {
    mock.script({ cutAfter: 2, reply: 'one two three four five' });
    const res = await call(provider);
    assert.equal(res.status, 200);
    const reader = res.body.getReader();
    let text = '';
    const err = await (async () => {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return null;
          text += Buffer.from(value).toString();
        }
      } catch (e) { return e; }
    })();
    assert.ok(err, `${provider}: the body must fail, not end cleanly`);
    assert.ok(text.includes(' two') && !text.includes(' three'), `${provider}: exactly two tokens`);
    for (const marker of ['[DONE]', 'message_stop', 'STOP', '"done":true']) assert.ok(!text.includes(marker), `${provider}: no ${marker}`);
    const rec = mock.requests.at(-1);
    await until(() => rec.aborted);
    assert.equal(rec.provider, provider);
  }
});

test('stall sends headers and a few tokens, then hangs until the client aborts', async () => {
  mock.script({ stall: true, stallAfter: 1 });
  const ac = new AbortController();
  const res = await call('openai', { signal: ac.signal });
  assert.equal(res.status, 200);
  const reader = res.body.getReader();
  let text = '';
  while (!text.includes('"You"')) text += Buffer.from((await reader.read()).value).toString();
  const next = reader.read();
  const raced = await Promise.race([next.then(() => 'data'), new Promise((r) => setTimeout(r, 300, 'quiet'))]);
  assert.equal(raced, 'quiet', 'nothing more arrives while stalled');
  ac.abort();
  await assert.rejects(next, { name: 'AbortError' });
  const rec = mock.requests.at(-1);
  await until(() => rec.aborted);
  assert.equal(rec.aborted, true, 'the server saw the client leave');
});

test('in-stream errors use each provider\'s payload and stop the stream', async () => {
  const expect = {
    openai: (t) => parseSse(t).map((e) => json(e.data)).at(-1).error.type === 'server_error' && !t.includes('[DONE]'),
    anthropic: (t) => { const e = parseSse(t).at(-1); return e.event === 'error' && json(e.data).error.type === 'overloaded_error' && !t.includes('message_stop'); },
    gemini: (t) => parseSse(t).map((e) => json(e.data)).at(-1).error.status === 'INTERNAL' && !t.includes('"STOP"'),
    ollama: (t) => { const l = t.trim().split('\n').map((x) => JSON.parse(x)); return typeof l.at(-1).error === 'string' && !l.some((x) => x.done); },
  };
  for (const [provider, ok] of Object.entries(expect)) {
    mock.script({ streamError: true, errorAfter: 1 });
    const res = await call(provider);
    assert.equal(res.status, 200);
    const t = await res.text();
    assert.ok(ok(t), `${provider}: ${t}`);
  }
});

test('finish: "length" maps to each provider\'s truncation reason', async () => {
  mock.script({ finish: 'length' });
  assert.equal(parseSse(await (await call('openai')).text()).map((e) => json(e.data)).at(-3).choices[0].finish_reason, 'length');
  mock.script({ finish: 'length' });
  assert.equal(parseSse(await (await call('anthropic')).text()).map((e) => json(e.data)).find((d) => d.type === 'message_delta').delta.stop_reason, 'max_tokens');
  mock.script({ finish: 'length' });
  assert.equal(parseSse(await (await call('gemini')).text()).map((e) => json(e.data)).at(-1).candidates[0].finishReason, 'MAX_TOKENS');
  mock.script({ finish: 'length' });
  assert.equal(JSON.parse((await (await call('ollama')).text()).trim().split('\n').at(-1)).done_reason, 'length');
});

test('per-token delay is honoured', async () => {
  mock.script({ reply: 'a b c d e f', delayMs: 40 });
  const t0 = performance.now();
  const res = await call('ollama');
  await res.text();
  const ms = performance.now() - t0;
  assert.ok(ms >= 6 * 40 - 5, `took ${ms} ms`);
  assert.ok(ms < 2000, `took ${ms} ms`);
});

test('scripts: queue order, provider match, functions and a default', async () => {
  mock.setDefault({ reply: 'default answer' });
  mock.script({ reply: 'for gemini' }, { match: 'gemini' });
  mock.script((rec) => ({ reply: `fn saw ${rec.body.model}` }));
  const text = async (p) => {
    const t = await (await call(p, { body: { ...CALLS[p].body, stream: false } })).json();
    return t.choices?.[0].message.content ?? t.content?.[0].text ?? t.message?.content ?? t.candidates?.[0].content.parts[0].text;
  };
  assert.equal(await text('openai'), 'fn saw gpt-4o-mini');
  assert.equal(await text('openai'), 'default answer');
  // Gemini's non-stream endpoint is :generateContent, not stream:false.
  const g = await (await call('gemini', { path: '/v1beta/models/gemini-2.5-flash:generateContent' })).json();
  assert.equal(g.candidates[0].content.parts[0].text, 'for gemini');
  assert.equal(g.candidates[0].finishReason, 'STOP');
});

test('requests are recorded in arrival order with headers (secrets kept) and parsed bodies', async () => {
  await (await call('openai')).text();
  await (await call('anthropic')).text();
  const waited = mock.waitForRequest((r) => r.path === '/api/tags');
  await (await fetch(`${mock.url}/api/tags`)).text();
  assert.equal((await waited).provider, 'ollama');
  assert.deepEqual(mock.requests.map((r) => [r.method, r.path, r.provider]), [
    ['POST', '/v1/chat/completions', 'openai'],
    ['POST', '/v1/messages', 'anthropic'],
    ['GET', '/api/tags', 'ollama'],
  ]);
  const [o, a] = mock.requests;
  assert.equal(o.headers.authorization, 'Bearer sk-test-1234567890');
  assert.equal(a.headers['x-api-key'], 'sk-ant-test');
  assert.deepEqual(o.body, CALLS.openai.body);
  assert.equal(o.status, 200);
  assert.equal(o.aborted, false);
});

test('CORS preflight is answered', async () => {
  const res = await fetch(`${mock.url}/v1/chat/completions`, {
    method: 'OPTIONS',
    headers: { origin: 'http://127.0.0.1:9', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
  });
  assert.equal(res.status, 204);
  assert.equal(res.headers.get('access-control-allow-origin'), '*');
  assert.equal(res.headers.get('access-control-allow-headers'), 'authorization,content-type');
  assert.match(res.headers.get('access-control-allow-methods'), /POST/);
});

test('close() ends promptly even with a stalled stream open', async () => {
  const m = await startMockProvider();
  m.script({ stall: true });
  const res = await fetch(`${m.url}/api/chat`, { method: 'POST', body: JSON.stringify(CALLS.ollama.body) });
  const reader = res.body.getReader();
  await reader.read();
  const t0 = performance.now();
  await m.close();
  assert.ok(performance.now() - t0 < 500);
  await assert.rejects(async () => { for (;;) if ((await reader.read()).done) throw new Error('ended cleanly'); }, (e) => e.message !== 'ended cleanly');
});

test('startSite serves the given pages and records requests', async () => {
  const site = await startSite({
    routes: {
      '/': '<!doctype html><title>Home</title><a href="/form">form</a>',
      '/data.json': { body: '{"a":1}', type: 'application/json' },
      '/echo': (req) => `<p>${req.method} ${req.body}</p>`,
    },
  });
  try {
    const home = await fetch(`${site.url}/`);
    assert.match(home.headers.get('content-type'), /^text\/html/);
    assert.match(await home.text(), /<title>Home<\/title>/);
    assert.deepEqual(await (await fetch(`${site.url}/data.json`)).json(), { a: 1 });
    assert.equal(await (await fetch(`${site.url}/echo`, { method: 'POST', body: 'q=1' })).text(), '<p>POST q=1</p>');
    assert.equal((await fetch(`${site.url}/missing`)).status, 404);
    site.setRoute('/late', '<p>late</p>');
    assert.equal(await (await fetch(`${site.url}/late`)).text(), '<p>late</p>');
    assert.deepEqual(site.requests.map((r) => r.path), ['/', '/data.json', '/echo', '/missing', '/late']);
  } finally { await site.close(); }
});

test('fake LanguageModel: download, streaming deltas, overflow, quota, abort, failNext', async () => {
  globalThis.__fakeLanguageModel = { availability: 'downloadable', delayMs: 1, contextWindow: 40 };
  await import('./lib/fake-language-model.js');
  const { LanguageModel } = globalThis;
  assert.equal(await LanguageModel.availability(), 'downloadable');
  const progress = [];
  const s = await LanguageModel.create({ monitor: (m) => m.addEventListener('downloadprogress', (e) => progress.push(e.loaded)) });
  assert.deepEqual(progress, [0, 0.5, 1]);
  assert.equal(await LanguageModel.availability(), 'available');

  const parts = [];
  for await (const p of s.promptStreaming('hello there')) parts.push(p);
  assert.deepEqual(parts, ['You', ' said:', ' hello', ' there']);
  assert.equal(s.inputUsage, s.contextUsage);
  assert.equal(s.inputQuota, 40);

  let overflowed = 0;
  s.addEventListener('contextoverflow', () => overflowed++);
  s.onquotaoverflow = () => overflowed++;
  await s.prompt('x'.repeat(140)); // 35 tokens: does not fit beside the earlier turn's 7
  assert.equal(overflowed, 2);
  await assert.rejects(s.prompt('x'.repeat(400)), { name: 'QuotaExceededError' });

  const ac = new AbortController();
  const pending = s.prompt('slow', { signal: ac.signal });
  ac.abort();
  await assert.rejects(pending, { name: 'AbortError' });

  globalThis.__fakeLanguageModel.failNext = 'UnknownError';
  await assert.rejects(s.prompt('hi'), { name: 'UnknownError' });
  assert.equal(await s.prompt('hi'), 'You said: hi');
  assert.ok(globalThis.__fakeLanguageModel.calls.some((c) => c.method === 'create'));

  globalThis.__fakeLanguageModel.availability = 'unavailable';
  await assert.rejects(LanguageModel.create(), { name: 'NotSupportedError' });
});

test('fake LanguageModel: image parts only from a session created with image input, as Chrome', async () => {
  await import('./lib/fake-language-model.js');
  const { LanguageModel } = globalThis;
  const cfg = globalThis.__fakeLanguageModel;
  Object.assign(cfg, { availability: 'available', contextWindow: 4096, images: false, reply: null });
  const seeing = { expectedInputs: [{ type: 'text' }, { type: 'image' }] };
  const jpeg = new Blob([new Uint8Array([0xff, 0xd8, 0xff, 0xe0])], { type: 'image/jpeg' });
  const prompt = [{ role: 'user', content: [{ type: 'text', value: 'What is this?' }, { type: 'image', value: jpeg }] }];

  // A device whose model takes no images.
  assert.equal(await LanguageModel.availability(seeing), 'unavailable');
  await assert.rejects(LanguageModel.create(seeing), { name: 'NotSupportedError' });
  // A text-only session refuses an image part.
  const text = await LanguageModel.create({ expectedInputs: [{ type: 'text' }] });
  await assert.rejects(text.prompt(prompt), { name: 'NotSupportedError' });

  // A device whose model takes images: the part is accepted, recorded, and given to the reply.
  cfg.images = true;
  assert.equal(await LanguageModel.availability(seeing), 'available');
  const s = await LanguageModel.create(seeing);
  let given;
  cfg.reply = async (said, { parts }) => { given = parts; return `${said} ${parts.length} parts`; };
  assert.equal(await s.prompt(prompt), 'What is this? 2 parts');
  assert.equal(given[1].value, jpeg);
  const call = cfg.calls.filter((c) => c.method === 'prompt').at(-1);
  assert.deepEqual([...new Uint8Array(await call.input[0].content[1].value.arrayBuffer())], [0xff, 0xd8, 0xff, 0xe0]);
  await assert.rejects(s.prompt([{ role: 'user', content: [{ type: 'image', value: 'not an image' }] }]), { name: 'TypeError' });
  Object.assign(cfg, { images: false, reply: null });
});

// ---------------------------------------------------------------- tool calls

const WEATHER = { name: 'get_weather', arguments: { city: 'Zürich', unit: 'celsius' } };

test('OpenAI tool call: id and name first, arguments in pieces by index, finish tool_calls', async () => {
  mock.script({ reply: 'Let me check.', toolCalls: [WEATHER, { name: 'list_tabs', arguments: {}, id: 'call_fixed' }] });
  const events = parseSse(await (await call('openai')).text()).map((e) => json(e.data));
  assert.equal(events.at(-1), '[DONE]');
  const deltas = events.slice(0, -1).map((c) => c.choices[0]?.delta).filter(Boolean);
  assert.equal(deltas.map((d) => d.content ?? '').join(''), 'Let me check.');
  const pieces = deltas.flatMap((d) => d.tool_calls ?? []);
  const first = pieces.filter((p) => p.index === 0);
  assert.match(first[0].id, /^call_/);
  assert.equal(first[0].type, 'function');
  assert.deepEqual(first[0].function, { name: 'get_weather', arguments: '' });
  assert.ok(first.slice(1).every((p) => !p.id && !p.function.name));
  assert.ok(first.length >= 3, 'arguments split across chunks');
  assert.deepEqual(JSON.parse(first.map((p) => p.function.arguments).join('')), WEATHER.arguments);
  const second = pieces.filter((p) => p.index === 1);
  assert.equal(second[0].id, 'call_fixed');
  assert.equal(second.map((p) => p.function.arguments).join(''), '{}');
  assert.equal(events.at(-3).choices[0].finish_reason, 'tool_calls');

  // Without text the first chunk has content null, as OpenAI sends it; non-stream answers
  // carry the calls whole.
  mock.script({ toolCall: WEATHER });
  const only = parseSse(await (await call('openai')).text()).map((e) => json(e.data));
  assert.equal(only[0].choices[0].delta.content, null);
  mock.script({ toolCall: WEATHER });
  const whole = await (await call('openai', { body: { ...CALLS.openai.body, stream: false } })).json();
  assert.equal(whole.choices[0].message.content, null);
  assert.equal(whole.choices[0].message.tool_calls[0].function.arguments, JSON.stringify(WEATHER.arguments));
  assert.equal(whole.choices[0].finish_reason, 'tool_calls');
});

test('Anthropic tool call: tool_use block, input_json_delta pieces, stop_reason tool_use', async () => {
  mock.script({ reply: 'Checking.', toolCall: WEATHER });
  const events = parseSse(await (await call('anthropic')).text());
  for (const e of events) assert.equal(json(e.data).type, e.event);
  assert.deepEqual(events.map((e) => e.event), [
    'message_start', 'content_block_start', 'ping', 'content_block_delta',
    'content_block_stop',
    'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_delta', 'content_block_delta', 'content_block_stop',
    'message_delta', 'message_stop',
  ]);
  const data = events.map((e) => json(e.data));
  const start = data[5];
  assert.equal(start.index, 1);
  assert.equal(start.content_block.type, 'tool_use');
  assert.match(start.content_block.id, /^toolu_/);
  assert.equal(start.content_block.name, 'get_weather');
  assert.deepEqual(start.content_block.input, {});
  const json_ = data.filter((d) => d.delta?.type === 'input_json_delta').map((d) => d.delta.partial_json);
  assert.equal(json_[0], '');
  assert.deepEqual(JSON.parse(json_.join('')), WEATHER.arguments);
  assert.equal(data.at(-2).delta.stop_reason, 'tool_use');

  // A call alone opens with the tool_use block at index 0.
  mock.script({ toolCall: WEATHER });
  const only = parseSse(await (await call('anthropic')).text()).map((e) => json(e.data));
  const opened = only.filter((d) => d.type === 'content_block_start');
  assert.deepEqual(opened.map((d) => [d.index, d.content_block.type]), [[0, 'tool_use']]);
  assert.equal(only.filter((d) => d.type === 'content_block_stop').length, 1);
});

test('Gemini tool call: functionCall parts whole in the last chunk with STOP; Ollama: tool_calls line then done', async () => {
  mock.script({ reply: 'Checking.', toolCalls: [WEATHER, { name: 'list_tabs' }] });
  const chunks = parseSse(await (await call('gemini')).text()).map((e) => json(e.data));
  const last = chunks.at(-1);
  assert.deepEqual(last.candidates[0].content.parts, [
    { functionCall: { name: 'get_weather', args: WEATHER.arguments } },
    { functionCall: { name: 'list_tabs', args: {} } },
  ]);
  assert.equal(last.candidates[0].finishReason, 'STOP');
  assert.ok(chunks.slice(0, -1).every((c) => !c.candidates[0].finishReason));
  assert.equal(chunks.slice(0, -1).map((c) => c.candidates[0].content.parts[0].text).join(''), 'Checking.');

  mock.script({ toolCall: WEATHER });
  const lines = (await (await call('ollama')).text()).trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(lines.length, 2);
  assert.deepEqual(lines[0].message.tool_calls, [{ function: { name: 'get_weather', arguments: WEATHER.arguments } }]);
  assert.equal(lines[0].done, false);
  assert.equal(lines[1].done, true);
  assert.equal(lines[1].done_reason, 'stop');
});

test('a tool call can be cut mid-arguments, and broken arguments are sent as written', async () => {
  mock.script({ toolCall: WEATHER, cutAfter: 2 });
  const res = await call('openai');
  const text = await res.text().catch(() => 'cut');
  assert.ok(!text.includes('[DONE]') && !text.includes('tool_calls"}'));

  mock.script({ toolCall: { name: 'search', arguments: '{"query": "rust' } });
  const pieces = parseSse(await (await call('anthropic')).text()).map((e) => json(e.data))
    .filter((d) => d.delta?.type === 'input_json_delta').map((d) => d.delta.partial_json).join('');
  assert.equal(pieces, '{"query": "rust');
});

test('the request log names the declared tools and the results sent back, for every format', async () => {
  const bodies = {
    openai: { ...CALLS.openai.body, tools: [{ type: 'function', function: { name: 'get_weather', parameters: {} } }], messages: [
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '12°C' },
    ] },
    anthropic: { ...CALLS.anthropic.body, tools: [{ name: 'get_weather', input_schema: { type: 'object' } }], messages: [
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'no network', is_error: true }] },
    ] },
    gemini: { ...CALLS.gemini.body, tools: [{ functionDeclarations: [{ name: 'get_weather' }] }], contents: [
      { role: 'user', parts: [{ text: 'weather?' }] },
      { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: {} } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { content: '12°C' } } }] },
    ] },
    ollama: { ...CALLS.ollama.body, tools: [{ type: 'function', function: { name: 'get_weather' } }], messages: [
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: '', tool_calls: [{ function: { name: 'get_weather', arguments: {} } }] },
      { role: 'tool', content: '12°C', tool_name: 'get_weather' },
    ] },
  };
  for (const [provider, body] of Object.entries(bodies)) await (await call(provider, { body })).text();
  assert.deepEqual(mock.requests.map((r) => [r.provider, r.tools, r.toolResults]), [
    ['openai', ['get_weather'], [{ id: 'call_1', name: null, content: '12°C', isError: false }]],
    ['anthropic', ['get_weather'], [{ id: 'toolu_1', name: null, content: 'no network', isError: true }]],
    ['gemini', ['get_weather'], [{ id: null, name: 'get_weather', content: '12°C', isError: false }]],
    ['ollama', ['get_weather'], [{ id: null, name: 'get_weather', content: '12°C', isError: false }]],
  ]);
  // Plain requests log empty lists, and the body is still recorded as sent.
  await (await call('openai')).text();
  assert.deepEqual([mock.requests.at(-1).tools, mock.requests.at(-1).toolResults], [[], []]);
  assert.deepEqual(mock.requests[0].body, bodies.openai);
});
