//! The conversation: bubbles, streaming, Stop, errors. The service worker does the provider
//! call; this side keeps the conversation and renders what the Port brings.
//!
//! The chat view owns its parts: the composer's image attachments (`attach`), "Ask about
//! this page" (`page_ask`), the memory that follows the tab (`memory`) and "Save
//! conversation" (`export`). Like every view it imports no other view; the Debug drawer
//! hears of reports and clears through the hub.

mod attach;
mod export;
mod follow;
mod memory;
mod page_ask;

use std::cell::{Cell, RefCell};

use tandem_core::chat::{answer_message, badge_message, incomplete_badge, ChatMessage, Role};
use tandem_core::errors::ErrorKind;
use tandem_core::i18n::{self, Msg};
use tandem_core::protocol::{PanelToWorker, WorkerToPanel};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::{HtmlButtonElement, HtmlElement, HtmlTextAreaElement, KeyboardEvent};

use crate::alert::show_error;
use crate::dom::{self, DomError};
use crate::hub;
use crate::i18n::say;
use crate::markdown::{self, Live};
use crate::port::post;

/// The answer being streamed.
struct Streaming {
    request_id: String,
    /// The id the answer will have in the conversation.
    answer_id: String,
    bubble: HtmlElement,
    /// The answer's Markdown and its rendering; deltas are shown once per frame.
    md: Live,
    /// A frame is asked for to show the deltas that arrived.
    frame_pending: bool,
    /// The worker said the answer is complete while text was still waiting to be shown: it
    /// ends once the frames have shown it all.
    done: Option<Ended>,
    /// The tools called so far, kept with the answer.
    tools: Vec<tandem_core::chat::ToolCard>,
    /// The user message this answers, so a failed send can be given back to the user.
    user_id: String,
    user_bubble: HtmlElement,
}

#[derive(Default)]
struct State {
    messages: Vec<ChatMessage>,
    streaming: Option<Streaming>,
    /// Edit & resend: the newest question, whose text is in the Message box; sending
    /// replaces it and its answer.
    editing: Option<String>,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
    /// Who is told when an answer ends (the memory reopens a conversation it held back).
    static ON_ENDED: RefCell<Vec<fn(&str)>> = const { RefCell::new(Vec::new()) };
}

/// `f` hears of every answer that ends in this panel (done, stopped or failed).
pub(crate) fn on_answer_ended(f: fn(&str)) {
    ON_ENDED.with(|h| h.borrow_mut().push(f));
}

fn answer_ended(request_id: &str) {
    let hooks = ON_ENDED.with(|h| h.borrow().clone());
    hooks.iter().for_each(|f| f(request_id));
}

pub fn wire() -> Result<(), DomError> {
    crate::port::route(crate::port::Route::Chat, receive);
    crate::port::on_gone(worker_gone);
    hub::answer_message_text(message_text);
    dom::on("send", "click", |_: web_sys::Event| report(send_message()))?;
    dom::on("stop", "click", |_: web_sys::Event| stop_streaming())?;
    dom::on("clear", "click", |_: web_sys::Event| {
        report(clear_conversation())
    })?;
    markdown::wire()?;
    dom::on("ask-page", "click", |_: web_sys::Event| {
        report(ask_about_page())
    })?;
    dom::on("summarize-page", "click", |_: web_sys::Event| {
        // One click; the Message box is left alone.
        let question = tandem_core::page_text::SUMMARY_QUESTION.to_owned();
        report(send_page_question(question, None))
    })?;
    dom::on("message", "keydown", |e: KeyboardEvent| {
        // Enter sends; Shift+Enter is a newline; Enter that confirms an IME composition
        // (CJK input) must not send a half-typed message.
        if e.key() == "Enter" && !e.shift_key() && !e.is_composing() {
            e.prevent_default();
            report(send_message());
        }
        // ↑ in an empty box edits the last message (as its Edit button does); anywhere else
        // it moves the caret as usual.
        let plain = !(e.shift_key() || e.ctrl_key() || e.alt_key() || e.meta_key());
        if e.key() == "ArrowUp" && plain && !e.is_composing() && message_box_empty() && edit_last()
        {
            e.prevent_default();
        }
        // Esc gives up an edit (an answer streaming is stopped by the document's handler).
        if e.key() == "Escape" && !e.is_composing() && !is_streaming() && cancel_edit() {
            e.prevent_default();
        }
    })?;
    // Esc stops the answer wherever the focus is in the panel (as Stop does); with no answer
    // streaming it is left to whatever else uses it.
    dom::on_document("keydown", |e: KeyboardEvent| {
        let streaming = is_streaming();
        if e.key() == "Escape" && !e.is_composing() && streaming {
            e.prevent_default();
            stop_streaming();
        }
    })?;
    wire_bubbles()?;
    attach::wire()?;
    follow::wire()?;
    memory::wire()?;
    export::wire()?;
    Ok(())
}

/// The buttons of the bubbles (Copy, Hide from context, Edit, Regenerate): one listener for
/// each kind on the conversation, installed once. A bubble's button says which message it
/// acts on (`data-message`), so switching tabs rebuilds the conversation without adding a
/// listener or keeping anything of the bubbles it replaced.
fn wire_bubbles() -> Result<(), DomError> {
    dom::on_each(
        "messages",
        "button.copy-answer",
        "click",
        |button, _: web_sys::Event| copy_answer(button),
    )?;
    dom::on_each(
        "messages",
        "button.hide-toggle",
        "click",
        |button, _: web_sys::Event| toggle_hidden(&button),
    )?;
    dom::on_each(
        "messages",
        "button.turn-action",
        "click",
        |button, _: web_sys::Event| match button.get_attribute("data-action").as_deref() {
            Some(EDIT) => {
                edit_last();
            }
            Some(REGENERATE) => report(regenerate()),
            _ => {}
        },
    )
}

/// The `data-action` of the newest turn's buttons.
const EDIT: &str = "edit";
const REGENERATE: &str = "regenerate";

fn report(result: Result<(), DomError>) {
    if let Err(e) = result {
        show_error(&e.to_string());
    }
}

fn send_message() -> Result<(), DomError> {
    let input: HtmlTextAreaElement = dom::by_id("message")?;
    let text = input.value();
    if text.trim().is_empty() || is_streaming() {
        return Ok(());
    }
    input.set_value("");
    // "/page …": asked about the page.
    if tandem_core::page_text::page_command(&text).is_some() {
        let question = page_ask::question_for(&text);
        return send_page_question(question, Some(text));
    }
    // Edit & resend: the edited question and its answer leave the conversation, and the
    // worker drops them from the tab's session too (`replaces`).
    let replaces = STATE
        .with(|s| s.borrow_mut().editing.take())
        .and_then(|id| take_back_turn(&id).then_some(id));
    progress("");
    send_text(text, None, attach::take(), replaces)
}

fn message_box_empty() -> bool {
    dom::by_id::<HtmlTextAreaElement>("message").is_ok_and(|i| i.value().is_empty())
}

/// The newest turn: the index of the conversation's last question, when everything after it
/// is its answer.
fn last_turn(messages: &[ChatMessage]) -> Option<usize> {
    let at = messages.iter().rposition(|m| m.role == Role::User)?;
    messages[at + 1..]
        .iter()
        .all(|m| m.role == Role::Assistant)
        .then_some(at)
}

/// The bubbles of the conversation, in order (one per message).
fn bubbles() -> Vec<HtmlElement> {
    let Ok(list) = dom::by_id::<HtmlElement>("messages") else {
        return Vec::new();
    };
    let Ok(nodes) = list.query_selector_all(":scope > article") else {
        return Vec::new();
    };
    (0..nodes.length())
        .filter_map(|i| nodes.get(i)?.dyn_into::<HtmlElement>().ok())
        .collect()
}

/// Takes the newest question `id` and its answer out of the conversation and off the screen,
/// for the question that replaces them; `false` (nothing changes) when `id` is no longer the
/// newest question.
fn take_back_turn(id: &str) -> bool {
    let shown = bubbles();
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        let Some(at) = last_turn(&s.messages).filter(|&at| s.messages[at].id == id) else {
            return false;
        };
        // The screen shows one bubble per message; if it does not, it is not touched.
        if shown.len() == s.messages.len() {
            shown[at..].iter().for_each(|b| b.remove());
        }
        s.messages.truncate(at);
        true
    })
}

/// Regenerate: the newest question asked again for a fresh answer, which replaces the old one
/// (on screen and in the tab's session).
fn regenerate() -> Result<(), DomError> {
    if is_streaming() {
        return Ok(());
    }
    let question = STATE.with(|s| {
        let s = s.borrow();
        let at = last_turn(&s.messages).filter(|&at| at + 1 < s.messages.len())?;
        Some(s.messages[at].clone())
    });
    let Some(question) = question else {
        return Ok(());
    };
    if !take_back_turn(&question.id) {
        return Ok(());
    }
    cancel_edit();
    send_text(
        question.content,
        question.quote,
        question.images,
        Some(question.id),
    )
}

/// Edit & resend (the Edit button, or ↑ in the empty Message box): the newest question's
/// text goes into the Message box (its images back to the attachments); sending replaces the
/// question and its answer. `false` when there is nothing to edit. A question about a page
/// selection is not edited: its selection is not in the box ("Ask Tandem" asks again).
fn edit_last() -> bool {
    if is_streaming() {
        return false;
    }
    let question = STATE.with(|s| {
        let s = s.borrow();
        let at = last_turn(&s.messages)?;
        Some(s.messages[at].clone()).filter(|m| m.quote.is_none())
    });
    let (Some(question), Ok(input)) = (question, dom::by_id::<HtmlTextAreaElement>("message"))
    else {
        return false;
    };
    input.set_value(&question.content);
    let _ = input.focus();
    let end = question.content.encode_utf16().count() as u32;
    let _ = input.set_selection_range(end, end);
    attach::restore(question.images);
    STATE.with(|s| s.borrow_mut().editing = Some(question.id));
    progress(&say("chatEditing", vec![]));
    true
}

/// Gives up an edit: the box is emptied, the conversation is as it was. `false` when no edit
/// was under way.
fn cancel_edit() -> bool {
    if STATE.with(|s| s.borrow_mut().editing.take()).is_none() {
        return false;
    }
    if let Ok(input) = dom::by_id::<HtmlTextAreaElement>("message") {
        input.set_value("");
    }
    let _ = attach::take();
    progress("");
    true
}

/// The per-answer actions that act on the newest turn only: Regenerate on the last answer,
/// Edit on the last question. Placed again whenever the conversation changes; none while an
/// answer streams.
fn place_turn_actions() {
    let shown = bubbles();
    for b in &shown {
        if let Ok(old) = b.query_selector_all(".turn-action") {
            for i in 0..old.length() {
                if let Some(e) = old
                    .get(i)
                    .and_then(|n| n.dyn_into::<web_sys::Element>().ok())
                {
                    e.remove();
                }
            }
        }
    }
    let turn = STATE.with(|s| {
        let s = s.borrow();
        if s.streaming.is_some() || shown.len() != s.messages.len() {
            return None;
        }
        let at = last_turn(&s.messages)?;
        Some((
            at,
            s.messages[at].quote.is_none(),
            at + 1 < s.messages.len(),
        ))
    });
    let Some((at, editable, answered)) = turn else {
        return;
    };
    if editable {
        add_action(
            &shown[at],
            &say("chatEdit", vec![]),
            &say("chatEditTitle", vec![]),
            EDIT,
        );
    }
    if let (true, Some(answer)) = (answered, shown.last()) {
        add_action(
            answer,
            &say("chatRegenerate", vec![]),
            &say("chatRegenerateTitle", vec![]),
            REGENERATE,
        );
    }
}

/// A button of the newest turn; `action` ([`EDIT`], [`REGENERATE`]) is what it does.
fn add_action(bubble: &HtmlElement, label: &str, title: &str, action: &str) {
    let Ok(button) = dom::create("button", "turn-action") else {
        return;
    };
    dom::set_attr(&button, "type", "button");
    dom::set_attr(&button, "title", title);
    button.set_text_content(Some(label));
    dom::set_attr(&button, "data-action", action);
    // With the other actions, under the text (the badge stays the bubble's last words).
    let after = bubble
        .query_selector(".copy-answer")
        .ok()
        .flatten()
        .or_else(|| bubble.query_selector(".text").ok().flatten());
    match after {
        Some(e) => {
            let _ = e.after_with_node_1(&button);
        }
        None => {
            let _ = bubble.append_child(&button);
        }
    }
}

/// "Ask about this page": `question` is sent for the worker to put the page's readable text
/// on; `give_back` is what returns to the Message box if it gets no answer.
fn send_page_question(question: String, give_back: Option<String>) -> Result<(), DomError> {
    if is_streaming() {
        return Ok(());
    }
    cancel_edit();
    let id = send_turn(question, None, Vec::new(), true, None)?;
    page_ask::remember(id, give_back);
    Ok(())
}

/// "Ask about this page": the Message box's text is the question (empty: what the page is
/// about).
fn ask_about_page() -> Result<(), DomError> {
    let input: HtmlTextAreaElement = dom::by_id("message")?;
    if is_streaming() {
        return Ok(());
    }
    let typed = input.value();
    input.set_value("");
    send_page_question(page_ask::question_for(&typed), Some(typed))
}

/// Asks about text the user selected on the page ("Ask Tandem"): it is shown quoted as the
/// user's message and answered as a new question. Nothing happens while an answer streams.
pub(crate) fn ask_about(selection: String) -> Result<(), DomError> {
    if is_streaming() {
        return Ok(());
    }
    cancel_edit();
    send_text(
        tandem_core::memory::SELECTION_QUESTION.to_string(),
        Some(selection),
        Vec::new(),
        None,
    )
}

/// Sends a question; `replaces` names the newest question it takes the place of (already
/// taken off the screen), so the worker's session drops it and its answer too.
fn send_text(
    text: String,
    quote: Option<String>,
    images: Vec<String>,
    replaces: Option<String>,
) -> Result<(), DomError> {
    send_turn(text, quote, images, false, replaces).map(drop)
}

/// Sends the user message `text` (with a selection's `quote`, or about the page) and streams
/// its answer; the message's id.
fn send_turn(
    text: String,
    quote: Option<String>,
    images: Vec<String>,
    page: bool,
    replaces: Option<String>,
) -> Result<String, DomError> {
    show_error("");
    let user = ChatMessage {
        id: dom::fresh_id("m"),
        quote,
        images,
        ..ChatMessage::new(Role::User, text)
    };
    let user_bubble = add_bubble(Role::User, &user.content)?;
    attach::show_in(&user_bubble, &user.images);
    if let Some(quote) = &user.quote {
        add_quote(&user_bubble, quote);
    }
    if page {
        page_ask::mark(&user_bubble, None);
    }
    add_hide_toggle(&user_bubble, &user.id);
    let bubble = add_bubble(Role::Assistant, "")?;
    dom::set_attr(&bubble, "aria-busy", "true");
    let body = text_of(&bubble)?;
    let request_id = dom::fresh_id("r");
    let answer_id = dom::fresh_id("m");
    let messages = STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.messages.push(user.clone());
        s.streaming = Some(Streaming {
            request_id: request_id.clone(),
            answer_id: answer_id.clone(),
            bubble,
            md: Live::new(body),
            frame_pending: false,
            done: None,
            tools: Vec::new(),
            user_id: user.id.clone(),
            user_bubble,
        });
        // Earlier images are not sent again (only the new message's count): keep the Port
        // message small.
        let mut messages = s.messages.clone();
        let last = messages.len().saturating_sub(1);
        messages[..last].iter_mut().for_each(|m| m.images.clear());
        messages
    });
    set_streaming_controls(true);
    if let Err(e) = post(&PanelToWorker::Send {
        request_id: request_id.clone(),
        messages,
        tab_id: crate::tab::current(),
        answer_id,
        replaces,
        page,
    }) {
        finish_with_error(
            &request_id,
            ErrorKind::Network,
            &say("chatWorkerUnreachable", vec![i18n::text(e.to_string())]),
        );
    }
    Ok(user.id)
}

/// Forgets the conversation: nothing of it is sent again, and the screen is empty. The tab's
/// session in the worker is forgotten too.
fn clear_conversation() -> Result<(), DomError> {
    end_streaming();
    clear_view()?;
    let _ = post(&PanelToWorker::Clear {
        tab_id: crate::tab::current(),
    });
    Ok(())
}

/// The id of the answer being streamed, if any.
fn streaming_id() -> Option<String> {
    STATE.with(|s| s.borrow().streaming.as_ref().map(|x| x.request_id.clone()))
}

/// Runs `f` on the answer being streamed, if any.
fn with_streaming<R>(f: impl FnOnce(&mut Streaming) -> R) -> Option<R> {
    STATE.with(|s| s.borrow_mut().streaming.as_mut().map(f))
}

/// Stops the answer being streamed, if any, and ends it here at once.
pub(crate) fn end_streaming() {
    stop_streaming();
    let streaming = streaming_id();
    if let Some(id) = streaming {
        finish_stopped(&id);
    }
}

/// Empties the screen and the panel's copy of the conversation.
pub(crate) fn clear_view() -> Result<(), DomError> {
    cancel_edit();
    STATE.with(|s| s.borrow_mut().messages.clear());
    dom::by_id::<HtmlElement>("messages")?.set_inner_html("");
    show_error("");
    progress("");
    hub::publish(&hub::Event::Cleared);
    Ok(())
}

/// The text of message `id` of the conversation (the Debug drawer names pairs by it).
fn message_text(id: &str) -> Option<String> {
    STATE.with(|s| {
        s.borrow()
            .messages
            .iter()
            .find(|m| m.id == id)
            .map(|m| m.content.clone())
    })
}

/// The conversation as the panel holds it (for "Save conversation").
pub(crate) fn messages() -> Vec<ChatMessage> {
    STATE.with(|s| s.borrow().messages.clone())
}

pub(crate) fn is_streaming() -> bool {
    STATE.with(|s| s.borrow().streaming.is_some())
}

/// The panel moves to another tab while an answer streams: the worker finishes it into its
/// tab's session, and this panel stops following it.
pub(crate) fn detach_streaming() {
    if STATE.with(|s| s.borrow_mut().streaming.take()).is_some() {
        set_streaming_controls(false);
    }
}

/// Shows `messages` (the worker's copy of the tab's conversation) in place of what is shown.
pub(crate) fn show_conversation(messages: Vec<ChatMessage>) -> Result<(), DomError> {
    // An edit of another conversation's question would replace the wrong one.
    cancel_edit();
    dom::by_id::<HtmlElement>("messages")?.set_inner_html("");
    for m in &messages {
        let bubble = add_bubble(m.role, &m.content)?;
        match (&m.quote, &m.page) {
            // The page's whole text stays out of the bubble: its name says what was asked about.
            (Some(_), Some(name)) => page_ask::mark(&bubble, Some(name)),
            (Some(quote), None) => add_quote(&bubble, quote),
            (None, _) => {}
        }
        for card in &m.tools {
            crate::cards::show_card(&bubble, card)?;
        }
        if m.role == Role::Assistant && !m.content.is_empty() {
            add_copy(&bubble, &m.id);
        }
        if let Some(p) = &m.answered_by {
            add_note(
                &bubble,
                "provider",
                &tandem_chrome::i18n::plain(&answer_message(p, m.usage)),
            );
        }
        if let Some(label) = &m.badge {
            add_badge(&bubble, label);
        }
        add_hide_toggle(&bubble, &m.id);
        if m.hidden {
            if let Some(toggle) = bubble.query_selector(".hide-toggle").ok().flatten() {
                dom::set_attr(&toggle, "aria-pressed", "true");
            }
            let _ = bubble.class_list().add_1("hidden-from-context");
        }
    }
    STATE.with(|s| s.borrow_mut().messages = messages);
    place_turn_actions();
    Ok(())
}

fn stop_streaming() {
    let Some(request_id) = streaming_id() else {
        return;
    };
    // The answer ends here at once: deltas already queued behind the click are dropped
    // rather than shown, and the worker's Stopped, when it comes, finds nothing to end.
    let _ = post(&PanelToWorker::Stop {
        request_id: request_id.clone(),
    });
    // What is on screen at the click is the answer.
    with_streaming(|st| st.md.stop());
    finish_stopped(&request_id);
}

/// The worker went away (its Port closed): an answer in flight ends, what arrived kept.
fn worker_gone() {
    let in_flight = streaming_id();
    if let Some(id) = in_flight {
        finish_with_error(&id, ErrorKind::StreamCut, &say("chatWorkerStopped", vec![]));
    }
}

/// A message about the answer being streamed (the Port's dispatch sends the rest elsewhere).
fn receive(message: WorkerToPanel) {
    let current = streaming_id();
    if current.as_deref() != Some(message.request_id()) {
        return; // A late message for an answer that already ended.
    }
    match message {
        // O(delta): the text is kept, and shown at the next frame with whatever else came.
        WorkerToPanel::Delta { text, .. } => {
            let schedule = with_streaming(|st| {
                st.md.push(&text);
                !std::mem::replace(&mut st.frame_pending, true)
            });
            if schedule == Some(true) {
                schedule_frame();
            }
        }
        WorkerToPanel::Done {
            request_id,
            provider,
            usage,
            ..
        } => {
            let mut ended = Some(Ended::Done { provider, usage });
            // A backlog is shown over the next frames, as it was while streaming, rather than
            // in one long task that would freeze the panel: the answer ends after it.
            with_streaming(|st| {
                if st.md.behind() {
                    st.done = ended.take();
                }
            });
            if let Some(ended) = ended {
                finish(&request_id, ended);
            }
        }
        WorkerToPanel::Restart { note, .. } => {
            with_streaming(|st| {
                st.md.reset();
                add_note(&st.bubble, "switch", &note);
            });
        }
        WorkerToPanel::Stopped { request_id } => finish_stopped(&request_id),
        WorkerToPanel::Error {
            request_id,
            kind,
            message,
            said,
        } => {
            // In the person's language when the sentence is in the catalog.
            let shown = said
                .filter(|m| m.english() == message)
                .map(|m| tandem_chrome::i18n::plain(&m))
                .unwrap_or(message);
            finish_with_error(&request_id, kind, &shown)
        }
        WorkerToPanel::Status { text, .. } => progress(&text),
        // Who answers, until the answer ends (a failover says so in the answer).
        WorkerToPanel::Start { provider, .. } => progress(&format!("{provider} is answering…")),
        WorkerToPanel::ToolUse {
            call_id,
            tool,
            provider,
            arguments,
            question,
            said,
            ..
        } => {
            // The question in the person's language while its message is the same sentence.
            let question = match (question, said) {
                (Some(q), Some(m)) if m.english() == q => Some(tandem_chrome::i18n::plain(&m)),
                (q, _) => q,
            };
            let provider_shown = provider.clone();
            with_streaming(|st| {
                report(crate::cards::show_use(
                    &st.bubble,
                    &call_id,
                    &tool,
                    &provider,
                    &arguments,
                    question.as_deref(),
                ));
                st.tools.push(tandem_core::chat::ToolCard {
                    call_id: call_id.clone(),
                    tool: tool.clone(),
                    provider,
                    arguments,
                    ok: None,
                    result: String::new(),
                });
            });
            let said = if question.is_some() {
                Msg::new(
                    "toolWaiting",
                    vec![i18n::text(tool.clone()), i18n::text(provider_shown)],
                )
            } else {
                Msg::new("toolRunning", vec![i18n::text(tool.clone())])
            };
            progress(&tandem_chrome::i18n::plain(&said));
        }
        WorkerToPanel::ToolResult {
            call_id,
            ok,
            text,
            duration_ms,
            images,
            ..
        } => {
            with_streaming(|st| {
                report(crate::cards::show_result(
                    &st.bubble,
                    &call_id,
                    ok,
                    &text,
                    Some(duration_ms),
                ));
                report(crate::cards::show_images(&st.bubble, &call_id, &images));
                if let Some(card) = st.tools.iter_mut().find(|c| c.call_id == call_id) {
                    card.ok = Some(ok);
                    card.result = text;
                }
            });
            progress("");
        }
        // The Debug drawer shows it (the hub: this view does not know the drawer).
        WorkerToPanel::Debug { report, .. } => hub::publish(&hub::Event::Report(&report)),
        WorkerToPanel::ConnectionResult { .. }
        | WorkerToPanel::Models { .. }
        | WorkerToPanel::NanoStatus { .. }
        | WorkerToPanel::Conversation { .. }
        | WorkerToPanel::Changed { .. }
        | WorkerToPanel::TaskState { .. }
        | WorkerToPanel::TaskDelta { .. }
        | WorkerToPanel::Fetch { .. }
        | WorkerToPanel::FetchAbort { .. } => {}
    }
}

/// The line under the conversation that says what is happening while no text arrives.
fn progress(text: &str) {
    if let Ok(line) = dom::by_id::<HtmlElement>("progress") {
        line.set_text_content(Some(text));
    }
}

fn finish_stopped(request_id: &str) {
    finish(request_id, Ended::Early(None));
}

/// How an answer ended.
enum Ended {
    Done {
        provider: Option<String>,
        usage: Option<tandem_core::stream::Usage>,
    },
    /// Stopped (`None`) or failed after some text arrived.
    Early(Option<ErrorKind>),
}

/// Ends the current answer. Text received so far is kept (and sent as context later), with
/// a badge saying why it is incomplete.
fn finish(request_id: &str, ended: Ended) {
    let Some(mut st) = take_streaming(request_id) else {
        return;
    };
    if let Err(e) = st.md.render_all() {
        show_error(&e.to_string());
    }
    st.bubble.remove_attribute("aria-busy").ok();
    let text = st.md.source();
    if !text.is_empty() {
        add_copy(&st.bubble, &st.answer_id);
    }
    let (answered_by, badge, usage) = match ended {
        Ended::Done { provider, usage } => (provider, None, usage),
        Ended::Early(error) => (None, Some(incomplete_badge(error)), None),
    };
    if let Some(p) = &answered_by {
        add_note(
            &st.bubble,
            "provider",
            &tandem_chrome::i18n::plain(&answer_message(p, usage)),
        );
    }
    if badge.is_some() {
        // A call still running when the answer ended was stopped with it: its card says so.
        for card in st.tools.iter().filter(|c| c.ok.is_none()) {
            report(crate::cards::show_stopped(&st.bubble, &card.call_id));
        }
    }
    if let Some(label) = badge {
        add_badge(&st.bubble, label);
        if text.is_empty() {
            dom::set_attr(&st.bubble, "data-empty", "true");
        }
    }
    add_hide_toggle(&st.bubble, &st.answer_id);
    STATE.with(|s| {
        s.borrow_mut().messages.push(ChatMessage {
            id: st.answer_id,
            answered_by,
            badge: badge.map(str::to_string),
            usage,
            tools: st.tools,
            ..ChatMessage::new(Role::Assistant, text)
        })
    });
    set_streaming_controls(false);
    answer_ended(request_id);
}

fn finish_with_error(request_id: &str, kind: ErrorKind, message: &str) {
    show_error(message);
    let partial = STATE.with(|s| {
        s.borrow()
            .streaming
            .as_ref()
            .is_some_and(|x| !x.md.is_empty())
    });
    if partial {
        // A stall gives the question back too, to send again as it was; the partial answer
        // stays with its badge.
        let question = (kind == ErrorKind::Stalled)
            .then(|| {
                STATE.with(|s| {
                    let s = s.borrow();
                    let id = &s.streaming.as_ref()?.user_id;
                    s.messages
                        .iter()
                        .find(|m| &m.id == id && m.quote.is_none())
                        .map(|m| m.content.clone())
                })
            })
            .flatten();
        finish(request_id, Ended::Early(Some(kind)));
        if let (Some(text), Ok(input)) = (question, dom::by_id::<HtmlTextAreaElement>("message")) {
            if input.value().trim().is_empty() {
                input.set_value(&text);
            }
        }
        return;
    }
    // Nothing was answered: take the question back out of the conversation and give its
    // text back to the user, so fixing Settings and pressing Send again loses nothing.
    let Some(st) = take_streaming(request_id) else {
        return;
    };
    st.bubble.remove();
    st.user_bubble.remove();
    let text = STATE.with(|s| {
        let mut s = s.borrow_mut();
        let pos = s.messages.iter().position(|m| m.id == st.user_id);
        // A selected-text question is not given back: "Ask Tandem" again asks it again.
        pos.map(|p| s.messages.remove(p))
            .filter(|m| m.quote.is_none())
            .and_then(|m| {
                attach::restore(m.images);
                page_ask::give_back(&m.id, m.content)
            })
    });
    if let (Some(text), Ok(input)) = (text, dom::by_id::<HtmlTextAreaElement>("message")) {
        if input.value().trim().is_empty() {
            input.set_value(&text);
        }
    }
    set_streaming_controls(false);
    answer_ended(request_id);
}

fn take_streaming(request_id: &str) -> Option<Streaming> {
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        if s.streaming
            .as_ref()
            .is_some_and(|x| x.request_id == request_id)
        {
            s.streaming.take()
        } else {
            None
        }
    })
}

fn set_streaming_controls(streaming: bool) {
    if !streaming {
        progress("");
    }
    place_turn_actions();
    if let (Ok(send), Ok(stop)) = (
        dom::by_id::<HtmlButtonElement>("send"),
        dom::by_id::<HtmlButtonElement>("stop"),
    ) {
        send.set_disabled(streaming);
        stop.set_disabled(!streaming);
    }
}

fn add_bubble(role: Role, text: &str) -> Result<HtmlElement, DomError> {
    let list: HtmlElement = dom::by_id("messages")?;
    let (class, label) = match role {
        Role::User => ("msg user", say("chatYou", vec![])),
        _ => ("msg assistant", "Tandem".to_owned()),
    };
    let bubble = dom::create("article", class)?;
    dom::set_attr(&bubble, "aria-label", &label);
    let body = dom::create("div", "text")?;
    if role == Role::User {
        // What the user typed is shown as typed.
        body.set_text_content(Some(text));
    } else {
        body.set_class_name("text md");
        markdown::render_into(&body, text)?;
    }
    bubble
        .append_child(&body)
        .map_err(|_| DomError::Missing("messages"))?;
    list.append_child(&bubble)
        .map_err(|_| DomError::Missing("messages"))?;
    follow::to_end();
    Ok(bubble)
}

/// The element holding a bubble's text.
fn text_of(bubble: &HtmlElement) -> Result<HtmlElement, DomError> {
    bubble
        .query_selector(".text")
        .ok()
        .flatten()
        .and_then(|e| e.dyn_into::<HtmlElement>().ok())
        .ok_or(DomError::Missing("messages"))
}

/// How long one frame may spend parsing and building the answer's elements; the browser's
/// layout of them comes on top. The rest of what arrived waits for the next frame.
const FRAME_BUDGET_MS: f64 = 10.0;

/// Shows deltas not shown yet (as many as fit in a frame), scrolling along if the user was at
/// the end.
fn show_rest(md: &mut Live) {
    if !md.behind() {
        return;
    }
    if let Err(e) = md.render(FRAME_BUDGET_MS) {
        show_error(&e.to_string());
    }
    if follow::following() {
        follow::to_end();
    }
}

/// A callback made once and kept for the panel's life.
type Callback = Closure<dyn FnMut()>;

thread_local! {
    /// The frame callbacks, made once: a closure per frame would be garbage per frame.
    static FRAME: (Callback, Callback) = (
        Closure::new(on_animation_frame),
        Closure::new(on_timer),
    );
    /// When the last animation frame came (ms since the epoch).
    static LAST_FRAME: Cell<f64> = const { Cell::new(0.0) };
    /// The backup timer is set.
    static TIMER_SET: Cell<bool> = const { Cell::new(false) };
}

/// Asks for a frame to show the deltas. A timer backs up the animation frame, which a
/// hidden panel never gets; it renders only when no frame came for a while, so renders
/// happen once per frame, before the browser lays out and paints.
fn schedule_frame() {
    let Some(window) = web_sys::window() else {
        return;
    };
    FRAME.with(|(raf, timer)| {
        let _ = window.request_animation_frame(raf.as_ref().unchecked_ref());
        if !TIMER_SET.with(|t| t.replace(true)) {
            let _ = window.set_timeout_with_callback_and_timeout_and_arguments_0(
                timer.as_ref().unchecked_ref(),
                100,
            );
        }
    });
}

fn on_animation_frame() {
    LAST_FRAME.with(|t| t.set(js_sys::Date::now()));
    on_frame();
}

fn on_timer() {
    TIMER_SET.with(|t| t.set(false));
    if js_sys::Date::now() - LAST_FRAME.with(Cell::get) >= 90.0 {
        on_frame();
    } else if STATE.with(|s| {
        s.borrow()
            .streaming
            .as_ref()
            .is_some_and(|x| x.frame_pending)
    }) {
        // Frames are coming: they show the rest; the timer stays ready in case they stop.
        schedule_frame();
    }
}

/// Shows what arrived, at most [`FRAME_BUDGET_MS`] of work per frame: the browser handles
/// typing, clicks and scrolling between frames however fast the text comes, and a backlog is
/// shown over the next frames. Ends the answer once all is shown if the worker said it is
/// complete.
fn on_frame() {
    let ended = STATE.with(|s| {
        let mut s = s.borrow_mut();
        let st = s.streaming.as_mut()?;
        if !st.frame_pending {
            return None;
        }
        show_rest(&mut st.md);
        // Text arrived: whatever the progress line said is over.
        progress("");
        if st.md.behind() {
            // More than a frame's worth arrived: the rest at the next frame.
            schedule_frame();
            return None;
        }
        st.frame_pending = false;
        Some((st.request_id.clone(), st.done.take()?))
    });
    // All shown, and the worker had said the answer is complete.
    if let Some((request_id, ended)) = ended {
        finish(&request_id, ended);
    }
}

/// The per-answer "Copy answer" button: puts the answer's Markdown on the clipboard.
fn add_copy(bubble: &HtmlElement, message_id: &str) {
    let Ok(button) = dom::create("button", "copy-answer") else {
        return;
    };
    dom::set_attr(&button, "type", "button");
    dom::set_attr(&button, "aria-label", &say("chatCopyAnswer", vec![]));
    button.set_text_content(Some(&say("chatCopy", vec![])));
    dom::set_attr(&button, "data-message", message_id);
    // Right under the text: the badge stays the bubble's last words.
    let after = bubble.query_selector(".text").ok().flatten();
    match after {
        Some(text) => {
            let _ = text.after_with_node_1(&button);
        }
        None => {
            let _ = bubble.append_child(&button);
        }
    }
}

/// Copy: the Markdown of the answer `button` belongs to goes on the clipboard.
fn copy_answer(button: web_sys::Element) {
    let Some(id) = button.get_attribute("data-message") else {
        return;
    };
    let text = STATE.with(|s| {
        s.borrow()
            .messages
            .iter()
            .find(|m| m.id == id)
            .map(|m| m.content.clone())
    });
    if let Some(text) = text {
        markdown::copy_text(button, text);
    }
}

/// The page text a question is about, quoted above the question.
fn add_quote(bubble: &HtmlElement, quote: &str) {
    if let Ok(block) = dom::create("blockquote", "quote") {
        dom::set_attr(&block, "aria-label", &say("chatSelectedText", vec![]));
        block.set_text_content(Some(quote));
        let _ = bubble.insert_before(&block, bubble.first_child().as_ref());
    }
}

fn add_badge(bubble: &HtmlElement, label: &str) {
    if let Ok(b) = dom::create("span", "badge") {
        b.set_text_content(Some(&tandem_chrome::i18n::plain(&badge_message(label))));
        let _ = bubble.append_child(&b);
    }
}

/// The per-message "Hide from context" switch: a hidden message stays on screen, dimmed,
/// and is never sent to the model again.
fn add_hide_toggle(bubble: &HtmlElement, message_id: &str) {
    let Ok(button) = dom::create("button", "hide-toggle") else {
        return;
    };
    dom::set_attr(&button, "type", "button");
    dom::set_attr(&button, "aria-label", &say("chatHide", vec![]));
    dom::set_attr(&button, "aria-pressed", "false");
    dom::set_attr(&button, "title", &say("chatHideTitle", vec![]));
    dom::set_attr(&button, "data-message", message_id);
    let _ = bubble.append_child(&button);
}

/// Hide from context: the message `button` belongs to is hidden (or shown again), here and
/// in the tab's session in the worker.
fn toggle_hidden(button: &web_sys::Element) {
    let Some(id) = button.get_attribute("data-message") else {
        return;
    };
    let hidden = STATE.with(|s| {
        let mut s = s.borrow_mut();
        let m = s.messages.iter_mut().find(|m| m.id == id)?;
        m.hidden = !m.hidden;
        Some(m.hidden)
    });
    let Some(hidden) = hidden else {
        return;
    };
    let _ = post(&PanelToWorker::SetHidden {
        tab_id: crate::tab::current(),
        message_id: id,
        hidden,
    });
    dom::set_attr(
        button,
        "aria-pressed",
        if hidden { "true" } else { "false" },
    );
    // The switch is one of its bubble's own children.
    if let Some(bubble) = button.parent_element() {
        let _ = bubble
            .class_list()
            .toggle_with_force("hidden-from-context", hidden);
    }
}

/// A small line under an answer (who answered it, a provider switch).
fn add_note(bubble: &HtmlElement, class: &str, text: &str) {
    if let Ok(note) = dom::create("span", &format!("note {class}")) {
        note.set_text_content(Some(text));
        let _ = bubble.append_child(&note);
    }
}
