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

    #[wasm_bindgen(catch, js_namespace = ["chrome", "storage", "local"], js_name = get)]
    pub fn storage_local_get(keys: &JsValue) -> Result<Promise, JsValue>;

    #[wasm_bindgen(catch, js_namespace = ["chrome", "sidePanel"], js_name = setPanelBehavior)]
    pub fn set_panel_behavior(behavior: &JsValue) -> Result<Promise, JsValue>;

    #[wasm_bindgen(js_name = setTimeout)]
    fn set_timeout(handler: &js_sys::Function, ms: i32) -> JsValue;

    /// The global `fetch`: a service worker has no `window`.
    #[wasm_bindgen(js_name = fetch)]
    pub fn fetch_with_request(request: &web_sys::Request) -> Promise;
}

/// Resolves after `ms` milliseconds (the worker's own `setTimeout`).
pub async fn sleep(ms: i32) {
    let promise = Promise::new(&mut |resolve, _reject| {
        set_timeout(&resolve, ms);
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}
