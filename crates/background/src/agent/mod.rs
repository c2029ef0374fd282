//! The agent's coordinator: the state authority for the one task that may run at a time.
//!
//! The task ([`TaskContext`]) is persisted to `chrome.storage.local` under [`TASK_STATE_KEY`]
//! after every step and broadcast to the panels. The loop (observe with the in-page driver →
//! element map → planner / navigator through ONE task-scoped `HybridSession` → parse → safety
//! → act → record) lives in this worker's memory; when the worker is stopped the loop dies
//! with it, so a task found Running at start-up is marked Paused, and Resume rebuilds the
//! session from the stored transcript and continues with the next step. The tab and page
//! calls the loop makes are in [`page`].

mod page;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::{Function, Object, Promise, Reflect, JSON};
use tandem_core::agent::task::{
    self, parse_planner, parse_stored, PendingConfirmation, StepKind, StepRecord, TaskCommand,
    TaskContext, TaskStatus, UserUpdate, MAP_CHARS, TASK_STATE_KEY,
};
use tandem_core::agent::{
    fence, needs_confirmation, parse_action, tabs, Action, ConfirmReason, DriverCommand, Element,
    ElementMap, ScrollTarget, Snapshot, UrlPolicy,
};
use tandem_core::errors::ErrorKind;
use tandem_core::protocol::WorkerToPanel;
use tandem_core::session::{
    CloudConfig, HybridSession, ProviderId, Schema, SessionConfig, SessionError, SessionManager,
};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{spawn_local, JsFuture};
use web_sys::AbortController;

use crate::chat::post;
use crate::chrome::{self, Port};
use crate::cloud::{BrowserCloud, Timer};
use crate::nano::BrowserNano;
use crate::storage::{self, js_text};
use page::{
    act_in_page, activate_tab, close_tab, get_tab, go_back, is_web, navigate, open_tab, settle,
    snapshot, target_tab,
};

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_namespace = ["chrome", "storage", "local"], js_name = set)]
    fn local_set(items: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "storage", "local"], js_name = remove)]
    fn local_remove(key: &str) -> Result<Promise, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "runtime"], js_name = sendMessage)]
    fn runtime_send_message(message: &JsValue) -> Result<Promise, JsValue>;
}

/// How long one model step may take on Nano before it counts as failed.
const STEP_TIMEOUT_MS: u64 = 60_000;

#[derive(Debug, thiserror::Error)]
enum AgentError {
    #[error("the page could not be read ({0})")]
    Page(String),
    #[error("the page driver answered something unexpected ({0})")]
    Driver(String),
    #[error("the tab is gone ({0})")]
    Tab(String),
    #[error("saving the task failed ({0})")]
    Storage(String),
}

type Manager = SessionManager<BrowserNano, BrowserCloud, Timer>;
type Session = HybridSession<BrowserNano, BrowserCloud, Timer>;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Stop {
    No,
    Pause,
    Cancel,
}

/// The loop running in this worker.
struct Run {
    stop: Rc<Cell<Stop>>,
    controller: AbortController,
    /// Resolves the confirmation the loop waits for.
    confirm: Rc<RefCell<Option<Function>>>,
    /// The value the user typed in the panel for a password field (never stored).
    secret: Rc<RefCell<Option<String>>>,
    /// Resolves the question (`ask_user`) the loop waits for.
    ask: Rc<RefCell<Option<Function>>>,
    /// What the user added while the loop runs; the loop owns `TaskContext` then, so it
    /// applies these itself before its next step (a write to storage from here would be
    /// overwritten by the loop's next save).
    inbox: Rc<RefCell<Vec<UserUpdate>>>,
}

thread_local! {
    static MANAGER: Rc<Manager> =
        Rc::new(SessionManager::new(BrowserNano::default(), BrowserCloud::default(), Timer, None));
    static RUN: RefCell<Option<Run>> = const { RefCell::new(None) };
    /// The start-up check of the stored task, awaited by every command.
    static RECOVERY: RefCell<Option<Promise>> = const { RefCell::new(None) };
    /// A reset of unreadable stored state, told to the next panel that asks.
    static NOTICE: RefCell<Option<String>> = const { RefCell::new(None) };
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
                    if let Some(notice) = notice {
                        NOTICE.with(|n| *n.borrow_mut() = Some(notice));
                    }
                    if let Some(ctx) = ctx.filter(|c| c.status == TaskStatus::Running) {
                        let _ = save(&ctx.after_restart()).await;
                    }
                    Ok(JsValue::UNDEFINED)
                })
            })
            .clone()
    })
}

/// A command from the panel; answered on `port` (and changes are broadcast).
pub fn on_command(port: Port, command: TaskCommand) {
    spawn_local(async move {
        let _ = JsFuture::from(recovery()).await;
        let notice = handle(command).await;
        let (state, reset) = load().await;
        let notice = notice
            .or(reset)
            // Every panel that asks sees why the saved task vanished, until a new one starts.
            .or_else(|| NOTICE.with(|n| n.borrow().clone()));
        let _ = post(
            &port,
            &WorkerToPanel::TaskState {
                state: state.map(Box::new),
                notice,
            },
        );
    });
}

fn running() -> bool {
    RUN.with(|r| r.borrow().is_some())
}

/// Carries out `command`; returns a sentence when it was refused.
async fn handle(command: TaskCommand) -> Option<String> {
    match command {
        TaskCommand::GetState => None,
        TaskCommand::Start { task, tab_id } => {
            NOTICE.with(|n| n.borrow_mut().take());
            let task = task.trim().to_string();
            if task.is_empty() {
                return Some("Type a task first.".into());
            }
            if running() {
                let (current, _) = load().await;
                let what = current.map(|c| c.task).unwrap_or_default();
                return Some(format!(
                    "A task is already running (\u{201c}{what}\u{201d}). Pause or cancel it before starting another."
                ));
            }
            let tab = match target_tab(tab_id).await {
                Ok(t) => t,
                Err(e) => return Some(format!("Tandem cannot start the task: {e}.")),
            };
            let id = format!("task-{}", js_sys::Date::now() as u64);
            let ctx = TaskContext::new(id, task, tab);
            if let Err(e) = save(&ctx).await {
                return Some(format!("Tandem cannot start the task: {e}."));
            }
            launch(ctx);
            None
        }
        TaskCommand::Resume => {
            if running() {
                return Some("The task is already running.".into());
            }
            let (ctx, _) = load().await;
            match ctx {
                Some(ctx) if ctx.status == TaskStatus::Paused => relaunch(ctx).await,
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
                    ctx.finish(TaskStatus::Cancelled, "Cancelled by you.");
                    let _ = save(&ctx).await;
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
        TaskCommand::Confirm { approve, secret } => {
            let resolve = RUN.with(|r| {
                r.borrow().as_ref().and_then(|run| {
                    *run.secret.borrow_mut() = secret.filter(|s| approve && !s.is_empty());
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

/// The answer to a question the task asked before the worker restarted (the task is Paused
/// with it): recorded like an answer to the running loop, and the task goes on.
async fn answer_paused(text: &str) -> Option<String> {
    let (ctx, _) = load().await;
    let Some(mut ctx) = ctx.filter(|c| c.status == TaskStatus::Paused) else {
        return Some("Tandem is not waiting for an answer.".into());
    };
    let Some((action, result)) = ctx.answer_question(text) else {
        return Some("Tandem is not waiting for an answer.".into());
    };
    ctx.record_action(action, None, Ok(result), None, None);
    relaunch(ctx).await
}

/// Runs a paused task again from its next step.
async fn relaunch(mut ctx: TaskContext) -> Option<String> {
    ctx.status = TaskStatus::Running;
    ctx.reason = None;
    if let Err(e) = save(&ctx).await {
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
    match save(&ctx).await {
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
    let policy = settings.agent.policy().map_err(|e| e.to_string())?;
    policy.check(&text("url")).map_err(|e| {
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
    let ask = Rc::new(RefCell::new(None));
    let inbox = Rc::new(RefCell::new(Vec::new()));
    RUN.with(|r| {
        *r.borrow_mut() = Some(Run {
            stop: stop.clone(),
            controller: controller.clone(),
            confirm: confirm.clone(),
            secret: secret.clone(),
            ask: ask.clone(),
            inbox: inbox.clone(),
        })
    });
    spawn_local(async move {
        let mut ctx = ctx;
        let mut looper = Loop {
            stop,
            confirm,
            secret,
            ask,
            inbox,
            previous: None,
            policy: UrlPolicy::default(),
            approve_plan: false,
            failovers_seen: 0,
            planner_schema: task::planner_schema(),
            navigator_schema: task::navigator_schema(),
        };
        looper.run(&mut ctx, controller).await;
        RUN.with(|r| *r.borrow_mut() = None);
        // Added after the loop's last step: a paused task keeps them for its resume.
        looper.take_updates(&mut ctx);
        let _ = save(&ctx).await;
    });
}

fn manager() -> Rc<Manager> {
    MANAGER.with(Rc::clone)
}

struct Loop {
    stop: Rc<Cell<Stop>>,
    confirm: Rc<RefCell<Option<Function>>>,
    secret: Rc<RefCell<Option<String>>>,
    ask: Rc<RefCell<Option<Function>>>,
    inbox: Rc<RefCell<Vec<UserUpdate>>>,
    previous: Option<ElementMap>,
    /// The user's allow / deny lists of sites.
    policy: UrlPolicy,
    /// Settings' "Approve the plan before acting".
    approve_plan: bool,
    /// The session's switches to the cloud already on the timeline.
    failovers_seen: usize,
    /// The answers' JSON shapes, Nano's `responseConstraint`.
    planner_schema: Schema,
    navigator_schema: Schema,
}

/// What one observation gives the loop.
struct Observed {
    snapshot: Snapshot,
    map: ElementMap,
    list: String,
}

impl Loop {
    async fn run(&mut self, ctx: &mut TaskContext, controller: AbortController) {
        let manager = manager();
        manager.transport().set_controller(Some(controller));
        let settings = match storage::settings().await {
            Ok(s) => s,
            Err(e) => return ctx.finish(TaskStatus::Failed, e.to_string()),
        };
        manager.set_cloud(CloudConfig::from_settings(&settings, settings.budget.clone()).ok());
        self.policy = match settings.agent.policy() {
            Ok(p) => p,
            Err(e) => return ctx.finish(TaskStatus::Failed, e.to_string()),
        };
        self.approve_plan = settings.agent.approve_plan;
        let config = SessionConfig {
            system_prompt: task::system_prompt(),
            schema_instructions: task::schema_instructions(),
            preferred: settings.on_device,
            step_timeout_ms: Some(STEP_TIMEOUT_MS),
            temperature: Some(0.0),
            scope: settings.agent.session_scope,
            ..SessionConfig::default()
        };
        let session = match ctx.transcript.take() {
            Some(transcript) => manager.resume(config, transcript).await,
            None => manager.create(config).await,
        };
        let mut session = match session {
            Ok(s) => s,
            Err(e) => return ctx.finish(TaskStatus::Failed, e.to_string()),
        };
        self.steps(ctx, &mut session).await;
        ctx.transcript = Some(session.transcript().clone());
        // Every path ends here: the session never outlives its task.
        session.destroy();
        manager.transport().set_controller(None);
    }

    /// Applies a Pause / Cancel; true when the loop must end.
    fn stopped(&self, ctx: &mut TaskContext) -> bool {
        match self.stop.get() {
            Stop::No => ctx.status != TaskStatus::Running,
            Stop::Pause => {
                ctx.status = TaskStatus::Paused;
                ctx.pending = None;
                ctx.reason = Some("Paused by you. Press Resume to continue.".into());
                true
            }
            Stop::Cancel => {
                ctx.finish(TaskStatus::Cancelled, "Cancelled by you.");
                true
            }
        }
    }

    async fn persist(&self, ctx: &mut TaskContext, session: &Session) {
        ctx.transcript = Some(session.transcript().clone());
        if self.stop.get() == Stop::Cancel {
            ctx.finish(TaskStatus::Cancelled, "Cancelled by you.");
        }
        if let Err(e) = save(ctx).await {
            crate::log_error("the task could not be saved", &e.to_string().into());
        }
    }

    async fn steps(&mut self, ctx: &mut TaskContext, session: &mut Session) {
        loop {
            if self.stopped(ctx) {
                return;
            }
            if self.take_updates(ctx) {
                self.persist(ctx, session).await;
            }
            // A question asked before a worker restart is still open: its answer comes first.
            if ctx.question.is_some() {
                let before = session.token_log().len();
                self.await_answer(ctx, session, before).await;
                continue;
            }
            if ctx.actions_taken >= ctx.max_steps {
                let limit = ctx.max_steps;
                return ctx.finish(
                    TaskStatus::Failed,
                    format!(
                        "Stopped after {limit} steps, the most a task may take, without finishing."
                    ),
                );
            }
            let observed = match self.observe(ctx.tab_id, 0).await {
                Ok(o) => o,
                Err(e) => {
                    // The page may be loading: wait and look again once.
                    chrome::sleep(500).await;
                    match self.observe(ctx.tab_id, 0).await {
                        Ok(o) => o,
                        Err(_) => {
                            ctx.errors.push(e.to_string());
                            return ctx.finish(
                                TaskStatus::Failed,
                                format!("Tandem could not read the page: {e}."),
                            );
                        }
                    }
                }
            };
            // The site lists hold for the page the agent is on, not only for where it goes.
            if let Err(e) = self.policy.check(&observed.snapshot.url) {
                ctx.errors.push(e.to_string());
                return ctx.finish(
                    TaskStatus::Failed,
                    format!("Stopped: {e}. Tandem does not act on this site; change the site lists in Settings to allow it."),
                );
            }
            if ctx.planner_due() {
                let first = ctx.plan.is_empty() && ctx.actions_taken == 0;
                if let Err(e) = self.plan(ctx, session, &observed.list, None).await {
                    return self.session_failed(ctx, e);
                }
                self.persist(ctx, session).await;
                if self.stopped(ctx) {
                    return;
                }
                if first && self.approve_plan {
                    ctx.pending = Some(PendingConfirmation {
                        action: "the plan".into(),
                        target: None,
                        reason: format!("Approve the plan before Tandem acts: {}", ctx.plan),
                        secret: false,
                    });
                    self.persist(ctx, session).await;
                    let approved = self.wait_for_confirmation().await;
                    ctx.pending = None;
                    if self.stopped(ctx) {
                        return;
                    }
                    if !approved {
                        return ctx.finish(
                            TaskStatus::Cancelled,
                            "You denied the plan; nothing was done.",
                        );
                    }
                }
            }
            let before = session.token_log().len();
            let turn = task::navigator_turn(ctx, &observed.list);
            let asked = self.ask_action(session, &turn).await;
            self.note_failovers(ctx, session);
            let action = match asked {
                Ok(Ok(a)) => a,
                Ok(Err(detail)) => {
                    if self.stopped(ctx) {
                        return;
                    }
                    ctx.actions_taken += 1;
                    self.record(
                        ctx,
                        session,
                        before,
                        "(no valid action)".into(),
                        None,
                        Err(detail),
                    );
                    if ctx.failed_step() {
                        return self.too_many_failures(ctx);
                    }
                    self.persist(ctx, session).await;
                    continue;
                }
                Err(e) => return self.session_failed(ctx, e),
            };
            if self.stopped(ctx) {
                return;
            }
            ctx.actions_taken += 1;
            let print = task::fingerprint(&observed.snapshot.url, &observed.list);
            if ctx.note_action(&print, &action) {
                let json = action.to_json().to_string();
                self.record(
                    ctx,
                    session,
                    before,
                    json,
                    None,
                    Err("the same action on the same page again".into()),
                );
                return ctx.finish(
                    TaskStatus::Failed,
                    "Stopped: the agent repeated the same action on the same page without progress.",
                );
            }
            if let Action::Done { success, answer } = &action {
                let answer = answer.clone().unwrap_or_default();
                let json = action.to_json().to_string();
                self.record(
                    ctx,
                    session,
                    before,
                    json,
                    None,
                    Ok("the navigator reports the task done".into()),
                );
                if !success {
                    ctx.answer = Some(answer.clone());
                    return ctx.finish(
                        TaskStatus::Failed,
                        format!("The agent could not do the task: {answer}"),
                    );
                }
                match self.plan(ctx, session, &observed.list, Some(&answer)).await {
                    Ok(true) => {
                        ctx.answer = Some(answer);
                        return ctx.finish(TaskStatus::Done, "Task complete.");
                    }
                    Ok(false) => {
                        ctx.feedback =
                            "The planner says the task is not complete yet; follow the plan."
                                .into();
                        self.persist(ctx, session).await;
                        continue;
                    }
                    Err(e) => return self.session_failed(ctx, e),
                }
            }
            if let Action::AskUser { question } = &action {
                ctx.question = Some(question.clone());
                self.await_answer(ctx, session, before).await;
                continue;
            }
            let (target, outcome) = self.act(ctx, session, &observed, &action).await;
            if self.stop.get() != Stop::No {
                let json = action.to_json().to_string();
                self.record(
                    ctx,
                    session,
                    before,
                    json,
                    target,
                    Err("stopped before acting".into()),
                );
                continue; // `stopped` ends the loop with the right status.
            }
            let failed = outcome.is_err();
            let json = action.to_json().to_string();
            self.record(ctx, session, before, json, target, outcome);
            if failed {
                if ctx.failed_step() {
                    return self.too_many_failures(ctx);
                }
            } else {
                ctx.consecutive_failures = 0;
            }
            self.persist(ctx, session).await;
        }
    }

    /// Applies what the user added since the last step; true when anything was.
    fn take_updates(&self, ctx: &mut TaskContext) -> bool {
        let updates = std::mem::take(&mut *self.inbox.borrow_mut());
        let any = !updates.is_empty();
        for update in updates {
            // Checked when it arrived; it can still clash with what the loop did since
            // (the agent opened that very tab, say): then there is nothing to add.
            if let Err(e) = ctx.apply(update) {
                crate::log_error("a task update was dropped", &e.to_string().into());
            }
        }
        any
    }

    /// Waits for the user's answer to `ctx.question` and records it as the step that
    /// started at token-log entry `before`. The question is saved first, so it survives a
    /// worker restart.
    async fn await_answer(&self, ctx: &mut TaskContext, session: &Session, before: usize) {
        let Some(question) = ctx.question.clone() else {
            return;
        };
        self.persist(ctx, session).await;
        let answer = self.wait_for_answer().await;
        let Some(answer) = answer else {
            ctx.question = None;
            let json = Action::AskUser { question }.to_json().to_string();
            self.record(ctx, session, before, json, None, Err("not answered".into()));
            return; // `stopped` ends the loop with the right status.
        };
        if let Some((json, result)) = ctx.answer_question(&answer) {
            self.record(ctx, session, before, json, None, Ok(result));
        }
        ctx.consecutive_failures = 0;
        self.persist(ctx, session).await;
    }

    fn too_many_failures(&self, ctx: &mut TaskContext) {
        let last = ctx.errors.last().cloned().unwrap_or_default();
        ctx.finish(
            TaskStatus::Failed,
            format!(
                "Stopped after {} failed steps in a row (last: {last}).",
                task::MAX_CONSECUTIVE_FAILURES
            ),
        );
    }

    fn session_failed(&self, ctx: &mut TaskContext, e: SessionError) {
        if self.stopped(ctx) {
            return;
        }
        // Firebase AI Logic is called by the side panel: without one the task waits (the
        // failed step is not in the transcript, so Resume runs it again).
        if let SessionError::Cloud { error, .. } = &e {
            if error.kind == ErrorKind::NeedsPanel {
                ctx.status = TaskStatus::Paused;
                ctx.pending = None;
                ctx.reason = Some(format!(
                    "{} Then press Resume: the task goes on from this step.",
                    error.message
                ));
                return;
            }
        }
        ctx.errors.push(e.to_string());
        ctx.finish(TaskStatus::Failed, format!("The AI provider failed: {e}"));
    }

    /// Appends the timeline line of the step that started at token-log entry `before`.
    fn record(
        &self,
        ctx: &mut TaskContext,
        session: &Session,
        before: usize,
        action: String,
        target: Option<String>,
        outcome: Result<String, String>,
    ) {
        let (provider, tokens) = answered(session, before);
        ctx.record_action(action, target, outcome, provider, Some(tokens));
    }

    /// Runs the planner; returns whether it judged the task complete (only asked with `done`).
    async fn plan(
        &mut self,
        ctx: &mut TaskContext,
        session: &mut Session,
        list: &str,
        done: Option<&str>,
    ) -> Result<bool, SessionError> {
        let before = session.token_log().len();
        let reply = session
            .invoke(
                &task::planner_turn(ctx, list, done),
                constraint(session, &self.planner_schema),
            )
            .await;
        self.note_failovers(ctx, session);
        let parsed = parse_planner(&reply?);
        if !parsed.plan.trim().is_empty() {
            ctx.plan = parsed.plan.clone();
        }
        let (provider, tokens) = answered(session, before);
        let result = match done {
            Some(_) if parsed.complete => "the task is complete".to_string(),
            Some(_) => "the task is not complete yet".to_string(),
            None => "plan made".to_string(),
        };
        ctx.record(StepRecord {
            kind: StepKind::Plan,
            action: ctx.plan.clone(),
            target: None,
            result,
            ok: true,
            provider,
            tokens: Some(tokens),
        });
        Ok(done.is_none() || parsed.complete)
    }

    /// Puts the session's new switches to the cloud on the timeline.
    fn note_failovers(&mut self, ctx: &mut TaskContext, session: &Session) {
        for failover in session.failovers().iter().skip(self.failovers_seen) {
            ctx.record_switch(failover);
        }
        self.failovers_seen = session.failovers().len();
    }

    /// The navigator's action; `Ok(Err(why))` when its answer was malformed twice.
    async fn ask_action(
        &self,
        session: &mut Session,
        turn: &str,
    ) -> Result<Result<Action, String>, SessionError> {
        let reply = session
            .invoke(turn, constraint(session, &self.navigator_schema))
            .await?;
        match parse_action(&reply) {
            Ok(parsed) => Ok(Ok(parsed.action)),
            Err(first) => {
                if self.stop.get() != Stop::No {
                    return Ok(Err(first.to_string()));
                }
                // Re-ask once, telling the model what was wrong.
                let again = format!("{}\n{first}", task::NAVIGATOR_TAG);
                let reply = session
                    .invoke(&again, constraint(session, &self.navigator_schema))
                    .await?;
                Ok(parse_action(&reply)
                    .map(|p| p.action)
                    .map_err(|e| format!("the model's answer was not a valid action twice ({e})")))
            }
        }
    }

    async fn observe(&mut self, tab: i32, max_text: u32) -> Result<Observed, AgentError> {
        let snapshot = snapshot(tab, max_text).await?;
        let map = ElementMap::build(&snapshot, self.previous.as_ref());
        let list = map.render(&snapshot, MAP_CHARS).text;
        self.previous = Some(map.clone());
        Ok(Observed {
            snapshot,
            map,
            list,
        })
    }

    /// Carries out `action`; returns the target's label and the result sentence.
    async fn act(
        &mut self,
        ctx: &mut TaskContext,
        session: &Session,
        observed: &Observed,
        action: &Action,
    ) -> (Option<String>, Result<String, String>) {
        let tab = ctx.tab_id;
        match action {
            Action::Navigate { url } => {
                if let Err(e) = self.policy.check(url) {
                    return (None, Err(format!("not allowed: {e}")));
                }
                match navigate(tab, url).await {
                    Ok(()) => (None, Ok(format!("opened {url}"))),
                    Err(e) => (None, Err(format!("could not open {url}: {e}"))),
                }
            }
            Action::Back => match go_back(tab).await {
                Ok(()) => (None, Ok("went back".into())),
                Err(e) => (None, Err(e.to_string())),
            },
            Action::Wait { ms } => {
                chrome::sleep(i32::try_from(*ms).unwrap_or(i32::MAX)).await;
                (None, Ok(format!("waited {ms} ms")))
            }
            Action::OpenTab { url } => {
                if let Err(e) = self.policy.check(url) {
                    return (None, Err(format!("not allowed: {e}")));
                }
                match open_tab(url).await {
                    Ok(id) => {
                        tabs::opened(ctx, id);
                        self.previous = None;
                        settle(id).await;
                        (
                            None,
                            Ok(format!("opened {url} in a new tab, now the current tab")),
                        )
                    }
                    Err(e) => (None, Err(format!("could not open {url}: {e}"))),
                }
            }
            Action::SwitchTab { tab: index } => {
                let before = ctx.tab_id;
                match tabs::switch_to(ctx, *index) {
                    Ok(id) => match activate_tab(id).await {
                        Ok(()) => {
                            self.previous = None;
                            (None, Ok(format!("switched to tab [{index}]")))
                        }
                        Err(e) => {
                            ctx.tab_id = before;
                            (None, Err(e.to_string()))
                        }
                    },
                    Err(e) => (None, Err(e.to_string())),
                }
            }
            Action::CloseTab => match tabs::close_current(ctx) {
                Ok((closed, next)) => {
                    if let Err(e) = close_tab(closed).await {
                        crate::log_error("closing a task tab failed", &e.to_string().into());
                    }
                    let _ = activate_tab(next).await;
                    self.previous = None;
                    (
                        None,
                        Ok("closed the tab; the previous tab is current again".into()),
                    )
                }
                Err(e) => (None, Err(e.to_string())),
            },
            Action::ExtractText { element: None } => match snapshot(tab, 4000).await {
                Ok(s) => {
                    let text = s.text.unwrap_or_default();
                    ctx.extracted.push(text.clone());
                    (None, Ok(fence("page text", &text)))
                }
                Err(e) => (None, Err(e.to_string())),
            },
            Action::Scroll {
                target: ScrollTarget::Page(_),
            } => {
                let Some(command) = action.driver_command() else {
                    return (None, Err("nothing to do".into()));
                };
                match act_in_page(tab, None, &command).await {
                    Ok(_) => (None, Ok("scrolled".into())),
                    Err(e) => (None, Err(e)),
                }
            }
            _ => self.act_on_element(ctx, session, observed, action).await,
        }
    }

    /// The failure ladder: locate by signature in a fresh snapshot; if missing, refresh the
    /// map and try once more; a second failure makes the planner re-plan.
    async fn act_on_element(
        &mut self,
        ctx: &mut TaskContext,
        session: &Session,
        observed: &Observed,
        action: &Action,
    ) -> (Option<String>, Result<String, String>) {
        let tab = ctx.tab_id;
        let (Some(id), Some(command)) = (action.element(), action.driver_command()) else {
            return (None, Err("this action needs an element".into()));
        };
        let mut target = observed
            .map
            .element(id, &observed.snapshot)
            .map(|el| label(id, el));
        let mut last_error = String::new();
        for attempt in 0..2 {
            if attempt > 0 {
                chrome::sleep(400).await;
            }
            let fresh = match snapshot(tab, 0).await {
                Ok(s) => s,
                Err(e) => {
                    last_error = e.to_string();
                    continue;
                }
            };
            let element = match observed.map.locate(id, &fresh) {
                Ok(el) => el.clone(),
                Err(e) => {
                    last_error = e.to_string();
                    continue;
                }
            };
            target = Some(label(id, &element));
            let mut command = command.clone();
            let mut typed_secret = false;
            if let Some(reason) = needs_confirmation(action, Some(&element), &fresh) {
                let secret = matches!(reason, ConfirmReason::EntersPassword);
                ctx.pending = Some(PendingConfirmation {
                    action: action.to_json().to_string(),
                    target: target.clone(),
                    reason: if secret {
                        format!("This action needs your approval: {reason}. Type the password below: it goes to the page only, never to the AI.")
                    } else {
                        format!("This action needs your approval: {reason}.")
                    },
                    secret,
                });
                self.secret.borrow_mut().take();
                self.persist(ctx, session).await;
                let approved = self.wait_for_confirmation().await;
                ctx.pending = None;
                let value = self.secret.borrow_mut().take();
                if let (true, Some(value), DriverCommand::Type { text, .. }) =
                    (secret, value, &mut command)
                {
                    *text = value;
                    typed_secret = true;
                }
                if !approved {
                    return (
                        target,
                        Err("you denied this action; it was not done. Do not try it again".into()),
                    );
                }
            }
            let _ = act_in_page(
                tab,
                Some(&element.handle),
                &DriverCommand::Highlight { ms: Some(800) },
            )
            .await;
            match act_in_page(tab, Some(&element.handle), &command).await {
                Ok(_) if typed_secret => {
                    settle(tab).await;
                    return (
                        target,
                        Ok("typed (the value you entered in the panel)".into()),
                    );
                }
                Ok(result) => {
                    settle(tab).await;
                    return (target, Ok(result));
                }
                Err(e) => last_error = e,
            }
        }
        // Second failure: record it and let the planner re-plan before the next step.
        ctx.plan.clear();
        (target, Err(last_error))
    }

    /// The user's answer to the question in `ctx.question`; `None` when the task was stopped.
    async fn wait_for_answer(&self) -> Option<String> {
        let slot = self.ask.clone();
        let promise = Promise::new(&mut |resolve, _reject| {
            *slot.borrow_mut() = Some(resolve);
        });
        let answer = JsFuture::from(promise)
            .await
            .ok()
            .and_then(|v| v.as_string());
        answer.filter(|_| self.stop.get() == Stop::No)
    }

    async fn wait_for_confirmation(&self) -> bool {
        let slot = self.confirm.clone();
        let promise = Promise::new(&mut |resolve, _reject| {
            *slot.borrow_mut() = Some(resolve);
        });
        JsFuture::from(promise)
            .await
            .ok()
            .and_then(|v| v.as_bool())
            .unwrap_or(false)
            && self.stop.get() == Stop::No
    }
}

/// Nano decodes to the answer's JSON Schema (`responseConstraint`), and two answers that
/// still miss it make the session fail over. A cloud reply is not held to it: it goes
/// through `parse_action`'s repairs and one re-ask, which a strict check would pre-empt.
fn constraint<'a>(session: &Session, schema: &'a Schema) -> Option<&'a Schema> {
    (session.provider() == Some(ProviderId::Nano)).then_some(schema)
}

/// Who answers `session` now, and the tokens of its attempts from token-log entry `before`
/// on (one step, retries and failovers included), for the timeline.
fn answered(session: &Session, before: usize) -> (Option<String>, u32) {
    let tokens = session
        .token_log()
        .get(before..)
        .unwrap_or_default()
        .iter()
        .map(|t| t.sent.saturating_add(t.received))
        .sum();
    (session.provider().map(|p| p.label().to_string()), tokens)
}

/// `[8] link "Blue backpack — $35"`, for the timeline.
fn label(id: u32, el: &Element) -> String {
    let role = el.effective_role().unwrap_or(el.tag.as_str());
    let name = if el.name.is_empty() {
        &el.text
    } else {
        &el.name
    };
    let name: String = name.chars().take(60).collect();
    format!("[{id}] {role} \"{name}\"")
}

/// The stored task, and a notice when unreadable state was reset.
async fn load() -> (Option<TaskContext>, Option<String>) {
    let read = async {
        let promise =
            chrome::storage_local_get(&JsValue::from_str(TASK_STATE_KEY)).map_err(js_text)?;
        let items = JsFuture::from(promise).await.map_err(js_text)?;
        let value = Reflect::get(&items, &TASK_STATE_KEY.into()).map_err(js_text)?;
        if value.is_undefined() {
            return Ok::<_, String>("null".to_string());
        }
        JSON::stringify(&value).map(String::from).map_err(js_text)
    };
    let json = match read.await {
        Ok(j) => j,
        Err(e) => {
            return (
                None,
                Some(format!("The saved task could not be read ({e}).")),
            )
        }
    };
    match parse_stored(&json) {
        Ok(ctx) => (ctx, None),
        Err(e) => {
            if let Ok(p) = local_remove(TASK_STATE_KEY) {
                let _ = JsFuture::from(p).await;
            }
            (None, Some(e.to_string()))
        }
    }
}

/// Persists `ctx` and tells every open panel.
async fn save(ctx: &TaskContext) -> Result<(), AgentError> {
    let value = JSON::parse(&ctx.to_json()).map_err(|e| AgentError::Storage(js_text(e)))?;
    let items = Object::new();
    let _ = Reflect::set(&items, &TASK_STATE_KEY.into(), &value);
    let promise = local_set(&items).map_err(|e| AgentError::Storage(js_text(e)))?;
    JsFuture::from(promise)
        .await
        .map_err(|e| AgentError::Storage(js_text(e)))?;
    let message = WorkerToPanel::TaskState {
        state: Some(Box::new(ctx.clone())),
        notice: None,
    };
    if let Ok(p) = runtime_send_message(&JsValue::from_str(&message.to_json())) {
        // No panel open is not an error.
        let _ = JsFuture::from(p).await;
    }
    Ok(())
}
