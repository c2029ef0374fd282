//! The Port to the service worker, and the dispatch of what it brings: each message goes to
//! the view that owns it (the conversation, the task, Settings, the Firebase relay, the
//! memory that follows the tab). Views post through [`post`] and never reach each other
//! through here.

use std::cell::RefCell;

use tandem_core::protocol::{PanelToWorker, WorkerToPanel, CHAT_PORT};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

use crate::chrome::{self, Port};

thread_local! {
    static PORT: RefCell<Option<Port>> = const { RefCell::new(None) };
}

/// Posts on the Port, connecting first when there is none (first use, or after the service
/// worker was stopped: connecting wakes it).
pub(crate) fn post(message: &PanelToWorker) -> Result<(), String> {
    let port = PORT.with(|p| p.borrow().clone());
    let port = match port {
        Some(p) => p,
        None => connect()?,
    };
    port.post_message(&JsValue::from_str(&message.to_json()))
        .map_err(|e| chrome::js_text(&e))
}

fn connect() -> Result<Port, String> {
    let info = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&info, &"name".into(), &CHAT_PORT.into());
    let port = chrome::runtime_connect(&info).map_err(|e| chrome::js_text(&e))?;
    let on_message = Closure::<dyn FnMut(JsValue)>::new(|msg: JsValue| {
        match msg.as_string().as_deref().map(WorkerToPanel::from_json) {
            Some(Ok(m)) => dispatch(m),
            _ => web_sys::console::warn_2(
                &"Tandem: ignored a malformed message from the worker".into(),
                &msg,
            ),
        }
    });
    port.on_message()
        .add_listener(on_message.as_ref().unchecked_ref());
    on_message.forget();
    let on_disconnect = Closure::<dyn FnMut()>::new(|| {
        PORT.with(|p| *p.borrow_mut() = None);
        crate::chat::worker_gone();
    });
    port.on_disconnect()
        .add_listener(on_disconnect.as_ref().unchecked_ref());
    on_disconnect.forget();
    PORT.with(|p| *p.borrow_mut() = Some(port.clone()));
    Ok(port)
}

/// Hands a message from the worker (on the Port, or a broadcast the memory believed) to the
/// view it is for.
pub(crate) fn dispatch(message: WorkerToPanel) {
    match message {
        WorkerToPanel::TaskState { .. } | WorkerToPanel::TaskDelta { .. } => {
            crate::task::receive(message)
        }
        // Which conversation to show is the memory's business.
        WorkerToPanel::Conversation {
            request_id,
            tab_id,
            domain,
            messages,
            selection,
            refused,
        } => {
            crate::memory::on_conversation(&request_id, tab_id, domain, messages, selection);
            if let Some(why) = refused {
                crate::alert::show_error(&why);
            }
        }
        WorkerToPanel::Changed { tab_id, request_id } => {
            crate::memory::on_changed(tab_id, request_id.as_deref())
        }
        // Settings' questions: "Test connection", "List models", the on-device model.
        WorkerToPanel::ConnectionResult {
            request_id,
            ok,
            message,
        } => crate::settings::connection_result(&request_id, ok, &message),
        WorkerToPanel::Models {
            request_id,
            provider,
            models,
            message,
        } => crate::settings::models_listed(&request_id, provider, &models, &message),
        WorkerToPanel::NanoStatus {
            request_id,
            availability,
            progress,
            detail,
        } => {
            if crate::settings::nano_status_for(&request_id) {
                crate::settings::nano_status(&availability, progress, &detail);
            }
        }
        WorkerToPanel::Fetch {
            fetch_id,
            url,
            headers,
            body,
        } => crate::relay::fetch(fetch_id, url, headers, body),
        WorkerToPanel::FetchAbort { fetch_id } => crate::relay::abort(&fetch_id),
        // The rest is about the answer being streamed.
        other => crate::chat::receive(other),
    }
}
