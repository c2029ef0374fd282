// Each context loads its own wasm (issue #46): the side panel fetches the panel's module first,
// so opening it does not wait for the worker's code; once started it holds the worker's
// compiled module (warm code for the worker's wake-ups); the worker, woken by the panel,
// answers from its own module. Seen from the panel page: the wasm it fetches,
// and the worker's answer.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { launchExtension, collectConsole, repoRoot } from './lib/browser.mjs';

let browser;
before(async () => { browser = await launchExtension(); });
after(async () => { await browser?.close(); });

test('the side panel fetches the panel\'s wasm first, holds the worker\'s once idle, and a woken worker still answers it', async () => {
  const page = await browser.context.newPage();
  // Installed before the panel's scripts run: every URL the page fetches.
  await page.addInitScript(() => {
    window.__fetched = [];
    const fetch = window.fetch;
    window.fetch = (...args) => {
      window.__fetched.push(String(args[0]?.url ?? args[0]));
      return fetch(...args);
    };
  });
  await page.goto(browser.url('sidepanel.html'));
  await page.waitForFunction(() => {
    const line = document.getElementById('nano-status');
    return line && !line.textContent.includes('checking');
  });
  const wasm = async () => (await page.evaluate(() => window.__fetched))
    .filter((url) => url.endsWith('.wasm'))
    .map((url) => new URL(url, 'chrome-extension://tandem/').pathname);
  // Its own module first and alone on the way to ready; the worker's only afterwards, when the
  // panel is idle, to hold its compiled code for the worker's next wake-up (sidepanel.js).
  const first = await wasm();
  assert.equal(first[0], '/wasm/panel_bg.wasm', first.join(', '));
  await page.waitForFunction(() => window.__fetched.some((u) => u.endsWith('/wasm/worker_bg.wasm')) && globalThis.tandemWorkerModule instanceof WebAssembly.Module);
  assert.deepEqual(await wasm(), ['/wasm/panel_bg.wasm', '/wasm/worker_bg.wasm']);

  // The worker, stopped, is woken by the panel's message and answers it from its module.
  await browser.stopServiceWorker();
  const answer = await page.evaluate(() => new Promise((resolve) => {
    const port = chrome.runtime.connect({ name: 'tandem-chat' });
    port.onMessage.addListener((message) => { resolve(message); port.disconnect(); });
    port.postMessage(JSON.stringify({ nanoStatus: { requestId: 'modules-test' } }));
  }));
  assert.match(typeof answer === 'string' ? answer : JSON.stringify(answer), /modules-test/);
  await page.close();
});

test('the side panel asks for each module of its bootstrap once, as its page is parsed, and for its wasm once', async () => {
  const page = await browser.context.newPage();
  const log = collectConsole(page);
  // Every request the page makes, as Chrome's network layer sees it, with what asked for it:
  // the parse (a modulepreload link) or a script (an import found when its importer was read).
  const requests = [];
  const cdp = await browser.context.newCDPSession(page);
  cdp.on('Network.requestWillBeSent', ({ request, initiator }) => {
    requests.push({ path: new URL(request.url).pathname, by: initiator.type });
  });
  await cdp.send('Network.enable');
  await page.goto(browser.url('sidepanel.html'));
  // The worker's module is held once the panel is idle (the test above): by then the panel
  // has asked for everything it needed to start.
  await page.waitForFunction(() => globalThis.tandemWorkerModule instanceof WebAssembly.Module);
  const modules = requests.filter((r) => r.path.endsWith('.js'));
  // The bootstrap, the glue and the glue's snippets (scripts/build names them in the page).
  assert.ok(modules.some((r) => r.path === '/wasm/panel.js'), JSON.stringify(requests));
  assert.ok(modules.some((r) => r.path.startsWith('/wasm/snippets/')), JSON.stringify(requests));
  for (const r of modules) assert.equal(r.by, 'parser', `${r.path} was found by a script: ${JSON.stringify(requests)}`);
  assert.equal(new Set(modules.map((r) => r.path)).size, modules.length, JSON.stringify(requests));
  assert.equal(requests.filter((r) => r.path === '/wasm/panel_bg.wasm').length, 1, JSON.stringify(requests));
  assert.deepEqual(log.errors, []);
  log.stop();
  await page.close();
});

// A waking worker loads two modules, its bootstrap and its glue: the snippets its crates declare
// are inside the glue (scripts/lib/inline-snippets.mjs), not a level of imports more. The worker
// running at all (this file's first test, and every agent test, whose in-page functions are
// those snippets) proves what was inlined still works.
test('the worker\'s bootstrap imports only its glue, and the glue imports nothing', async () => {
  const dist = path.join(repoRoot, 'dist');
  const importsOf = async (file) => [...(await readFile(path.join(dist, file), 'utf8'))
    .matchAll(/^import\b[^'"]*['"]([^'"]+)['"]/gm)].map((m) => m[1]);
  assert.deepEqual(await importsOf('background.js'), ['./wasm/worker.js']);
  assert.deepEqual(await importsOf('wasm/worker.js'), []);
  // Only the panel's snippets are left as files: it asks for them as its page parses.
  const left = await readdir(path.join(dist, 'wasm', 'snippets'));
  assert.ok(left.every((dir) => dir.startsWith('tandem-side-panel-')), left.join(', '));
});

// The worker compiles its module from a copy in the extension's CacheStorage, keyed by the
// module's hash (extension/background.js, scripts/lib/stamp-module.mjs). Seen where it lives:
// the cache's keys and bytes, and the panel's answer from each woken worker.
test('a woken worker compiles its module from its own cache, drops an older build\'s copy, and starts past a damaged one', async () => {
  const bytes = await readFile(path.join(repoRoot, 'dist', 'wasm', 'worker_bg.wasm'));
  const hash = createHash('sha256').update(bytes).digest('hex');
  const page = await browser.openPanel();
  const wake = async (id) => {
    await browser.stopServiceWorker();
    const answer = await page.evaluate((requestId) => new Promise((resolve) => {
      const port = chrome.runtime.connect({ name: 'tandem-chat' });
      port.onMessage.addListener((message) => { resolve(String(message)); port.disconnect(); });
      port.postMessage(JSON.stringify({ nanoStatus: { requestId } }));
    }), id);
    assert.match(answer, new RegExp(id));
  };
  const current = `https://tandem-module.invalid/${hash.slice(0, 16)}/worker_bg.wasm`;
  // What the cache holds: each key's URL and its body's SHA-256. The worker stores its copy
  // and removes the others after it started, so this waits (up to 5 s) for the cache to hold
  // today's key alone, and then says what it holds, whatever that is.
  const cached = async () => {
    const sw = await browser.waitForServiceWorker();
    return sw.evaluate(async (current) => {
      const hex = (buffer) => [...new Uint8Array(buffer)].map((b) => b.toString(16).padStart(2, '0')).join('');
      let keys = [];
      const cache = await caches.open('tandem-modules');
      for (let i = 0; i < 100; i++) {
        keys = await cache.keys();
        if (keys.length === 1 && keys[0].url === current) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return Promise.all(keys.map(async (key) => ({
        url: key.url,
        sha256: hex(await crypto.subtle.digest('SHA-256', await (await cache.match(key)).arrayBuffer())),
      })));
    }, current);
  };

  await wake('cache-first');
  assert.deepEqual(await cached(), [{ url: current, sha256: hash }]);

  // An older build's copy beside it (an update, a rebuilt unpacked extension) is removed
  // when the new one is stored.
  const sw = await browser.waitForServiceWorker();
  await sw.evaluate(async () => {
    const cache = await caches.open('tandem-modules');
    const [key] = await cache.keys();
    const body = await (await cache.match(key)).arrayBuffer();
    await cache.put('https://tandem-module.invalid/0123456789abcdef/worker_bg.wasm',
      new Response(body, { headers: { 'content-type': 'application/wasm' } }));
    await cache.delete(key);
  });
  await wake('cache-older');
  assert.deepEqual(await cached(), [{ url: current, sha256: hash }]);

  // A damaged copy under today's key: the worker still starts and answers, from the
  // extension's file, and the next start stores a sound copy.
  await (await browser.waitForServiceWorker()).evaluate(async (key) => {
    const cache = await caches.open('tandem-modules');
    await cache.put(key, new Response(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 255]),
      { headers: { 'content-type': 'application/wasm' } }));
  }, current);
  await wake('cache-damaged');
  await wake('cache-again');
  assert.deepEqual(await cached(), [{ url: current, sha256: hash }]);
  await page.close();
});
