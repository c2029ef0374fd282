//! Conversation messages as the user sees them.

use serde::{Deserialize, Serialize};

use crate::errors::ErrorKind;
use crate::i18n::{count_shown, nested, text, Mark, Msg};
use crate::stream::Usage;

// Who speaks is the request's notion; a conversation message carries one too, so every
// `chat::Role` path keeps working.
pub use crate::request::Role;

/// One message of a conversation. `id` is stable for the life of the message so that
/// per-message work (token counts) can be cached by it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatMessage {
    #[serde(default)]
    pub id: String,
    pub role: Role,
    pub content: String,
    /// The user chose "Hide from context": shown in the panel, never sent.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hidden: bool,
    /// Page text the user selected and asked about ("Ask Tandem"), shown quoted above
    /// `content`. Page content, never instructions: see `memory::MemoryMessage::to_model`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quote: Option<String>,
    /// "Ask about this page": `quote` is the page's readable text ([`crate::page_text`]),
    /// not a selection, and this is the page's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<String>,
    /// Images the user attached, as `data:` URLs. They travel with the message they were
    /// attached to and are not kept in session memory (too large for it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<String>,
    /// An answer's provider ("via OpenAI"), when it finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answered_by: Option<String>,
    /// Why an answer is incomplete ([`incomplete_badge`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub badge: Option<String>,
    /// The tokens an answer used, when its provider reported them (shown with "via …").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// The tools the model called while answering, in order: shown as cards with the answer
    /// and kept with it in session memory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolCard>,
    /// An agent step's native tool call (an assistant turn of a task's transcript), sent back
    /// in the provider's own shape; never part of a chat conversation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<crate::request::ToolCall>,
    /// The results of the previous turn's `tool_calls` (the next user turn).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_results: Vec<crate::request::ToolOutcome>,
}

/// One tool call of an answer, as the user sees it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCard {
    pub call_id: String,
    pub tool: String,
    pub provider: String,
    pub arguments: String,
    /// `None` until it ended (a call stopped while it ran stays so).
    #[serde(default)]
    pub ok: Option<bool>,
    /// The result or the error sentence, as the model read it.
    #[serde(default)]
    pub result: String,
}

/// The badge of an answer that ended early: stopped by the user (`None`), its stream cut, or
/// any other failure after some text arrived. The worker records it with the answer in
/// session memory and the panel shows it, so both say the same.
pub fn incomplete_badge(error: Option<ErrorKind>) -> &'static str {
    match error {
        None => "Stopped",
        Some(ErrorKind::StreamCut) => "Interrupted",
        Some(_) => "Incomplete",
    }
}

/// A badge as the person reads it: the catalog's word for one [`incomplete_badge`] gives
/// (stored in English with the answer), any other label as it is.
pub fn badge_message(label: &str) -> Msg {
    match label {
        "Stopped" => Msg::key("badgeStopped"),
        "Interrupted" => Msg::key("badgeInterrupted"),
        "Incomplete" => Msg::key("badgeIncomplete"),
        other => Msg::literal(other),
    }
}

impl ChatMessage {
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Self {
            id: String::new(),
            role,
            content: content.into(),
            hidden: false,
            quote: None,
            page: None,
            images: Vec::new(),
            answered_by: None,
            badge: None,
            usage: None,
            tools: Vec::new(),
            tool_calls: Vec::new(),
            tool_results: Vec::new(),
        }
    }
}

/// The tokens an answer used, as a person reads them: input and output together
/// (`1234` → "1,234 tokens"). `None` when the provider reported nothing.
pub fn tokens_used(usage: Option<Usage>) -> Option<String> {
    let total = usage.map(|u| u64::from(u.input) + u64::from(u.output))?;
    if total == 0 {
        return None;
    }
    Some(format!(
        "{} token{}",
        group_thousands(total),
        if total == 1 { "" } else { "s" }
    ))
}

/// [`answer_note`] as a catalog message: "via OpenAI · 1,234 tokens" in the person's words
/// (the provider's name as it is).
pub fn answer_message(provider: &str, usage: Option<Usage>) -> Msg {
    let total = usage.map_or(0, |u| u64::from(u.input) + u64::from(u.output));
    match total {
        0 => Msg::new("chatAnsweredVia", vec![text(provider)]),
        1 => Msg::new(
            "chatAnsweredViaTokens",
            vec![text(provider), nested(Mark::Plain, Msg::key("oneToken"))],
        ),
        n => Msg::new(
            "chatAnsweredViaTokens",
            vec![
                text(provider),
                nested(
                    Mark::Plain,
                    Msg::new("nTokens", vec![count_shown(n, group_thousands(n))]),
                ),
            ],
        ),
    }
}

/// `1048576` → `1,048,576`.
pub fn group_thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The line under a finished answer: who answered and, when reported, the tokens used
/// ("via OpenAI · 1,234 tokens").
pub fn answer_note(provider: &str, usage: Option<Usage>) -> String {
    match tokens_used(usage) {
        Some(tokens) => format!("via {provider} · {tokens}"),
        None => format!("via {provider}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_as_a_message_says_the_same_in_english() {
        let usage = |input, output| Some(Usage { input, output });
        for (u, provider) in [
            (None, "OpenAI"),
            (usage(0, 0), "Ollama"),
            (usage(1, 0), "Anthropic"),
            (usage(700_000, 348_576), "Gemini"),
        ] {
            assert_eq!(
                answer_message(provider, u).english(),
                answer_note(provider, u)
            );
        }
        for label in ["Stopped", "Interrupted", "Incomplete", "whatever"] {
            assert_eq!(badge_message(label).english(), label);
        }
        assert!(badge_message(incomplete_badge(None)).has_key());
    }

    #[test]
    fn the_note_says_who_answered_and_the_tokens_used() {
        let usage = |input, output| Some(Usage { input, output });
        assert_eq!(answer_note("OpenAI", None), "via OpenAI");
        assert_eq!(
            answer_note("OpenAI", usage(0, 0)),
            "via OpenAI",
            "nothing reported"
        );
        assert_eq!(answer_note("OpenAI", usage(1, 0)), "via OpenAI · 1 token");
        assert_eq!(
            answer_note("Anthropic", usage(1_000, 234)),
            "via Anthropic · 1,234 tokens"
        );
        assert_eq!(
            tokens_used(usage(u32::MAX, u32::MAX)).as_deref(),
            Some("8,589,934,590 tokens"),
            "no overflow"
        );
        assert_eq!(tokens_used(usage(999, 0)).as_deref(), Some("999 tokens"));
    }

    #[test]
    fn older_messages_without_usage_still_parse() {
        let m: ChatMessage =
            crate::json::from_str(r#"{"role":"assistant","content":"hi"}"#).expect("parses");
        assert_eq!(m.usage, None);
        let with = ChatMessage {
            usage: Some(Usage {
                input: 3,
                output: 4,
            }),
            ..ChatMessage::new(Role::Assistant, "hi")
        };
        let json = serde_json::to_string(&with).expect("serialises");
        assert!(json.contains(r#""usage":{"input":3,"output":4}"#), "{json}");
    }
}
