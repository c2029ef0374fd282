//! The `chrome.*` functions the panel uses, bound by hand.

use js_sys::{Function, Promise};
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    #[derive(Clone, Debug)]
    pub type Port;

    #[wasm_bindgen(method, catch, js_name = postMessage)]
    pub fn post_message(this: &Port, message: &JsValue) -> Result<(), JsValue>;

    #[wasm_bindgen(method, getter, js_name = onMessage)]
    pub fn on_message(this: &Port) -> Event;

    #[wasm_bindgen(method, getter, js_name = onDisconnect)]
    pub fn on_disconnect(this: &Port) -> Event;

    /// A `chrome.events.Event`.
    pub type Event;

    #[wasm_bindgen(method, js_name = addListener)]
    pub fn add_listener(this: &Event, listener: &Function);

    #[wasm_bindgen(catch, js_namespace = ["chrome", "runtime"], js_name = connect)]
    pub fn runtime_connect(info: &JsValue) -> Result<Port, JsValue>;

    #[wasm_bindgen(catch, js_namespace = ["chrome", "storage", "local"], js_name = get)]
    pub fn storage_local_get(keys: &JsValue) -> Result<Promise, JsValue>;

    #[wasm_bindgen(catch, js_namespace = ["chrome", "storage", "local"], js_name = set)]
    pub fn storage_local_set(items: &JsValue) -> Result<Promise, JsValue>;

    #[wasm_bindgen(catch, js_namespace = ["chrome", "permissions"], js_name = contains)]
    pub fn permissions_contains(permissions: &JsValue) -> Result<Promise, JsValue>;

    #[wasm_bindgen(catch, js_namespace = ["chrome", "permissions"], js_name = request)]
    pub fn permissions_request(permissions: &JsValue) -> Result<Promise, JsValue>;
}

pub fn js_text(value: &JsValue) -> String {
    if let Some(s) = value.as_string() {
        return s;
    }
    if let Some(e) = value.dyn_ref::<js_sys::Error>() {
        return String::from(e.message());
    }
    format!("{value:?}")
}
