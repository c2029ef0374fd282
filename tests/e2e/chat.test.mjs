// The first thing a user does: open the side panel, set a provider, chat, streamed.
// Real Chromium, the real dist/, a local server speaking OpenAI's wire format.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSettings, openChatMode, useProvider } from './lib/panel.mjs';
import { startMockProvider } from './lib/mock-provider.mjs';
import { panelSuite } from './lib/suites.mjs';

const KEY = 'sk-test-abcdefgh12345678';
let browser, mock, panel;

panelSuite({ mock: { delayMs: 40 }, ready: (env) => ({ browser, mock, panel } = env) });

const ui = {
  message: () => panel.getByRole('textbox', { name: 'Message' }),
  send: () => panel.getByRole('button', { name: 'Send' }),
  stop: () => panel.getByRole('button', { name: 'Stop' }),
  alert: () => panel.getByRole('alert'),
  answers: () => panel.getByRole('article', { name: 'Tandem' }),
  lastAnswer: () => panel.getByRole('article', { name: 'Tandem' }).last(),
};

async function saveSettings({ provider = 'OpenAI-compatible', baseUrl = `${mock.url}/v1`, model = 'gpt-test', key = KEY } = {}) {
  await useProvider(panel, { provider, baseUrl, model, key });
}

async function ask(text) {
  await openChatMode(panel);
  await ui.message().fill(text);
  await ui.message().press('Enter');
}

async function waitIdle() {
  await panel.waitForFunction(() => !document.querySelector('[aria-busy="true"]'));
}

test('with no provider the panel says so, opens Settings and keeps the text', async () => {
  assert.equal(await panel.getByRole('region', { name: 'Settings' }).isVisible(), true, 'first run shows Settings');
  await closeSettings(panel);
  await ask('Hello?');
  await ui.alert().filter({ hasText: 'No AI provider is configured' }).waitFor();
  assert.equal(await ui.message().inputValue(), 'Hello?', 'the unsent text is given back');
  assert.equal(mock.requests.length, 0);
});

test('settings are stored, and the key is never shown back', async () => {
  await saveSettings();
  assert.equal(await panel.getByLabel('API key').inputValue(), '', 'key field is cleared after saving');
  const hint = await panel.locator('#api-key-hint').textContent();
  assert.match(hint, /…5678/);
  assert.ok(!hint.includes(KEY));
  const stored = await panel.evaluate(() => chrome.storage.local.get('settings'));
  assert.equal(stored.settings.active, 'openai-compatible');
  assert.equal(stored.settings.providers['openai-compatible'].apiKey, KEY);
  // Re-opening the form for the provider still does not reveal the key.
  await panel.reload();
  await panel.getByRole('button', { name: 'Settings' }).click();
  assert.equal(await panel.getByLabel('API key').inputValue(), '');
  assert.equal(await panel.getByLabel('Model', { exact: true }).inputValue(), 'gpt-test');
  await panel.getByRole('button', { name: 'Settings' }).click();
});

test('an answer streams in, token by token, then completes', async () => {
  // Every text the progress line shows, in order.
  await panel.evaluate(() => {
    const line = document.querySelector('#progress');
    window.progressSeen = [];
    new MutationObserver(() => window.progressSeen.push(line.textContent))
      .observe(line, { childList: true, characterData: true, subtree: true });
  });
  await ask('Tell me about streaming in small pieces please');
  const answer = ui.lastAnswer();
  // Seen while still streaming: some text, not all of it.
  await panel.waitForFunction(() => {
    const a = [...document.querySelectorAll('article[aria-label="Tandem"]')].at(-1);
    return a?.getAttribute('aria-busy') === 'true' && a.textContent.length > 0;
  });
  const partial = await answer.locator('.text').textContent();
  assert.ok(partial.length < 'You said: Tell me about streaming in small pieces please'.length, `partial: ${partial}`);
  // message_start: until the text comes, the panel says who answers (the provider, not Nano).
  assert.deepEqual(await panel.evaluate(() => window.progressSeen), ['OpenAI-compatible is answering…', '']);
  await waitIdle();
  assert.equal(await answer.locator('.text').textContent(), 'You said: Tell me about streaming in small pieces please');
  assert.equal(await ui.send().isEnabled(), true);
  assert.equal(await ui.stop().isEnabled(), false);

  const req = mock.requests.find((r) => r.path === '/v1/chat/completions');
  assert.equal(req.headers.authorization, `Bearer ${KEY}`);
  assert.equal(req.body.model, 'gpt-test');
  assert.equal(req.body.stream, true);
  assert.equal(req.body.messages[0].role, 'system');
  assert.deepEqual(req.body.messages.at(-1), { role: 'user', content: 'Tell me about streaming in small pieces please' });
  await browser.screenshot(panel, 'chat-streamed-answer');
});

test('Shift+Enter makes a new line and Enter sends both lines', async () => {
  await ui.message().fill('line one');
  await ui.message().press('Shift+Enter');
  await ui.message().pressSequentially('line two');
  assert.equal(await ui.message().inputValue(), 'line one\nline two');
  assert.equal(mock.requests.length, 0, 'Shift+Enter did not send');
  await ui.message().press('Enter');
  await waitIdle();
  assert.equal(await ui.lastAnswer().locator('.text').textContent(), 'You said: line one\nline two');
  assert.equal(await ui.message().inputValue(), '');
});

test('the conversation so far is sent with the next message', async () => {
  await ask('second question');
  await waitIdle();
  const sent = mock.requests.at(-1).body.messages.map((m) => `${m.role}: ${m.content}`);
  assert.deepEqual(sent.slice(-3), ['user: line one\nline two', 'assistant: You said: line one\nline two', 'user: second question']);
});

test('Stop ends the answer at once and keeps what arrived', async () => {
  // The provider sends three tokens, then keeps the stream open without sending more.
  mock.script({ reply: 'one two three four five six seven eight nine ten', stall: true, stallAfter: 3 });
  await ask('a long answer please');
  await panel.waitForFunction(() => [...document.querySelectorAll('article[aria-label="Tandem"]')].at(-1)?.textContent.includes('three'));
  await ui.stop().click();
  await waitIdle();
  const text = await ui.lastAnswer().textContent();
  assert.match(text, /^one two three/);
  assert.match(text, /Stopped$/);
  assert.ok(!text.includes('ten'));
  assert.equal(await ui.send().isEnabled(), true);
  // The worker aborted the HTTP stream, so the provider stops generating (and billing).
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(mock.requests.at(-1).aborted, true);
});

test('Esc stops the answer too, with the focus in the Message box', async () => {
  mock.script({ reply: 'alpha beta gamma delta epsilon zeta eta theta', stall: true, stallAfter: 2 });
  await ask('another long answer');
  await panel.waitForFunction(() => [...document.querySelectorAll('article[aria-label="Tandem"]')].at(-1)?.textContent.includes('beta'));
  await ui.message().press('Escape');
  await waitIdle();
  const text = await ui.lastAnswer().textContent();
  assert.match(text, /^alpha beta/);
  assert.match(text, /Stopped$/);
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(mock.requests.at(-1).aborted, true, 'the worker aborted the request');
});

test('a rejected key gives a human sentence and the text back', async () => {
  mock.script({ error: 'bad_key' });
  await ask('are you there?');
  await ui.alert().filter({ hasText: 'rejected the API key' }).waitFor();
  assert.equal(await ui.message().inputValue(), 'are you there?');
  assert.equal(await panel.getByRole('article', { name: 'You' }).filter({ hasText: 'are you there?' }).count(), 0);
  await ui.message().fill('');
});

test('an unknown model is named in the error', async () => {
  mock.script({ error: 'unknown_model' });
  await ask('hi');
  await ui.alert().filter({ hasText: 'gpt-test' }).waitFor();
  assert.match(await ui.alert().textContent(), /model/i);
  await ui.message().fill('');
});

test('a stream cut mid-way keeps the partial answer and says it was interrupted', async () => {
  mock.script({ reply: 'alpha beta gamma delta epsilon', cutAfter: 2 });
  await ask('cut me off');
  await ui.alert().filter({ hasText: 'cut' }).waitFor();
  const text = await ui.lastAnswer().textContent();
  // A reset connection may drop what was still in flight: only the first token is certain.
  assert.match(text, /^alpha/);
  assert.ok(!text.includes('gamma'), text);
  assert.match(text, /Interrupted$/);
});

test('a local server that is down gets a hint about OLLAMA_ORIGINS', async () => {
  // A port nothing listens on: the connection is refused.
  const closed = await startMockProvider();
  const deadUrl = `${closed.url}/v1`;
  await closed.close();
  await saveSettings({ baseUrl: deadUrl, key: '' });
  try {
    await ask('anyone home?');
    await ui.alert().filter({ hasText: 'OLLAMA_ORIGINS=chrome-extension://*' }).waitFor();
    assert.ok((await ui.alert().textContent()).includes(deadUrl));
    assert.equal(await ui.message().inputValue(), 'anyone home?');
  } finally {
    await ui.message().fill('');
    await saveSettings();
  }
});

test('after the service worker is stopped, the next message wakes it and works', async () => {
  await ask('before the restart');
  await waitIdle();
  await browser.stopServiceWorker();
  const started = Date.now();
  await ask('after the restart');
  await waitIdle();
  console.log(`# wake-up to complete answer: ${Date.now() - started} ms`);
  assert.equal(await ui.lastAnswer().locator('.text').textContent(), 'You said: after the restart');
  const sent = mock.requests.at(-1).body.messages.map((m) => m.content);
  assert.ok(sent.includes('before the restart'), 'history survived in the panel');
});

test('Clear conversation empties the screen and nothing of it is sent again', async () => {
  await ask('remember me');
  await waitIdle();
  await panel.getByRole('button', { name: 'Clear conversation' }).click();
  assert.equal(await panel.getByRole('article').count(), 0);
  mock.reset();
  await ask('fresh start');
  await waitIdle();
  const sent = mock.requests[0].body.messages.map((m) => m.content);
  assert.ok(!sent.includes('remember me'), sent.join(' | '));
});
