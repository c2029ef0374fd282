//! Which conversation the panel shows: the one of the tab that is active in its window. The
//! worker keeps each tab's conversation (its session); the panel asks for it when it loads and
//! whenever the active tab changes or navigates, and again when the worker says it changed
//! (an "Ask Tandem" selection is waiting, an answer ended while another tab was shown).
//!
//! Pages without a memory (chrome://, the panel's own page when opened as a tab) share a
//! conversation kept by the panel alone, dropped when a remembered conversation is shown.

use std::cell::RefCell;
use std::collections::VecDeque;

use js_sys::Reflect;
use tandem_core::chat::ChatMessage;
use tandem_core::i18n::text;
use tandem_core::protocol::{PanelToWorker, WorkerToPanel};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;

use super as chat;
use crate::chrome::Event;
use crate::dom::{self, DomError};
use crate::i18n::say;

/// How many answers that ended in this panel are remembered, to skip the worker's notice
/// about them.
const ENDED_KEPT: usize = 16;

#[derive(Default)]
struct Follow {
    /// The tab whose conversation is on screen, and whether it is a remembered one (else it
    /// is the panel's own, for pages without a memory).
    shown_tab: Option<i32>,
    shown_memory: bool,
    /// The `Open` whose answer is awaited; older answers are stale.
    opening: Option<String>,
    /// The conversation must be asked for again once the current answer ends.
    reopen: bool,
    /// A selection that arrived while an answer streamed, asked once it ended.
    selection: Option<String>,
    /// Answers this panel saw end (it shows them already).
    ended: VecDeque<String>,
}

thread_local! {
    static FOLLOW: RefCell<Follow> = RefCell::new(Follow::default());
}

pub fn wire() -> Result<(), DomError> {
    chat::on_answer_ended(answer_ended);
    crate::port::route(crate::port::Route::Memory, receive);
    dom::on("forget-all", "click", |_: web_sys::Event| {
        if let Err(e) = forget_everything() {
            crate::alert::show_error(&e.to_string());
        }
    })?;
    listen(
        &["tabs", "onActivated"],
        Closure::<dyn FnMut()>::new(follow).into_js_value(),
    );
    // A prerendered page shown in its place gives the active tab a new id.
    listen(
        &["tabs", "onReplaced"],
        Closure::<dyn FnMut()>::new(follow).into_js_value(),
    );
    // A new URL, and again when the page has loaded: the URL can be reported while the
    // navigation is still pending.
    let on_updated =
        Closure::<dyn FnMut(JsValue, JsValue)>::new(|tab: JsValue, change: JsValue| {
            let url_changed = Reflect::get(&change, &"url".into()).is_ok_and(|u| u.is_string());
            let loaded = Reflect::get(&change, &"status".into())
                .ok()
                .and_then(|s| s.as_string())
                .is_some_and(|s| s == "complete");
            if (url_changed || loaded) && tab.as_f64().map(|t| t as i32) == crate::tab::current() {
                open();
            }
        });
    listen(&["tabs", "onUpdated"], on_updated.into_js_value());
    // The worker's notices come by runtime.sendMessage: its Port is gone once it was stopped.
    let on_message =
        Closure::<dyn FnMut(JsValue, JsValue)>::new(|message: JsValue, sender: JsValue| {
            // A broadcast from anything but Tandem's worker (its own content script, say) is
            // not believed.
            if !tandem_chrome::sender_is(&sender, |s, own| s.is_own_worker(own)) {
                return;
            }
            let parsed = message.as_string().map(|m| WorkerToPanel::from_json(&m));
            if let Some(Ok(notice @ WorkerToPanel::Changed { .. })) = parsed {
                crate::port::dispatch(notice);
            }
        });
    listen(&["runtime", "onMessage"], on_message.into_js_value());
    follow();
    Ok(())
}

/// Adds `listener` to the event `chrome.<path>`, for the life of the page.
fn listen(path: &[&str], listener: JsValue) {
    let chrome = Reflect::get(&js_sys::global(), &"chrome".into()).ok();
    let event = chrome.and_then(|c| {
        path.iter().try_fold(c, |at, key| {
            Reflect::get(&at, &(*key).into())
                .ok()
                .filter(|v| !v.is_undefined())
        })
    });
    match event {
        Some(e) => e
            .unchecked_into::<Event>()
            .add_listener(listener.unchecked_ref()),
        None => web_sys::console::warn_1(
            &format!("Tandem: chrome.{} is missing", path.join(".")).into(),
        ),
    }
}

/// Looks which tab is active in the panel's window, and asks for its conversation if it is
/// another one.
fn follow() {
    spawn_local(async {
        let Some(tab) = active_tab().await else {
            return;
        };
        let previous = crate::tab::follow(tab);
        if previous != Some(tab) {
            open();
        }
    });
}

async fn active_tab() -> Option<i32> {
    let tab = crate::chrome::active_tab().await?;
    let id = Reflect::get(&tab, &"id".into()).ok()?.as_f64()?;
    (id >= 0.0).then_some(id as i32)
}

/// Asks the worker for the current tab's conversation (for the tab on screen, after the
/// answer being streamed, if one is).
fn open() {
    let same_tab = FOLLOW.with(|f| {
        let f = f.borrow();
        crate::tab::current() == f.shown_tab
    });
    if same_tab && chat::is_streaming() {
        FOLLOW.with(|f| f.borrow_mut().reopen = true);
        return;
    }
    let request_id = dom::fresh_id("o");
    let tab_id = FOLLOW.with(|f| {
        let mut f = f.borrow_mut();
        f.opening = Some(request_id.clone());
        crate::tab::current()
    });
    if let Err(e) = crate::port::post(&PanelToWorker::Open { request_id, tab_id }) {
        crate::alert::show_error(&say("chatWorkerUnreachable", vec![text(e.to_string())]));
    }
}

/// The worker's messages about conversations: a tab's conversation (the answer to `open`),
/// or the notice that one changed.
fn receive(message: WorkerToPanel) {
    match message {
        WorkerToPanel::Conversation {
            request_id,
            tab_id,
            domain,
            messages,
            selection,
            refused,
        } => {
            on_conversation(&request_id, tab_id, domain, messages, selection);
            if let Some(why) = refused {
                crate::alert::show_error(&why);
            }
        }
        WorkerToPanel::Changed { tab_id, request_id } => on_changed(tab_id, request_id.as_deref()),
        _ => {}
    }
}

/// The worker's answer to `open`.
fn on_conversation(
    request_id: &str,
    tab_id: Option<i32>,
    domain: Option<String>,
    messages: Vec<ChatMessage>,
    selection: Option<String>,
) {
    let (current, tab) = FOLLOW.with(|f| {
        let f = f.borrow();
        (
            f.opening.as_deref() == Some(request_id),
            crate::tab::current(),
        )
    });
    if !current {
        // Stale; but a selection it carries was handed over, and must not be lost.
        if selection.is_some() && tab_id == tab {
            FOLLOW.with(|f| f.borrow_mut().selection = selection);
        }
        return;
    }
    let (selection, same_tab, shown_memory) = FOLLOW.with(|f| {
        let mut f = f.borrow_mut();
        f.opening = None;
        let selection = selection.or(f.selection.take());
        (selection, f.shown_tab == tab_id, f.shown_memory)
    });
    if same_tab && chat::is_streaming() {
        // Shown again once the answer ends, with the selection if one came.
        FOLLOW.with(|f| {
            let mut f = f.borrow_mut();
            f.reopen = true;
            f.selection = selection;
        });
        return;
    }
    let shown = if domain.is_some() {
        // A remembered conversation replaces what is on screen; an answer still streaming
        // into another tab's is left to the worker.
        chat::detach_streaming();
        chat::show_conversation(messages)
    } else if shown_memory {
        // A page without a memory after a remembered conversation: start empty.
        chat::detach_streaming();
        chat::clear_view()
    } else {
        // From one page without a memory to another: the panel's own conversation stays.
        Ok(())
    };
    FOLLOW.with(|f| {
        let mut f = f.borrow_mut();
        f.shown_tab = tab_id;
        f.shown_memory = domain.is_some();
    });
    show_memory(domain.as_deref());
    let Some(selection) = selection else {
        if let Err(e) = shown {
            crate::alert::show_error(&e.to_string());
        }
        return;
    };
    if chat::is_streaming() {
        FOLLOW.with(|f| {
            let mut f = f.borrow_mut();
            f.reopen = true;
            f.selection = Some(selection);
        });
    } else if let Err(e) = shown.and_then(|()| chat::ask_about(selection)) {
        crate::alert::show_error(&e.to_string());
    }
}

/// The line that says where this conversation is remembered.
fn show_memory(domain: Option<&str>) {
    let text = match domain {
        Some(d) => say("chatRemembered", vec![text(d)]),
        None => say("chatNotRemembered", vec![]),
    };
    if let Ok(line) = dom::by_id::<web_sys::HtmlElement>("memory-status") {
        line.set_text_content(Some(&text));
    }
}

/// The worker says `tab_id`'s conversation changed.
fn on_changed(tab_id: i32, request_id: Option<&str>) {
    let relevant = FOLLOW.with(|f| {
        let f = f.borrow();
        crate::tab::current() == Some(tab_id)
            && !request_id.is_some_and(|r| f.ended.iter().any(|e| e == r))
    });
    if relevant {
        open();
    }
}

/// An answer ended in this panel (done, stopped or failed).
fn answer_ended(request_id: &str) {
    let reopen = FOLLOW.with(|f| {
        let mut f = f.borrow_mut();
        f.ended.push_back(request_id.to_owned());
        if f.ended.len() > ENDED_KEPT {
            f.ended.pop_front();
        }
        std::mem::take(&mut f.reopen)
    });
    if reopen {
        open();
    }
}

/// "Forget everything": every tab's conversation, here and in the worker.
fn forget_everything() -> Result<(), DomError> {
    chat::end_streaming();
    chat::clear_view()?;
    FOLLOW.with(|f| f.borrow_mut().selection = None);
    if let Err(e) = crate::port::post(&PanelToWorker::ForgetAll) {
        crate::alert::show_error(&format!(
            "Tandem's background worker is not reachable ({e}), so it may still remember. \
             Reload the extension and try again."
        ));
    }
    Ok(())
}
