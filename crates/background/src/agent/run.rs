//! The agent's loop: one step after another until the task ends, pauses or is cancelled.
//! Observe the page, ask the planner when due and the navigator every step through the one
//! task-scoped session, check the answer, act ([`super::act`]), record, save.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::{Function, Promise};
use tandem_core::agent::cost::TokenAllowance;
use tandem_core::agent::flow::flow_message;
use tandem_core::agent::look::{self, needs_auto_look, resolve_point, shot_note, Shot};
use tandem_core::agent::task::{
    self, parse_planner, PageSeen, PendingConfirmation, StepKind, StepRecord, TaskContext,
    TaskStatus, UserUpdate, MAP_CHARS,
};
use tandem_core::agent::tool_step;
use tandem_core::agent::{
    explain_script_error, needs_site_grant, page_refusal, parse_action, site_denied, site_question,
    Action, DragTarget, ElementMap, Snapshot, UrlPolicy,
};
use tandem_core::errors::ErrorKind;
use tandem_core::i18n::{nested, text, Mark, Msg};
use tandem_core::request::{ToolCall, ToolOutcome};
use tandem_core::session::{
    Availability, CloudConfig, NanoBackend, NanoCreateOptions, Preferred, Schema, SessionConfig,
    SessionError,
};
use tandem_core::tools::{plan_call, CallPlan, Failure};
use tandem_core::vision::takes_images;
use wasm_bindgen_futures::JsFuture;
use web_sys::AbortController;

use super::error::AgentError;
use super::firewall::Guard;
use super::hosts::{canonical_host, host_of};
use super::page::{
    allowed, describe_all, lap, pending_look, settle, snapshot, snapshot_in_full, tab_url,
    take_timings, Phase, Prepared,
};
use super::shot;
use super::store::{load_grants, remember_site, save};
use crate::chrome;
use crate::sessions::{manager, Session, STEP_TIMEOUT_MS};
use crate::storage;

/// What the user asked of the running loop: nothing yet, Pause or Cancel.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Stop {
    No,
    Pause,
    Cancel,
}

/// What the loop does after a replayed step.
pub(super) enum Replayed {
    /// Save and look again: the next step (or the end) follows.
    Next,
    /// The task ended (done, denied, stopped).
    End,
    /// The model takes over from this step.
    Diverged,
}

pub(super) struct Loop {
    pub(super) stop: Rc<Cell<Stop>>,
    pub(super) confirm: Rc<RefCell<Option<Function>>>,
    pub(super) secret: Rc<RefCell<Option<String>>>,
    pub(super) always: Rc<Cell<bool>>,
    pub(super) ask: Rc<RefCell<Option<Function>>>,
    pub(super) inbox: Rc<RefCell<Vec<UserUpdate>>>,
    pub(super) previous: Option<Rc<ElementMap>>,
    /// The URL and fingerprint of the previous step's page, for what changed since (the
    /// compact turns say it).
    pub(super) last_page: Option<(String, String)>,
    /// The user's allow / deny lists of sites.
    pub(super) policy: UrlPolicy,
    /// Settings' "Approve the plan before acting".
    pub(super) approve_plan: bool,
    /// The session's switches to the cloud already on the timeline.
    pub(super) failovers_seen: usize,
    /// The answers' JSON shapes, Nano's `responseConstraint`.
    pub(super) planner_schema: Schema,
    pub(super) navigator_schema: Schema,
    /// The task's controller (Cancel aborts it): a tool call in flight ends with it.
    pub(super) controller: AbortController,
    /// The id of the tool call waiting for the user's Approve / Deny, so Pause can answer it.
    pub(super) tool_call: Rc<RefCell<Option<String>>>,
    /// The task's firewall, up while `steps` runs.
    pub(super) firewall: Guard,
    /// Screenshots: whether the model may look, and this step's.
    pub(super) eyes: Eyes,
}

/// The loop's screenshots (`look`, see `shot.rs` and core's `agent::look`).
#[derive(Default)]
pub(super) struct Eyes {
    /// The task's model takes images, so its schema offers `look` (fixed for the session,
    /// like the rest of its system text).
    pub(super) offered: bool,
    /// The model asked to look: the next step's turn carries a screenshot.
    pub(super) asked: bool,
    /// The screenshot this step's turn carried, for `click_at` by its pixels.
    pub(super) shot: Option<Shot>,
    /// The page state (`task::loop_state`) the last automatic look showed: the same page is
    /// not sent again unasked.
    pub(super) last_auto: Option<String>,
}

/// The key a task's page tools are kept under (beside chat turns' request ids).
fn task_key(ctx: &TaskContext) -> String {
    format!("task:{}", ctx.id)
}

/// The user's answer to the site question.
pub(super) enum Grant {
    Given,
    Denied(String),
    /// Paused or cancelled while asking.
    Stopped,
}

pub(super) struct Observed {
    pub(super) snapshot: Snapshot,
    /// Shared with the loop's `previous`, the next map's source of stable ids (a large page's
    /// map is ~1,500 entries: a copy a step cost more than the sharing).
    pub(super) map: Rc<ElementMap>,
    pub(super) list: String,
}

/// Whether Chrome says this device's Gemini Nano takes images (`availability()` with image
/// input is anything but "unavailable"); no Prompt API reads as no.
async fn nano_takes_images() -> bool {
    let seeing = SessionConfig {
        images: true,
        ..SessionConfig::default()
    };
    manager()
        .nano()
        .availability(&NanoCreateOptions::for_session(&seeing, Vec::new()))
        .await
        .is_ok_and(|a| a != Availability::Unavailable)
}

impl Loop {
    pub(super) async fn run(&mut self, ctx: &mut TaskContext, controller: AbortController) {
        let manager = manager();
        let settings = match storage::settings().await {
            Ok(s) => s,
            Err(e) => return ctx.finish(TaskStatus::Failed, e.to_string()),
        };
        manager.set_cloud(CloudConfig::from_settings(&settings, settings.budget.clone()).ok());
        self.policy = match settings.agent.policy_with(canonical_host) {
            Ok(p) => p,
            Err(e) => return ctx.finish(TaskStatus::Failed, e.to_string()),
        };
        self.approve_plan = settings.agent.approve_plan;
        // The cost ceiling: a new task gets one ceiling's worth of tokens, one paused at it
        // (Continue) one more from where it stopped.
        let token_limit = settings.agent.token_limit;
        ctx.token_allowance =
            TokenAllowance::renew(ctx.token_allowance, ctx.tokens_used(), token_limit);
        // The tools are read once per task: the instructions listing them are sent once per
        // session, and a resumed session keeps the text it started with. The page tools
        // (WebMCP) of the task's tab are listed again at every (re)start, so the calls of a
        // resumed task are planned against what its page offers now.
        crate::tools::note_task(&task_key(ctx), ctx.tab_id);
        let listed = crate::tools::specs_for(&task_key(ctx)).await;
        let tools = ctx.tools.get_or_insert(listed).clone();
        // Screenshots only for a model that takes images: the cloud model by its name,
        // Gemini Nano when Chrome says this device's model takes images, and then its
        // session is created with image input (Chrome fixes input types at creation).
        let cloud_sees = settings.on_device != Preferred::Nano
            && CloudConfig::from_settings(&settings, settings.budget.clone())
                .is_ok_and(|c| takes_images(c.kind, &c.model));
        let nano_sees = settings.on_device != Preferred::Cloud && nano_takes_images().await;
        self.eyes.offered = cloud_sees || nano_sees;
        self.navigator_schema = look::navigator_schema(&tools, self.eyes.offered);
        let config = SessionConfig {
            system_prompt: task::system_prompt(),
            schema_instructions: look::schema_instructions(&tools, self.eyes.offered),
            preferred: settings.on_device,
            step_timeout_ms: Some(STEP_TIMEOUT_MS),
            temperature: Some(0.0),
            scope: settings.agent.session_scope,
            images: nano_sees,
            ..SessionConfig::default()
        };
        let session = match ctx.transcript.take() {
            Some(transcript) => manager.resume(config, transcript).await,
            None => manager.create(config).await,
        };
        let mut session = match session {
            Ok(s) => s,
            Err(e) => {
                crate::tools::forget_task(&task_key(ctx));
                return ctx.finish(TaskStatus::Failed, e.to_string());
            }
        };
        // Cancel aborts the provider's answer in flight.
        session.set_abort(Some(controller));
        // On the cloud the navigator is offered the task's tools natively too.
        session.set_step_tools(tools);
        self.firewall.up(ctx).await;
        self.steps(ctx, &mut session, token_limit).await;
        self.firewall.down().await;
        crate::tools::forget_task(&task_key(ctx));
        ctx.transcript = Some(session.transcript().clone());
        // Every path ends here: the session never outlives its task.
        session.destroy();
    }

    /// Applies a Pause / Cancel; true when the loop must end.
    pub(super) fn stopped(&self, ctx: &mut TaskContext) -> bool {
        match self.stop.get() {
            Stop::No => ctx.status != TaskStatus::Running,
            Stop::Pause => {
                ctx.status = TaskStatus::Paused;
                ctx.pending = None;
                ctx.set_reason(Msg::key("taskPausedByYou"));
                true
            }
            Stop::Cancel => {
                ctx.finish(TaskStatus::Cancelled, Msg::key("taskCancelledByYou"));
                true
            }
        }
    }

    pub(super) fn persist(&self, ctx: &mut TaskContext, session: &Session) {
        let started = js_sys::Date::now();
        ctx.transcript = Some(session.transcript().clone());
        if self.stop.get() == Stop::Cancel {
            ctx.finish(TaskStatus::Cancelled, Msg::key("taskCancelledByYou"));
        }
        if let Err(e) = save(ctx) {
            crate::log_error("the task could not be saved", &e.to_string().into());
        }
        // Counted in the step just recorded; stored with the next save, since this one has
        // already been written.
        if let Some(t) = ctx.steps.last_mut().and_then(|s| s.timings.as_mut()) {
            t.persist += (js_sys::Date::now() - started).max(0.0);
        }
    }

    async fn steps(&mut self, ctx: &mut TaskContext, session: &mut Session, token_limit: u32) {
        loop {
            if self.stopped(ctx) || ctx.pause_at_token_limit(token_limit) {
                return;
            }
            if self.take_updates(ctx) {
                self.persist(ctx, session);
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
                    Msg::new("taskTooManySteps", vec![text(limit.to_string())]),
                );
            }
            // Each action step's record carries the phases timed since here.
            take_timings();
            describe_all(ctx.replay.is_some());
            let observed = match self.look(ctx.tab_id).await {
                Ok(o) => o,
                Err((sentence, raw)) => {
                    ctx.errors.push(raw);
                    return ctx.finish(TaskStatus::Failed, sentence);
                }
            };
            // The site lists hold for the page the agent is on, not only for where it goes.
            if let Err(e) = allowed(&self.policy, &observed.snapshot.url) {
                ctx.errors.push(e.to_string());
                return ctx.finish(
                    TaskStatus::Failed,
                    format!("Stopped: {e}. Tandem does not act on this site; change the site lists in Settings to allow it."),
                );
            }
            // What the model is about to read on this site: values a later step must not
            // carry to another site unasked.
            if let Some(host) = host_of(&observed.snapshot.url) {
                ctx.read.note(&host, &observed.list);
            }
            self.firewall.note_frames(&observed.snapshot);
            self.firewall.sync(ctx).await;
            let print = task::fingerprint(&observed.snapshot.url, &observed.list);
            let last = self
                .last_page
                .replace((observed.snapshot.url.clone(), print.clone()));
            let last = last.as_ref().map(|(u, f)| (u.as_str(), f.as_str()));
            let mut seen = PageSeen {
                url: &observed.snapshot.url,
                title: &observed.snapshot.title,
                change: task::page_change(last, &observed.snapshot.url, &print),
            };
            // A saved workflow's run takes its steps from the workflow, not the model, until
            // it ends or the page no longer matches (then the model goes on from here).
            if ctx.replay.is_some() {
                match self.replay_step(ctx, session, &observed).await {
                    Replayed::Next => {
                        self.persist(ctx, session);
                        continue;
                    }
                    Replayed::End => return,
                    Replayed::Diverged => {}
                }
            }
            if ctx.planner_due() {
                let first = ctx.plan.is_empty() && ctx.actions_taken == 0;
                if let Err(e) = self.plan(ctx, session, &observed.list, &seen, None).await {
                    return self.session_failed(ctx, e);
                }
                seen.named();
                self.persist(ctx, session);
                if self.stopped(ctx) {
                    return;
                }
                if first && self.approve_plan {
                    let plan = PendingConfirmation::asking(
                        "the plan",
                        None,
                        Msg::new("taskApprovePlan", vec![text(ctx.plan.clone())]),
                    );
                    let approved = self.confirm(ctx, session, plan).await;
                    if self.stopped(ctx) {
                        return;
                    }
                    if !approved {
                        return ctx.finish(TaskStatus::Cancelled, Msg::key("taskPlanDenied"));
                    }
                }
            }
            // The planner may have used the rest of the allowance: no navigator request then.
            if ctx.pause_at_token_limit(token_limit) {
                return;
            }
            let before = session.token_log().len();
            // A tool's images from the last step: pictures for a model that reads them, a
            // sentence each in the step's result for one that does not.
            let images = ctx.images_for_next_turn(session.takes_images());
            session.attach_images(images);
            let state = task::loop_state(
                &observed.snapshot.url,
                &observed.list,
                &observed.snapshot.text_digest,
            );
            let seen_note = self.screenshot(ctx, session, &observed, &state).await;
            let turn = task::navigator_turn(ctx, &format!("{seen_note}{}", observed.list));
            let summary = task::navigator_summary(ctx, &seen);
            seen.named();
            let asked = self.ask_action(session, &turn, &summary).await;
            // The screenshot went with this step's request (and its re-ask) only.
            session.clear_screenshot();
            self.note_failovers(ctx, session);
            let (action, native) = match asked {
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
                    self.persist(ctx, session);
                    continue;
                }
                Err(e) => return self.session_failed(ctx, e),
            };
            if self.stopped(ctx) {
                return;
            }
            ctx.actions_taken += 1;
            if ctx.note_action(&state, &action) {
                self.record_action(
                    ctx,
                    session,
                    before,
                    &action,
                    None,
                    Err("the same action on the same page again".into()),
                );
                return ctx.finish(TaskStatus::Failed, Msg::key("taskRepeated"));
            }
            if let Action::Done { success, answer } = &action {
                let answer = answer.clone().unwrap_or_default();
                self.record_action(
                    ctx,
                    session,
                    before,
                    &action,
                    None,
                    Ok("the navigator reports the task done".into()),
                );
                if !success {
                    ctx.answer = Some(answer.clone());
                    return ctx.finish(
                        TaskStatus::Failed,
                        Msg::new("taskCouldNot", vec![text(answer)]),
                    );
                }
                match self
                    .plan(ctx, session, &observed.list, &seen, Some(&answer))
                    .await
                {
                    Ok(true) => {
                        ctx.answer = Some(answer);
                        return ctx.finish(TaskStatus::Done, Msg::key("taskComplete"));
                    }
                    Ok(false) => {
                        ctx.feedback =
                            "The planner says the task is not complete yet; follow the plan."
                                .into();
                        self.persist(ctx, session);
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
            let call = match &native {
                Some(native) => Some(tool_step::native_call(ctx, native)),
                None => tool_step::call_of(ctx, &action),
            };
            if let Some(call) = call {
                let outcome = self.use_tool(ctx, session, before, &action, call).await;
                let ok = !outcome.is_error;
                // A native call's outcome goes back as the provider's tool result (also when
                // the task was stopped meanwhile, so the call and its result stay a pair).
                if let Some(native) = native {
                    ctx.feedback = tool_step::native_feedback(&outcome);
                    session.answer_call(ToolOutcome {
                        call_id: native.id,
                        name: native.name,
                        ..outcome
                    });
                }
                if let Some(step) = ctx.steps.last_mut() {
                    step.output = output_mode(session);
                }
                if self.stop.get() != Stop::No {
                    continue; // `stopped` ends the loop with the right status.
                }
                if ok {
                    ctx.consecutive_failures = 0;
                } else if ctx.failed_step() {
                    return self.too_many_failures(ctx);
                }
                self.persist(ctx, session);
                continue;
            }
            if let Action::Look = &action {
                let outcome = if self.eyes.offered && session.takes_images() {
                    self.eyes.asked = true;
                    Ok(look::looked_sentence())
                } else {
                    Err("look is not available: this model does not take images; use the element list".to_string())
                };
                let failed = outcome.is_err();
                self.record_action(ctx, session, before, &action, None, outcome);
                if !failed {
                    ctx.consecutive_failures = 0;
                } else if ctx.failed_step() {
                    return self.too_many_failures(ctx);
                }
                self.persist(ctx, session);
                continue;
            }
            // A point of the screenshot is a point of the listed element under it: from here
            // on it is that element's click_at, with every check a click on it meets.
            let action = match action {
                Action::ClickPoint { x, y } => {
                    match resolve_point(
                        &observed.map,
                        &observed.snapshot,
                        self.eyes.shot.as_ref(),
                        x,
                        y,
                    ) {
                        Ok(resolved) => resolved,
                        Err(e) => {
                            if self.failed(ctx, session, before, &action, e.to_string()) {
                                return self.too_many_failures(ctx);
                            }
                            continue;
                        }
                    }
                }
                other => other,
            };
            // A key without an element is the focused element's, checked as such.
            let action =
                tandem_core::agent::keys::aim_at_focus(action, &observed.map, &observed.snapshot);
            if needs_site_grant(&action) {
                match self.site_grant(ctx, session, &observed.snapshot.url).await {
                    Grant::Given => {}
                    Grant::Stopped => continue, // `stopped` ends the loop with the right status.
                    Grant::Denied(host) => {
                        self.record_action(
                            ctx,
                            session,
                            before,
                            &action,
                            None,
                            Err(format!("you did not let Tandem act on {host}")),
                        );
                        return ctx.finish(TaskStatus::Cancelled, site_denied(&host));
                    }
                }
            }
            // An element far from the viewport was described briefly (the model knows its
            // number from an earlier list): every check of the action, and the workflow
            // step it records, read it described in full.
            let observed = match brief_target(&action, &observed) {
                true => match self.observe_in_full(ctx.tab_id).await {
                    Ok(full) => full,
                    Err(e) => {
                        if self.failed(ctx, session, before, &action, e.to_string()) {
                            return self.too_many_failures(ctx);
                        }
                        continue;
                    }
                },
                false => observed,
            };
            let (target, outcome) = self.act(ctx, session, &observed, &action).await;
            let outcome = self
                .held_back(ctx, session, outcome, &observed.snapshot.url)
                .await;
            if self.stop.get() != Stop::No {
                self.record_action(
                    ctx,
                    session,
                    before,
                    &action,
                    target,
                    Err("stopped before acting".into()),
                );
                continue; // `stopped` ends the loop with the right status.
            }
            let failed = outcome.is_err();
            // Text read out of the page is read on its site too.
            if let (Action::ExtractText { .. }, Ok(text)) = (&action, &outcome) {
                if let Some(host) = host_of(&observed.snapshot.url) {
                    ctx.read.note(&host, text);
                }
            }
            self.record_action(ctx, session, before, &action, target, outcome);
            if !failed {
                self.note_recorded(ctx, &observed, &action);
            }
            if failed {
                if ctx.failed_step() {
                    return self.too_many_failures(ctx);
                }
            } else {
                ctx.consecutive_failures = 0;
            }
            self.persist(ctx, session);
        }
    }

    /// The `tool` action: the call is planned against the registry as it is now (unknown,
    /// Deny or invalid arguments are refused without calling the provider), asked about in
    /// the panel when its policy is Ask, and sent as TOOL_EXECUTE through the same functions
    /// as chat's calls (30 s limit, Cancel aborts). Whatever comes of it is recorded as the
    /// step's result, which the next navigator turn hears; true when the tool answered.
    async fn use_tool(
        &self,
        ctx: &mut TaskContext,
        session: &Session,
        before: usize,
        action: &Action,
        call: ToolCall,
    ) -> ToolOutcome {
        let controller = &self.controller;
        let registry = crate::tools::turn_registry(&task_key(ctx)).await;
        let mut plan = plan_call(&registry, &call);
        // Arguments that carry what the agent read on a site go to the tool's provider, a
        // place of their own: the user is asked, with the values and where they were read,
        // even for a tool that runs unasked otherwise.
        let carried = match &plan {
            CallPlan::Run(run) | CallPlan::Ask { run, .. } => {
                let to = flow_place(&run.provider_name);
                let user = ctx.user_texts();
                let found = ctx.read.carried(&to, &run.params.to_string(), &user);
                (!found.is_empty()).then(|| {
                    let how = Msg::new("flowToolArgs", vec![text(run.label.clone())]);
                    (flow_message(&found, &to, how), found, to)
                })
            }
            CallPlan::Reject(_) => None,
        };
        if let Some((sentence, _, _)) = &carried {
            plan = match plan {
                CallPlan::Run(run) => CallPlan::Ask {
                    question: sentence.english(),
                    run,
                },
                CallPlan::Ask { question, run } => CallPlan::Ask {
                    question: format!("{question} {}", sentence.english()),
                    run,
                },
                reject => reject,
            };
        }
        let (used, outcome) = match plan {
            CallPlan::Reject(outcome) => (tool_step::refused_use(&call, &registry), Ok(outcome)),
            CallPlan::Run(run) => (
                tool_step::tool_use_of(&call, &run),
                crate::tools::execute_run(&run, controller).await,
            ),
            CallPlan::Ask { question, run } => {
                let used = tool_step::tool_use_of(&call, &run);
                // The question as a message: the tool's, the data-flow one, or both.
                let asked = tandem_core::tools::turn::question_message(&run);
                let flow = carried.as_ref().map(|(m, _, _)| m.clone());
                let said = [
                    Some(asked.clone()),
                    flow.clone(),
                    flow.map(|f| asked.then(f)),
                ]
                .into_iter()
                .flatten()
                .find(|m| m.english() == question);
                ctx.pending = Some(PendingConfirmation {
                    action: action.to_json().to_string(),
                    target: None,
                    reason: question,
                    secret: false,
                    site: None,
                    tool: Some(used.clone()),
                    said,
                });
                *self.tool_call.borrow_mut() = Some(call.id.clone());
                // Shown (saved and broadcast) only once the answer has somewhere to go.
                let decided = crate::tools::decide_after(&call.id, controller, &mut || {
                    self.persist(ctx, session)
                })
                .await;
                self.tool_call.borrow_mut().take();
                ctx.pending = None;
                let outcome = match decided {
                    Ok(true) if self.stop.get() == Stop::No => {
                        if let Some((_, found, to)) = &carried {
                            ctx.read.approve(found, to);
                        }
                        crate::tools::execute_run(&run, controller).await
                    }
                    Ok(_) if self.stop.get() == Stop::No => {
                        Ok(run.failed(&Failure::DeclinedByUser))
                    }
                    // Paused or cancelled while asking: nothing ran.
                    _ => Err(crate::http::Failure::Stopped),
                };
                (used, outcome)
            }
        };
        let (provider, tokens) = answered(session, before);
        match outcome {
            Ok(outcome) => {
                // What a tool answered was read there, like a page's text.
                if !outcome.is_error {
                    let place = flow_place(&used.provider);
                    ctx.read.note(&place, &outcome.content);
                }
                ctx.record_tool(action, used, &outcome, provider, Some(tokens));
                outcome
            }
            Err(_) => {
                let stopped = ToolOutcome {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    content: "stopped before the tool answered".into(),
                    is_error: true,
                    images: Vec::new(),
                };
                ctx.record_tool(action, used, &stopped, provider, Some(tokens));
                stopped
            }
        }
    }

    /// Applies what the user added since the last step; true when anything was.
    pub(super) fn take_updates(&self, ctx: &mut TaskContext) -> bool {
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
        self.persist(ctx, session);
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
        self.persist(ctx, session);
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
        let said = match &e {
            SessionError::Cloud { step, error } => Msg::new(
                "errAtStep",
                vec![
                    text((step + 1).to_string()),
                    nested(Mark::Plain, error.message_said()),
                ],
            ),
            _ => Msg::literal(e.to_string()),
        };
        ctx.finish(
            TaskStatus::Failed,
            Msg::new("taskProviderFailed", vec![nested(Mark::Plain, said)]),
        );
    }

    /// Appends the timeline line of the step that started at token-log entry `before`.
    /// [`Loop::record`] of the model's action, as its JSON.
    fn record_action(
        &self,
        ctx: &mut TaskContext,
        session: &Session,
        before: usize,
        action: &Action,
        target: Option<String>,
        outcome: Result<String, String>,
    ) {
        let json = action.to_json().to_string();
        self.record(ctx, session, before, json, target, outcome);
    }

    /// Records `action` as failed for `why` before it reached the page. True when that was a
    /// failure too many (the caller ends with `too_many_failures`); else the step is saved
    /// and the loop goes on.
    fn failed(
        &self,
        ctx: &mut TaskContext,
        session: &Session,
        before: usize,
        action: &Action,
        why: String,
    ) -> bool {
        self.record_action(ctx, session, before, action, None, Err(why));
        if ctx.failed_step() {
            return true;
        }
        self.persist(ctx, session);
        false
    }

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
        if let Some(step) = ctx.steps.last_mut() {
            step.timings = Some(take_timings());
            step.output = output_mode(session);
        }
    }

    /// Runs the planner; returns whether it judged the task complete (only asked with `done`).
    async fn plan(
        &mut self,
        ctx: &mut TaskContext,
        session: &mut Session,
        list: &str,
        seen: &PageSeen<'_>,
        done: Option<&str>,
    ) -> Result<bool, SessionError> {
        let before = session.token_log().len();
        let reply = session
            .invoke_step(
                &task::planner_turn(ctx, list, done),
                Some(&task::planner_summary(ctx, seen, done.is_some())),
                task::PLANNER_OUTPUT,
                &self.planner_schema,
            )
            .await;
        self.note_failovers(ctx, session);
        let parsed = parse_planner(&reply?);
        session.compact_last_reply(task::planner_reply_summary(&parsed));
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
            provider,
            tokens: Some(tokens),
            output: output_mode(session),
            ..StepRecord::new(StepKind::Plan, ctx.plan.clone(), result, true)
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

    /// The navigator's action, with the native call it stands for when the model called a
    /// tool through the provider's tools field; `Ok(Err(why))` when its answer was malformed
    /// twice.
    async fn ask_action(
        &self,
        session: &mut Session,
        turn: &str,
        summary: &str,
    ) -> Result<Result<(Action, Option<ToolCall>), String>, SessionError> {
        let reply = session
            .invoke_step_calling(
                turn,
                Some(summary),
                task::NAVIGATOR_OUTPUT,
                &self.navigator_schema,
            )
            .await?;
        if let Some(call) = reply.call {
            return Ok(Ok((tool_step::native_action(&call), Some(call))));
        }
        let reply = reply.text;
        match parse_action(&reply) {
            Ok(parsed) => Ok(Ok((parsed.action, None))),
            Err(first) => {
                if self.stop.get() != Stop::No {
                    return Ok(Err(first.to_string()));
                }
                // Re-ask once, telling the model what was wrong. The page goes again: on the
                // cloud the turn that carried it is compacted now.
                let again = format!("{turn}\n{first}");
                let reply = session
                    .invoke_step_calling(
                        &again,
                        Some(summary),
                        task::NAVIGATOR_OUTPUT,
                        &self.navigator_schema,
                    )
                    .await?;
                if let Some(call) = reply.call {
                    return Ok(Ok((tool_step::native_action(&call), Some(call))));
                }
                Ok(parse_action(&reply.text)
                    .map(|p| (p.action, None))
                    .map_err(|e| format!("the model's answer was not a valid action twice ({e})")))
            }
        }
    }

    /// This step's screenshot, when the model asked for one in the previous step or the page
    /// needs one unasked (`look::needs_auto_look`, once per page state): attached to the
    /// session for the navigator's request, with the sentence its turn says about it (empty
    /// without one). Only for a model that takes images.
    async fn screenshot(
        &mut self,
        ctx: &TaskContext,
        session: &mut Session,
        observed: &Observed,
        state: &str,
    ) -> String {
        self.eyes.shot = None;
        let asked = std::mem::take(&mut self.eyes.asked);
        let Some(provider) = session
            .provider()
            .filter(|_| self.eyes.offered && session.takes_images())
        else {
            return String::new();
        };
        let auto = !asked
            && self.eyes.last_auto.as_deref() != Some(state)
            && needs_auto_look(
                shot::media_cover(ctx.tab_id).await,
                &observed.map,
                &observed.snapshot,
            );
        if !asked && !auto {
            return String::new();
        }
        match shot::take(ctx.tab_id, &observed.snapshot, &observed.map, provider).await {
            Ok((url, shot)) => {
                if auto {
                    self.eyes.last_auto = Some(state.to_string());
                }
                session.attach_screenshot(vec![url], shot.tokens);
                let note = shot_note(&shot, asked);
                self.eyes.shot = Some(shot);
                note
            }
            Err(why) => {
                crate::log_error("no screenshot", &why.clone().into());
                format!("No screenshot could be taken: {why}.\n")
            }
        }
    }

    /// Observes the tab, or says in a sentence why it cannot be acted on (a page no extension
    /// may touch, named; Chrome's raw error goes to `errors` only), with the raw detail.
    async fn look(&mut self, tab: i32) -> Result<Observed, (String, String)> {
        let url = tab_url(tab).await.map_err(|e| {
            (
                format!("Tandem cannot reach the task's tab: {e}."),
                e.to_string(),
            )
        })?;
        if let Some(sentence) = page_refusal(&url, chrome::file_access_for(&url).await) {
            return Err((sentence, format!("refused: {url}")));
        }
        // A page that is loading, reloading or briefly between documents cannot be read
        // yet: look again a few times, each after the tab settled, before giving up (about
        // 2.5 s in all). A page that stays unreadable is reported in a sentence.
        let mut last = String::new();
        for pause in [0, 300, 700, 1500] {
            if pause > 0 {
                chrome::sleep(pause).await;
                settle(tab).await;
            }
            match self.observe(tab).await {
                Ok(o) => return Ok(o),
                Err(e) => last = e.to_string(),
            }
        }
        let url = tab_url(tab).await.unwrap_or(url);
        Err((explain_script_error(&url, &last), last))
    }

    /// Tandem's own question before the first action on a site in this task: "Let Tandem act
    /// on <host>?". A site remembered with "Always allow" is not asked; "Allow once" holds for
    /// the rest of the task.
    pub(super) async fn site_grant(
        &self,
        ctx: &mut TaskContext,
        session: &Session,
        url: &str,
    ) -> Grant {
        let Some(host) = host_of(url) else {
            return Grant::Given; // page_refusal already turned away pages without a host
        };
        if ctx.sites_allowed.contains(&host) || load_grants().await.allows(&host) {
            return Grant::Given;
        }
        let mut question =
            PendingConfirmation::asking("act on this site", None, site_question(&host));
        question.site = Some(host.clone());
        let allowed = self.confirm(ctx, session, question).await;
        if self.stop.get() != Stop::No {
            return Grant::Stopped;
        }
        if !allowed {
            return Grant::Denied(host);
        }
        if self.always.replace(false) {
            if let Err(e) = remember_site(&host).await {
                crate::log_error("the site could not be remembered", &e.to_string().into());
            }
        } else {
            ctx.sites_allowed.push(host);
        }
        Grant::Given
    }

    /// The page again with every element described in full, numbered from the map the model
    /// just read (a brief element keeps its number: the same node).
    async fn observe_in_full(&mut self, tab: i32) -> Result<Observed, AgentError> {
        let snapshot = snapshot_in_full(tab).await?;
        Ok(self.numbered(snapshot, None))
    }

    async fn observe(&mut self, tab: i32) -> Result<Observed, AgentError> {
        // The look the driver took while it watched the last action, when the page is still
        // as it saw it; else a new one.
        let (snapshot, prepared) = match pending_look(tab).await {
            Some(look) => look,
            None => (snapshot(tab, 0).await?, None),
        };
        Ok(self.numbered(snapshot, prepared))
    }

    /// `snapshot` with its elements numbered from the last map (and that map replaced), or
    /// with `prepared`'s map when it was built from the last map while the driver watched.
    fn numbered(&mut self, snapshot: Snapshot, prepared: Option<Prepared>) -> Observed {
        let (map, list) = match prepared.filter(|p| p.numbered_from(self.previous.as_ref())) {
            Some(p) => (p.map, p.list),
            None => {
                let started = js_sys::Date::now();
                let map = Rc::new(ElementMap::build(&snapshot, self.previous.as_deref()));
                let list = map.render(&snapshot, MAP_CHARS).text;
                lap(Phase::Map, started);
                (map, list)
            }
        };
        self.previous = Some(Rc::clone(&map));
        Observed {
            snapshot,
            map,
            list,
        }
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

    /// Shows `pending` (saved first, so a panel opened later sees it too), waits for the
    /// user's answer and takes it down again; true when approved and the task was not stopped
    /// meanwhile. The answer's extras (a password typed in the panel, "Always allow") are
    /// in `secret` and `always` afterwards, cleared before asking.
    pub(super) async fn confirm(
        &self,
        ctx: &mut TaskContext,
        session: &Session,
        pending: PendingConfirmation,
    ) -> bool {
        ctx.pending = Some(pending);
        self.secret.borrow_mut().take();
        self.always.set(false);
        self.persist(ctx, session);
        // A scheduled workflow's run waits for the user like any other, but nobody watches
        // it: they are told (it never approves by itself).
        if ctx.replay.as_ref().is_some_and(|r| r.scheduled) {
            crate::workflows::notify_paused(ctx);
        }
        let approved = self.wait_for_confirmation().await;
        ctx.pending = None;
        // Answered: the badge need not wait for the step's save.
        crate::badge::set("task", None);
        approved
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

/// A tool provider (an extension, an MCP server) as a place data goes to or is read in, as
/// the user knows it.
fn flow_place(provider: &str) -> String {
    format!("«{provider}»")
}

/// How the session's last step was asked for and answered on the cloud (the ladder's rung,
/// a forced tool, the task's tools offered, a native call), for the step's Debug details.
fn output_mode(session: &Session) -> Option<String> {
    session.step_mode().map(|m| m.label())
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

/// Whether `action` acts on an element, or drops on one, that `observed` describes only
/// briefly ([`tandem_core::agent::Element::brief`]).
fn brief_target(action: &Action, observed: &Observed) -> bool {
    let drop_on = match action {
        Action::Drag {
            to: DragTarget::Element(to),
            ..
        } => Some(*to),
        _ => None,
    };
    action
        .element()
        .into_iter()
        .chain(drop_on)
        .filter_map(|id| observed.map.element(id, &observed.snapshot))
        .any(|el| el.brief)
}
