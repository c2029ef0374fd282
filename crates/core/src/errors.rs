//! Provider failures, classified so the user reads a sentence that tells them what to do and
//! the send pipeline knows whether to retry, trim or give up.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::case::Lowercase;
use crate::i18n::{text, Msg};
use crate::provider::{ProviderConfig, ProviderKind};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorKind {
    /// Settings are incomplete (no provider, no model, no key).
    NotConfigured,
    /// 401/403.
    BadKey,
    /// 404 or the provider says the model does not exist.
    UnknownModel,
    /// 429: retry after a delay.
    RateLimited,
    /// 5xx / Anthropic 529: retry after a delay.
    Overloaded,
    /// The prompt does not fit the model's context window: drop the oldest pair and retry.
    ContextOverflow,
    /// The connection failed (refused, DNS, CORS).
    Network,
    /// The stream ended before the provider's end marker.
    StreamCut,
    /// The provider sent nothing for the stall limit (`budget.stallSeconds`), so Tandem
    /// stopped waiting: the panel gives the question's text back to retry with.
    Stalled,
    /// An `error` payload inside the stream, or any other provider answer.
    Provider,
    /// The call is made by the side panel (Firebase AI Logic) and no panel is open, or it
    /// closed mid-call: nothing is wrong with the provider, so a task waits for the panel.
    NeedsPanel,
    /// A 400 naming `response_format` or `json_schema`: the server refuses the structured
    /// output asked for, and the step is asked again a rung down (`structured`).
    OutputFormatRefused,
    /// A 400 refusing the tools a request declared (an Ollama model without tool support, a
    /// vLLM server started without `--enable-auto-tool-choice`, llama.cpp without `--jinja`):
    /// an agent step is asked again without them, its tools then called as the `tool` action.
    ToolsRefused,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[error("{message}")]
#[serde(rename_all = "camelCase")]
pub struct ProviderError {
    pub kind: ErrorKind,
    /// The sentence shown to the user.
    pub message: String,
    /// HTTP status when there was one.
    pub status: Option<u16>,
    /// Milliseconds the provider asked us to wait (Retry-After).
    pub retry_after_ms: Option<u64>,
    /// `message` as a catalog message, for the person's language; `None` for the sentences
    /// not in the catalog yet (then `message` is shown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub said: Option<Msg>,
}

impl ProviderError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            status: None,
            retry_after_ms: None,
            said: None,
        }
    }

    /// An error whose sentence is the catalog's `msg` (`message` is its English).
    pub fn said(kind: ErrorKind, msg: Msg) -> Self {
        Self {
            said: Some(msg.clone()),
            ..Self::new(kind, msg.english())
        }
    }

    /// The sentence as a message: `said` while it still is `message`'s sentence (code that
    /// rewrites `message` alone is shown its words), else `message` as it is.
    pub fn message_said(&self) -> Msg {
        match &self.said {
            Some(m) if m.english() == self.message => m.clone(),
            _ => Msg::literal(self.message.clone()),
        }
    }

    /// The relay through the side panel is gone; `closed`: it closed during the call.
    pub fn needs_panel(provider: ProviderKind, closed: bool) -> Self {
        let what = if closed {
            format!("The side panel closed before {} answered", provider.label())
        } else {
            format!("{} answers through Tandem's side panel", provider.label())
        };
        Self::new(
            ErrorKind::NeedsPanel,
            format!("{what}: open the side panel to continue."),
        )
    }

    pub fn stream_cut(provider: ProviderKind) -> Self {
        Self::new(
            ErrorKind::StreamCut,
            format!(
                "The connection to {} was cut before the answer finished. The partial answer is kept; send again to retry.",
                provider.label()
            ),
        )
    }

    pub fn malformed(provider: ProviderKind, detail: &str) -> Self {
        Self::new(
            ErrorKind::Provider,
            format!(
                "{} sent a reply Tandem could not read ({detail}).",
                provider.label()
            ),
        )
    }

    /// Whether the send pipeline should try the same request again after a pause.
    pub fn is_transient(&self) -> bool {
        matches!(self.kind, ErrorKind::RateLimited | ErrorKind::Overloaded)
    }
}

/// What a provider's error body says, whatever its JSON shape: OpenAI
/// `{"error":{"message","type","code"}}`, Anthropic `{"type":"error","error":{"type","message"}}`,
/// Gemini `{"error":{"code","message","status","details"}}` (sometimes inside a one-element
/// array), Ollama `{"error":"..."}`, FastAPI-style `{"detail":"..."}`, or plain text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ErrorDetail {
    /// Lower-cased machine codes: OpenAI `type`/`code`, Anthropic `error.type`, Gemini `status`
    /// and `details[].reason`.
    pub codes: Vec<String>,
    /// A numeric status carried inside the body (Gemini's `error.code`).
    pub status: Option<u16>,
    /// The provider's own sentence, whitespace-collapsed and truncated for the side panel.
    pub message: String,
    /// Gemini's `RetryInfo.retryDelay`, in milliseconds.
    pub retry_after_ms: Option<u64>,
}

impl ErrorDetail {
    pub fn parse(body: &str) -> Self {
        match crate::json::from_str::<Value>(body.trim()) {
            Ok(v) => Self::from_value(&v),
            // HTML error pages (proxies, captive portals) make no readable sentence.
            Err(_) if body.trim_start().starts_with('<') => Self::default(),
            Err(_) => Self {
                message: clip(body),
                ..Self::default()
            },
        }
    }

    fn from_value(v: &Value) -> Self {
        let v = match v {
            Value::Array(items) => items.first().unwrap_or(&Value::Null),
            v => v,
        };
        let err = v.get("error").unwrap_or(v);
        if let Some(s) = err.as_str() {
            // Ollama relays llama.cpp's JSON error as a string: the useful part is inside.
            if let Ok(inner @ (Value::Object(_) | Value::Array(_))) = crate::json::from_str(s) {
                let d = Self::from_value(&inner);
                if !d.message.is_empty() {
                    return d;
                }
            }
            return Self {
                message: clip(s),
                ..Self::default()
            };
        }
        let text = |key: &str| err.get(key).and_then(Value::as_str);
        let details = err
            .get("details")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        let codes = ["type", "code", "status"]
            .into_iter()
            .filter_map(text)
            .chain(details.iter().filter_map(|d| d.get("reason")?.as_str()))
            .map(str::to_ascii_lowercase)
            .collect();
        let retry_after_ms = details.iter().find_map(|d| {
            let secs = d.get("retryDelay")?.as_str()?.strip_suffix('s')?;
            parse_retry_after(secs, None)
        });
        Self {
            codes,
            status: err
                .get("code")
                .and_then(Value::as_u64)
                .and_then(|c| u16::try_from(c).ok()),
            message: clip(
                text("message")
                    .or_else(|| text("detail"))
                    .unwrap_or_default(),
            ),
            retry_after_ms,
        }
    }

    fn has(&self, code: &str) -> bool {
        self.codes.iter().any(|c| c == code)
    }
}

/// Phrases providers use when the prompt does not fit the context window: OpenAI and vLLM
/// ("maximum context length"), Anthropic ("prompt is too long", "exceed context limit"),
/// Gemini ("input token count ... exceeds"), Ollama and llama.cpp ("exceeds the context
/// length", "available context size"), LM Studio ("greater than the context length").
const OVERFLOW_PHRASES: [&str; 7] = [
    "prompt is too long",
    "input token count",
    "context length",
    "context window",
    "context size",
    "context limit",
    "context_length_exceeded",
];
const OVERFLOW_CODES: [&str; 2] = ["context_length_exceeded", "exceed_context_size_error"];

/// The HTTP status a provider's error code stands for. Needed for stream errors (no status at
/// all) and for Gemini, which answers an invalid key with 400 and reason `API_KEY_INVALID`.
fn code_status(codes: &[String]) -> Option<u16> {
    codes.iter().find_map(|c| match c.as_str() {
        "authentication_error" | "invalid_api_key" | "api_key_invalid" | "unauthenticated" => {
            Some(401)
        }
        "permission_error" | "permission_denied" => Some(403),
        "not_found_error" | "model_not_found" | "not_found" => Some(404),
        "rate_limit_error" | "rate_limit_exceeded" | "resource_exhausted" => Some(429),
        "overloaded_error" => Some(529),
        "api_error" | "server_error" | "internal" | "unavailable" => Some(503),
        _ => None,
    })
}

fn kind_of(status: Option<u16>, d: &ErrorDetail) -> ErrorKind {
    let msg = d.message.lowercase();
    if OVERFLOW_PHRASES.iter().any(|p| msg.contains(p)) || OVERFLOW_CODES.iter().any(|c| d.has(c)) {
        return ErrorKind::ContextOverflow;
    }
    // An empty quota or a disabled API is not fixed by waiting or by another key.
    if d.has("insufficient_quota") || d.has("service_disabled") {
        return ErrorKind::Provider;
    }
    match code_status(&d.codes).or(status) {
        Some(401 | 403) => ErrorKind::BadKey,
        Some(404) => ErrorKind::UnknownModel,
        Some(429) => ErrorKind::RateLimited,
        // The request body itself is too big (Anthropic's `request_too_large`): trimming helps.
        Some(413) => ErrorKind::ContextOverflow,
        Some(500..=599) => ErrorKind::Overloaded,
        _ if msg.contains("model")
            && (msg.contains("not found") || msg.contains("does not exist")) =>
        {
            ErrorKind::UnknownModel
        }
        _ => ErrorKind::Provider,
    }
}

/// The one classification core behind every adapter: kind from status, codes and message;
/// sentence from kind, with the provider's own words appended.
fn classify(
    provider: ProviderKind,
    status: Option<u16>,
    d: &ErrorDetail,
    cfg: Option<&ProviderConfig>,
    retry_after_ms: Option<u64>,
) -> ProviderError {
    let label = provider.label();
    let kind = kind_of(status, d);
    let code = status.map(|s| format!(" ({s})")).unwrap_or_default();
    // The commonest sentences are catalog messages, so the panel shows them in the person's
    // language; the rest stay English words.
    let keyed = match (kind, cfg) {
        _ if provider == ProviderKind::Ollama && kind == ErrorKind::BadKey => {
            Some(Msg::new("errOllamaRefused", vec![text(code.clone())]))
        }
        (ErrorKind::BadKey, Some(c)) if c.api_key.is_empty() => Some(Msg::new(
            "errKeyNeeded",
            vec![text(label), text(code.clone())],
        )),
        (ErrorKind::BadKey, _) => Some(Msg::new(
            "errKeyRefused",
            vec![text(label), text(code.clone())],
        )),
        (ErrorKind::UnknownModel, Some(c)) => Some(Msg::new(
            if c.kind == ProviderKind::Ollama {
                "errOllamaModelUnknown"
            } else {
                "errModelUnknownAt"
            },
            vec![
                text(label),
                text(c.model.clone()),
                text(c.base_url.clone()),
                text(code.clone()),
            ],
        )),
        (ErrorKind::UnknownModel, None) => Some(Msg::new(
            "errModelUnknown",
            vec![text(label), text(code.clone())],
        )),
        _ => None,
    };
    let mut message = match (kind, cfg) {
        // Ollama has no keys: its one 403 is the origin allow-list refusing the extension.
        (ErrorKind::BadKey, _) if provider == ProviderKind::Ollama => format!(
            "Ollama refused the request from the extension{code}. Start it with \
             OLLAMA_ORIGINS=chrome-extension://* (for example `OLLAMA_ORIGINS=chrome-extension://* ollama serve`)."
        ),
        (ErrorKind::BadKey, Some(c)) if c.api_key.is_empty() => {
            format!("{label} needs an API key{code}. Add it in Settings.")
        }
        (ErrorKind::BadKey, _) => {
            format!("{label} rejected the API key{code}. Check the key in Settings.")
        }
        (ErrorKind::UnknownModel, Some(c)) => {
            let pull = if c.kind == ProviderKind::Ollama {
                format!(" To download it, run `ollama pull {}`.", c.model)
            } else {
                String::new()
            };
            format!(
                "{label} does not know the model \"{}\" at {}{code}. Check the model name and the base URL in Settings.{pull}",
                c.model, c.base_url
            )
        }
        (ErrorKind::UnknownModel, None) => {
            format!("{label} does not know the requested model{code}. Check the model name in Settings.")
        }
        (ErrorKind::RateLimited, _) => match retry_after_ms {
            Some(ms) => format!(
                "{label} is rate-limiting requests{code}; it asks to wait {} s.",
                ms.div_ceil(1000)
            ),
            None => {
                format!("{label} is rate-limiting requests{code}. Wait a moment and send again.")
            }
        },
        (ErrorKind::Overloaded, _) => {
            format!(
                "{label} is overloaded or temporarily unavailable{code}. Try again in a moment."
            )
        }
        (ErrorKind::ContextOverflow, _) => {
            let model = cfg.map_or("the model".to_string(), |c| format!("\"{}\"", c.model));
            format!("The conversation is too long for the context window of {model}{code}.")
        }
        _ if d.has("insufficient_quota") => {
            format!("{label} says this API key has run out of quota{code}. Check the plan and billing of the account.")
        }
        _ if d.has("service_disabled") => {
            format!("{label} is not enabled for this project{code}. Enable the API in the provider's console.")
        }
        _ if status.is_some() => format!("{label} refused the request{code}."),
        _ => format!("{label} reported an error while answering."),
    };
    let mut said = keyed.filter(|m| m.english() == message);
    if !d.message.is_empty() {
        let words = Msg::new(
            "errProviderSaid",
            vec![text(label), text(d.message.clone())],
        );
        message.push_str(&format!(" {}", words.english()));
        said = said.map(|main| main.then(words));
    }
    let transient = matches!(kind, ErrorKind::RateLimited | ErrorKind::Overloaded);
    ProviderError {
        kind,
        message,
        status,
        retry_after_ms: retry_after_ms.filter(|_| transient),
        said,
    }
}

/// Classifies a non-2xx HTTP answer; every adapter's `classify_http` is this.
pub fn classify_http(
    status: u16,
    body: &str,
    retry_after: Option<&str>,
    cfg: &ProviderConfig,
) -> ProviderError {
    let d = ErrorDetail::parse(body);
    let retry = retry_after
        .and_then(|h| parse_retry_after(h, None))
        .or(d.retry_after_ms);
    let mut error = classify(cfg.kind, Some(status), &d, Some(cfg), retry);
    // Servers that do not take a structured-output request say so in a 400 that names the
    // field (LM Studio, older vLLM and llama.cpp, proxies), in their message or a `param`.
    let lower = body.lowercase();
    if status == 400
        && error.kind == ErrorKind::Provider
        && (lower.contains("response_format") || lower.contains("json_schema"))
    {
        error.kind = ErrorKind::OutputFormatRefused;
    } else if status == 400 && error.kind == ErrorKind::Provider && refuses_tools(&lower) {
        error.kind = ErrorKind::ToolsRefused;
    }
    error
}

/// Whether a 400's body (lowercased) refuses the request's tools, in the words the servers
/// use: Ollama's "does not support tools", vLLM's "tool choice requires
/// --enable-auto-tool-choice", llama.cpp's "tools param requires --jinja", and any that names
/// `tool_choice` or `tools`.
fn refuses_tools(lower: &str) -> bool {
    [
        "does not support tools",
        "tool choice",
        "tool_choice",
        "tools param",
        "\"tools\"",
        "'tools'",
        "tool calling",
        "function calling",
    ]
    .iter()
    .any(|w| lower.contains(w))
}

/// Classifies an error payload found inside a 200 stream (`payload` is the JSON that
/// carries the `error`); any status comes from the payload itself.
pub fn stream_error(provider: ProviderKind, payload: &str) -> ProviderError {
    let d = ErrorDetail::parse(payload);
    classify(provider, d.status, &d, None, d.retry_after_ms)
}

/// The request never got an HTTP answer (refused, DNS, CORS; `detail` is the browser's
/// message). A local server is most often simply not running, or, for Ollama, refusing the
/// extension's origin.
pub fn network_error(cfg: &ProviderConfig, detail: &str) -> ProviderError {
    let url = &cfg.base_url;
    let ollama = cfg.kind == ProviderKind::Ollama;
    // Ollama's sentences add how to start it.
    let keyed = match (ollama, cfg.is_local()) {
        (true, true) => Msg::new("errOllamaLocalUnreachable", vec![text(url.clone())]),
        (false, true) => Msg::new("errLocalUnreachable", vec![text(url.clone())]),
        (true, false) => Msg::new(
            "errOllamaUnreachable",
            vec![text(cfg.kind.label()), text(url.clone())],
        ),
        (false, false) => Msg::new(
            "errUnreachable",
            vec![text(cfg.kind.label()), text(url.clone())],
        ),
    };
    let keyed = Some(keyed);
    let mut message = if cfg.is_local() {
        // Ollama is also reached through its OpenAI-compatible /v1 endpoint, so the hint
        // matters for any local server, and it is the usual cause when one is running.
        let how = if ollama {
            " and was started with OLLAMA_ORIGINS=chrome-extension://* (for example `OLLAMA_ORIGINS=chrome-extension://* ollama serve`) so it accepts requests from the extension."
        } else {
            " and accepts requests from the extension (CORS). For Ollama, start it with OLLAMA_ORIGINS=chrome-extension://*."
        };
        format!("The server at {url} could not be reached. Check that it is running{how}")
    } else {
        let mut s = format!(
            "Could not reach {} at {url}. Check your internet connection and the base URL in Settings.",
            cfg.kind.label()
        );
        if ollama {
            s.push_str(
                " An Ollama server must be started with OLLAMA_ORIGINS=chrome-extension://*.",
            );
        }
        s
    };
    let mut said = keyed.filter(|m| m.english() == message);
    if !detail.trim().is_empty() {
        let browser = format!(" ({})", clip(detail));
        message.push_str(&browser);
        said = said.map(|main| main.then(Msg::literal(browser)));
    }
    ProviderError {
        said,
        ..ProviderError::new(ErrorKind::Network, message)
    }
}

/// A 200 answer must be a stream. A web page instead (`text/html`) is what a Wi-Fi sign-in
/// page or a proxy sends for any address; reading it as a stream would only say "cut".
pub fn check_content_type(
    provider: ProviderKind,
    content_type: Option<&str>,
) -> Result<(), ProviderError> {
    let mime = content_type
        .and_then(|c| c.split(';').next())
        .map(|m| m.trim().to_ascii_lowercase())
        .unwrap_or_default();
    if matches!(mime.as_str(), "text/html" | "application/xhtml+xml") {
        return Err(ProviderError::new(
            ErrorKind::Network,
            format!(
                "{}'s address answered with a web page, not an answer. A Wi-Fi sign-in page or a proxy may be in the way: open any website in a tab to sign in, then send again.",
                provider.label()
            ),
        ));
    }
    Ok(())
}

/// The provider's address answered with a redirect, which Tandem does not follow: the
/// request carries the API key, and only the configured address may receive it.
pub fn redirected(cfg: &ProviderConfig) -> ProviderError {
    ProviderError::new(
        ErrorKind::Network,
        format!(
            "{} at {} redirected Tandem to another address. Tandem does not follow redirects, so your API key only goes to the address in Settings. Check the base URL there; a Wi-Fi sign-in page may also be in the way.",
            cfg.kind.label(),
            cfg.base_url
        ),
    )
}

/// A `Retry-After` value in milliseconds: delay-seconds, or an HTTP-date (IMF-fixdate, e.g.
/// `Sun, 06 Nov 1994 08:49:37 GMT`), which needs the current time `now_ms` (Unix ms) to become
/// a delay; without it a date gives `None`.
pub fn parse_retry_after(value: &str, now_ms: Option<u64>) -> Option<u64> {
    let value = value.trim();
    if value.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return seconds_ms(value);
    }
    Some(http_date_ms(value)?.saturating_sub(now_ms?))
}

/// Decimal seconds (`120`, `1.5`; RFC 9110 has whole seconds, some servers send a fraction)
/// in milliseconds, rounded; `None` for anything else. Read digit by digit, not through
/// `f64::from_str`, whose tables would be the module's only use of them.
fn seconds_ms(value: &str) -> Option<u64> {
    let (whole, fraction) = value.split_once('.').unwrap_or((value, ""));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let read = (digits(whole) && (fraction.is_empty() || digits(fraction)))
        || (whole.is_empty() && digits(fraction));
    if !read {
        return None;
    }
    // Past u64 milliseconds is no delay anyone waits for: saturate.
    let ms = whole.bytes().fold(0u64, |n, d| {
        n.saturating_mul(10).saturating_add(u64::from(d - b'0'))
    });
    let mut ms = ms.saturating_mul(1000);
    let mut scale = 100;
    for d in fraction.bytes().take(3) {
        ms = ms.saturating_add(u64::from(d - b'0') * scale);
        scale /= 10;
    }
    // The fourth decimal rounds the millisecond, as the float reading did.
    if fraction.as_bytes().get(3).is_some_and(|d| *d >= b'5') {
        ms = ms.saturating_add(1);
    }
    Some(ms)
}

fn http_date_ms(s: &str) -> Option<u64> {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let mut parts = s.split_whitespace().skip(1); // the weekday adds nothing
    let day: u64 = parts.next()?.parse().ok()?;
    let name = parts.next()?;
    let month = MONTHS.iter().position(|m| *m == name)? as u64 + 1;
    let year: u64 = parts.next()?.parse().ok()?;
    let hms: Vec<u64> = parts
        .next()?
        .split(':')
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    if parts.next()? != "GMT" || !(1..=31).contains(&day) || year < 1970 || hms.len() != 3 {
        return None;
    }
    // Days since 1970-01-01 in the proleptic Gregorian calendar, counting years from March
    // so that the leap day is the last day of the year.
    let (y, m) = if month <= 2 {
        (year - 1, month + 9)
    } else {
        (year, month - 3)
    };
    let days = 365 * y + y / 4 - y / 100 + y / 400 + (153 * m + 2) / 5 + day - 1 - 719_468;
    Some((days * 86_400 + hms[0] * 3600 + hms[1] * 60 + hms[2]) * 1000)
}

/// Collapses whitespace and keeps the first 200 characters: the provider's words go into a
/// sentence in a narrow side panel.
fn clip(s: &str) -> String {
    const MAX: usize = 200;
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    match s.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use expect_test::{expect, Expect};

    use super::*;

    fn cfg(kind: ProviderKind, base_url: &str, key: &str) -> ProviderConfig {
        ProviderConfig {
            kind,
            base_url: base_url.into(),
            model: "m-1".into(),
            api_key: key.into(),
            project_id: String::new(),
            app_id: String::new(),
        }
    }

    fn render(e: &ProviderError) -> String {
        let retry = e
            .retry_after_ms
            .map(|ms| format!(" retry={ms}ms"))
            .unwrap_or_default();
        format!("{:?} {:?}{retry}: {}", e.kind, e.status, e.message)
    }

    /// Classifies one HTTP answer from `kind`'s default endpoint with a key set.
    fn check(
        kind: ProviderKind,
        status: u16,
        body: &str,
        retry_after: Option<&str>,
        expect: Expect,
    ) {
        let c = cfg(
            kind,
            kind.default_base_url()
                .unwrap_or("http://localhost:1234/v1"),
            "key",
        );
        expect.assert_eq(&render(&classify_http(status, body, retry_after, &c)));
    }

    #[test]
    fn openai_shapes() {
        check(
            ProviderKind::OpenAi,
            401,
            r#"{"error":{"message":"Incorrect API key provided: sk-proj-****abcd. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#,
            None,
            expect![[
                r#"BadKey Some(401): OpenAI rejected the API key (401). Check the key in Settings. OpenAI said: "Incorrect API key provided: sk-proj-****abcd. You can find your API key at https://platform.openai.com/account/api-keys.""#
            ]],
        );
        check(
            ProviderKind::OpenAi,
            404,
            r#"{"error":{"message":"The model `m-1` does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}"#,
            None,
            expect![[
                r#"UnknownModel Some(404): OpenAI does not know the model "m-1" at https://api.openai.com/v1 (404). Check the model name and the base URL in Settings. OpenAI said: "The model `m-1` does not exist or you do not have access to it.""#
            ]],
        );
        check(
            ProviderKind::OpenAi,
            429,
            r#"{"error":{"message":"Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000, Used 29000, Requested 1800. Please try again in 1.6s.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}"#,
            Some("2"),
            expect![[
                r#"RateLimited Some(429) retry=2000ms: OpenAI is rate-limiting requests (429); it asks to wait 2 s. OpenAI said: "Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000, Used 29000, Requested 1800. Please try again in 1.6s.""#
            ]],
        );
        check(
            ProviderKind::OpenAi,
            429,
            r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#,
            None,
            expect![[
                r#"Provider Some(429): OpenAI says this API key has run out of quota (429). Check the plan and billing of the account. OpenAI said: "You exceeded your current quota, please check your plan and billing details.""#
            ]],
        );
        check(
            ProviderKind::OpenAi,
            400,
            r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
            None,
            expect![[
                r#"ContextOverflow Some(400): The conversation is too long for the context window of "m-1" (400). OpenAI said: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens. Please reduce the length of the messages.""#
            ]],
        );
        check(
            ProviderKind::OpenAi,
            502,
            "<html><head><title>502 Bad Gateway</title></head><body>cloudflare</body></html>",
            None,
            expect!["Overloaded Some(502): OpenAI is overloaded or temporarily unavailable (502). Try again in a moment."],
        );
    }

    #[test]
    fn anthropic_shapes() {
        check(
            ProviderKind::Anthropic,
            529,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            Some("30"),
            expect![[
                r#"Overloaded Some(529) retry=30000ms: Anthropic is overloaded or temporarily unavailable (529). Try again in a moment. Anthropic said: "Overloaded""#
            ]],
        );
        check(
            ProviderKind::Anthropic,
            400,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208310 tokens > 200000 maximum"}}"#,
            None,
            expect![[
                r#"ContextOverflow Some(400): The conversation is too long for the context window of "m-1" (400). Anthropic said: "prompt is too long: 208310 tokens > 200000 maximum""#
            ]],
        );
        check(
            ProviderKind::Anthropic,
            401,
            r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
            None,
            expect![[
                r#"BadKey Some(401): Anthropic rejected the API key (401). Check the key in Settings. Anthropic said: "invalid x-api-key""#
            ]],
        );
    }

    #[test]
    fn gemini_and_firebase_shapes() {
        check(
            ProviderKind::Gemini,
            400,
            r#"{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com"}]}}"#,
            None,
            expect![[
                r#"BadKey Some(400): Gemini rejected the API key (400). Check the key in Settings. Gemini said: "API key not valid. Please pass a valid API key.""#
            ]],
        );
        check(
            ProviderKind::Gemini,
            400,
            r#"{"error":{"code":400,"message":"The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}"#,
            None,
            expect![[
                r#"ContextOverflow Some(400): The conversation is too long for the context window of "m-1" (400). Gemini said: "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).""#
            ]],
        );
        check(
            ProviderKind::Gemini,
            429,
            r#"[{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37s"}]}}]"#,
            None,
            expect![[
                r#"RateLimited Some(429) retry=37000ms: Gemini is rate-limiting requests (429); it asks to wait 37 s. Gemini said: "You exceeded your current quota, please check your plan and billing details.""#
            ]],
        );
        check(
            ProviderKind::Gemini,
            404,
            r#"{"error":{"code":404,"message":"models/m-1 is not found for API version v1beta, or is not supported for generateContent.","status":"NOT_FOUND"}}"#,
            None,
            expect![[
                r#"UnknownModel Some(404): Gemini does not know the model "m-1" at https://generativelanguage.googleapis.com/v1beta (404). Check the model name and the base URL in Settings. Gemini said: "models/m-1 is not found for API version v1beta, or is not supported for generateContent.""#
            ]],
        );
        check(
            ProviderKind::Firebase,
            403,
            r#"{"error":{"code":403,"message":"Firebase AI Logic API has not been used in project 1234 before or it is disabled.","status":"PERMISSION_DENIED","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"SERVICE_DISABLED"}]}}"#,
            None,
            expect![[
                r#"Provider Some(403): Firebase AI Logic is not enabled for this project (403). Enable the API in the provider's console. Firebase AI Logic said: "Firebase AI Logic API has not been used in project 1234 before or it is disabled.""#
            ]],
        );
    }

    #[test]
    fn ollama_and_compatible_shapes() {
        check(
            ProviderKind::Ollama,
            404,
            r#"{"error":"model \"m-1\" not found, try pulling it first"}"#,
            None,
            expect![[
                r#"UnknownModel Some(404): Ollama does not know the model "m-1" at http://localhost:11434 (404). Check the model name and the base URL in Settings. To download it, run `ollama pull m-1`. Ollama said: "model "m-1" not found, try pulling it first""#
            ]],
        );
        // llama.cpp's JSON error relayed as a string, on a 500: still an overflow, not a retry.
        check(
            ProviderKind::Ollama,
            500,
            r#"{"error":"{\"error\":{\"code\":400,\"message\":\"request (351 tokens) exceeds the available context size (256 tokens), try increasing it\",\"type\":\"exceed_context_size_error\"}}"}"#,
            None,
            expect![[
                r#"ContextOverflow Some(500): The conversation is too long for the context window of "m-1" (500). Ollama said: "request (351 tokens) exceeds the available context size (256 tokens), try increasing it""#
            ]],
        );
        check(
            ProviderKind::Ollama,
            400,
            r#"{"error":"the input length exceeds the context length"}"#,
            None,
            expect![[
                r#"ContextOverflow Some(400): The conversation is too long for the context window of "m-1" (400). Ollama said: "the input length exceeds the context length""#
            ]],
        );
        let keyless = cfg(
            ProviderKind::OpenAiCompatible,
            "http://localhost:8000/v1",
            "",
        );
        expect![[r#"BadKey Some(401): OpenAI-compatible needs an API key (401). Add it in Settings. OpenAI-compatible said: "Not authenticated""#]].assert_eq(&render(&classify_http(401, r#"{"detail":"Not authenticated"}"#, None, &keyless)));
    }

    #[test]
    fn stream_errors_classify_by_code() {
        let cases = [
            (
                ProviderKind::Anthropic,
                r#"{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}"#,
            ),
            (
                ProviderKind::Anthropic,
                r#"{"type":"error","error":{"type":"api_error","message":"Internal server error"}}"#,
            ),
            (
                ProviderKind::OpenAiCompatible,
                r#"{"error":{"message":"Oops","type":"invalid_request_error"}}"#,
            ),
        ];
        let out: Vec<String> = cases
            .iter()
            .map(|(k, p)| render(&stream_error(*k, p)))
            .collect();
        expect![[r#"
            RateLimited None: Anthropic is rate-limiting requests. Wait a moment and send again. Anthropic said: "Number of request tokens has exceeded your per-minute rate limit"
            Overloaded None: Anthropic is overloaded or temporarily unavailable. Try again in a moment. Anthropic said: "Internal server error"
            Provider None: OpenAI-compatible reported an error while answering. OpenAI-compatible said: "Oops""#]].assert_eq(&out.join("\n"));
    }

    #[test]
    fn long_provider_messages_are_clipped() {
        let body = format!(
            r#"{{"error":{{"message":"{}","type":"x"}}}}"#,
            "word ".repeat(100)
        );
        let e = classify_http(
            400,
            &body,
            None,
            &cfg(ProviderKind::OpenAi, "https://api.openai.com/v1", "k"),
        );
        assert_eq!(e.kind, ErrorKind::Provider);
        assert!(
            e.message.ends_with("…\"") && e.message.chars().count() < 300,
            "{}",
            e.message
        );
    }

    #[test]
    fn retry_after_forms() {
        assert_eq!(parse_retry_after(" 120 ", None), Some(120_000));
        assert_eq!(parse_retry_after("1.5", None), Some(1_500));
        assert_eq!(parse_retry_after("0.0625", None), Some(63));
        assert_eq!(parse_retry_after("2.0004", None), Some(2_000));
        assert_eq!(
            parse_retry_after("99999999999999999999", None),
            Some(u64::MAX)
        );
        assert_eq!(parse_retry_after("1.", None), Some(1_000));
        assert_eq!(parse_retry_after(".5", None), Some(500));
        for bad in [".", "1.5.2", "1e3", "1,5", "+3", "12s", "1. 5"] {
            assert_eq!(parse_retry_after(bad, Some(0)), None, "{bad}");
        }
        assert_eq!(parse_retry_after("-3", None), None);
        assert_eq!(parse_retry_after("soon", Some(0)), None);
        let date = "Wed, 21 Oct 2015 07:28:00 GMT";
        assert_eq!(http_date_ms(date), Some(1_445_412_480_000));
        assert_eq!(
            parse_retry_after(date, Some(1_445_412_470_000)),
            Some(10_000)
        );
        assert_eq!(parse_retry_after(date, Some(1_445_412_490_000)), Some(0));
        assert_eq!(parse_retry_after(date, None), None);
        assert_eq!(
            http_date_ms("Thu, 29 Feb 2024 00:00:00 GMT"),
            Some(1_709_164_800_000)
        );
    }

    #[test]
    fn the_commonest_errors_are_catalog_messages_whose_english_is_the_message() {
        let openai = cfg(ProviderKind::OpenAi, "https://api.openai.com/v1", "sk-x");
        let refused = classify_http(
            401,
            r#"{"error":{"message":"Incorrect API key"}}"#,
            None,
            &openai,
        );
        let said = refused.said.clone().expect("keyed");
        assert_eq!(said.english(), refused.message);
        assert_eq!(refused.message_said(), said);
        // The catalog's sentence in another language, the provider's own words as they came.
        let german = |key: &str| match key {
            "errKeyRefused" => Some("$1 hat den API-Schlüssel abgelehnt$2.".to_string()),
            "errProviderSaid" => Some("$1 meldet: „$2“".to_string()),
            _ => None,
        };
        let shown = said.plain(&german);
        assert!(
            shown.starts_with(
                "OpenAI hat den API-Schlüssel abgelehnt (401). OpenAI meldet: „Incorrect API key“"
            ),
            "{shown}"
        );
        let unknown = classify_http(404, "", None, &openai);
        assert_eq!(
            unknown.said.as_ref().map(|m| m.key.as_str()),
            Some("errModelUnknownAt")
        );
        let away = network_error(&openai, "Failed to fetch");
        assert_eq!(away.message_said().english(), away.message);
        assert!(away.message_said().has_key());
        let local = network_error(
            &cfg(
                ProviderKind::OpenAiCompatible,
                "http://127.0.0.1:1234/v1",
                "",
            ),
            "",
        );
        assert_eq!(
            local.said.as_ref().map(|m| m.key.as_str()),
            Some("errLocalUnreachable")
        );
        // Ollama's own sentences (how to start it, how to pull a model) are catalog ones too.
        let ollama = cfg(ProviderKind::Ollama, "http://127.0.0.1:11434", "");
        for (e, key) in [
            (classify_http(403, "", None, &ollama), "errOllamaRefused"),
            (
                classify_http(404, "", None, &ollama),
                "errOllamaModelUnknown",
            ),
            (network_error(&ollama, ""), "errOllamaLocalUnreachable"),
            (
                network_error(&cfg(ProviderKind::Ollama, "https://ollama.example", ""), ""),
                "errOllamaUnreachable",
            ),
        ] {
            let said = e.message_said();
            assert_eq!(said.key, key, "{}", e.message);
            assert_eq!(said.english(), e.message);
        }
        // A message rewritten after it was classified is shown as its words.
        let mut rewritten = refused.clone();
        rewritten.message.push_str(" (again)");
        assert!(!rewritten.message_said().has_key());
    }

    #[test]
    fn network_errors_name_the_server_and_the_fix() {
        let cases = [
            cfg(ProviderKind::Ollama, "http://localhost:11434", ""),
            cfg(
                ProviderKind::OpenAiCompatible,
                "http://127.0.0.1:1234/v1",
                "",
            ),
            cfg(ProviderKind::OpenAi, "https://api.openai.com/v1", "k"),
        ];
        let out: Vec<String> = cases
            .iter()
            .map(|c| render(&network_error(c, "Failed to fetch")))
            .collect();
        expect![[r#"
            Network None: The server at http://localhost:11434 could not be reached. Check that it is running and was started with OLLAMA_ORIGINS=chrome-extension://* (for example `OLLAMA_ORIGINS=chrome-extension://* ollama serve`) so it accepts requests from the extension. (Failed to fetch)
            Network None: The server at http://127.0.0.1:1234/v1 could not be reached. Check that it is running and accepts requests from the extension (CORS). For Ollama, start it with OLLAMA_ORIGINS=chrome-extension://*. (Failed to fetch)
            Network None: Could not reach OpenAI at https://api.openai.com/v1. Check your internet connection and the base URL in Settings. (Failed to fetch)"#]].assert_eq(&out.join("\n"));
    }
}
