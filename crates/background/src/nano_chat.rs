//! Chat on Gemini Nano. One on-device `HybridSession` per conversation: created once with
//! the system prompt and the visible history as `initialPrompts`, then reused, so each
//! message sends only the new turn. When Nano cannot answer (no model, destroyed, quota,
//! timeout), the caller's cloud pipeline answers from the same visible history: nothing of
//! the conversation is lost, and the conversation stays on the cloud from then on.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use tandem_core::chat::{ChatMessage, Role};
use tandem_core::errors::{ErrorKind, ProviderError};
use tandem_core::protocol::WorkerToPanel;
use tandem_core::provider::Settings;
use tandem_core::request::UniversalRequest;
use tandem_core::send::UniversalResponse;
use tandem_core::session::{
    Availability, CloudTransport, HybridSession, NanoBackend, NanoCreateOptions, Preferred,
    SessionConfig, SessionError, SessionManager, Sleeper, StreamUpdate,
};
use wasm_bindgen_futures::spawn_local;
use web_sys::AbortController;

use crate::chat::{post, SYSTEM_PROMPT};
use crate::chrome::{self, Port};
use crate::nano::{prompt_api_present, BrowserNano};

pub const NANO_LABEL: &str = "Gemini Nano (on device)";
/// A step that takes longer than this is treated as a failed step.
const STEP_TIMEOUT_MS: u64 = 60_000;

/// Chat sessions never fail over inside the manager (the chat's own cloud pipeline does,
/// with its budget, retries and Debug report), so the manager gets no cloud transport.
struct NoCloud;

impl CloudTransport for NoCloud {
    async fn send(&self, _req: &UniversalRequest) -> Result<UniversalResponse, ProviderError> {
        Err(ProviderError::new(
            ErrorKind::NotConfigured,
            "no cloud in an on-device chat session",
        ))
    }
}

struct Timer;

impl Sleeper for Timer {
    async fn sleep(&self, ms: u64) {
        chrome::sleep(ms.min(i32::MAX as u64) as i32).await;
    }
}

type Manager = SessionManager<BrowserNano, NoCloud, Timer>;
type Session = HybridSession<BrowserNano, NoCloud, Timer>;

/// The live Nano session of the conversation, and what it has seen (role and text of each
/// visible message), to know whether the next message continues it.
struct ChatSession {
    session: Session,
    seen: Vec<(Role, String)>,
}

thread_local! {
    static MANAGER: Rc<Manager> = Rc::new(SessionManager::new(BrowserNano::default(), NoCloud, Timer, None));
    static CHAT: RefCell<Option<ChatSession>> = const { RefCell::new(None) };
    /// The first message of a conversation that failed over: it stays on the cloud.
    static ON_CLOUD: RefCell<Option<String>> = const { RefCell::new(None) };
}

pub enum NanoOutcome {
    /// Nano answered; the `Done` message to send.
    Answered(WorkerToPanel),
    Stopped,
    /// On-device only, and Nano could not answer.
    Failed(ProviderError),
    /// Not for Nano (cloud preferred, no model, or it failed): use the cloud pipeline.
    NotUsed,
}

fn visible(messages: &[ChatMessage]) -> Vec<&ChatMessage> {
    messages
        .iter()
        .filter(|m| !m.hidden && m.role != Role::System && !m.content.is_empty())
        .collect()
}

pub async fn try_answer(
    port: &Port,
    request_id: &str,
    messages: &[ChatMessage],
    settings: &Settings,
    controller: &AbortController,
) -> NanoOutcome {
    let mode = settings.on_device;
    let visible = visible(messages);
    let Some((request, history)) = visible.split_last() else {
        return NanoOutcome::NotUsed;
    };
    let conversation = visible
        .first()
        .map(|m| m.content.clone())
        .unwrap_or_default();
    let failed_before = ON_CLOUD.with(|c| c.borrow().as_deref() == Some(conversation.as_str()));
    if mode == Preferred::Cloud || (failed_before && mode == Preferred::Auto) {
        return NanoOutcome::NotUsed;
    }
    if !request.images.is_empty() && mode == Preferred::Auto {
        // Chat sessions on the device take text; pictures go to the cloud provider.
        return NanoOutcome::NotUsed;
    }
    let unusable = |why: String| match mode {
        Preferred::Nano => NanoOutcome::Failed(ProviderError::new(
            ErrorKind::NotConfigured,
            format!(
                "Gemini Nano cannot answer: {why}. Settings → On-device model allows the cloud."
            ),
        )),
        _ => NanoOutcome::NotUsed,
    };
    let availability = match availability(&manager()).await {
        Ok(a) => a,
        Err(why) => return unusable(why),
    };
    if availability != Availability::Available {
        return unusable(format!(
            "the on-device model is {}",
            availability_word(availability)
        ));
    }

    let seen: Vec<(Role, String)> = history
        .iter()
        .map(|m| (m.role, m.content.clone()))
        .collect();
    let mut chat = CHAT
        .with(|c| c.borrow_mut().take())
        .filter(|c| c.seen == seen);
    if chat.is_none() {
        let config = SessionConfig {
            system_prompt: SYSTEM_PROMPT.to_string(),
            initial_history: history.iter().map(|m| (*m).clone()).collect(),
            preferred: Preferred::Nano,
            step_timeout_ms: Some(STEP_TIMEOUT_MS),
            ..SessionConfig::default()
        };
        let created = manager().create(config).await;
        match created {
            Ok(session) => chat = Some(ChatSession { session, seen }),
            Err(e) => return fail_over(port, request_id, mode, &conversation, &e, false),
        }
    }
    let Some(mut chat) = chat else {
        return NanoOutcome::NotUsed;
    };

    let streamed = Rc::new(Cell::new(false));
    let stopped = Rc::new(Cell::new(false));
    let (s, st) = (streamed.clone(), stopped.clone());
    let mut on_update = |update: StreamUpdate<'_>| {
        if st.get() {
            return;
        }
        if controller.signal().aborted() {
            // The Prompt API stream cannot be cancelled from here; the user's Stop ends the
            // answer now and the rest is dropped.
            st.set(true);
            let _ = post(
                port,
                &WorkerToPanel::Stopped {
                    request_id: request_id.to_string(),
                },
            );
            return;
        }
        if let StreamUpdate::Delta(text) = update {
            s.set(true);
            let _ = post(
                port,
                &WorkerToPanel::Delta {
                    request_id: request_id.to_string(),
                    text: text.to_string(),
                },
            );
        }
    };
    let result = chat
        .session
        .invoke_streaming(&request.content, None, &mut on_update)
        .await;
    if stopped.get() {
        // The session saw an answer the user did not keep: start afresh next time.
        chat.session.destroy();
        return NanoOutcome::Stopped;
    }
    match result {
        Ok(answer) => {
            chat.seen.push((Role::User, request.content.clone()));
            chat.seen.push((Role::Assistant, answer));
            let usage = chat
                .session
                .token_log()
                .last()
                .map(|t| tandem_core::stream::Usage {
                    input: t.sent,
                    output: t.received,
                });
            CHAT.with(|c| *c.borrow_mut() = Some(chat));
            NanoOutcome::Answered(WorkerToPanel::Done {
                request_id: request_id.to_string(),
                usage,
                finish_reason: None,
                model: Some("gemini-nano".into()),
                provider: Some(NANO_LABEL.into()),
            })
        }
        Err(e) => {
            chat.session.destroy();
            fail_over(port, request_id, mode, &conversation, &e, streamed.get())
        }
    }
}

fn manager() -> Rc<Manager> {
    MANAGER.with(Rc::clone)
}

async fn availability(m: &Manager) -> Result<Availability, String> {
    if !prompt_api_present() {
        return Err("this browser has no Prompt API".to_string());
    }
    m.nano()
        .availability(&text_options())
        .await
        .map_err(|e| e.to_string())
}

/// Nano failed mid-conversation: tell the panel, and let the cloud answer from the start.
fn fail_over(
    port: &Port,
    request_id: &str,
    mode: Preferred,
    conversation: &str,
    e: &SessionError,
    streamed: bool,
) -> NanoOutcome {
    if mode == Preferred::Nano {
        return NanoOutcome::Failed(ProviderError::new(
            ErrorKind::Provider,
            format!("Gemini Nano failed: {e}"),
        ));
    }
    ON_CLOUD.with(|c| *c.borrow_mut() = Some(conversation.to_string()));
    let note = format!(
        "The on-device model stopped ({e}); your cloud provider continues this conversation."
    );
    // Restart also when nothing streamed yet: the panel shows the switch in the answer.
    let _ = streamed;
    let _ = post(
        port,
        &WorkerToPanel::Restart {
            request_id: request_id.to_string(),
            note,
        },
    );
    NanoOutcome::NotUsed
}

fn text_options() -> NanoCreateOptions {
    NanoCreateOptions::for_session(&SessionConfig::default(), Vec::new())
}

fn availability_word(a: Availability) -> &'static str {
    match a {
        Availability::Available => "available",
        Availability::Downloadable => "downloadable",
        Availability::Downloading => "downloading",
        Availability::Unavailable => "unavailable",
    }
}

/// Answers Settings' question "what can Nano do?"; with `download`, starts the model
/// download (the user's click is the consent) and reports its progress until it is there.
pub fn report_status(port: Port, request_id: String, download: bool) {
    spawn_local(async move {
        let send = |availability: &str, progress: Option<f64>, detail: String| {
            let _ = post(
                &port,
                &WorkerToPanel::NanoStatus {
                    request_id: request_id.clone(),
                    availability: availability.to_string(),
                    progress,
                    detail,
                },
            );
        };
        let availability = match availability(&manager()).await {
            Ok(a) => a,
            Err(why) => return send("unavailable", None, why),
        };
        let detail = match availability {
            Availability::Available => match crate::nano::params().await {
                Some(p) => format!(
                    "ready on this device (top-K up to {}, temperature up to {})",
                    p.get("maxTopK").and_then(|v| v.as_f64()).unwrap_or(0.0),
                    p.get("maxTemperature")
                        .and_then(|v| v.as_f64())
                        .unwrap_or(0.0)
                ),
                None => "ready on this device".to_string(),
            },
            Availability::Downloadable => "the model can be downloaded (about 2 GB)".to_string(),
            Availability::Downloading => "the model is downloading".to_string(),
            Availability::Unavailable => "this device or browser cannot run it".to_string(),
        };
        let wants_download = download
            && matches!(
                availability,
                Availability::Downloadable | Availability::Downloading
            );
        if !wants_download {
            return send(availability_word(availability), None, detail);
        }
        let progress_port = port.clone();
        let progress_id = request_id.clone();
        let on_progress: Rc<dyn Fn(f64)> = Rc::new(move |loaded: f64| {
            let _ = post(
                &progress_port,
                &WorkerToPanel::NanoStatus {
                    request_id: progress_id.clone(),
                    availability: "downloading".into(),
                    progress: Some(loaded.clamp(0.0, 1.0)),
                    detail: format!(
                        "downloading the model: {:.0}%",
                        loaded.clamp(0.0, 1.0) * 100.0
                    ),
                },
            );
        });
        let m = manager();
        *m.nano().on_progress.borrow_mut() = Some(on_progress);
        let created = m.nano().create(&text_options()).await;
        *m.nano().on_progress.borrow_mut() = None;
        match created {
            Ok(model) => {
                // The download was the point; sessions are created per conversation.
                tandem_core::session::NanoModel::destroy(&model);
                send("available", Some(1.0), "ready on this device".into());
            }
            Err(e) => send("unavailable", None, format!("the download failed: {e}")),
        }
    });
}
