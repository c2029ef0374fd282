// The whole service-worker bootstrap of a tool provider. Importing the glue registers the
// SDK's chrome.* listeners synchronously (they queue events until the wasm starts), so the
// message that wakes a stopped worker is not lost. No top-level await: it would make the
// worker's registration fail silently.
import init from './wasm/tandem_tabs_provider.js';

init().catch((error) => console.error('Tandem Tabs: the wasm did not load:', error));
