//! A provider-neutral description of an HTTP request; the browser crates turn it into `fetch`.

use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HttpRequest {
    pub url: String,
    pub method: &'static str,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl HttpRequest {
    pub fn post_json(url: String, headers: Vec<(String, String)>, body: String) -> Self {
        let mut headers = headers;
        headers.insert(0, ("content-type".into(), "application/json".into()));
        Self {
            url,
            method: "POST",
            headers,
            body,
        }
    }

    /// The same request with every credential replaced, for the Debug drawer and logs.
    pub fn redacted(&self) -> HttpRequest {
        const SECRET_HEADERS: [&str; 3] = ["authorization", "x-api-key", "x-goog-api-key"];
        let headers = self
            .headers
            .iter()
            .map(|(k, v)| {
                if SECRET_HEADERS.contains(&k.to_ascii_lowercase().as_str()) {
                    (k.clone(), "[redacted]".to_string())
                } else {
                    (k.clone(), v.clone())
                }
            })
            .collect();
        let url = redact_query_key(&self.url);
        HttpRequest {
            url,
            method: self.method,
            headers,
            body: self.body.clone(),
        }
    }
}

/// Gemini-style `?key=...` query credentials.
fn redact_query_key(url: &str) -> String {
    let Some((base, query)) = url.split_once('?') else {
        return url.to_string();
    };
    let parts: Vec<String> = query
        .split('&')
        .map(|p| {
            if p.starts_with("key=") {
                "key=[redacted]".to_string()
            } else {
                p.to_string()
            }
        })
        .collect();
    format!("{base}?{}", parts.join("&"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction_hides_every_credential_form() {
        let r = HttpRequest::post_json(
            "https://h/x?alt=sse&key=SECRET".into(),
            vec![
                ("Authorization".into(), "Bearer SECRET".into()),
                ("x-api-key".into(), "SECRET".into()),
            ],
            "{}".into(),
        );
        let shown = format!("{:?}", r.redacted());
        assert!(!shown.contains("SECRET"), "{shown}");
        assert!(shown.contains("alt=sse"));
    }
}
