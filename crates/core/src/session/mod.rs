//! Task-scoped model sessions: one [`HybridSession`] per agent task (or chat), created once and
//! reused for every step.
//!
//! A session prefers Chrome's on-device Gemini Nano (the Prompt API, reached through a
//! [`NanoBackend`] the service worker implements), starts on the configured cloud provider when
//! Nano cannot run, and fails over to the cloud in the middle of a task without losing the
//! step: every turn and reply is kept in a [`Transcript`], from which a [`CloudSession`] is built
//! and the failed step re-run there. The caller sees one continuous session; [`SessionEvent`]s
//! say which provider answered each step.
//!
//! Why task-scoped: a session per step sends the system prompt, the output-format instructions
//! and the history again with every step. A Nano session keeps them in its context, so after
//! the first step only the new turn is sent (`benches/session.rs` measures it). Stateless cloud
//! APIs still get the whole transcript each step, through the send pipeline's budget and
//! trim-and-retry, but as a stable prefix that provider-side prompt caching can reuse.
//! [`SessionScope::Step`] rebuilds the provider session before every step, as those extensions
//! do, so `scripts/bench` can measure the difference in the browser.

mod attempt;
mod cloud;
mod manager;
mod nano;
mod plan;
pub mod testing;
#[cfg(test)]
mod tests;
mod transcript;

pub use attempt::{AttemptTrace, CloudConfig, SendFailure};
pub use cloud::{
    tool_rounds_as_text, CloudFailure, CloudSession, CloudTransport, Sleeper, StepOutput,
    FINAL_ANSWER_NOTE, MAX_REQUESTS_PER_TURN,
};
pub use manager::{
    choose_provider, Failover, HybridSession, SessionManager, StepReply, NANO_MODEL,
};
pub use nano::{
    Availability, NanoBackend, NanoCreateOptions, NanoError, NanoExpected, NanoModel,
    NanoPromptOptions, NanoSession,
};
pub use plan::{
    AttemptReport, RequestPlanner, RoundFuture, TranscriptPlanner, TurnHooks,
    WholeTranscriptPlanner,
};
// The answer schema is plain data below the sessions (tools and the agent name it too).
pub use crate::answer_schema::{schema_for, Schema, SchemaError};
pub use transcript::{NanoMessage, Transcript, Turn};

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::budget::BudgetError;
use crate::chat::ChatMessage;
use crate::errors::ProviderError;
use crate::provider::ProviderKind;
use crate::tokens::{estimate_tokens, MESSAGE_OVERHEAD};

/// Who answers a step: `"nano"` or `{"cloud": "openAi"}` in JSON.
// serde's default (external) tagging: an internal or adjacent tag is read by buffering the
// value in serde's `Content` first, which compiles a second reader for the types inside.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ProviderId {
    Nano,
    Cloud(ProviderKind),
}

impl ProviderId {
    pub fn label(self) -> &'static str {
        match self {
            ProviderId::Nano => "Gemini Nano",
            ProviderId::Cloud(kind) => kind.label(),
        }
    }
}

impl fmt::Display for ProviderId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// Where the user wants a task to run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Preferred {
    /// On-device only: nothing leaves the machine, so no cloud start and no failover.
    Nano,
    /// Cloud only, even when Nano is available.
    Cloud,
    /// Nano when it can run, the cloud otherwise, and failover to the cloud mid-task.
    #[default]
    Auto,
}

impl Preferred {
    pub const ALL: [Preferred; 3] = [Preferred::Nano, Preferred::Cloud, Preferred::Auto];

    /// The name it is stored under (its serde name), which the panel's select uses as values.
    pub fn id(self) -> &'static str {
        match self {
            Preferred::Nano => "nano",
            Preferred::Cloud => "cloud",
            Preferred::Auto => "auto",
        }
    }

    pub fn from_id(id: &str) -> Option<Preferred> {
        Preferred::ALL.into_iter().find(|p| p.id() == id)
    }
}

/// What a task's session is created with.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SessionConfig {
    pub system_prompt: String,
    /// How answers must be shaped (the JSON the agent expects). Sent once with the system
    /// prompt, which is also why Nano is told not to repeat the schema with every prompt.
    pub schema_instructions: String,
    /// Messages the session starts with (few-shot examples, earlier chat). Hidden ones are
    /// left out; system-role ones are appended to the system prompt.
    pub initial_history: Vec<ChatMessage>,
    pub temperature: Option<f32>,
    /// Nano only; cloud requests have no top-k.
    pub top_k: Option<u32>,
    pub preferred: Preferred,
    /// Nano only: the backend aborts a prompt after this long (`AbortSignal.timeout`), which
    /// the session treats as a failure to fail over from.
    pub step_timeout_ms: Option<u64>,
    /// How long a provider session lives; [`SessionScope::Task`] unless measuring.
    pub scope: SessionScope,
    /// Nano only: create the on-device session with image input (`expectedInputs` image) so
    /// the task's screenshots can go with its prompts. Chrome fixes a session's input types
    /// at creation, so this is decided once per task, before the session exists.
    pub images: bool,
}

/// How long the provider session behind a [`HybridSession`] lives.
///
/// `Step` is the design Tandem replaces: agent extensions commonly open a new model session
/// for every step and send the whole prompt again (system prompt, output-format
/// instructions, history). It is kept only so `scripts/bench` can run the same task both ways
/// in the browser and measure what task scope saves; the side panel does not offer it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SessionScope {
    /// One provider session for the whole task, created once and reused for every step.
    #[default]
    Task,
    /// Before every step after the first, the provider session is rebuilt from the
    /// [`Transcript`]: Nano's model is destroyed and a new one created with the full history
    /// as `initialPrompts`; a cloud session is made anew (its requests are the same as in task
    /// scope, since a stateless API gets the whole transcript either way).
    Step,
}

impl SessionScope {
    /// For `skip_serializing_if`: the default is left out of stored settings.
    pub fn is_task(&self) -> bool {
        *self == SessionScope::Task
    }
}

/// Why a task moved from Nano to the cloud.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "type", content = "name", rename_all = "camelCase")]
pub enum FailoverReason {
    /// The Nano session was destroyed under us (`InvalidStateError`).
    SessionLost,
    /// The turn does not fit Nano's context window (`QuotaExceededError`).
    ContextFull,
    /// Nano cannot handle this input or option (`NotSupportedError`).
    Unsupported,
    /// The caller's timeout fired (`TimeoutError`).
    Timeout,
    /// Two answers in a row that were not the JSON asked for.
    InvalidOutput,
    /// Any other failure, by its DOMException name.
    Other(String),
}

impl FailoverReason {
    pub fn of(error: &NanoError) -> Self {
        match error.name.as_str() {
            nano::INVALID_STATE => FailoverReason::SessionLost,
            nano::QUOTA_EXCEEDED => FailoverReason::ContextFull,
            nano::NOT_SUPPORTED => FailoverReason::Unsupported,
            nano::TIMEOUT => FailoverReason::Timeout,
            name => FailoverReason::Other(name.to_string()),
        }
    }
}

impl fmt::Display for FailoverReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FailoverReason::SessionLost => f.write_str("the Gemini Nano session was closed"),
            FailoverReason::ContextFull => {
                f.write_str("the step does not fit Gemini Nano's context")
            }
            FailoverReason::Unsupported => f.write_str("Gemini Nano does not support this step"),
            FailoverReason::Timeout => f.write_str("Gemini Nano took too long"),
            FailoverReason::InvalidOutput => {
                f.write_str("Gemini Nano twice answered without the JSON asked for")
            }
            FailoverReason::Other(name) => write!(f, "Gemini Nano failed ({name})"),
        }
    }
}

/// What happened to a session, for the side panel ("step 4 answered by OpenAI").
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionEvent {
    pub session: u64,
    /// 0-based index of the step (the turn) the event belongs to.
    pub step: usize,
    /// The provider serving the session after the event.
    pub provider: ProviderId,
    pub kind: EventKind,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum EventKind {
    Created,
    /// Estimated tokens of the successful attempt (see [`TokenRecord`]).
    #[serde(rename_all = "camelCase")]
    Answered {
        input_tokens: u32,
        output_tokens: u32,
    },
    FailedOver {
        from: ProviderId,
        to: ProviderId,
        reason: FailoverReason,
    },
    /// Nano dropped its oldest exchanges to make room (`contextoverflow`); the transcript
    /// still has them.
    ContextOverflow,
    Destroyed,
}

/// Tokens of one attempt at one step, estimated with [`crate::tokens`] so both providers and
/// both session designs are counted alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenRecord {
    pub step: usize,
    pub provider: ProviderId,
    /// Everything put on the wire: initial prompts, the turn, a repeated schema, the history.
    pub sent: u32,
    /// The reply; 0 for a failed attempt.
    pub received: u32,
}

/// A streamed step, as the side panel renders it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamUpdate<'a> {
    Delta(&'a str),
    /// Drop what this step streamed so far: it is being retried, or re-run on `provider`.
    Restart {
        provider: ProviderId,
    },
}

/// A failed session operation, as a sentence for the user with the step it happened at.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    #[error("{}", no_provider_sentence(*preferred, *nano, *cloud_configured))]
    NoProvider {
        preferred: Preferred,
        nano: Availability,
        cloud_configured: bool,
    },
    // Browser messages end with their own period.
    #[error("Gemini Nano failed at step {} ({}): {}", step + 1, error.name, error.message)]
    Nano { step: usize, error: NanoError },
    #[error("Step {}: {error}", step + 1)]
    Cloud { step: usize, error: ProviderError },
    #[error("Step {}: {error}", step + 1)]
    Budget { step: usize, error: BudgetError },
    /// A tool round of a chat turn failed (the sentence is the tool layer's).
    #[error("{error}")]
    Tool { step: usize, error: ProviderError },
    #[error("{provider} answered step {} without the JSON asked for, {attempts} times in a row ({detail}).", step + 1)]
    InvalidOutput {
        step: usize,
        provider: ProviderId,
        attempts: u32,
        detail: String,
    },
    #[error("The task was cancelled at step {}.", step + 1)]
    Cancelled { step: usize },
    #[error("This session was already closed; start the task again.")]
    Destroyed,
}

fn no_provider_sentence(
    preferred: Preferred,
    nano: Availability,
    cloud_configured: bool,
) -> String {
    let nano_state = match nano {
        Availability::Unavailable => {
            "Gemini Nano is not available in this browser or on this device"
        }
        Availability::Downloadable => "Gemini Nano has not been downloaded yet",
        Availability::Downloading => "Gemini Nano is still downloading",
        Availability::Available => "Gemini Nano could not be used",
    };
    let downloadable = matches!(nano, Availability::Downloadable | Availability::Downloading);
    match preferred {
        Preferred::Cloud if !cloud_configured => "This task is set to use a cloud provider, but none is configured. Open Settings, \
             choose a provider and save, or set the task to Auto."
            .to_string(),
        Preferred::Nano => format!(
            "This task is set to run on Gemini Nano only, but {nano_state}. {}et the task to Auto or Cloud.",
            if downloadable { "Allow the download in Settings, or s" } else { "S" }
        ),
        _ => format!(
            "No AI provider can run this task: {nano_state}, and no cloud provider is configured. Open Settings and \
             choose a provider{}.",
            if downloadable { ", or allow the Gemini Nano download there" } else { "" }
        ),
    }
}

/// Estimated tokens of one chat message carrying `text`.
fn message_tokens(text: &str) -> u32 {
    estimate_tokens(text).saturating_add(MESSAGE_OVERHEAD)
}
