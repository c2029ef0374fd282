//! Tandem's side panel. `sidepanel.html` holds the static controls (with their accessible
//! names); this crate gives them behaviour: the chat over a Port to the service worker, and
//! the Settings form stored in `chrome.storage.local` (a view of its own), the composer's
//! Chat / Task modes, and "Save conversation".
//!
//! The views (`chat`, `task`, `settings`, `debug`, `tools`, `workflows`) each own their DOM and state and
//! never import one another: they depend on `port` (the Port and the dispatch of what it
//! brings), `hub` (events between views), core, and modules that are no view (`dom`,
//! `chrome`, `alert`, `tab`, `markdown`, `cards`). ARCHITECTURE.md has the map.

mod alert;
mod cards;
mod chat;
mod chrome;
mod debug;
mod dom;
mod hub;
mod i18n;
mod markdown;
mod port;
mod relay;
mod settings;
mod tab;
mod task;
mod tools;
mod waiting;
mod workflows;

/// Runs once the panel's bootstrap (`extension/sidepanel.js`) has loaded the wasm. An export
/// called by name, not a `start` function run on load: this crate's wasm tests load it in a
/// page with no panel, and crates/wasm's default build links it beside the worker.
/// `first_settings`: the read of the stored settings the bootstrap started while the wasm
/// compiled (a Promise of `chrome.storage.local.get("settings")`), or undefined: then Settings
/// reads them itself. `early`: the Port to the worker the bootstrap opened meanwhile, with the
/// question about the on-device model already asked on it (`port::adopt`), or undefined.
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn start_panel(first_settings: wasm_bindgen::JsValue, early: wasm_bindgen::JsValue) {
    settings::first_read(first_settings);
    // The labels first: everything after reads and names controls in the person's language.
    i18n::localize();
    // What the worker sends goes to the view it is for; the memory and the conversation
    // register their own.
    port::route(port::Route::Task, task::receive);
    port::route(port::Route::Settings, settings::receive);
    port::route(port::Route::Relay, relay::receive);
    let asked_early = port::adopt(&early);
    if let Err(e) = chat::wire()
        .and_then(|()| cards::wire())
        .and_then(|()| settings::wire(asked_early))
        .and_then(|()| debug::wire())
        .and_then(|()| task::wire())
        .and_then(|()| tools::wire())
        .and_then(|()| workflows::wire())
        .and_then(|()| waiting::wire())
    {
        alert::show_error(&format!("Tandem could not start: {e}"));
    }
    // Synchronous until here, so nothing the worker said could be handed on before the views
    // were wired.
    port::replay_early();
}
