//! Everything a session was told and answered, kept by the session layer whatever provider
//! serves it, so the session can be rebuilt on another provider (failover) or later (resume).
//!
//! It is also the message manager: it tells the session-init part (system prompt, schema
//! instructions, initial history: sent once, as Nano's `initialPrompts` or the stable head
//! of every cloud request) from the per-step part (the new turn).

use serde::{Deserialize, Serialize};

use super::{ProviderId, SessionConfig};
use crate::chat::{ChatMessage, Role};
use crate::request::{ToolCall, ToolOutcome};

/// One entry of Nano's of `initialPrompts` / an `append()` input.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NanoMessage {
    pub role: Role,
    pub content: String,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Transcript {
    pub system_prompt: String,
    pub schema_instructions: String,
    /// Session-init messages (user/assistant only).
    pub init: Vec<ChatMessage>,
    /// Completed steps, oldest first. A step that failed is not here, so re-running it
    /// elsewhere starts from exactly what the failed provider had.
    pub turns: Vec<Turn>,
    /// The results of the last turn's native tool call, which the next step's request
    /// carries (and its turn keeps, [`Turn::results`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<ToolOutcome>,
}

/// One completed step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Turn {
    pub input: String,
    pub reply: String,
    pub provider: ProviderId,
    /// The results of the previous turn's native call, sent before `input`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub results: Vec<ToolOutcome>,
    /// The native tool call the model answered with instead of `reply` (a cloud agent step
    /// of a task with tools); its results are the next turn's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<ToolCall>,
    /// What stands in for `input` in the cloud view once a later turn exists: the step
    /// without its stale page state (an agent step: its position, the previous step's
    /// result, the page's URL and title). The caller gives it with the step; `None` keeps
    /// the turn whole (chat, and tasks stored before summaries existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// What stands in for `reply` in the cloud view (a planner's answer without the plan,
    /// which the newest turn carries). Given right after the step
    /// ([`HybridSession::compact_last_reply`](super::HybridSession::compact_last_reply)),
    /// before any request holds the reply, so each request still repeats the previous one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_summary: Option<String>,
}

impl Turn {
    /// The turn as the cloud view sends it once a later turn exists.
    pub fn compact_input(&self) -> &str {
        self.summary.as_deref().unwrap_or(&self.input)
    }

    /// The reply as the cloud view sends it.
    pub fn compact_reply(&self) -> &str {
        self.reply_summary.as_deref().unwrap_or(&self.reply)
    }
}

impl Transcript {
    pub fn new(config: &SessionConfig) -> Self {
        let visible = config.initial_history.iter().filter(|m| !m.hidden);
        let (system, init): (Vec<&ChatMessage>, Vec<&ChatMessage>) =
            visible.partition(|m| m.role == Role::System);
        let system_prompt = std::iter::once(config.system_prompt.as_str())
            .chain(system.iter().map(|m| m.content.as_str()))
            .filter(|s| !s.trim().is_empty())
            .collect::<Vec<_>>()
            .join("\n\n");
        Self {
            system_prompt,
            schema_instructions: config.schema_instructions.clone(),
            init: init.into_iter().cloned().collect(),
            turns: Vec::new(),
            pending: Vec::new(),
        }
    }

    /// The index of the next step.
    pub fn step(&self) -> usize {
        self.turns.len()
    }

    /// The system prompt and the schema instructions as one system text: the part every
    /// provider gets once per session (cloud: cached by the session, first in each request).
    pub fn system_text(&self) -> Option<String> {
        let parts: Vec<&str> = [&self.system_prompt, &self.schema_instructions]
            .into_iter()
            .map(|s| s.trim())
            .filter(|s| !s.is_empty())
            .collect();
        (!parts.is_empty()).then(|| parts.join("\n\n"))
    }

    /// Nano's `initialPrompts`: the system text first (the Prompt API accepts a system role
    /// only there), then the initial history, then any completed turns (a resumed task),
    /// whole: Nano's context is its own, nothing in it is re-sent step after step.
    pub fn init_prompts(&self) -> Vec<NanoMessage> {
        let system = self.system_text().map(|content| NanoMessage {
            role: Role::System,
            content,
        });
        // Nano has no tool calls of its own: a native call and its results are text to it.
        let history = self.history(false).map(|m| NanoMessage {
            role: m.role,
            content: with_tools_as_text(&m),
        });
        system.into_iter().chain(history).collect()
    }

    /// The cloud view: the conversation with `turn` as the new request, for stateless APIs.
    /// Every completed turn is sent in its compact form ([`Turn::summary`]): its page state
    /// is stale once a newer one exists, and re-sending it each step would make a task cost
    /// as much as a session per step. Only the newest page state (in `turn`) goes whole.
    ///
    /// A turn is compacted exactly when the next is added, and never changes after that, so
    /// the request for step n+1 repeats the request for step n up to its last message, byte
    /// for byte: the prefix a provider's prompt cache serves. Ids are stable across steps so
    /// the budget's token cache counts each pair once per session (its fingerprint notices
    /// the one message that changed form).
    pub fn messages_with(&self, turn: &str) -> Vec<ChatMessage> {
        self.history(true).chain([self.next(turn)]).collect()
    }

    /// The conversation with every turn whole, `turn` last (what Nano's context holds; the
    /// Debug drawer's view).
    pub fn full_messages_with(&self, turn: &str) -> Vec<ChatMessage> {
        self.history(false).chain([self.next(turn)]).collect()
    }

    /// The new request: `turn`, after the results of the last turn's native call.
    fn next(&self, turn: &str) -> ChatMessage {
        let mut next = ChatMessage::new(Role::User, turn);
        next.id = format!("t{}u", self.turns.len());
        next.tool_results = self.pending.clone();
        next
    }

    /// `turn` as Nano is prompted with it: the pending results of a native call (made on
    /// the cloud before a resume on the device) as text first.
    pub fn nano_input(&self, turn: &str) -> String {
        let mut m = ChatMessage::new(Role::User, turn);
        m.tool_results = self.pending.clone();
        with_tools_as_text(&m)
    }

    fn history(&self, compact: bool) -> impl Iterator<Item = ChatMessage> + '_ {
        let init = self.init.iter().enumerate().map(|(i, m)| ChatMessage {
            id: format!("i{i}"),
            hidden: false,
            ..m.clone()
        });
        let turns = self.turns.iter().enumerate().flat_map(move |(i, t)| {
            let input = if compact {
                t.compact_input()
            } else {
                t.input.as_str()
            };
            let mut user = ChatMessage::new(Role::User, input);
            user.id = format!("t{i}u");
            user.tool_results = t.results.clone();
            let answer = if compact {
                t.compact_reply()
            } else {
                t.reply.as_str()
            };
            let mut reply = ChatMessage::new(Role::Assistant, answer);
            reply.id = format!("t{i}a");
            reply.tool_calls = t.call.iter().cloned().collect();
            [user, reply]
        });
        init.chain(turns)
    }
}

/// A message's text with its native tool call or results written out, for a model that
/// reads text only (results were fenced when they were made).
fn with_tools_as_text(m: &ChatMessage) -> String {
    let results = m.tool_results.iter().map(|r| {
        let how = if r.is_error { "failed" } else { "answered" };
        format!("(the tool {} {how}:)\n{}", r.name, r.content)
    });
    let calls = m
        .tool_calls
        .iter()
        .map(|c| format!("(called the tool {} with {})", c.name, c.arguments));
    results
        .chain((!m.content.is_empty()).then(|| m.content.clone()))
        .chain(calls)
        .collect::<Vec<_>>()
        .join("\n\n")
}
