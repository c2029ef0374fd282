//! Replaying a saved workflow inside the agent's loop, and recording what any task did.
//!
//! A run of a workflow is a task whose `TaskContext.replay` holds the steps. Each step is
//! taken here instead of asking the model: the element found again by its stored identity
//! (`workflow::locate`) in the loop's own look, then the same path as a model's action (the
//! site question, approval for what may not be undone asked on every run, the driver's act,
//! the timeline, labelled "replayed"). When the page is not the step's, or its element is
//! not found unambiguously, or acting fails, the replay diverges: the model takes over in
//! the same task-scoped session with the workflow's remaining steps as a fenced hint.

use tandem_core::agent::step_line::REPLAYED;
use tandem_core::agent::task::{StepKind, StepRecord, TaskContext, TaskStatus};
use tandem_core::agent::why::reason;
use tandem_core::agent::workflow::{self, Divergence};
use tandem_core::agent::{fence, needs_site_grant, site_denied, Action};
use tandem_core::i18n::{nested, text, Mark, Msg};

use super::page::{lap, take_timings, Phase};
use super::run::{Grant, Loop, Observed, Replayed, Stop};
use crate::sessions::Session;

impl Loop {
    /// Takes the workflow's next step on the page the loop just looked at.
    pub(super) async fn replay_step(
        &mut self,
        ctx: &mut TaskContext,
        session: &Session,
        observed: &Observed,
    ) -> Replayed {
        let Some(replay) = ctx.replay.clone() else {
            return Replayed::Diverged;
        };
        if replay.finished() {
            ctx.finish(
                TaskStatus::Done,
                Msg::new("workflowReplayed", vec![text(replay.name.clone())]),
            );
            return Replayed::End;
        }
        let Some(step) = replay.current().cloned() else {
            // A run that waited at its divergence was resumed: the person lets the model go on.
            if let Some(r) = ctx.replay.as_mut() {
                r.hand_to_model();
            }
            return Replayed::Diverged;
        };
        let url = &observed.snapshot.url;
        if !workflow::page_matches(&step.page, url) {
            let why = Divergence::OtherPage {
                expected: step.page.clone(),
                actual: workflow::url_pattern(url, &[]),
            };
            return self.diverge(ctx, &why.to_string());
        }
        let started = js_sys::Date::now();
        let located = step
            .target
            .as_ref()
            .map(|target| workflow::locate(target, &replay.params, observed.map.entries()));
        lap(Phase::Locate, started);
        let id = match located {
            Some(Ok(id)) => Some(id),
            Some(Err(e)) => return self.diverge(ctx, &e.to_string()),
            None => None,
        };
        let Some(action) = replay.action(&step, id, None) else {
            return self.diverge(ctx, "the step has no element to act on");
        };
        let json = action.to_json().to_string();
        if needs_site_grant(&action) {
            match self.site_grant(ctx, session, url).await {
                Grant::Given => {}
                Grant::Stopped => return Replayed::Next,
                Grant::Denied(host) => {
                    replayed(
                        ctx,
                        json,
                        None,
                        Err(format!("you did not let Tandem act on {host}")),
                    );
                    ctx.finish(TaskStatus::Cancelled, site_denied(&host));
                    return Replayed::End;
                }
            }
        }
        let (target, outcome) = self.act(ctx, session, observed, &action).await;
        if self.stop.get() != Stop::No {
            replayed(ctx, json, target, Err("stopped before acting".into()));
            return Replayed::Next; // `stopped` ends the loop with the right status.
        }
        match outcome {
            Ok(result) => {
                replayed(ctx, json, target, Ok(result));
                self.note_recorded(ctx, observed, &action);
                ctx.actions_taken += 1;
                ctx.consecutive_failures = 0;
                if let Some(r) = ctx.replay.as_mut() {
                    r.next += 1;
                }
                Replayed::Next
            }
            // The approval for what may not be undone is asked on every run: a Deny ends the
            // run there, with nothing after it done.
            Err(e) if e.starts_with("you denied") => {
                replayed(ctx, json, target, Err(e));
                let step = replay.next + 1;
                ctx.finish(
                    TaskStatus::Cancelled,
                    Msg::new("workflowDeniedStep", vec![text(step.to_string())]),
                );
                Replayed::End
            }
            Err(e) => {
                replayed(ctx, json, target, Err(e.clone()));
                let what = step
                    .target
                    .as_ref()
                    .map(|t| t.label(&replay.params))
                    .unwrap_or_else(|| "step".into());
                self.diverge(ctx, &format!("acting on the {what} failed ({e})"))
            }
        }
    }

    /// The replay stops at its current step for `why`: the timeline says which and why, the
    /// model hears the rest of the workflow as a fenced hint, and plans from here.
    fn diverge(&self, ctx: &mut TaskContext, why: &str) -> Replayed {
        let Some(replay) = ctx.replay.as_mut() else {
            return Replayed::Diverged;
        };
        // Nobody watches a scheduled run: without the user's leave to use the model it waits
        // for them, and says so.
        let pause = replay.scheduled && !replay.allow_model;
        let sentence = replay.diverge(why, !pause);
        let at = replay.next + 1;
        let hint = fence("saved workflow", &replay.hint());
        ctx.record(StepRecord {
            provider: Some(REPLAYED.into()),
            ..StepRecord::new(
                StepKind::User,
                format!("Replay diverged at {sentence}."),
                "",
                false,
            )
        });
        ctx.feedback = format!("the saved workflow's replay stopped: {sentence}");
        ctx.notes.push(hint);
        ctx.plan.clear();
        if pause {
            ctx.status = TaskStatus::Paused;
            // `why` is the divergence's own words (the page's pattern, the step's target).
            ctx.set_reason(Msg::new(
                "workflowPausedAt",
                vec![text(at.to_string()), nested(Mark::Plain, reason(why))],
            ));
            crate::workflows::notify_paused(ctx);
            return Replayed::End;
        }
        Replayed::Diverged
    }

    /// Records an action that took effect, for "Save as workflow" / "Update workflow".
    pub(super) fn note_recorded(
        &self,
        ctx: &mut TaskContext,
        observed: &Observed,
        action: &Action,
    ) {
        let entry = action.element().and_then(|id| observed.map.get(id));
        let element = action
            .element()
            .and_then(|id| observed.map.element(id, &observed.snapshot));
        // A value typed through the panel's password box, or into a password or payment
        // field, is never kept: that step asks for it on every run.
        let secret = element.is_some_and(|el| {
            el.attr("type") == Some("password")
                || el
                    .attr("autocomplete")
                    .is_some_and(|a| a.contains("password") || a.starts_with("cc-"))
        }) || ctx
            .steps
            .last()
            .is_some_and(|s| s.result.starts_with("typed (the value you entered"));
        if let Some(step) = workflow::record(action, &observed.snapshot.url, entry, secret) {
            if ctx.recorded.len() < workflow::MAX_STEPS {
                ctx.recorded.push(step);
            }
        }
    }
}

/// A replayed step's timeline line: no model answered it. It carries the step's timings like
/// a model's step (`scripts/bench-workflow.mjs` compares them).
fn replayed(
    ctx: &mut TaskContext,
    action: String,
    target: Option<String>,
    outcome: Result<String, String>,
) {
    ctx.record_action(action, target, outcome, Some(REPLAYED.into()), None);
    if let Some(step) = ctx.steps.last_mut() {
        step.timings = Some(take_timings());
    }
}
