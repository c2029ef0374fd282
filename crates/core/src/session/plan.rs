//! What a cloud turn sends, and what its caller does between attempts.
//!
//! A [`RequestPlanner`] builds the request: the agent's default sends the transcript under
//! the session's system text ([`TranscriptPlanner`]); the chat plans its memory turn
//! (distilled context, selection mode), attaches images and declares tools. [`TurnHooks`] are
//! the caller's part of a turn: it hears each stream event as it arrives, shows the retry
//! wait, runs tool rounds, and gets a report of every attempt for the Debug drawer.

use crate::budget::{compute_budget_with_images, Budget, BudgetError, Conversation, TokenCache};
use crate::chat::ChatMessage;
use crate::provider::ProviderKind;
use crate::request::{RequestOptions, ToolCall, ToolOutcome, ToolSpec};
use crate::send::{SendPlan, UniversalResponse};
use crate::stream::StreamEvent;

use super::attempt::{AttemptTrace, CloudConfig, SendFailure};
use super::transcript::Transcript;

/// The budget of a turn whose request carries `images` (their count and tokens), under the
/// session's own `system` text.
fn budget_with(
    conversation: &Conversation<'_>,
    system: Option<&str>,
    images: (usize, u32),
    config: &CloudConfig,
    cache: &mut TokenCache,
) -> Result<(Budget, Option<String>), BudgetError> {
    let budget = compute_budget_with_images(
        conversation,
        system,
        images,
        config.context_window,
        &config.budget,
        cache,
    )?;
    Ok((budget, system.map(str::to_owned)))
}

/// Builds a cloud turn's request.
pub trait RequestPlanner {
    /// The conversation to answer, ending with the request: by default the transcript with
    /// `turn` as the new request.
    fn messages(&self, transcript: &Transcript, turn: &str) -> Vec<ChatMessage> {
        transcript.messages_with(turn)
    }

    /// The budget over `conversation` and the system text it was made with; `system` is
    /// the session's own (system prompt and schema instructions).
    fn plan(
        &mut self,
        conversation: &Conversation<'_>,
        system: Option<&str>,
        config: &CloudConfig,
        cache: &mut TokenCache,
    ) -> Result<(Budget, Option<String>), BudgetError> {
        let count = self.images().len();
        let images = (count, crate::tokens::image_tokens(count));
        budget_with(conversation, system, images, config, cache)
    }

    /// Images attached to the request (the last user message), as data: URLs.
    fn images(&self) -> &[String] {
        &[]
    }

    /// The tools the model may call.
    fn tools(&self) -> &[ToolSpec] {
        &[]
    }

    /// The request's options for an attempt under `budget`; `base` is the session's.
    fn options(
        &self,
        budget: &Budget,
        config: &CloudConfig,
        base: &RequestOptions,
    ) -> RequestOptions {
        let _ = (budget, config);
        base.clone()
    }
}

/// The session's own request: the transcript under its system text.
pub struct TranscriptPlanner;

impl RequestPlanner for TranscriptPlanner {}

/// Every turn whole, for [`SessionScope::Step`](super::SessionScope::Step): what a design
/// that opens a fresh session per step sends (the baseline `scripts/bench` measures against).
pub struct WholeTranscriptPlanner;

impl RequestPlanner for WholeTranscriptPlanner {
    fn messages(&self, transcript: &Transcript, turn: &str) -> Vec<ChatMessage> {
        transcript.full_messages_with(turn)
    }
}

/// A session step's request: [`TranscriptPlanner`]'s (or, `whole`,
/// [`WholeTranscriptPlanner`]'s) with `images` on the step's turn (a tool's images from the
/// step before, an agent's screenshot), counted at `image_tokens`: their estimate for the
/// provider at hand rather than the chat's per-image figure.
pub struct StepPlanner<'a> {
    pub whole: bool,
    pub images: &'a [String],
    pub image_tokens: u32,
}

impl RequestPlanner for StepPlanner<'_> {
    fn messages(&self, transcript: &Transcript, turn: &str) -> Vec<ChatMessage> {
        match self.whole {
            true => WholeTranscriptPlanner.messages(transcript, turn),
            false => TranscriptPlanner.messages(transcript, turn),
        }
    }

    fn plan(
        &mut self,
        conversation: &Conversation<'_>,
        system: Option<&str>,
        config: &CloudConfig,
        cache: &mut TokenCache,
    ) -> Result<(Budget, Option<String>), BudgetError> {
        let images = (self.images.len(), self.image_tokens);
        budget_with(conversation, system, images, config, cache)
    }

    fn images(&self) -> &[String] {
        self.images
    }
}

/// One attempt of a turn, as the Debug drawer shows it.
pub struct AttemptReport<'a> {
    pub provider: ProviderKind,
    pub model: &'a str,
    /// The budget and every attempt so far (this one included).
    pub plan: &'a SendPlan,
    pub trace: &'a AttemptTrace,
    pub usage: Option<crate::stream::Usage>,
}

impl AttemptReport<'_> {
    /// The report for the Debug drawer (`WorkerToPanel::Debug`): the provider's label, the
    /// model, the budget, the redacted request, every attempt, the usage and the skipped
    /// frames' notes. Written as text and read back (a `Value`'s keys are sorted either way):
    /// the attempts' errors and messages are written to text elsewhere too, so their writers
    /// to a `Value` stay out of the module (issue #46). The request, a `Value` already (with
    /// numbers text might not give back to the last bit), is put in as it is.
    pub fn to_value(&self) -> serde_json::Value {
        #[derive(serde::Serialize)]
        struct Report<'a> {
            provider: &'static str,
            model: &'a str,
            budget: &'a Budget,
            attempts: &'a [crate::send::AttemptLog],
            usage: Option<crate::stream::Usage>,
            notes: &'a [String],
        }
        let report = Report {
            provider: self.provider.label(),
            model: self.model,
            budget: self.plan.budget(),
            attempts: self.plan.attempts(),
            usage: self.usage,
            notes: &self.trace.notes,
        };
        // Cannot fail: no map with keys that are not strings, and the text is serde_json's.
        let mut value: serde_json::Value = serde_json::to_string(&report)
            .ok()
            .and_then(|text| crate::json::from_str(&text).ok())
            .unwrap_or_default();
        if let Some(map) = value.as_object_mut() {
            let request = self.trace.request.clone();
            map.insert("request".into(), request.unwrap_or_default());
        }
        value
    }
}

/// The caller's part of a cloud turn.
// Single-threaded wasm: no `Send` bound is wanted on the returned futures.
#[allow(async_fn_in_trait)]
/// What [`TurnHooks::tool_round`] returns: the round's outcomes, once its calls ran.
pub type RoundFuture<'a> = std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<Vec<ToolOutcome>, SendFailure>> + 'a>,
>;

pub trait TurnHooks {
    /// Each stream event as it arrives; false aborts the call (nobody reads it any more).
    fn event(&mut self, event: &StreamEvent) -> bool {
        let _ = event;
        true
    }

    /// After each attempt, answered, failed or stopped.
    fn attempt(&mut self, report: &AttemptReport<'_>) {
        let _ = report;
    }

    /// Called every second of a wait before a retry, with the time left.
    fn retrying_in(&mut self, provider: ProviderKind, left_ms: u64) {
        let _ = (provider, left_ms);
    }

    /// What was streamed of this turn so far is void: the provider answers again (a retry, a
    /// reply not in the shape asked for, or another provider after a failover); `note` says
    /// why, for the reader (empty for a plain retry).
    fn restart(&mut self, note: &str) {
        let _ = note;
    }

    /// Whether an attempt that failed after streaming text may be retried. A chat answer's
    /// reader already saw part of it, and a retry would repeat it, so by default it is final;
    /// an agent step's JSON is read only once complete.
    fn retry_after_text(&self) -> bool {
        false
    }

    /// Whether the turn may still call tools (Gemini Nano is then constrained to answer).
    fn rounds_left(&self) -> bool {
        true
    }

    /// An id for Gemini Nano's `n`-th tool call of the turn (Nano gives none): unique across
    /// the caller's turns, in the `[A-Za-z0-9_-]` every cloud API accepts, as the cloud may
    /// continue the turn with it.
    fn call_id(&self, n: u32) -> String {
        format!("nano_call_{n}")
    }

    /// Whether the turn was stopped (checked during waits).
    fn stopped(&self) -> bool {
        false
    }

    /// Runs the model's calls of one round; `Err(SendFailure::Stopped)` ends the turn.
    /// Boxed, so the hooks can be `dyn`: one copy of the turn's loop serves every caller.
    fn tool_round<'a>(&'a mut self, calls: &'a [ToolCall]) -> RoundFuture<'a> {
        let n = calls.len();
        Box::pin(async move {
            Err(SendFailure::Provider(crate::errors::ProviderError::new(
                crate::errors::ErrorKind::Provider,
                format!("The model called {n} tool(s), but none were offered."),
            )))
        })
    }

    /// The final answer, with the budget it was sent under; `with_tool_rounds` when the
    /// request carried more than the budgeted history (usage then does not match it).
    fn answered(&mut self, response: &UniversalResponse, budget: &Budget, with_tool_rounds: bool) {
        let _ = (response, budget, with_tool_rounds);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::{compute_budget, BudgetSettings};
    use crate::chat::Role;
    use crate::errors::{ErrorKind, ProviderError};
    use crate::i18n::Msg;
    use crate::send::RetryPolicy;
    use crate::stream::Usage;

    #[test]
    fn the_debug_report_is_the_value_json_would_build() {
        let mut user = ChatMessage::new(Role::User, "question");
        user.id = "u0".into();
        let messages = [user];
        let conversation = Conversation::from_messages(&messages).unwrap();
        let budget = compute_budget(
            &conversation,
            Some("system"),
            0,
            100_000,
            &BudgetSettings::default(),
            &mut TokenCache::new(),
        )
        .unwrap();
        let mut plan = SendPlan::new(budget, RetryPolicy::default());
        plan.record(Err(ProviderError {
            retry_after_ms: Some(2_000),
            status: Some(429),
            said: Some(Msg::literal("Busy \u{1F600} \"now\"")),
            ..ProviderError::new(ErrorKind::RateLimited, "Busy")
        }));
        plan.record(Ok(()));
        let trace = AttemptTrace {
            request: Some(crate::json!({"temperature": 0.30000000000000004, "n": u64::MAX})),
            notes: vec!["skipped a frame".into()],
        };
        let report = AttemptReport {
            provider: ProviderKind::Anthropic,
            model: "claude",
            plan: &plan,
            trace: &trace,
            usage: Some(Usage {
                input: 12,
                output: 3,
            }),
        };
        // What `chat.rs` built before (`json!`, every part written to a `Value`).
        let before = crate::json!({
            "provider": report.provider.label(),
            "model": report.model,
            "budget": report.plan.budget(),
            "request": report.trace.request,
            "attempts": report.plan.attempts(),
            "usage": report.usage,
            "notes": report.trace.notes,
        });
        assert_eq!(report.to_value(), before);
        assert_eq!(report.to_value().to_string(), before.to_string());
        let bare = AttemptReport {
            trace: &AttemptTrace::default(),
            usage: None,
            ..report
        };
        assert_eq!(bare.to_value()["request"], serde_json::Value::Null);
        assert_eq!(bare.to_value()["usage"], serde_json::Value::Null);
    }
}
