//! Ollama native chat API, streaming: <https://github.com/ollama/ollama/blob/main/docs/api.md#generate-a-chat-completion>.
//!
//! `POST {base}/api/chat`; the stream is NDJSON: one object per line with `message.content`,
//! the last one with `done: true`, `done_reason`, `prompt_eval_count` and `eval_count`. A
//! failure midway is a `{"error":"..."}` line.

use crate::json;
use serde::de::IgnoredAny;
#[cfg(test)]
use serde::Deserialize;
use serde_json::Value;

use super::{
    arguments_object, bearer, data_url, json_body, parameters, parse_arguments, read_payload,
    role_name, system_prompt, temperature, turns, user_turn_with_result_images, Adapter, CallIds,
    Decoder, Framing, PayloadError, Protocol,
};
use crate::errors;
use crate::http::HttpRequest;
use crate::json::fields::{self, list, Fields};
use crate::ndjson::NdjsonDecoder;
use crate::provider::{ProviderConfig, ProviderKind};
use crate::request::{RequestMessage, ToolCall, UniversalRequest};
use crate::stream::{StreamDecoder, StreamEvent, Usage};
use crate::structured::OutputMode;

pub struct Ollama;

impl Adapter for Ollama {
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
            "options": {
                "temperature": temperature(req),
                "num_predict": req.options.max_output_tokens,
                "num_ctx": req.options.context_window,
            },
        });
        let body = json_body(
            body,
            [
                ("messages", Value::Array(messages)),
                ("tools", (!tools.is_empty()).then_some(tools).into()),
                // An agent step's structured reply: `format` takes a JSON Schema
                // (<https://docs.ollama.com/capabilities/structured-outputs>). It constrains
                // the whole reply, so a step that may call the offered tools goes without it.
                (
                    "format",
                    req.output
                        .as_ref()
                        .filter(|o| o.mode == OutputMode::JsonSchema)
                        .filter(|o| !o.calls || req.tools.is_empty())
                        .map(|o| o.schema.clone())
                        .into(),
                ),
            ],
        );
        // A key is only needed behind an authenticating proxy or for ollama.com.
        HttpRequest::post_json(
            format!("{}/api/chat", cfg.base_url),
            bearer(&cfg.api_key),
            body,
        )
    }

    fn decoder(&self) -> Box<dyn StreamDecoder> {
        Decoder::boxed(
            ProviderKind::Ollama,
            Framing::Ndjson(NdjsonDecoder::new()),
            Lines::default(),
        )
    }
}

/// One turn in `/api/chat`'s shape: calls ride on the assistant message with their
/// arguments as an object; each result is a `tool` message named after its tool, before
/// the user's text.
fn push_turn(messages: &mut Vec<Value>, m: &RequestMessage) {
    for r in &m.tool_results {
        messages.push(json!({"role": "tool", "content": r.content, "tool_name": r.name}));
    }
    // As for OpenAI, a tool's images ride on the user message after the `tool` messages.
    let (text, images) = user_turn_with_result_images(m);
    if !m.tool_results.is_empty() && text.is_empty() && images.is_empty() {
        return;
    }
    let mut message = json!({"role": role_name(m.role), "content": text});
    // Ollama wants bare base64, without the data: URL head.
    let images: Vec<&str> = images
        .into_iter()
        .filter_map(data_url)
        .map(|img| img.data)
        .collect();
    if !images.is_empty() {
        message["images"] = json!(images);
    }
    if !m.tool_calls.is_empty() {
        let calls: Vec<Value> = m
            .tool_calls
            .iter()
            .map(|c| json!({"function": {"name": c.name, "arguments": arguments_object(c)}}))
            .collect();
        message["tool_calls"] = Value::Array(calls);
    }
    messages.push(message);
}

#[derive(Default)]
struct Lines {
    ids: CallIds,
}

#[cfg_attr(test, derive(Debug, Deserialize, PartialEq))]
struct Line {
    model: Option<String>,
    message: Option<Message>,
    #[cfg_attr(test, serde(default))]
    done: bool,
    done_reason: Option<String>,
    prompt_eval_count: Option<u32>,
    eval_count: Option<u32>,
    error: Option<IgnoredAny>,
}

#[cfg_attr(test, derive(Debug, Deserialize, PartialEq))]
struct Message {
    content: Option<String>,
    /// Whole calls, each in the line that completes it.
    tool_calls: Option<Vec<Call>>,
}

#[cfg_attr(test, derive(Debug, Deserialize, PartialEq))]
struct Call {
    /// Recent versions number calls; older ones do not, and get one made up.
    id: Option<String>,
    function: Option<Function>,
}

#[cfg_attr(test, derive(Debug, Deserialize, PartialEq))]
struct Function {
    name: Option<String>,
    /// An object; text is read as JSON in case a server sends it OpenAI's way.
    arguments: Option<Value>,
}

/// A line read by hand from its `Value` (`json::fields`): the fields the derived reader read,
/// null as absent, a wrong type refused (issue #46: the derived one was 5.8 KB of the worker).
fn line(value: Value) -> fields::Result<Line> {
    let mut f = Fields::of(value, "struct Line")?;
    let read = Line {
        model: f.opt_str("model"),
        message: f.opt("message", message),
        done: f.bool_or_false("done"),
        done_reason: f.opt_str("done_reason"),
        prompt_eval_count: f.opt("prompt_eval_count", fields::u32),
        eval_count: f.opt("eval_count", fields::u32),
        error: f.opt("error", |_| Ok(IgnoredAny)),
    };
    f.done(read)
}

fn message(value: Value) -> fields::Result<Message> {
    let mut f = Fields::of(value, "struct Message")?;
    let read = Message {
        content: f.opt_str("content"),
        tool_calls: f.opt("tool_calls", |v| list(v, call)),
    };
    f.done(read)
}

fn call(value: Value) -> fields::Result<Call> {
    let mut f = Fields::of(value, "struct Call")?;
    let read = Call {
        id: f.opt_str("id"),
        function: f.opt("function", function),
    };
    f.done(read)
}

fn function(value: Value) -> fields::Result<Function> {
    let mut f = Fields::of(value, "struct Function")?;
    let read = Function {
        name: f.opt_str("name"),
        arguments: f.opt("arguments", Ok),
    };
    f.done(read)
}

impl Protocol for Lines {
    fn payload(
        &mut self,
        provider: ProviderKind,
        payload: &str,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), PayloadError> {
        let line = read_payload(payload, line)?;
        if line.error.is_some() {
            return Err(errors::stream_error(provider, payload).into());
        }
        out.extend(line.model.map(StreamEvent::Model));
        if let Some(message) = line.message {
            out.extend(message.content.map(StreamEvent::Delta));
            for call in message.tool_calls.into_iter().flatten() {
                let f = call.function.unwrap_or(Function {
                    name: None,
                    arguments: None,
                });
                let arguments = match f.arguments {
                    Some(Value::String(raw)) => parse_arguments(&raw),
                    Some(Value::Null) | None => json!({}),
                    Some(args) => args,
                };
                out.push(StreamEvent::ToolCall(ToolCall {
                    id: self.ids.id(call.id),
                    name: f.name.unwrap_or_default(),
                    arguments,
                }));
            }
        }
        if line.done {
            out.push(StreamEvent::Finish(
                line.done_reason.unwrap_or_else(|| "stop".into()),
            ));
            out.push(Usage::reported(line.prompt_eval_count, line.eval_count));
            out.push(StreamEvent::Done);
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

    #[test]
    fn normal_answer_with_usage() {
        let normal = check_stream(
            &Ollama,
            "ollama/normal.ndjson",
            expect![[r#"
                Model("llama3.2")
                Delta("héllo")
                Delta(" 世界")
                Delta(" 🎉")
                Finish("stop")
                Usage(Usage { input: 26, output: 7 })
                Done
                END
            "#]],
        );
        check_stream_like(&Ollama, "ollama/normal_crlf.ndjson", &normal);
    }

    #[test]
    fn error_line_mid_stream() {
        check_stream(
            &Ollama,
            "ollama/error_midstream.ndjson",
            expect![[r#"
            Model("llama3.2")
            Delta("héllo")
            ERR Provider: Ollama reported an error while answering. Ollama said: "an error was encountered while running the model: CUDA error: out of memory"
        "#]],
        );
    }

    #[test]
    fn cut_inside_a_line() {
        check_stream(
            &Ollama,
            "ollama/cut.ndjson",
            expect![[r#"
            Model("llama3.2")
            Delta("héllo")
            ERR StreamCut: The connection to Ollama was cut before the answer finished. The partial answer is kept; send again to retry.
        "#]],
        );
    }

    #[test]
    fn request_payload() {
        check_request(
            &Ollama,
            &conversation(),
            &config(ProviderKind::Ollama, ""),
            expect![[r#"
            POST http://localhost:11434/api/chat
            content-type: application/json

            {
              "messages": [
                {
                  "content": "You are terse.",
                  "role": "system"
                },
                {
                  "content": "What is in this picture?",
                  "images": [
                    "iVBORw0KGgo="
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
              "options": {
                "num_predict": 512,
                "temperature": 0.7
              },
              "stream": true
            }
        "#]],
        );
    }

    #[test]
    fn a_malformed_line_is_skipped_and_split_surrogates_are_joined() {
        check_stream(
            &Ollama,
            "ollama/malformed_midstream.ndjson",
            expect![[r#"
            Model("llama3.2")
            Delta("héllo")
            Note("Skipped a frame from Ollama Tandem could not read (not JSON at line 1 column 1); the answer went on.")
            Delta(" ")
            Delta("🎉")
            Finish("stop")
            Usage(Usage { input: 26, output: 4 })
            Done
            END
        "#]],
        );
    }

    #[test]
    fn tool_calls_come_whole_and_get_ids() {
        check_stream(
            &Ollama,
            "ollama/tool-call.ndjson",
            expect![[r#"
                Model("qwen3")
                ToolCall(ToolCall { id: "call_1", name: "get_weather", arguments: Object {"city": String("Zürich"), "unit": String("celsius")} })
                ToolCall(ToolCall { id: "call_2", name: "list_tabs", arguments: Object {} })
                Finish("stop")
                Usage(Usage { input: 187, output: 31 })
                Done
                END
            "#]],
        );
    }

    #[test]
    fn tool_round_trip_request() {
        check_request(
            &Ollama,
            &tool_round_trip(),
            &config(ProviderKind::Ollama, ""),
            expect![[r#"
                POST http://localhost:11434/api/chat
                content-type: application/json

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
                            "arguments": {
                              "city": "Zürich"
                            },
                            "name": "get_weather"
                          }
                        },
                        {
                          "function": {
                            "arguments": {},
                            "name": "list_tabs"
                          }
                        }
                      ]
                    },
                    {
                      "content": "12°C, cloudy",
                      "role": "tool",
                      "tool_name": "get_weather"
                    },
                    {
                      "content": "The tab list is not available.",
                      "role": "tool",
                      "tool_name": "list_tabs"
                    },
                    {
                      "content": "Keep it short.",
                      "role": "user"
                    }
                  ],
                  "model": "test-model",
                  "stream": true,
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
    /// The hand-written reader reads every recorded payload, and each odd version of a payload
    /// with every field, as the derived reader of `Line` did.
    #[test]
    fn the_hand_reader_reads_what_the_derived_reader_read() {
        super::super::testkit::reads_as_derived(
            "ollama",
            r#"{"model":"llama3","created_at":"2025","message":{"role":"assistant","content":"hé 🎉","tool_calls":[{"id":"c1","function":{"name":"look","arguments":{"a":1}}}]},"done":true,"done_reason":"stop","prompt_eval_count":9,"eval_count":4,"error":"x"}"#,
            line,
        );
    }
}
