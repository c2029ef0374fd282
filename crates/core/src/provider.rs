//! Which providers exist and how the user configured them (stored in `chrome.storage.local`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

mod stored;
pub use stored::{SettingsPart, StoredSettings};

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

/// Everything the user set in Settings. Stored under the `settings` key, and read back
/// field by field (`Deserialize` is [`Settings::from_stored`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    pub active: Option<ProviderKind>,
    pub providers: BTreeMap<ProviderKind, ProviderSettings>,
    /// How the send pipeline shares a model's context window.
    pub budget: crate::budget::BudgetSettings,
    /// Where answers come from: Gemini Nano on the device first (`auto`), only the cloud,
    /// or only the device.
    pub on_device: crate::session::Preferred,
    /// Limits of the per-tab conversation memory (defaults until Settings shows them).
    pub memory: crate::memory::MemoryConfig,
    /// The agent's site lists and plan approval.
    pub agent: crate::agent::AgentSettings,
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

impl Settings {
    /// The active provider's effective configuration, or the sentence to show the user.
    pub fn active_config(&self) -> Result<ProviderConfig, ConfigError> {
        let kind = self.active.ok_or(ConfigError::NoProvider)?;
        let stored = self.providers.get(&kind).cloned().unwrap_or_default();
        ProviderConfig::from_settings(kind, &stored)
    }

    /// [`active_config`](Self::active_config) and its model's limits, with the user's
    /// context-window override applied.
    pub fn active_model(&self) -> Result<(ProviderConfig, crate::models::ModelInfo), ConfigError> {
        let cfg = self.active_config()?;
        let stored = self.providers.get(&cfg.kind).cloned().unwrap_or_default();
        let info = crate::models::effective_info(cfg.kind, &stored);
        Ok((cfg, info))
    }
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

    fn settings(kind: ProviderKind, p: ProviderSettings) -> Settings {
        Settings {
            active: Some(kind),
            providers: [(kind, p)].into(),
            ..Settings::default()
        }
    }

    #[test]
    fn no_provider_is_a_sentence_not_a_crash() {
        let err = Settings::default().active_config().unwrap_err();
        assert_eq!(err, ConfigError::NoProvider);
        assert!(err.to_string().contains("Settings"));
    }

    #[test]
    fn defaults_and_requirements_per_provider() {
        let s = settings(
            ProviderKind::OpenAi,
            ProviderSettings {
                model: "gpt-4o".into(),
                ..Default::default()
            },
        );
        assert_eq!(
            s.active_config().unwrap_err(),
            ConfigError::NoKey { provider: "OpenAI" }
        );
        let s = settings(
            ProviderKind::Ollama,
            ProviderSettings {
                model: "llama3".into(),
                ..Default::default()
            },
        );
        let c = s.active_config().unwrap();
        assert_eq!(c.base_url, "http://localhost:11434");
        assert!(c.is_local());
        let s = settings(
            ProviderKind::OpenAiCompatible,
            ProviderSettings {
                model: "m".into(),
                ..Default::default()
            },
        );
        assert_eq!(
            s.active_config().unwrap_err(),
            ConfigError::NoBaseUrl {
                provider: "OpenAI-compatible"
            }
        );
        let s = settings(
            ProviderKind::OpenAiCompatible,
            ProviderSettings {
                model: "m".into(),
                base_url: "ftp://x".into(),
                ..Default::default()
            },
        );
        assert!(matches!(
            s.active_config().unwrap_err(),
            ConfigError::BadBaseUrl { .. }
        ));
    }

    #[test]
    fn settings_round_trip_with_kebab_ids() {
        let s = settings(
            ProviderKind::OpenAiCompatible,
            ProviderSettings {
                model: "m".into(),
                ..Default::default()
            },
        );
        let json = serde_json::to_string(&s).unwrap();
        assert!(json.contains("\"openai-compatible\""), "{json}");
        assert_eq!(crate::json::from_str::<Settings>(&json).unwrap(), s);
        for k in ProviderKind::PICKABLE {
            assert_eq!(ProviderKind::from_id(k.id()), Some(k));
        }
    }

    #[test]
    fn masked_key_never_shows_more_than_four_chars() {
        assert_eq!(mask_key("sk-abcdefghijkl1234"), "…1234");
        assert_eq!(mask_key("short"), "••••");
    }
}
