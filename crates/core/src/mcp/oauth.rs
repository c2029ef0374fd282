//! Signing in to an MCP server with OAuth 2.1, as the MCP authorization specification
//! (<https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization>) has it,
//! pure: what to fetch in which order, how each answer is read and checked, and the URLs and
//! form bodies the worker sends. The worker does the fetches, the browser window
//! (`chrome.identity.launchWebAuthFlow`) and the SHA-256 of the PKCE verifier (WebCrypto).
//!
//! The order:
//! 1. A 401 whose `WWW-Authenticate: Bearer …` names `resource_metadata` ([`read_challenge`]):
//!    the server signs people in; without it the well-known URLs are tried
//!    ([`resource_metadata_urls`]).
//! 2. Protected Resource Metadata (RFC 9728, [`read_resource_metadata`]): which authorization
//!    server, for which resource (it must be this server).
//! 3. Authorization Server Metadata (RFC 8414, or OpenID discovery;
//!    [`auth_server_metadata_urls`], [`read_auth_server`]): its endpoints, checked to be the
//!    issuer's own (a document pointing them at another host is refused) and S256 offered.
//! 4. A client: a Client ID Metadata Document when the server says it takes one, else
//!    Dynamic Client Registration (RFC 7591, [`registration_body`], [`read_registration`]),
//!    else a client id the user pastes.
//! 5. The authorization code with PKCE S256, `state` and `resource` (RFC 8707)
//!    ([`authorization_url`]); the redirect is read by [`read_redirect`], which checks
//!    `state` and `iss` (RFC 9207).
//! 6. Tokens ([`token_body`], [`refresh_body`], [`read_tokens`]); revoked on Sign out
//!    ([`revocation_body`]).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::url::form_decode;

/// Why signing in cannot go on, as a sentence for Settings.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OAuthError {
    #[error("The server's sign-in information at {url} is not usable: {why}.")]
    BadMetadata { url: String, why: String },
    #[error("The authorization server's metadata points its {endpoint} at {found}, another site than the server itself ({issuer}): Tandem refuses to send sign-in codes or tokens there.")]
    ForeignEndpoint {
        endpoint: String,
        found: String,
        issuer: String,
    },
    #[error(
        "The authorization server does not offer PKCE with S256, which signing in safely needs."
    )]
    NoPkce,
    #[error("The sign-in answer does not belong to the sign-in Tandem started (its state differs): it was ignored.")]
    StateMismatch,
    #[error("The sign-in answer came from {found}, not from the authorization server Tandem asked ({expected}): it was ignored.")]
    IssuerMismatch { expected: String, found: String },
    #[error("The authorization server refused the sign-in: {0}.")]
    Refused(String),
    #[error("The authorization server's answer has no {0}.")]
    Missing(String),
    #[error("The server does not allow registering Tandem by itself: paste a client id from the server's settings.")]
    NeedsClientId,
}

/// What a 401's `WWW-Authenticate: Bearer …` says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Challenge {
    pub resource_metadata: Option<String>,
    pub scope: Option<String>,
    pub error: Option<String>,
}

/// Reads a `WWW-Authenticate` header: its Bearer challenge's parameters (quoted or not), or
/// `None` when it has no Bearer challenge.
pub fn read_challenge(header: &str) -> Option<Challenge> {
    let at = header.to_ascii_lowercase().find("bearer")?;
    let mut rest = &header[at + "bearer".len()..];
    let mut c = Challenge::default();
    loop {
        rest = rest.trim_start_matches([' ', ',', '\t']);
        let Some(eq) = rest.find('=') else { break };
        let key = rest[..eq].trim().to_ascii_lowercase();
        if key.contains(' ') {
            // The next scheme's name: this challenge ended.
            break;
        }
        rest = &rest[eq + 1..];
        let value = if let Some(quoted) = rest.strip_prefix('"') {
            let end = quoted.find('"').unwrap_or(quoted.len());
            let v = quoted[..end].to_string();
            rest = quoted.get(end + 1..).unwrap_or("");
            v
        } else {
            let end = rest.find([',', ' ']).unwrap_or(rest.len());
            let v = rest[..end].to_string();
            rest = &rest[end..];
            v
        };
        match key.as_str() {
            "resource_metadata" => c.resource_metadata = Some(value),
            "scope" => c.scope = Some(value),
            "error" => c.error = Some(value),
            _ => {}
        }
    }
    Some(c)
}

/// Splits `https://host:port/path?q` into (`https://host:port`, `/path`).
fn split_origin(url: &str) -> Option<(String, String)> {
    let (scheme, rest) = url.split_once("://")?;
    if scheme != "https" && scheme != "http" {
        return None;
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let host = &rest[..end];
    if host.is_empty() || host.contains('@') {
        return None;
    }
    let path = rest[end..].split(['?', '#']).next().unwrap_or("");
    Some((
        format!("{}://{}", scheme, host.to_ascii_lowercase()),
        path.trim_end_matches('/').to_string(),
    ))
}

/// The origin (`scheme://host:port`) of a URL, lower-cased.
pub fn origin_of(url: &str) -> Option<String> {
    split_origin(url).map(|(o, _)| o)
}

/// Whether a URL may carry codes and tokens: https, or http to this machine (a server on
/// the user's own computer).
fn secure_enough(url: &str) -> bool {
    let Some(origin) = origin_of(url) else {
        return false;
    };
    if origin.starts_with("https://") {
        return true;
    }
    let host = origin.trim_start_matches("http://");
    let host = host.rsplit_once(':').map_or(host, |(h, _)| h);
    matches!(host, "127.0.0.1" | "localhost" | "[::1]")
}

/// Where the Protected Resource Metadata may be: the URL the 401 named, else the well-known
/// URL for the server's path, then for its root (RFC 9728 §3, as the MCP spec orders them).
pub fn resource_metadata_urls(server_url: &str, challenge: Option<&Challenge>) -> Vec<String> {
    let mut urls = Vec::new();
    if let Some(u) = challenge.and_then(|c| c.resource_metadata.clone()) {
        urls.push(u);
    }
    if let Some((origin, path)) = split_origin(server_url) {
        if !path.is_empty() {
            urls.push(format!(
                "{origin}/.well-known/oauth-protected-resource{path}"
            ));
        }
        urls.push(format!("{origin}/.well-known/oauth-protected-resource"));
    }
    urls.dedup();
    urls
}

/// What the server's Protected Resource Metadata says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceMetadata {
    /// The resource identifier, sent as `resource` (RFC 8707).
    pub resource: String,
    pub authorization_server: String,
    pub scopes: Vec<String>,
}

/// Reads Protected Resource Metadata fetched from `url` for the MCP server at `server_url`.
/// Its `resource` must be the server (its origin, and a prefix of its path), so a document
/// for another resource is not used to sign in here.
pub fn read_resource_metadata(
    doc: &Value,
    url: &str,
    server_url: &str,
) -> Result<ResourceMetadata, OAuthError> {
    let bad = |why: &str| OAuthError::BadMetadata {
        url: url.to_string(),
        why: why.to_string(),
    };
    let resource = doc
        .get("resource")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("it names no resource"))?;
    let (r_origin, r_path) =
        split_origin(resource).ok_or_else(|| bad("its resource is not a URL"))?;
    let (s_origin, s_path) = split_origin(server_url).ok_or_else(|| bad("the server URL"))?;
    if r_origin != s_origin || !s_path.starts_with(&r_path) {
        return Err(bad(&format!("it describes {resource}, not this server")));
    }
    let authorization_server = doc
        .get("authorization_servers")
        .and_then(Value::as_array)
        .and_then(|a| a.iter().find_map(Value::as_str))
        .ok_or_else(|| bad("it names no authorization server"))?;
    if !secure_enough(authorization_server) {
        return Err(bad("its authorization server is not an https URL"));
    }
    let scopes = doc
        .get("scopes_supported")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    Ok(ResourceMetadata {
        resource: resource.to_string(),
        authorization_server: authorization_server.trim_end_matches('/').to_string(),
        scopes,
    })
}

/// Where the authorization server's metadata may be, in the MCP spec's order: RFC 8414 then
/// OpenID discovery, path-inserted first for an issuer with a path.
pub fn auth_server_metadata_urls(issuer: &str) -> Vec<String> {
    let Some((origin, path)) = split_origin(issuer) else {
        return Vec::new();
    };
    if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    }
}

/// The authorization server, as its metadata describes it (checked).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthServer {
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    #[serde(default)]
    pub registration_endpoint: Option<String>,
    #[serde(default)]
    pub revocation_endpoint: Option<String>,
    /// The server takes a URL as `client_id` (a Client ID Metadata Document).
    #[serde(default)]
    pub client_id_documents: bool,
    /// The server puts `iss` in its redirect (RFC 9207), so it must be there.
    #[serde(default)]
    pub iss_in_redirect: bool,
}

/// Reads Authorization Server Metadata fetched from `url` for `issuer`. Refused: an `issuer`
/// other than the one asked for (RFC 8414 §3.3), an endpoint on another origin than the
/// issuer's (codes, verifiers and tokens would go to a host the user never chose), an
/// endpoint that is not https, and a server without PKCE S256.
pub fn read_auth_server(doc: &Value, url: &str, issuer: &str) -> Result<AuthServer, OAuthError> {
    let bad = |why: String| OAuthError::BadMetadata {
        url: url.to_string(),
        why,
    };
    let text = |k: &str| doc.get(k).and_then(Value::as_str).map(str::to_string);
    let said = text("issuer").ok_or_else(|| bad("it names no issuer".into()))?;
    if said.trim_end_matches('/') != issuer.trim_end_matches('/') {
        return Err(bad(format!("it is for the issuer {said}, not {issuer}")));
    }
    let home = origin_of(issuer).ok_or_else(|| bad("the issuer is not a URL".into()))?;
    let endpoint = |k: &str, required: bool| -> Result<Option<String>, OAuthError> {
        let Some(u) = text(k) else {
            return if required {
                Err(bad(format!("it has no {k}")))
            } else {
                Ok(None)
            };
        };
        if origin_of(&u).as_deref() != Some(home.as_str()) {
            return Err(OAuthError::ForeignEndpoint {
                endpoint: k.to_string(),
                found: origin_of(&u).unwrap_or(u),
                issuer: home.clone(),
            });
        }
        if !secure_enough(&u) {
            return Err(bad(format!("its {k} is not an https URL")));
        }
        Ok(Some(u))
    };
    let authorization_endpoint = endpoint("authorization_endpoint", true)?.unwrap_or_default();
    let token_endpoint = endpoint("token_endpoint", true)?.unwrap_or_default();
    let registration_endpoint = endpoint("registration_endpoint", false)?;
    let revocation_endpoint = endpoint("revocation_endpoint", false)?;
    let s256 = doc
        .get("code_challenge_methods_supported")
        .and_then(Value::as_array)
        .is_some_and(|m| m.iter().any(|x| x.as_str() == Some("S256")));
    if !s256 {
        return Err(OAuthError::NoPkce);
    }
    let flag = |k: &str| doc.get(k).and_then(Value::as_bool) == Some(true);
    Ok(AuthServer {
        issuer: said,
        authorization_endpoint,
        token_endpoint,
        registration_endpoint,
        revocation_endpoint,
        client_id_documents: flag("client_id_metadata_document_supported"),
        iss_in_redirect: flag("authorization_response_iss_parameter_supported"),
    })
}

/// `application/x-www-form-urlencoded` of a value (RFC 3986 unreserved kept).
pub fn form_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn form(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", form_encode(k), form_encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// Base64url without padding (PKCE, RFC 7636 §4.2).
pub fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

/// One sign-in under way: what the redirect and the token request must match.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pending {
    pub state: String,
    pub verifier: String,
    pub client_id: String,
    pub redirect_uri: String,
    pub resource: String,
}

/// The authorization request URL (code flow, PKCE S256, `resource`, `state`).
pub fn authorization_url(
    server: &AuthServer,
    pending: &Pending,
    challenge: &str,
    scope: Option<&str>,
) -> String {
    let mut pairs = vec![
        ("response_type", "code"),
        ("client_id", pending.client_id.as_str()),
        ("redirect_uri", pending.redirect_uri.as_str()),
        ("code_challenge", challenge),
        ("code_challenge_method", "S256"),
        ("state", pending.state.as_str()),
        ("resource", pending.resource.as_str()),
    ];
    if let Some(s) = scope.filter(|s| !s.is_empty()) {
        pairs.push(("scope", s));
    }
    let sep = if server.authorization_endpoint.contains('?') {
        '&'
    } else {
        '?'
    };
    format!("{}{sep}{}", server.authorization_endpoint, form(&pairs))
}

fn query_param(url: &str, key: &str) -> Option<String> {
    let query = url.split_once('?')?.1.split('#').next()?;
    query.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (k == key).then(|| form_decode(v))
    })
}

/// Reads the redirect the browser caught: the code, after checking `state` (this sign-in's)
/// and `iss` (RFC 9207: present when the server says it sends it, and then its issuer).
pub fn read_redirect(
    url: &str,
    pending: &Pending,
    server: &AuthServer,
) -> Result<String, OAuthError> {
    if query_param(url, "state").as_deref() != Some(pending.state.as_str()) {
        return Err(OAuthError::StateMismatch);
    }
    match query_param(url, "iss") {
        Some(iss) if iss.trim_end_matches('/') != server.issuer.trim_end_matches('/') => {
            return Err(OAuthError::IssuerMismatch {
                expected: server.issuer.clone(),
                found: clip(&iss, 100),
            })
        }
        None if server.iss_in_redirect => {
            return Err(OAuthError::IssuerMismatch {
                expected: server.issuer.clone(),
                found: "an answer without iss".into(),
            })
        }
        _ => {}
    }
    if let Some(error) = query_param(url, "error") {
        let description = query_param(url, "error_description").unwrap_or_default();
        return Err(OAuthError::Refused(clip(
            format!("{error} {description}").trim(),
            200,
        )));
    }
    query_param(url, "code")
        .filter(|c| !c.is_empty())
        .ok_or_else(|| OAuthError::Missing("code".into()))
}

fn clip(s: &str, max: usize) -> String {
    crate::tools::protocol::clip(s, max)
}

/// The token request for the code.
pub fn token_body(pending: &Pending, code: &str) -> String {
    form(&[
        ("grant_type", "authorization_code"),
        ("code", code),
        ("redirect_uri", &pending.redirect_uri),
        ("client_id", &pending.client_id),
        ("code_verifier", &pending.verifier),
        ("resource", &pending.resource),
    ])
}

/// The refresh request.
pub fn refresh_body(refresh_token: &str, client_id: &str, resource: &str) -> String {
    form(&[
        ("grant_type", "refresh_token"),
        ("refresh_token", refresh_token),
        ("client_id", client_id),
        ("resource", resource),
    ])
}

/// The revocation request (RFC 7009).
pub fn revocation_body(token: &str, hint: &str, client_id: &str) -> String {
    form(&[
        ("token", token),
        ("token_type_hint", hint),
        ("client_id", client_id),
    ])
}

/// Tokens, as kept (secrets: `storage.local`, the worker only).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tokens {
    pub access: String,
    #[serde(default)]
    pub refresh: Option<String>,
    /// When the access token stops working (ms since the epoch), if the server said.
    #[serde(default)]
    pub expires_at_ms: Option<u64>,
    /// How long it was given for (the answer's `expires_in`), which decides how early it is
    /// renewed.
    #[serde(default)]
    pub lifetime_ms: Option<u64>,
}

/// What a signed-in server's credentials keep besides the access token: where and as whom
/// to refresh and revoke it. The refresh token is a secret like the access token.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Grant {
    pub server: AuthServer,
    pub client_id: String,
    pub resource: String,
    #[serde(default)]
    pub refresh: Option<String>,
    #[serde(default)]
    pub expires_at_ms: Option<u64>,
    /// See [`Tokens::lifetime_ms`]; absent in grants stored before it was kept.
    #[serde(default)]
    pub lifetime_ms: Option<u64>,
}

impl Grant {
    /// Whether the access token should be refreshed before it is used at `now_ms`.
    pub fn due(&self, now_ms: u64) -> bool {
        self.refresh.is_some() && due(self.expires_at_ms, self.lifetime_ms, now_ms)
    }
}

/// A refresh is due at most this long before expiry, so a call never starts with a dying
/// token…
pub const REFRESH_EARLY_MS: u64 = 60_000;
/// …and at most this share of the token's lifetime before it: a token given for 30 s is
/// renewed 6 s before its end, not before every call (a fixed minute ahead would).
const REFRESH_EARLY_SHARE: u64 = 5;

fn due(expires_at_ms: Option<u64>, lifetime_ms: Option<u64>, now_ms: u64) -> bool {
    let early = lifetime_ms.map_or(REFRESH_EARLY_MS, |l| {
        (l / REFRESH_EARLY_SHARE).min(REFRESH_EARLY_MS)
    });
    expires_at_ms.is_some_and(|at| now_ms.saturating_add(early) >= at)
}

impl Tokens {
    pub fn due(&self, now_ms: u64) -> bool {
        due(self.expires_at_ms, self.lifetime_ms, now_ms)
    }
}

/// Reads a token response; `kept_refresh` stays when a refresh answer gives no new one.
pub fn read_tokens(
    doc: &Value,
    now_ms: u64,
    kept_refresh: Option<&str>,
) -> Result<Tokens, OAuthError> {
    if let Some(e) = doc.get("error").and_then(Value::as_str) {
        let d = doc
            .get("error_description")
            .and_then(Value::as_str)
            .unwrap_or("");
        return Err(OAuthError::Refused(clip(format!("{e} {d}").trim(), 200)));
    }
    let access = doc
        .get("access_token")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| OAuthError::Missing("access_token".into()))?;
    let kind = doc.get("token_type").and_then(Value::as_str).unwrap_or("");
    if !kind.eq_ignore_ascii_case("bearer") {
        return Err(OAuthError::Missing("Bearer token_type".into()));
    }
    let refresh = doc
        .get("refresh_token")
        .and_then(Value::as_str)
        .map(str::to_string)
        .or_else(|| kept_refresh.map(str::to_string));
    let lifetime_ms = doc
        .get("expires_in")
        .and_then(Value::as_u64)
        .map(|s| s.saturating_mul(1000));
    Ok(Tokens {
        access: access.to_string(),
        refresh,
        expires_at_ms: lifetime_ms.map(|l| now_ms.saturating_add(l)),
        lifetime_ms,
    })
}

/// The Dynamic Client Registration request (RFC 7591): a public client (PKCE, no secret)
/// redirecting to `redirect_uri`.
pub fn registration_body(redirect_uri: &str) -> Value {
    crate::json!({
        "client_name": "Tandem",
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    })
}

/// The `client_id` a registration answer gave.
pub fn read_registration(doc: &Value) -> Result<String, OAuthError> {
    doc.get("client_id")
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
        .map(str::to_string)
        .ok_or_else(|| OAuthError::Missing("client_id".into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn server() -> AuthServer {
        read_auth_server(
            &json!({
                "issuer": "https://auth.example",
                "authorization_endpoint": "https://auth.example/authorize",
                "token_endpoint": "https://auth.example/token",
                "registration_endpoint": "https://auth.example/register",
                "revocation_endpoint": "https://auth.example/revoke",
                "code_challenge_methods_supported": ["S256"],
                "authorization_response_iss_parameter_supported": true
            }),
            "https://auth.example/.well-known/oauth-authorization-server",
            "https://auth.example/",
        )
        .unwrap()
    }

    fn pending() -> Pending {
        Pending {
            state: "st-1".into(),
            verifier: "v".repeat(43),
            client_id: "client 1".into(),
            redirect_uri: "https://abc.chromiumapp.org/mcp".into(),
            resource: "https://mcp.example/mcp".into(),
        }
    }

    #[test]
    fn a_bearer_challenge_is_read_quoted_or_not() {
        let c = read_challenge(
            r#"Bearer error="invalid_token", resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp", scope=files"#,
        )
        .unwrap();
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("https://mcp.example/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(c.scope.as_deref(), Some("files"));
        assert_eq!(c.error.as_deref(), Some("invalid_token"));
        assert_eq!(read_challenge("Basic realm=\"x\""), None);
        assert_eq!(read_challenge("Bearer"), Some(Challenge::default()));
        assert_eq!(
            resource_metadata_urls("https://mcp.example/v1/mcp", None),
            [
                "https://mcp.example/.well-known/oauth-protected-resource/v1/mcp",
                "https://mcp.example/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(
            resource_metadata_urls("https://mcp.example/mcp", Some(&c))[0],
            "https://mcp.example/.well-known/oauth-protected-resource/mcp"
        );
    }

    #[test]
    fn resource_metadata_must_describe_this_server() {
        let url = "https://mcp.example/.well-known/oauth-protected-resource/mcp";
        let doc = json!({"resource": "https://mcp.example/mcp", "authorization_servers": ["https://auth.example/"], "scopes_supported": ["files"]});
        let m = read_resource_metadata(&doc, url, "https://mcp.example/mcp").unwrap();
        assert_eq!(m.authorization_server, "https://auth.example");
        assert_eq!(m.scopes, ["files"]);
        let other = json!({"resource": "https://evil.example/mcp", "authorization_servers": ["https://auth.example"]});
        let e = read_resource_metadata(&other, url, "https://mcp.example/mcp").unwrap_err();
        assert!(e.to_string().contains("not this server"), "{e}");
        let plain = json!({"resource": "https://mcp.example/mcp", "authorization_servers": ["http://auth.example"]});
        assert!(read_resource_metadata(&plain, url, "https://mcp.example/mcp").is_err());
        assert_eq!(
            auth_server_metadata_urls("https://auth.example/tenant1"),
            [
                "https://auth.example/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example/.well-known/openid-configuration/tenant1",
                "https://auth.example/tenant1/.well-known/openid-configuration"
            ]
        );
    }

    #[test]
    fn hostile_metadata_is_refused_with_a_sentence() {
        let mut doc = json!({
            "issuer": "https://auth.example",
            "authorization_endpoint": "https://auth.example/authorize",
            "token_endpoint": "https://collector.evil/token",
            "code_challenge_methods_supported": ["S256"]
        });
        let e = read_auth_server(&doc, "u", "https://auth.example").unwrap_err();
        assert_eq!(
            e.to_string(),
            "The authorization server's metadata points its token_endpoint at https://collector.evil, another site than the server itself (https://auth.example): Tandem refuses to send sign-in codes or tokens there."
        );
        doc["token_endpoint"] = json!("https://auth.example/token");
        doc["issuer"] = json!("https://other.example");
        assert!(read_auth_server(&doc, "u", "https://auth.example")
            .unwrap_err()
            .to_string()
            .contains("not https://auth.example"));
        doc["issuer"] = json!("https://auth.example");
        doc["code_challenge_methods_supported"] = json!(["plain"]);
        assert_eq!(
            read_auth_server(&doc, "u", "https://auth.example"),
            Err(OAuthError::NoPkce)
        );
        // On the user's own machine, http is fine.
        let local = json!({
            "issuer": "http://127.0.0.1:4000",
            "authorization_endpoint": "http://127.0.0.1:4000/authorize",
            "token_endpoint": "http://127.0.0.1:4000/token",
            "code_challenge_methods_supported": ["S256"]
        });
        assert!(read_auth_server(&local, "u", "http://127.0.0.1:4000/").is_ok());
    }

    #[test]
    fn the_authorization_url_carries_pkce_state_and_resource() {
        let url = authorization_url(&server(), &pending(), "ch_AL-1", Some("files read"));
        assert_eq!(
            url,
            "https://auth.example/authorize?response_type=code&client_id=client%201&redirect_uri=https%3A%2F%2Fabc.chromiumapp.org%2Fmcp&code_challenge=ch_AL-1&code_challenge_method=S256&state=st-1&resource=https%3A%2F%2Fmcp.example%2Fmcp&scope=files%20read"
        );
    }

    #[test]
    fn the_redirect_is_checked_for_state_and_issuer() {
        let (s, p) = (server(), pending());
        let ok =
            "https://abc.chromiumapp.org/mcp?code=c%2B1&state=st-1&iss=https%3A%2F%2Fauth.example";
        assert_eq!(read_redirect(ok, &p, &s).unwrap(), "c+1");
        let wrong_state =
            "https://abc.chromiumapp.org/mcp?code=c&state=other&iss=https%3A%2F%2Fauth.example";
        assert_eq!(
            read_redirect(wrong_state, &p, &s),
            Err(OAuthError::StateMismatch)
        );
        let wrong_iss =
            "https://abc.chromiumapp.org/mcp?code=c&state=st-1&iss=https%3A%2F%2Fevil.example";
        assert!(matches!(
            read_redirect(wrong_iss, &p, &s),
            Err(OAuthError::IssuerMismatch { .. })
        ));
        let no_iss = "https://abc.chromiumapp.org/mcp?code=c&state=st-1";
        assert!(read_redirect(no_iss, &p, &s).is_err());
        let refused = "https://abc.chromiumapp.org/mcp?error=access_denied&error_description=No+thanks&state=st-1&iss=https%3A%2F%2Fauth.example";
        assert_eq!(
            read_redirect(refused, &p, &s).unwrap_err().to_string(),
            "The authorization server refused the sign-in: access_denied No thanks."
        );
    }

    #[test]
    fn tokens_are_read_and_refreshed_before_expiry() {
        let t = read_tokens(
            &json!({"access_token": "a1", "token_type": "Bearer", "expires_in": 3600, "refresh_token": "r1"}),
            1_000,
            None,
        )
        .unwrap();
        assert_eq!(t.expires_at_ms, Some(3_601_000));
        assert!(!t.due(1_000));
        assert!(t.due(3_601_000 - REFRESH_EARLY_MS));
        // A token for 30 s is renewed in its last fifth (6 s), not before every call.
        let short = read_tokens(
            &json!({"access_token": "s", "token_type": "bearer", "expires_in": 30, "refresh_token": "r"}),
            0,
            None,
        )
        .unwrap();
        assert!(!short.due(0));
        assert!(!short.due(23_999));
        assert!(short.due(24_000));
        let grant = |lifetime_ms| Grant {
            server: AuthServer {
                issuer: "https://auth.example".into(),
                authorization_endpoint: "https://auth.example/authorize".into(),
                token_endpoint: "https://auth.example/token".into(),
                registration_endpoint: None,
                revocation_endpoint: None,
                client_id_documents: false,
                iss_in_redirect: true,
            },
            client_id: "c".into(),
            resource: "https://mcp.example".into(),
            refresh: Some("r".into()),
            expires_at_ms: Some(30_000),
            lifetime_ms,
        };
        assert!(!grant(Some(30_000)).due(1_000));
        // A grant stored before lifetimes were kept: a minute ahead, as it was.
        assert!(grant(None).due(1_000));
        let again = read_tokens(
            &json!({"access_token": "a2", "token_type": "bearer"}),
            0,
            Some("r1"),
        )
        .unwrap();
        assert_eq!(again.refresh.as_deref(), Some("r1"));
        assert!(read_tokens(&json!({"error": "invalid_grant"}), 0, None)
            .unwrap_err()
            .to_string()
            .contains("invalid_grant"));
        let p = pending();
        assert_eq!(
            token_body(&p, "c 1"),
            format!("grant_type=authorization_code&code=c%201&redirect_uri=https%3A%2F%2Fabc.chromiumapp.org%2Fmcp&client_id=client%201&code_verifier={}&resource=https%3A%2F%2Fmcp.example%2Fmcp", "v".repeat(43))
        );
        assert_eq!(
            read_registration(&json!({"client_id": "abc"})).unwrap(),
            "abc"
        );
    }

    #[test]
    fn base64url_matches_rfc_7636() {
        // RFC 7636 appendix B: the S256 challenge of its verifier, from its SHA-256 bytes.
        let digest: [u8; 32] = [
            19, 211, 30, 150, 26, 26, 216, 236, 47, 22, 177, 12, 76, 152, 46, 8, 118, 168, 120,
            173, 109, 241, 68, 86, 110, 225, 137, 74, 203, 112, 249, 195,
        ];
        assert_eq!(
            base64url(&digest),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        assert_eq!(base64url(b"f"), "Zg");
        assert_eq!(base64url(b"fo"), "Zm8");
        assert_eq!(base64url(b"foo"), "Zm9v");
    }
}
