//! A cloud provider as a task session. Chat APIs are stateless, so each step sends the cached
//! system text and the transcript through the send pipeline: [`compute_budget`] picks what
//! fits, [`SendPlan`] decides on each failure (overflow: drop the oldest pair and resend;
//! rate limit or overload: wait, through the [`Sleeper`], and resend).

use std::rc::Rc;

use crate::budget::{
    after_request_tokens, build_request, compute_budget, BudgetError, Conversation, TokenCache,
};
use crate::chat::Role;
use crate::errors::ProviderError;
use crate::request::{RequestMessage, RequestOptions, UniversalRequest};
use crate::send::{Action, RetryPolicy, SendPlan, UniversalResponse};
use crate::stream::StreamEvent;

use super::attempt::{AttemptTrace, CloudConfig, SendFailure};
use super::plan::{AttemptReport, RequestPlanner, TurnHooks};
use super::transcript::Transcript;
use super::{ProviderId, TokenRecord};

/// Sends one request to the provider (in the browser: the adapter's HTTP request, streamed
/// and folded into a [`UniversalResponse`]).
// Single-threaded wasm: no `Send` bound is wanted on the returned futures.
#[allow(async_fn_in_trait)]
pub trait CloudTransport {
    /// What aborts one call (in the browser, an `AbortController`); `()` for transports
    /// that cannot be interrupted.
    type Abort;

    async fn send(&self, req: &UniversalRequest) -> Result<UniversalResponse, ProviderError>;

    /// Like `send`, handing every [`StreamEvent`] to `on_event` as it arrives; `on_event`
    /// returns false to abort the call (whoever was reading is gone), which ends it as
    /// [`SendFailure::Stopped`], as does `abort` firing. The default delivers the whole
    /// answer at the end, for transports that do not stream.
    async fn send_events(
        &self,
        req: &UniversalRequest,
        abort: Option<&Self::Abort>,
        on_event: &mut dyn FnMut(&StreamEvent) -> bool,
    ) -> (Result<UniversalResponse, SendFailure>, AttemptTrace) {
        let _ = abort;
        let trace = AttemptTrace::default();
        let response = match self.send(req).await {
            Ok(r) => r,
            Err(e) => return (Err(SendFailure::Provider(e)), trace),
        };
        let mut events = Vec::new();
        if let Some(model) = &response.model {
            events.push(StreamEvent::Model(model.clone()));
        }
        if !response.content.is_empty() {
            events.push(StreamEvent::Delta(response.content.clone()));
        }
        events.extend(
            response
                .tool_calls
                .iter()
                .cloned()
                .map(StreamEvent::ToolCall),
        );
        events.extend(response.usage.map(StreamEvent::Usage));
        events.extend(response.finish_reason.clone().map(StreamEvent::Finish));
        events.push(StreamEvent::Done);
        for event in &events {
            if !on_event(event) {
                return (Err(SendFailure::Stopped), trace);
            }
        }
        (Ok(response), trace)
    }
}

/// Waits before a retry. The service worker's implementation sets a timer (and can show
/// "retrying in N s"); tests record the waits instead of sleeping.
#[allow(async_fn_in_trait)]
pub trait Sleeper {
    async fn sleep(&self, ms: u64);
}

/// Why a cloud step failed.
#[derive(Clone, Debug, PartialEq)]
pub enum CloudFailure {
    Stopped,
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

    /// Runs one turn with the request `planner` builds, the caller's `hooks` between attempts
    /// and tool rounds: each round (the model's calls, then their results) is appended to
    /// `rounds` and counted by the budget, so a turn continued elsewhere (or after a
    /// failover) resends them rather than running a tool twice. A failure after text was
    /// streamed is final: the reader already saw part of the answer, and a retry would
    /// repeat it.
    #[allow(clippy::too_many_arguments)]
    pub async fn run_turn(
        &mut self,
        transcript: &Transcript,
        turn: &str,
        planner: &mut dyn RequestPlanner,
        hooks: &mut impl TurnHooks,
        abort: Option<&C::Abort>,
        rounds: &mut Vec<RequestMessage>,
        tokens: &mut Vec<TokenRecord>,
    ) -> Result<UniversalResponse, CloudFailure> {
        let step = transcript.step();
        let provider = self.provider();
        let messages = planner.messages(transcript, turn);
        let conversation = Conversation::from_messages(&messages).map_err(CloudFailure::Budget)?;
        let (budget, system) = planner
            .plan(
                &conversation,
                self.system.as_deref(),
                &self.config,
                &mut self.cache,
            )
            .map_err(CloudFailure::Budget)?;
        let settings = &self.config.budget;
        let allowance = settings.assistant_response_allowance;
        let mut plan = SendPlan::new(budget, RetryPolicy::with_settings(settings));
        plan.budget_mut()
            .count_after_request(after_request_tokens(rounds, settings), allowance);
        loop {
            let options = planner.options(plan.budget(), &self.config, &self.options);
            let mut request = build_request(
                plan.budget(),
                &conversation,
                system.as_deref(),
                planner.images(),
                &self.config.model,
                options,
            );
            request.tools = planner.tools().to_vec();
            request.messages.extend(rounds.iter().cloned());
            let sent = plan.budget().breakdown.total_input;
            self.last_input_tokens = sent;
            let rounds_before = rounds.len();
            let mut streamed = false;
            let mut usage = None;
            let mut on_event = |event: &StreamEvent| {
                match event {
                    StreamEvent::Delta(_) => streamed = true,
                    StreamEvent::Usage(u) => usage = Some(*u),
                    _ => {}
                }
                hooks.event(event)
            };
            let (result, trace) = self
                .transport
                .send_events(&request, abort, &mut on_event)
                .await;
            let result = match result {
                Ok(r) => Ok(r),
                Err(SendFailure::Provider(e)) => Err(e),
                Err(SendFailure::Stopped) => {
                    hooks.attempt(&AttemptReport {
                        provider: self.config.kind,
                        model: &self.config.model,
                        plan: &plan,
                        trace: &trace,
                        usage,
                    });
                    return Err(CloudFailure::Stopped);
                }
            };
            tokens.push(TokenRecord {
                step,
                provider,
                sent,
                received: result
                    .as_ref()
                    .map_or(0, |r| super::message_tokens(&r.content)),
            });
            let failed_after_text = result
                .as_ref()
                .err()
                .filter(|_| streamed && !hooks.retry_after_text())
                .cloned();
            let mut action = plan.record(result.as_ref().map(|_| ()).map_err(Clone::clone));
            if let Some(e) = failed_after_text {
                action = Action::Fail(e);
            }
            hooks.attempt(&AttemptReport {
                provider: self.config.kind,
                model: &self.config.model,
                plan: &plan,
                trace: &trace,
                usage,
            });
            match (action, result) {
                (Action::Done, Ok(response)) if !response.tool_calls.is_empty() => {
                    let outcomes =
                        hooks
                            .tool_round(&response.tool_calls)
                            .await
                            .map_err(|e| match e {
                                SendFailure::Stopped => CloudFailure::Stopped,
                                SendFailure::Provider(e) => CloudFailure::Provider(e),
                            })?;
                    let round = [
                        RequestMessage {
                            tool_calls: response.tool_calls,
                            ..RequestMessage::text(Role::Assistant, response.content)
                        },
                        RequestMessage {
                            tool_results: outcomes,
                            ..RequestMessage::text(Role::User, "")
                        },
                    ];
                    plan.budget_mut()
                        .count_after_request(after_request_tokens(&round, settings), allowance);
                    rounds.extend(round);
                }
                (Action::Done, Ok(response)) => {
                    hooks.answered(&response, plan.budget(), !rounds.is_empty());
                    return Ok(response);
                }
                (Action::Done, Err(e)) | (Action::Fail(e), _) => {
                    return Err(CloudFailure::Provider(e))
                }
                (Action::RetryAfter { ms }, _) => {
                    // The wait is shown every second, and a Stop ends it.
                    let mut left = ms;
                    while left > 0 {
                        hooks.retrying_in(self.config.kind, left);
                        let chunk = left.min(1000);
                        self.sleeper.sleep(chunk).await;
                        left -= chunk;
                        if hooks.stopped() {
                            return Err(CloudFailure::Stopped);
                        }
                    }
                }
                (Action::TrimAndRetry, _) => {}
            }
            // Only a retry gets here with text streamed (a tool round's text stays).
            if streamed && rounds_before == rounds.len() {
                hooks.restart("");
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
