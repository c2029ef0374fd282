//! One streamed chat answer: settings → request → `fetch` → decoder → Port messages.
//! Every request in flight is registered with its `AbortController` so that the panel's
//! Stop, or the panel going away, aborts the HTTP stream at once.

use std::cell::RefCell;

use js_sys::{Object, Reflect, Uint8Array};
use tandem_core::adapters::adapter_for;
use tandem_core::chat::{ChatMessage, Role};
use tandem_core::errors::{network_error, ErrorKind, ProviderError};
use tandem_core::protocol::WorkerToPanel;
use tandem_core::provider::ProviderConfig;
use tandem_core::provider::ProviderKind;
use tandem_core::request::{RequestMessage, RequestOptions, UniversalRequest};
use tandem_core::stream::{StreamDecoder, StreamEvent, Usage};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::{spawn_local, JsFuture};
use web_sys::{AbortController, ReadableStreamDefaultReader, Request, RequestInit, Response};

use crate::chrome::{self, Port};
use crate::storage::{self, js_text};

const SYSTEM_PROMPT: &str =
    "You are Tandem, an assistant in the side panel of the user's browser. \
Answer clearly and concisely. Use Markdown only when it helps.";

struct Active {
    request_id: String,
    port: Port,
    controller: AbortController,
}

thread_local! {
    static ACTIVE: RefCell<Vec<Active>> = const { RefCell::new(Vec::new()) };
}

/// Why a stream ended without a normal `Done`.
pub(crate) enum Failure {
    Stopped,
    Provider(ProviderError),
}

impl From<ProviderError> for Failure {
    fn from(e: ProviderError) -> Self {
        Failure::Provider(e)
    }
}

pub fn start(port: Port, request_id: String, messages: Vec<ChatMessage>) {
    let controller = match AbortController::new() {
        Ok(c) => c,
        Err(e) => {
            crate::log_error("AbortController unavailable", &e);
            return;
        }
    };
    ACTIVE.with(|a| {
        a.borrow_mut().push(Active {
            request_id: request_id.clone(),
            port: port.clone(),
            controller: controller.clone(),
        })
    });
    spawn_local(async move {
        let last = match answer(&port, &request_id, messages, &controller).await {
            Ok(done) => done,
            Err(Failure::Stopped) => WorkerToPanel::Stopped {
                request_id: request_id.clone(),
            },
            Err(Failure::Provider(e)) => WorkerToPanel::Error {
                request_id: request_id.clone(),
                kind: e.kind,
                message: e.message,
            },
        };
        // The panel may be gone; nothing else to do then.
        let _ = post(&port, &last);
        ACTIVE.with(|a| a.borrow_mut().retain(|x| x.request_id != request_id));
    });
}

pub fn stop(request_id: &str) {
    ACTIVE.with(|a| {
        a.borrow()
            .iter()
            .filter(|x| x.request_id == request_id)
            .for_each(|x| x.controller.abort())
    });
}

pub fn stop_all_for(port: &Port) {
    ACTIVE.with(|a| {
        a.borrow()
            .iter()
            .filter(|x| Object::is(x.port.as_ref(), port.as_ref()))
            .for_each(|x| x.controller.abort())
    });
}

fn post(port: &Port, message: &WorkerToPanel) -> Result<(), JsValue> {
    port.post_message(&JsValue::from_str(&message.to_json()))
}

async fn answer(
    port: &Port,
    request_id: &str,
    messages: Vec<ChatMessage>,
    controller: &AbortController,
) -> Result<WorkerToPanel, Failure> {
    let settings = storage::settings()
        .await
        .map_err(|e| ProviderError::new(ErrorKind::NotConfigured, e.to_string()))?;
    let cfg = settings
        .active_config()
        .map_err(|e| ProviderError::new(ErrorKind::NotConfigured, e.to_string()))?;
    let adapter = adapter_for(cfg.kind);
    let http = adapter.translate(&universal_request(&cfg, &messages), &cfg);

    let response = send(&http, controller, &cfg).await?;
    if !response.ok() {
        let retry_after = response.headers().get("retry-after").ok().flatten();
        let body = match response.text() {
            Ok(p) => JsFuture::from(p)
                .await
                .ok()
                .and_then(|v| v.as_string())
                .unwrap_or_default(),
            Err(_) => String::new(),
        };
        return Err(adapter
            .classify_http(response.status(), &body, retry_after.as_deref(), &cfg)
            .into());
    }

    let reader: ReadableStreamDefaultReader = response
        .body()
        .ok_or_else(|| ProviderError::malformed(cfg.kind, "the answer had no body"))?
        .get_reader()
        .unchecked_into();
    let mut done = DoneInfo::default();
    pump(&reader, adapter.decoder(), cfg.kind, controller, |events| {
        done.relay(port, request_id, events, controller)
    })
    .await?;
    Ok(done.into_message(request_id))
}

/// Reads a response body to its end (or to the decoder's end marker), handing each batch
/// of decoded events to `relay`, which returns true to stop early.
pub(crate) async fn pump(
    reader: &ReadableStreamDefaultReader,
    mut decoder: Box<dyn StreamDecoder>,
    provider: ProviderKind,
    controller: &AbortController,
    mut relay: impl FnMut(Vec<StreamEvent>) -> Result<bool, Failure>,
) -> Result<(), Failure> {
    loop {
        let chunk = JsFuture::from(reader.read()).await.map_err(|_| {
            if controller.signal().aborted() {
                Failure::Stopped
            } else {
                Failure::Provider(ProviderError::stream_cut(provider))
            }
        })?;
        if Reflect::get(&chunk, &"done".into())
            .map(|d| d.is_truthy())
            .unwrap_or(true)
        {
            break;
        }
        let bytes = Reflect::get(&chunk, &"value".into())
            .map(|v| Uint8Array::new(&v).to_vec())
            .unwrap_or_default();
        if relay(decoder.push(&bytes)?)? {
            // The end marker was seen: whatever follows is not part of the answer.
            let _ = reader.cancel();
            return Ok(());
        }
    }
    relay(decoder.finish()?)?;
    Ok(())
}

fn universal_request(cfg: &ProviderConfig, messages: &[ChatMessage]) -> UniversalRequest {
    UniversalRequest {
        model: cfg.model.clone(),
        system: Some(SYSTEM_PROMPT.to_string()),
        messages: messages
            .iter()
            .filter(|m| !m.hidden && m.role != Role::System && !m.content.is_empty())
            .map(|m| RequestMessage {
                role: m.role,
                content: m.content.clone(),
                images: Vec::new(),
            })
            .collect(),
        options: RequestOptions::default(),
    }
}

async fn send(
    http: &tandem_core::http::HttpRequest,
    controller: &AbortController,
    cfg: &ProviderConfig,
) -> Result<Response, Failure> {
    let init = RequestInit::new();
    init.set_method(http.method);
    init.set_body(&JsValue::from_str(&http.body));
    init.set_signal(Some(&controller.signal()));
    let headers =
        web_sys::Headers::new().map_err(|e| ProviderError::malformed(cfg.kind, &js_text(e)))?;
    for (k, v) in &http.headers {
        headers.append(k, v).map_err(|e| {
            ProviderError::new(
                ErrorKind::NotConfigured,
                format!("Invalid header {k}: {}", js_text(e)),
            )
        })?;
    }
    init.set_headers(&headers);
    let request = Request::new_with_str_and_init(&http.url, &init).map_err(|e| {
        ProviderError::new(
            ErrorKind::NotConfigured,
            format!("Invalid request URL {}: {}", http.url, js_text(e)),
        )
    })?;
    match JsFuture::from(chrome::fetch_with_request(&request)).await {
        Ok(r) => Ok(r.unchecked_into()),
        Err(_) if controller.signal().aborted() => Err(Failure::Stopped),
        Err(e) => Err(network_error(cfg, &js_text(e)).into()),
    }
}

/// What the stream said about itself, gathered for the final `Done` message.
#[derive(Default)]
struct DoneInfo {
    usage: Option<Usage>,
    finish_reason: Option<String>,
    model: Option<String>,
}

impl DoneInfo {
    /// Sends the deltas on; returns true when the stream's end marker was seen.
    fn relay(
        &mut self,
        port: &Port,
        request_id: &str,
        events: Vec<StreamEvent>,
        controller: &AbortController,
    ) -> Result<bool, Failure> {
        for event in events {
            match event {
                StreamEvent::Delta(text) => {
                    let message = WorkerToPanel::Delta {
                        request_id: request_id.to_string(),
                        text,
                    };
                    if post(port, &message).is_err() {
                        // The panel closed: stop the download too.
                        controller.abort();
                        return Err(Failure::Stopped);
                    }
                }
                StreamEvent::Usage(u) => self.usage = Some(u),
                StreamEvent::Finish(r) => self.finish_reason = Some(r),
                StreamEvent::Model(m) => self.model = Some(m),
                StreamEvent::Done => return Ok(true),
            }
        }
        Ok(false)
    }

    fn into_message(self, request_id: &str) -> WorkerToPanel {
        WorkerToPanel::Done {
            request_id: request_id.to_string(),
            usage: self.usage,
            finish_reason: self.finish_reason,
            model: self.model,
        }
    }
}

#[cfg(all(test, target_arch = "wasm32"))]
mod tests {
    use super::*;
    use tandem_core::adapters::adapter_for;
    use wasm_bindgen::prelude::*;
    use wasm_bindgen_test::*;

    wasm_bindgen_test_configure!(run_in_service_worker);

    #[wasm_bindgen(inline_js = "
        export function chunked_body(text, sizes) {
            const bytes = new TextEncoder().encode(text);
            let at = 0, i = 0;
            return new ReadableStream({
                pull(controller) {
                    if (at >= bytes.length) { controller.close(); return; }
                    const n = sizes[i++ % sizes.length];
                    controller.enqueue(bytes.slice(at, at + n));
                    at += n;
                },
            }).getReader();
        }
        export function failing_body(text) {
            const bytes = new TextEncoder().encode(text);
            let sent = false;
            return new ReadableStream({
                pull(controller) {
                    if (!sent) { sent = true; controller.enqueue(bytes); return; }
                    controller.error(new TypeError('network error'));
                },
            }).getReader();
        }
    ")]
    extern "C" {
        fn chunked_body(text: &str, sizes: Vec<u32>) -> ReadableStreamDefaultReader;
        fn failing_body(text: &str) -> ReadableStreamDefaultReader;
    }

    const STREAM: &str = "data: {\"choices\":[{\"delta\":{\"content\":\"h\u{e9}llo \"},\"finish_reason\":null}]}\n\n\
        data: {\"choices\":[{\"delta\":{\"content\":\"\u{4e16}\u{754c} \u{1f389}\"},\"finish_reason\":null}]}\n\n\
        data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n\
        data: [DONE]\n\n";

    async fn collect(reader: ReadableStreamDefaultReader) -> Result<String, Failure> {
        let controller = AbortController::new().expect("AbortController");
        let mut text = String::new();
        pump(
            &reader,
            adapter_for(ProviderKind::OpenAi).decoder(),
            ProviderKind::OpenAi,
            &controller,
            |events| {
                for e in events {
                    match e {
                        StreamEvent::Delta(d) => text.push_str(&d),
                        StreamEvent::Done => return Ok(true),
                        _ => {}
                    }
                }
                Ok(false)
            },
        )
        .await?;
        Ok(text)
    }

    /// Real browser byte chunks, split inside multi-byte characters and inside `data:` lines,
    /// reach the decoder intact.
    #[wasm_bindgen_test]
    async fn body_bytes_split_anywhere_decode_to_the_same_text() {
        for sizes in [vec![1], vec![2, 3], vec![7, 1, 13], vec![4096]] {
            let text = collect(chunked_body(STREAM, sizes.clone()))
                .await
                .ok()
                .expect("stream decodes");
            assert_eq!(
                text, "h\u{e9}llo \u{4e16}\u{754c} \u{1f389}",
                "chunk sizes {sizes:?}"
            );
        }
    }

    #[wasm_bindgen_test]
    async fn a_body_that_errors_mid_way_is_a_stream_cut() {
        let first = &STREAM[..STREAM
            .find("data: {\"choices\":[{\"delta\":{},")
            .expect("marker")];
        match collect(failing_body(first)).await {
            Err(Failure::Provider(e)) => assert_eq!(e.kind, ErrorKind::StreamCut),
            Err(Failure::Stopped) => panic!("reported as stopped"),
            Ok(t) => panic!("reported success with {t:?}"),
        }
    }

    #[wasm_bindgen_test]
    async fn a_body_that_ends_without_the_end_marker_is_a_stream_cut() {
        let first = &STREAM[..STREAM
            .find("data: {\"choices\":[{\"delta\":{},")
            .expect("marker")];
        match collect(chunked_body(first, vec![10])).await {
            Err(Failure::Provider(e)) => assert_eq!(e.kind, ErrorKind::StreamCut),
            _ => panic!("a cut stream was not reported as cut"),
        }
    }
}
