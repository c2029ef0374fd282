//! The tab the panel follows: the one active in its window. The memory watches Chrome's tab
//! events and sets it; every view that sends something about "this tab" (a chat message, a
//! task) reads it here.

use std::cell::Cell;

thread_local! {
    static FOLLOWED: Cell<Option<i32>> = const { Cell::new(None) };
}

/// The tab that is active in the panel's window; `None` until the first look.
pub fn current() -> Option<i32> {
    FOLLOWED.with(Cell::get)
}

/// The panel now follows `tab`; the one it followed before.
pub(crate) fn follow(tab: i32) -> Option<i32> {
    FOLLOWED.with(|f| f.replace(Some(tab)))
}
