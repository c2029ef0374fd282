//! Firebase AI Logic with the Gemini Developer API backend: the Gemini request and stream
//! ([`super::gemini`]) on Firebase's proxy, as the Firebase JS SDK (`firebase/ai`,
//! `GoogleAIBackend`) calls it: <https://firebase.google.com/docs/ai-logic/get-started>.
//!
//! `POST https://firebasevertexai.googleapis.com/v1beta/projects/{projectId}/models/{model}:streamGenerateContent?alt=sse`
//! with the Firebase web app's API key in `x-goog-api-key` and the SDK's `x-goog-api-client`
//! logging header (`fire/<version>` marks the call as Firebase's).

use super::{gemini, header, Adapter};
use crate::http::HttpRequest;
use crate::provider::{ProviderConfig, ProviderKind};
use crate::request::UniversalRequest;
use crate::stream::StreamDecoder;

pub struct Firebase;

impl Adapter for Firebase {
    fn translate(&self, req: &UniversalRequest, cfg: &ProviderConfig) -> HttpRequest {
        let url = format!(
            "{}/projects/{}/models/{}:streamGenerateContent?alt=sse",
            cfg.base_url,
            cfg.project_id,
            gemini::model_id(req)
        );
        let version = env!("CARGO_PKG_VERSION");
        let mut headers = vec![
            header("x-goog-api-key", cfg.api_key.as_str()),
            header(
                "x-goog-api-client",
                format!("gl-rust/{version} fire/{version}"),
            ),
        ];
        // The SDK names the web app so Firebase can attribute (and App Check) the call.
        if !cfg.app_id.is_empty() {
            headers.push(header("x-firebase-appid", cfg.app_id.as_str()));
        }
        HttpRequest::post_json(url, headers, gemini::body(req))
    }

    fn decoder(&self) -> Box<dyn StreamDecoder> {
        gemini::decoder(ProviderKind::Firebase)
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::super::testkit::{check_stream, config, conversation, tool_round_trip};
    use super::*;

    #[test]
    fn request_payload() {
        // The body is Gemini's, byte for byte (its shape is pinned by gemini's own test);
        // only the address and the headers are Firebase's.
        let req = conversation();
        let cfg = config(ProviderKind::Firebase, "AIza-web");
        let http = Firebase.translate(&req, &cfg);
        assert_eq!(http.body, gemini::body(&req));
        let tools = tool_round_trip();
        assert_eq!(Firebase.translate(&tools, &cfg).body, gemini::body(&tools));
        let headers: String = http
            .headers
            .iter()
            .map(|(k, v)| format!("{k}: {v}\n"))
            .collect();
        expect![[r#"
            POST https://firebasevertexai.googleapis.com/v1beta/projects/demo-project/models/test-model:streamGenerateContent?alt=sse
            content-type: application/json
            x-goog-api-key: AIza-web
            x-goog-api-client: gl-rust/0.1.0 fire/0.1.0
        "#]]
        .assert_eq(&format!("{} {}\n{headers}", http.method, http.url));
    }

    #[test]
    fn speaks_gemini_stream_under_its_own_name() {
        check_stream(
            &Firebase,
            "gemini/cut.sse",
            expect![[r#"
            Model("gemini-2.0-flash")
            Delta("héllo")
            Usage(Usage { input: 21, output: 0 })
            Delta(" 世界")
            ERR StreamCut: The connection to Firebase AI Logic was cut before the answer finished. The partial answer is kept; send again to retry.
        "#]],
        );
    }
}
