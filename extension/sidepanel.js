// Side-panel bootstrap: the UI is Rust (crates/side-panel); start_panel wires the DOM.
// wasm/panel.js is crates/wasm built with only the panel's code (scripts/build).
import init, { start_panel } from './wasm/panel.js';

init().then(() => {
  start_panel();
  keepWorkerWarm();
}).catch((error) => {
  const line = document.getElementById('error');
  if (line) {
    line.textContent = `Tandem could not start: ${error}`;
    line.hidden = false;
  }
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
