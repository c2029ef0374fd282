//! How Tandem authenticates to an MCP server: an optional Bearer token and optional headers
//! of the user's (an API-key header, say). Both are secrets like API keys: kept apart from the
//! registry (`chrome.storage.local` under [`super::TOKENS_KEY`]), read by the worker only, and
//! shown back by the token's end and the headers' names, never their values.

use crate::json;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Headers a user may give a server, at most.
pub const MAX_HEADERS: usize = 16;
const MAX_VALUE_CHARS: usize = 4_096;

/// Headers Tandem sets itself (or the browser forbids): a user's line may not replace them.
const RESERVED: &[&str] = &[
    "accept",
    "authorization",
    "content-type",
    "content-length",
    "host",
    "cookie",
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
    "origin",
];

/// A server's token and headers. After an OAuth sign-in, `token` is the access token and
/// `oauth` what refreshing and revoking it needs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Credentials {
    pub token: Option<String>,
    pub headers: Vec<(String, String)>,
    pub oauth: Option<super::oauth::Grant>,
}

impl Credentials {
    pub fn new(token: &str, headers: Vec<(String, String)>) -> Self {
        let token = Some(token.trim().to_string()).filter(|t| !t.is_empty());
        Self {
            token,
            headers,
            oauth: None,
        }
    }

    /// Read leniently from storage: a string is a token (how tokens were first kept), an
    /// object `{token, headers: [[name, value]…]}`; damaged parts are left out.
    pub fn from_stored(value: &Value) -> Self {
        if let Some(token) = value.as_str() {
            return Self::new(token, Vec::new());
        }
        let token = value.get("token").and_then(Value::as_str).unwrap_or("");
        let headers = value
            .get("headers")
            .and_then(Value::as_array)
            .map(|pairs| {
                pairs
                    .iter()
                    .filter_map(|p| Some((p.get(0)?.as_str()?, p.get(1)?.as_str()?)))
                    .filter(|(k, v)| check_header(k, v).is_ok())
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .take(MAX_HEADERS)
                    .collect()
            })
            .unwrap_or_default();
        Self {
            oauth: value
                .get("oauth")
                .and_then(|g| crate::json::from_value(g.clone()).ok()),
            ..Self::new(token, headers)
        }
    }

    /// The stored form: a plain token string when there are no headers (as before).
    pub fn to_stored(&self) -> Value {
        if self.headers.is_empty() && self.oauth.is_none() {
            return json!(self.token.clone().unwrap_or_default());
        }
        match &self.oauth {
            Some(grant) => json!({"token": self.token, "headers": self.headers, "oauth": grant}),
            None => json!({"token": self.token, "headers": self.headers}),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.token.is_none() && self.headers.is_empty()
    }

    /// The values worth masking in anything a server says back: the token and the headers'.
    pub fn secrets(&self) -> Vec<String> {
        self.token
            .iter()
            .cloned()
            .chain(self.headers.iter().map(|(_, v)| v.clone()))
            .chain(self.oauth.iter().filter_map(|g| g.refresh.clone()))
            .collect()
    }

    /// What Settings may show of the headers: their names.
    pub fn header_names(&self) -> Vec<String> {
        self.headers.iter().map(|(k, _)| k.clone()).collect()
    }
}

/// An MCP server as Settings → Tools → Add MCP server names it: where it is and how to sign
/// in, as the user typed them. Test and Save both read it through [`McpEndpoint::checked`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct McpEndpoint {
    pub url: String,
    #[serde(default)]
    pub token: String,
    /// "More headers": one `Name: value` a line.
    #[serde(default)]
    pub headers: String,
    /// Sign in with OAuth (the server asked for it) instead of a token.
    #[serde(default)]
    pub sign_in: bool,
    /// A client id the user pasted, for an authorization server that does not let Tandem
    /// register itself (no Dynamic Client Registration). Not a secret: a public client.
    #[serde(default)]
    pub client_id: String,
}

impl McpEndpoint {
    /// The URL as it will be reached and the credentials to send, or the sentence saying
    /// what is wrong with what the user typed (the URL first).
    pub fn checked(&self) -> Result<(String, Credentials), String> {
        let url = super::check_url(&self.url)?;
        let headers = parse_headers(&self.headers)?;
        Ok((url, Credentials::new(&self.token, headers)))
    }
}

/// The user's "More headers" text, one `Name: value` per line (blank lines skipped), or the
/// sentence saying which line is wrong.
pub fn parse_headers(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut headers: Vec<(String, String)> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let Some((name, value)) = line.split_once(':') else {
            return Err(format!(
                "Header line {} has no ':' (write one header a line, as Name: value).",
                n + 1
            ));
        };
        let (name, value) = (name.trim(), value.trim());
        check_header(name, value).map_err(|why| format!("Header line {}: {why}", n + 1))?;
        if headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name)) {
            return Err(format!("Header line {}: {name} is given twice.", n + 1));
        }
        headers.push((name.to_string(), value.to_string()));
    }
    if headers.len() > MAX_HEADERS {
        return Err(format!("At most {MAX_HEADERS} headers can be given."));
    }
    Ok(headers)
}

fn check_header(name: &str, value: &str) -> Result<(), String> {
    // RFC 9110 token characters.
    let token_char = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if name.is_empty() || !name.chars().all(token_char) {
        return Err("the name may hold only letters, digits and - (like X-Api-Key).".into());
    }
    if RESERVED.iter().any(|r| r.eq_ignore_ascii_case(name))
        || name.to_ascii_lowercase().starts_with("sec-")
        || name.to_ascii_lowercase().starts_with("proxy-")
    {
        return Err(format!(
            "{name} is set by Tandem or the browser (give a token in the Bearer token field)."
        ));
    }
    if value.is_empty() || value.chars().count() > MAX_VALUE_CHARS {
        return Err(format!(
            "{name} needs a value (at most {MAX_VALUE_CHARS} characters)."
        ));
    }
    if value.chars().any(|c| c.is_control() && c != '\t') {
        return Err(format!("{name}'s value holds a control character."));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endpoint_is_checked_url_first_then_headers() {
        let endpoint = |url: &str, headers: &str| McpEndpoint {
            url: url.into(),
            token: " t-1 ".into(),
            headers: headers.into(),
            sign_in: false,
            client_id: String::new(),
        };
        let (url, credentials) = endpoint("https://mcp.example/mcp", "X-Team: blue")
            .checked()
            .expect("a good endpoint");
        assert_eq!(url, "https://mcp.example/mcp");
        assert_eq!(
            credentials,
            Credentials::new("t-1", vec![("X-Team".into(), "blue".into())])
        );
        let both_wrong = endpoint("ftp://mcp.example", "no colon");
        assert_eq!(
            both_wrong.checked().map(|_| ()),
            Err(super::super::check_url("ftp://mcp.example").unwrap_err())
        );
        let bad_header = endpoint("https://mcp.example/mcp", "no colon");
        assert_eq!(
            bad_header.checked().map(|_| ()),
            Err(parse_headers("no colon").unwrap_err())
        );
    }

    #[test]
    fn header_lines_are_read_and_wrong_ones_named() {
        let h = parse_headers("X-Api-Key: k-123\n\n  X-Team : blue  \n").unwrap();
        assert_eq!(
            h,
            vec![
                ("X-Api-Key".to_string(), "k-123".to_string()),
                ("X-Team".to_string(), "blue".to_string())
            ]
        );
        let err = |t: &str| parse_headers(t).unwrap_err();
        assert!(err("X-Api-Key k").contains("line 1 has no ':'"));
        assert!(
            err("a: 1\nAuthorization: Bearer x").contains("line 2: Authorization is set by Tandem")
        );
        assert!(err("Mcp-Session-Id: 1").contains("set by Tandem"));
        assert!(err("Bad Name: 1").contains("only letters"));
        assert!(err("X-A: 1\nx-a: 2").contains("given twice"));
        assert!(err("X-A:").contains("needs a value"));
        let many: String = (0..17).map(|i| format!("X-{i}: v\n")).collect();
        assert!(err(&many).contains("At most 16"));
    }

    #[test]
    fn credentials_round_trip_and_old_tokens_still_read() {
        let old = Credentials::from_stored(&json!("secret-token-abcd"));
        assert_eq!(old.token.as_deref(), Some("secret-token-abcd"));
        assert_eq!(
            old.to_stored(),
            json!("secret-token-abcd"),
            "unchanged shape"
        );
        let both = Credentials::new("t", vec![("X-Api-Key".into(), "k".into())]);
        assert_eq!(Credentials::from_stored(&both.to_stored()), both);
        assert_eq!(both.header_names(), vec!["X-Api-Key"]);
        // Damage is left out, the rest kept.
        let damaged =
            json!({"token": 5, "headers": [["X-Ok", "1"], ["Bad Name", "2"], [1, 2], "x"]});
        let read = Credentials::from_stored(&damaged);
        assert_eq!(read.token, None);
        assert_eq!(read.headers, vec![("X-Ok".to_string(), "1".to_string())]);
        assert!(Credentials::from_stored(&json!(null)).is_empty());
    }
}
