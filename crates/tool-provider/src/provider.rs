//! `ToolProvider`: the tools, their handlers and the orchestrator's id. Running a call is
//! plain async Rust, so routing and error handling are tested natively; `runtime.rs` binds
//! it to `chrome.runtime`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Display;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::protocol::{ProviderMessage, ToolCall, ToolResult, TANDEM_ID};
use crate::tool::Tool;

type LocalFuture = Pin<Box<dyn Future<Output = ToolResult>>>;
type Handler = Rc<dyn Fn(Value) -> LocalFuture>;

/// A set of tools and their handlers. Build it, then [`start`](Self::start) it from the
/// wasm's `#[wasm_bindgen(start)]` function: see the crate docs for the whole example.
pub struct ToolProvider {
    pub(crate) name: String,
    pub(crate) orchestrator: String,
    tools: Vec<Tool>,
    handlers: BTreeMap<String, Handler>,
}

impl ToolProvider {
    /// `name` is this provider's name in its log lines (Tandem shows the extension's own
    /// name from its manifest).
    pub fn new(name: impl Into<String>, tools: impl IntoIterator<Item = Tool>) -> Self {
        Self {
            name: name.into(),
            orchestrator: TANDEM_ID.to_owned(),
            tools: tools.into_iter().collect(),
            handlers: BTreeMap::new(),
        }
    }

    /// The handler of the tool `name`. `P` is its parameters: a type deriving `Deserialize`
    /// (the same one given to `Tool::params`), or `serde_json::Value` to take them raw.
    /// Parameters that do not deserialise never reach the handler: Tandem gets a
    /// `ToolResult` error saying why. An `Err` from the handler becomes a `ToolResult`
    /// error with its text; an `Ok` becomes the result (`String`, `&str` or `ToolResult`).
    ///
    /// Do not panic in a handler: the release profile aborts on panic, which kills the
    /// worker's wasm and leaves Tandem without an answer. Return `Err` instead.
    pub fn handle<P, F, Fut, T, E>(mut self, name: impl Into<String>, handler: F) -> Self
    where
        P: DeserializeOwned + 'static,
        F: Fn(P) -> Fut + 'static,
        Fut: Future<Output = Result<T, E>> + 'static,
        T: Into<ToolResult>,
        E: Display,
    {
        let name = name.into();
        let tool = name.clone();
        let handler: Handler = Rc::new(move |params: Value| -> LocalFuture {
            match serde_json::from_value::<P>(params) {
                Err(error) => {
                    let result =
                        ToolResult::error(format!("invalid parameters for {tool}: {error}"));
                    Box::pin(async move { result })
                }
                Ok(params) => {
                    let running = handler(params);
                    Box::pin(async move {
                        match running.await {
                            Ok(result) => result.into(),
                            Err(error) => ToolResult::error(error.to_string()),
                        }
                    })
                }
            }
        });
        self.handlers.insert(name, handler);
        self
    }

    /// Talk to another orchestrator than Tandem (tests load a fake one with another id).
    pub fn orchestrator(mut self, id: impl Into<String>) -> Self {
        self.orchestrator = id.into();
        self
    }

    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The `REGISTER_TOOLS` message for these tools.
    pub fn register_message(&self) -> ProviderMessage {
        ProviderMessage::RegisterTools {
            name: Some(self.name.clone()),
            tools: self.tools.iter().map(|t| t.descriptor().clone()).collect(),
        }
    }

    /// Mistakes in how the provider was put together, one sentence each. `start()` logs
    /// them as warnings; none stops the provider.
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let mut seen = BTreeSet::new();
        for tool in &self.tools {
            let name = tool.name();
            if name.trim().is_empty() {
                problems.push("a tool has an empty name".to_owned());
            } else if !seen.insert(name) {
                problems.push(format!("the tool {name} is described twice"));
            } else if !self.handlers.contains_key(name) {
                problems.push(format!(
                    "the tool {name} has no handler: calls to it will fail"
                ));
            }
        }
        for name in self.handlers.keys() {
            if !seen.contains(name.as_str()) {
                problems.push(format!(
                    "the handler {name} has no Tool: it is never registered nor called"
                ));
            }
        }
        problems
    }

    /// Runs one `TOOL_EXECUTE`. Only described tools run: a handler without a `Tool` was
    /// never offered to Tandem, so a call to it is as unknown as any other name.
    pub fn execute(&self, call: ToolCall) -> impl Future<Output = ToolResult> + 'static {
        let handler = self
            .tools
            .iter()
            .any(|t| t.name() == call.tool_name)
            .then(|| self.handlers.get(&call.tool_name).cloned())
            .flatten();
        let missing = handler.is_none().then(|| {
            let offered: Vec<&str> = self.tools.iter().map(Tool::name).collect();
            format!(
                "unknown tool {:?}; this provider offers: {}",
                call.tool_name,
                offered.join(", ")
            )
        });
        async move {
            match (handler, missing) {
                (Some(handler), _) => handler(call.params).await,
                (None, message) => ToolResult::error(message.unwrap_or_default()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;
    use std::task::{Context, Poll, Waker};

    /// Polls a future that needs no wakeups (every handler here is immediately ready).
    fn run<F: Future>(future: F) -> F::Output {
        let mut future = std::pin::pin!(future);
        let mut cx = Context::from_waker(Waker::noop());
        loop {
            if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
                return out;
            }
        }
    }

    #[derive(Deserialize, schemars::JsonSchema)]
    struct Open {
        url: String,
    }

    fn call(tool: &str, params: Value) -> ToolCall {
        ToolCall {
            tool_name: tool.into(),
            params,
            tool_call_id: "c".into(),
        }
    }

    fn provider() -> ToolProvider {
        ToolProvider::new(
            "Test",
            [
                Tool::new("open", "Open", "Opens.").params::<Open>(),
                Tool::new("fail", "Fail", "Fails."),
                Tool::new("raw", "Raw", "Echoes."),
            ],
        )
        .handle("open", |p: Open| async move {
            Ok::<_, String>(format!("opened {}", p.url))
        })
        .handle("fail", |_: Value| async move {
            Err::<String, _>("the tab is gone")
        })
        .handle("raw", |p: Value| async move {
            Ok::<_, String>(ToolResult::text("echo").with_details(p))
        })
    }

    #[test]
    fn calls_reach_their_handler_with_typed_params() {
        let result = run(provider().execute(call("open", json!({"url": "https://a.test"}))));
        assert_eq!(result, ToolResult::text("opened https://a.test"));
        let result = run(provider().execute(call("raw", json!({"x": 1}))));
        assert_eq!(result.details, Some(json!({"x": 1})));
        assert_eq!(result.error, None);
    }

    #[test]
    fn handler_errors_become_result_errors() {
        let result = run(provider().execute(call("fail", json!({}))));
        assert_eq!(result.error.as_deref(), Some("the tab is gone"));
    }

    #[test]
    fn bad_params_never_reach_the_handler() {
        for params in [json!({}), json!({"url": 3}), json!([1])] {
            let result = run(provider().execute(call("open", params.clone())));
            let error = result.error.unwrap_or_default();
            assert!(
                error.starts_with("invalid parameters for open:"),
                "{params}: {error}"
            );
        }
    }

    #[test]
    fn unknown_tools_are_errors_that_list_the_offered_ones() {
        let result = run(provider().execute(call("tab.explode", json!({}))));
        let error = result.error.unwrap_or_default();
        assert!(error.contains("unknown tool \"tab.explode\""), "{error}");
        assert!(error.contains("open, fail, raw"), "{error}");
    }

    #[test]
    fn a_handler_without_a_tool_is_not_callable() {
        let p = ToolProvider::new("T", [Tool::new("a", "A", "a")])
            .handle("a", |_: Value| async { Ok::<_, String>("a") })
            .handle("hidden", |_: Value| async { Ok::<_, String>("ran") });
        let result = run(p.execute(call("hidden", json!({}))));
        assert!(result.error.is_some());
        assert_eq!(
            p.problems(),
            vec!["the handler hidden has no Tool: it is never registered nor called"]
        );
    }

    #[test]
    fn problems_are_found() {
        let p = ToolProvider::new(
            "T",
            [
                Tool::new("a", "A", "a"),
                Tool::new("a", "A", "a"),
                Tool::new("b", "B", "b"),
                Tool::new(" ", "?", "?"),
            ],
        )
        .handle("a", |_: Value| async { Ok::<_, String>("a") });
        assert_eq!(
            p.problems(),
            vec![
                "the tool a is described twice",
                "the tool b has no handler: calls to it will fail",
                "a tool has an empty name",
            ]
        );
        assert!(provider().problems().is_empty());
        // A tool without a handler fails when called, it does not panic.
        assert!(run(p.execute(call("b", json!({})))).error.is_some());
    }

    #[test]
    fn registration_lists_every_tool_and_the_orchestrator_is_tandem_by_default() {
        let p = provider();
        assert_eq!(p.orchestrator, TANDEM_ID);
        let json = serde_json::to_value(p.register_message()).unwrap_or_default();
        assert_eq!(json["type"], "REGISTER_TOOLS");
        let names: Vec<&str> = json["tools"]
            .as_array()
            .map(|t| t.iter().filter_map(|t| t["name"].as_str()).collect())
            .unwrap_or_default();
        assert_eq!(names, ["open", "fail", "raw"]);
        assert_eq!(p.orchestrator("x").orchestrator, "x");
    }
}
