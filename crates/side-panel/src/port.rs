//! The Port to the service worker, and the dispatch of what it brings: each message goes to
//! the view that registered for its [`Route`] (the conversation, the task, Settings, the
//! Firebase relay, the memory that follows the tab). Views post through [`post`]; this module
//! knows none of them.

use std::cell::RefCell;

use tandem_core::protocol::{PanelToWorker, WorkerToPanel, CHAT_PORT};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

use crate::chrome::{self, Port};

thread_local! {
    static PORT: RefCell<Option<Port>> = const { RefCell::new(None) };
}

/// Posts on the Port, connecting first when there is none (first use, or after the service
/// worker was stopped: connecting wakes it).
pub(crate) fn post(message: &PanelToWorker) -> Result<(), String> {
    let port = PORT.with(|p| p.borrow().clone());
    let port = match port {
        Some(p) => p,
        None => connect()?,
    };
    port.post_message(&JsValue::from_str(&message.to_json()))
        .map_err(tandem_chrome::js_text)
}

fn connect() -> Result<Port, String> {
    let info = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&info, &"name".into(), &CHAT_PORT.into());
    let port = chrome::runtime_connect(&info).map_err(tandem_chrome::js_text)?;
    attach(&port);
    Ok(port)
}

/// The request id of the bootstrap's question about the on-device model.
pub(crate) use tandem_core::protocol::EARLY_STATUS_ID;

thread_local! {
    /// What the worker said on the bootstrap's Port before [`adopt`]: handed to the views by
    /// [`replay_early`], once they are wired.
    static HEARD: RefCell<Vec<JsValue>> = const { RefCell::new(Vec::new()) };
}

/// Takes over the Port the bootstrap opened while the wasm compiled (`early`: `{ port,
/// adopt }`, see `extension/sidepanel.js`), so that a stopped worker woke meanwhile and its
/// answer about the on-device model is already here. False when there is none or it closed
/// (the worker was stopped): the panel then connects on its first message, as it always did,
/// and asks its own questions.
pub(crate) fn adopt(early: &JsValue) -> bool {
    let field = |name: &str| js_sys::Reflect::get(early, &name.into()).ok();
    let (Some(port), Some(adopt)) = (
        field("port").filter(JsValue::is_object),
        field("adopt").and_then(|f| f.dyn_into::<js_sys::Function>().ok()),
    ) else {
        return false;
    };
    // An array of what was heard; null once the Port closed.
    let Some(heard) = adopt
        .call0(early)
        .ok()
        .and_then(|h| h.dyn_into::<js_sys::Array>().ok())
    else {
        return false;
    };
    let port: Port = port.unchecked_into();
    attach(&port);
    HEARD.with(|h| *h.borrow_mut() = heard.iter().collect());
    true
}

/// Hands what the worker said before [`adopt`] to the views (call once they are wired).
pub(crate) fn replay_early() {
    for message in HEARD.with(|h| h.take()) {
        receive(&message);
    }
}

fn receive(msg: &JsValue) {
    match msg.as_string().as_deref().map(WorkerToPanel::from_json) {
        Some(Ok(m)) => dispatch(m),
        _ => web_sys::console::warn_2(
            &"Tandem: ignored a malformed message from the worker".into(),
            msg,
        ),
    }
}

/// Listens on `port` and makes it the one [`post`] uses.
fn attach(port: &Port) {
    let on_message = Closure::<dyn FnMut(JsValue)>::new(|msg: JsValue| receive(&msg));
    port.on_message()
        .add_listener(on_message.as_ref().unchecked_ref());
    on_message.forget();
    let on_disconnect = Closure::<dyn FnMut()>::new(|| {
        PORT.with(|p| *p.borrow_mut() = None);
        let hooks = ON_GONE.with(|g| g.borrow().clone());
        hooks.iter().for_each(|f| f());
    });
    port.on_disconnect()
        .add_listener(on_disconnect.as_ref().unchecked_ref());
    on_disconnect.forget();
    PORT.with(|p| *p.borrow_mut() = Some(port.clone()));
}

/// Which view a message from the worker is for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    /// The task's state.
    Task,
    /// Which conversation to show (the memory that follows the tab).
    Memory,
    /// Settings' questions: "Test connection", "List models", the on-device model.
    Settings,
    /// The Firebase relay's fetches.
    Relay,
    /// The answer being streamed.
    Chat,
}

type Handler = fn(WorkerToPanel);

thread_local! {
    static ROUTES: RefCell<Vec<(Route, Handler)>> = const { RefCell::new(Vec::new()) };
    static ON_GONE: RefCell<Vec<fn()>> = const { RefCell::new(Vec::new()) };
}

/// `handler` receives the messages for `route` (each view registers its own when it is wired,
/// so this module depends on none of them).
pub(crate) fn route(route: Route, handler: Handler) {
    ROUTES.with(|r| r.borrow_mut().push((route, handler)));
}

/// `f` hears that the worker's Port closed (the worker was stopped).
pub(crate) fn on_gone(f: fn()) {
    ON_GONE.with(|g| g.borrow_mut().push(f));
}

fn route_of(message: &WorkerToPanel) -> Route {
    match message {
        WorkerToPanel::TaskState { .. } | WorkerToPanel::TaskDelta { .. } => Route::Task,
        WorkerToPanel::Conversation { .. } | WorkerToPanel::Changed { .. } => Route::Memory,
        WorkerToPanel::ConnectionResult { .. }
        | WorkerToPanel::Models { .. }
        | WorkerToPanel::NanoStatus { .. } => Route::Settings,
        WorkerToPanel::Fetch { .. } | WorkerToPanel::FetchAbort { .. } => Route::Relay,
        _ => Route::Chat,
    }
}

/// Hands a message from the worker (on the Port, or a broadcast the memory believed) to the
/// view it is for.
pub(crate) fn dispatch(message: WorkerToPanel) {
    let route = route_of(&message);
    let handler = ROUTES.with(|r| {
        r.borrow()
            .iter()
            .find(|(x, _)| *x == route)
            .map(|(_, h)| *h)
    });
    if let Some(handler) = handler {
        handler(message);
    }
}
