//! Everything the user set in Settings, as stored in `chrome.storage.local` under `settings`:
//! the top of core. It composes each module's own config type (the provider's, the budget's,
//! the memory's, the agent's, the on-device choice) instead of each module reaching up into
//! it, so nothing below imports this module.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::models::ModelInfo;
use crate::provider::{ConfigError, ProviderConfig, ProviderKind, ProviderSettings};
use crate::session::CloudConfig;

mod stored;
pub use stored::{SettingsPart, StoredSettings};

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

impl Settings {
    /// The active provider's effective configuration, or the sentence to show the user.
    pub fn active_config(&self) -> Result<ProviderConfig, ConfigError> {
        let kind = self.active.ok_or(ConfigError::NoProvider)?;
        let stored = self.providers.get(&kind).cloned().unwrap_or_default();
        ProviderConfig::from_settings(kind, &stored)
    }

    /// [`active_config`](Self::active_config) and its model's limits, with the user's
    /// context-window override applied.
    pub fn active_model(&self) -> Result<(ProviderConfig, ModelInfo), ConfigError> {
        let cfg = self.active_config()?;
        let stored = self.providers.get(&cfg.kind).cloned().unwrap_or_default();
        let info = crate::models::effective_info(cfg.kind, &stored);
        Ok((cfg, info))
    }
}

impl CloudConfig {
    /// The active provider of the user's settings, with their context-window override.
    pub fn from_settings(
        settings: &Settings,
        budget: crate::budget::BudgetSettings,
    ) -> Result<Self, ConfigError> {
        let (cfg, info) = settings.active_model()?;
        Ok(Self {
            kind: cfg.kind,
            model: cfg.model,
            context_window: info.context_window,
            max_output_tokens: info.max_output,
            budget,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::{ConfigError, ProviderKind, ProviderSettings};

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
}
