//! The messages between a tool provider and Tandem, as plain data. Nothing here touches
//! `chrome.*`, so every shape and every routing decision is tested natively.
//!
//! Tandem reads the same messages with its own types (`tandem-core`'s `tools::protocol`), and
//! [`ToolDescriptor`] and [`Annotations`] look like copies of them. They stay copies on
//! purpose: this crate is what a provider's author depends on or copies, so it must build
//! without Tandem's core (its budget, sessions, adapters) and must not change when Tandem's
//! internal types do (core's descriptor carries an `output` schema and the bounds it checks).
//! What ties the two together is the wire format, fixed in the protocol's description and
//! exercised end to end by the example provider (`examples/tabs`, built by `scripts/build`
//! and registered with Tandem in the e2e tests).

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// Tandem's extension id. Tandem's manifest pins it with a `key`, so every install (the
/// store's and an unpacked one) has it.
pub const TANDEM_ID: &str = "bkkhgefimkkanagkjaoehnjcmpolnojf";

/// One tool as Tandem's model sees it: `REGISTER_TOOLS` carries a list of these.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolDescriptor {
    pub name: String,
    pub label: String,
    pub description: String,
    /// A JSON Schema object describing the `params` of a `TOOL_EXECUTE`.
    pub parameters: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
}

/// Hints Tandem uses to decide how careful to be (a destructive tool asks the user first).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// `false`: the tool never reaches the open world (no web request, no message to
    /// anyone). Absent counts as "it may", and Tandem then asks before every call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

/// What a provider sends to Tandem.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ProviderMessage {
    RegisterTools {
        /// The provider's name, shown to the user beside its extension id (optional in the
        /// protocol; Tandem shows the id alone without it).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        tools: Vec<ToolDescriptor>,
    },
    UnregisterTools,
}

/// Tandem's answer to `REGISTER_TOOLS` (and `UNREGISTER_TOOLS`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegisterAnswer {
    /// `{ok: true, registered: [names]}`.
    Registered(Vec<String>),
    /// `{ok: false, error}`: Tandem answered but did not take the tools (yet). The usual
    /// reason is a first registration waiting for the user's approval.
    Refused(String),
}

impl RegisterAnswer {
    /// Reads Tandem's answer. `None` when the value is not an answer at all, which the
    /// caller must tell apart from a refusal: only a real answer stops the retries.
    pub fn parse(value: &Value) -> Option<Self> {
        match value.get("ok")?.as_bool()? {
            true => {
                let registered = value
                    .get("registered")
                    .and_then(Value::as_array)
                    .map(|names| {
                        names
                            .iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect()
                    })
                    .unwrap_or_default();
                Some(Self::Registered(registered))
            }
            false => {
                let error = value
                    .get("error")
                    .and_then(Value::as_str)
                    .unwrap_or("Tandem refused the tools without saying why")
                    .to_owned();
                Some(Self::Refused(error))
            }
        }
    }
}

/// A `TOOL_EXECUTE` from Tandem.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    pub tool_name: String,
    /// Always a JSON value; a missing or `null` `params` reads as `{}` so a tool whose
    /// parameters are all optional still deserialises.
    pub params: Value,
    pub tool_call_id: String,
}

/// The answer to a `TOOL_EXECUTE`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    pub content: Vec<Content>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One piece of a result's content. Text is the only kind the protocol has.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Content {
    Text { text: String },
}

impl ToolResult {
    /// A successful result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            content: vec![Content::Text { text: text.into() }],
            details: None,
            error: None,
        }
    }

    /// A failed result. The message is also the text content, so a model that reads only
    /// `content` still learns what went wrong.
    pub fn error(message: impl Into<String>) -> Self {
        let message = message.into();
        Self {
            content: vec![Content::Text {
                text: format!("Error: {message}"),
            }],
            details: None,
            error: Some(message),
        }
    }

    /// Adds machine-readable details (for Tandem, not for the model's prose).
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    pub fn to_json(&self) -> Value {
        // A struct of strings and JSON values always serialises; `Null` is unreachable.
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl From<String> for ToolResult {
    fn from(text: String) -> Self {
        Self::text(text)
    }
}

impl From<&str> for ToolResult {
    fn from(text: &str) -> Self {
        Self::text(text)
    }
}

/// What to do with a message that reached `runtime.onMessageExternal`.
#[derive(Clone, Debug, PartialEq)]
pub enum Route {
    /// Not from Tandem: answered with [`refusal`], never acted on.
    Refuse,
    /// `ORCHESTRATOR_READY`: Tandem (re)started or the user approved us; register again.
    Reregister,
    /// `TOOL_EXECUTE`: run the tool.
    Execute(ToolCall),
    /// From Tandem but not understood: answered with a `ToolResult` error.
    Invalid(String),
}

/// Decides what a message is. The sender check comes first and covers every type: another
/// extension must not run tools (they act with this extension's permissions) nor trigger
/// registrations.
pub fn route(message: &Value, sender_id: Option<&str>, orchestrator: &str) -> Route {
    if sender_id != Some(orchestrator) {
        return Route::Refuse;
    }
    match message.get("type").and_then(Value::as_str) {
        Some("ORCHESTRATOR_READY") => Route::Reregister,
        Some("TOOL_EXECUTE") => {
            let Some(tool_name) = message.get("toolName").and_then(Value::as_str) else {
                return Route::Invalid("TOOL_EXECUTE without a toolName".into());
            };
            let params = match message.get("params") {
                None | Some(Value::Null) => json!({}),
                Some(params) => params.clone(),
            };
            // The id is Tandem's bookkeeping; a number is accepted as well as a string.
            let tool_call_id = match message.get("toolCallId") {
                Some(Value::String(id)) => id.clone(),
                Some(Value::Number(id)) => id.to_string(),
                _ => String::new(),
            };
            Route::Execute(ToolCall {
                tool_name: tool_name.to_owned(),
                params,
                tool_call_id,
            })
        }
        Some(other) => Route::Invalid(format!("unknown message type {other:?}")),
        None => Route::Invalid("a message without a type".into()),
    }
}

/// The answer to a message refused by [`route`]: it says why, and nothing about the tools.
pub fn refusal() -> Value {
    json!({
        "ok": false,
        "error": "this tool provider accepts messages only from its orchestrator (Tandem)",
    })
}

/// The answer to `ORCHESTRATOR_READY`.
pub fn acknowledged() -> Value {
    json!({ "ok": true })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_tools_has_the_protocol_shape() {
        let message = ProviderMessage::RegisterTools {
            name: None,
            tools: vec![ToolDescriptor {
                name: "tab.list".into(),
                label: "List tabs".into(),
                description: "Lists the open tabs.".into(),
                parameters: json!({"type": "object", "properties": {}}),
                annotations: Some(Annotations {
                    read_only_hint: Some(true),
                    destructive_hint: None,
                    open_world_hint: None,
                }),
            }],
        };
        assert_eq!(
            serde_json::to_value(&message).ok(),
            Some(json!({
                "type": "REGISTER_TOOLS",
                "tools": [{
                    "name": "tab.list",
                    "label": "List tabs",
                    "description": "Lists the open tabs.",
                    "parameters": {"type": "object", "properties": {}},
                    "annotations": {"readOnlyHint": true},
                }],
            }))
        );
    }

    #[test]
    fn annotations_are_left_out_when_there_are_none() {
        let tool = ToolDescriptor {
            name: "a".into(),
            label: "A".into(),
            description: "d".into(),
            parameters: json!({"type": "object"}),
            annotations: None,
        };
        let json = serde_json::to_value(&tool).unwrap_or_default();
        assert!(json.get("annotations").is_none());
    }

    #[test]
    fn unregister_has_only_its_type() {
        assert_eq!(
            serde_json::to_value(ProviderMessage::UnregisterTools).ok(),
            Some(json!({"type": "UNREGISTER_TOOLS"}))
        );
    }

    #[test]
    fn answers_are_read() {
        assert_eq!(
            RegisterAnswer::parse(&json!({"ok": true, "registered": ["a", "b"]})),
            Some(RegisterAnswer::Registered(vec!["a".into(), "b".into()]))
        );
        assert_eq!(
            RegisterAnswer::parse(
                &json!({"ok": false, "error": "waiting for the user's approval"})
            ),
            Some(RegisterAnswer::Refused(
                "waiting for the user's approval".into()
            ))
        );
        // An ok:false without a reason is still a refusal (stop retrying), with a sentence.
        assert!(matches!(
            RegisterAnswer::parse(&json!({"ok": false})),
            Some(RegisterAnswer::Refused(e)) if !e.is_empty()
        ));
        assert_eq!(RegisterAnswer::parse(&json!({"registered": []})), None);
        assert_eq!(RegisterAnswer::parse(&json!("ok")), None);
        assert_eq!(RegisterAnswer::parse(&Value::Null), None);
    }

    #[test]
    fn results_serialise_to_the_protocol_shape() {
        assert_eq!(
            ToolResult::text("done").to_json(),
            json!({"content": [{"type": "text", "text": "done"}]})
        );
        assert_eq!(
            ToolResult::text("3 tabs")
                .with_details(json!({"n": 3}))
                .to_json(),
            json!({"content": [{"type": "text", "text": "3 tabs"}], "details": {"n": 3}})
        );
        assert_eq!(
            ToolResult::error("no such tab").to_json(),
            json!({
                "content": [{"type": "text", "text": "Error: no such tab"}],
                "error": "no such tab",
            })
        );
    }

    #[test]
    fn results_round_trip() {
        let result = ToolResult::error("x").with_details(json!([1, 2]));
        let back: Option<ToolResult> = serde_json::from_value(result.to_json()).ok();
        assert_eq!(back, Some(result));
    }

    #[test]
    fn only_the_orchestrator_is_heard() {
        let execute = json!({"type": "TOOL_EXECUTE", "toolName": "tab.open", "params": {}, "toolCallId": "1"});
        assert_eq!(
            route(
                &execute,
                Some("aaaabbbbccccddddeeeeffffgggghhhh"),
                TANDEM_ID
            ),
            Route::Refuse
        );
        assert_eq!(route(&execute, None, TANDEM_ID), Route::Refuse);
        let ready = json!({"type": "ORCHESTRATOR_READY"});
        assert_eq!(route(&ready, Some("other"), TANDEM_ID), Route::Refuse);
        assert_eq!(route(&ready, Some(TANDEM_ID), TANDEM_ID), Route::Reregister);
        // The id is configurable (tests use a fake orchestrator).
        assert_eq!(route(&ready, Some("other"), "other"), Route::Reregister);
        assert_eq!(refusal()["ok"], json!(false));
    }

    #[test]
    fn tool_execute_is_read() {
        let message = json!({"type": "TOOL_EXECUTE", "toolName": "tab.open", "params": {"url": "https://a.test"}, "toolCallId": "c1"});
        assert_eq!(
            route(&message, Some(TANDEM_ID), TANDEM_ID),
            Route::Execute(ToolCall {
                tool_name: "tab.open".into(),
                params: json!({"url": "https://a.test"}),
                tool_call_id: "c1".into(),
            })
        );
        let bare = json!({"type": "TOOL_EXECUTE", "toolName": "tab.list", "params": null, "toolCallId": 7});
        assert_eq!(
            route(&bare, Some(TANDEM_ID), TANDEM_ID),
            Route::Execute(ToolCall {
                tool_name: "tab.list".into(),
                params: json!({}),
                tool_call_id: "7".into(),
            })
        );
    }

    #[test]
    fn malformed_messages_from_tandem_are_invalid_not_fatal() {
        for message in [
            json!({"type": "TOOL_EXECUTE", "params": {}}),
            json!({"type": "TOOL_EXECUTE", "toolName": 3}),
            json!({"type": "SOMETHING_NEW"}),
            json!({"toolName": "x"}),
            json!("TOOL_EXECUTE"),
            Value::Null,
        ] {
            assert!(
                matches!(
                    route(&message, Some(TANDEM_ID), TANDEM_ID),
                    Route::Invalid(_)
                ),
                "{message}"
            );
        }
    }
}
