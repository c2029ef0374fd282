// Side-panel bootstrap: the UI is Rust (crates/side-panel); start_panel wires the DOM. The
// module is shared with the service worker (crates/wasm), so nothing runs on load by itself.
import init, { start_panel } from './wasm/tandem.js';

init().then(() => start_panel()).catch((error) => {
  const line = document.getElementById('error');
  if (line) {
    line.textContent = `Tandem could not start: ${error}`;
    line.hidden = false;
  }
});
