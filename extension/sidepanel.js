// Side-panel bootstrap: the UI is Rust (crates/side-panel); its start function wires the DOM.
import init from './wasm/tandem_side_panel.js';

init().catch((error) => {
  const line = document.getElementById('error');
  if (line) {
    line.textContent = `Tandem could not start: ${error}`;
    line.hidden = false;
  }
});
