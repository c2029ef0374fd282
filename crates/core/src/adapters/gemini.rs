//! Gemini API (Google AI), streaming: <https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent>.
//!
//! `POST {base}/models/{model}:streamGenerateContent?alt=sse`, key in `x-goog-api-key`. Stream:
//! SSE `data:` lines, each a whole `GenerateContentResponse` (`candidates[0].content.parts[].text`,
//! `finishReason` on the last one, cumulative `usageMetadata`, `modelVersion`), or
//! `promptFeedback.blockReason` when the prompt is refused, or `{"error":{...}}` when the answer
//! fails midway. There is no end marker: a body that ends after a `finishReason` is complete.
//!
//! The body builder and decoder are shared with Firebase AI Logic ([`super::firebase`]).

use crate::json;
use serde::de::IgnoredAny;
#[cfg(test)]
use serde::Deserialize;
use serde_json::Value;

use super::{
    arguments_object, data_url, header, json_body, parameters, read_payload, system_prompt,
    temperature, turns, Adapter, CallIds, Decoder, Framing, PayloadError, Protocol,
};
use crate::chat::Role;
use crate::errors::{self, ErrorKind, ProviderError};
use crate::http::HttpRequest;
use crate::json::fields::{self, list, Fields};
use crate::provider::{ProviderConfig, ProviderKind};
use crate::request::{RequestMessage, ToolCall, ToolSpec, UniversalRequest};
use crate::sse::SseDecoder;
use crate::stream::{StreamDecoder, StreamEvent, Usage};
use crate::structured::OutputMode;

pub struct Gemini;

impl Adapter for Gemini {
    fn translate(&self, req: &UniversalRequest, cfg: &ProviderConfig) -> HttpRequest {
        let url = format!(
            "{}/models/{}:streamGenerateContent?alt=sse",
            cfg.base_url,
            model_id(req)
        );
        HttpRequest::post_json(
            url,
            vec![header("x-goog-api-key", cfg.api_key.as_str())],
            body(req),
        )
    }

    fn decoder(&self) -> Box<dyn StreamDecoder> {
        decoder(ProviderKind::Gemini)
    }
}

/// The model id without the `models/` prefix the API lists models with, so either form works.
pub(crate) fn model_id(req: &UniversalRequest) -> &str {
    req.model.strip_prefix("models/").unwrap_or(&req.model)
}

/// The `GenerateContentRequest` body.
pub(crate) fn body(req: &UniversalRequest) -> String {
    let contents: Vec<Value> = turns(req).map(content).collect();
    let mut declarations: Vec<Value> = req.tools.iter().map(declaration).collect();
    let step = step_function(req);
    let tool_config = step.as_ref().map(|(o, decl)| {
        declarations.push(decl.clone());
        // The model must call a function: the step's, or (a navigator step) a real tool.
        let mut config = json!({"mode": "ANY"});
        if !o.calls {
            config["allowedFunctionNames"] = json!([o.name]);
        }
        json!({"functionCallingConfig": config})
    });
    let tools = (!declarations.is_empty()).then(|| json!([{"functionDeclarations": declarations}]));
    json_body(
        json!({
            "systemInstruction": system_prompt(req).map(|s| json!({"parts": [{"text": s}]})),
        }),
        [
            ("contents", Value::Array(contents)),
            ("tools", tools.into()),
            ("toolConfig", tool_config.into()),
            ("generationConfig", generation_config(req, step.is_none())),
        ],
    )
}

/// An agent step of a task with tools, as a function the model must call (see
/// [`crate::structured`]: Gemini 2.x refuses function declarations beside
/// `responseMimeType: "application/json"`). `parametersJsonSchema` takes JSON Schema as
/// written, like `responseJsonSchema`.
fn step_function(req: &UniversalRequest) -> Option<(&crate::structured::OutputSchema, Value)> {
    let o = req
        .output
        .as_ref()
        .filter(|o| o.mode == OutputMode::JsonSchema && !req.tools.is_empty())?;
    let decl = json!({
        "name": o.name,
        "description": "Give your answer for this step as this function's arguments.",
        "parametersJsonSchema": o.schema,
    });
    Some((o, decl))
}

/// The options that are set, and an agent step's structured reply
/// (<https://ai.google.dev/gemini-api/docs/structured-output>): JSON, held to the step's
/// schema (`responseJsonSchema` takes JSON Schema as written) unless `schema` is false (a step
/// with tools is a function call instead, see [`step_function`]). Kept as built, not pruned:
/// an empty object inside a schema means something.
fn generation_config(req: &UniversalRequest, schema: bool) -> Value {
    let mut config = serde_json::Map::new();
    if let Some(t) = temperature(req) {
        config.insert("temperature".into(), json!(t));
    }
    if let Some(n) = req.options.max_output_tokens {
        config.insert("maxOutputTokens".into(), json!(n));
    }
    if let Some(o) = req
        .output
        .as_ref()
        .filter(|o| schema && o.mode == OutputMode::JsonSchema)
    {
        config.insert("responseMimeType".into(), json!("application/json"));
        config.insert("responseJsonSchema".into(), o.schema.clone());
    }
    match config.is_empty() {
        true => Value::Null,
        false => Value::Object(config),
    }
}

/// Gemini 3 refuses a model turn whose function call lacks the thought signature it was
/// sent with, and a [`crate::request::ToolCall`] does not keep one; this value, which
/// Google documents for histories without signatures, tells it to skip the check. Only
/// the first call of a turn carries a signature.
const NO_SIGNATURE: &str = "skip_thought_signature_validator";

/// One turn as a `Content`: a user turn's `functionResponse` parts first (they answer the
/// previous model turn), then text and images; a model turn's `functionCall` parts last.
fn content(m: &RequestMessage) -> Value {
    let role = if m.role == Role::Assistant {
        "model"
    } else {
        "user"
    };
    let results = m.tool_results.iter().map(|r| {
        // Gemini reads `error` as a failure and the whole object otherwise (`output` is
        // only its suggested key), so a result goes under `content` and an error under
        // `error`, where the model can tell them apart.
        let key = if r.is_error { "error" } else { "content" };
        json!({"functionResponse": {"name": r.name, "response": {key: r.content}}})
    });
    // A tool's images follow the function responses as `inline_data` parts of the same
    // turn, which every Gemini model reads (Gemini 3 also takes them inside the
    // `functionResponse`, older models do not).
    let result_images = m.tool_results.iter().flat_map(|r| r.images.iter());
    // Gemini only takes uploaded files by URI, so only data: URLs can be sent inline.
    let inline = |url: &String| {
        data_url(url).map(|img| json!({"inline_data": {"mime_type": img.mime, "data": img.data}}))
    };
    let results = results.chain(result_images.filter_map(inline));
    let images = m.images.iter().filter_map(inline);
    let alone = m.images.is_empty() && m.tool_calls.is_empty() && m.tool_results.is_empty();
    let text = (!m.content.is_empty() || alone).then(|| json!({"text": m.content}));
    let calls = m.tool_calls.iter().enumerate().map(|(i, c)| {
        let mut part = json!({"functionCall": {"name": c.name, "args": arguments_object(c)}});
        if i == 0 {
            part["thoughtSignature"] = json!(NO_SIGNATURE);
        }
        part
    });
    let parts: Vec<Value> = results.chain(text).chain(images).chain(calls).collect();
    json!({"role": role, "parts": parts})
}

/// A `FunctionDeclaration`. A tool without parameters sends none: Gemini refuses an
/// object schema with no properties.
fn declaration(tool: &ToolSpec) -> Value {
    let params = schema(&parameters(tool));
    let empty = params
        .get("properties")
        .and_then(Value::as_object)
        .is_none_or(|p| p.is_empty());
    let mut decl = json!({"name": tool.name, "description": tool.description});
    if !empty {
        decl["parameters"] = params;
    }
    decl
}

/// A JSON Schema cut down to the OpenAPI subset Gemini's `Schema` accepts
/// (<https://ai.google.dev/api/caching#Schema>): it refuses the whole request over one
/// unknown key (`$schema`, `additionalProperties`, `$ref`...), so only known keys are kept.
/// `type: [T, "null"]` becomes `type: T, nullable: true`, `const` a one-value enum and
/// `oneOf` `anyOf`. Formats other than `enum` and `date-time` are dropped (Firebase's proxy
/// refuses them), and so are enums that are not all strings.
fn schema(s: &Value) -> Value {
    let Value::Object(map) = s else {
        return json!({});
    };
    let mut out = serde_json::Map::new();
    for (key, value) in map {
        match key.as_str() {
            "type" => match value {
                Value::Array(types) => {
                    let named: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
                    if let Some(t) = named.first() {
                        out.insert("type".into(), (*t).clone());
                    }
                    if named.len() < types.len() {
                        out.insert("nullable".into(), json!(true));
                    }
                }
                t => {
                    out.insert("type".into(), t.clone());
                }
            },
            "properties" => {
                let mut props = serde_json::Map::new();
                for (name, p) in value.as_object().into_iter().flatten() {
                    props.insert(name.clone(), schema(p));
                }
                out.insert(key.clone(), Value::Object(props));
            }
            "items" => {
                out.insert(key.clone(), schema(value));
            }
            "anyOf" | "oneOf" => {
                let options: Vec<Value> =
                    value.as_array().into_iter().flatten().map(schema).collect();
                out.insert("anyOf".into(), Value::Array(options));
            }
            "enum"
                if value
                    .as_array()
                    .is_some_and(|v| v.iter().all(Value::is_string)) =>
            {
                out.insert(key.clone(), value.clone());
            }
            "const" if value.is_string() => {
                out.insert("enum".into(), json!([value]));
            }
            "format" if value == "enum" || value == "date-time" => {
                out.insert(key.clone(), value.clone());
            }
            "title" | "description" | "nullable" | "required" | "minItems" | "maxItems"
            | "minProperties" | "maxProperties" | "minLength" | "maxLength" | "pattern"
            | "minimum" | "maximum" | "example" | "default" | "propertyOrdering" => {
                out.insert(key.clone(), value.clone());
            }
            _ => {}
        }
    }
    Value::Object(out)
}

pub(crate) fn decoder(provider: ProviderKind) -> Box<dyn StreamDecoder> {
    Decoder::boxed(
        provider,
        Framing::Sse(SseDecoder::new()),
        Responses::default(),
    )
}

#[derive(Default)]
struct Responses {
    ids: CallIds,
}

#[cfg_attr(test, derive(Debug, Deserialize, PartialEq))]
#[cfg_attr(test, serde(rename_all = "camelCase"))]
struct Response {
    candidates: Option<Vec<Candidate>>,
    usage_metadata: Option<UsageMetadata>,
    model_version: Option<String>,
    prompt_feedback: Option<PromptFeedback>,
    error: Option<IgnoredAny>,
}

#[cfg_attr(test, derive(Debug, Deserialize, PartialEq))]
#[cfg_attr(test, serde(rename_all = "camelCase"))]
struct Candidate {
    content: Option<Content>,
    finish_reason: Option<String>,
}

#[cfg_attr(test, derive(Debug, Deserialize, PartialEq))]
struct Content {
    parts: Option<Vec<Part>>,
}

#[cfg_attr(test, derive(Debug, Deserialize, PartialEq))]
#[cfg_attr(test, serde(rename_all = "camelCase"))]
struct Part {
    text: Option<String>,
    /// Thinking models' thought summaries are not part of the answer.
    thought: Option<bool>,
    /// Sent whole, never in pieces.
    function_call: Option<FunctionCall>,
}

#[cfg_attr(test, derive(Debug, Deserialize, PartialEq))]
struct FunctionCall {
    /// Newer models number their calls; older ones do not, and get one made up.
    id: Option<String>,
    name: Option<String>,
    args: Option<Value>,
}

#[cfg_attr(test, derive(Debug, Deserialize, PartialEq))]
#[cfg_attr(test, serde(rename_all = "camelCase"))]
struct UsageMetadata {
    prompt_token_count: Option<u32>,
    candidates_token_count: Option<u32>,
}

#[cfg_attr(test, derive(Debug, Deserialize, PartialEq))]
#[cfg_attr(test, serde(rename_all = "camelCase"))]
struct PromptFeedback {
    block_reason: Option<String>,
}

/// A response read by hand from its `Value` (`json::fields`): the fields the derived reader
/// read, null as absent, a wrong type refused (issue #46: the derived one was 8.7 KB of the
/// worker).
fn response(value: Value) -> fields::Result<Response> {
    let mut f = Fields::of(value, "struct Response")?;
    let read = Response {
        candidates: f.opt("candidates", |v| list(v, candidate)),
        usage_metadata: f.opt("usageMetadata", usage_metadata),
        model_version: f.opt_str("modelVersion"),
        prompt_feedback: f.opt("promptFeedback", prompt_feedback),
        error: f.opt("error", |_| Ok(IgnoredAny)),
    };
    f.done(read)
}

fn candidate(value: Value) -> fields::Result<Candidate> {
    let mut f = Fields::of(value, "struct Candidate")?;
    let read = Candidate {
        content: f.opt("content", content_read),
        finish_reason: f.opt_str("finishReason"),
    };
    f.done(read)
}

fn content_read(value: Value) -> fields::Result<Content> {
    let mut f = Fields::of(value, "struct Content")?;
    let read = Content {
        parts: f.opt("parts", |v| list(v, part)),
    };
    f.done(read)
}

fn part(value: Value) -> fields::Result<Part> {
    let mut f = Fields::of(value, "struct Part")?;
    let read = Part {
        text: f.opt_str("text"),
        thought: f.opt("thought", fields::boolean),
        function_call: f.opt("functionCall", function_call),
    };
    f.done(read)
}

fn function_call(value: Value) -> fields::Result<FunctionCall> {
    let mut f = Fields::of(value, "struct FunctionCall")?;
    let read = FunctionCall {
        id: f.opt_str("id"),
        name: f.opt_str("name"),
        args: f.opt("args", Ok),
    };
    f.done(read)
}

fn usage_metadata(value: Value) -> fields::Result<UsageMetadata> {
    let mut f = Fields::of(value, "struct UsageMetadata")?;
    let read = UsageMetadata {
        prompt_token_count: f.opt("promptTokenCount", fields::u32),
        candidates_token_count: f.opt("candidatesTokenCount", fields::u32),
    };
    f.done(read)
}

fn prompt_feedback(value: Value) -> fields::Result<PromptFeedback> {
    let mut f = Fields::of(value, "struct PromptFeedback")?;
    let read = PromptFeedback {
        block_reason: f.opt_str("blockReason"),
    };
    f.done(read)
}

impl Protocol for Responses {
    fn payload(
        &mut self,
        provider: ProviderKind,
        payload: &str,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), PayloadError> {
        let r = read_payload(payload, response)?;
        if r.error.is_some() {
            return Err(errors::stream_error(provider, payload).into());
        }
        if let Some(reason) = r.prompt_feedback.and_then(|f| f.block_reason) {
            let label = provider.label();
            return Err(ProviderError::new(
                ErrorKind::Provider,
                format!("{label} refused to answer this prompt (blocked: {reason}). Rephrase the message and send again."),
            )
            .into());
        }
        out.extend(r.model_version.map(StreamEvent::Model));
        if let Some(c) = r.candidates.and_then(|c| c.into_iter().next()) {
            let parts = c.content.and_then(|c| c.parts).unwrap_or_default();
            for part in parts.into_iter().filter(|p| p.thought != Some(true)) {
                out.extend(part.text.map(StreamEvent::Delta));
                if let Some(call) = part.function_call {
                    out.push(StreamEvent::ToolCall(ToolCall {
                        id: self.ids.id(call.id),
                        name: call.name.unwrap_or_default(),
                        arguments: call.args.unwrap_or_else(|| json!({})),
                    }));
                }
            }
            out.extend(c.finish_reason.map(StreamEvent::Finish));
        }
        if let Some(u) = r.usage_metadata {
            out.push(Usage::reported(
                u.prompt_token_count,
                u.candidates_token_count,
            ));
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
            &Gemini,
            "gemini/normal.sse",
            expect![[r#"
                Model("gemini-2.0-flash")
                Delta("héllo")
                Usage(Usage { input: 21, output: 0 })
                Delta(" 世界")
                Delta(" 🎉")
                Finish("STOP")
                Usage(Usage { input: 21, output: 7 })
                Done
                END
            "#]],
        );
        check_stream_like(&Gemini, "gemini/normal_lf.sse", &normal);
    }

    #[test]
    fn blocked_prompt() {
        check_stream(
            &Gemini,
            "gemini/blocked.sse",
            expect![[r#"
            ERR Provider: Gemini refused to answer this prompt (blocked: PROHIBITED_CONTENT). Rephrase the message and send again.
        "#]],
        );
    }

    #[test]
    fn error_payload_mid_stream() {
        check_stream(
            &Gemini,
            "gemini/error_midstream.sse",
            expect![[r#"
            Model("gemini-2.0-flash")
            Delta("héllo")
            Usage(Usage { input: 21, output: 0 })
            ERR Overloaded: Gemini is overloaded or temporarily unavailable (503). Try again in a moment. Gemini said: "The model is overloaded. Please try again later."
        "#]],
        );
    }

    #[test]
    fn cut_before_finish_reason() {
        check_stream(
            &Gemini,
            "gemini/cut.sse",
            expect![[r#"
            Model("gemini-2.0-flash")
            Delta("héllo")
            Usage(Usage { input: 21, output: 0 })
            Delta(" 世界")
            ERR StreamCut: The connection to Gemini was cut before the answer finished. The partial answer is kept; send again to retry.
        "#]],
        );
    }

    #[test]
    fn request_payload() {
        let mut req = conversation();
        req.model = "models/test-model".into();
        check_request(
            &Gemini,
            &req,
            &config(ProviderKind::Gemini, "AIza-test"),
            expect![[r#"
            POST https://generativelanguage.googleapis.com/v1beta/models/test-model:streamGenerateContent?alt=sse
            content-type: application/json
            x-goog-api-key: AIza-test

            {
              "contents": [
                {
                  "parts": [
                    {
                      "text": "What is in this picture?"
                    },
                    {
                      "inline_data": {
                        "data": "iVBORw0KGgo=",
                        "mime_type": "image/png"
                      }
                    }
                  ],
                  "role": "user"
                },
                {
                  "parts": [
                    {
                      "text": "A cat."
                    }
                  ],
                  "role": "model"
                },
                {
                  "parts": [
                    {
                      "text": "héllo 世界 🎉"
                    }
                  ],
                  "role": "user"
                }
              ],
              "generationConfig": {
                "maxOutputTokens": 512,
                "temperature": 0.7
              },
              "systemInstruction": {
                "parts": [
                  {
                    "text": "You are terse."
                  }
                ]
              }
            }
        "#]],
        );
    }

    #[test]
    fn surrogate_halves_split_across_frames_are_joined() {
        check_stream(
            &Gemini,
            "gemini/split_surrogates.sse",
            expect![[r#"
            Model("gemini-2.0-flash")
            Delta("héllo ")
            Delta("🎉")
            Finish("STOP")
            Usage(Usage { input: 21, output: 3 })
            Done
            END
        "#]],
        );
    }

    #[test]
    fn function_calls_come_whole_and_get_ids() {
        check_stream(
            &Gemini,
            "gemini/tool-call.sse",
            expect![[r#"
                Model("gemini-2.5-flash")
                Delta("I'll check the weather in Zürich.")
                Usage(Usage { input: 96, output: 0 })
                ToolCall(ToolCall { id: "call_1", name: "get_weather", arguments: Object {"city": String("Zürich"), "unit": String("celsius")} })
                ToolCall(ToolCall { id: "call_2", name: "list_tabs", arguments: Object {} })
                Finish("STOP")
                Usage(Usage { input: 96, output: 27 })
                Done
                END
            "#]],
        );
    }

    #[test]
    fn tool_round_trip_request() {
        check_request(
            &Gemini,
            &tool_round_trip(),
            &config(ProviderKind::Gemini, "AIza-test"),
            expect![[r#"
                POST https://generativelanguage.googleapis.com/v1beta/models/test-model:streamGenerateContent?alt=sse
                content-type: application/json
                x-goog-api-key: AIza-test

                {
                  "contents": [
                    {
                      "parts": [
                        {
                          "text": "Weather in Zürich? And my tabs?"
                        }
                      ],
                      "role": "user"
                    },
                    {
                      "parts": [
                        {
                          "text": "Checking."
                        },
                        {
                          "functionCall": {
                            "args": {
                              "city": "Zürich"
                            },
                            "name": "get_weather"
                          },
                          "thoughtSignature": "skip_thought_signature_validator"
                        },
                        {
                          "functionCall": {
                            "args": {},
                            "name": "list_tabs"
                          }
                        }
                      ],
                      "role": "model"
                    },
                    {
                      "parts": [
                        {
                          "functionResponse": {
                            "name": "get_weather",
                            "response": {
                              "content": "12°C, cloudy"
                            }
                          }
                        },
                        {
                          "functionResponse": {
                            "name": "list_tabs",
                            "response": {
                              "error": "The tab list is not available."
                            }
                          }
                        },
                        {
                          "text": "Keep it short."
                        }
                      ],
                      "role": "user"
                    }
                  ],
                  "systemInstruction": {
                    "parts": [
                      {
                        "text": "You are terse."
                      }
                    ]
                  },
                  "tools": [
                    {
                      "functionDeclarations": [
                        {
                          "description": "The current weather in a city.",
                          "name": "get_weather",
                          "parameters": {
                            "properties": {
                              "city": {
                                "description": "The city name.",
                                "type": "string"
                              },
                              "unit": {
                                "enum": [
                                  "celsius",
                                  "fahrenheit"
                                ],
                                "nullable": true,
                                "type": "string"
                              }
                            },
                            "required": [
                              "city"
                            ],
                            "type": "object"
                          }
                        },
                        {
                          "description": "The open tabs.",
                          "name": "list_tabs"
                        }
                      ]
                    }
                  ]
                }
            "#]],
        );
    }

    #[test]
    fn schemas_keep_only_what_gemini_accepts() {
        let s = schema(&json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "additionalProperties": false,
            "$defs": {"x": {"type": "string"}},
            "properties": {
                "when": {"type": "string", "format": "date-time"},
                "email": {"type": "string", "format": "email", "minLength": 3},
                "mode": {"const": "fast"},
                "count": {"type": "integer", "enum": [1, 2], "minimum": 0},
                "tags": {"type": "array", "items": {"type": ["string", "null"], "additionalProperties": true}},
                "either": {"oneOf": [{"type": "string"}, {"type": "number", "$ref": "#/x"}]},
            },
            "required": ["when"],
        }));
        expect![[r#"{"properties":{"count":{"minimum":0,"type":"integer"},"either":{"anyOf":[{"type":"string"},{"type":"number"}]},"email":{"minLength":3,"type":"string"},"mode":{"enum":["fast"]},"tags":{"items":{"nullable":true,"type":"string"},"type":"array"},"when":{"format":"date-time","type":"string"}},"required":["when"],"type":"object"}"#]]
        .assert_eq(&s.to_string());
    }
    /// The hand-written reader reads every recorded payload, and each odd version of a payload
    /// with every field, as the derived reader of `Response` did.
    #[test]
    fn the_hand_reader_reads_what_the_derived_reader_read() {
        super::super::testkit::reads_as_derived(
            "gemini",
            r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"hé 🎉","thought":false},{"functionCall":{"id":"c1","name":"look","args":{"a":[1]}}}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":21,"candidatesTokenCount":7,"totalTokenCount":28},"modelVersion":"gemini-2.0-flash","promptFeedback":{"blockReason":"OTHER"},"error":{"code":503}}"#,
            response,
        );
    }
}
