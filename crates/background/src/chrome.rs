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

    #[wasm_bindgen(catch, js_namespace = ["chrome", "storage", "local"], js_name = set)]
    fn storage_local_set(items: &JsValue) -> Result<Promise, JsValue>;

    #[wasm_bindgen(catch, js_namespace = ["chrome", "storage", "session"], js_name = get)]
    pub fn session_get(keys: &JsValue) -> Result<Promise, JsValue>;

    #[wasm_bindgen(catch, js_namespace = ["chrome", "storage", "session"], js_name = set)]
    pub fn session_set(items: &JsValue) -> Result<Promise, JsValue>;

    /// `chrome.runtime.sendMessage` to the extension's own pages (the panels).
    #[wasm_bindgen(catch, js_namespace = ["chrome", "runtime"], js_name = sendMessage)]
    pub fn runtime_send_message(message: &JsValue) -> Result<Promise, JsValue>;

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

/// Resolves after `ms` milliseconds (the worker's own `setTimeout`).
pub async fn sleep(ms: i32) {
    let promise = Promise::new(&mut |resolve, _reject| {
        set_timeout(&resolve, ms);
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}

/// The JSON text of what `get` (`chrome.storage.{local,session}.get`) holds under `key`;
/// `None` when nothing is stored there. One copy of these awaits for every stored value.
pub async fn stored_json(
    get: fn(&JsValue) -> Result<Promise, JsValue>,
    key: &str,
) -> Result<Option<String>, JsValue> {
    let key = JsValue::from_str(key);
    let items = wasm_bindgen_futures::JsFuture::from(get(&key)?).await?;
    let value = js_sys::Reflect::get(&items, &key)?;
    if value.is_undefined() {
        return Ok(None);
    }
    Ok(Some(String::from(js_sys::JSON::stringify(&value)?)))
}

/// Stores the JSON text `json` under `key` in `chrome.storage.local` (as the value it is).
pub async fn store_json(key: &str, json: &str) -> Result<(), JsValue> {
    let items = js_sys::Object::new();
    js_sys::Reflect::set(&items, &key.into(), &js_sys::JSON::parse(json)?)?;
    wasm_bindgen_futures::JsFuture::from(storage_local_set(&items)?)
        .await
        .map(|_| ())
}
