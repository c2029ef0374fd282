//! A cloud provider as a task session. Chat APIs are stateless, so each step sends the cached
//! system text and the transcript through the send pipeline: [`compute_budget`] picks what
//! fits, [`SendPlan`] decides on each failure (overflow: drop the oldest pair and resend;
//! rate limit or overload: wait, through the [`Sleeper`], and resend).

use std::rc::Rc;

use crate::budget::{
    build_request, compute_budget, BudgetError, BudgetSettings, Conversation, TokenCache,
};
use crate::errors::ProviderError;
use crate::models::model_info;
use crate::provider::{ConfigError, ProviderKind, Settings};
use crate::request::{RequestOptions, UniversalRequest};
use crate::send::{Action, RetryPolicy, SendPlan, UniversalResponse};

use super::transcript::Transcript;
use super::{ProviderId, StreamUpdate, TokenRecord};

/// The cloud provider a session may use.
#[derive(Clone, Debug, PartialEq)]
pub struct CloudConfig {
    pub kind: ProviderKind,
    pub model: String,
    pub context_window: u32,
    pub max_output_tokens: u32,
    pub budget: BudgetSettings,
}

impl CloudConfig {
    /// `model` at `kind` with the model table's figures.
    pub fn new(kind: ProviderKind, model: impl Into<String>) -> Self {
        let model = model.into();
        let info = model_info(kind, &model);
        Self {
            kind,
            model,
            context_window: info.context_window,
            max_output_tokens: info.max_output,
            budget: BudgetSettings::default(),
        }
    }

    /// The active provider of the user's settings, with their context-window override.
    pub fn from_settings(settings: &Settings, budget: BudgetSettings) -> Result<Self, ConfigError> {
        let (cfg, info) = settings.active_model()?;
        Ok(Self {
            kind: cfg.kind,
            model: cfg.model,
            context_window: info.context_window,
            max_output_tokens: info.max_output,
            budget,
        })
    }
}

/// Sends one request to the provider (in the browser: the adapter's HTTP request, streamed
/// and folded into a [`UniversalResponse`]).
// Single-threaded wasm: no `Send` bound is wanted on the returned futures.
#[allow(async_fn_in_trait)]
pub trait CloudTransport {
    async fn send(&self, req: &UniversalRequest) -> Result<UniversalResponse, ProviderError>;

    /// Like `send`, calling `on_delta` with each piece of text as it arrives.
    async fn send_streaming(
        &self,
        req: &UniversalRequest,
        on_delta: &mut dyn FnMut(&str),
    ) -> Result<UniversalResponse, ProviderError> {
        let response = self.send(req).await?;
        on_delta(&response.content);
        Ok(response)
    }
}

/// Waits before a retry. The service worker's implementation sets a timer (and can show
/// "retrying in N s"); tests record the waits instead of sleeping.
#[allow(async_fn_in_trait)]
pub trait Sleeper {
    async fn sleep(&self, ms: u64);
}

/// Why a cloud step failed.
pub(super) enum CloudFailure {
    Provider(ProviderError),
    Budget(BudgetError),
}

pub struct CloudSession<C: CloudTransport, S: Sleeper> {
    transport: Rc<C>,
    sleeper: Rc<S>,
    config: CloudConfig,
    /// System prompt + schema instructions, joined once at creation.
    system: Option<String>,
    options: RequestOptions,
    /// Pair counts survive across steps, so each exchange is estimated once per task.
    cache: TokenCache,
    last_input_tokens: u32,
}

impl<C: CloudTransport, S: Sleeper> CloudSession<C, S> {
    pub fn new(
        transport: Rc<C>,
        sleeper: Rc<S>,
        config: CloudConfig,
        transcript: &Transcript,
        temperature: Option<f32>,
    ) -> Self {
        let options = RequestOptions {
            temperature,
            max_output_tokens: Some(
                config
                    .max_output_tokens
                    .min(config.budget.assistant_response_allowance),
            ),
            // Servers that size their context per request (Ollama) need the budget's figure.
            context_window: Some(config.context_window),
        };
        Self {
            transport,
            sleeper,
            system: transcript.system_text(),
            config,
            options,
            cache: TokenCache::new(),
            last_input_tokens: 0,
        }
    }

    pub fn provider(&self) -> ProviderId {
        ProviderId::Cloud(self.config.kind)
    }

    pub fn config(&self) -> &CloudConfig {
        &self.config
    }

    /// Estimated input tokens of the last request sent.
    pub fn context_usage(&self) -> u32 {
        self.last_input_tokens
    }

    /// The request the next step would send first for `turn`.
    pub fn request_for(
        &mut self,
        transcript: &Transcript,
        turn: &str,
    ) -> Result<UniversalRequest, BudgetError> {
        let messages = transcript.messages_with(turn);
        let conversation = Conversation::from_messages(&messages)?;
        let budget = self.budget(&conversation)?;
        Ok(self.build(&budget, &conversation))
    }

    /// Runs one step; every attempt is logged in `tokens`.
    pub(super) async fn send(
        &mut self,
        transcript: &Transcript,
        turn: &str,
        mut on_update: Option<&mut (dyn FnMut(StreamUpdate<'_>) + '_)>,
        tokens: &mut Vec<TokenRecord>,
    ) -> Result<String, CloudFailure> {
        let step = transcript.step();
        let provider = self.provider();
        let messages = transcript.messages_with(turn);
        let conversation = Conversation::from_messages(&messages).map_err(CloudFailure::Budget)?;
        let budget = self.budget(&conversation).map_err(CloudFailure::Budget)?;
        let mut plan = SendPlan::new(budget, RetryPolicy::with_settings(&self.config.budget));
        loop {
            let request = self.build(plan.budget(), &conversation);
            let sent = plan.budget().breakdown.total_input;
            self.last_input_tokens = sent;
            let result = match on_update.as_deref_mut() {
                Some(f) => {
                    let mut delta = |d: &str| f(StreamUpdate::Delta(d));
                    self.transport.send_streaming(&request, &mut delta).await
                }
                None => self.transport.send(&request).await,
            };
            let received = result
                .as_ref()
                .map_or(0, |r| super::message_tokens(&r.content));
            tokens.push(TokenRecord {
                step,
                provider,
                sent,
                received,
            });
            match plan.record(result.as_ref().map(|_| ()).map_err(Clone::clone)) {
                Action::Done => return result.map(|r| r.content).map_err(CloudFailure::Provider),
                Action::RetryAfter { ms } => self.sleeper.sleep(ms).await,
                Action::TrimAndRetry => {}
                Action::Fail(e) => return Err(CloudFailure::Provider(e)),
            }
            if let Some(f) = on_update.as_deref_mut() {
                f(StreamUpdate::Restart { provider });
            }
        }
    }

    fn budget(
        &mut self,
        conversation: &Conversation<'_>,
    ) -> Result<crate::budget::Budget, BudgetError> {
        compute_budget(
            conversation,
            self.system.as_deref(),
            0,
            self.config.context_window,
            &self.config.budget,
            &mut self.cache,
        )
    }

    fn build(
        &self,
        budget: &crate::budget::Budget,
        conversation: &Conversation<'_>,
    ) -> UniversalRequest {
        build_request(
            budget,
            conversation,
            self.system.as_deref(),
            &[],
            &self.config.model,
            self.options.clone(),
        )
    }
}
