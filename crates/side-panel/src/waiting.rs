//! What waits for the person, where they look. A question lives where it belongs (a tool
//! call's card in the conversation, the task card); when it is out of sight (scrolled away, or
//! Settings is open) the pinned line under the header (`#waiting`, `aria-live`) says what
//! waits, and "Show the question" brings it into view with focus on its first button. The
//! toolbar badge is the worker's (`crates/background/src/badge.rs`): it is seen with the
//! panel closed. Not a view: the conversation and the task report their questions here.

use std::cell::RefCell;

use wasm_bindgen::prelude::*;
use web_sys::{HtmlButtonElement, HtmlElement};

use crate::dom::{self, DomError};

#[wasm_bindgen]
extern "C" {
    type Rect;
    #[wasm_bindgen(method, getter)]
    fn top(this: &Rect) -> f64;
    #[wasm_bindgen(method, getter)]
    fn bottom(this: &Rect) -> f64;
    /// An element, for the two calls whose web-sys features the panel does not enable.
    type Placed;
    #[wasm_bindgen(method, js_name = getBoundingClientRect)]
    fn bounding_rect(this: &Placed) -> Rect;
    #[wasm_bindgen(method, js_name = scrollIntoView)]
    fn scroll_into_view_with(this: &Placed, options: &JsValue);
}

/// One question waiting: its element and the line that names it.
struct Ask {
    key: String,
    text: String,
    element: HtmlElement,
}

thread_local! {
    static ASKS: RefCell<Vec<Ask>> = const { RefCell::new(Vec::new()) };
    /// Whether the pinned line shows something: with nothing asked and nothing shown, a
    /// scroll (an answer streaming in) costs nothing here.
    static SHOWN: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

pub fn wire() -> Result<(), DomError> {
    dom::on("waiting-show", "click", |_: web_sys::Event| bring_first())?;
    let document = dom::document()?;
    // Scrolling (events do not bubble: caught on the way down), a view opened or closed (a
    // click), a resize: the question may have come into sight or left it.
    let again = Closure::<dyn FnMut()>::new(later).into_js_value();
    for event in ["scroll", "click"] {
        let _ =
            document.add_event_listener_with_callback_and_bool(event, again.unchecked_ref(), true);
    }
    if let Some(window) = web_sys::window() {
        let _ = window.add_event_listener_with_callback("resize", again.unchecked_ref());
    }
    Ok(())
}

/// `element` asks the person something (`text` names it); it is brought into view now.
pub fn ask(key: &str, text: &str, element: &HtmlElement) {
    ASKS.with(|a| {
        let mut asks = a.borrow_mut();
        asks.retain(|x| x.key != key);
        asks.push(Ask {
            key: key.to_string(),
            text: text.to_string(),
            element: element.clone(),
        });
    });
    bring(element, false);
    later();
}

/// The question `key` was answered or withdrawn.
pub fn done(key: &str) {
    let had = ASKS.with(|a| {
        let mut asks = a.borrow_mut();
        let before = asks.len();
        asks.retain(|x| x.key != key);
        before != asks.len()
    });
    if had {
        later();
    }
}

/// Renders after the current event (a click that opens a view has its effect by then).
fn later() {
    if !SHOWN.with(|s| s.get()) && ASKS.with(|a| a.borrow().is_empty()) {
        return;
    }
    let render = Closure::once_into_js(render);
    if let Some(window) = web_sys::window() {
        let _ =
            window.set_timeout_with_callback_and_timeout_and_arguments_0(render.unchecked_ref(), 0);
    }
}

/// Whether a person sees `element` now: laid out (its view is open) and inside the window.
fn in_sight(element: &HtmlElement) -> bool {
    if element.offset_parent().is_none() {
        return false;
    }
    let height = web_sys::window()
        .and_then(|w| w.inner_height().ok())
        .and_then(|h| h.as_f64())
        .unwrap_or(0.0);
    let rect = element.unchecked_ref::<Placed>().bounding_rect();
    rect.bottom() > 0.0 && rect.top() < height
}

fn render() {
    ASKS.with(|a| a.borrow_mut().retain(|x| x.element.is_connected()));
    let unseen: Vec<String> = ASKS.with(|a| {
        a.borrow()
            .iter()
            .filter(|x| !in_sight(&x.element))
            .map(|x| x.text.clone())
            .collect()
    });
    let (Ok(row), Ok(line)) = (
        dom::by_id::<HtmlElement>("waiting-row"),
        dom::by_id::<HtmlElement>("waiting-line"),
    ) else {
        return;
    };
    let text = match unseen.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [first, rest @ ..] => format!("{first} (and {} more)", rest.len()),
    };
    // Written only when it changes: every write is announced again.
    if line.text_content().unwrap_or_default() != text {
        line.set_text_content(Some(&text));
    }
    row.set_hidden(text.is_empty());
    SHOWN.with(|s| s.set(!text.is_empty()));
}

/// "Show the question": the first question out of sight, in view, its first button focused.
fn bring_first() {
    let first = ASKS.with(|a| {
        a.borrow()
            .iter()
            .find(|x| x.element.is_connected() && !in_sight(&x.element))
            .map(|x| x.element.clone())
    });
    if let Some(element) = first {
        // A question of the conversation or the task: Settings gives way to it.
        if element.offset_parent().is_none() {
            if let Ok(close) = dom::by_id::<HtmlButtonElement>("settings-close") {
                close.click();
            }
        }
        bring(&element, true);
    }
    later();
}

fn bring(element: &HtmlElement, focus: bool) {
    let options = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&options, &"block".into(), &"nearest".into());
    element
        .unchecked_ref::<Placed>()
        .scroll_into_view_with(&options);
    if focus {
        let button = element
            .query_selector("button, textarea, input")
            .ok()
            .flatten()
            .and_then(|b| b.dyn_into::<HtmlElement>().ok());
        if let Some(b) = button {
            let _ = b.focus();
        }
    }
}
