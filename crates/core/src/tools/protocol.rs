//! The messages between Tandem and tool providers (other extensions), as fixed by the
//! provider protocol: providers are written against these exact names and shapes.
//!
//! Provider → Tandem (`runtime.onMessageExternal`):
//! - `{type:"REGISTER_TOOLS", tools:[ToolDescriptor]}`, answered `{ok:true, registered:[names]}`
//!   or `{ok:false, error}`;
//! - `{type:"UNREGISTER_TOOLS"}`: removes all of the sender's tools.
//!
//! Tandem → provider (`runtime.sendMessage(providerId, …)`):
//! - `{type:"TOOL_EXECUTE", toolName, params, toolCallId}`, answered with a [`ToolResult`]
//!   `{content:[{type:"text", text}], details?, error?}`;
//! - `{type:"ORCHESTRATOR_READY"}` to every known provider when Tandem's worker starts.
//!
//! Everything a provider sends is untrusted input from another extension: [`parse_incoming`]
//! bounds it (count, name shape, text lengths, schema size and depth) and names the first
//! problem in a sentence the provider's developer can act on. Results are read leniently
//! ([`parse_tool_result`]): a provider's slightly-off answer is still worth showing the model.
//!
//! The provider SDK (`crates/tool-provider`) declares its own copies of the descriptor and its
//! annotations rather than depending on this crate: see the reason at the top of its
//! `protocol.rs`.

use crate::json;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

use super::image::{ToolImage, MAX_IMAGES_PER_RESULT};
use super::schema;

/// Tools one provider may register at once.
pub const MAX_TOOLS: usize = 64;
/// A tool name: `^[A-Za-z0-9_.-]{1,64}$`.
pub const MAX_NAME_CHARS: usize = 64;
pub const MAX_LABEL_CHARS: usize = 100;
pub const MAX_DESCRIPTION_CHARS: usize = 2_000;
/// The `parameters` schema as compact JSON: it is sent with every request that offers the
/// tool, so a huge one would eat the model's context.
pub const MAX_SCHEMA_BYTES: usize = 16 * 1024;

/// The hints a provider gives about a tool; they only pick the default [`Policy`]
/// (`super::registry::Policy`) and are never trusted beyond that.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// MCP's `openWorldHint`: the tool reaches the open world (the web, other people).
    /// Absent means it may: only `false` says the tool stays closed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

/// One tool as a provider declares it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolDescriptor {
    pub name: String,
    /// What people read (Settings, questions).
    pub label: String,
    /// What the model reads.
    pub description: String,
    /// A JSON Schema object for the arguments (checked by [`schema::check_schema`]).
    pub parameters: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// The JSON Schema of the tool's structured result (an MCP tool's `outputSchema`), when
    /// it declared one Tandem can check results against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
}

impl ToolDescriptor {
    /// Reads and bounds one descriptor. The error is the problem alone ("a name may be at
    /// most 64 characters long"); the caller says which tool it is about.
    pub fn from_value(v: &Value) -> Result<Self, String> {
        Self::from_value_within(v, MAX_NAME_CHARS)
    }

    /// [`Self::from_value`] with names up to `max_name_chars` (an MCP server's tool names may
    /// be 128 characters long; the model-facing name is shortened anyway).
    pub fn from_value_within(v: &Value, max_name_chars: usize) -> Result<Self, String> {
        let Some(o) = v.as_object() else {
            return Err("a tool must be an object".into());
        };
        let text = |key: &str| match o.get(key) {
            Some(Value::String(s)) => Ok(s.clone()),
            _ => Err(format!("it has no \"{key}\" string")),
        };
        let name = text("name")?;
        check_name_within(&name, max_name_chars)?;
        let label = text("label")?;
        if label.trim().is_empty() {
            return Err("the label is empty".into());
        }
        let chars = label.chars().count();
        if chars > MAX_LABEL_CHARS {
            return Err(format!(
                "a label may be at most {MAX_LABEL_CHARS} characters long (this one has {chars})"
            ));
        }
        let description = text("description")?;
        let chars = description.chars().count();
        if chars > MAX_DESCRIPTION_CHARS {
            return Err(format!(
                "a description may be at most 2,000 characters long (this one has {chars})"
            ));
        }
        let Some(parameters) = o.get("parameters") else {
            return Err("it has no \"parameters\" schema".into());
        };
        // Depth first: the size check serialises the value, which recurses.
        if schema::json_depth(parameters, schema::MAX_SCHEMA_DEPTH * 2)
            > schema::MAX_SCHEMA_DEPTH * 2
        {
            return Err("the parameters schema nests too deeply".into());
        }
        let bytes = parameters.to_string().len();
        if bytes > MAX_SCHEMA_BYTES {
            return Err(format!(
                "the parameters schema is {bytes} bytes of JSON; at most {MAX_SCHEMA_BYTES} are accepted"
            ));
        }
        schema::check_schema(parameters).map_err(|v| v.to_string())?;
        Ok(Self {
            name,
            label,
            description,
            parameters: parameters.clone(),
            annotations: o.get("annotations").map(read_annotations),
            output: o.get("output").filter(|s| usable_output_schema(s)).cloned(),
        })
    }

    pub fn read_only(&self) -> bool {
        self.annotations
            .as_ref()
            .and_then(|a| a.read_only_hint)
            .unwrap_or(false)
    }

    pub fn destructive(&self) -> bool {
        self.annotations
            .as_ref()
            .and_then(|a| a.destructive_hint)
            .unwrap_or(false)
    }

    /// Whether the tool may reach the open world (fetch a URL, post somewhere): true unless
    /// the provider says `openWorldHint: false`. Arguments of such a tool can carry what the
    /// model read to any site, whatever else the tool claims.
    pub fn open_world(&self) -> bool {
        self.annotations
            .as_ref()
            .and_then(|a| a.open_world_hint)
            .unwrap_or(true)
    }
}

/// An output schema is kept only when Tandem's checker understands it and it is of a
/// reasonable size; otherwise results are simply not checked (the tool is not refused for it).
fn usable_output_schema(schema: &Value) -> bool {
    schema.is_object()
        && schema::json_depth(schema, schema::MAX_SCHEMA_DEPTH * 2) <= schema::MAX_SCHEMA_DEPTH * 2
        && schema.to_string().len() <= MAX_SCHEMA_BYTES
        && schema::check_schema(schema).is_ok()
}

/// Hints of the wrong type count as absent: an absent hint only ever makes Tandem ask more.
fn read_annotations(v: &Value) -> Annotations {
    let hint = |key: &str| v.get(key).and_then(Value::as_bool);
    Annotations {
        read_only_hint: hint("readOnlyHint"),
        destructive_hint: hint("destructiveHint"),
        open_world_hint: hint("openWorldHint"),
    }
}

/// `^[A-Za-z0-9_.-]{1,64}$`, with a sentence for each way of missing it.
pub fn check_name(name: &str) -> Result<(), String> {
    check_name_within(name, MAX_NAME_CHARS)
}

/// [`check_name`] with names up to `max` characters.
pub fn check_name_within(name: &str, max: usize) -> Result<(), String> {
    if name.is_empty() {
        return Err("the name is empty".into());
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
    {
        return Err("a name may only hold letters, digits, '.', '_' and '-'".into());
    }
    if name.len() > max {
        return Err(format!("a name may be at most {max} characters long"));
    }
    Ok(())
}

/// A message a provider sent, once read and bounded.
#[derive(Clone, Debug, PartialEq)]
pub enum Incoming {
    RegisterTools(Vec<ToolDescriptor>),
    UnregisterTools,
}

/// Why a provider's message is refused; the text goes back to it as `{ok:false, error}`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    #[error("the message is not a JSON object")]
    NotAnObject,
    #[error("the message has no \"type\" string")]
    NoType,
    #[error(
        "the message type {0:?} is not one Tandem accepts (REGISTER_TOOLS or UNREGISTER_TOOLS)"
    )]
    UnknownType(String),
    #[error("REGISTER_TOOLS needs \"tools\", a list of tool descriptors")]
    NoTools,
    #[error("REGISTER_TOOLS holds {0} tools; one extension may register at most 64")]
    TooManyTools(usize),
    /// `tool` reads `tool 3 ("tab open")`: the position counted from 1, and the name when
    /// there is one.
    #[error("{tool}: {problem}")]
    BadTool { tool: String, problem: String },
    #[error("{tool}: the name is already used by tool {first}; each name may be registered once")]
    DuplicateName { tool: String, first: usize },
}

/// Reads a message from another extension. Unknown fields are ignored (a newer provider may
/// send more); everything read is bounded.
pub fn parse_incoming(json: &Value) -> Result<Incoming, ProtocolError> {
    let o = json.as_object().ok_or(ProtocolError::NotAnObject)?;
    let kind = o
        .get("type")
        .and_then(Value::as_str)
        .ok_or(ProtocolError::NoType)?;
    match kind {
        "REGISTER_TOOLS" => {}
        "UNREGISTER_TOOLS" => return Ok(Incoming::UnregisterTools),
        other => return Err(ProtocolError::UnknownType(clip(other, 64))),
    }
    let list = o
        .get("tools")
        .and_then(Value::as_array)
        .ok_or(ProtocolError::NoTools)?;
    if list.len() > MAX_TOOLS {
        return Err(ProtocolError::TooManyTools(list.len()));
    }
    let mut tools: Vec<ToolDescriptor> = Vec::with_capacity(list.len());
    for (i, v) in list.iter().enumerate() {
        let position = i + 1;
        let tool = ToolDescriptor::from_value(v).map_err(|problem| ProtocolError::BadTool {
            tool: tool_ref(position, v.get("name").and_then(Value::as_str)),
            problem,
        })?;
        if let Some(first) = tools.iter().position(|t| t.name == tool.name) {
            return Err(ProtocolError::DuplicateName {
                tool: tool_ref(position, Some(&tool.name)),
                first: first + 1,
            });
        }
        tools.push(tool);
    }
    Ok(Incoming::RegisterTools(tools))
}

/// `tool 3 ("tab open")`, or `tool 3` without a name.
fn tool_ref(position: usize, name: Option<&str>) -> String {
    match name {
        Some(name) => format!("tool {position} ({:?})", clip(name, 64)),
        None => format!("tool {position}"),
    }
}

/// At most `max` characters of `text`, with "…" when cut.
pub(crate) fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// Tandem's answer to a provider's message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// `{ok:true, registered:[names]}` (also the answer to UNREGISTER_TOOLS, with no names:
    /// what the provider has registered now).
    Registered(Vec<String>),
    /// `{ok:false, error}`.
    Refused(String),
}

impl Answer {
    pub fn registered(names: Vec<String>) -> Self {
        Answer::Registered(names)
    }

    pub fn refused(error: impl Into<String>) -> Self {
        Answer::Refused(error.into())
    }

    pub fn to_json(&self) -> Value {
        match self {
            Answer::Registered(names) => json!({"ok": true, "registered": names}),
            Answer::Refused(error) => json!({"ok": false, "error": error}),
        }
    }
}

impl From<ProtocolError> for Answer {
    fn from(e: ProtocolError) -> Self {
        Answer::Refused(e.to_string())
    }
}

impl Serialize for Answer {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}

/// A message Tandem sends to a provider.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Outgoing {
    ToolExecute {
        #[serde(rename = "toolName")]
        tool_name: String,
        params: Value,
        #[serde(rename = "toolCallId")]
        tool_call_id: String,
    },
    OrchestratorReady,
}

impl Outgoing {
    pub fn tool_execute(
        tool_name: impl Into<String>,
        params: Value,
        tool_call_id: impl Into<String>,
    ) -> Self {
        Outgoing::ToolExecute {
            tool_name: tool_name.into(),
            params,
            tool_call_id: tool_call_id.into(),
        }
    }

    /// The JSON to send (the same as serde's, built without a fallible step).
    pub fn to_json(&self) -> Value {
        match self {
            Outgoing::ToolExecute {
                tool_name,
                params,
                tool_call_id,
            } => json!({
                "type": "TOOL_EXECUTE",
                "toolName": tool_name,
                "params": params,
                "toolCallId": tool_call_id,
            }),
            Outgoing::OrchestratorReady => json!({"type": "ORCHESTRATOR_READY"}),
        }
    }
}

/// One item of a result's `content`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResultItem {
    Text(String),
    /// Content the model is not given (audio, an image that failed its checks…), by its
    /// `type`.
    Omitted(String),
    /// An image that passed [`ToolImage::read`]: it goes to the model beside the text.
    Image(ToolImage),
}

impl ResultItem {
    /// `[image omitted]` for what is not text; `[image: PNG, 40 KB]` where an image stands.
    pub fn as_text(&self) -> String {
        match self {
            ResultItem::Text(t) => t.clone(),
            ResultItem::Omitted(kind) => format!("[{kind} omitted]"),
            ResultItem::Image(i) => format!("[image: {}]", i.describe()),
        }
    }
}

/// A provider's answer to TOOL_EXECUTE, read leniently.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolResult {
    pub content: Vec<ResultItem>,
    /// For people (a UI may show it), never for the model.
    pub details: Option<Value>,
    /// The provider's error, when it reports one.
    pub error: Option<String>,
}

impl ToolResult {
    /// The content as one text, items separated by newlines.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .map(ResultItem::as_text)
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The images passed on, as data: URLs, at most [`MAX_IMAGES_PER_RESULT`] (a result's
    /// later images stay as their `[image: …]` line only).
    pub fn images(&self) -> Vec<String> {
        self.content
            .iter()
            .filter_map(|i| match i {
                ResultItem::Image(i) => Some(i.data_url()),
                _ => None,
            })
            .take(MAX_IMAGES_PER_RESULT)
            .collect()
    }
}

/// Reads a provider's ToolResult. Lenient, so it cannot fail: unknown fields are ignored, a
/// missing `content` is empty, a bare string is one text item, items of another `type` are
/// named (`[image omitted]`), and an answer that is none of these becomes an error.
pub fn parse_tool_result(v: &Value) -> ToolResult {
    let o = match v {
        Value::Object(o) => o,
        Value::String(s) => {
            return ToolResult {
                content: vec![ResultItem::Text(s.clone())],
                ..ToolResult::default()
            }
        }
        Value::Null => {
            return ToolResult {
                error: Some("the provider answered nothing".into()),
                ..ToolResult::default()
            }
        }
        other => {
            return ToolResult {
                error: Some(format!(
                    "the provider answered with a JSON {} instead of a result",
                    kind_of(other)
                )),
                ..ToolResult::default()
            }
        }
    };
    let content = match o.get("content") {
        Some(Value::Array(items)) => items.iter().map(read_item).collect(),
        Some(Value::String(s)) => vec![ResultItem::Text(s.clone())],
        _ => Vec::new(),
    };
    ToolResult {
        content,
        details: o.get("details").filter(|d| !d.is_null()).cloned(),
        error: read_error(o),
    }
}

fn read_item(item: &Value) -> ResultItem {
    let kind = item.get("type").and_then(Value::as_str);
    if kind == Some("image") {
        let field = |k: &str| item.get(k).and_then(Value::as_str);
        if let (Some(mime), Some(data)) = (field("mimeType"), field("data")) {
            if let Ok(image) = ToolImage::read(mime, data) {
                return ResultItem::Image(image);
            }
        }
    }
    match (kind, item.get("text")) {
        (Some("text") | None, Some(Value::String(t))) => ResultItem::Text(t.clone()),
        (Some("text"), Some(other)) => ResultItem::Text(other.to_string()),
        (Some("text"), None) => ResultItem::Text(String::new()),
        (Some(kind), _) => {
            // The type is the provider's text: keep it short and plain.
            let kind: String = kind
                .chars()
                .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '/'))
                .take(32)
                .collect();
            ResultItem::Omitted(if kind.is_empty() {
                "content".into()
            } else {
                kind
            })
        }
        (None, _) => ResultItem::Omitted("content".into()),
    }
}

/// `error` as a string, `{message}`, or `true`; `isError: true` (the MCP spelling) too.
fn read_error(o: &Map<String, Value>) -> Option<String> {
    match o.get("error") {
        Some(Value::String(s)) if !s.trim().is_empty() => return Some(s.clone()),
        Some(Value::Object(e)) => {
            return Some(match e.get("message").and_then(Value::as_str) {
                Some(m) => m.to_string(),
                None => clip(&Value::Object(e.clone()).to_string(), 500),
            })
        }
        Some(Value::Bool(true)) => return Some("the tool reported an error".into()),
        _ => {}
    }
    (o.get("isError") == Some(&Value::Bool(true))).then(|| "the tool reported an error".into())
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str) -> Value {
        json!({
            "name": name, "label": "Open tab", "description": "Opens a tab.",
            "parameters": {"type": "object", "properties": {"url": {"type": "string"}}},
            "annotations": {"readOnlyHint": false}
        })
    }

    fn register(tools: Vec<Value>) -> Value {
        json!({"type": "REGISTER_TOOLS", "tools": tools})
    }

    fn refusal(v: &Value) -> String {
        parse_incoming(v).unwrap_err().to_string()
    }

    #[test]
    fn a_registration_is_read_with_its_hints() {
        let mut extra = tool("tab.list");
        extra["annotations"] = json!({"readOnlyHint": true, "destructiveHint": "no", "x": 1});
        extra["icon"] = json!("ignored");
        let Ok(Incoming::RegisterTools(tools)) =
            parse_incoming(&register(vec![tool("tab.open"), extra]))
        else {
            panic!("refused");
        };
        assert_eq!(tools.len(), 2);
        assert_eq!(tools[0].name, "tab.open");
        assert!(!tools[0].read_only());
        assert!(tools[1].read_only());
        assert!(
            !tools[1].destructive(),
            "a hint of the wrong type is absent"
        );
        assert_eq!(
            parse_incoming(&json!({"type": "UNREGISTER_TOOLS", "why": 1})),
            Ok(Incoming::UnregisterTools)
        );
    }

    #[test]
    fn every_refusal_is_a_sentence_naming_the_problem() {
        let t = |f: &dyn Fn(&mut Value)| {
            let mut v = tool("tab.open");
            f(&mut v);
            refusal(&register(vec![tool("tab.list"), tool("tab.close"), v]))
        };
        assert_eq!(
            t(&|v| v["name"] = json!("tab open")),
            "tool 3 (\"tab open\"): a name may only hold letters, digits, '.', '_' and '-'"
        );
        assert_eq!(
            t(&|v| v["name"] = json!("x".repeat(65))),
            format!(
                "tool 3 (\"{}…\"): a name may be at most 64 characters long",
                "x".repeat(63)
            )
        );
        assert_eq!(
            t(&|v| v["name"] = json!("")),
            "tool 3 (\"\"): the name is empty"
        );
        assert_eq!(
            t(&|v| v["name"] = json!(7)),
            "tool 3: it has no \"name\" string"
        );
        assert_eq!(
            t(&|v| v["description"] = json!("d".repeat(2001))),
            "tool 3 (\"tab.open\"): a description may be at most 2,000 characters long (this one has 2001)"
        );
        assert_eq!(
            t(&|v| v["label"] = json!("  ")),
            "tool 3 (\"tab.open\"): the label is empty"
        );
        assert_eq!(
            t(&|v| v["parameters"] = json!({"type": "string"})),
            "tool 3 (\"tab.open\"): parameters: must be a JSON Schema object with \"type\": \"object\" (tool arguments are always an object)"
        );
        assert_eq!(
            t(&|v| {
                v.as_object_mut().unwrap().remove("parameters");
            }),
            "tool 3 (\"tab.open\"): it has no \"parameters\" schema"
        );
        let big: Map<String, Value> = (0..2000)
            .map(|i| (format!("p{i}"), json!({"type": "string"})))
            .collect();
        assert!(
            t(&|v| v["parameters"] = json!({"type": "object", "properties": big}))
                .starts_with("tool 3 (\"tab.open\"): the parameters schema is ")
        );
        assert_eq!(
            refusal(&register(vec![tool("a"), tool("b"), tool("a")])),
            "tool 3 (\"a\"): the name is already used by tool 1; each name may be registered once"
        );
        assert_eq!(
            refusal(&register((0..65).map(|i| tool(&format!("t{i}"))).collect())),
            "REGISTER_TOOLS holds 65 tools; one extension may register at most 64"
        );
        assert_eq!(refusal(&json!([1])), "the message is not a JSON object");
        assert_eq!(
            refusal(&json!({"tools": []})),
            "the message has no \"type\" string"
        );
        assert_eq!(
            refusal(&json!({"type": "HELLO"})),
            "the message type \"HELLO\" is not one Tandem accepts (REGISTER_TOOLS or UNREGISTER_TOOLS)"
        );
        assert_eq!(
            refusal(&json!({"type": "REGISTER_TOOLS", "tools": {}})),
            "REGISTER_TOOLS needs \"tools\", a list of tool descriptors"
        );
        assert_eq!(
            refusal(&register(vec![json!("tab.open")])),
            "tool 1: a tool must be an object"
        );
    }

    #[test]
    fn answers_and_outgoing_messages_have_the_exact_protocol_shape() {
        assert_eq!(
            serde_json::to_value(Answer::registered(vec!["a".into(), "b".into()])).unwrap(),
            json!({"ok": true, "registered": ["a", "b"]})
        );
        assert_eq!(
            serde_json::to_value(Answer::refused("no")).unwrap(),
            json!({"ok": false, "error": "no"})
        );
        assert_eq!(
            Answer::from(ProtocolError::NoType).to_json(),
            json!({"ok": false, "error": "the message has no \"type\" string"})
        );
        let exec = Outgoing::tool_execute("tab.open", json!({"url": "https://a"}), "call_1");
        let want = json!({"type": "TOOL_EXECUTE", "toolName": "tab.open",
            "params": {"url": "https://a"}, "toolCallId": "call_1"});
        assert_eq!(exec.to_json(), want);
        assert_eq!(serde_json::to_value(&exec).unwrap(), want);
        let ready = json!({"type": "ORCHESTRATOR_READY"});
        assert_eq!(Outgoing::OrchestratorReady.to_json(), ready);
        assert_eq!(
            serde_json::to_value(Outgoing::OrchestratorReady).unwrap(),
            ready
        );
    }

    #[test]
    fn results_are_read_leniently() {
        let r = parse_tool_result(&json!({
            "content": [
                {"type": "text", "text": "Opened."},
                {"type": "image", "data": "…", "mimeType": "image/png"},
                {"type": "text", "text": 42},
                {"text": "typeless"},
                {"type": "<b>weird</b>"},
                7
            ],
            "details": {"tabId": 3},
            "extra": true
        }));
        assert_eq!(
            r.text(),
            "Opened.\n[image omitted]\n42\ntypeless\n[bweird/b omitted]\n[content omitted]"
        );
        assert_eq!(r.details, Some(json!({"tabId": 3})));
        assert_eq!(r.error, None);

        assert_eq!(parse_tool_result(&json!({})), ToolResult::default());
        assert_eq!(parse_tool_result(&json!("done")).text(), "done");
        for (v, error) in [
            (json!({"error": "No such tab."}), "No such tab."),
            (json!({"error": {"message": "Boom", "code": 1}}), "Boom"),
            (json!({"error": true}), "the tool reported an error"),
            (
                json!({"isError": true, "content": []}),
                "the tool reported an error",
            ),
            (json!(null), "the provider answered nothing"),
            (
                json!(3),
                "the provider answered with a JSON number instead of a result",
            ),
        ] {
            assert_eq!(parse_tool_result(&v).error.as_deref(), Some(error), "{v}");
        }
        assert_eq!(parse_tool_result(&json!({"error": ""})).error, None);
    }
}
