//! A tiny event hub between views that must not know each other: the conversation says
//! what happened to it (a debug report came with its answer, it was cleared), and answers
//! one question about itself (the text of a message); whoever cares listens or asks. Like
//! the Port's dispatch, this module knows no view.

use std::cell::{Cell, RefCell};

/// What happened in a view, for the others.
pub enum Event<'a> {
    /// The worker's report of the send behind the answer being streamed.
    Report(&'a serde_json::Value),
    /// The conversation on screen was emptied (cleared, or another tab's shown).
    Cleared,
}

/// The text of the message with an id, when the conversation holds it.
type MessageText = fn(&str) -> Option<String>;

thread_local! {
    static LISTENERS: RefCell<Vec<fn(&Event)>> = const { RefCell::new(Vec::new()) };
    static MESSAGE_TEXT: Cell<Option<MessageText>> = const { Cell::new(None) };
}

/// `f` hears every event (views register when they are wired).
pub(crate) fn listen(f: fn(&Event)) {
    LISTENERS.with(|l| l.borrow_mut().push(f));
}

/// Tells every listener.
pub(crate) fn publish(event: &Event) {
    let listeners = LISTENERS.with(|l| l.borrow().clone());
    listeners.iter().for_each(|f| f(event));
}

/// The conversation answers [`message_text`].
pub(crate) fn answer_message_text(f: MessageText) {
    MESSAGE_TEXT.with(|m| m.set(Some(f)));
}

/// The text of the conversation's message `id`; `None` when it is not held (or no
/// conversation answers).
pub(crate) fn message_text(id: &str) -> Option<String> {
    MESSAGE_TEXT.with(Cell::get).and_then(|f| f(id))
}
