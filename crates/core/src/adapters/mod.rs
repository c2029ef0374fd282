//! One pure adapter per provider: `UniversalRequest` → HTTP request, response bytes →
//! [`StreamEvent`]s, HTTP error → [`ProviderError`]. Each module opens with the API document
//! it follows.
//!
//! What the providers share lives here: message helpers for the request builders, and
//! [`Decoder`], which frames the body (SSE or NDJSON), hands each payload to the provider's
//! [`Protocol`] and enforces the common stream rules (model reported once, nothing after the
//! end marker, cut detection, no event lost to an error arriving in the same chunk).

use crate::json;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::chat::Role;
use crate::errors::{self, ProviderError};
use crate::http::HttpRequest;
use crate::json::SurrogateJoiner;
use crate::ndjson::{Line, NdjsonDecoder};
use crate::provider::{ProviderConfig, ProviderKind};
use crate::request::{RequestMessage, ToolCall, ToolSpec, UniversalRequest};
use crate::sse::{SseDecoder, SseEvent};
use crate::stream::{StreamDecoder, StreamEvent, Usage};

pub mod anthropic;
pub mod firebase;
pub mod gemini;
pub mod ollama;
pub mod openai;

/// What every provider module provides.
pub trait Adapter {
    /// The streaming request for `req`.
    fn translate(&self, req: &UniversalRequest, cfg: &ProviderConfig) -> HttpRequest;
    /// A fresh decoder for one streamed response body.
    fn decoder(&self) -> Box<dyn StreamDecoder>;
    /// Classifies a non-2xx answer. `retry_after` is the raw `Retry-After` header.
    /// Every provider shares one classification core, so none overrides this.
    fn classify_http(
        &self,
        status: u16,
        body: &str,
        retry_after: Option<&str>,
        cfg: &ProviderConfig,
    ) -> ProviderError {
        errors::classify_http(status, body, retry_after, cfg)
    }
}

pub fn adapter_for(kind: ProviderKind) -> &'static dyn Adapter {
    match kind {
        ProviderKind::OpenAi => &openai::OpenAi(ProviderKind::OpenAi),
        ProviderKind::OpenAiCompatible => &openai::OpenAi(ProviderKind::OpenAiCompatible),
        ProviderKind::Anthropic => &anthropic::Anthropic,
        ProviderKind::Gemini => &gemini::Gemini,
        ProviderKind::Ollama => &ollama::Ollama,
        ProviderKind::Firebase => &firebase::Firebase,
    }
}

// ---- Request helpers ----

/// The system prompt, with any system-role message folded in: Anthropic and Gemini take a
/// single system text outside the message list.
pub(crate) fn system_prompt(req: &UniversalRequest) -> Option<String> {
    let from_messages = req
        .messages
        .iter()
        .filter(|m| m.role == Role::System)
        .map(|m| &m.content);
    let parts: Vec<&str> = req
        .system
        .iter()
        .chain(from_messages)
        .map(|s| s.as_str())
        .filter(|s| !s.trim().is_empty())
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

/// The user and assistant turns, oldest first.
pub(crate) fn turns(req: &UniversalRequest) -> impl Iterator<Item = &RequestMessage> {
    req.messages.iter().filter(|m| m.role != Role::System)
}

pub(crate) fn role_name(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

/// A base64 image taken apart from its `data:<mime>;base64,<data>` URL.
pub(crate) struct DataUrl<'a> {
    pub mime: &'a str,
    pub data: &'a str,
}

pub(crate) fn data_url(url: &str) -> Option<DataUrl<'_>> {
    let (head, data) = url.strip_prefix("data:")?.split_once(',')?;
    Some(DataUrl {
        mime: head.strip_suffix(";base64")?,
        data,
    })
}

/// A user turn for APIs whose tool messages hold text only (OpenAI's Chat Completions, which
/// refuses images in a `role: tool` message, and Ollama): the images the turn's tool results
/// carry, then the turn's own, with a line saying whose they are before the turn's text.
/// Its images are empty when no result carried one and the turn has none of its own.
pub(crate) fn user_turn_with_result_images(m: &RequestMessage) -> (String, Vec<&str>) {
    let from_tools: Vec<&str> = m
        .tool_results
        .iter()
        .flat_map(|r| r.images.iter().map(String::as_str))
        .collect();
    let mut text = m.content.clone();
    if !from_tools.is_empty() {
        let note = "The images the tool calls above returned, in order.";
        text = if text.is_empty() {
            note.to_string()
        } else {
            format!("{note}\n\n{text}")
        };
    }
    let images = from_tools
        .into_iter()
        .chain(m.images.iter().map(String::as_str))
        .collect();
    (text, images)
}

/// The temperature as JSON, rounded to six decimals: widening the f32 directly would send
/// 0.699999988079071 for 0.7. An f32 holds about seven significant digits, so six decimals
/// keep every temperature a person sets (0 to 2). Arithmetic, not `to_string().parse()`: that
/// pair was the module's only reason to carry `f64::from_str` and its tables.
pub(crate) fn temperature(req: &UniversalRequest) -> Option<f64> {
    req.options
        .temperature
        .map(|t| (f64::from(t) * 1e6).round() / 1e6)
}

pub(crate) fn header(name: &str, value: impl Into<String>) -> (String, String) {
    (name.to_string(), value.into())
}

/// `Authorization: Bearer KEY`, or nothing for the keyless local servers.
pub(crate) fn bearer(key: &str) -> Vec<(String, String)> {
    if key.is_empty() {
        vec![]
    } else {
        vec![header("Authorization", format!("Bearer {key}"))]
    }
}

/// The JSON body without unset options: `null`s and empty objects are removed, since some
/// servers reject `null` where they expect a number. Then the `kept` top-level fields are
/// added exactly as built (a `null` one is left out): the conversation and the tool
/// declarations, inside which an empty object means something (a call without arguments, a
/// schema without properties) and so does OpenAI's `content: null` beside tool calls.
pub(crate) fn json_body<const N: usize>(mut body: Value, kept: [(&str, Value); N]) -> String {
    fn prune(v: &mut Value) {
        match v {
            Value::Object(map) => {
                map.values_mut().for_each(prune);
                map.retain(|_, x| !x.is_null() && x.as_object().is_none_or(|o| !o.is_empty()));
            }
            Value::Array(items) => items.iter_mut().for_each(prune),
            _ => {}
        }
    }
    prune(&mut body);
    if let Value::Object(map) = &mut body {
        for (key, value) in kept {
            if !value.is_null() {
                map.insert(key.to_string(), value);
            }
        }
    }
    body.to_string()
}

// ---- Tool helpers ----

/// A tool's parameter schema as providers require it: a JSON Schema object. A tool declared
/// without one takes no arguments.
pub(crate) fn parameters(tool: &ToolSpec) -> Value {
    match &tool.parameters {
        Value::Object(_) => tool.parameters.clone(),
        _ => json!({"type": "object", "properties": {}}),
    }
}

/// A call's arguments as the JSON object Anthropic, Gemini and Ollama require. Arguments
/// that were never an object (the model wrote broken JSON, kept as text) are sent as an
/// empty object: the call's error result already told the model what went wrong.
pub(crate) fn arguments_object(call: &ToolCall) -> Value {
    match &call.arguments {
        Value::Object(_) => call.arguments.clone(),
        _ => json!({}),
    }
}

/// A call's arguments as the JSON text OpenAI carries them in: the model's own text when it
/// was not valid JSON, so the conversation shows exactly what it wrote.
pub(crate) fn arguments_text(call: &ToolCall) -> String {
    match &call.arguments {
        Value::String(raw) => raw.clone(),
        args => args.to_string(),
    }
}

/// Arguments streamed as text, read back. Nothing at all means no arguments (Anthropic and
/// OpenAI send an empty string for a tool without parameters); text that is not JSON is
/// kept as it is, so the caller can say what was wrong instead of losing it.
pub(crate) fn parse_arguments(raw: &str) -> Value {
    if raw.trim().is_empty() {
        return json!({});
    }
    crate::json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()))
}

/// Call ids for providers that give none (Gemini, Ollama): `call_1`, `call_2`... unique
/// within one answer, which is all a tool result needs to find its call.
#[derive(Default)]
pub(crate) struct CallIds(u32);

impl CallIds {
    /// The provider's id when it sent one, else the next made-up one.
    pub(crate) fn id(&mut self, given: Option<String>) -> String {
        match given.filter(|id| !id.is_empty()) {
            Some(id) => id,
            None => {
                self.0 += 1;
                format!("call_{}", self.0)
            }
        }
    }
}

// ---- Stream decoding ----

/// One frame of a body, as the framing gives it.
pub(crate) enum Frame {
    /// An SSE event's `data`, or an NDJSON line.
    Payload(String),
    /// A frame dropped for being longer than [`crate::ndjson::MAX_LINE_BYTES`]; its bytes.
    Overlong(usize),
}

/// How a provider frames its stream; both give one JSON payload at a time.
pub(crate) enum Framing {
    Sse(SseDecoder),
    Ndjson(NdjsonDecoder),
}

fn sse_frame(e: SseEvent) -> Frame {
    match e.dropped {
        0 => Frame::Payload(e.data),
        bytes => Frame::Overlong(bytes),
    }
}

fn ndjson_frame(line: Line) -> Frame {
    match line {
        Line::Text(payload) => Frame::Payload(payload),
        Line::Overlong(bytes) => Frame::Overlong(bytes),
    }
}

impl Framing {
    fn push(&mut self, bytes: &[u8]) -> Vec<Frame> {
        match self {
            Framing::Sse(d) => d.push(bytes).into_iter().map(sse_frame).collect(),
            Framing::Ndjson(d) => d.push(bytes).into_iter().map(ndjson_frame).collect(),
        }
    }

    fn finish(&mut self) -> Vec<Frame> {
        match self {
            Framing::Sse(d) => d.finish().into_iter().map(sse_frame).collect(),
            Framing::Ndjson(d) => d.finish().into_iter().map(Frame::Payload).collect(),
        }
    }
}

/// Why a payload gave no events.
pub(crate) enum PayloadError {
    /// Not what the provider documents: the frame is skipped and the stream goes on.
    Unreadable(String),
    /// The provider reported an error, or refused: the stream ends with it.
    Ends(ProviderError),
}

impl From<ProviderError> for PayloadError {
    fn from(e: ProviderError) -> Self {
        PayloadError::Ends(e)
    }
}

/// What a provider does with one payload (an SSE `data` or an NDJSON line).
pub(crate) trait Protocol {
    fn payload(
        &mut self,
        provider: ProviderKind,
        payload: &str,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), PayloadError>;
}

/// Parses a payload. What cannot be read is described by position only: the payload is the
/// user's answer, which does not belong in a log.
pub(crate) fn parse<T: DeserializeOwned>(payload: &str) -> Result<T, PayloadError> {
    crate::json::from_str_lenient(payload).map_err(|e| {
        let what = match e.classify() {
            serde_json::error::Category::Data => "unexpected data",
            serde_json::error::Category::Eof => "cut off",
            _ => "not JSON",
        };
        // Errors found after parsing (a tagged enum's wrong shape) have no position.
        PayloadError::Unreadable(match e.line() {
            0 => what.to_string(),
            line => format!("{what} at line {line} column {}", e.column()),
        })
    })
}

/// A payload read by hand from its `Value` with `read` ([`crate::json::fields`]). A value of
/// a type the reader refuses is "unexpected data" with no position (the reader has no text)
/// and no value (the payload is the user's answer, which does not belong in a log).
pub(crate) fn read_payload<T>(
    payload: &str,
    read: fn(serde_json::Value) -> serde_json::Result<T>,
) -> Result<T, PayloadError> {
    read(parse(payload)?).map_err(|_| PayloadError::Unreadable("unexpected data".to_owned()))
}

/// At most this many skipped frames are described one by one; a body of nothing but
/// garbage must not flood the Debug drawer.
const MAX_NOTES: usize = 10;

/// One decoder for every provider: the provider's part is its [`Protocol`], behind a box so
/// that framing, skipping and the rest of this loop are compiled once, not once per provider.
pub(crate) struct Decoder {
    provider: ProviderKind,
    framing: Framing,
    proto: Box<dyn Protocol>,
    /// The end marker was seen or an error reported: later bytes are ignored.
    closed: bool,
    /// A `Finish` arrived, so the answer is whole even if the end marker never comes (many
    /// OpenAI-compatible servers omit `[DONE]`; Gemini has no marker at all).
    finished: bool,
    model_sent: bool,
    last_usage: Option<Usage>,
    /// An error decoded in the same chunk as events: those go out first, the error next call.
    pending: Option<ProviderError>,
    /// Payloads read, and frames skipped: a body where nothing could be read is not an
    /// answer that was cut, it is not an answer.
    read: usize,
    skipped: usize,
    surrogates: SurrogateJoiner,
}

impl Decoder {
    pub(crate) fn boxed(
        provider: ProviderKind,
        framing: Framing,
        proto: impl Protocol + 'static,
    ) -> Box<dyn StreamDecoder> {
        Box::new(Self {
            provider,
            framing,
            proto: Box::new(proto),
            closed: false,
            finished: false,
            model_sent: false,
            last_usage: None,
            pending: None,
            read: 0,
            skipped: 0,
            surrogates: SurrogateJoiner::default(),
        })
    }

    fn decode(&mut self, frames: Vec<Frame>) -> Vec<StreamEvent> {
        let mut out = Vec::new();
        for frame in frames {
            if self.closed {
                break;
            }
            let payload = match frame {
                Frame::Payload(p) if p.trim().is_empty() => continue,
                Frame::Payload(p) => p,
                Frame::Overlong(bytes) => {
                    let why = format!(
                        "{bytes} bytes, over the limit of {} MB",
                        crate::ndjson::MAX_LINE_BYTES >> 20
                    );
                    self.skip(&why, &mut out);
                    continue;
                }
            };
            let mut events = Vec::new();
            let result = self.proto.payload(self.provider, &payload, &mut events);
            events.into_iter().for_each(|e| self.accept(e, &mut out));
            match result {
                Ok(()) => self.read += 1,
                Err(PayloadError::Unreadable(why)) => self.skip(&why, &mut out),
                Err(PayloadError::Ends(e)) => {
                    self.closed = true;
                    self.pending = Some(e);
                }
            }
        }
        out
    }

    /// One bad frame costs itself only: the user keeps the text before and after it, and
    /// the Debug drawer says what was skipped.
    fn skip(&mut self, why: &str, out: &mut Vec<StreamEvent>) {
        self.skipped += 1;
        let label = self.provider.label();
        let note = match self.skipped {
            n if n < MAX_NOTES => format!("Skipped a frame from {label} Tandem could not read ({why}); the answer went on."),
            MAX_NOTES => format!("Skipped a frame from {label} Tandem could not read ({why}); further skipped frames are not listed."),
            _ => return,
        };
        out.push(StreamEvent::Note(note));
    }

    fn accept(&mut self, event: StreamEvent, out: &mut Vec<StreamEvent>) {
        let event = match event {
            StreamEvent::Delta(text) => {
                let text = self.surrogates.join(text);
                if text.is_empty() {
                    return;
                }
                StreamEvent::Delta(text)
            }
            // Gemini and Ollama repeat the model name and usage in every chunk.
            StreamEvent::Model(m) if m.is_empty() || self.model_sent => return,
            StreamEvent::Model(m) => {
                self.model_sent = true;
                StreamEvent::Model(m)
            }
            StreamEvent::Usage(u) if self.last_usage == Some(u) => return,
            StreamEvent::Usage(u) => {
                self.last_usage = Some(u);
                StreamEvent::Usage(u)
            }
            StreamEvent::Finish(reason) => {
                self.finished = true;
                StreamEvent::Finish(reason)
            }
            call @ StreamEvent::ToolCall(_) => call,
            StreamEvent::Done => {
                self.closed = true;
                out.extend(self.surrogates.flush().map(StreamEvent::Delta));
                StreamEvent::Done
            }
            note @ StreamEvent::Note(_) => note,
        };
        out.push(event);
    }
}

impl StreamDecoder for Decoder {
    fn push(&mut self, bytes: &[u8]) -> Result<Vec<StreamEvent>, ProviderError> {
        if let Some(e) = self.pending.take() {
            return Err(e);
        }
        if self.closed {
            return Ok(vec![]);
        }
        let frames = self.framing.push(bytes);
        let out = self.decode(frames);
        match self.pending.take() {
            Some(e) if out.is_empty() => Err(e),
            pending => {
                self.pending = pending;
                Ok(out)
            }
        }
    }

    /// The contract allows events or an error, not both: at the very end an error wins over
    /// the few events of the last unterminated payload.
    fn finish(&mut self) -> Result<Vec<StreamEvent>, ProviderError> {
        if let Some(e) = self.pending.take() {
            return Err(e);
        }
        if self.closed {
            return Ok(vec![]);
        }
        let frames = self.framing.finish();
        let mut out = self.decode(frames);
        if let Some(e) = self.pending.take() {
            return Err(e);
        }
        if !self.closed {
            if !self.finished {
                if self.read == 0 && self.skipped > 0 {
                    return Err(ProviderError::malformed(
                        self.provider,
                        "none of its stream could be read",
                    ));
                }
                return Err(ProviderError::stream_cut(self.provider));
            }
            self.accept(StreamEvent::Done, &mut out);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::testkit::{config, conversation};
    use super::*;

    #[test]
    fn every_kind_has_its_endpoint() {
        let urls: Vec<String> = ProviderKind::PICKABLE
            .into_iter()
            .map(|k| {
                adapter_for(k)
                    .translate(&conversation(), &config(k, "k"))
                    .url
            })
            .collect();
        expect_test::expect![[r#"
            https://api.openai.com/v1/chat/completions
            https://api.anthropic.com/v1/messages
            https://generativelanguage.googleapis.com/v1beta/models/test-model:streamGenerateContent?alt=sse
            http://localhost:11434/api/chat
            http://localhost:1234/v1/chat/completions
            https://firebasevertexai.googleapis.com/v1beta/projects/demo-project/models/test-model:streamGenerateContent?alt=sse"#]]
        .assert_eq(&urls.join("\n"));
    }

    /// Issue 33: an agent step's schema, in each provider's own structured-output form and at
    /// each rung of the OpenAI-compatible ladder.
    #[test]
    fn every_kind_asks_for_the_step_schema_in_its_own_form() {
        use crate::structured::{OutputMode, OutputSchema};
        let schema = json!({"type": "object", "properties": {
            "action": {"type": "string", "enum": ["click", "done"]},
            "element": {"type": "integer", "minimum": 0},
        }, "required": ["action"]});
        let with = |mode| UniversalRequest {
            output: Some(OutputSchema {
                name: "navigator_action".into(),
                schema: schema.clone(),
                mode,
                calls: false,
            }),
            ..conversation()
        };
        let out: Vec<String> = ProviderKind::PICKABLE
            .into_iter()
            .flat_map(|k| {
                let modes: &[OutputMode] = if crate::structured::has_ladder(k) {
                    &[
                        OutputMode::JsonSchema,
                        OutputMode::JsonObject,
                        OutputMode::Prose,
                    ]
                } else {
                    &[OutputMode::JsonSchema]
                };
                modes.iter().map(move |&mode| {
                    let http = adapter_for(k).translate(&with(mode), &config(k, "k"));
                    let body: Value = crate::json::from_str(&http.body).unwrap();
                    let form = [
                        "response_format",
                        "tool_choice",
                        "format",
                        "generationConfig",
                    ]
                    .iter()
                    .filter_map(|f| body.get(*f).map(|v| format!("{f}={v}")))
                    .collect::<Vec<_>>();
                    let tools: Vec<&str> = body["tools"]
                        .as_array()
                        .map(|t| t.iter().filter_map(|t| t["name"].as_str()).collect())
                        .unwrap_or_default();
                    format!(
                        "{} {}: {} tools={tools:?}",
                        k.label(),
                        mode.label(),
                        form.join(" ")
                    )
                })
            })
            .collect();
        expect_test::expect![[r#"
            OpenAI json_schema: response_format={"json_schema":{"name":"navigator_action","schema":{"additionalProperties":false,"properties":{"action":{"enum":["click","done"],"type":"string"},"element":{"minimum":0,"type":["integer","null"]}},"required":["action","element"],"type":"object"},"strict":true},"type":"json_schema"} tools=[]
            OpenAI json_object: response_format={"type":"json_object"} tools=[]
            OpenAI prose JSON:  tools=[]
            Anthropic json_schema: tool_choice={"name":"navigator_action","type":"tool"} tools=["navigator_action"]
            Gemini json_schema: generationConfig={"maxOutputTokens":512,"responseJsonSchema":{"properties":{"action":{"enum":["click","done"],"type":"string"},"element":{"minimum":0,"type":"integer"}},"required":["action"],"type":"object"},"responseMimeType":"application/json","temperature":0.7} tools=[]
            Ollama json_schema: format={"properties":{"action":{"enum":["click","done"],"type":"string"},"element":{"minimum":0,"type":"integer"}},"required":["action"],"type":"object"} tools=[]
            OpenAI-compatible json_schema: response_format={"json_schema":{"name":"navigator_action","schema":{"additionalProperties":false,"properties":{"action":{"enum":["click","done"],"type":"string"},"element":{"minimum":0,"type":["integer","null"]}},"required":["action","element"],"type":"object"},"strict":true},"type":"json_schema"} tools=[]
            OpenAI-compatible json_object: response_format={"type":"json_object"} tools=[]
            OpenAI-compatible prose JSON:  tools=[]
            Firebase AI Logic json_schema: generationConfig={"maxOutputTokens":512,"responseJsonSchema":{"properties":{"action":{"enum":["click","done"],"type":"string"},"element":{"minimum":0,"type":"integer"}},"required":["action"],"type":"object"},"responseMimeType":"application/json","temperature":0.7} tools=[]"#]].assert_eq(&out.join("\n"));
    }

    /// A tool's image reaches each provider where it reads a tool's images: inside
    /// Anthropic's `tool_result`, beside Gemini's `functionResponse`, and on the user message
    /// after OpenAI's and Ollama's text-only `tool` messages, with a line saying whose it is.
    #[test]
    fn a_tools_image_reaches_each_provider_in_its_own_place() {
        let png = "data:image/png;base64,iVBORw0KGgo=";
        let mut req = super::testkit::tool_round_trip();
        req.messages[2].tool_results[0].images = vec![png.to_string()];
        req.messages[2].content = String::new();
        fn translated(req: &UniversalRequest, kind: ProviderKind) -> Value {
            let r = adapter_for(kind).translate(req, &config(kind, "k"));
            crate::json::from_str(&r.body).unwrap()
        }
        let body = |kind| translated(&req, kind);
        let a = body(ProviderKind::Anthropic);
        let result = &a["messages"][2]["content"][0];
        assert_eq!(result["type"], "tool_result");
        assert_eq!(
            result["content"][0],
            json!({"type": "text", "text": "12°C, cloudy"})
        );
        assert_eq!(
            result["content"][1],
            json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}})
        );
        assert_eq!(
            a["messages"][2]["content"][1]["content"],
            "The tab list is not available."
        );

        let g = body(ProviderKind::Gemini);
        let parts = &g["contents"][2]["parts"];
        assert!(parts[0].get("functionResponse").is_some());
        assert!(parts[1].get("functionResponse").is_some());
        assert_eq!(
            parts[2],
            json!({"inline_data": {"mime_type": "image/png", "data": "iVBORw0KGgo="}})
        );

        for kind in [ProviderKind::OpenAi, ProviderKind::OpenAiCompatible] {
            let o = body(kind);
            let m = o["messages"].as_array().unwrap();
            assert_eq!(m[3]["role"], "tool");
            assert_eq!(m[4]["role"], "tool");
            assert_eq!(m[5]["role"], "user");
            assert_eq!(
                m[5]["content"],
                json!([{"type": "text", "text": "The images the tool calls above returned, in order."},
                       {"type": "image_url", "image_url": {"url": png}}])
            );
        }
        let l = body(ProviderKind::Ollama);
        let m = l["messages"].as_array().unwrap();
        assert_eq!(m.last().unwrap()["images"], json!(["iVBORw0KGgo="]));
        assert_eq!(m.last().unwrap()["role"], "user");

        // Without images, nothing changes: a turn of results alone sends no user message.
        req.messages[2].tool_results[0].images.clear();
        let o = translated(&req, ProviderKind::OpenAi);
        assert_eq!(o["messages"].as_array().unwrap().len(), 5);
        let a = translated(&req, ProviderKind::Anthropic);
        assert_eq!(a["messages"][2]["content"][0]["content"], "12°C, cloudy");
    }
}

/// Issue 33: a task's tools offered natively beside an agent step's reply, in each provider's
/// form, for a navigator step (the tools may be called) and a planner step (declared only),
/// each matching [`crate::structured::StepMode::asked`].
#[cfg(test)]
mod step_tools {
    use serde_json::{json, Value};

    use super::testkit::{config, conversation};
    use super::*;
    use crate::request::ToolSpec;
    use crate::structured::{OutputMode, OutputSchema, ReplyForm, StepMode};

    fn step(calls: bool) -> UniversalRequest {
        UniversalRequest {
            tools: vec![ToolSpec {
                name: "notes__add_note".into(),
                description: "Adds a note.".into(),
                parameters: json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
            }],
            output: Some(OutputSchema {
                name: "navigator_action".into(),
                schema: json!({"type": "object", "properties": {"action": {"type": "string"}}, "required": ["action"]}),
                mode: OutputMode::JsonSchema,
                calls,
            }),
            ..conversation()
        }
    }

    fn body(kind: ProviderKind, calls: bool) -> Value {
        let http = adapter_for(kind).translate(&step(calls), &config(kind, "k"));
        crate::json::from_str(&http.body).unwrap()
    }

    /// The names every provider's `tools` declares.
    fn declared(body: &Value) -> Vec<String> {
        let tools = body["tools"].as_array().cloned().unwrap_or_default();
        tools
            .iter()
            .flat_map(|t| match t.get("functionDeclarations") {
                Some(Value::Array(d)) => d.clone(),
                _ => vec![t.clone()],
            })
            .filter_map(|t| {
                t.get("name")
                    .or_else(|| t.get("function").and_then(|f| f.get("name")))
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .collect()
    }

    #[test]
    fn a_navigator_step_may_call_the_offered_tools_a_planner_step_may_not() {
        for calls in [true, false] {
            // OpenAI-compatible: the schema stays, the tools beside it; `none` for the planner.
            for kind in [ProviderKind::OpenAi, ProviderKind::OpenAiCompatible] {
                let b = body(kind, calls);
                assert_eq!(b["response_format"]["type"], "json_schema");
                assert_eq!(declared(&b), ["notes__add_note"]);
                assert_eq!(b["tools"][0]["type"], "function");
                match calls {
                    true => assert!(b.get("tool_choice").is_none(), "{b}"),
                    false => assert_eq!(b["tool_choice"], "none"),
                }
            }
            // Anthropic: the step tool beside the real one; any one call, or the step forced.
            let b = body(ProviderKind::Anthropic, calls);
            assert_eq!(declared(&b), ["notes__add_note", "navigator_action"]);
            assert_eq!(b["tools"][0]["input_schema"]["required"], json!(["text"]));
            match calls {
                true => assert_eq!(
                    b["tool_choice"],
                    json!({"type": "any", "disable_parallel_tool_use": true})
                ),
                false => assert_eq!(
                    b["tool_choice"],
                    json!({"type": "tool", "name": "navigator_action"})
                ),
            }
            // Gemini and Firebase: the step is a function too, mode ANY; no JSON mime type.
            for kind in [ProviderKind::Gemini, ProviderKind::Firebase] {
                let b = body(kind, calls);
                assert_eq!(declared(&b), ["notes__add_note", "navigator_action"]);
                let decls = &b["tools"][0]["functionDeclarations"];
                assert_eq!(
                    decls[1]["parametersJsonSchema"]["required"],
                    json!(["action"])
                );
                assert!(
                    b["generationConfig"].get("responseMimeType").is_none(),
                    "{b}"
                );
                assert!(b["generationConfig"].get("responseJsonSchema").is_none());
                let config = &b["toolConfig"]["functionCallingConfig"];
                assert_eq!(config["mode"], "ANY");
                match calls {
                    true => assert!(config.get("allowedFunctionNames").is_none()),
                    false => {
                        assert_eq!(config["allowedFunctionNames"], json!(["navigator_action"]))
                    }
                }
            }
            // Ollama: `format` would forbid a call; the planner keeps it.
            let b = body(ProviderKind::Ollama, calls);
            assert_eq!(declared(&b), ["notes__add_note"]);
            assert_eq!(b.get("format").is_some(), !calls, "{b}");
            // What the adapters wrote is what Debug says.
            for kind in ProviderKind::PICKABLE {
                let mode = StepMode::asked(kind, OutputMode::JsonSchema, true, calls);
                let StepMode::Reply { form, tools: true } = mode else {
                    panic!("{mode:?}")
                };
                let b = body(kind, calls);
                let forced =
                    b.get("toolConfig").is_some() || b["tool_choice"].get("type").is_some();
                assert_eq!(form == ReplyForm::ForcedTool, forced, "{kind:?} {b}");
                let constrained = b.get("response_format").is_some() || b.get("format").is_some();
                assert_eq!(
                    form == ReplyForm::Rung(OutputMode::JsonSchema),
                    constrained,
                    "{kind:?} {b}"
                );
            }
        }
    }

    #[test]
    fn a_call_and_its_result_go_back_in_each_providers_shape() {
        let call = crate::request::ToolCall {
            id: "call_7".into(),
            name: "notes__add_note".into(),
            arguments: json!({"text": "milk"}),
        };
        let mut req = step(true);
        req.messages = vec![
            crate::request::RequestMessage::text(crate::chat::Role::User, "step 1"),
            crate::request::RequestMessage {
                tool_calls: vec![call],
                ..crate::request::RequestMessage::text(crate::chat::Role::Assistant, "")
            },
            crate::request::RequestMessage {
                tool_results: vec![crate::request::ToolOutcome {
                    call_id: "call_7".into(),
                    name: "notes__add_note".into(),
                    content: "Added.".into(),
                    is_error: false,
                    images: Vec::new(),
                }],
                ..crate::request::RequestMessage::text(crate::chat::Role::User, "step 2")
            },
        ];
        let req = req.normalized();
        let text = |kind| {
            let http = adapter_for(kind).translate(&req, &config(kind, "k"));
            let b: Value = crate::json::from_str(&http.body).unwrap();
            b.get("messages")
                .or_else(|| b.get("contents"))
                .unwrap()
                .to_string()
        };
        assert!(text(ProviderKind::OpenAi)
            .contains(r#"{"content":"Added.","role":"tool","tool_call_id":"call_7"}"#));
        assert!(text(ProviderKind::Anthropic)
            .contains(r#""tool_use_id":"call_7","type":"tool_result""#));
        assert!(text(ProviderKind::Gemini).contains(
            r#"{"functionResponse":{"name":"notes__add_note","response":{"content":"Added."}}}"#
        ));
        assert!(text(ProviderKind::Ollama)
            .contains(r#"{"content":"Added.","role":"tool","tool_name":"notes__add_note"}"#));
    }
}

#[cfg(test)]
pub(crate) mod testkit {
    use expect_test::Expect;
    use serde_json::Value;

    use super::*;
    use crate::request::RequestOptions;

    pub fn data(file: &str) -> Vec<u8> {
        let path = format!(
            concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/{}"),
            file
        );
        std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// Feeds `chunks` to a fresh decoder; one line per event, then the outcome.
    fn run(adapter: &dyn Adapter, chunks: &[&[u8]]) -> String {
        let mut d = adapter.decoder();
        let mut log = String::new();
        for i in 0..=chunks.len() {
            let result = match chunks.get(i) {
                Some(chunk) => d.push(chunk),
                None => d.finish(),
            };
            match result {
                Ok(events) => events
                    .iter()
                    .for_each(|e| log.push_str(&format!("{e:?}\n"))),
                Err(e) => {
                    let retry = e
                        .retry_after_ms
                        .map(|ms| format!(" retry={ms}ms"))
                        .unwrap_or_default();
                    return format!("{log}ERR {:?}{retry}: {}\n", e.kind, e.message);
                }
            }
        }
        log + "END\n"
    }

    /// Decodes a recorded stream whole, then cut at every point and byte by byte: the events
    /// must never depend on where the network split the body. Returns the whole decode.
    fn decode_every_way(adapter: &dyn Adapter, file: &str) -> String {
        let bytes = data(file);
        let whole = run(adapter, &[&bytes]);
        for i in 0..=bytes.len() {
            assert_eq!(
                run(adapter, &[&bytes[..i], &bytes[i..]]),
                whole,
                "{file} split at {i}"
            );
        }
        let singles: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(run(adapter, &singles), whole, "{file} byte by byte");
        whole
    }

    /// Every payload of the recordings in `dir` (SSE `data:` lines, NDJSON lines) and every
    /// odd version of `rich` (each place missing, null, of another type…), read with the
    /// derived reader a hand-written one replaced (`parse::<T>`, kept for tests) and with the
    /// hand-written one: the same value, or both skipped as unreadable.
    pub fn reads_as_derived<T>(dir: &str, rich: &str, read: fn(Value) -> serde_json::Result<T>)
    where
        T: serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
    {
        let mut payloads: Vec<String> = Vec::new();
        let folder = format!(
            concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/{}"),
            dir
        );
        for entry in std::fs::read_dir(&folder).unwrap() {
            let bytes = std::fs::read(entry.unwrap().path()).unwrap();
            let text = String::from_utf8_lossy(&bytes);
            for line in text.lines() {
                let line = line.strip_prefix("data:").unwrap_or(line).trim();
                if line.starts_with('{') {
                    payloads.push(line.to_owned());
                }
            }
        }
        assert!(payloads.len() >= 5, "{dir}: {}", payloads.len());
        let rich: Value = crate::json::from_str(rich).unwrap();
        payloads.push(rich.to_string());
        payloads.extend(
            crate::json::fields::odd_versions(&rich)
                .into_iter()
                .map(|(_, v)| v.to_string()),
        );
        let (mut read_both, mut refused) = (0, 0);
        for payload in &payloads {
            let old = parse::<T>(payload).map_err(|_| ());
            let new = read_payload(payload, read).map_err(|_| ());
            assert_eq!(new, old, "{payload}");
            read_both += usize::from(old.is_ok());
            refused += usize::from(old.is_err());
        }
        assert!(read_both > 100 && refused > 100, "{read_both} {refused}");
    }

    /// [`decode_every_way`] checked against `expect`; returns the decode for variants.
    pub fn check_stream(adapter: &dyn Adapter, file: &str, expect: Expect) -> String {
        let whole = decode_every_way(adapter, file);
        expect.assert_eq(&whole);
        whole
    }

    /// A variant recording (other line endings) must decode exactly like `like`.
    pub fn check_stream_like(adapter: &dyn Adapter, file: &str, like: &str) {
        assert_eq!(decode_every_way(adapter, file), like, "{file}");
    }

    pub fn config(kind: ProviderKind, api_key: &str) -> ProviderConfig {
        ProviderConfig {
            kind,
            base_url: kind
                .default_base_url()
                .unwrap_or("http://localhost:1234/v1")
                .to_string(),
            model: "test-model".into(),
            api_key: api_key.into(),
            project_id: "demo-project".into(),
            app_id: String::new(),
        }
    }

    /// A multi-turn conversation with a system prompt, an image and both options set.
    pub fn conversation() -> UniversalRequest {
        let msg = |role, content: &str, images: &[&str]| RequestMessage {
            images: images.iter().map(|s| s.to_string()).collect(),
            ..RequestMessage::text(role, content)
        };
        UniversalRequest {
            model: "test-model".into(),
            system: Some("You are terse.".into()),
            messages: vec![
                msg(
                    Role::User,
                    "What is in this picture?",
                    &["data:image/png;base64,iVBORw0KGgo="],
                ),
                msg(Role::Assistant, "A cat.", &[]),
                msg(Role::User, "héllo 世界 🎉", &[]),
            ],
            options: RequestOptions {
                temperature: Some(0.7),
                max_output_tokens: Some(512),
                context_window: None,
            },
            tools: Vec::new(),
            output: None,
        }
    }

    /// A tool round trip: two tools declared (one schema with keys Gemini refuses, one
    /// without parameters), a question, the assistant's text and two calls, then the user
    /// turn carrying both results (one an error) and a follow-up.
    pub fn tool_round_trip() -> UniversalRequest {
        use crate::request::{ToolOutcome, ToolSpec};
        let weather = ToolSpec {
            name: "get_weather".into(),
            description: "The current weather in a city.".into(),
            parameters: crate::json!({
                "$schema": "http://json-schema.org/draft-07/schema#",
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "The city name."},
                    "unit": {"type": ["string", "null"], "enum": ["celsius", "fahrenheit"]},
                },
                "required": ["city"],
                "additionalProperties": false,
            }),
        };
        let tabs = ToolSpec {
            name: "list_tabs".into(),
            description: "The open tabs.".into(),
            parameters: crate::json!({"type": "object", "properties": {}}),
        };
        let calls = vec![
            ToolCall {
                id: "call_1".into(),
                name: "get_weather".into(),
                arguments: crate::json!({"city": "Zürich"}),
            },
            ToolCall {
                id: "call_2".into(),
                name: "list_tabs".into(),
                arguments: crate::json!({}),
            },
        ];
        let results = vec![
            ToolOutcome {
                call_id: "call_1".into(),
                name: "get_weather".into(),
                content: "12°C, cloudy".into(),
                is_error: false,
                images: Vec::new(),
            },
            ToolOutcome {
                call_id: "call_2".into(),
                name: "list_tabs".into(),
                content: "The tab list is not available.".into(),
                is_error: true,
                images: Vec::new(),
            },
        ];
        UniversalRequest {
            model: "test-model".into(),
            system: Some("You are terse.".into()),
            messages: vec![
                RequestMessage::text(Role::User, "Weather in Zürich? And my tabs?"),
                RequestMessage {
                    tool_calls: calls,
                    ..RequestMessage::text(Role::Assistant, "Checking.")
                },
                RequestMessage {
                    tool_results: results,
                    ..RequestMessage::text(Role::User, "Keep it short.")
                },
            ],
            options: RequestOptions::default(),
            tools: vec![weather, tabs],
            output: None,
        }
    }

    /// Renders the translated request (keys sorted, so the snapshot does not depend on
    /// serde_json's `preserve_order` feature) and checks it against `expect`. A declared
    /// tool's schema sent exactly as declared shows as `"<name's parameters as declared>"`:
    /// each adapter's snapshot then shows what it changes, and any change to a schema (a key
    /// dropped, renamed or added) still shows in full.
    pub fn check_request(
        adapter: &dyn Adapter,
        req: &UniversalRequest,
        cfg: &ProviderConfig,
        expect: Expect,
    ) {
        fn sorted(v: Value, declared: &[(Value, String)]) -> Value {
            if let Some((_, name)) = declared.iter().find(|(schema, _)| *schema == v) {
                return Value::String(format!("<{name}'s parameters as declared>"));
            }
            match v {
                Value::Object(map) => {
                    let map: std::collections::BTreeMap<_, _> = map
                        .into_iter()
                        .map(|(k, v)| (k, sorted(v, declared)))
                        .collect();
                    Value::Object(map.into_iter().collect())
                }
                Value::Array(items) => {
                    Value::Array(items.into_iter().map(|v| sorted(v, declared)).collect())
                }
                v => v,
            }
        }
        let declared: Vec<(Value, String)> = req
            .tools
            .iter()
            .map(|t| (t.parameters.clone(), t.name.clone()))
            .collect();
        let r = adapter.translate(req, cfg);
        let body: Value = crate::json::from_str(&r.body).unwrap();
        let headers: String = r
            .headers
            .iter()
            .map(|(k, v)| format!("{k}: {v}\n"))
            .collect();
        let body = serde_json::to_string_pretty(&sorted(body, &declared)).unwrap();
        expect.assert_eq(&format!("{} {}\n{headers}\n{body}\n", r.method, r.url));
    }
}
