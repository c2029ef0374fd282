//! The per-tab conversation memory at run time. The sessions (`tandem_core::memory`) live in
//! this worker's memory and are mirrored to `chrome.storage.session` (held in RAM by Chrome,
//! never written to disk, cleared when the browser closes, readable by extension pages only),
//! so that a worker stopped after 30 s idle picks them up again. Nothing of a conversation is
//! ever written to `chrome.storage.local`, IndexedDB or the console.
//!
//! The panel shows the conversation of the tab it follows; a send records the question in
//! that tab's session, and [`observe`] records the answer as it is posted to the panel.

use std::cell::RefCell;
use std::collections::HashMap;

use js_sys::{Object, Promise, Reflect};
use tandem_chrome::js_text;
use tandem_core::budget::BudgetError;
use tandem_core::chat::{incomplete_badge, ChatMessage, Role};
use tandem_core::errors::ProviderError;
use tandem_core::memory::{
    MemoryConfig, MemoryMessage, PendingSelection, SensitiveField, SessionKey, SessionMemory, Turn,
};
use tandem_core::protocol::{PanelToWorker, WorkerToPanel};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{spawn_local, JsFuture};

use crate::chrome::{runtime_send_message, session_get, session_set, tabs_get};
use crate::storage;

/// Keys in `chrome.storage.session`.
const MEMORY_KEY: &str = "memory";
const SELECTION_KEY: &str = "selection";
pub(crate) const CLEANUP_ALARM: &str = "tandem-memory-cleanup";
const CLEANUP_EVERY_MINUTES: f64 = 30.0;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_namespace = ["chrome", "storage", "session"], js_name = remove)]
    fn session_remove(keys: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "storage", "session"], js_name = setAccessLevel)]
    fn session_set_access_level(options: &JsValue) -> Result<Promise, JsValue>;

    #[wasm_bindgen(catch, js_namespace = ["chrome", "alarms"], js_name = get)]
    fn alarms_get(name: &str) -> Result<Promise, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "alarms"], js_name = create)]
    fn alarms_create(name: &str, info: &JsValue) -> Result<Promise, JsValue>;

}

#[derive(Debug, thiserror::Error)]
enum MemoryError {
    #[error("could not {0} chrome.storage.session: {1}")]
    Storage(&'static str, String),
    /// Only the position: serde's message can quote the stored text.
    #[error("the {0} kept in chrome.storage.session is damaged ({1}); starting without it")]
    Corrupt(&'static str, String),
    #[error("could not {0} the cleanup alarm: {1}")]
    Alarm(&'static str, String),
}

/// Everything this module keeps; mirrored to `chrome.storage.session`.
#[derive(Default)]
struct State {
    sessions: SessionMemory,
    selection: Option<PendingSelection>,
}

/// An answer being streamed into a session.
struct InFlight {
    key: SessionKey,
    /// The question, taken back out when nothing was answered.
    user_id: String,
    answer_id: String,
    text: String,
    /// The tools called while answering, recorded with the answer.
    tools: Vec<tandem_core::chat::ToolCard>,
    config: MemoryConfig,
}

thread_local! {
    /// `None` until loaded from `chrome.storage.session` after this worker started.
    static STATE: RefCell<Option<State>> = const { RefCell::new(None) };
    /// The one read of `chrome.storage.session` every early caller waits for.
    static LOADING: RefCell<Option<Promise>> = const { RefCell::new(None) };
    static IN_FLIGHT: RefCell<HashMap<String, InFlight>> = RefCell::new(HashMap::new());
}

/// At every worker start: make sure the cleanup alarm exists (alarms survive restarts, but
/// not every update or a browser restart). `background.js` has already kept the memory from
/// content scripts (`storage.session` restricted to trusted contexts) before the wasm loaded.
pub fn start() {
    spawn_local(async move {
        if let Err(e) = ensure_alarm().await {
            report(&e);
        }
    });
}

async fn ensure_alarm() -> Result<(), MemoryError> {
    let existing = JsFuture::from(
        alarms_get(CLEANUP_ALARM).map_err(|e| MemoryError::Alarm("read", js_text(e)))?,
    )
    .await
    .map_err(|e| MemoryError::Alarm("read", js_text(e)))?;
    if !existing.is_undefined() && !existing.is_null() {
        return Ok(());
    }
    let info = Object::new();
    let _ = Reflect::set(
        &info,
        &"periodInMinutes".into(),
        &CLEANUP_EVERY_MINUTES.into(),
    );
    JsFuture::from(
        alarms_create(CLEANUP_ALARM, &info)
            .map_err(|e| MemoryError::Alarm("create", js_text(e)))?,
    )
    .await
    .map_err(|e| MemoryError::Alarm("create", js_text(e)))?;
    Ok(())
}

/// The cleanup alarm rang (`crate::alarms` tells the alarms apart).
pub(crate) fn on_cleanup_alarm() {
    spawn_local(async move {
        let config = memory_config().await;
        let now = now_ms();
        update(|state| {
            let removed = state.sessions.cleanup(now, &config);
            let stale = state
                .selection
                .take_if(|p| !p.is_for(p.tab_id, now))
                .is_some();
            // Trimming to a lowered max_messages changes sessions without removing any.
            (
                !removed.is_empty() || stale || !state.sessions.is_empty(),
                (),
            )
        })
        .await;
    });
}

#[wasm_bindgen]
pub fn on_tab_removed(tab_id: i32) {
    spawn_local(async move {
        update(|state| {
            let removed = !state.sessions.forget_tab(tab_id).is_empty();
            let pending = state.selection.take_if(|p| p.tab_id == tab_id).is_some();
            (removed || pending, ())
        })
        .await;
        IN_FLIGHT.with(|f| f.borrow_mut().retain(|_, x| x.key.tab_id != tab_id));
    });
}

/// Chrome put tab `added` in the place of tab `removed` (a prerendered page was shown):
/// its conversation and a selection waiting for it follow.
#[wasm_bindgen]
pub fn on_tab_replaced(added: i32, removed: i32) {
    spawn_local(async move {
        let moved = update(|state| {
            let moved = state.sessions.replace_tab(removed, added);
            let pending = match state.selection.as_mut() {
                Some(p) if p.tab_id == removed => {
                    p.tab_id = added;
                    true
                }
                _ => false,
            };
            (moved || pending, moved)
        })
        .await;
        IN_FLIGHT.with(|f| {
            for flight in f.borrow_mut().values_mut() {
                if flight.key.tab_id == removed {
                    flight.key.tab_id = added;
                }
            }
        });
        if moved {
            // A panel may have asked for the new tab before the conversation moved there.
            broadcast(&WorkerToPanel::Changed {
                tab_id: added,
                request_id: None,
            });
        }
    });
}

/// Only a URL change matters: a tab that leaves its site forgets what was said there.
#[wasm_bindgen]
pub fn on_tab_updated(tab_id: i32, change: JsValue) {
    let Some(url) = Reflect::get(&change, &"url".into())
        .ok()
        .and_then(|u| u.as_string())
    else {
        return;
    };
    spawn_local(async move {
        update(|state| (state.sessions.on_navigate(tab_id, &url), ())).await;
    });
}

/// The panel's memory messages: show a tab, hide a message, clear, forget everything.
/// `reply` sends the tab's conversation back to the panel that asked (memory itself never
/// posts: every message to a panel passes `crate::outbox`, which reports answers here).
pub fn on_panel_message(message: PanelToWorker, reply: impl FnOnce(&WorkerToPanel) + 'static) {
    spawn_local(async move {
        match message {
            PanelToWorker::Open { request_id, tab_id } => {
                reply(&conversation(request_id, tab_id).await)
            }
            PanelToWorker::SetHidden {
                tab_id,
                message_id,
                hidden,
            } => {
                if let Some((Some(key), _)) = key_of(tab_id).await {
                    update(|s| (s.sessions.set_hidden(&key, &message_id, hidden), ())).await;
                }
            }
            PanelToWorker::Clear { tab_id } => {
                if let Some((Some(key), _)) = key_of(tab_id).await {
                    // An answer still streaming into it must not bring it back.
                    IN_FLIGHT.with(|f| f.borrow_mut().retain(|_, x| x.key != key));
                    update(|s| (s.sessions.clear(&key), ())).await;
                }
            }
            PanelToWorker::ForgetAll => forget_all().await,
            _ => {}
        }
    });
}

/// The tab's conversation as the panel shows it, with a selection waiting for it.
async fn conversation(request_id: String, tab_id: Option<i32>) -> WorkerToPanel {
    let target = key_of(tab_id).await;
    let now = now_ms();
    let (messages, selection) = update(|state| {
        let mut changed = false;
        if let Some((_, url)) = &target {
            // The tab may have left its site before its onUpdated event reached us.
            changed |= tab_id.is_some_and(|t| state.sessions.on_navigate(t, url));
        }
        let messages: Vec<ChatMessage> = target
            .as_ref()
            .and_then(|(key, _)| key.as_ref())
            .and_then(|key| state.sessions.get(key))
            .map(|s| s.messages.iter().map(MemoryMessage::to_chat).collect())
            .unwrap_or_default();
        let selection = tab_id.and_then(|t| state.selection.take_if(|p| p.is_for(t, now)));
        changed |= selection.is_some();
        (changed, (messages, selection))
    })
    .await;
    let (selection, refused) = match selection {
        Some(PendingSelection {
            refused: Some(why), ..
        }) => (None, Some(why)),
        other => (other.map(|p| p.text), None),
    };
    WorkerToPanel::Conversation {
        request_id,
        tab_id,
        domain: target.and_then(|(key, _)| key).map(|k| k.domain),
        messages,
        selection,
        refused,
    }
}

async fn forget_all() {
    IN_FLIGHT.with(|f| f.borrow_mut().clear());
    ensure_loaded().await;
    STATE.with(|s| *s.borrow_mut() = Some(State::default()));
    let keys = js_sys::Array::of2(&MEMORY_KEY.into(), &SELECTION_KEY.into());
    let removed = async {
        let promise =
            session_remove(&keys).map_err(|e| MemoryError::Storage("clear", js_text(e)))?;
        JsFuture::from(promise)
            .await
            .map_err(|e| MemoryError::Storage("clear", js_text(e)))
    };
    if let Err(e) = removed.await {
        report(&e);
    }
}

/// The history to answer `messages` with. For a tab whose page has a memory, the question
/// (the last of `messages`) is recorded in the tab's session, and the session is the
/// history: the panel's copy may be out of date, and must never carry a conversation to
/// another site. For other pages the panel's conversation is the history, and nothing is kept.
/// `replaces` (Regenerate, Edit & resend): the newest question, taken back out of the session
/// with its answer before this one is recorded, so the old pair is never sent again.
pub async fn prepare(
    request_id: String,
    tab_id: Option<i32>,
    answer_id: String,
    messages: Vec<ChatMessage>,
    replaces: Option<String>,
) -> Result<Turn, ProviderError> {
    let now = now_ms();
    let Some((Some(key), url)) = key_of(tab_id).await else {
        let history = messages
            .iter()
            .map(|m| MemoryMessage::from_chat(m, now))
            .collect();
        return Ok(Turn::new(history));
    };
    let request = messages
        .last()
        .filter(|m| m.role == Role::User && !m.hidden)
        .ok_or(BudgetError::NoRequest)?;
    let config = memory_config().await;
    let history = update(|state| {
        state.sessions.on_navigate(key.tab_id, &url);
        if let Some(id) = &replaces {
            state.sessions.take_back_turn(&key, id);
        }
        let session =
            state
                .sessions
                .record_message(&key, MemoryMessage::from_chat(request, now), &config);
        (true, session.messages.clone())
    })
    .await;
    let flight = InFlight {
        key,
        user_id: request.id.clone(),
        answer_id,
        text: String::new(),
        tools: Vec::new(),
        config,
    };
    IN_FLIGHT.with(|f| f.borrow_mut().insert(request_id, flight));
    Ok(Turn::new(history))
}

/// Sees every message posted to the panel, and records the answer of a tab's session when it
/// ends: in full when done, what arrived when stopped or cut, and when nothing arrived the
/// question is taken back out (the panel gives its text back to the user). Synchronous, so the
/// answer is in the session before the panel can send the next question.
pub fn observe(message: &WorkerToPanel) {
    let request_id = message.request_id();
    let ended = match message {
        WorkerToPanel::Delta { text, .. } => {
            IN_FLIGHT.with(|f| {
                if let Some(x) = f.borrow_mut().get_mut(request_id) {
                    x.text.push_str(text);
                }
            });
            return;
        }
        WorkerToPanel::Restart { .. } => {
            IN_FLIGHT.with(|f| {
                if let Some(x) = f.borrow_mut().get_mut(request_id) {
                    x.text.clear();
                }
            });
            return;
        }
        WorkerToPanel::ToolUse {
            call_id,
            tool,
            provider,
            arguments,
            ..
        } => {
            IN_FLIGHT.with(|f| {
                if let Some(x) = f.borrow_mut().get_mut(request_id) {
                    x.tools.push(tandem_core::chat::ToolCard {
                        call_id: call_id.clone(),
                        tool: tool.clone(),
                        provider: provider.clone(),
                        arguments: arguments.clone(),
                        ok: None,
                        result: String::new(),
                    });
                }
            });
            return;
        }
        WorkerToPanel::ToolResult {
            call_id, ok, text, ..
        } => {
            IN_FLIGHT.with(|f| {
                if let Some(x) = f.borrow_mut().get_mut(request_id) {
                    if let Some(card) = x.tools.iter_mut().find(|c| c.call_id == *call_id) {
                        card.ok = Some(*ok);
                        card.result = text.clone();
                    }
                }
            });
            return;
        }
        WorkerToPanel::Done { .. } => true,
        WorkerToPanel::Stopped { .. } | WorkerToPanel::Error { .. } => false,
        _ => return,
    };
    // What the panel shows under the answer, kept with it for when the panel opens again.
    let (answered_by, badge, usage) = match message {
        WorkerToPanel::Done {
            provider, usage, ..
        } => (provider.clone(), None, *usage),
        WorkerToPanel::Error { kind, .. } => (None, Some(incomplete_badge(Some(*kind))), None),
        _ => (None, Some(incomplete_badge(None)), None),
    };
    let Some(flight) = IN_FLIGHT.with(|f| f.borrow_mut().remove(request_id)) else {
        return;
    };
    let changed = STATE.with(|s| {
        let mut s = s.borrow_mut();
        // Always loaded: `prepare` loaded it before the flight began.
        let Some(state) = s.as_mut() else {
            return false;
        };
        // The session may have been cleared, or the tab may have left the site, meanwhile.
        if state.sessions.get(&flight.key).is_none() {
            return false;
        }
        let nothing = flight.text.is_empty() && flight.tools.is_empty();
        if nothing && !ended {
            return state.sessions.remove_message(&flight.key, &flight.user_id);
        }
        if nothing {
            return false;
        }
        let answer = MemoryMessage {
            id: flight.answer_id.clone(),
            answered_by,
            badge: badge.map(str::to_string),
            usage,
            tools: flight.tools.clone(),
            ..MemoryMessage::new(Role::Assistant, flight.text.clone(), now_ms())
        };
        state
            .sessions
            .record_message(&flight.key, answer, &flight.config);
        true
    });
    if changed {
        persist();
        broadcast(&WorkerToPanel::Changed {
            tab_id: flight.key.tab_id,
            request_id: Some(request_id.to_owned()),
        });
    }
}

/// Keeps `text` for the panel of `tab_id` to ask about ("Ask Tandem"), and tells open
/// panels.
pub async fn ask_about(tab_id: i32, text: &str) {
    let Some(pending) = PendingSelection::new(tab_id, text, now_ms()) else {
        return;
    };
    leave_for_panel(pending).await;
}

/// "Ask Tandem" on a selection inside a password (or card, or one-time code) field: the
/// panel says why nothing was asked; the text itself was never read out of the page.
pub async fn refuse_selection(tab_id: i32, field: SensitiveField) {
    leave_for_panel(PendingSelection::refused(tab_id, field, now_ms())).await;
}

async fn leave_for_panel(pending: PendingSelection) {
    let tab_id = pending.tab_id;
    update(|state| {
        state.selection = Some(pending);
        (true, ())
    })
    .await;
    broadcast(&WorkerToPanel::Changed {
        tab_id,
        request_id: None,
    });
}

/// Tells every open panel (a panel's Port is gone after this worker was stopped, so this
/// goes by `runtime.sendMessage`). No panel open is not an error.
fn broadcast(message: &WorkerToPanel) {
    if let Ok(promise) =
        runtime_send_message(&JsValue::from_str(&crate::redact::out(&message.to_json())))
    {
        spawn_local(async move {
            let _ = JsFuture::from(promise).await;
        });
    }
}

/// The session key of `tab_id`'s page, with the page's URL; `None` when there is no such tab
/// (or no tab at all), `Some((None, url))` for a page that gets no memory. A tab that is
/// loading another page counts as that page: `tabs.onUpdated` reports the new URL (and this
/// module forgets the old site) before the page commits.
async fn key_of(tab_id: Option<i32>) -> Option<(Option<SessionKey>, String)> {
    let tab_id = tab_id?;
    let tab = JsFuture::from(tabs_get(tab_id).ok()?).await.ok()?;
    let url_at = |field: &str| Reflect::get(&tab, &field.into()).ok()?.as_string();
    let url = url_at("pendingUrl").or_else(|| url_at("url"))?;
    Some((SessionKey::for_url(&url, tab_id), url))
}

async fn memory_config() -> MemoryConfig {
    // Unreadable settings are reported where they matter (the send); the memory's defaults
    // are safe.
    storage::settings()
        .await
        .map(|s| s.memory)
        .unwrap_or_default()
}

/// Applies `change` to the loaded state; it returns whether anything changed (then the state
/// is mirrored to `chrome.storage.session`) and a result.
async fn update<R>(change: impl FnOnce(&mut State) -> (bool, R)) -> R {
    ensure_loaded().await;
    let (changed, result) =
        STATE.with(|s| change(s.borrow_mut().get_or_insert_with(State::default)));
    if changed {
        persist();
    }
    result
}

async fn ensure_loaded() {
    if STATE.with(|s| s.borrow().is_some()) {
        return;
    }
    let promise = LOADING.with(|l| {
        l.borrow_mut()
            .get_or_insert_with(|| {
                let keys = js_sys::Array::of2(&MEMORY_KEY.into(), &SELECTION_KEY.into());
                session_get(&keys).unwrap_or_else(|e| Promise::reject(&e))
            })
            .clone()
    });
    let items = JsFuture::from(promise).await;
    // Every waiter resumes here; the first one fills the state, the others find it filled.
    if STATE.with(|s| s.borrow().is_some()) {
        return;
    }
    let state = match items {
        Ok(items) => State {
            sessions: read(&items, MEMORY_KEY, "conversation memory").unwrap_or_default(),
            selection: read(&items, SELECTION_KEY, "selection to ask about"),
        },
        Err(e) => {
            report(&MemoryError::Storage("read", js_text(e)));
            State::default()
        }
    };
    STATE.with(|s| *s.borrow_mut() = Some(state));
}

fn read<T: serde::de::DeserializeOwned>(
    items: &JsValue,
    key: &str,
    what: &'static str,
) -> Option<T> {
    let value = Reflect::get(items, &key.into()).ok()?;
    if value.is_undefined() || value.is_null() {
        return None;
    }
    let json = js_sys::JSON::stringify(&value).ok().map(String::from)?;
    match tandem_core::json::from_str(&json) {
        Ok(v) => Some(v),
        Err(e) => {
            report(&MemoryError::Corrupt(what, position(&e)));
            None
        }
    }
}

/// Where a JSON error is, never what it saw.
fn position(e: &serde_json::Error) -> String {
    format!(
        "{:?} error at line {} column {}",
        e.classify(),
        e.line(),
        e.column()
    )
}

/// Mirrors the state to `chrome.storage.session`: the whole of it, serialised now, so writes
/// that finish out of order still end with the latest state. Empty parts are removed.
fn persist() {
    let (memory, selection) = STATE.with(|s| {
        let s = s.borrow();
        let Some(state) = s.as_ref() else {
            return (None, None);
        };
        let memory = (!state.sessions.is_empty())
            .then(|| serde_json::to_string(&state.sessions).ok())
            .flatten();
        let selection = state
            .selection
            .as_ref()
            .and_then(|p| serde_json::to_string(p).ok());
        (memory, selection)
    });
    let items = Object::new();
    let gone = js_sys::Array::new();
    for (key, json) in [(MEMORY_KEY, memory), (SELECTION_KEY, selection)] {
        match json.and_then(|j| js_sys::JSON::parse(&j).ok()) {
            Some(value) => {
                let _ = Reflect::set(&items, &key.into(), &value);
            }
            None => {
                gone.push(&key.into());
            }
        }
    }
    let writes = [
        session_set(&items).map_err(|e| MemoryError::Storage("write", js_text(e))),
        session_remove(&gone).map_err(|e| MemoryError::Storage("write", js_text(e))),
    ];
    for write in writes {
        spawn_local(async move {
            let done = match write {
                Ok(promise) => JsFuture::from(promise)
                    .await
                    .map(|_| ())
                    .map_err(|e| MemoryError::Storage("write", js_text(e))),
                Err(e) => Err(e),
            };
            if let Err(e) = done {
                report(&e);
            }
        });
    }
}

fn report(e: &MemoryError) {
    web_sys::console::error_1(&format!("Tandem: {e}").into());
}

fn now_ms() -> u64 {
    js_sys::Date::now() as u64
}
