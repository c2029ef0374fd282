// Measures how long a stopped service worker takes to wake and answer the side panel:
// the panel posts a message on a fresh Port (which starts the worker), the worker loads its
// wasm and replies. Prints figures; asserts nothing.
import path from 'node:path';
import { launchExtension, repoRoot } from '../tests/e2e/lib/browser.mjs';

const RUNS = 7;
const browser = await launchExtension({ dist: path.join(repoRoot, 'dist') });
try {
  const panel = await browser.openPanel();
  const roundTrip = () => panel.evaluate(() => new Promise((resolve) => {
    const started = performance.now();
    const port = chrome.runtime.connect({ name: 'tandem-chat' });
    port.onMessage.addListener(() => { resolve(performance.now() - started); port.disconnect(); });
    port.postMessage(JSON.stringify({ nanoStatus: { requestId: 'bench' } }));
  }));
  const cold = [];
  const warm = [];
  for (let i = 0; i < RUNS; i++) {
    await browser.stopServiceWorker();
    cold.push(await roundTrip());
    warm.push(await roundTrip());
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const fmt = (xs) => `median ${median(xs).toFixed(1)} ms (min ${Math.min(...xs).toFixed(1)}, max ${Math.max(...xs).toFixed(1)})`;
  console.log(`service worker wake-up to reply (stopped → answered), ${RUNS} runs: ${fmt(cold)}`);
  console.log(`awake worker round trip over a new Port:              ${fmt(warm)}`);
} finally {
  await browser.close();
}
