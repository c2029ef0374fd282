//! Tools at run time: the one door other extensions may knock on (`runtime.onMessageExternal`:
//! `REGISTER_TOOLS`, `UNREGISTER_TOOLS`), `ORCHESTRATOR_READY` at every start and after an
//! approval, Settings → Tools' commands, the tools each chat turn or task is offered (with
//! its page's tools), and running the calls a model makes (`TOOL_EXECUTE` to an extension,
//! `tools/call` to an MCP server through `crate::mcp`, a page tool through
//! `crate::page_tools`), asking the user first where the policy says so. The registry itself
//! is `crate::registry`. What is decided (who may register,
//! which call runs, what the model reads back) is `tandem_core::tools`; this binds it to
//! Chrome.

use std::cell::RefCell;
use std::collections::HashMap;

use js_sys::{Object, Promise, Reflect, JSON};
use serde_json::Value;
use tandem_core::protocol::{ToolsCommand, WorkerToPanel};
use tandem_core::request::{ToolCall, ToolOutcome, ToolSpec};
use tandem_core::tools::{
    parse_incoming, parse_tool_result, plan_round, Answer, CallPlan, Failure, Incoming, Outgoing,
    Registry, Rounds, Run,
};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{future_to_promise, spawn_local, JsFuture};
use web_sys::AbortController;

use tandem_core::tools::page::{self, PageListing};

use crate::chrome::{self, Port};
use crate::http::Failure as ChatFailure;
use crate::outbox::post;
use crate::registry::{self, change};

/// How long a provider has to answer a call.
const CALL_TIMEOUT_MS: i32 = 30_000;
/// How long a call waits for the user's Approve / Deny before it counts as declined.
const DECISION_TIMEOUT_MS: i32 = 10 * 60 * 1_000;
/// The largest message another extension may send (a registration of 64 tools with their
/// schemas fits many times over).
const MAX_MESSAGE_BYTES: usize = 512 * 1024;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_namespace = ["chrome", "runtime"], js_name = sendMessage)]
    fn send_to_extension(extension_id: &str, message: &JsValue) -> Result<Promise, JsValue>;
}

thread_local! {
    /// Calls waiting for the user: call id → the answer once given.
    static DECISIONS: RefCell<HashMap<String, Asked>> = RefCell::new(HashMap::new());
    /// The chat turns of late, newest last: the tab each asks from and the page tools
    /// offered in it (what `run_round` plans against is exactly what was offered).
    static TURNS: RefCell<Vec<TurnTools>> = const { RefCell::new(Vec::new()) };
    /// Origins whose pages had no `document.modelContext` this worker life: not scripted
    /// again at every turn (a busy page could hold a turn up to the listing's limit). Kept
    /// per origin, not per browser: an origin trial gives page tools to some sites only.
    static NO_PAGE_TOOLS: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// How many origins [`NO_PAGE_TOOLS`] remembers.
const NO_PAGE_TOOLS_KEPT: usize = 256;

/// How many turns [`TURNS`] remembers: more than run at once.
const TURNS_KEPT: usize = 16;

/// One chat turn's (or task's) tab and the page tools listed there for it.
struct TurnTools {
    request_id: String,
    tab_id: i32,
    listing: Option<PageListing>,
    /// A task's entry: it lives as long as the task runs, however many chat turns pass
    /// meanwhile, and is dropped by [`forget_task`].
    kept: bool,
}

/// A call waiting for the user's Approve / Deny.
struct Asked {
    /// Ends the wait.
    fire: js_sys::Function,
    approve: Option<bool>,
}

/// At every worker start: every provider Tandem knows is told to register again (the
/// registrations of a worker that stopped are in storage, but a provider may have changed).
pub fn start() {
    crate::mcp::start();
    spawn_local(async {
        for id in registry::loaded().await.known_providers() {
            tell(&id, &Outgoing::OrchestratorReady).await;
        }
    });
}

/// Sends `message` to the extension `id`, not waiting for more than its delivery.
async fn tell(id: &str, message: &Outgoing) {
    let Ok(value) = JSON::parse(&message.to_json().to_string()) else {
        return;
    };
    match send_to_extension(id, &value) {
        // A provider that is not installed any more rejects: nothing to do.
        Ok(p) => {
            let _ = JsFuture::from(p).await;
        }
        Err(e) => crate::log_error("could not message a tool provider", &e),
    }
}

/// `runtime.onMessageExternal`: another extension's message. Answers with the protocol's
/// `{ok, registered}` / `{ok: false, error}`.
#[wasm_bindgen]
pub fn on_external_message(message: JsValue, sender: JsValue) -> Promise {
    future_to_promise(async move {
        let answer = external(message, sender).await;
        JSON::parse(&answer.to_json().to_string())
    })
}

async fn external(message: JsValue, sender: JsValue) -> Answer {
    let sender_id = Reflect::get(&sender, &"id".into())
        .ok()
        .and_then(|v| v.as_string())
        .unwrap_or_default();
    if sender_id.is_empty() || sender_id == tandem_chrome::own_id() {
        return Answer::refused(tandem_core::tools::registry::NO_ID.to_string());
    }
    let text = JSON::stringify(&message)
        .ok()
        .and_then(|v| v.as_string())
        .unwrap_or_default();
    if text.len() > MAX_MESSAGE_BYTES {
        return Answer::refused(format!(
            "The message is larger than Tandem accepts ({} KB at most).",
            MAX_MESSAGE_BYTES / 1024
        ));
    }
    let Ok(value) = tandem_core::json::from_str::<Value>(&text) else {
        return Answer::refused("Tandem could not read the message as JSON.");
    };
    let incoming = match parse_incoming(&value) {
        Ok(i) => i,
        Err(e) => return Answer::from(e),
    };
    match incoming {
        Incoming::RegisterTools(tools) => {
            let name = display_name(&value);
            change(|r| r.register(&sender_id, &name, tools).answer()).await
        }
        Incoming::UnregisterTools => {
            change(|r| r.unregister(&sender_id)).await;
            Answer::registered(Vec::new())
        }
    }
}

/// The name a provider gives itself (`name` beside `type`, optional): shown with its id, so
/// a provider naming itself like another is told apart by the id the user sees.
fn display_name(message: &Value) -> String {
    let name = message
        .get("name")
        .and_then(Value::as_str)
        .map(|n| tandem_core::fence::neutralise(n).replace(['\n', '\t'], " "))
        .unwrap_or_default();
    name.trim().chars().take(60).collect()
}

/// Settings → Tools and the approval prompt.
pub fn on_command(command: ToolsCommand) {
    spawn_local(async move {
        match command {
            ToolsCommand::Decide { provider_id, allow } => {
                let decided = change(|r| r.decide(&provider_id, allow)).await;
                match decided {
                    // It re-registers, and this time is registered.
                    Ok(_) if allow => tell(&provider_id, &Outgoing::OrchestratorReady).await,
                    Ok(_) => {}
                    Err(e) => crate::log_error("tool provider decision", &e.to_string().into()),
                }
            }
            ToolsCommand::SetPolicy {
                provider_id,
                tool,
                policy,
            } => {
                if let Err(e) = change(|r| r.set_policy(&provider_id, &tool, policy)).await {
                    crate::log_error("tool policy", &e.to_string().into());
                }
            }
            ToolsCommand::Remove { provider_id } => {
                if tandem_core::mcp::is_server_id(&provider_id) {
                    crate::mcp::forget(&provider_id).await;
                }
                change(|r| r.remove_provider(&provider_id)).await;
            }
            ToolsCommand::TestMcp { request_id, server } => {
                crate::mcp::test(request_id, server).await
            }
            ToolsCommand::AddMcp {
                request_id,
                name,
                server,
            } => crate::mcp::add(request_id, name, server).await,
            ToolsCommand::SetMcpEnabled {
                provider_id,
                enabled,
            } => {
                if !enabled {
                    crate::mcp::drop_session(&provider_id).await;
                }
                if let Err(e) = change(|r| r.set_mcp_enabled(&provider_id, enabled)).await {
                    crate::log_error("MCP server", &e.to_string().into());
                }
            }
            ToolsCommand::SignInMcp { provider_id } => {
                crate::mcp::sign_in_again(&provider_id).await
            }
            ToolsCommand::SignOutMcp { provider_id } => crate::mcp::sign_out(&provider_id).await,
        }
    });
}

/// The tools the model may call now (allowed providers, tools not set to Deny).
pub async fn specs() -> Vec<ToolSpec> {
    // An MCP server that went away offers nothing until it answers again: give it the
    // chance now.
    crate::mcp::recheck().await;
    registry::loaded().await.specs()
}

/// A chat turn `request_id` asks from `tab_id` (the panel's `Send`): its page's tools are
/// offered in that turn only.
pub fn note_tab(request_id: &str, tab_id: Option<i32>) {
    if let Some(tab_id) = tab_id {
        remember_turn(request_id, tab_id, false);
    }
}

/// A task `task_key` runs on `tab_id`: the page tools listed there when it (re)starts are
/// the ones it may call, until [`forget_task`].
pub fn note_task(task_key: &str, tab_id: i32) {
    remember_turn(task_key, tab_id, true);
}

/// The task has stopped running: its page tools are no longer offered.
pub fn forget_task(task_key: &str) {
    TURNS.with(|t| t.borrow_mut().retain(|x| x.request_id != task_key));
}

fn remember_turn(request_id: &str, tab_id: i32, kept: bool) {
    TURNS.with(|t| {
        let mut t = t.borrow_mut();
        t.retain(|x| x.request_id != request_id);
        t.push(TurnTools {
            request_id: request_id.to_string(),
            tab_id,
            listing: None,
            kept,
        });
        // The oldest chat turns give way; running tasks keep theirs.
        let mut extra = t.len().saturating_sub(TURNS_KEPT);
        t.retain(|x| {
            let drop = extra > 0 && !x.kept;
            if drop {
                extra -= 1;
            }
            !drop
        });
    });
}

/// The tools of chat turn (or task) `request_id`: [`specs`], and the tools the page in its
/// tab registered (WebMCP), listed now and kept for the turn's calls.
pub async fn specs_for(request_id: &str) -> Vec<ToolSpec> {
    let Some(tab_id) = TURNS.with(|t| {
        t.borrow()
            .iter()
            .find(|x| x.request_id == request_id)
            .map(|x| x.tab_id)
    }) else {
        return specs().await;
    };
    // A tab that is not a web page Tandem may script offers no page tools.
    let origin = tab_origin(tab_id).await;
    let known_without = origin
        .as_ref()
        .is_some_and(|o| NO_PAGE_TOOLS.with(|n| n.borrow().contains(o)));
    let listing = match known_without {
        true => None,
        false => crate::page_tools::list(tab_id).await.ok(),
    };
    if let (Some(origin), Some(false)) = (origin, listing.as_ref().map(|l| l.supported)) {
        NO_PAGE_TOOLS.with(|n| {
            let mut n = n.borrow_mut();
            if n.len() >= NO_PAGE_TOOLS_KEPT {
                n.remove(0);
            }
            n.push(origin);
        });
    }
    for skipped in listing.iter().flat_map(|l| &l.skipped) {
        crate::log_error("a page tool", &JsValue::from_str(skipped));
    }
    TURNS.with(|t| {
        if let Some(x) = t
            .borrow_mut()
            .iter_mut()
            .find(|x| x.request_id == request_id)
        {
            x.listing = listing;
        }
    });
    crate::mcp::recheck().await;
    turn_registry(request_id).await.specs()
}

/// The origin of the page in `tab_id`, if Chrome tells it (a closed tab does not).
async fn tab_origin(tab_id: i32) -> Option<String> {
    let tab = JsFuture::from(chrome::tabs_get(tab_id).ok()?).await.ok()?;
    let url = Reflect::get(&tab, &"url".into()).ok()?.as_string()?;
    web_sys::Url::new(&url).ok().map(|u| u.origin())
}

/// The registry a turn's (or task's) calls are planned against: the stored one, with the
/// page tools offered in that turn.
pub async fn turn_registry(request_id: &str) -> Registry {
    let registry = registry::loaded().await;
    let page = TURNS.with(|t| {
        t.borrow()
            .iter()
            .find(|x| x.request_id == request_id)
            .and_then(|x| Some((x.tab_id, x.listing.clone()?)))
    });
    match page {
        Some((tab_id, listing)) => page::with_page_tools(&registry, tab_id, &listing),
        None => registry,
    }
}

/// The host a page provider's tools were listed on (the call is refused on another).
fn page_host(provider_id: &str) -> Option<(i32, String)> {
    let tab_id = page::tab_of(provider_id)?;
    TURNS.with(|t| {
        t.borrow()
            .iter()
            .rev()
            .filter(|x| x.tab_id == tab_id)
            .find_map(|x| Some((tab_id, x.listing.as_ref()?.host.clone())))
    })
}

/// The panel's Approve / Deny for a call that waits.
pub fn on_decision(call_id: String, approve: bool) {
    let fire = DECISIONS.with(|d| {
        let mut d = d.borrow_mut();
        let asked = d.get_mut(&call_id)?;
        asked.approve = Some(approve);
        Some(asked.fire.clone())
    });
    if let Some(fire) = fire {
        let _ = fire.call0(&JsValue::NULL);
    }
}

/// Runs one round of the model's calls: each is refused, asked about, or sent to its
/// provider; the panel sees each call and its result. Returns what the model reads back, one
/// outcome per call, in order.
pub async fn run_round(
    port: &Port,
    request_id: &str,
    calls: &[ToolCall],
    rounds: &mut Rounds,
    controller: &AbortController,
) -> Result<Vec<ToolOutcome>, ChatFailure> {
    let registry = turn_registry(request_id).await;
    let plans = plan_round(&registry, calls, rounds);
    let mut outcomes = Vec::with_capacity(calls.len());
    for (call, plan) in calls.iter().zip(plans) {
        let started = js_sys::Date::now();
        let (provider, question, run) = match plan {
            CallPlan::Reject(outcome) => {
                // Refused before running (bad arguments, Deny): a tool that exists is still
                // shown by its label and provider.
                let known = registry.resolve(&call.name);
                let shown = known.as_ref().map_or((call.name.as_str(), ""), |t| {
                    (t.descriptor.label.as_str(), t.provider_name.as_str())
                });
                show_use(port, request_id, call, shown, (None, None));
                show_result(port, request_id, &outcome, started);
                outcomes.push(outcome);
                continue;
            }
            CallPlan::Ask { question, run } => (run.provider_name.clone(), Some(question), run),
            CallPlan::Run(run) => (run.provider_name.clone(), None, run),
        };
        // People read the tool's label and the provider's name, not `provider__name`; the
        // question goes with its catalog message, for the person's language.
        let said = question
            .as_ref()
            .map(|_| tandem_core::tools::turn::question_message(&run))
            .filter(|m| question.as_deref() == Some(m.english().as_str()));
        show_use(
            port,
            request_id,
            call,
            (&run.label, &provider),
            (question.clone(), said),
        );
        let outcome = if question.is_some() {
            match decision(&call.id, controller).await? {
                true => execute(&run, controller).await?,
                false => run.failed(&Failure::DeclinedByUser),
            }
        } else {
            execute(&run, controller).await?
        };
        show_result(port, request_id, &outcome, started);
        outcomes.push(outcome);
    }
    Ok(outcomes)
}

/// `shown`: the tool's name as people read it, and its provider's.
fn show_use(
    port: &Port,
    request_id: &str,
    call: &ToolCall,
    shown: (&str, &str),
    (q, said): (Option<String>, Option<tandem_core::i18n::Msg>),
) {
    let (tool, provider) = shown;
    let arguments = match &call.arguments {
        Value::String(raw) => raw.clone(),
        other => other.to_string(),
    };
    let _ = post(
        port,
        &WorkerToPanel::ToolUse {
            request_id: request_id.to_string(),
            call_id: call.id.clone(),
            tool: tool.to_string(),
            provider: provider.to_string(),
            arguments,
            question: q,
            said,
        },
    );
}

fn show_result(port: &Port, request_id: &str, outcome: &ToolOutcome, started: f64) {
    let _ = post(
        port,
        &WorkerToPanel::ToolResult {
            request_id: request_id.to_string(),
            call_id: outcome.call_id.clone(),
            ok: !outcome.is_error,
            text: outcome.content.clone(),
            duration_ms: (js_sys::Date::now() - started).max(0.0) as u64,
            images: outcome.images.clone(),
        },
    );
}

/// A promise that settles with a fresh marker object once `arm` calls the function it is
/// given: the pieces a wait races (a timer, Stop, the user's answer, a removal), each told
/// apart by its marker.
fn marker(arm: &mut dyn FnMut(js_sys::Function)) -> (JsValue, Promise) {
    let marker = JsValue::from(Object::new());
    let settled = marker.clone();
    // The executor runs once, at once (`new Promise`): `arm` is called once.
    let promise = Promise::new(&mut |resolve, _| {
        let settled = settled.clone();
        let fire = Closure::once_into_js(move || {
            let _ = resolve.call1(&JsValue::NULL, &settled);
        });
        arm(fire.unchecked_into());
    });
    (marker, promise)
}

/// Settles when `ms` have passed.
fn after(ms: i32) -> (JsValue, Promise) {
    marker(&mut |fire| {
        chrome::set_timeout(&fire, ms);
    })
}

/// Settles when the answer is stopped (the panel's Stop, the panel closing, a task's Cancel).
fn on_abort(controller: &AbortController) -> (JsValue, Promise) {
    let signal = controller.signal();
    marker(&mut |fire| {
        let _ = signal.add_event_listener_with_callback("abort", &fire);
    })
}

/// Waits for the user's Approve / Deny of a question already shown; Stop ends the answer,
/// and a question left alone for ten minutes counts as Deny.
async fn decision(call_id: &str, controller: &AbortController) -> Result<bool, ChatFailure> {
    decide_after(call_id, controller, &mut || {}).await
}

/// Sends `TOOL_EXECUTE` and reads the `ToolResult`, giving up after [`CALL_TIMEOUT_MS`], on
/// Stop, or when the user removes or turns off the provider meanwhile. A provider that is not
/// installed or is turned off is reported to the model as gone.
async fn execute(run: &Run, controller: &AbortController) -> Result<ToolOutcome, ChatFailure> {
    // An MCP server's call is a `tools/call` over HTTP, raced like an extension's answer; its
    // fetch is ended when the race is decided otherwise (timeout, Stop, removal).
    let mcp_fetch = tandem_core::mcp::is_server_id(&run.provider_id)
        .then(AbortController::new)
        .and_then(Result::ok);
    // A page's tool runs in its tab (WebMCP), raced the same way; it is in no registry a
    // removal could change, so only the timer and Stop end it early.
    let on_page = page::is_page_provider(&run.provider_id);
    let sent = match &mcp_fetch {
        _ if on_page => {
            let Some((tab_id, host)) = page_host(&run.provider_id) else {
                return Ok(run.failed(&Failure::ProviderGone));
            };
            let (name, params) = (run.tool_name.clone(), run.params.clone());
            future_to_promise(async move {
                let answer = crate::page_tools::call(tab_id, &host, &name, &params).await;
                Ok(JsValue::from_str(&answer.to_string()))
            })
        }
        Some(fetch) => {
            let (run, fetch) = (run.clone(), fetch.clone());
            future_to_promise(async move { Ok(crate::mcp::call(run, fetch).await) })
        }
        None => {
            let message =
                JSON::parse(&run.message().to_json().to_string()).unwrap_or(JsValue::NULL);
            let Ok(sent) = send_to_extension(&run.provider_id, &message) else {
                return Ok(run.failed(&Failure::ProviderGone));
            };
            sent
        }
    };
    // The race settles with the provider's answer, or with one of these markers.
    let (timed_out, timeout) = after(CALL_TIMEOUT_MS);
    let (stopped, abort) = on_abort(controller);
    let mut wait_id = None;
    let (withdrawn, removal) = marker(&mut |end| {
        if !on_page {
            wait_id = Some(registry::watch(&run.provider_id, end));
        }
    });
    let race = Promise::race(&js_sys::Array::of4(&sent, &timeout, &abort, &removal));
    let settled = JsFuture::from(race).await;
    // This call no longer waits; a removal later must not find it.
    if let Some(id) = wait_id {
        registry::unwatch(id);
    }
    if let Some(fetch) = &mcp_fetch {
        // The reason goes to the MCP server with `notifications/cancelled`.
        let why = match &settled {
            Ok(v) if Object::is(v, &stopped) => "The user stopped the call.".to_string(),
            Ok(v) if Object::is(v, &timed_out) => {
                format!("Tandem stopped waiting after {} s.", CALL_TIMEOUT_MS / 1000)
            }
            _ => "Tandem no longer needs the result.".to_string(),
        };
        fetch.abort_with_reason(&JsValue::from_str(&why));
    }
    let answer = match settled {
        Ok(v) => v,
        // "Could not establish connection. Receiving end does not exist.": not installed, or
        // turned off.
        Err(_) => return Ok(run.failed(&Failure::ProviderGone)),
    };
    if Object::is(&answer, &stopped) || controller.signal().aborted() {
        return Err(ChatFailure::Stopped);
    }
    if Object::is(&answer, &withdrawn) {
        return Ok(run.failed(&Failure::Withdrawn));
    }
    if Object::is(&answer, &timed_out) {
        return Ok(run.failed(&Failure::TimedOut {
            after_ms: CALL_TIMEOUT_MS as u64,
        }));
    }
    if on_page {
        let answer = answer
            .as_string()
            .and_then(|t| tandem_core::json::from_str::<Value>(&t).ok())
            .unwrap_or(Value::Null);
        return Ok(run.outcome(&page::read_result(&answer)));
    }
    // Removed or turned off while it ran: its answer is not used.
    let still = registry::loaded().await;
    let allowed = still.provider(&run.provider_id).is_some_and(|p| p.usable());
    if !allowed {
        return Ok(run.failed(&Failure::ProviderGone));
    }
    let text = JSON::stringify(&answer)
        .ok()
        .and_then(|v| v.as_string())
        .unwrap_or_default();
    let value = tandem_core::json::from_str::<Value>(&text).unwrap_or(Value::Null);
    // Tandem could not reach or read an MCP server: Tandem's sentence, not the tool's words.
    if let Some(failure) = value.get(tandem_core::mcp::TANDEM_FAILURE) {
        let text = |k: &str| failure.get(k).and_then(Value::as_str).map(str::to_string);
        return Ok(run.failed(&Failure::NotAnswered {
            why: text("sentence").unwrap_or_default(),
            said: text("said"),
        }));
    }
    Ok(run.outcome(&parse_tool_result(&value)))
}

// The agent's `tool` action (`crate::agent`) runs its calls through the same registry,
// question and TOOL_EXECUTE as chat's, with these.

/// Sends `run`'s TOOL_EXECUTE and reads the answer, as a chat call does (30 s limit; the
/// controller's abort is `Stopped`; a provider gone meanwhile is reported to the model).
pub async fn execute_run(
    run: &Run,
    controller: &AbortController,
) -> Result<ToolOutcome, ChatFailure> {
    execute(run, controller).await
}

/// Waits for the panel's Approve / Deny of `call_id` (`ToolDecision`, as for chat's cards),
/// after `ask` shows the question: the call is registered before, so an answer that comes
/// back at once is not lost. The controller's abort is `Stopped`; ten minutes without an
/// answer count as Deny.
pub async fn decide_after(
    call_id: &str,
    controller: &AbortController,
    ask: &mut dyn FnMut(),
) -> Result<bool, ChatFailure> {
    if controller.signal().aborted() {
        return Err(ChatFailure::Stopped);
    }
    let (_, answered) = marker(&mut |fire| {
        DECISIONS.with(|d| {
            d.borrow_mut().insert(
                call_id.to_string(),
                Asked {
                    fire,
                    approve: None,
                },
            )
        });
    });
    let badge = format!("call:{call_id}");
    crate::badge::set(
        &badge,
        Some("Tandem asks before running a tool.".to_string()),
    );
    ask();
    let (stopped, stop) = on_abort(controller);
    let (_, timeout) = after(DECISION_TIMEOUT_MS);
    let race = Promise::race(&js_sys::Array::of3(&answered, &stop, &timeout));
    let settled = JsFuture::from(race).await;
    let asked = DECISIONS.with(|d| d.borrow_mut().remove(call_id));
    crate::badge::set(&badge, None);
    match settled {
        Ok(v) if Object::is(&v, &stopped) => Err(ChatFailure::Stopped),
        // Unanswered (the timer) counts as Deny.
        _ => Ok(asked.and_then(|a| a.approve).unwrap_or(false)),
    }
}
