// Sites Tandem was never allowed on see nothing of it. The listener recorder
// (extension/content/listeners.js) patches the page's own addEventListener and onclick setters
// and marks elements with `data-tandem-on`, which a page and its anti-bot scripts can detect:
// it runs only where the agent acts — the sites allowed always, from their start, and the
// pages of a running task. Each test reads what the page itself can see (its prototypes, its
// attributes, its globals) in every frame, and what the agent could list and click through
// what the site received.
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { recorderRegistered, scriptedModel, startAgentEnv } from './lib/agent-harness.mjs';
import { page, text } from './lib/fixtures.mjs';
import { elements, urlOf } from './lib/scripted-shopper.mjs';

const BANK = 'https://bank.tandem.test'; // never allowed
const ADS = 'https://ads.tandem.test'; // never allowed, framed by the bank
const SHOP = 'https://shop.tandem.test'; // allowed always
const ONCE = 'https://once.tandem.test'; // allowed once, in a task

// A page that gives controls their listeners the ordinary ways, in its frames too.
const listening = `<script>
  const b = document.createElement('div');
  b.textContent = 'Transfer';
  document.body.append(b);
  b.addEventListener('click', () => {});
  b.onclick = () => {};
  const c = document.createElement('span');
  c.textContent = 'Menu';
  document.body.append(c);
  c.onmousedown = () => {};
</script>`;

const bank = {
  '/': page('Bank', `<h1>Your accounts</h1>
    <iframe title="same-origin" src="/frame"></iframe>
    <iframe title="other-origin" src="${ADS}/frame"></iframe>
    <iframe title="blank" srcdoc="<p>Offers</p>"></iframe>${listening}`),
  '/frame': page('Bank frame', `<p>Statement</p>${listening}`),
};
const ads = { '/frame': page('Ads', `<p>Ad</p>${listening}`) };

// Allowed always: a control whose only sign is the listener its page gives it at load.
const shop = {
  '/': page('Shop', `<h1>Shop</h1><div id="drawer">Open drawer</div>
    <script>document.getElementById('drawer').addEventListener('click', () => fetch('/opened'));</script>`),
  '/opened': () => text('ok'),
};

// Allowed once: "Early control" gets its listener at load, "Later control" when the test
// calls bindLater() (after the task has looked at the page).
const once = {
  '/late': page('Late', `<h1>Controls</h1><div id="early">Early control</div><div id="later">Later control</div>
    <script>
      document.getElementById('early').addEventListener('click', () => fetch('/early'));
      window.bindLater = () => document.getElementById('later').addEventListener('click', () => fetch('/later'));
    </script>`),
  '/early': () => text('ok'),
  '/later': () => text('ok'),
};

let env, panel, tab, ui, mock;
let navigator = () => ({ action: 'done', success: false, answer: 'no script' });
before(async () => {
  env = await startAgentEnv({
    routes: bank, origin: BANK, more: { [ADS]: ads, [SHOP]: shop, [ONCE]: once },
    key: 'sk-test-quiet-sites-1234', trust: false,
  });
  ({ panel, tab, ui, mock } = env);
});
after(async () => {
  await env?.close();
});
beforeEach(() => {
  mock.reset();
  mock.setDefault(scriptedModel({
    planner: (turn) => ({ plan: '1. do it', complete: /navigator says the task is done/.test(turn) }),
    navigator: (turn) => navigator(turn),
  }));
});

/** What a page's script can find of an extension in its world. */
function traces() {
  const native = (f) => /\{\s*\[native code\]\s*\}\s*$/.test(f.toString());
  const setters = ['onclick', 'onmousedown', 'onpointerdown']
    .map((n) => Object.getOwnPropertyDescriptor(HTMLElement.prototype, n).set);
  // A listener added now, after load, must leave no mark either.
  document.body.addEventListener.call(document.querySelector('p, h1, div') ?? document.body, 'click', () => {});
  return {
    addEventListener: native(EventTarget.prototype.addEventListener),
    setters: setters.every(native),
    marked: document.querySelectorAll('[data-tandem-on]').length,
    globals: Object.getOwnPropertyNames(window).filter((n) => /tandem/i.test(n)),
  };
}
const untouched = { addEventListener: true, setters: true, marked: 0, globals: [] };

/** `traces()` in every frame of `tab`, by frame URL. */
async function tracesInFrames(p) {
  const out = {};
  for (const frame of p.frames()) out[frame.url() || frame.name()] = await frame.evaluate(traces);
  return out;
}

async function loadWithFrames(url) {
  await tab.goto(url);
  // The frames have loaded and run their scripts.
  await tab.waitForFunction(() => [...document.querySelectorAll('iframe')].every((f) => {
    try { return f.contentDocument === null || f.contentDocument.readyState === 'complete'; } catch (_) { return true; }
  }));
  await tab.frameLocator('iframe[title="other-origin"]').getByText('Ad').waitFor();
}

test('a site never allowed, with no task: its page and frames keep their native functions, no marks, no globals', async () => {
  await loadWithFrames(`${BANK}/`);
  const seen = await tracesInFrames(tab);
  assert.ok(Object.keys(seen).length >= 4, `the top page and its three frames: ${Object.keys(seen)}`);
  for (const [url, t] of Object.entries(seen)) assert.deepEqual(t, untouched, url);
});

test('a site allowed always: a control with only a listener from load is listed and clicked; other sites stay untouched', async () => {
  const shopSite = env.sites[SHOP];
  await panel.evaluate(() => chrome.storage.local.set({ siteGrants: { always: ['shop.tandem.test'] } }));
  await recorderRegistered(panel, ['shop.tandem.test']);
  navigator = (turn) => {
    if (shopSite.requests.some((r) => r.path === '/opened')) return { action: 'done', success: true, answer: 'Opened.' };
    const drawer = elements(turn).find((e) => e.name === 'Open drawer');
    return drawer ? { action: 'click', element: drawer.id } : { action: 'done', success: false, answer: 'Open drawer is not listed.' };
  };
  await ui.startTask(tab, 'Open the drawer', `${SHOP}/`);
  await ui.waitStatus(/^Done/);
  assert.ok(shopSite.requests.some((r) => r.path === '/opened'), 'the site saw the click');

  // Its registration reaches no other site.
  await loadWithFrames(`${BANK}/`);
  for (const [url, t] of Object.entries(await tracesInFrames(tab))) assert.deepEqual(t, untouched, url);
  await panel.evaluate(() => chrome.storage.local.set({ siteGrants: { always: [] } }));
});

test('a site allowed once mid-task: listeners from before the task are missed until its next page; after the task the site sees nothing again', async () => {
  const onceSite = env.sites[ONCE];
  const lists = [];
  let bound = false;
  navigator = async (turn) => {
    const names = elements(turn).map((e) => e.name).filter((n) => /control$/.test(n));
    if (onceSite.requests.some((r) => r.path === '/early')) return { action: 'done', success: true, answer: 'Clicked.' };
    lists.push({ url: urlOf(turn), names });
    if (!bound) {
      // The task has looked at the page (the recorder came in then): now the page binds one.
      await tab.evaluate(() => window.bindLater());
      bound = true;
      return { action: 'wait', ms: 50 };
    }
    if (!urlOf(turn).endsWith('again')) return { action: 'navigate', url: `${ONCE}/late?again` };
    const early = elements(turn).find((e) => e.name === 'Early control');
    return early ? { action: 'click', element: early.id } : { action: 'done', success: false, answer: 'Early control is not listed.' };
  };
  await ui.startTask(tab, 'Press the early control', `${ONCE}/late`);
  await ui.siteAccess().filter({ hasText: 'once.tandem.test' }).waitFor({ timeout: 20_000 });
  await ui.button('Allow once').dispatchEvent('click');
  await ui.waitStatus(/^Done/);
  assert.deepEqual(lists, [
    // The page was loaded before the task: Early's listener, added at load, was missed.
    { url: `${ONCE}/late`, names: [] },
    // A listener added after the task's first look is seen.
    { url: `${ONCE}/late`, names: ['Later control'] },
    // The site's next page in the task is recorded from its start.
    { url: `${ONCE}/late?again`, names: ['Early control'] },
  ]);
  assert.ok(onceSite.requests.some((r) => r.path === '/early'), 'the site saw the click');

  // The task is over: the site is one Tandem was never allowed on again.
  await tab.goto(`${ONCE}/late`);
  await tab.evaluate(() => window.bindLater());
  assert.deepEqual(await tab.evaluate(traces), untouched);
});
