//! One pure adapter per provider: `UniversalRequest` → HTTP request, response bytes →
//! [`StreamEvent`]s, HTTP error → [`ProviderError`]. Each module opens with the API document
//! it follows.

use crate::errors::ProviderError;
use crate::http::HttpRequest;
use crate::provider::{ProviderConfig, ProviderKind};
use crate::request::UniversalRequest;
use crate::stream::StreamDecoder;

pub mod openai;

/// What every provider module provides.
pub trait Adapter {
    /// The streaming request for `req`.
    fn translate(&self, req: &UniversalRequest, cfg: &ProviderConfig) -> HttpRequest;
    /// A fresh decoder for one streamed response body.
    fn decoder(&self) -> Box<dyn StreamDecoder>;
    /// Classifies a non-2xx answer. `retry_after` is the raw `Retry-After` header.
    fn classify_http(
        &self,
        status: u16,
        body: &str,
        retry_after: Option<&str>,
        cfg: &ProviderConfig,
    ) -> ProviderError;
}

pub fn adapter_for(kind: ProviderKind) -> &'static dyn Adapter {
    match kind {
        ProviderKind::OpenAi | ProviderKind::OpenAiCompatible => &openai::OpenAi,
        // Filled in by the send-pipeline work; until then every provider speaks OpenAI's
        // wire format, which Ollama and most local servers also serve under /v1.
        _ => &openai::OpenAi,
    }
}
