//! Core's sentences ([`tandem_core::i18n::Msg`]) in Chrome's UI language: the template of a
//! key is `chrome.i18n.getMessage(key, ["$1", …, "$9"])` (each substitution is its own
//! placeholder again, so core fills in the arguments with their emphasis), English from
//! core's table where the catalog has no such message or there is no `chrome.i18n`.

use tandem_core::i18n::{Msg, Piece, PLURAL_QUESTION};
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_namespace = ["chrome", "i18n"], js_name = getMessage)]
    fn get_message(name: &str, substitutions: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "i18n"], js_name = getUILanguage)]
    fn ui_language() -> Result<JsValue, JsValue>;
}

thread_local! {
    /// The UI language's plural rules, made once: the language does not change while a
    /// context lives.
    static PLURALS: Option<js_sys::Intl::PluralRules> = plural_rules();
}

fn plural_rules() -> Option<js_sys::Intl::PluralRules> {
    let lang = ui_language().ok()?.as_string()?;
    let locales = js_sys::Array::of1(&lang.into());
    Some(js_sys::Intl::PluralRules::new(
        &locales,
        &js_sys::Object::new(),
    ))
}

/// The plural category of `n` in the UI language (`one`, `few`, `many`, `other`…), by the
/// browser's own CLDR rules.
fn plural_category(n: &str) -> Option<String> {
    let n = tandem_core::float_text::parse_f64(n)?;
    PLURALS.with(|rules| rules.as_ref().and_then(|r| r.select(n).as_string()))
}

/// The UI language's template of `key` with its `$1`…`$9` left in place; `None` when the
/// catalogs have no such message. Also answers core's question `@plural:<n>` (see
/// [`PLURAL_QUESTION`]) with the UI language's plural category of `n`.
pub fn template(key: &str) -> Option<String> {
    if let Some(n) = key.strip_prefix(PLURAL_QUESTION) {
        return plural_category(n);
    }
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

#[cfg(all(test, target_arch = "wasm32"))]
mod tests {
    use super::*;
    use tandem_core::i18n::count;
    use wasm_bindgen_test::*;

    wasm_bindgen_test_configure!(run_in_browser);

    #[wasm_bindgen(inline_js = "
        export function speak_french() {
            const fr = { nTokens: '$1 jetons', nTokens_one: '$1 jeton' };
            globalThis.chrome = { i18n: {
                getUILanguage: () => 'fr',
                getMessage: (key, subs) => fr[key] ?? '',
            } };
        }
    ")]
    extern "C" {
        fn speak_french();
    }

    #[wasm_bindgen_test]
    fn a_count_reads_in_the_ui_languages_plural_form_by_the_browsers_rules() {
        speak_french();
        let tokens = |n| plain(&Msg::new("nTokens", vec![count(n)]));
        // French counts 0 and 1 as one (English would say "0 tokens").
        assert_eq!(tokens(0), "0 jeton");
        assert_eq!(tokens(1), "1 jeton");
        assert_eq!(tokens(2), "2 jetons");
    }
}
