//! The provider-neutral request every adapter translates.

use serde::{Deserialize, Serialize};

/// Who speaks a message: the bottom of the request, so the conversation ([`crate::chat`]) and
/// the stream can name it without naming each other.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
}

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
    /// Images the tool returned, as checked data: URLs (`crate::tools::image`). Each adapter
    /// places them where its provider reads a tool's images; a model that takes none gets a
    /// sentence for each instead (`crate::tools::image::describe_tool_images`).
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
    /// The tools offered for this request; empty sends no tool declarations at all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolSpec>,
    /// The structured reply an agent step asks for, in the provider's own form (see
    /// [`crate::structured`]); `None` for chat answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<crate::structured::OutputSchema>,
}

impl UniversalRequest {
    /// Makes the turns acceptable to every provider: Anthropic and Gemini reject a
    /// conversation that starts with the assistant or repeats a role. Such shapes arise when
    /// the user hides a question but keeps its answer, or when an answer failed. Leading
    /// assistant turns are dropped (an answer without its question misleads more than it
    /// helps) and consecutive turns of one role are joined.
    ///
    /// Tool calls and results must also pair up: OpenAI and Anthropic reject a call whose
    /// result is not in the very next turn, and a result whose call is not in the turn just
    /// before. A call without its result, or a result without its call (left behind when a
    /// turn was dropped), is removed, and so is a turn that held nothing else.
    pub fn normalized(mut self) -> Self {
        let mut turns = join_runs(std::mem::take(&mut self.messages));
        while pair_tools(&mut turns) {
            turns = join_runs(turns);
        }
        self.messages = turns;
        self
    }
}

/// Drops leading assistant turns and joins consecutive turns of one role.
fn join_runs(messages: Vec<RequestMessage>) -> Vec<RequestMessage> {
    let mut turns: Vec<RequestMessage> = Vec::with_capacity(messages.len());
    for m in messages {
        match turns.last_mut() {
            None if m.role == Role::Assistant => {}
            Some(last) if last.role == m.role => {
                // A turn of tool results alone has no text: no blank lines for it.
                if !last.content.is_empty() && !m.content.is_empty() {
                    last.content.push_str("\n\n");
                }
                last.content.push_str(&m.content);
                last.images.extend(m.images);
                last.tool_calls.extend(m.tool_calls);
                last.tool_results.extend(m.tool_results);
            }
            _ => turns.push(m),
        }
    }
    turns
}

/// Keeps only the calls answered in the next turn and the results asked for in the turn
/// before, then removes the turns this left empty. Returns whether any turn was removed
/// (its neighbours may now need joining).
fn pair_tools(turns: &mut Vec<RequestMessage>) -> bool {
    let mut emptied = vec![false; turns.len()];
    for i in 0..turns.len() {
        let asked: Vec<String> = match i.checked_sub(1).map(|p| &turns[p]) {
            Some(prev) if prev.role == Role::Assistant => {
                prev.tool_calls.iter().map(|c| c.id.clone()).collect()
            }
            _ => Vec::new(),
        };
        let turn = &mut turns[i];
        let before = turn.tool_results.len();
        turn.tool_results.retain(|r| asked.contains(&r.call_id));
        emptied[i] |= turn.tool_results.len() < before;
    }
    for i in 0..turns.len() {
        let answered: Vec<String> = match turns.get(i + 1) {
            Some(next) if next.role == Role::User => next
                .tool_results
                .iter()
                .map(|r| r.call_id.clone())
                .collect(),
            _ => Vec::new(),
        };
        let turn = &mut turns[i];
        let before = turn.tool_calls.len();
        turn.tool_calls.retain(|c| answered.contains(&c.id));
        emptied[i] |= turn.tool_calls.len() < before;
    }
    let mut emptied = emptied.into_iter();
    let before = turns.len();
    turns.retain(|t| {
        let lost_tools = emptied.next().unwrap_or(false);
        let nothing_left = t.content.trim().is_empty()
            && t.images.is_empty()
            && t.tool_calls.is_empty()
            && t.tool_results.is_empty();
        !(lost_tools && nothing_left)
    });
    turns.len() < before
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
            output: None,
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

    fn call(id: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: "look".into(),
            arguments: crate::json!({}),
        }
    }

    fn result(id: &str) -> ToolOutcome {
        ToolOutcome {
            call_id: id.into(),
            name: "look".into(),
            content: format!("seen {id}"),
            is_error: false,
            images: Vec::new(),
        }
    }

    fn asking(text: &str, ids: &[&str]) -> RequestMessage {
        RequestMessage {
            tool_calls: ids.iter().map(|id| call(id)).collect(),
            ..RequestMessage::text(Role::Assistant, text)
        }
    }

    fn answering(text: &str, ids: &[&str]) -> RequestMessage {
        RequestMessage {
            tool_results: ids.iter().map(|id| result(id)).collect(),
            ..RequestMessage::text(Role::User, text)
        }
    }

    fn turns(messages: Vec<RequestMessage>) -> Vec<RequestMessage> {
        UniversalRequest {
            messages,
            ..req(&[])
        }
        .normalized()
        .messages
    }

    #[test]
    fn a_turn_of_tool_results_alone_is_kept_after_its_calls() {
        let loop_turns = vec![
            RequestMessage::text(Role::User, "q"),
            asking("", &["a", "b"]),
            answering("", &["a", "b"]),
            asking("Looking again.", &["c"]),
            answering("", &["c"]),
        ];
        assert_eq!(turns(loop_turns.clone()), loop_turns);
    }

    #[test]
    fn results_and_a_follow_up_in_separate_turns_are_joined_without_blank_lines() {
        let got = turns(vec![
            RequestMessage::text(Role::User, "q"),
            asking("", &["a"]),
            answering("", &["a"]),
            RequestMessage::text(Role::User, "and then?"),
        ]);
        assert_eq!(got.len(), 3);
        assert_eq!(got[2], answering("and then?", &["a"]));
    }

    #[test]
    fn calls_and_results_that_lost_their_partner_are_removed() {
        // The first question was hidden: its calls went with the leading assistant turn,
        // so their results, and then the turn they were alone in, go too.
        let got = turns(vec![
            asking("", &["a"]),
            answering("", &["a"]),
            asking("", &["b"]),
            answering("", &["b"]),
            RequestMessage::text(Role::User, "q"),
        ]);
        assert_eq!(got, vec![RequestMessage::text(Role::User, "q")]);

        // A call left unanswered (the answer failed midway) keeps its text only; a result
        // that answers nothing is dropped but the text beside it stays.
        let got = turns(vec![
            RequestMessage::text(Role::User, "q"),
            asking("Checking.", &["a"]),
            answering("never mind", &["z"]),
        ]);
        assert_eq!(
            got,
            vec![
                RequestMessage::text(Role::User, "q"),
                RequestMessage::text(Role::Assistant, "Checking."),
                RequestMessage::text(Role::User, "never mind"),
            ]
        );

        // A turn of calls only, unanswered, disappears and the user turns around it join.
        let got = turns(vec![
            RequestMessage::text(Role::User, "q1"),
            asking("", &["a"]),
            RequestMessage::text(Role::User, "q2"),
        ]);
        assert_eq!(got, vec![RequestMessage::text(Role::User, "q1\n\nq2")]);
    }
}
