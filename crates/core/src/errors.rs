//! Provider failures, classified so the user reads a sentence that tells them what to do and
//! the send pipeline knows whether to retry, trim or give up.

use serde::{Deserialize, Serialize};

use crate::provider::ProviderKind;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorKind {
    /// Settings are incomplete (no provider, no model, no key).
    NotConfigured,
    /// 401/403.
    BadKey,
    /// 404 or the provider says the model does not exist.
    UnknownModel,
    /// 429: retry after a delay.
    RateLimited,
    /// 5xx / Anthropic 529: retry after a delay.
    Overloaded,
    /// The prompt does not fit the model's context window: drop the oldest pair and retry.
    ContextOverflow,
    /// The connection failed (refused, DNS, CORS).
    Network,
    /// The stream ended before the provider's end marker.
    StreamCut,
    /// An `error` payload inside the stream, or any other provider answer.
    Provider,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[error("{message}")]
#[serde(rename_all = "camelCase")]
pub struct ProviderError {
    pub kind: ErrorKind,
    /// The sentence shown to the user.
    pub message: String,
    /// HTTP status when there was one.
    pub status: Option<u16>,
    /// Milliseconds the provider asked us to wait (Retry-After).
    pub retry_after_ms: Option<u64>,
}

impl ProviderError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self { kind, message: message.into(), status: None, retry_after_ms: None }
    }

    pub fn stream_cut(provider: ProviderKind) -> Self {
        Self::new(
            ErrorKind::StreamCut,
            format!(
                "The connection to {} was cut before the answer finished. The partial answer is kept; send again to retry.",
                provider.label()
            ),
        )
    }

    pub fn malformed(provider: ProviderKind, detail: &str) -> Self {
        Self::new(ErrorKind::Provider, format!("{} sent a reply Tandem could not read ({detail}).", provider.label()))
    }

    /// Whether the send pipeline should try the same request again after a pause.
    pub fn is_transient(&self) -> bool {
        matches!(self.kind, ErrorKind::RateLimited | ErrorKind::Overloaded)
    }
}
