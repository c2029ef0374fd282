//! A cloud provider as a task session. Chat APIs are stateless, so each step sends the cached
//! system text and the transcript through the send pipeline: [`compute_budget`] picks what
//! fits, [`SendPlan`] decides on each failure (overflow: drop the oldest pair and resend;
//! rate limit or overload: wait, through the [`Sleeper`], and resend).

use std::rc::Rc;

use crate::budget::{
    after_request_tokens, build_request, compute_budget, BudgetError, Conversation, TokenCache,
};
use crate::chat::Role;
use crate::errors::{ErrorKind, ProviderError};
use crate::request::{RequestMessage, RequestOptions, UniversalRequest};
use crate::send::{Action, RetryPolicy, SendPlan, UniversalResponse};
use crate::stream::StreamEvent;
use crate::structured::{self, OutputMode, OutputSchema};

use super::attempt::{AttemptTrace, CloudConfig, SendFailure};
use super::plan::{AttemptReport, RequestPlanner, TurnHooks};
use super::transcript::Transcript;
use super::{ProviderId, TokenRecord};

/// The most requests one turn sends, retries and tool rounds included: a backstop above the
/// tool rounds (8), the final answer and the retry policy's retries, never reached when those
/// limits hold.
pub const MAX_REQUESTS_PER_TURN: u32 = 16;

/// What the model reads when its turn's tool rounds are used up and no tools are offered.
pub const FINAL_ANSWER_NOTE: &str = "You have used every round of tool calls Tandem allows for one message, so no tools are offered now. Answer the user now with what you have; do not ask for another tool.";

/// A reply to a request that asked for a structured reply, as the step's readers take it:
/// a forced tool call's input (Anthropic) becomes the text, and the `null`s strict mode makes
/// a model write for unused fields are left out.
fn structured_reply(
    mut response: UniversalResponse,
    output: Option<&OutputSchema>,
) -> UniversalResponse {
    let Some(output) = output else {
        return response;
    };
    if let Some(i) = response
        .tool_calls
        .iter()
        .position(|c| c.name == output.name)
    {
        let call = response.tool_calls.remove(i);
        response.content = structured::reply_of_call(&call.arguments);
        // The step's own reply wins over any other call made beside it.
        response.tool_calls.clear();
    }
    // A step is one action: of a model's parallel native calls only the first is taken
    // (the others are never run, nor kept in the history).
    response.tool_calls.truncate(1);
    if !output.calls {
        // Tools only declared (a planner step) are not called; a model that did anyway has
        // its text read as the reply.
        response.tool_calls.clear();
    }
    if output.mode == OutputMode::JsonSchema && response.tool_calls.is_empty() {
        response.content = structured::without_nulls(&response.content);
    }
    response
}

/// The structured reply an agent step asks for, and the task's tools offered beside it.
#[derive(Clone, Debug, Default)]
pub struct StepOutput {
    /// The step schema's name, `[A-Za-z0-9_-]`.
    pub name: String,
    pub schema: serde_json::Value,
    /// The task's tools, declared natively in the step's request.
    pub tools: Vec<crate::request::ToolSpec>,
    /// Whether the model may call them in place of the reply (a navigator step).
    pub calls: bool,
}

/// The turn's tool rounds as this model reads them: a tool's images as pictures, or, for a
/// model that takes none ([`crate::vision::takes_images`]), a sentence for each.
fn rounds_for_model(rounds: &[RequestMessage], config: &CloudConfig) -> Vec<RequestMessage> {
    let mut sent = rounds.to_vec();
    if !crate::vision::takes_images(config.kind, &config.model) {
        crate::tools::image::describe_tool_images(&mut sent);
    }
    sent
}

/// Tells the caller of one attempt, for the Debug drawer.
fn report(
    hooks: &mut dyn TurnHooks,
    config: &CloudConfig,
    plan: &SendPlan,
    trace: &AttemptTrace,
    usage: Option<crate::stream::Usage>,
) {
    hooks.attempt(&AttemptReport {
        provider: config.kind,
        model: &config.model,
        plan,
        trace,
        usage,
    });
}

/// A turn's tool rounds written as text, ending with `note` for the model: for the request
/// that offers no tools (a provider may refuse tool-call blocks without tool declarations).
/// Results were fenced when they were made, so the text keeps their fences.
pub fn tool_rounds_as_text(rounds: &[RequestMessage], note: &str) -> Vec<RequestMessage> {
    let mut out: Vec<RequestMessage> = rounds
        .iter()
        .map(|m| {
            let mut text = m.content.clone();
            // A tool's images (left only for a model that reads them) go with the text.
            let mut images = m.images.clone();
            images.extend(m.tool_results.iter().flat_map(|r| r.images.iter().cloned()));
            let lines = m
                .tool_calls
                .iter()
                .map(|c| format!("(called the tool {} with {})", c.name, c.arguments))
                .chain(m.tool_results.iter().map(|r| {
                    let how = if r.is_error { "failed" } else { "answered" };
                    format!("(the tool {} {how}:)\n{}", r.name, r.content)
                }));
            for line in lines {
                if !text.is_empty() {
                    text.push_str("\n\n");
                }
                text.push_str(&line);
            }
            RequestMessage {
                images,
                ..RequestMessage::text(m.role, text)
            }
        })
        .collect();
    match out.last_mut() {
        Some(last) if last.role == Role::User => {
            last.content.push_str("\n\n");
            last.content.push_str(note);
        }
        _ => out.push(RequestMessage::text(Role::User, note)),
    }
    out
}

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
    /// The structured reply the next turn asks for (an agent step's schema, by name, and the
    /// task's tools). Boxed: a session is one per task, and `Active`'s variants stay alike
    /// in size.
    output: Option<Box<StepOutput>>,
    /// How this provider and model take a structured reply: the top of the ladder until the
    /// server refuses it, then for the rest of the session one rung down each time.
    output_mode: OutputMode,
    /// The server refused an agent step's native tools: the session's later steps offer
    /// none (the model calls them as the `tool` action the instructions describe).
    tools_refused: bool,
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
            output: None,
            output_mode: OutputMode::JsonSchema,
            tools_refused: false,
        }
    }

    /// The structured reply the following turns ask for (an agent step), or none (a chat
    /// answer).
    pub fn set_output(&mut self, output: Option<StepOutput>) {
        self.output = output.map(Box::new);
    }

    /// Starts at `mode`: the rung this provider and model were stepped down to before.
    pub fn set_output_mode(&mut self, mode: OutputMode) {
        self.output_mode = mode;
    }

    /// How a structured reply is asked for now (the ladder's rung).
    pub fn output_mode(&self) -> OutputMode {
        self.output_mode
    }

    /// Whether the server refused the steps' native tools (they are no longer offered).
    pub fn tools_refused(&self) -> bool {
        self.tools_refused
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
        hooks: &mut dyn TurnHooks,
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
        let mut sent_requests = 0u32;
        loop {
            // A backstop above every limit that should end a turn first (the tool rounds, the
            // retry policy): whatever goes wrong, one message never becomes an endless bill.
            if sent_requests >= MAX_REQUESTS_PER_TURN {
                return Err(CloudFailure::Provider(ProviderError::new(
                    ErrorKind::Provider,
                    format!(
                        "Tandem stopped after {MAX_REQUESTS_PER_TURN} requests to {} for this one message without an answer.",
                        self.config.kind.label()
                    ),
                )));
            }
            sent_requests += 1;
            let options = planner.options(plan.budget(), &self.config, &self.options);
            let mut request = build_request(
                plan.budget(),
                &conversation,
                system.as_deref(),
                planner.images(),
                &self.config.model,
                options,
            );
            // Once the turn's tool rounds are used up, the model is offered no tools and told
            // to answer: offered tools again, a model that keeps calling them costs a request
            // per call. Its rounds go as text, since some providers (Anthropic) refuse tool
            // blocks in a request that declares no tools.
            let final_answer = !rounds.is_empty() && !hooks.rounds_left();
            let sent_rounds = rounds_for_model(rounds, &self.config);
            if final_answer {
                request
                    .messages
                    .extend(tool_rounds_as_text(&sent_rounds, FINAL_ANSWER_NOTE));
            } else {
                request.tools = match self.output.as_deref() {
                    // An agent step offers the task's tools (its planner has none), unless
                    // the server refused them.
                    Some(_) if self.tools_refused => Vec::new(),
                    Some(step) => step.tools.clone(),
                    None => planner.tools().to_vec(),
                };
                request.messages.extend(sent_rounds);
            }
            request.output = self.output.as_deref().map(|step| OutputSchema {
                name: step.name.clone(),
                schema: step.schema.clone(),
                mode: self.output_mode,
                calls: step.calls,
            });
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
                Ok(r) => Ok(structured_reply(r, request.output.as_ref())),
                // A server that refuses the structured reply is asked the same step again a
                // rung down, remembered for the session. The refused request cost nothing and
                // is not an attempt of the step: no token record, no retry counted.
                Err(SendFailure::Provider(e))
                    if structured::refused(&e) && request.output.is_some() =>
                {
                    match self.output_mode.fallback() {
                        Some(next) if structured::has_ladder(self.config.kind) => {
                            self.output_mode = next;
                            report(hooks, &self.config, &plan, &trace, usage);
                            continue;
                        }
                        _ => Err(e),
                    }
                }
                // A server that refuses the step's native tools is asked the same step
                // without them, for the rest of the session; like a refused rung, the
                // refused request is no attempt of the step.
                Err(SendFailure::Provider(e))
                    if e.kind == ErrorKind::ToolsRefused
                        && request.output.is_some()
                        && !request.tools.is_empty() =>
                {
                    self.tools_refused = true;
                    report(hooks, &self.config, &plan, &trace, usage);
                    continue;
                }
                Err(SendFailure::Provider(e)) => Err(e),
                Err(SendFailure::Stopped) => {
                    report(hooks, &self.config, &plan, &trace, usage);
                    return Err(CloudFailure::Stopped);
                }
            };
            // What the provider reported is what the person pays for (the cost ceiling counts
            // these records); Tandem's own estimate stands in when it reported nothing.
            let (sent, received) = match (&result, usage) {
                (Ok(_), Some(u)) => (u.input, u.output),
                (r, _) => (
                    sent,
                    r.as_ref().map_or(0, |r| super::message_tokens(&r.content)),
                ),
            };
            tokens.push(TokenRecord {
                step,
                provider,
                sent,
                received,
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
            report(hooks, &self.config, &plan, &trace, usage);
            match (action, result) {
                // Calls in answer to a request that offered no tools are not run: the text,
                // if any, is the answer; without text the turn ends with a sentence.
                (Action::Done, Ok(mut response))
                    if final_answer && !response.tool_calls.is_empty() =>
                {
                    if response.content.trim().is_empty() {
                        return Err(CloudFailure::Provider(ProviderError::new(
                            ErrorKind::Provider,
                            format!(
                                "The model kept calling tools after the {} rounds Tandem allows for one message and gave no answer, so Tandem stopped it. Ask again, more narrowly.",
                                rounds.len() / 2
                            ),
                        )));
                    }
                    response.tool_calls.clear();
                    hooks.answered(&response, plan.budget(), true);
                    return Ok(response);
                }
                // An agent step's native call is the step's answer: the task's loop runs it
                // through every guard of the `tool` action, as a step of its own.
                (Action::Done, Ok(response)) if request.output.is_some() => {
                    hooks.answered(&response, plan.budget(), !rounds.is_empty());
                    return Ok(response);
                }
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
