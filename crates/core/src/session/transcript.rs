//! Everything a session was told and answered, kept by the session layer whatever provider
//! serves it, so the session can be rebuilt on another provider (failover) or later (resume).
//!
//! It is also the message manager: it tells the session-init part (system prompt, schema
//! instructions, initial history: sent once, as Nano's `initialPrompts` or the stable head
//! of every cloud request) from the per-step part (the new turn).

use serde::{Deserialize, Serialize};

use super::nano::NanoMessage;
use super::{ProviderId, SessionConfig};
use crate::chat::{ChatMessage, Role};

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
    /// only there), then the initial history, then any completed turns (a resumed task).
    pub fn init_prompts(&self) -> Vec<NanoMessage> {
        let system = self.system_text().map(|content| NanoMessage {
            role: Role::System,
            content,
        });
        let history = self.history().map(|m| NanoMessage {
            role: m.role,
            content: m.content,
        });
        system.into_iter().chain(history).collect()
    }

    /// The whole conversation with `turn` as the new request, for stateless APIs. Ids are
    /// stable across steps so the budget's token cache counts each pair once per session.
    pub fn messages_with(&self, turn: &str) -> Vec<ChatMessage> {
        let mut next = ChatMessage::new(Role::User, turn);
        next.id = format!("t{}u", self.turns.len());
        self.history().chain([next]).collect()
    }

    fn history(&self) -> impl Iterator<Item = ChatMessage> + '_ {
        let init = self.init.iter().enumerate().map(|(i, m)| ChatMessage {
            id: format!("i{i}"),
            hidden: false,
            ..m.clone()
        });
        let turns = self.turns.iter().enumerate().flat_map(|(i, t)| {
            let mut user = ChatMessage::new(Role::User, t.input.as_str());
            user.id = format!("t{i}u");
            let mut reply = ChatMessage::new(Role::Assistant, t.reply.as_str());
            reply.id = format!("t{i}a");
            [user, reply]
        });
        init.chain(turns)
    }
}
