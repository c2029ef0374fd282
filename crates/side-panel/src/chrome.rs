//! The `chrome.*` functions the panel uses, bound by hand.

use js_sys::{Function, Promise};
use tandem_chrome::js_text;
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

    #[wasm_bindgen(catch, js_namespace = ["chrome", "storage", "session"], js_name = get)]
    fn storage_session_get(keys: &JsValue) -> Result<Promise, JsValue>;

    #[wasm_bindgen(catch, js_namespace = ["chrome", "permissions"], js_name = contains)]
    pub fn permissions_contains(permissions: &JsValue) -> Result<Promise, JsValue>;

    #[wasm_bindgen(catch, js_namespace = ["chrome", "permissions"], js_name = request)]
    pub fn permissions_request(permissions: &JsValue) -> Result<Promise, JsValue>;

    #[wasm_bindgen(catch, js_namespace = ["chrome", "tabs"], js_name = query)]
    fn tabs_query(query: &JsValue) -> Result<Promise, JsValue>;
}

/// The tab active in the panel's window (a `chrome.tabs.Tab`); `None` when Chrome does not
/// say (no tab).
pub async fn active_tab() -> Option<JsValue> {
    let query = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&query, &"active".into(), &JsValue::TRUE);
    let _ = js_sys::Reflect::set(&query, &"currentWindow".into(), &JsValue::TRUE);
    let tabs = wasm_bindgen_futures::JsFuture::from(tabs_query(&query).ok()?)
        .await
        .ok()?;
    js_sys::Reflect::get(&tabs, &0.into())
        .ok()
        .filter(|t| t.is_object())
}

/// The JSON text stored under `key` in `chrome.storage.local`; `None` when nothing is.
pub async fn local_json(key: &str) -> Result<Option<String>, String> {
    stored_json(storage_local_get(&key.into()).map_err(js_text)?, key).await
}

/// The JSON text stored under `key` in `chrome.storage.session`; `None` when nothing is.
pub async fn session_json(key: &str) -> Result<Option<String>, String> {
    stored_json(storage_session_get(&key.into()).map_err(js_text)?, key).await
}

async fn stored_json(promise: Promise, key: &str) -> Result<Option<String>, String> {
    let items = wasm_bindgen_futures::JsFuture::from(promise)
        .await
        .map_err(js_text)?;
    let value = js_sys::Reflect::get(&items, &key.into()).unwrap_or(JsValue::UNDEFINED);
    if value.is_undefined() {
        return Ok(None);
    }
    let json = js_sys::JSON::stringify(&value).map_err(js_text)?;
    Ok(Some(String::from(json)))
}

/// Runs `changed` whenever the worker (or anyone) changes `key` in `chrome.storage.local`:
/// the lists the panel shows from storage redraw themselves this way.
pub fn on_local_change(key: &'static str, changed: impl Fn() + 'static) {
    on_change("local", key, changed);
}

/// As [`on_local_change`], for `chrome.storage.session`.
pub fn on_session_change(key: &'static str, changed: impl Fn() + 'static) {
    on_change("session", key, changed);
}

fn on_change(area_name: &'static str, key: &'static str, changed: impl Fn() + 'static) {
    let listener =
        Closure::<dyn FnMut(JsValue, JsValue)>::new(move |changes: JsValue, area: JsValue| {
            let ours = area.as_string().as_deref() == Some(area_name)
                && js_sys::Reflect::has(&changes, &key.into()).unwrap_or(false);
            if ours {
                changed();
            }
        });
    let event = js_sys::Reflect::get(&js_sys::global(), &"chrome".into())
        .and_then(|c| js_sys::Reflect::get(&c, &"storage".into()))
        .and_then(|s| js_sys::Reflect::get(&s, &"onChanged".into()));
    match event {
        Ok(e) if !e.is_undefined() => e
            .unchecked_into::<Event>()
            .add_listener(listener.as_ref().unchecked_ref()),
        _ => web_sys::console::warn_1(&"Tandem: chrome.storage.onChanged is missing".into()),
    }
    listener.forget();
}
