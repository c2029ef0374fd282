//! Where the task lives between steps: `chrome.storage.session` under [`TASK_STATE_KEY`]
//! (kept in memory by Chrome: it survives a worker restart, is gone when the browser closes,
//! and holds page text, which must never reach the disk), every save told to every open panel
//! as a slim [`TaskView`]; and the sites the user always lets the agent act on
//! (`chrome.storage.local`, no page text).

use js_sys::{Object, Promise, Reflect, JSON};
use tandem_chrome::js_text;
use tandem_core::agent::task::{parse_stored, TaskContext, TaskView, TASK_STATE_KEY};
use tandem_core::agent::{SiteGrants, SITE_GRANTS_KEY};
use tandem_core::protocol::WorkerToPanel;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::error::AgentError;
use crate::chrome::{self, runtime_send_message, session_get, session_set};

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_namespace = ["chrome", "storage", "session"], js_name = remove)]
    fn session_remove(key: &str) -> Result<Promise, JsValue>;
}

/// The stored task, and a notice when unreadable state was reset.
pub(super) async fn load() -> (Option<TaskContext>, Option<String>) {
    let json = match chrome::stored_json(session_get, TASK_STATE_KEY).await {
        Ok(j) => j.unwrap_or_else(|| "null".to_string()),
        Err(e) => {
            return (
                None,
                Some(format!(
                    "The saved task could not be read ({}).",
                    js_text(e)
                )),
            )
        }
    };
    match parse_stored(&json) {
        Ok(ctx) => (ctx, None),
        Err(e) => {
            let _ = forget().await;
            (None, Some(e.to_string()))
        }
    }
}

thread_local! {
    /// The stamp of the worker's last save ([`TaskContext::revision`]).
    static STAMP: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// A stamp larger than every earlier save's: one more than this worker's last, and at least
/// the clock's milliseconds, so a restarted worker (its count back at 0) still stamps later
/// saves larger than the ones panels already show.
fn next_stamp() -> u64 {
    STAMP.with(|s| {
        // Milliseconds since 1970 fit a u64 for ever; a clock before 1970 counts as 0.
        let now = js_sys::Date::now().max(0.0) as u64;
        let next = (s.get() + 1).max(now);
        s.set(next);
        next
    })
}

/// Persists `ctx` and tells every open panel what they show of it, both under a new stamp.
pub(super) fn save(ctx: &TaskContext) -> Result<(), AgentError> {
    let stamp = next_stamp();
    let value = JSON::parse(&ctx.to_json()).map_err(|e| AgentError::Storage(js_text(e)))?;
    // Written into the stored copy (read back by polls) and the broadcast alike; `ctx` is
    // the loop's, borrowed, and the next save stamps anew anyway.
    let _ = Reflect::set(&value, &"revision".into(), &(stamp as f64).into());
    let items = Object::new();
    let _ = Reflect::set(&items, &TASK_STATE_KEY.into(), &value);
    let promise = session_set(&items).map_err(|e| AgentError::Storage(js_text(e)))?;
    // Not waited for: Chrome carries out a storage call once it is made, in the order made,
    // whatever the worker does next, so the next step need not wait for the write (5-12 ms
    // a step, growing with the transcript). A failed write is still reported.
    wasm_bindgen_futures::spawn_local(async move {
        if let Err(e) = JsFuture::from(promise).await {
            crate::log_error("the task could not be saved", &e);
        }
    });
    broadcast(Some(ctx), stamp);
    // The toolbar badge: a question of the task (a tool call's reports itself in `tools`).
    crate::badge::set(
        "task",
        tandem_core::agent::waiting::task_waiting(
            ctx.pending.as_ref().filter(|p| p.tool.is_none()),
            ctx.question.as_deref(),
        )
        .map(|m| tandem_chrome::i18n::plain(&m)),
    );
    Ok(())
}

thread_local! {
    /// The task id and step count of the last broadcast: the next one sends only what came
    /// after (panels that missed one ask for the whole view).
    static BROADCAST: std::cell::RefCell<Option<(String, usize)>> =
        const { std::cell::RefCell::new(None) };
}

/// Tells every open panel what changed in the task as they show it (`None`: there is none),
/// as of the save stamped `stamp`.
pub(super) fn broadcast(ctx: Option<&TaskContext>, stamp: u64) {
    let message = match ctx.map(TaskView::from) {
        Some(mut view) => {
            view.revision = stamp;
            let since = BROADCAST.with(|b| {
                let mut b = b.borrow_mut();
                let since = match b.as_ref() {
                    Some((id, n)) if *id == view.id => *n,
                    _ => 0,
                };
                *b = Some((view.id.clone(), view.steps.len()));
                since
            });
            WorkerToPanel::TaskDelta {
                delta: Box::new(view.delta_since(since)),
            }
        }
        None => {
            BROADCAST.with(|b| b.borrow_mut().take());
            WorkerToPanel::TaskState {
                state: None,
                notice: None,
            }
        }
    };
    if let Ok(p) = runtime_send_message(&JsValue::from_str(&crate::redact::out(&message.to_json())))
    {
        // Nothing waits for the panels' answer (the task goes on at once), but the promise is
        // taken care of: no panel open rejects it, which is not an error.
        wasm_bindgen_futures::spawn_local(async move {
            let _ = JsFuture::from(p).await;
        });
    }
}

/// Forgets the stored task, transcript and all.
pub(super) async fn forget() -> Result<(), AgentError> {
    crate::badge::set("task", None);
    let promise = session_remove(TASK_STATE_KEY).map_err(|e| AgentError::Storage(js_text(e)))?;
    JsFuture::from(promise)
        .await
        .map(|_| ())
        .map_err(|e| AgentError::Storage(js_text(e)))
}

/// The sites the user chose "Always allow on this site" for; none when unreadable.
pub(super) async fn load_grants() -> SiteGrants {
    match chrome::stored_json(chrome::storage_local_get, SITE_GRANTS_KEY).await {
        Ok(json) => json
            .map(|json| SiteGrants::parse(&json))
            .unwrap_or_default(),
        Err(e) => {
            crate::log_error("the remembered sites could not be read", &js_text(e).into());
            SiteGrants::default()
        }
    }
}

/// Remembers "Always allow on this site" for `host` (the panel's Settings lists it).
pub(super) async fn remember_site(host: &str) -> Result<(), AgentError> {
    let mut grants = load_grants().await;
    grants.add(host);
    chrome::store_json(SITE_GRANTS_KEY, &grants.to_json())
        .await
        .map_err(|e| AgentError::Storage(js_text(e)))
}
