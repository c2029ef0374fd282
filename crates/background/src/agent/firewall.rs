//! The task's firewall in the browser (the rules and questions are `tandem_core::agent::
//! effects`'): Chrome's declarativeNetRequest session rules on the task's tabs, up while the
//! loop runs and removed when it stops (done, failed, paused, cancelled) and at every worker
//! start; a `webRequest` watch, added only while the rules are up, that collects what the
//! rules held back; and the question the loop asks about each held request, after which it
//! goes there (Yes) or back (No).

use std::collections::BTreeSet;

use js_sys::Promise;
use tandem_chrome::js_text;
use tandem_core::agent::task::TaskContext;
use tandem_core::agent::{Approved, Firewall, Held, Snapshot};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::hosts::host_of;
use super::page::tab_url;

// The listeners are added while a task's rules are up and removed with them: registered at
// the worker's top level they would wake it for every navigation of every tab.
#[wasm_bindgen(inline_js = "
const IDS = [3101, 3102];
let watch = null;
export function firewall_rules(rules) {
  return chrome.declarativeNetRequest.updateSessionRules({ removeRuleIds: IDS, addRules: rules });
}
export function firewall_clear() {
  return chrome.declarativeNetRequest.updateSessionRules({ removeRuleIds: IDS });
}
export function firewall_watch(tabs) {
  if (!watch) {
    const w = { tabs: new Set(), held: [], bodies: new Map() };
    const filter = { urls: ['http://*/*', 'https://*/*'], types: ['main_frame', 'sub_frame'] };
    // A blocked form post's fields: Chrome hands the body to onBeforeRequest even for a
    // request a rule then blocks (measured on Chromium 156), and never to onErrorOccurred.
    w.before = (d) => {
      if (d.method !== 'GET' && w.tabs.has(d.tabId)) w.bodies.set(d.requestId, d.requestBody?.formData ?? null);
    };
    w.error = (d) => {
      const form = w.bodies.get(d.requestId);
      w.bodies.delete(d.requestId);
      if (!w.tabs.has(d.tabId) || d.error !== 'net::ERR_BLOCKED_BY_CLIENT') return;
      w.held.push({ url: d.url, method: d.method, frame: d.type === 'sub_frame', form: form ?? {}, tab: d.tabId });
    };
    w.end = (d) => { w.bodies.delete(d.requestId); };
    chrome.webRequest.onBeforeRequest.addListener(w.before, filter, ['requestBody']);
    chrome.webRequest.onErrorOccurred.addListener(w.error, filter);
    chrome.webRequest.onCompleted.addListener(w.end, filter);
    watch = w;
  }
  watch.tabs = new Set(tabs);
}
export function firewall_unwatch() {
  if (!watch) return;
  chrome.webRequest.onBeforeRequest.removeListener(watch.before);
  chrome.webRequest.onErrorOccurred.removeListener(watch.error);
  chrome.webRequest.onCompleted.removeListener(watch.end);
  watch = null;
}
export function firewall_take() {
  if (!watch) return '[]';
  const held = watch.held;
  watch.held = [];
  return JSON.stringify(held);
}
")]
extern "C" {
    #[wasm_bindgen(catch)]
    fn firewall_rules(rules: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(catch)]
    fn firewall_clear() -> Result<Promise, JsValue>;
    #[wasm_bindgen(catch)]
    fn firewall_watch(tabs: &JsValue) -> Result<(), JsValue>;
    fn firewall_unwatch();
    fn firewall_take() -> String;
}

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_namespace = ["chrome", "tabs"], js_name = goBack)]
    pub(super) fn tabs_go_back(tab_id: i32) -> Result<Promise, JsValue>;
}

/// Removes the firewall's rules: at worker start (the loop that owned them died with the
/// old worker, and a paused task must not keep blocking the user's own browsing).
pub(super) async fn clear() {
    if let Err(e) = wait(firewall_clear()).await {
        crate::log_error("the task's firewall could not be removed", &e.into());
    }
}

pub(super) async fn wait(call: Result<Promise, JsValue>) -> Result<(), String> {
    JsFuture::from(call.map_err(js_text)?)
        .await
        .map(|_| ())
        .map_err(js_text)
}

/// The firewall of the running loop: what is installed, and the hosts of the frames its
/// pages embed.
#[derive(Default)]
pub(super) struct Guard {
    installed: Option<Firewall>,
    frame_hosts: BTreeSet<String>,
    /// The task's tabs whose hosts were taken into account: those it started with and those
    /// the agent opened. A tab the user added to the task (`addRelevantTab`) is not among
    /// them: its host joins the approved ones at the next `sync`.
    known: BTreeSet<i32>,
}

impl Guard {
    /// Puts the rules up for `ctx`. When the task first runs, its tabs' hosts join the
    /// approved ones (the user started it there); not on a resume, when a tab may show the
    /// error page of a held-back request, whose URL is the attacker's.
    pub(super) async fn up(&mut self, ctx: &mut TaskContext) {
        if !ctx.hosts_opened.is_empty() {
            self.known.extend(ctx.relevant_tabs.iter().copied());
        }
        self.sync(ctx).await;
    }

    /// The frames a page embeds, whose own form posts pass the frame rule.
    pub(super) fn note_frames(&mut self, snapshot: &Snapshot) {
        for frame in &snapshot.frames {
            if let Some(host) = host_of(&frame.url) {
                self.frame_hosts.insert(host);
            }
        }
    }

    /// A tab the agent opened: its host is approved only if the address it was sent to was.
    pub(super) fn know(&mut self, tab: i32) {
        self.known.insert(tab);
    }

    /// Brings the rules in line with `ctx` (its tabs, its approved hosts); no call to Chrome
    /// when nothing changed.
    pub(super) async fn sync(&mut self, ctx: &mut TaskContext) {
        for &tab in &ctx.relevant_tabs {
            if !self.known.insert(tab) {
                continue;
            }
            if let Some(host) = tab_url(tab).await.ok().as_deref().and_then(host_of) {
                if !ctx.hosts_opened.contains(&host) {
                    ctx.hosts_opened.push(host);
                }
            }
        }
        let frames: Vec<String> = self.frame_hosts.iter().cloned().collect();
        let wanted = Firewall::new(&ctx.relevant_tabs, &Approved::of(ctx), &frames);
        if self.installed.as_ref() == Some(&wanted) {
            return;
        }
        let rules = rules_value(&wanted);
        let tabs = js_sys::Array::new();
        for tab in &wanted.tabs {
            tabs.push(&JsValue::from(*tab));
        }
        let watched = firewall_watch(&tabs).map_err(js_text);
        match (watched, wait(firewall_rules(&rules)).await) {
            (Ok(()), Ok(())) => self.installed = Some(wanted),
            (Err(e), _) | (_, Err(e)) => {
                crate::log_error("the task's firewall could not be set", &e.into());
                self.installed = None;
            }
        }
    }

    /// Takes the rules and the watch down (every end of the loop).
    pub(super) async fn down(&mut self) {
        firewall_unwatch();
        self.installed = None;
        clear().await;
    }
}

/// The rules as a JS value (through JSON: the worker's one serialiser).
fn rules_value(firewall: &Firewall) -> JsValue {
    js_sys::JSON::parse(&firewall.rules().to_string()).unwrap_or(JsValue::NULL)
}

/// What the firewall held back since the last call, once each.
pub(super) fn take_held() -> Vec<Held> {
    let mut held: Vec<Held> = tandem_core::json::from_str(&firewall_take()).unwrap_or_default();
    let mut seen = BTreeSet::new();
    held.retain(|h| seen.insert((h.url.clone(), h.method.clone(), h.frame)));
    held
}
