//! Gemini Nano through Chrome's Prompt API (the `LanguageModel` global, spec at
//! <https://webmachinelearning.github.io/prompt-api/>).
//!
//! [`NanoBackend`] and [`NanoModel`] mirror the JS API closely enough that the service worker
//! implements them as thin wasm-bindgen wrappers: options are serde structs that serialize to
//! the JS dictionaries, text goes in and out as strings, and every rejection is a
//! [`NanoError`] carrying the DOMException's `name` and `message`. Older Chrome builds name
//! some members differently (`inputUsage`, `inputQuota`, `measureInputUsage`,
//! `quotaoverflow`); the backend picks whichever exists.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::transcript::{NanoMessage, Transcript};
use super::{message_tokens, SessionConfig};
use crate::answer_schema::Schema;

/// DOMException names the session layer acts on.
pub const INVALID_STATE: &str = "InvalidStateError";
pub const QUOTA_EXCEEDED: &str = "QuotaExceededError";
pub const NOT_SUPPORTED: &str = "NotSupportedError";
pub const TIMEOUT: &str = "TimeoutError";
pub const ABORT: &str = "AbortError";

/// `LanguageModel.availability()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Availability {
    Unavailable,
    Downloadable,
    Downloading,
    Available,
}

impl Availability {
    /// The JS string; anything unknown (a future state, a missing API) is `Unavailable`.
    pub fn parse(s: &str) -> Self {
        match s {
            "available" => Availability::Available,
            "downloadable" => Availability::Downloadable,
            "downloading" => Availability::Downloading,
            _ => Availability::Unavailable,
        }
    }

    /// The word people read (and the JS string of a known state).
    pub fn word(self) -> &'static str {
        match self {
            Availability::Available => "available",
            Availability::Downloadable => "downloadable",
            Availability::Downloading => "downloading",
            Availability::Unavailable => "unavailable",
        }
    }
}

/// A rejected Prompt API promise.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[error("{name}: {message}")]
pub struct NanoError {
    /// The DOMException name (`QuotaExceededError`, `InvalidStateError`, ...).
    pub name: String,
    pub message: String,
}

impl NanoError {
    pub fn new(name: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            message: message.into(),
        }
    }

    pub fn is_abort(&self) -> bool {
        self.name == ABORT
    }
}

/// An `expectedInputs` / `expectedOutputs` entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NanoExpected {
    /// "text", "image" or "audio".
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub languages: Vec<String>,
}

/// `LanguageModel.create()` options (also given to `availability()`, which ignores
/// `initialPrompts`). The download `monitor` is a JS callback: the backend adds its own.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NanoCreateOptions {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub initial_prompts: Vec<NanoMessage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_k: Option<u32>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub expected_inputs: Vec<NanoExpected>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub expected_outputs: Vec<NanoExpected>,
}

impl NanoCreateOptions {
    pub fn for_session(config: &SessionConfig, initial_prompts: Vec<NanoMessage>) -> Self {
        // Chrome rejects a create() that sets only one of the two sampling parameters.
        let (temperature, top_k) = match (config.temperature, config.top_k) {
            (Some(t), Some(k)) => (Some(t), Some(k)),
            _ => (None, None),
        };
        let of = |kind: &str| NanoExpected {
            kind: kind.to_string(),
            languages: Vec::new(),
        };
        let mut expected_inputs = vec![of("text")];
        if config.images {
            // Without it Chrome refuses every image part with NotSupportedError.
            expected_inputs.push(of("image"));
        }
        Self {
            initial_prompts,
            temperature,
            top_k,
            expected_inputs,
            expected_outputs: vec![of("text")],
        }
    }
}

/// `prompt()` / `promptStreaming()` options.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NanoPromptOptions {
    /// A JSON Schema the answer is constrained to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_constraint: Option<Value>,
    /// Do not add the schema to the prompt (the initial prompts already describe it).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub omit_response_constraint_input: bool,
    /// Not a Prompt API field: the backend passes `signal: AbortSignal.timeout(ms)`, whose
    /// rejection is a `TimeoutError`.
    #[serde(skip)]
    pub timeout_ms: Option<u64>,
    /// Not a Prompt API field: images (`data:` URLs) that go with this prompt's text. The
    /// backend then sends the input as one user message whose content is the text part
    /// followed by one image part per entry (a `Blob` of the decoded bytes), which Chrome
    /// accepts only from a session created with image input.
    #[serde(skip)]
    pub images: Vec<String>,
}

/// The `LanguageModel` statics.
// Single-threaded wasm: no `Send` bound is wanted on the returned futures.
#[allow(async_fn_in_trait)]
pub trait NanoBackend {
    type Model: NanoModel;

    async fn availability(&self, options: &NanoCreateOptions) -> Result<Availability, NanoError>;
    async fn create(&self, options: &NanoCreateOptions) -> Result<Self::Model, NanoError>;
}

/// A `LanguageModel` instance.
#[allow(async_fn_in_trait)]
pub trait NanoModel {
    async fn prompt(&self, input: &str, options: &NanoPromptOptions) -> Result<String, NanoError>;
    /// `promptStreaming()`: `on_chunk` gets each new piece of text (the backend turns the
    /// cumulative chunks of older Chrome builds into deltas); returns the whole answer.
    async fn prompt_streaming(
        &self,
        input: &str,
        options: &NanoPromptOptions,
        on_chunk: &mut dyn FnMut(&str),
    ) -> Result<String, NanoError>;
    fn context_usage(&self) -> f64;
    /// May be infinite.
    fn context_window(&self) -> f64;
    /// Whether `contextoverflow` fired since the last call (the model dropped its oldest
    /// exchanges to fit the last prompt).
    fn take_overflow(&self) -> bool {
        false
    }
    /// Releases the model; later calls reject with `InvalidStateError`.
    fn destroy(&self);

    // The rest of the API. The session layer does not need them, so a backend may keep these
    // defaults.
    async fn append(&self, _messages: &[NanoMessage]) -> Result<(), NanoError> {
        Err(unsupported("append"))
    }
    async fn measure_context_usage(
        &self,
        _input: &str,
        _options: &NanoPromptOptions,
    ) -> Result<f64, NanoError> {
        Err(unsupported("measureContextUsage"))
    }
    async fn clone_model(&self) -> Result<Self, NanoError>
    where
        Self: Sized,
    {
        Err(unsupported("clone"))
    }
}

fn unsupported(what: &str) -> NanoError {
    NanoError::new(
        NOT_SUPPORTED,
        format!("{what}() is not implemented by this backend"),
    )
}

/// A Nano session of a task: the init messages went into `initialPrompts` at creation, so
/// each step sends only its turn. Dropping it destroys the model.
pub struct NanoSession<M: NanoModel> {
    model: M,
    /// Tokens of the initial prompts, charged to the first prompt (what creation put into the
    /// model's context).
    unsent_init_tokens: u32,
    omit_schema: bool,
    timeout_ms: Option<u64>,
    /// Created with image input ([`SessionConfig::images`]): only then may a prompt carry
    /// images.
    images: bool,
    /// `destroy()` was called already (a step-scoped session releases its model before the
    /// next one is created, and is dropped later).
    released: bool,
}

impl<M: NanoModel> NanoSession<M> {
    pub async fn create<B: NanoBackend<Model = M>>(
        backend: &B,
        transcript: &Transcript,
        config: &SessionConfig,
    ) -> Result<Self, NanoError> {
        let prompts = transcript.init_prompts();
        let unsent_init_tokens = prompts.iter().map(|m| message_tokens(&m.content)).sum();
        let options = NanoCreateOptions::for_session(config, prompts);
        let images = options.expected_inputs.iter().any(|e| e.kind == "image");
        let model = backend.create(&options).await?;
        Ok(Self {
            model,
            unsent_init_tokens,
            images,
            omit_schema: !transcript.schema_instructions.trim().is_empty(),
            timeout_ms: config.step_timeout_ms,
            released: false,
        })
    }

    /// Whether this session's prompts may carry images: it was created with image input.
    pub fn takes_images(&self) -> bool {
        self.images
    }

    /// Prompts one turn with `images` (`data:` URLs estimated at `image_tokens` in all; both
    /// dropped unless the session [takes images](Self::takes_images)); returns the answer
    /// and the tokens this call sent, which are also returned on failure (they were sent
    /// all the same).
    pub async fn prompt(
        &mut self,
        turn: &str,
        (images, image_tokens): (&[String], u32),
        schema: Option<&Schema>,
        on_chunk: Option<&mut dyn FnMut(&str)>,
    ) -> (Result<String, NanoError>, u32) {
        let (images, image_tokens) = match self.images && !images.is_empty() {
            true => (images.to_vec(), image_tokens),
            false => (Vec::new(), 0),
        };
        let options = NanoPromptOptions {
            response_constraint: schema.map(|s| s.json().clone()),
            omit_response_constraint_input: schema.is_some() && self.omit_schema,
            timeout_ms: self.timeout_ms,
            images,
        };
        let schema_tokens = match &options.response_constraint {
            Some(json) if !options.omit_response_constraint_input => {
                message_tokens(&json.to_string())
            }
            _ => 0,
        };
        let sent = std::mem::take(&mut self.unsent_init_tokens)
            .saturating_add(message_tokens(turn))
            .saturating_add(schema_tokens)
            .saturating_add(image_tokens);
        let result = match on_chunk {
            Some(f) => self.model.prompt_streaming(turn, &options, f).await,
            None => self.model.prompt(turn, &options).await,
        };
        (result, sent)
    }

    pub fn model(&self) -> &M {
        &self.model
    }

    /// Destroys the model now; later prompts reject with `InvalidStateError`. Dropping the
    /// session afterwards does not call `destroy()` again.
    pub fn release(&mut self) {
        if !std::mem::replace(&mut self.released, true) {
            self.model.destroy();
        }
    }
}

impl<M: NanoModel> Drop for NanoSession<M> {
    fn drop(&mut self) {
        // `destroy()` is synchronous in JS, so every path that ends a session (failover,
        // success, error, a dropped future) releases the on-device model here.
        self.release();
    }
}
