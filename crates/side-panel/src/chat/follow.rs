//! Keeps the end of the conversation in view while the reader is there, and leaves a reader
//! who scrolled up where they are.
//!
//! Whether the reader follows is decided by what the reader does, never by the geometry: the
//! conversation moves under Tandem's feet (parts of a long answer are laid out at an
//! estimated height until the browser renders them, see markdown.rs; the composer changes
//! height when an answer ends), so "not at the end" does not mean the reader left, and
//! guessing from positions lost the end of long answers on slow machines. The reader leaves
//! by scrolling up (wheel, touch, the scrollbar, keys) and comes back by scrolling down to the
//! end, or by sending. While they follow, every change of the conversation's height brings
//! the end back into view: a resize observer runs after layout and before paint.

use std::cell::{Cell, RefCell};

use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlElement, KeyboardEvent, MouseEvent, WheelEvent};

use crate::dom::{self, DomError};

thread_local! {
    /// The reader is at the end of the conversation.
    static FOLLOWING: Cell<bool> = const { Cell::new(true) };
    /// The position last seen (by a `scroll` event, or set by Tandem), to tell the reader
    /// scrolling down from anything else.
    static LAST_TOP: Cell<i32> = const { Cell::new(0) };
    /// The reader's last gesture went up (a wheel turned up, an up key). Until they turn
    /// down again, a scroll event that ends near the end is not theirs: the browser moved
    /// the conversation (scroll anchoring as parts above get their real height), or the
    /// event of an older position came late, and following again then pulled the reader
    /// back down from where they had just gone.
    static WENT_UP: Cell<bool> = const { Cell::new(false) };
    /// The conversation's scroller (`main`), found once: it is read at every frame of an
    /// answer and at every scroll event.
    static MAIN: RefCell<Option<HtmlElement>> = const { RefCell::new(None) };
}

/// Listens to the reader's scrolling and to the conversation's size.
pub fn wire() -> Result<(), DomError> {
    let main: HtmlElement = dom::by_id("chat-main")?;
    MAIN.with(|m| m.replace(Some(main)));
    // `up`: whether the gesture went up; a touch or the scrollbar may go either way.
    let leave = |up: bool| {
        FOLLOWING.with(|f| f.set(false));
        WENT_UP.with(|w| w.set(up));
    };
    dom::on("chat-main", "wheel", move |e: WheelEvent| {
        let Ok(m) = conversation() else {
            return;
        };
        // Up, where there is somewhere to go: a wheel turned on a conversation that fits on
        // screen is no reading. Judged by the size, not by the position: the position may
        // already be the wheel's own when a busy panel handles the event late.
        if e.delta_y() < 0.0 && m.scroll_height() > m.client_height() {
            leave(true);
        }
        if e.delta_y() > 0.0 {
            WENT_UP.with(|w| w.set(false));
        }
        // Down as far as the end: follow again. Decided from the wheel itself, because the
        // scroll event comes a frame later, when a streaming answer may already have grown
        // past where the wheel stopped, and the reader would be left behind.
        let reach = f64::from(m.scroll_top()) + f64::from(m.client_height()) + wheel_pixels(&e);
        if e.delta_y() > 0.0 && reach >= f64::from(m.scroll_height()) - 32.0 {
            FOLLOWING.with(|f| f.set(true));
        }
    })?;
    dom::on("chat-main", "touchmove", move |_: web_sys::Event| {
        leave(false)
    })?;
    // A press right of the content box is on the scrollbar; a press in the conversation
    // (selecting text, Copy) is not.
    dom::on("chat-main", "pointerdown", move |e: MouseEvent| {
        let on_main = e
            .target()
            .and_then(|t| t.dyn_into::<Element>().ok())
            .is_some_and(|t| t.tag_name().eq_ignore_ascii_case("main"));
        if on_main && conversation().is_ok_and(|m| e.offset_x() >= m.client_width()) {
            leave(false);
        }
    })?;
    dom::on("chat-main", "keydown", move |e: KeyboardEvent| {
        let key = e.key();
        let up = matches!(key.as_str(), "PageUp" | "ArrowUp" | "Home");
        if up || (key == " " && e.shift_key()) {
            leave(true);
        } else if matches!(key.as_str(), "PageDown" | "ArrowDown" | "End" | " ") {
            WENT_UP.with(|w| w.set(false));
        }
    })?;
    dom::on("chat-main", "scroll", |_: web_sys::Event| {
        if let Ok(main) = conversation() {
            let top = main.scroll_top();
            // Strictly down: the event of Tandem's own scroll to the end (position unchanged
            // since) may be dispatched after the reader's wheel, and must not undo it.
            let down = top > LAST_TOP.with(Cell::get);
            LAST_TOP.with(|t| t.set(top));
            // Back at the end by scrolling down: follow again. Not after a gesture up (see
            // WENT_UP): the reader who turned the wheel up did not come back by it.
            let went_up = WENT_UP.with(Cell::get);
            if down && !went_up && top + main.client_height() >= main.scroll_height() - 32 {
                FOLLOWING.with(|f| f.set(true));
            }
        }
    })?;
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

/// How far down a wheel event scrolls, in pixels (it may count lines or pages).
fn wheel_pixels(e: &WheelEvent) -> f64 {
    match e.delta_mode() {
        WheelEvent::DOM_DELTA_PIXEL => e.delta_y(),
        // Chrome scrolls about 40 px a line.
        WheelEvent::DOM_DELTA_LINE => e.delta_y() * 40.0,
        _ => e.delta_y() * conversation().map_or(0.0, |m| f64::from(m.client_height())),
    }
}

/// Whether new text may scroll the conversation.
pub fn following() -> bool {
    FOLLOWING.with(Cell::get)
}

/// Scrolls to the end: the user sent something, or new text came while they follow.
pub fn to_end() {
    if let Ok(main) = conversation() {
        main.set_scroll_top(main.scroll_height());
        LAST_TOP.with(|t| t.set(main.scroll_top()));
        FOLLOWING.with(|f| f.set(true));
        WENT_UP.with(|w| w.set(false));
    }
}

fn conversation() -> Result<HtmlElement, DomError> {
    MAIN.with(|m| m.borrow().clone())
        .ok_or(DomError::Missing("main"))
}
