//! OpenAI Chat Completions, streaming: <https://platform.openai.com/docs/api-reference/chat/create>
//! and <https://platform.openai.com/docs/api-reference/chat-streaming>. Also spoken by every
//! "OpenAI-compatible" server (LM Studio, vLLM, llama.cpp, Ollama's `/v1`, OpenRouter...).
//!
//! Stream: SSE `data: {chat.completion.chunk}` lines, `choices[0].delta.content` carrying text,
//! `finish_reason` on the last choice chunk, a final `choices: []` chunk with `usage` (asked for
//! with `stream_options.include_usage`), then `data: [DONE]`. An `{"error":{...}}` payload may
//! replace a chunk when the server fails mid-answer.

use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{
    bearer, json_body, parse, role_name, system_prompt, temperature, turns, Adapter, Decoder,
    Framing, PayloadError, Protocol,
};
use crate::errors;
use crate::http::HttpRequest;
use crate::provider::{ProviderConfig, ProviderKind};
use crate::request::UniversalRequest;
use crate::sse::SseDecoder;
use crate::stream::{StreamDecoder, StreamEvent, Usage};

/// The adapter for `OpenAi` and `OpenAiCompatible`; the kind only names the provider in
/// messages.
pub struct OpenAi(pub ProviderKind);

impl Adapter for OpenAi {
    fn translate(&self, req: &UniversalRequest, cfg: &ProviderConfig) -> HttpRequest {
        let system = system_prompt(req).map(|s| json!({"role": "system", "content": s}));
        let messages = system.into_iter().chain(turns(req).map(|m| {
            let content = if m.images.is_empty() {
                json!(m.content)
            } else {
                let text = json!({"type": "text", "text": m.content});
                let images = m
                    .images
                    .iter()
                    .map(|url| json!({"type": "image_url", "image_url": {"url": url}}));
                Value::Array(std::iter::once(text).chain(images).collect())
            };
            json!({"role": role_name(m.role), "content": content})
        }));
        let body = json!({
            "model": req.model,
            "messages": messages.collect::<Vec<_>>(),
            "stream": true,
            "stream_options": {"include_usage": true},
            "temperature": temperature(req),
            "max_tokens": req.options.max_output_tokens,
        });
        HttpRequest::post_json(
            format!("{}/chat/completions", cfg.base_url),
            bearer(&cfg.api_key),
            json_body(body),
        )
    }

    fn decoder(&self) -> Box<dyn StreamDecoder> {
        Decoder::boxed(self.0, Framing::Sse(SseDecoder::new()), Chunks)
    }
}

struct Chunks;

#[derive(Deserialize)]
struct Chunk {
    model: Option<String>,
    /// `null` on some servers' usage chunk, hence the Option.
    choices: Option<Vec<Choice>>,
    usage: Option<ChunkUsage>,
    error: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct Choice {
    delta: Option<Delta>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Delta {
    content: Option<String>,
}

#[derive(Deserialize)]
struct ChunkUsage {
    prompt_tokens: Option<u32>,
    completion_tokens: Option<u32>,
}

impl Protocol for Chunks {
    fn payload(
        &mut self,
        provider: ProviderKind,
        payload: &str,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), PayloadError> {
        if payload.trim() == "[DONE]" {
            out.push(StreamEvent::Done);
            return Ok(());
        }
        let chunk: Chunk = parse(payload)?;
        if chunk.error.is_some() {
            return Err(errors::stream_error(provider, payload).into());
        }
        out.extend(chunk.model.map(StreamEvent::Model));
        if let Some(choice) = chunk.choices.and_then(|c| c.into_iter().next()) {
            out.extend(choice.delta.and_then(|d| d.content).map(StreamEvent::Delta));
            out.extend(
                choice
                    .finish_reason
                    .filter(|r| !r.is_empty())
                    .map(StreamEvent::Finish),
            );
        }
        if let Some(u) = chunk.usage {
            out.push(Usage::reported(u.prompt_tokens, u.completion_tokens));
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
    use crate::request::RequestOptions;

    const OPENAI: OpenAi = OpenAi(ProviderKind::OpenAi);
    const COMPATIBLE: OpenAi = OpenAi(ProviderKind::OpenAiCompatible);

    #[test]
    fn normal_answer_with_usage() {
        let normal = check_stream(
            &OPENAI,
            "openai/normal.sse",
            expect![[r#"
            Model("gpt-4o-mini-2024-07-18")
            Delta("héllo")
            Delta(" 世界")
            Delta(" 🎉")
            Finish("stop")
            Usage(Usage { input: 23, output: 5 })
            Done
            END
        "#]],
        );
        check_stream_like(&OPENAI, "openai/normal_crlf.sse", &normal);
    }

    #[test]
    fn error_payload_mid_stream() {
        check_stream(
            &OPENAI,
            "openai/error_midstream.sse",
            expect![[r#"
                Model("gpt-4o-2024-08-06")
                Delta("Bonjour")
                ERR Overloaded: OpenAI is overloaded or temporarily unavailable. Try again in a moment. OpenAI said: "The server had an error while processing your request. Sorry about that!"
            "#]],
        );
    }

    #[test]
    fn cut_without_finish_is_stream_cut() {
        check_stream(
            &OPENAI,
            "openai/cut.sse",
            expect![[r#"
                Model("gpt-4o-mini-2024-07-18")
                Delta("héllo")
                Delta(" 世")
                ERR StreamCut: The connection to OpenAI was cut before the answer finished. The partial answer is kept; send again to retry.
            "#]],
        );
    }

    #[test]
    fn compatible_server_without_done_marker() {
        check_stream(
            &COMPATIBLE,
            "openai/compatible_no_done.sse",
            expect![[r#"
                Model("qwen2.5-7b-instruct")
                Delta("héllo 世界")
                Delta(" 🎉")
                Finish("stop")
                Usage(Usage { input: 31, output: 6 })
                Done
                END
            "#]],
        );
    }

    #[test]
    fn request_payload() {
        check_request(
            &OPENAI,
            &conversation(),
            &config(ProviderKind::OpenAi, "sk-test"),
            expect![[r#"
                POST https://api.openai.com/v1/chat/completions
                content-type: application/json
                Authorization: Bearer sk-test

                {
                  "max_tokens": 512,
                  "messages": [
                    {
                      "content": "You are terse.",
                      "role": "system"
                    },
                    {
                      "content": [
                        {
                          "text": "What is in this picture?",
                          "type": "text"
                        },
                        {
                          "image_url": {
                            "url": "data:image/png;base64,iVBORw0KGgo="
                          },
                          "type": "image_url"
                        }
                      ],
                      "role": "user"
                    },
                    {
                      "content": "A cat.",
                      "role": "assistant"
                    },
                    {
                      "content": "héllo 世界 🎉",
                      "role": "user"
                    }
                  ],
                  "model": "test-model",
                  "stream": true,
                  "stream_options": {
                    "include_usage": true
                  },
                  "temperature": 0.7
                }
            "#]],
        );
    }

    #[test]
    fn keyless_server_without_options() {
        let mut req = conversation();
        req.system = None;
        req.messages.truncate(0);
        req.options = RequestOptions::default();
        check_request(
            &COMPATIBLE,
            &req,
            &config(ProviderKind::OpenAiCompatible, ""),
            expect![[r#"
                POST http://localhost:1234/v1/chat/completions
                content-type: application/json

                {
                  "messages": [],
                  "model": "test-model",
                  "stream": true,
                  "stream_options": {
                    "include_usage": true
                  }
                }
            "#]],
        );
    }

    #[test]
    fn a_malformed_frame_is_skipped_and_the_rest_of_the_answer_kept() {
        check_stream(
            &OPENAI,
            "openai/malformed_midstream.sse",
            expect![[r#"
            Model("gpt-4o-mini-2024-07-18")
            Delta("héllo")
            Note("Skipped a frame from OpenAI Tandem could not read (not JSON at line 1 column 95); the answer went on.")
            Note("Skipped a frame from OpenAI Tandem could not read (unexpected data at line 1 column 94); the answer went on.")
            Delta(" 世界")
            Finish("stop")
            Done
            END
        "#]],
        );
    }

    #[test]
    fn surrogate_halves_split_across_frames_are_joined() {
        check_stream(
            &OPENAI,
            "openai/split_surrogates.sse",
            expect![[r#"
            Model("gpt-4o-mini-2024-07-18")
            Delta("smile ")
            Delta("😀 and ")
            Delta("🎉")
            Finish("stop")
            Delta("�")
            Done
            END
        "#]],
        );
    }

    #[test]
    fn a_body_with_no_readable_frame_is_unreadable_not_cut() {
        let mut d = OPENAI.decoder();
        assert_eq!(d.push(b"data: <html>\n\ndata: {oops\n\n").unwrap().len(), 2);
        let e = d.finish().unwrap_err();
        assert_eq!(e.kind, crate::errors::ErrorKind::Provider);
        assert_eq!(
            e.message,
            "OpenAI sent a reply Tandem could not read (none of its stream could be read)."
        );
    }
}
