//! What the cloud side of a session is configured with, and how one attempt ended: shared by
//! the planner's hooks ([`super::plan`]) and the transport ([`super::cloud`]), so neither
//! needs the other for its types.

use crate::budget::BudgetSettings;
use crate::errors::ProviderError;
use crate::models::model_info;
use crate::provider::ProviderKind;

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
}

/// Why one attempt ended without an answer.
#[derive(Clone, Debug, PartialEq)]
pub enum SendFailure {
    /// The caller aborted the call (Stop, Cancel, the panel went away): not a provider
    /// error, never retried, and not shown as one.
    Stopped,
    Provider(ProviderError),
}

impl From<ProviderError> for SendFailure {
    fn from(e: ProviderError) -> Self {
        SendFailure::Provider(e)
    }
}

/// What one attempt looked like on the wire, for the Debug drawer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AttemptTrace {
    /// The HTTP request with its credentials redacted; `None` when none was built (the
    /// settings could not be read, or the transport is not HTTP).
    pub request: Option<serde_json::Value>,
    /// Frames the decoder skipped.
    pub notes: Vec<String>,
}
