//! When to (re)register and how long to wait between attempts, as pure functions: the
//! runtime (`runtime.rs`) only sends, sleeps and follows what these say.

use serde_json::Value;

use crate::protocol::RegisterAnswer;

/// Attempts per registration before giving up until the next trigger.
pub const MAX_ATTEMPTS: u32 = 20;
/// The wait after the first failed attempt; each later wait doubles.
pub const FIRST_DELAY_MS: u32 = 250;
/// No wait is longer than this. An MV3 worker is stopped after 30 s without events or
/// extension API calls; an attempt is an API call, so waits under 30 s keep the worker
/// alive through the whole schedule (about 4.5 minutes in all).
pub const MAX_DELAY_MS: u32 = 20_000;

/// The wait before attempt `failed + 1`, after `failed` (0-based) failed.
pub fn backoff_ms(failed: u32) -> u32 {
    // 2^7 × 250 ms is already above the cap: clamping the shift keeps it from overflowing.
    FIRST_DELAY_MS
        .saturating_mul(1u32 << failed.min(16))
        .min(MAX_DELAY_MS)
}

/// What one attempt to send `REGISTER_TOOLS` came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Tandem answered (whatever it said).
    Answered(RegisterAnswer),
    /// Nobody answered: Tandem is not installed, disabled, or its worker had no listener
    /// ("Could not establish connection. Receiving end does not exist."), or the port closed
    /// without a reply.
    NoAnswer(String),
}

/// Reads the result of `chrome.runtime.sendMessage`: `Ok(None)` is a resolved `undefined`.
pub fn classify(sent: Result<Option<Value>, String>) -> Outcome {
    match sent {
        Err(error) => Outcome::NoAnswer(error),
        Ok(None) | Ok(Some(Value::Null)) => {
            Outcome::NoAnswer("Tandem's worker closed the message without an answer".into())
        }
        Ok(Some(value)) => match RegisterAnswer::parse(&value) {
            Some(answer) => Outcome::Answered(answer),
            // Tandem did answer, only not in the protocol's shape (an older or newer Tandem).
            // Retrying would get the same answer: stop, and wait for ORCHESTRATOR_READY.
            None => Outcome::Answered(RegisterAnswer::Refused(format!(
                "Tandem answered REGISTER_TOOLS with something unexpected: {value}"
            ))),
        },
    }
}

/// What to do after attempt `attempt` (0-based).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Done: Tandem has these tools.
    Registered(Vec<String>),
    /// Tandem answered `ok:false` (usually: waiting for the user's approval). Retrying cannot
    /// help; Tandem sends ORCHESTRATOR_READY when it wants the tools.
    AwaitReady(String),
    /// Nobody answered: try again after this many milliseconds.
    Retry { after_ms: u32 },
    /// Nobody answered [`MAX_ATTEMPTS`] times: stop until the next trigger.
    GiveUp(String),
}

pub fn next_step(attempt: u32, outcome: Outcome) -> Step {
    match outcome {
        Outcome::Answered(RegisterAnswer::Registered(names)) => Step::Registered(names),
        Outcome::Answered(RegisterAnswer::Refused(error)) => Step::AwaitReady(error),
        Outcome::NoAnswer(error) if attempt + 1 >= MAX_ATTEMPTS => Step::GiveUp(error),
        Outcome::NoAnswer(_) => Step::Retry {
            after_ms: backoff_ms(attempt),
        },
    }
}

/// Where this worker's registration stands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum State {
    /// Nothing tried yet in this worker's life.
    #[default]
    Idle,
    /// Attempts (and the waits between them) under way.
    InFlight,
    Registered,
    AwaitingReady,
    GaveUp,
}

/// What asks for a registration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trigger {
    /// `ToolProvider::start()`: each time the worker starts.
    WorkerStart,
    /// `runtime.onInstalled` (install, update, reload) or `runtime.onStartup` (browser start).
    Lifecycle,
    /// Tandem's `ORCHESTRATOR_READY`.
    OrchestratorReady,
}

/// Whether `trigger` starts a new registration (cancelling one under way). A worker start
/// and the lifecycle events that come with it ask for the same thing: the first one
/// registers and the others find it under way or done. ORCHESTRATOR_READY always starts
/// afresh: Tandem says it has just become able to take the tools (restarted, or the user
/// approved us), so an earlier answer no longer holds.
pub fn starts_registration(state: State, trigger: Trigger) -> bool {
    match trigger {
        Trigger::OrchestratorReady => true,
        Trigger::WorkerStart | Trigger::Lifecycle => matches!(state, State::Idle | State::GaveUp),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn backoff_doubles_from_250_ms_up_to_20_s() {
        let schedule: Vec<u32> = (0..MAX_ATTEMPTS - 1).map(backoff_ms).collect();
        assert_eq!(
            &schedule[..8],
            &[250, 500, 1_000, 2_000, 4_000, 8_000, 16_000, 20_000]
        );
        assert!(schedule[8..].iter().all(|&d| d == MAX_DELAY_MS));
        // The whole schedule, for the docs: ~4.5 minutes.
        assert_eq!(schedule.iter().sum::<u32>(), 271_750);
        // Never overflows, whatever the count.
        assert_eq!(backoff_ms(u32::MAX), MAX_DELAY_MS);
    }

    #[test]
    fn a_missing_tandem_is_retried_twenty_times_then_given_up() {
        let missing = || {
            Outcome::NoAnswer(
                "Could not establish connection. Receiving end does not exist.".into(),
            )
        };
        let mut waits = Vec::new();
        let mut attempt = 0;
        let last = loop {
            match next_step(attempt, missing()) {
                Step::Retry { after_ms } => waits.push(after_ms),
                other => break other,
            }
            attempt += 1;
        };
        assert_eq!(attempt + 1, MAX_ATTEMPTS);
        assert_eq!(waits.len() as u32, MAX_ATTEMPTS - 1);
        assert!(matches!(last, Step::GiveUp(e) if e.contains("Receiving end")));
    }

    #[test]
    fn any_answer_stops_the_retries() {
        assert_eq!(
            next_step(
                0,
                classify(Ok(Some(json!({"ok": true, "registered": ["a"]}))))
            ),
            Step::Registered(vec!["a".into()])
        );
        assert_eq!(
            next_step(
                3,
                classify(Ok(Some(
                    json!({"ok": false, "error": "…waiting for the user's approval…"})
                )))
            ),
            Step::AwaitReady("…waiting for the user's approval…".into())
        );
        // An answer in no known shape is still an answer.
        assert!(matches!(
            next_step(0, classify(Ok(Some(json!({"hello": 1}))))),
            Step::AwaitReady(e) if e.contains("unexpected")
        ));
    }

    #[test]
    fn no_answer_is_retried() {
        for sent in [
            Err("Could not establish connection. Receiving end does not exist.".to_string()),
            Err("The message port closed before a response was received.".to_string()),
            Ok(None),
            Ok(Some(Value::Null)),
        ] {
            assert!(
                matches!(classify(sent.clone()), Outcome::NoAnswer(_)),
                "{sent:?}"
            );
            assert_eq!(next_step(0, classify(sent)), Step::Retry { after_ms: 250 });
        }
    }

    #[test]
    fn triggers() {
        use State::*;
        use Trigger::*;
        for state in [Idle, InFlight, Registered, AwaitingReady, GaveUp] {
            assert!(starts_registration(state, OrchestratorReady), "{state:?}");
            let fresh = matches!(state, Idle | GaveUp);
            assert_eq!(starts_registration(state, WorkerStart), fresh, "{state:?}");
            assert_eq!(starts_registration(state, Lifecycle), fresh, "{state:?}");
        }
    }
}
