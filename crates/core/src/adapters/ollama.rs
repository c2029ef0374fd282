//! Ollama native chat API, streaming: <https://github.com/ollama/ollama/blob/main/docs/api.md#generate-a-chat-completion>.
//!
//! `POST {base}/api/chat`; the stream is NDJSON: one object per line with `message.content`,
//! the last one with `done: true`, `done_reason`, `prompt_eval_count` and `eval_count`. A
//! failure midway is a `{"error":"..."}` line.

use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{
    bearer, data_url, json_body, parse, role_name, system_prompt, temperature, turns, Adapter,
    Decoder, Framing, PayloadError, Protocol,
};
use crate::errors;
use crate::http::HttpRequest;
use crate::ndjson::NdjsonDecoder;
use crate::provider::{ProviderConfig, ProviderKind};
use crate::request::UniversalRequest;
use crate::stream::{StreamDecoder, StreamEvent, Usage};

pub struct Ollama;

impl Adapter for Ollama {
    fn translate(&self, req: &UniversalRequest, cfg: &ProviderConfig) -> HttpRequest {
        let system = system_prompt(req).map(|s| json!({"role": "system", "content": s}));
        let messages = system.into_iter().chain(turns(req).map(|m| {
            // Ollama wants bare base64, without the data: URL head.
            let images: Vec<&str> = m.images.iter().filter_map(|url| data_url(url)).map(|img| img.data).collect();
            json!({"role": role_name(m.role), "content": m.content, "images": (!images.is_empty()).then_some(images)})
        }));
        let body = json!({
            "model": req.model,
            "messages": messages.collect::<Vec<Value>>(),
            "stream": true,
            "options": {
                "temperature": temperature(req),
                "num_predict": req.options.max_output_tokens,
                "num_ctx": req.options.context_window,
            },
        });
        // A key is only needed behind an authenticating proxy or for ollama.com.
        HttpRequest::post_json(
            format!("{}/api/chat", cfg.base_url),
            bearer(&cfg.api_key),
            json_body(body),
        )
    }

    fn decoder(&self) -> Box<dyn StreamDecoder> {
        Decoder::boxed(
            ProviderKind::Ollama,
            Framing::Ndjson(NdjsonDecoder::new()),
            Lines,
        )
    }
}

struct Lines;

#[derive(Deserialize)]
struct Line {
    model: Option<String>,
    message: Option<Message>,
    #[serde(default)]
    done: bool,
    done_reason: Option<String>,
    prompt_eval_count: Option<u32>,
    eval_count: Option<u32>,
    error: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct Message {
    content: Option<String>,
}

impl Protocol for Lines {
    fn payload(
        &mut self,
        provider: ProviderKind,
        payload: &str,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), PayloadError> {
        let line: Line = parse(payload)?;
        if line.error.is_some() {
            return Err(errors::stream_error(provider, payload).into());
        }
        out.extend(line.model.map(StreamEvent::Model));
        out.extend(line.message.and_then(|m| m.content).map(StreamEvent::Delta));
        if line.done {
            out.push(StreamEvent::Finish(
                line.done_reason.unwrap_or_else(|| "stop".into()),
            ));
            out.push(Usage::reported(line.prompt_eval_count, line.eval_count));
            out.push(StreamEvent::Done);
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
            &Ollama,
            "ollama/normal.ndjson",
            expect![[r#"
                Model("llama3.2")
                Delta("héllo")
                Delta(" 世界")
                Delta(" 🎉")
                Finish("stop")
                Usage(Usage { input: 26, output: 7 })
                Done
                END
            "#]],
        );
        check_stream_like(&Ollama, "ollama/normal_crlf.ndjson", &normal);
    }

    #[test]
    fn error_line_mid_stream() {
        check_stream(
            &Ollama,
            "ollama/error_midstream.ndjson",
            expect![[r#"
            Model("llama3.2")
            Delta("héllo")
            ERR Provider: Ollama reported an error while answering. Ollama said: "an error was encountered while running the model: CUDA error: out of memory"
        "#]],
        );
    }

    #[test]
    fn cut_inside_a_line() {
        check_stream(
            &Ollama,
            "ollama/cut.ndjson",
            expect![[r#"
            Model("llama3.2")
            Delta("héllo")
            ERR StreamCut: The connection to Ollama was cut before the answer finished. The partial answer is kept; send again to retry.
        "#]],
        );
    }

    #[test]
    fn request_payload() {
        check_request(
            &Ollama,
            &conversation(),
            &config(ProviderKind::Ollama, ""),
            expect![[r#"
            POST http://localhost:11434/api/chat
            content-type: application/json

            {
              "messages": [
                {
                  "content": "You are terse.",
                  "role": "system"
                },
                {
                  "content": "What is in this picture?",
                  "images": [
                    "iVBORw0KGgo="
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
              "options": {
                "num_predict": 512,
                "temperature": 0.7
              },
              "stream": true
            }
        "#]],
        );
    }

    #[test]
    fn a_malformed_line_is_skipped_and_split_surrogates_are_joined() {
        check_stream(
            &Ollama,
            "ollama/malformed_midstream.ndjson",
            expect![[r#"
            Model("llama3.2")
            Delta("héllo")
            Note("Skipped a frame from Ollama Tandem could not read (not JSON at line 1 column 1); the answer went on.")
            Delta(" ")
            Delta("🎉")
            Finish("stop")
            Usage(Usage { input: 26, output: 4 })
            Done
            END
        "#]],
        );
    }
}
