//! Chat on Gemini Nano. One on-device `HybridSession` per conversation: created once with
//! the system prompt and the visible history as `initialPrompts`, then reused, so each
//! message sends only the new turn. When Nano cannot answer (no model, destroyed, quota,
//! timeout), the caller's cloud pipeline answers from the same visible history: nothing of
//! the conversation is lost, and the conversation stays on the cloud from then on.
//!
//! Tools: Nano has no native tool calling in stable Chrome, so with approved tools the session
//! is told how to call them (`tandem_core::tools::nano`) and each reply is structured output,
//! a call or an answer. A call runs through the cloud's door (`tools::run_round`: policy,
//! schema, Ask, `TOOL_EXECUTE`, the cards), and its fenced result is the next prompt on the
//! same session, until Nano answers. When Nano fails after some calls, the cloud continues
//! from them ([`Handoff`]): no tool runs twice.

use std::cell::RefCell;
use std::rc::Rc;

use tandem_core::chat::{ChatMessage, Role};
use tandem_core::errors::{ErrorKind, ProviderError};
use tandem_core::protocol::WorkerToPanel;
use tandem_core::provider::Settings;
use tandem_core::request::{RequestMessage, ToolSpec, UniversalRequest};
use tandem_core::send::UniversalResponse;
use tandem_core::session::{
    Availability, CloudTransport, HybridSession, NanoBackend, NanoCreateOptions, Preferred,
    SessionConfig, SessionError, SessionManager, Sleeper, StreamUpdate,
};
use tandem_core::tools::{parse_reply, response_constraint, result_turn, NanoReply, Rounds};
use wasm_bindgen_futures::spawn_local;
use web_sys::AbortController;

use crate::chat::{post, Failure, SYSTEM_PROMPT};
use crate::chrome::{self, Port};
use crate::nano::{prompt_api_present, BrowserNano};

pub const NANO_LABEL: &str = "Gemini Nano (on device)";
/// A step that takes longer than this is treated as a failed step.
const STEP_TIMEOUT_MS: u64 = 60_000;

/// Chat sessions never fail over inside the manager (the chat's own cloud pipeline does,
/// with its budget, retries and Debug report), so the manager gets no cloud transport.
struct NoCloud;

impl CloudTransport for NoCloud {
    type Abort = ();

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
    /// The tools its instructions list; other tools need another session.
    tools: Vec<ToolSpec>,
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
    /// Not for Nano (cloud preferred, no model, or it failed): use the cloud pipeline,
    /// continuing from what Nano already did in this turn.
    NotUsed(Handoff),
}

/// What a turn Nano gave up on leaves to the cloud: the tool rounds it completed (calls
/// already run, results already shown), so the cloud continues after them and no tool runs
/// twice, and the rounds they used, so the turn keeps one limit.
#[derive(Default)]
pub struct Handoff {
    /// Assistant `tool_calls` turns, each followed by the user turn with their `tool_results`.
    pub tool_turns: Vec<RequestMessage>,
    pub rounds: Rounds,
}

fn not_used() -> NanoOutcome {
    NanoOutcome::NotUsed(Handoff::default())
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
        return not_used();
    };
    let conversation = visible
        .first()
        .map(|m| m.content.clone())
        .unwrap_or_default();
    let failed_before = ON_CLOUD.with(|c| c.borrow().as_deref() == Some(conversation.as_str()));
    if mode == Preferred::Cloud || (failed_before && mode == Preferred::Auto) {
        return not_used();
    }
    if !request.images.is_empty() && mode == Preferred::Auto {
        // Chat sessions on the device take text; pictures go to the cloud provider.
        return not_used();
    }
    let unusable = |why: String| match mode {
        Preferred::Nano => NanoOutcome::Failed(ProviderError::new(
            ErrorKind::NotConfigured,
            format!(
                "Gemini Nano cannot answer: {why}. Settings → On-device model allows the cloud."
            ),
        )),
        _ => not_used(),
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

    // Tools of approved providers. Nano has no native tool calling: the session is told how
    // to call them (with the system prompt, once) and each reply is constrained to a call
    // or an answer.
    let tools = crate::tools::specs().await;
    let seen: Vec<(Role, String)> = history
        .iter()
        .map(|m| (m.role, m.content.clone()))
        .collect();
    let mut chat = CHAT
        .with(|c| c.borrow_mut().take())
        .filter(|c| c.seen == seen && c.tools == tools);
    if chat.is_none() {
        let config = SessionConfig {
            system_prompt: SYSTEM_PROMPT.to_string(),
            schema_instructions: if tools.is_empty() {
                String::new()
            } else {
                tandem_core::tools::instructions(&tools)
            },
            initial_history: history.iter().map(|m| (*m).clone()).collect(),
            preferred: Preferred::Nano,
            step_timeout_ms: Some(STEP_TIMEOUT_MS),
            ..SessionConfig::default()
        };
        let created = manager().create(config).await;
        match created {
            Ok(session) => {
                chat = Some(ChatSession {
                    session,
                    seen,
                    tools: tools.clone(),
                })
            }
            Err(e) => {
                return fail_over(
                    port,
                    request_id,
                    mode,
                    &conversation,
                    &e,
                    Handoff::default(),
                )
            }
        }
    }
    let Some(mut chat) = chat else {
        return not_used();
    };

    // The turn: the user's message, then (with tools) each tool result, on the same session,
    // until Nano answers.
    let first_record = chat.session.token_log().len();
    let mut handoff = Handoff::default();
    let mut prompt = request.content.clone();
    let mut calls = 0u32;
    let answer = loop {
        // With the rounds used up, only an answer fits the constraint.
        let offered: &[ToolSpec] = if handoff.rounds.exhausted() {
            &[]
        } else {
            &tools
        };
        let constraint = (!tools.is_empty()).then(|| response_constraint(offered));
        let mut relay = Relay::new(port, request_id, controller, constraint.is_some());
        let result = chat
            .session
            .invoke_streaming(&prompt, constraint.as_ref(), &mut |u| relay.update(u))
            .await;
        if relay.stopped {
            // The session saw an answer the user did not keep: start afresh next time.
            chat.session.destroy();
            return NanoOutcome::Stopped;
        }
        let reply = match result {
            Ok(reply) => reply,
            Err(e) => {
                chat.session.destroy();
                return fail_over(port, request_id, mode, &conversation, &e, handoff);
            }
        };
        if constraint.is_none() {
            break reply;
        }
        calls += 1;
        let call = match parse_reply(&reply, call_id(request_id, calls)) {
            NanoReply::Answer(answer) => break relay.finish(answer),
            NanoReply::Call(call) => call,
        };
        // The same door as the cloud's calls: policy, schema, Ask, TOOL_EXECUTE, the cards.
        let round = std::slice::from_ref(&call);
        let run =
            crate::tools::run_round(port, request_id, round, &mut handoff.rounds, controller).await;
        let outcomes = match run {
            Ok(outcomes) => outcomes,
            Err(Failure::Stopped) => {
                chat.session.destroy();
                return NanoOutcome::Stopped;
            }
            Err(Failure::Provider(e)) => {
                chat.session.destroy();
                return NanoOutcome::Failed(e);
            }
        };
        prompt = outcomes
            .iter()
            .map(result_turn)
            .collect::<Vec<_>>()
            .join("\n\n");
        handoff.tool_turns.push(RequestMessage {
            tool_calls: vec![call],
            ..RequestMessage::text(Role::Assistant, "")
        });
        handoff.tool_turns.push(RequestMessage {
            tool_results: outcomes,
            ..RequestMessage::text(Role::User, "")
        });
    };
    chat.seen.push((Role::User, request.content.clone()));
    chat.seen.push((Role::Assistant, answer));
    // Every prompt of the turn counts (a turn with tool rounds prompts more than once).
    let usage = chat
        .session
        .token_log()
        .get(first_record..)
        .and_then(|log| {
            (!log.is_empty()).then(|| tandem_core::stream::Usage {
                input: log.iter().map(|t| t.sent).sum(),
                output: log.iter().map(|t| t.received).sum(),
            })
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

/// A call id for Nano, which has none: unique across requests (the panel's Approve / Deny
/// and the cards are keyed by it) and in the `[A-Za-z0-9_-]` every cloud API accepts, as the
/// cloud may continue the turn with it.
fn call_id(request_id: &str, n: u32) -> String {
    let safe: String = request_id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .take(40)
        .collect();
    format!("nano_{safe}_{n}")
}

/// Sends one Nano reply to the panel as it streams. Without tools it is the answer itself;
/// with tools it is JSON, of which only the text of an `{"answer": …}` is shown, as it
/// grows; a tool call shows as its card instead.
struct Relay<'a> {
    port: &'a Port,
    request_id: &'a str,
    controller: &'a AbortController,
    json: bool,
    /// The reply so far (JSON replies only).
    raw: String,
    /// What the panel was sent.
    posted: String,
    stopped: bool,
}

impl<'a> Relay<'a> {
    fn new(
        port: &'a Port,
        request_id: &'a str,
        controller: &'a AbortController,
        json: bool,
    ) -> Self {
        Self {
            port,
            request_id,
            controller,
            json,
            raw: String::new(),
            posted: String::new(),
            stopped: false,
        }
    }

    fn update(&mut self, update: StreamUpdate<'_>) {
        if self.stopped {
            return;
        }
        if self.controller.signal().aborted() {
            // The Prompt API stream cannot be cancelled from here; the user's Stop ends the
            // answer now and the rest is dropped.
            self.stopped = true;
            let _ = post(
                self.port,
                &WorkerToPanel::Stopped {
                    request_id: self.request_id.to_string(),
                },
            );
            return;
        }
        match update {
            StreamUpdate::Delta(text) if !self.json => self.send(text.to_string()),
            StreamUpdate::Delta(text) => {
                self.raw.push_str(text);
                let grown =
                    tandem_core::tools::nano::partial_answer(&self.raw).and_then(|so_far| {
                        so_far
                            .strip_prefix(self.posted.as_str())
                            .map(str::to_string)
                    });
                if let Some(more) = grown {
                    self.send(more);
                }
            }
            // The session asks again (the reply was not the JSON asked for): what was shown
            // of the rejected reply goes.
            StreamUpdate::Restart { .. } => {
                self.raw.clear();
                if !std::mem::take(&mut self.posted).is_empty() {
                    let _ = post(
                        self.port,
                        &WorkerToPanel::Restart {
                            request_id: self.request_id.to_string(),
                            note: "Gemini Nano's reply was not in the expected form; it answers again."
                                .to_string(),
                        },
                    );
                }
            }
        }
    }

    fn send(&mut self, text: String) {
        if text.is_empty() {
            return;
        }
        self.posted.push_str(&text);
        let _ = post(
            self.port,
            &WorkerToPanel::Delta {
                request_id: self.request_id.to_string(),
                text,
            },
        );
    }

    /// The whole answer, once the reply is complete: what did not stream yet (all of it,
    /// when the reply was not shaped for streaming) is sent now.
    fn finish(mut self, answer: String) -> String {
        match answer.strip_prefix(self.posted.as_str()) {
            Some(rest) => {
                let rest = rest.to_string();
                self.send(rest);
                answer
            }
            None => {
                // Only a reply that is not valid JSON can read differently in full than
                // in part; the user keeps what they saw.
                crate::log_warning("Gemini Nano's answer changed after it was shown");
                self.posted
            }
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

/// Nano failed mid-conversation: tell the panel, and let the cloud answer from the visible
/// history and the tool rounds Nano completed (`handoff`).
fn fail_over(
    port: &Port,
    request_id: &str,
    mode: Preferred,
    conversation: &str,
    e: &SessionError,
    handoff: Handoff,
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
    // Restart also when nothing streamed yet: the panel shows the switch in the answer (the
    // tool cards of the turn stay).
    let _ = post(
        port,
        &WorkerToPanel::Restart {
            request_id: request_id.to_string(),
            note,
        },
    );
    NanoOutcome::NotUsed(handoff)
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
