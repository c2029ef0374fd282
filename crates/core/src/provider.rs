//! Which providers exist, one provider's settings as the user filled them in, and the
//! configuration a call is made with. Plain data at the bottom of core: the errors, the
//! adapters and the sessions name a provider through it; the stored [`crate::settings::Settings`]
//! sits on top and composes it.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProviderKind {
    #[serde(rename = "openai")]
    OpenAi,
    Anthropic,
    Gemini,
    Ollama,
    #[serde(rename = "openai-compatible")]
    OpenAiCompatible,
    Firebase,
}

impl ProviderKind {
    /// The providers a user can pick in Settings, in display order.
    pub const PICKABLE: [ProviderKind; 6] = [
        ProviderKind::OpenAi,
        ProviderKind::Anthropic,
        ProviderKind::Gemini,
        ProviderKind::Ollama,
        ProviderKind::OpenAiCompatible,
        ProviderKind::Firebase,
    ];

    pub fn id(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "openai",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Gemini => "gemini",
            ProviderKind::Ollama => "ollama",
            ProviderKind::OpenAiCompatible => "openai-compatible",
            ProviderKind::Firebase => "firebase",
        }
    }

    pub fn from_id(id: &str) -> Option<Self> {
        Self::PICKABLE.into_iter().find(|k| k.id() == id)
    }

    pub fn label(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "OpenAI",
            ProviderKind::Anthropic => "Anthropic",
            ProviderKind::Gemini => "Gemini",
            ProviderKind::Ollama => "Ollama",
            ProviderKind::OpenAiCompatible => "OpenAI-compatible",
            ProviderKind::Firebase => "Firebase AI Logic",
        }
    }

    /// Base URL used when the user leaves the field empty. `None`: the user must give one.
    pub fn default_base_url(self) -> Option<&'static str> {
        match self {
            ProviderKind::OpenAi => Some("https://api.openai.com/v1"),
            ProviderKind::Anthropic => Some("https://api.anthropic.com/v1"),
            ProviderKind::Gemini => Some("https://generativelanguage.googleapis.com/v1beta"),
            ProviderKind::Ollama => Some("http://localhost:11434"),
            ProviderKind::OpenAiCompatible => None,
            ProviderKind::Firebase => Some("https://firebasevertexai.googleapis.com/v1beta"),
        }
    }

    /// Whether a request without an API key is meaningful (local servers).
    pub fn key_optional(self) -> bool {
        matches!(self, ProviderKind::Ollama | ProviderKind::OpenAiCompatible)
    }
}

/// One provider's settings as stored.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ProviderSettings {
    pub base_url: String,
    pub model: String,
    pub api_key: String,
    /// Overrides the model metadata table's context window.
    pub context_window: Option<u32>,
    /// Firebase only: the web app config's project id and app id.
    pub project_id: String,
    pub app_id: String,
}

/// A provider ready to be called: kind plus effective settings.
#[derive(Clone, Debug, PartialEq)]
pub struct ProviderConfig {
    pub kind: ProviderKind,
    pub base_url: String,
    pub model: String,
    pub api_key: String,
    /// Firebase only: the web app's project and app ids.
    pub project_id: String,
    pub app_id: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("No AI provider is configured yet. Open Settings, choose a provider and save.")]
    NoProvider,
    #[error("{provider} needs a model name. Open Settings and fill in \"Model\".")]
    NoModel { provider: &'static str },
    #[error("{provider} needs an API key. Open Settings and fill in \"API key\".")]
    NoKey { provider: &'static str },
    #[error("{provider} needs a base URL. Open Settings and fill in \"Base URL\".")]
    NoBaseUrl { provider: &'static str },
    #[error("Firebase AI Logic needs the Firebase project ID. Open Settings and fill in \"Project ID\".")]
    NoProjectId,
    #[error("The base URL \"{url}\" is not an http:// or https:// address.")]
    BadBaseUrl { url: String },
}

impl ProviderConfig {
    pub fn from_settings(kind: ProviderKind, s: &ProviderSettings) -> Result<Self, ConfigError> {
        let provider = kind.label();
        let base_url = match s.base_url.trim() {
            "" => kind
                .default_base_url()
                .ok_or(ConfigError::NoBaseUrl { provider })?
                .to_string(),
            url => url.trim_end_matches('/').to_string(),
        };
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(ConfigError::BadBaseUrl { url: base_url });
        }
        let model = s.model.trim().to_string();
        if model.is_empty() {
            return Err(ConfigError::NoModel { provider });
        }
        let api_key = s.api_key.trim().to_string();
        if api_key.is_empty() && !kind.key_optional() {
            return Err(ConfigError::NoKey { provider });
        }
        let project_id = s.project_id.trim().to_string();
        if kind == ProviderKind::Firebase && project_id.is_empty() {
            return Err(ConfigError::NoProjectId);
        }
        Ok(Self {
            kind,
            base_url,
            model,
            api_key,
            project_id,
            app_id: s.app_id.trim().to_string(),
        })
    }

    /// True when the base URL points at this machine (Ollama, LM Studio...): a refused
    /// connection there usually means the server is not running or blocks our origin.
    pub fn is_local(&self) -> bool {
        let rest = self.base_url.split("://").nth(1).unwrap_or("");
        let host = rest.split(['/', ':']).next().unwrap_or("");
        matches!(host, "localhost" | "127.0.0.1" | "[::1]" | "0.0.0.0")
    }
}

/// Shows the end of a key only ("…abcd"), never the whole key.
pub fn mask_key(key: &str) -> String {
    let chars: Vec<char> = key.chars().collect();
    if chars.len() <= 8 {
        return "•".repeat(chars.len().min(4));
    }
    let tail: String = chars[chars.len() - 4..].iter().collect();
    format!("…{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masked_key_never_shows_more_than_four_chars() {
        assert_eq!(mask_key("sk-abcdefghijkl1234"), "…1234");
        assert_eq!(mask_key("short"), "••••");
    }
}
