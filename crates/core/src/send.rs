//! The send pipeline's retry policy as a pure state machine, and the response assembled from
//! stream events.
//!
//! The service worker owns the clock and the network; this module only decides. After each
//! attempt the worker reports the outcome to [`SendPlan::record`] and does what the returned
//! [`Action`] says: wait and resend, rebuild the request from the (now trimmed) budget and
//! resend, stop, or show the error. Keeping the decisions here makes every retry sequence a
//! plain unit test.

use serde::Serialize;

use crate::budget::{Budget, BudgetSettings};
use crate::errors::{ErrorKind, ProviderError};
use crate::stream::{StreamEvent, Usage};

/// Limits of the retry policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RetryPolicy {
    /// Retries after rate-limit / overload answers before giving up.
    pub max_transient_retries: u32,
    /// First backoff delay; doubled on each retry. No jitter: one user's browser is not a
    /// thundering herd, and fixed delays keep the sequences testable.
    pub base_delay_ms: u64,
    /// Cap of the backoff delay.
    pub max_delay_ms: u64,
    /// A provider asking for a longer wait than this gets an error instead: the user would
    /// be left looking at a frozen panel.
    pub max_retry_after_ms: u64,
    /// Context-overflow answers that may each drop the oldest included pair.
    pub max_trim_attempts: u32,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_transient_retries: 3,
            base_delay_ms: 1_000,
            max_delay_ms: 8_000,
            max_retry_after_ms: 60_000,
            max_trim_attempts: BudgetSettings::default().max_trim_attempts,
        }
    }
}

impl RetryPolicy {
    /// The default policy with the user's trim limit.
    pub fn with_settings(settings: &BudgetSettings) -> Self {
        Self {
            max_trim_attempts: settings.max_trim_attempts,
            ..Self::default()
        }
    }

    /// Delay before transient retry number `retry` (0-based): base, 2×base, 4×base… capped.
    pub fn backoff_ms(&self, retry: u32) -> u64 {
        self.base_delay_ms
            .saturating_mul(1u64.checked_shl(retry).unwrap_or(u64::MAX))
            .min(self.max_delay_ms)
    }
}

/// What the caller does next.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Action {
    /// The attempt succeeded.
    Done,
    /// Send the same request again after `ms` milliseconds.
    RetryAfter { ms: u64 },
    /// The oldest included pair was dropped from the budget: rebuild the request and resend.
    TrimAndRetry,
    /// Give up and show this error.
    Fail(ProviderError),
}

/// How an attempt ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "result", rename_all = "camelCase")]
pub enum Outcome {
    Ok,
    Error(ProviderError),
}

/// One attempt, as the Debug drawer lists it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AttemptLog {
    /// 1-based.
    pub attempt: u32,
    /// Pairs of history the attempt sent.
    pub included_pairs: usize,
    pub outcome: Outcome,
    /// What was decided; its `ms` is the wait before the next attempt.
    pub action: Action,
}

/// One send: the budget being sent, the policy and the attempts so far.
#[derive(Clone, Debug)]
pub struct SendPlan {
    policy: RetryPolicy,
    budget: Budget,
    log: Vec<AttemptLog>,
    transient_retries: u32,
    trims: u32,
}

impl SendPlan {
    pub fn new(budget: Budget, policy: RetryPolicy) -> Self {
        Self {
            policy,
            budget,
            log: Vec::new(),
            transient_retries: 0,
            trims: 0,
        }
    }

    /// The budget to build the next attempt's request from.
    pub fn budget(&self) -> &Budget {
        &self.budget
    }

    /// The budget, to count what a turn adds between attempts (tool rounds).
    pub fn budget_mut(&mut self) -> &mut Budget {
        &mut self.budget
    }

    pub fn attempts(&self) -> &[AttemptLog] {
        &self.log
    }

    /// Records how the latest attempt ended and decides the next step.
    pub fn record(&mut self, outcome: Result<(), ProviderError>) -> Action {
        let included_pairs = self.budget.included_pairs.len();
        let action = match &outcome {
            Ok(()) => Action::Done,
            Err(e) if e.kind == ErrorKind::ContextOverflow => self.after_overflow(e),
            Err(e) if e.is_transient() => self.after_transient(e),
            Err(e) => Action::Fail(e.clone()),
        };
        let attempt = u32::try_from(self.log.len()).map_or(u32::MAX, |n| n.saturating_add(1));
        let outcome = outcome.map_or_else(Outcome::Error, |()| Outcome::Ok);
        self.log.push(AttemptLog {
            attempt,
            included_pairs,
            outcome,
            action: action.clone(),
        });
        action
    }

    fn after_overflow(&mut self, e: &ProviderError) -> Action {
        if self.trims < self.policy.max_trim_attempts && self.budget.trim_oldest().is_some() {
            self.trims += 1;
            return Action::TrimAndRetry;
        }
        let message = if self.budget.included_pairs.is_empty() {
            "The model says your message is too long even without any earlier messages. \
             Shorten it, attach less, or pick a model with a larger context window."
                .to_string()
        } else {
            format!(
                "The conversation is still too long for the model after leaving out {} earlier \
                 exchange(s). Hide some long messages or start a new chat.",
                self.trims
            )
        };
        Action::Fail(ProviderError {
            message,
            retry_after_ms: None,
            ..e.clone()
        })
    }

    fn after_transient(&mut self, e: &ProviderError) -> Action {
        let tries = self.transient_retries + 1;
        if self.transient_retries >= self.policy.max_transient_retries {
            return Action::Fail(ProviderError {
                message: format!(
                    "{} Tandem tried {tries} times; please try again in a minute.",
                    e.message
                ),
                ..e.clone()
            });
        }
        let ms = e
            .retry_after_ms
            .unwrap_or_else(|| self.policy.backoff_ms(self.transient_retries));
        if ms > self.policy.max_retry_after_ms {
            return Action::Fail(ProviderError {
                message: format!(
                    "{} The provider asked to wait {} s before retrying; try again later.",
                    e.message,
                    ms.div_ceil(1000)
                ),
                ..e.clone()
            });
        }
        self.transient_retries = tries;
        Action::RetryAfter { ms }
    }
}

/// The assistant's answer as assembled from a stream.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UniversalResponse {
    pub content: String,
    pub usage: Option<Usage>,
    /// Sources the answer cites. No stream decoder emits them yet; callers that get them
    /// elsewhere (grounding metadata) push them here.
    pub citations: Vec<String>,
    pub finish_reason: Option<String>,
    pub model: Option<String>,
    /// The tools the model called, in order.
    pub tool_calls: Vec<crate::request::ToolCall>,
}

impl UniversalResponse {
    /// Folds one stream event in.
    pub fn apply(&mut self, event: &StreamEvent) {
        match event {
            StreamEvent::Delta(text) => self.content.push_str(text),
            // Providers report usage in pieces (Anthropic: input at the start, output at the
            // end) and as running totals, so keep the largest figure of each field.
            StreamEvent::Usage(u) => {
                let old = self.usage.unwrap_or_default();
                self.usage = Some(Usage {
                    input: old.input.max(u.input),
                    output: old.output.max(u.output),
                });
            }
            StreamEvent::Finish(reason) => self.finish_reason = Some(reason.clone()),
            StreamEvent::Model(model) => self.model = Some(model.clone()),
            StreamEvent::ToolCall(call) => self.tool_calls.push(call.clone()),
            StreamEvent::Done | StreamEvent::Note(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::{compute_budget, Conversation, TokenCache};
    use crate::chat::{ChatMessage, Role};

    fn plan(pairs: usize) -> SendPlan {
        let mut msgs = Vec::new();
        for i in 0..=pairs {
            let mut m = ChatMessage::new(Role::User, "question");
            m.id = format!("u{i}");
            msgs.push(m);
            if i < pairs {
                let mut m = ChatMessage::new(Role::Assistant, "answer");
                m.id = format!("a{i}");
                msgs.push(m);
            }
        }
        let conv = Conversation::from_messages(&msgs).unwrap();
        let budget = compute_budget(
            &conv,
            None,
            0,
            100_000,
            &BudgetSettings::default(),
            &mut TokenCache::new(),
        )
        .unwrap();
        SendPlan::new(budget, RetryPolicy::default())
    }

    fn err(kind: ErrorKind, retry_after_ms: Option<u64>) -> Result<(), ProviderError> {
        Err(ProviderError {
            retry_after_ms,
            ..ProviderError::new(kind, "The provider said no.")
        })
    }

    /// Feeds the outcomes in order and returns the actions, `Fail` shown as its message.
    fn run(plan: &mut SendPlan, outcomes: Vec<Result<(), ProviderError>>) -> Vec<String> {
        outcomes
            .into_iter()
            .map(|o| match plan.record(o) {
                Action::Fail(e) => format!("Fail({:?}): {}", e.kind, e.message),
                a => format!("{a:?}"),
            })
            .collect()
    }

    #[test]
    fn overflow_trims_the_oldest_pair_then_succeeds() {
        let mut p = plan(3);
        let actions = run(&mut p, vec![err(ErrorKind::ContextOverflow, None), Ok(())]);
        assert_eq!(actions, ["TrimAndRetry", "Done"]);
        assert_eq!(p.budget().included_pairs, ["u1", "u2"]);
        assert_eq!(
            p.attempts()
                .iter()
                .map(|a| a.included_pairs)
                .collect::<Vec<_>>(),
            [3, 2]
        );
    }

    #[test]
    fn retry_after_is_honoured_then_backoff_doubles() {
        let mut p = plan(1);
        let actions = run(
            &mut p,
            vec![err(ErrorKind::RateLimited, Some(2_000)), Ok(())],
        );
        assert_eq!(actions, ["RetryAfter { ms: 2000 }", "Done"]);
        let mut p = plan(1);
        let overloaded = || err(ErrorKind::Overloaded, None);
        let actions = run(
            &mut p,
            vec![overloaded(), overloaded(), overloaded(), overloaded()],
        );
        assert_eq!(
            actions,
            [
                "RetryAfter { ms: 1000 }",
                "RetryAfter { ms: 2000 }",
                "RetryAfter { ms: 4000 }",
                "Fail(Overloaded): The provider said no. Tandem tried 4 times; please try again in a minute."
            ]
        );
        assert_eq!(RetryPolicy::default().backoff_ms(10), 8_000);
        assert_eq!(RetryPolicy::default().backoff_ms(200), 8_000);
    }

    #[test]
    fn unreasonable_retry_after_fails_with_a_sentence() {
        let actions = run(
            &mut plan(0),
            vec![err(ErrorKind::RateLimited, Some(3_600_000))],
        );
        let expected =
            "Fail(RateLimited): The provider said no. The provider asked to wait 3600 s \
                        before retrying; try again later.";
        assert_eq!(actions, [expected]);
    }

    #[test]
    fn permanent_errors_fail_at_once() {
        use ErrorKind::*;
        for kind in [
            BadKey,
            UnknownModel,
            NotConfigured,
            Network,
            StreamCut,
            Provider,
        ] {
            let mut p = plan(2);
            assert_eq!(
                run(&mut p, vec![err(kind, None)]),
                [format!("Fail({kind:?}): The provider said no.")]
            );
            assert_eq!(p.budget().included_pairs.len(), 2);
        }
    }

    #[test]
    fn trims_exhausted_or_nothing_left_fails() {
        let overflow = || err(ErrorKind::ContextOverflow, None);
        let mut p = plan(5);
        let actions = run(&mut p, vec![overflow(), overflow(), overflow(), overflow()]);
        assert_eq!(
            actions,
            [
                "TrimAndRetry",
                "TrimAndRetry",
                "TrimAndRetry",
                "Fail(ContextOverflow): The conversation is still too long for the model after leaving out 3 earlier \
                 exchange(s). Hide some long messages or start a new chat."
            ]
        );
        let mut p = plan(1);
        let actions = run(&mut p, vec![overflow(), overflow()]);
        assert_eq!(actions[0], "TrimAndRetry");
        assert!(
            actions[1].contains("too long even without any earlier messages"),
            "{}",
            actions[1]
        );
    }

    #[test]
    fn attempt_log_serialises_camel_case() {
        let mut p = plan(1);
        p.record(err(ErrorKind::RateLimited, Some(2_000)));
        let json = serde_json::to_string(p.attempts()).unwrap();
        expect_test::expect![[r#"[{"attempt":1,"includedPairs":1,"outcome":{"result":"error","kind":"rate-limited","message":"The provider said no.","status":null,"retryAfterMs":2000},"action":{"type":"retryAfter","ms":2000}}]"#]]
            .assert_eq(&json);
    }

    #[test]
    fn response_assembles_from_events() {
        let mut r = UniversalResponse::default();
        for e in [
            StreamEvent::Model("claude-sonnet-4".into()),
            StreamEvent::Usage(Usage {
                input: 120,
                output: 1,
            }),
            StreamEvent::Delta("Hel".into()),
            StreamEvent::Delta("lo".into()),
            StreamEvent::Usage(Usage {
                input: 0,
                output: 7,
            }),
            StreamEvent::Finish("end_turn".into()),
            StreamEvent::Done,
        ] {
            r.apply(&e);
        }
        assert_eq!(r.content, "Hello");
        assert_eq!(
            r.usage,
            Some(Usage {
                input: 120,
                output: 7
            })
        );
        assert_eq!(
            (r.finish_reason.as_deref(), r.model.as_deref()),
            (Some("end_turn"), Some("claude-sonnet-4"))
        );
    }
}
