//! MCP servers, at run time: the fetches of the Streamable HTTP transport (POST a JSON-RPC
//! message, read a JSON or event-stream answer; GET the server's own event stream for
//! `list_changed`; DELETE to end a session), one session per server kept in memory (so a
//! worker restart, or a server that forgot the session, simply initializes again), and the
//! Settings commands (Test, Save, turn off, remove). What is sent and how answers read is
//! `tandem_core::mcp`; the registry the servers' tools live in is `crate::registry`'.
//!
//! The Bearer token and the user's headers are secrets like an API key: kept in
//! `chrome.storage.local` under their own key, read here only, never written into the
//! registry the panel renders (only the token's end and the headers' names are), and never
//! logged (log lines here carry sentences, which never quote them).

use std::cell::RefCell;
use std::collections::HashMap;

use js_sys::{Reflect, Uint8Array, JSON};
use serde_json::Value;
use tandem_core::json;
use tandem_core::mcp::{
    self, add_page, call_result, check_status, read_tools, rpc_error_result, token_hint,
    Credentials, McpEndpoint, McpError, Outgoing, Reader, Reply, Session, ToolsPage, TOOLS_CHANGED,
};
use tandem_core::tools::{McpServer, Run};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{spawn_local, JsFuture};
use web_sys::{AbortController, ReadableStreamDefaultReader, Request, RequestInit, Response};

use crate::chrome;

/// How long Test, Save and a listing may take before they count as unreachable.
const CONNECT_TIMEOUT_MS: i32 = 15_000;
/// How long a server with a problem is given to show it is back.
const RECHECK_TIMEOUT_MS: i32 = 2_000;
/// How long a turn waits for those rechecks: a server back on this machine answers well
/// within it; one that does not answer goes on being rechecked behind the turn.
const RECHECK_WAIT_MS: i32 = 500;
/// The longest pause before the server's event stream is opened again.
const MAX_REOPEN_DELAY_MS: i32 = 30_000;
/// Pages of `tools/list` read at most (a server paging forever is not followed).
const MAX_PAGES: usize = 20;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = crypto, js_name = randomUUID)]
    fn random_uuid() -> String;
}

thread_local! {
    /// The session with each server (by provider id), as long as this worker lives.
    static SESSIONS: RefCell<HashMap<String, Session>> = RefCell::new(HashMap::new());
    /// The open GET stream of each server, to end when it is turned off or removed.
    static LISTENING: RefCell<HashMap<String, AbortController>> = RefCell::new(HashMap::new());
    /// Servers being rechecked now: a turn does not start a second recheck of one.
    static RECHECKING: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// Where a server is and how to authenticate: from the registry and the token store.
#[derive(Clone)]
struct Server {
    id: String,
    url: String,
    credentials: Credentials,
}

// --- storage ---------------------------------------------------------------------------

async fn local_get(key: &str) -> Option<Value> {
    let text = chrome::stored_json(chrome::storage_local_get, key)
        .await
        .ok()??;
    tandem_core::json::from_str(&text).ok()
}

async fn local_set(key: &str, value: &Value) {
    let written = chrome::store_json(key, &value.to_string()).await;
    if written.is_err() {
        // The error could quote the value (a token): only the key is named.
        crate::log_error("could not save", &JsValue::from_str(key));
    }
}

async fn credentials_of(id: &str) -> Credentials {
    local_get(mcp::TOKENS_KEY)
        .await
        .and_then(|all| all.get(id).map(Credentials::from_stored))
        .unwrap_or_default()
}

async fn set_credentials(id: &str, credentials: Option<&Credentials>) {
    let mut all = local_get(mcp::TOKENS_KEY)
        .await
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({}));
    if let Some(o) = all.as_object_mut() {
        match credentials.filter(|c| !c.is_empty()) {
            Some(c) => o.insert(id.to_string(), c.to_stored()),
            None => o.remove(id),
        };
    }
    local_set(mcp::TOKENS_KEY, &all).await;
}

async fn server(id: &str) -> Option<Server> {
    let registry = crate::registry::loaded().await;
    let url = registry.provider(id)?.mcp()?.url.clone();
    let mut credentials = credentials_of(id).await;
    // A signed-in server's access token is renewed before it expires.
    if crate::mcp_oauth::due(&credentials) {
        if let Ok(renewed) = crate::mcp_oauth::refresh(&credentials).await {
            set_credentials(id, Some(&renewed)).await;
            credentials = renewed;
        }
    }
    Some(Server {
        id: id.to_string(),
        url,
        credentials,
    })
}

/// A 401 on a signed-in server: the access token is renewed once (stored for next time); a
/// renewal that fails means signing in again.
async fn renew(server: &mut Server) -> Result<(), McpError> {
    let renewed = crate::mcp_oauth::refresh(&server.credentials)
        .await
        .map_err(|_| McpError::SignInAgain)?;
    set_credentials(&server.id, Some(&renewed)).await;
    server.credentials = renewed;
    SESSIONS.with(|m| m.borrow_mut().remove(&server.id));
    Ok(())
}

// --- the transport ---------------------------------------------------------------------

/// Sends one message. Returns the reply (none for a notification) and the session id header.
async fn post(
    url: &str,
    credentials: &Credentials,
    session: &Session,
    out: &Outgoing,
    controller: &AbortController,
) -> Result<(Option<Reply>, Option<String>), McpError> {
    let response = fetch(
        "POST",
        url,
        &session.headers(credentials),
        Some(&out.body),
        controller,
    )
    .await?;
    let status = response.status();
    let session_header = response.headers().get("mcp-session-id").ok().flatten();
    if status == 401 && credentials.oauth.is_none() {
        if let Some(challenge) = crate::mcp_oauth::sign_in_challenge(&response) {
            return Err(McpError::SignIn { challenge });
        }
    }
    if !(200..300).contains(&status) {
        let body = text(&response).await;
        check_status(status, session.id.is_some(), &body, &credentials.secrets())?;
    }
    if out.id.is_none() {
        return Ok((None, session_header));
    }
    let content_type = response.headers().get("content-type").ok().flatten();
    let mut reader = Reader::new(content_type.as_deref(), out)?;
    read_body(&response, url, &mut |bytes| reader.push(bytes))
        .await
        .map_err(|e| gave_up(url, controller).unwrap_or(e))?;
    Ok((Some(reader.finish()?), session_header))
}

async fn fetch(
    method: &str,
    url: &str,
    headers: &[(String, String)],
    body: Option<&str>,
    controller: &AbortController,
) -> Result<Response, McpError> {
    let unreachable = || McpError::Unreachable {
        url: url.to_string(),
    };
    let init = RequestInit::new();
    init.set_method(method);
    init.set_signal(Some(&controller.signal()));
    let h = web_sys::Headers::new().map_err(|_| unreachable())?;
    for (k, v) in headers {
        h.append(k, v).map_err(|_| unreachable())?;
    }
    init.set_headers(&h);
    if let Some(b) = body {
        init.set_body(&JsValue::from_str(b));
    }
    let request = Request::new_with_str_and_init(url, &init).map_err(|_| unreachable())?;
    match JsFuture::from(chrome::fetch_with_request(&request)).await {
        Ok(r) => Ok(r.unchecked_into()),
        Err(_) if controller.signal().aborted() => {
            Err(gave_up(url, controller).unwrap_or_else(unreachable))
        }
        Err(_) => Err(why_unreachable(url).await),
    }
}

/// Tandem's own time limit ([`timed`]) ran out on this request: something took the
/// connection (a closed port is refused at once, long before) and did not answer in time.
/// `None` when the request was ended otherwise (Stop, a removal).
fn gave_up(url: &str, controller: &AbortController) -> Option<McpError> {
    let signal = controller.signal();
    let limit_ms = Reflect::get(&signal, &"reason".into()).ok()?.as_f64()?;
    signal.aborted().then(|| McpError::Slow {
        url: url.to_string(),
        seconds: (limit_ms / 1000.0).round() as u32,
    })
}

/// A fetch that failed outright: either nothing answers at `url`, or something does and
/// Chrome would not let Tandem read it (no site access for that host, so the server's CORS
/// rules apply). An opaque `no-cors` request tells them apart: it succeeds whenever a server
/// answers at all.
async fn why_unreachable(url: &str) -> McpError {
    let answered = async {
        let init = RequestInit::new();
        init.set_method("GET");
        init.set_mode(web_sys::RequestMode::NoCors);
        let controller = timed(3_000)?;
        init.set_signal(Some(&controller.signal()));
        let request = Request::new_with_str_and_init(url, &init).ok()?;
        JsFuture::from(chrome::fetch_with_request(&request))
            .await
            .ok()
    }
    .await
    .is_some();
    if answered {
        McpError::Refused {
            url: url.to_string(),
        }
    } else {
        McpError::Unreachable {
            url: url.to_string(),
        }
    }
}

async fn text(response: &Response) -> String {
    let Ok(p) = response.text() else {
        return String::new();
    };
    JsFuture::from(p)
        .await
        .ok()
        .and_then(|v| v.as_string())
        .map(|t| t.chars().take(2_000).collect())
        .unwrap_or_default()
}

/// Feeds the body to `push` until it ends or `push` says it has what it needs.
async fn read_body(
    response: &Response,
    url: &str,
    push: &mut dyn FnMut(&[u8]) -> bool,
) -> Result<(), McpError> {
    let Some(body) = response.body() else {
        return Ok(());
    };
    let reader: ReadableStreamDefaultReader = body.get_reader().unchecked_into();
    loop {
        let chunk = JsFuture::from(reader.read())
            .await
            .map_err(|_| McpError::Cut {
                url: url.to_string(),
            })?;
        if Reflect::get(&chunk, &"done".into()).map_or(true, |d| d.is_truthy()) {
            return Ok(());
        }
        let bytes = Reflect::get(&chunk, &"value".into())
            .map(|v| Uint8Array::new(&v).to_vec())
            .unwrap_or_default();
        if push(&bytes) {
            // The response is in; a server may keep the stream open for more.
            let _ = reader.cancel();
            return Ok(());
        }
    }
}

/// A controller that aborts after `ms`, with `ms` as the reason ([`gave_up`] reads it).
fn timed(ms: i32) -> Option<AbortController> {
    let controller = AbortController::new().ok()?;
    let abort = controller.clone();
    let timer = Closure::once_into_js(move || abort.abort_with_reason(&JsValue::from(ms)));
    chrome::set_timeout(timer.unchecked_ref(), ms);
    Some(controller)
}

/// `initialize`, then `notifications/initialized`: a new session.
async fn connect(
    url: &str,
    credentials: &Credentials,
    controller: &AbortController,
) -> Result<Session, McpError> {
    let mut session = Session::new();
    let init = session.initialize();
    let (reply, header) = post(url, credentials, &session, &init, controller).await?;
    let reply = reply.ok_or(McpError::NoResponse {
        method: "initialize".into(),
    })?;
    session.accept_initialize(header.as_deref(), &reply.result)?;
    let done = session.initialized();
    post(url, credentials, &session, &done, controller).await?;
    Ok(session)
}

/// Every page of `tools/list` on `session`.
async fn list_all(
    url: &str,
    credentials: &Credentials,
    session: &mut Session,
    controller: &AbortController,
) -> Result<ToolsPage, McpError> {
    let mut all = ToolsPage {
        tools: Vec::new(),
        skipped: Vec::new(),
        next_cursor: None,
    };
    for _ in 0..MAX_PAGES {
        let out = session.list_tools(all.next_cursor.as_deref());
        let (reply, _) = post(url, credentials, session, &out, controller).await?;
        let reply = reply.ok_or(McpError::NoResponse {
            method: "tools/list".into(),
        })?;
        add_page(&mut all, read_tools(&reply.result)?);
        if all.next_cursor.is_none() {
            break;
        }
    }
    Ok(all)
}

/// The session with `server`, initialized now if this worker has none yet.
async fn session_for(server: &Server, controller: &AbortController) -> Result<Session, McpError> {
    if let Some(s) = SESSIONS.with(|m| m.borrow().get(&server.id).cloned()) {
        return Ok(s);
    }
    let session = connect(&server.url, &server.credentials, controller).await?;
    SESSIONS.with(|m| m.borrow_mut().insert(server.id.clone(), session.clone()));
    listen(server.clone(), session.clone());
    Ok(session)
}

/// One request on the server's session; a forgotten session is initialized again and the
/// request repeated once.
async fn request(
    server: &Server,
    make: impl Fn(&mut Session) -> Outgoing,
    controller: &AbortController,
) -> Result<Reply, McpError> {
    request_noting(server, &make, controller, &std::cell::Cell::new(None)).await
}

/// [`request`], noting in `sent` the id of the request last sent (to cancel it by).
async fn request_noting(
    server: &Server,
    make: &dyn Fn(&mut Session) -> Outgoing,
    controller: &AbortController,
    sent: &std::cell::Cell<Option<u64>>,
) -> Result<Reply, McpError> {
    let mut server = server.clone();
    let server = &mut server;
    let mut renewed = false;
    for attempt in 0..3 {
        let connected = session_for(server, controller).await;
        match connected {
            Err(McpError::NeedsToken) if server.credentials.oauth.is_some() && !renewed => {
                renewed = true;
                renew(server).await?;
                continue;
            }
            Err(McpError::NeedsToken) if server.credentials.oauth.is_some() => {
                return Err(McpError::SignInAgain)
            }
            other => other?,
        };
        // The request id is taken from the stored session, so ids stay unique in it.
        let Some((session, out)) = SESSIONS.with(|m| {
            let mut m = m.borrow_mut();
            let s = m.get_mut(&server.id)?;
            let out = make(s);
            Some((s.clone(), out))
        }) else {
            continue;
        };
        sent.set(out.id);
        match post(&server.url, &server.credentials, &session, &out, controller).await {
            Err(e) if e.session_expired() && attempt < 2 => {
                SESSIONS.with(|m| m.borrow_mut().remove(&server.id));
                stop_listening(&server.id);
            }
            Err(McpError::NeedsToken) if server.credentials.oauth.is_some() && !renewed => {
                renewed = true;
                renew(server).await?;
            }
            Err(McpError::NeedsToken) if server.credentials.oauth.is_some() => {
                return Err(McpError::SignInAgain)
            }
            Err(e) => return Err(e),
            Ok((reply, _)) => {
                let reply = reply.ok_or(McpError::NoResponse {
                    method: out.method.clone(),
                })?;
                if reply.notifications.iter().any(|n| n == TOOLS_CHANGED) {
                    spawn_local(refresh(server.id.clone()));
                }
                return Ok(reply);
            }
        }
    }
    Err(McpError::SessionExpired)
}

/// Opens the server's own event stream (GET), where it announces `list_changed`. A server
/// that offers none (405) is fine: its tools are read again on reconnecting. A stream the
/// server closes (a restart, a proxy's idle limit) is opened again, after a pause that grows,
/// while the session is the server's; a server that no longer knows the session (404) gets a
/// new one, and its tools are read again (they may have changed meanwhile). A signed-in
/// server's stream is reopened with a token renewed first when it is due, and a 401 renews it
/// once and reconnects (tools announced meanwhile are read then); a renewal refused says Sign
/// in again, as a call would.
fn listen(server: Server, session: Session) {
    let Ok(controller) = AbortController::new() else {
        return;
    };
    if let Some(old) =
        LISTENING.with(|l| l.borrow_mut().insert(server.id.clone(), controller.clone()))
    {
        old.abort();
    }
    spawn_local(async move {
        let mut server = server;
        let mut delay = 1_000;
        let mut reopening = false;
        loop {
            // The token the stream was first opened with may have expired since.
            if reopening && crate::mcp_oauth::due(&server.credentials) {
                match self::server(&server.id).await {
                    Some(renewed) => server = renewed,
                    None => return,
                }
            }
            let headers = session.listen_headers(&server.credentials);
            let opened = fetch("GET", &server.url, &headers, None, &controller).await;
            let response = match opened {
                Ok(response) => response,
                // Cut and not re-established: the server is not known to answer, so its
                // tools are not offered (a problem) until the check before a turn finds it
                // again, on a new session.
                Err(e) if reopening && !controller.signal().aborted() => {
                    let current = SESSIONS.with(|m| {
                        let mut m = m.borrow_mut();
                        let current = m.get(&server.id).is_some_and(|s| s.id == session.id);
                        if current {
                            m.remove(&server.id);
                        }
                        current
                    });
                    if current {
                        let sentence = e.to_string();
                        let _ = crate::registry::change(|r| {
                            r.set_mcp_problem(&server.id, Some(sentence))
                        })
                        .await;
                    }
                    return;
                }
                // Gone: the next request (or the check before a turn) connects again.
                Err(_) => return,
            };
            if reopening && response.status() == 404 && session.id.is_some() {
                SESSIONS.with(|m| m.borrow_mut().remove(&server.id));
                spawn_local(refresh(server.id.clone()));
                return;
            }
            if response.status() == 401 && server.credentials.oauth.is_some() {
                // `renew` forgets the session; reading the tools again connects anew, and
                // that connection listens again.
                match renew(&mut server).await {
                    Ok(()) => spawn_local(refresh(server.id.clone())),
                    Err(e) => {
                        let sentence = e.to_string();
                        let _ = crate::registry::change(|r| {
                            r.set_mcp_problem(&server.id, Some(sentence))
                        })
                        .await;
                    }
                }
                return;
            }
            let is_stream = response
                .headers()
                .get("content-type")
                .ok()
                .flatten()
                .is_some_and(|t| t.starts_with("text/event-stream"));
            if !response.ok() || !is_stream {
                return;
            }
            let mut reader = Reader::listening();
            let id = server.id.clone();
            let _ = read_body(&response, &server.url, &mut |bytes| {
                reader.push(bytes);
                if reader
                    .take_notifications()
                    .iter()
                    .any(|n| n == TOOLS_CHANGED)
                {
                    spawn_local(refresh(id.clone()));
                }
                false
            })
            .await;
            let current = SESSIONS.with(|m| {
                m.borrow()
                    .get(&server.id)
                    .is_some_and(|s| s.id == session.id)
            });
            if controller.signal().aborted() || !current {
                return;
            }
            // The first time at once: a server that went away is then known to be gone
            // before the next turn offers its tools. A stream cut again pauses, growing.
            if reopening {
                chrome::sleep(delay).await;
                delay = (delay * 2).min(MAX_REOPEN_DELAY_MS);
            }
            reopening = true;
            if controller.signal().aborted() {
                return;
            }
        }
    });
}

fn stop_listening(id: &str) {
    if let Some(c) = LISTENING.with(|l| l.borrow_mut().remove(id)) {
        c.abort();
    }
}

/// Reads the server's tools again into the registry (after `list_changed`, or on start).
async fn refresh(id: String) {
    refresh_within(id, CONNECT_TIMEOUT_MS).await;
}

async fn refresh_within(id: String, limit_ms: i32) {
    let Some(server) = server(&id).await else {
        return;
    };
    let Some(controller) = timed(limit_ms) else {
        return;
    };
    let listed = async {
        let mut all = ToolsPage {
            tools: Vec::new(),
            skipped: Vec::new(),
            next_cursor: None,
        };
        for _ in 0..MAX_PAGES {
            let cursor = all.next_cursor.clone();
            // On the stored session, so its request ids stay unique beside calls in flight.
            let reply = request(&server, |s| s.list_tools(cursor.as_deref()), &controller).await?;
            add_page(&mut all, read_tools(&reply.result)?);
            if all.next_cursor.is_none() {
                break;
            }
        }
        Ok::<_, McpError>(all)
    }
    .await;
    let result = match listed {
        Ok(page) => crate::registry::change(|r| r.set_mcp_tools(&id, page.tools)).await,
        Err(e) => crate::registry::change(|r| r.set_mcp_problem(&id, Some(e.to_string()))).await,
    };
    if result.is_err() {
        crate::log_warning("an MCP server's tools changed, but it is no longer known");
    }
}

// --- what the rest of the worker calls -----------------------------------------------

/// At every worker start: each server that is on is connected again and its tools read
/// (they may have changed while no worker listened).
pub fn start() {
    spawn_local(async {
        let registry = crate::registry::loaded().await;
        for p in registry.mcp_servers() {
            if p.mcp().is_some_and(|m| m.enabled) {
                spawn_local(refresh(p.id().to_string()));
            }
        }
    });
}

/// Before a turn offers tools: each server that is on but had a problem (its tools are not
/// offered meanwhile) is asked again, all at once, so a server that returns offers its tools
/// again without the user doing anything. The turn waits at most `RECHECK_WAIT_MS` for
/// them; a server that does not answer is rechecked behind the turn (up to
/// `RECHECK_TIMEOUT_MS`), and a server still being rechecked is not asked again.
pub async fn recheck() {
    let registry = crate::registry::loaded().await;
    let troubled: Vec<String> = registry
        .mcp_servers()
        .filter(|p| p.mcp().is_some_and(|m| m.enabled && m.problem.is_some()))
        .map(|p| p.id().to_string())
        .filter(|id| RECHECKING.with(|r| !r.borrow().contains(id)))
        .collect();
    if troubled.is_empty() {
        return;
    }
    let rechecks = js_sys::Array::new();
    for id in troubled {
        RECHECKING.with(|r| r.borrow_mut().push(id.clone()));
        rechecks.push(&wasm_bindgen_futures::future_to_promise(async move {
            refresh_within(id.clone(), RECHECK_TIMEOUT_MS).await;
            RECHECKING.with(|r| r.borrow_mut().retain(|x| *x != id));
            Ok(JsValue::UNDEFINED)
        }));
    }
    let all = js_sys::Promise::all(&rechecks);
    let waited = js_sys::Promise::new(&mut |resolve, _| {
        chrome::set_timeout(&resolve, RECHECK_WAIT_MS);
    });
    let _ = JsFuture::from(js_sys::Promise::race(&js_sys::Array::of2(&all, &waited))).await;
}

/// Runs a `tools/call` for `run` and returns the provider result (`{content, error?}`) the
/// tool outcome reads. Never fails: a server that cannot be reached is a result with the
/// sentence as its error, recorded on the server for Settings.
pub async fn call(run: Run, controller: AbortController) -> JsValue {
    let output = crate::registry::loaded()
        .await
        .provider(&run.provider_id)
        .and_then(|p| p.tools().iter().find(|t| t.name == run.tool_name))
        .and_then(|t| t.output.clone());
    let value = match server(&run.provider_id).await {
        None => rpc_error_result(&McpError::NotFound),
        Some(server) => {
            let (name, args) = (run.tool_name.clone(), run.params.clone());
            let sent = std::cell::Cell::new(None);
            match request_noting(&server, &|s| s.call_tool(&name, &args), &controller, &sent).await
            {
                Ok(reply) => {
                    clear_problem(&server.id).await;
                    call_result(&reply.result, output.as_ref())
                }
                Err(e) => {
                    if let (true, Some(id)) = (controller.signal().aborted(), sent.get()) {
                        // Tandem gave up on the call (Stop, its time limit): the server is
                        // told, so it may stop working on it.
                        spawn_local(cancel(server.clone(), id, abort_reason(&controller)));
                    }
                    if !controller.signal().aborted() {
                        let sentence = e.to_string();
                        let _ = crate::registry::change(|r| {
                            r.set_mcp_problem(&server.id, Some(sentence))
                        })
                        .await;
                    }
                    rpc_error_result(&e)
                }
            }
        }
    };
    JSON::parse(&value.to_string()).unwrap_or(JsValue::NULL)
}

/// Why the call was given up, as the caller said when it ended it (`tools::execute`).
fn abort_reason(controller: &AbortController) -> String {
    Reflect::get(&controller.signal(), &"reason".into())
        .ok()
        .and_then(|r| r.as_string())
        .unwrap_or_else(|| "Tandem stopped waiting for the result.".into())
}

/// `notifications/cancelled` for the request `id`, on the session it was sent in.
async fn cancel(server: Server, id: u64, reason: String) {
    let Some(session) = SESSIONS.with(|m| m.borrow().get(&server.id).cloned()) else {
        return;
    };
    let Some(controller) = timed(RECHECK_TIMEOUT_MS) else {
        return;
    };
    let out = session.cancelled(id, &reason);
    let _ = post(
        &server.url,
        &server.credentials,
        &session,
        &out,
        &controller,
    )
    .await;
}

async fn clear_problem(id: &str) {
    let registry = crate::registry::loaded().await;
    let has = registry
        .provider(id)
        .and_then(|p| p.mcp())
        .is_some_and(|m| m.problem.is_some());
    if has {
        let _ = crate::registry::change(|r| r.set_mcp_problem(id, None)).await;
    }
}

/// Settings → Test: initialize and list, on a session of its own (ended at once), and write
/// what came of it for the panel.
pub async fn test(request_id: String, server: McpEndpoint) {
    let (url, credentials) = match server.checked() {
        Ok(c) => c,
        Err(e) => return report(&request_id, false, &e, &[]).await,
    };
    let found = probe(&url, &credentials).await;
    let (ok, message, tools) = match found {
        Ok((name, page, session)) => {
            end_session(&url, &credentials, &session).await;
            (true, found_sentence(&name, &page), names(&page))
        }
        Err(e) => (false, e.to_string(), Vec::new()),
    };
    report(&request_id, ok, &message, &tools).await;
}

/// Initialize and list on a fresh session at `url` (checked: [`McpEndpoint::checked`]): the
/// server's name, its tools, the session.
async fn probe(
    url: &str,
    credentials: &Credentials,
) -> Result<(String, ToolsPage, Session), McpError> {
    let controller = timed(CONNECT_TIMEOUT_MS).ok_or(McpError::Unreachable {
        url: url.to_string(),
    })?;
    let mut session = connect(url, credentials, &controller).await?;
    let page = list_all(url, credentials, &mut session, &controller).await?;
    let name = session.server_name.clone().unwrap_or_default();
    Ok((name, page, session))
}

fn found_sentence(name: &str, page: &ToolsPage) -> String {
    let who = if name.is_empty() {
        "the MCP server".to_string()
    } else {
        format!("«{name}»")
    };
    let n = page.tools.len();
    let mut s = format!(
        "Connected to {who}: {n} tool{}{}",
        if n == 1 { "" } else { "s" },
        if n == 0 {
            ".".to_string()
        } else {
            format!(
                ": {}.",
                page.tools
                    .iter()
                    .map(|t| t.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    );
    for skipped in &page.skipped {
        s.push(' ');
        s.push_str(skipped);
    }
    s
}

fn names(page: &ToolsPage) -> Vec<String> {
    page.tools.iter().map(|t| t.name.clone()).collect()
}

async fn report(request_id: &str, ok: bool, message: &str, tools: &[String]) {
    // A server that signs people in gets Sign in in the form, instead of the token field.
    let sign_in = message
        == McpError::SignIn {
            challenge: String::new(),
        }
        .to_string();
    // One that does not let Tandem register itself gets the Client ID field too.
    let client_id = message == tandem_core::mcp::oauth::OAuthError::NeedsClientId.to_string();
    local_set(
        mcp::TEST_KEY,
        &json!({"requestId": request_id, "ok": ok, "message": message, "tools": tools,
                "signIn": sign_in || client_id, "clientId": client_id}),
    )
    .await;
}

/// Settings → Save: the server becomes a provider, allowed (the user added it), even when it
/// cannot be reached right now (the problem is shown with it).
pub async fn add(request_id: String, name: String, server: McpEndpoint) {
    let (clean, credentials) = match server.checked() {
        Ok(c) => c,
        Err(e) => return report(&request_id, false, &e, &[]).await,
    };
    let registry = crate::registry::loaded().await;
    let same = registry
        .mcp_servers()
        .find(|p| p.mcp().is_some_and(|m| mcp::same_server(&m.url, &clean)));
    if let Some(known) = same {
        let sentence = format!(
            "«{}» at {clean} is already added (Settings → Tools): remove it first to add it again.",
            known.name()
        );
        return report(&request_id, false, &sentence, &[]).await;
    }
    let mut credentials = credentials;
    let mut found = probe(&clean, &credentials).await;
    if let (true, Err(McpError::SignIn { challenge })) = (server.sign_in, &found) {
        match crate::mcp_oauth::sign_in(&clean, Some(challenge), Some(&server.client_id)).await {
            Ok(signed_in) => credentials = signed_in,
            Err(why) => return report(&request_id, false, &why, &[]).await,
        }
        found = probe(&clean, &credentials).await;
    }
    let id = format!("{}{}", mcp::ID_PREFIX, random_uuid());
    set_credentials(&id, Some(&credentials)).await;
    let signed_in = credentials.oauth.is_some();
    // Added before it was tested, a server that signs people in is kept as one, so its row
    // offers Sign in rather than leaving the person to remove it and start again.
    let wants_sign_in = matches!(&found, Err(McpError::SignIn { .. }));
    let (tools, problem, server_name, message) = match found {
        Ok((server_name, page, session)) => {
            let message = format!(
                "Added{}. {}",
                if signed_in { " (signed in)" } else { "" },
                found_sentence(&server_name, &page)
            );
            SESSIONS.with(|m| m.borrow_mut().insert(id.clone(), session.clone()));
            listen(
                Server {
                    id: id.clone(),
                    url: clean.clone(),
                    credentials: credentials.clone(),
                },
                session,
            );
            (page.tools, None, server_name, message)
        }
        Err(e) => (
            Vec::new(),
            Some(e.to_string()),
            String::new(),
            format!("Added, but not usable yet: {e}"),
        ),
    };
    let shown = [name.trim(), server_name.trim()]
        .into_iter()
        .find(|n| !n.is_empty())
        .unwrap_or(clean.as_str())
        .to_string();
    let names: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
    let server = McpServer {
        url: clean,
        enabled: true,
        problem,
        // A signed-in server's token is not the user's to recognise: no hint.
        token_hint: credentials
            .token
            .as_deref()
            .filter(|_| !signed_in)
            .and_then(token_hint),
        header_names: credentials.header_names(),
        signs_in: signed_in || wants_sign_in,
        signed_in,
    };
    crate::registry::change(|r| r.add_mcp_server(&id, &shown, server, tools)).await;
    report(&request_id, true, &message, &names).await;
}

/// Ends the session politely (DELETE); a server that does not support it answers 405.
async fn end_session(url: &str, credentials: &Credentials, session: &Session) {
    if session.id.is_none() {
        return;
    }
    let Some(controller) = timed(CONNECT_TIMEOUT_MS) else {
        return;
    };
    let _ = fetch(
        "DELETE",
        url,
        &session.listen_headers(credentials),
        None,
        &controller,
    )
    .await;
}

/// Before a server is removed: its stream closed, its session ended, its token forgotten.
pub async fn forget(id: &str) {
    drop_session(id).await;
    // Signed in: the tokens are revoked where the server offers it, then forgotten.
    crate::mcp_oauth::revoke(&credentials_of(id).await).await;
    set_credentials(id, None).await;
}

/// Settings → Sign out: the stream and session ended, the tokens revoked where the server
/// offers it and forgotten (the user's headers stay), its tools no longer offered.
pub async fn sign_out(id: &str) {
    drop_session(id).await;
    let credentials = credentials_of(id).await;
    crate::mcp_oauth::revoke(&credentials).await;
    let kept = Credentials {
        headers: credentials.headers,
        ..Credentials::default()
    };
    set_credentials(id, Some(&kept)).await;
    if let Err(e) = crate::registry::change(|r| r.set_mcp_signed_in(id, None)).await {
        crate::log_error("MCP sign-out", &e.to_string().into());
    }
}

/// Settings → Sign in / Sign in again: the sign-in window for the server, new tokens (the old
/// ones revoked and forgotten), its tools listed again. What went wrong is its problem line.
pub async fn sign_in_again(id: &str) {
    let Some(old) = server(id).await else {
        return;
    };
    drop_session(id).await;
    let anonymous = Credentials {
        headers: old.credentials.headers.clone(),
        ..Credentials::default()
    };
    // The 401 names where the sign-in information is; a server that no longer answers 401
    // still gets the well-known addresses tried.
    let challenge = match probe(&old.url, &anonymous).await {
        Err(McpError::SignIn { challenge }) => Some(challenge),
        _ => None,
    };
    // A client id the user pasted (no registration) is used again.
    let pasted = old.credentials.oauth.as_ref().map(|g| g.client_id.clone());
    let outcome =
        match crate::mcp_oauth::sign_in(&old.url, challenge.as_deref(), pasted.as_deref()).await {
            Ok(signed) => {
                crate::mcp_oauth::revoke(&old.credentials).await;
                let credentials = Credentials {
                    headers: anonymous.headers.clone(),
                    ..signed
                };
                set_credentials(id, Some(&credentials)).await;
                probe(&old.url, &credentials)
                    .await
                    .map(|(_, page, session)| {
                        SESSIONS.with(|m| m.borrow_mut().insert(id.to_string(), session.clone()));
                        listen(
                            Server {
                                id: id.to_string(),
                                url: old.url.clone(),
                                credentials,
                            },
                            session,
                        );
                        page.tools
                    })
                    .map_err(|e| e.to_string())
            }
            Err(why) => Err(why),
        };
    let changed = match outcome {
        Ok(tools) => crate::registry::change(|r| r.set_mcp_signed_in(id, Some(tools))).await,
        Err(why) => crate::registry::change(|r| r.set_mcp_problem(id, Some(why))).await,
    };
    if let Err(e) = changed {
        crate::log_error("MCP sign-in", &e.to_string().into());
    }
}

/// Turned off: no stream, no session (a new one is made when it is turned on and called).
pub async fn drop_session(id: &str) {
    stop_listening(id);
    let session = SESSIONS.with(|m| m.borrow_mut().remove(id));
    if let (Some(session), Some(server)) = (session, server(id).await) {
        end_session(&server.url, &server.credentials, &session).await;
    }
}
