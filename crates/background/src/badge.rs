//! The toolbar badge: how many questions wait for the person, and (its title, read on hover
//! and by screen readers) what they are. Seen with the panel closed, which is when a task's
//! question or a provider's request would otherwise go unnoticed. Each source reports its
//! own key (`providers`, `task`, `call:<id>`); the badge is their union.

use std::cell::RefCell;

use js_sys::{Object, Reflect};
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_namespace = ["chrome", "action"], js_name = setBadgeText)]
    fn set_badge_text(details: &JsValue) -> Result<js_sys::Promise, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "action"], js_name = setTitle)]
    fn set_title(details: &JsValue) -> Result<js_sys::Promise, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "action"], js_name = setBadgeBackgroundColor)]
    fn set_badge_color(details: &JsValue) -> Result<js_sys::Promise, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "i18n"], js_name = getMessage)]
    fn get_message(name: &str) -> Result<JsValue, JsValue>;
}

/// The manifest's `action.default_title` (its message, in the UI language), shown when
/// nothing waits.
fn idle_title() -> String {
    get_message("actionTitle")
        .ok()
        .and_then(|v| v.as_string())
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| "Open Tandem".into())
}

thread_local! {
    /// What waits, by source, in the order it was asked.
    static WAITING: RefCell<Vec<(String, String)>> = const { RefCell::new(Vec::new()) };
}

/// The source `key` now waits for `what` (a sentence), or no longer waits (`None`).
pub(crate) fn set(key: &str, what: Option<String>) {
    let changed = WAITING.with(|w| {
        let mut w = w.borrow_mut();
        let before = w.clone();
        match what {
            Some(text) => match w.iter_mut().find(|(k, _)| k == key) {
                Some(entry) => entry.1 = text,
                None => w.push((key.to_string(), text)),
            },
            None => w.retain(|(k, _)| k != key),
        }
        *w != before
    });
    if changed {
        show();
    }
}

fn show() {
    let sentences: Vec<String> =
        WAITING.with(|w| w.borrow().iter().map(|(_, t)| t.clone()).collect());
    let text = match sentences.len() {
        0 => String::new(),
        n => n.to_string(),
    };
    let title = if sentences.is_empty() {
        idle_title()
    } else {
        tandem_chrome::i18n::plain(&tandem_core::i18n::Msg::new(
            "badgeWaiting",
            vec![tandem_core::i18n::text(sentences.join(" "))],
        ))
    };
    let call = |f: fn(&JsValue) -> Result<js_sys::Promise, JsValue>, key: &str, value: &str| {
        let details = Object::new();
        let _ = Reflect::set(&details, &key.into(), &value.into());
        // A browser without the action API (none that runs Tandem) only loses the badge.
        if let Err(e) = f(&details) {
            crate::log_error("the toolbar badge could not be set", &e);
        }
    };
    if !text.is_empty() {
        call(set_badge_color, "color", "#b3261e");
    }
    call(set_badge_text, "text", &text);
    call(set_title, "title", &title);
}

/// At worker start the badge Chrome still shows may be stale: it is set again from the
/// stored truth (the registry reports its waiting providers, `registry::start`; the task
/// reports itself when it loads).
pub(crate) fn start() {
    show();
}

/// The providers waiting for Allow / Deny.
pub(crate) fn providers(registry: &tandem_core::tools::Registry) {
    let names: Vec<&str> = registry
        .providers()
        .filter(|p| p.decision() == tandem_core::tools::Decision::Pending)
        .map(|p| {
            if p.name().is_empty() {
                p.id()
            } else {
                p.name()
            }
        })
        .collect();
    set(
        "providers",
        tandem_core::agent::waiting::providers_waiting(&names)
            .map(|m| tandem_chrome::i18n::plain(&m)),
    );
}
