//! Task mode: the Task box, Start / Pause / Resume / Cancel, the step timeline, the Approve /
//! Deny prompt and the final answer. The worker's coordinator owns the task; this side sends
//! commands and renders every `TaskState` it hears (on the Port, or broadcast by
//! `runtime.sendMessage`, which still reaches the panel after the worker was restarted).

use std::cell::RefCell;

use tandem_chrome::i18n::{label, plain};
use tandem_core::agent::step_line::{step_line, Piece};
use tandem_core::agent::task::{
    PendingConfirmation, StepRecord, TaskCommand, TaskStatus, TaskView,
};
use tandem_core::agent::workflow::{self, WorkflowOffer};
use tandem_core::agent::ToolUse;
use tandem_core::i18n::{text, Msg};
use tandem_core::protocol::{PanelToWorker, WorkerToPanel};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::spawn_local;
use web_sys::{HtmlButtonElement, HtmlElement, HtmlInputElement, HtmlTextAreaElement};

use crate::dom::{self, DomError};
use crate::i18n::say;

/// While a task runs the panel asks for its state this often: a worker that was stopped
/// (and so lost the loop) answers with the task Paused.
const POLL_MS: i32 = 2000;

thread_local! {
    static LAST: RefCell<Option<TaskStatus>> = const { RefCell::new(None) };
    /// The panel's copy of the task, which the worker's deltas bring up to date.
    static VIEW: RefCell<Option<TaskView>> = const { RefCell::new(None) };
    /// The question last reported to `waiting` (its group and text).
    static ASKED: RefCell<String> = const { RefCell::new(String::new()) };
    /// The task whose "Save as workflow" form is open (it closes when another task shows).
    static SAVING: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// A poll that says what this panel holds, so the worker can answer with what it lacks.
fn get_state() -> TaskCommand {
    TaskCommand::GetState {
        have: VIEW.with(|v| v.borrow().as_ref().map(|v| (v.id.clone(), v.steps.len()))),
    }
}

pub fn wire() -> Result<(), DomError> {
    wire_modes()?;
    // The task stays in its box (to start it again, or edit it); the other boxes are
    // emptied once their text is sent.
    send_typed("task-start", "task", "taskTypeFirst", false, |task| {
        // `/run <name> key=value …` runs a saved workflow instead of a new task.
        match workflow::run_command(&task) {
            Some((name, params)) => TaskCommand::RunWorkflow {
                name,
                params,
                tab_id: crate::tab::current(),
            },
            None => TaskCommand::Start {
                task,
                tab_id: crate::tab::current(),
            },
        }
    })?;
    // Ctrl+Enter (⌘+Enter) in the Task box starts it, as the button does; a plain Enter is a
    // new line there, since tasks may take several.
    dom::on("task", "keydown", |e: web_sys::KeyboardEvent| {
        if e.key() == "Enter" && (e.ctrl_key() || e.meta_key()) && !e.is_composing() {
            e.prevent_default();
            if let Ok(start) = dom::by_id::<HtmlButtonElement>("task-start") {
                start.click();
            }
        }
    })?;
    for (id, approve, always) in [
        ("task-site-once", true, false),
        ("task-site-always", true, true),
        ("task-site-deny", false, false),
    ] {
        dom::on(id, "click", move |_: web_sys::Event| {
            send(TaskCommand::Confirm {
                approve,
                secret: None,
                always,
            })
        })?;
    }
    for (id, approve) in [("task-approve", true), ("task-deny", false)] {
        dom::on(id, "click", move |_: web_sys::Event| {
            // The password box's value goes to the worker once and is cleared here at once.
            let secret = dom::by_id::<HtmlInputElement>("task-secret")
                .ok()
                .map(|input| {
                    let value = input.value();
                    input.set_value("");
                    value
                });
            send(TaskCommand::Confirm {
                approve,
                secret: secret.filter(|s| approve && !s.is_empty()),
                always: false,
            })
        })?;
    }
    send_typed(
        "task-send-answer",
        "task-reply",
        "taskTypeAnswerFirst",
        true,
        |text| TaskCommand::Answer { text },
    )?;
    wire_guide()?;
    for (id, command) in [
        ("task-pause", TaskCommand::Pause),
        ("task-resume", TaskCommand::Resume),
        // Continue at the token ceiling is a Resume: the run allows one more ceiling's worth.
        ("task-continue", TaskCommand::Resume),
        ("task-cancel", TaskCommand::Cancel),
        ("task-dismiss", TaskCommand::Dismiss),
        ("task-update-workflow", TaskCommand::UpdateWorkflow),
    ] {
        dom::on(id, "click", move |_: web_sys::Event| send(command.clone()))?;
    }
    wire_save_form()?;
    listen_broadcasts();
    poll();
    send(get_state());
    Ok(())
}

/// "Save as workflow" asks for the workflow's name first, in the task card: a field holding a
/// proposed name (a few words of the task), Save (or Enter) and Cancel (or Escape). A name
/// another workflow has is refused here at once with the worker's own sentence, and the form
/// stays for the person to change it; the worker checks again when it saves.
fn wire_save_form() -> Result<(), DomError> {
    dom::on("task-save-workflow", "click", |_: web_sys::Event| {
        open_save_form()
    })?;
    dom::on(
        "task-save-workflow-confirm",
        "click",
        |_: web_sys::Event| save_named(),
    )?;
    dom::on("task-save-workflow-cancel", "click", |_: web_sys::Event| {
        close_save_form(true)
    })?;
    dom::on(
        "task-workflow-name",
        "keydown",
        |e: web_sys::KeyboardEvent| match e.key().as_str() {
            "Enter" if !e.is_composing() => {
                e.prevent_default();
                save_named();
            }
            "Escape" if !e.is_composing() => {
                e.prevent_default();
                close_save_form(true);
            }
            _ => {}
        },
    )?;
    Ok(())
}

/// Opens the form for the task on screen. The field keeps what the person typed for this
/// task (a name refused, say); for another task it proposes one.
fn open_save_form() {
    let Some((id, task)) =
        VIEW.with(|v| v.borrow().as_ref().map(|v| (v.id.clone(), v.task.clone())))
    else {
        return;
    };
    let Ok(field) = dom::by_id::<HtmlInputElement>("task-workflow-name") else {
        return;
    };
    if field.get_attribute("data-task").as_deref() != Some(id.as_str()) {
        field.set_value(&workflow::propose_name(&task));
        dom::set_attr(&field, "data-task", &id);
    }
    SAVING.with(|s| *s.borrow_mut() = Some(id));
    show_save_form(true);
    let _ = field.focus();
    field.select();
}

fn show_save_form(open: bool) {
    if let Ok(form) = dom::by_id::<HtmlElement>("task-save-form") {
        form.set_hidden(!open);
    }
    if let Ok(b) = dom::by_id::<HtmlElement>("task-save-workflow") {
        dom::set_attr(&b, "aria-expanded", if open { "true" } else { "false" });
    }
}

/// Closes the form; `refocus`: the person closed it, and goes back to the button.
fn close_save_form(refocus: bool) {
    SAVING.with(|s| s.borrow_mut().take());
    show_save_form(false);
    if refocus {
        if let Ok(b) = dom::by_id::<HtmlButtonElement>("task-save-workflow") {
            let _ = b.focus();
        }
    }
}

/// Save in the form: the name is checked against the saved workflows, then sent.
fn save_named() {
    let Ok(field) = dom::by_id::<HtmlInputElement>("task-workflow-name") else {
        return;
    };
    let name = field.value();
    spawn_local(async move {
        // Storage that cannot be read leaves the check to the worker, which says why.
        let list = match crate::chrome::local_json(workflow::WORKFLOWS_KEY).await {
            Ok(Some(json)) => workflow::read_stored(&json),
            _ => Vec::new(),
        };
        match workflow::chosen_name(&name, &list, None) {
            Ok(name) => {
                close_save_form(false);
                send(TaskCommand::SaveWorkflow { name });
            }
            Err(refused) => {
                notice(&plain(&refused));
                let _ = field.focus();
            }
        }
    });
}

/// The composer's two modes, as a tablist: Chat (the Message box) and Task (the Task box).
/// Clicking a tab or ←/→ (Home/End) on the focused tab switches; the inactive tab is out of
/// the Tab order, as the ARIA tabs pattern has it.
fn wire_modes() -> Result<(), DomError> {
    for (id, task) in [("mode-chat", false), ("mode-task", true)] {
        dom::on(id, "click", move |_: web_sys::Event| set_mode(task))?;
        dom::on(id, "keydown", move |e: web_sys::KeyboardEvent| {
            let to = match e.key().as_str() {
                "ArrowLeft" | "ArrowRight" => !task,
                "Home" => false,
                "End" => true,
                _ => return,
            };
            e.prevent_default();
            set_mode(to);
            let next = if to { "mode-task" } else { "mode-chat" };
            if let Ok(t) = dom::by_id::<HtmlButtonElement>(next) {
                let _ = t.focus();
            }
        })?;
    }
    Ok(())
}

/// Shows the Task box (`task`) or the Message box in the composer. A notice about the Task
/// box ("Type a task first.") is done with when the user leaves it.
fn set_mode(task: bool) {
    if !task {
        notice("");
    }
    for (tab, panel, on) in [
        ("mode-chat", "chat-composer", !task),
        ("mode-task", "task-composer", task),
    ] {
        if let Ok(t) = dom::by_id::<HtmlElement>(tab) {
            dom::set_attr(&t, "aria-selected", if on { "true" } else { "false" });
            dom::set_attr(&t, "tabindex", if on { "0" } else { "-1" });
        }
        if let Ok(p) = dom::by_id::<HtmlElement>(panel) {
            p.set_hidden(!on);
        }
    }
}

/// The task card (status, controls, questions, steps) is on screen, whichever mode the
/// composer is in, while there is a task or a notice to read: a task that needs the user
/// must be seen from Chat too.
fn show_card() {
    let has_task = VIEW.with(|v| v.borrow().is_some());
    let has_notice = dom::by_id::<HtmlElement>("task-notice").is_ok_and(|n| !n.hidden());
    if let Ok(card) = dom::by_id::<HtmlElement>("task-mode") {
        card.set_hidden(!(has_task || has_notice));
    }
}

/// "Guide the task": a note for the agent, a step the user did themselves, the panel's tab.
fn wire_guide() -> Result<(), DomError> {
    send_typed(
        "task-send-note",
        "task-note",
        "taskTypeNoteFirst",
        true,
        |note| TaskCommand::UpdateContext { note },
    )?;
    send_typed(
        "task-did-it",
        "task-note",
        "taskDescribeFirst",
        true,
        |description| TaskCommand::RecordAction { description },
    )?;
    dom::on("task-add-tab", "click", |_: web_sys::Event| {
        send(TaskCommand::AddRelevantTab {
            tab_id: crate::tab::current(),
        })
    })?;
    Ok(())
}

/// `button` sends the text of the box `field` as `make(text)`; an empty box gets the notice
/// whose catalog key is `empty` instead. `clear`: the box is emptied once its text is sent.
fn send_typed(
    button: &'static str,
    field: &'static str,
    empty: &'static str,
    clear: bool,
    make: impl Fn(String) -> TaskCommand + 'static,
) -> Result<(), DomError> {
    dom::on(button, "click", move |_: web_sys::Event| {
        let Ok(input) = dom::by_id::<HtmlTextAreaElement>(field) else {
            return;
        };
        let text = input.value();
        if text.trim().is_empty() {
            notice(&say(empty, vec![]));
            return;
        }
        if clear {
            input.set_value("");
        }
        send(make(text));
    })?;
    Ok(())
}

fn send(command: TaskCommand) {
    if let Err(e) = crate::port::post(&PanelToWorker::Task { command }) {
        notice(&say("workerUnreachable", vec![text(e.to_string())]));
    }
}

fn listen_broadcasts() {
    let listener =
        Closure::<dyn FnMut(JsValue, JsValue)>::new(|message: JsValue, sender: JsValue| {
            // Only Tandem's worker says what the task is.
            if !tandem_chrome::sender_is(&sender, |s, own| s.is_own_worker(own)) {
                return;
            }
            if let Some(Ok(
                m @ (WorkerToPanel::TaskState { .. } | WorkerToPanel::TaskDelta { .. }),
            )) = message.as_string().map(|m| WorkerToPanel::from_json(&m))
            {
                receive(m);
            }
        });
    let event = js_sys::Reflect::get(&js_sys::global(), &"chrome".into())
        .and_then(|c| js_sys::Reflect::get(&c, &"runtime".into()))
        .and_then(|r| js_sys::Reflect::get(&r, &"onMessage".into()));
    match event {
        Ok(e) if !e.is_undefined() => e
            .unchecked_into::<crate::chrome::Event>()
            .add_listener(listener.as_ref().unchecked_ref()),
        _ => web_sys::console::warn_1(&"Tandem: chrome.runtime.onMessage is missing".into()),
    }
    listener.forget();
}

fn poll() {
    let tick = Closure::<dyn FnMut()>::new(|| {
        if LAST.with(|l| *l.borrow()) == Some(TaskStatus::Running) {
            send(get_state());
        }
    });
    if let Some(window) = web_sys::window() {
        let _ = window.set_interval_with_callback_and_timeout_and_arguments_0(
            tick.as_ref().unchecked_ref(),
            POLL_MS,
        );
    }
    tick.forget();
}

/// A `TaskState` from the worker.
pub fn receive(message: WorkerToPanel) {
    let shown = match message {
        WorkerToPanel::TaskState { state, notice: n } => {
            // A notice belongs to its moment: the sentence of the last command ("Saved as the
            // workflow …") is gone once another task starts, unless that one brings its own.
            let another = VIEW.with(|v| {
                v.borrow().as_ref().map(|old| old.id.as_str())
                    != state.as_ref().map(|s| s.id.as_str())
            });
            match n {
                Some(n) => notice(&n),
                None if another && state.is_some() => notice(""),
                None => {}
            }
            VIEW.with(|v| {
                let mut v = v.borrow_mut();
                // Broadcasts and poll replies come on two channels Chrome does not order
                // between them: an older state of the task shown is not taken (it would hide
                // a question just asked, or show one already answered).
                let older = matches!((v.as_ref(), state.as_deref()),
                    (Some(shown), Some(new)) if shown.is_newer_than(&new.id, new.revision));
                if !older {
                    *v = state.map(|s| *s);
                }
            });
            true
        }
        WorkerToPanel::TaskDelta { delta } => {
            let before = shown_id();
            let applied = VIEW.with(|v| {
                let mut v = v.borrow_mut();
                match v.as_mut() {
                    Some(view) => view.apply(*delta).is_ok(),
                    // No copy yet: a delta from the first step is the whole view.
                    None => delta.into_view().map(|view| *v = Some(view)).is_ok(),
                }
            });
            // A new task's first step comes as a delta too: its notice is done with.
            if applied && before.is_some() && shown_id() != before {
                notice("");
            }
            if !applied {
                // Missed a change (opened mid-task, or the worker restarted): the whole view.
                VIEW.with(|v| v.borrow_mut().take());
                send(TaskCommand::GetState { have: None });
            }
            applied
        }
        _ => false,
    };
    if shown {
        let result = VIEW.with(|v| render(v.borrow().as_ref()));
        if let Err(e) = result {
            crate::alert::show_error(&e.to_string());
        }
    }
}

/// The id of the task the card shows.
fn shown_id() -> Option<String> {
    VIEW.with(|v| v.borrow().as_ref().map(|view| view.id.clone()))
}

fn notice(text: &str) {
    if let Ok(line) = dom::by_id::<HtmlElement>("task-notice") {
        line.set_text_content(Some(text));
        line.set_hidden(text.is_empty());
    }
    show_card();
}

fn render(state: Option<&TaskView>) -> Result<(), DomError> {
    let status = state.map(|s| s.status);
    LAST.with(|l| *l.borrow_mut() = status);
    show_card();
    let running = status == Some(TaskStatus::Running);
    let paused = status == Some(TaskStatus::Paused);
    dom::by_id::<HtmlButtonElement>("task-start")?.set_disabled(running);
    dom::by_id::<HtmlElement>("task-pause")?.set_hidden(!running);
    let at_limit = paused && state.is_some_and(|s| s.at_token_limit);
    dom::by_id::<HtmlElement>("task-resume")?.set_hidden(!paused || at_limit);
    dom::by_id::<HtmlElement>("task-continue")?.set_hidden(!at_limit);
    dom::by_id::<HtmlElement>("task-cancel")?.set_hidden(!(running || paused));
    dom::by_id::<HtmlElement>("task-dismiss")?
        .set_hidden(!status.is_some_and(TaskStatus::is_final));
    dom::by_id::<HtmlElement>("task-guide")?.set_hidden(!(running || paused));
    let offer = state.map(|s| s.offer).unwrap_or_default();
    dom::by_id::<HtmlElement>("task-save-workflow")?.set_hidden(offer != WorkflowOffer::Save);
    // The name form belongs to the task it was opened for, while that task can be saved.
    let saving = offer == WorkflowOffer::Save
        && SAVING.with(|s| s.borrow().as_deref() == state.map(|s| s.id.as_str()));
    if !saving && SAVING.with(|s| s.borrow().is_some()) {
        close_save_form(false);
    }
    dom::by_id::<HtmlElement>("task-update-workflow")?.set_hidden(offer != WorkflowOffer::Update);

    let line = match state {
        None => String::new(),
        Some(s) => {
            let word = label(match s.status {
                TaskStatus::Running => "taskRunning",
                TaskStatus::Paused => "taskPaused",
                TaskStatus::Done => "taskDone",
                TaskStatus::Failed => "taskFailed",
                TaskStatus::Cancelled => "taskCancelled",
            });
            let line = match s.reason_message() {
                Some(r) => Msg::new("taskStatusReason", vec![text(word), text(plain(&r))]),
                None => {
                    // The running total of tokens, summed from the steps' own counts.
                    let tokens: u64 = s.steps.iter().filter_map(|t| t.tokens).map(u64::from).sum();
                    let (step, most) = (
                        text(s.actions_taken.to_string()),
                        text(s.max_steps.to_string()),
                    );
                    match tokens {
                        0 => Msg::new("taskStatusStep", vec![text(word), step, most]),
                        n => Msg::new(
                            "taskStatusStepTokens",
                            vec![
                                text(word),
                                step,
                                most,
                                tandem_core::i18n::count_shown(
                                    n,
                                    tandem_core::chat::group_thousands(n),
                                ),
                            ],
                        ),
                    }
                }
            };
            plain(&line)
        }
    };
    let status_line: HtmlElement = dom::by_id("task-status")?;
    status_line.set_text_content(Some(&line));
    // Which task the line describes: a new task's line must not be confused with the
    // previous one's final "Done" (tests wait on it; assistive tech ignores it).
    dom::set_attr(
        &status_line,
        "data-task",
        state.map(|s| s.id.as_str()).unwrap_or(""),
    );

    // A site question ("Let Tandem act on …?") has its own three answers; any other
    // pending confirmation is Approve / Deny. Either way the reason is the whole sentence.
    let pending = state.and_then(|s| s.pending.as_ref());
    let site = pending.filter(|p| p.site.is_some());
    let approval = pending.filter(|p| p.site.is_none() && p.tool.is_none());
    dom::by_id::<HtmlElement>("task-site")?.set_hidden(site.is_none());
    // The question in the person's language (its English when the catalog lacks it).
    let asking = |p: &PendingConfirmation| plain(&p.message());
    dom::by_id::<HtmlElement>("task-site-text")?.set_text_content(site.map(asking).as_deref());
    dom::by_id::<HtmlElement>("task-confirm")?.set_hidden(approval.is_none());
    dom::by_id::<HtmlElement>("task-confirm-text")?
        .set_text_content(approval.map(asking).as_deref());
    dom::by_id::<HtmlElement>("task-secret-row")?.set_hidden(!pending.is_some_and(|p| p.secret));
    render_tool_question(pending.filter(|p| p.tool.is_some()))?;

    let question: HtmlElement = dom::by_id("task-question")?;
    let asked = state.and_then(|s| s.question.as_deref());
    question.set_hidden(asked.is_none());
    dom::by_id::<HtmlElement>("task-question-text")?.set_text_content(asked);
    note_waiting(pending, asked)?;

    let list: HtmlElement = dom::by_id("task-steps")?;
    // The timeline is drawn again on every change (and poll): a step whose details the
    // person opened stays open.
    let opened = opened_steps(&list);
    list.set_text_content(None);
    for (i, step) in state
        .map(|s| s.steps.as_slice())
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        let item = dom::create("li", if step.ok { "step" } else { "step failed" })?;
        if let Some(used) = &step.tool {
            tool_step(&item, step, used, opened.contains(&i))?;
            list.append_child(&item).map_err(|_| DomError::NoDocument)?;
            continue;
        }
        step_item(&item, step, opened.contains(&i))?;
        list.append_child(&item).map_err(|_| DomError::NoDocument)?;
    }

    let answer: HtmlElement = dom::by_id("task-answer")?;
    let text = state.and_then(|s| s.answer.clone()).unwrap_or_default();
    answer.set_text_content(Some(&plain(&Msg::new(
        "taskAnswer",
        vec![tandem_core::i18n::text(text.clone())],
    ))));
    answer.set_hidden(text.is_empty());
    Ok(())
}

/// Tells the pinned line (and so the person) what the task waits for, once per question: the
/// group is brought into view when it appears, not at every poll.
fn note_waiting(
    pending: Option<&PendingConfirmation>,
    asked: Option<&str>,
) -> Result<(), DomError> {
    // A tool call's card reports itself (`cards`).
    let pending = pending.filter(|p| p.tool.is_none());
    let Some(text) = tandem_core::agent::waiting::task_waiting(pending, asked) else {
        ASKED.with(|a| a.borrow_mut().clear());
        crate::waiting::done("task");
        return Ok(());
    };
    let id = match pending {
        Some(p) if p.site.is_some() => "task-site",
        Some(_) => "task-confirm",
        None => "task-question",
    };
    let key = format!(
        "{id}\n{}",
        pending.map(|p| p.reason.as_str()).or(asked).unwrap_or("")
    );
    if ASKED.with(|a| *a.borrow() == key) {
        return Ok(());
    }
    ASKED.with(|a| *a.borrow_mut() = key);
    let group: HtmlElement = dom::by_id(id)?;
    crate::waiting::ask("task", &plain(&text), &group);
    Ok(())
}

/// A step as a person reads it ("Clicked **ONE**"), its details (the action as the model
/// wrote it, how it went, who answered, the tokens) one click away in a disclosure.
fn step_item(item: &HtmlElement, step: &StepRecord, open: bool) -> Result<(), DomError> {
    let line = step_line(step);
    // In the person's language: Chrome's catalog, English where it has no such sentence.
    let pieces = tandem_chrome::i18n::pieces(&line.message);
    if line.details.is_empty() {
        return sentence_into(item, &pieces);
    }
    let disclosure = dom::create("details", "step-line")?;
    if open {
        dom::set_attr(&disclosure, "open", "");
    }
    let summary = dom::create("summary", "")?;
    sentence_into(&summary, &pieces)?;
    disclosure
        .append_child(&summary)
        .map_err(|_| DomError::NoDocument)?;
    for detail in &line.details {
        let p = dom::create("p", "step-detail")?;
        p.set_text_content(Some(&tandem_chrome::i18n::plain(detail)));
        disclosure
            .append_child(&p)
            .map_err(|_| DomError::NoDocument)?;
    }
    item.append_child(&disclosure)
        .map_err(|_| DomError::NoDocument)?;
    Ok(())
}

/// The positions of the timeline's steps whose details are open.
fn opened_steps(list: &HtmlElement) -> Vec<usize> {
    let Ok(items) = list.query_selector_all(":scope > li") else {
        return Vec::new();
    };
    (0..items.length())
        .filter(|&i| {
            items
                .item(i)
                .and_then(|li| li.dyn_into::<web_sys::Element>().ok())
                .and_then(|li| li.query_selector("details.step-line[open]").ok().flatten())
                .is_some()
        })
        .map(|i| i as usize)
        .collect()
}

/// The sentence's pieces as text, `strong` and `em` nodes (never HTML from the text).
fn sentence_into(parent: &HtmlElement, pieces: &[Piece]) -> Result<(), DomError> {
    for piece in pieces {
        let node: web_sys::Node = match piece {
            Piece::Text(t) => dom::document()?.create_text_node(t).into(),
            Piece::Strong(t) | Piece::Em(t) => {
                let el = dom::create(
                    if matches!(piece, Piece::Strong(_)) {
                        "strong"
                    } else {
                        "em"
                    },
                    "",
                )?;
                el.set_text_content(Some(t));
                el.into()
            }
        };
        parent
            .append_child(&node)
            .map_err(|_| DomError::NoDocument)?;
    }
    Ok(())
}

/// A tool step of the timeline: the call's card as chat shows it (tool, provider, arguments,
/// result), then who answered the step and what it cost.
fn tool_step(
    item: &HtmlElement,
    step: &StepRecord,
    used: &ToolUse,
    open: bool,
) -> Result<(), DomError> {
    crate::cards::show_use(
        item,
        &used.call_id,
        &used.tool,
        &used.provider,
        &used.arguments,
        None,
    )?;
    crate::cards::show_result(item, &used.call_id, step.ok, &step.result, None)?;
    let mut extra = String::new();
    if let Some(p) = &step.provider {
        extra.push_str(&format!(" · {p}"));
    }
    if let Some(t) = step.tokens {
        extra.push_str(&format!(" · {t} tokens"));
    }
    if !extra.is_empty() {
        let line = dom::create("span", "step-meta")?;
        line.set_text_content(Some(&extra));
        item.append_child(&line).map_err(|_| DomError::NoDocument)?;
    }
    // How the model was asked and answered (a native tool call, the `tool` action under
    // json_schema…), one click away like an action step's details.
    if let Some(sentence) = tandem_core::agent::step_line::output_detail(step) {
        let disclosure = dom::create("details", "step-line")?;
        if open {
            dom::set_attr(&disclosure, "open", "");
        }
        let summary = dom::create("summary", "")?;
        summary.set_text_content(Some(&tandem_chrome::i18n::plain(&Msg::key("stepDetails"))));
        let p = dom::create("p", "step-detail")?;
        p.set_text_content(Some(&tandem_chrome::i18n::plain(&sentence)));
        for child in [&summary, &p] {
            disclosure
                .append_child(child)
                .map_err(|_| DomError::NoDocument)?;
        }
        item.append_child(&disclosure)
            .map_err(|_| DomError::NoDocument)?;
    }
    Ok(())
}

/// A tool call waiting for the user: chat's card with "Run <tool>?" and Approve / Deny (the
/// answer goes to the worker as `ToolDecision`), right under the task's other questions.
/// Rebuilt only when another call waits, so a poll does not replace the buttons under the
/// user's pointer.
fn render_tool_question(pending: Option<&PendingConfirmation>) -> Result<(), DomError> {
    let holder = match dom::by_id::<HtmlElement>("task-tool") {
        Ok(h) => h,
        Err(_) => {
            let holder = dom::create("div", "task-tool")?;
            holder.set_id("task-tool");
            let confirm: HtmlElement = dom::by_id("task-confirm")?;
            let parent = confirm.parent_node().ok_or(DomError::NoDocument)?;
            parent
                .insert_before(&holder, confirm.next_sibling().as_ref())
                .map_err(|_| DomError::NoDocument)?;
            holder
        }
    };
    let Some((p, used)) = pending.and_then(|p| Some((p, p.tool.as_ref()?))) else {
        holder.set_text_content(None);
        holder.set_hidden(true);
        return Ok(());
    };
    holder.set_hidden(false);
    if holder.get_attribute("data-call").as_deref() == Some(used.call_id.as_str())
        && holder.child_element_count() > 0
    {
        return Ok(());
    }
    holder.set_text_content(None);
    dom::set_attr(&holder, "data-call", &used.call_id);
    crate::cards::show_use(
        &holder,
        &used.call_id,
        &used.tool,
        &used.provider,
        &used.arguments,
        Some(&plain(&p.message())),
    )
}
