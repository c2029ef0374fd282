// What the side panel does first when it opens (issue #46): it asks the worker about the
// on-device model before its other questions, so that the answer is not queued behind theirs,
// and it shows that answer only once the stored settings are in the form (the filled status
// line is how a person, and these tests' openPanel, know the form shows what is stored).
// Seen from the panel page: what it posts on its Port, and what the form shows.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launchExtension } from './lib/browser.mjs';

let browser;
before(async () => { browser = await launchExtension(); });
after(async () => { await browser?.close(); });

/** Opens the panel with `init` installed before its scripts; resolves once the status line is filled. */
async function open(init) {
  const page = await browser.context.newPage();
  await page.addInitScript(init);
  await page.goto(browser.url('sidepanel.html'));
  await page.waitForFunction(() => {
    const line = document.getElementById('nano-status');
    return line && !line.textContent.includes('checking');
  });
  return page;
}

test('the panel\'s first question to the worker is the on-device model\'s status', async () => {
  const page = await open(() => {
    window.__posted = [];
    const connect = chrome.runtime.connect.bind(chrome.runtime);
    chrome.runtime.connect = (...args) => {
      const port = connect(...args);
      const post = port.postMessage.bind(port);
      port.postMessage = (message) => { window.__posted.push(Object.keys(JSON.parse(message))[0]); post(message); };
      return port;
    };
  });
  const posted = await page.evaluate(() => window.__posted);
  assert.equal(posted[0], 'nanoStatus', posted.join(', '));
  await page.close();
});

test('the on-device status is shown only once the stored settings are in the form, however slow their read', async () => {
  const setup = await browser.openPanel();
  await setup.evaluate(() => chrome.storage.local.set({ settings: { onDevice: 'cloud' } }));
  await setup.close();
  // The read of the settings answered 300 ms late; the worker's answer comes long before.
  const page = await open(() => {
    const get = chrome.storage.local.get.bind(chrome.storage.local);
    chrome.storage.local.get = (keys, ...rest) => {
      const answer = get(keys, ...rest);
      const slow = JSON.stringify(keys).includes('settings');
      return slow ? answer.then((items) => new Promise((resolve) => setTimeout(() => resolve(items), 300))) : answer;
    };
    new MutationObserver((_, observer) => {
      const line = document.getElementById('nano-status');
      if (line && !line.textContent.includes('checking')) {
        observer.disconnect();
        window.__formWhenShown = document.getElementById('on-device').value;
      }
    }).observe(document, { subtree: true, childList: true, characterData: true });
  });
  assert.equal(await page.evaluate(() => window.__formWhenShown), 'cloud');
  await page.close();
});

// The bootstrap opens the Port as it starts (extension/sidepanel.js): a stopped worker wakes
// while the panel's wasm compiles, its answer about the on-device model waits for the panel,
// and the panel keeps that one Port for everything after (crates/side-panel port.rs adopt).
test('an opening panel wakes a stopped worker before its wasm is ready, and keeps that one Port', async () => {
  await browser.stopServiceWorker();
  const page = await open(() => {
    const t = (window.__times = { connects: [], posted: [] });
    const connect = chrome.runtime.connect.bind(chrome.runtime);
    chrome.runtime.connect = (...args) => {
      const port = connect(...args);
      t.connects.push(performance.now());
      const post = port.postMessage.bind(port);
      port.postMessage = (message) => { t.posted.push(Object.keys(JSON.parse(message))[0]); post(message); };
      return port;
    };
    const instantiate = WebAssembly.instantiate;
    WebAssembly.instantiate = async (...args) => {
      const result = await instantiate(...args);
      t.instantiated ??= performance.now();
      return result;
    };
  });
  // The panel's other first questions (the task's state, the conversation) go out too.
  await page.waitForFunction(() => window.__times.posted.length >= 3);
  const t = await page.evaluate(() => window.__times);
  assert.equal(t.connects.length, 1, `${t.connects.length} Ports`);
  assert.ok(t.connects[0] < t.instantiated, `Port at ${t.connects[0]} ms, wasm ready at ${t.instantiated} ms`);
  assert.equal(t.posted[0], 'nanoStatus', t.posted.join(', '));
  // The worker's answer is what the line says: Chromium here has no on-device model.
  assert.doesNotMatch(await page.locator('#nano-status').innerText(), /checking/i);
  await page.close();
});

test('a Port that closes before the panel is ready is replaced, and the status line is still filled', async () => {
  const page = await open(() => {
    window.__connects = 0;
    const connect = chrome.runtime.connect.bind(chrome.runtime);
    chrome.runtime.connect = (...args) => {
      const port = connect(...args);
      window.__connects += 1;
      if (window.__connects === 1) {
        // As if the worker had been stopped just after the bootstrap asked: the bootstrap's
        // own listener hears the Port close.
        const onDisconnect = port.onDisconnect;
        const add = onDisconnect.addListener.bind(onDisconnect);
        onDisconnect.addListener = (listener) => { add(listener); setTimeout(listener, 0); };
      }
      return port;
    };
  });
  assert.equal(await page.evaluate(() => window.__connects), 2);
  assert.doesNotMatch(await page.locator('#nano-status').innerText(), /checking/i);
  await page.close();
});
