//! The provider-neutral request every adapter translates.

use serde::{Deserialize, Serialize};

use crate::chat::Role;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RequestMessage {
    pub role: Role,
    pub content: String,
    /// Images attached to this message, as data: URLs (`data:image/png;base64,...`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RequestOptions {
    pub temperature: Option<f32>,
    pub max_output_tokens: Option<u32>,
}

/// Chronological messages (user/assistant only; the system prompt is separate because
/// Anthropic and Gemini carry it outside the message list).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UniversalRequest {
    pub model: String,
    pub system: Option<String>,
    pub messages: Vec<RequestMessage>,
    pub options: RequestOptions,
}
