//! One streamed chat answer: settings → request → `fetch` → decoder → Port messages.
//! Every request in flight is registered with its `AbortController` so that the panel's
//! Stop, or the panel going away, aborts the HTTP stream at once.

use std::cell::RefCell;

use js_sys::Object;
use tandem_core::agent::cost;
use tandem_core::budget::{Budget, BudgetError, Conversation, TokenCache};
use tandem_core::chat::ChatMessage;
use tandem_core::errors::{ErrorKind, ProviderError};
use tandem_core::memory::Turn;
use tandem_core::protocol::WorkerToPanel;
use tandem_core::provider::ProviderKind;
use tandem_core::request::{RequestOptions, ToolCall, ToolSpec};
use tandem_core::send::UniversalResponse;
use tandem_core::session::{
    AttemptReport, CloudConfig, ProviderId, RequestPlanner, RoundFuture, SendFailure, SessionError,
    Transcript, TurnHooks,
};
use tandem_core::settings::Settings;
use tandem_core::stream::{StreamEvent, Usage};
use tandem_core::tools::Rounds;
use wasm_bindgen_futures::spawn_local;
use web_sys::AbortController;

use crate::chrome::{self, Port};
use crate::http::Failure;
use crate::outbox::{self, post};
use crate::sessions;
use crate::storage;

/// The prompts stay English (one wording to tune and test); the answer is in the person's
/// language, which their own message shows better than the browser's setting.
pub(crate) const SYSTEM_PROMPT: &str =
    "You are Tandem, an assistant in the side panel of the user's browser. \
Answer clearly and concisely, in the language the user writes in. Use Markdown only when it helps.";

/// The chat's system prompt: with tools offered, it says their descriptions are third
/// parties' data (the `tools` field carries them outside any fence).
fn system_prompt(tools: &[ToolSpec]) -> String {
    match tools.is_empty() {
        true => SYSTEM_PROMPT.to_string(),
        false => format!("{SYSTEM_PROMPT}\n\n{}", tandem_core::tools::TOOLS_RULE),
    }
}

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
    outbox::track(&request_id);
    spawn_local(async move {
        // Read once for the turn: the stall watch and the answer see the same settings.
        let settings = storage::settings().await.map_err(not_configured);
        spawn_local(watch(
            port.clone(),
            request_id.clone(),
            controller.clone(),
            settings.as_ref().ok().cloned(),
        ));
        let answered = match (turn.await, settings) {
            (Ok(_), _) if controller.signal().aborted() => Err(Failure::Stopped),
            (Ok(turn), Ok(settings)) => {
                answer(&port, &request_id, turn, &settings, &controller).await
            }
            (Ok(_), Err(e)) | (Err(e), _) => Err(e.into()),
        };
        let stalled = outbox::untrack(&request_id);
        let last = match (answered, stalled) {
            (Ok(done), _) => done,
            // The watch stopped it: not the user, so say why.
            (Err(Failure::Stopped), Some(message)) => WorkerToPanel::Error {
                request_id: request_id.clone(),
                kind: ErrorKind::Stalled,
                message,
                said: None,
            },
            (Err(Failure::Stopped), None) => WorkerToPanel::Stopped {
                request_id: request_id.clone(),
            },
            (Err(Failure::Provider(e)), _) => WorkerToPanel::Error {
                request_id: request_id.clone(),
                kind: e.kind,
                said: Some(e.message_said()).filter(|m| m.has_key()),
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

/// Watches an answer in flight: after a third of the stall limit (at most 20 s) without a sign
/// of life the user reads that Tandem is still waiting; at the limit the request is aborted
/// and the answer ends with a sentence, what arrived kept. A running tool is not a stall.
async fn watch(
    port: Port,
    request_id: String,
    controller: AbortController,
    settings: Option<Settings>,
) {
    let limit_s = settings
        .as_ref()
        .map_or(60, |s| s.budget.stall_seconds)
        .max(1);
    let warn_ms = f64::from((limit_s / 3).clamp(1, 20)) * 1000.0;
    let limit_ms = f64::from(limit_s) * 1000.0;
    let who = match settings.as_ref() {
        Some(s) if s.on_device == tandem_core::session::Preferred::Nano => "Gemini Nano",
        Some(s) => s.active.map_or("the AI provider", |k| k.label()),
        None => "the AI provider",
    };
    let mut warned = false;
    loop {
        chrome::sleep(500).await;
        let Some((idle, in_tool)) = outbox::activity(&request_id) else {
            return; // the answer ended
        };
        if in_tool {
            continue;
        }
        if idle >= limit_ms {
            let message = format!(
                "{who} sent nothing for {limit_s} s, so Tandem stopped waiting. What arrived is kept; send your message again to retry."
            );
            outbox::mark_stalled(&request_id, message);
            controller.abort();
            return;
        }
        let text = match (idle >= warn_ms, warned) {
            (true, false) => format!("Still waiting for {who}… (Stop to give up)"),
            // Life again: the line goes.
            (false, true) => String::new(),
            _ => continue,
        };
        warned = !warned;
        let status = WorkerToPanel::Status {
            request_id: request_id.clone(),
            text,
        };
        let _ = outbox::post_quiet(&port, &status);
    }
}

fn not_configured(e: impl ToString) -> ProviderError {
    ProviderError::new(ErrorKind::NotConfigured, e.to_string())
}

async fn answer(
    port: &Port,
    request_id: &str,
    turn: Turn,
    settings: &Settings,
    controller: &AbortController,
) -> Result<WorkerToPanel, Failure> {
    let messages = &turn.messages;
    let images = Conversation::from_messages(messages)
        .map_err(ProviderError::from)?
        .request
        .images
        .clone();
    // Tools of approved providers, and of the conversation's page (WebMCP): a message with
    // tools is a multi-step turn (model → tools → model …).
    let tools = crate::tools::specs_for(request_id).await;
    // The conversation's session: Nano first, the cloud when Nano cannot answer, mid-turn
    // with the tool rounds done, so nothing is lost and no tool runs twice.
    let system = system_prompt(&tools);
    let mut conversation =
        sessions::Conversation::open(messages, settings, tools.clone(), &system).await?;
    let session = &mut conversation.session;
    session.set_abort(Some(controller.clone()));
    let provider_label = |p: Option<ProviderId>| match p {
        Some(ProviderId::Nano) | None => sessions::NANO_LABEL.to_string(),
        Some(ProviderId::Cloud(kind)) => kind.label().to_string(),
    };
    let _ = post(
        port,
        &WorkerToPanel::Start {
            request_id: request_id.to_string(),
            provider: provider_label(session.provider()),
        },
    );
    let mut planner = ChatPlanner {
        turn: &turn,
        system: &system,
        settings,
        images,
        tools,
    };
    let mut hooks = ChatHooks {
        port,
        request_id,
        controller,
        rounds: Rounds::default(),
        usage: None,
        total: None,
        used: 0,
        token_limit: settings.agent.token_limit,
    };
    let request = sessions::visible(messages)
        .last()
        .map(|m| m.content.clone())
        .unwrap_or_default();
    let first_record = session.token_log().len();
    let answered = session.run_turn(&request, &mut planner, &mut hooks).await;
    let provider = session.provider();
    // Nano reports no usage: every prompt of the turn counts (tool rounds prompt more than
    // once).
    let nano_usage = || {
        let log = session.token_log().get(first_record..).unwrap_or_default();
        let log: Vec<_> = log
            .iter()
            .filter(|t| t.provider == ProviderId::Nano)
            .collect();
        (!log.is_empty()).then(|| Usage {
            input: log.iter().map(|t| t.sent).sum(),
            output: log.iter().map(|t| t.received).sum(),
        })
    };
    let usage = hooks.total.or_else(nano_usage);
    match answered {
        Ok(response) => {
            // A stopped or failed turn's session is dropped: it saw what the user did not
            // keep, or it is broken.
            conversation.keep(&request, &response.content);
            Ok(WorkerToPanel::Done {
                request_id: request_id.to_string(),
                usage,
                finish_reason: response.finish_reason,
                model: response.model,
                provider: Some(provider_label(provider)),
            })
        }
        Err(e) => Err(chat_failure(e)),
    }
}

/// A session's failure as the chat says it: no step numbers, the provider's own sentence.
fn chat_failure(e: SessionError) -> Failure {
    match e {
        SessionError::Cancelled { .. } => Failure::Stopped,
        SessionError::Cloud { error, .. } | SessionError::Tool { error, .. } => error.into(),
        SessionError::Budget { error, .. } => ProviderError::from(error).into(),
        SessionError::Nano { error, .. } => ProviderError::new(
            ErrorKind::Provider,
            format!(
                "Gemini Nano could not answer ({}): {}",
                error.name, error.message
            ),
        )
        .into(),
        SessionError::InvalidOutput { .. } => ProviderError::new(
            ErrorKind::Provider,
            "Gemini Nano's replies were not in the form asked for, twice in a row. Send again, or let Settings → On-device model allow the cloud.",
        )
        .into(),
        e => ProviderError::new(ErrorKind::Provider, e.to_string()).into(),
    }
}

/// The chat's request: the memory turn's plan (the budget over the visible history, with
/// what it leaves out distilled into the system prompt, or a selected-text question with the
/// history as notes), the images of the message, the approved tools, and Anthropic's
/// required output limit sized to the room left.
struct ChatPlanner<'a> {
    turn: &'a Turn,
    /// [`SYSTEM_PROMPT`], and the tools' rule when tools are offered.
    system: &'a str,
    settings: &'a Settings,
    images: Vec<String>,
    tools: Vec<ToolSpec>,
}

impl RequestPlanner for ChatPlanner<'_> {
    fn messages(&self, _: &Transcript, _: &str) -> Vec<ChatMessage> {
        self.turn.messages.clone()
    }

    fn plan(
        &mut self,
        conversation: &Conversation<'_>,
        _: Option<&str>,
        config: &CloudConfig,
        _: &mut TokenCache,
    ) -> Result<(Budget, Option<String>), BudgetError> {
        // The worker-wide cache: pair counts (and usage calibration) outlive one answer.
        let prepared = TOKENS.with(|cache| {
            self.turn.plan(
                conversation,
                self.system,
                conversation.request.images.len(),
                config.context_window,
                &self.settings.budget,
                &self.settings.memory,
                &mut cache.borrow_mut(),
            )
        })?;
        Ok((prepared.budget, Some(prepared.system)))
    }

    fn images(&self) -> &[String] {
        &self.images
    }

    fn tools(&self) -> &[ToolSpec] {
        &self.tools
    }

    fn options(&self, budget: &Budget, config: &CloudConfig, _: &RequestOptions) -> RequestOptions {
        RequestOptions {
            // Anthropic requires a limit, and rejects one that overflows the window.
            max_output_tokens: (config.kind == ProviderKind::Anthropic).then(|| {
                budget
                    .breakdown
                    .remaining_for_response
                    .min(config.max_output_tokens)
                    .max(1)
            }),
            context_window: Some(config.context_window),
            temperature: None,
        }
    }
}

/// The panel's side of a cloud turn: deltas as they arrive, a Debug report per attempt,
/// "X is busy; retrying in N s…", tool rounds, usage for the token cache.
struct ChatHooks<'a> {
    port: &'a Port,
    request_id: &'a str,
    controller: &'a AbortController,
    rounds: Rounds,
    /// The usage the latest attempt's stream reported, for the token cache.
    usage: Option<Usage>,
    /// The usage every attempt of this answer reported, summed: what "via … · N tokens"
    /// shows (a turn with tool rounds sends several requests).
    total: Option<Usage>,
    /// The tokens every attempt of this answer reported so far (tool rounds send again).
    used: u64,
    /// Settings' "Stop a task or answer after N tokens".
    token_limit: u32,
}

impl TurnHooks for ChatHooks<'_> {
    fn event(&mut self, event: &StreamEvent) -> bool {
        let StreamEvent::Delta(text) = event else {
            return true;
        };
        let message = WorkerToPanel::Delta {
            request_id: self.request_id.to_string(),
            text: text.clone(),
        };
        // The panel closed: the transport stops the download too.
        post(self.port, &message).is_ok()
    }

    fn attempt(&mut self, report: &AttemptReport<'_>) {
        self.usage = report.usage;
        if let Some(u) = report.usage {
            self.total = Some(self.total.map_or(u, |t| t.plus(u)));
            self.used = self
                .used
                .saturating_add(u64::from(u.input) + u64::from(u.output));
        }
        let report = report.to_value();
        let _ = post(
            self.port,
            &WorkerToPanel::Debug {
                request_id: self.request_id.to_string(),
                report,
            },
        );
    }

    fn retrying_in(&mut self, provider: ProviderKind, left_ms: u64) {
        // Messages on a Port also keep the worker alive during the wait.
        let text = format!(
            "{} is busy; retrying in {} s…",
            provider.label(),
            left_ms.div_ceil(1000)
        );
        let _ = post(
            self.port,
            &WorkerToPanel::Status {
                request_id: self.request_id.to_string(),
                text,
            },
        );
    }

    fn stopped(&self) -> bool {
        self.controller.signal().aborted()
    }

    fn restart(&mut self, note: &str) {
        let message = WorkerToPanel::Restart {
            request_id: self.request_id.to_string(),
            note: note.to_string(),
        };
        let _ = post(self.port, &message);
    }

    fn rounds_left(&self) -> bool {
        !self.rounds.exhausted()
    }

    fn call_id(&self, n: u32) -> String {
        // Unique across requests (the panel's Approve / Deny and the cards are keyed by it).
        let safe: String = self
            .request_id
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .take(40)
            .collect();
        format!("nano_{safe}_{n}")
    }

    fn tool_round<'a>(&'a mut self, calls: &'a [ToolCall]) -> RoundFuture<'a> {
        Box::pin(async move {
            // The cost ceiling: a round would lead to another request, so the answer stops
            // here, before the tools run.
            if cost::answer_over(self.used, self.token_limit) {
                return Err(SendFailure::Provider(ProviderError::new(
                    ErrorKind::Provider,
                    cost::answer_sentence(self.used, self.token_limit),
                )));
            }
            crate::tools::run_round(
                self.port,
                self.request_id,
                calls,
                &mut self.rounds,
                self.controller,
            )
            .await
            .map_err(|e| match e {
                Failure::Stopped => SendFailure::Stopped,
                Failure::Provider(e) => SendFailure::Provider(e),
            })
        })
    }

    fn answered(&mut self, _: &UniversalResponse, budget: &Budget, with_tool_rounds: bool) {
        // Usage is matched to the history's pairs; a turn with tool rounds sent more.
        if let (Some(usage), false) = (self.usage, with_tool_rounds) {
            TOKENS.with(|cache| cache.borrow_mut().record_usage(budget, usage));
        }
    }
}
