// Gemini Nano first, the cloud when it cannot: one on-device session per conversation,
// failover mid-conversation without losing a message, download with progress.
// The machines have no model, so a faithful fake LanguageModel is loaded into a test-only
// copy of dist/ (lib/browser.mjs); dist/ itself never contains it.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { launchExtension } from './lib/browser.mjs';
import { startMockProvider } from './lib/mock-provider.mjs';
import { openChatMode, openSettings } from './lib/panel.mjs';

let mock;
before(async () => { mock = await startMockProvider({ delayMs: 5 }); });
after(async () => { await mock?.close(); });

async function setUp(fake) {
  const browser = await launchExtension({ fakeLanguageModel: { delayMs: 5, ...fake } });
  const panel = await browser.openPanel();
  const settings = panel.getByRole('region', { name: 'Settings' });
  if (!(await settings.isVisible())) await panel.getByRole('button', { name: 'Settings' }).click();
  await panel.getByLabel('Provider', { exact: true }).selectOption({ label: 'OpenAI-compatible' });
  await panel.getByLabel('Base URL').fill(`${mock.url}/v1`);
  await panel.getByLabel('Model', { exact: true }).fill('cloud-model');
  await panel.getByLabel('API key').fill('sk-cloud-key-123456');
  await panel.getByRole('button', { name: 'Save' }).click();
  await panel.getByRole('status', { name: 'Settings status' }).filter({ hasText: 'Saved' }).waitFor();
  const fakeCalls = () => browser.serviceWorker.evaluate(() => globalThis.__fakeLanguageModel.calls);
  const chat = async (text) => {
    await openChatMode(panel);
    await panel.getByRole('textbox', { name: 'Message' }).fill(text);
    await panel.getByRole('textbox', { name: 'Message' }).press('Enter');
    await panel.waitForFunction(() => !document.querySelector('[aria-busy="true"]'));
    const answer = panel.getByRole('article', { name: 'Tandem' }).last();
    return { text: await answer.locator('.text').textContent(), all: await answer.textContent() };
  };
  return { browser, panel, fakeCalls, chat };
}

describe('Nano available', () => {
  let t;
  before(async () => { mock.reset(); t = await setUp({ availability: 'available' }); });
  after(async () => { await t?.browser.close(); });

  test('the conversation runs on the device, and the system prompt is sent once', async () => {
    const first = await t.chat('first question');
    assert.equal(first.text, 'You said: first question');
    assert.match(first.all, /via Gemini Nano \(on device\)/);
    const second = await t.chat('second question');
    assert.equal(second.text, 'You said: second question');
    assert.equal(mock.requests.length, 0, 'nothing went to the cloud');

    const calls = await t.fakeCalls();
    const creates = calls.filter((c) => c.method === 'create');
    assert.equal(creates.length, 1, 'one session for the conversation');
    assert.equal(creates[0].options.initialPrompts[0].role, 'system');
    assert.match(creates[0].options.initialPrompts[0].content, /You are Tandem/);
    const prompts = calls.filter((c) => c.method.startsWith('prompt'));
    assert.deepEqual(prompts.map((c) => c.input), ['first question', 'second question'], 'each step sends only its turn');
    const systemSends = calls.filter((c) => JSON.stringify(c).includes('You are Tandem'));
    assert.equal(systemSends.length, 1);
  });

  test('Nano destroyed at the third message: the cloud answers it and the rest, with the whole conversation', async () => {
    await t.browser.serviceWorker.evaluate(() => { globalThis.__fakeLanguageModel.failNext = 'InvalidStateError'; });
    const third = await t.chat('third question');
    assert.equal(third.text, 'You said: third question');
    assert.match(third.all, /on-device model stopped/);
    assert.match(third.all, /via OpenAI-compatible/);
    assert.equal(mock.requests.length, 1);
    const sent = mock.requests[0].body.messages.map((m) => `${m.role}: ${m.content}`);
    assert.deepEqual(sent.slice(1), [
      'user: first question', 'assistant: You said: first question',
      'user: second question', 'assistant: You said: second question',
      'user: third question',
    ], 'the cloud got the transcript, not a fresh start');

    const before = (await t.fakeCalls()).length;
    const fourth = await t.chat('fourth question');
    assert.match(fourth.all, /via OpenAI-compatible/);
    assert.equal(mock.requests.length, 2);
    assert.equal((await t.fakeCalls()).length, before, 'the conversation stayed on the cloud');
    await t.browser.screenshot(t.panel, 'nano-failover');
  });

  test('Clear conversation goes back to the device', async () => {
    await t.panel.getByRole('button', { name: 'Clear conversation' }).click();
    const again = await t.chat('new conversation');
    assert.match(again.all, /via Gemini Nano/);
  });
});

describe('Nano unavailable', () => {
  let t;
  before(async () => { mock.reset(); t = await setUp({ availability: 'unavailable' }); });
  after(async () => { await t?.browser.close(); });

  test('Settings says so, and the cloud answers from the start', async () => {
    await openSettings(t.panel);
    await t.panel.getByRole('status', { name: 'On-device model status' }).filter({ hasText: 'Gemini Nano: unavailable' }).waitFor();
    const answer = await t.chat('hello cloud');
    assert.match(answer.all, /via OpenAI-compatible/);
    assert.doesNotMatch(answer.all, /on-device model stopped/);
    assert.equal((await t.fakeCalls()).filter((c) => c.method === 'create').length, 0);
  });

  test('"On-device only" refuses with a sentence instead of using the cloud', async () => {
    await openSettings(t.panel);
    await t.panel.getByLabel('On-device model', { exact: true }).selectOption({ label: 'On-device only (nothing leaves this computer)' });
    await t.panel.getByRole('button', { name: 'Save' }).click();
    mock.reset();
    await openChatMode(t.panel);
    await t.panel.getByRole('textbox', { name: 'Message' }).fill('stay local');
    await t.panel.getByRole('textbox', { name: 'Message' }).press('Enter');
    await t.panel.getByRole('alert').filter({ hasText: 'Gemini Nano cannot answer' }).waitFor();
    assert.equal(mock.requests.length, 0);
  });
});

describe('Nano downloadable', () => {
  let t;
  before(async () => { mock.reset(); t = await setUp({ availability: 'downloadable', delayMs: 60 }); });
  after(async () => { await t?.browser.close(); });

  test('the user downloads the model, sees the progress reach 100%, then Nano answers', async () => {
    await openSettings(t.panel);
    const status = t.panel.getByRole('status', { name: 'On-device model status' });
    await status.filter({ hasText: 'downloadable' }).waitFor();
    await t.panel.getByRole('button', { name: 'Download on-device model' }).click();
    const bar = t.panel.getByRole('progressbar', { name: 'Model download' });
    await bar.waitFor();
    await status.filter({ hasText: /downloading \d+%/ }).waitFor();
    await status.filter({ hasText: 'Gemini Nano: available' }).waitFor();
    assert.equal(await bar.getAttribute('value'), '1');
    assert.equal(await t.panel.getByRole('button', { name: 'Download on-device model' }).isVisible(), false);
    const answer = await t.chat('now on the device');
    assert.match(answer.all, /via Gemini Nano/);
    assert.equal(mock.requests.length, 0);
  });
});
