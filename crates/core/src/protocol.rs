//! Messages between the side panel and the service worker over a `chrome.runtime` Port
//! named [`CHAT_PORT`]. Both ends are Rust; the wire form is a JSON string so neither end
//! needs a serde bridge to JS values.

use serde::{Deserialize, Serialize};

use crate::chat::ChatMessage;
use crate::errors::ErrorKind;
use crate::provider::{ProviderKind, ProviderSettings};
use crate::stream::Usage;

pub const CHAT_PORT: &str = "tandem-chat";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum PanelToWorker {
    /// Answer the last user message of `messages` (the conversation as shown, oldest first;
    /// hidden ones are filtered out by the worker).
    #[serde(rename_all = "camelCase")]
    Send {
        request_id: String,
        messages: Vec<ChatMessage>,
    },
    /// Abort the stream of `request_id`; what arrived so far stays.
    #[serde(rename_all = "camelCase")]
    Stop { request_id: String },
    /// Send a one-token request with these settings (an empty key means the saved key) and
    /// report what happened.
    #[serde(rename_all = "camelCase")]
    TestConnection {
        request_id: String,
        provider: ProviderKind,
        settings: ProviderSettings,
    },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum WorkerToPanel {
    #[serde(rename_all = "camelCase")]
    Delta { request_id: String, text: String },
    #[serde(rename_all = "camelCase")]
    Done {
        request_id: String,
        usage: Option<Usage>,
        finish_reason: Option<String>,
        model: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    Stopped { request_id: String },
    #[serde(rename_all = "camelCase")]
    Error {
        request_id: String,
        kind: ErrorKind,
        message: String,
    },
    /// Progress the user should see while nothing streams (waiting before a retry).
    #[serde(rename_all = "camelCase")]
    Status { request_id: String, text: String },
    /// What the last send did, for the Debug drawer and the token meter: the budget, the
    /// exact request (credentials redacted) and every attempt. Kept in memory only.
    #[serde(rename_all = "camelCase")]
    Debug {
        request_id: String,
        report: serde_json::Value,
    },
    #[serde(rename_all = "camelCase")]
    ConnectionResult {
        request_id: String,
        ok: bool,
        message: String,
    },
}

impl PanelToWorker {
    pub fn to_json(&self) -> String {
        // Serialising these plain structs cannot fail (no maps with non-string keys).
        serde_json::to_string(self).unwrap_or_default()
    }
    pub fn from_json(s: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(s)
    }
}

impl WorkerToPanel {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
    pub fn from_json(s: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(s)
    }
    pub fn request_id(&self) -> &str {
        match self {
            WorkerToPanel::Delta { request_id, .. }
            | WorkerToPanel::Done { request_id, .. }
            | WorkerToPanel::Stopped { request_id }
            | WorkerToPanel::Error { request_id, .. }
            | WorkerToPanel::Status { request_id, .. }
            | WorkerToPanel::Debug { request_id, .. }
            | WorkerToPanel::ConnectionResult { request_id, .. } => request_id,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::Role;

    #[test]
    fn wire_form_is_tagged_camel_case_and_round_trips() {
        let m = PanelToWorker::Send {
            request_id: "r1".into(),
            messages: vec![ChatMessage::new(Role::User, "hi")],
        };
        let json = m.to_json();
        assert!(
            json.contains("\"type\":\"send\"") && json.contains("\"requestId\":\"r1\""),
            "{json}"
        );
        assert_eq!(PanelToWorker::from_json(&json).unwrap(), m);
        let e = WorkerToPanel::Error {
            request_id: "r1".into(),
            kind: ErrorKind::BadKey,
            message: "m".into(),
        };
        assert!(e.to_json().contains("\"kind\":\"bad-key\""));
        assert_eq!(WorkerToPanel::from_json(&e.to_json()).unwrap(), e);
    }
}
