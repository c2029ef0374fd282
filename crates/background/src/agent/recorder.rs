//! The listener recorder (`extension/content/listeners.js`) in the pages the agent acts on, and
//! nowhere else: it patches the page's own `addEventListener`, which a page can detect.
//!
//! - From `document_start`, through Chrome's dynamic content scripts: the sites allowed always
//!   and the running task's hosts (`tandem_core::agent::recorder` says which). [`sync`] brings
//!   the registrations in line at every worker start, when the grants or site lists change
//!   (`storage.onChanged`), when the task comes to a new host ([`include`]) and when it ends
//!   ([`end_task`]).
//! - Late, into a document of a task's tab that has none yet ([`ensure`], before each look at
//!   it): a page loaded before the task came to its site. Listeners the page added before that
//!   are missed; delegated framework handlers are still found by the recorder's scan.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeSet, HashSet};

use js_sys::{Array, Function, Object, Promise, Reflect};
use tandem_core::agent::recorder::{
    recorder_scripts, RecorderScript, RecorderScripts, ALWAYS_SCRIPT, TASK_SCRIPT,
};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::hosts::canonical_host;
use super::store::load_grants;
use crate::chrome::execute_script;

#[wasm_bindgen(inline_js = "
// Applies registrations one at a time, the latest wanted state winning: two calls in flight
// would both register an id Chrome then refuses as a duplicate, and an older state computed
// late must not undo a newer one. Resolves once the newest state asked for is applied.
let latest = null;
let running = null;
let applied = 0;
const same = (a, b) => JSON.stringify(a ?? []) === JSON.stringify(b ?? []);
const script = (w) => ({
  id: w.id, js: ['content/listeners.js'], matches: w.matches, excludeMatches: w.excludeMatches,
  runAt: 'document_start', allFrames: true, matchOriginAsFallback: true, world: 'MAIN',
  persistAcrossSessions: w.persist,
});
async function apply(wanted, ids) {
  const have = await chrome.scripting.getRegisteredContentScripts({ ids });
  const drop = have.filter((h) => !wanted.some((w) => w.id === h.id)).map((h) => h.id);
  if (drop.length) await chrome.scripting.unregisterContentScripts({ ids: drop });
  const add = [];
  const change = [];
  for (const w of wanted) {
    const h = have.find((x) => x.id === w.id);
    if (!h) add.push(script(w));
    else if (!same(h.matches, w.matches) || !same(h.excludeMatches, w.excludeMatches)) change.push(script(w));
  }
  if (change.length) await chrome.scripting.updateContentScripts(change);
  if (add.length) await chrome.scripting.registerContentScripts(add);
}
export function recorder_apply(generation, wanted, ids) {
  if (generation > applied && (!latest || latest.generation < generation)) latest = { generation, wanted, ids };
  if (!running) {
    running = (async () => {
      let error = null;
      try {
        while (latest) {
          const next = latest;
          latest = null;
          try { await apply(next.wanted, next.ids); error = null; } catch (e) { error = e; }
          applied = Math.max(applied, next.generation);
        }
      } finally {
        running = null;
      }
      if (error) throw error;
    })();
  }
  return running;
}
// In each document's isolated world: asks the page's world whether the recorder runs there.
// listeners.js answers a cancelable `tandem-scan` by cancelling it. A page can cancel it too,
// which only keeps the recorder out of its own document.
function probe() {
  const asked = new Event('tandem-scan', { cancelable: true });
  document.dispatchEvent(asked);
  return asked.defaultPrevented;
}
export function probe_fn() { return probe; }
")]
extern "C" {
    #[wasm_bindgen(catch)]
    fn recorder_apply(generation: f64, wanted: &Array, ids: &Array) -> Result<Promise, JsValue>;
    fn probe_fn() -> Function;
}

thread_local! {
    /// The hosts the running task has been on or is going to (none between tasks).
    static TASK_HOSTS: RefCell<BTreeSet<String>> = const { RefCell::new(BTreeSet::new()) };
    /// The documents (Chrome's `documentId`) already given the recorder or found with it.
    static SEEN: RefCell<HashSet<String>> = RefCell::new(HashSet::new());
    /// Orders the syncs: the state computed last is the one applied.
    static GENERATION: Cell<f64> = const { Cell::new(0.0) };
}

/// Brings the registrations in line with the grants, the site lists and the task's hosts.
/// Failures are logged: a page then goes without its marks, which costs perception, not safety.
pub(super) async fn sync() {
    let generation = GENERATION.with(|g| {
        g.set(g.get() + 1.0);
        g.get()
    });
    let grants = load_grants().await;
    let (allowed, blocked) = match crate::storage::settings().await {
        Ok(s) => match s.agent.policy_with(canonical_host) {
            Ok(p) => (p.allow, p.deny),
            // A list that does not parse stops every task (run.rs): the grants still count.
            Err(_) => (Vec::new(), Vec::new()),
        },
        Err(e) => {
            crate::log_error("the site lists could not be read", &e.to_string().into());
            (Vec::new(), Vec::new())
        }
    };
    let task: Vec<String> = TASK_HOSTS.with(|h| h.borrow().iter().cloned().collect());
    let RecorderScripts { always, task } = recorder_scripts(&grants, &allowed, &blocked, &task);
    let wanted = Array::new();
    for (id, script, persist) in [(ALWAYS_SCRIPT, always, true), (TASK_SCRIPT, task, false)] {
        if let Some(script) = script {
            wanted.push(&registration(id, &script, persist));
        }
    }
    let ids = Array::of2(&ALWAYS_SCRIPT.into(), &TASK_SCRIPT.into());
    let applied = match recorder_apply(generation, &wanted, &ids) {
        Ok(p) => JsFuture::from(p).await.map(|_| ()),
        Err(e) => Err(e),
    };
    if let Err(e) = applied {
        crate::log_error("the listener recorder could not be registered", &e);
    }
}

/// What `recorder_apply` takes for one registration.
fn registration(id: &str, script: &RecorderScript, persist: bool) -> Object {
    let strings = |list: &[String]| list.iter().map(|s| JsValue::from_str(s)).collect::<Array>();
    let o = Object::new();
    let _ = Reflect::set(&o, &"id".into(), &id.into());
    let _ = Reflect::set(&o, &"matches".into(), &strings(&script.matches));
    let _ = Reflect::set(&o, &"excludeMatches".into(), &strings(&script.exclude));
    // The sites allowed always stay registered across browser restarts; a task's hosts die
    // with the task (and a browser restart ends every task).
    let _ = Reflect::set(&o, &"persist".into(), &JsValue::from_bool(persist));
    o
}

/// The running task is on `host` or about to load a page of it: from now on until the task
/// ends, its pages get the recorder from their start. Returns once Chrome has it.
pub(super) async fn include(host: &str) {
    let added = TASK_HOSTS.with(|h| h.borrow_mut().insert(host.to_ascii_lowercase()));
    if added {
        sync().await;
    }
}

/// The task ended (done, failed, stopped, paused, cancelled): its hosts' pages no longer get
/// the recorder. At worker start [`sync`] drops a registration left by a task that died with
/// the old worker.
pub(super) async fn end_task() {
    TASK_HOSTS.with(|h| h.borrow_mut().clear());
    SEEN.with(|s| s.borrow_mut().clear());
    sync().await;
}

/// Gives the recorder to each document of `injected` (the per-frame results of the driver's
/// injection into a task's tab) that has none, once per document: found with it (registered
/// from its start, or given it before) it is left alone. True when a document was new.
///
/// A document the driver was new in answered in its result whether the recorder runs there
/// (driver.js's last statement); only one that gave no answer (its driver was already there,
/// say after a worker restart emptied [`SEEN`]) is asked in a second injection.
pub(super) async fn ensure(tab: i32, injected: &JsValue) -> bool {
    let mut fresh = Vec::new();
    let mut missing = Vec::new();
    let mut unknown = Vec::new();
    for r in Array::from(injected).iter() {
        let Some(doc) = Reflect::get(&r, &"documentId".into())
            .ok()
            .and_then(|d| d.as_string())
        else {
            continue;
        };
        if SEEN.with(|s| s.borrow().contains(&doc)) {
            continue;
        }
        match Reflect::get(&r, &"result".into())
            .ok()
            .and_then(|v| v.as_bool())
        {
            Some(true) => {}
            Some(false) => missing.push(doc.clone()),
            None => unknown.push(doc.clone()),
        }
        fresh.push(doc);
    }
    if fresh.is_empty() {
        return false;
    }
    if !unknown.is_empty() {
        match run(tab, &unknown, &|injection| {
            let _ = Reflect::set(injection, &"func".into(), &probe_fn());
        })
        .await
        {
            Ok(answers) => missing.extend(
                Array::from(&answers)
                    .iter()
                    .filter(|r| Reflect::get(r, &"result".into()).ok() != Some(JsValue::TRUE))
                    .filter_map(|r| Reflect::get(&r, &"documentId".into()).ok()?.as_string()),
            ),
            Err(e) => crate::log_error("the page's recorder could not be asked", &e),
        }
    }
    SEEN.with(|s| s.borrow_mut().extend(fresh));
    if missing.is_empty() {
        return true;
    }
    let given = run(tab, &missing, &|injection| {
        let _ = Reflect::set(
            injection,
            &"files".into(),
            &Array::of1(&"content/listeners.js".into()),
        );
        let _ = Reflect::set(injection, &"world".into(), &"MAIN".into());
        let _ = Reflect::set(injection, &"injectImmediately".into(), &JsValue::TRUE);
    })
    .await;
    if let Err(e) = given {
        crate::log_error("the listener recorder could not be injected", &e);
    }
    true
}

/// `chrome.scripting.executeScript` into the documents `documents` of `tab`, the rest of the
/// injection set by `what`.
async fn run(tab: i32, documents: &[String], what: &dyn Fn(&Object)) -> Result<JsValue, JsValue> {
    let target = Object::new();
    let _ = Reflect::set(&target, &"tabId".into(), &tab.into());
    let ids: Array = documents.iter().map(|d| JsValue::from_str(d)).collect();
    let _ = Reflect::set(&target, &"documentIds".into(), &ids);
    let injection = Object::new();
    let _ = Reflect::set(&injection, &"target".into(), &target);
    what(&injection);
    JsFuture::from(execute_script(&injection)?).await
}
