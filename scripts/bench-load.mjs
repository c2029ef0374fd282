// Where the time goes when the side panel opens and when a stopped service worker wakes:
// the wasm's fetch, compile and instantiate, the first settings read, the first paint, and
// ready (the panel: its on-device status line filled; the worker: its reply). Each figure is
// milliseconds from the start (the panel's navigation, the worker's start), the median of
// RUNS. Prints figures; asserts nothing. TANDEM_DIST picks the dist/ to measure, so two
// builds can be compared back to back on the same busy machine.
import path from 'node:path';
import { launchExtension, repoRoot } from '../tests/e2e/lib/browser.mjs';
import { watchPanelReady } from './lib/panel-ready.mjs';

const RUNS = Number(process.env.RUNS ?? 9);
const browser = await launchExtension({ dist: process.env.TANDEM_DIST ?? path.join(repoRoot, 'dist') });
const median = (xs) => { const s = xs.filter((x) => x != null).sort((a, b) => a - b); return s.length ? s[Math.floor(s.length / 2)] : null; };
const show = (label, xs) => {
  const m = median(xs);
  console.log(`  ${label.padEnd(46)} ${m == null ? '      –' : `${m.toFixed(1).padStart(7)} ms`}`);
};

try {
  // The panel: the compile and the instantiation are split by a wrapper installed before the
  // panel's scripts run (compileStreaming, then instantiate: what instantiateStreaming does).
  const panel = { request: [], bytes: [], compiled: [], instantiated: [], readStart: [], readDone: [], paint: [], ready: [] };
  for (let i = 0; i < RUNS; i++) {
    const page = await browser.context.newPage();
    await page.addInitScript(() => {
      const t = (window.__load = {});
      // Extension files get no resource timing entries: the wasm's fetch is timed here.
      const fetch = window.fetch;
      window.fetch = (...args) => {
        const wasm = String(args[0]?.url ?? args[0]).endsWith('.wasm');
        if (wasm) t.request ??= performance.now();
        const answer = fetch(...args);
        if (wasm) answer.then((response) => response.clone().arrayBuffer()).then(() => { t.bytes ??= performance.now(); });
        return answer;
      };
      WebAssembly.instantiateStreaming = async (source, imports) => {
        const module = await WebAssembly.compileStreaming(source);
        t.compiled = performance.now();
        const instance = await WebAssembly.instantiate(module, imports);
        t.instantiated = performance.now();
        return { module, instance };
      };
      const get = chrome.storage.local.get.bind(chrome.storage.local);
      chrome.storage.local.get = (...args) => {
        t.readStart ??= performance.now();
        const answer = get(...args);
        answer?.then?.(() => { t.readDone ??= performance.now(); });
        return answer;
      };
    });
    await watchPanelReady(page);
    await page.goto(browser.url('sidepanel.html'));
    const ready = await page.evaluate(() => window.__ready);
    const t = await page.evaluate(() => {
      const paint = performance.getEntriesByType('paint').find((e) => e.name === 'first-paint');
      return { ...window.__load, paint: paint?.startTime };
    });
    for (const k of Object.keys(panel)) panel[k].push(k === 'ready' ? ready : t[k]);
    await page.close();
  }
  console.log(`side panel open, ms from navigation start (median of ${RUNS}; the worker awake):`);
  show('wasm requested', panel.request);
  show('wasm bytes in (fetch done)', panel.bytes);
  show('compiled', panel.compiled);
  show('instantiated', panel.instantiated);
  show('first settings read asked', panel.readStart);
  show('first settings read answered', panel.readDone);
  show('first paint', panel.paint);
  show('ready (status line filled)', panel.ready);

  // The worker: stopped, then woken by a message from the panel. Its own clock starts with
  // the worker; background.js marks when it runs and when its wasm is ready (performance.mark;
  // a worker has no fetch to wrap before its script runs).
  const page = await browser.openPanel();
  const worker = { script: [], ready: [], reply: [] };
  for (let i = 0; i < RUNS; i++) {
    await browser.stopServiceWorker();
    worker.reply.push(await page.evaluate(() => new Promise((resolve) => {
      const started = performance.now();
      const port = chrome.runtime.connect({ name: 'tandem-chat' });
      port.onMessage.addListener(() => { resolve(performance.now() - started); port.disconnect(); });
      port.postMessage(JSON.stringify({ nanoStatus: { requestId: 'bench' } }));
    })));
    const sw = await browser.waitForServiceWorker();
    const t = await sw.evaluate(() => ({
      script: performance.getEntriesByName('tandem-script')[0]?.startTime,
      ready: performance.getEntriesByName('tandem-wasm-ready')[0]?.startTime,
    }));
    for (const k of ['script', 'ready']) worker[k].push(t[k]);
  }
  console.log(`service worker wake-up, ms from the worker's start (median of ${RUNS}):`);
  show('background.js runs (its imports evaluated)', worker.script);
  show('wasm fetched, compiled, instantiated', worker.ready);
  show('reply, ms from the panel\'s message', worker.reply);
} finally {
  await browser.close();
}
