//! Effects, not labels: where an action sends the user's data, judged from the page's own
//! structure before acting and from what the browser held back after.
//!
//! - Before acting: [`effect_of`] reads where a form submits ([`super::snapshot::FormTarget`], which the driver
//!   reports only when it is another origin than the field's document) and where a link
//!   goes. An effect that carries data to a host the task has not approved
//!   ([`Approved`]) is asked about first, with [`effect_question`]: the real host first, the
//!   data that leaves.
//! - After acting: the task-scoped firewall ([`Firewall`], Chrome's declarativeNetRequest
//!   session rules on the task's tabs) blocks navigations and frame form posts to every host
//!   not approved, whatever caused them (a link, a redirect, a script, Enter in a form). The
//!   worker reports each blocked request as a [`Held`]; [`held_question`] asks about it.
//!   See ARCHITECTURE.md, "The task's firewall".

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::actions::Action;
use super::safety::{seen_as_message, submits_form};
use super::snapshot::{Element, Snapshot};
use super::task::TaskContext;
use crate::i18n::{nested, text, Mark, Msg};
use crate::url::{domain_of, form_decode};

/// The session-rule id of the firewall's top-level rule (navigations of the task's tabs).
pub const RULE_TOP: u32 = 3101;
/// The session-rule id of its frame rule (form posts inside frames of the task's tabs).
pub const RULE_FRAME: u32 = 3102;

/// The hosts a task may send the user to and submit forms to, without asking: the hosts
/// of its tabs when it started, the hosts the user wrote in the task or a note, and the ones
/// the user approved during it (`TaskContext::hosts_opened`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Approved {
    hosts: Vec<String>,
}

impl Approved {
    /// What `ctx` approves.
    pub fn of(ctx: &TaskContext) -> Self {
        let mut approved = Approved::default();
        for host in &ctx.hosts_opened {
            approved.add(host);
        }
        for text in std::iter::once(&ctx.task).chain(&ctx.notes) {
            for host in hosts_named(text) {
                approved.add(&host);
            }
        }
        approved
    }

    fn add(&mut self, host: &str) {
        let host = bare(host);
        if !host.is_empty() && !self.hosts.contains(&host) {
            self.hosts.push(host);
        }
    }

    /// Whether `host` (or a host under it: `www.shop.example` under `shop.example`, as
    /// Chrome's `requestDomains` match) is approved.
    pub fn allows(&self, host: &str) -> bool {
        let host = bare(host);
        self.hosts.iter().any(|h| {
            host == *h
                || host
                    .strip_suffix(h.as_str())
                    .is_some_and(|sub| sub.ends_with('.'))
        })
    }

    /// The approved hosts, sorted (the rule's `excludedRequestDomains`).
    pub fn hosts(&self) -> Vec<String> {
        let mut hosts = self.hosts.clone();
        crate::sort::sort(&mut hosts);
        hosts
    }
}

/// `www.shop.example` and `shop.example` are one site to a person.
fn bare(host: &str) -> String {
    let host = host.trim().trim_end_matches('.').to_ascii_lowercase();
    host.strip_prefix("www.")
        .map(str::to_string)
        .unwrap_or(host)
}

/// The hosts written in a user's text: words shaped like `shop.example.com` (letters,
/// digits and hyphens in at least two dot-separated labels, the last one letters), or the
/// host of a written URL.
pub fn hosts_named(text: &str) -> Vec<String> {
    let mut hosts = Vec::new();
    for word in text.split(|c: char| {
        c.is_whitespace() || matches!(c, ',' | ';' | '"' | '(' | ')' | '<' | '>' | '\'')
    }) {
        let candidate = if word.contains("://") {
            domain_of(word).unwrap_or_default()
        } else {
            let end = word.find(['/', '?', '#', ':']).unwrap_or(word.len());
            word[..end].trim_end_matches('.').to_ascii_lowercase()
        };
        let labels: Vec<&str> = candidate.split('.').collect();
        let shaped = labels.len() >= 2
            && labels.iter().all(|l| {
                !l.is_empty()
                    && l.chars().all(|c| c.is_alphanumeric() || c == '-')
                    && !l.starts_with('-')
            })
            && labels
                .last()
                .is_some_and(|tld| tld.len() >= 2 && tld.chars().all(char::is_alphabetic));
        if shaped && !hosts.contains(&candidate) {
            hosts.push(candidate);
        }
    }
    hosts
}

/// The firewall as Chrome's session rules: the task's tabs may navigate (top frame, and frames
/// of any method but GET) only to approved hosts; `frame_hosts` are the hosts of frames the
/// task's pages embed, whose own form posts are their pages' business (their scripts could
/// send what is typed into them anyway).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Firewall {
    pub tabs: Vec<i32>,
    pub hosts: Vec<String>,
    pub frame_hosts: Vec<String>,
}

impl Firewall {
    pub fn new(tabs: &[i32], approved: &Approved, frame_hosts: &[String]) -> Self {
        let mut tabs = tabs.to_vec();
        crate::sort::sort(&mut tabs);
        tabs.dedup();
        let hosts = approved.hosts();
        let mut frames: Vec<String> = frame_hosts
            .iter()
            .map(|h| bare(h))
            .filter(|h| !h.is_empty() && !approved.allows(h))
            .collect();
        crate::sort::sort(&mut frames);
        frames.dedup();
        Firewall {
            tabs,
            hosts,
            frame_hosts: frames,
        }
    }

    /// The `addRules` of `declarativeNetRequest.updateSessionRules` (ids [`RULE_TOP`] and
    /// [`RULE_FRAME`], which the same call removes first).
    pub fn rules(&self) -> serde_json::Value {
        let mut frame_hosts = self.hosts.clone();
        frame_hosts.extend(self.frame_hosts.iter().cloned());
        let rule = |id: u32, kind: &str, excluded: &[String], methods: Option<&[&str]>| {
            let mut condition = crate::json!({
                "tabIds": self.tabs,
                "resourceTypes": [kind],
            });
            if !excluded.is_empty() {
                condition["excludedRequestDomains"] = crate::json!(excluded);
            }
            if let Some(methods) = methods {
                condition["requestMethods"] = crate::json!(methods);
            }
            crate::json!({
                "id": id,
                "priority": 1,
                "action": {"type": "block"},
                "condition": condition,
            })
        };
        crate::json!([
            rule(RULE_TOP, "main_frame", &self.hosts, None),
            // GET loads of frames pass: pages embed other sites' frames (payment fields,
            // videos, maps) as they load, and blocking them would break those pages.
            rule(
                RULE_FRAME,
                "sub_frame",
                &frame_hosts,
                Some(&["post", "put", "patch", "delete"]),
            ),
        ])
    }
}

/// A request the firewall held back, as the worker's listener saw it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Held {
    pub url: String,
    /// `GET`, `POST`… as Chrome reports it.
    pub method: String,
    /// In a frame of the page rather than the tab itself.
    #[serde(default)]
    pub frame: bool,
    /// The form's fields, for a form post whose body Chrome could read.
    #[serde(default)]
    pub form: BTreeMap<String, Vec<String>>,
    /// The tab it came from.
    #[serde(default)]
    pub tab: Option<i32>,
}

impl Held {
    pub fn host(&self) -> Option<String> {
        domain_of(&self.url)
    }

    pub fn is_get(&self) -> bool {
        self.method.eq_ignore_ascii_case("get")
    }
}

/// A URL's parts a person needs to see: its host, the userinfo before an `@` (which makes
/// `https://shop.example@collect.attacker/` read as the shop) and its query's fields.
struct UrlParts {
    host: String,
    userinfo: Option<String>,
    query: Vec<(String, String)>,
}

fn url_parts(url: &str) -> Option<UrlParts> {
    let host = domain_of(url)?;
    let rest = url.trim().split_once("://")?.1;
    let authority = rest.split(['/', '?', '#', '\\']).next().unwrap_or_default();
    let userinfo = authority
        .rsplit_once('@')
        .map(|(user, _)| user.to_string())
        .filter(|u| !u.is_empty());
    let query = rest
        .split_once('?')
        .map(|(_, q)| q.split('#').next().unwrap_or_default())
        .unwrap_or_default();
    let query = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (form_decode(k), form_decode(v))
        })
        .collect();
    Some(UrlParts {
        host,
        userinfo,
        query,
    })
}

/// At most this many characters of data in a question; more is said, never dropped silently.
const DATA_CHARS: usize = 2_000;

/// `e = “ada@example.com”, ref = “x”` — the fields that leave, each value whole up to
/// [`DATA_CHARS`] in all, then how much more there is. Names and values are the page's
/// words, never translated.
fn data_line(fields: &[(String, String)]) -> Msg {
    let mut line = String::new();
    let mut left = DATA_CHARS;
    for (i, (name, value)) in fields.iter().enumerate() {
        let part = format!(
            "{}{} = \u{201c}{}\u{201d}",
            if i > 0 { ", " } else { "" },
            name,
            value
        );
        let count = part.chars().count();
        if count > left {
            let rest: usize = fields[i..]
                .iter()
                .map(|(n, v)| n.chars().count() + v.chars().count() + 6)
                .sum::<usize>()
                .saturating_sub(left);
            line.extend(part.chars().take(left));
            let more = Msg::new("moreCharacters", vec![text(rest.to_string())]);
            return Msg {
                key: String::new(),
                args: vec![text(line), nested(Mark::Plain, more)],
            };
        }
        left -= count;
        line.push_str(&part);
    }
    Msg::literal(line)
}

/// `collect.attacker.test` — or, with userinfo, the warning that the address only looks like
/// another site.
fn host_shown(parts: &UrlParts) -> Msg {
    match &parts.userinfo {
        Some(user) => Msg::new(
            "hostLooksLike",
            vec![text(parts.host.clone()), text(user.clone())],
        ),
        None => Msg::literal(parts.host.clone()),
    }
}

/// The question for a request the firewall held back: the destination first, what the page
/// tried, the data that would leave.
pub fn held_question(held: &Held) -> String {
    held_message(held).english()
}

/// [`held_question`] as a catalog message.
pub fn held_message(held: &Held) -> Msg {
    let Some(parts) = url_parts(&held.url) else {
        return Msg::new("heldSendTo", vec![text(held.url.clone())]);
    };
    let host = host_shown(&parts);
    let mut fields: Vec<(String, String)> = parts.query.clone();
    for (name, values) in &held.form {
        for value in values {
            fields.push((name.clone(), value.clone()));
        }
    }
    let what = match (held.is_get(), held.frame) {
        (true, false) => "heldTab",
        (true, true) => "heldFrame",
        (false, false) => "heldForm",
        (false, true) => "heldFrameForm",
    };
    let data = if fields.is_empty() {
        Msg::new("sendsAddressOnly", vec![text(held.url.clone())])
    } else {
        Msg::new("itWouldSend", vec![nested(Mark::Plain, data_line(&fields))])
    };
    Msg::new(
        "heldQuestion",
        vec![
            nested(Mark::Plain, host),
            nested(Mark::Plain, Msg::key(what)),
            nested(Mark::Plain, data),
        ],
    )
}

/// What an action on an element would cause that the task has not approved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    /// The element's form submits to `host` (another origin than its page).
    SubmitsForm {
        url: String,
        host: String,
        method: String,
        /// Typing with Enter, rather than a click on the button.
        enter: bool,
        /// The form's fields with their values as the page shows them (no password or
        /// payment values: the driver never reports them), the typed text in its field.
        fields: Vec<(String, String)>,
    },
    /// The link leads to `host`.
    FollowsLink { url: String, host: String },
}

impl Effect {
    pub fn host(&self) -> &str {
        match self {
            Effect::SubmitsForm { host, .. } | Effect::FollowsLink { host, .. } => host,
        }
    }
}

/// The effect of `action` on `el` (in `page`) that sends data to a host `approved` does not
/// allow: a form submitting to another site (by a click on its button, or typing with
/// Enter), or a link to another site. `None` when it stays on approved hosts.
pub fn effect_of(
    action: &Action,
    el: &Element,
    page: &Snapshot,
    approved: &Approved,
) -> Option<Effect> {
    let page_host = domain_of(&page.url);
    let foreign = |host: &str| {
        !approved.allows(host) && page_host.as_deref().is_none_or(|p| bare(p) != bare(host))
    };
    let submit = |enter: bool, typed: Option<&str>| -> Option<Effect> {
        let target = el.submits_to.as_ref()?;
        let host = domain_of(&target.url)?;
        if !foreign(&host) {
            return None;
        }
        let form = el.form?;
        let fields = page
            .elements
            .iter()
            .filter(|o| o.form == Some(form) && o.frame == el.frame)
            .filter(|o| matches!(o.tag.as_str(), "input" | "textarea" | "select"))
            .filter(|o| {
                !matches!(
                    o.input_type().as_deref(),
                    Some("submit" | "button" | "reset" | "image")
                )
            })
            .filter_map(|o| {
                let name = o.attr("name").filter(|n| !n.is_empty())?.to_string();
                let value = if o.handle == el.handle {
                    typed.map(str::to_string)
                } else {
                    o.attr("value").map(str::to_string)
                };
                Some((name, value.unwrap_or_default()))
            })
            .collect();
        Some(Effect::SubmitsForm {
            url: target.url.clone(),
            host,
            method: target.method.to_ascii_uppercase(),
            enter,
            fields,
        })
    };
    match action {
        Action::Type {
            submit: true, text, ..
        } => submit(true, Some(text)),
        // A point of a control (`click_at`, a screenshot's pixel) clicks it as a whole does.
        Action::Click { .. } | Action::ClickAt { .. } | Action::ClickTimes { .. }
            if submits_form(el) =>
        {
            submit(false, None)
        }
        // Where the browser resolved the link, never its `href` text: `/\evil.example/x`
        // reads as a path here but opens evil.example (the driver leaves `links_to` out for a
        // link that stays on its document's origin).
        Action::Click { .. } | Action::ClickAt { .. } | Action::ClickTimes { .. } => {
            let url = el.links_to.clone()?;
            let host = domain_of(&url)?;
            foreign(&host).then_some(Effect::FollowsLink { url, host })
        }
        _ => None,
    }
}

/// The question before an action with `effect`: the real host first, then what the action
/// does, then the data that leaves.
pub fn effect_question(el: &Element, effect: &Effect) -> String {
    effect_message(el, effect).english()
}

/// [`effect_question`] as a catalog message; hosts, addresses and the page's values are
/// arguments, never translated.
pub fn effect_message(el: &Element, effect: &Effect) -> Msg {
    match effect {
        Effect::SubmitsForm {
            url,
            method,
            enter,
            fields,
            ..
        } => {
            let parts = url_parts(url);
            let host = parts
                .as_ref()
                .map(host_shown)
                .unwrap_or_else(|| Msg::literal(url.clone()));
            let how = Msg::new(
                if *enter {
                    "effectEnterSubmits"
                } else {
                    "effectClickSubmits"
                },
                vec![nested(Mark::Plain, seen_as_message(el))],
            );
            let mut all = fields.clone();
            if let Some(p) = &parts {
                all.extend(p.query.iter().cloned());
            }
            let data = if all.is_empty() {
                Msg::key("noFieldsSeen")
            } else {
                data_line(&all)
            };
            Msg::new(
                "effectSubmitQuestion",
                vec![
                    nested(Mark::Plain, host),
                    nested(Mark::Plain, how),
                    text(parts.as_ref().map_or(url.as_str(), |p| p.host.as_str())),
                    text(method.clone()),
                    nested(Mark::Plain, data),
                ],
            )
        }
        Effect::FollowsLink { url, .. } => {
            let parts = url_parts(url);
            let host = parts
                .as_ref()
                .map(host_shown)
                .unwrap_or_else(|| Msg::literal(url.clone()));
            let data = match parts.as_ref().map(|p| p.query.as_slice()) {
                Some(query) if !query.is_empty() => Msg::new(
                    "addressCarries",
                    vec![nested(Mark::Plain, data_line(query))],
                ),
                _ => Msg::new("addressIs", vec![text(url.clone())]),
            };
            Msg::new(
                "effectLinkQuestion",
                vec![
                    nested(Mark::Plain, host),
                    nested(Mark::Plain, seen_as_message(el)),
                    nested(Mark::Plain, data),
                ],
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(task: &str) -> TaskContext {
        let mut ctx = TaskContext::new("t", task, 7);
        ctx.hosts_opened.push("www.shop.tandem.test".into());
        ctx
    }

    #[test]
    fn the_approved_hosts_are_the_tab_s_site_and_the_sites_the_user_wrote() {
        let mut c = ctx(
            "Compare prices on docs.example.org and https://Other.example/x, not badexample.org's",
        );
        c.notes.push("also try news.example.net.".into());
        let a = Approved::of(&c);
        for yes in [
            "shop.tandem.test",
            "www.shop.tandem.test",
            "cdn.shop.tandem.test",
            "docs.example.org",
            "other.example",
            "news.example.net",
            "badexample.org",
        ] {
            assert!(a.allows(yes), "{yes}");
        }
        for no in [
            "collect.attacker.test",
            "tandem.test",
            "example.org",
            "xshop.tandem.test",
            "shop.tandem.test.attacker.test",
        ] {
            assert!(!a.allows(no), "{no}");
        }
        assert_eq!(
            hosts_named("version 1.2 or e.g. or a.b.3"),
            Vec::<String>::new()
        );
    }

    #[test]
    fn the_rules_block_the_task_tabs_navigations_and_frame_posts_to_other_hosts() {
        let a = Approved::of(&ctx("buy a backpack"));
        let fw = Firewall::new(
            &[9, 7, 9],
            &a,
            &["partner.tandem.test".into(), "shop.tandem.test".into()],
        );
        assert_eq!(fw.tabs, vec![7, 9]);
        assert_eq!(fw.frame_hosts, vec!["partner.tandem.test"]);
        let rules = fw.rules();
        assert_eq!(
            rules[0],
            crate::json!({"id": RULE_TOP, "priority": 1, "action": {"type": "block"},
                "condition": {"tabIds": [7, 9], "resourceTypes": ["main_frame"],
                    "excludedRequestDomains": ["shop.tandem.test"]}})
        );
        assert_eq!(
            rules[1]["condition"]["excludedRequestDomains"],
            crate::json!(["shop.tandem.test", "partner.tandem.test"])
        );
        assert_eq!(
            rules[1]["condition"]["requestMethods"],
            crate::json!(["post", "put", "patch", "delete"])
        );
    }

    #[test]
    fn a_held_request_is_asked_about_with_its_host_first_and_all_its_data() {
        let held = Held {
            url: "https://collect.attacker.test/?e=ada%40example.com&n=1".into(),
            method: "GET".into(),
            frame: false,
            form: BTreeMap::new(),
            tab: None,
        };
        let q = held_question(&held);
        assert!(
            q.starts_with(
                "Send data to collect.attacker.test? The page tried to take this tab there"
            ),
            "{q}"
        );
        assert!(
            q.contains("e = \u{201c}ada@example.com\u{201d}, n = \u{201c}1\u{201d}"),
            "{q}"
        );

        let mut form = BTreeMap::new();
        form.insert("email".to_string(), vec!["ada@example.com".to_string()]);
        let post = Held {
            url: "https://shop.tandem.test@collect.attacker.test/post".into(),
            method: "POST".into(),
            frame: true,
            form,
            tab: None,
        };
        let q = held_question(&post);
        assert!(q.starts_with("Send data to collect.attacker.test (the address starts with \u{201c}shop.tandem.test@\u{201d}"), "{q}");
        assert!(
            q.contains("A form in a frame of the page tried to submit there"),
            "{q}"
        );
        assert!(q.contains("email = \u{201c}ada@example.com\u{201d}"), "{q}");

        let long = Held {
            url: format!("https://collect.attacker.test/?d={}", "x".repeat(3000)),
            method: "GET".into(),
            frame: false,
            form: BTreeMap::new(),
            tab: None,
        };
        let q = held_question(&long);
        assert!(q.contains("more characters)"), "never cut silently");
    }

    fn el(json: serde_json::Value) -> Element {
        let mut base = crate::json!({
            "handle": "d.1", "tag": "input", "name": "", "attrs": {},
            "bbox": {"x": 0, "y": 0, "width": 10, "height": 10},
            "visible": true, "interactive": ["native"]
        });
        for (k, v) in json.as_object().unwrap() {
            base[k] = v.clone();
        }
        crate::json::from_value(base).unwrap()
    }

    fn page(elements: Vec<Element>) -> Snapshot {
        crate::json::from_value(crate::json!({
            "docId": "d", "url": "https://shop.tandem.test/offer", "title": "Offer",
            "scroll": {"x": 0, "y": 0}, "viewport": {"width": 800, "height": 600},
            "page": {"width": 800, "height": 600}, "frames": [],
            "elements": elements, "truncated": false
        }))
        .unwrap()
    }

    #[test]
    fn typing_with_enter_or_clicking_verify_in_a_form_that_posts_elsewhere_is_an_effect() {
        let target =
            crate::json!({"url": "https://collect.attacker.test/verify", "method": "post"});
        let email = el(crate::json!({"handle": "d.1", "name": "Email", "form": 0,
            "attrs": {"name": "email", "type": "email"}, "submitsTo": target}));
        let hidden_ref = el(crate::json!({"handle": "d.2", "form": 0,
            "attrs": {"name": "ref", "value": "shop"}, "submitsTo": target}));
        let verify = el(
            crate::json!({"handle": "d.3", "tag": "button", "implicitRole": "button",
            "text": "Verify", "form": 0, "submitsTo": target}),
        );
        let snap = page(vec![email.clone(), hidden_ref, verify.clone()]);
        let a = Approved::of(&ctx("sign up for the newsletter with ada@example.com"));
        let typing = Action::Type {
            element: 1,
            text: "ada@example.com".into(),
            clear: true,
            submit: true,
        };
        let effect = effect_of(&typing, &email, &snap, &a).expect("an effect");
        let q = effect_question(&email, &effect);
        assert!(q.starts_with("Send this form to collect.attacker.test? Typing into the \u{201c}Email\u{201d} field and pressing Enter submits its form to collect.attacker.test (POST)"), "{q}");
        assert!(
            q.contains("email = \u{201c}ada@example.com\u{201d}, ref = \u{201c}shop\u{201d}"),
            "{q}"
        );
        let click = Action::Click { element: 3 };
        let effect = effect_of(&click, &verify, &snap, &a).expect("an effect");
        assert!(effect_question(&verify, &effect)
            .contains("Clicking the \u{201c}Verify\u{201d} button submits its form"));
        // Typing without Enter sends nothing.
        let quiet = Action::Type {
            element: 1,
            text: "x".into(),
            clear: true,
            submit: false,
        };
        assert_eq!(effect_of(&quiet, &email, &snap, &a), None);
        // Named by the user: no question.
        let named = Approved::of(&ctx("verify my email on collect.attacker.test"));
        assert_eq!(effect_of(&click, &verify, &snap, &named), None);
    }

    #[test]
    fn a_link_to_another_host_is_an_effect_and_one_on_the_site_is_not() {
        let a = Approved::of(&ctx("find a backpack"));
        let leaving = "https://shop.tandem.test@collect.attacker.test/dl?e=ada%40example.com";
        let out = el(
            crate::json!({"tag": "a", "implicitRole": "link", "text": "Free gift",
            "attrs": {"href": leaving}, "linksTo": leaving}),
        );
        let snap = page(vec![out.clone()]);
        let click = Action::Click { element: 1 };
        let effect = effect_of(&click, &out, &snap, &a).expect("an effect");
        assert_eq!(effect.host(), "collect.attacker.test");
        // A point of it (`click_at`, a screenshot's pixel) follows it just the same.
        let point = Action::ClickAt {
            element: 1,
            x: 500,
            y: 500,
        };
        assert_eq!(effect_of(&point, &out, &snap, &a), Some(effect.clone()));
        let q = effect_question(&out, &effect);
        assert!(q.starts_with("Go to collect.attacker.test (the address starts with \u{201c}shop.tandem.test@\u{201d}"), "{q}");
        assert!(q.contains("e = \u{201c}ada@example.com\u{201d}"), "{q}");
        // Judged where the browser resolved it (`linksTo`), never by the `href` text: these
        // read as paths on the shop, and each opens evil.example (`url` resolves them as
        // Chromium does).
        let base = url::Url::parse("http://shop.tandem.test/offer").expect("a URL");
        for href in [
            "/\\evil.example/x",
            "\\\\evil.example",
            "https:evil.example",
        ] {
            let resolved = base.join(href).expect("resolves").to_string();
            let link = el(crate::json!({"tag": "a", "implicitRole": "link",
                "attrs": {"href": href}, "linksTo": resolved}));
            let effect = effect_of(&click, &link, &snap, &a);
            assert_eq!(
                effect.as_ref().map(Effect::host),
                Some("evil.example"),
                "{href} → {resolved}"
            );
        }
        // The driver says nothing of a link that stays on its document's origin, nor of
        // `mailto:`: no question.
        for href in ["/product/1", "#top", "mailto:x@y.z"] {
            let link =
                el(crate::json!({"tag": "a", "implicitRole": "link", "attrs": {"href": href}}));
            assert_eq!(effect_of(&click, &link, &snap, &a), None, "{href}");
        }
        let www = el(crate::json!({"tag": "a", "implicitRole": "link",
            "attrs": {"href": "https://www.shop.tandem.test/cart"},
            "linksTo": "https://www.shop.tandem.test/cart"}));
        assert_eq!(effect_of(&click, &www, &snap, &a), None);
    }
}
