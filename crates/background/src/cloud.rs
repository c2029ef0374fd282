//! The browser's [`CloudTransport`]: a task session's cloud step as one HTTP request to the
//! user's provider (the adapter's translation of the request, sent and decoded by
//! [`attempt`]: a direct `fetch`, or the side panel's Firebase relay), every
//! decoded event handed on as it arrives. The send pipeline's budget and retries live in the
//! session (`tandem_core::session::CloudSession`).

use tandem_core::adapters::adapter_for;
use tandem_core::errors::{ErrorKind, ProviderError};
use tandem_core::request::UniversalRequest;
use tandem_core::send::UniversalResponse;
use tandem_core::session::{AttemptTrace, CloudTransport, SendFailure, Sleeper};
use tandem_core::stream::StreamEvent;
use web_sys::AbortController;

use crate::http::Failure;
use crate::{chrome, storage};

/// Sends with the settings saved at the time of each request, under the abort controller the
/// session was given for its task or turn (Cancel / Stop aborts the request in flight).
#[derive(Default)]
pub struct BrowserCloud;

impl CloudTransport for BrowserCloud {
    type Abort = AbortController;

    async fn send(&self, req: &UniversalRequest) -> Result<UniversalResponse, ProviderError> {
        match self.send_events(req, None, &mut |_| true).await.0 {
            Ok(r) => Ok(r),
            Err(SendFailure::Provider(e)) => Err(e),
            Err(SendFailure::Stopped) => Err(ProviderError::new(
                ErrorKind::Provider,
                "The request was stopped while the provider was answering.",
            )),
        }
    }

    async fn send_events(
        &self,
        req: &UniversalRequest,
        abort: Option<&AbortController>,
        on_event: &mut dyn FnMut(&StreamEvent) -> bool,
    ) -> (Result<UniversalResponse, SendFailure>, AttemptTrace) {
        let mut trace = AttemptTrace::default();
        let settings = match storage::settings().await {
            Ok(s) => s,
            Err(e) => return (Err(not_configured(e).into()), trace),
        };
        let cfg = match settings.active_config() {
            Ok(c) => c,
            Err(e) => return (Err(not_configured(e).into()), trace),
        };
        let http = adapter_for(cfg.kind).translate(req, &cfg);
        trace.request = serde_json::to_value(http.redacted()).ok();
        let controller = match abort {
            Some(c) => c.clone(),
            None => match AbortController::new() {
                Ok(c) => c,
                Err(e) => {
                    let e = ProviderError::new(
                        ErrorKind::Provider,
                        format!("AbortController unavailable: {}", tandem_chrome::js_text(e)),
                    );
                    return (Err(e.into()), trace);
                }
            },
        };
        let mut response = UniversalResponse::default();
        let notes = &mut trace.notes;
        let mut sink = |events: Vec<StreamEvent>| -> Result<bool, Failure> {
            // One Delta per chunk, however many frames it held.
            for event in &tandem_core::stream::coalesce_deltas(events) {
                response.apply(event);
                if let StreamEvent::Note(n) = event {
                    crate::log_warning(n);
                    notes.push(n.clone());
                }
                if !on_event(event) {
                    // Nobody reads the answer any more: stop the download too.
                    controller.abort();
                    return Err(Failure::Stopped);
                }
                if *event == StreamEvent::Done {
                    return Ok(true);
                }
            }
            Ok(false)
        };
        let result = match attempt(&http, &cfg, &controller, &mut sink).await {
            Ok(()) => Ok(response),
            Err(Failure::Provider(e)) => Err(SendFailure::Provider(e)),
            Err(Failure::Stopped) => Err(SendFailure::Stopped),
        };
        (result, trace)
    }
}

fn not_configured(e: impl ToString) -> ProviderError {
    ProviderError::new(ErrorKind::NotConfigured, e.to_string())
}

/// Waits with the worker's own timer.
pub struct Timer;

impl Sleeper for Timer {
    async fn sleep(&self, ms: u64) {
        chrome::sleep(i32::try_from(ms).unwrap_or(i32::MAX)).await;
    }
}

/// One attempt at the user's provider: Firebase through the side panel's relay (the panel
/// holds the Firebase SDK), any other provider with a direct `fetch`.
pub(crate) async fn attempt(
    http: &tandem_core::http::HttpRequest,
    cfg: &tandem_core::provider::ProviderConfig,
    controller: &AbortController,
    sink: &mut dyn FnMut(Vec<StreamEvent>) -> Result<bool, Failure>,
) -> Result<(), Failure> {
    if cfg.kind == tandem_core::provider::ProviderKind::Firebase {
        return crate::relay::attempt(http, cfg, controller, sink).await;
    }
    crate::http::attempt(http, cfg, controller, sink).await
}
