//! One streamed chat answer: settings → request → `fetch` → decoder → Port messages.
//! Every request in flight is registered with its `AbortController` so that the panel's
//! Stop, or the panel going away, aborts the HTTP stream at once.

use std::cell::RefCell;

use js_sys::{Object, Reflect, Uint8Array};
use tandem_core::adapters::adapter_for;
use tandem_core::budget::{build_request, Conversation, TokenCache};
use tandem_core::chat::Role;
use tandem_core::errors::{
    check_content_type, network_error, redirected, ErrorKind, ProviderError,
};
use tandem_core::http::HttpRequest;
use tandem_core::memory::Turn;
use tandem_core::protocol::WorkerToPanel;
use tandem_core::provider::ProviderKind;
use tandem_core::provider::{ProviderConfig, ProviderSettings, Settings};
use tandem_core::request::{RequestMessage, RequestOptions, ToolCall, UniversalRequest};
use tandem_core::send::{Action, RetryPolicy, SendPlan};
use tandem_core::stream::{StreamDecoder, StreamEvent, Usage};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::{spawn_local, JsFuture};
use web_sys::{
    AbortController, ReadableStreamDefaultReader, Request, RequestInit, RequestRedirect, Response,
    ResponseType,
};

use crate::chrome::{self, Port};
use crate::nano_chat::NanoOutcome;
use crate::storage::{self, js_text};

pub(crate) const SYSTEM_PROMPT: &str =
    "You are Tandem, an assistant in the side panel of the user's browser. \
Answer clearly and concisely. Use Markdown only when it helps.";

struct Active {
    request_id: String,
    port: Port,
    controller: AbortController,
}

thread_local! {
    /// Token counts per conversation pair, computed once while the worker lives.
    static TOKENS: RefCell<TokenCache> = RefCell::new(TokenCache::new());
    static ACTIVE: RefCell<Vec<Active>> = const { RefCell::new(Vec::new()) };
}

/// Why a stream ended without a normal `Done`.
pub(crate) enum Failure {
    Stopped,
    Provider(ProviderError),
}

impl Failure {
    fn into_error(self) -> ProviderError {
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

/// Answers the turn `turn` resolves to (it reads the tab's session first), streaming to
/// `port`. Registered before `turn` resolves, so a Stop that arrives meanwhile counts.
pub fn start(
    port: Port,
    request_id: String,
    turn: impl std::future::Future<Output = Result<Turn, ProviderError>> + 'static,
) {
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
        let answered = match turn.await {
            Ok(_) if controller.signal().aborted() => Err(Failure::Stopped),
            Ok(turn) => answer(&port, &request_id, turn, &controller).await,
            Err(e) => Err(e.into()),
        };
        let last = match answered {
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

pub(crate) fn post(port: &Port, message: &WorkerToPanel) -> Result<(), JsValue> {
    // The tab's session records the answer as the panel sees it, whoever answered.
    crate::memory::observe(message);
    // Everything a panel shows passes the one redactor: a provider may echo the key. The one
    // message that must carry a credential is the Firebase request the panel itself sends
    // to Firebase (the relay); nothing of it is shown.
    let json = message.to_json();
    let json = match message {
        WorkerToPanel::Fetch { .. } => json,
        _ => crate::redact::out(&json),
    };
    port.post_message(&JsValue::from_str(&json))
}

async fn answer(
    port: &Port,
    request_id: &str,
    turn: Turn,
    controller: &AbortController,
) -> Result<WorkerToPanel, Failure> {
    let messages = &turn.messages;
    let settings = load_settings().await?;
    // On-device first: one Nano session per conversation. When it cannot answer, the cloud
    // pipeline below answers from the same visible history, so nothing is lost.
    // A Nano turn that failed after tool calls hands over what it did: the cloud continues
    // after those rounds (appended below like its own), so no tool runs twice.
    let handoff =
        match crate::nano_chat::try_answer(port, request_id, messages, &settings, controller).await
        {
            NanoOutcome::Answered(done) => return Ok(done),
            NanoOutcome::Stopped => return Err(Failure::Stopped),
            NanoOutcome::Failed(e) => return Err(e.into()),
            NanoOutcome::NotUsed(handoff) => handoff,
        };
    let (cfg, info) = settings.active_model().map_err(not_configured)?;
    let conversation = Conversation::from_messages(messages).map_err(ProviderError::from)?;
    // The budget over the visible history; what it leaves out for lack of room goes into the
    // system prompt, distilled (or, for a selected-text question, the history becomes notes).
    let prepared = TOKENS
        .with(|cache| {
            turn.plan(
                &conversation,
                SYSTEM_PROMPT,
                conversation.request.images.len(),
                info.context_window,
                &settings.budget,
                &settings.memory,
                &mut cache.borrow_mut(),
            )
        })
        .map_err(ProviderError::from)?;
    let system = prepared.system;
    let mut plan = SendPlan::new(
        prepared.budget,
        RetryPolicy::with_settings(&settings.budget),
    );
    let adapter = adapter_for(cfg.kind);
    // Tools of approved providers: a message with tools is a multi-step turn (model → tools
    // → model …), each round appended after the budgeted history.
    let tools = crate::tools::specs().await;
    let mut rounds = handoff.rounds;
    let mut tool_turns: Vec<RequestMessage> = handoff.tool_turns;
    loop {
        let options = RequestOptions {
            // Anthropic requires a limit, and rejects one that overflows the window.
            max_output_tokens: (cfg.kind == ProviderKind::Anthropic).then(|| {
                plan.budget()
                    .breakdown
                    .remaining_for_response
                    .min(info.max_output)
                    .max(1)
            }),
            context_window: Some(info.context_window),
            temperature: None,
        };
        let mut request = build_request(
            plan.budget(),
            &conversation,
            Some(&system),
            &conversation.request.images,
            &cfg.model,
            options,
        );
        request.tools = tools.clone();
        request.messages.extend(tool_turns.iter().cloned());
        let http = adapter.translate(&request, &cfg);
        let mut done = DoneInfo::default();
        let outcome = attempt(&http, &cfg, controller, &mut |events| {
            done.relay(port, request_id, events, controller)
        })
        .await;
        let outcome = match outcome {
            Ok(()) => Ok(()),
            Err(Failure::Provider(e)) => Err(e),
            Err(Failure::Stopped) => {
                post_debug(port, request_id, &cfg, &plan, &http, &done);
                return Err(Failure::Stopped);
            }
        };
        let failed_after_text = if done.streamed_any {
            outcome.as_ref().err().cloned()
        } else {
            None
        };
        let mut action = plan.record(outcome);
        if let Some(e) = failed_after_text {
            // The user already saw part of this answer: sending it again would repeat text,
            // so the failure stands.
            action = Action::Fail(e);
        }
        post_debug(port, request_id, &cfg, &plan, &http, &done);
        match action {
            Action::Done if !done.tool_calls.is_empty() => {
                let calls = std::mem::take(&mut done.tool_calls);
                let outcomes =
                    crate::tools::run_round(port, request_id, &calls, &mut rounds, controller)
                        .await?;
                tool_turns.push(RequestMessage {
                    tool_calls: calls,
                    ..RequestMessage::text(Role::Assistant, std::mem::take(&mut done.text))
                });
                tool_turns.push(RequestMessage {
                    tool_results: outcomes,
                    ..RequestMessage::text(Role::User, "")
                });
            }
            Action::Done => {
                // Usage is matched to the history's pairs; a turn with tool rounds sent more.
                if let (Some(usage), true) = (done.usage, tool_turns.is_empty()) {
                    TOKENS.with(|cache| cache.borrow_mut().record_usage(plan.budget(), usage));
                }
                return Ok(done.into_message(request_id, cfg.kind));
            }
            Action::RetryAfter { ms } => {
                wait_before_retry(port, request_id, &cfg, ms, controller).await?
            }
            Action::TrimAndRetry => {}
            Action::Fail(e) => return Err(e.into()),
        }
    }
}

fn not_configured(e: impl ToString) -> ProviderError {
    ProviderError::new(ErrorKind::NotConfigured, e.to_string())
}

async fn load_settings() -> Result<Settings, ProviderError> {
    storage::settings().await.map_err(not_configured)
}

/// One HTTP attempt: send, classify a non-2xx answer, stream the body into `sink`.
pub(crate) async fn attempt(
    http: &HttpRequest,
    cfg: &ProviderConfig,
    controller: &AbortController,
    sink: &mut dyn FnMut(Vec<StreamEvent>) -> Result<bool, Failure>,
) -> Result<(), Failure> {
    if cfg.kind == ProviderKind::Firebase {
        return crate::relay::attempt(http, cfg, controller, sink).await;
    }
    let adapter = adapter_for(cfg.kind);
    let response = send(http, controller, cfg).await?;
    if response.type_() == ResponseType::Opaqueredirect {
        return Err(redirected(cfg).into());
    }
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

/// Waits `ms` before a retry, telling the user every second, and keeping the worker alive
/// (messages on a Port reset its idle timer).
async fn wait_before_retry(
    port: &Port,
    request_id: &str,
    cfg: &ProviderConfig,
    ms: u64,
    controller: &AbortController,
) -> Result<(), Failure> {
    let mut left = ms;
    while left > 0 {
        let text = format!(
            "{} is busy; retrying in {} s…",
            cfg.kind.label(),
            left.div_ceil(1000)
        );
        let _ = post(
            port,
            &WorkerToPanel::Status {
                request_id: request_id.to_string(),
                text,
            },
        );
        let step = left.min(1000);
        chrome::sleep(step as i32).await;
        left -= step;
        if controller.signal().aborted() {
            return Err(Failure::Stopped);
        }
    }
    Ok(())
}

fn post_debug(
    port: &Port,
    request_id: &str,
    cfg: &ProviderConfig,
    plan: &SendPlan,
    http: &HttpRequest,
    done: &DoneInfo,
) {
    let report = serde_json::json!({
        "provider": cfg.kind.label(),
        "model": cfg.model,
        "budget": plan.budget(),
        "request": http.redacted(),
        "attempts": plan.attempts(),
        "usage": done.usage,
        "notes": done.notes,
    });
    let _ = post(
        port,
        &WorkerToPanel::Debug {
            request_id: request_id.to_string(),
            report,
        },
    );
}

/// Settings → "Test connection": a one-token request with the form's values (the saved key
/// when the field is empty). Returns the sentence to show.
pub fn test_connection(
    port: Port,
    request_id: String,
    provider: ProviderKind,
    mut form: ProviderSettings,
) {
    spawn_local(async move {
        let result = async {
            let settings = load_settings().await?;
            if form.api_key.trim().is_empty() {
                form.api_key = settings
                    .providers
                    .get(&provider)
                    .map(|p| p.api_key.clone())
                    .unwrap_or_default();
            }
            let cfg = ProviderConfig::from_settings(provider, &form).map_err(not_configured)?;
            let request = UniversalRequest {
                model: cfg.model.clone(),
                system: None,
                messages: vec![RequestMessage::text(Role::User, "Reply with OK.")],
                options: RequestOptions {
                    max_output_tokens: Some(1),
                    ..RequestOptions::default()
                },
                tools: Vec::new(),
            };
            let controller = AbortController::new()
                .map_err(|e| ProviderError::malformed(provider, &js_text(e)))?;
            let http = adapter_for(provider).translate(&request, &cfg);
            // The first event proves the whole path: key, model, CORS, stream format.
            attempt(&http, &cfg, &controller, &mut |_| Ok(true))
                .await
                .map_err(Failure::into_error)?;
            controller.abort();
            Ok::<_, ProviderError>(format!(
                "Connected: {} answered with model {}.",
                provider.label(),
                cfg.model
            ))
        }
        .await;
        let (ok, message) = match result {
            Ok(m) => (true, m),
            Err(e) => (false, e.message),
        };
        let _ = post(
            &port,
            &WorkerToPanel::ConnectionResult {
                request_id,
                ok,
                message,
            },
        );
    });
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

async fn send(
    http: &tandem_core::http::HttpRequest,
    controller: &AbortController,
    cfg: &ProviderConfig,
) -> Result<Response, Failure> {
    let init = RequestInit::new();
    init.set_method(http.method);
    // A redirect is not followed: the request carries the API key, and following it would
    // hand the key to whatever host the redirect names (Chrome drops only Authorization on a
    // cross-origin redirect, not x-api-key or x-goog-api-key).
    init.set_redirect(RequestRedirect::Manual);
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
    streamed_any: bool,
    /// The answer's text in this attempt, for the assistant turn a tool round carries.
    text: String,
    /// The tools the model called in this attempt.
    tool_calls: Vec<ToolCall>,
    usage: Option<Usage>,
    finish_reason: Option<String>,
    model: Option<String>,
    /// Frames the decoder skipped, for the Debug drawer.
    notes: Vec<String>,
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
                    self.streamed_any = true;
                    self.text.push_str(&text);
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
                // Run once the stream ends: a call is complete when its event arrives, but
                // the model may make several.
                StreamEvent::ToolCall(call) => self.tool_calls.push(call),
                StreamEvent::Note(n) => {
                    crate::log_warning(&n);
                    self.notes.push(n);
                }
                StreamEvent::Done => return Ok(true),
            }
        }
        Ok(false)
    }

    fn into_message(self, request_id: &str, provider: ProviderKind) -> WorkerToPanel {
        WorkerToPanel::Done {
            request_id: request_id.to_string(),
            usage: self.usage,
            finish_reason: self.finish_reason,
            model: self.model,
            provider: Some(provider.label().to_string()),
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
