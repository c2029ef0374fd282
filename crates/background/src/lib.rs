//! Tandem's service worker. `extension/background.js` registers every `chrome.*` listener
//! synchronously and forwards the events here once the wasm has loaded; this crate turns
//! them into calls to `tandem-core` and does the I/O (`fetch`, `chrome.storage`).

mod chat;
mod chrome;
mod storage;

use wasm_bindgen::prelude::*;

use tandem_core::protocol::{PanelToWorker, CHAT_PORT};

/// Runs once per worker start, after the wasm loaded.
#[wasm_bindgen]
pub fn start() {
    // The toolbar button opens the side panel. Set on every start (not only on install)
    // because the setting is cheap and this keeps it right after an update or a reload.
    let behavior = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&behavior, &"openPanelOnActionClick".into(), &JsValue::TRUE);
    if let Err(e) = chrome::set_panel_behavior(&behavior) {
        log_error("sidePanel.setPanelBehavior failed", &e);
    }
}

#[wasm_bindgen]
pub fn on_installed() {}

#[wasm_bindgen]
pub fn on_port_message(port: chrome::Port, message: JsValue) {
    if port.name() != CHAT_PORT {
        return;
    }
    let Some(text) = message.as_string() else {
        log_error("ignored a non-string port message", &message);
        return;
    };
    match PanelToWorker::from_json(&text) {
        Ok(PanelToWorker::Send {
            request_id,
            messages,
        }) => chat::start(port, request_id, messages),
        Ok(PanelToWorker::Stop { request_id }) => chat::stop(&request_id),
        Ok(PanelToWorker::TestConnection {
            request_id,
            provider,
            settings,
        }) => chat::test_connection(port, request_id, provider, settings),
        Err(e) => log_error("ignored a malformed port message", &e.to_string().into()),
    }
}

#[wasm_bindgen]
pub fn on_port_disconnect(port: chrome::Port) {
    // Nobody is listening any more: stop paying for the tokens.
    chat::stop_all_for(&port);
}

pub(crate) fn log_error(context: &str, detail: &JsValue) {
    web_sys::console::error_2(&format!("Tandem: {context}").into(), detail);
}
