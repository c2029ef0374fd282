//! The agent's part of Settings: the site lists and "Approve the plan before acting".
//! Stored inside [`crate::provider::Settings`] as `agent`; the lists are kept as the user
//! typed them (one host pattern a line) and parsed into a [`UrlPolicy`] when a task starts.

use serde::{Deserialize, Serialize};

use super::safety::{HostPatternError, UrlPolicy};
use crate::session::SessionScope;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AgentSettings {
    /// "Allowed sites": empty allows every site that is not blocked.
    pub allowed_sites: String,
    /// "Blocked sites".
    pub blocked_sites: String,
    /// Show the first plan for Approve / Deny before the first action.
    pub approve_plan: bool,
    /// Not a user setting: `scripts/bench` sets `Step` in storage to measure the session
    /// design Tandem replaces. Left out of stored settings while it is the default, and kept
    /// by the panel, which re-saves the Settings it loaded.
    #[serde(skip_serializing_if = "SessionScope::is_task")]
    pub session_scope: SessionScope,
}

/// A list that does not parse, said for the user.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("\"{list}\" has an entry Tandem cannot read: {pattern:?} ({why}). Use one host a line, like example.com or *.example.com.")]
pub struct SiteListError {
    pub list: &'static str,
    pub pattern: String,
    pub why: &'static str,
}

/// The non-empty, non-comment lines of a list.
fn entries(list: &str) -> impl Iterator<Item = &str> {
    list.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
}

impl AgentSettings {
    pub fn policy(&self) -> Result<UrlPolicy, SiteListError> {
        let wrap = |list| {
            move |e: HostPatternError| SiteListError {
                list,
                pattern: e.pattern,
                why: e.why,
            }
        };
        let allow = UrlPolicy::new(entries(&self.allowed_sites), [])
            .map_err(wrap("Allowed sites"))?
            .allow;
        let deny = UrlPolicy::new([], entries(&self.blocked_sites))
            .map_err(wrap("Blocked sites"))?
            .deny;
        Ok(UrlPolicy { allow, deny })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::UrlDenied;

    #[test]
    fn lists_become_a_policy_one_host_a_line() {
        let s = AgentSettings {
            allowed_sites: "\n*.example.com\n  shop.test \n# a note\n".into(),
            blocked_sites: "evil.example.com\n".into(),
            approve_plan: false,
            session_scope: SessionScope::Task,
        };
        let p = s.policy().unwrap();
        assert_eq!(p.allow.len(), 2);
        assert!(p.check("https://www.example.com/x").is_ok());
        assert!(p.check("http://shop.test/").is_ok());
        assert!(matches!(
            p.check("https://evil.example.com/"),
            Err(UrlDenied::Denied { .. })
        ));
        assert!(matches!(
            p.check("https://other.org/"),
            Err(UrlDenied::NotAllowed { .. })
        ));
        assert!(AgentSettings::default()
            .policy()
            .unwrap()
            .check("https://any.org/")
            .is_ok());
        let bad = AgentSettings {
            blocked_sites: "http://x.com/path".into(),
            ..AgentSettings::default()
        };
        let e = bad.policy().unwrap_err();
        assert_eq!(e.list, "Blocked sites");
        assert!(e.to_string().contains("one host a line"), "{e}");
        // Settings stored before the agent had settings still read.
        let old: crate::provider::Settings = serde_json::from_str("{}").unwrap();
        assert_eq!(old.agent, AgentSettings::default());
    }

    #[test]
    fn the_session_scope_is_stored_only_when_not_the_default() {
        let json = serde_json::to_string(&AgentSettings::default()).unwrap();
        assert!(!json.contains("sessionScope"), "{json}");
        let step: AgentSettings = serde_json::from_str(r#"{"sessionScope":"step"}"#).unwrap();
        assert_eq!(step.session_scope, SessionScope::Step);
        let json = serde_json::to_string(&step).unwrap();
        assert!(json.contains(r#""sessionScope":"step""#), "{json}");
        // Settings the panel loads and saves again keep it.
        let settings: crate::provider::Settings =
            serde_json::from_str(r#"{"agent":{"approvePlan":true,"sessionScope":"step"}}"#)
                .unwrap();
        let again: crate::provider::Settings =
            serde_json::from_str(&serde_json::to_string(&settings).unwrap()).unwrap();
        assert_eq!(again.agent.session_scope, SessionScope::Step);
    }
}
