//! Keeps the end of the conversation in view while the reader is there, and leaves a reader
//! who scrolled up where they are.
//!
//! The conversation's height changes under Tandem's feet: parts of a long answer are laid
//! out at an estimated height (`content-visibility`, see markdown.rs) until the browser
//! renders them, which can happen right after Tandem scrolled to the end, and a shrinking
//! conversation pulls the scroll position up with it. So "not at the end" does not mean the
//! reader left. The reader left when the position is above where Tandem put it although
//! the conversation did not get shorter since; anything else is the layout moving, and the
//! end is brought back. A resize observer does that whenever the conversation's height
//! changes, after layout and before paint.

use std::cell::Cell;

use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlElement};

use crate::dom::{self, DomError};

thread_local! {
    /// The reader is at the end of the conversation.
    static FOLLOWING: Cell<bool> = const { Cell::new(true) };
    /// Where Tandem last scrolled the conversation to (`scrollTop`), and how tall the
    /// conversation was then (`scrollHeight`).
    static PUT_AT: Cell<(i32, i32)> = const { Cell::new((0, 0)) };
}

/// Listens to the reader's scrolling and to the conversation's size.
pub fn wire() -> Result<(), DomError> {
    let main = conversation()?;
    dom::on(&main, "scroll", |_: web_sys::Event| {
        let _ = following();
    });
    let list: Element = dom::by_id::<HtmlElement>("messages")?.into();
    let resized = Closure::<dyn FnMut()>::new(|| {
        if following() {
            to_end();
        }
    });
    let observer = web_sys::ResizeObserver::new(resized.as_ref().unchecked_ref())
        .map_err(|_| DomError::Missing("messages"))?;
    observer.observe(&list);
    // Both live as long as the panel.
    resized.forget();
    std::mem::forget(observer);
    Ok(())
}

/// Whether new text may scroll the conversation: the reader has not scrolled up since
/// Tandem last put it at the end, or has come back to the end.
pub fn following() -> bool {
    let Ok(main) = conversation() else {
        return false;
    };
    let (top, height) = (main.scroll_top(), main.scroll_height());
    let (put_top, put_height) = PUT_AT.with(Cell::get);
    if top + main.client_height() >= height - 32 {
        FOLLOWING.with(|f| f.set(true));
    } else if top < put_top - 1 && height >= put_height {
        FOLLOWING.with(|f| f.set(false));
    }
    FOLLOWING.with(Cell::get)
}

/// Scrolls to the end: the user sent something, or new text came while they follow.
pub fn to_end() {
    if let Ok(main) = conversation() {
        main.set_scroll_top(main.scroll_height());
        PUT_AT.with(|p| p.set((main.scroll_top(), main.scroll_height())));
        FOLLOWING.with(|f| f.set(true));
    }
}

fn conversation() -> Result<HtmlElement, DomError> {
    dom::document()?
        .query_selector("main")
        .ok()
        .flatten()
        .and_then(|e| e.dyn_into::<HtmlElement>().ok())
        .ok_or(DomError::Missing("main"))
}
