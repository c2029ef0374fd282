//! Settings' model picker: one GET to the provider's model list with the form's values (the
//! saved key when the key field is empty), read by `tandem_core::model_list`. Done in the
//! worker so the key never has to be in the panel, and it is made like every provider request
//! (`chat::provider_request`: no redirect followed, since it carries the key).

use tandem_core::errors::{network_error, redirected, ErrorKind, ProviderError};
use tandem_core::model_list::{list_request, read_list, summary};
use tandem_core::protocol::WorkerToPanel;
use tandem_core::provider::{ProviderConfig, ProviderKind, ProviderSettings};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::{spawn_local, JsFuture};
use web_sys::{AbortController, Response, ResponseType};

use crate::chat::post;
use crate::chrome::{self, Port};
use crate::storage::{self, js_text};

/// A model list is small; a server that has not answered by then will not.
const LIST_TIMEOUT_MS: i32 = 15_000;
/// Lists are a few hundred KB at most (Gemini's, with descriptions); more is not a list.
const MAX_BODY_CHARS: usize = 4 * 1024 * 1024;

pub fn list(port: Port, request_id: String, provider: ProviderKind, form: ProviderSettings) {
    spawn_local(async move {
        let (models, message) = match models(provider, form).await {
            Ok(models) => {
                let message = summary(provider, &models);
                (models, message)
            }
            Err(e) => (Vec::new(), e.message),
        };
        let _ = post(
            &port,
            &WorkerToPanel::Models {
                request_id,
                provider,
                models,
                message,
            },
        );
    });
}

async fn models(
    provider: ProviderKind,
    mut form: ProviderSettings,
) -> Result<Vec<tandem_core::model_list::ListedModel>, ProviderError> {
    if form.api_key.trim().is_empty() {
        form.api_key = storage::saved_key(provider).await;
    }
    // The model field may still be empty: listing is how the user finds one.
    if form.model.trim().is_empty() {
        form.model = "-".into();
    }
    let cfg = ProviderConfig::from_settings(provider, &form)
        .map_err(|e| ProviderError::new(ErrorKind::NotConfigured, e.to_string()))?;
    let http = list_request(&cfg)?;
    let controller =
        AbortController::new().map_err(|e| ProviderError::malformed(provider, &js_text(e)))?;
    let abort = controller.clone();
    let timer = Closure::once_into_js(move || abort.abort());
    chrome::set_timeout(timer.unchecked_ref(), LIST_TIMEOUT_MS);
    let request = crate::chat::provider_request(&http, &controller, &cfg)?;
    let response: Response = match JsFuture::from(chrome::fetch_with_request(&request)).await {
        Ok(r) => r.unchecked_into(),
        Err(_) if controller.signal().aborted() => {
            return Err(ProviderError::new(
                ErrorKind::Network,
                format!(
                    "{} did not list its models within {} s.",
                    provider.label(),
                    LIST_TIMEOUT_MS / 1000
                ),
            ))
        }
        Err(e) => return Err(network_error(&cfg, &js_text(e))),
    };
    if response.type_() == ResponseType::Opaqueredirect {
        return Err(redirected(&cfg));
    }
    let body = match response.text() {
        Ok(p) => JsFuture::from(p)
            .await
            .ok()
            .and_then(|v: JsValue| v.as_string())
            .unwrap_or_default(),
        Err(_) => String::new(),
    };
    if body.len() > MAX_BODY_CHARS {
        return Err(ProviderError::malformed(
            provider,
            "the model list was far larger than any provider sends",
        ));
    }
    read_list(&cfg, response.status(), &body)
}
