//! Small DOM helpers so the UI code reads as what it does.

use wasm_bindgen::closure::Closure;
use wasm_bindgen::convert::FromWasmAbi;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Document, Element, EventTarget, HtmlElement};

#[derive(Debug, thiserror::Error)]
pub enum DomError {
    #[error("the side panel page has no element #{0} of the expected kind")]
    Missing(&'static str),
    #[error("no document: the side panel script ran outside a page")]
    NoDocument,
    #[error("Tandem could not prepare the file ({0}).")]
    File(String),
}

thread_local! {
    /// The panel's document, looked up once: a long answer creates tens of thousands of
    /// elements, and each lookup is two calls out of wasm.
    static DOCUMENT: Option<Document> = web_sys::window().and_then(|w| w.document());
}

pub fn document() -> Result<Document, DomError> {
    DOCUMENT.with(|d| d.clone()).ok_or(DomError::NoDocument)
}

/// The element with `id`, as the type the page promises.
pub fn by_id<T: JsCast>(id: &'static str) -> Result<T, DomError> {
    document()?
        .get_element_by_id(id)
        .and_then(|e| e.dyn_into::<T>().ok())
        .ok_or(DomError::Missing(id))
}

/// Adds a listener to one of the panel's own controls: the element with `id` in
/// `sidepanel.html`, which lives as long as the panel. The listener is never removed (its
/// closure is forgotten), so this is for controls the panel never replaces; elements made at
/// run time (bubbles, cards, list rows) never have an id and take [`on_each`] instead: a
/// forgotten closure keeps whatever it holds alive, and a rebuilt list would pile them up.
pub fn on<E: FromWasmAbi + 'static>(
    id: &'static str,
    event: &str,
    handler: impl FnMut(E) + 'static,
) -> Result<(), DomError> {
    listen(&by_id::<EventTarget>(id)?, event, handler);
    Ok(())
}

/// [`on`] for the document itself (keys pressed anywhere in the panel).
pub fn on_document<E: FromWasmAbi + 'static>(
    event: &str,
    handler: impl FnMut(E) + 'static,
) -> Result<(), DomError> {
    listen(&document()?.into(), event, handler);
    Ok(())
}

/// One listener, on the panel's own element `within` (an id, as for [`on`]), for every item
/// made inside it at run time that matches `selector` (now or later): `handler` gets the
/// item the event came from (the closest match around its target) and the event. Items
/// carry what the handler needs to know in `data-` attributes. Rebuilding a list adds no
/// listener and holds nothing of the items it replaced.
pub fn on_each<E: FromWasmAbi + JsCast + 'static>(
    within: &'static str,
    selector: &'static str,
    event: &str,
    mut handler: impl FnMut(Element, E) + 'static,
) -> Result<(), DomError> {
    on(within, event, move |e: E| {
        if let Some(item) = item_of(e.unchecked_ref::<web_sys::Event>(), selector) {
            handler(item, e);
        }
    })
}

/// The element matching `selector` around the target of `event`, if any.
pub fn item_of(event: &web_sys::Event, selector: &str) -> Option<Element> {
    event
        .target()?
        .dyn_into::<Element>()
        .ok()?
        .closest(selector)
        .ok()
        .flatten()
}

/// The only place a listener's closure is forgotten: reached through [`on`],
/// [`on_document`] and [`on_each`], whose targets live as long as the panel.
fn listen<E: FromWasmAbi + 'static>(
    target: &EventTarget,
    event: &str,
    handler: impl FnMut(E) + 'static,
) {
    let closure = Closure::<dyn FnMut(E)>::new(handler);
    // Registration only fails for non-EventTargets, which `target` cannot be.
    let _ = target.add_event_listener_with_callback(event, closure.as_ref().unchecked_ref());
    closure.forget();
}

pub fn create(tag: &str, class: &str) -> Result<HtmlElement, DomError> {
    let el: Element = DOCUMENT
        .with(|d| d.as_ref().map(|d| d.create_element(tag)))
        .ok_or(DomError::NoDocument)?
        .map_err(|_| DomError::NoDocument)?;
    // No class: no attribute at all (and one call fewer per element of a long answer).
    if !class.is_empty() {
        el.set_class_name(class);
    }
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

/// Saves `text` as the file `name` (of type `mime`) through an `<a download>` click: no
/// permission, since the person's own click chose to write it to disk.
pub fn download(text: &str, mime: &str, name: &str) -> Result<(), DomError> {
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &options)
        .map_err(|e| DomError::File(tandem_chrome::js_text(e)))?;
    let url = web_sys::Url::create_object_url_with_blob(&blob)
        .map_err(|e| DomError::File(tandem_chrome::js_text(e)))?;
    let link = create("a", "visually-hidden")?;
    set_attr(&link, "href", &url);
    set_attr(&link, "download", name);
    let body = document()?.body().ok_or(DomError::NoDocument)?;
    body.append_child(&link).map_err(|_| DomError::NoDocument)?;
    link.click();
    link.remove();
    // The download has taken the Blob by the next task; until then the URL must stay valid.
    let revoke = Closure::once_into_js(move || {
        let _ = web_sys::Url::revoke_object_url(&url);
    });
    if let Some(window) = web_sys::window() {
        let _ = window
            .set_timeout_with_callback_and_timeout_and_arguments_0(revoke.unchecked_ref(), 1000);
    }
    Ok(())
}
