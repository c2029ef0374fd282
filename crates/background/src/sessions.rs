//! The worker's one `SessionManager`: every LLM call of Tandem (a chat answer, "Ask Tandem",
//! an agent step, a tool loop) runs on a `HybridSession` it made — Gemini Nano preferred, the
//! user's cloud provider when Nano is not there or fails, mid-turn. A task holds its session
//! for the task (`agent`); a conversation keeps one here while it goes on.
//!
//! The conversation's session is reused while the visible history is exactly what it has
//! seen (and the tools, the on-device mode and the cloud provider are the same), so on Nano
//! each message sends only its turn. Another tab's conversation, a hidden or cleared message,
//! a Stop or an error start a new one from the visible history. A session that failed over
//! stays on the cloud for the rest of the conversation.

use std::cell::RefCell;
use std::rc::Rc;

use tandem_core::chat::{ChatMessage, Role};
use tandem_core::errors::{ErrorKind, ProviderError};
use tandem_core::request::ToolSpec;
use tandem_core::session::{
    CloudConfig, HybridSession, Preferred, SessionConfig, SessionError, SessionManager,
};
use tandem_core::settings::Settings;

use crate::cloud::{BrowserCloud, Timer};
use crate::nano::BrowserNano;

pub type Manager = SessionManager<BrowserNano, BrowserCloud, Timer>;
pub type Session = HybridSession<BrowserNano, BrowserCloud, Timer>;

pub const NANO_LABEL: &str = "Gemini Nano (on device)";
/// A Nano prompt that takes longer than this is a failed one (the cloud takes over).
pub const STEP_TIMEOUT_MS: u64 = 60_000;

/// What a kept conversation session was made for.
#[derive(PartialEq)]
struct Fit {
    /// Role and text of each visible message it has seen.
    seen: Vec<(Role, String)>,
    /// The tools its instructions list.
    tools: Vec<ToolSpec>,
    mode: Preferred,
    cloud: Option<CloudConfig>,
}

struct Kept {
    session: Session,
    fit: Fit,
}

thread_local! {
    static MANAGER: Rc<Manager> =
        Rc::new(SessionManager::new(BrowserNano::default(), BrowserCloud, Timer, None));
    static CONVERSATION: RefCell<Option<Kept>> = const { RefCell::new(None) };
}

pub fn manager() -> Rc<Manager> {
    MANAGER.with(Rc::clone)
}

/// The visible messages of a conversation: what a model is told.
pub fn visible(messages: &[ChatMessage]) -> Vec<&ChatMessage> {
    messages
        .iter()
        .filter(|m| !m.hidden && m.role != Role::System && !m.content.is_empty())
        .collect()
}

/// The conversation's session, checked out to answer its last message: the kept one when it
/// fits, else a new one holding the visible history (Nano: as `initialPrompts`). Give it back
/// with [`Conversation::keep`] once it answered.
pub struct Conversation {
    pub session: Session,
    fit: Fit,
}

impl Conversation {
    pub async fn open(
        messages: &[ChatMessage],
        settings: &Settings,
        tools: Vec<ToolSpec>,
        system_prompt: &str,
    ) -> Result<Self, ProviderError> {
        let visible = visible(messages);
        let Some((request, history)) = visible.split_last() else {
            return Err(ProviderError::new(
                ErrorKind::NotConfigured,
                "There is no message to answer.",
            ));
        };
        let cloud = CloudConfig::from_settings(settings, settings.budget.clone());
        // Chat sessions on the device take text; pictures go to the cloud provider.
        let mode = match settings.on_device {
            Preferred::Auto if !request.images.is_empty() => Preferred::Cloud,
            mode => mode,
        };
        let fit = Fit {
            seen: history
                .iter()
                .map(|m| (m.role, m.content.clone()))
                .collect(),
            tools,
            mode,
            cloud: cloud.as_ref().ok().cloned(),
        };
        let kept = CONVERSATION.with(|c| c.borrow_mut().take());
        if let Some(kept) = kept.filter(|k| k.fit == fit) {
            return Ok(Self {
                session: kept.session,
                fit,
            });
        }
        let m = manager();
        m.set_cloud(fit.cloud.clone());
        let config = SessionConfig {
            system_prompt: system_prompt.to_string(),
            // Nano has no native tool calling: its session is told how to call them, once.
            schema_instructions: if fit.tools.is_empty() {
                String::new()
            } else {
                tandem_core::tools::instructions(&fit.tools)
            },
            initial_history: history.iter().map(|m| (*m).clone()).collect(),
            preferred: mode,
            step_timeout_ms: Some(STEP_TIMEOUT_MS),
            ..SessionConfig::default()
        };
        match m.create(config).await {
            Ok(session) => Ok(Self { session, fit }),
            Err(e) => Err(cannot_start(e, mode, cloud.err())),
        }
    }

    /// Keeps the session for the conversation's next message: it has now seen the request
    /// and `answer`.
    pub fn keep(mut self, request: &str, answer: &str) {
        self.fit.seen.push((Role::User, request.to_string()));
        self.fit.seen.push((Role::Assistant, answer.to_string()));
        let kept = Kept {
            session: self.session,
            fit: self.fit,
        };
        // A session kept for another conversation is dropped (and destroyed) here.
        CONVERSATION.with(|c| *c.borrow_mut() = Some(kept));
    }
}

/// Why no session could start, for the chat: the cloud's own sentence when it is the cloud
/// that is missing.
fn cannot_start(
    e: SessionError,
    mode: Preferred,
    cloud: Option<tandem_core::provider::ConfigError>,
) -> ProviderError {
    let message = match (e, mode, cloud) {
        (SessionError::NoProvider { nano, .. }, Preferred::Nano, _) => format!(
            "Gemini Nano cannot answer: the on-device model is {}. Settings → On-device model allows the cloud.",
            nano.word()
        ),
        (SessionError::NoProvider { .. }, _, Some(cloud)) => cloud.to_string(),
        (SessionError::Nano { error, .. }, _, _) => format!(
            "Gemini Nano cannot answer ({}): {} Settings → On-device model allows the cloud.",
            error.name, error.message
        ),
        (e, _, _) => e.to_string(),
    };
    ProviderError::new(ErrorKind::NotConfigured, message)
}
