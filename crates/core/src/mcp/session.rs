//! What the client sends: JSON-RPC 2.0 requests and notifications, and the headers that go
//! with them.

use crate::json;
use serde_json::Value;

use super::credentials::Credentials;
use super::error::McpError;

/// The protocol version Tandem asks for: the newest it speaks. A server that speaks an older
/// one answers with it, and Tandem goes on in that one when it is in [`SUPPORTED_VERSIONS`].
pub const PROTOCOL_VERSION: &str = "2025-11-25";
/// Versions Tandem can speak: the Streamable HTTP transport exists since 2025-03-26. What
/// Tandem uses changed little since: 2025-06-18 added `structuredContent`/`outputSchema` and
/// `title`; 2025-11-25 allows tool names up to 128 characters. Tandem reads each whichever
/// version the server agreed to (an older server simply does not send them).
pub const SUPPORTED_VERSIONS: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];
/// The transport requires a client to accept both answer forms.
pub const ACCEPT: &str = "application/json, text/event-stream";

/// One message to POST: its body and, for a request, the id whose response answers it.
#[derive(Clone, Debug, PartialEq)]
pub struct Outgoing {
    /// `None` for a notification (answered 202, no body).
    pub id: Option<u64>,
    pub method: String,
    pub body: String,
}

/// The client's side of one server session: the session id the server gave, the version it
/// agreed to, and the request counter.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Session {
    /// `Mcp-Session-Id` from the initialize answer (a server may run without sessions).
    pub id: Option<String>,
    /// The version the server answered `initialize` with; `None` before.
    pub version: Option<String>,
    /// The server's name, as it gave it (`serverInfo.name`).
    pub server_name: Option<String>,
    next: u64,
}

impl Session {
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether `initialize` was answered.
    pub fn ready(&self) -> bool {
        self.version.is_some()
    }

    fn request(&mut self, method: &str, params: Value) -> Outgoing {
        self.next += 1;
        let id = self.next;
        Outgoing {
            id: Some(id),
            method: method.into(),
            body: json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
                .to_string(),
        }
    }

    /// `initialize`: forgets any earlier session (this one replaces it).
    pub fn initialize(&mut self) -> Outgoing {
        self.id = None;
        self.version = None;
        self.request(
            "initialize",
            json!({
                "protocolVersion": PROTOCOL_VERSION,
                // Tandem only calls tools: no roots, sampling or elicitation offered.
                "capabilities": {},
                "clientInfo": {"name": "Tandem", "version": env!("CARGO_PKG_VERSION")},
            }),
        )
    }

    /// Reads the initialize answer: the session id header (`session_header`) and the result.
    pub fn accept_initialize(
        &mut self,
        session_header: Option<&str>,
        result: &Value,
    ) -> Result<(), McpError> {
        let version = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .ok_or(McpError::NotMcp {
                what: "an initialize answer without a protocolVersion".into(),
            })?;
        if !SUPPORTED_VERSIONS.contains(&version) {
            return Err(McpError::Version(clip(version, 40)));
        }
        // The id must be visible ASCII (0x21–0x7E) per the transport; anything else is not
        // something Tandem can send back in a header.
        self.id = session_header
            .map(str::trim)
            .filter(|s| {
                !s.is_empty() && s.len() <= 256 && s.bytes().all(|b| (0x21..=0x7e).contains(&b))
            })
            .map(str::to_string);
        self.version = Some(version.to_string());
        self.server_name = result
            .pointer("/serverInfo/name")
            .and_then(Value::as_str)
            .map(|n| clip(n, 60));
        Ok(())
    }

    /// `notifications/initialized`, sent once the initialize answer was read.
    pub fn initialized(&self) -> Outgoing {
        Outgoing {
            id: None,
            method: "notifications/initialized".into(),
            body: json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        }
    }

    /// `tools/list`, from `cursor` when the previous page gave one.
    pub fn list_tools(&mut self, cursor: Option<&str>) -> Outgoing {
        let params = match cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        self.request("tools/list", params)
    }

    /// `tools/call`.
    pub fn call_tool(&mut self, name: &str, arguments: &Value) -> Outgoing {
        let arguments = match arguments {
            Value::Null => json!({}),
            other => other.clone(),
        };
        self.request("tools/call", json!({"name": name, "arguments": arguments}))
    }

    /// `notifications/cancelled` for the request `request_id`: Tandem stopped waiting for it
    /// (Stop, the call's time limit), so the server may stop working on it.
    pub fn cancelled(&self, request_id: u64, reason: &str) -> Outgoing {
        Outgoing {
            id: None,
            method: "notifications/cancelled".into(),
            body: json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": request_id, "reason": reason}})
            .to_string(),
        }
    }

    /// The headers of every request: the content types, and once initialized, the session id
    /// and protocol version. `token` is the user's Bearer token, if any.
    pub fn headers(&self, credentials: &Credentials) -> Vec<(String, String)> {
        let mut h = vec![
            ("Content-Type".to_string(), "application/json".to_string()),
            ("Accept".to_string(), ACCEPT.to_string()),
        ];
        if let Some(v) = &self.version {
            h.push(("MCP-Protocol-Version".into(), v.clone()));
        }
        if let Some(id) = &self.id {
            h.push(("Mcp-Session-Id".into(), id.clone()));
        }
        if let Some(t) = credentials.token.as_deref() {
            h.push(("Authorization".into(), format!("Bearer {t}")));
        }
        // The user's own (checked: none replaces one of the above).
        h.extend(credentials.headers.iter().cloned());
        h
    }

    /// The headers of the GET that opens the server's own event stream.
    pub fn listen_headers(&self, credentials: &Credentials) -> Vec<(String, String)> {
        let mut h = self.headers(credentials);
        h.retain(|(k, _)| k != "Content-Type");
        for (k, v) in &mut h {
            if k == "Accept" {
                *v = "text/event-stream".into();
            }
        }
        h
    }
}

pub(crate) use crate::tools::protocol::clip;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_json_rpc_with_rising_ids() {
        let mut s = Session::new();
        let init = s.initialize();
        let v: Value = crate::json::from_str(&init.body).unwrap();
        assert_eq!(v["jsonrpc"], "2.0");
        assert_eq!(v["method"], "initialize");
        assert_eq!(v["params"]["protocolVersion"], PROTOCOL_VERSION);
        assert_eq!(v["id"], json!(init.id.unwrap()));
        let list = s.list_tools(Some("page2"));
        let v: Value = crate::json::from_str(&list.body).unwrap();
        assert_eq!(v["params"]["cursor"], "page2");
        assert!(list.id > init.id);
        let call = s.call_tool("echo", &Value::Null);
        let v: Value = crate::json::from_str(&call.body).unwrap();
        assert_eq!(v["params"], json!({"name": "echo", "arguments": {}}));
        let c: Value = crate::json::from_str(&s.cancelled(3, "Stopped").body).unwrap();
        assert_eq!(
            c,
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": 3, "reason": "Stopped"}})
        );
        let n = s.initialized();
        assert_eq!(n.id, None);
        let v: Value = crate::json::from_str(&n.body).unwrap();
        assert!(v.get("id").is_none());
    }

    #[test]
    fn session_id_and_version_go_on_every_later_request() {
        let mut s = Session::new();
        s.initialize();
        let before = s.headers(&Credentials::default());
        assert!(!before
            .iter()
            .any(|(k, _)| k == "Mcp-Session-Id" || k == "MCP-Protocol-Version"));
        assert!(before.contains(&("Accept".into(), ACCEPT.into())));
        s.accept_initialize(
            Some("abc-123"),
            &json!({"protocolVersion": "2025-06-18", "serverInfo": {"name": "files"}}),
        )
        .unwrap();
        let h = s.headers(&Credentials::new(
            " tok ",
            vec![("X-Api-Key".into(), "k".into())],
        ));
        assert!(h.contains(&("Mcp-Session-Id".into(), "abc-123".into())));
        assert!(h.contains(&("MCP-Protocol-Version".into(), "2025-06-18".into())));
        assert!(h.contains(&("Authorization".into(), "Bearer tok".into())));
        assert!(h.contains(&("X-Api-Key".into(), "k".into())));
        assert_eq!(s.server_name.as_deref(), Some("files"));
        let g = s.listen_headers(&Credentials::default());
        assert!(g.contains(&("Accept".into(), "text/event-stream".into())));
        assert!(!g.iter().any(|(k, _)| k == "Content-Type"));
        // An older server's version is spoken; an unknown one is refused with a sentence.
        for v in SUPPORTED_VERSIONS {
            let mut s = Session::new();
            s.accept_initialize(None, &json!({"protocolVersion": v}))
                .unwrap();
            assert_eq!(s.version.as_deref(), Some(v));
        }
        let mut old = Session::new();
        old.accept_initialize(None, &json!({"protocolVersion": "2025-03-26"}))
            .unwrap();
        assert_eq!(old.id, None);
        let e = Session::new()
            .accept_initialize(None, &json!({"protocolVersion": "2024-11-05"}))
            .unwrap_err();
        assert!(e.to_string().contains("2024-11-05"), "{e}");
        // A header Tandem could not send back is not kept.
        let mut odd = Session::new();
        odd.accept_initialize(Some("a b"), &json!({"protocolVersion": "2025-06-18"}))
            .unwrap();
        assert_eq!(odd.id, None);
        // Initializing again forgets the old session.
        s.initialize();
        assert_eq!(s.id, None);
        assert!(!s.ready());
    }
}
