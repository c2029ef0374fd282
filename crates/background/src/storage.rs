//! Typed reads of `chrome.storage.local`.

use tandem_chrome::js_text;
use tandem_core::settings::Settings;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;

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
    let promise = chrome::storage_local_get(&JsValue::from_str(SETTINGS_KEY))
        .map_err(js_text)
        .map_err(StorageError::Read)?;
    let items = JsFuture::from(promise)
        .await
        .map_err(js_text)
        .map_err(StorageError::Read)?;
    let value = js_sys::Reflect::get(&items, &SETTINGS_KEY.into())
        .map_err(js_text)
        .map_err(StorageError::Read)?;
    if value.is_undefined() || value.is_null() {
        return Ok(Settings::default());
    }
    let json = js_sys::JSON::stringify(&value)
        .map_err(js_text)
        .map_err(StorageError::Read)?;
    let stored = Settings::from_stored_json(&String::from(json));
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
