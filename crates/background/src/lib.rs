//! Tandem's service worker. `extension/background.js` registers every `chrome.*` listener
//! synchronously and forwards the events here once the wasm has loaded; this crate turns
//! them into calls to `tandem-core` and does the I/O (`fetch`, `chrome.storage`).

mod agent;
mod alarms;
mod ask;
mod badge;
mod chat;
mod chrome;
mod cloud;
mod http;
mod mcp;
mod mcp_oauth;
mod memory;
mod models;
mod nano;
mod nano_status;
mod notices;
mod outbox;
mod page_read;
mod page_tools;
mod redact;
mod registry;
mod relay;
mod sessions;
mod storage;
mod tools;
mod workflows;

use wasm_bindgen::prelude::*;

use tandem_core::protocol::{PanelToWorker, CHAT_PORT};

/// Runs once per worker start, after the wasm loaded (`extension/background.js` calls it:
/// the wasm tests and crates/wasm's default build, which links the panel too, do not).
#[wasm_bindgen]
pub fn start_worker() {
    // The toolbar button opens the side panel. Set on every start (not only on install)
    // because the setting is cheap and this keeps it right after an update or a reload.
    let behavior = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&behavior, &"openPanelOnActionClick".into(), &JsValue::TRUE);
    if let Err(e) = chrome::set_panel_behavior(&behavior) {
        log_error("sidePanel.setPanelBehavior failed", &e);
    }
    badge::start();
    registry::start();
    memory::start();
    agent::start();
    tools::start();
    workflows::start();
}

#[wasm_bindgen]
pub fn on_installed() {
    ask::create_menu();
}

#[wasm_bindgen]
pub fn on_port_message(port: chrome::Port, message: JsValue) {
    if port.name() != CHAT_PORT {
        return;
    }
    // Only Tandem's own side panel drives the worker. Tandem's content script (the DOM
    // driver's world on a web page) has Tandem's id and can open a Port of this name: it
    // is cut off and gets nothing, no key spent, no conversation read.
    if !tandem_chrome::sender_is(&port.sender(), |s, own| s.is_own_panel(own)) {
        log_error(
            "refused a Port from a sender that is not Tandem's side panel",
            &JsValue::UNDEFINED,
        );
        port.disconnect();
        return;
    }
    let Some(text) = message.as_string() else {
        log_error("ignored a non-string port message", &message);
        return;
    };
    relay::panel_seen(&port);
    match PanelToWorker::from_json(&text) {
        Ok(PanelToWorker::FetchHead {
            fetch_id,
            status,
            retry_after,
        }) => relay::deliver(
            &fetch_id,
            relay::RelayEvent::Head {
                status,
                retry_after,
            },
        ),
        Ok(PanelToWorker::FetchChunk { fetch_id, text }) => {
            relay::deliver(&fetch_id, relay::RelayEvent::Chunk(text))
        }
        Ok(PanelToWorker::FetchEnd { fetch_id, error }) => {
            relay::deliver(&fetch_id, relay::RelayEvent::End(error))
        }
        Ok(PanelToWorker::Send {
            request_id,
            messages,
            tab_id,
            answer_id,
            replaces,
            page,
        }) => {
            // Images stay out of session memory; they rejoin the request they came with.
            let images = messages
                .last()
                .map(|m| m.images.clone())
                .unwrap_or_default();
            // The turn offers the tools of this tab's page (WebMCP), and only of this one.
            tools::note_tab(&request_id, tab_id);
            let id = request_id.clone();
            let reader = port.clone();
            let turn = async move {
                // "Ask about this page": the page's text is read before anything is recorded,
                // so a page that cannot be read leaves the session as it was.
                let messages = match page {
                    true => page_read::quote_page(&reader, &id, tab_id, messages).await?,
                    false => messages,
                };
                let mut turn = memory::prepare(id, tab_id, answer_id, messages, replaces).await?;
                if let Some(last) = turn
                    .messages
                    .last_mut()
                    .filter(|m| m.role == tandem_core::chat::Role::User)
                {
                    last.images = images;
                }
                Ok(turn)
            };
            chat::start(port, request_id, turn)
        }
        Ok(
            message @ (PanelToWorker::Open { .. }
            | PanelToWorker::SetHidden { .. }
            | PanelToWorker::Clear { .. }
            | PanelToWorker::ForgetAll),
        ) => memory::on_panel_message(message, move |reply| {
            let _ = outbox::post(&port, reply);
        }),
        Ok(PanelToWorker::Stop { request_id }) => chat::stop(&request_id),
        Ok(PanelToWorker::NanoStatus { request_id }) => {
            nano_status::report_status(port, request_id, false)
        }
        Ok(PanelToWorker::DownloadNano { request_id }) => {
            nano_status::report_status(port, request_id, true)
        }
        Ok(PanelToWorker::TestConnection {
            request_id,
            provider,
            settings,
        }) => models::test_connection(port, request_id, provider, settings),
        Ok(PanelToWorker::ListModels {
            request_id,
            provider,
            settings,
        }) => models::list(port, request_id, provider, settings),
        Ok(PanelToWorker::Task { command }) => agent::on_command(port, command),
        Ok(PanelToWorker::Tools { command }) => tools::on_command(command),
        Ok(PanelToWorker::ToolDecision { call_id, approve }) => {
            tools::on_decision(call_id, approve)
        }
        // Position only: serde's message can quote the text of the message.
        Err(e) => log_error(
            "ignored a malformed port message",
            &format!("{:?} error at column {}", e.classify(), e.column()).into(),
        ),
    }
}

/// `storage.onChanged` of the site grants or the settings (background.js filters).
#[wasm_bindgen]
pub fn on_sites_changed() {
    agent::sites_changed();
}

#[wasm_bindgen]
pub fn on_port_disconnect(port: chrome::Port) {
    // Nobody is listening any more: stop paying for the tokens.
    relay::panel_gone(&port);
    chat::stop_all_for(&port);
}

/// A warning that carries no conversation text (a skipped frame is described by position).
pub(crate) fn log_warning(text: &str) {
    web_sys::console::warn_1(&format!("Tandem: {text}").into());
}

pub(crate) fn log_error(context: &str, detail: &JsValue) {
    // A detail can be a provider's body or an exception quoting a request: redacted too.
    let detail = detail
        .as_string()
        .map_or_else(|| detail.clone(), |text| JsValue::from(redact::out(&text)));
    web_sys::console::error_2(&format!("Tandem: {}", redact::out(context)).into(), &detail);
}
