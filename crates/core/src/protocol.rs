//! Messages between the side panel and the service worker over a `chrome.runtime` Port
//! named [`CHAT_PORT`]. Both ends are Rust; the wire form is a JSON string so neither end
//! needs a serde bridge to JS values.
//!
//! Messages are named by variant (`{"send":{…}}`), never by an inner `"type"` tag: serde reads
//! an internally tagged enum by buffering each message through its `Content` first, which cost
//! ~25 KB of gzipped wasm.

use serde::{Deserialize, Serialize};

use crate::chat::ChatMessage;
use crate::errors::ErrorKind;
use crate::mcp::McpEndpoint;
use crate::provider::{ProviderKind, ProviderSettings};
use crate::stream::Usage;

pub const CHAT_PORT: &str = "tandem-chat";
/// The side panel's page: the only page that drives the worker.
pub const PANEL_PAGE: &str = "sidepanel.html";
/// The request id of the question about the on-device model that the panel's bootstrap
/// (`extension/sidepanel.js`) asks on the Port it opens before the wasm is ready. The bootstrap
/// writes that message's JSON itself; a test here reads it with [`PanelToWorker::from_json`].
pub const EARLY_STATUS_ID: &str = "n-first";

/// Who sent a message or opened a Port, as Chrome's `MessageSender` says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sender<'a> {
    /// The sending extension's id.
    pub id: Option<&'a str>,
    /// The URL of the sending document: a content script reports the web page's.
    pub url: Option<&'a str>,
    /// The sender runs in a tab (a content script, or an extension page opened as a tab).
    pub in_tab: bool,
}

impl Sender<'_> {
    /// Tandem's own side panel (`own_id` is `chrome.runtime.id`). A content script of
    /// Tandem's has Tandem's id too, but the web page's URL: it is refused, as is every other
    /// extension. The panel page opened as a tab is still Tandem's own page.
    pub fn is_own_panel(&self, own_id: &str) -> bool {
        let page = format!("chrome-extension://{own_id}/{PANEL_PAGE}");
        self.id == Some(own_id)
            && self.url.is_some_and(|url| {
                url.strip_prefix(&page)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with(['?', '#']))
            })
    }

    /// Tandem's own service worker (the sender of every broadcast the panel trusts): an
    /// extension document of Tandem's that is not in a tab.
    pub fn is_own_worker(&self, own_id: &str) -> bool {
        let origin = format!("chrome-extension://{own_id}/");
        self.id == Some(own_id)
            && !self.in_tab
            && self.url.is_some_and(|url| url.starts_with(&origin))
    }
}

/// On the wire, a message is named by its variant (`{"send":{…}}`, `"forgetAll"`), as are
/// [`ToolsCommand`], [`WorkerToPanel`] and `TaskCommand`: a tag inside the object
/// (`{"type":"send",…}`) makes serde buffer every message, and whatever it carries, before
/// reading it, and that buffering code was ~25 KB of the gzipped wasm. Both ends are Tandem's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PanelToWorker {
    /// Answer the last user message of `messages` (the conversation as shown, oldest first;
    /// hidden ones are filtered out by the worker). When `tab_id`'s page has a memory (a web
    /// page), the history comes from that tab's session and only the last message of
    /// `messages` is taken: it is recorded, and so is the answer, under `answer_id`.
    #[serde(rename_all = "camelCase")]
    Send {
        request_id: String,
        messages: Vec<ChatMessage>,
        #[serde(default)]
        tab_id: Option<i32>,
        #[serde(default)]
        answer_id: String,
        /// Regenerate or Edit & resend: the id of the newest question, which this send
        /// replaces together with its answer (in the tab's session too), so the old pair is
        /// never sent again. `None` (and absent in older messages) for a new question.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        replaces: Option<String>,
        /// "Ask about this page": the worker reads `tab_id`'s page and the last message
        /// quotes its readable text (`page_text`); a page it cannot read is an `Error`
        /// sentence, and nothing is sent to the provider.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        page: bool,
    },
    /// The panel now shows `tab_id`: answer with its conversation (and take the selection
    /// waiting to be asked about in it, if any).
    #[serde(rename_all = "camelCase")]
    Open {
        request_id: String,
        tab_id: Option<i32>,
    },
    /// "Hide from context" on one message of `tab_id`'s conversation.
    #[serde(rename_all = "camelCase")]
    SetHidden {
        tab_id: Option<i32>,
        message_id: String,
        hidden: bool,
    },
    /// "Clear conversation": forget `tab_id`'s session.
    #[serde(rename_all = "camelCase")]
    Clear { tab_id: Option<i32> },
    /// "Forget everything": every session of every tab.
    ForgetAll,
    /// Abort the stream of `request_id`; what arrived so far stays.
    #[serde(rename_all = "camelCase")]
    Stop { request_id: String },
    /// What the on-device model can do right now (shown in Settings).
    #[serde(rename_all = "camelCase")]
    NanoStatus { request_id: String },
    /// The relayed response's status line (see `WorkerToPanel::Fetch`).
    #[serde(rename_all = "camelCase")]
    FetchHead {
        fetch_id: String,
        status: u16,
        retry_after: Option<String>,
    },
    /// A piece of the relayed response body, decoded as UTF-8 without splitting characters.
    #[serde(rename_all = "camelCase")]
    FetchChunk { fetch_id: String, text: String },
    /// The relayed response ended; `error` when the connection failed or was cut.
    #[serde(rename_all = "camelCase")]
    FetchEnd {
        fetch_id: String,
        error: Option<String>,
    },
    /// The user asked to download Gemini Nano (the click is their consent).
    #[serde(rename_all = "camelCase")]
    DownloadNano { request_id: String },
    /// Send a one-token request with these settings (an empty key means the saved key) and
    /// report what happened.
    #[serde(rename_all = "camelCase")]
    TestConnection {
        request_id: String,
        provider: ProviderKind,
        settings: ProviderSettings,
    },
    /// Settings' model picker: list what the provider serves, with these settings (an empty
    /// key means the saved key).
    #[serde(rename_all = "camelCase")]
    ListModels {
        request_id: String,
        provider: ProviderKind,
        settings: ProviderSettings,
    },
    /// The agent: START_TASK, GET_STATE, PAUSE, RESUME, CANCEL, and Approve/Deny.
    Task {
        command: crate::agent::task::TaskCommand,
    },
    /// A change to the tool registry (Settings → Tools, or the approval prompt).
    Tools { command: ToolsCommand },
    /// The user's answer to a tool call that waits for them (policy Ask).
    #[serde(rename_all = "camelCase")]
    ToolDecision { call_id: String, approve: bool },
}

/// What the panel asks of the tool registry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ToolsCommand {
    /// Allow or Deny a provider that asked to give tools (remembered).
    #[serde(rename_all = "camelCase")]
    Decide { provider_id: String, allow: bool },
    /// Allow / Ask / Deny for one tool.
    #[serde(rename_all = "camelCase")]
    SetPolicy {
        provider_id: String,
        tool: String,
        policy: crate::tools::Policy,
    },
    /// Forget a provider and its tools (it is asked about again if it registers again). For
    /// an MCP server: its session is ended (DELETE) and its token forgotten.
    #[serde(rename_all = "camelCase")]
    Remove { provider_id: String },
    /// Settings → Tools → Add MCP server → Test: initialize and list the tools, and write
    /// what came of it under `crate::mcp::TEST_KEY` (tools, or the exact problem).
    #[serde(rename_all = "camelCase")]
    TestMcp {
        request_id: String,
        server: McpEndpoint,
    },
    /// Save: the server becomes a provider (allowed: the user added it), its token kept apart
    /// from the registry.
    #[serde(rename_all = "camelCase")]
    AddMcp {
        request_id: String,
        name: String,
        server: McpEndpoint,
    },
    /// Turn an MCP server off (its tools are kept, not offered) or on again.
    #[serde(rename_all = "camelCase")]
    SetMcpEnabled { provider_id: String, enabled: bool },
    /// Sign in (again) to a server that signs people in: the sign-in window, new tokens,
    /// its tools listed again.
    #[serde(rename_all = "camelCase")]
    SignInMcp { provider_id: String },
    /// Sign out: the tokens revoked where the server offers it and forgotten; its tools are
    /// no longer offered.
    #[serde(rename_all = "camelCase")]
    SignOutMcp { provider_id: String },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum WorkerToPanel {
    /// The answer to `Open`: the tab's conversation, kept for `domain` (the session's site).
    /// `domain` is `None` for pages that get no memory (not web pages): the panel keeps its
    /// own conversation for those. `selection`: text the user chose "Ask Tandem" on in this
    /// tab, to ask about now.
    #[serde(rename_all = "camelCase")]
    Conversation {
        request_id: String,
        tab_id: Option<i32>,
        domain: Option<String>,
        messages: Vec<ChatMessage>,
        selection: Option<String>,
        /// Why an "Ask Tandem" selection in this tab was not asked about (it lay in a
        /// password field): shown instead of an answer.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        refused: Option<String>,
    },
    /// Broadcast (`runtime.sendMessage`, not the Port, which a stopped worker lost): the
    /// conversation of `tab_id` changed outside the panel: a selection to ask about
    /// (`request_id` is `None`), or the answer to `request_id` was recorded (the panel may
    /// have switched to another tab while it streamed). A panel showing that tab opens it
    /// again, unless it saw that answer end itself.
    #[serde(rename_all = "camelCase")]
    Changed {
        tab_id: i32,
        #[serde(default)]
        request_id: Option<String>,
    },
    /// An answer begins (`message_start`): who answers it first.
    #[serde(rename = "messageStart", rename_all = "camelCase")]
    Start {
        request_id: String,
        provider: String,
    },
    /// A piece of the answer's text (`message_update` of the issue's event list).
    #[serde(rename = "messageUpdate", rename_all = "camelCase")]
    Delta { request_id: String, text: String },
    /// Drop the text streamed so far for this answer: another provider takes over and
    /// answers again from the start.
    #[serde(rename_all = "camelCase")]
    Restart { request_id: String, note: String },
    /// Firebase AI Logic is called from the side panel (design card): the worker prepares
    /// the request and the panel performs it and streams the response back.
    #[serde(rename_all = "camelCase")]
    Fetch {
        fetch_id: String,
        url: String,
        headers: Vec<(String, String)>,
        body: String,
    },
    #[serde(rename_all = "camelCase")]
    FetchAbort { fetch_id: String },
    /// The on-device model's state: "available", "downloadable", "downloading",
    /// "unavailable"; `progress` (0–1) while downloading; `detail` says why, in the person's
    /// language where it is Tandem's words (a browser's own refusal stays as it was said).
    #[serde(rename_all = "camelCase")]
    NanoStatus {
        request_id: String,
        availability: String,
        progress: Option<f64>,
        detail: crate::i18n::Msg,
    },
    /// The answer ended normally (`message_complete`).
    #[serde(rename = "messageComplete", rename_all = "camelCase")]
    Done {
        request_id: String,
        usage: Option<Usage>,
        finish_reason: Option<String>,
        model: Option<String>,
        /// Who answered ("Gemini Nano (on device)", "OpenAI"...), shown under the answer.
        #[serde(default)]
        provider: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    Stopped { request_id: String },
    #[serde(rename_all = "camelCase")]
    Error {
        request_id: String,
        kind: ErrorKind,
        message: String,
        /// `message` as a catalog message (`ProviderError::said`), which the panel puts into
        /// the person's language; absent for sentences not in the catalog.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        said: Option<crate::i18n::Msg>,
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
    /// The answer to `ListModels`: the models (empty on failure) and the sentence to show.
    #[serde(rename_all = "camelCase")]
    Models {
        request_id: String,
        provider: ProviderKind,
        models: Vec<crate::model_list::ListedModel>,
        message: String,
    },
    /// The agent task as it stands (`None`: no task yet), with a sentence for the user when a
    /// command was refused or stored state was reset. Sent on the Port in answer to a command
    /// and broadcast (`runtime.sendMessage`) after every change.
    TaskState {
        state: Option<Box<crate::agent::task::TaskView>>,
        notice: Option<String>,
    },
    /// What changed since the view a panel holds: broadcast after every change, and the
    /// answer to a poll that said what it holds. A panel whose copy it does not follow asks
    /// for the whole view.
    TaskDelta {
        delta: Box<crate::agent::task::TaskDelta>,
    },
    /// The model called a tool during the answer to `request_id`. `question` is set when the
    /// call waits for the user's Approve / Deny (`ToolDecision`).
    #[serde(rename_all = "camelCase")]
    ToolUse {
        request_id: String,
        call_id: String,
        tool: String,
        provider: String,
        arguments: String,
        question: Option<String>,
        /// `question` as a catalog message (`tools::turn::question_message`), for the
        /// person's language; absent from older workers.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        said: Option<crate::i18n::Msg>,
    },
    /// What came of that call, as the model reads it (errors are sentences).
    #[serde(rename_all = "camelCase")]
    ToolResult {
        request_id: String,
        call_id: String,
        ok: bool,
        text: String,
        duration_ms: u64,
        /// The images the tool returned, as checked data: URLs (the panel checks them again
        /// before showing them).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<String>,
    },
}

impl PanelToWorker {
    pub fn to_json(&self) -> String {
        // Serialising these plain structs cannot fail (no maps with non-string keys).
        serde_json::to_string(self).unwrap_or_default()
    }
    pub fn from_json(s: &str) -> Result<Self, serde_json::Error> {
        crate::json::from_str(s)
    }
}

impl WorkerToPanel {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
    pub fn from_json(s: &str) -> Result<Self, serde_json::Error> {
        crate::json::from_str(s)
    }
    pub fn request_id(&self) -> &str {
        match self {
            WorkerToPanel::Delta { request_id, .. }
            | WorkerToPanel::Start { request_id, .. }
            | WorkerToPanel::Done { request_id, .. }
            | WorkerToPanel::Stopped { request_id }
            | WorkerToPanel::Conversation { request_id, .. }
            | WorkerToPanel::Restart { request_id, .. }
            | WorkerToPanel::Fetch {
                fetch_id: request_id,
                ..
            }
            | WorkerToPanel::FetchAbort {
                fetch_id: request_id,
            }
            | WorkerToPanel::NanoStatus { request_id, .. }
            | WorkerToPanel::Error { request_id, .. }
            | WorkerToPanel::Status { request_id, .. }
            | WorkerToPanel::Debug { request_id, .. }
            | WorkerToPanel::ConnectionResult { request_id, .. }
            | WorkerToPanel::Models { request_id, .. }
            | WorkerToPanel::ToolUse { request_id, .. }
            | WorkerToPanel::ToolResult { request_id, .. } => request_id,
            WorkerToPanel::Changed { request_id, .. } => request_id.as_deref().unwrap_or(""),
            WorkerToPanel::TaskState { .. } | WorkerToPanel::TaskDelta { .. } => "",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The panel's bootstrap asks its first question before any Rust runs, in JSON it wrote
    /// itself: the worker must read it as the status question with the id the panel waits for.
    #[test]
    fn the_bootstraps_first_question_is_the_status_question() {
        let bootstrap = include_str!("../../../extension/sidepanel.js");
        let (_, rest) = bootstrap
            .split_once("port.postMessage('")
            .expect("sidepanel.js posts its question as a JSON literal");
        let (json, _) = rest.split_once("')").expect("the literal ends");
        assert_eq!(
            PanelToWorker::from_json(json).expect("the worker reads it"),
            PanelToWorker::NanoStatus {
                request_id: EARLY_STATUS_ID.to_string()
            }
        );
    }

    #[test]
    fn only_tandems_own_pages_are_trusted_senders() {
        let id = "abcdefghijklmnopabcdefghijklmnop";
        let panel = format!("chrome-extension://{id}/sidepanel.html");
        let worker = format!("chrome-extension://{id}/background.js");
        let sender = |sid: Option<&'static str>, url: &str, in_tab: bool| {
            let url: &'static str = Box::leak(url.to_string().into_boxed_str());
            Sender {
                id: sid,
                url: Some(url),
                in_tab,
            }
        };
        let own = Some("abcdefghijklmnopabcdefghijklmnop");
        assert!(sender(own, &panel, false).is_own_panel(id));
        assert!(sender(own, &format!("{panel}?tab=3"), true).is_own_panel(id));
        // Tandem's own content script on a page: Tandem's id, the page's URL.
        assert!(!sender(own, "https://shop.example.com/", true).is_own_panel(id));
        assert!(!sender(own, &format!("https://evil.test/{panel}"), true).is_own_panel(id));
        assert!(!sender(
            own,
            &format!("chrome-extension://{id}/sidepanel.html.evil"),
            false
        )
        .is_own_panel(id));
        assert!(!sender(own, &worker, false).is_own_panel(id));
        // Another extension, even with a page of the same name.
        let other = Some("zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz");
        assert!(!sender(other, &panel, false).is_own_panel(id));
        assert!(!Sender::default().is_own_panel(id));

        assert!(sender(own, &worker, false).is_own_worker(id));
        assert!(!sender(own, "https://shop.example.com/", true).is_own_worker(id));
        assert!(
            !sender(own, &panel, true).is_own_worker(id),
            "a page in a tab"
        );
        assert!(!sender(other, &worker, false).is_own_worker(id));
    }
    use crate::chat::Role;

    #[test]
    fn wire_form_is_named_by_variant_in_camel_case_and_round_trips() {
        let m = PanelToWorker::Send {
            request_id: "r1".into(),
            messages: vec![ChatMessage::new(Role::User, "hi")],
            tab_id: Some(7),
            answer_id: "m2".into(),
            replaces: None,
            page: true,
        };
        let json = m.to_json();
        assert!(json.contains("\"page\":true"), "{json}");
        assert!(
            !json.contains("replaces"),
            "a new question says nothing of it: {json}"
        );
        assert!(
            json.starts_with(r#"{"send":{"#) && json.contains("\"requestId\":\"r1\""),
            "{json}"
        );
        assert!(json.contains("\"tabId\":7"), "{json}");
        assert_eq!(PanelToWorker::from_json(&json).unwrap(), m);
        // A panel from before tabs had sessions sends neither field.
        let old = r#"{"send":{"requestId":"r1","messages":[]}}"#;
        assert!(matches!(
            PanelToWorker::from_json(old),
            Ok(PanelToWorker::Send {
                tab_id: None,
                replaces: None,
                page: false,
                ..
            })
        ));
        // Regenerate / Edit & resend name the question they replace.
        let again = PanelToWorker::Send {
            request_id: "r2".into(),
            messages: vec![ChatMessage::new(Role::User, "hi")],
            tab_id: Some(7),
            answer_id: "m4".into(),
            replaces: Some("m1".into()),
            page: false,
        };
        assert!(again.to_json().contains("\"replaces\":\"m1\""));
        assert_eq!(PanelToWorker::from_json(&again.to_json()).unwrap(), again);
        assert_eq!(PanelToWorker::ForgetAll.to_json(), r#""forgetAll""#);
        let c = WorkerToPanel::Changed {
            tab_id: 3,
            request_id: None,
        };
        assert_eq!(c.to_json(), r#"{"changed":{"tabId":3,"requestId":null}}"#);
        assert_eq!(c.request_id(), "");
        let e = WorkerToPanel::Error {
            request_id: "r1".into(),
            kind: ErrorKind::BadKey,
            message: "m".into(),
            said: None,
        };
        assert!(e.to_json().contains("\"kind\":\"bad-key\""));
        assert_eq!(WorkerToPanel::from_json(&e.to_json()).unwrap(), e);
    }
}
