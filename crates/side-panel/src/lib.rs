//! Tandem's side panel. `sidepanel.html` holds the static controls (with their accessible
//! names); this crate gives them behaviour: the chat over a Port to the service worker, and
//! the Settings form stored in `chrome.storage.local` (a view of its own), the composer's
//! Chat / Task modes, and "Save conversation".

mod agent_settings;
mod alert;
mod attach;
mod chat;
mod chrome;
mod debug;
mod dom;
mod export;
mod markdown;
mod memory;
mod page_ask;
mod port;
mod relay;
mod settings;
mod tab;
mod task;
mod tools;

/// Runs when the page loads the wasm. Not in unit tests: they bring their own DOM.
#[cfg_attr(not(test), wasm_bindgen::prelude::wasm_bindgen(start))]
pub fn start() {
    // What the worker sends goes to the view it is for; the memory and the conversation
    // register their own.
    port::route(port::Route::Task, task::receive);
    port::route(port::Route::Settings, settings::receive);
    port::route(port::Route::Relay, relay::receive);
    if let Err(e) = chat::wire()
        .and_then(|()| attach::wire())
        .and_then(|()| settings::wire())
        .and_then(|()| debug::wire())
        .and_then(|()| memory::wire())
        .and_then(|()| task::wire())
        .and_then(|()| tools::wire())
        .and_then(|()| export::wire())
    {
        alert::show_error(&format!("Tandem could not start: {e}"));
    }
}
