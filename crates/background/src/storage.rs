//! Typed reads of `chrome.storage.local`.

use tandem_chrome::js_text;
use tandem_core::settings::Settings;

use crate::chrome;

pub const SETTINGS_KEY: &str = "settings";

#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error("could not read Tandem's settings from chrome.storage.local: {0}")]
    Read(String),
}

/// The saved settings; missing settings are the defaults (no provider yet). They are read
/// field by field: a damaged field is reset alone (and said so in the console), never the
/// whole object.
pub async fn settings() -> Result<Settings, StorageError> {
    let json = chrome::stored_json(chrome::storage_local_get, SETTINGS_KEY)
        .await
        .map_err(js_text)
        .map_err(StorageError::Read)?;
    let Some(json) = json.filter(|j| j != "null") else {
        return Ok(Settings::default());
    };
    let stored = Settings::from_stored_json(&json);
    if let Some(notice) = stored.notice() {
        crate::log_warning(&notice);
    }
    crate::redact::remember(&stored.settings);
    Ok(stored.settings)
}

/// The API key saved for `provider` (empty when none): Settings' tools use it when the key
/// field is left empty, so the key never travels back to the panel.
pub async fn saved_key(provider: tandem_core::provider::ProviderKind) -> String {
    settings()
        .await
        .ok()
        .and_then(|s| s.providers.get(&provider).map(|p| p.api_key.clone()))
        .unwrap_or_default()
}
