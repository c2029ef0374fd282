//! "Ask about this page" and "Summarize this page", and the `/page` prefix in the Message box:
//! what `chat` (which owns the buttons and the box) needs for them. The panel only asks: the
//! worker reads the page of the tab this panel follows and puts its readable text on the
//! question (`PanelToWorker::Send { page: true }`), or answers with the sentence saying why
//! the page cannot be read, which `chat` shows like any failed send.

use std::cell::RefCell;

use tandem_core::i18n::text;
use tandem_core::page_text::{page_command, PAGE_QUESTION};
use web_sys::HtmlElement;

use crate::dom;
use crate::i18n::say;

/// The latest page question's message id, and what goes back into the Message box if it gets
/// no answer: `None` for "Summarize this page", which did not take the box's text. One is
/// enough: one answer streams at a time, and a failure ends it before the next can start.
type GiveBack = Option<(String, Option<String>)>;

thread_local! {
    static GIVE_BACK: RefCell<GiveBack> = const { RefCell::new(None) };
}

/// The question "Ask about this page" sends for what the user `typed` in the Message box
/// (a `/page` prefix is dropped; nothing typed asks what the page is about).
pub(crate) fn question_for(typed: &str) -> String {
    let question = page_command(typed).unwrap_or(typed).trim();
    match question {
        "" => PAGE_QUESTION.to_owned(),
        q => q.to_owned(),
    }
}

/// Remembers what goes back into the Message box if the page question `id` gets no answer.
pub(crate) fn remember(id: String, give_back: Option<String>) {
    GIVE_BACK.with(|g| *g.borrow_mut() = Some((id, give_back)));
}

/// What goes back into the Message box for the question `id` that got no answer: what the
/// user had typed for a page question, nothing for "Summarize this page", `typed` for any
/// other message.
pub(crate) fn give_back(id: &str, typed: String) -> Option<String> {
    GIVE_BACK
        .with(|g| g.borrow_mut().take_if(|(page_id, _)| page_id == id))
        .map_or(Some(typed), |(_, back)| back)
}

/// Marks a question's bubble as asked about the page (`name`, when known), instead of showing
/// the page's whole text.
pub(crate) fn mark(bubble: &HtmlElement, name: Option<&str>) {
    let Ok(note) = dom::create("p", "page-source") else {
        return;
    };
    let text = match name.filter(|n| !n.trim().is_empty()) {
        Some(name) => say("chatAboutPageNamed", vec![text(name)]),
        None => say("chatAboutPage", vec![]),
    };
    note.set_text_content(Some(&text));
    let _ = bubble.insert_before(&note, bubble.first_child().as_ref());
}
