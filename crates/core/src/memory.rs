//! Per-tab conversation memory: what was said on this tab, held only in memory (the extension
//! mirrors it into `chrome.storage.session`, which never touches disk) and forgotten when the tab
//! closes or leaves the site.
//!
//! Sessions are keyed `domain:tabId` ([`SessionKey`]). [`build_context`] distils a session into a
//! context that fits a token budget (seed, then tail, then compressed middle) and
//! [`build_prompt`] frames it for the two ways a question arrives ([`PromptMode`]).

mod context;
mod prompt;
#[cfg(test)]
mod tests;
mod turn;

pub use context::{build_context, BuiltContext, ContextMetrics};
pub use prompt::{
    build_prompt, build_prompt_with, conversation_context, selection_request, BuiltPrompt,
    PromptMode,
};
pub use turn::{Plan, Turn, SELECTION_QUESTION};

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::chat::{ChatMessage, Role};
// The host that keys a conversation; re-exported because the panel names it through memory.
pub use crate::url::domain_of;

/// One conversation: a site in a tab.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SessionKey {
    pub domain: String,
    pub tab_id: i32,
}

impl SessionKey {
    pub fn new(domain: impl Into<String>, tab_id: i32) -> Self {
        Self {
            domain: domain.into(),
            tab_id,
        }
    }

    /// The key of `url` in `tab_id`; `None` for pages that are not web pages (chrome://, file:).
    pub fn for_url(url: &str, tab_id: i32) -> Option<Self> {
        domain_of(url).map(|domain| Self { domain, tab_id })
    }
}

impl fmt::Display for SessionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.domain, self.tab_id)
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("session key {0:?} is not of the form `domain:tabId`")]
pub struct ParseSessionKeyError(pub String);

impl FromStr for SessionKey {
    type Err = ParseSessionKeyError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        // Split at the last colon: an IPv6 host (`[::1]`) has colons of its own, a tab id never.
        let parsed = s
            .rsplit_once(':')
            .filter(|(domain, _)| !domain.is_empty())
            .and_then(|(domain, tab)| {
                Some(Self {
                    domain: domain.to_owned(),
                    tab_id: tab.parse().ok()?,
                })
            });
        parsed.ok_or_else(|| ParseSessionKeyError(s.to_owned()))
    }
}

// A string rather than an object so that the session map serialises as a JSON object keyed
// `domain:tabId`, the same keys the extension uses in chrome.storage.session.
impl Serialize for SessionKey {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for SessionKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// Limits of the memory; every field is a user setting (missing fields take the default).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct MemoryConfig {
    /// Messages kept per session; beyond it the oldest message is dropped (never the seed while
    /// `preserve_seed` is on).
    pub max_messages: usize,
    /// Estimated tokens the distilled context may use.
    pub budget_tokens: usize,
    /// Always give the first message (the seed, which says what the conversation is about).
    pub preserve_seed: bool,
    /// How many of the latest messages are given in full.
    pub tail_size: usize,
    /// Characters (ellipsis included) a compressed middle message keeps.
    pub middle_chars: usize,
    /// Sessions idle for longer than this are removed by [`SessionMemory::cleanup`].
    pub max_age_ms: u64,
    /// Above this many sessions, cleanup removes the least recently active ones.
    pub max_sessions: usize,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        Self {
            max_messages: 50,
            budget_tokens: 2_000,
            preserve_seed: true,
            tail_size: 3,
            middle_chars: 100,
            max_age_ms: 24 * 60 * 60 * 1_000,
            max_sessions: 100,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryMessage {
    /// The panel's id of the message (what "Hide from context" and the budget refer to).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub id: String,
    pub role: Role,
    /// What the user typed or the model answered. For a selected-text question, the question
    /// alone: the page text is in `quote`.
    pub content: String,
    /// Milliseconds since the epoch, from the caller's clock.
    pub timestamp: u64,
    /// The user chose "Hide from context": kept and shown, never given to the model.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hidden: bool,
    /// Text the user selected on the page and asked about ("Ask Tandem"). Page content: it
    /// only ever reaches the model fenced as data ([`selection_request`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quote: Option<String>,
    /// "Ask about this page": `quote` is the page's readable text, and this the page's name.
    /// Kept like a selection (session memory only, fenced whenever sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<String>,
    /// An answer's provider, as the panel shows it ("via …").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answered_by: Option<String>,
    /// Why an answer is incomplete ("Stopped", …), so the badge is back when the panel is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub badge: Option<String>,
    /// The tokens an answer used, as its provider reported them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<crate::stream::Usage>,
    /// The tools called while answering (shown with the answer; the model reads the answer).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<crate::chat::ToolCard>,
}

impl MemoryMessage {
    pub fn new(role: Role, content: impl Into<String>, timestamp: u64) -> Self {
        Self {
            id: String::new(),
            role,
            content: content.into(),
            timestamp,
            hidden: false,
            quote: None,
            page: None,
            answered_by: None,
            badge: None,
            usage: None,
            tools: Vec::new(),
        }
    }

    /// The message as the panel shows it.
    pub fn to_chat(&self) -> ChatMessage {
        ChatMessage {
            id: self.id.clone(),
            role: self.role,
            content: self.content.clone(),
            hidden: self.hidden,
            quote: self.quote.clone(),
            page: self.page.clone(),
            images: Vec::new(),
            answered_by: self.answered_by.clone(),
            badge: self.badge.clone(),
            usage: self.usage,
            tools: self.tools.clone(),
            tool_calls: Vec::new(),
            tool_results: Vec::new(),
        }
    }

    /// A message from the panel, stamped `timestamp`.
    pub fn from_chat(message: &ChatMessage, timestamp: u64) -> Self {
        Self {
            id: message.id.clone(),
            role: message.role,
            content: message.content.clone(),
            timestamp,
            hidden: message.hidden,
            quote: message.quote.clone(),
            page: message.page.clone(),
            answered_by: message.answered_by.clone(),
            badge: message.badge.clone(),
            usage: message.usage,
            tools: message.tools.clone(),
        }
    }

    /// The message as the model reads it in a request: a quoted selection (or page text) is
    /// fenced as data before the question.
    pub fn to_model(&self) -> ChatMessage {
        let content = match (&self.quote, &self.page) {
            (Some(quote), Some(_)) => crate::page_text::page_request(quote, &self.content),
            (Some(quote), None) => selection_request(quote, &self.content),
            (None, _) => self.content.clone(),
        };
        ChatMessage {
            content,
            quote: None,
            page: None,
            tools: Vec::new(),
            ..self.to_chat()
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionContext {
    /// Chronological; the first one is the seed.
    pub messages: Vec<MemoryMessage>,
    pub domain: String,
    pub started_at: u64,
}

impl SessionContext {
    pub fn new(domain: impl Into<String>, started_at: u64) -> Self {
        Self {
            messages: Vec::new(),
            domain: domain.into(),
            started_at,
        }
    }

    /// Appends a message, then enforces `max_messages`.
    pub fn push(
        &mut self,
        role: Role,
        content: impl Into<String>,
        timestamp: u64,
        config: &MemoryConfig,
    ) {
        self.push_message(MemoryMessage::new(role, content, timestamp), config);
    }

    /// Appends `message` (with its id, flags and quote), then enforces `max_messages`.
    pub fn push_message(&mut self, message: MemoryMessage, config: &MemoryConfig) {
        self.messages.push(message);
        self.trim(config);
    }

    /// Drops the oldest messages beyond `max_messages`, skipping the seed while it is preserved
    /// (it is what the whole conversation refers back to).
    pub fn trim(&mut self, config: &MemoryConfig) {
        let excess = self.messages.len().saturating_sub(config.max_messages);
        let from = usize::from(config.preserve_seed && config.max_messages > 0);
        self.messages.drain(from..from + excess);
    }

    /// When the session was last used: cleanup ages sessions from here, so that a conversation
    /// still in use is not wiped 24 h after it began.
    pub fn last_activity(&self) -> u64 {
        self.messages
            .last()
            .map_or(0, |m| m.timestamp)
            .max(self.started_at)
    }
}

/// Every open conversation, keyed `domain:tabId`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SessionMemory {
    sessions: BTreeMap<SessionKey, SessionContext>,
}

impl SessionMemory {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn get(&self, key: &SessionKey) -> Option<&SessionContext> {
        self.sessions.get(key)
    }

    pub fn keys(&self) -> impl Iterator<Item = &SessionKey> {
        self.sessions.keys()
    }

    pub fn len(&self) -> usize {
        self.sessions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }

    /// Appends a message to the session of `key`, starting the session if there is none.
    pub fn record(
        &mut self,
        key: &SessionKey,
        role: Role,
        content: impl Into<String>,
        now_ms: u64,
        config: &MemoryConfig,
    ) -> &SessionContext {
        let session = self
            .sessions
            .entry(key.clone())
            .or_insert_with(|| SessionContext::new(key.domain.clone(), now_ms));
        session.push(role, content, now_ms, config);
        session
    }

    /// Appends `message` to the session of `key`, starting the session if there is none.
    pub fn record_message(
        &mut self,
        key: &SessionKey,
        message: MemoryMessage,
        config: &MemoryConfig,
    ) -> &SessionContext {
        let session = self
            .sessions
            .entry(key.clone())
            .or_insert_with(|| SessionContext::new(key.domain.clone(), message.timestamp));
        session.push_message(message, config);
        session
    }

    /// Sets "Hide from context" on message `id` of `key`; `true` if the message exists.
    pub fn set_hidden(&mut self, key: &SessionKey, id: &str, hidden: bool) -> bool {
        self.message_mut(key, id)
            .map(|m| m.hidden = hidden)
            .is_some()
    }

    /// Takes message `id` back out of the session of `key` (a question that got no answer,
    /// whose text the panel gives back to the user); `true` if it was there. A session left
    /// empty is forgotten.
    pub fn remove_message(&mut self, key: &SessionKey, id: &str) -> bool {
        let Some(session) = self.sessions.get_mut(key) else {
            return false;
        };
        let before = session.messages.len();
        session.messages.retain(|m| m.id != id || id.is_empty());
        let removed = session.messages.len() != before;
        if session.messages.is_empty() {
            self.sessions.remove(key);
        }
        removed
    }

    /// Regenerate / Edit & resend: takes the newest question `id` and everything after it
    /// (its answer) back out of the session of `key`, so the question sent in their place is
    /// answered without them. Only the newest question can be replaced: when `id` is not the
    /// session's last user message nothing changes and the result is `false`. A session left
    /// empty is forgotten (recording the new question starts it again).
    pub fn take_back_turn(&mut self, key: &SessionKey, id: &str) -> bool {
        let Some(session) = self.sessions.get_mut(key) else {
            return false;
        };
        let newest = session.messages.iter().rposition(|m| m.role == Role::User);
        let Some(at) = newest.filter(|&i| !id.is_empty() && session.messages[i].id == id) else {
            return false;
        };
        session.messages.truncate(at);
        if session.messages.is_empty() {
            self.sessions.remove(key);
        }
        true
    }

    fn message_mut(&mut self, key: &SessionKey, id: &str) -> Option<&mut MemoryMessage> {
        self.sessions
            .get_mut(key)?
            .messages
            .iter_mut()
            .find(|m| !id.is_empty() && m.id == id)
    }

    /// Forgets one session; `true` if there was one.
    pub fn clear(&mut self, key: &SessionKey) -> bool {
        self.sessions.remove(key).is_some()
    }

    /// The tab closed: forget everything said in it.
    pub fn forget_tab(&mut self, tab_id: i32) -> Vec<SessionKey> {
        self.remove_where(|key, _| key.tab_id == tab_id)
    }

    /// Chrome swapped tab `removed` for tab `added` (a prerendered page took its place,
    /// `tabs.onReplaced`): the conversation is the same tab's to the user, so it moves. A
    /// session `added` already had for the same domain is kept and the old one dropped.
    /// `true` if anything moved.
    pub fn replace_tab(&mut self, removed: i32, added: i32) -> bool {
        let keys: Vec<SessionKey> = self
            .sessions
            .keys()
            .filter(|k| k.tab_id == removed)
            .cloned()
            .collect();
        let mut any = false;
        for key in keys {
            let Some(session) = self.sessions.remove(&key) else {
                continue;
            };
            let new_key = SessionKey::new(key.domain, added);
            if let std::collections::btree_map::Entry::Vacant(slot) = self.sessions.entry(new_key) {
                slot.insert(session);
                any = true;
            }
        }
        any
    }

    /// The tab loaded `new_url`: forget its sessions unless the domain stayed the same (a page
    /// that is not a web page counts as another site). `true` if anything was forgotten.
    pub fn on_navigate(&mut self, tab_id: i32, new_url: &str) -> bool {
        let domain = domain_of(new_url);
        let removed = self.remove_where(|key, _| {
            key.tab_id == tab_id && domain.as_deref() != Some(key.domain.as_str())
        });
        !removed.is_empty()
    }

    pub fn forget_all(&mut self) {
        self.sessions.clear();
    }

    /// Removes sessions idle for more than `max_age_ms`, then the least recently active ones
    /// above `max_sessions`, and trims the rest to `max_messages` (the limit may have been
    /// lowered in Settings). Returns the removed keys, least recently active first.
    pub fn cleanup(&mut self, now_ms: u64, config: &MemoryConfig) -> Vec<SessionKey> {
        let mut by_age: Vec<_> = self
            .sessions
            .iter()
            .map(|(key, s)| (s.last_activity(), key.clone()))
            .collect();
        crate::sort::sort(&mut by_age);
        // Oldest first, so both the expired sessions and the excess ones form a prefix.
        // saturating_sub: a clock that went backwards makes sessions young, never negative.
        let expired = by_age
            .iter()
            .take_while(|(at, _)| now_ms.saturating_sub(*at) > config.max_age_ms);
        let count = expired
            .count()
            .max(by_age.len().saturating_sub(config.max_sessions));
        let removed: Vec<_> = by_age.into_iter().take(count).map(|(_, key)| key).collect();
        removed.iter().for_each(|key| {
            self.sessions.remove(key);
        });
        self.sessions.values_mut().for_each(|s| s.trim(config));
        removed
    }

    fn remove_where(
        &mut self,
        doomed: impl Fn(&SessionKey, &SessionContext) -> bool,
    ) -> Vec<SessionKey> {
        let keys: Vec<_> = self
            .sessions
            .iter()
            .filter(|(k, s)| doomed(k, s))
            .map(|(k, _)| k.clone())
            .collect();
        keys.iter().for_each(|key| {
            self.sessions.remove(key);
        });
        keys
    }
}

/// A selection the user asked about ("Ask Tandem") that the panel has not shown yet. One at
/// a time: a newer request replaces an older one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingSelection {
    pub tab_id: i32,
    pub text: String,
    /// When it was asked, milliseconds since the epoch.
    pub at: u64,
    /// Set instead of `text` when the selection lay in a field Tandem never reads (a
    /// password): the sentence the panel shows rather than asking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

/// A field whose selected text "Ask Tandem" never reads, as the page-side reader names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SensitiveField {
    Password,
    Payment,
    OneTimeCode,
}

impl SensitiveField {
    /// The page-side reader's name for the field; `None` for a name it does not use.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "password" => Some(Self::Password),
            "payment" => Some(Self::Payment),
            "one-time-code" => Some(Self::OneTimeCode),
            _ => None,
        }
    }

    /// What the user reads instead of an answer.
    pub fn refusal(self) -> String {
        let what = match self {
            Self::Password => "a password field",
            Self::Payment => "a payment card field",
            Self::OneTimeCode => "a one-time code field",
        };
        format!(
            "Tandem does not read text selected inside {what}, so it was not sent to the model. \
             Select text elsewhere on the page to ask about it."
        )
    }
}

impl PendingSelection {
    /// How long a selection waits for the panel: a panel opened much later must not start a
    /// question the user has forgotten about.
    pub const MAX_WAIT_MS: u64 = 10 * 60 * 1_000;

    /// A pending selection of `text` in `tab_id`; `None` when there is no text to ask about.
    pub fn new(tab_id: i32, text: &str, at: u64) -> Option<Self> {
        let text = text.trim();
        (!text.is_empty()).then(|| Self {
            tab_id,
            text: text.to_owned(),
            at,
            refused: None,
        })
    }

    /// A selection in a sensitive field: nothing of it is kept, only why it is not asked.
    pub fn refused(tab_id: i32, field: SensitiveField, at: u64) -> Self {
        Self {
            tab_id,
            text: String::new(),
            at,
            refused: Some(field.refusal()),
        }
    }

    /// Whether the panel showing `tab_id` at `now_ms` should take it.
    pub fn is_for(&self, tab_id: i32, now_ms: u64) -> bool {
        self.tab_id == tab_id && now_ms.saturating_sub(self.at) <= Self::MAX_WAIT_MS
    }
}
