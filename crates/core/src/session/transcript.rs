//! Everything a session was told and answered, kept by the session layer whatever provider
//! serves it, so the session can be rebuilt on another provider (failover) or later (resume).
//!
//! It is also the message manager: it tells the session-init part (system prompt, schema
//! instructions, initial history: sent once, as Nano's `initialPrompts` or the stable head
//! of every cloud request) from the per-step part (the new turn).

use serde::{Deserialize, Serialize};

use super::{ProviderId, SessionConfig};
use crate::chat::{ChatMessage, Role};

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
}

/// One completed step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Turn {
    pub input: String,
    pub reply: String,
    pub provider: ProviderId,
    /// What stands in for `input` in the cloud view once a later turn exists: the step
    /// without its stale page state (an agent step: its position, the previous step's
    /// result, the page's URL and title). The caller gives it with the step; `None` keeps
    /// the turn whole (chat, and tasks stored before summaries existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
}

impl Turn {
    /// The turn as the cloud view sends it once a later turn exists.
    pub fn compact_input(&self) -> &str {
        self.summary.as_deref().unwrap_or(&self.input)
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
        let history = self.history(false).map(|m| NanoMessage {
            role: m.role,
            content: m.content,
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
        let mut next = ChatMessage::new(Role::User, turn);
        next.id = format!("t{}u", self.turns.len());
        self.history(true).chain([next]).collect()
    }

    /// The conversation with every turn whole, `turn` last (what Nano's context holds; the
    /// Debug drawer's view).
    pub fn full_messages_with(&self, turn: &str) -> Vec<ChatMessage> {
        let mut next = ChatMessage::new(Role::User, turn);
        next.id = format!("t{}u", self.turns.len());
        self.history(false).chain([next]).collect()
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
            let mut reply = ChatMessage::new(Role::Assistant, t.reply.as_str());
            reply.id = format!("t{i}a");
            [user, reply]
        });
        init.chain(turns)
    }
}
