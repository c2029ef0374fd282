//! Everything the worker tells a panel goes out here: each message passes the one redactor (a
//! provider may echo the key), the tab's session memory sees each answer as the panel sees
//! it, and an answer in flight is marked alive, for chat's stall watch, whenever anything is
//! posted for it.

use std::cell::RefCell;
use std::collections::HashMap;

use tandem_core::protocol::WorkerToPanel;
use wasm_bindgen::JsValue;

use crate::chrome::Port;

/// How an answer in flight is doing, for the stall watch: when it last showed a sign of life
/// (anything posted for it) and whether a tool is running (which has its own limits).
struct Activity {
    last: f64,
    in_tool: bool,
    /// Set when the watch gave up: the sentence the answer ends with.
    stalled: Option<String>,
}

thread_local! {
    static ACTIVITY: RefCell<HashMap<String, Activity>> = RefCell::new(HashMap::new());
}

/// Starts watching the answer `request_id`: from now on, what is posted for it counts.
pub(crate) fn track(request_id: &str) {
    ACTIVITY.with(|a| {
        a.borrow_mut().insert(
            request_id.to_string(),
            Activity {
                last: js_sys::Date::now(),
                in_tool: false,
                stalled: None,
            },
        )
    });
}

/// Stops watching `request_id`; the stall sentence, if the watch gave up on it.
pub(crate) fn untrack(request_id: &str) -> Option<String> {
    ACTIVITY
        .with(|a| a.borrow_mut().remove(request_id))
        .and_then(|a| a.stalled)
}

/// How long `request_id` has been silent (ms) and whether a tool of it is running; `None`
/// once it is no longer watched.
pub(crate) fn activity(request_id: &str) -> Option<(f64, bool)> {
    ACTIVITY.with(|a| {
        a.borrow()
            .get(request_id)
            .map(|x| (js_sys::Date::now() - x.last, x.in_tool))
    })
}

/// The watch gave up on `request_id`: the answer ends with `sentence`.
pub(crate) fn mark_stalled(request_id: &str, sentence: String) {
    ACTIVITY.with(|a| {
        if let Some(x) = a.borrow_mut().get_mut(request_id) {
            x.stalled = Some(sentence);
        }
    });
}

/// Sends `message` to the panel at `port`; for an answer being watched, it is a sign of life.
pub(crate) fn post(port: &Port, message: &WorkerToPanel) -> Result<(), JsValue> {
    post_as(port, message, true)
}

/// Sends `message` without counting it as a sign of life of its answer (the stall watch's
/// own lines).
pub(crate) fn post_quiet(port: &Port, message: &WorkerToPanel) -> Result<(), JsValue> {
    post_as(port, message, false)
}

fn post_as(port: &Port, message: &WorkerToPanel, touch: bool) -> Result<(), JsValue> {
    if touch {
        ACTIVITY.with(|a| {
            if let Some(x) = a.borrow_mut().get_mut(message.request_id()) {
                x.last = js_sys::Date::now();
                match message {
                    WorkerToPanel::ToolUse { .. } => x.in_tool = true,
                    WorkerToPanel::ToolResult { .. } => x.in_tool = false,
                    _ => {}
                }
            }
        });
    }
    // The tab's session records the answer as the panel sees it, whoever answered.
    crate::memory::observe(message);
    // Everything a panel shows passes the one redactor: a provider may echo the key. The one
    // message that must carry a credential is the Firebase request the panel itself sends
    // to Firebase (the relay); nothing of it is shown.
    let json = message.to_json();
    let json = match message {
        WorkerToPanel::Fetch { .. } => json,
        _ => crate::redact::out(&json),
    };
    port.post_message(&JsValue::from_str(&json))
}
