// The fault suite: what a user sees when the network, the provider, the worker or storage
// misbehave. Each case drives the real extension through the mock provider and asserts the
// screen (the answer, its badge, the alert), that the conversation is intact, and that the
// next message works. Covered elsewhere, not repeated here: 429 with Retry-After
// (pipeline.test.mjs), a stream cut between tokens and the worker stopped between messages
// (chat.test.mjs).
import { test, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { closeSettings, openChatMode, openSettings } from './lib/panel.mjs';
import { startMockProvider } from './lib/mock-provider.mjs';
import { panelSuite } from './lib/suites.mjs';

const KEY = 'sk-faults-key-1234567890';
const MODEL = 'gpt-faults';
let browser, mock, panel;

panelSuite({ mock: { delayMs: 5, apiKey: KEY }, ready: (env) => ({ browser, mock, panel } = env), setUp: () => saveSettings() });
beforeEach(async () => {
  await panel.getByRole('button', { name: 'Clear conversation' }).click();
});

const ui = {
  message: () => panel.getByRole('textbox', { name: 'Message' }),
  alert: () => panel.getByRole('alert'),
  answers: () => panel.getByRole('article', { name: 'Tandem' }),
  questions: () => panel.getByRole('article', { name: 'You' }),
  lastAnswer: () => panel.getByRole('article', { name: 'Tandem' }).last(),
};

async function saveSettings({ model = MODEL } = {}) {
  if (!(await panel.getByRole('region', { name: 'Settings' }).isVisible())) {
    await panel.getByRole('button', { name: 'Settings' }).click();
  }
  await panel.getByLabel('Provider', { exact: true }).selectOption({ label: 'OpenAI-compatible' });
  await panel.getByLabel('Base URL').fill(`${mock.url}/v1`);
  await panel.getByLabel('Model', { exact: true }).fill(model);
  await panel.getByLabel('API key').fill(KEY);
  await panel.getByRole('button', { name: 'Save' }).click();
  await panel.getByRole('status', { name: 'Settings status' }).filter({ hasText: 'Saved' }).waitFor();
}

async function ask(text) {
  await openChatMode(panel);
  await ui.message().fill(text);
  await ui.message().press('Enter');
  await panel.waitForFunction(() => !document.querySelector('[aria-busy="true"]'));
}

const answerText = () => ui.lastAnswer().locator('.text').textContent();

/** The next message goes through as normal, and the request carries what came before. */
async function nextMessageWorks(earlier) {
  mock.reset();
  await ask('are you still there?');
  assert.equal(await answerText(), 'You said: are you still there?');
  const sent = mock.requests.at(-1).body.messages.map((m) => m.content);
  for (const text of earlier) assert.ok(sent.includes(text), `"${text}" missing from ${JSON.stringify(sent)}`);
}

async function debugNotes() {
  if (!(await panel.getByRole('region', { name: 'Debug' }).isVisible())) {
    await panel.getByRole('button', { name: 'Debug' }).click();
  }
  return panel.getByRole('region', { name: 'Debug' });
}

// OpenAI's chunk format, by hand: these tests need frames the mock never writes itself.
const chunk = (delta, finish = null) =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', model: MODEL, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const text = (t) => chunk({ content: t });
const END = `${chunk({}, 'stop')}data: [DONE]\n\n`;

/** A 200 event stream written frame by frame, then ended (or cut when `cut`). */
function stream(frames, { cut = false, contentType = 'text/event-stream' } = {}) {
  return async (res, { cors, cut: cutConnection }) => {
    res.writeHead(200, { ...cors, 'content-type': contentType, 'cache-control': 'no-cache' });
    for (const f of frames) {
      res.write(f);
      await new Promise((r) => setTimeout(r, 5));
    }
    if (cut) await cutConnection();
    else res.end();
  };
}

test('429 without Retry-After backs off, says so, then answers', async () => {
  mock.script({
    respond: (res, { cors }) => res.writeHead(429, { ...cors, 'content-type': 'application/json' })
      .end(JSON.stringify({ error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' } })),
  });
  await ui.message().fill('too fast');
  await ui.message().press('Enter');
  await panel.getByRole('status', { name: 'Progress' }).filter({ hasText: /busy; retrying in \d s/ }).waitFor();
  await panel.waitForFunction(() => !document.querySelector('[aria-busy="true"]'));
  assert.equal(await answerText(), 'You said: too fast');
  assert.equal(mock.requests.length, 2, 'one refused attempt, one retry');
  assert.equal(await ui.alert().count(), 0);
});

test('500, 502 and 503 in a row, then success: one answer, no error left on screen', async () => {
  for (const status of [500, 502, 503]) mock.script({ status });
  await ask('keep trying');
  assert.equal(await answerText(), 'You said: keep trying');
  assert.deepEqual(mock.requests.map((r) => r.status), [500, 502, 503, 200]);
  assert.equal(await ui.answers().count(), 1);
  assert.equal(await ui.alert().count(), 0);
  await (await debugNotes()).getByText(/→ retry after 4000 ms/).waitFor();
});

test('529 (overloaded), then success', async () => {
  mock.script({ status: 529 });
  await ask('busy?');
  assert.equal(await answerText(), 'You said: busy?');
  assert.deepEqual(mock.requests.map((r) => r.status), [529, 200]);
  await nextMessageWorks(['busy?', 'You said: busy?']);
});

test('a stream cut in the middle of a frame keeps what arrived, says so, and the next message works', async () => {
  const half = text(' world');
  mock.script({ respond: stream([text('Hello'), half.slice(0, 25)], { cut: true }) });
  await ask('cut mid-frame');
  await ui.alert().filter({ hasText: 'was cut before the answer finished' }).waitFor();
  assert.equal(await answerText(), 'Hello');
  assert.match(await ui.lastAnswer().textContent(), /Interrupted$/);
  await nextMessageWorks(['cut mid-frame', 'Hello']);
});

test('a malformed frame mid-stream is skipped: the rest of the answer arrives and Debug says what was skipped', async () => {
  mock.script({ respond: stream([text('Hello'), 'data: {"choices":[{"delta":{"content": oops}]}\n\n', text(' world'), END]) });
  await ask('one bad frame');
  assert.equal(await answerText(), 'Hello world');
  assert.equal(await ui.alert().count(), 0, 'no error for a skipped frame');
  assert.doesNotMatch(await ui.lastAnswer().textContent(), /Interrupted|Incomplete/);
  const debug = await debugNotes();
  await debug.getByText(/Skipped a frame from OpenAI-compatible Tandem could not read \(not JSON at line 1 column \d+\); the answer went on\./).waitFor();
  await nextMessageWorks(['one bad frame', 'Hello world']);
});

test('an emoji whose surrogate halves arrive in two frames is shown whole', async () => {
  // JSON.stringify would write the emoji itself; the halves are written as escapes by hand.
  const halves = ['data: {"choices":[{"delta":{"content":"Smile \\ud83d"},"finish_reason":null}]}\n\n',
    'data: {"choices":[{"delta":{"content":"\\ude00!"},"finish_reason":null}]}\n\n'];
  mock.script({ respond: stream([...halves, END]) });
  await ask('send an emoji');
  assert.equal(await answerText(), 'Smile 😀!');
  assert.equal(await ui.alert().count(), 0);
});

test('a stream that ends without any end marker reads as cut, not as a whole answer', async () => {
  mock.script({ respond: stream([text('Partial'), text(' answer')]) });
  await ask('no end marker');
  await ui.alert().filter({ hasText: 'was cut before the answer finished' }).waitFor();
  assert.equal(await answerText(), 'Partial answer');
  assert.match(await ui.lastAnswer().textContent(), /Interrupted$/);
  await nextMessageWorks(['no end marker', 'Partial answer']);
});

test('the worker stopped mid-stream: the partial answer stays, the panel says why, the next message wakes it', async () => {
  mock.script({ reply: 'one two three four five six seven eight nine ten eleven twelve', delayMs: 300 });
  await ui.message().fill('long answer please');
  await ui.message().press('Enter');
  await ui.lastAnswer().locator('.text').filter({ hasText: 'one' }).waitFor();
  await browser.stopServiceWorker();
  await ui.alert().filter({ hasText: "Tandem's background worker stopped before the answer finished" }).waitFor();
  await panel.waitForFunction(() => !document.querySelector('[aria-busy="true"]'));
  const partial = await answerText();
  assert.match(partial, /^one/);
  assert.ok(!partial.includes('twelve'), partial);
  assert.equal(await ui.message().inputValue(), '', 'an answer had started: the question is not given back');
  mock.reset();
  await ask('are you back?');
  assert.equal(await answerText(), 'You said: are you back?');
  assert.ok(mock.requests.at(-1).body.messages.some((m) => m.content === 'long answer please'));
});

test('storage quota exceeded on Save: the panel says so, and the saved settings still answer', async () => {
  await panel.evaluate(() => {
    globalThis.__realSet = chrome.storage.local.set;
    chrome.storage.local.set = () => Promise.reject(new Error('QUOTA_BYTES quota exceeded'));
  });
  try {
    await openSettings(panel);
    await panel.getByLabel('Model', { exact: true }).fill('gpt-never-saved');
    await panel.getByRole('button', { name: 'Save' }).click();
    await panel.getByRole('status', { name: 'Settings status' })
      .filter({ hasText: 'Could not save settings: QUOTA_BYTES quota exceeded' }).waitFor();
  } finally {
    await panel.evaluate(() => { chrome.storage.local.set = globalThis.__realSet; });
  }
  // Not saved: Settings stays open on the problem; the user goes back to the conversation.
  assert.equal(await panel.getByRole('region', { name: 'Settings' }).isVisible(), true);
  await closeSettings(panel);
  await ask('which model?');
  assert.equal(await answerText(), 'You said: which model?');
  assert.equal(mock.requests.at(-1).body.model, MODEL, 'the last saved settings were used');
  await openSettings(panel);
  await panel.getByLabel('Model', { exact: true }).fill(MODEL);
  await closeSettings(panel);
});

test('a captive portal answering 200 with a web page gets a sentence, and the text back', async () => {
  mock.script({
    respond: stream(['<!doctype html><html><head><title>Sign in to CafeWiFi</title></head>',
      '<body><form action="/login"><input name="room"></form></body></html>\n'], { contentType: 'text/html; charset=utf-8' }),
  });
  await ask('behind a portal');
  await ui.alert().filter({ hasText: "address answered with a web page, not an answer. A Wi-Fi sign-in page or a proxy may be in the way" }).waitFor();
  assert.equal(await ui.message().inputValue(), 'behind a portal', 'nothing was answered: the text is given back');
  assert.equal(await ui.answers().filter({ hasText: 'Sign in' }).count(), 0, 'the page is never shown as an answer');
  await ui.message().fill('');
  await nextMessageWorks([]);
});

test('a redirect to another host is not followed, so the key never reaches it', async () => {
  const elsewhere = await startMockProvider({ delayMs: 5 });
  try {
    const target = `${elsewhere.url.replace('127.0.0.1', 'localhost')}/v1/chat/completions`;
    mock.script({ respond: (res, { cors }) => res.writeHead(307, { ...cors, location: target }).end() });
    await ask('follow me');
    await ui.alert().filter({ hasText: 'redirected Tandem to another address. Tandem does not follow redirects' }).waitFor();
    assert.equal(elsewhere.requests.length, 0, `the other host was called: ${JSON.stringify(elsewhere.requests.map((r) => r.headers))}`);
    assert.equal(await ui.message().inputValue(), 'follow me');
    await ui.message().fill('');
    await nextMessageWorks([]);
  } finally {
    await elsewhere.close();
  }
});

test('a 10 MB single line is dropped: the answer around it arrives and Debug says what was dropped', async () => {
  const huge = `data: ${JSON.stringify({ choices: [{ delta: { content: 'x'.repeat(10 * 1024 * 1024) } }] })}\n\n`;
  mock.script({ respond: stream([text('Before'), huge, text(' after'), END]) });
  await ask('a huge frame');
  assert.equal(await answerText(), 'Before after');
  assert.equal(await ui.alert().count(), 0);
  await (await debugNotes()).getByText(/Skipped a frame from OpenAI-compatible Tandem could not read \(10485\d\d\d bytes, over the limit of 4 MB\)/).waitFor();
  await nextMessageWorks(['a huge frame', 'Before after']);
});

test('a saved setting of the wrong type costs only itself: the saved provider, model and key still answer', async () => {
  await panel.evaluate(async () => {
    const { settings } = await chrome.storage.local.get('settings');
    settings.providers['openai-compatible'].contextWindow = 'big';
    settings.memory = 'lots';
    await chrome.storage.local.set({ settings });
  });
  await ask('still configured?');
  assert.equal(await answerText(), 'You said: still configured?');
  const req = mock.requests.at(-1);
  assert.equal(req.body.model, MODEL);
  assert.equal(req.headers.authorization, `Bearer ${KEY}`);
  // The panel reads them field by field too: reopened, its form shows what was saved.
  await panel.reload();
  // On load, in one plain sentence and without being asked: Settings open to show it.
  const notice = panel.getByRole('status', { name: 'Settings status' });
  await notice.filter({ hasText: 'could not be read' }).waitFor();
  assert.match(await notice.textContent(), /^Tandem's saved settings could not be read; .*the memory limits were reset\. Your other settings were kept\.$/);
  assert.doesNotMatch(await notice.textContent(), /invalid type|line \d+ column/);
  assert.equal(await panel.getByLabel('Model', { exact: true }).inputValue(), MODEL);
  assert.equal(await panel.getByLabel('Base URL').inputValue(), `${mock.url}/v1`);
  await saveSettings();
  await nextMessageWorks([]);
});

test('a provider that goes silent mid-answer: "Still waiting" shows, then the answer is given up with a sentence and what arrived is kept', async () => {
  // A short limit so the test does not wait a minute (Settings keep it as budget.stallSeconds).
  await panel.evaluate(async () => {
    const { settings } = await chrome.storage.local.get('settings');
    settings.budget = { ...(settings.budget ?? {}), stallSeconds: 6 };
    await chrome.storage.local.set({ settings });
  });
  mock.script({ reply: 'one two three four five six', stall: true, stallAfter: 2 });
  await ui.message().fill('are you there?');
  await ui.message().press('Enter');
  const progress = panel.getByRole('status', { name: 'Progress' });
  await progress.filter({ hasText: 'Still waiting for OpenAI-compatible… (Stop to give up)' }).waitFor({ timeout: 10000 });
  await panel.waitForFunction(() => !document.querySelector('[aria-busy="true"]'), null, { timeout: 15000 });
  await ui.alert().filter({ hasText: 'OpenAI-compatible sent nothing for 6 s, so Tandem stopped waiting' }).waitFor();
  assert.equal(await answerText(), 'one two', 'what arrived is kept');
  assert.equal(await panel.locator('#progress').textContent(), '', 'the waiting line is gone');
  assert.ok(mock.requests.at(-1).aborted, 'the request was aborted, not left open');
  await panel.evaluate(async () => {
    const { settings } = await chrome.storage.local.get('settings');
    delete settings.budget.stallSeconds;
    await chrome.storage.local.set({ settings });
  });
  await nextMessageWorks([]);
});
