//! Guards between the LLM and the page.
//!
//! - [`fence`] (from [`crate::fence`], the project's one fence): page text always reaches
//!   the LLM inside markers that the page cannot forge.
//! - [`seen_as`]: a control named as the user sees it, for the questions; password and
//!   payment fields recognised (the judge, [`super::judge`], asks about them).
//! - [`UrlPolicy`]: where the agent may navigate.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::snapshot::Element;
use crate::i18n::{text, Msg};
use crate::url::domain_of;

use crate::case::Lowercase;
pub use crate::fence::{
    fence, hide_card_numbers, neutralise, CARD_HIDDEN, FENCE_CLOSE, FENCE_OPEN, FENCE_RULE,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PaymentField {
    CardNumber,
    CardSecurityCode,
    CardExpiry,
    Iban,
}

impl fmt::Display for PaymentField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PaymentField::CardNumber => "card number",
            PaymentField::CardSecurityCode => "card security code",
            PaymentField::CardExpiry => "card expiry date",
            PaymentField::Iban => "IBAN",
        })
    }
}

impl PaymentField {
    pub(crate) fn word(self) -> Msg {
        Msg::key(match self {
            PaymentField::CardNumber => "cardNumber",
            PaymentField::CardSecurityCode => "cardSecurityCode",
            PaymentField::CardExpiry => "cardExpiry",
            PaymentField::Iban => "iban",
        })
    }
}

/// The element as the user sees it on the page: `the “Pay now” button`, `the “Password”
/// field`, or `a password field` when it has no name.
pub fn seen_as(el: &Element) -> String {
    seen_as_message(el).english()
}

/// [`seen_as`] as a catalog message.
pub fn seen_as_message(el: &Element) -> Msg {
    // (named, unnamed) keys by the kind of control a person sees.
    let (named, unnamed) = match (el.effective_role(), el.tag.as_str()) {
        _ if is_password(el) => ("seenField", "aPasswordField"),
        (Some("button"), _) | (_, "button") => ("seenButton", "aButton"),
        (Some("link"), _) | (_, "a") => ("seenLink", "aLink"),
        (Some("checkbox" | "switch"), _) => ("seenCheckbox", "aCheckbox"),
        (Some("radio"), _) => ("seenOption", "anOption"),
        (Some("tab"), _) => ("seenTab", "aTab"),
        (Some("menuitem" | "menuitemcheckbox" | "menuitemradio"), _) => {
            ("seenMenuItem", "aMenuItem")
        }
        (Some("option"), _) => ("seenChoice", "aChoice"),
        (Some("combobox" | "listbox"), _) | (_, "select") => ("seenList", "aList"),
        (Some("textbox" | "searchbox" | "spinbutton" | "slider"), _)
        | (_, "input" | "textarea") => ("seenField", "aField"),
        _ => ("seenElement", "anElement"),
    };
    let name = if el.name.trim().is_empty() {
        el.text.trim()
    } else {
        el.name.trim()
    };
    if name.is_empty() {
        return Msg::key(unnamed);
    }
    let mut shown: String = name.chars().take(60).collect();
    if shown.len() < name.len() {
        shown.push('…');
    }
    Msg::new(named, vec![text(shown)])
}

/// Buttons submit their form (unless `type="button"`/`"reset"`); so do submit and image inputs.
pub(crate) fn submits_form(el: &Element) -> bool {
    if el.form.is_none() {
        return false;
    }
    match (el.tag.as_str(), el.input_type().as_deref()) {
        ("button", Some("button" | "reset")) => false,
        ("button", _) => true,
        ("input", Some("submit" | "image")) => true,
        _ => el.effective_role() == Some("button"),
    }
}

pub(crate) fn is_password(el: &Element) -> bool {
    el.input_type().as_deref() == Some("password")
        || matches!(el.attr("autocomplete"), Some(a) if a.contains("current-password") || a.contains("new-password"))
}

/// Recognises payment fields by their autocomplete token, else by name, id, placeholder or
/// label (letters and digits only, lowercased: `card-number`, `cardNumber`, `card_number`).
pub(crate) fn payment_field(el: &Element) -> Option<PaymentField> {
    if !matches!(el.tag.as_str(), "input" | "textarea" | "select") {
        return None;
    }
    if let Some(auto) = el.attr("autocomplete") {
        let auto = auto.to_ascii_lowercase();
        for token in auto.split_whitespace() {
            match token {
                "cc-number" => return Some(PaymentField::CardNumber),
                "cc-csc" => return Some(PaymentField::CardSecurityCode),
                "cc-exp" | "cc-exp-month" | "cc-exp-year" => return Some(PaymentField::CardExpiry),
                _ => {}
            }
        }
    }
    let names = [
        el.attr("name"),
        el.attr("id"),
        el.attr("placeholder"),
        Some(el.name.as_str()),
    ];
    names.into_iter().flatten().find_map(|raw| {
        let key: String = raw
            .chars()
            .filter(|c| c.is_alphanumeric())
            .collect::<String>()
            .lowercase();
        if [
            "cardnumber",
            "ccnumber",
            "ccnum",
            "creditcard",
            "kartennummer",
            "numerodecarte",
        ]
        .iter()
        .any(|s| key.contains(s))
        {
            Some(PaymentField::CardNumber)
        } else if [
            "cvc",
            "cvv",
            "csc",
            "cvc2",
            "cvv2",
            "securitycode",
            "cardcode",
        ]
        .contains(&key.as_str())
            || key.contains("securitycode")
            || key.contains("cardverification")
        {
            Some(PaymentField::CardSecurityCode)
        } else if key == "iban" || key.starts_with("iban") {
            Some(PaymentField::Iban)
        } else {
            None
        }
    })
}

/// A host pattern: `example.com` (that host only), `*.example.com` (the host and every
/// subdomain, like Chrome's match patterns), or `*` (every host).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostPattern {
    Any,
    Exact(String),
    WithSubdomains(String),
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{pattern:?} is not a host pattern ({why}); write example.com, *.example.com or *")]
pub struct HostPatternError {
    pub pattern: String,
    pub why: &'static str,
}

impl FromStr for HostPattern {
    type Err = HostPatternError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = |why| HostPatternError {
            pattern: s.to_owned(),
            why,
        };
        let p = s.trim().lowercase();
        if p == "*" {
            return Ok(HostPattern::Any);
        }
        let (wild, host) = match p.strip_prefix("*.") {
            Some(rest) => (true, rest),
            None => (false, p.as_str()),
        };
        // A fully qualified name (`example.com.`) is the same host.
        let host = host.trim_end_matches('.');
        if host.is_empty() {
            return Err(err("no host"));
        }
        if host.contains('*') {
            return Err(err("`*` is only allowed as a leading `*.`"));
        }
        if host.contains(['/', ':', '@', ' ']) && !host.starts_with('[') {
            return Err(err("a host only, without scheme, port or path"));
        }
        Ok(if wild {
            HostPattern::WithSubdomains(host.to_owned())
        } else {
            HostPattern::Exact(host.to_owned())
        })
    }
}

impl HostPattern {
    /// `host` as [`domain_of`] gives it: lowercase, without port.
    pub fn matches(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.');
        match self {
            HostPattern::Any => true,
            HostPattern::Exact(h) => host == h,
            HostPattern::WithSubdomains(h) => {
                host == h
                    || host
                        .strip_suffix(h.as_str())
                        .is_some_and(|sub| sub.ends_with('.'))
            }
        }
    }
}

/// Where the agent may go. Deny wins over allow; an empty allow list allows every web host.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UrlPolicy {
    pub allow: Vec<HostPattern>,
    pub deny: Vec<HostPattern>,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UrlDenied {
    /// javascript:, data:, file:, chrome:… are never navigated to by the agent.
    #[error("{url:?} is not an http(s) web address")]
    NotWeb { url: String },
    #[error("{host} is blocked by the site list")]
    Denied { host: String },
    #[error("{host} is not in the list of sites the agent may visit")]
    NotAllowed { host: String },
}

impl UrlPolicy {
    /// Parses lists of patterns, as the settings store them.
    pub fn new<'a>(
        allow: impl IntoIterator<Item = &'a str>,
        deny: impl IntoIterator<Item = &'a str>,
    ) -> Result<Self, HostPatternError> {
        Ok(UrlPolicy {
            allow: allow
                .into_iter()
                .map(str::parse)
                .collect::<Result<_, _>>()?,
            deny: deny.into_iter().map(str::parse).collect::<Result<_, _>>()?,
        })
    }

    /// Checks `url` with core's own reading of its host. The worker does not use this: a
    /// hand-written parser disagrees with the browser's on percent-escapes, numeric IPs,
    /// full-width letters and stray whitespace, so it hands [`UrlPolicy::check_host`] the
    /// host that Chrome's `URL` parser gives.
    pub fn check(&self, url: &str) -> Result<(), UrlDenied> {
        let host = domain_of(url).ok_or_else(|| UrlDenied::NotWeb {
            url: url.chars().take(80).collect(),
        })?;
        self.check_host(&host)
    }

    /// Checks a host as the browser's URL parser gives it (lowercase, punycode, IPv4 in
    /// dotted decimal, no port).
    pub fn check_host(&self, host: &str) -> Result<(), UrlDenied> {
        let host = host.to_ascii_lowercase();
        if self.deny.iter().any(|p| p.matches(&host)) {
            return Err(UrlDenied::Denied { host });
        }
        if !self.allow.is_empty() && !self.allow.iter().any(|p| p.matches(&host)) {
            return Err(UrlDenied::NotAllowed { host });
        }
        Ok(())
    }
}

#[cfg(test)]
mod fence_tests {
    use super::*;

    #[test]
    fn card_numbers_never_leave_the_fence_in_clear() {
        for (text, hidden) in [
            (
                "value 4111 1111 1111 1111 ok",
                "value [card number hidden] ok",
            ),
            ("4111-1111-1111-1111", "[card number hidden]"),
            ("card:5500005555555559.", "card:[card number hidden]."),
            ("378282246310005", "[card number hidden]"),
        ] {
            assert_eq!(hide_card_numbers(text), hidden);
        }
        for kept in [
            "order 4111 1111 1111 1112 (not Luhn)",
            "phone 555 1234",
            "2024-11-23",
            "a 12-digit 123456789012 id",
        ] {
            assert_eq!(hide_card_numbers(kept), kept);
        }
        let fenced = fence(
            "element list",
            "[3] textbox \"Card\" value=4242 4242 4242 4242",
        );
        assert!(!fenced.contains("4242 4242"), "{fenced}");
        assert!(fenced.contains(CARD_HIDDEN));
    }
}
