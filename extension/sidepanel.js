// Side-panel bootstrap: the UI is Rust (crates/side-panel); start_panel wires the DOM.
// wasm/panel.js is crates/wasm built with only the panel's code (scripts/build).
import init, { start_panel } from './wasm/panel.js';

init().then(() => start_panel()).catch((error) => {
  const line = document.getElementById('error');
  if (line) {
    line.textContent = `Tandem could not start: ${error}`;
    line.hidden = false;
  }
});
