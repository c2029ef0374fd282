// Each context loads only its own wasm (issue #46): the side panel fetches the panel's module
// and never the worker's, so opening it does not compile the worker's code; the worker, woken
// by the panel, answers from its own module. Seen from the panel page: the wasm it fetches,
// and the worker's answer.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launchExtension } from './lib/browser.mjs';

let browser;
before(async () => { browser = await launchExtension(); });
after(async () => { await browser?.close(); });

test('the side panel fetches only the panel\'s wasm, and a woken worker still answers it', async () => {
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
  const wasm = (await page.evaluate(() => window.__fetched))
    .filter((url) => url.endsWith('.wasm'))
    .map((url) => new URL(url).pathname);
  assert.deepEqual(wasm, ['/wasm/panel_bg.wasm']);

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
