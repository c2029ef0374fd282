//! Firebase AI Logic through the side panel. The design card puts the Firebase call in the
//! panel, so the worker keeps every decision (request, budget, retries, decoding) and only
//! the HTTP exchange happens there: `Fetch` goes to the panel, its `FetchHead`,
//! `FetchChunk`s and `FetchEnd` come back and are read here like a response body.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use tandem_core::adapters::adapter_for;
use tandem_core::errors::{network_error, ErrorKind, ProviderError};
use tandem_core::http::HttpRequest;
use tandem_core::protocol::WorkerToPanel;
use tandem_core::provider::ProviderConfig;
use tandem_core::stream::StreamEvent;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::AbortController;

use crate::chrome::Port;
use crate::http::Failure;
use crate::outbox::post;

pub enum RelayEvent {
    Head {
        status: u16,
        retry_after: Option<String>,
    },
    Chunk(String),
    End(Option<String>),
}

struct Queue {
    events: VecDeque<RelayEvent>,
    /// The panel doing the fetch closed: after what it sent, no more will come.
    closed: bool,
    waker: Option<Waker>,
    /// The panel doing the fetch: if it goes away, so does the answer.
    port: Port,
}

thread_local! {
    static PENDING: RefCell<HashMap<String, Rc<RefCell<Queue>>>> = RefCell::new(HashMap::new());
    /// Open side panels, newest last: the relay goes through the newest.
    static PANELS: RefCell<Vec<Port>> = const { RefCell::new(Vec::new()) };
    static NEXT_ID: RefCell<u64> = const { RefCell::new(0) };
}

/// A panel spoke on `port`: it can relay.
pub fn panel_seen(port: &Port) {
    PANELS.with(|p| {
        let mut p = p.borrow_mut();
        p.retain(|x| !js_sys::Object::is(x.as_ref(), port.as_ref()));
        p.push(port.clone());
    });
}

pub fn panel_gone(port: &Port) {
    PANELS.with(|p| {
        p.borrow_mut()
            .retain(|x| !js_sys::Object::is(x.as_ref(), port.as_ref()))
    });
    let orphans: Vec<String> = PENDING.with(|p| {
        p.borrow()
            .iter()
            .filter(|(_, q)| js_sys::Object::is(q.borrow().port.as_ref(), port.as_ref()))
            .map(|(id, _)| id.clone())
            .collect()
    });
    for id in orphans {
        if let Some(queue) = PENDING.with(|p| p.borrow().get(&id).cloned()) {
            let mut q = queue.borrow_mut();
            q.closed = true;
            if let Some(w) = q.waker.take() {
                w.wake();
            }
        }
    }
}

/// An event for relayed fetch `fetch_id`, from the panel.
pub fn deliver(fetch_id: &str, event: RelayEvent) {
    let Some(queue) = PENDING.with(|p| p.borrow().get(fetch_id).cloned()) else {
        return;
    };
    let mut q = queue.borrow_mut();
    q.events.push_back(event);
    if let Some(w) = q.waker.take() {
        w.wake();
    }
}

struct Next(Rc<RefCell<Queue>>);

/// The next event; `None` once the panel closed and everything it sent was read.
impl Future for Next {
    type Output = Option<RelayEvent>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<RelayEvent>> {
        let mut q = self.0.borrow_mut();
        match q.events.pop_front() {
            Some(e) => Poll::Ready(Some(e)),
            None if q.closed => Poll::Ready(None),
            None => {
                q.waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

/// One relayed request, removed from the table when dropped.
struct Relayed {
    id: String,
    queue: Rc<RefCell<Queue>>,
}

impl Relayed {
    /// The next event from the panel; a panel that closed ends the call.
    async fn next(&self, cfg: &ProviderConfig) -> Result<RelayEvent, Failure> {
        Next(self.queue.clone())
            .await
            .ok_or_else(|| ProviderError::needs_panel(cfg.kind, true).into())
    }
}

impl Drop for Relayed {
    fn drop(&mut self) {
        PENDING.with(|p| p.borrow_mut().remove(&self.id));
    }
}

/// The same contract as a direct `attempt`: send, classify a failure, stream into `sink`.
pub async fn attempt(
    http: &HttpRequest,
    cfg: &ProviderConfig,
    controller: &AbortController,
    sink: &mut dyn FnMut(Vec<StreamEvent>) -> Result<bool, Failure>,
) -> Result<(), Failure> {
    let Some(port) = PANELS.with(|p| p.borrow().last().cloned()) else {
        return Err(ProviderError::needs_panel(cfg.kind, false).into());
    };
    let id = NEXT_ID.with(|n| {
        *n.borrow_mut() += 1;
        format!("f{}", n.borrow())
    });
    let queue = Queue {
        events: VecDeque::new(),
        closed: false,
        waker: None,
        port: port.clone(),
    };
    let relayed = Relayed {
        id: id.clone(),
        queue: Rc::new(RefCell::new(queue)),
    };
    PENDING.with(|p| p.borrow_mut().insert(id.clone(), relayed.queue.clone()));
    // Stop (or a closed panel) must end the wait at once, and the panel's fetch too.
    let (abort_port, abort_id) = (port.clone(), id.clone());
    let on_abort = Closure::<dyn FnMut()>::new(move || {
        let _ = post(
            &abort_port,
            &WorkerToPanel::FetchAbort {
                fetch_id: abort_id.clone(),
            },
        );
        deliver(&abort_id, RelayEvent::End(Some("aborted".into())));
    });
    let signal = controller.signal();
    let _ = signal.add_event_listener_with_callback("abort", on_abort.as_ref().unchecked_ref());
    let result = run(&relayed, &port, http, cfg, controller, sink).await;
    let _ = signal.remove_event_listener_with_callback("abort", on_abort.as_ref().unchecked_ref());
    result
}

async fn run(
    relayed: &Relayed,
    port: &Port,
    http: &HttpRequest,
    cfg: &ProviderConfig,
    controller: &AbortController,
    sink: &mut dyn FnMut(Vec<StreamEvent>) -> Result<bool, Failure>,
) -> Result<(), Failure> {
    let fetch = WorkerToPanel::Fetch {
        fetch_id: relayed.id.clone(),
        url: http.url.clone(),
        headers: http.headers.clone(),
        body: http.body.clone(),
    };
    if post(port, &fetch).is_err() {
        panel_gone(port);
        return Err(ProviderError::needs_panel(cfg.kind, true).into());
    }
    let ended = |error: Option<String>| -> Failure {
        match error {
            _ if controller.signal().aborted() => Failure::Stopped,
            Some(e) => Failure::Provider(network_error(cfg, &e)),
            None => Failure::Provider(ProviderError::stream_cut(cfg.kind)),
        }
    };
    let adapter = adapter_for(cfg.kind);
    let (status, retry_after) = match relayed.next(cfg).await? {
        RelayEvent::Head {
            status,
            retry_after,
        } => (status, retry_after),
        RelayEvent::End(error) => return Err(ended(error.or(Some("no answer".into())))),
        RelayEvent::Chunk(_) => {
            return Err(ProviderError::malformed(cfg.kind, "body before status").into())
        }
    };
    if !(200..300).contains(&status) {
        let mut body = String::new();
        while let RelayEvent::Chunk(text) = relayed.next(cfg).await? {
            body.push_str(&text);
        }
        return Err(adapter
            .classify_http(status, &body, retry_after.as_deref(), cfg)
            .into());
    }
    let mut decoder = adapter.decoder();
    loop {
        match relayed.next(cfg).await? {
            RelayEvent::Chunk(text) => {
                if sink(decoder.push(text.as_bytes())?)? {
                    let _ = post(
                        port,
                        &WorkerToPanel::FetchAbort {
                            fetch_id: relayed.id.clone(),
                        },
                    );
                    return Ok(());
                }
            }
            RelayEvent::End(None) => {
                sink(decoder.finish()?)?;
                return Ok(());
            }
            RelayEvent::End(Some(e)) => return Err(ended(Some(e)).into_stream_cut(cfg)),
            RelayEvent::Head { .. } => {}
        }
    }
}

impl Failure {
    /// A body that broke off after it started is a cut stream, not an unreachable server.
    fn into_stream_cut(self, cfg: &ProviderConfig) -> Failure {
        match self {
            Failure::Provider(e) if e.kind == ErrorKind::Network => {
                Failure::Provider(ProviderError::stream_cut(cfg.kind))
            }
            other => other,
        }
    }
}
