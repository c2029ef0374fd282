//! The few `chrome.*` and global functions the service worker uses, bound by hand. Globals
//! are looked up at call time, so a test double installed before a call is seen.

use js_sys::Promise;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// A `chrome.runtime.Port`.
    #[derive(Clone, Debug)]
    pub type Port;

    #[wasm_bindgen(method, catch, js_name = postMessage)]
    pub fn post_message(this: &Port, message: &JsValue) -> Result<(), JsValue>;

    #[wasm_bindgen(method, getter)]
    pub fn name(this: &Port) -> String;

    /// Who opened the Port (`MessageSender`).
    #[wasm_bindgen(method, getter)]
    pub fn sender(this: &Port) -> JsValue;

    #[wasm_bindgen(method)]
    pub fn disconnect(this: &Port);

    #[wasm_bindgen(catch, js_namespace = ["chrome", "storage", "local"], js_name = get)]
    pub fn storage_local_get(keys: &JsValue) -> Result<Promise, JsValue>;

    /// `chrome.scripting.executeScript` (the agent's driver, "Ask Tandem", page reading).
    #[wasm_bindgen(catch, js_namespace = ["chrome", "scripting"], js_name = executeScript)]
    pub fn execute_script(injection: &JsValue) -> Result<Promise, JsValue>;

    #[wasm_bindgen(catch, js_namespace = ["chrome", "tabs"], js_name = get)]
    pub fn tabs_get(tab_id: i32) -> Result<Promise, JsValue>;

    #[wasm_bindgen(catch, js_namespace = ["chrome", "sidePanel"], js_name = setPanelBehavior)]
    pub fn set_panel_behavior(behavior: &JsValue) -> Result<Promise, JsValue>;

    #[wasm_bindgen(js_name = setTimeout)]
    pub fn set_timeout(handler: &js_sys::Function, ms: i32) -> JsValue;

    /// The global `fetch`: a service worker has no `window`.
    #[wasm_bindgen(js_name = fetch)]
    pub fn fetch_with_request(request: &web_sys::Request) -> Promise;

    #[wasm_bindgen(catch, js_namespace = ["chrome", "extension"], js_name = isAllowedFileSchemeAccess)]
    fn is_allowed_file_scheme_access() -> Result<Promise, JsValue>;
}

/// What to tell `page_refusal` about file access for `url`: Chrome is asked only for a `file:`
/// page, the one kind whose answer depends on it, and not on every step or question.
pub async fn file_access_for(url: &str) -> bool {
    tandem_core::agent::needs_file_access(url) && file_access().await
}

/// Whether the user turned on "Allow access to file URLs" for Tandem; no when Chrome does not
/// say.
async fn file_access() -> bool {
    let Ok(promise) = is_allowed_file_scheme_access() else {
        return false;
    };
    wasm_bindgen_futures::JsFuture::from(promise)
        .await
        .ok()
        .and_then(|v| v.as_bool())
        .unwrap_or(false)
}

/// `chrome.runtime.id`: Tandem's own extension id.
pub fn own_id() -> String {
    js_sys::Reflect::get(&js_sys::global(), &"chrome".into())
        .and_then(|c| js_sys::Reflect::get(&c, &"runtime".into()))
        .and_then(|r| js_sys::Reflect::get(&r, &"id".into()))
        .ok()
        .and_then(|id| id.as_string())
        .unwrap_or_default()
}

/// Reads Chrome's `MessageSender` and lets `trusted` (one of `Sender`'s checks) judge it
/// against Tandem's own id. Anything unreadable is untrusted.
pub fn sender_is(
    sender: &JsValue,
    trusted: impl Fn(&tandem_core::protocol::Sender, &str) -> bool,
) -> bool {
    let text = |key: &str| {
        js_sys::Reflect::get(sender, &key.into())
            .ok()
            .and_then(|v| v.as_string())
    };
    let (id, url) = (text("id"), text("url"));
    let in_tab = js_sys::Reflect::get(sender, &"tab".into()).is_ok_and(|t| t.is_object());
    let own = own_id();
    !own.is_empty()
        && trusted(
            &tandem_core::protocol::Sender {
                id: id.as_deref(),
                url: url.as_deref(),
                in_tab,
            },
            &own,
        )
}

/// Resolves after `ms` milliseconds (the worker's own `setTimeout`).
pub async fn sleep(ms: i32) {
    let promise = Promise::new(&mut |resolve, _reject| {
        set_timeout(&resolve, ms);
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}
