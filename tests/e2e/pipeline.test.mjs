// The send pipeline seen from the panel: every provider's wire format streams, the budget and
// retries do what the Debug drawer says, hidden messages stay out, keys stay hidden.
import { test, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { openChatMode } from './lib/panel.mjs';
import { startMockProvider } from './lib/mock-provider.mjs';
import { panelSuite } from './lib/suites.mjs';

const KEY = 'sk-pipeline-key-987654321';
let browser, mock, panel;

panelSuite({ mock: { delayMs: 10, apiKey: KEY, ollamaOrigins: ['chrome-extension://*'] }, ready: (env) => ({ browser, mock, panel } = env) });
beforeEach(async () => {
  await openChatMode(panel);
  await panel.getByRole('button', { name: 'Clear conversation' }).click();
});

const message = () => panel.getByRole('textbox', { name: 'Message' });
const lastAnswer = () => panel.getByRole('article', { name: 'Tandem' }).last();

async function openSettings() {
  if (!(await panel.getByRole('region', { name: 'Settings' }).isVisible())) {
    await panel.getByRole('button', { name: 'Settings' }).click();
  }
}

async function configure(provider, baseUrl, model, { key = KEY, contextWindow = '' } = {}) {
  await openSettings();
  await panel.getByLabel('Provider', { exact: true }).selectOption({ label: provider });
  await panel.getByLabel('Base URL').fill(baseUrl);
  await panel.getByLabel('Model', { exact: true }).fill(model);
  await panel.getByLabel('API key').fill(key);
  await panel.getByLabel('Context window (tokens)').fill(String(contextWindow));
  await panel.getByRole('button', { name: 'Save' }).click();
  await panel.getByRole('status', { name: 'Settings status' }).filter({ hasText: 'Saved' }).waitFor();
}

async function chat(text) {
  await openChatMode(panel);
  await message().fill(text);
  await message().press('Enter');
  await panel.waitForFunction(() => !document.querySelector('[aria-busy="true"]'));
  return (await lastAnswer().locator('.text').textContent());
}

async function openDebug() {
  if (!(await panel.getByRole('region', { name: 'Debug' }).isVisible())) {
    await panel.getByRole('button', { name: 'Debug' }).click();
  }
  return panel.getByRole('region', { name: 'Debug' });
}

const providers = [
  { label: 'OpenAI', base: () => `${mock.url}/v1`, model: 'gpt-4o-mini', path: '/v1/chat/completions' },
  { label: 'Anthropic', base: () => `${mock.url}/v1`, model: 'claude-sonnet-4-5', path: '/v1/messages' },
  { label: 'Gemini', base: () => `${mock.url}/v1beta`, model: 'gemini-2.5-flash', path: '/v1beta/models/gemini-2.5-flash:streamGenerateContent' },
  { label: 'Ollama', base: () => mock.url, model: 'llama3.2', path: '/api/chat' },
  { label: 'OpenAI-compatible', base: () => `${mock.url}/v1`, model: 'local-model', path: '/v1/chat/completions' },
];

for (const p of providers) {
  test(`a chat with ${p.label} streams its answer`, async () => {
    await configure(p.label, p.base(), p.model);
    assert.equal(await chat(`hello ${p.label}`), `You said: hello ${p.label}`);
    const req = mock.requests.find((r) => r.path === p.path);
    assert.ok(req, `no request on ${p.path}: ${mock.requests.map((r) => r.path)}`);
    assert.equal(req.body.stream ?? true, true);
  });
}

test('Gemini at its real address (intercepted) answers too', async () => {
  await browser.context.route('https://generativelanguage.googleapis.com/**', async (route) => {
    const url = new URL(route.request().url());
    const res = await fetch(`${mock.url}${url.pathname}${url.search}`, {
      method: 'POST', headers: route.request().headers(), body: route.request().postData(),
    });
    await route.fulfill({ status: res.status, headers: Object.fromEntries(res.headers), body: Buffer.from(await res.arrayBuffer()) });
  });
  await configure('Gemini', '', 'gemini-2.5-flash');
  assert.equal(await chat('hello default Gemini'), 'You said: hello default Gemini');
  const req = mock.requests.at(-1);
  assert.equal(req.headers['x-goog-api-key'], KEY);
  assert.equal(req.query.alt, 'sse');
  await browser.context.unroute('https://generativelanguage.googleapis.com/**');
});

test('a context overflow drops the oldest exchange and succeeds, as Debug shows', async () => {
  await configure('OpenAI', `${mock.url}/v1`, 'gpt-4o-mini');
  await chat('first exchange');
  await chat('second exchange');
  mock.reset();
  mock.script({ error: 'context_overflow' });
  assert.equal(await chat('third message'), 'You said: third message');
  assert.equal(mock.requests.length, 2, 'one failed attempt, one retry');
  const [first, retry] = mock.requests.map((r) => r.body.messages.map((m) => m.content));
  assert.ok(first.includes('first exchange'));
  assert.ok(!retry.includes('first exchange'), 'the oldest pair was dropped');
  assert.ok(retry.includes('second exchange'));
  assert.equal(retry.length, first.length - 2);
  const debug = await openDebug();
  await debug.getByText(/context-overflow: .* → drop the oldest exchange and retry/).waitFor();
  await debug.getByText('1 earlier exchange(s) sent → ok → done').waitFor();
  await debug.getByText(/excluded \(trimmed\): “first exchange”/).waitFor();
  await browser.screenshot(panel, 'pipeline-debug-after-overflow');
});

test('a message hidden from context is not sent', async () => {
  await configure('OpenAI', `${mock.url}/v1`, 'gpt-4o-mini');
  await chat('secret that should stay out');
  const bubble = panel.getByRole('article', { name: 'You' }).filter({ hasText: 'secret that should stay out' });
  await bubble.getByRole('button', { name: 'Hide from context' }).click();
  assert.equal(await bubble.getByRole('button', { name: 'Hide from context' }).getAttribute('aria-pressed'), 'true');
  mock.reset();
  await chat('what did I say?');
  const sent = mock.requests[0].body.messages;
  assert.ok(!sent.some((m) => m.role === 'user' && m.content.includes('secret that should stay out')), JSON.stringify(sent));
  assert.equal(sent.at(-1).content, 'what did I say?');
  await (await openDebug()).getByText(/excluded \(hidden\)/).waitFor();
});

test('429 with Retry-After waits, says so, then succeeds', async () => {
  await configure('OpenAI', `${mock.url}/v1`, 'gpt-4o-mini');
  mock.script({ error: 'rate_limit', retryAfter: 2 });
  await message().fill('patience');
  await message().press('Enter');
  await panel.getByRole('status', { name: 'Progress' }).filter({ hasText: /busy; retrying in \d s/ }).waitFor();
  await panel.waitForFunction(() => !document.querySelector('[aria-busy="true"]'));
  assert.equal(await lastAnswer().locator('.text').textContent(), 'You said: patience');
  assert.equal(mock.requests.length, 2);
  const waited = mock.requests[1].at - mock.requests[0].at;
  assert.ok(waited >= 1900, `retried after ${waited} ms, Retry-After said 2 s`);
});

test('the Debug payload and the token meter never show the key', async () => {
  await configure('Anthropic', `${mock.url}/v1`, 'claude-sonnet-4-5');
  await chat('meter check');
  const debug = await openDebug();
  const payload = await debug.getByLabel('Request payload').textContent();
  assert.ok(payload.includes('x-api-key: [redacted]'), payload);
  assert.ok(!payload.includes(KEY));
  assert.ok(payload.includes('"meter check"'));
  const meter = await panel.locator('#token-meter').textContent();
  assert.match(meter, /^Context: [\d,]+ \/ 200,000 tokens/);
  const html = await panel.content();
  assert.ok(!html.includes(KEY), 'the key appears nowhere in the panel');
});

test('a context window set in Settings is what the budget uses', async () => {
  await configure('OpenAI', `${mock.url}/v1`, 'gpt-4o-mini', { contextWindow: 4096 });
  await chat('small window');
  assert.match(await panel.locator('#token-meter').textContent(), /\/ 4,096 tokens/);
  await configure('OpenAI', `${mock.url}/v1`, 'gpt-4o-mini');
});

test('Test connection reports a bad key, then success with the saved key', async () => {
  await configure('OpenAI', `${mock.url}/v1`, 'gpt-4o-mini');
  await openSettings();
  await panel.getByLabel('API key').fill('sk-wrong');
  await panel.getByRole('button', { name: 'Test connection' }).click();
  const result = panel.getByRole('status', { name: 'Connection test' });
  await result.filter({ hasText: 'rejected the API key' }).waitFor();
  assert.equal(mock.requests.at(-1).headers.authorization, 'Bearer sk-wrong');
  await panel.getByLabel('API key').fill('');
  await panel.getByRole('button', { name: 'Test connection' }).click();
  await result.filter({ hasText: 'Connected: OpenAI answered with model gpt-4o-mini.' }).waitFor();
});

test('Test connection names an unreachable server', async () => {
  const gone = await startMockProvider();
  const url = gone.url;
  await gone.close();
  await openSettings();
  await panel.getByLabel('Provider', { exact: true }).selectOption({ label: 'Ollama' });
  await panel.getByLabel('Base URL').fill(url);
  await panel.getByLabel('Model', { exact: true }).fill('llama3.2');
  await panel.getByRole('button', { name: 'Test connection' }).click();
  await panel.getByRole('status', { name: 'Connection test' }).filter({ hasText: 'OLLAMA_ORIGINS=chrome-extension://*' }).waitFor();
});

// A 1×1 PNG.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

test('an attached image goes with its message, in each provider\'s format, and is counted', async () => {
  await configure('OpenAI', `${mock.url}/v1`, 'gpt-4o-mini');
  await panel.getByLabel('Attach image').setInputFiles({ name: 'dot.png', mimeType: 'image/png', buffer: PNG });
  await panel.getByRole('img', { name: 'Attached image 1' }).waitFor();
  assert.equal(await chat('what is in this picture?'), 'You said: what is in this picture?');
  assert.equal(await panel.getByRole('img', { name: 'Attached image 1' }).count(), 0, 'the attachment went with the message');
  await panel.getByRole('img', { name: 'Image 1 you sent' }).waitFor();
  const last = mock.requests.at(-1).body.messages.at(-1);
  assert.equal(last.role, 'user');
  assert.deepEqual(last.content.map((p) => p.type), ['text', 'image_url']);
  assert.match(last.content[1].image_url.url, /^data:image\/png;base64,iVBOR/);
  const debug = await openDebug();
  const images = await debug.locator('dt', { hasText: 'Images' }).locator('xpath=following-sibling::dd[1]').textContent();
  assert.ok(Number(images.replace(/,/g, '')) > 0, `images counted: ${images}`);

  await configure('Anthropic', `${mock.url}/v1`, 'claude-sonnet-4-5');
  await panel.getByLabel('Attach image').setInputFiles({ name: 'dot.png', mimeType: 'image/png', buffer: PNG });
  await chat('and now?');
  const block = mock.requests.at(-1).body.messages.at(-1).content.find((p) => p.type === 'image');
  assert.equal(block.source.media_type, 'image/png');
  assert.equal(block.source.type, 'base64');
  const earlier = JSON.stringify(mock.requests.at(-1).body.messages.slice(0, -1));
  assert.ok(!earlier.includes('iVBOR'), 'earlier images are not sent again');
});

test('a file that is not an image is refused with a sentence', async () => {
  await panel.getByLabel('Attach image').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hello') });
  await panel.getByRole('alert').filter({ hasText: '"notes.txt" is not an image' }).waitFor();
  assert.equal(await panel.getByRole('list', { name: 'Attached images' }).isVisible(), false);
});
