//! Settings' model picker: one GET to the provider's model list with the form's values (the
//! saved key when the key field is empty), read by `tandem_core::model_list`. Done in the
//! worker so the key never has to be in the panel, and it is made like every provider request
//! (`http::provider_request`: no redirect followed, since it carries the key). Test connection
//! is here too: one real request with the form's values.

use tandem_chrome::js_text;
use tandem_core::adapters::adapter_for;
use tandem_core::chat::Role;
use tandem_core::errors::{network_error, redirected, ErrorKind, ProviderError};
use tandem_core::model_list::{list_request, read_list, summary};
use tandem_core::protocol::WorkerToPanel;
use tandem_core::provider::{ProviderConfig, ProviderKind, ProviderSettings};
use tandem_core::request::{RequestMessage, RequestOptions, UniversalRequest};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::{spawn_local, JsFuture};
use web_sys::{AbortController, Response, ResponseType};

use crate::chrome::{self, Port};
use crate::http::Failure;
use crate::outbox::post;
use crate::storage;

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
    let request = crate::http::provider_request(&http, &controller, &cfg)?;
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
    let body = crate::http::body_text(&response).await;
    if body.len() > MAX_BODY_CHARS {
        return Err(ProviderError::malformed(
            provider,
            "the model list was far larger than any provider sends",
        ));
    }
    read_list(&cfg, response.status(), &body)
}

/// Settings → "Test connection": a one-token request with the form's values (the saved key
/// when the field is empty). Returns the sentence to show.
pub fn test_connection(
    port: Port,
    request_id: String,
    provider: ProviderKind,
    mut form: ProviderSettings,
) {
    spawn_local(async move {
        let result = async {
            let settings = storage::settings()
                .await
                .map_err(|e| ProviderError::new(ErrorKind::NotConfigured, e.to_string()))?;
            if form.api_key.trim().is_empty() {
                form.api_key = settings
                    .providers
                    .get(&provider)
                    .map(|p| p.api_key.clone())
                    .unwrap_or_default();
            }
            let cfg = ProviderConfig::from_settings(provider, &form)
                .map_err(|e| ProviderError::new(ErrorKind::NotConfigured, e.to_string()))?;
            let request = UniversalRequest {
                model: cfg.model.clone(),
                system: None,
                messages: vec![RequestMessage::text(Role::User, "Reply with OK.")],
                options: RequestOptions {
                    max_output_tokens: Some(1),
                    ..RequestOptions::default()
                },
                tools: Vec::new(),
                output: None,
            };
            let controller = AbortController::new()
                .map_err(|e| ProviderError::malformed(provider, &js_text(e)))?;
            let http = adapter_for(provider).translate(&request, &cfg);
            // The first event proves the whole path: key, model, CORS, stream format.
            crate::cloud::attempt(&http, &cfg, &controller, &mut |_| Ok(true))
                .await
                .map_err(Failure::into_error)?;
            controller.abort();
            Ok::<_, ProviderError>(format!(
                "Connected: {} answered with model {}.",
                provider.label(),
                cfg.model
            ))
        }
        .await;
        let (ok, message) = match result {
            Ok(m) => (true, m),
            Err(e) => (false, e.message),
        };
        let _ = post(
            &port,
            &WorkerToPanel::ConnectionResult {
                request_id,
                ok,
                message,
            },
        );
    });
}
