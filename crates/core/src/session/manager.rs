//! Provider choice, the task session the caller holds, and failover.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use super::attempt::CloudConfig;
use super::cloud::{CloudFailure, CloudSession, CloudTransport, Sleeper, StepOutput};
use super::nano::{Availability, NanoBackend, NanoCreateOptions, NanoModel, NanoSession};
use super::plan::{StepPlanner, TurnHooks};
use super::transcript::{Transcript, Turn};
use super::{
    message_tokens, EventKind, FailoverReason, Preferred, ProviderId, SessionConfig, SessionError,
    SessionEvent, SessionScope, StreamUpdate, TokenRecord,
};
use crate::answer_schema::Schema;
use crate::provider::ProviderKind;
use crate::request::{ToolCall, ToolOutcome, ToolSpec};
use crate::stream::StreamEvent;
use crate::structured::{OutputMode, StepMode};

mod chat_turn;
pub use chat_turn::NANO_MODEL;

/// Where a task starts. Nano can run when it is available, or when it is (being) downloaded
/// and the user allowed Tandem to wait for it.
pub fn choose_provider(
    preferred: Preferred,
    nano: Availability,
    download_consent: bool,
    cloud: Option<ProviderKind>,
) -> Result<ProviderId, SessionError> {
    let nano_ok = match nano {
        Availability::Available => true,
        Availability::Downloadable | Availability::Downloading => download_consent,
        Availability::Unavailable => false,
    };
    match (preferred, nano_ok, cloud) {
        (Preferred::Cloud, _, Some(kind)) => Ok(ProviderId::Cloud(kind)),
        (Preferred::Nano | Preferred::Auto, true, _) => Ok(ProviderId::Nano),
        (Preferred::Auto, false, Some(kind)) => Ok(ProviderId::Cloud(kind)),
        _ => Err(SessionError::NoProvider {
            preferred,
            nano,
            cloud_configured: cloud.is_some(),
        }),
    }
}

type Listener = Box<dyn Fn(&SessionEvent)>;

struct Shared<N, C, S> {
    nano: N,
    transport: Rc<C>,
    sleeper: Rc<S>,
    cloud: RefCell<Option<CloudConfig>>,
    download_consent: Cell<bool>,
    live: Cell<usize>,
    next_id: Cell<u64>,
    listener: RefCell<Option<Listener>>,
    /// The structured-output rung each provider and model was stepped down to, for as long
    /// as the worker lives: a server that refused `json_schema` is not asked again by the
    /// next task.
    output_modes: RefCell<Vec<(ProviderKind, String, OutputMode)>>,
}

impl<N, C, S> Shared<N, C, S> {
    fn emit(&self, event: SessionEvent) {
        if let Some(listener) = self.listener.borrow().as_ref() {
            listener(&event);
        }
    }
}

/// Creates task sessions and knows how many are alive. `&self` everywhere: the service worker
/// keeps one in an `Rc` and calls it from concurrent tasks on its single thread.
pub struct SessionManager<N: NanoBackend, C: CloudTransport, S: Sleeper> {
    shared: Rc<Shared<N, C, S>>,
}

impl<N: NanoBackend, C: CloudTransport, S: Sleeper> SessionManager<N, C, S> {
    pub fn new(nano: N, transport: C, sleeper: S, cloud: Option<CloudConfig>) -> Self {
        Self {
            shared: Rc::new(Shared {
                nano,
                transport: Rc::new(transport),
                sleeper: Rc::new(sleeper),
                cloud: RefCell::new(cloud),
                download_consent: Cell::new(false),
                live: Cell::new(0),
                next_id: Cell::new(1),
                listener: RefCell::new(None),
                output_modes: RefCell::new(Vec::new()),
            }),
        }
    }

    /// The cloud provider for sessions created from now on (`None`: not configured).
    pub fn set_cloud(&self, cloud: Option<CloudConfig>) {
        *self.shared.cloud.borrow_mut() = cloud;
    }

    /// Whether the user allowed Tandem to download (or wait for) Gemini Nano.
    pub fn set_download_consent(&self, consent: bool) {
        self.shared.download_consent.set(consent);
    }

    /// Receives every session's events.
    pub fn on_event(&self, listener: impl Fn(&SessionEvent) + 'static) {
        *self.shared.listener.borrow_mut() = Some(Box::new(listener));
    }

    /// Sessions created and not yet destroyed.
    pub fn live_sessions(&self) -> usize {
        self.shared.live.get()
    }

    pub fn nano(&self) -> &N {
        &self.shared.nano
    }

    pub fn transport(&self) -> &C {
        &self.shared.transport
    }

    pub fn sleeper(&self) -> &S {
        &self.shared.sleeper
    }

    /// A session for a new task.
    pub async fn create(
        &self,
        config: SessionConfig,
    ) -> Result<HybridSession<N, C, S>, SessionError> {
        let transcript = Transcript::new(&config);
        self.resume(config, transcript).await
    }

    /// A session that continues `transcript` (after a service-worker restart, say). Its
    /// system prompt and history win over `config`'s.
    pub async fn resume(
        &self,
        config: SessionConfig,
        transcript: Transcript,
    ) -> Result<HybridSession<N, C, S>, SessionError> {
        // One snapshot: settings may change while availability() is awaited.
        let cloud = self.shared.cloud.borrow().clone();
        let nano = match config.preferred {
            // Asking would be wasted (and could start a download nobody wants).
            Preferred::Cloud => Availability::Unavailable,
            _ => {
                let options = NanoCreateOptions::for_session(&config, Vec::new());
                self.shared
                    .nano
                    .availability(&options)
                    .await
                    .unwrap_or(Availability::Unavailable)
            }
        };
        let choice = choose_provider(
            config.preferred,
            nano,
            self.shared.download_consent.get(),
            cloud.as_ref().map(|c| c.kind),
        )?;
        let id = self.shared.next_id.get();
        self.shared.next_id.set(id + 1);
        self.shared.live.set(self.shared.live.get() + 1);
        let mut session = HybridSession {
            id,
            shared: Rc::clone(&self.shared),
            config,
            transcript,
            active: None,
            served: false,
            tokens: Vec::new(),
            failovers: Vec::new(),
            abort: None,
            step_output: None,
            step_tools: Vec::new(),
            step_mode: None,
            step_images: Vec::new(),
            screenshot: None,
        };
        let start_on_cloud = match choice {
            ProviderId::Nano => None,
            ProviderId::Cloud(_) => cloud,
        };
        session.start(start_on_cloud).await?;
        Ok(session)
    }

    /// Runs `task` on a new session and destroys the session whatever the outcome. Dropping
    /// the returned future (a cancelled task) destroys it too.
    pub async fn run_task<R>(
        &self,
        config: SessionConfig,
        task: impl AsyncFnOnce(&mut HybridSession<N, C, S>) -> Result<R, SessionError>,
    ) -> Result<R, SessionError> {
        let mut session = self.create(config).await?;
        let result = task(&mut session).await;
        session.destroy();
        result
    }
}

enum Active<N: NanoBackend, C: CloudTransport, S: Sleeper> {
    Nano(NanoSession<N::Model>),
    Cloud(CloudSession<C, S>),
}

/// One task's session: the same object for every step, whichever provider answers it.
pub struct HybridSession<N: NanoBackend, C: CloudTransport, S: Sleeper> {
    id: u64,
    shared: Rc<Shared<N, C, S>>,
    config: SessionConfig,
    transcript: Transcript,
    /// `None` before the start and after destruction.
    active: Option<Active<N, C, S>>,
    /// The provider session in `active` was prompted for a step: with
    /// [`SessionScope::Step`] it is rebuilt before the next one.
    served: bool,
    tokens: Vec<TokenRecord>,
    failovers: Vec<Failover>,
    /// Aborts the cloud call in flight (the task's Cancel, the chat turn's Stop).
    abort: Option<C::Abort>,
    /// The step being run by [`invoke_step`](Self::invoke_step): its schema's name and JSON,
    /// which the cloud asks for in its own structured-output form.
    step_output: Option<StepOutput>,
    /// The task's tools, offered natively in its cloud steps' requests.
    step_tools: Vec<ToolSpec>,
    /// How the last step's reply was asked for and came back (`None` on Nano).
    step_mode: Option<StepMode>,
    /// Images for the next step's request ([`attach_images`](Self::attach_images)).
    step_images: Vec<String>,
    /// A screenshot for the following steps' requests (`data:` URLs) and its estimated
    /// tokens for the provider in use ([`attach_screenshot`](Self::attach_screenshot));
    /// given to Nano only when its session was created with image input.
    screenshot: Option<(Vec<String>, u32)>,
}

/// An agent step's answer: the reply's text, or a native call of one of the task's tools
/// (then `text` is empty).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepReply {
    pub text: String,
    pub call: Option<ToolCall>,
}

/// One switch of a session from Nano to the cloud, for the timeline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failover {
    /// 0-based index of the step the cloud answered first.
    pub step: usize,
    pub from: ProviderId,
    pub to: ProviderId,
    pub reason: FailoverReason,
}

/// Why Gemini Nano could not finish a prompt of a step.
enum NanoGaveUp {
    /// The caller's abort.
    Cancelled,
    /// Why (for the failover), and the step's error when there is no cloud to go to.
    Failed(FailoverReason, SessionError),
}

/// A step's reply checked against `schema`: `Some` to keep (cleaned), `None` to ask once
/// more, an error after the second reply in a row that is not of that shape.
fn checked(
    schema: Option<&Schema>,
    text: String,
    invalid: &mut u32,
    step: usize,
    provider: ProviderId,
) -> Result<Option<String>, SessionError> {
    let Some(schema) = schema else {
        return Ok(Some(text));
    };
    match schema.validate(&text) {
        Ok(clean) => Ok(Some(clean)),
        Err(e) => {
            *invalid += 1;
            if *invalid < 2 {
                return Ok(None);
            }
            Err(SessionError::InvalidOutput {
                step,
                provider,
                attempts: *invalid,
                detail: e.to_string(),
            })
        }
    }
}

/// A cloud turn's failure as the session's.
fn cloud_error(step: usize, e: CloudFailure) -> SessionError {
    match e {
        CloudFailure::Stopped => SessionError::Cancelled { step },
        CloudFailure::Provider(error) => SessionError::Cloud { step, error },
        CloudFailure::Budget(error) => SessionError::Budget { step, error },
    }
}

/// An agent step's side of a cloud turn: text streams to the step's listener, and a retry
/// after streamed text is allowed (the step's JSON is read only once complete).
struct StepHooks<'a, 'b> {
    on_update: Option<&'a mut (dyn FnMut(StreamUpdate<'_>) + 'b)>,
    provider: ProviderId,
}

impl TurnHooks for StepHooks<'_, '_> {
    fn event(&mut self, event: &StreamEvent) -> bool {
        if let (StreamEvent::Delta(d), Some(f)) = (event, self.on_update.as_deref_mut()) {
            f(StreamUpdate::Delta(d));
        }
        true
    }

    fn restart(&mut self, _: &str) {
        if let Some(f) = self.on_update.as_deref_mut() {
            f(StreamUpdate::Restart {
                provider: self.provider,
            });
        }
    }

    fn retry_after_text(&self) -> bool {
        true
    }
}

impl<N: NanoBackend, C: CloudTransport, S: Sleeper> HybridSession<N, C, S> {
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Who answers the next step.
    pub fn provider(&self) -> Option<ProviderId> {
        match self.active.as_ref()? {
            Active::Nano(_) => Some(ProviderId::Nano),
            Active::Cloud(c) => Some(c.provider()),
        }
    }

    /// Whether the model serving the session now reads images: a cloud model by
    /// [`crate::vision::takes_images`], Nano only when its session was created with image
    /// input ([`SessionConfig::images`]; Chrome refuses image parts otherwise).
    pub fn takes_images(&self) -> bool {
        match self.active.as_ref() {
            Some(Active::Cloud(c)) => {
                crate::vision::takes_images(c.config().kind, &c.config().model)
            }
            Some(Active::Nano(n)) => n.takes_images(),
            None => false,
        }
    }

    /// Images (data: URLs) the next step's request carries with its turn on the cloud: a
    /// tool's images in a task. Only that request has them; the transcript keeps the turn's
    /// text, so later steps do not send them again.
    pub fn attach_images(&mut self, images: Vec<String>) {
        self.step_images = images;
    }

    /// Tokens in the provider's context (Nano: as it reports; cloud: the last request's
    /// estimate).
    pub fn context_usage(&self) -> u32 {
        match &self.active {
            Some(Active::Nano(n)) => n.model().context_usage() as u32,
            Some(Active::Cloud(c)) => c.context_usage(),
            None => 0,
        }
    }

    /// The provider's context window in tokens (`u32::MAX` when Nano reports it unlimited).
    pub fn context_window(&self) -> u32 {
        match &self.active {
            // `as` saturates: an infinite window becomes u32::MAX.
            Some(Active::Nano(n)) => n.model().context_window() as u32,
            Some(Active::Cloud(c)) => c.config().context_window,
            None => 0,
        }
    }

    pub fn transcript(&self) -> &Transcript {
        &self.transcript
    }

    /// What aborts this session's cloud calls from now on (each task, or each chat turn,
    /// brings its own, so one cannot cancel another's request).
    pub fn set_abort(&mut self, abort: Option<C::Abort>) {
        self.abort = abort;
    }

    /// Every switch to the cloud so far, oldest first.
    pub fn failovers(&self) -> &[Failover] {
        &self.failovers
    }

    /// Every attempt of every step so far.
    pub fn token_log(&self) -> &[TokenRecord] {
        &self.tokens
    }

    /// Runs one step. With a `schema`, the answer is JSON of that shape.
    pub async fn invoke(
        &mut self,
        turn: &str,
        schema: Option<&Schema>,
    ) -> Result<String, SessionError> {
        Ok(self.step(turn, None, schema, None).await?.text)
    }

    /// [`invoke`](Self::invoke) for a step whose turn has a compact form: once the next step
    /// is added, the cloud view sends `summary` in place of `turn` (see
    /// [`Transcript::messages_with`]); the transcript keeps `turn` whole.
    pub async fn invoke_with_summary(
        &mut self,
        turn: &str,
        summary: &str,
        schema: Option<&Schema>,
    ) -> Result<String, SessionError> {
        Ok(self.step(turn, Some(summary), schema, None).await?.text)
    }

    /// An agent step whose answer has `schema` (named `name`, `[A-Za-z0-9_-]`): Nano decodes
    /// to it (`responseConstraint`) and its answers are checked against it; a cloud provider
    /// is asked for it in its own structured-output form (see [`crate::structured`]), and its
    /// answer is left to the step's lenient reader, which repairs what it can and asks again.
    pub async fn invoke_step(
        &mut self,
        turn: &str,
        summary: Option<&str>,
        name: &str,
        schema: &Schema,
    ) -> Result<String, SessionError> {
        let reply = self.structured_step(turn, summary, name, schema, false);
        Ok(reply.await?.text)
    }

    /// [`invoke_step`](Self::invoke_step) for a step that may call the task's tools
    /// ([`set_step_tools`](Self::set_step_tools)) natively on the cloud: the answer is the
    /// reply or the call. The call's results go back with
    /// [`answer_call`](Self::answer_call) before the next step.
    pub async fn invoke_step_calling(
        &mut self,
        turn: &str,
        summary: Option<&str>,
        name: &str,
        schema: &Schema,
    ) -> Result<StepReply, SessionError> {
        self.structured_step(turn, summary, name, schema, true)
            .await
    }

    async fn structured_step(
        &mut self,
        turn: &str,
        summary: Option<&str>,
        name: &str,
        schema: &Schema,
        calls: bool,
    ) -> Result<StepReply, SessionError> {
        self.step_output = Some(StepOutput {
            name: name.to_string(),
            schema: schema.json().clone(),
            tools: self.step_tools.clone(),
            calls,
        });
        let answer = self.step(turn, summary, Some(schema), None).await;
        self.step_output = None;
        answer
    }

    /// The tools the task's cloud steps offer natively (read once per task, so every
    /// request of the task declares the same ones).
    pub fn set_step_tools(&mut self, tools: Vec<ToolSpec>) {
        self.step_tools = tools;
    }

    /// What came of the last step's native call, for the next step's request (in the
    /// provider's tool-result shape).
    pub fn answer_call(&mut self, outcome: ToolOutcome) {
        self.transcript.pending.push(outcome);
    }

    /// How the last step's reply was asked for and came back (`None` on Nano).
    pub fn step_mode(&self) -> Option<StepMode> {
        self.step_mode
    }

    /// Attaches a screenshot (estimated at `tokens` for the provider in use) to every
    /// request of the following steps until [`clear_screenshot`](Self::clear_screenshot): a
    /// step asked again keeps its screenshot. Nano receives it only when its session was
    /// created with image input; a tool's images ([`attach_images`](Self::attach_images))
    /// never go to Nano.
    pub fn attach_screenshot(&mut self, images: Vec<String>, tokens: u32) {
        self.screenshot = (!images.is_empty()).then_some((images, tokens));
    }

    /// Sends no more screenshots.
    pub fn clear_screenshot(&mut self) {
        self.screenshot = None;
    }

    /// The cloud provider and model in use (`None` on Nano).
    pub fn cloud_kind(&self) -> Option<ProviderKind> {
        match &self.active {
            Some(Active::Cloud(c)) => Some(c.config().kind),
            _ => None,
        }
    }

    /// How the cloud provider in use is asked for a structured reply now (`None` on Nano).
    pub fn output_mode(&self) -> Option<crate::structured::OutputMode> {
        match self.active.as_ref()? {
            Active::Cloud(c) => Some(c.output_mode()),
            Active::Nano(_) => None,
        }
    }

    /// [`invoke`](Self::invoke), streaming the answer into `on_update`.
    pub async fn invoke_streaming(
        &mut self,
        turn: &str,
        schema: Option<&Schema>,
        on_update: &mut dyn FnMut(StreamUpdate<'_>),
    ) -> Result<String, SessionError> {
        Ok(self.step(turn, None, schema, Some(on_update)).await?.text)
    }

    /// Ends the session (also done on drop).
    pub fn destroy(mut self) {
        self.close();
    }

    /// Opens the first provider: Nano when `cloud` is `None`.
    async fn start(&mut self, cloud: Option<CloudConfig>) -> Result<(), SessionError> {
        let step = self.transcript.step();
        match cloud {
            Some(cloud) => self.active = Some(Active::Cloud(self.cloud_session(cloud))),
            None => self.open_nano(step).await?,
        }
        self.emit(step, EventKind::Created);
        Ok(())
    }

    /// Creates a Nano model holding the whole transcript, failing over to the cloud when
    /// that is allowed and creation fails.
    async fn open_nano(&mut self, step: usize) -> Result<(), SessionError> {
        match NanoSession::create(&self.shared.nano, &self.transcript, &self.config).await {
            Ok(nano) => self.active = Some(Active::Nano(nano)),
            Err(e) if e.is_abort() => return Err(SessionError::Cancelled { step }),
            Err(error) => match self.failover_target() {
                Some(cloud) => self.switch_to_cloud(step, cloud, FailoverReason::of(&error)),
                None => return Err(SessionError::Nano { step, error }),
            },
        }
        self.served = false;
        Ok(())
    }

    /// Step scope: a new provider session from the transcript, on the same provider. The old
    /// Nano model is destroyed before the new one is created, as an extension that opens a
    /// session per step would have closed it. No Created event: the task's session (what
    /// events describe) is still the same one.
    async fn renew(&mut self, step: usize) -> Result<(), SessionError> {
        let cloud = match self.active.as_mut() {
            None => return Err(SessionError::Destroyed),
            Some(Active::Cloud(c)) => Some(c.config().clone()),
            Some(Active::Nano(n)) => {
                // The released session stays in place until its successor exists, so a
                // failed creation leaves a session that still reports Nano and is
                // destroyed (with its event) like any other.
                n.release();
                None
            }
        };
        match cloud {
            Some(cloud) => {
                self.active = Some(Active::Cloud(self.cloud_session(cloud)));
                self.served = false;
                Ok(())
            }
            None => self.open_nano(step).await,
        }
    }

    /// The cloud to fail over to: only in Auto mode, and only when one is configured.
    fn failover_target(&self) -> Option<CloudConfig> {
        match self.config.preferred {
            Preferred::Auto => self.shared.cloud.borrow().clone(),
            Preferred::Nano | Preferred::Cloud => None,
        }
    }

    fn cloud_session(&self, cloud: CloudConfig) -> CloudSession<C, S> {
        let known = self
            .shared
            .output_modes
            .borrow()
            .iter()
            .find(|(kind, model, _)| *kind == cloud.kind && *model == cloud.model)
            .map(|(_, _, mode)| *mode);
        let mut session = CloudSession::new(
            Rc::clone(&self.shared.transport),
            Rc::clone(&self.shared.sleeper),
            cloud,
            &self.transcript,
            self.config.temperature,
        );
        if let Some(mode) = known {
            session.set_output_mode(mode);
        }
        session
    }

    /// Replaces the provider by a cloud session built from the transcript; the Nano model
    /// is destroyed as its session drops.
    fn switch_to_cloud(&mut self, step: usize, cloud: CloudConfig, reason: FailoverReason) {
        let to = ProviderId::Cloud(cloud.kind);
        self.active = Some(Active::Cloud(self.cloud_session(cloud)));
        self.served = false;
        self.failovers.push(Failover {
            step,
            from: ProviderId::Nano,
            to,
            reason: reason.clone(),
        });
        let kind = EventKind::FailedOver {
            from: ProviderId::Nano,
            to,
            reason,
        };
        self.emit(step, kind);
    }

    async fn step(
        &mut self,
        turn: &str,
        summary: Option<&str>,
        schema: Option<&Schema>,
        mut on_update: Option<&mut dyn FnMut(StreamUpdate<'_>)>,
    ) -> Result<StepReply, SessionError> {
        let step = self.transcript.step();
        if self.config.scope == SessionScope::Step && self.served {
            self.renew(step).await?;
        }
        self.step_mode = None;
        let images = std::mem::take(&mut self.step_images);
        loop {
            let provider = self.provider().ok_or(SessionError::Destroyed)?;
            self.served = true;
            if let ProviderId::Cloud(_) = provider {
                // A step asked for in the provider's structured form is read leniently by
                // the caller, not checked here.
                let check = schema.filter(|_| self.step_output.is_none());
                let reply = self
                    .prompt_cloud(step, turn, &images, check, on_update.as_deref_mut())
                    .await?;
                return Ok(self.answered(step, turn, summary, reply, provider));
            }
            // Results of a native call made on the cloud before a resume here, as text.
            let input = self.transcript.nano_input(turn);
            match self
                .prompt_nano(step, &input, schema, on_update.as_deref_mut())
                .await
            {
                Ok(text) => {
                    let reply = StepReply { text, call: None };
                    return Ok(self.answered(step, turn, summary, reply, provider));
                }
                Err(gave_up) => {
                    let to = self.fail_over(step, gave_up)?;
                    restart(&mut on_update, to);
                }
            }
        }
    }

    /// Gives the last answered step's reply a compact form for the cloud view
    /// ([`Turn::reply_summary`]); call it before the next step, which is the first request
    /// to hold the reply.
    pub fn compact_last_reply(&mut self, summary: String) {
        if let Some(turn) = self.transcript.turns.last_mut() {
            turn.reply_summary = Some(summary);
        }
    }

    /// Records an answered step in the transcript and tells the listener.
    fn answered(
        &mut self,
        step: usize,
        turn: &str,
        summary: Option<&str>,
        reply: StepReply,
        provider: ProviderId,
    ) -> StepReply {
        // The successful attempt is the last one logged.
        let (input_tokens, output_tokens) =
            self.tokens.last().map_or((0, 0), |t| (t.sent, t.received));
        self.transcript.turns.push(Turn {
            input: turn.to_string(),
            reply: reply.text.clone(),
            provider,
            summary: summary.map(str::to_owned),
            reply_summary: None,
            results: std::mem::take(&mut self.transcript.pending),
            call: reply.call.clone(),
        });
        let answered = EventKind::Answered {
            input_tokens,
            output_tokens,
        };
        self.emit(step, answered);
        reply
    }

    /// Nano gave up on a step: the cloud takes over when that is allowed (the provider it
    /// switched to), else the step fails.
    fn fail_over(&mut self, step: usize, gave_up: NanoGaveUp) -> Result<ProviderId, SessionError> {
        let (reason, error) = match gave_up {
            NanoGaveUp::Cancelled => return Err(SessionError::Cancelled { step }),
            NanoGaveUp::Failed(reason, error) => (reason, error),
        };
        let cloud = self.failover_target().ok_or(error)?;
        let to = ProviderId::Cloud(cloud.kind);
        self.switch_to_cloud(step, cloud, reason);
        Ok(to)
    }

    /// One prompt on the Nano model in use, its reply checked against `schema` and asked for
    /// once more when it is not of that shape.
    async fn prompt_nano(
        &mut self,
        step: usize,
        input: &str,
        schema: Option<&Schema>,
        mut on_update: Option<&mut (dyn FnMut(StreamUpdate<'_>) + '_)>,
    ) -> Result<String, NanoGaveUp> {
        let provider = ProviderId::Nano;
        let mut invalid = 0u32;
        // The screenshot (if any) goes with each prompt of the step, a re-ask included;
        // `NanoSession::prompt` drops it unless the session was created with image input.
        let shot_urls = self.screenshot.as_ref().map(|(u, _)| u.clone());
        let shot_tokens = self.screenshot.as_ref().map_or(0, |(_, t)| *t);
        loop {
            let shot = (shot_urls.as_deref().unwrap_or_default(), shot_tokens);
            let Some(Active::Nano(nano)) = self.active.as_mut() else {
                let error = SessionError::Destroyed;
                return Err(NanoGaveUp::Failed(FailoverReason::SessionLost, error));
            };
            let (result, sent) = match on_update.as_deref_mut() {
                Some(f) => {
                    let mut chunk = |d: &str| f(StreamUpdate::Delta(d));
                    nano.prompt(input, shot, schema, Some(&mut chunk)).await
                }
                None => nano.prompt(input, shot, schema, None).await,
            };
            let received = result.as_deref().map_or(0, message_tokens);
            self.tokens.push(TokenRecord {
                step,
                provider,
                sent,
                received,
            });
            if nano.model().take_overflow() {
                self.emit(step, EventKind::ContextOverflow);
            }
            let text = match result {
                Ok(text) => text,
                Err(e) if e.is_abort() => return Err(NanoGaveUp::Cancelled),
                Err(error) => {
                    let reason = FailoverReason::of(&error);
                    return Err(NanoGaveUp::Failed(
                        reason,
                        SessionError::Nano { step, error },
                    ));
                }
            };
            match checked(schema, text, &mut invalid, step, provider) {
                Ok(Some(reply)) => return Ok(reply),
                Ok(None) => {
                    if let Some(f) = on_update.as_deref_mut() {
                        f(StreamUpdate::Restart { provider });
                    }
                }
                Err(error) => return Err(NanoGaveUp::Failed(FailoverReason::InvalidOutput, error)),
            }
        }
    }

    /// One step on the cloud: the transcript under the session's system text through the
    /// send pipeline (`CloudSession::run_turn`), the reply checked against `schema` and asked
    /// for once more when it is not of that shape.
    async fn prompt_cloud(
        &mut self,
        step: usize,
        turn: &str,
        images: &[String],
        schema: Option<&Schema>,
        mut on_update: Option<&mut (dyn FnMut(StreamUpdate<'_>) + '_)>,
    ) -> Result<StepReply, SessionError> {
        let mut invalid = 0u32;
        loop {
            let Some(Active::Cloud(cloud)) = self.active.as_mut() else {
                return Err(SessionError::Destroyed);
            };
            let provider = cloud.provider();
            cloud.set_output(self.step_output.clone());
            let mut hooks = StepHooks {
                on_update: on_update.as_deref_mut(),
                provider,
            };
            // Step scope stands for a fresh session per step, which has no compact view.
            // Images only to a model that takes them, whatever the caller attached: the
            // step's own (a tool's, counted at the chat's per-image figure) and the
            // screenshot (counted at its estimate for this provider).
            let sees = crate::vision::takes_images(cloud.config().kind, &cloud.config().model);
            let mut all: Vec<String> = Vec::new();
            let mut image_tokens = 0u32;
            if sees {
                all.extend(images.iter().cloned());
                image_tokens = crate::tokens::image_tokens(images.len());
                if let Some((shot, tokens)) = &self.screenshot {
                    all.extend(shot.iter().cloned());
                    image_tokens = image_tokens.saturating_add(*tokens);
                }
            }
            let mut planner = StepPlanner {
                whole: self.config.scope == SessionScope::Step,
                images: &all,
                image_tokens,
            };
            let text = cloud
                .run_turn(
                    &self.transcript,
                    turn,
                    &mut planner,
                    &mut hooks,
                    self.abort.as_ref(),
                    &mut Vec::new(),
                    &mut self.tokens,
                )
                .await;
            // The rung the server took, for this provider and model's later sessions.
            let (kind, mode) = (cloud.config().kind, cloud.output_mode());
            if mode != OutputMode::JsonSchema {
                let mut known = self.shared.output_modes.borrow_mut();
                let model = &cloud.config().model;
                known.retain(|(k, m, _)| !(*k == kind && m == model));
                known.push((kind, model.clone(), mode));
            }
            let response = text.map_err(|e| cloud_error(step, e))?;
            if let Some(call) = response.tool_calls.into_iter().next() {
                self.step_mode = Some(StepMode::NativeCall);
                let text = String::new();
                return Ok(StepReply {
                    text,
                    call: Some(call),
                });
            }
            // Tools the server refused were not offered.
            let offered = !cloud.tools_refused();
            self.step_mode = self
                .step_output
                .as_ref()
                .map(|o| StepMode::asked(kind, mode, offered && !o.tools.is_empty(), o.calls));
            if let Some(text) = checked(schema, response.content, &mut invalid, step, provider)? {
                return Ok(StepReply { text, call: None });
            }
            if let Some(f) = on_update.as_deref_mut() {
                f(StreamUpdate::Restart { provider });
            }
        }
    }

    fn emit(&self, step: usize, kind: EventKind) {
        let provider = self.provider().unwrap_or(ProviderId::Nano);
        self.shared.emit(SessionEvent {
            session: self.id,
            step,
            provider,
            kind,
        });
    }

    fn close(&mut self) {
        if let Some(active) = self.active.take() {
            let provider = match &active {
                Active::Nano(_) => ProviderId::Nano,
                Active::Cloud(c) => c.provider(),
            };
            drop(active);
            self.shared.emit(SessionEvent {
                session: self.id,
                step: self.transcript.step(),
                provider,
                kind: EventKind::Destroyed,
            });
        }
    }
}

fn restart(on_update: &mut Option<&mut dyn FnMut(StreamUpdate<'_>)>, provider: ProviderId) {
    if let Some(f) = on_update.as_deref_mut() {
        f(StreamUpdate::Restart { provider });
    }
}

impl<N: NanoBackend, C: CloudTransport, S: Sleeper> Drop for HybridSession<N, C, S> {
    fn drop(&mut self) {
        self.close();
        self.shared
            .live
            .set(self.shared.live.get().saturating_sub(1));
    }
}
