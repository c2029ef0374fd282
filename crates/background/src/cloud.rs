//! The browser's [`CloudTransport`]: a task session's cloud step as one HTTP request to the
//! user's provider (the adapter's translation of the request, sent and decoded by
//! [`crate::chat::attempt`]), folded into a [`UniversalResponse`]. The send pipeline's
//! budget and retries live in the session (`tandem_core::session::CloudSession`).

use std::cell::RefCell;

use tandem_core::adapters::adapter_for;
use tandem_core::errors::{ErrorKind, ProviderError};
use tandem_core::request::UniversalRequest;
use tandem_core::send::UniversalResponse;
use tandem_core::session::{CloudTransport, Sleeper};
use tandem_core::stream::StreamEvent;
use web_sys::AbortController;

use crate::chat::{attempt, Failure};
use crate::{chrome, storage};

/// Sends with the settings saved at the time of each request, under the abort controller of
/// the task that is running (Cancel aborts the request in flight).
#[derive(Default)]
pub struct BrowserCloud {
    controller: RefCell<Option<AbortController>>,
}

impl BrowserCloud {
    pub fn set_controller(&self, controller: Option<AbortController>) {
        *self.controller.borrow_mut() = controller;
    }
}

impl CloudTransport for BrowserCloud {
    async fn send(&self, req: &UniversalRequest) -> Result<UniversalResponse, ProviderError> {
        let settings = storage::settings()
            .await
            .map_err(|e| ProviderError::new(ErrorKind::NotConfigured, e.to_string()))?;
        let cfg = settings
            .active_config()
            .map_err(|e| ProviderError::new(ErrorKind::NotConfigured, e.to_string()))?;
        let http = adapter_for(cfg.kind).translate(req, &cfg);
        let controller = match self.controller.borrow().clone() {
            Some(c) => c,
            None => AbortController::new().map_err(|e| {
                ProviderError::new(
                    ErrorKind::Provider,
                    format!("AbortController unavailable: {}", storage::js_text(e)),
                )
            })?,
        };
        let mut response = UniversalResponse::default();
        let mut sink = |events: Vec<StreamEvent>| -> Result<bool, Failure> {
            let mut ended = false;
            for event in &events {
                ended |= *event == StreamEvent::Done;
                response.apply(event);
            }
            Ok(ended)
        };
        match attempt(&http, &cfg, &controller, &mut sink).await {
            Ok(()) => Ok(response),
            Err(Failure::Provider(e)) => Err(e),
            Err(Failure::Stopped) => Err(ProviderError::new(
                ErrorKind::Provider,
                "The task was cancelled while the provider was answering.",
            )),
        }
    }
}

/// Waits with the worker's own timer.
pub struct Timer;

impl Sleeper for Timer {
    async fn sleep(&self, ms: u64) {
        chrome::sleep(i32::try_from(ms).unwrap_or(i32::MAX)).await;
    }
}
