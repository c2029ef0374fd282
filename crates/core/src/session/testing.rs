//! Deterministic in-memory providers for tests and `benches/session.rs` (and the service
//! worker's own tests): they answer at once, count every call and every text they receive,
//! and fail on cue.
//!
//! Both fakes answer a turn with the same [`scripted_reply`], so a task gives the same
//! transcript whichever provider answers each step.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use super::cloud::{CloudTransport, Sleeper};
use super::message_tokens;
use super::nano::{
    Availability, NanoBackend, NanoCreateOptions, NanoError, NanoModel, NanoPromptOptions,
    INVALID_STATE, NOT_SUPPORTED,
};
use super::transcript::NanoMessage;
use crate::chat::Role;
use crate::errors::ProviderError;
use crate::request::{ToolCall, UniversalRequest};
use crate::send::UniversalResponse;
use crate::stream::Usage;

/// What a fake answers to a turn, unless a fault says otherwise.
pub type Replier = fn(&str) -> String;

/// The agent-style JSON answer to `turn`: the same for every provider, a few dozen tokens.
pub fn scripted_reply(turn: &str) -> String {
    // A stable hash, so the reply differs per turn.
    let hash = crate::hash::fnv1a(turn.bytes());
    let index = hash % 97;
    format!(
        r#"{{"evaluation":"The previous action worked and the page shows the expected content.","memory":"Checked element {index}; results list still loading.","nextGoal":"Open the result at index {index} and read its details.","action":{{"click":{{"index":{index}}}}}}}"#
    )
}

/// What a fake does at a given call instead of answering normally.
#[derive(Clone, Debug, PartialEq)]
pub enum Fault<E> {
    Fail(E),
    /// Answer this text instead (e.g. broken JSON).
    Reply(String),
}

/// Counters shared by a [`FakeNano`] and the models it creates.
#[derive(Debug, Default)]
pub struct NanoStats {
    pub created: Cell<usize>,
    pub destroyed: Cell<usize>,
    pub prompts: Cell<usize>,
    /// Every `initialPrompts` list given to `create()`.
    pub initial_prompts: RefCell<Vec<Vec<NanoMessage>>>,
    /// Every `create()`'s options (initial prompts included).
    pub create_options: RefCell<Vec<NanoCreateOptions>>,
    /// Every prompt input, in call order.
    pub inputs: RefCell<Vec<String>>,
    pub prompt_options: RefCell<Vec<NanoPromptOptions>>,
}

impl NanoStats {
    /// Models created and not destroyed.
    pub fn live(&self) -> usize {
        self.created.get() - self.destroyed.get()
    }

    /// Every text the fake received, initial prompts included, in order.
    pub fn received_texts(&self) -> Vec<String> {
        let init = self.initial_prompts.borrow();
        let init = init.iter().flatten().map(|m| m.content.clone());
        init.chain(self.inputs.borrow().iter().cloned()).collect()
    }
}

/// A fake `LanguageModel`.
pub struct FakeNano {
    pub availability: Cell<Availability>,
    pub context_window: f64,
    pub stats: Rc<NanoStats>,
    create_fault: RefCell<Option<NanoError>>,
    /// Faults by prompt call index, counted over the fake's whole life.
    faults: Rc<RefCell<HashMap<usize, Fault<NanoError>>>>,
    replier: Rc<Cell<Replier>>,
}

impl Default for FakeNano {
    fn default() -> Self {
        Self::new(Availability::Available)
    }
}

impl FakeNano {
    pub fn new(availability: Availability) -> Self {
        Self {
            availability: Cell::new(availability),
            context_window: 9_216.0,
            stats: Rc::default(),
            create_fault: RefCell::new(None),
            faults: Rc::default(),
            replier: Rc::new(Cell::new(scripted_reply)),
        }
    }

    /// Every model answers with `replier` instead of [`scripted_reply`].
    pub fn reply_with(&self, replier: Replier) {
        self.replier.set(replier);
    }

    /// Prompt call `call` (0-based, over all models) does `fault`.
    pub fn fault_at(&self, call: usize, fault: Fault<NanoError>) {
        self.faults.borrow_mut().insert(call, fault);
    }

    /// The next `create()` fails with `error`.
    pub fn fail_create(&self, error: NanoError) {
        *self.create_fault.borrow_mut() = Some(error);
    }
}

impl NanoBackend for FakeNano {
    type Model = FakeNanoModel;

    async fn availability(&self, _options: &NanoCreateOptions) -> Result<Availability, NanoError> {
        Ok(self.availability.get())
    }

    async fn create(&self, options: &NanoCreateOptions) -> Result<FakeNanoModel, NanoError> {
        if let Some(e) = self.create_fault.borrow_mut().take() {
            return Err(e);
        }
        let usage = options
            .initial_prompts
            .iter()
            .map(|m| message_tokens(&m.content))
            .sum::<u32>();
        self.stats.created.set(self.stats.created.get() + 1);
        self.stats
            .initial_prompts
            .borrow_mut()
            .push(options.initial_prompts.clone());
        self.stats.create_options.borrow_mut().push(options.clone());
        Ok(FakeNanoModel {
            images: options.expected_inputs.iter().any(|e| e.kind == "image"),
            stats: Rc::clone(&self.stats),
            faults: Rc::clone(&self.faults),
            replier: Rc::clone(&self.replier),
            usage: Cell::new(f64::from(usage)),
            window: self.context_window,
            overflowed: Cell::new(false),
            destroyed: Cell::new(false),
        })
    }
}

pub struct FakeNanoModel {
    /// Created with image input: like Chrome, image parts are refused otherwise.
    images: bool,
    stats: Rc<NanoStats>,
    faults: Rc<RefCell<HashMap<usize, Fault<NanoError>>>>,
    replier: Rc<Cell<Replier>>,
    usage: Cell<f64>,
    window: f64,
    overflowed: Cell<bool>,
    destroyed: Cell<bool>,
}

impl NanoModel for FakeNanoModel {
    async fn prompt(&self, input: &str, options: &NanoPromptOptions) -> Result<String, NanoError> {
        if self.destroyed.get() {
            return Err(NanoError::new(
                INVALID_STATE,
                "The session has been destroyed.",
            ));
        }
        if !options.images.is_empty() && !self.images {
            return Err(NanoError::new(
                NOT_SUPPORTED,
                "Image input was not requested when the session was created.",
            ));
        }
        let call = self.stats.prompts.get();
        self.stats.prompts.set(call + 1);
        self.stats.inputs.borrow_mut().push(input.to_string());
        self.stats.prompt_options.borrow_mut().push(options.clone());
        let reply = match self.faults.borrow_mut().remove(&call) {
            Some(Fault::Fail(e)) => return Err(e),
            Some(Fault::Reply(text)) => text,
            None => self.replier.get()(input),
        };
        let usage = self.usage.get() + f64::from(message_tokens(input) + message_tokens(&reply));
        // Like Chrome: past the window the oldest exchanges go and `contextoverflow` fires.
        if usage > self.window {
            self.overflowed.set(true);
        }
        self.usage.set(usage.min(self.window));
        Ok(reply)
    }

    async fn prompt_streaming(
        &self,
        input: &str,
        options: &NanoPromptOptions,
        on_chunk: &mut dyn FnMut(&str),
    ) -> Result<String, NanoError> {
        let reply = self.prompt(input, options).await?;
        let mid = reply.len() / 2;
        let split = (mid..=reply.len())
            .find(|&i| reply.is_char_boundary(i))
            .unwrap_or(reply.len());
        on_chunk(&reply[..split]);
        on_chunk(&reply[split..]);
        Ok(reply)
    }

    fn context_usage(&self) -> f64 {
        self.usage.get()
    }

    fn context_window(&self) -> f64 {
        self.window
    }

    fn take_overflow(&self) -> bool {
        self.overflowed.replace(false)
    }

    fn destroy(&self) {
        if !self.destroyed.replace(true) {
            self.stats.destroyed.set(self.stats.destroyed.get() + 1);
        }
    }
}

/// A fake stateless chat API.
#[derive(Default)]
pub struct FakeCloud {
    /// Every request received, in order.
    pub requests: RefCell<Vec<UniversalRequest>>,
    faults: RefCell<HashMap<usize, Fault<ProviderError>>>,
    /// Tool calls the answer to a given request makes.
    calls: RefCell<HashMap<usize, Vec<ToolCall>>>,
    /// Answers instead of [`scripted_reply`].
    replier: Cell<Option<Replier>>,
}

impl FakeCloud {
    /// Request `call` (0-based) does `fault`.
    pub fn fault_at(&self, call: usize, fault: Fault<ProviderError>) {
        self.faults.borrow_mut().insert(call, fault);
    }

    /// Every request is answered with `replier` instead of [`scripted_reply`].
    pub fn reply_with(&self, replier: Replier) {
        self.replier.set(Some(replier));
    }

    /// The answer to request `call` (0-based) also calls these tools.
    pub fn tools_at(&self, call: usize, calls: Vec<ToolCall>) {
        self.calls.borrow_mut().insert(call, calls);
    }
}

impl CloudTransport for FakeCloud {
    type Abort = ();

    async fn send(&self, req: &UniversalRequest) -> Result<UniversalResponse, ProviderError> {
        let call = self.requests.borrow().len();
        self.requests.borrow_mut().push(req.clone());
        let turn = req
            .messages
            .iter()
            .rev()
            .find(|m| m.role == Role::User)
            .map_or("", |m| m.content.as_str());
        let content = match self.faults.borrow_mut().remove(&call) {
            Some(Fault::Fail(e)) => return Err(e),
            Some(Fault::Reply(text)) => text,
            None => self.replier.get().unwrap_or(scripted_reply)(turn),
        };
        let input = message_tokens(req.system.as_deref().unwrap_or(""))
            + req
                .messages
                .iter()
                .map(|m| message_tokens(&m.content))
                .sum::<u32>();
        Ok(UniversalResponse {
            usage: Some(Usage {
                input,
                output: message_tokens(&content),
            }),
            content,
            finish_reason: Some("stop".to_string()),
            model: Some(req.model.clone()),
            tool_calls: self.calls.borrow_mut().remove(&call).unwrap_or_default(),
            ..UniversalResponse::default()
        })
    }
}

/// Records the waits it is asked for and returns at once.
#[derive(Debug, Default)]
pub struct RecordingSleeper {
    pub waits: RefCell<Vec<u64>>,
}

impl Sleeper for RecordingSleeper {
    async fn sleep(&self, ms: u64) {
        self.waits.borrow_mut().push(ms);
    }
}
