//! The agent's part of Settings: the site lists and "Approve the plan before acting".
//! Stored inside [`crate::settings::Settings`] as `agent`; the lists are kept as the user
//! typed them (one host pattern a line) and parsed into a [`UrlPolicy`] when a task starts.

use serde::{Deserialize, Serialize};

use super::safety::{HostPatternError, UrlPolicy};
use crate::session::SessionScope;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
    /// "Stop a task or answer after N tokens" (0: no ceiling). Settings stored before it
    /// existed load with the default (the struct is `serde(default)`).
    pub token_limit: u32,
}

impl Default for AgentSettings {
    fn default() -> Self {
        Self {
            allowed_sites: String::new(),
            blocked_sites: String::new(),
            approve_plan: false,
            session_scope: SessionScope::default(),
            token_limit: super::cost::DEFAULT_TOKEN_LIMIT,
        }
    }
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
        self.policy_with(|host| host.to_string())
    }

    /// The policy with each entry's host put in the browser's canonical form by `canon` (the
    /// worker passes Chrome's URL parser, so `Bücher.de` or `0x7f.1` in a list match the hosts
    /// the browser reports); a leading `*.` is kept as it is.
    pub fn policy_with(&self, canon: impl Fn(&str) -> String) -> Result<UrlPolicy, SiteListError> {
        let wrap = |list| {
            move |e: HostPatternError| SiteListError {
                list,
                pattern: e.pattern,
                why: e.why,
            }
        };
        let canonical = |entry: &str| -> String {
            match entry.strip_prefix("*.") {
                Some(host) => format!("*.{}", canon(host)),
                None if entry == "*" => entry.to_string(),
                None => canon(entry),
            }
        };
        let allowed: Vec<String> = entries(&self.allowed_sites).map(canonical).collect();
        let blocked: Vec<String> = entries(&self.blocked_sites).map(canonical).collect();
        let allow = UrlPolicy::new(allowed.iter().map(String::as_str), [])
            .map_err(wrap("Allowed sites"))?
            .allow;
        let deny = UrlPolicy::new([], blocked.iter().map(String::as_str))
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
            ..AgentSettings::default()
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
        let old: crate::settings::Settings = crate::json::from_str("{}").unwrap();
        assert_eq!(old.agent, AgentSettings::default());
    }

    #[test]
    fn hosts_the_browser_canonicalises_are_checked_as_the_browser_reads_them() {
        // What Chromium's URL parser gives for these URLs (checked in a real service worker
        // by crates/background's `url_tests`): the policy is handed those hosts.
        let chromium = [
            ("https://bank%2Ecom/", "bank.com"),
            ("http://0x7f.1/", "127.0.0.1"),
            ("https://\u{ff42}\u{ff41}\u{ff4e}\u{ff4b}.com/", "bank.com"),
            ("https://ba\tnk.c\nom/", "bank.com"),
            ("https://BANK.com./", "bank.com."),
        ];
        let s = AgentSettings {
            blocked_sites: "bank.com\n127.0.0.1".into(),
            ..AgentSettings::default()
        };
        let policy = s.policy().unwrap();
        for (url, host) in chromium {
            assert!(
                matches!(policy.check_host(host), Err(UrlDenied::Denied { .. })),
                "{url} → {host} must be blocked"
            );
        }
        // Entries are canonicalised like hosts (here a stand-in for the browser's parser).
        let idn = AgentSettings {
            blocked_sites: "*.Bücher.de".into(),
            ..AgentSettings::default()
        };
        let canon = |h: &str| {
            if h == "Bücher.de" {
                "xn--bcher-kva.de".to_string()
            } else {
                h.to_string()
            }
        };
        let p = idn.policy_with(canon).unwrap();
        assert!(p.check_host("shop.xn--bcher-kva.de").is_err());
    }

    #[test]
    fn the_session_scope_is_stored_only_when_not_the_default() {
        let json = serde_json::to_string(&AgentSettings::default()).unwrap();
        assert!(!json.contains("sessionScope"), "{json}");
        let step: AgentSettings = crate::json::from_str(r#"{"sessionScope":"step"}"#).unwrap();
        assert_eq!(step.session_scope, SessionScope::Step);
        let json = serde_json::to_string(&step).unwrap();
        assert!(json.contains(r#""sessionScope":"step""#), "{json}");
        // Settings the panel loads and saves again keep it.
        let settings: crate::settings::Settings =
            crate::json::from_str(r#"{"agent":{"approvePlan":true,"sessionScope":"step"}}"#)
                .unwrap();
        let again: crate::settings::Settings =
            crate::json::from_str(&serde_json::to_string(&settings).unwrap()).unwrap();
        assert_eq!(again.agent.session_scope, SessionScope::Step);
    }

    #[test]
    fn the_token_limit_defaults_for_settings_stored_before_it() {
        let old: crate::settings::Settings =
            crate::json::from_str(r#"{"agent":{"approvePlan":true,"allowedSites":"a.com"}}"#)
                .unwrap();
        assert_eq!(
            old.agent.token_limit,
            super::super::cost::DEFAULT_TOKEN_LIMIT
        );
        assert!(old.agent.approve_plan);
        let set: AgentSettings = crate::json::from_str(r#"{"tokenLimit":5000}"#).unwrap();
        assert_eq!(set.token_limit, 5000);
        let json = serde_json::to_string(&set).unwrap();
        assert!(json.contains(r#""tokenLimit":5000"#), "{json}");
    }
}
