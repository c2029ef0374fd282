//! Core's sentences ([`tandem_core::i18n::Msg`]) in Chrome's UI language: the template of a
//! key is `chrome.i18n.getMessage(key, ["$1", …, "$9"])` (each substitution is its own
//! placeholder again, so core fills in the arguments with their emphasis), English from
//! core's table where the catalog has no such message or there is no `chrome.i18n`.

use tandem_core::i18n::{Msg, Piece};
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_namespace = ["chrome", "i18n"], js_name = getMessage)]
    fn get_message(name: &str, substitutions: &JsValue) -> Result<JsValue, JsValue>;
}

/// The UI language's template of `key` with its `$1`…`$9` left in place; `None` when the
/// catalogs have no such message.
pub fn template(key: &str) -> Option<String> {
    let same = js_sys::Array::new();
    for n in 1..=9 {
        same.push(&format!("${n}").into());
    }
    get_message(key, &same)
        .ok()
        .and_then(|v| v.as_string())
        .filter(|m| !m.is_empty())
}

/// `msg` in the UI language, as pieces with their emphasis.
pub fn pieces(msg: &Msg) -> Vec<Piece> {
    msg.render(&template)
}

/// `msg` in the UI language, as plain text.
pub fn plain(msg: &Msg) -> String {
    msg.plain(&template)
}

/// The sentences one after the other, in the UI language.
pub fn plain_all(msgs: &[Msg]) -> String {
    tandem_core::i18n::plain_all(msgs, &template)
}

/// The catalog message `key` (no arguments) in the UI language, English when there is none.
pub fn label(key: &str) -> String {
    plain(&Msg {
        key: key.to_string(),
        args: Vec::new(),
    })
}
