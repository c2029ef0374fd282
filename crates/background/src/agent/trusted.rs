//! Trusted input through `chrome.debugger`: an action the page ignored as script events (a
//! hover a CSS `:hover` menu needs, a drag or key whose handler checks `event.isTrusted`) is
//! repeated once as the browser's own input (core `agent::trusted` says which events), while
//! the driver watches what it changes. Chrome shows that the browser is being debugged while
//! Tandem is attached, so this happens only after the page ignored the script events, and the
//! step's result says so (`RETRY_NOTE`).

use std::cell::RefCell;

use js_sys::{Object, Promise, Reflect};
use serde_json::Value;
use tandem_core::agent::trusted::{drop_events, steps, Aim, Step, RETRY_NOTE};
use tandem_core::agent::DriverCommand;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::page::{act_in_page, MapSource, NotActed, OnLook};
use crate::chrome;
use tandem_chrome::js_text;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_namespace = ["chrome", "debugger"], js_name = attach)]
    fn debugger_attach(target: &JsValue, version: &str) -> Result<Promise, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "debugger"], js_name = detach)]
    fn debugger_detach(target: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "debugger"], js_name = sendCommand)]
    fn debugger_send(target: &JsValue, method: &str, params: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "debugger", "onEvent"], js_name = addListener)]
    fn on_debugger_event(listener: &js_sys::Function) -> Result<(), JsValue>;
}

thread_local! {
    /// The data of the last drag Chrome intercepted (`Input.dragIntercepted`), by tab.
    static DRAG: RefCell<Option<(i32, JsValue)>> = const { RefCell::new(None) };
    static LISTENING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Listens for `Input.dragIntercepted` (once per worker): a listener, not a wake-up event,
/// so registering it late is fine.
fn listen_for_drags() {
    if LISTENING.with(|l| l.replace(true)) {
        return;
    }
    let listener = Closure::<dyn FnMut(JsValue, String, JsValue)>::new(
        |source: JsValue, method: String, params: JsValue| {
            if method != "Input.dragIntercepted" {
                return;
            }
            let tab = Reflect::get(&source, &"tabId".into())
                .ok()
                .and_then(|t| t.as_f64())
                .map(|t| t as i32);
            let data = Reflect::get(&params, &"data".into()).unwrap_or(JsValue::NULL);
            if let Some(tab) = tab {
                DRAG.with(|d| *d.borrow_mut() = Some((tab, data)));
            }
        },
    );
    if on_debugger_event(listener.as_ref().unchecked_ref()).is_ok() {
        // Lives as long as the worker: the listener stays registered.
        listener.forget();
    } else {
        LISTENING.with(|l| l.set(false));
    }
}

async fn call(promise: Result<Promise, JsValue>) -> Result<JsValue, String> {
    JsFuture::from(promise.map_err(|e| js_text(&e))?)
        .await
        .map_err(|e| js_text(&e))
}

async fn send(target: &JsValue, method: &str, params: &Value) -> Result<(), String> {
    let params = js_sys::JSON::parse(&params.to_string()).map_err(|e| js_text(&e))?;
    call(debugger_send(target, method, &params))
        .await
        .map(|_| ())
}

/// Repeats `command` (which the page ignored: `ignored` says so) as trusted input at `aim`
/// on the element of `handle` (or the page), and says what that changed. A command that is
/// not repeated, or a debugger Chrome refuses (another debugger attached, no permission),
/// leaves the sentence of the ignored action, with why.
pub(super) async fn repeat(
    tab: i32,
    handle: Option<&str>,
    command: &DriverCommand,
    aim: Aim,
    ignored: String,
) -> Result<String, String> {
    let Some(steps) = steps(command, &aim) else {
        return Err(ignored);
    };
    listen_for_drags();
    let target = Object::new();
    let _ = Reflect::set(&target, &"tabId".into(), &tab.into());
    let target = JsValue::from(target);
    if let Err(e) = call(debugger_attach(&target, "1.3")).await {
        return Err(format!(
            "{ignored}; repeating it as real input was not possible: {e}"
        ));
    }
    let outcome = run(tab, &target, handle, command, steps).await;
    if let Err(e) = call(debugger_detach(&target)).await {
        crate::log_error("detaching Chrome's debugger failed", &JsValue::from_str(&e));
    }
    match outcome {
        Ok(sentence) => Ok(format!("{RETRY_NOTE}; {sentence}")),
        Err(e) => Err(format!("{RETRY_NOTE}; {e}")),
    }
}

async fn run(
    tab: i32,
    target: &JsValue,
    handle: Option<&str>,
    command: &DriverCommand,
    steps: Vec<Step>,
) -> Result<String, String> {
    let watch = |r: Result<_, NotActed>| match r {
        Ok(_) => Ok(()),
        Err(NotActed::Failed(e) | NotActed::Ignored { sentence: e, .. }) => Err(e),
        Err(NotActed::Changed) => Err("the page changed".to_owned()),
    };
    watch(
        act_in_page(
            tab,
            handle,
            &DriverCommand::Observe,
            None,
            None,
            OnLook::Any,
        )
        .await,
    )?;
    DRAG.with(|d| d.borrow_mut().take());
    for step in steps {
        match step {
            Step::Send { method, params } => send(target, method, &params).await?,
            Step::DropAt { at } => {
                // The drag Chrome began is intercepted; its data is dropped where the driver
                // aimed. No drag began (the page did not start one): the release ends it.
                let mut data = None;
                for _ in 0..25 {
                    data = DRAG.with(|d| d.borrow_mut().take_if(|(t, _)| *t == tab));
                    if data.is_some() {
                        break;
                    }
                    chrome::sleep(20).await;
                }
                if let Some((_, data)) = data {
                    let data: Value = js_sys::JSON::stringify(&data)
                        .ok()
                        .and_then(|s| s.as_string())
                        .and_then(|s| tandem_core::json::from_str(&s).ok())
                        .unwrap_or(Value::Null);
                    for drop in drop_events(at, &data) {
                        if let Step::Send { method, params } = drop {
                            send(target, method, &params).await?;
                        }
                    }
                }
            }
        }
    }
    let collect = DriverCommand::Collect {
        of: Box::new(command.clone()),
    };
    match act_in_page(
        tab,
        handle,
        &collect,
        Some(&MapSource::Unknown),
        None,
        OnLook::Any,
    )
    .await
    {
        Ok(acted) => Ok(acted.sentence),
        Err(NotActed::Failed(e) | NotActed::Ignored { sentence: e, .. }) => Err(e),
        Err(NotActed::Changed) => Err("the page changed".to_owned()),
    }
}
