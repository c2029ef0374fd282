//! Structured output for agent steps: the step's JSON Schema asked for in each provider's own
//! form (the adapters write it), and the ladder an OpenAI-compatible server that refuses it
//! steps down.
//!
//! - OpenAI and OpenAI-compatible: `response_format: {type: "json_schema", json_schema: {name,
//!   strict: true, schema}}` with [`strict`]'s form of the schema; then `{type:
//!   "json_object"}`; then nothing (JSON asked for in the prompt, as the instructions always do).
//! - Anthropic: the step as a tool the model must call (`tool_choice: {type: "tool", name}`);
//!   the call's input is the reply ([`reply_of_call`]).
//! - Gemini and Firebase: `responseMimeType: "application/json"` with `responseJsonSchema`.
//! - Ollama: `format` with the schema.
//! - Gemini Nano keeps its `responseConstraint` (the session's Nano path, not here).
//!
//! A navigator step of a task with tools also offers them in the request's `tools` field, so
//! the model may answer with a native tool call instead of the step's JSON
//! ([`OutputSchema::calls`]); a planner step declares them only (the history may hold calls,
//! which some providers refuse without the declarations) and may not call them:
//! - OpenAI-compatible: `response_format` as above beside `tools` (`tool_choice` `auto`, or
//!   `none` for the planner).
//! - Anthropic: the step tool beside the real tools, `tool_choice: {type: "any"}` (one call,
//!   `disable_parallel_tool_use`), or the step tool forced for the planner.
//! - Gemini and Firebase: Gemini 2.x refuses `functionDeclarations` together with
//!   `responseMimeType: "application/json"` (only Gemini 3 takes both), so with tools the
//!   step is a function declaration too (`parametersJsonSchema`), and
//!   `toolConfig.functionCallingConfig.mode: "ANY"` makes the model call it or a real tool
//!   (`allowedFunctionNames` the step alone for the planner): Anthropic's way, which every
//!   Gemini model with function calling takes.
//! - Ollama: `format` constrains the whole reply to the schema, so a model under it can
//!   never call a tool: a navigator step with tools goes without `format` (JSON asked in the
//!   prompt, read leniently); the planner keeps `format`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::errors::{ErrorKind, ProviderError};
use crate::i18n::{nested, Mark, Msg};
use crate::provider::ProviderKind;

/// How a request asks for its structured reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputMode {
    /// The provider's constrained decoding to the schema.
    JsonSchema,
    /// Any JSON object (OpenAI-compatible `json_object`).
    JsonObject,
    /// JSON asked for in the prompt only.
    Prose,
}

impl OutputMode {
    /// The next rung down, for a server that refused this one.
    pub fn fallback(self) -> Option<OutputMode> {
        match self {
            OutputMode::JsonSchema => Some(OutputMode::JsonObject),
            OutputMode::JsonObject => Some(OutputMode::Prose),
            OutputMode::Prose => None,
        }
    }

    /// What the Debug drawer says.
    pub fn label(self) -> &'static str {
        match self {
            OutputMode::JsonSchema => "json_schema",
            OutputMode::JsonObject => "json_object",
            OutputMode::Prose => "prose JSON",
        }
    }
}

/// The structured reply a request asks for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutputSchema {
    /// `[A-Za-z0-9_-]{1,64}`: OpenAI's schema name, Anthropic's tool name.
    pub name: String,
    /// The step's JSON Schema as Tandem writes it (optional fields may be absent).
    pub schema: Value,
    pub mode: OutputMode,
    /// Whether the request's `tools` may be called in place of the reply (a navigator step
    /// of a task with tools); false when they are only declared (a planner step).
    #[serde(default)]
    pub calls: bool,
}

/// How one step's reply was asked for and came back, as its Debug details say it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepMode {
    /// The step's reply under `rung` (on Anthropic, and on Gemini with tools, a forced tool
    /// call); `tools` when the task's tools were offered natively beside it.
    Reply { form: ReplyForm, tools: bool },
    /// The model called one of the task's tools through the provider's tools field.
    NativeCall,
}

/// The form a step's own reply took on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplyForm {
    Rung(OutputMode),
    /// A tool (Anthropic) or function (Gemini with tools) the model had to call, its input
    /// being the reply.
    ForcedTool,
}

impl StepMode {
    /// The mode a step's request asked for on `kind` at the ladder's `rung`, with the task's
    /// tools offered (`tools`) or not. The adapters write exactly this (tested beside them).
    pub fn asked(kind: ProviderKind, rung: OutputMode, tools: bool, calls: bool) -> StepMode {
        let form = match (kind, rung) {
            (_, OutputMode::JsonObject | OutputMode::Prose) => ReplyForm::Rung(rung),
            (ProviderKind::Anthropic, _) => ReplyForm::ForcedTool,
            (ProviderKind::Gemini | ProviderKind::Firebase, _) if tools => ReplyForm::ForcedTool,
            (ProviderKind::Ollama, _) if tools && calls => ReplyForm::Rung(OutputMode::Prose),
            _ => ReplyForm::Rung(rung),
        };
        StepMode::Reply { form, tools }
    }

    /// The short form kept with the step (`StepRecord.output`): `json_schema`,
    /// `json_object`, `prose JSON`, `forced tool`, each with ` + tools` when the task's
    /// tools were offered, or `native tool call`.
    pub fn label(self) -> String {
        match self {
            StepMode::NativeCall => "native tool call".into(),
            StepMode::Reply { form, tools } => {
                let base = match form {
                    ReplyForm::Rung(m) => m.label(),
                    ReplyForm::ForcedTool => "forced tool",
                };
                match tools {
                    true => format!("{base} + tools"),
                    false => base.into(),
                }
            }
        }
    }
}

/// The sentence the step's Debug details show for a stored `label` ([`StepMode::label`]).
pub fn mode_sentence(label: &str) -> String {
    mode_message(label).english()
}

/// [`mode_sentence`] as a catalog message; a label it does not know is shown as it is.
pub fn mode_message(label: &str) -> Msg {
    let (base, tools) = match label.strip_suffix(" + tools") {
        Some(base) => (base, true),
        None => (label, false),
    };
    let how = match base {
        "native tool call" => return Msg::key("outputModeNative"),
        "json_schema" => Msg::key("modeJsonSchema"),
        "json_object" => Msg::key("modeJsonObject"),
        "prose JSON" => Msg::key("modeProseJson"),
        "forced tool" => Msg::key("modeForcedTool"),
        other => Msg::literal(other),
    };
    let key = if tools {
        "outputModeTools"
    } else {
        "outputMode"
    };
    Msg::new(key, vec![nested(Mark::Plain, how)])
}

/// Whether a provider has a ladder to step down: only OpenAI-compatible servers differ in
/// what they accept (LM Studio, older vLLM or llama.cpp servers, proxies).
pub fn has_ladder(kind: ProviderKind) -> bool {
    matches!(kind, ProviderKind::OpenAi | ProviderKind::OpenAiCompatible)
}

/// Whether `error` is a server refusing the structured-output request itself (a 400 naming
/// `response_format` or `json_schema`, see [`crate::errors::classify_http`]).
pub fn refused(error: &ProviderError) -> bool {
    error.kind == ErrorKind::OutputFormatRefused
}

/// `schema` as OpenAI's strict mode takes it: every object closed (`additionalProperties:
/// false`) with every property required, a property that was optional made nullable (its
/// type gains `"null"`, its `enum` gains `null`), and keywords strict mode refuses
/// (`default`) left out. An object with no properties of its own (a tool's free-form
/// arguments) cannot be closed, so it becomes a string holding the JSON object, which the
/// action reader accepts. A pure transform: the same schema gives the same result.
pub fn strict(schema: &Value) -> Value {
    strict_node(schema, true)
}

fn strict_node(node: &Value, required: bool) -> Value {
    let Some(obj) = node.as_object() else {
        return node.clone();
    };
    let is_object = obj.get("type").and_then(Value::as_str) == Some("object");
    let properties = obj.get("properties").and_then(Value::as_object);
    let mut out = Map::new();
    if is_object && properties.is_none_or(Map::is_empty) {
        out.insert("type".into(), Value::from("string"));
        let what = obj
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("A JSON object");
        out.insert(
            "description".into(),
            Value::from(format!("{what} Written as a JSON object in a string.")),
        );
        return nullable(out, required);
    }
    for (key, value) in obj {
        match key.as_str() {
            "default" | "additionalProperties" | "required" | "properties" => {}
            "items" => {
                out.insert(key.clone(), strict_node(value, true));
            }
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    if let Some(props) = properties {
        let listed: Vec<&str> = obj
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut strict_props = Map::new();
        for (name, prop) in props {
            strict_props.insert(
                name.clone(),
                strict_node(prop, listed.contains(&name.as_str())),
            );
        }
        out.insert(
            "required".into(),
            Value::Array(props.keys().map(|k| Value::from(k.as_str())).collect()),
        );
        out.insert("properties".into(), Value::Object(strict_props));
        out.insert("additionalProperties".into(), Value::Bool(false));
    }
    nullable(out, required)
}

/// An optional property as strict mode writes it: `null` is one of its values.
fn nullable(mut node: Map<String, Value>, required: bool) -> Value {
    if !required {
        match node.get_mut("type") {
            Some(Value::String(t)) => {
                let t = std::mem::take(t);
                node.insert("type".into(), Value::from(vec![t, "null".to_string()]));
            }
            Some(Value::Array(ts)) if !ts.iter().any(|t| t == "null") => {
                ts.push(Value::from("null"));
            }
            _ => {}
        }
        if let Some(Value::Array(values)) = node.get_mut("enum") {
            if !values.contains(&Value::Null) {
                values.push(Value::Null);
            }
        }
    }
    Value::Object(node)
}

/// A reply written under [`strict`]'s schema, with the `null`s strict mode makes the model
/// write for unused optional fields left out again (the readers treat a present field as set).
/// Anything that is not a JSON object is returned as it is, for the readers to judge.
pub fn without_nulls(reply: &str) -> String {
    match crate::json::from_str::<Value>(reply.trim()) {
        Ok(Value::Object(mut map)) => {
            map.retain(|_, v| !v.is_null());
            Value::Object(map).to_string()
        }
        _ => reply.to_string(),
    }
}

/// The reply carried by a forced tool call (Anthropic): the call's input as JSON text.
pub fn reply_of_call(arguments: &Value) -> String {
    match arguments {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strict_form_requires_every_property_and_makes_optional_ones_nullable() {
        let schema = json!({
            "type": "object",
            "description": "An action.",
            "properties": {
                "action": {"type": "string", "enum": ["click", "tool"]},
                "element": {"type": "integer", "minimum": 0},
                "direction": {"type": "string", "enum": ["up", "down"]},
                "complete": {"type": "boolean", "default": false},
                "arguments": {"type": "object", "additionalProperties": true, "description": "tool: its arguments."}
            },
            "required": ["action"]
        });
        let s = strict(&schema);
        assert_eq!(s["additionalProperties"], json!(false));
        assert_eq!(
            s["required"],
            json!(["action", "arguments", "complete", "direction", "element"])
        );
        assert_eq!(
            s["properties"]["action"],
            json!({"type": "string", "enum": ["click", "tool"]})
        );
        assert_eq!(
            s["properties"]["element"]["type"],
            json!(["integer", "null"])
        );
        assert_eq!(
            s["properties"]["direction"]["enum"],
            json!(["up", "down", null])
        );
        assert!(s["properties"]["complete"].get("default").is_none());
        assert_eq!(
            s["properties"]["arguments"]["type"],
            json!(["string", "null"])
        );
        // Pure: the same input, the same output, and the input is untouched.
        assert_eq!(strict(&schema), s);
        assert_eq!(schema["required"], json!(["action"]));
    }

    #[test]
    fn the_agents_own_schemas_become_strict_everywhere() {
        fn closed(v: &Value) {
            if let Some(o) = v.as_object() {
                if let Some(props) = o.get("properties").and_then(Value::as_object) {
                    assert_eq!(o["additionalProperties"], json!(false), "{v}");
                    let req: Vec<&str> = o["required"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .filter_map(Value::as_str)
                        .collect();
                    assert_eq!(req.len(), props.len(), "{v}");
                    props.values().for_each(closed);
                }
                assert!(o.get("default").is_none(), "{v}");
            }
        }
        for schema in [
            crate::agent::task::planner_schema().json().clone(),
            crate::agent::task::navigator_schema().json().clone(),
            crate::agent::actions::action_schema_with_tools(&["t__a".into()]),
        ] {
            closed(&strict(&schema));
        }
    }

    #[test]
    fn nulls_of_unused_fields_are_left_out_of_the_reply() {
        assert_eq!(
            without_nulls(r#"{"action":"click","element":3,"text":null,"url":null}"#),
            r#"{"action":"click","element":3}"#
        );
        assert_eq!(without_nulls("not json"), "not json");
    }

    #[test]
    fn each_step_mode_has_a_label_and_a_sentence() {
        use ProviderKind::*;
        let cases = [
            (OpenAi, OutputMode::JsonSchema, false, false, "json_schema"),
            (
                OpenAi,
                OutputMode::JsonSchema,
                true,
                true,
                "json_schema + tools",
            ),
            (
                OpenAiCompatible,
                OutputMode::Prose,
                true,
                true,
                "prose JSON + tools",
            ),
            (
                Anthropic,
                OutputMode::JsonSchema,
                false,
                false,
                "forced tool",
            ),
            (
                Anthropic,
                OutputMode::JsonSchema,
                true,
                true,
                "forced tool + tools",
            ),
            (Gemini, OutputMode::JsonSchema, false, false, "json_schema"),
            (
                Gemini,
                OutputMode::JsonSchema,
                true,
                false,
                "forced tool + tools",
            ),
            (
                Firebase,
                OutputMode::JsonSchema,
                true,
                true,
                "forced tool + tools",
            ),
            (
                Ollama,
                OutputMode::JsonSchema,
                true,
                true,
                "prose JSON + tools",
            ),
            (
                Ollama,
                OutputMode::JsonSchema,
                true,
                false,
                "json_schema + tools",
            ),
        ];
        for (kind, rung, tools, calls, want) in cases {
            assert_eq!(
                StepMode::asked(kind, rung, tools, calls).label(),
                want,
                "{kind:?}"
            );
        }
        assert_eq!(StepMode::NativeCall.label(), "native tool call");
        assert_eq!(
            mode_sentence("forced tool + tools"),
            "Output mode: forced tool (the reply was the input of a tool call the model had to make), with the task's tools offered in the tools field."
        );
        assert_eq!(
            mode_sentence("native tool call"),
            "Output mode: native tool call (the model called the tool through the provider's tools field)."
        );
        assert_eq!(
            mode_sentence("prose JSON"),
            "Output mode: prose JSON (JSON asked for in the prompt only, read leniently)."
        );
    }

    #[test]
    fn the_ladder_goes_down_once_per_rung() {
        let mut mode = OutputMode::JsonSchema;
        let mut seen = vec![mode.label()];
        while let Some(next) = mode.fallback() {
            mode = next;
            seen.push(mode.label());
        }
        assert_eq!(seen, ["json_schema", "json_object", "prose JSON"]);
    }
}
