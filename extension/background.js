// Service-worker bootstrap. Chrome only delivers the event that woke a stopped worker to
// listeners registered synchronously during the first run of this script, and a top-level
// `await` anywhere in the module graph makes registration fail silently. So every listener
// is registered here, at top level, and forwards to the wasm once it has loaded. Events are
// handed over in arrival order because they all chain on the same promise.
// wasm/worker.js is crates/wasm built with only the worker's code (scripts/build); the side
// panel loads its own module, wasm/panel.js.
import init, * as worker from './wasm/worker.js';

// For scripts/bench-load.mjs: when, from the worker's start, this script ran and its wasm was ready.
performance.mark('tandem-script');

// Before anything else, at every start: API keys (storage.local) and conversations
// (storage.session) are for Tandem's own pages and worker only. Without this, Tandem's
// content script, which runs in every page a task touches, could read both.
for (const area of [chrome.storage.local, chrome.storage.session]) {
  area.setAccessLevel({ accessLevel: 'TRUSTED_CONTEXTS' })
    .catch((error) => console.error('Tandem: storage could not be restricted:', error?.message));
}

// The worker's module is read from Tandem's own CacheStorage after the first start: a Response
// from there reaches the compiler sooner than a fetch of the extension's file, and a woken
// worker answers 7–10 ms sooner (scripts/bench-wake.mjs; A/B in docs/load-and-size.md). The key
// is the module's content hash, stamped here by scripts/build (scripts/lib/stamp-module.mjs),
// so a rebuilt extension never runs an older module with newer glue, even under one version.
// The Cache API takes only http(s) keys: `.invalid` is a name that can never be fetched. Web
// pages and content scripts have caches of their own origin; this one is the extension's.
const WORKER_MODULE = new URL('./wasm/worker_bg.wasm', import.meta.url);
const MODULE_HASH = '@@WORKER_MODULE_HASH@@';
const MODULE_CACHE = 'tandem-modules';
const moduleKey = `https://tandem-module.invalid/${MODULE_HASH}/worker_bg.wasm`;

// The module's Response: the cached copy, or (first start, a new build, no cache) the file,
// stored while it compiles, the older builds' copies removed then.
async function workerModule() {
  if (MODULE_HASH.startsWith('@@')) return fetch(WORKER_MODULE);
  let cache;
  try {
    cache = await caches.open(MODULE_CACHE);
    const cached = await cache.match(moduleKey);
    if (cached) return cached;
  } catch (error) {
    console.warn('Tandem: the module cache could not be read:', error?.message);
  }
  const response = await fetch(WORKER_MODULE);
  if (cache && response.ok) {
    cache.put(moduleKey, response.clone())
      .then(() => cache.keys())
      .then((keys) => Promise.all(keys.filter((k) => k.url !== moduleKey).map((k) => cache.delete(k))))
      .catch((error) => console.warn('Tandem: the module could not be cached:', error?.message));
  }
  return response;
}

// A cached copy that does not compile (a damaged disk) is dropped and the extension's file
// used: the worker starts either way.
const ready = init({ module_or_path: workerModule() })
  .catch((error) => {
    console.warn('Tandem: the cached module failed, reading the extension\'s own:', error?.message);
    return caches.delete(MODULE_CACHE).catch(() => {})
      .then(() => init({ module_or_path: fetch(WORKER_MODULE) }));
  })
  .then(() => {
    performance.mark('tandem-wasm-ready');
    return worker.start_worker();
  });
const forward = (handler) => (...args) => { ready.then(() => handler(...args)); };

// "Ask Tandem" opens the side panel for the tab. sidePanel.open() is only allowed during the
// user gesture (the menu click, the shortcut), which does not survive an await: so it is
// called here, synchronously, before anything is forwarded.
const openPanel = (tab) => {
  if (!(tab?.id >= 0)) return;
  chrome.sidePanel.open({ tabId: tab.id })
    .catch((error) => console.warn('Tandem: the side panel did not open:', error?.message));
};

chrome.runtime.onInstalled.addListener(forward(worker.on_installed));

chrome.runtime.onConnect.addListener((port) => {
  // Port listeners must be attached now: a message posted right after connect() is lost
  // if nobody listens when it arrives.
  port.onMessage.addListener(forward((message) => worker.on_port_message(port, message)));
  port.onDisconnect.addListener(forward(() => worker.on_port_disconnect(port)));
});

// Tool providers (other extensions) register their tools here; nothing else is served to
// other extensions. The answer is asynchronous, so the listener returns true.
chrome.runtime.onMessageExternal.addListener((message, sender, sendResponse) => {
  ready.then(() => worker.on_external_message(message, sender))
    .then(sendResponse, (error) => sendResponse({ ok: false, error: String(error?.message ?? error) }));
  return true;
});

chrome.tabs.onRemoved.addListener(forward(worker.on_tab_removed));
chrome.tabs.onUpdated.addListener(forward(worker.on_tab_updated));
chrome.tabs.onReplaced.addListener(forward(worker.on_tab_replaced));
chrome.alarms.onAlarm.addListener(forward(worker.on_alarm));
// The sites allowed always get the listener recorder (crates/background/src/agent/recorder.rs):
// it follows the grants and the site lists, which the panel may change while the worker sleeps.
chrome.storage.onChanged.addListener((changes, area) => {
  if (area === 'local' && ('siteGrants' in changes || 'settings' in changes)) forward(worker.on_sites_changed)();
});

// A scheduled workflow's notification: a click opens the side panel on that run. Chrome
// dispatches notifications.onClicked with a user gesture, as it does a menu click; the
// panel opens on the window the person is in (WINDOW_ID_CURRENT: for a worker, the last
// focused one), where the run's tab is brought to the front. Without a gesture (a build that
// gives none) the panel does not open: the run's tab still comes forward, and the panel shows
// the run when the person opens it within a minute.
const onNotificationClicked = (id) => {
  chrome.sidePanel.open({ windowId: chrome.windows.WINDOW_ID_CURRENT })
    .catch((error) => console.warn('Tandem: the side panel did not open:', error?.message));
  forward(worker.on_notification_clicked)(id);
};
// `notifications` is an optional permission, asked for when the person schedules a workflow:
// until it is granted chrome.notifications is undefined, and touching it here would stop this
// script before the listeners below. Granted later, the listener is added then; every later
// start (a click on a notification wakes the worker) finds the API and adds it at top level.
const listenToNotifications = () => {
  if (chrome.notifications && !chrome.notifications.onClicked.hasListener(onNotificationClicked)) {
    chrome.notifications.onClicked.addListener(onNotificationClicked);
  }
};
listenToNotifications();
chrome.permissions.onAdded.addListener(listenToNotifications);

chrome.contextMenus.onClicked.addListener((info, tab) => {
  openPanel(tab);
  forward(worker.on_menu_clicked)(info, tab);
});
chrome.commands.onCommand.addListener((command, tab) => {
  openPanel(tab);
  forward(worker.on_command)(command, tab);
});
