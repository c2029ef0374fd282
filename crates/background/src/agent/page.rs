//! The agent's hands on a tab: the `chrome.tabs` and `chrome.scripting` calls the loop needs,
//! and the protocol of the in-page driver (`extension/content/driver.js`): inject it into every
//! frame, `snapshot` the page (frames merged into one `Snapshot`), `act` on an element by its
//! handle. What to do is decided in `tandem-core` and the loop; this module only carries it out.
//!
//! A snapshot crosses from the page as one JSON string, each element without its fields at
//! their default: an object of thousands of small objects took ~130 ms to clone on a
//! 2,000-element page (538 → 391 KB as JSON). After an action that navigates, `settle` waits
//! on events, not a fixed delay: the tab's loading state (`status`, `pendingUrl`, polled every
//! 40 ms; 250 ms for a navigation to start), then the driver's `settle` in the new document
//! (no DOM mutation for 100 ms and nothing shown as loading, at most 2 s). The act's watch
//! also takes the next step's look once the page is still; it is handed over early through
//! `lookOf(ticket)` so it crosses while the watch goes on, and `pending_look` keeps it for the
//! next observe when the page has no cross-origin frames (a look kept over 250 ms is checked
//! with `unchanged_since_snapshot` first); the look's element map is built as soon as the look
//! arrives, while the watch goes on (`Prepared`). Each step records `StepTimings` (the act's
//! time in the page and its look's, as the driver measured them, among them), which
//! `scripts/bench-agent.mjs` reads.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Array, Function, Object, Promise, Reflect, JSON};
use tandem_chrome::js_text;
use tandem_core::agent::task::{StepTimings, MAP_CHARS};
use tandem_core::agent::{
    frame_of_handle, ActErrorCode, ActResult, DriverCommand, ElementMap, Snapshot, UrlDenied,
    UrlPolicy,
};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::error::AgentError;
use super::hosts::host_of;
use super::recorder;
use crate::chrome::{self, execute_script, tabs_get};

#[wasm_bindgen(inline_js = "
// Each function below runs in the page through executeScript({func}), which sends the
// function's source alone: one cannot call another, so each is written out whole.
function snapshot(opts) {
  const d = globalThis.__tandemDriver;
  if (!d) return null;
  // A frame whose parent is same-origin was read by the parent's driver.
  if (window !== window.top) {
    try { if (window.parent.document) return null; } catch (_) { /* cross-origin parent */ }
  }
  // As one JSON string: a string crosses from the page to the worker in a few milliseconds,
  // where the same snapshot as an object (thousands of small objects to clone) took ~130 ms
  // on a 2,000-element page, and the worker parses JSON anyway.
  return JSON.stringify(d.snapshot(opts));
}
function unchanged() {
  // As for snapshot: a frame read by its same-origin parent is the parent's to say.
  if (window !== window.top) {
    try { if (window.parent.document) return null; } catch (_) { /* cross-origin parent */ }
  }
  const d = globalThis.__tandemDriver;
  return !!(d && d.unchanged && d.unchanged());
}
// The result as JSON, and beside it the snapshot the driver took while it watched (see its
// `watch`), already JSON: kept out of the result, where it would be escaped into a string.
// `mark`: a highlight command the driver shows on the element as it acts, in the same call
// (a round trip less a step than a call of its own). `expect`: act only if the page is still
// as the last snapshot saw it (the driver answers 'changed' otherwise).
// `ticket`: the first look is also handed to `lookOf(ticket)` as soon as it is taken; then the
// result says only whether it still held at the end (`kept`), unless a later one replaced it.
// Then the act's time in the page and the part of it its looks took, for the step's timings.
async function act(handle, command, lookOpts, mark, expect, ticket) {
  const d = globalThis.__tandemDriver;
  if (!d) return [JSON.stringify({ ok: false, error: 'stale-handle', message: 'the page driver is not loaded' }), null, false, 0, 0];
  const started = performance.now();
  const result = await d.act(handle, command, lookOpts, mark, expect, ticket);
  const ms = performance.now() - started;
  const look = result && typeof result.look === 'string' ? result.look : null;
  const kept = !!(result && result.lookKept);
  const lookMs = (result && Number(result.lookMs)) || 0;
  if (result) {
    delete result.look;
    delete result.lookKept;
    delete result.lookMs;
  }
  return [JSON.stringify(result), look, kept, ms, lookMs];
}
// The look of the act with `ticket`, as soon as its watch takes it (null if it takes none).
function lookOf(ticket) {
  const d = globalThis.__tandemDriver;
  return d && d.lookOf ? d.lookOf(ticket) : null;
}
function back() { history.back(); return true; }
// The driver's wait for a new document (its `settle`); nothing to wait for without it (a
// page Tandem cannot script).
function quiet(quietMs, capMs) {
  const d = globalThis.__tandemDriver;
  return d && d.settle ? d.settle(quietMs, capMs) : 0;
}
export function snapshot_fn() { return snapshot; }
export function quiet_fn() { return quiet; }
export function act_fn() { return act; }
export function look_of_fn() { return lookOf; }
export function unchanged_fn() { return unchanged; }
export function back_fn() { return back; }
")]
extern "C" {
    fn snapshot_fn() -> Function;
    fn act_fn() -> Function;
    fn look_of_fn() -> Function;
    fn unchanged_fn() -> Function;
    fn back_fn() -> Function;
    fn quiet_fn() -> Function;
}

// In the worker: whichever settles first, the early look (`{ look }`, null on failure) or the
// act (null).
#[wasm_bindgen(inline_js = "
export function look_or_act(fetching, acting) {
  return Promise.race([
    fetching.then((look) => ({ look }), () => ({ look: null })),
    acting.then(() => null, () => null),
  ]);
}
")]
extern "C" {
    fn look_or_act(fetching: &Promise, acting: &Promise) -> Promise;
}

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_namespace = ["chrome", "tabs"], js_name = query)]
    fn tabs_query(query: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "tabs"], js_name = update)]
    fn tabs_update(tab_id: i32, props: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "tabs"], js_name = create)]
    fn tabs_create(props: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "tabs"], js_name = remove)]
    fn tabs_remove(tab_id: i32) -> Result<Promise, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "windows"], js_name = update)]
    fn windows_update(window_id: i32, props: &JsValue) -> Result<Promise, JsValue>;
}

/// How long a page may take to load after an action.
const SETTLE_MS: u32 = 10_000;

/// `chrome.tabs.get(id)`: the tab, or why it cannot be read.
pub(super) async fn get_tab(id: i32) -> Result<JsValue, String> {
    match tabs_get(id) {
        Ok(p) => JsFuture::from(p).await.map_err(js_text),
        Err(e) => Err(js_text(e)),
    }
}

/// The URL the tab shows now (what Chrome says, not what the page says about itself).
pub(super) async fn tab_url(tab: i32) -> Result<String, AgentError> {
    let tab = get_tab(tab).await.map_err(AgentError::Tab)?;
    Ok(Reflect::get(&tab, &"url".into())
        .ok()
        .and_then(|u| u.as_string())
        .unwrap_or_default())
}

/// The site lists' verdict on `url`, with its host read by the browser's own URL parser
/// (percent-escapes, numeric IPs, full-width letters and stray tabs resolved as Chrome
/// resolves them when it loads the page).
pub(super) fn allowed(policy: &UrlPolicy, url: &str) -> Result<(), UrlDenied> {
    let not_web = || UrlDenied::NotWeb {
        url: url.chars().take(80).collect(),
    };
    let parsed = web_sys::Url::new(url).map_err(|_| not_web())?;
    if !matches!(parsed.protocol().as_str(), "http:" | "https:") || parsed.hostname().is_empty() {
        return Err(not_web());
    }
    policy.check_host(&parsed.hostname())
}

/// The task is about to load `url`: its page gets the listener recorder from its start.
async fn recorder_for(url: &str) {
    if let Some(host) = host_of(url) {
        recorder::include(&host).await;
    }
}

/// Loads `url` in the tab, then waits for it to load.
pub(super) async fn navigate(tab: i32, url: &str) -> Result<(), String> {
    recorder_for(url).await;
    let props = Object::new();
    let _ = Reflect::set(&props, &"url".into(), &url.into());
    match tabs_update(tab, &props) {
        Ok(p) => JsFuture::from(p).await.map(|_| ()).map_err(js_text)?,
        Err(e) => return Err(js_text(e)),
    }
    settle(tab).await;
    Ok(())
}

/// `history.back()` in the tab, then wait for it to load.
pub(super) async fn go_back(tab: i32) -> Result<(), AgentError> {
    run_in_page(tab, None, &back_fn(), &Array::new()).await?;
    settle(tab).await;
    Ok(())
}

/// The tab to act on: the panel's tab `tab_id` while it exists, whatever it shows (a page
/// Tandem cannot act on ends the task with a sentence naming it, rather than the task
/// quietly going to another tab), else the web tab used last.
pub(super) async fn target_tab(tab_id: Option<i32>) -> Result<i32, AgentError> {
    if let Some(id) = tab_id {
        if get_tab(id).await.is_ok() {
            return Ok(id);
        }
    }
    let tabs = JsFuture::from(tabs_query(&Object::new()).map_err(|e| AgentError::Tab(js_text(e)))?)
        .await
        .map_err(|e| AgentError::Tab(js_text(e)))?;
    Array::from(&tabs)
        .iter()
        .filter(is_web)
        .filter_map(|t| {
            let id = Reflect::get(&t, &"id".into()).ok()?.as_f64()?;
            let used = Reflect::get(&t, &"lastAccessed".into())
                .ok()
                .and_then(|v| v.as_f64())
                .unwrap_or(0.0);
            Some((id as i32, used))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(id, _)| id)
        .ok_or_else(|| AgentError::Tab("no tab shows a web page".into()))
}

/// Opens `url` in a new active tab; its id.
pub(super) async fn open_tab(url: &str) -> Result<i32, AgentError> {
    create_tab(url, true).await
}

/// A tab opened behind the user's current one (a scheduled workflow's run).
pub(super) async fn open_background_tab(url: &str) -> Result<i32, AgentError> {
    create_tab(url, false).await
}

/// Opens `url` in a new tab and returns it once its first load ended (at most
/// [`FIRST_LOAD_MS`]): Chromium loses a navigation asked for while a new tab's own first
/// load is still under way (measured on Chromium 156 driven by Playwright: `tabs.update`
/// before the new tab's about:blank had loaded left 1 background tab in 4 "unloaded" on
/// about:blank for good, and asking again did not help), so the tab is handed over once it
/// can be navigated.
async fn create_tab(url: &str, active: bool) -> Result<i32, AgentError> {
    recorder_for(url).await;
    let props = Object::new();
    let _ = Reflect::set(&props, &"url".into(), &url.into());
    let _ = Reflect::set(&props, &"active".into(), &JsValue::from_bool(active));
    let tab = JsFuture::from(tabs_create(&props).map_err(|e| AgentError::Tab(js_text(e)))?)
        .await
        .map_err(|e| AgentError::Tab(js_text(e)))?;
    let id = Reflect::get(&tab, &"id".into())
        .ok()
        .and_then(|v| v.as_f64())
        .map(|id| id as i32)
        .ok_or_else(|| AgentError::Tab("the new tab has no id".into()))?;
    let started = js_sys::Date::now();
    while js_sys::Date::now() - started < FIRST_LOAD_MS {
        match tab_state(id).await {
            Some(state) if state.status == "loading" || state.pending.is_some() => {}
            Some(_) => break,
            None => return Err(AgentError::Tab("the new tab was closed".into())),
        }
        chrome::sleep(POLL_MS).await;
    }
    Ok(id)
}

/// How long a new tab's first load may take before it is navigated anyway.
const FIRST_LOAD_MS: f64 = 5_000.0;
/// How long a workflow's start page may take to load and take the driver.
const START_MS: f64 = 20_000.0;

/// Loads `url` in `tab` for a run's first look, and returns once the tab shows a loaded web
/// page (`status` complete, no navigation pending, an http(s) address: not the blank page a
/// new tab starts on; a redirect elsewhere counts, the run judges that page) with the driver
/// in it, and its document quiet as after any navigation. At most [`START_MS`]; the error is
/// the end of a sentence saying what the tab showed instead.
pub(super) async fn load_for_run(tab: i32, url: &str) -> Result<(), String> {
    recorder_for(url).await;
    let props = Object::new();
    let _ = Reflect::set(&props, &"url".into(), &url.into());
    let asked = tabs_update(tab, &props).map_err(js_text)?;
    JsFuture::from(asked).await.map_err(js_text)?;
    let started = js_sys::Date::now();
    let mut moved = false;
    let shown = loop {
        let elapsed = js_sys::Date::now() - started;
        let Some(state) = tab_state(tab).await else {
            return Err("the tab was closed before the page loaded".into());
        };
        moved |= state.status != "complete" || state.pending.is_some() || state.url == url;
        let loaded = state.status == "complete"
            && state.pending.is_none()
            && (state.url.starts_with("https://") || state.url.starts_with("http://"));
        if loaded && (moved || elapsed >= NAVIGATION_GRACE_MS) {
            // The driver goes in now; a document replaced meanwhile (a script's redirect)
            // refuses it, and the next round waits for the new one.
            if inject_driver(tab).await.is_ok() {
                let args = Array::of2(&QUIET_MS.into(), &QUIET_CAP_MS.into());
                let _ = run_in_page(tab, None, &quiet_fn(), &args).await;
                return Ok(());
            }
        }
        if elapsed >= START_MS {
            break state;
        }
        chrome::sleep(POLL_MS).await;
    };
    let what = if shown.url.is_empty() {
        "nothing".to_string()
    } else {
        shown.url.chars().take(100).collect()
    };
    let how = match shown.status.as_str() {
        "loading" => "still loading",
        "complete" => "loaded",
        _ => "not loaded",
    };
    // Whole seconds as an integer: `{}` of an f64 would link core's float printing
    // (Grisu, Dragon and their tables, ~10 KB) into the worker for this one sentence.
    Err(format!(
        "{url} did not load within {} seconds (the tab showed {what}, {how})",
        START_MS as u32 / 1000
    ))
}

/// What `chrome.tabs.get` says of a tab's loading.
struct TabState {
    /// "loading", "complete" or "unloaded".
    status: String,
    url: String,
    pending: Option<String>,
}

/// The tab's loading state, `None` for a tab that no longer exists.
async fn tab_state(tab: i32) -> Option<TabState> {
    let t = JsFuture::from(tabs_get(tab).ok()?).await.ok()?;
    let text = |key: &str| {
        Reflect::get(&t, &key.into())
            .ok()
            .and_then(|s| s.as_string())
    };
    Some(TabState {
        status: text("status").unwrap_or_else(|| "complete".into()),
        url: text("url").unwrap_or_default(),
        pending: text("pendingUrl").filter(|u| !u.is_empty()),
    })
}

pub(super) async fn activate_tab(tab: i32) -> Result<(), AgentError> {
    let props = Object::new();
    let _ = Reflect::set(&props, &"active".into(), &JsValue::TRUE);
    JsFuture::from(tabs_update(tab, &props).map_err(|e| AgentError::Tab(js_text(e)))?)
        .await
        .map(|_| ())
        .map_err(|e| AgentError::Tab(js_text(e)))
}

/// Makes `tab` the active tab of its window and that window the focused one.
pub(super) async fn bring_to_front(tab: i32) -> Result<(), AgentError> {
    activate_tab(tab).await?;
    let window = Reflect::get(
        &get_tab(tab).await.map_err(AgentError::Tab)?,
        &"windowId".into(),
    )
    .ok()
    .and_then(|w| w.as_f64())
    .ok_or_else(|| AgentError::Tab("the tab has no window".into()))?;
    let props = Object::new();
    let _ = Reflect::set(&props, &"focused".into(), &JsValue::TRUE);
    JsFuture::from(windows_update(window as i32, &props).map_err(|e| AgentError::Tab(js_text(e)))?)
        .await
        .map(|_| ())
        .map_err(|e| AgentError::Tab(js_text(e)))
}

pub(super) async fn close_tab(tab: i32) -> Result<(), AgentError> {
    JsFuture::from(tabs_remove(tab).map_err(|e| AgentError::Tab(js_text(e)))?)
        .await
        .map(|_| ())
        .map_err(|e| AgentError::Tab(js_text(e)))
}

pub(super) fn is_web(tab: &JsValue) -> bool {
    Reflect::get(tab, &"url".into())
        .ok()
        .and_then(|u| u.as_string())
        .is_some_and(|u| u.starts_with("http://") || u.starts_with("https://"))
}

/// How long a navigation may take to start after the action that asked for it (a `history.back()`
/// is queued by the page; `tabs.update` sets `pendingUrl` at once).
const NAVIGATION_GRACE_MS: f64 = 250.0;
/// A page is settled when its DOM has been still this long…
const QUIET_MS: u32 = 100;
/// …or after this long, for a page that never stops changing (an animation, a ticker).
const QUIET_CAP_MS: u32 = 2_000;
/// How often the tab's loading state is read while a navigation is under way.
const POLL_MS: i32 = 40;

/// Waits until the tab is settled after an action that may navigate: no navigation pending
/// (`status` complete, no `pendingUrl`), then the document quiet (no DOM mutation for
/// [`QUIET_MS`] and nothing marked as still loading, at most [`QUIET_CAP_MS`]).
/// Event-driven, not a fixed wait: a static page is settled in about `QUIET_MS`, a slow one
/// gets up to [`SETTLE_MS`] to load.
pub(super) async fn settle(tab: i32) {
    let started = js_sys::Date::now();
    settle_inner(tab, started).await;
    lap(Phase::Settle, started);
}

async fn settle_inner(tab: i32, started: f64) {
    let mut saw_loading = false;
    loop {
        let elapsed = js_sys::Date::now() - started;
        let Some((complete, pending)) = load_state(tab).await else {
            // The tab is gone; whoever acts next says so.
            return;
        };
        saw_loading |= !complete || pending;
        if complete && !pending && (saw_loading || elapsed >= NAVIGATION_GRACE_MS) {
            break;
        }
        if elapsed >= f64::from(SETTLE_MS) {
            return;
        }
        chrome::sleep(POLL_MS).await;
    }
    // Pages Tandem cannot script (not web pages) have nothing to wait for: a driver that
    // cannot be injected is no error here. The wait is the driver's, which knows the marks of
    // a page still loading.
    let _ = inject_driver(tab).await;
    let args = Array::of2(&QUIET_MS.into(), &QUIET_CAP_MS.into());
    let _ = run_in_page(tab, None, &quiet_fn(), &args).await;
}

/// The tab's loading state: (document complete, a navigation pending), `None` for a tab that
/// no longer exists.
async fn load_state(tab: i32) -> Option<(bool, bool)> {
    let state = tab_state(tab).await?;
    Some((state.status == "complete", state.pending.is_some()))
}

/// The driver into every frame, and the listener recorder into each new document that has
/// none (`recorder::ensure`), before a look at the task's tab.
async fn inject(tab: i32) -> Result<(), AgentError> {
    let started = js_sys::Date::now();
    let injected = inject_driver(tab).await;
    if let Ok(results) = &injected {
        if recorder::ensure(tab, results).await {
            // A document the task had not looked at: the next pages of its site get the
            // recorder from their start. Not awaited: the look needs nothing of it, and the
            // registration is done long before the model's answer can load another page
            // (`navigate` awaits its own).
            wasm_bindgen_futures::spawn_local(async move {
                if let Ok(url) = tab_url(tab).await {
                    recorder_for(&url).await;
                }
            });
        }
    }
    lap(Phase::Inject, started);
    injected.map(|_| ())
}

/// The driver into every frame of `tab`; Chrome's per-frame results (each with its
/// `documentId`).
async fn inject_driver(tab: i32) -> Result<JsValue, AgentError> {
    let injection = Object::new();
    let target = Object::new();
    let _ = Reflect::set(&target, &"tabId".into(), &tab.into());
    let _ = Reflect::set(&target, &"allFrames".into(), &JsValue::TRUE);
    let _ = Reflect::set(&injection, &"target".into(), &target);
    let files = Array::of1(&"content/driver.js".into());
    let _ = Reflect::set(&injection, &"files".into(), &files);
    let promise = execute_script(&injection).map_err(|e| AgentError::Page(js_text(e)))?;
    JsFuture::from(promise)
        .await
        .map_err(|e| AgentError::Page(js_text(e)))
}

/// Runs `func(...args)` in the tab's top frame, or in frame `frame`; its JSON result.
async fn run_in_page(
    tab: i32,
    frame: Option<u32>,
    func: &Function,
    args: &Array,
) -> Result<String, AgentError> {
    let results = execute(tab, Frames::One(frame), func, args).await?;
    let result = first_result(&results);
    if result.is_undefined() || result.is_null() {
        return Err(AgentError::Driver("no result".into()));
    }
    JSON::stringify(&result)
        .map(String::from)
        .map_err(|e| AgentError::Driver(js_text(e)))
}

enum Frames {
    /// The top frame (`None`) or one frame by its id.
    One(Option<u32>),
    All,
}

/// `chrome.scripting.executeScript` of `func(...args)`; the per-frame results.
async fn execute(
    tab: i32,
    frames: Frames,
    func: &Function,
    args: &Array,
) -> Result<Array, AgentError> {
    let promise = execute_start(tab, frames, func, args)?;
    execute_end(promise).await
}

/// `func(...args)` in the tab's top frame (the driver need not be there), its result.
pub(super) async fn run_func(
    tab: i32,
    func: &Function,
    args: &Array,
) -> Result<JsValue, AgentError> {
    let results = execute(tab, Frames::One(None), func, args).await?;
    Ok(first_result(&results))
}

/// The per-frame results of an `executeScript` begun with [`execute_start`].
async fn execute_end(promise: Promise) -> Result<Array, AgentError> {
    let results = JsFuture::from(promise)
        .await
        .map_err(|e| AgentError::Page(js_text(e)))?;
    Ok(Array::from(&results))
}

/// Begins `chrome.scripting.executeScript` of `func(...args)` without waiting for it: two
/// calls may then run in the page at once.
fn execute_start(
    tab: i32,
    frames: Frames,
    func: &Function,
    args: &Array,
) -> Result<Promise, AgentError> {
    let injection = Object::new();
    let target = Object::new();
    let _ = Reflect::set(&target, &"tabId".into(), &tab.into());
    match frames {
        Frames::One(Some(id)) => {
            let _ = Reflect::set(&target, &"frameIds".into(), &Array::of1(&id.into()));
        }
        Frames::One(None) => {}
        Frames::All => {
            let _ = Reflect::set(&target, &"allFrames".into(), &JsValue::TRUE);
        }
    }
    let _ = Reflect::set(&injection, &"target".into(), &target);
    let _ = Reflect::set(&injection, &"func".into(), func);
    let _ = Reflect::set(&injection, &"args".into(), args);
    execute_script(&injection).map_err(|e| AgentError::Page(js_text(e)))
}

/// The top frame's snapshot (with its same-origin iframes), with each cross-origin frame's
/// own snapshot merged in once.
pub(super) async fn snapshot(tab: i32, max_text: u32) -> Result<Snapshot, AgentError> {
    snapshot_with(tab, max_text, DESCRIBE_ALL.get()).await
}

/// [`snapshot`] with every element described in full, far ones too: for acting on an element,
/// whose every check reads what it is.
pub(super) async fn snapshot_in_full(tab: i32) -> Result<Snapshot, AgentError> {
    snapshot_with(tab, 0, true).await
}

async fn snapshot_with(tab: i32, max_text: u32, all: bool) -> Result<Snapshot, AgentError> {
    inject(tab).await?;
    let started = js_sys::Date::now();
    let taken = take_snapshot(tab, max_text, all).await;
    lap(Phase::Snapshot, started);
    CLOCK.with(|c| c.borrow_mut().snapshots += 1);
    taken
}

/// The snapshot the driver took while it watched the last action on `tab`
/// ([`act_in_page`]'s `look`), if every frame still shows what it saw then; else `None`, and
/// the caller takes one.
///
/// The driver kept it only if nothing changed after it until its watch ended: within
/// [`LOOK_FRESH_MS`] of that, asking every frame again would say the same at the price of a
/// round trip a step. A look kept longer (the task paused, a question to the user) is checked.
pub(super) async fn pending_look(tab: i32) -> Option<(Snapshot, Option<Prepared>)> {
    let (look_tab, kept_at, look, prepared) = LOOK.with(|l| l.borrow_mut().take())?;
    if look_tab != tab || (DESCRIBE_ALL.get() && look.elements.iter().any(|e| e.brief)) {
        return None;
    }
    if js_sys::Date::now() - kept_at > LOOK_FRESH_MS && !unchanged_since_snapshot(tab).await {
        return None;
    }
    CLOCK.with(|c| c.borrow_mut().snapshots += 1);
    Some((look, prepared))
}

/// How long after the driver's watch its look is used without asking the page again.
const LOOK_FRESH_MS: f64 = 250.0;

/// Keeps the driver's look at `tab` for [`pending_look`].
fn keep_look(tab: i32, look: Snapshot, prepared: Option<Prepared>) {
    LOOK.with(|l| *l.borrow_mut() = Some((tab, js_sys::Date::now(), look, prepared)));
}

/// The driver's look, unless the page has frames of other origins (their own drivers were not
/// asked, and a look without them is not the tab's) or it cannot be read.
fn read_look(json: &str) -> Option<Snapshot> {
    match tandem_core::json::from_str::<Snapshot>(json) {
        Ok(look) if look.frames.iter().all(|f| f.accessible) => Some(look),
        Ok(_) => None,
        Err(e) => {
            crate::log_error("the driver's look was unreadable", &e.to_string().into());
            None
        }
    }
}

/// Whether every frame's page is as its last snapshot found it (the driver's `unchanged`):
/// then that snapshot's handles and signatures still hold and acting needs no new one. Any
/// doubt (a frame without the driver, a failed call) is a change.
pub(super) async fn unchanged_since_snapshot(tab: i32) -> bool {
    let started = js_sys::Date::now();
    let results = execute(tab, Frames::All, &unchanged_fn(), &Array::new()).await;
    lap(Phase::Snapshot, started);
    let Ok(results) = results else {
        return false;
    };
    let mut top = false;
    for (frame_id, result) in frame_results(&results) {
        if result.is_null() {
            continue; // a frame its parent's driver read and watches
        }
        if result != JsValue::TRUE {
            return false;
        }
        top |= frame_id == 0;
    }
    top
}

/// Each frame's id and result from an `executeScript` over all frames.
fn frame_results(results: &Array) -> impl Iterator<Item = (u32, JsValue)> + '_ {
    results.iter().map(|item| {
        let result = Reflect::get(&item, &"result".into()).unwrap_or(JsValue::NULL);
        let frame_id = Reflect::get(&item, &"frameId".into())
            .ok()
            .and_then(|v| v.as_f64())
            .unwrap_or(0.0) as u32;
        (frame_id, result)
    })
}

async fn take_snapshot(tab: i32, max_text: u32, all: bool) -> Result<Snapshot, AgentError> {
    let opts = snapshot_opts(max_text, all);
    let results = execute(tab, Frames::All, &snapshot_fn(), &Array::of1(&opts)).await?;
    let mut top: Option<Snapshot> = None;
    let mut others: Vec<(u32, Snapshot)> = Vec::new();
    for (frame_id, result) in frame_results(&results) {
        if result.is_undefined() || result.is_null() {
            continue; // no driver, or a frame its parent's driver already read
        }
        let parsed = result
            .as_string()
            .ok_or_else(|| AgentError::Driver(format!("snapshot of frame {frame_id}: not text")))
            .and_then(|json| {
                tandem_core::json::from_str::<Snapshot>(&json)
                    .map_err(|e| AgentError::Driver(format!("snapshot of frame {frame_id}: {e}")))
            });
        match (frame_id, parsed) {
            (0, parsed) => top = Some(parsed?),
            (id, Ok(s)) => others.push((id, s)),
            (_, Err(e)) => crate::log_error("a frame could not be read", &e.to_string().into()),
        }
    }
    let mut top = top.ok_or_else(|| AgentError::Driver("no result".into()))?;
    // Parents before children: a nested frame's iframe is listed by its parent's snapshot.
    tandem_core::sort::sort_by_key(&mut others, |(id, _)| *id);
    for (id, sub) in others {
        top.merge_frame(id, sub);
    }
    Ok(top)
}

/// What `act` did: the sentence for the model and the timeline, and whether the page may
/// still be loading (then the caller waits for the tab).
pub(super) struct Acted {
    pub sentence: String,
    pub loading: bool,
}

/// Why `act` did nothing.
pub(super) enum NotActed {
    /// Asked to act on the page of the last snapshot ([`OnLook::Expect`]), and it changed
    /// since: look again.
    Changed,
    /// The sentence for the model and the timeline.
    Failed(String),
    /// Done, but the page did not react (`sentence`): a hover, drag or key that may be
    /// repeated as trusted input at `aim` (`agent/trusted.rs`).
    Ignored {
        sentence: String,
        aim: tandem_core::agent::trusted::Aim,
    },
}

impl From<String> for NotActed {
    fn from(sentence: String) -> Self {
        NotActed::Failed(sentence)
    }
}

/// Whether the handle acted on must still be the last snapshot's.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum OnLook {
    /// The driver acts only if the top frame's driver saw no change since its last snapshot,
    /// which covers the whole page when it has no frames of other origins: a check in the
    /// same call rather than a round trip of its own before it.
    Expect,
    /// The caller checked, or the handle is new.
    Any,
}

/// `act(handle, command)` in the page; what it did (`ActResult::sentence`: what it
/// changed), or why nothing was done.
///
/// `look`: the next step will look at the page; the driver may take that snapshot while it
/// watches the action's effects (its time then overlaps the watch), kept for
/// [`pending_look`]. Asked of the top frame only: a look from another frame is not the tab's.
///
/// `mark_ms`: highlight the element for that long as the driver acts on it, so that the person
/// watching sees what Tandem acts on.
///
/// `source`: with a look, the map the next step numbers it from; the look's element map is
/// then built while the driver's watch goes on, rather than after it ([`Prepared`]).
pub(super) async fn act_in_page(
    tab: i32,
    handle: Option<&str>,
    command: &DriverCommand,
    look: Option<&MapSource>,
    mark_ms: Option<u32>,
    on_look: OnLook,
) -> Result<Acted, NotActed> {
    // Whatever was looked at before this action is older than it.
    LOOK.with(|l| l.borrow_mut().take());
    let started = js_sys::Date::now();
    let acted = act_in_page_inner(tab, handle, command, look, mark_ms, on_look).await;
    lap(Phase::Act, started);
    let (acted, look) = acted?;
    match look {
        Some(Look::Read(look, prepared)) => keep_look(tab, look, prepared),
        // Taken after the one handed out early: reading it is the next step's look, timed as such.
        Some(Look::Json(json)) => {
            let started = js_sys::Date::now();
            if let Some(look) = read_look(&json) {
                keep_look(tab, look, None);
            }
            lap(Phase::Snapshot, started);
        }
        None => {}
    }
    Ok(acted)
}

/// The look an act's watch took: read while the watch went on (with its element map when it
/// was built meanwhile), or JSON still to read.
enum Look {
    Read(Snapshot, Option<Prepared>),
    Json(String),
}

/// The map the next step's element map takes its ids from (the loop's `previous`), when the
/// caller knows it.
pub(super) enum MapSource {
    Unknown,
    From(Option<Rc<ElementMap>>),
}

/// A look's element map and list, built while the driver's watch went on (a large page's map
/// took ~14 ms after it), from `source`.
pub(super) struct Prepared {
    source: Option<Rc<ElementMap>>,
    pub map: Rc<ElementMap>,
    pub list: String,
}

impl Prepared {
    /// Whether it was numbered from `previous`, the map the next step numbers from.
    pub fn numbered_from(&self, previous: Option<&Rc<ElementMap>>) -> bool {
        match (&self.source, previous) {
            (None, None) => true,
            (Some(a), Some(b)) => Rc::ptr_eq(a, b),
            _ => false,
        }
    }
}

/// The first look of an act's watch, fetched by `lookOf(ticket)` beside the act.
#[derive(Default)]
struct EarlyLook {
    /// The `lookOf` call, while it has not answered.
    pending: Option<Promise>,
    read: Option<Snapshot>,
    prepared: Option<Prepared>,
}

impl EarlyLook {
    /// Asks for the look and reads it as soon as it comes, unless the act ends first; then
    /// builds its element map from `source` while the act goes on.
    async fn begin(tab: i32, ticket: &JsValue, acting: &Promise, source: &MapSource) -> Self {
        let Ok(fetching) =
            execute_start(tab, Frames::One(None), &look_of_fn(), &Array::of1(ticket))
        else {
            return Self::default();
        };
        match JsFuture::from(look_or_act(&fetching, acting)).await {
            Ok(won) if !won.is_null() => {
                let read = Reflect::get(&won, &"look".into())
                    .ok()
                    .and_then(|r| look_in(&r));
                let prepared = match (&read, source) {
                    (Some(look), MapSource::From(previous)) => {
                        let map = Rc::new(ElementMap::build(look, previous.as_deref()));
                        let list = map.render(look, MAP_CHARS).text;
                        Some(Prepared {
                            source: previous.clone(),
                            map,
                            list,
                        })
                    }
                    _ => None,
                };
                Self {
                    pending: None,
                    read,
                    prepared,
                }
            }
            _ => Self {
                pending: Some(fetching),
                read: None,
                prepared: None,
            },
        }
    }

    /// The look, once the act said it still held. A call still pending is awaited only then:
    /// otherwise it may never answer (the page may have left, and it reached the next document).
    async fn finish(&mut self) -> Option<Look> {
        if let Some(pending) = self.pending.take() {
            self.read = JsFuture::from(pending).await.ok().and_then(|r| look_in(&r));
        }
        let look = self.read.take()?;
        Some(Look::Read(look, self.prepared.take()))
    }
}

/// The look in a `lookOf` call's results.
fn look_in(results: &JsValue) -> Option<Snapshot> {
    first_result(&as_array(results)?)
        .as_string()
        .and_then(|json| read_look(&json))
}

/// The first frame's result of an `executeScript`.
fn first_result(results: &Array) -> JsValue {
    Reflect::get(&results.get(0), &"result".into()).unwrap_or(JsValue::NULL)
}

/// `value` as an array, if it is one (`Array.from` throws on null).
fn as_array(value: &JsValue) -> Option<Array> {
    Array::is_array(value).then(|| Array::from(value))
}

async fn act_in_page_inner(
    tab: i32,
    handle: Option<&str>,
    command: &DriverCommand,
    look: Option<&MapSource>,
    mark_ms: Option<u32>,
    on_look: OnLook,
) -> Result<(Acted, Option<Look>), NotActed> {
    let to_js = |command: &DriverCommand| {
        let json = serde_json::to_string(command).map_err(|e| e.to_string())?;
        JSON::parse(&json).map_err(js_text)
    };
    let command_js = to_js(command)?;
    let mark = match mark_ms {
        Some(ms) => to_js(&DriverCommand::Highlight { ms: Some(ms) })?,
        None => JsValue::NULL,
    };
    let (frame, handle) = match handle.map(frame_of_handle) {
        Some((frame, local)) => (frame, JsValue::from_str(local)),
        None => (None, JsValue::NULL),
    };
    let look_opts = if look.is_some() && frame.is_none() {
        JsValue::from(snapshot_opts(0, DESCRIBE_ALL.get()))
    } else {
        JsValue::NULL
    };
    let expect = JsValue::from_bool(on_look == OnLook::Expect);
    // With a look asked for, a second call fetches it as soon as the driver has taken it, and
    // it is read while the watch goes on (on a large page, reading it took ~10 ms after).
    let ticket = (!look_opts.is_null()).then(|| {
        TICKET.with(|t| {
            t.set(t.get().wrapping_add(1));
            t.get()
        })
    });
    let ticket_js = ticket.map_or(JsValue::NULL, JsValue::from);
    let args = Array::of5(&handle, &command_js, &look_opts, &mark, &expect);
    args.push(&ticket_js);
    let acting =
        execute_start(tab, Frames::One(frame), &act_fn(), &args).map_err(|e| e.to_string())?;
    let mut early = match (ticket, look) {
        (Some(_), Some(source)) => EarlyLook::begin(tab, &ticket_js, &acting, source).await,
        _ => EarlyLook::default(),
    };
    let results = execute_end(acting).await.map_err(|e| e.to_string())?;
    let Some(pair) = as_array(&first_result(&results)) else {
        return Err(AgentError::Driver("no result".into()).to_string().into());
    };
    CLOCK.with(|c| {
        let mut t = c.borrow_mut();
        t.page += pair.get(3).as_f64().unwrap_or(0.0);
        t.look += pair.get(4).as_f64().unwrap_or(0.0);
    });
    let json = pair
        .get(0)
        .as_string()
        .ok_or_else(|| AgentError::Driver("no result".into()).to_string())?;
    let result =
        read_act(&json).map_err(|e| format!("the driver's answer was unreadable ({e})"))?;
    if matches!(&result, ActResult::Failed(f) if f.error == ActErrorCode::Changed) {
        return Err(NotActed::Changed);
    }
    // The look handed out early only if it still held when the watch ended; else the one
    // taken after it, if any.
    let look = match (pair.get(2).is_truthy(), pair.get(1).as_string()) {
        (true, _) => early.finish().await,
        (false, Some(json)) => Some(Look::Json(json)),
        (false, None) => None,
    };
    let loading = result.may_be_loading();
    if let Some(aim) = result.retry_aim(command) {
        return Err(NotActed::Ignored {
            sentence: result.sentence(command).err().unwrap_or_default(),
            aim,
        });
    }
    let sentence = result.sentence(command)?;
    Ok((Acted { sentence, loading }, look))
}

/// The driver's answer to an act, as `ActResult`'s own reader takes it (dispatched on `ok`),
/// but each shape read from the text: through a `Value`, as that reader does, its two shapes'
/// readers were compiled for a `Value` only here, and those are larger (worker −1.0 KB gzip).
fn read_act(json: &str) -> Result<ActResult, serde_json::Error> {
    #[derive(serde::Deserialize)]
    struct Ok {
        ok: Option<bool>,
    }
    let needs_ok = || serde::de::Error::custom("an act() result needs a boolean `ok`");
    let probe = tandem_core::json::from_str::<Ok>(json).map_err(|e| match e.classify() {
        // Not an object, or `ok` not a boolean (a syntax error keeps serde_json's sentence).
        serde_json::error::Category::Data => needs_ok(),
        _ => e,
    })?;
    match probe.ok {
        Some(true) => tandem_core::json::from_str(json).map(ActResult::Done),
        Some(false) => tandem_core::json::from_str(json).map(ActResult::Failed),
        None => Err(needs_ok()),
    }
}

/// The driver's look at a tab, when it was kept (`Date.now()`), and its map if built already.
type Kept = (i32, f64, Snapshot, Option<Prepared>);

/// The driver's snapshot options: `maxText` characters of the page's text, and whether to
/// describe far elements in full too (`describeAll`, see `Element::brief`).
fn snapshot_opts(max_text: u32, all: bool) -> Object {
    let opts = Object::new();
    let _ = Reflect::set(&opts, &"maxText".into(), &max_text.into());
    if all {
        let _ = Reflect::set(&opts, &"describeAll".into(), &JsValue::TRUE);
    }
    opts
}

/// Whether this task's snapshots describe every element in full (a workflow replaying: its
/// steps find their elements by content, wherever they are on the page), or far ones briefly.
pub(super) fn describe_all(on: bool) {
    DESCRIBE_ALL.set(on);
}

thread_local! {
    /// See [`describe_all`]; the worker runs one task at a time.
    static DESCRIBE_ALL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// The snapshot the driver took while watching the last action, and its tab.
    static LOOK: RefCell<Option<Kept>> = const { RefCell::new(None) };
    /// Tickets pairing an act with the call that fetches its look early ([`EarlyLook`]).
    static TICKET: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    /// Where the current step's time went outside the model (the worker is single-threaded;
    /// the loop takes it with each action step's record).
    static CLOCK: RefCell<StepTimings> = RefCell::new(StepTimings::default());
}

/// A phase of a step, for [`StepTimings`].
#[derive(Clone, Copy)]
pub(super) enum Phase {
    Inject,
    Snapshot,
    Map,
    Locate,
    Act,
    Settle,
}

/// Adds the time since `started` (`Date.now()`) to `phase`.
pub(super) fn lap(phase: Phase, started: f64) {
    let ms = (js_sys::Date::now() - started).max(0.0);
    CLOCK.with(|c| {
        let mut t = c.borrow_mut();
        let slot = match phase {
            Phase::Inject => &mut t.inject,
            Phase::Snapshot => &mut t.snapshot,
            Phase::Map => &mut t.map,
            Phase::Locate => &mut t.locate,
            Phase::Act => &mut t.act,
            Phase::Settle => &mut t.settle,
        };
        *slot += ms;
    });
}

/// A screenshot sent with this step: its estimated tokens and the time taken to make it.
pub(super) fn note_image(tokens: u32, ms: f64) {
    CLOCK.with(|c| {
        let mut t = c.borrow_mut();
        t.image_tokens = t.image_tokens.saturating_add(tokens);
        t.shot += ms;
    });
}

/// The phases timed since the last call, and a fresh start.
pub(super) fn take_timings() -> StepTimings {
    CLOCK.with(|c| std::mem::take(&mut *c.borrow_mut()))
}

#[cfg(test)]
mod url_tests {
    use wasm_bindgen_test::*;

    use super::super::hosts::canonical_host;
    use super::*;

    wasm_bindgen_test_configure!(run_in_service_worker);

    /// The hosts `tandem-core`'s settings tests hand the policy are what Chromium resolves.
    #[wasm_bindgen_test]
    fn the_site_lists_see_the_host_chrome_loads() {
        for (url, host) in [
            ("https://bank%2Ecom/", "bank.com"),
            ("http://0x7f.1/", "127.0.0.1"),
            ("https://\u{ff42}\u{ff41}\u{ff4e}\u{ff4b}.com/", "bank.com"),
            ("https://ba\tnk.c\nom/", "bank.com"),
            ("https://BANK.com./", "bank.com."),
        ] {
            assert_eq!(host_of(url).as_deref(), Some(host), "{url}");
        }
        let policy = UrlPolicy::new([], ["bank.com", "127.0.0.1"]).unwrap();
        for url in [
            "https://bank%2Ecom/x",
            "http://0x7f.1:8080/",
            "https://ba\tnk.com/",
        ] {
            assert!(
                matches!(allowed(&policy, url), Err(UrlDenied::Denied { .. })),
                "{url}"
            );
        }
        assert!(allowed(&policy, "https://shop.example/").is_ok());
        assert!(matches!(
            allowed(&policy, "javascript:alert(1)"),
            Err(UrlDenied::NotWeb { .. })
        ));
        assert_eq!(canonical_host("Bücher.de"), "xn--bcher-kva.de");
        assert_eq!(canonical_host("0x7f.1"), "127.0.0.1");
    }
}

#[cfg(test)]
mod act_tests {
    use wasm_bindgen_test::*;

    use super::*;

    wasm_bindgen_test_configure!(run_in_service_worker);

    /// `read_act` reads every driver answer as `ActResult`'s own reader does, refusals too.
    #[wasm_bindgen_test]
    fn the_driver_answer_reads_as_act_result_reads_it() {
        for json in [
            r#"{"ok":true,"accepted":true,"changes":{}}"#,
            r#"{"ok":true,"value":"price-asc","text":"Price: low to high","changes":{}}"#,
            r#"{"ok":true,"scroll":{"x":0,"y":612},"moved":true,"atTop":false,"atBottom":false}"#,
            r#"{"ok":false,"error":"stale-handle","message":"the element of handle doc1.8 is gone"}"#,
            r#"{"ok":false,"error":"changed","message":"the page changed"}"#,
            r#"{"ok":false,"error":"a-code-not-known","message":"x"}"#,
            r#"{"ok":"yes"}"#,
            r#"{"accepted":true}"#,
            r#"[true]"#,
            r#"{"ok":true,"clicks":"two"}"#,
            r#"{"ok":true"#,
        ] {
            let ours = read_act(json);
            let theirs = tandem_core::json::from_str::<ActResult>(json);
            match (&ours, &theirs) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{json}"),
                (Err(_), Err(_)) => {}
                _ => panic!("{json}: {ours:?} against {theirs:?}"),
            }
        }
        assert!(matches!(
            read_act(r#"{"ok":false,"error":"changed","message":"m"}"#),
            Ok(ActResult::Failed(f)) if f.error == ActErrorCode::Changed
        ));
    }
}
