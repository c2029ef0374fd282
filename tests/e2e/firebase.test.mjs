// Firebase AI Logic: the worker prepares the request, the side panel performs it (design
// card) and streams it back. The Firebase host is intercepted and served by the local mock.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launchExtension } from './lib/browser.mjs';
import { startMockProvider } from './lib/mock-provider.mjs';

const FIREBASE_KEY = 'AIzaFirebaseWebKey123456';
let browser, mock, panel;
const callers = [];

before(async () => {
  mock = await startMockProvider({ delayMs: 5, apiKey: FIREBASE_KEY });
  browser = await launchExtension();
  await browser.context.route('https://firebasevertexai.googleapis.com/**', async (route) => {
    const req = route.request();
    callers.push(req.serviceWorker() ? 'service worker' : 'page');
    const url = new URL(req.url());
    const res = await fetch(`${mock.url}${url.pathname}${url.search}`, { method: 'POST', headers: req.headers(), body: req.postData() });
    await route.fulfill({ status: res.status, headers: Object.fromEntries(res.headers), body: Buffer.from(await res.arrayBuffer()) });
  });
  panel = await browser.openPanel();
  const settings = panel.getByRole('region', { name: 'Settings' });
  await settings.waitFor();
  await panel.getByLabel('Provider', { exact: true }).selectOption({ label: 'Firebase AI Logic' });
  await panel.getByLabel('Project ID').fill('tandem-demo');
  await panel.getByLabel('App ID').fill('1:123:web:abc');
  await panel.getByLabel('Model', { exact: true }).fill('gemini-2.5-flash');
  await panel.getByLabel('API key').fill(FIREBASE_KEY);
  await panel.getByRole('button', { name: 'Save' }).click();
  await panel.getByRole('status', { name: 'Settings status' }).filter({ hasText: 'Saved' }).waitFor();
});
after(async () => {
  await browser?.close();
  await mock?.close();
});

test('a chat through Firebase AI Logic is fetched by the panel and streams', async () => {
  await panel.getByRole('textbox', { name: 'Message' }).fill('hello firebase');
  await panel.getByRole('textbox', { name: 'Message' }).press('Enter');
  await panel.waitForFunction(() => !document.querySelector('[aria-busy="true"]'));
  const answer = panel.getByRole('article', { name: 'Tandem' }).last();
  assert.equal(await answer.locator('.text').textContent(), 'You said: hello firebase');
  assert.match(await answer.textContent(), /via Firebase AI Logic/);
  assert.deepEqual(callers, ['page'], 'the side panel made the call, not the worker');
  const req = mock.requests.at(-1);
  assert.equal(req.path, '/v1beta/projects/tandem-demo/models/gemini-2.5-flash:streamGenerateContent');
  assert.equal(req.headers['x-goog-api-key'], FIREBASE_KEY);
  assert.equal(req.headers['x-firebase-appid'], '1:123:web:abc');
  assert.equal(req.body.contents.at(-1).parts[0].text, 'hello firebase');
});

test('a bad Firebase key is reported like any provider', async () => {
  await panel.getByLabel('API key').fill('AIzaWrong');
  await panel.getByRole('button', { name: 'Test connection' }).click();
  await panel.getByRole('status', { name: 'Connection test' }).filter({ hasText: /key/i }).waitFor();
  await panel.getByLabel('API key').fill('');
  await panel.getByRole('button', { name: 'Test connection' }).click();
  await panel.getByRole('status', { name: 'Connection test' }).filter({ hasText: 'Connected: Firebase AI Logic' }).waitFor();
});
