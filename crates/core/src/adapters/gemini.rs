//! Gemini API (Google AI), streaming: <https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent>.
//!
//! `POST {base}/models/{model}:streamGenerateContent?alt=sse`, key in `x-goog-api-key`. Stream:
//! SSE `data:` lines, each a whole `GenerateContentResponse` (`candidates[0].content.parts[].text`,
//! `finishReason` on the last one, cumulative `usageMetadata`, `modelVersion`), or
//! `promptFeedback.blockReason` when the prompt is refused, or `{"error":{...}}` when the answer
//! fails midway. There is no end marker: a body that ends after a `finishReason` is complete.
//!
//! The body builder and decoder are shared with Firebase AI Logic ([`super::firebase`]).

use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{
    data_url, header, json_body, parse, system_prompt, temperature, turns, Adapter, Decoder,
    Framing, PayloadError, Protocol,
};
use crate::chat::Role;
use crate::errors::{self, ErrorKind, ProviderError};
use crate::http::HttpRequest;
use crate::provider::{ProviderConfig, ProviderKind};
use crate::request::UniversalRequest;
use crate::sse::SseDecoder;
use crate::stream::{StreamDecoder, StreamEvent, Usage};

pub struct Gemini;

impl Adapter for Gemini {
    fn translate(&self, req: &UniversalRequest, cfg: &ProviderConfig) -> HttpRequest {
        let url = format!(
            "{}/models/{}:streamGenerateContent?alt=sse",
            cfg.base_url,
            model_id(req)
        );
        HttpRequest::post_json(
            url,
            vec![header("x-goog-api-key", cfg.api_key.as_str())],
            body(req),
        )
    }

    fn decoder(&self) -> Box<dyn StreamDecoder> {
        decoder(ProviderKind::Gemini)
    }
}

/// The model id without the `models/` prefix the API lists models with, so either form works.
pub(crate) fn model_id(req: &UniversalRequest) -> &str {
    req.model.strip_prefix("models/").unwrap_or(&req.model)
}

/// The `GenerateContentRequest` body.
pub(crate) fn body(req: &UniversalRequest) -> String {
    let contents: Vec<Value> = turns(req)
        .map(|m| {
            let role = if m.role == Role::Assistant {
                "model"
            } else {
                "user"
            };
            // Gemini only takes uploaded files by URI, so only data: URLs can be sent inline.
            let images = m
                .images
                .iter()
                .filter_map(|url| data_url(url))
                .map(|img| json!({"inline_data": {"mime_type": img.mime, "data": img.data}}));
            let text =
                (!m.content.is_empty() || m.images.is_empty()).then(|| json!({"text": m.content}));
            json!({"role": role, "parts": text.into_iter().chain(images).collect::<Vec<_>>()})
        })
        .collect();
    json_body(json!({
        "contents": contents,
        "systemInstruction": system_prompt(req).map(|s| json!({"parts": [{"text": s}]})),
        "generationConfig": {"temperature": temperature(req), "maxOutputTokens": req.options.max_output_tokens},
    }))
}

pub(crate) fn decoder(provider: ProviderKind) -> Box<dyn StreamDecoder> {
    Decoder::boxed(provider, Framing::Sse(SseDecoder::new()), Responses)
}

struct Responses;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Response {
    candidates: Option<Vec<Candidate>>,
    usage_metadata: Option<UsageMetadata>,
    model_version: Option<String>,
    prompt_feedback: Option<PromptFeedback>,
    error: Option<IgnoredAny>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Candidate {
    content: Option<Content>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Content {
    parts: Option<Vec<Part>>,
}

#[derive(Deserialize)]
struct Part {
    text: Option<String>,
    /// Thinking models' thought summaries are not part of the answer.
    thought: Option<bool>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct UsageMetadata {
    prompt_token_count: Option<u32>,
    candidates_token_count: Option<u32>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PromptFeedback {
    block_reason: Option<String>,
}

impl Protocol for Responses {
    fn payload(
        &mut self,
        provider: ProviderKind,
        payload: &str,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), PayloadError> {
        let r: Response = parse(payload)?;
        if r.error.is_some() {
            return Err(errors::stream_error(provider, payload).into());
        }
        if let Some(reason) = r.prompt_feedback.and_then(|f| f.block_reason) {
            let label = provider.label();
            return Err(ProviderError::new(
                ErrorKind::Provider,
                format!("{label} refused to answer this prompt (blocked: {reason}). Rephrase the message and send again."),
            )
            .into());
        }
        out.extend(r.model_version.map(StreamEvent::Model));
        if let Some(c) = r.candidates.and_then(|c| c.into_iter().next()) {
            let parts = c.content.and_then(|c| c.parts).unwrap_or_default();
            let texts = parts
                .into_iter()
                .filter(|p| p.thought != Some(true))
                .filter_map(|p| p.text);
            out.extend(texts.map(StreamEvent::Delta));
            out.extend(c.finish_reason.map(StreamEvent::Finish));
        }
        if let Some(u) = r.usage_metadata {
            out.push(Usage::reported(
                u.prompt_token_count,
                u.candidates_token_count,
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::super::testkit::{
        check_request, check_stream, check_stream_like, config, conversation,
    };
    use super::*;

    #[test]
    fn normal_answer_with_usage() {
        let normal = check_stream(
            &Gemini,
            "gemini/normal.sse",
            expect![[r#"
                Model("gemini-2.0-flash")
                Delta("héllo")
                Usage(Usage { input: 21, output: 0 })
                Delta(" 世界")
                Delta(" 🎉")
                Finish("STOP")
                Usage(Usage { input: 21, output: 7 })
                Done
                END
            "#]],
        );
        check_stream_like(&Gemini, "gemini/normal_lf.sse", &normal);
    }

    #[test]
    fn blocked_prompt() {
        check_stream(
            &Gemini,
            "gemini/blocked.sse",
            expect![[r#"
            ERR Provider: Gemini refused to answer this prompt (blocked: PROHIBITED_CONTENT). Rephrase the message and send again.
        "#]],
        );
    }

    #[test]
    fn error_payload_mid_stream() {
        check_stream(
            &Gemini,
            "gemini/error_midstream.sse",
            expect![[r#"
            Model("gemini-2.0-flash")
            Delta("héllo")
            Usage(Usage { input: 21, output: 0 })
            ERR Overloaded: Gemini is overloaded or temporarily unavailable (503). Try again in a moment. Gemini said: "The model is overloaded. Please try again later."
        "#]],
        );
    }

    #[test]
    fn cut_before_finish_reason() {
        check_stream(
            &Gemini,
            "gemini/cut.sse",
            expect![[r#"
            Model("gemini-2.0-flash")
            Delta("héllo")
            Usage(Usage { input: 21, output: 0 })
            Delta(" 世界")
            ERR StreamCut: The connection to Gemini was cut before the answer finished. The partial answer is kept; send again to retry.
        "#]],
        );
    }

    #[test]
    fn request_payload() {
        let mut req = conversation();
        req.model = "models/test-model".into();
        check_request(
            &Gemini,
            &req,
            &config(ProviderKind::Gemini, "AIza-test"),
            expect![[r#"
            POST https://generativelanguage.googleapis.com/v1beta/models/test-model:streamGenerateContent?alt=sse
            content-type: application/json
            x-goog-api-key: AIza-test

            {
              "contents": [
                {
                  "parts": [
                    {
                      "text": "What is in this picture?"
                    },
                    {
                      "inline_data": {
                        "data": "iVBORw0KGgo=",
                        "mime_type": "image/png"
                      }
                    }
                  ],
                  "role": "user"
                },
                {
                  "parts": [
                    {
                      "text": "A cat."
                    }
                  ],
                  "role": "model"
                },
                {
                  "parts": [
                    {
                      "text": "héllo 世界 🎉"
                    }
                  ],
                  "role": "user"
                }
              ],
              "generationConfig": {
                "maxOutputTokens": 512,
                "temperature": 0.7
              },
              "systemInstruction": {
                "parts": [
                  {
                    "text": "You are terse."
                  }
                ]
              }
            }
        "#]],
        );
    }

    #[test]
    fn surrogate_halves_split_across_frames_are_joined() {
        check_stream(
            &Gemini,
            "gemini/split_surrogates.sse",
            expect![[r#"
            Model("gemini-2.0-flash")
            Delta("héllo ")
            Delta("🎉")
            Finish("STOP")
            Usage(Usage { input: 21, output: 3 })
            Done
            END
        "#]],
        );
    }
}
