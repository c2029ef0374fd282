//! A chat turn on the conversation's session: Gemini Nano preferred, the cloud when Nano is
//! not there or gives up, one path either way.
//!
//! On the cloud the turn is [`CloudSession::run_turn`](super::CloudSession::run_turn) with
//! the caller's planner (the chat's memory plan, images, tools). On Nano the turn is a prompt
//! on the session's model; with tools, each reply is structured output
//! ([`crate::tools::nano`]), a call runs through the caller's hooks like a cloud model's, and
//! its fenced result is the next prompt on the same model, until Nano answers. When Nano
//! fails mid-turn, the cloud continues from the tool rounds Nano completed (carried after the
//! request and counted by the budget), so no tool runs twice.

use crate::chat::Role;
use crate::request::{RequestMessage, ToolSpec};
use crate::send::UniversalResponse;
use crate::stream::StreamEvent;
use crate::tools::nano::{
    parse_reply, partial_answer, response_constraint, result_turn, NanoReply,
};

use super::super::attempt::SendFailure;
use super::super::cloud::{CloudTransport, Sleeper};
use super::super::nano::NanoBackend;
use super::super::plan::{RequestPlanner, TurnHooks};
use super::super::{SessionError, StreamUpdate};
use super::{cloud_error, Active, HybridSession, NanoGaveUp, StepReply};

/// The model name a Nano answer reports.
pub const NANO_MODEL: &str = "gemini-nano";

/// How a Nano turn ended without an answer.
enum NanoTurnEnd {
    /// Nano cannot go on: the cloud may take over.
    GaveUp(NanoGaveUp),
    /// A tool round failed or was stopped: the turn ends (the cloud would fare no better).
    Tool(SendFailure),
}

impl<N: NanoBackend, C: CloudTransport, S: Sleeper> HybridSession<N, C, S> {
    /// Runs one chat turn, `turn` being the user's message (what Nano is prompted with; the
    /// cloud's request is what `planner` builds). Every stream event, retry, restart and
    /// tool round goes through `hooks`. The answer is recorded in the transcript like a step.
    pub async fn run_turn(
        &mut self,
        turn: &str,
        planner: &mut dyn RequestPlanner,
        hooks: &mut impl TurnHooks,
    ) -> Result<UniversalResponse, SessionError> {
        let step = self.transcript.step();
        let tools = planner.tools().to_vec();
        // Tool rounds done so far in this turn, whoever did them.
        let mut rounds: Vec<RequestMessage> = Vec::new();
        loop {
            let provider = self.provider().ok_or(SessionError::Destroyed)?;
            self.served = true;
            if let Some(Active::Cloud(cloud)) = self.active.as_mut() {
                let response = cloud
                    .run_turn(
                        &self.transcript,
                        turn,
                        planner,
                        hooks,
                        self.abort.as_ref(),
                        &mut rounds,
                        &mut self.tokens,
                    )
                    .await
                    .map_err(|e| cloud_error(step, e))?;
                let reply = StepReply {
                    text: response.content.clone(),
                    call: None,
                };
                self.answered(step, turn, None, reply, provider);
                return Ok(response);
            }
            match self.nano_turn(step, turn, &tools, hooks, &mut rounds).await {
                Ok(answer) => {
                    let reply = StepReply {
                        text: answer.clone(),
                        call: None,
                    };
                    self.answered(step, turn, None, reply, provider);
                    return Ok(UniversalResponse {
                        content: answer,
                        model: Some(NANO_MODEL.to_string()),
                        ..UniversalResponse::default()
                    });
                }
                Err(NanoTurnEnd::Tool(SendFailure::Stopped)) => {
                    return Err(SessionError::Cancelled { step })
                }
                Err(NanoTurnEnd::Tool(SendFailure::Provider(error))) => {
                    return Err(SessionError::Tool { step, error })
                }
                Err(NanoTurnEnd::GaveUp(gave_up)) => {
                    let to = self.fail_over(step, gave_up)?;
                    let why = self
                        .failovers
                        .last()
                        .map_or_else(String::new, |f| f.reason.to_string());
                    // Also when nothing streamed yet: the reader sees the switch in the answer
                    // (the tool cards of the turn stay).
                    hooks.restart(&format!(
                        "The on-device model stopped ({why}); {} continues this conversation.",
                        to.label()
                    ));
                }
            }
        }
    }

    async fn nano_turn(
        &mut self,
        step: usize,
        turn: &str,
        tools: &[ToolSpec],
        hooks: &mut impl TurnHooks,
        rounds: &mut Vec<RequestMessage>,
    ) -> Result<String, NanoTurnEnd> {
        let mut prompt = turn.to_string();
        let mut calls = 0u32;
        loop {
            // With the rounds used up, only an answer fits the constraint.
            let offered: &[ToolSpec] = if hooks.rounds_left() { tools } else { &[] };
            let constraint = (!tools.is_empty()).then(|| response_constraint(offered));
            let mut relay = NanoRelay::new(constraint.is_some());
            let reply = {
                let mut on_update = |u: StreamUpdate<'_>| relay.update(u, hooks);
                self.prompt_nano(step, &prompt, constraint.as_ref(), Some(&mut on_update))
                    .await
            };
            if relay.stopped || hooks.stopped() {
                return Err(NanoTurnEnd::Tool(SendFailure::Stopped));
            }
            let reply = reply.map_err(NanoTurnEnd::GaveUp)?;
            if constraint.is_none() {
                // Streamed as it came.
                return Ok(reply);
            }
            calls += 1;
            let call = match parse_reply(&reply, hooks.call_id(calls)) {
                NanoReply::Answer(answer) => return Ok(relay.finish(answer, hooks)),
                NanoReply::Call(call) => call,
            };
            let outcomes = hooks
                .tool_round(std::slice::from_ref(&call))
                .await
                .map_err(NanoTurnEnd::Tool)?;
            prompt = outcomes
                .iter()
                .map(result_turn)
                .collect::<Vec<_>>()
                .join("\n\n");
            rounds.push(RequestMessage {
                tool_calls: vec![call],
                ..RequestMessage::text(Role::Assistant, "")
            });
            rounds.push(RequestMessage {
                tool_results: outcomes,
                ..RequestMessage::text(Role::User, "")
            });
        }
    }
}

/// Hands one Nano reply to the hooks as it streams. Without tools it is the answer itself;
/// with tools it is JSON, of which only the text of an `{"answer": …}` is passed on, as it
/// grows (a call shows as its card instead).
struct NanoRelay {
    json: bool,
    /// The reply so far (JSON replies only).
    raw: String,
    /// What was passed on.
    posted: String,
    /// The caller stopped the turn, or nobody reads it any more.
    stopped: bool,
}

impl NanoRelay {
    fn new(json: bool) -> Self {
        Self {
            json,
            raw: String::new(),
            posted: String::new(),
            stopped: false,
        }
    }

    fn update(&mut self, update: StreamUpdate<'_>, hooks: &mut impl TurnHooks) {
        if self.stopped {
            return;
        }
        if hooks.stopped() {
            // The Prompt API stream cannot be cancelled from here; the rest is dropped.
            self.stopped = true;
            return;
        }
        match update {
            StreamUpdate::Delta(text) if !self.json => self.send(text.to_string(), hooks),
            StreamUpdate::Delta(text) => {
                self.raw.push_str(text);
                let grown = partial_answer(&self.raw).and_then(|so_far| {
                    so_far
                        .strip_prefix(self.posted.as_str())
                        .map(str::to_string)
                });
                if let Some(more) = grown {
                    self.send(more, hooks);
                }
            }
            // Nano is asked again (the reply was not the JSON asked for): what was shown of
            // the rejected reply goes.
            StreamUpdate::Restart { .. } => {
                self.raw.clear();
                if !std::mem::take(&mut self.posted).is_empty() {
                    hooks.restart(
                        "Gemini Nano's reply was not in the expected form; it answers again.",
                    );
                }
            }
        }
    }

    fn send(&mut self, text: String, hooks: &mut impl TurnHooks) {
        if text.is_empty() {
            return;
        }
        self.posted.push_str(&text);
        if !hooks.event(&StreamEvent::Delta(text)) {
            self.stopped = true;
        }
    }

    /// The whole answer, once the reply is complete: what did not stream yet (all of it,
    /// when the reply was not shaped for streaming) is passed on now.
    fn finish(mut self, answer: String, hooks: &mut impl TurnHooks) -> String {
        match answer.strip_prefix(self.posted.as_str()) {
            Some(rest) => {
                let rest = rest.to_string();
                self.send(rest, hooks);
                answer
            }
            // Only a reply that is not valid JSON can read differently in full than in part;
            // the reader keeps what they saw.
            None => self.posted,
        }
    }
}
