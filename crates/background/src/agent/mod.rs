//! The agent's coordinator: the state authority for the one task that may run at a time.
//!
//! The task ([`TaskContext`]) is persisted after every step and broadcast to the panels
//! ([`store`]). The loop ([`run`]: observe with the in-page driver → element map → planner /
//! navigator through ONE task-scoped `HybridSession` → parse → safety → act → record) lives
//! in this worker's memory; when the worker is stopped the loop dies with it, so a task found
//! Running at start-up is marked Paused, and Resume rebuilds the session from the stored
//! transcript and continues with the next step. Acting on the page and its failure ladder are
//! in [`act`]; the tab and page calls are in [`page`].

mod act;
mod error;
mod firewall;
mod held;
mod hosts;
mod page;
mod recorder;
mod replay;
mod run;
mod shot;
mod store;
mod trusted;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::{Function, Promise, Reflect};
use tandem_chrome::i18n::plain;
use tandem_core::agent::task::{self, TaskCommand, TaskContext, TaskStatus, TaskView, UserUpdate};
use tandem_core::agent::UrlPolicy;
use tandem_core::i18n::{nested, text, Mark, Msg};
use tandem_core::protocol::WorkerToPanel;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{spawn_local, JsFuture};
use web_sys::AbortController;

use crate::chrome::Port;
use crate::outbox::post;
use crate::sessions::Session;
use crate::storage;
use hosts::canonical_host;
use page::{allowed, get_tab, is_web, target_tab};
use run::{Loop, Stop};
use store::{broadcast, forget, load, save};

/// The loop running in this worker.
struct Run {
    stop: Rc<Cell<Stop>>,
    controller: AbortController,
    /// Resolves the confirmation the loop waits for.
    confirm: Rc<RefCell<Option<Function>>>,
    /// The value the user typed in the panel for a password field (never stored).
    secret: Rc<RefCell<Option<String>>>,
    /// The user chose "Always allow on this site" for the site question the loop waits on.
    always: Rc<Cell<bool>>,
    /// Resolves the question (`ask_user`) the loop waits for.
    ask: Rc<RefCell<Option<Function>>>,
    /// What the user added while the loop runs; the loop owns `TaskContext` then, so it
    /// applies these itself before its next step (a write to storage from here would be
    /// overwritten by the loop's next save).
    inbox: Rc<RefCell<Vec<UserUpdate>>>,
    /// The tool call waiting for the user's Approve / Deny (`ToolDecision`), if any.
    tool_call: Rc<RefCell<Option<String>>>,
}

thread_local! {
    static RUN: RefCell<Option<Run>> = const { RefCell::new(None) };
    /// The start-up check of the stored task, awaited by every command.
    static RECOVERY: RefCell<Option<Promise>> = const { RefCell::new(None) };
    /// A reset of unreadable stored state, told to the next panel that asks.
    static NOTICE: RefCell<Option<String>> = const { RefCell::new(None) };
    /// A Start or Resume between its check and its launch (see [`Starting`]).
    static STARTING: Cell<bool> = const { Cell::new(false) };
}

/// The claim of a Start or Resume on the one run: taken synchronously when the command is
/// checked, held across the awaits before `launch`, released when dropped. Without it, two
/// commands in the same tick (a double click, two panels) both pass the check and start
/// two loops, the first of which can no longer be paused or cancelled.
struct Starting;

impl Starting {
    fn claim() -> Option<Starting> {
        if running() {
            return None;
        }
        STARTING.with(|s| s.set(true));
        Some(Starting)
    }
}

impl Drop for Starting {
    fn drop(&mut self) {
        STARTING.with(|s| s.set(false));
    }
}

/// At worker start: a task left Running is marked Paused (its loop died with the old worker).
pub fn start() {
    let _ = recovery();
}

fn recovery() -> Promise {
    RECOVERY.with(|r| {
        r.borrow_mut()
            .get_or_insert_with(|| {
                wasm_bindgen_futures::future_to_promise(async {
                    let (ctx, notice) = load().await;
                    // Rules left by a loop that died with the old worker must not block
                    // the user's own browsing while the task waits to be resumed.
                    firewall::clear().await;
                    // Likewise the listener recorder of its hosts; the sites allowed always
                    // keep theirs, brought in line with the grants and lists as they are now.
                    recorder::sync().await;
                    if let Some(notice) = notice {
                        NOTICE.with(|n| *n.borrow_mut() = Some(notice));
                    }
                    if let Some(ctx) = ctx.filter(|c| c.status == TaskStatus::Running) {
                        let _ = save(&ctx.after_restart());
                    }
                    Ok(JsValue::UNDEFINED)
                })
            })
            .clone()
    })
}

/// The site grants or the site lists changed (`storage.onChanged`): the listener recorder
/// follows them.
pub fn sites_changed() {
    spawn_local(recorder::sync());
}

/// A command from the panel; answered on `port` (and changes are broadcast).
pub fn on_command(port: Port, command: TaskCommand) {
    spawn_local(async move {
        let _ = JsFuture::from(recovery()).await;
        let have = match &command {
            TaskCommand::GetState { have } => have.clone(),
            _ => None,
        };
        let notice = handle(command).await;
        let (state, reset) = load().await;
        let notice = notice
            .or(reset)
            // Every panel that asks sees why the saved task vanished, until a new one starts.
            .or_else(|| NOTICE.with(|n| n.borrow().clone()));
        let view = state.map(|ctx| TaskView::from(&ctx));
        let reply = match (view, have) {
            // A poll from a panel that holds this task: only what it lacks.
            (Some(view), Some((id, steps))) if notice.is_none() && id == view.id => {
                WorkerToPanel::TaskDelta {
                    delta: Box::new(view.delta_since(steps)),
                }
            }
            (view, _) => WorkerToPanel::TaskState {
                state: view.map(Box::new),
                notice,
            },
        };
        let _ = post(&port, &reply);
    });
}

fn running() -> bool {
    RUN.with(|r| r.borrow().is_some()) || STARTING.with(Cell::get)
}

/// Carries out `command`; returns a sentence when it was refused.
async fn handle(command: TaskCommand) -> Option<String> {
    match command {
        TaskCommand::GetState { .. } => None,
        TaskCommand::Start { task, tab_id } => {
            NOTICE.with(|n| n.borrow_mut().take());
            let task = task.trim().to_string();
            if task.is_empty() {
                return Some("Type a task first.".into());
            }
            let Some(_claim) = Starting::claim() else {
                let (current, _) = load().await;
                let what = current.map(|c| c.task).unwrap_or_default();
                return Some(format!(
                    "A task is already running (\u{201c}{what}\u{201d}). Pause or cancel it before starting another."
                ));
            };
            let tab = match target_tab(tab_id).await {
                Ok(t) => t,
                Err(e) => return Some(format!("Tandem cannot start the task: {e}.")),
            };
            let id = format!("task-{}", js_sys::Date::now() as u64);
            let ctx = TaskContext::new(id, task, tab);
            if let Err(e) = save(&ctx) {
                return Some(format!("Tandem cannot start the task: {e}."));
            }
            launch(ctx);
            None
        }
        TaskCommand::Resume => {
            let Some(_claim) = Starting::claim() else {
                return Some("The task is already running.".into());
            };
            let (ctx, _) = load().await;
            match ctx {
                Some(ctx) if ctx.status == TaskStatus::Paused => relaunch(ctx),
                _ => Some("There is no paused task to resume.".into()),
            }
        }
        TaskCommand::Pause => {
            if !signal(Stop::Pause) {
                return Some("No task is running.".into());
            }
            None
        }
        TaskCommand::Cancel => {
            signal(Stop::Cancel);
            // Stop at once, in storage too: the loop will not write Running again.
            let (ctx, _) = load().await;
            match ctx {
                Some(mut ctx) if !ctx.status.is_final() => {
                    ctx.finish(
                        TaskStatus::Cancelled,
                        tandem_core::i18n::Msg::key("taskCancelledByYou"),
                    );
                    let _ = save(&ctx);
                    None
                }
                _ => Some("No task to cancel.".into()),
            }
        }
        TaskCommand::Answer { text } => {
            let resolve = RUN.with(|r| {
                r.borrow()
                    .as_ref()
                    .and_then(|run| run.ask.borrow_mut().take())
            });
            match resolve {
                Some(f) => {
                    let _ = f.call1(&JsValue::NULL, &JsValue::from_str(&text));
                    None
                }
                None if !running() => answer_paused(&text).await,
                None => Some("Tandem is not waiting for an answer.".into()),
            }
        }
        TaskCommand::UpdateContext { note } => update(UserUpdate::Note(note)).await,
        TaskCommand::RecordAction { description } => {
            update(UserUpdate::DidItself(description)).await
        }
        TaskCommand::AddRelevantTab { tab_id } => match tab_to_add(tab_id).await {
            Ok(tab) => update(tab).await,
            Err(sentence) => Some(sentence),
        },
        TaskCommand::Dismiss => {
            let (ctx, _) = load().await;
            if running() || ctx.as_ref().is_some_and(|c| !c.status.is_final()) {
                return Some("Cancel the task before dismissing it.".into());
            }
            if let Err(e) = forget().await {
                return Some(format!("Tandem could not forget the task: {e}."));
            }
            NOTICE.with(|n| n.borrow_mut().take());
            broadcast(None, 0);
            None
        }
        TaskCommand::SaveWorkflow { name } => {
            let (ctx, _) = load().await;
            Some(crate::workflows::save_task(ctx, &name).await)
        }
        TaskCommand::UpdateWorkflow => {
            let (ctx, _) = load().await;
            Some(crate::workflows::update_from_run(ctx).await)
        }
        TaskCommand::RunWorkflow {
            name,
            params,
            tab_id,
        } => {
            NOTICE.with(|n| n.borrow_mut().take());
            let Some(_claim) = Starting::claim() else {
                return Some(
                    "A task is already running. Pause or cancel it before running a workflow."
                        .into(),
                );
            };
            let tab = match target_tab(tab_id).await {
                Ok(t) => t,
                Err(e) => return Some(format!("Tandem cannot run the workflow: {e}.")),
            };
            let ctx = match crate::workflows::run_task(&name, &params, tab).await {
                Ok(ctx) => ctx,
                Err(sentence) => return Some(sentence),
            };
            let start = ctx.replay.as_ref().map(|r| r.start_url.clone());
            if let Err(sentence) = open_start(tab, start.as_deref().unwrap_or_default()).await {
                return Some(sentence);
            }
            if let Err(e) = save(&ctx) {
                return Some(format!("Tandem cannot run the workflow: {e}."));
            }
            launch(ctx);
            None
        }
        TaskCommand::Confirm {
            approve,
            secret,
            always,
        } => {
            let resolve = RUN.with(|r| {
                r.borrow().as_ref().and_then(|run| {
                    *run.secret.borrow_mut() = secret.filter(|s| approve && !s.is_empty());
                    run.always.set(approve && always);
                    run.confirm.borrow_mut().take()
                })
            });
            match resolve {
                Some(f) => {
                    let _ = f.call1(&JsValue::NULL, &JsValue::from_bool(approve));
                    None
                }
                None => Some("Nothing is waiting for your approval.".into()),
            }
        }
    }
}

/// A workflow's scheduled run: in a new background tab, unless a task is running (then this
/// time is skipped, and said so). Its approvals and a divergence the schedule does not let
/// the model take pause it and notify (`replay.rs`, `Loop::confirm`).
pub async fn run_scheduled(workflow_id: &str, allow_model: bool) -> Result<(), String> {
    let _ = JsFuture::from(recovery()).await;
    let Some(_claim) = Starting::claim() else {
        return Err("another task was running, so this run was skipped".into());
    };
    // Checked before a tab is opened for it: a run the site lists forbid opens nothing.
    let (mut ctx, start) = match crate::workflows::run_task(workflow_id, &[], 0).await {
        Ok(ctx) => {
            let start = ctx.replay.as_ref().map(|r| r.start_url.clone());
            (ctx, start.unwrap_or_default())
        }
        Err(sentence) => return Err(sentence),
    };
    start_allowed(&start).await?;
    let tab = page::open_background_tab("about:blank")
        .await
        .map_err(|e| format!("Tandem could not open a tab for it ({e})"))?;
    ctx.tab_id = tab;
    ctx.relevant_tabs = vec![tab];
    if let Some(replay) = ctx.replay.as_mut() {
        replay.scheduled = true;
        replay.allow_model = allow_model;
    }
    if let Err(sentence) = open_start(tab, &start).await {
        // Nothing ran in it: the tab would only hold a blank or half-loaded page.
        let _ = page::close_tab(tab).await;
        return Err(sentence);
    }
    save(&ctx).map_err(|e| format!("Tandem could not start it ({e})"))?;
    launch(ctx);
    Ok(())
}

/// Whether the site lists let a workflow start at `url`; the sentence when not.
async fn start_allowed(url: &str) -> Result<(), String> {
    let settings = storage::settings().await.map_err(|e| e.to_string())?;
    let policy = settings
        .agent
        .policy_with(canonical_host)
        .map_err(|e| e.to_string())?;
    allowed(&policy, url).map_err(|e| {
        format!("Tandem does not act on this workflow's site ({e}); change the site lists in Settings to allow it.")
    })
}

/// Opens a workflow's start page in `tab` before its run's first look, if the site lists
/// allow it (the page the tab shows now may be one no extension can read), and waits until
/// it has loaded and the driver is in it: the first look must be of the start page, not of
/// the page before it or of one still on its way.
async fn open_start(tab: i32, url: &str) -> Result<(), String> {
    start_allowed(url).await?;
    page::load_for_run(tab, url)
        .await
        .map_err(|e| format!("Tandem could not open the workflow's start page: {e}."))
}

/// The answer to a question the task asked before the worker restarted (the task is Paused
/// with it): recorded like an answer to the running loop, and the task goes on.
async fn answer_paused(text: &str) -> Option<String> {
    let Some(_claim) = Starting::claim() else {
        return Some("The task is already running.".into());
    };
    let (ctx, _) = load().await;
    let Some(mut ctx) = ctx.filter(|c| c.status == TaskStatus::Paused) else {
        return Some("Tandem is not waiting for an answer.".into());
    };
    let Some((action, result)) = ctx.answer_question(text) else {
        return Some("Tandem is not waiting for an answer.".into());
    };
    ctx.record_action(action, None, Ok(result), None, None);
    relaunch(ctx)
}

/// Runs a paused task again from its next step.
fn relaunch(mut ctx: TaskContext) -> Option<String> {
    ctx.status = TaskStatus::Running;
    ctx.reason = None;
    if let Err(e) = save(&ctx) {
        return Some(format!("Tandem cannot resume the task: {e}."));
    }
    launch(ctx);
    None
}

/// UPDATE_TASK_CONTEXT / RECORD_ACTION / TASK_ADD_RELEVANT_TAB: refused with a sentence
/// when it cannot apply; handed to the running loop, or applied to the stored task.
async fn update(update: UserUpdate) -> Option<String> {
    let (ctx, _) = load().await;
    let Some(mut ctx) = ctx else {
        return Some("There is no task to add this to; start a task first.".into());
    };
    // A running loop holds updates it has not applied yet: judge this one as if it had.
    let handed = RUN.with(|r| {
        let run = r.borrow();
        let run = run.as_ref()?;
        let mut preview = ctx.clone();
        for earlier in run.inbox.borrow().iter() {
            let _ = preview.apply(earlier.clone());
        }
        let verdict = preview.check(&update);
        if verdict.is_ok() {
            run.inbox.borrow_mut().push(update.clone());
        }
        Some(verdict)
    });
    match handed {
        Some(Ok(())) => {
            return Some("Noted. The agent takes it into account before its next step.".into())
        }
        Some(Err(e)) => return Some(e.to_string()),
        None => {}
    }
    if let Err(e) = ctx.apply(update) {
        return Some(e.to_string());
    }
    match save(&ctx) {
        Ok(()) => None,
        Err(e) => Some(format!("Tandem could not add this to the task: {e}.")),
    }
}

/// The panel's tab as a tab to add to the task: a web page the site lists allow.
async fn tab_to_add(tab_id: Option<i32>) -> Result<UserUpdate, String> {
    let id = tab_id.ok_or("Tandem cannot tell which tab this panel belongs to.")?;
    let tab = get_tab(id)
        .await
        .map_err(|e| format!("Tandem cannot read this tab ({e})."))?;
    if !is_web(&tab) {
        return Err("Only a tab showing a web page can be part of a task.".into());
    }
    let text = |key: &str| {
        Reflect::get(&tab, &key.into())
            .ok()
            .and_then(|v| v.as_string())
            .unwrap_or_default()
    };
    let settings = storage::settings().await.map_err(|e| e.to_string())?;
    let policy = settings
        .agent
        .policy_with(canonical_host)
        .map_err(|e| e.to_string())?;
    allowed(&policy, &text("url")).map_err(|e| {
        format!("Tandem does not act on this site ({e}); change the site lists in Settings to allow it.")
    })?;
    let title = text("title");
    Ok(UserUpdate::Tab {
        id,
        title: if title.is_empty() { text("url") } else { title },
    })
}

/// Tells the running loop to stop; false when none runs.
fn signal(stop: Stop) -> bool {
    RUN.with(|r| {
        let run = r.borrow();
        let Some(run) = run.as_ref() else {
            return false;
        };
        run.stop.set(stop);
        if stop == Stop::Cancel {
            run.controller.abort();
        }
        // A pending confirmation is answered "no" so the loop wakes up and sees the stop.
        if let Some(f) = run.confirm.borrow_mut().take() {
            let _ = f.call1(&JsValue::NULL, &JsValue::FALSE);
        }
        if let Some(f) = run.ask.borrow_mut().take() {
            let _ = f.call1(&JsValue::NULL, &JsValue::NULL);
        }
        // A tool call waiting for Approve / Deny is answered "no" likewise; nothing runs.
        if let Some(call_id) = run.tool_call.borrow().clone() {
            crate::tools::on_decision(call_id, false);
        }
        true
    })
}

fn launch(ctx: TaskContext) {
    let controller = match AbortController::new() {
        Ok(c) => c,
        Err(e) => {
            crate::log_error("AbortController unavailable", &e);
            return;
        }
    };
    let stop = Rc::new(Cell::new(Stop::No));
    let confirm = Rc::new(RefCell::new(None));
    let secret = Rc::new(RefCell::new(None));
    let always = Rc::new(Cell::new(false));
    let ask = Rc::new(RefCell::new(None));
    let inbox = Rc::new(RefCell::new(Vec::new()));
    let tool_call = Rc::new(RefCell::new(None));
    RUN.with(|r| {
        *r.borrow_mut() = Some(Run {
            stop: stop.clone(),
            controller: controller.clone(),
            confirm: confirm.clone(),
            secret: secret.clone(),
            always: always.clone(),
            ask: ask.clone(),
            inbox: inbox.clone(),
            tool_call: tool_call.clone(),
        })
    });
    spawn_local(async move {
        let mut ctx = ctx;
        let mut looper = Loop {
            stop,
            confirm,
            secret,
            always,
            ask,
            inbox,
            previous: None,
            last_page: None,
            policy: UrlPolicy::default(),
            approve_plan: false,
            failovers_seen: 0,
            planner_schema: task::planner_schema(),
            navigator_schema: task::navigator_schema(),
            controller: controller.clone(),
            tool_call,
            firewall: firewall::Guard::default(),
            eyes: run::Eyes::default(),
        };
        looper.run(&mut ctx, controller).await;
        RUN.with(|r| *r.borrow_mut() = None);
        // Whatever ended it: the sites it went to see nothing of Tandem again (a resumed
        // task registers them anew as it looks at them).
        recorder::end_task().await;
        // Added after the loop's last step: a paused task keeps them for its resume.
        looper.take_updates(&mut ctx);
        let _ = save(&ctx);
        crate::workflows::note_outcome(&ctx).await;
    });
}

/// A workflow's alarm rang: run it (in a background tab), and plan the next time.
pub fn on_workflow_alarm(name: &str) {
    let Some(id) = tandem_core::agent::workflow::workflow_of_alarm(name).map(str::to_string) else {
        return;
    };
    spawn_local(async move {
        let Ok(mut list) = crate::workflows::load().await else {
            return;
        };
        let now = js_sys::Date::now() as u64;
        let Some(flow) = list.iter_mut().find(|w| w.id == id) else {
            return; // deleted: the view clears its alarm
        };
        let Some(schedule) = flow.schedule.as_mut() else {
            return;
        };
        schedule.after_run(now);
        let allow_model = schedule.allow_model;
        let name = flow.name.clone();
        let _ = crate::workflows::store(&list).await;
        if let Err(why) = run_scheduled(&id, allow_model).await {
            let why = tandem_core::agent::why::reason(why.trim_end_matches('.'));
            let outcome = Msg::new("workflowNotRunBecause", vec![nested(Mark::Plain, why)]);
            let title = Msg::new("workflowScheduled", vec![text(name)]);
            crate::workflows::notify(&id, &plain(&title), &plain(&outcome));
            crate::workflows::set_last_run(&id, outcome).await;
        }
    });
}

/// The person clicked the notification of workflow `id`'s run (`background.js` has already
/// asked Chrome to open the side panel: the click's gesture does not outlive that call).
/// The run's tab, if it is the current task's and still open, comes to the front in its
/// window, and the panels show the run: the task card while it waits for the person, else
/// the workflow's entry with its last run.
pub fn on_workflow_notice(id: &str) {
    let id = id.to_string();
    spawn_local(async move {
        let (ctx, _) = load().await;
        let run = ctx.filter(|c| c.replay.as_ref().is_some_and(|r| r.workflow_id == id));
        let waiting = run.as_ref().is_some_and(|c| !c.status.is_final());
        if let Some(ctx) = run {
            if let Err(e) = page::bring_to_front(ctx.tab_id).await {
                // The run's tab was closed meanwhile: its outcome is still shown.
                crate::log_error("the run's tab could not be shown", &e.to_string().into());
            }
        }
        crate::workflows::show_in_panels(&id, waiting).await;
    });
}
