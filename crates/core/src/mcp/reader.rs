//! What the client reads: the status of a POST, then its body, which is either one JSON-RPC
//! message (`application/json`) or an event stream whose events each carry one (the
//! response, possibly after notifications and server requests). The body may arrive cut
//! anywhere; [`Reader::push`] says when the response is in, so the worker can stop reading a
//! stream the server keeps open.

use serde_json::Value;

use super::error::McpError;
use super::session::{clip, Outgoing};
use crate::sse::SseDecoder;

/// The most body Tandem reads from one answer.
const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// The form of an answer's body, from its `Content-Type`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BodyKind {
    Json,
    EventStream,
    /// Anything else (an HTML page, text): not an MCP answer.
    Other(String),
}

impl BodyKind {
    pub fn of(content_type: Option<&str>) -> BodyKind {
        let essence = content_type
            .unwrap_or("")
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        match essence.as_str() {
            "application/json" => BodyKind::Json,
            "text/event-stream" => BodyKind::EventStream,
            _ => BodyKind::Other(essence),
        }
    }
}

/// The most of a server's own words (an error body) Tandem repeats.
const MAX_SAID_CHARS: usize = 300;

/// The failure a non-2xx status means. `sent_session`: the request carried `Mcp-Session-Id`
/// (a 404 then means the server forgot it). `body`: the start of the answer, which may say
/// why: a JSON-RPC error, a JSON `error`/`message`, or plain text ("the database is down").
/// Those words are repeated, capped, with `secrets` (the credentials sent) and anything
/// token-shaped masked: a server may echo the request back.
pub fn check_status(
    status: u16,
    sent_session: bool,
    body: &str,
    secrets: &[String],
) -> Result<(), McpError> {
    if (200..300).contains(&status) {
        return Ok(());
    }
    match status {
        401 => Err(McpError::NeedsToken),
        403 => Err(McpError::Forbidden),
        404 if sent_session => Err(McpError::SessionExpired),
        404 => Err(McpError::NotFound),
        _ => {
            let said = (!looks_like_html(body))
                .then(|| servers_words(body))
                .flatten()
                .map(|m| crate::redact::redact(&m, secrets));
            let detail = match &said {
                _ if looks_like_html(body) => " with an HTML page".to_string(),
                Some(m) => format!(": «{m}»"),
                None => String::new(),
            };
            Err(McpError::Http {
                status,
                detail,
                said,
            })
        }
    }
}

/// What an error body says, as one capped line: a JSON-RPC `error.message`, a JSON `error`
/// or `message` string, or the text itself.
fn servers_words(body: &str) -> Option<String> {
    let text = match crate::json::from_str::<Value>(body) {
        Ok(v) => ["/error/message", "/error", "/message", "/error_description"]
            .iter()
            .find_map(|p| v.pointer(p).and_then(Value::as_str))
            .map(str::to_string)?,
        Err(_) => body.to_string(),
    };
    let line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    (!line.is_empty()).then(|| clip(&line, MAX_SAID_CHARS))
}

fn looks_like_html(body: &str) -> bool {
    let start = body
        .trim_start()
        .get(..15)
        .unwrap_or(body.trim_start())
        .to_ascii_lowercase();
    start.starts_with("<!doctype") || start.starts_with("<html")
}

/// The response to the request, and the notifications that came with it.
#[derive(Clone, Debug, PartialEq)]
pub struct Reply {
    pub result: Value,
    /// Methods of the notifications read before the response (`notifications/tools/list_changed`).
    pub notifications: Vec<String>,
}

/// Reads one answer's body, pushed in pieces.
#[derive(Debug)]
pub struct Reader {
    kind: BodyKind,
    /// The request's id; `None` for the GET stream, which carries only server messages.
    expected: Option<u64>,
    method: String,
    sse: SseDecoder,
    json: Vec<u8>,
    read: usize,
    response: Option<Result<Value, McpError>>,
    notifications: Vec<String>,
    /// An event whose data was not JSON-RPC: the reason, should no response come.
    odd: Option<String>,
}

impl Reader {
    /// A reader for the answer to `out`, or why the answer is not MCP at all.
    pub fn new(content_type: Option<&str>, out: &Outgoing) -> Result<Reader, McpError> {
        let kind = BodyKind::of(content_type);
        if let BodyKind::Other(t) = &kind {
            return Err(McpError::NotMcp {
                what: match t.as_str() {
                    "text/html" => "an HTML page".to_string(),
                    "" => "a body of no stated type".to_string(),
                    t => clip(t, 60),
                },
            });
        }
        Ok(Reader::empty(kind, out.id, out.method.clone()))
    }

    /// A reader for the server's own event stream (the GET): notifications only.
    pub fn listening() -> Reader {
        Reader::empty(BodyKind::EventStream, None, "the event stream".into())
    }

    /// A reader that has read nothing yet.
    fn empty(kind: BodyKind, expected: Option<u64>, method: String) -> Reader {
        Reader {
            kind,
            expected,
            method,
            sse: SseDecoder::new(),
            json: Vec::new(),
            read: 0,
            response: None,
            notifications: Vec::new(),
            odd: None,
        }
    }

    /// Adds a piece of the body. Returns whether the response is in (the rest of a stream
    /// need not be read).
    pub fn push(&mut self, bytes: &[u8]) -> bool {
        self.read += bytes.len();
        if self.read > MAX_BODY_BYTES {
            self.response
                .get_or_insert(Err(McpError::TooLarge(MAX_BODY_BYTES / (1024 * 1024))));
            return true;
        }
        match self.kind {
            BodyKind::Json => self.json.extend_from_slice(bytes),
            _ => {
                for event in self.sse.push(bytes) {
                    self.event(&event.data);
                }
            }
        }
        self.response.is_some()
    }

    /// The notifications read so far (the GET stream's reader hands them out as they come).
    pub fn take_notifications(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notifications)
    }

    /// The body ended (or the response is in): the response, or why there is none.
    pub fn finish(mut self) -> Result<Reply, McpError> {
        match self.kind {
            BodyKind::Json => {
                let json = std::mem::take(&mut self.json);
                match crate::json::from_slice::<Value>(&json) {
                    Ok(v) => self.message(&v),
                    Err(_) if self.response.is_none() => {
                        return Err(McpError::NotMcp {
                            what: "a body that is not JSON".into(),
                        })
                    }
                    Err(_) => {}
                }
            }
            _ => {
                for event in self.sse.finish() {
                    self.event(&event.data);
                }
            }
        }
        match self.response {
            Some(Ok(result)) => Ok(Reply {
                result,
                notifications: self.notifications,
            }),
            Some(Err(e)) => Err(e),
            None => Err(match self.odd {
                Some(what) => McpError::NotMcp { what },
                None => McpError::NoResponse {
                    method: self.method,
                },
            }),
        }
    }

    fn event(&mut self, data: &str) {
        if data.trim().is_empty() {
            // Priming events (an id for resumption, no data) are allowed.
            return;
        }
        match crate::json::from_str::<Value>(data) {
            Ok(v) => self.message(&v),
            Err(_) => {
                self.odd
                    .get_or_insert_with(|| "an event stream whose events are not JSON".into());
            }
        }
    }

    /// One JSON-RPC message (or a batch, which older servers may send).
    fn message(&mut self, v: &Value) {
        if let Value::Array(items) = v {
            for item in items {
                self.message(item);
            }
            return;
        }
        let Some(o) = v.as_object() else {
            self.odd
                .get_or_insert_with(|| "JSON that is not JSON-RPC".into());
            return;
        };
        if o.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            self.odd
                .get_or_insert_with(|| "JSON that is not JSON-RPC".into());
            return;
        }
        let method = o.get("method").and_then(Value::as_str);
        match (method, o.get("id")) {
            // A notification.
            (Some(m), None) => self.notifications.push(clip(m, 100)),
            // A request from the server (ping, sampling…): Tandem offers no such capability,
            // and the response it waits for still comes.
            (Some(_), Some(_)) => {}
            (None, Some(id)) => {
                if self.response.is_some() || self.expected.is_none() {
                    return;
                }
                if id.as_u64() != self.expected {
                    return;
                }
                self.response = Some(match (o.get("result"), o.get("error")) {
                    (_, Some(e)) => Err(McpError::Rpc {
                        method: self.method.clone(),
                        code: e.get("code").and_then(Value::as_i64).unwrap_or(0),
                        message: clip(
                            e.get("message")
                                .and_then(Value::as_str)
                                .unwrap_or("no reason given"),
                            300,
                        ),
                    }),
                    (Some(r), None) => Ok(r.clone()),
                    (None, None) => Err(McpError::NotMcp {
                        what: "a JSON-RPC response with neither result nor error".into(),
                    }),
                });
            }
            (None, None) => {
                self.odd
                    .get_or_insert_with(|| "JSON that is not JSON-RPC".into());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::Session;
    use serde_json::json;

    fn request() -> Outgoing {
        let mut s = Session::new();
        s.initialize();
        s.list_tools(None) // id 2
    }

    fn read_all(content_type: &str, body: &str, cut: &[usize]) -> (Result<Reply, McpError>, bool) {
        let mut r = Reader::new(Some(content_type), &request()).unwrap();
        let mut early = false;
        let mut last = 0;
        for &at in cut.iter().chain(std::iter::once(&body.len())) {
            early |= r.push(&body.as_bytes()[last..at]);
            last = at;
        }
        (r.finish(), early)
    }

    const STREAM: &str = "event: message\r\nid: 1\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\r\n\r\n: keep-alive\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"wrong\":true}}\n\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":\"s1\"}\n\ndata: {\"jsonrpc\":\"2.0\",\ndata: \"id\":2,\"result\":{\"tools\":[]}}\n\n";

    #[test]
    fn an_event_stream_gives_the_matching_response_at_every_split_point() {
        let want = Reply {
            result: json!({"tools": []}),
            notifications: vec!["notifications/tools/list_changed".into()],
        };
        let (whole, early) = read_all("text/event-stream", STREAM, &[]);
        assert_eq!(whole.unwrap(), want);
        assert!(early);
        for i in 0..=STREAM.len() {
            for j in [i, (i + 7).min(STREAM.len()), STREAM.len()] {
                let (got, _) = read_all("text/event-stream; charset=utf-8", STREAM, &[i, j.max(i)]);
                assert_eq!(got.as_ref(), Ok(&want), "cut at {i}/{j}");
            }
        }
    }

    #[test]
    fn a_json_answer_at_every_split_point() {
        let body = r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"é"}]}}"#;
        for i in 0..=body.len() {
            let (got, _) = read_all("application/json", body, &[i]);
            assert_eq!(
                got.unwrap().result,
                json!({"tools": [{"name": "é"}]}),
                "cut at {i}"
            );
        }
        let batch = r#"[{"jsonrpc":"2.0","method":"notifications/message"},{"jsonrpc":"2.0","id":2,"result":{}}]"#;
        let (got, _) = read_all("application/json", batch, &[]);
        assert_eq!(got.unwrap().notifications, ["notifications/message"]);
    }

    #[test]
    fn failures_are_sentences() {
        let err = |ct: &str, body: &str| read_all(ct, body, &[]).0.unwrap_err().to_string();
        assert_eq!(
            err(
                "application/json",
                r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found"}}"#
            ),
            "The MCP server refused tools/list: Method not found (error -32601)."
        );
        assert_eq!(
            err("application/json", r#"{"models":[]}"#),
            "This URL is not an MCP endpoint: it answered with JSON that is not JSON-RPC."
        );
        assert_eq!(
            err("application/json", "<html>"),
            "This URL is not an MCP endpoint: it answered with a body that is not JSON."
        );
        assert_eq!(
            err(
                "text/event-stream",
                "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"
            ),
            "The MCP server ended its answer to tools/list without a response."
        );
        assert_eq!(
            err("text/event-stream", "data: hello\n\n"),
            "This URL is not an MCP endpoint: it answered with an event stream whose events are not JSON."
        );
        let html = Reader::new(Some("text/html; charset=utf-8"), &request()).unwrap_err();
        assert_eq!(
            html.to_string(),
            "This URL is not an MCP endpoint: it answered with an HTML page."
        );
        assert!(Reader::new(None, &request()).is_err());

        assert_eq!(check_status(200, true, "", &[]), Ok(()));
        assert_eq!(check_status(202, false, "", &[]), Ok(()));
        assert!(check_status(401, false, "", &[])
            .unwrap_err()
            .to_string()
            .contains("needs a token"));
        assert_eq!(
            check_status(404, true, "", &[]),
            Err(McpError::SessionExpired)
        );
        assert!(check_status(404, true, "", &[])
            .unwrap_err()
            .session_expired());
        assert_eq!(check_status(404, false, "", &[]), Err(McpError::NotFound));
        assert_eq!(
            check_status(400, false, r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}"#, &[])
                .unwrap_err()
                .to_string(),
            "The MCP server answered HTTP 400: «Bad Request: Server not initialized»."
        );
        // A plain-text 500 is the server's own words: one line, capped, secrets masked.
        let secret = "tok-secret-123456".to_string();
        let said = check_status(
            500,
            true,
            "the database is down\n(token tok-secret-123456, Bearer abcdefghijkl)",
            std::slice::from_ref(&secret),
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            said,
            "The MCP server answered HTTP 500: «the database is down (token …3456, Bearer …ijkl)»."
        );
        let long = check_status(503, false, &"x".repeat(5_000), &[])
            .unwrap_err()
            .to_string();
        assert!(long.chars().count() < 400, "{long}");
        assert_eq!(
            check_status(502, false, r#"{"error":"upstream timed out"}"#, &[])
                .unwrap_err()
                .to_string(),
            "The MCP server answered HTTP 502: «upstream timed out»."
        );
        assert_eq!(
            check_status(500, false, "  ", &[]).unwrap_err().to_string(),
            "The MCP server answered HTTP 500."
        );
        assert_eq!(
            check_status(500, false, "<!DOCTYPE html><p>oops", &[])
                .unwrap_err()
                .to_string(),
            "The MCP server answered HTTP 500 with an HTML page."
        );
        assert!(McpError::Unreachable {
            url: "http://127.0.0.1:1/mcp".into()
        }
        .to_string()
        .contains("could not reach"));
    }

    #[test]
    fn the_listening_stream_hands_out_notifications_as_they_come() {
        let mut r = Reader::listening();
        assert!(!r.push(
            b"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n"
        ));
        assert!(r.take_notifications().is_empty());
        r.push(b"\n");
        assert_eq!(r.take_notifications(), ["notifications/tools/list_changed"]);
        // A response on it is not for anyone.
        assert!(!r.push(b"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"));
    }

    #[test]
    fn an_oversized_answer_is_cut_off() {
        let mut r = Reader::new(Some("application/json"), &request()).unwrap();
        let chunk = vec![b' '; 1024 * 1024];
        let mut stopped = false;
        for _ in 0..6 {
            stopped |= r.push(&chunk);
        }
        assert!(stopped);
        assert_eq!(r.finish(), Err(McpError::TooLarge(4)));
    }

    proptest::proptest! {
        #[test]
        fn any_body_cut_anywhere_never_panics(
            body in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400),
            cut in 0usize..400,
            sse in proptest::prelude::any::<bool>(),
        ) {
            let ct = if sse { "text/event-stream" } else { "application/json" };
            let mut r = Reader::new(Some(ct), &request()).unwrap();
            let at = cut.min(body.len());
            r.push(&body[..at]);
            r.push(&body[at..]);
            let _ = r.finish();
            let mut l = Reader::listening();
            l.push(&body);
            let _ = l.take_notifications();
        }
    }
}
