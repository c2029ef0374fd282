// Where the time goes when the side panel opens and when a stopped service worker wakes:
// the wasm's fetch, compile and instantiate, the first settings read, the first paint, and
// ready (the panel: its on-device status line filled; the worker: its reply). Each figure is
// milliseconds from the start (the panel's navigation, the worker's start), the median of
// RUNS. Prints figures; asserts nothing. TANDEM_DIST picks the dist/ to measure, so two
// builds can be compared back to back on the same busy machine.
//
// Beside Tandem, the floor (scripts/lib/floor-extension.mjs: an extension whose worker answers
// at once and whose panel is one line its script fills), in a browser of its own launched the
// same way, its runs alternating with Tandem's: what any extension pays on this machine.
import { watchPanelReady } from './lib/panel-ready.mjs';
import { withTandemAndFloor } from './lib/floor-extension.mjs';

const RUNS = Number(process.env.RUNS ?? 9);
const median = (xs) => { const s = xs.filter((x) => x != null).sort((a, b) => a - b); return s.length ? s[Math.floor(s.length / 2)] : null; };
const ms = (m) => (m == null ? '      –' : `${m.toFixed(1).padStart(7)} ms`);
const show = (label, xs, floor) => {
  const m = median(xs);
  const f = floor && median(floor);
  const beside = floor ? `   floor ${ms(f)}   overhead ${m == null || f == null ? '–' : `${(m - f).toFixed(1)} ms`}` : '';
  console.log(`  ${label.padEnd(50)} ${ms(m)}${beside}`);
};

// One opening of the panel: the figures of this run. The compile and the instantiation are
// split by a wrapper installed before the panel's scripts run (compileStreaming, then
// instantiate: what instantiateStreaming does).
async function openPanel(browser) {
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
    const compileStreaming = WebAssembly.compileStreaming;
    WebAssembly.compileStreaming = (source) => compileStreaming(source).then((module) => {
      t.compiled ??= performance.now();
      return module;
    });
    WebAssembly.instantiateStreaming = async (source, imports) => {
      const module = await WebAssembly.compileStreaming(source);
      const instance = await WebAssembly.instantiate(module, imports);
      t.instantiated ??= performance.now();
      return { module, instance };
    };
    const instantiate = WebAssembly.instantiate;
    WebAssembly.instantiate = (...args) => instantiate(...args).then((out) => {
      if (args[0] instanceof WebAssembly.Module) t.instantiated ??= performance.now();
      return out;
    });
    const get = chrome.storage?.local?.get.bind(chrome.storage.local);
    if (get) {
      chrome.storage.local.get = (...args) => {
        t.readStart ??= performance.now();
        const answer = get(...args);
        answer?.then?.(() => { t.readDone ??= performance.now(); });
        return answer;
      };
    }
  });
  await watchPanelReady(page);
  await page.goto(browser.url('sidepanel.html'));
  const ready = await page.evaluate(() => window.__ready);
  const t = await page.evaluate(() => {
    const paint = performance.getEntriesByType('paint').find((e) => e.name === 'first-paint');
    return { ...window.__load, paint: paint?.startTime };
  });
  await page.close();
  return { ...t, ready };
}

// One wake-up of the stopped worker by a message from `page`: its own clock starts with the
// worker; background.js marks when it runs and when its wasm is ready (performance.mark; a
// worker has no fetch to wrap before its script runs).
async function wake(browser, page) {
  await browser.stopServiceWorker();
  const reply = await page.evaluate(() => new Promise((resolve) => {
    const started = performance.now();
    const port = chrome.runtime.connect({ name: 'tandem-chat' });
    port.onMessage.addListener(() => { resolve(performance.now() - started); port.disconnect(); });
    port.postMessage(JSON.stringify({ nanoStatus: { requestId: 'bench' } }));
  }));
  const sw = await browser.waitForServiceWorker();
  const t = await sw.evaluate(() => ({
    script: performance.getEntriesByName('tandem-script')[0]?.startTime,
    ready: performance.getEntriesByName('tandem-wasm-ready')[0]?.startTime,
  }));
  return { ...t, reply };
}

await withTandemAndFloor(async ({ tandem, floor }) => {
  const column = (runs, k) => runs.map((r) => r[k]);

  const panel = [[], []];
  for (let i = 0; i < RUNS; i++) {
    panel[0].push(await openPanel(tandem));
    panel[1].push(await openPanel(floor));
  }
  console.log(`side panel open, ms from navigation start (median of ${RUNS}; the worker awake):`);
  show('wasm requested', column(panel[0], 'request'));
  show('wasm bytes in (fetch done)', column(panel[0], 'bytes'));
  show('compiled', column(panel[0], 'compiled'));
  show('instantiated', column(panel[0], 'instantiated'));
  show('first settings read asked', column(panel[0], 'readStart'));
  show('first settings read answered', column(panel[0], 'readDone'));
  show('first paint', column(panel[0], 'paint'), column(panel[1], 'paint'));
  show('ready (status line filled; floor: by its script)', column(panel[0], 'ready'), column(panel[1], 'ready'));

  const pages = [await tandem.openPanel(), await floor.openPanel()];
  const worker = [[], []];
  for (let i = 0; i < RUNS; i++) {
    worker[0].push(await wake(tandem, pages[0]));
    worker[1].push(await wake(floor, pages[1]));
  }
  console.log(`service worker wake-up, ms from the worker's start (median of ${RUNS}):`);
  show('background.js runs (its imports evaluated)', column(worker[0], 'script'), column(worker[1], 'script'));
  show('wasm fetched, compiled, instantiated', column(worker[0], 'ready'));
  show('reply, ms from the panel\'s message', column(worker[0], 'reply'), column(worker[1], 'reply'));
});
