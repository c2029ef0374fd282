// Firebase AI Logic: the worker prepares the request, the side panel performs it (design
// card) and streams it back. The Firebase host is intercepted and served by the local mock.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launchExtension } from './lib/browser.mjs';
import { startMockProvider } from './lib/mock-provider.mjs';
import { routeSite } from './lib/fixtures.mjs';
import { shopRoutes } from './lib/shop-site.mjs';
import { planner, shopper } from './lib/scripted-shopper.mjs';
import { alwaysAllow, scriptedModel, taskUi } from './lib/agent-harness.mjs';
import { openChatMode, openSettings } from './lib/panel.mjs';

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
    // The page that asked may be gone by now (a test closes the panel mid-call).
    await route.fulfill({ status: res.status, headers: Object.fromEntries(res.headers), body: Buffer.from(await res.arrayBuffer()) }).catch(() => {});
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
  await openChatMode(panel);
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
  await openSettings(panel);
  await panel.getByLabel('API key').fill('AIzaWrong');
  await panel.getByRole('button', { name: 'Test connection' }).click();
  await panel.getByRole('status', { name: 'Connection test' }).filter({ hasText: /key/i }).waitFor();
  await panel.getByLabel('API key').fill('');
  await panel.getByRole('button', { name: 'Test connection' }).click();
  await panel.getByRole('status', { name: 'Connection test' }).filter({ hasText: 'Connected: Firebase AI Logic' }).waitFor();
});

test('an agent task on Firebase waits for the side panel: closed mid-call → Paused with the reason; Resume in a reopened panel finishes it', async () => {
  const cart = [];
  const site = await routeSite(browser.context, { routes: shopRoutes({ cart }) });
  await alwaysAllow(panel, [site.host]);
  let arrived;
  const held = new Promise((r) => { arrived = r; });
  let release;
  const gate = new Promise((r) => { release = r; });
  let navigatorTurns = 0;
  // The scripted shopper, on Gemini's wire format; the first navigator call is held open.
  mock.setDefault(scriptedModel({
    planner,
    navigator: async (turn) => {
      const answer = shopper(turn);
      if (++navigatorTurns === 1) {
        arrived();
        await gate;
      }
      return answer;
    },
  }));
  const tab = await browser.context.newPage();
  try {
    let ui = taskUi(panel);
    await ui.startTask(tab, 'Add the blue backpack to the cart', site.url + '/');
    await held;
    await panel.close();
    release();

    panel = await browser.openPanel();
    ui = taskUi(panel);
    await ui.waitStatus(/^Paused: The side panel closed before Firebase AI Logic answered: open the side panel to continue\. Then press Resume/);
    assert.equal(await ui.button('Resume').isVisible(), true);
    assert.deepEqual((await ui.stored()).errors, [], 'a closed panel is not an error of the task');
    await tab.bringToFront();
    await ui.button('Resume').dispatchEvent('click');
    await ui.waitStatus(/^Done/);
    assert.deepEqual(cart, ['blue-backpack']);
    const steps = await ui.steps();
    assert.ok(steps.some((s) => /"click".*button "Add to cart".*✓ clicked; a new page is loading · Firebase AI Logic/.test(s)), steps.join('\n'));
    assert.ok(callers.every((c) => c === 'page'), 'every Firebase call was made by a panel');
  } finally {
    await tab.close();
    await site.close();
  }
});
