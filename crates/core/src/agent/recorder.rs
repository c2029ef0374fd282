//! Where the listener recorder (`extension/content/listeners.js`) may run.
//!
//! The recorder patches the page's own `addEventListener` and `onclick` setters: a page and its
//! anti-bot scripts can see that. So it never runs on a site the user did not let Tandem act on
//! and no task runs on. Chrome starts it at `document_start` (what lets it see every listener)
//! through two dynamic registrations, made from what [`recorder_scripts`] returns:
//! - [`ALWAYS_SCRIPT`] for the sites allowed always: "Always allow on this site"
//!   ([`SiteGrants`]) and the user's Allowed sites list; kept across browser restarts;
//! - [`TASK_SCRIPT`] for the hosts the running task has been on or is going to, so a page the
//!   agent loads in the task is recorded from its start; dropped when the task ends.
//!
//! Blocked sites are left out of both. A page a task reaches before either covered it gets
//! the recorder late, injected by the worker (ARCHITECTURE.md, "Site access").

use super::safety::HostPattern;
use super::sites::SiteGrants;

/// The registration's id for the sites allowed always.
pub const ALWAYS_SCRIPT: &str = "tandem-listeners";
/// The registration's id for the running task's hosts.
pub const TASK_SCRIPT: &str = "tandem-listeners-task";

/// One `chrome.scripting` content-script registration of the recorder: Chrome match patterns,
/// sorted and each once.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecorderScript {
    pub matches: Vec<String>,
    pub exclude: Vec<String>,
}

/// The two registrations; `None` where nothing is to be registered (Chrome refuses an empty
/// `matches`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecorderScripts {
    pub always: Option<RecorderScript>,
    pub task: Option<RecorderScript>,
}

/// The match pattern covering every http and https page of `pattern`; `None` for `*` (every
/// site: the same as an empty Allowed list, which allows without naming a site) and for a
/// host Chrome would refuse, which would make it refuse the whole registration.
pub fn match_pattern(pattern: &HostPattern) -> Option<String> {
    match pattern {
        HostPattern::Any => None,
        HostPattern::Exact(host) => pattern_host(host).then(|| format!("*://{host}/*")),
        HostPattern::WithSubdomains(host) => pattern_host(host).then(|| format!("*://*.{host}/*")),
    }
}

/// A host as a match pattern takes it: lowercase ASCII labels (punycode for others, which the
/// worker's URL parser gives), or a bracketed IPv6 address. No port, no wildcard.
fn pattern_host(host: &str) -> bool {
    if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        return !inner.is_empty()
            && inner
                .chars()
                .all(|c| c.is_ascii_hexdigit() || matches!(c, ':' | '.'));
    }
    host.len() <= 253
        && host.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_'))
        })
}

/// Sorted, each once.
fn patterns<'a>(hosts: impl IntoIterator<Item = &'a HostPattern>) -> Vec<String> {
    let mut out: Vec<String> = hosts.into_iter().filter_map(match_pattern).collect();
    crate::sort::sort(&mut out);
    out.dedup();
    out
}

/// The recorder's registrations for the user's grants, Allowed and Blocked lists (as parsed
/// into a `UrlPolicy`) and the hosts of the running task.
///
/// The task's registration leaves out what the always one covers: Chrome would otherwise run
/// both in one page, the recorder twice. A `*` in the Blocked list blocks every site, so
/// nothing is registered.
pub fn recorder_scripts(
    grants: &SiteGrants,
    allowed: &[HostPattern],
    blocked: &[HostPattern],
    task_hosts: &[String],
) -> RecorderScripts {
    if blocked.contains(&HostPattern::Any) {
        return RecorderScripts::default();
    }
    let exclude = patterns(blocked);
    let granted: Vec<HostPattern> = grants
        .always
        .iter()
        .map(|h| HostPattern::Exact(h.clone()))
        .chain(allowed.iter().cloned())
        // `*` names no site (see `match_pattern`): it neither registers nor covers a host.
        .filter(|g| *g != HostPattern::Any)
        .collect();
    let always = patterns(&granted);
    let task: Vec<HostPattern> = task_hosts
        .iter()
        .map(|h| HostPattern::Exact(h.to_ascii_lowercase()))
        .filter(|h| !granted.iter().any(|g| covers(g, h)))
        .collect();
    let task = patterns(&task);
    let mut task_exclude: Vec<String> = exclude.iter().chain(&always).cloned().collect();
    crate::sort::sort(&mut task_exclude);
    task_exclude.dedup();
    RecorderScripts {
        always: (!always.is_empty()).then(|| RecorderScript {
            matches: always,
            exclude: exclude.clone(),
        }),
        task: (!task.is_empty()).then_some(RecorderScript {
            matches: task,
            exclude: task_exclude,
        }),
    }
}

/// Whether `grant` covers the exact host `host`.
fn covers(grant: &HostPattern, host: &HostPattern) -> bool {
    match host {
        HostPattern::Exact(h) => grant.matches(h),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(list: &[&str]) -> Vec<HostPattern> {
        list.iter().filter_map(|p| p.parse().ok()).collect()
    }

    fn grants(hosts: &[&str]) -> SiteGrants {
        let mut g = SiteGrants::default();
        for h in hosts {
            g.add(h);
        }
        g
    }

    #[test]
    fn nothing_allowed_registers_nothing() {
        assert_eq!(
            recorder_scripts(&SiteGrants::default(), &[], &[], &[]),
            RecorderScripts::default()
        );
        // `*` allows every site without naming one: the recorder stays out of them all, and
        // the task's hosts still get theirs.
        assert_eq!(
            recorder_scripts(&SiteGrants::default(), &parse(&["*"]), &[], &[]),
            RecorderScripts::default()
        );
        let s = recorder_scripts(
            &SiteGrants::default(),
            &parse(&["*"]),
            &[],
            &["a.test".into()],
        );
        assert_eq!(s.task.expect("registered").matches, ["*://a.test/*"]);
    }

    #[test]
    fn grants_and_the_allowed_list_become_match_patterns() {
        let s = recorder_scripts(
            &grants(&["shop.test", "bank.example"]),
            &parse(&["*.example.com", "shop.test", "127.0.0.1", "[::1]"]),
            &parse(&["ads.example.com"]),
            &[],
        );
        let always = s.always.expect("registered");
        assert_eq!(
            always.matches,
            [
                "*://*.example.com/*",
                "*://127.0.0.1/*",
                "*://[::1]/*",
                "*://bank.example/*",
                "*://shop.test/*",
            ]
        );
        assert_eq!(always.exclude, ["*://ads.example.com/*"]);
        assert_eq!(s.task, None);
    }

    #[test]
    fn hosts_chrome_would_refuse_are_dropped() {
        // Each would make Chrome refuse the whole registration.
        for bad in [
            "shop.test:8080",
            "b\u{fc}cher.de",
            "a..b",
            "Shop.Test",
            "[zz]",
            "[]",
            "a b",
            &"x".repeat(64),
        ] {
            assert_eq!(
                match_pattern(&HostPattern::Exact(bad.to_string())),
                None,
                "{bad}"
            );
        }
        assert_eq!(
            match_pattern(&HostPattern::Exact("xn--bcher-kva.de".into())).as_deref(),
            Some("*://xn--bcher-kva.de/*")
        );
        let s = recorder_scripts(&SiteGrants::default(), &[], &[], &["a b".into()]);
        assert_eq!(s.task, None);
    }

    #[test]
    fn the_task_adds_its_hosts_except_those_allowed_always() {
        let s = recorder_scripts(
            &grants(&["shop.test"]),
            &parse(&["*.example.com"]),
            &[],
            &[
                "shop.test".into(),
                "mail.example.com".into(),
                "Once.Test".into(),
                "once.test".into(),
            ],
        );
        let task = s.task.expect("registered");
        assert_eq!(task.matches, ["*://once.test/*"]);
        // A page both would match gets the always one only.
        assert_eq!(task.exclude, ["*://*.example.com/*", "*://shop.test/*"]);
    }

    #[test]
    fn blocked_sites_never_get_the_recorder() {
        let s = recorder_scripts(
            &grants(&["shop.test"]),
            &[],
            &parse(&["*"]),
            &["once.test".into()],
        );
        assert_eq!(s, RecorderScripts::default());
        let s = recorder_scripts(
            &SiteGrants::default(),
            &[],
            &parse(&["bank.test"]),
            &["once.test".into()],
        );
        assert_eq!(s.task.expect("registered").exclude, ["*://bank.test/*"]);
    }
}
