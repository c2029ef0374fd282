//! Typed reads of `chrome.storage.local`.

use tandem_core::provider::Settings;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;

use crate::chrome;

pub const SETTINGS_KEY: &str = "settings";

#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error("could not read Tandem's settings from chrome.storage.local: {0}")]
    Read(String),
    #[error("Tandem's stored settings are damaged ({0}). Open Settings and save them again.")]
    Corrupt(String),
}

/// The saved settings; missing settings are the defaults (no provider yet).
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
    let settings: Settings = serde_json::from_str(&String::from(json))
        .map_err(|e| StorageError::Corrupt(e.to_string()))?;
    crate::redact::remember(&settings);
    Ok(settings)
}

pub fn js_text(value: JsValue) -> String {
    if let Some(s) = value.as_string() {
        return s;
    }
    if let Some(e) = value.dyn_ref::<js_sys::Error>() {
        return String::from(e.message());
    }
    format!("{value:?}")
}

use wasm_bindgen::JsCast;
