//! The one redactor every string shown or logged passes through on its way out of the worker
//! (errors, the Debug drawer, provider bodies, the task timeline): each saved credential, and
//! anything shaped like a bearer token or a provider key, becomes its masked form (`…abcd`).
//! Providers echo keys back (a 401 body quoting the `Authorization` header, proxies, some
//! OpenAI-compatible servers): without this, the key would reach the panel's error line.

use crate::provider::mask_key;
use crate::settings::Settings;

/// Shorter secrets are not looked for: they would mask ordinary words.
const MIN_SECRET: usize = 8;

/// The credentials of `settings` worth looking for: every provider's key (Firebase's apiKey
/// included). Longest first, so a key containing another is masked whole.
pub fn secrets_of(settings: &Settings) -> Vec<String> {
    let mut secrets: Vec<String> = settings
        .providers
        .values()
        .map(|p| p.api_key.trim().to_string())
        .filter(|k| k.chars().count() >= MIN_SECRET)
        .collect();
    crate::sort::sort_by_key(&mut secrets, |s| std::cmp::Reverse(s.len()));
    secrets.dedup();
    secrets
}

/// `text` with every one of `secrets` and every token-shaped word masked.
pub fn redact(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_string();
    for secret in secrets.iter().filter(|s| s.chars().count() >= MIN_SECRET) {
        if out.contains(secret.as_str()) {
            out = out.replace(secret.as_str(), &mask_key(secret));
        }
    }
    mask_token_shapes(&out)
}

/// Masks words that look like credentials whoever's they are: what follows `Bearer `, and
/// the shapes of OpenAI (`sk-…`), Anthropic (`sk-ant-…`) and Google (`AIza…`) keys.
fn mask_token_shapes(text: &str) -> String {
    let token_char =
        |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '~' | '+' | '/');
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut after_bearer = false;
    while !rest.is_empty() {
        let start = rest.find(token_char).unwrap_or(rest.len());
        let (gap, tail) = rest.split_at(start);
        out.push_str(gap);
        let end = tail.find(|c: char| !token_char(c)).unwrap_or(tail.len());
        // A sentence's full stop after a token is not part of it.
        let end = tail[..end].trim_end_matches('.').len().max(1).min(end);
        let (word, next) = tail.split_at(end);
        if word.is_empty() {
            break;
        }
        let looks_like_key = word.len() >= 20
            && (word.starts_with("sk-") || word.starts_with("AIza") || word.starts_with("ya29."));
        if (after_bearer && word.len() >= MIN_SECRET) || looks_like_key {
            out.push_str(&mask_key(word));
        } else {
            out.push_str(word);
        }
        after_bearer = word.eq_ignore_ascii_case("bearer") && gap_is_space(next);
        rest = next;
    }
    out
}

fn gap_is_space(next: &str) -> bool {
    next.starts_with(' ')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::{ProviderKind, ProviderSettings};

    #[test]
    fn saved_keys_and_key_shapes_are_masked_everything_else_kept() {
        let mut settings = Settings::default();
        settings.providers.insert(
            ProviderKind::OpenAiCompatible,
            ProviderSettings {
                api_key: "local-proxy-secret-0042".into(),
                ..ProviderSettings::default()
            },
        );
        settings.providers.insert(
            ProviderKind::Ollama,
            ProviderSettings {
                api_key: "short".into(),
                ..ProviderSettings::default()
            },
        );
        let secrets = secrets_of(&settings);
        assert_eq!(secrets, ["local-proxy-secret-0042"]);
        for (text, expected) in [
            (
                r#"401: {"error":"invalid key local-proxy-secret-0042"}"#,
                r#"401: {"error":"invalid key …0042"}"#,
            ),
            (
                "Incorrect API key provided: sk-proj-abcdefghijklmnopqrstuvwx1234.",
                "Incorrect API key provided: …1234.",
            ),
            (
                "got Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig9",
                "got Authorization: Bearer …sig9",
            ),
            ("key=AIzaSyA-1234567890abcdefghijKLMN", "key=…KLMN"),
            (
                "The model is busy; try again in 20 s.",
                "The model is busy; try again in 20 s.",
            ),
            (
                "Bearer tokens are explained here",
                "Bearer tokens are explained here",
            ),
        ] {
            assert_eq!(redact(text, &secrets), expected, "{text}");
        }
    }
}
