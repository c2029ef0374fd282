//! The provider-neutral request every adapter translates.

use serde::{Deserialize, Serialize};

use crate::chat::Role;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RequestMessage {
    pub role: Role,
    pub content: String,
    /// Images attached to this message, as data: URLs (`data:image/png;base64,...`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<String>,
    /// The tools the model called in this (assistant) turn, in the order it called them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// The results of the previous assistant turn's calls, carried by a user turn (each
    /// adapter spreads them into its provider's shape: OpenAI and Ollama `role: tool`
    /// messages, Anthropic `tool_result` blocks, Gemini `functionResponse` parts).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_results: Vec<ToolOutcome>,
}

impl RequestMessage {
    /// A plain text turn.
    pub fn text(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
            images: Vec::new(),
            tool_calls: Vec::new(),
            tool_results: Vec::new(),
        }
    }
}

/// A tool the model may call, declared the same way to every provider.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The name the model calls it by: `[A-Za-z0-9_-]{1,64}`, the subset every provider
    /// accepts (the registry maps it back to the provider's own tool name).
    pub name: String,
    pub description: String,
    /// A JSON Schema object for the arguments.
    pub parameters: serde_json::Value,
}

/// One call the model made.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's call id (`call_…`, `toolu_…`); providers without ids (Gemini, Ollama)
    /// get one made up by the decoder, unique within the answer.
    pub id: String,
    pub name: String,
    /// The arguments as the model wrote them. A model that writes something other than a
    /// JSON object gets `Value::String(raw text)`, which fails validation with a sentence
    /// rather than being lost.
    pub arguments: serde_json::Value,
}

/// What came of one call, sent back to the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolOutcome {
    pub call_id: String,
    /// The tool's name as the model called it (Gemini matches responses by name).
    pub name: String,
    /// The result text (already capped and fenced by the caller) or the error sentence.
    pub content: String,
    pub is_error: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RequestOptions {
    pub temperature: Option<f32>,
    pub max_output_tokens: Option<u32>,
    /// The context window the budget assumed. Servers that size their context per request
    /// (Ollama's `num_ctx`) get it, or they silently cut the prompt at their own default.
    #[serde(default)]
    pub context_window: Option<u32>,
}

/// Chronological messages (user/assistant only; the system prompt is separate because
/// Anthropic and Gemini carry it outside the message list).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UniversalRequest {
    pub model: String,
    pub system: Option<String>,
    pub messages: Vec<RequestMessage>,
    pub options: RequestOptions,
    /// The tools offered for this request; empty sends no tool declarations at all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolSpec>,
}

impl UniversalRequest {
    /// Makes the turns acceptable to every provider: Anthropic and Gemini reject a
    /// conversation that starts with the assistant or repeats a role. Such shapes arise when
    /// the user hides a question but keeps its answer, or when an answer failed. Leading
    /// assistant turns are dropped (an answer without its question misleads more than it
    /// helps) and consecutive turns of one role are joined.
    pub fn normalized(mut self) -> Self {
        let mut turns: Vec<RequestMessage> = Vec::with_capacity(self.messages.len());
        for m in self.messages.drain(..) {
            match turns.last_mut() {
                None if m.role == Role::Assistant => {}
                Some(last) if last.role == m.role => {
                    last.content.push_str("\n\n");
                    last.content.push_str(&m.content);
                    last.images.extend(m.images);
                    last.tool_calls.extend(m.tool_calls);
                    last.tool_results.extend(m.tool_results);
                }
                _ => turns.push(m),
            }
        }
        self.messages = turns;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(turns: &[(Role, &str)]) -> UniversalRequest {
        UniversalRequest {
            model: "m".into(),
            system: None,
            messages: turns
                .iter()
                .map(|(role, text)| RequestMessage::text(*role, *text))
                .collect(),
            options: RequestOptions::default(),
            tools: vec![],
        }
    }

    #[test]
    fn normalized_turns_start_with_the_user_and_alternate() {
        use Role::{Assistant as A, User as U};
        type Turns<'a> = &'a [(Role, &'a str)];
        let cases: &[(Turns, Turns)] = &[
            (&[(U, "q")], &[(U, "q")]),
            (&[(A, "orphan answer"), (U, "q")], &[(U, "q")]),
            (
                &[(U, "q1"), (U, "q2"), (A, "a"), (U, "q3")],
                &[(U, "q1\n\nq2"), (A, "a"), (U, "q3")],
            ),
            (
                &[(U, "q1"), (A, "a1"), (A, "a2"), (U, "q2")],
                &[(U, "q1"), (A, "a1\n\na2"), (U, "q2")],
            ),
        ];
        for (input, want) in cases {
            assert_eq!(
                req(input).normalized().messages,
                req(want).messages,
                "{input:?}"
            );
        }
    }
}
