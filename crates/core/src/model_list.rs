//! The model picker: what each provider says it serves. One GET per provider, its answer read
//! leniently (a model without a field is still listed), each model with the context window
//! where the provider says it (Gemini's `inputTokenLimit`) or where Tandem's table knows it.
//!
//! Endpoints (each provider's reference, "List models"):
//! - OpenAI and compatible servers: `GET {base}/models` → `{"data": [{"id"}]}`
//! - Anthropic: `GET {base}/models?limit=1000` → `{"data": [{"id", "display_name"}], "has_more"}`
//! - Gemini: `GET {base}/models?pageSize=1000` → `{"models": [{"name": "models/…",
//!   "inputTokenLimit", "supportedGenerationMethods"}], "nextPageToken"}`
//! - Ollama: `GET {base}/api/tags` → `{"models": [{"name"}]}`
//!
//! Firebase AI Logic has no listing endpoint for web apps: the user types the model's name.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::adapters::adapter_for;
use crate::errors::{ErrorKind, ProviderError};
use crate::http::HttpRequest;
use crate::models::model_info;
use crate::provider::{ProviderConfig, ProviderKind};

/// More than any provider lists today; a hostile server cannot make the panel render more.
pub const MAX_MODELS: usize = 2_000;

/// One model the provider serves.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListedModel {
    /// The name to put in Settings → Model.
    pub id: String,
    /// Input tokens, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u32>,
}

/// The request that lists `cfg`'s models, or the sentence saying why there is none.
pub fn list_request(cfg: &ProviderConfig) -> Result<HttpRequest, ProviderError> {
    let base = cfg.base_url.trim_end_matches('/');
    let key = cfg.api_key.as_str();
    let h = |k: &str, v: &str| (k.to_string(), v.to_string());
    let (url, headers) =
        match cfg.kind {
            ProviderKind::OpenAi | ProviderKind::OpenAiCompatible => (
                format!("{base}/models"),
                // A local server may take no key; an empty Bearer would be refused.
                match key.is_empty() {
                    true => Vec::new(),
                    false => vec![h("authorization", &format!("Bearer {key}"))],
                },
            ),
            ProviderKind::Anthropic => (
                format!("{base}/models?limit=1000"),
                vec![
                    h("x-api-key", key),
                    h("anthropic-version", "2023-06-01"),
                    h("anthropic-dangerous-direct-browser-access", "true"),
                ],
            ),
            ProviderKind::Gemini => (
                format!("{base}/models?pageSize=1000"),
                vec![h("x-goog-api-key", key)],
            ),
            ProviderKind::Ollama => (format!("{base}/api/tags"), Vec::new()),
            ProviderKind::Firebase => return Err(ProviderError::new(
                ErrorKind::NotConfigured,
                "Firebase AI Logic does not list its models to web apps; type the model's name \
                 (for example gemini-2.5-flash).",
            )),
        };
    Ok(HttpRequest {
        url,
        method: "GET",
        headers,
        body: String::new(),
    })
}

/// Reads the provider's answer: a non-2xx status is the provider's error sentence (bad key,
/// unknown endpoint…), a 2xx body that is not a model list says so.
pub fn read_list(
    cfg: &ProviderConfig,
    status: u16,
    body: &str,
) -> Result<Vec<ListedModel>, ProviderError> {
    if !(200..300).contains(&status) {
        return Err(adapter_for(cfg.kind).classify_http(status, body, None, cfg));
    }
    let not_a_list = || {
        ProviderError::malformed(
            cfg.kind,
            "the model list was not the JSON this provider sends (is the base URL right?)",
        )
    };
    let value: Value = crate::json::from_str(body).map_err(|_| not_a_list())?;
    let entries = match cfg.kind {
        ProviderKind::Gemini | ProviderKind::Ollama => value.get("models"),
        _ => value.get("data"),
    }
    .and_then(Value::as_array)
    .ok_or_else(not_a_list)?;
    let mut models: Vec<ListedModel> = entries
        .iter()
        .filter_map(|entry| listed(cfg.kind, entry))
        .take(MAX_MODELS)
        .collect();
    crate::sort::sort_by(&mut models, |a, b| a.id.cmp(&b.id));
    models.dedup_by(|a, b| a.id == b.id);
    Ok(models)
}

fn listed(kind: ProviderKind, entry: &Value) -> Option<ListedModel> {
    let field = |name: &str| entry.get(name).and_then(Value::as_str);
    let id = match kind {
        ProviderKind::Gemini => {
            // Embedding-only and other models that cannot chat are left out.
            let chats = entry
                .get("supportedGenerationMethods")
                .and_then(Value::as_array)
                .is_none_or(|m| m.iter().any(|x| x.as_str() == Some("generateContent")));
            if !chats {
                return None;
            }
            let name = field("name")?;
            name.strip_prefix("models/").unwrap_or(name)
        }
        ProviderKind::Ollama => field("name").or_else(|| field("model"))?,
        _ => field("id")?,
    };
    let id: String = id.trim().chars().take(200).collect();
    if id.is_empty() || id.chars().any(char::is_control) {
        return None;
    }
    let stated = entry
        .get("inputTokenLimit")
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok())
        .filter(|&n| n > 0);
    let table = model_info(kind, &id);
    let context_window = stated.or(table.known.then_some(table.context_window));
    Some(ListedModel { id, context_window })
}

/// The line under the Model field after a successful listing.
pub fn summary(kind: ProviderKind, models: &[ListedModel]) -> String {
    match models.len() {
        0 => format!(
            "{} lists no models that can chat; type the model's name.",
            kind.label()
        ),
        1 => format!("1 model from {}.", kind.label()),
        n => format!("{n} models from {}.", kind.label()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(kind: ProviderKind, base: &str) -> ProviderConfig {
        ProviderConfig {
            kind,
            base_url: base.into(),
            model: String::new(),
            api_key: "sk-list-1234".into(),
            project_id: String::new(),
            app_id: String::new(),
        }
    }

    #[test]
    fn each_provider_is_asked_at_its_own_endpoint_with_its_own_credentials() {
        let cases = [
            (
                ProviderKind::OpenAiCompatible,
                "http://h/v1/",
                "http://h/v1/models",
                "authorization",
                "Bearer sk-list-1234",
            ),
            (
                ProviderKind::Anthropic,
                "http://h/v1",
                "http://h/v1/models?limit=1000",
                "x-api-key",
                "sk-list-1234",
            ),
            (
                ProviderKind::Gemini,
                "http://h/v1beta",
                "http://h/v1beta/models?pageSize=1000",
                "x-goog-api-key",
                "sk-list-1234",
            ),
        ];
        for (kind, base, url, header, value) in cases {
            let req = list_request(&cfg(kind, base)).expect("a request");
            assert_eq!(req.method, "GET");
            assert_eq!(req.url, url);
            assert!(req.body.is_empty());
            assert!(
                req.headers.iter().any(|(k, v)| k == header && v == value),
                "{kind:?}: {:?}",
                req.headers
            );
        }
        let ollama = list_request(&cfg(ProviderKind::Ollama, "http://localhost:11434")).unwrap();
        assert_eq!(ollama.url, "http://localhost:11434/api/tags");
        assert!(ollama.headers.is_empty(), "Ollama takes no key");
        let mut keyless = cfg(ProviderKind::OpenAiCompatible, "http://h/v1");
        keyless.api_key.clear();
        assert!(list_request(&keyless).unwrap().headers.is_empty());
        let firebase = list_request(&cfg(ProviderKind::Firebase, "")).unwrap_err();
        assert!(firebase.message.contains("type the model's name"));
    }

    #[test]
    fn each_answer_shape_is_read_with_the_context_window_where_known() {
        let openai = r#"{"object":"list","data":[{"id":"gpt-4o","object":"model"},{"id":"my-local"},{"nope":1}]}"#;
        let m = read_list(&cfg(ProviderKind::OpenAiCompatible, ""), 200, openai).unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].id, "gpt-4o");
        assert_eq!(m[0].context_window, Some(128_000));
        assert_eq!(m[1].id, "my-local");
        assert_eq!(m[1].context_window, None, "unknown: no guess shown");

        let anthropic = r#"{"data":[{"type":"model","id":"claude-sonnet-4-5","display_name":"Claude"}],"has_more":false}"#;
        let m = read_list(&cfg(ProviderKind::Anthropic, ""), 200, anthropic).unwrap();
        assert_eq!(m[0].id, "claude-sonnet-4-5");
        assert_eq!(m[0].context_window, Some(200_000));

        let gemini = r#"{"models":[
            {"name":"models/gemini-2.5-flash","inputTokenLimit":1048576,"supportedGenerationMethods":["generateContent"]},
            {"name":"models/text-embedding-004","inputTokenLimit":2048,"supportedGenerationMethods":["embedContent"]},
            {"name":"models/gemini-exp","inputTokenLimit":32768}]}"#;
        let m = read_list(&cfg(ProviderKind::Gemini, ""), 200, gemini).unwrap();
        let ids: Vec<&str> = m.iter().map(|x| x.id.as_str()).collect();
        assert_eq!(
            ids,
            ["gemini-2.5-flash", "gemini-exp"],
            "embedding models left out"
        );
        assert_eq!(
            m[1].context_window,
            Some(32_768),
            "the provider's figure wins"
        );

        let ollama = r#"{"models":[{"name":"llama3.2:latest","model":"llama3.2:latest"},{"name":"llama3.2:latest"}]}"#;
        let m = read_list(&cfg(ProviderKind::Ollama, ""), 200, ollama).unwrap();
        assert_eq!(m.len(), 1, "listed once");
    }

    #[test]
    fn failures_are_sentences() {
        let c = cfg(ProviderKind::OpenAiCompatible, "http://h/v1");
        let bad_key = read_list(
            &c,
            401,
            r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}"#,
        )
        .unwrap_err();
        assert_eq!(bad_key.kind, ErrorKind::BadKey);
        let ollama = read_list(
            &cfg(ProviderKind::Ollama, "http://localhost:11434"),
            403,
            "",
        )
        .unwrap_err();
        assert!(
            ollama.message.contains("OLLAMA_ORIGINS"),
            "{}",
            ollama.message
        );
        assert!(!ollama.message.contains("API key"), "Ollama has no key");
        let html = read_list(&c, 200, "<html>portal</html>").unwrap_err();
        assert!(html.message.contains("base URL"), "{}", html.message);
        let wrong_shape = read_list(&c, 200, r#"{"models":[]}"#).unwrap_err();
        assert!(wrong_shape.message.contains("model list"));
        let hostile = format!(
            r#"{{"data":[{}]}}"#,
            (0..3_000)
                .map(|i| format!(r#"{{"id":"m{i}"}}"#))
                .collect::<Vec<_>>()
                .join(",")
        );
        assert_eq!(read_list(&c, 200, &hostile).unwrap().len(), MAX_MODELS);
        let control = r#"{"data":[{"id":"a\u0007b"},{"id":"  "}]}"#;
        assert!(read_list(&c, 200, control).unwrap().is_empty());
    }

    #[test]
    fn the_summary_counts() {
        let one = [ListedModel {
            id: "a".into(),
            context_window: None,
        }];
        assert_eq!(summary(ProviderKind::Ollama, &one), "1 model from Ollama.");
        assert!(summary(ProviderKind::Ollama, &[]).contains("type the model's name"));
    }
}
