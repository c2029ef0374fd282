// Side-panel bootstrap: the UI is Rust (crates/side-panel); start_panel wires the DOM.
// wasm/panel.js is crates/wasm built with only the panel's code (scripts/build).
import init, { start_panel } from './wasm/panel.js';

// This script runs as soon as it and its imports are here (`async` in sidepanel.html), while
// the page may still be parsing: what only the platform can do first starts now, so that it
// overlaps the parse instead of following it (scripts/bench-load.mjs times each part).
// - The module's fetch and compile (compileStreaming: compiled as the bytes arrive).
// - The first read of the settings, which Settings awaits before it asks the worker about the
//   on-device model: handed to start_panel, which reads it as its own (crates/side-panel).
const compiled = WebAssembly.compileStreaming(fetch(new URL('./wasm/panel_bg.wasm', import.meta.url)));
const firstSettings = chrome.storage.local.get('settings');
// - The Port to the worker, with the question the status line waits for (the on-device
//   model's state; request id protocol::EARLY_STATUS_ID): a stopped worker wakes while the wasm
//   compiles, not after, and answers meanwhile. What it says before start_panel is kept for
//   it; start_panel adopts the Port (crates/side-panel port.rs) and hands that on.
const early = connectEarly();
// start_panel wires the controls, so it waits for the whole page.
const parsed = document.readyState === 'loading'
  ? new Promise((resolve) => document.addEventListener('DOMContentLoaded', resolve, { once: true }))
  : null;

init({ module_or_path: compiled }).then(() => parsed).then(() => {
  start_panel(firstSettings, early);
  keepWorkerWarm();
}).catch((error) => {
  const show = () => {
    const line = document.getElementById('error');
    if (line) {
      line.textContent = `Tandem could not start: ${error}`;
      line.hidden = false;
    }
  };
  if (parsed) parsed.then(show); else show();
});

// While the panel is open, it holds the worker's compiled module. V8 shares a module's compiled
// code between the contexts of the extension's process (keyed by its bytes) and compiles
// functions lazily on first call: without a holder, each time the idle worker is stopped its
// compiled code dies with it, and every wake-up compiles again what answering the panel runs
// (scripts/bench-wake.mjs: ~20 ms more per wake than when one module served both). Compiling
// here is validation only (lazily), off the panel's first paint.
function keepWorkerWarm() {
  const hold = () => WebAssembly.compileStreaming(fetch('./wasm/worker_bg.wasm'))
    .then((module) => { globalThis.tandemWorkerModule = module; })
    .catch(() => { /* only the next wake-up's speed depends on it */ });
  if ('requestIdleCallback' in globalThis) requestIdleCallback(hold, { timeout: 2000 });
  else setTimeout(hold, 500);
}

// `{ port, adopt }`: adopt() returns what the worker said so far and keeps nothing after
// (null once the Port closed: a worker stopped meanwhile; the panel then connects anew).
function connectEarly() {
  try {
    const port = chrome.runtime.connect({ name: 'tandem-chat' });
    let heard = [];
    port.onMessage.addListener((message) => { heard?.push(message); });
    port.onDisconnect.addListener(() => { if (heard) heard = null; });
    // JSON as the worker reads it (tandem_core::protocol's test reads this literal).
    port.postMessage('{"nanoStatus":{"requestId":"n-first"}}');
    return {
      port,
      adopt: () => { const said = heard; heard = undefined; return said; },
    };
  } catch {
    return undefined;
  }
}
