//! A provider's HTTP exchange in the worker: the `fetch` Request (the provider's headers, no
//! redirect followed), one attempt (a non-2xx answer classified by the provider's adapter,
//! the body checked and streamed), and the pump that feeds body bytes to the adapter's
//! decoder. Who sends what, and what to do with the events, is the caller's.

use js_sys::Uint8Array;
use tandem_chrome::js_text;
use tandem_core::adapters::adapter_for;
use tandem_core::errors::{
    check_content_type, network_error, redirected, ErrorKind, ProviderError,
};
use tandem_core::http::HttpRequest;
use tandem_core::provider::ProviderConfig;
use tandem_core::provider::ProviderKind;
use tandem_core::stream::{StreamDecoder, StreamEvent};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    AbortController, ReadableStreamDefaultReader, Request, RequestInit, RequestRedirect, Response,
    ResponseType,
};

use crate::chrome;

/// Why a stream ended without a normal `Done`.
pub(crate) enum Failure {
    Stopped,
    Provider(ProviderError),
}

impl Failure {
    pub(crate) fn into_error(self) -> ProviderError {
        match self {
            Failure::Provider(e) => e,
            Failure::Stopped => {
                ProviderError::new(ErrorKind::Provider, "Stopped before the answer finished.")
            }
        }
    }
}

impl From<ProviderError> for Failure {
    fn from(e: ProviderError) -> Self {
        Failure::Provider(e)
    }
}

/// One direct HTTP attempt: send, classify a non-2xx answer, stream the body into `sink`.
pub(crate) async fn attempt(
    http: &HttpRequest,
    cfg: &ProviderConfig,
    controller: &AbortController,
    sink: &mut dyn FnMut(Vec<StreamEvent>) -> Result<bool, Failure>,
) -> Result<(), Failure> {
    let adapter = adapter_for(cfg.kind);
    let response = send(http, controller, cfg).await?;
    if response.type_() == ResponseType::Opaqueredirect {
        return Err(redirected(cfg).into());
    }
    if !response.ok() {
        let retry_after = response.headers().get("retry-after").ok().flatten();
        let body = body_text(&response).await;
        return Err(adapter
            .classify_http(response.status(), &body, retry_after.as_deref(), cfg)
            .into());
    }
    let content_type = response.headers().get("content-type").ok().flatten();
    check_content_type(cfg.kind, content_type.as_deref())?;
    let reader: ReadableStreamDefaultReader = response
        .body()
        .ok_or_else(|| ProviderError::malformed(cfg.kind, "the answer had no body"))?
        .get_reader()
        .unchecked_into();
    pump(&reader, adapter.decoder(), cfg.kind, controller, sink).await
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
        let chunk = tandem_chrome::next_chunk(reader).await.map_err(|_| {
            if controller.signal().aborted() {
                Failure::Stopped
            } else {
                Failure::Provider(ProviderError::stream_cut(provider))
            }
        })?;
        let Some(value) = chunk else { break };
        let bytes = Uint8Array::new(&value).to_vec();
        if relay(decoder.push(&bytes)?)? {
            // The end marker was seen: whatever follows is not part of the answer.
            let _ = reader.cancel();
            return Ok(());
        }
    }
    relay(decoder.finish()?)?;
    Ok(())
}

/// A response's body as text; empty when it cannot be read (a refused stream, a body that is
/// not text): the callers report the status and what the body said, if anything.
pub(crate) async fn body_text(response: &Response) -> String {
    match response.text() {
        Ok(p) => JsFuture::from(p)
            .await
            .ok()
            .and_then(|v| v.as_string())
            .unwrap_or_default(),
        Err(_) => String::new(),
    }
}

async fn send(
    http: &tandem_core::http::HttpRequest,
    controller: &AbortController,
    cfg: &ProviderConfig,
) -> Result<Response, Failure> {
    let request = provider_request(http, controller, cfg)?;
    match JsFuture::from(chrome::fetch_with_request(&request)).await {
        Ok(r) => Ok(r.unchecked_into()),
        Err(_) if controller.signal().aborted() => Err(Failure::Stopped),
        Err(e) => Err(network_error(cfg, &js_text(e)).into()),
    }
}

/// The `fetch` Request for a provider: its headers, its body (none for a GET), the abort
/// signal, and no redirect followed — the request carries the API key, and following a
/// redirect would hand the key to whatever host it names (Chrome drops only Authorization on
/// a cross-origin redirect, not x-api-key or x-goog-api-key).
pub(crate) fn provider_request(
    http: &tandem_core::http::HttpRequest,
    controller: &AbortController,
    cfg: &ProviderConfig,
) -> Result<Request, ProviderError> {
    let init = RequestInit::new();
    init.set_method(http.method);
    init.set_redirect(RequestRedirect::Manual);
    if http.method != "GET" {
        init.set_body(&JsValue::from_str(&http.body));
    }
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
    Request::new_with_str_and_init(&http.url, &init).map_err(|e| {
        ProviderError::new(
            ErrorKind::NotConfigured,
            format!("Invalid request URL {}: {}", http.url, js_text(e)),
        )
    })
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
