//! The provider at run time in the worker: `js/bridge.js` listens, this module decides (with
//! `protocol` and `registration`) and answers through `chrome.runtime`.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::{Function, Promise, Reflect, JSON};
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{spawn_local, JsFuture};

use crate::protocol::{self, ProviderMessage, Route, ToolResult};
use crate::provider::ToolProvider;
use crate::registration::{self, State, Step, Trigger};

#[wasm_bindgen(module = "/js/bridge.js")]
extern "C" {
    fn attach(handler: &JsValue);
}

#[wasm_bindgen]
extern "C" {
    // Bound as globals and looked up at call time: a worker has no `window`.
    #[wasm_bindgen(catch, js_namespace = ["chrome", "runtime"], js_name = sendMessage)]
    fn send_message(extension_id: &str, message: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(js_name = setTimeout)]
    fn set_timeout(callback: &Function, ms: i32) -> JsValue;
    #[wasm_bindgen(js_namespace = console, js_name = log)]
    fn console_log(text: &str);
    #[wasm_bindgen(js_namespace = console, js_name = warn)]
    fn console_warn(text: &str);
}

struct Running {
    provider: ToolProvider,
    state: Cell<State>,
    /// Bumped by each new registration; a loop whose number is no longer current stops,
    /// so an ORCHESTRATOR_READY replaces a registration under way instead of racing it.
    generation: Cell<u32>,
}

thread_local! {
    static RUNNING: RefCell<Option<Rc<Running>>> = const { RefCell::new(None) };
}

fn running() -> Option<Rc<Running>> {
    RUNNING.with(|r| r.borrow().clone())
}

impl ToolProvider {
    /// Starts serving: takes the messages and lifecycle events `js/bridge.js` has queued
    /// since the worker started, and registers with Tandem (see the crate docs for when it
    /// registers again). Call it once, from the `#[wasm_bindgen(start)]` function. A second
    /// call replaces the first provider.
    pub fn start(self) {
        for problem in self.problems() {
            console_warn(&format!("{}: {problem}", self.name));
        }
        let running = Rc::new(Running {
            provider: self,
            state: Cell::new(State::Idle),
            generation: Cell::new(0),
        });
        RUNNING.with(|r| *r.borrow_mut() = Some(running.clone()));
        // Registration is sent before the queued events are replayed: a queued
        // onInstalled then finds it under way rather than starting a second one.
        trigger(&running, Trigger::WorkerStart);
        let handler = Closure::<dyn FnMut(String, JsValue, JsValue, JsValue)>::new(on_event);
        // The listeners live as long as the worker: so does the closure they call.
        attach(&handler.into_js_value());
    }
}

/// Removes every tool of this provider from Tandem (`UNREGISTER_TOOLS`). Tandem's answer,
/// or why there was none, comes back as the error.
pub async fn unregister() -> Result<(), String> {
    let Some(running) = running() else {
        return Err("the provider was not started".into());
    };
    // A registration still retrying would put the tools back.
    running
        .generation
        .set(running.generation.get().wrapping_add(1));
    running.state.set(State::Idle);
    let answer = send(
        &running.provider.orchestrator,
        &ProviderMessage::UnregisterTools,
    )
    .await?;
    match answer.as_ref().and_then(protocol::RegisterAnswer::parse) {
        Some(protocol::RegisterAnswer::Refused(error)) => Err(error),
        _ => Ok(()),
    }
}

fn on_event(kind: String, message: JsValue, sender_id: JsValue, respond: JsValue) {
    let Some(running) = running() else { return };
    match kind.as_str() {
        "installed" | "startup" => trigger(&running, Trigger::Lifecycle),
        "message" => {
            let respond: Function = respond.unchecked_into();
            on_message(
                &running,
                &message,
                sender_id.as_string().as_deref(),
                respond,
            );
        }
        _ => {}
    }
}

fn on_message(
    running: &Rc<Running>,
    message: &JsValue,
    sender_id: Option<&str>,
    respond: Function,
) {
    let message = from_js(message).unwrap_or(Value::Null);
    match protocol::route(&message, sender_id, &running.provider.orchestrator) {
        Route::Refuse => {
            console_warn(&format!(
                "{}: refused a message from {}: only {} may use this provider",
                running.provider.name,
                sender_id.unwrap_or("a sender without an extension id"),
                running.provider.orchestrator
            ));
            reply(&respond, &protocol::refusal());
        }
        Route::Reregister => {
            reply(&respond, &protocol::acknowledged());
            trigger(running, Trigger::OrchestratorReady);
        }
        Route::Invalid(error) => reply(&respond, &ToolResult::error(error).to_json()),
        Route::Execute(call) => {
            let result = running.provider.execute(call);
            spawn_local(async move { reply(&respond, &result.await.to_json()) });
        }
    }
}

fn reply(respond: &Function, answer: &Value) {
    // The sender may be gone (its worker stopped): nothing to do about it here.
    let _ = respond.call1(&JsValue::NULL, &to_js(answer));
}

fn trigger(running: &Rc<Running>, trigger: Trigger) {
    if !registration::starts_registration(running.state.get(), trigger) {
        return;
    }
    let generation = running.generation.get().wrapping_add(1);
    running.generation.set(generation);
    running.state.set(State::InFlight);
    spawn_local(register(running.clone(), generation));
}

async fn register(running: Rc<Running>, generation: u32) {
    let name = &running.provider.name;
    let message = running.provider.register_message();
    let current = || running.generation.get() == generation;
    let mut attempt = 0;
    while current() {
        let sent = send(&running.provider.orchestrator, &message).await;
        if !current() {
            return;
        }
        match registration::next_step(attempt, registration::classify(sent)) {
            Step::Registered(names) => {
                running.state.set(State::Registered);
                console_log(&format!("{name}: registered {}", names.join(", ")));
                return;
            }
            Step::AwaitReady(error) => {
                running.state.set(State::AwaitingReady);
                console_log(&format!(
                    "{name}: Tandem did not take the tools yet ({error}); waiting for ORCHESTRATOR_READY"
                ));
                return;
            }
            Step::GiveUp(error) => {
                running.state.set(State::GaveUp);
                console_warn(&format!(
                    "{name}: Tandem did not answer after {} attempts ({error}); trying again at the next start",
                    registration::MAX_ATTEMPTS
                ));
                return;
            }
            Step::Retry { after_ms } => {
                sleep(after_ms).await;
                attempt += 1;
            }
        }
    }
}

/// Sends `message` to `extension_id`: `Ok(answer)` when the call completed (`None` for an
/// `undefined` answer), `Err(reason)` when Chrome could not deliver it.
async fn send(extension_id: &str, message: &ProviderMessage) -> Result<Option<Value>, String> {
    let message = serde_json::to_value(message).map_err(|e| e.to_string())?;
    let promise = send_message(extension_id, &to_js(&message)).map_err(|e| error_text(&e))?;
    let answer = JsFuture::from(promise).await.map_err(|e| error_text(&e))?;
    Ok(from_js(&answer))
}

async fn sleep(ms: u32) {
    let ms = i32::try_from(ms).unwrap_or(i32::MAX);
    let promise = Promise::new(&mut |resolve, _| {
        set_timeout(&resolve, ms);
    });
    let _ = JsFuture::from(promise).await;
}

/// A JS value as JSON. Messages from `chrome.runtime` were JSON-serialised by Chrome on the
/// way, so this loses nothing; `None` for `undefined` and for what JSON cannot hold.
fn from_js(value: &JsValue) -> Option<Value> {
    let text = JSON::stringify(value).ok()?.as_string()?;
    serde_json::from_str(&text).ok()
}

fn to_js(value: &Value) -> JsValue {
    // serde_json's output is always valid JSON, so the parse cannot fail.
    JSON::parse(&value.to_string()).unwrap_or(JsValue::NULL)
}

fn error_text(error: &JsValue) -> String {
    Reflect::get(error, &"message".into())
        .ok()
        .and_then(|m| m.as_string())
        .or_else(|| error.as_string())
        .unwrap_or_else(|| "unknown error".into())
}
