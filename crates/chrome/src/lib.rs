//! The bindings the service worker and the side panel share. Each side binds the `chrome.*`
//! calls only it makes in its own `chrome` module; what both need is here, once, so that the
//! sender check in particular has one reading of Chrome's `MessageSender`.

pub mod i18n;

use js_sys::Reflect;
use tandem_core::protocol::Sender;
use wasm_bindgen::JsValue;
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

/// What a thrown JS value says, for a sentence a person reads: a string as it is, the
/// `message` of an `Error` or of an error-like object (`{message}`, as some APIs reject with),
/// "unknown error" for `undefined` or `null`, anything else as wasm-bindgen shows it. Takes the
/// value or a reference, so it serves as `map_err(js_text)`.
pub fn js_text(value: impl AsRef<JsValue>) -> String {
    text_of(value.as_ref())
}

fn text_of(value: &JsValue) -> String {
    if let Some(s) = value.as_string() {
        return s;
    }
    if value.is_undefined() || value.is_null() {
        return "unknown error".into();
    }
    if let Some(message) = Reflect::get(value, &"message".into())
        .ok()
        .and_then(|m| m.as_string())
    {
        return message;
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

#[cfg(all(test, target_arch = "wasm32"))]
mod tests {
    use super::*;
    use wasm_bindgen::prelude::*;
    use wasm_bindgen_test::*;

    wasm_bindgen_test_configure!(run_in_browser);

    #[wasm_bindgen(inline_js = "
        export function set_runtime_id(id) {
            globalThis.chrome = id === undefined ? undefined : { runtime: { id } };
        }
        export function reader(chunks, fail) {
            let i = 0;
            return new ReadableStream({
                pull(controller) {
                    if (i < chunks.length) { controller.enqueue(chunks[i++]); return; }
                    if (fail) { controller.error(new TypeError('network error')); return; }
                    controller.close();
                },
            }).getReader();
        }
    ")]
    extern "C" {
        fn set_runtime_id(id: Option<String>);
        fn reader(chunks: Vec<JsValue>, fail: bool) -> web_sys::ReadableStreamDefaultReader;
    }

    fn sender(id: &str, url: &str, in_tab: bool) -> JsValue {
        let s = js_sys::Object::new();
        Reflect::set(&s, &"id".into(), &id.into()).unwrap();
        Reflect::set(&s, &"url".into(), &url.into()).unwrap();
        if in_tab {
            Reflect::set(&s, &"tab".into(), &js_sys::Object::new()).unwrap();
        }
        s.into()
    }

    #[wasm_bindgen_test]
    fn thrown_values_read_as_text() {
        assert_eq!(js_text(JsValue::from_str("refused")), "refused");
        assert_eq!(js_text(js_sys::Error::new("no tab")), "no tab");
        assert_eq!(js_text(JsValue::from(42)), "JsValue(42)");
        assert_eq!(js_text(JsValue::UNDEFINED), "unknown error");
        let error_like = js_sys::Object::new();
        Reflect::set(&error_like, &"message".into(), &"quota exceeded".into()).unwrap();
        assert_eq!(js_text(error_like), "quota exceeded");
    }

    #[wasm_bindgen_test]
    fn a_sender_is_judged_against_tandems_own_id() {
        let panel = "chrome-extension://tandemid/sidepanel.html";
        set_runtime_id(Some("tandemid".into()));
        assert_eq!(own_id(), "tandemid");
        assert!(sender_is(&sender("tandemid", panel, false), |s, own| s
            .is_own_panel(own)));
        // Another extension's page, Tandem's content script (in a tab), and a sender with
        // nothing readable are not the panel.
        let other = "chrome-extension://otherid/sidepanel.html";
        assert!(!sender_is(&sender("otherid", other, false), |s, own| s
            .is_own_panel(own)));
        assert!(!sender_is(
            &sender("tandemid", "https://shop.tandem.test/", true),
            |s, own| s.is_own_worker(own)
        ));
        assert!(!sender_is(&JsValue::NULL, |s, own| s.is_own_panel(own)));
        // Without an id of its own Tandem trusts no one, whatever the check says.
        set_runtime_id(None);
        assert_eq!(own_id(), "");
        assert!(!sender_is(&sender("", panel, false), |_, _| true));
    }

    #[wasm_bindgen_test]
    async fn a_reader_gives_each_chunk_then_none_or_its_error() {
        let r = reader(vec!["a".into(), "b".into()], false);
        assert_eq!(
            next_chunk(&r).await.unwrap().and_then(|v| v.as_string()),
            Some("a".into())
        );
        assert_eq!(
            next_chunk(&r).await.unwrap().and_then(|v| v.as_string()),
            Some("b".into())
        );
        assert!(next_chunk(&r).await.unwrap().is_none());
        let r = reader(vec!["a".into()], true);
        assert!(next_chunk(&r).await.unwrap().is_some());
        assert_eq!(js_text(next_chunk(&r).await.unwrap_err()), "network error");
    }
}
