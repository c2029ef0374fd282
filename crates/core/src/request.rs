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
                .map(|(role, text)| RequestMessage {
                    role: *role,
                    content: text.to_string(),
                    images: vec![],
                })
                .collect(),
            options: RequestOptions::default(),
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
