//! What Tandem knows about models: context window and default answer length.
//!
//! Figures come from the providers' model pages. The table does not need to be complete: an
//! unknown model gets a conservative fallback, the user can set the window in Settings
//! (`ProviderSettings::context_window`), and a wrong guess is corrected at run time by the
//! send pipeline's trim-and-retry on a context-overflow error.

use serde::Serialize;

use crate::provider::{ProviderKind, ProviderSettings};

/// Context window and default maximum answer length, in tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelInfo {
    pub context_window: u32,
    pub max_output: u32,
    /// False when the figures are the fallback (the Debug drawer says "unknown model").
    pub known: bool,
}

/// Used for models the table does not know: small enough for most local models.
pub const FALLBACK: ModelInfo = ModelInfo {
    context_window: 8_192,
    max_output: 2_048,
    known: false,
};

const fn m(context_window: u32, max_output: u32) -> ModelInfo {
    ModelInfo {
        context_window,
        max_output,
        known: true,
    }
}

/// `(provider or None for any, model id or id prefix, info)`. Matching is exact first, then
/// the longest prefix, so dated snapshots (`claude-3-5-sonnet-20241022`), Ollama tags
/// (`llama3.1:8b`) and preview suffixes (`gemini-2.5-flash-preview-05-20`) find their family.
const TABLE: &[(Option<ProviderKind>, &str, ModelInfo)] = &[
    // OpenAI
    (None, "gpt-4o", m(128_000, 16_384)),
    (None, "gpt-4o-mini", m(128_000, 16_384)),
    (None, "gpt-4.1", m(1_047_576, 32_768)),
    (None, "gpt-4-turbo", m(128_000, 4_096)),
    (None, "gpt-4", m(8_192, 8_192)),
    (None, "gpt-3.5-turbo", m(16_385, 4_096)),
    (None, "gpt-5", m(400_000, 128_000)),
    (None, "o1", m(200_000, 100_000)),
    (None, "o1-mini", m(128_000, 65_536)),
    (None, "o3", m(200_000, 100_000)),
    (None, "o4-mini", m(200_000, 100_000)),
    // Anthropic
    (None, "claude-3-haiku", m(200_000, 4_096)),
    (None, "claude-3-opus", m(200_000, 4_096)),
    (None, "claude-3-5-haiku", m(200_000, 8_192)),
    (None, "claude-3-5-sonnet", m(200_000, 8_192)),
    (None, "claude-3-7-sonnet", m(200_000, 64_000)),
    (None, "claude-sonnet-4", m(200_000, 64_000)),
    (None, "claude-opus-4", m(200_000, 32_000)),
    (None, "claude-haiku-4", m(200_000, 64_000)),
    (None, "claude-", m(200_000, 8_192)),
    // Google
    (None, "gemini-1.5-flash", m(1_048_576, 8_192)),
    (None, "gemini-1.5-pro", m(2_097_152, 8_192)),
    (None, "gemini-2.0-flash", m(1_048_576, 8_192)),
    (None, "gemini-2.5-flash", m(1_048_576, 65_536)),
    (None, "gemini-2.5-pro", m(1_048_576, 65_536)),
    // Chrome's on-device model: older builds allow 6,144 tokens per session (newer report
    // 9,216 through `inputQuota`; the user can raise it in Settings).
    (None, "gemini-nano", m(6_144, 1_024)),
    (None, "gemma2", m(8_192, 2_048)),
    (None, "gemma3", m(131_072, 8_192)),
    // Open models, as Ollama and OpenAI-compatible servers name them. These are the models'
    // native windows; Ollama only honours them when the request sets `num_ctx`.
    (None, "llama3", m(8_192, 2_048)),
    (None, "llama3.1", m(131_072, 4_096)),
    (None, "llama3.2", m(131_072, 4_096)),
    (None, "llama3.3", m(131_072, 4_096)),
    (None, "llama-3.1", m(131_072, 4_096)),
    (None, "llama-3.2", m(131_072, 4_096)),
    (None, "llama-3.3", m(131_072, 4_096)),
    (None, "qwen2.5", m(32_768, 8_192)),
    (None, "qwen3", m(32_768, 8_192)),
    (None, "mistral", m(32_768, 4_096)),
    (None, "mistral-nemo", m(131_072, 4_096)),
    (None, "mistral-large", m(131_072, 4_096)),
    (None, "mixtral", m(32_768, 4_096)),
    (None, "phi3", m(4_096, 2_048)),
    (None, "phi4", m(16_384, 4_096)),
    (None, "deepseek-r1", m(131_072, 8_192)),
    // Firebase AI Logic always serves Gemini models; give its unknown names Gemini's floor.
    (Some(ProviderKind::Firebase), "gemini-", m(1_048_576, 8_192)),
    (Some(ProviderKind::Gemini), "gemini-", m(1_048_576, 8_192)),
];

/// The table's figures for `model` at `provider`, or [`FALLBACK`].
pub fn model_info(provider: ProviderKind, model: &str) -> ModelInfo {
    let model = normalise(model);
    let applies = |p: &Option<ProviderKind>| p.is_none_or(|p| p == provider);
    let rows = || TABLE.iter().filter(|(p, _, _)| applies(p));
    rows()
        .find(|(_, id, _)| model.eq_ignore_ascii_case(id))
        .or_else(|| {
            rows()
                .filter(|(_, id, _)| starts_with_ignore_case(model, id))
                .max_by_key(|(_, id, _)| id.len())
        })
        .map_or(FALLBACK, |(_, _, info)| *info)
}

/// The figures to budget with: the user's context window wins over the table; the default
/// answer length never exceeds a quarter of that window, so a small override stays usable.
pub fn effective_info(provider: ProviderKind, settings: &ProviderSettings) -> ModelInfo {
    let table = model_info(provider, &settings.model);
    match settings.context_window.filter(|&w| w > 0) {
        Some(context_window) => ModelInfo {
            context_window,
            max_output: table.max_output.min(context_window / 4).max(1),
            known: table.known,
        },
        None => table,
    }
}

/// Drops routing prefixes (`models/gemini-1.5-pro`, `meta-llama/Llama-3.1-8B`) and blanks.
fn normalise(model: &str) -> &str {
    let model = model.trim();
    model.rsplit('/').next().unwrap_or(model)
}

fn starts_with_ignore_case(s: &str, prefix: &str) -> bool {
    s.get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(provider: ProviderKind, model: &str) -> u32 {
        model_info(provider, model).context_window
    }

    #[test]
    fn exact_then_longest_prefix_then_fallback() {
        use ProviderKind::*;
        assert_eq!(window(OpenAi, "gpt-4o"), 128_000);
        assert_eq!(window(OpenAi, "gpt-4"), 8_192);
        assert_eq!(window(OpenAi, "gpt-4.1-mini-2025-04-14"), 1_047_576);
        assert_eq!(
            model_info(OpenAi, "gpt-4o-mini-2024-07-18").max_output,
            16_384
        );
        assert_eq!(
            model_info(Anthropic, "claude-3-7-sonnet-20250219").max_output,
            64_000
        );
        assert_eq!(
            model_info(Anthropic, "claude-opus-4-1-20250805").max_output,
            32_000
        );
        assert_eq!(window(Anthropic, "claude-next-unreleased"), 200_000);
        assert_eq!(window(Gemini, "models/gemini-1.5-pro-002"), 2_097_152);
        assert_eq!(window(Gemini, "gemini-2.5-flash-preview-05-20"), 1_048_576);
        assert_eq!(window(Gemini, "gemini-exp-1206"), 1_048_576);
        assert_eq!(window(Ollama, "llama3:8b"), 8_192);
        assert_eq!(window(Ollama, "llama3.1:8b"), 131_072);
        assert_eq!(
            window(OpenAiCompatible, "meta-llama/Llama-3.3-70B-Instruct"),
            131_072
        );
        assert_eq!(window(Ollama, "QWEN2.5:7b"), 32_768);
        assert_eq!(window(Ollama, "mistral-nemo:12b"), 131_072);
        assert_eq!(window(Firebase, "gemini-nano"), 6_144);
        assert_eq!(model_info(Ollama, "my-finetune"), FALLBACK);
        // Provider-specific rows do not leak: a Gemini-looking name on Ollama is unknown.
        assert_eq!(model_info(Ollama, "gemini-exp-1206"), FALLBACK);
        assert_eq!(model_info(Ollama, ""), FALLBACK);
        assert_eq!(model_info(Ollama, "ü/é/"), FALLBACK);
    }

    #[test]
    fn user_override_wins() {
        let s = ProviderSettings {
            model: "gpt-4o".into(),
            context_window: Some(16_000),
            ..Default::default()
        };
        assert_eq!(
            effective_info(ProviderKind::OpenAi, &s),
            ModelInfo {
                context_window: 16_000,
                max_output: 4_000,
                known: true
            }
        );
        let s = ProviderSettings {
            model: "gpt-4o".into(),
            context_window: Some(0),
            ..Default::default()
        };
        assert_eq!(
            effective_info(ProviderKind::OpenAi, &s).context_window,
            128_000
        );
    }
}
