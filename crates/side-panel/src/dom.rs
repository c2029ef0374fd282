//! Small DOM helpers so the UI code reads as what it does.

use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Document, Element, HtmlElement};

#[derive(Debug, thiserror::Error)]
pub enum DomError {
    #[error("the side panel page has no element #{0} of the expected kind")]
    Missing(&'static str),
    #[error("no document: the side panel script ran outside a page")]
    NoDocument,
}

pub fn document() -> Result<Document, DomError> {
    web_sys::window()
        .and_then(|w| w.document())
        .ok_or(DomError::NoDocument)
}

/// The element with `id`, as the type the page promises.
pub fn by_id<T: JsCast>(id: &'static str) -> Result<T, DomError> {
    document()?
        .get_element_by_id(id)
        .and_then(|e| e.dyn_into::<T>().ok())
        .ok_or(DomError::Missing(id))
}

/// Adds a listener that lives as long as the page (the panel never removes its controls).
pub fn on<E: wasm_bindgen::convert::FromWasmAbi + 'static>(
    target: &web_sys::EventTarget,
    event: &str,
    handler: impl FnMut(E) + 'static,
) {
    let closure = Closure::<dyn FnMut(E)>::new(handler);
    // Registration only fails for non-EventTargets, which `target` cannot be.
    let _ = target.add_event_listener_with_callback(event, closure.as_ref().unchecked_ref());
    closure.forget();
}

pub fn create(tag: &str, class: &str) -> Result<HtmlElement, DomError> {
    let el: Element = document()?
        .create_element(tag)
        .map_err(|_| DomError::NoDocument)?;
    el.set_class_name(class);
    el.dyn_into::<HtmlElement>()
        .map_err(|_| DomError::NoDocument)
}

pub fn set_attr(el: &Element, name: &str, value: &str) {
    // Only fails for invalid attribute names, and ours are literals.
    let _ = el.set_attribute(name, value);
}

/// `chrome.storage` items object `{ key: value }`.
pub fn items(key: &str, value: &JsValue) -> JsValue {
    let obj = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&obj, &key.into(), value);
    obj.into()
}

/// A fresh id for a request or message: unique within this panel's life and across reloads.
pub fn fresh_id(prefix: &str) -> String {
    let random = (js_sys::Math::random() * 1e9) as u64;
    format!("{prefix}-{}-{random}", js_sys::Date::now() as u64)
}
