//! Guards between the LLM and the page.
//!
//! - [`fence`] (from [`crate::fence`], the project's one fence): page text always reaches
//!   the LLM inside markers that the page cannot forge.
//! - [`needs_confirmation`]: actions that cannot be undone (paying, deleting, sending,
//!   submitting credentials) wait for the user.
//! - [`UrlPolicy`]: where the agent may navigate.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::actions::{activates, Action};
use super::snapshot::{Element, Snapshot};
use crate::i18n::{nested, text, Mark, Msg};
use crate::url::domain_of;

pub use crate::fence::{
    fence, hide_card_numbers, neutralise, CARD_HIDDEN, FENCE_CLOSE, FENCE_OPEN, FENCE_RULE,
};

/// Why an action waits for the user's go-ahead.
// serde's default (external) tagging, as for `session::ProviderId`: an internal tag is read
// by buffering the value in serde's `Content` first, a second reader for the types inside.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ConfirmReason {
    /// The control's label says it buys, pays, deletes, sends… (`phrase` is what matched).
    IrreversibleLabel { label: String, phrase: String },
    /// It submits a form that holds a password field.
    SubmitsPassword,
    /// It submits a form that holds a payment field.
    SubmitsPayment { field: PaymentField },
    /// It types into a password field.
    EntersPassword,
    /// It types into a payment field.
    EntersPayment { field: PaymentField },
    /// It submits a form that changes something of a kind the user's task does not call
    /// for (`super::changes`); `button` is the submitting button's label.
    UnaskedChange { change: Change, button: String },
}

/// What a form changes, by its fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Change {
    /// Where mail goes: forwarding, filters, auto-replies, delegates.
    MailForwarding,
    /// Passwords, recovery addresses and codes, two-factor settings.
    Security,
    /// A postal address (shipping, billing, the address book).
    Address,
    /// A message, comment or review others will read.
    Message,
    /// The account's name, e-mail, phone or user name.
    Account,
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Change::MailForwarding => "where your mail goes",
            Change::Security => "your security settings",
            Change::Address => "an address",
            Change::Message => "a message others will read",
            Change::Account => "your account details",
        })
    }
}

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

/// The sentence shown to the user above the Allow / Deny buttons.
impl fmt::Display for ConfirmReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfirmReason::IrreversibleLabel { label, .. } => {
                write!(
                    f,
                    "“{label}” may not be undoable (buying, paying, deleting or sending)."
                )
            }
            ConfirmReason::SubmitsPassword => f.write_str("This submits a form with a password."),
            ConfirmReason::SubmitsPayment { field } => {
                write!(f, "This submits a form with payment details ({field}).")
            }
            ConfirmReason::EntersPassword => f.write_str("This types into a password field."),
            ConfirmReason::EntersPayment { field } => {
                write!(f, "This types payment details ({field}).")
            }
            ConfirmReason::UnaskedChange { change, .. } => {
                write!(
                    f,
                    "This saves a change to {change}, which your task did not ask for."
                )
            }
        }
    }
}

impl ConfirmReason {
    /// The reason as the end of a sentence about the action ("…, which may not be
    /// undoable"), for [`approval_message`].
    fn clause(&self) -> Msg {
        match self {
            ConfirmReason::IrreversibleLabel { .. } => Msg::key("whichMayNotBeUndoable"),
            ConfirmReason::SubmitsPassword => Msg::key("whichSubmitsPassword"),
            ConfirmReason::SubmitsPayment { field } => Msg::new(
                "whichSubmitsPayment",
                vec![nested(Mark::Plain, field.word())],
            ),
            ConfirmReason::EntersPassword => Msg::key("whichIsPassword"),
            ConfirmReason::EntersPayment { field } => {
                Msg::new("whichTakesPayment", vec![nested(Mark::Plain, field.word())])
            }
            ConfirmReason::UnaskedChange { change, .. } => Msg::new(
                "whichSavesUnasked",
                vec![nested(Mark::Plain, change.word())],
            ),
        }
    }
}

impl PaymentField {
    fn word(self) -> Msg {
        Msg::key(match self {
            PaymentField::CardNumber => "cardNumber",
            PaymentField::CardSecurityCode => "cardSecurityCode",
            PaymentField::CardExpiry => "cardExpiry",
            PaymentField::Iban => "iban",
        })
    }
}

impl Change {
    fn word(self) -> Msg {
        Msg::key(match self {
            Change::MailForwarding => "changeMailForwarding",
            Change::Security => "changeSecurity",
            Change::Address => "changeAddress",
            Change::Message => "changeMessage",
            Change::Account => "changeAccount",
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

/// The sentence above Approve / Deny: what Tandem wants to do, to which element as the user
/// sees it, and why it asks. Text to be typed is shown whole (a card number or IBAN too: this
/// sentence goes to the person deciding, never into a prompt), except a password, which the
/// person types themselves. Typing with Enter says that Enter submits the form.
pub fn approval_sentence(action: &Action, el: &Element, reason: &ConfirmReason) -> String {
    approval_message(action, el, reason).english()
}

/// [`approval_sentence`] as a catalog message.
pub fn approval_message(action: &Action, el: &Element, reason: &ConfirmReason) -> Msg {
    let seen = nested(Mark::Plain, seen_as_message(el));
    let clause = nested(Mark::Plain, reason.clause());
    match action {
        Action::Type {
            text: typed,
            submit,
            ..
        } => {
            if matches!(reason, ConfirmReason::EntersPassword) {
                return Msg::new("approveTypePassword", vec![seen]);
            }
            let value = text(one_line(typed));
            match (submit, reason) {
                (true, ConfirmReason::IrreversibleLabel { label, .. }) => Msg::new(
                    "approveTypeEnterLabel",
                    vec![value, seen, text(label.trim())],
                ),
                (true, _) => Msg::new("approveTypeEnter", vec![value, seen, clause]),
                (false, _) => Msg::new("approveType", vec![value, seen, clause]),
            }
        }
        Action::SelectOption { .. } => Msg::new("approveChoose", vec![seen, clause]),
        Action::Press { .. } => Msg::new("approvePress", vec![seen, clause]),
        Action::Drag { .. } => Msg::new("approveDrag", vec![seen, clause]),
        Action::SetValue { .. } => Msg::new("approveSetValue", vec![seen, clause]),
        _ => Msg::new("approveClick", vec![seen, clause]),
    }
}

/// Text to be typed, with line breaks shown as spaces so the sentence stays one paragraph;
/// never cut (the catalog's sentence puts it in quotes).
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// Labels of controls whose effect cannot be undone, as word sequences matched on whole
/// words (so "pay" does not fire on "Display"). English first, then the common European
/// languages. "remove" alone is absent on purpose: "Remove from cart" is harmless.
const IRREVERSIBLE: &[&str] = &[
    "buy",
    "pay",
    "purchase",
    "place order",
    "confirm order",
    "complete order",
    "submit order",
    "confirm payment",
    "delete",
    "remove account",
    "close account",
    "send",
    "transfer",
    "donate",
    // fr
    "acheter",
    "payer",
    "commander",
    "valider la commande",
    "supprimer",
    "envoyer",
    "virement",
    "transférer",
    // de
    "kaufen",
    "bezahlen",
    "bestellen",
    "zahlungspflichtig",
    "kostenpflichtig",
    "löschen",
    "senden",
    "absenden",
    "überweisen",
    // es / pt
    "comprar",
    "pagar",
    "finalizar compra",
    "realizar pedido",
    "eliminar",
    "borrar",
    "excluir",
    "enviar",
    "transferir",
    // it
    "acquista",
    "paga",
    "ordina",
    "elimina",
    "invia",
    // nl
    "kopen",
    "betalen",
    "verwijderen",
    "verzenden",
    "versturen",
    "overmaken",
];

/// The same for scripts without spaces between words, matched as substrings.
const IRREVERSIBLE_CJK: &[&str] = &[
    "购买", "支付", "付款", "删除", "发送", "購入", "支払", "削除", "送信", "구매", "결제", "삭제",
];

/// Whether `action` on `element` (located in `page`) must wait for the user. Navigation is
/// judged by [`UrlPolicy`] instead.
pub fn needs_confirmation(
    action: &Action,
    element: Option<&Element>,
    page: &Snapshot,
) -> Option<ConfirmReason> {
    let el = element?;
    match action {
        // A key that activates what has focus (Enter, Space) acts like a click on it, and
        // Enter in a field submits its form like `type` with `submit`.
        Action::Press { key, .. } if activates(key) => {
            if matches!(el.tag.as_str(), "input" | "textarea") {
                let typing = Action::Type {
                    element: 0,
                    text: String::new(),
                    clear: false,
                    submit: true,
                };
                return needs_confirmation(&typing, Some(el), page);
            }
            needs_confirmation(&Action::Click { element: 0 }, Some(el), page)
        }
        Action::ClickAt { .. } | Action::ClickTimes { .. } => {
            needs_confirmation(&Action::Click { element: 0 }, Some(el), page)
        }
        Action::Click { .. } => irreversible_label(el).or_else(|| {
            if submits_form(el) {
                sensitive_form(el, page)
            } else {
                None
            }
        }),
        Action::Type { submit, .. } => {
            if is_password(el) {
                return Some(ConfirmReason::EntersPassword);
            }
            if let Some(field) = payment_field(el) {
                return Some(ConfirmReason::EntersPayment { field });
            }
            if !submit {
                return None;
            }
            // Enter submits the form, so its submit buttons' labels count as the action's.
            sensitive_form(el, page).or_else(|| {
                let form = el.form?;
                page.elements
                    .iter()
                    .filter(|o| o.form == Some(form) && o.frame == el.frame && submits_form(o))
                    .find_map(irreversible_label)
            })
        }
        _ => None,
    }
}

/// Whether dropping something on `target` (a `drag` onto it) must wait for the user: a drop
/// zone labelled like an irreversible control ("Delete", a "Trash" labelled "Delete forever")
/// does what its label says.
pub fn needs_drop_confirmation(target: &Element) -> Option<ConfirmReason> {
    irreversible_label(target)
}

fn irreversible_label(el: &Element) -> Option<ConfirmReason> {
    let label = if el.name.is_empty() {
        &el.text
    } else {
        &el.name
    };
    let value = el.attr("value").unwrap_or_default();
    [label.as_str(), value].into_iter().find_map(|text| {
        let phrase = matching_phrase(text)?;
        Some(ConfirmReason::IrreversibleLabel {
            label: label.clone(),
            phrase: phrase.to_owned(),
        })
    })
}

/// The first irreversible phrase in `text`, matched on whole words, ignoring case.
pub fn matching_phrase(text: &str) -> Option<&'static str> {
    let lower = text.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    IRREVERSIBLE
        .iter()
        .find(|phrase| {
            let wanted: Vec<&str> = phrase.split(' ').collect();
            words.windows(wanted.len()).any(|w| w == wanted.as_slice())
        })
        .or_else(|| IRREVERSIBLE_CJK.iter().find(|p| lower.contains(**p)))
        .copied()
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

/// A password or payment field in the same form as `el`.
fn sensitive_form(el: &Element, page: &Snapshot) -> Option<ConfirmReason> {
    let form = el.form?;
    let fields = page
        .elements
        .iter()
        .filter(|o| o.form == Some(form) && o.frame == el.frame);
    let mut payment = None;
    for field in fields {
        if is_password(field) {
            return Some(ConfirmReason::SubmitsPassword);
        }
        payment = payment.or_else(|| payment_field(field));
    }
    payment.map(|field| ConfirmReason::SubmitsPayment { field })
}

fn is_password(el: &Element) -> bool {
    el.input_type().as_deref() == Some("password")
        || matches!(el.attr("autocomplete"), Some(a) if a.contains("current-password") || a.contains("new-password"))
}

/// Recognises payment fields by their autocomplete token, else by name, id, placeholder or
/// label (letters and digits only, lowercased: `card-number`, `cardNumber`, `card_number`).
fn payment_field(el: &Element) -> Option<PaymentField> {
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
            .to_lowercase();
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
        let p = s.trim().to_lowercase();
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
mod approval_tests {
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

    fn el(json: &str) -> Element {
        let base = serde_json::json!({
            "handle": "d.1", "frame": [], "tag": "input", "role": null, "implicitRole": null,
            "name": "", "text": "", "context": "", "attrs": {},
            "bbox": {"x": 0, "y": 0, "width": 10, "height": 10},
            "visible": true, "inViewport": true, "interactive": ["native"], "disabled": false,
            "checked": null, "form": null, "shadow": false
        });
        let mut value = base;
        let extra: serde_json::Value = crate::json::from_str(json).unwrap();
        for (k, v) in extra.as_object().unwrap() {
            value[k] = v.clone();
        }
        crate::json::from_value(value).unwrap()
    }

    #[test]
    fn approvals_name_the_control_as_the_user_sees_it_in_one_clean_sentence() {
        let password = el(r#"{"name":"Password","attrs":{"type":"password"}}"#);
        let typing = Action::Type {
            element: 2,
            text: "x".into(),
            clear: true,
            submit: false,
        };
        let s = approval_sentence(&typing, &password, &ConfirmReason::EntersPassword);
        assert_eq!(
            s,
            "Tandem wants to type into the \u{201c}Password\u{201d} field. Type the password below: it goes to the page only, never to the AI."
        );
        let unnamed = el(r#"{"attrs":{"type":"password"}}"#);
        assert!(
            approval_sentence(&typing, &unnamed, &ConfirmReason::EntersPassword)
                .starts_with("Tandem wants to type into a password field. "),
        );
        let pay = el(r#"{"tag":"button","implicitRole":"button","text":"Pay now"}"#);
        let reason = ConfirmReason::IrreversibleLabel {
            label: "Pay now".into(),
            phrase: "pay".into(),
        };
        let s = approval_sentence(&Action::Click { element: 4 }, &pay, &reason);
        assert_eq!(s, "Tandem wants to click the \u{201c}Pay now\u{201d} button, which may not be undoable (buying, paying, deleting or sending).");
        for s in [s, approval_sentence(&typing, &password, &reason)] {
            assert!(!s.contains(".."), "{s}");
            assert!(!s.contains('{'), "no action JSON: {s}");
            assert!(!s.contains('['), "no list ids: {s}");
        }
        // A payment value is shown to the person whole; Enter says it submits the form.
        let iban = el(r#"{"name":"IBAN","attrs":{"name":"iban"}}"#);
        let typing_iban = Action::Type {
            element: 3,
            text: "DE89 3704 0044 0532 0130 00".into(),
            clear: true,
            submit: false,
        };
        assert_eq!(
            approval_sentence(
                &typing_iban,
                &iban,
                &ConfirmReason::EntersPayment {
                    field: PaymentField::Iban
                }
            ),
            "Tandem wants to type \u{201c}DE89 3704 0044 0532 0130 00\u{201d} into the \u{201c}IBAN\u{201d} field, which takes payment details (IBAN)."
        );
        let coupon = el(r#"{"name":"Coupon"}"#);
        let enter = Action::Type {
            element: 5,
            text: "SAVE10".into(),
            clear: true,
            submit: true,
        };
        let order = ConfirmReason::IrreversibleLabel {
            label: "Place order".into(),
            phrase: "place order".into(),
        };
        assert_eq!(
            approval_sentence(&enter, &coupon, &order),
            "Tandem wants to type \u{201c}SAVE10\u{201d} into the \u{201c}Coupon\u{201d} field and press Enter: pressing Enter submits the form, as its \u{201c}Place order\u{201d} button does, which may not be undoable (buying, paying, deleting or sending)."
        );
        let long = "x".repeat(900);
        let s = approval_sentence(
            &Action::Type {
                element: 5,
                text: long.clone(),
                clear: true,
                submit: false,
            },
            &coupon,
            &ConfirmReason::EntersPayment {
                field: PaymentField::CardNumber,
            },
        );
        assert!(s.contains(&long), "never cut");
        let link = el(
            r#"{"tag":"a","implicitRole":"link","name":"Delete my account and every order I ever made, with no way back at all"}"#,
        );
        assert!(
            seen_as(&link).ends_with("…\u{201d} link"),
            "{}",
            seen_as(&link)
        );
    }

    #[test]
    fn new_hands_ask_first_where_a_click_or_submit_would() {
        let page: Snapshot = crate::json::from_str(
            r#"{"docId":"d","url":"https://shop.test/","title":"Shop","viewport":{"width":800,"height":600},"page":{"width":800,"height":600},"scroll":{"x":0,"y":0},"frames":[],"elements":[],"truncated":false}"#,
        )
        .unwrap();
        let delete = el(r#"{"tag":"button","implicitRole":"button","text":"Delete account"}"#);
        let press = |key: &str| {
            crate::agent::parse_action(&format!(
                r#"{{"action":"press","element":1,"key":"{key}"}}"#
            ))
            .unwrap()
            .action
        };
        assert!(needs_confirmation(&press("Enter"), Some(&delete), &page).is_some());
        assert!(needs_confirmation(&press("Space"), Some(&delete), &page).is_some());
        assert!(needs_confirmation(&press("Tab"), Some(&delete), &page).is_none());
        let at = crate::agent::parse_action(r#"{"action":"click_at","element":1,"x":0.5,"y":0.5}"#)
            .unwrap()
            .action;
        assert!(needs_confirmation(&at, Some(&delete), &page).is_some());
        let bin = el(r#"{"tag":"div","name":"Delete forever"}"#);
        assert!(needs_drop_confirmation(&bin).is_some());
        assert!(needs_drop_confirmation(&el(r#"{"tag":"section","name":"Done"}"#)).is_none());
    }
}
