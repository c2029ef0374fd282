//! Signing in to an MCP server with OAuth 2.1 (the MCP authorization specification), at run
//! time: the metadata fetches, client registration, the browser window, the token requests.
//! What is fetched, and how each answer is read and checked, is `tandem_core::mcp::oauth`.
//!
//! The window is `chrome.identity.launchWebAuthFlow`, not a tab Tandem watches: Chrome opens
//! the authorization server's page in a window of its own and hands back the redirect to
//! `https://<extension id>.chromiumapp.org/…` without that URL ever loading, so no page (and
//! no other extension watching tabs) sees the code, and Tandem needs no `tabs`/`webNavigation`
//! listener for it. It works in headless Chromium too (measured: the redirect comes back in
//! about 130 ms when the server signs in at once), which is what the tests run.
//!
//! A Client ID Metadata Document (a client id that is an https URL the server fetches) needs
//! a web address Tandem serves, which an extension has not: Tandem registers itself by
//! Dynamic Client Registration instead; a server that offers neither gets the client id the
//! user pastes from the server's settings.
//!
//! Tokens are secrets like API keys: kept with the server's credentials in
//! `chrome.storage.local` (`crate::mcp`), sent only to the server they were issued for and to
//! the authorization server's own endpoints, never logged.

use js_sys::Uint8Array;
use serde_json::Value;
use tandem_core::mcp::oauth::{self, AuthServer, Grant, OAuthError, Pending};
use tandem_core::mcp::Credentials;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Request, RequestInit, Response};

use crate::chrome;

#[wasm_bindgen(inline_js = r"
export function random_bytes(n) { return crypto.getRandomValues(new Uint8Array(n)); }
export function sha256(text) {
    return crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)).then((b) => new Uint8Array(b));
}
export function redirect_url() { return chrome.identity.getRedirectURL('mcp'); }
export function web_auth_flow(url) { return chrome.identity.launchWebAuthFlow({ url, interactive: true }); }
")]
extern "C" {
    fn random_bytes(n: u32) -> Uint8Array;
    fn sha256(text: &str) -> js_sys::Promise;
    #[wasm_bindgen(catch)]
    fn redirect_url() -> Result<String, JsValue>;
    #[wasm_bindgen(catch)]
    fn web_auth_flow(url: &str) -> Result<js_sys::Promise, JsValue>;
}

fn random(n: u32) -> String {
    oauth::base64url(&random_bytes(n).to_vec())
}

/// A fetch of `url` answered with JSON: the status and the document.
async fn send(
    method: &str,
    url: &str,
    content_type: Option<&str>,
    body: Option<&str>,
) -> Result<(u16, Value), String> {
    let failed = || format!("Tandem could not reach {url}.");
    let init = RequestInit::new();
    init.set_method(method);
    let headers = web_sys::Headers::new().map_err(|_| failed())?;
    headers
        .append("Accept", "application/json")
        .map_err(|_| failed())?;
    if let Some(t) = content_type {
        headers.append("Content-Type", t).map_err(|_| failed())?;
    }
    init.set_headers(&headers);
    if let Some(b) = body {
        init.set_body(&JsValue::from_str(b));
    }
    // A redirect could take a token request to another host: not followed.
    init.set_redirect(web_sys::RequestRedirect::Error);
    let request = Request::new_with_str_and_init(url, &init).map_err(|_| failed())?;
    let response: Response = JsFuture::from(chrome::fetch_with_request(&request))
        .await
        .map_err(|_| failed())?
        .unchecked_into();
    let status = response.status();
    let text = crate::http::body_text(&response).await;
    let doc = tandem_core::json::from_str::<Value>(&text).unwrap_or(Value::Null);
    Ok((status, doc))
}

/// The first of `urls` that answers 200 with a JSON object.
async fn first_document(urls: &[String]) -> Option<(String, Value)> {
    for url in urls {
        if let Ok((200, doc)) = send("GET", url, None, None).await {
            if doc.is_object() {
                return Some((url.clone(), doc));
            }
        }
    }
    None
}

/// Signs in to the MCP server at `url`, whose 401 carried `challenge` (the
/// `WWW-Authenticate` header): discovery, registration, the browser window, the tokens.
/// `client_id`: the one the user pasted, used instead of registering (a server without
/// Dynamic Client Registration).
pub async fn sign_in(
    url: &str,
    challenge: Option<&str>,
    client_id: Option<&str>,
) -> Result<Credentials, String> {
    let challenge = challenge.and_then(oauth::read_challenge);
    let urls = oauth::resource_metadata_urls(url, challenge.as_ref());
    let (prm_url, prm) = first_document(&urls).await.ok_or_else(|| {
        format!("The MCP server at {url} asks to sign in, but Tandem found no sign-in information for it (OAuth protected resource metadata).")
    })?;
    let resource = oauth::read_resource_metadata(&prm, &prm_url, url).map_err(|e| e.to_string())?;
    let issuer = resource.authorization_server.clone();
    let (as_url, as_doc) = first_document(&oauth::auth_server_metadata_urls(&issuer))
        .await
        .ok_or_else(|| {
            format!("Tandem could not read the authorization server's metadata at {issuer}.")
        })?;
    let server = oauth::read_auth_server(&as_doc, &as_url, &issuer).map_err(|e| e.to_string())?;
    let redirect_uri = redirect_url()
        // `identity` is optional: the panel's Sign in buttons ask for it. Absent (removed on
        // chrome://extensions, say), chrome.identity is undefined.
        .map_err(|_| "Chrome has not allowed Tandem to open a sign-in window: press Sign in again and allow it.".to_string())?;
    let client_id = match client_id.map(str::trim).filter(|c| !c.is_empty()) {
        Some(pasted) => pasted.to_string(),
        None => register(&server, &redirect_uri).await?,
    };
    let verifier = random(32);
    let digest = JsFuture::from(sha256(&verifier))
        .await
        .map_err(|_| "Tandem could not prepare the sign-in (SHA-256).".to_string())?;
    let challenge_value = oauth::base64url(&Uint8Array::new(&digest).to_vec());
    let pending = Pending {
        state: random(16),
        verifier,
        client_id: client_id.clone(),
        redirect_uri,
        resource: resource.resource.clone(),
    };
    let scope = challenge
        .as_ref()
        .and_then(|c| c.scope.clone())
        .or_else(|| (!resource.scopes.is_empty()).then(|| resource.scopes.join(" ")));
    let auth_url = oauth::authorization_url(&server, &pending, &challenge_value, scope.as_deref());
    let flow = web_auth_flow(&auth_url)
        .map_err(|_| "Chrome could not open the sign-in window.".to_string())?;
    let redirected = JsFuture::from(flow)
        .await
        .ok()
        .and_then(|v| v.as_string())
        .ok_or_else(|| "The sign-in window was closed before the sign-in finished.".to_string())?;
    let code = oauth::read_redirect(&redirected, &pending, &server).map_err(|e| e.to_string())?;
    let (_, doc) = send(
        "POST",
        &server.token_endpoint,
        Some("application/x-www-form-urlencoded"),
        Some(&oauth::token_body(&pending, &code)),
    )
    .await?;
    let tokens = oauth::read_tokens(&doc, now(), None).map_err(|e| e.to_string())?;
    Ok(Credentials {
        token: Some(tokens.access),
        headers: Vec::new(),
        oauth: Some(Grant {
            server,
            client_id,
            resource: resource.resource,
            refresh: tokens.refresh,
            expires_at_ms: tokens.expires_at_ms,
            lifetime_ms: tokens.lifetime_ms,
        }),
    })
}

/// Dynamic Client Registration (RFC 7591), Tandem as a public client.
async fn register(server: &AuthServer, redirect_uri: &str) -> Result<String, String> {
    let Some(endpoint) = &server.registration_endpoint else {
        return Err(OAuthError::NeedsClientId.to_string());
    };
    let body = oauth::registration_body(redirect_uri).to_string();
    let (status, doc) = send("POST", endpoint, Some("application/json"), Some(&body)).await?;
    if !(200..300).contains(&status) {
        return Err(format!(
            "The authorization server refused to register Tandem (HTTP {status})."
        ));
    }
    oauth::read_registration(&doc).map_err(|e| e.to_string())
}

fn now() -> u64 {
    js_sys::Date::now().max(0.0) as u64
}

/// A new access token from the refresh token, or why not (then the user signs in again).
pub async fn refresh(credentials: &Credentials) -> Result<Credentials, String> {
    let grant = credentials
        .oauth
        .as_ref()
        .ok_or("This server was not signed in to.")?;
    let refresh = grant
        .refresh
        .as_deref()
        .ok_or("The sign-in cannot be renewed.")?;
    let (_, doc) = send(
        "POST",
        &grant.server.token_endpoint,
        Some("application/x-www-form-urlencoded"),
        Some(&oauth::refresh_body(
            refresh,
            &grant.client_id,
            &grant.resource,
        )),
    )
    .await?;
    let tokens = oauth::read_tokens(&doc, now(), Some(refresh)).map_err(|e| e.to_string())?;
    Ok(Credentials {
        token: Some(tokens.access),
        headers: credentials.headers.clone(),
        oauth: Some(Grant {
            refresh: tokens.refresh,
            expires_at_ms: tokens.expires_at_ms,
            lifetime_ms: tokens.lifetime_ms,
            ..grant.clone()
        }),
    })
}

/// Whether the access token should be refreshed before it is used now.
pub fn due(credentials: &Credentials) -> bool {
    credentials.oauth.as_ref().is_some_and(|g| g.due(now()))
}

/// Sign out / Remove: the tokens are revoked where the server offers revocation (RFC 7009);
/// whatever it answers, Tandem forgets them.
pub async fn revoke(credentials: &Credentials) {
    let Some(grant) = &credentials.oauth else {
        return;
    };
    let Some(endpoint) = &grant.server.revocation_endpoint else {
        return;
    };
    let tokens = [
        (grant.refresh.as_deref(), "refresh_token"),
        (credentials.token.as_deref(), "access_token"),
    ];
    for (token, hint) in tokens {
        if let Some(t) = token {
            let _ = send(
                "POST",
                endpoint,
                Some("application/x-www-form-urlencoded"),
                Some(&oauth::revocation_body(t, hint, &grant.client_id)),
            )
            .await;
        }
    }
}

/// The `WWW-Authenticate` of a 401, when it asks for a Bearer token with
/// `resource_metadata` (the server signs people in with OAuth).
pub fn sign_in_challenge(response: &Response) -> Option<String> {
    let header = response.headers().get("www-authenticate").ok().flatten()?;
    oauth::read_challenge(&header)?.resource_metadata?;
    Some(header)
}
