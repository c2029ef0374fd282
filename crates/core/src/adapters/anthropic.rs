//! Anthropic Messages API, streaming: <https://docs.anthropic.com/en/api/messages> and
//! <https://docs.anthropic.com/en/docs/build-with-claude/streaming>.
//!
//! Stream: SSE events whose `data` carries its own `type`: `message_start` (model, input
//! usage), `content_block_start`, `content_block_delta` (`text_delta` text), `content_block_stop`,
//! `message_delta` (`stop_reason`, cumulative output usage), `message_stop` (the end marker),
//! `ping`, and `error` (e.g. `overloaded_error`) when the answer fails midway.
//!
//! Prompt caching (<https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching>):
//! Anthropic caches only up to blocks marked `cache_control`, unlike OpenAI and Gemini, which
//! cache a repeated prefix by themselves. A task session sends each step as the previous
//! request plus the new turn, so the system block and the last message are marked: the next
//! step reads everything before its new turn from the cache. Prompts under the model's
//! minimum (1,024 or 2,048 tokens) are simply not cached.

use crate::json;
#[cfg(test)]
use serde::Deserialize;
use serde_json::Value;

use super::{
    arguments_object, data_url, header, json_body, parameters, parse_arguments, read_payload,
    role_name, system_prompt, temperature, turns, Adapter, Decoder, Framing, PayloadError,
    Protocol,
};
use crate::errors;
use crate::http::HttpRequest;
use crate::json::fields::{self, Fields};
use crate::provider::{ProviderConfig, ProviderKind};
use crate::request::{RequestMessage, ToolCall, ToolOutcome, UniversalRequest};
use crate::sse::SseDecoder;
use crate::stream::{StreamDecoder, StreamEvent, Usage};
use crate::structured::OutputMode;

/// Anthropic requires `max_tokens`; used when the user set no limit.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

pub struct Anthropic;

impl Adapter for Anthropic {
    fn translate(&self, req: &UniversalRequest, cfg: &ProviderConfig) -> HttpRequest {
        let mut messages: Vec<Value> = turns(req).map(message).collect();
        if let Some(last) = messages.last_mut() {
            mark_for_cache(last);
        }
        let system = system_prompt(req)
            .map(|text| json!([{"type": "text", "text": text, "cache_control": ephemeral()}]));
        // No cache mark of their own: tools come first in Anthropic's cache prefix, so the
        // system block's mark already covers them.
        let mut tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": parameters(t)}))
            .collect();
        // An agent step's structured reply is a tool the model must call
        // (<https://docs.anthropic.com/en/docs/build-with-claude/tool-use#forcing-tool-use>):
        // the call's input is the reply, held to the schema by Anthropic's decoding.
        // With the task's tools offered (a navigator step), the model must call one tool,
        // the step's or a real one (`any`), and only one: a step is one action.
        let offered = !tools.is_empty();
        let tool_choice = match &req.output {
            Some(o) if o.mode == OutputMode::JsonSchema => {
                tools.push(json!({
                    "name": o.name,
                    "description": "Give your answer for this step as this tool's input.",
                    "input_schema": o.schema,
                }));
                match offered && o.calls {
                    true => json!({"type": "any", "disable_parallel_tool_use": true}),
                    false => json!({"type": "tool", "name": o.name}),
                }
            }
            _ => Value::Null,
        };
        let body = json!({
            "model": req.model,
            "system": system,
            "max_tokens": req.options.max_output_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            "temperature": temperature(req),
            "stream": true,
        });
        let headers = vec![
            header("x-api-key", cfg.api_key.as_str()),
            header("anthropic-version", "2023-06-01"),
            // Required for calls from a browser context (the extension's service worker).
            header("anthropic-dangerous-direct-browser-access", "true"),
        ];
        HttpRequest::post_json(
            format!("{}/messages", cfg.base_url),
            headers,
            json_body(
                body,
                [
                    ("messages", Value::Array(messages)),
                    ("tools", (!tools.is_empty()).then_some(tools).into()),
                    ("tool_choice", tool_choice),
                ],
            ),
        )
    }

    fn decoder(&self) -> Box<dyn StreamDecoder> {
        Decoder::boxed(
            ProviderKind::Anthropic,
            Framing::Sse(SseDecoder::new()),
            Events::default(),
        )
    }
}

/// One turn as a Messages API message: plain text stays a string; otherwise content
/// blocks. A user turn's `tool_result` blocks come first, as the API requires right after
/// the `tool_use` turn; an assistant turn's `tool_use` blocks follow its text.
fn message(m: &RequestMessage) -> Value {
    let role = role_name(m.role);
    if m.images.is_empty() && m.tool_calls.is_empty() && m.tool_results.is_empty() {
        return json!({"role": role, "content": m.content});
    }
    let results = m.tool_results.iter().map(tool_result);
    // Images first: Anthropic documents that Claude does best with images before text.
    let images = m.images.iter().map(|url| image_block(url));
    // Empty text blocks are rejected.
    let text = (!m.content.is_empty()).then(|| json!({"type": "text", "text": m.content}));
    let calls = m.tool_calls.iter().map(
        |c| json!({"type": "tool_use", "id": c.id, "name": c.name, "input": arguments_object(c)}),
    );
    let content: Vec<Value> = results.chain(images).chain(text).chain(calls).collect();
    json!({"role": role, "content": content})
}

/// An image block: a data: URL as base64, anything else by URL.
fn image_block(url: &str) -> Value {
    match data_url(url) {
        Some(img) => {
            json!({"type": "image", "source": {"type": "base64", "media_type": img.mime, "data": img.data}})
        }
        None => json!({"type": "image", "source": {"type": "url", "url": url}}),
    }
}

/// A `tool_result` block. Its content is the text alone, or, when the tool returned images,
/// a list of the text block and image blocks: Anthropic reads images inside a tool result.
fn tool_result(r: &ToolOutcome) -> Value {
    let content = if r.images.is_empty() {
        json!(r.content)
    } else {
        let text = json!({"type": "text", "text": r.content});
        let images = r.images.iter().map(|url| image_block(url));
        Value::Array(std::iter::once(text).chain(images).collect())
    };
    json!({"type": "tool_result", "tool_use_id": r.call_id, "content": content, "is_error": r.is_error})
}

/// A cache breakpoint: the type with Anthropic's default lifetime (five minutes, refreshed
/// on every hit).
fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

/// Marks the last content block of `message` as a cache breakpoint (a text-only message
/// becomes a one-block list for it).
fn mark_for_cache(message: &mut Value) {
    let Some(content) = message.get_mut("content") else {
        return;
    };
    match content.as_str() {
        // Anthropic refuses empty text blocks; such a message is left as it is.
        Some("") => return,
        Some(text) => *content = json!([{"type": "text", "text": text}]),
        None => {}
    }
    if let Some(block) = content.as_array_mut().and_then(|b| b.last_mut()) {
        block["cache_control"] = ephemeral();
    }
}

#[derive(Default)]
struct Events {
    /// From `message_start`; `message_delta` only reports output tokens.
    input: u32,
    /// The `tool_use` blocks open, by block index, until their `content_block_stop`.
    calls: Vec<(u64, PartialCall)>,
}

/// A `tool_use` block whose input arrives as `input_json_delta` pieces.
struct PartialCall {
    id: String,
    name: String,
    /// The block start's `input`: what the call takes if no piece follows.
    start: Value,
    json: String,
}

/// One event, read in one pass: the fields of every event type side by side, `type` saying
/// which apply. (An internally tagged enum would first buffer each event in serde's
/// `Content`, and carry that machinery's code for this one type.)
#[cfg_attr(test, derive(Debug, Deserialize, PartialEq))]
struct Event {
    #[cfg_attr(test, serde(rename = "type"))]
    kind: String,
    index: Option<u64>,
    message: Option<Started>,
    content_block: Option<Block>,
    delta: Option<Delta>,
    usage: Option<TokenUsage>,
}

#[cfg_attr(test, derive(Debug, Deserialize, PartialEq))]
struct Started {
    model: Option<String>,
    usage: Option<TokenUsage>,
}

#[cfg_attr(test, derive(Debug, Deserialize, PartialEq))]
struct Block {
    #[cfg_attr(test, serde(rename = "type"))]
    kind: String,
    id: Option<String>,
    name: Option<String>,
    input: Option<Value>,
}

/// A `content_block_delta`'s delta (`type` and its text or JSON piece) or a
/// `message_delta`'s (`stop_reason`).
#[cfg_attr(test, derive(Debug, Deserialize, PartialEq))]
struct Delta {
    #[cfg_attr(test, serde(rename = "type"))]
    kind: Option<String>,
    text: Option<String>,
    partial_json: Option<String>,
    stop_reason: Option<String>,
}

/// The frame is skipped: `event` lacks a field its type needs.
fn lacks(event: &str, field: &str) -> PayloadError {
    PayloadError::Unreadable(format!("unexpected data: {event} without {field}"))
}

#[cfg_attr(test, derive(Debug, Deserialize, PartialEq))]
struct TokenUsage {
    input_tokens: Option<u32>,
    output_tokens: Option<u32>,
    cache_creation_input_tokens: Option<u32>,
    cache_read_input_tokens: Option<u32>,
}

impl TokenUsage {
    /// Cached prompt tokens still fill the context window, so they count as input.
    fn input(&self) -> Option<u32> {
        let parts = [
            self.input_tokens,
            self.cache_creation_input_tokens,
            self.cache_read_input_tokens,
        ];
        parts
            .iter()
            .any(Option::is_some)
            .then(|| parts.iter().flatten().sum())
    }
}

/// An event read by hand from its `Value` (`json::fields`): the fields the derived reader
/// read, null as absent, a wrong type refused (issue #46: the derived one was 5.9 KB of the
/// worker).
fn event(value: Value) -> fields::Result<Event> {
    let mut f = Fields::of(value, "struct Event")?;
    let read = Event {
        kind: f.str("type"),
        index: f.opt("index", fields::u64),
        message: f.opt("message", started),
        content_block: f.opt("content_block", block),
        delta: f.opt("delta", delta),
        usage: f.opt("usage", token_usage),
    };
    f.done(read)
}

fn started(value: Value) -> fields::Result<Started> {
    let mut f = Fields::of(value, "struct Started")?;
    let read = Started {
        model: f.opt_str("model"),
        usage: f.opt("usage", token_usage),
    };
    f.done(read)
}

fn block(value: Value) -> fields::Result<Block> {
    let mut f = Fields::of(value, "struct Block")?;
    let read = Block {
        kind: f.str("type"),
        id: f.opt_str("id"),
        name: f.opt_str("name"),
        input: f.opt("input", Ok),
    };
    f.done(read)
}

fn delta(value: Value) -> fields::Result<Delta> {
    let mut f = Fields::of(value, "struct Delta")?;
    let read = Delta {
        kind: f.opt_str("type"),
        text: f.opt_str("text"),
        partial_json: f.opt_str("partial_json"),
        stop_reason: f.opt_str("stop_reason"),
    };
    f.done(read)
}

fn token_usage(value: Value) -> fields::Result<TokenUsage> {
    let mut f = Fields::of(value, "struct TokenUsage")?;
    let read = TokenUsage {
        input_tokens: f.opt("input_tokens", fields::u32),
        output_tokens: f.opt("output_tokens", fields::u32),
        cache_creation_input_tokens: f.opt("cache_creation_input_tokens", fields::u32),
        cache_read_input_tokens: f.opt("cache_read_input_tokens", fields::u32),
    };
    f.done(read)
}

impl Protocol for Events {
    fn payload(
        &mut self,
        provider: ProviderKind,
        payload: &str,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), PayloadError> {
        let event = read_payload(payload, event)?;
        let kind = event.kind.as_str();
        match kind {
            "message_start" => {
                let message = event.message.ok_or_else(|| lacks(kind, "message"))?;
                self.input = message.usage.and_then(|u| u.input()).unwrap_or(0);
                out.extend(message.model.map(StreamEvent::Model));
            }
            "content_block_start" => {
                let index = event.index.ok_or_else(|| lacks(kind, "index"))?;
                let b = event
                    .content_block
                    .ok_or_else(|| lacks(kind, "content_block"))?;
                if b.kind == "tool_use" {
                    let call = PartialCall {
                        id: b.id.unwrap_or_default(),
                        name: b.name.unwrap_or_default(),
                        start: b.input.unwrap_or_else(|| json!({})),
                        json: String::new(),
                    };
                    self.calls.retain(|(i, _)| *i != index);
                    self.calls.push((index, call));
                }
            }
            "content_block_delta" => {
                let index = event.index.unwrap_or(0);
                let delta = event.delta.ok_or_else(|| lacks(kind, "delta"))?;
                match delta.kind.as_deref() {
                    Some("text_delta") => out.extend(delta.text.map(StreamEvent::Delta)),
                    Some("input_json_delta") => {
                        let piece = delta.partial_json.unwrap_or_default();
                        if let Some((_, call)) = self.calls.iter_mut().find(|(i, _)| *i == index) {
                            call.json.push_str(&piece);
                        }
                    }
                    Some(_) => {}
                    None => return Err(lacks(kind, "delta.type")),
                }
            }
            "content_block_stop" => {
                let index = event.index.ok_or_else(|| lacks(kind, "index"))?;
                if let Some(at) = self.calls.iter().position(|(i, _)| *i == index) {
                    let (_, call) = self.calls.remove(at);
                    let arguments = if call.json.trim().is_empty() {
                        call.start
                    } else {
                        parse_arguments(&call.json)
                    };
                    out.push(StreamEvent::ToolCall(ToolCall {
                        id: call.id,
                        name: call.name,
                        arguments,
                    }));
                }
            }
            "message_delta" => {
                let delta = event.delta.ok_or_else(|| lacks(kind, "delta"))?;
                out.extend(delta.stop_reason.map(StreamEvent::Finish));
                if let Some(u) = event.usage {
                    self.input = u.input().unwrap_or(self.input);
                    out.push(StreamEvent::Usage(Usage {
                        input: self.input,
                        output: u.output_tokens.unwrap_or(0),
                    }));
                }
            }
            "message_stop" => out.push(StreamEvent::Done),
            "error" => return Err(errors::stream_error(provider, payload).into()),
            // `ping` and event types added later.
            _ => {}
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
    use crate::chat::Role;
    use crate::request::RequestMessage;

    #[test]
    fn normal_answer_with_usage() {
        let normal = check_stream(
            &Anthropic,
            "anthropic/normal.sse",
            expect![[r#"
            Model("claude-3-5-haiku-20241022")
            Delta("héllo")
            Delta(" 世界 🎉")
            Finish("end_turn")
            Usage(Usage { input: 25, output: 9 })
            Done
            END
        "#]],
        );
        check_stream_like(&Anthropic, "anthropic/normal_crlf.sse", &normal);
    }

    #[test]
    fn overloaded_error_event_mid_stream() {
        check_stream(
            &Anthropic,
            "anthropic/overloaded.sse",
            expect![[r#"
                Model("claude-sonnet-4-20250514")
                Delta("héllo")
                ERR Overloaded: Anthropic is overloaded or temporarily unavailable. Try again in a moment. Anthropic said: "Overloaded"
            "#]],
        );
    }

    #[test]
    fn cut_before_message_stop() {
        check_stream(
            &Anthropic,
            "anthropic/cut.sse",
            expect![[r#"
                Model("claude-3-5-haiku-20241022")
                Delta("héllo")
                ERR StreamCut: The connection to Anthropic was cut before the answer finished. The partial answer is kept; send again to retry.
            "#]],
        );
    }

    #[test]
    fn request_payload() {
        check_request(
            &Anthropic,
            &conversation(),
            &config(ProviderKind::Anthropic, "sk-ant-test"),
            expect![[r#"
                POST https://api.anthropic.com/v1/messages
                content-type: application/json
                x-api-key: sk-ant-test
                anthropic-version: 2023-06-01
                anthropic-dangerous-direct-browser-access: true

                {
                  "max_tokens": 512,
                  "messages": [
                    {
                      "content": [
                        {
                          "source": {
                            "data": "iVBORw0KGgo=",
                            "media_type": "image/png",
                            "type": "base64"
                          },
                          "type": "image"
                        },
                        {
                          "text": "What is in this picture?",
                          "type": "text"
                        }
                      ],
                      "role": "user"
                    },
                    {
                      "content": "A cat.",
                      "role": "assistant"
                    },
                    {
                      "content": [
                        {
                          "cache_control": {
                            "type": "ephemeral"
                          },
                          "text": "héllo 世界 🎉",
                          "type": "text"
                        }
                      ],
                      "role": "user"
                    }
                  ],
                  "model": "test-model",
                  "stream": true,
                  "system": [
                    {
                      "cache_control": {
                        "type": "ephemeral"
                      },
                      "text": "You are terse.",
                      "type": "text"
                    }
                  ],
                  "temperature": 0.7
                }
            "#]],
        );
    }

    #[test]
    fn each_step_marks_its_end_so_the_next_step_reads_the_rest_from_the_cache() {
        let cfg = config(ProviderKind::Anthropic, "sk-ant-test");
        let body = |req: &UniversalRequest| -> Value {
            crate::json::from_str(&Anthropic.translate(req, &cfg).body).unwrap()
        };
        let marked = |v: &Value| v.to_string().matches("cache_control").count();
        let first = conversation();
        let mut next = first.clone();
        for (role, text) in [(Role::Assistant, "Hi."), (Role::User, "And now?")] {
            next.messages.push(RequestMessage::text(role, text));
        }
        let (a, b) = (body(&first), body(&next));
        // Two breakpoints (Anthropic allows four): the system block and the newest message.
        assert_eq!(marked(&a), 2);
        assert_eq!(marked(&b), 2);
        assert_eq!(a["system"], b["system"]);
        let last = &b["messages"][4]["content"][0];
        assert_eq!(last["text"], "And now?");
        assert_eq!(last["cache_control"]["type"], "ephemeral");
        // The step before is the same content, now as a plain prefix of this one.
        assert_eq!(
            a["messages"][2]["content"][0]["text"],
            b["messages"][2]["content"]
        );
        assert_eq!(a["messages"][0], b["messages"][0]);
        assert_eq!(a["messages"][1], b["messages"][1]);
        // An empty last message is not turned into an (invalid) empty text block.
        let mut empty = json!({"role": "user", "content": ""});
        mark_for_cache(&mut empty);
        assert_eq!(empty["content"], "");
    }

    #[test]
    fn max_tokens_is_always_sent() {
        let mut req = conversation();
        req.options = Default::default();
        let body = Anthropic
            .translate(&req, &config(ProviderKind::Anthropic, "k"))
            .body;
        assert!(
            body.contains("\"max_tokens\":4096") && !body.contains("temperature"),
            "{body}"
        );
    }

    #[test]
    fn a_malformed_event_is_skipped_and_the_rest_of_the_answer_kept() {
        check_stream(
            &Anthropic,
            "anthropic/malformed_midstream.sse",
            expect![[r#"
                Model("claude-3-5-haiku-20241022")
                Delta("héllo")
                Note("Skipped a frame from Anthropic Tandem could not read (unexpected data); the answer went on.")
                Delta(" 世界")
                Finish("end_turn")
                Usage(Usage { input: 25, output: 9 })
                Done
                END
            "#]],
        );
    }

    /// An event without a field its type needs is skipped with a sentence saying which; a
    /// type added later, with fields of its own, is ignored.
    #[test]
    fn events_lacking_what_their_type_needs_are_unreadable() {
        let mut events = Events::default();
        let mut out = Vec::new();
        let mut read =
            |payload: &str| match events.payload(ProviderKind::Anthropic, payload, &mut out) {
                Ok(()) => "ok".to_string(),
                Err(PayloadError::Unreadable(why)) => why,
                Err(PayloadError::Ends(e)) => format!("ends: {}", e.message),
            };
        let seen: Vec<String> = [
            r#"{"type":"content_block_start","content_block":{"type":"text"}}"#,
            r#"{"type":"content_block_start","index":0}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"text":"x"}}"#,
            r#"{"type":"content_block_stop"}"#,
            r#"{"type":"message_delta","usage":{"output_tokens":1}}"#,
            r#"{"type":"message_start"}"#,
            r#"{"type":"ping"}"#,
            r#"{"type":"future_event","detail":{"a":1}}"#,
            r#"{"index":0}"#,
        ]
        .iter()
        .map(|p| read(p))
        .collect();
        expect![[r#"
            [
                "unexpected data: content_block_start without index",
                "unexpected data: content_block_start without content_block",
                "unexpected data: content_block_delta without delta.type",
                "unexpected data: content_block_stop without index",
                "unexpected data: message_delta without delta",
                "unexpected data: message_start without message",
                "ok",
                "ok",
                "unexpected data",
            ]
        "#]]
        .assert_debug_eq(&seen);
        assert!(out.is_empty(), "{out:?}");
    }

    #[test]
    fn tool_use_blocks_become_calls_when_they_stop() {
        check_stream(
            &Anthropic,
            "anthropic/tool-call.sse",
            expect![[r#"
                Model("claude-sonnet-4-20250514")
                Delta("I'll check the weather")
                Delta(" in Zürich.")
                ToolCall(ToolCall { id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", name: "get_weather", arguments: Object {"city": String("Zürich"), "unit": String("celsius")} })
                ToolCall(ToolCall { id: "toolu_01HbZ6rKq2Vn8sYc4dTf7WgJ", name: "list_tabs", arguments: Object {} })
                Finish("tool_use")
                Usage(Usage { input: 412, output: 89 })
                Done
                END
            "#]],
        );
    }

    #[test]
    fn tool_round_trip_request() {
        check_request(
            &Anthropic,
            &tool_round_trip(),
            &config(ProviderKind::Anthropic, "sk-ant-test"),
            expect![[r#"
                POST https://api.anthropic.com/v1/messages
                content-type: application/json
                x-api-key: sk-ant-test
                anthropic-version: 2023-06-01
                anthropic-dangerous-direct-browser-access: true

                {
                  "max_tokens": 4096,
                  "messages": [
                    {
                      "content": "Weather in Zürich? And my tabs?",
                      "role": "user"
                    },
                    {
                      "content": [
                        {
                          "text": "Checking.",
                          "type": "text"
                        },
                        {
                          "id": "call_1",
                          "input": {
                            "city": "Zürich"
                          },
                          "name": "get_weather",
                          "type": "tool_use"
                        },
                        {
                          "id": "call_2",
                          "input": {},
                          "name": "list_tabs",
                          "type": "tool_use"
                        }
                      ],
                      "role": "assistant"
                    },
                    {
                      "content": [
                        {
                          "content": "12°C, cloudy",
                          "is_error": false,
                          "tool_use_id": "call_1",
                          "type": "tool_result"
                        },
                        {
                          "content": "The tab list is not available.",
                          "is_error": true,
                          "tool_use_id": "call_2",
                          "type": "tool_result"
                        },
                        {
                          "cache_control": {
                            "type": "ephemeral"
                          },
                          "text": "Keep it short.",
                          "type": "text"
                        }
                      ],
                      "role": "user"
                    }
                  ],
                  "model": "test-model",
                  "stream": true,
                  "system": [
                    {
                      "cache_control": {
                        "type": "ephemeral"
                      },
                      "text": "You are terse.",
                      "type": "text"
                    }
                  ],
                  "tools": [
                    {
                      "description": "The current weather in a city.",
                      "input_schema": "<get_weather's parameters as declared>",
                      "name": "get_weather"
                    },
                    {
                      "description": "The open tabs.",
                      "input_schema": "<list_tabs's parameters as declared>",
                      "name": "list_tabs"
                    }
                  ]
                }
            "#]],
        );
    }

    #[test]
    fn a_turn_of_results_only_is_all_tool_result_blocks_and_marked_for_cache() {
        let mut req = tool_round_trip();
        req.messages[2].content.clear();
        req.tools.clear();
        let body = Anthropic
            .translate(&req, &config(ProviderKind::Anthropic, "k"))
            .body;
        let v: Value = crate::json::from_str(&body).unwrap();
        let last = v["messages"][2]["content"].as_array().unwrap();
        let kinds: Vec<&str> = last.iter().map(|b| b["type"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["tool_result", "tool_result"]);
        assert_eq!(last[1]["cache_control"]["type"], "ephemeral");
        assert_eq!(last[1]["is_error"], true);
        assert!(!body.contains("\"tools\""), "{body}");
    }
    /// The hand-written reader reads every recorded payload, and each odd version of a payload
    /// with every field, as the derived reader of `Event` did.
    #[test]
    fn the_hand_reader_reads_what_the_derived_reader_read() {
        super::super::testkit::reads_as_derived(
            "anthropic",
            r#"{"type":"content_block_start","index":1,"message":{"id":"m","model":"claude-x","usage":{"input_tokens":5,"output_tokens":1,"cache_creation_input_tokens":2,"cache_read_input_tokens":3}},"content_block":{"type":"tool_use","id":"tu_1","name":"look","input":{"a":"é🎉"}},"delta":{"type":"text_delta","text":"hé 🎉","partial_json":"{\"a\"","stop_reason":"end_turn"},"usage":{"output_tokens":9}}"#,
            event,
        );
    }
}
