//! The bindings the service worker and the side panel share. Each side binds the `chrome.*`
//! calls only it makes in its own `chrome` module; what both need is here, once, so that the
//! sender check in particular has one reading of Chrome's `MessageSender`.

use js_sys::Reflect;
use tandem_core::protocol::Sender;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// `chrome.runtime.id`: Tandem's own extension id (empty where there is no `chrome.runtime`).
pub fn own_id() -> String {
    Reflect::get(&js_sys::global(), &"chrome".into())
        .and_then(|c| Reflect::get(&c, &"runtime".into()))
        .and_then(|r| Reflect::get(&r, &"id".into()))
        .ok()
        .and_then(|id| id.as_string())
        .unwrap_or_default()
}

/// Reads Chrome's `MessageSender` and lets `trusted` (one of `Sender`'s checks) judge it
/// against Tandem's own id. Anything unreadable is untrusted.
pub fn sender_is(sender: &JsValue, trusted: impl Fn(&Sender, &str) -> bool) -> bool {
    let text = |key: &str| {
        Reflect::get(sender, &key.into())
            .ok()
            .and_then(|v| v.as_string())
    };
    let (id, url) = (text("id"), text("url"));
    let in_tab = Reflect::get(sender, &"tab".into()).is_ok_and(|t| t.is_object());
    let own = own_id();
    !own.is_empty()
        && trusted(
            &Sender {
                id: id.as_deref(),
                url: url.as_deref(),
                in_tab,
            },
            &own,
        )
}

/// What a thrown JS value says: a string as it is, an `Error`'s message, anything else as
/// wasm-bindgen shows it. Takes the value or a reference, so it serves as `map_err(js_text)`.
pub fn js_text(value: impl AsRef<JsValue>) -> String {
    text_of(value.as_ref())
}

fn text_of(value: &JsValue) -> String {
    if let Some(s) = value.as_string() {
        return s;
    }
    if let Some(e) = value.dyn_ref::<js_sys::Error>() {
        return String::from(e.message());
    }
    format!("{value:?}")
}

/// The next chunk a stream's reader gives (`value`), or `None` once it is done. A chunk that
/// cannot be read as `{done, value}` ends the stream, as `done` would.
pub async fn next_chunk(
    reader: &web_sys::ReadableStreamDefaultReader,
) -> Result<Option<JsValue>, JsValue> {
    let chunk = JsFuture::from(reader.read()).await?;
    let done = Reflect::get(&chunk, &"done".into()).map_or(true, |d| d.is_truthy());
    if done {
        return Ok(None);
    }
    Ok(Some(
        Reflect::get(&chunk, &"value".into()).unwrap_or(JsValue::UNDEFINED),
    ))
}
