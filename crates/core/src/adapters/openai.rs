//! OpenAI Chat Completions, streaming: <https://platform.openai.com/docs/api-reference/chat/create>
//! and <https://platform.openai.com/docs/api-reference/chat-streaming>. Also spoken by every
//! "OpenAI-compatible" server (LM Studio, vLLM, llama.cpp, Ollama's `/v1`, OpenRouter...).
//!
//! Stream: SSE `data: {chat.completion.chunk}` lines, `choices[0].delta.content` carrying text,
//! `finish_reason` on the last choice chunk, a final `choices: []` chunk with `usage` (asked for
//! with `stream_options.include_usage`), then `data: [DONE]`. An `{"error":{...}}` payload may
//! replace a chunk when the server fails mid-answer.

use crate::json;
use serde::de::IgnoredAny;
#[cfg(test)]
use serde::Deserialize;
use serde_json::Value;

use super::{
    arguments_text, bearer, json_body, parameters, parse_arguments, read_payload, role_name,
    system_prompt, temperature, turns, user_turn_with_result_images, Adapter, CallIds, Decoder,
    Framing, PayloadError, Protocol,
};
use crate::errors;
use crate::http::HttpRequest;
use crate::json::fields::{self, list, Fields};
use crate::provider::{ProviderConfig, ProviderKind};
use crate::request::{RequestMessage, ToolCall, UniversalRequest};
use crate::sse::SseDecoder;
use crate::stream::{StreamDecoder, StreamEvent, Usage};
use crate::structured::{strict, OutputMode};

/// The adapter for `OpenAi` and `OpenAiCompatible`; the kind only names the provider in
/// messages.
pub struct OpenAi(pub ProviderKind);

impl Adapter for OpenAi {
    fn translate(&self, req: &UniversalRequest, cfg: &ProviderConfig) -> HttpRequest {
        let system = system_prompt(req).map(|s| json!({"role": "system", "content": s}));
        let mut messages: Vec<Value> = system.into_iter().collect();
        turns(req).for_each(|m| push_turn(&mut messages, m));
        let tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": parameters(t),
                }})
            })
            .collect();
        let body = json!({
            "model": req.model,
            "stream": true,
            "stream_options": {"include_usage": true},
            "temperature": temperature(req),
            "max_tokens": req.options.max_output_tokens,
        });
        HttpRequest::post_json(
            format!("{}/chat/completions", cfg.base_url),
            bearer(&cfg.api_key),
            json_body(
                body,
                [
                    ("messages", Value::Array(messages)),
                    ("tools", (!tools.is_empty()).then_some(tools).into()),
                    ("response_format", response_format(req)),
                    ("tool_choice", tool_choice(req, !req.tools.is_empty())),
                ],
            ),
        )
    }

    fn decoder(&self) -> Box<dyn StreamDecoder> {
        Decoder::boxed(self.0, Framing::Sse(SseDecoder::new()), Chunks::default())
    }
}

/// An agent step's structured reply (<https://platform.openai.com/docs/guides/structured-outputs>):
/// the schema in strict mode's form, or any JSON object a rung down the ladder, or nothing.
fn response_format(req: &UniversalRequest) -> Value {
    let Some(output) = &req.output else {
        return Value::Null;
    };
    match output.mode {
        OutputMode::JsonSchema => json!({"type": "json_schema", "json_schema": {
            "name": output.name,
            "strict": true,
            "schema": strict(&output.schema),
        }}),
        OutputMode::JsonObject => json!({"type": "json_object"}),
        OutputMode::Prose => Value::Null,
    }
}

/// A planner step declares the task's tools (its history may hold calls) but must answer
/// under its schema: `none`. Otherwise the API's default (`auto`) stands, not sent.
fn tool_choice(req: &UniversalRequest, tools: bool) -> Value {
    match &req.output {
        Some(o) if tools && !o.calls => json!("none"),
        _ => Value::Null,
    }
}

/// One turn in Chat Completions' shape. Tool calls ride on the assistant message; each
/// result is a `tool` message of its own, which must come right after the calls, so a
/// user turn's results go before its text.
fn push_turn(messages: &mut Vec<Value>, m: &RequestMessage) {
    if !m.tool_calls.is_empty() {
        let calls: Vec<Value> = m
            .tool_calls
            .iter()
            .map(|c| {
                json!({"id": c.id, "type": "function", "function": {
                    "name": c.name,
                    "arguments": arguments_text(c),
                }})
            })
            .collect();
        // `null`, not "", is how the API itself writes a turn that only called tools.
        let content = (!m.content.is_empty()).then(|| json!(m.content));
        messages.push(json!({"role": role_name(m.role), "content": content, "tool_calls": calls}));
        return;
    }
    for r in &m.tool_results {
        messages.push(json!({"role": "tool", "tool_call_id": r.call_id, "content": r.content}));
    }
    // A `tool` message holds text only: a tool's images ride on the user message after it.
    let (text, images) = user_turn_with_result_images(m);
    if !m.tool_results.is_empty() && text.is_empty() && images.is_empty() {
        return;
    }
    let content = if images.is_empty() {
        json!(text)
    } else {
        let text = json!({"type": "text", "text": text});
        let images = images
            .into_iter()
            .map(|url| json!({"type": "image_url", "image_url": {"url": url}}));
        Value::Array(std::iter::once(text).chain(images).collect())
    };
    messages.push(json!({"role": role_name(m.role), "content": content}));
}

/// Chunk state: the tool calls being assembled, by their `index` in the stream.
#[derive(Default)]
struct Chunks {
    calls: Vec<PartialCall>,
    /// For the compatible servers that send calls without ids.
    ids: CallIds,
}

/// A call whose arguments arrive in pieces.
struct PartialCall {
    index: u64,
    id: String,
    name: String,
    arguments: String,
}

#[cfg_attr(test, derive(Debug, Deserialize, PartialEq))]
struct Chunk {
    model: Option<String>,
    /// `null` on some servers' usage chunk, hence the Option.
    choices: Option<Vec<Choice>>,
    usage: Option<ChunkUsage>,
    error: Option<IgnoredAny>,
}

#[cfg_attr(test, derive(Debug, Deserialize, PartialEq))]
struct Choice {
    delta: Option<Delta>,
    finish_reason: Option<String>,
}

#[cfg_attr(test, derive(Debug, Deserialize, PartialEq))]
struct Delta {
    content: Option<String>,
    tool_calls: Option<Vec<CallDelta>>,
}

/// A piece of a tool call: the first piece has its id and name, later ones only more
/// argument text. Every piece names its call by `index` (a few compatible servers leave it
/// out; their pieces then go by id, or to the latest call).
#[cfg_attr(test, derive(Debug, Deserialize, PartialEq))]
struct CallDelta {
    index: Option<u64>,
    id: Option<String>,
    function: Option<FunctionDelta>,
}

#[cfg_attr(test, derive(Debug, Deserialize, PartialEq))]
struct FunctionDelta {
    name: Option<String>,
    /// Text, but some compatible servers send the arguments as a JSON object in one piece.
    arguments: Option<Value>,
}

#[cfg_attr(test, derive(Debug, Deserialize, PartialEq))]
struct ChunkUsage {
    prompt_tokens: Option<u32>,
    completion_tokens: Option<u32>,
}

/// A chunk read by hand from its `Value` (`json::fields`): the fields the derived reader read,
/// null as absent, a wrong type refused (issue #46: the derived one was 7.9 KB of the worker).
fn chunk(value: Value) -> fields::Result<Chunk> {
    let mut f = Fields::of(value, "struct Chunk")?;
    let read = Chunk {
        model: f.opt_str("model"),
        choices: f.opt("choices", |v| list(v, choice)),
        usage: f.opt("usage", chunk_usage),
        error: f.opt("error", |_| Ok(IgnoredAny)),
    };
    f.done(read)
}

fn choice(value: Value) -> fields::Result<Choice> {
    let mut f = Fields::of(value, "struct Choice")?;
    let read = Choice {
        delta: f.opt("delta", delta),
        finish_reason: f.opt_str("finish_reason"),
    };
    f.done(read)
}

fn delta(value: Value) -> fields::Result<Delta> {
    let mut f = Fields::of(value, "struct Delta")?;
    let read = Delta {
        content: f.opt_str("content"),
        tool_calls: f.opt("tool_calls", |v| list(v, call_delta)),
    };
    f.done(read)
}

fn call_delta(value: Value) -> fields::Result<CallDelta> {
    let mut f = Fields::of(value, "struct CallDelta")?;
    let read = CallDelta {
        index: f.opt("index", fields::u64),
        id: f.opt_str("id"),
        function: f.opt("function", function_delta),
    };
    f.done(read)
}

fn function_delta(value: Value) -> fields::Result<FunctionDelta> {
    let mut f = Fields::of(value, "struct FunctionDelta")?;
    let read = FunctionDelta {
        name: f.opt_str("name"),
        arguments: f.opt("arguments", Ok),
    };
    f.done(read)
}

fn chunk_usage(value: Value) -> fields::Result<ChunkUsage> {
    let mut f = Fields::of(value, "struct ChunkUsage")?;
    let read = ChunkUsage {
        prompt_tokens: f.opt("prompt_tokens", fields::u32),
        completion_tokens: f.opt("completion_tokens", fields::u32),
    };
    f.done(read)
}

impl Chunks {
    fn add(&mut self, piece: CallDelta) {
        let index = match (piece.index, &piece.id) {
            (Some(i), _) => i,
            (None, Some(id)) => match self.calls.iter().find(|c| &c.id == id) {
                Some(c) => c.index,
                None => self.calls.iter().map(|c| c.index + 1).max().unwrap_or(0),
            },
            (None, None) => self.calls.last().map_or(0, |c| c.index),
        };
        let at = match self.calls.iter().position(|c| c.index == index) {
            Some(at) => at,
            None => {
                self.calls.push(PartialCall {
                    index,
                    id: String::new(),
                    name: String::new(),
                    arguments: String::new(),
                });
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[at];
        if let Some(id) = piece.id.filter(|id| !id.is_empty()) {
            call.id = id;
        }
        let Some(f) = piece.function else { return };
        // The name comes whole in the first piece; servers that repeat it are not doubled.
        if let Some(name) = f.name.filter(|n| !n.is_empty() && call.name.is_empty()) {
            call.name = name;
        }
        match f.arguments {
            Some(Value::String(text)) => call.arguments.push_str(&text),
            Some(Value::Null) | None => {}
            Some(whole) => call.arguments = whole.to_string(),
        }
    }

    /// Emits the assembled calls, in stream order, once.
    fn flush(&mut self, out: &mut Vec<StreamEvent>) {
        crate::sort::sort_by_key(&mut self.calls, |c| c.index);
        out.extend(self.calls.drain(..).map(|c| {
            StreamEvent::ToolCall(ToolCall {
                arguments: parse_arguments(&c.arguments),
                id: self.ids.id(Some(c.id)),
                name: c.name,
            })
        }));
    }
}

impl Protocol for Chunks {
    fn payload(
        &mut self,
        provider: ProviderKind,
        payload: &str,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), PayloadError> {
        if payload.trim() == "[DONE]" {
            self.flush(out);
            out.push(StreamEvent::Done);
            return Ok(());
        }
        let chunk = read_payload(payload, chunk)?;
        if chunk.error.is_some() {
            return Err(errors::stream_error(provider, payload).into());
        }
        out.extend(chunk.model.map(StreamEvent::Model));
        if let Some(choice) = chunk.choices.and_then(|c| c.into_iter().next()) {
            if let Some(delta) = choice.delta {
                out.extend(delta.content.map(StreamEvent::Delta));
                delta
                    .tool_calls
                    .into_iter()
                    .flatten()
                    .for_each(|piece| self.add(piece));
            }
            if let Some(reason) = choice.finish_reason.filter(|r| !r.is_empty()) {
                // The calls are whole once the choice has finished, whatever the reason.
                self.flush(out);
                out.push(StreamEvent::Finish(reason));
            }
        }
        if let Some(u) = chunk.usage {
            out.push(Usage::reported(u.prompt_tokens, u.completion_tokens));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::super::testkit::{
        check_request, check_stream, check_stream_like, config, conversation, tool_round_trip,
    };
    use super::*;
    use crate::request::RequestOptions;

    const OPENAI: OpenAi = OpenAi(ProviderKind::OpenAi);
    const COMPATIBLE: OpenAi = OpenAi(ProviderKind::OpenAiCompatible);

    #[test]
    fn normal_answer_with_usage() {
        let normal = check_stream(
            &OPENAI,
            "openai/normal.sse",
            expect![[r#"
            Model("gpt-4o-mini-2024-07-18")
            Delta("héllo")
            Delta(" 世界")
            Delta(" 🎉")
            Finish("stop")
            Usage(Usage { input: 23, output: 5 })
            Done
            END
        "#]],
        );
        check_stream_like(&OPENAI, "openai/normal_crlf.sse", &normal);
    }

    #[test]
    fn error_payload_mid_stream() {
        check_stream(
            &OPENAI,
            "openai/error_midstream.sse",
            expect![[r#"
                Model("gpt-4o-2024-08-06")
                Delta("Bonjour")
                ERR Overloaded: OpenAI is overloaded or temporarily unavailable. Try again in a moment. OpenAI said: "The server had an error while processing your request. Sorry about that!"
            "#]],
        );
    }

    #[test]
    fn cut_without_finish_is_stream_cut() {
        check_stream(
            &OPENAI,
            "openai/cut.sse",
            expect![[r#"
                Model("gpt-4o-mini-2024-07-18")
                Delta("héllo")
                Delta(" 世")
                ERR StreamCut: The connection to OpenAI was cut before the answer finished. The partial answer is kept; send again to retry.
            "#]],
        );
    }

    #[test]
    fn compatible_server_without_done_marker() {
        check_stream(
            &COMPATIBLE,
            "openai/compatible_no_done.sse",
            expect![[r#"
                Model("qwen2.5-7b-instruct")
                Delta("héllo 世界")
                Delta(" 🎉")
                Finish("stop")
                Usage(Usage { input: 31, output: 6 })
                Done
                END
            "#]],
        );
    }

    #[test]
    fn request_payload() {
        check_request(
            &OPENAI,
            &conversation(),
            &config(ProviderKind::OpenAi, "sk-test"),
            expect![[r#"
                POST https://api.openai.com/v1/chat/completions
                content-type: application/json
                Authorization: Bearer sk-test

                {
                  "max_tokens": 512,
                  "messages": [
                    {
                      "content": "You are terse.",
                      "role": "system"
                    },
                    {
                      "content": [
                        {
                          "text": "What is in this picture?",
                          "type": "text"
                        },
                        {
                          "image_url": {
                            "url": "data:image/png;base64,iVBORw0KGgo="
                          },
                          "type": "image_url"
                        }
                      ],
                      "role": "user"
                    },
                    {
                      "content": "A cat.",
                      "role": "assistant"
                    },
                    {
                      "content": "héllo 世界 🎉",
                      "role": "user"
                    }
                  ],
                  "model": "test-model",
                  "stream": true,
                  "stream_options": {
                    "include_usage": true
                  },
                  "temperature": 0.7
                }
            "#]],
        );
    }

    #[test]
    fn keyless_server_without_options() {
        let mut req = conversation();
        req.system = None;
        req.messages.truncate(0);
        req.options = RequestOptions::default();
        check_request(
            &COMPATIBLE,
            &req,
            &config(ProviderKind::OpenAiCompatible, ""),
            expect![[r#"
                POST http://localhost:1234/v1/chat/completions
                content-type: application/json

                {
                  "messages": [],
                  "model": "test-model",
                  "stream": true,
                  "stream_options": {
                    "include_usage": true
                  }
                }
            "#]],
        );
    }

    #[test]
    fn a_malformed_frame_is_skipped_and_the_rest_of_the_answer_kept() {
        check_stream(
            &OPENAI,
            "openai/malformed_midstream.sse",
            expect![[r#"
            Model("gpt-4o-mini-2024-07-18")
            Delta("héllo")
            Note("Skipped a frame from OpenAI Tandem could not read (not JSON at line 1 column 95); the answer went on.")
            Note("Skipped a frame from OpenAI Tandem could not read (unexpected data); the answer went on.")
            Delta(" 世界")
            Finish("stop")
            Done
            END
        "#]],
        );
    }

    #[test]
    fn surrogate_halves_split_across_frames_are_joined() {
        check_stream(
            &OPENAI,
            "openai/split_surrogates.sse",
            expect![[r#"
            Model("gpt-4o-mini-2024-07-18")
            Delta("smile ")
            Delta("😀 and ")
            Delta("🎉")
            Finish("stop")
            Delta("�")
            Done
            END
        "#]],
        );
    }

    #[test]
    fn a_body_with_no_readable_frame_is_unreadable_not_cut() {
        let mut d = OPENAI.decoder();
        assert_eq!(d.push(b"data: <html>\n\ndata: {oops\n\n").unwrap().len(), 2);
        let e = d.finish().unwrap_err();
        assert_eq!(e.kind, crate::errors::ErrorKind::Provider);
        assert_eq!(
            e.message,
            "OpenAI sent a reply Tandem could not read (none of its stream could be read)."
        );
    }

    #[test]
    fn tool_calls_are_assembled_from_their_pieces() {
        check_stream(
            &OPENAI,
            "openai/tool-call.sse",
            expect![[r#"
                Model("gpt-4o-mini-2024-07-18")
                ToolCall(ToolCall { id: "call_q7Xk2mB9vR4tN1sW8eL3yZ0a", name: "get_weather", arguments: Object {"city": String("Zürich"), "unit": String("celsius")} })
                ToolCall(ToolCall { id: "call_Hn5cT8pL2wQ6rV0xJ4mK9sB1", name: "list_tabs", arguments: Object {} })
                Finish("tool_calls")
                Usage(Usage { input: 84, output: 41 })
                Done
                END
            "#]],
        );
    }

    #[test]
    fn compatible_server_tool_call_with_text_and_broken_arguments() {
        check_stream(
            &COMPATIBLE,
            "openai/tool-call_compatible.sse",
            expect![[r#"
                Model("qwen2.5-7b-instruct")
                Delta("Let me look.")
                ToolCall(ToolCall { id: "call_8f2d", name: "search", arguments: String("{\"query\": \"rust wasm\"") })
                Finish("tool_calls")
                Done
                END
            "#]],
        );
    }

    #[test]
    fn tool_round_trip_request() {
        check_request(
            &OPENAI,
            &tool_round_trip(),
            &config(ProviderKind::OpenAi, "sk-test"),
            expect![[r#"
                POST https://api.openai.com/v1/chat/completions
                content-type: application/json
                Authorization: Bearer sk-test

                {
                  "messages": [
                    {
                      "content": "You are terse.",
                      "role": "system"
                    },
                    {
                      "content": "Weather in Zürich? And my tabs?",
                      "role": "user"
                    },
                    {
                      "content": "Checking.",
                      "role": "assistant",
                      "tool_calls": [
                        {
                          "function": {
                            "arguments": "{\"city\":\"Zürich\"}",
                            "name": "get_weather"
                          },
                          "id": "call_1",
                          "type": "function"
                        },
                        {
                          "function": {
                            "arguments": "{}",
                            "name": "list_tabs"
                          },
                          "id": "call_2",
                          "type": "function"
                        }
                      ]
                    },
                    {
                      "content": "12°C, cloudy",
                      "role": "tool",
                      "tool_call_id": "call_1"
                    },
                    {
                      "content": "The tab list is not available.",
                      "role": "tool",
                      "tool_call_id": "call_2"
                    },
                    {
                      "content": "Keep it short.",
                      "role": "user"
                    }
                  ],
                  "model": "test-model",
                  "stream": true,
                  "stream_options": {
                    "include_usage": true
                  },
                  "tools": [
                    {
                      "function": {
                        "description": "The current weather in a city.",
                        "name": "get_weather",
                        "parameters": "<get_weather's parameters as declared>"
                      },
                      "type": "function"
                    },
                    {
                      "function": {
                        "description": "The open tabs.",
                        "name": "list_tabs",
                        "parameters": "<list_tabs's parameters as declared>"
                      },
                      "type": "function"
                    }
                  ]
                }
            "#]],
        );
    }

    #[test]
    fn a_turn_of_calls_only_has_null_content_and_results_alone_send_no_user_message() {
        let mut req = tool_round_trip();
        req.messages[1].content.clear();
        req.messages[2].content.clear();
        let body: Value = crate::json::from_str(
            &OPENAI
                .translate(&req, &config(ProviderKind::OpenAi, "k"))
                .body,
        )
        .unwrap();
        let roles: Vec<&str> = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert_eq!(roles, ["system", "user", "assistant", "tool", "tool"]);
        assert_eq!(body["messages"][2]["content"], Value::Null);
        assert!(body["messages"][2]
            .as_object()
            .unwrap()
            .contains_key("content"));
        // No tools declared: no tool field at all.
        req.tools.clear();
        let body = OPENAI
            .translate(&req, &config(ProviderKind::OpenAi, "k"))
            .body;
        assert!(!body.contains("\"tools\""), "{body}");
    }
    /// The hand-written reader reads every recorded payload, and each odd version of a payload
    /// with every field, as the derived reader of `Chunk` did.
    #[test]
    fn the_hand_reader_reads_what_the_derived_reader_read() {
        super::super::testkit::reads_as_derived(
            "openai",
            r#"{"id":"c","model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":"hé 🎉","tool_calls":[{"index":1,"id":"call_1","type":"function","function":{"name":"look","arguments":"{\"a\":1}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":12,"completion_tokens":7},"error":{"message":"x"}}"#,
            chunk,
        );
    }
}
