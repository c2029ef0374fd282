//! "Ask about this page" and "Summarize this page", and the `/page` prefix in the Message box.
//! The panel only asks: the worker reads the page of the tab this panel follows and puts its
//! readable text on the question (`PanelToWorker::Send { page: true }`), or answers with the
//! sentence saying why the page cannot be read, which `chat` shows like any failed send.

use std::cell::RefCell;

use tandem_core::page_text::{page_command, PAGE_QUESTION, SUMMARY_QUESTION};
use web_sys::{HtmlButtonElement, HtmlElement, HtmlTextAreaElement};

use crate::chat;
use crate::dom::{self, DomError};

/// The latest page question's message id, and what goes back into the Message box if it gets
/// no answer: `None` for "Summarize this page", which did not take the box's text. One is
/// enough: one answer streams at a time, and a failure ends it before the next can start.
type GiveBack = Option<(String, Option<String>)>;

thread_local! {
    static GIVE_BACK: RefCell<GiveBack> = const { RefCell::new(None) };
}

pub fn wire() -> Result<(), DomError> {
    let ask: HtmlButtonElement = dom::by_id("ask-page")?;
    let summarize: HtmlButtonElement = dom::by_id("summarize-page")?;
    dom::on(&ask, "click", |_: web_sys::Event| report(ask_from_box()));
    dom::on(&summarize, "click", |_: web_sys::Event| {
        report(send(SUMMARY_QUESTION.to_owned(), None))
    });
    Ok(())
}

fn report(result: Result<(), DomError>) {
    if let Err(e) = result {
        crate::alert::show_error(&e.to_string());
    }
}

/// "Ask about this page": the Message box's text is the question (empty: the worker asks
/// what the page is about).
fn ask_from_box() -> Result<(), DomError> {
    let input: HtmlTextAreaElement = dom::by_id("message")?;
    let typed = input.value();
    let question = page_command(&typed).unwrap_or(typed.trim()).to_owned();
    if chat::is_streaming() {
        return Ok(());
    }
    input.set_value("");
    send(question, Some(typed))
}

/// The Message box's text, when it starts with `/page`: asked about the page. `false` when
/// it is an ordinary message.
pub(crate) fn send_if_command(typed: &str) -> Result<bool, DomError> {
    let Some(question) = page_command(typed) else {
        return Ok(false);
    };
    send(question.to_owned(), Some(typed.to_owned()))?;
    Ok(true)
}

fn send(question: String, give_back: Option<String>) -> Result<(), DomError> {
    if chat::is_streaming() {
        return Ok(());
    }
    let question = match question.trim() {
        "" => PAGE_QUESTION.to_owned(),
        _ => question,
    };
    let id = chat::send_page_question(question)?;
    GIVE_BACK.with(|g| *g.borrow_mut() = Some((id, give_back)));
    Ok(())
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
        Some(name) => format!("About this page: {name}"),
        None => "About this page".to_owned(),
    };
    note.set_text_content(Some(&text));
    let _ = bubble.insert_before(&note, bubble.first_child().as_ref());
}
