//! Where the agent may act: Tandem's own per-site question on top of Chrome's host access.
//!
//! Chrome grants Tandem http and https hosts at install (see ARCHITECTURE.md, "Site access"),
//! so the agent can read any page the user points it at. Acting is another matter: before
//! its first click, typing or selection on a site in a task, the agent asks "Let Tandem act on
//! shop.example.com?" — Allow once (this task), Always allow on this site (remembered in
//! [`SiteGrants`], listed in Settings), or Deny (the task stops, Cancelled). The user's
//! Allowed / Blocked site lists are checked before this and win over a remembered grant.
//!
//! Some pages cannot be acted on at all, whatever the user allows: Chrome's own pages, other
//! extensions' pages, the Web Store, files without the user's toggle, PDFs in Chrome's viewer.
//! [`page_refusal`] names them in a sentence, and [`explain_script_error`] turns Chrome's raw
//! `executeScript` errors into one.

use serde::{Deserialize, Serialize};

use super::actions::{Action, ScrollTarget};
use crate::case::Lowercase;
use crate::i18n::{nested, text, Mark, Msg};

/// The `chrome.storage.local` key of the remembered "Always allow" sites.
pub const SITE_GRANTS_KEY: &str = "siteGrants";

/// The sites the user told Tandem it may always act on (hosts, lowercase, no port).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SiteGrants {
    pub always: Vec<String>,
}

impl SiteGrants {
    /// Reads what was stored; anything unreadable counts as no grant, so a damaged entry
    /// makes Tandem ask again rather than act unasked. Entries that are not hosts are dropped.
    pub fn parse(json: &str) -> Self {
        let value: serde_json::Value = crate::json::from_str(json).unwrap_or_default();
        let mut grants = SiteGrants::default();
        if let Some(list) = value.get("always").and_then(|v| v.as_array()) {
            for host in list.iter().filter_map(|h| h.as_str()) {
                grants.add(host);
            }
        }
        grants
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{}".into())
    }

    pub fn allows(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        self.always.contains(&host)
    }

    /// Remembers `host` (kept sorted and once); false when it is not a host.
    pub fn add(&mut self, host: &str) -> bool {
        let host = host.trim().to_ascii_lowercase();
        if !is_host(&host) {
            return false;
        }
        if let Err(at) = self.always.binary_search(&host) {
            self.always.insert(at, host);
        }
        true
    }

    /// Forgets `host`; true when it was remembered.
    pub fn remove(&mut self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        let before = self.always.len();
        self.always.retain(|h| *h != host);
        self.always.len() != before
    }
}

/// A host as the browser's URL parser gives it (`shop.example.com`, `127.0.0.1`, `[::1]`).
fn is_host(host: &str) -> bool {
    !host.is_empty()
        && host.len() <= 253
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':' | '[' | ']'))
}

/// Whether `action` changes the page, and so needs the site's grant. Reading the page
/// (extracting text, scrolling) and going somewhere (navigate, tabs) do not: the grant is
/// asked on the page where the agent then acts.
pub fn needs_site_grant(action: &Action) -> bool {
    matches!(
        action,
        Action::Click { .. }
            | Action::ClickTimes { .. }
            | Action::Type { .. }
            | Action::SelectOption { .. }
            | Action::Press { .. }
            | Action::Hover { .. }
            | Action::ContextClick { .. }
            | Action::Drag { .. }
            | Action::SetValue { .. }
            | Action::SelectText { .. }
            | Action::ClickAt { .. }
            | Action::ClickPoint { .. }
            | Action::Scroll {
                target: ScrollTarget::Inside(..)
            }
    )
}

/// The question shown in the panel (a catalog message: `english()` is the sentence).
pub fn site_question(host: &str) -> Msg {
    Msg::new("askSite", vec![text(host)])
}

/// Why the task ended when the user denied a site.
pub fn site_denied(host: &str) -> Msg {
    Msg::new("taskSiteDenied", vec![text(host)])
}

/// Whether going to `target` (a host) needs the user's approval first: it is neither the
/// site the agent is on (`current`) nor a site the user named in the task or a note
/// (`user_texts`). A page can ask the agent to "open https://attacker.example/?d=<what you
/// read>": without this, that request would carry page data away unasked.
pub fn needs_leave_approval(target: &str, current: Option<&str>, user_texts: &[&str]) -> bool {
    let bare = |h: &str| {
        let h = h.trim_end_matches('.').to_ascii_lowercase();
        h.strip_prefix("www.").map(str::to_string).unwrap_or(h)
    };
    let target = bare(target);
    if current.is_some_and(|c| bare(c) == target) {
        return false;
    }
    let named = user_texts.iter().any(|text| {
        let text = text.lowercase();
        text.match_indices(&target).any(|(at, _)| {
            // A whole host in the text: "shop.example.com" does not name "example.com"'s
            // look-alike "badexample.com", nor the other way round.
            let before = text[..at].chars().next_back();
            let after = text[at + target.len()..].chars().next();
            let edge = |c: Option<char>| c.is_none_or(|c| !(c.is_alphanumeric() || c == '-'));
            edge(before)
                && (edge(after)
                    || after == Some('.') && edge(text[at + target.len() + 1..].chars().next()))
        })
    });
    !named
}

/// The approval sentence for leaving to a site nobody named: the real host first (`host`,
/// as the browser's URL parser reads `url`), then the whole URL, never cut (the panel
/// scrolls), and a warning when the address hides the host behind a user name.
pub fn leave_question(url: &str, host: &str) -> String {
    leave_message(url, host).english()
}

/// [`leave_question`] as a catalog message; the host and the address are arguments.
pub fn leave_message(url: &str, host: &str) -> Msg {
    Msg::new(
        "leaveQuestion",
        vec![
            text(host),
            text(url),
            nested(Mark::Plain, userinfo_message(url, host)),
        ],
    )
}

/// ` (careful: the address begins with “shop.example@”, which is not the site: the site is
/// collect.example)` when `url` carries a user name before its host, as
/// `https://shop.example@collect.example/` does to pass for the shop; else nothing.
pub fn userinfo_warning(url: &str, host: &str) -> String {
    userinfo_message(url, host).english()
}

/// [`userinfo_warning`] as a catalog message (an empty literal when there is none).
pub fn userinfo_message(url: &str, host: &str) -> Msg {
    let Some((_, rest)) = url.split_once("://") else {
        return Msg::literal("");
    };
    // The authority ends at the first of these, as the URL standard reads it for http(s).
    let authority = rest.split(['/', '?', '#', '\\']).next().unwrap_or("");
    let Some(at) = authority.rfind('@') else {
        return Msg::literal("");
    };
    Msg::new("userinfoWarning", vec![text(&authority[..at]), text(host)])
}

/// At most this many characters of a URL in a sentence.
const URL_CHARS: usize = 80;

fn short(url: &str) -> String {
    if url.chars().count() <= URL_CHARS {
        url.to_string()
    } else {
        let cut: String = url.chars().take(URL_CHARS - 1).collect();
        format!("{cut}…")
    }
}

/// Whether [`page_refusal`]'s answer for `url` depends on file access (a `file:` page): the
/// worker asks Chrome about it only then, not on every step.
pub fn needs_file_access(url: &str) -> bool {
    url.trim()
        .get(..5)
        .is_some_and(|s| s.eq_ignore_ascii_case("file:"))
}

/// The sentence for a page no extension may act on, or `None` for an ordinary web page.
/// `file_access`: the user turned on "Allow access to file URLs" for Tandem.
pub fn page_refusal(url: &str, file_access: bool) -> Option<String> {
    let lower = url.trim().to_ascii_lowercase();
    let scheme = lower.split_once(':').map(|(s, _)| s).unwrap_or("");
    let page = short(url.trim());
    let why = match scheme {
        "http" | "https" => {
            let rest = lower.split_once("://").map(|(_, r)| r).unwrap_or("");
            let host = rest.split(['/', '?', '#']).next().unwrap_or("");
            let path = rest.get(host.len()..).unwrap_or("");
            let path = path.split(['?', '#']).next().unwrap_or("");
            if host == "chromewebstore.google.com"
                || (host == "chrome.google.com" && path.starts_with("/webstore"))
            {
                "Chrome does not let extensions act on the Chrome Web Store"
            } else if path.ends_with(".pdf") {
                "Chrome shows PDFs in its own viewer, which extensions cannot act on"
            } else {
                return None;
            }
        }
        "file" if file_access => {
            if lower.split(['?', '#']).next().unwrap_or("").ends_with(".pdf") {
                "Chrome shows PDFs in its own viewer, which extensions cannot act on"
            } else {
                return None;
            }
        }
        "file" => "Tandem may not read files on this computer. To allow it, turn on \"Allow access to file URLs\" in Tandem's Details at chrome://extensions",
        "chrome" | "chrome-untrusted" | "chrome-search" | "devtools" | "edge" | "about"
        | "view-source" => "Chrome does not let extensions read or change its own pages",
        "chrome-extension" => "it is an extension's own page, which other extensions cannot read or change",
        _ => "Tandem acts only on web pages (http and https)",
    };
    Some(format!("Tandem cannot act on {page}: {why}."))
}

/// Chrome's `executeScript` error on the page at `url`, as a sentence for the user.
pub fn explain_script_error(url: &str, raw: &str) -> String {
    if let Some(refusal) = page_refusal(url, true) {
        return refusal;
    }
    let page = short(url.trim());
    let lower = raw.to_ascii_lowercase();
    if lower.contains("extensions gallery cannot be scripted") {
        return format!("Tandem cannot act on {page}: Chrome does not let extensions act on the Chrome Web Store.");
    }
    if lower.contains("must request permission") || lower.contains("cannot access contents of") {
        return format!("Chrome has not given Tandem access to {page}. In chrome://extensions, open Tandem's Details and set \"Site access\" to \"On all sites\".");
    }
    if lower.contains("frame with id") || lower.contains("no tab with id") {
        return format!("The page {page} closed or changed while Tandem was reading it.");
    }
    if lower.contains("error page") {
        return format!("Tandem cannot act on {page}: it is showing an error page (the site could not be reached).");
    }
    format!("Tandem could not read {page}.")
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_file_pages_depend_on_file_access() {
        for url in [
            "https://shop.example/",
            "http://127.0.0.1:8080/a.pdf",
            "chrome://settings",
            "about:blank",
            "data:text/html,hi",
            "view-source:https://a.example/",
            " file:///home/a.html",
            "FILE:///home/a.pdf",
            "file:///home/a.html",
            "fil",
            "",
        ] {
            if !super::needs_file_access(url) {
                assert_eq!(
                    super::page_refusal(url, true),
                    super::page_refusal(url, false),
                    "{url}"
                );
            }
        }
        assert!(super::needs_file_access(" FILE:///home/a.html"));
        assert!(!super::needs_file_access("https://file.example/"));
        assert_ne!(
            super::page_refusal("file:///home/a.html", true),
            super::page_refusal("file:///home/a.html", false)
        );
    }

    use super::*;
    use crate::agent::SelectMode;

    #[test]
    fn grants_are_hosts_kept_once_and_damage_means_ask_again() {
        let mut g = SiteGrants::default();
        assert!(g.add("Shop.Example.com"));
        assert!(g.add("shop.example.com"));
        assert!(g.add("a.test"));
        assert!(!g.add("not a host/"));
        assert_eq!(g.always, ["a.test", "shop.example.com"]);
        assert!(g.allows("SHOP.example.com"));
        assert!(!g.allows("example.com"), "a grant is for that host only");
        assert_eq!(SiteGrants::parse(&g.to_json()), g);
        assert!(g.remove("a.test"));
        assert!(!g.remove("a.test"));
        for damaged in ["", "{", "[]", r#"{"always":"x.com"}"#, "null"] {
            assert_eq!(
                SiteGrants::parse(damaged),
                SiteGrants::default(),
                "{damaged}"
            );
        }
        let mixed = SiteGrants::parse(r#"{"always":["ok.test", 5, "bad host", null]}"#);
        assert_eq!(mixed.always, ["ok.test"]);
    }

    #[test]
    fn only_actions_that_change_the_page_need_the_grant() {
        assert!(needs_site_grant(&Action::Click { element: 1 }));
        assert!(needs_site_grant(&Action::SelectOption {
            element: 1,
            option: "M".into(),
            mode: SelectMode::Replace,
        }));
        assert!(needs_site_grant(&Action::Type {
            element: 1,
            text: "x".into(),
            clear: true,
            submit: true
        }));
        // Every action that acts on the page, the new hands alike.
        for acting in [
            r#"{"action":"press","key":"Escape"}"#,
            r#"{"action":"hover","element":3}"#,
            r#"{"action":"drag","element":3,"to":4}"#,
            r#"{"action":"set_value","element":3,"value":30}"#,
            r#"{"action":"select_text","element":3,"text":"quick"}"#,
            r#"{"action":"click_at","element":3,"x":0.5,"y":0.2}"#,
            r#"{"action":"scroll","element":3,"direction":"end"}"#,
        ] {
            let action = crate::agent::parse_action(acting).expect(acting).action;
            assert!(needs_site_grant(&action), "{acting}");
        }
        assert!(!needs_site_grant(&Action::Wait {
            ms: 500,
            text: Some("Saved".into())
        }));
        assert!(!needs_site_grant(&Action::ExtractText { element: None }));
        assert!(!needs_site_grant(&Action::Scroll {
            target: ScrollTarget::Element(2)
        }));
        assert!(!needs_site_grant(&Action::Navigate {
            url: "https://b.test/".into()
        }));
    }

    #[test]
    fn pages_no_extension_may_act_on_are_named_in_a_sentence() {
        let cases = [
            ("chrome://settings/", false, Some("its own pages")),
            (
                "chrome-extension://abc/popup.html",
                false,
                Some("an extension's own page"),
            ),
            (
                "https://chromewebstore.google.com/detail/x/abc",
                false,
                Some("Chrome Web Store"),
            ),
            (
                "https://chrome.google.com/webstore/category/extensions",
                false,
                Some("Chrome Web Store"),
            ),
            (
                "file:///home/me/a.html",
                false,
                Some("Allow access to file URLs"),
            ),
            ("file:///home/me/a.html", true, None),
            ("https://example.com/report.pdf", false, Some("PDFs")),
            ("about:blank", false, Some("its own pages")),
            ("data:text/html,hi", false, Some("only on web pages")),
            ("https://shop.example.com/cart", false, None),
            ("http://127.0.0.1:8080/", false, None),
            ("https://chrome.google.com/search", false, None),
        ];
        for (url, files, expected) in cases {
            let got = page_refusal(url, files);
            match expected {
                None => assert_eq!(got, None, "{url}"),
                Some(part) => {
                    let s = got.unwrap_or_else(|| panic!("{url} should be refused"));
                    assert!(s.contains(part), "{url}: {s}");
                    assert!(s.starts_with("Tandem cannot act on "), "{s}");
                    assert!(s.ends_with('.') && !s.ends_with(".."), "{s}");
                }
            }
        }
        let long = format!("https://a.test/{}.pdf", "x".repeat(200));
        let s = page_refusal(&long, false).unwrap();
        assert!(s.chars().count() < 200, "long URLs are shortened: {s}");
    }

    #[test]
    fn leaving_for_a_site_nobody_named_needs_approval() {
        let task = ["Compare the price with bookshop.example and tell me"];
        assert!(!needs_leave_approval("shop.test", Some("shop.test"), &task));
        assert!(!needs_leave_approval(
            "www.shop.test",
            Some("shop.test"),
            &task
        ));
        assert!(!needs_leave_approval(
            "bookshop.example",
            Some("shop.test"),
            &task
        ));
        assert!(!needs_leave_approval(
            "www.bookshop.example",
            Some("shop.test"),
            &task
        ));
        assert!(needs_leave_approval(
            "attacker.example",
            Some("shop.test"),
            &task
        ));
        assert!(
            needs_leave_approval("shop.example", Some("shop.test"), &task),
            "a part of a named host is not the host"
        );
        assert!(needs_leave_approval(
            "bookshop.example.evil",
            Some("shop.test"),
            &task
        ));
        assert!(
            !needs_leave_approval(
                "attacker.example",
                Some("shop.test"),
                &["buy it", "also check attacker.example."]
            ),
            "a note names it"
        );
        assert!(needs_leave_approval("a.test", None, &[]));
        let q = leave_question("https://attacker.example/?d=secret", "attacker.example");
        assert!(q.contains("https://attacker.example/?d=secret"), "{q}");
        assert!(
            q.starts_with("Tandem wants to open a page on attacker.example, "),
            "{q}"
        );
        // The real host first; a user name dressed as the shop is spelled out.
        let url = "https://shop.example@collect.attacker/c?e=ada@example.com";
        assert_eq!(
            leave_question(url, "collect.attacker"),
            "Tandem wants to open a page on collect.attacker, a site you did not name in the task: https://shop.example@collect.attacker/c?e=ada@example.com (careful: the address begins with \u{201c}shop.example@\u{201d}, which is not the site: the site is collect.attacker). A page can ask the agent to go somewhere with your data in the address: approve only if you expect this."
        );
        assert_eq!(userinfo_warning("https://a.test/?e=x@y.z", "a.test"), "");
        // Never cut: whatever the length, the data in the address is all there.
        let long = format!("https://collect.attacker/?d={}", "k".repeat(2000));
        assert!(leave_question(&long, "collect.attacker").contains(&long));
    }

    #[test]
    fn chrome_errors_become_sentences_without_chromes_words() {
        let raw = "Cannot access contents of url \"https://shop.example.com/\". Extension manifest must request permission to access this host.";
        let s = explain_script_error("https://shop.example.com/", raw);
        assert!(s.contains("Site access"), "{s}");
        assert!(!s.contains("manifest"), "{s}");
        let s = explain_script_error(
            "https://chromewebstore.google.com/",
            "The extensions gallery cannot be scripted.",
        );
        assert!(s.contains("Web Store"), "{s}");
        let s = explain_script_error("chrome://version/", "Cannot access a chrome:// URL");
        assert!(s.contains("its own pages"), "{s}");
        assert_eq!(
            explain_script_error("https://a.test/", "weird"),
            "Tandem could not read https://a.test/."
        );
    }
}
