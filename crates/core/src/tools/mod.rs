//! Tools from other extensions ("tool providers"): Tandem is the orchestrator that lets the
//! model call them, with the user's approval.
//!
//! The flow, as the service worker runs it:
//! 1. A provider sends `REGISTER_TOOLS` over cross-extension messaging; [`parse_incoming`]
//!    reads and bounds it (untrusted input), [`Registry::register`] records it and says
//!    whether the user must first approve the provider ([`Registry::approval_question`],
//!    [`Registry::decide`]); [`RegisterOutcome::answer`] is what the provider is told.
//! 2. A chat request offers [`Registry::specs`]: the allowed tools under model-facing names
//!    that are valid for every provider and never collide.
//! 3. Each call the model makes goes through [`plan_call`] (per answer, [`plan_round`]):
//!    refused at once, asked, or run by sending [`Run::message`] (`TOOL_EXECUTE`).
//! 4. The provider's answer ([`parse_tool_result`]), or a timeout, a missing provider or the
//!    user's no, becomes a [`crate::request::ToolOutcome`] for the model ([`outcome`]): capped
//!    and fenced, errors as sentences.
//!
//! On Gemini Nano, which has no native tool calling, [`nano`] turns the same turn into
//! structured output. Everything here is pure; the worker does messaging, storage, timers
//! and questions.

pub mod image;
pub mod nano;
pub mod offered;
pub mod outcome;
pub mod page;
pub mod prompt;
pub mod protocol;
pub mod registry;
pub mod schema;
pub mod schema_text;
pub mod turn;

pub use nano::{instructions, parse_reply, response_constraint, result_turn, NanoReply};
pub use offered::TOOLS_RULE;
pub use outcome::{Failure, Origin, MAX_RESULT_CHARS};
pub use protocol::{
    parse_incoming, parse_tool_result, Annotations, Answer, Incoming, Outgoing, ProtocolError,
    ResultItem, ToolDescriptor, ToolResult,
};
pub use registry::{
    Decision, McpServer, Policy, Provider, RegisterOutcome, Registry, RegistryError, Resolved,
    STORAGE_KEY,
};
pub use schema::{check_schema, validate, Invalid, Violation};
pub use turn::{plan_call, plan_round, round_limit_sentence, CallPlan, Rounds, Run, MAX_ROUNDS};

/// Keeps a tool read from a provider's own list (an MCP server's `tools/list`, a page's
/// `getTools()`), as `checked` by that list's reader, unless one of its name is kept already;
/// what is left out gets a sentence in `skipped` naming it as `shown`.
pub(crate) fn keep_listed(
    tools: &mut Vec<ToolDescriptor>,
    skipped: &mut Vec<String>,
    shown: &str,
    checked: Result<ToolDescriptor, String>,
) {
    match checked {
        Ok(d) if tools.iter().any(|k| k.name == d.name) => {
            skipped.push(format!("{shown} is listed twice; the first is kept."))
        }
        Ok(d) => tools.push(d),
        Err(problem) => skipped.push(format!("{shown} is left out: {problem}.")),
    }
}

#[cfg(test)]
mod robustness {
    //! Whatever another extension or a model sends, the readers answer; they never panic.
    use proptest::prelude::*;
    use serde_json::{json, Value};

    fn any_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            (-1e9f64..1e9).prop_map(|f| json!(f)),
            prop_oneof![
                Just("object"),
                Just("string"),
                Just("integer"),
                Just("REGISTER_TOOLS"),
                Just("text"),
                Just("type"),
                Just("tab.open"),
            ]
            .prop_map(|s| json!(s)),
            "\\PC{0,12}".prop_map(Value::String),
        ];
        leaf.prop_recursive(6, 64, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::btree_map(
                    prop_oneof![
                        Just("type".to_string()),
                        Just("properties".to_string()),
                        Just("required".to_string()),
                        Just("items".to_string()),
                        Just("anyOf".to_string()),
                        Just("enum".to_string()),
                        Just("tools".to_string()),
                        Just("content".to_string()),
                        Just("error".to_string()),
                        Just("minimum".to_string()),
                        Just("additionalProperties".to_string()),
                        "[a-z]{1,6}",
                    ],
                    inner,
                    0..6
                )
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn readers_of_outside_json_never_panic(a in any_json(), b in any_json()) {
            let _ = super::parse_incoming(&a);
            let _ = super::parse_incoming(&json!({"type": "REGISTER_TOOLS", "tools": [a.clone()]}));
            let _ = super::parse_tool_result(&a);
            let _ = super::check_schema(&a);
            let _ = super::validate(&a, &b);
            let _ = super::registry::Registry::from_stored(&json!({"providers": {"id": a.clone()}}));
            let _ = super::parse_reply(&a.to_string(), "c");
            let _ = super::schema::known_subset(&a);
        }
    }
}
