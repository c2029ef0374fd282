// Service-worker bootstrap. Chrome only delivers the event that woke a stopped worker to
// listeners registered synchronously during the first run of this script, and a top-level
// `await` anywhere in the module graph makes registration fail silently. So every listener
// is registered here, at top level, and forwards to the wasm once it has loaded. Events are
// handed over in arrival order because they all chain on the same promise.
import init, * as worker from './wasm/tandem_background.js';

const ready = init().then(() => worker.start());
const forward = (handler) => (...args) => { ready.then(() => handler(...args)); };

chrome.runtime.onInstalled.addListener(forward(worker.on_installed));

chrome.runtime.onConnect.addListener((port) => {
  // Port listeners must be attached now: a message posted right after connect() is lost
  // if nobody listens when it arrives.
  port.onMessage.addListener(forward((message) => worker.on_port_message(port, message)));
  port.onDisconnect.addListener(forward(() => worker.on_port_disconnect(port)));
});
