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

const ready = init().then(() => {
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
