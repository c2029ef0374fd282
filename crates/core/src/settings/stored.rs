//! Reading stored [`Settings`] field by field. Settings live in `chrome.storage.local` across
//! versions of Tandem and hand edits; one field of the wrong type must cost only that field,
//! never the provider, key and model the user saved next to it.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::Settings;
use crate::budget::BudgetSettings;
use crate::provider::{ProviderKind, ProviderSettings};

/// A group of settings, as the user knows it from the Settings form, that reading may reset
/// on its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SettingsPart {
    /// The chosen provider and each provider's base URL, model, key and ids.
    Provider,
    /// The context budget (allowances, chars per token).
    Budget,
    /// "On-device model".
    OnDevice,
    /// The conversation memory's limits.
    Memory,
    /// The agent's site lists and plan approval.
    Agent,
}

impl SettingsPart {
    const ALL: [SettingsPart; 5] = [
        SettingsPart::Provider,
        SettingsPart::Budget,
        SettingsPart::OnDevice,
        SettingsPart::Memory,
        SettingsPart::Agent,
    ];

    /// The one label that is singular, so the sentence says "was".
    const ON_DEVICE_LABEL: &'static str = "the on-device model choice";

    /// How the reset sentence names this part.
    pub fn label(self) -> &'static str {
        match self {
            SettingsPart::Provider => "the provider fields",
            SettingsPart::Budget => "the context budget settings",
            SettingsPart::OnDevice => Self::ON_DEVICE_LABEL,
            SettingsPart::Memory => "the memory limits",
            SettingsPart::Agent => "the agent's site settings",
        }
    }
}

/// Stored settings as read: what could be read, and the parts that had to be reset.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StoredSettings {
    pub settings: Settings,
    /// Sorted, each part once.
    pub reset: Vec<SettingsPart>,
}

impl StoredSettings {
    /// The sentence for the user when something was reset, `None` when all was read.
    pub fn notice(&self) -> Option<String> {
        if self.reset.is_empty() {
            return None;
        }
        if self.reset.len() == SettingsPart::ALL.len() {
            return Some(
                "Tandem's saved settings could not be read and were reset. Open Settings and save them again."
                    .into(),
            );
        }
        let labels: Vec<&str> = self.reset.iter().map(|p| p.label()).collect();
        let (were, list) = match labels.as_slice() {
            [SettingsPart::ON_DEVICE_LABEL] => ("was", SettingsPart::ON_DEVICE_LABEL.to_string()),
            [one] => ("were", one.to_string()),
            [init @ .., last] => ("were", format!("{} and {last}", init.join(", "))),
            [] => return None,
        };
        Some(format!(
            "Tandem's saved settings could not be read; {list} {were} reset. Your other settings were kept."
        ))
    }
}

impl Settings {
    /// Reads the stored settings' JSON; see [`Settings::from_stored`].
    pub fn from_stored_json(json: &str) -> StoredSettings {
        match crate::json::from_str::<Value>(json) {
            Ok(value) => Self::from_stored(value),
            Err(_) => StoredSettings {
                settings: Settings::default(),
                reset: SettingsPart::ALL.to_vec(),
            },
        }
    }

    /// Reads stored settings field by field: a field that is missing or `null` takes its
    /// default quietly; a field that cannot be read is reset alone and its part reported.
    /// Fields this version does not know are ignored (a newer version may have written them).
    pub fn from_stored(value: Value) -> StoredSettings {
        let mut reader = Reader::default();
        let settings = match value {
            Value::Null => Settings::default(),
            Value::Object(obj) => reader.settings(&obj),
            _ => {
                reader.reset.extend(SettingsPart::ALL);
                Settings::default()
            }
        };
        let mut reset = reader.reset;
        crate::sort::sort(&mut reset);
        reset.dedup();
        StoredSettings { settings, reset }
    }
}

impl<'de> Deserialize<'de> for Settings {
    /// Lenient, as [`Settings::from_stored`]: every reader of stored settings (the worker,
    /// the panel's form) keeps what can be read.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(|v| Settings::from_stored(v).settings)
    }
}

#[derive(Default)]
struct Reader {
    reset: Vec<SettingsPart>,
}

impl Reader {
    fn settings(&mut self, obj: &Map<String, Value>) -> Settings {
        Settings {
            active: self.field(obj, "active", SettingsPart::Provider),
            providers: self.providers(obj.get("providers")),
            budget: self.budget(obj.get("budget")),
            on_device: self.field(obj, "onDevice", SettingsPart::OnDevice),
            memory: self.field(obj, "memory", SettingsPart::Memory),
            agent: self.field(obj, "agent", SettingsPart::Agent),
        }
    }

    /// `obj[key]` as a `T`; missing or `null` is the default, anything unreadable resets
    /// `part`.
    fn field<T: DeserializeOwned + Default>(
        &mut self,
        obj: &Map<String, Value>,
        key: &str,
        part: SettingsPart,
    ) -> T {
        match obj.get(key) {
            None | Some(Value::Null) => T::default(),
            Some(v) => T::deserialize(v).unwrap_or_else(|_| {
                self.reset.push(part);
                T::default()
            }),
        }
    }

    /// Each provider on its own, and each of its fields on its own: a damaged context
    /// window must not cost the API key.
    fn providers(&mut self, value: Option<&Value>) -> BTreeMap<ProviderKind, ProviderSettings> {
        let part = SettingsPart::Provider;
        let obj = match value {
            None | Some(Value::Null) => return BTreeMap::new(),
            Some(Value::Object(obj)) => obj,
            Some(_) => {
                self.reset.push(part);
                return BTreeMap::new();
            }
        };
        let mut providers = BTreeMap::new();
        for (id, entry) in obj {
            let (Some(kind), Value::Object(fields)) = (ProviderKind::from_id(id), entry) else {
                self.reset.push(part);
                continue;
            };
            let settings = ProviderSettings {
                base_url: self.field(fields, "baseUrl", part),
                model: self.field(fields, "model", part),
                api_key: self.field(fields, "apiKey", part),
                context_window: self.field(fields, "contextWindow", part),
                project_id: self.field(fields, "projectId", part),
                app_id: self.field(fields, "appId", part),
            };
            providers.insert(kind, settings);
        }
        providers
    }

    fn budget(&mut self, value: Option<&Value>) -> BudgetSettings {
        let part = SettingsPart::Budget;
        let defaults = BudgetSettings::default();
        let obj = match value {
            None | Some(Value::Null) => return defaults,
            Some(Value::Object(obj)) => obj,
            Some(_) => {
                self.reset.push(part);
                return defaults;
            }
        };
        let mut number = |key: &str, default: u32| -> u32 {
            match obj.get(key) {
                None | Some(Value::Null) => default,
                Some(v) => u32::deserialize(v).unwrap_or_else(|_| {
                    self.reset.push(part);
                    default
                }),
            }
        };
        let user_request_allowance =
            number("userRequestAllowance", defaults.user_request_allowance);
        let assistant_response_allowance = number(
            "assistantResponseAllowance",
            defaults.assistant_response_allowance,
        );
        let max_trim_attempts = number("maxTrimAttempts", defaults.max_trim_attempts);
        let stall_seconds = number("stallSeconds", defaults.stall_seconds);
        // A rate that overflows f32 (1e39) reads as infinity, which cannot be saved back
        // (JSON has no infinity): only a finite positive rate is a rate.
        let chars_per_token = match obj.get("charsPerToken") {
            None | Some(Value::Null) => None,
            Some(v) => match f32::deserialize(v) {
                Ok(rate) if rate.is_finite() && rate > 0.0 => Some(rate),
                _ => {
                    self.reset.push(part);
                    None
                }
            },
        };
        BudgetSettings {
            chars_per_token,
            user_request_allowance,
            assistant_response_allowance,
            max_trim_attempts,
            stall_seconds,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAVED: &str = r#"{
        "active": "anthropic",
        "providers": {
            "anthropic": {"model": "claude-3-5-haiku", "apiKey": "sk-ant-kept", "contextWindow": 200000},
            "ollama": {"model": "llama3", "baseUrl": "http://localhost:11434"}
        },
        "budget": {"userRequestAllowance": 256, "assistantResponseAllowance": 1024},
        "onDevice": "cloud",
        "memory": {"maxMessages": 20},
        "agent": {"requirePlanApproval": true}
    }"#;

    /// `SAVED` with `find` replaced by `with`, read.
    fn read_with(find: &str, with: &str) -> StoredSettings {
        assert!(SAVED.contains(find), "{find}");
        Settings::from_stored_json(&SAVED.replacen(find, with, 1))
    }

    #[test]
    fn intact_settings_read_whole_and_save_back_the_same() {
        let read = Settings::from_stored_json(SAVED);
        assert_eq!(read.reset, []);
        assert_eq!(read.notice(), None);
        let s = &read.settings;
        assert_eq!(s.active, Some(ProviderKind::Anthropic));
        assert_eq!(s.providers[&ProviderKind::Anthropic].api_key, "sk-ant-kept");
        assert_eq!(s.budget.user_request_allowance, 256);
        assert_eq!(s.memory.max_messages, 20);
        let saved = serde_json::to_string(s).unwrap();
        assert_eq!(Settings::from_stored_json(&saved), read);
    }

    #[test]
    fn a_stored_setting_of_the_wrong_type_resets_only_itself() {
        let read = read_with("\"contextWindow\": 200000", "\"contextWindow\": \"big\"");
        assert_eq!(read.reset, [SettingsPart::Provider]);
        let anthropic = &read.settings.providers[&ProviderKind::Anthropic];
        assert_eq!(anthropic.context_window, None);
        assert_eq!(anthropic.api_key, "sk-ant-kept");
        assert_eq!(anthropic.model, "claude-3-5-haiku");
        assert_eq!(read.settings.active, Some(ProviderKind::Anthropic));
        assert_eq!(read.settings.memory.max_messages, 20);
        assert_eq!(
            read.notice().as_deref(),
            Some("Tandem's saved settings could not be read; the provider fields were reset. Your other settings were kept.")
        );

        let read = read_with("\"memory\": {\"maxMessages\": 20}", "\"memory\": \"lots\"");
        assert_eq!(read.reset, [SettingsPart::Memory]);
        assert_eq!(read.settings.memory, Default::default());
        assert_eq!(
            read.settings.providers[&ProviderKind::Anthropic].api_key,
            "sk-ant-kept"
        );
        assert_eq!(
            read.notice().as_deref(),
            Some("Tandem's saved settings could not be read; the memory limits were reset. Your other settings were kept.")
        );

        let read = read_with("\"onDevice\": \"cloud\"", "\"onDevice\": \"moon\"");
        assert_eq!(read.reset, [SettingsPart::OnDevice]);
        assert_eq!(
            read.notice().as_deref(),
            Some("Tandem's saved settings could not be read; the on-device model choice was reset. Your other settings were kept.")
        );
    }

    #[test]
    fn several_damaged_parts_are_named_together_and_garbage_resets_everything() {
        let read = read_with("\"budget\": {", "\"budget\": {\"charsPerToken\": 1e39, ");
        assert_eq!(read.reset, [SettingsPart::Budget]);
        assert_eq!(read.settings.budget.chars_per_token, None);
        assert_eq!(read.settings.budget.user_request_allowance, 256);
        let both = SAVED
            .replacen("\"active\": \"anthropic\"", "\"active\": \"mistral\"", 1)
            .replacen("\"agent\": {", "\"agent\": 7, \"x\": {", 1);
        let read = Settings::from_stored_json(&both);
        assert_eq!(read.reset, [SettingsPart::Provider, SettingsPart::Agent]);
        assert_eq!(read.settings.active, None);
        assert_eq!(
            read.settings.providers[&ProviderKind::Anthropic].api_key,
            "sk-ant-kept"
        );
        assert_eq!(
            read.notice().as_deref(),
            Some("Tandem's saved settings could not be read; the provider fields and the agent's site settings were reset. Your other settings were kept.")
        );
        for garbage in ["[1,2]", "\"settings\"", "{\"active\":"] {
            let read = Settings::from_stored_json(garbage);
            assert_eq!(read.settings, Settings::default(), "{garbage}");
            assert_eq!(read.reset.len(), 5, "{garbage}");
        }
        assert_eq!(
            Settings::from_stored_json("null"),
            StoredSettings::default()
        );
    }

    #[test]
    fn every_reader_of_stored_settings_is_lenient() {
        let damaged = SAVED.replacen("\"model\": \"llama3\"", "\"model\": 3", 1);
        let s: Settings = crate::json::from_str(&damaged).unwrap();
        assert_eq!(s.providers[&ProviderKind::Ollama].model, "");
        assert_eq!(
            s.providers[&ProviderKind::Ollama].base_url,
            "http://localhost:11434"
        );
    }
}
