//! The decision for each tool call the model makes in a chat turn, before anything runs.
//!
//! [`plan_call`] settles everything that needs no one else: an unknown name, a `Deny`
//! policy or arguments that do not fit the schema are answered at once and the provider is
//! never called ([`CallPlan::Reject`]); an `Ask` tool needs the user first
//! ([`CallPlan::Ask`]); the rest runs ([`CallPlan::Run`]). The worker does the waiting, the
//! messaging and the timeouts, and turns what comes back into outcomes through [`Run`].
//!
//! A model can keep calling tools forever (a loop of searches, or a page telling it to), so
//! a chat turn has at most [`MAX_ROUNDS`] rounds of calls ([`Rounds`]); past that, every call
//! is answered with [`round_limit_sentence`] so the model answers with what it has.

use serde_json::{Map, Value};

use crate::i18n::{text, Msg};
use crate::request::{ToolCall, ToolOutcome};

use super::outcome::{self, Failure, Origin};
use super::protocol::{Outgoing, ToolResult};
use super::registry::{Policy, Registry};
use super::schema;

/// Rounds of tool calls per chat turn (one round = one model answer with calls).
pub const MAX_ROUNDS: u32 = 8;
/// Calls one model answer may make; more are refused (a runaway answer, not a plan).
pub const MAX_CALLS_PER_ROUND: usize = 16;

/// A call that may go to its provider.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    pub provider_id: String,
    pub provider_name: String,
    /// The provider's own tool name (what TOOL_EXECUTE carries).
    pub tool_name: String,
    /// What people read of the tool (its title or label), in questions and on cards.
    pub label: String,
    /// The name the model used.
    pub model_name: String,
    /// The arguments, validated against the tool's schema.
    pub params: Value,
    pub tool_call_id: String,
    /// The tool may reach the open world (no `openWorldHint: false`): its arguments can
    /// leave for any site, which its question says.
    pub open_world: bool,
}

impl Run {
    /// The `TOOL_EXECUTE` message for the provider.
    pub fn message(&self) -> Outgoing {
        Outgoing::tool_execute(
            self.tool_name.clone(),
            self.params.clone(),
            self.tool_call_id.clone(),
        )
    }

    pub fn origin(&self) -> Origin {
        Origin {
            call_id: self.tool_call_id.clone(),
            model_name: self.model_name.clone(),
            tool_name: self.tool_name.clone(),
            provider_name: self.provider_name.clone(),
        }
    }

    /// The outcome of the provider's answer.
    pub fn outcome(&self, result: &ToolResult) -> ToolOutcome {
        outcome::from_result(&self.origin(), result)
    }

    /// The outcome when it did not run or did not answer (declined, timed out, gone).
    pub fn failed(&self, failure: &Failure) -> ToolOutcome {
        outcome::failed(&self.origin(), failure)
    }
}

/// What to do with one call.
#[derive(Clone, Debug, PartialEq)]
pub enum CallPlan {
    /// Answer the model with this; the provider is not called.
    Reject(ToolOutcome),
    /// Ask the user `question`; on yes, run; on no, `run.failed(&Failure::DeclinedByUser)`.
    Ask {
        question: String,
        run: Run,
    },
    Run(Run),
}

/// Decides one call of the model.
pub fn plan_call(registry: &Registry, call: &ToolCall) -> CallPlan {
    let Some(tool) = registry.resolve(&call.name) else {
        return CallPlan::Reject(outcome::unknown_tool(call));
    };
    let origin = Origin::new(call, &tool);
    if tool.policy == Policy::Deny {
        return CallPlan::Reject(outcome::failed(&origin, &Failure::DeniedByPolicy));
    }
    // Models send nothing, or null, for a tool without parameters.
    let params = match &call.arguments {
        Value::Null => Value::Object(Map::new()),
        other => other.clone(),
    };
    if let Err(invalid) = schema::validate(&tool.descriptor.parameters, &params) {
        return CallPlan::Reject(outcome::failed(
            &origin,
            &Failure::InvalidArguments(invalid),
        ));
    }
    let run = Run {
        provider_id: tool.provider_id,
        provider_name: tool.provider_name,
        tool_name: tool.tool_name,
        label: tool.descriptor.label.clone(),
        model_name: tool.model_name,
        params,
        tool_call_id: call.id.clone(),
        open_world: tool.descriptor.open_world(),
    };
    match tool.policy {
        Policy::Ask => CallPlan::Ask {
            question: question(&run),
            run,
        },
        _ => CallPlan::Run(run),
    }
}

/// `Allow «Tandem Tabs» to run Open a tab with url "https://example.com", active true?`
/// (the tool's label: what people read, not the model-facing name).
///
/// The arguments are the model's, which a page it read may have steered: the user sees
/// them all before agreeing, written as words rather than JSON, and never cut (the panel
/// scrolls a long question). Control characters are replaced so the question stays one
/// line. A tool that may reach the web says so: what it is given can leave for any site.
pub fn question(run: &Run) -> String {
    question_message(run).english()
}

/// [`question`] as a catalog message.
pub fn question_message(run: &Run) -> Msg {
    let args = match &run.params {
        Value::Object(o) if o.is_empty() => String::new(),
        Value::Object(o) => fields(o),
        other => readable(other),
    };
    let args: String = args
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let (name, label) = (text(run.provider_name.clone()), text(run.label.clone()));
    let ask = if args.is_empty() {
        Msg::new("toolAsk", vec![name, label])
    } else {
        Msg::new("toolAskWith", vec![name, label, text(args)])
    };
    if run.open_world {
        ask.then(Msg::key("toolReachesWeb"))
    } else {
        ask
    }
}

/// `name: value` pairs, comma-separated.
fn fields(o: &Map<String, Value>) -> String {
    let parts: Vec<String> = o
        .iter()
        .map(|(k, v)| format!("{k} {}", readable(v)))
        .collect();
    parts.join(", ")
}

/// A JSON value as a person reads it: text in quotes with nothing escaped (an address
/// shows as it is, not as `\u0040`), lists and groups in brackets.
fn readable(v: &Value) -> String {
    match v {
        Value::String(s) => format!("\"{s}\""),
        Value::Bool(b) => b.to_string(),
        Value::Null => "nothing".into(),
        Value::Number(n) => n.to_string(),
        Value::Array(items) if items.is_empty() => "none".into(),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(readable).collect();
            format!("[{}]", parts.join(", "))
        }
        Value::Object(o) if o.is_empty() => "nothing".into(),
        Value::Object(o) => format!("({})", fields(o)),
    }
}

/// Counts a chat turn's rounds of tool calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rounds {
    used: u32,
    max: u32,
}

impl Default for Rounds {
    fn default() -> Self {
        Self::new(MAX_ROUNDS)
    }
}

impl Rounds {
    pub fn new(max: u32) -> Self {
        Self { used: 0, max }
    }

    /// Starts a round; `false` when the turn has used them all (the round's calls are then
    /// refused with [`round_limit_sentence`]).
    pub fn start(&mut self) -> bool {
        if self.used >= self.max {
            return false;
        }
        self.used += 1;
        true
    }

    pub fn used(&self) -> u32 {
        self.used
    }

    /// Whether no round is left: the worker may send the next request without tools.
    pub fn exhausted(&self) -> bool {
        self.used >= self.max
    }
}

/// What the model reads for a call past the limit.
pub fn round_limit_sentence(max: u32) -> String {
    format!(
        "Tandem runs at most {max} rounds of tool calls per message, and this one was not run. Answer the user now with what you have."
    )
}

/// Plans every call of one model answer: starts a round, refuses everything past the round
/// limit or past [`MAX_CALLS_PER_ROUND`], and plans the rest with [`plan_call`].
pub fn plan_round(registry: &Registry, calls: &[ToolCall], rounds: &mut Rounds) -> Vec<CallPlan> {
    let refuse = |call: &ToolCall, content: String| {
        CallPlan::Reject(ToolOutcome {
            call_id: call.id.clone(),
            name: call.name.clone(),
            content,
            is_error: true,
            images: Vec::new(),
        })
    };
    if !rounds.start() {
        return calls
            .iter()
            .map(|c| refuse(c, round_limit_sentence(rounds.max)))
            .collect();
    }
    calls
        .iter()
        .enumerate()
        .map(|(i, call)| {
            if i < MAX_CALLS_PER_ROUND {
                plan_call(registry, call)
            } else {
                refuse(
                    call,
                    format!("Tandem runs at most {MAX_CALLS_PER_ROUND} tool calls per answer, and this one was not run."),
                )
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::protocol::{parse_incoming, parse_tool_result, Incoming};
    use serde_json::json;

    const TABS: &str = "aaaabbbbccccddddeeeeffffgggghhhh";

    fn registry() -> Registry {
        let msg = json!({"type": "REGISTER_TOOLS", "tools": [
            {"name": "tab.open", "label": "Open tab", "description": "Opens a tab.",
             "parameters": {"type": "object", "properties": {"url": {"type": "string"}, "active": {"type": "boolean"}}, "required": ["url"]}},
            {"name": "tab.list", "label": "List tabs", "description": "Lists tabs.",
             "parameters": {"type": "object", "properties": {}}, "annotations": {"readOnlyHint": true, "openWorldHint": false}},
            {"name": "tab.close", "label": "Close tab", "description": "Closes a tab.",
             "parameters": {"type": "object", "properties": {"tabId": {"type": "integer"}}}}
        ]});
        let Ok(Incoming::RegisterTools(tools)) = parse_incoming(&msg) else {
            panic!("refused")
        };
        let mut r = Registry::new();
        r.register(TABS, "Tandem Tabs", tools);
        r.decide(TABS, true).unwrap();
        r.set_policy(TABS, "tab.close", Policy::Deny).unwrap();
        r
    }

    fn call(name: &str, arguments: Value) -> ToolCall {
        ToolCall {
            id: "call_7".into(),
            name: name.into(),
            arguments,
        }
    }

    fn rejection(plan: CallPlan) -> String {
        match plan {
            CallPlan::Reject(o) => {
                assert!(o.is_error);
                o.content
            }
            other => panic!("not rejected: {other:?}"),
        }
    }

    #[test]
    fn each_call_is_rejected_asked_or_run() {
        let r = registry();
        assert_eq!(
            rejection(plan_call(&r, &call("tab_open", json!({})))),
            "There is no tool named \"tab_open\"; call only the tools offered."
        );
        assert_eq!(
            rejection(plan_call(
                &r,
                &call("tandem_tabs__tab_close", json!({"tabId": 1}))
            )),
            "The user does not allow Tandem to run tab.close; do not call it again."
        );
        assert_eq!(
            rejection(plan_call(
                &r,
                &call("tandem_tabs__tab_open", json!({"url": 5}))
            )),
            "params.url: expected string"
        );
        assert_eq!(
            rejection(plan_call(
                &r,
                &call("tandem_tabs__tab_open", Value::String("url=x".into()))
            )),
            "params: expected object"
        );

        let CallPlan::Ask { question, run } = plan_call(
            &r,
            &call(
                "tandem_tabs__tab_open",
                json!({"url": "https://example.com", "active": true}),
            ),
        ) else {
            panic!("not asked")
        };
        assert_eq!(
            question,
            "Allow «Tandem Tabs» to run Open tab with active true, url \"https://example.com\"? This tool can reach the web: what it is given may be sent to any site."
        );
        assert_eq!(run.provider_id, TABS);
        assert_eq!(
            run.message().to_json(),
            json!({"type": "TOOL_EXECUTE", "toolName": "tab.open",
                "params": {"url": "https://example.com", "active": true}, "toolCallId": "call_7"})
        );
        assert_eq!(
            run.failed(&Failure::DeclinedByUser).content,
            "The user declined to run tab.open."
        );

        let CallPlan::Run(run) = plan_call(&r, &call("tandem_tabs__tab_list", Value::Null)) else {
            panic!("not run")
        };
        assert_eq!(run.params, json!({}));
        let out = run.outcome(&parse_tool_result(
            &json!({"content": [{"type": "text", "text": "3 tabs"}]}),
        ));
        assert_eq!(out.call_id, "call_7");
        assert_eq!(out.name, "tandem_tabs__tab_list");
        assert!(out.content.contains("3 tabs"));
    }

    /// Issue 31: the arguments are what may leave, so the person sees all of them (the panel
    /// scrolls a long question) on one line, as words rather than JSON escapes.
    #[test]
    fn questions_stay_one_line_and_show_every_argument() {
        let r = registry();
        let url = format!(
            "https://collect.example/?e=ada@example.com&d=a\nb{}END",
            "x".repeat(500)
        );
        let CallPlan::Ask { question, .. } = plan_call(
            &r,
            &call("tandem_tabs__tab_open", json!({"url": url, "active": true})),
        ) else {
            panic!()
        };
        assert!(!question.contains('\n'));
        assert!(question.contains(&url.replace('\n', " ")), "{question}");
        assert!(
            question.contains("with active true, url \"https://collect"),
            "{question}"
        );
        assert!(question.contains("xEND\"?"), "{question}");
        assert!(!question.contains("\\u"), "no JSON escapes: {question}");
        assert!(!question.contains('…'), "never cut: {question}");
    }

    #[test]
    fn rounds_are_capped_per_turn() {
        let r = registry();
        let mut rounds = Rounds::new(2);
        let calls = [call("tandem_tabs__tab_list", json!({}))];
        for _ in 0..2 {
            assert!(matches!(
                plan_round(&r, &calls, &mut rounds)[0],
                CallPlan::Run(_)
            ));
        }
        assert!(rounds.exhausted());
        let plans = plan_round(&r, &calls, &mut rounds);
        assert_eq!(
            rejection(plans.into_iter().next().unwrap()),
            "Tandem runs at most 2 rounds of tool calls per message, and this one was not run. Answer the user now with what you have."
        );
        assert_eq!(rounds.used(), 2);

        let many: Vec<ToolCall> = (0..20)
            .map(|_| call("tandem_tabs__tab_list", json!({})))
            .collect();
        let plans = plan_round(&r, &many, &mut Rounds::default());
        assert_eq!(
            plans
                .iter()
                .filter(|p| matches!(p, CallPlan::Run(_)))
                .count(),
            16
        );
        assert_eq!(plans.len(), 20);
    }
}
