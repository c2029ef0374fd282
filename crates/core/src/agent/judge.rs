//! The judge: whether a step waits for the user before it acts, and the reason they read.
//!
//! One entry point, [`judge`], takes the [`Step`] about to run (the action, the control as the
//! page shows it, the page, the page's words around it when the worker read them, the
//! person's own words and what the task did so far) and gives a [`Verdict`] or nothing. Every
//! reason is derived here, from one table of kinds ([`Kind`]):
//!
//! - **What the control does**, by its own words ("Pay now", "Delete", "Move to Trash",
//!   "Yes, unpublish it"): paying, deleting, sending and publishing always ask.
//! - **A confirmation's affirmative button** ("Yes, I'm sure", "OK") takes its kind from the
//!   page's question around it ("Are you sure you want to delete…?"); from nothing else.
//! - **What the submitted form changes**, by the fields the agent changed in it (typed into,
//!   ticked, chose in) and the bulk action its list chose — never by words a page merely
//!   shows: a filled comment box sends a message; a ticked "Superuser status" or a chosen
//!   group changes who may do what; forwarding, an address, account details. A password or
//!   payment field in the form asks whatever the task says.
//! - **The person's words** (task, notes, answers; never the page's) decide the last sentence:
//!   "Your task did not ask for that: a page may have told the agent to" only where they do
//!   not call for that kind. Paying, deleting, sending, publishing and security changes ask
//!   even when asked for (they cannot be taken back); forwarding, addresses and account
//!   details ask only when the person's words do not call for them.
//! - **A confirmation already approved**: once the person approved an act, the application's
//!   own confirmation of the same kind on the same site within the next two steps is covered
//!   by that approval (no second question), unless it names another object.
//!
//! What this does not judge: where data goes (`effects`, the firewall, `flow`) and which sites
//! the agent may act on or open (`sites`): those questions are about places, not kinds.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::actions::{activates, Action};
use super::safety::{is_password, payment_field, seen_as_message, submits_form, PaymentField};
use super::snapshot::{Checked, Element, Snapshot};
use crate::case::Lowercase;
use crate::i18n::{nested, text, Mark, Msg};
use crate::url::domain_of;

/// What a step changes, the most serious first: the order a form holding several is named by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// Buying, paying, ordering, transferring money.
    Pay,
    /// Deleting (a trash can included: a person expects to be asked).
    Delete,
    /// Who may do what (permissions, groups, roles, staff) and how an account is protected
    /// (recovery, two-factor).
    Security,
    /// A message, comment or reply others will read.
    Send,
    /// Publishing or unpublishing what others see.
    Publish,
    /// Where mail goes: forwarding, auto-replies, delegates.
    MailForwarding,
    /// A postal address.
    Address,
    /// The account's name, e-mail, phone or user name.
    Account,
}

impl Kind {
    const ALL: [Kind; 8] = [
        Kind::Pay,
        Kind::Delete,
        Kind::Security,
        Kind::Send,
        Kind::Publish,
        Kind::MailForwarding,
        Kind::Address,
        Kind::Account,
    ];

    /// Whether the step asks even when the person's words call for it: what cannot be taken
    /// back. The others ask only when the person did not call for them.
    pub fn always_asks(self) -> bool {
        matches!(
            self,
            Kind::Pay | Kind::Delete | Kind::Security | Kind::Send | Kind::Publish
        )
    }

    /// Words a control's name says it with (whole words; CJK as substrings, see
    /// [`has_phrase`]). "remove" alone is absent on purpose: "Remove from cart" is harmless.
    fn control_words(self) -> &'static [&'static str] {
        match self {
            Kind::Pay => &[
                "buy",
                "pay",
                "purchase",
                "place order",
                "confirm order",
                "complete order",
                "submit order",
                "confirm payment",
                "transfer",
                "donate",
                "acheter",
                "payer",
                "commander",
                "valider la commande",
                "virement",
                "transférer",
                "kaufen",
                "bezahlen",
                "bestellen",
                "zahlungspflichtig",
                "kostenpflichtig",
                "überweisen",
                "comprar",
                "pagar",
                "finalizar compra",
                "realizar pedido",
                "transferir",
                "acquista",
                "paga",
                "ordina",
                "kopen",
                "betalen",
                "overmaken",
                "购买",
                "支付",
                "付款",
                "購入",
                "支払",
                "구매",
                "결제",
            ],
            Kind::Delete => &[
                "delete",
                "remove account",
                "close account",
                "move to trash",
                "move to the trash",
                "move to bin",
                "empty trash",
                "erase",
                "destroy",
                "supprimer",
                "löschen",
                "eliminar",
                "borrar",
                "excluir",
                "elimina",
                "verwijderen",
                "删除",
                "削除",
                "삭제",
            ],
            Kind::Send => &[
                "send",
                "senden",
                "absenden",
                "envoyer",
                "enviar",
                "invia",
                "verzenden",
                "versturen",
                "发送",
                "送信",
            ],
            Kind::Publish => &[
                "publish",
                "unpublish",
                "make public",
                "veröffentlichen",
                "publier",
                "publicar",
                "pubblica",
                "publiceren",
                "发布",
                "公開",
                "公开",
            ],
            _ => &[],
        }
    }

    /// More words a confirmation's question says it with ("… will be deleted").
    fn question_words(self) -> &'static [&'static str] {
        match self {
            Kind::Pay => &["charged", "paid", "payment"],
            Kind::Delete => &[
                "deleted",
                "deletion",
                "trash",
                "permanently remove",
                "permanently removed",
                "gelöscht",
                "supprimé",
                "supprimés",
                "eliminado",
                "eliminados",
            ],
            Kind::Send => &["sent"],
            Kind::Publish => &["published", "unpublished", "go live", "take offline"],
            _ => &[],
        }
    }

    /// Words a submitting button says that make its form's message a sent one.
    fn submit_words(self) -> &'static [&'static str] {
        match self {
            Kind::Send => &[
                "add comment",
                "post comment",
                "submit comment",
                "comment",
                "post reply",
                "reply",
                "post",
                "kommentieren",
                "commenter",
                "comentar",
            ],
            _ => &[],
        }
    }

    /// Words of a field (name, id, autocomplete, placeholder, label, group) that make a
    /// change to it one of this kind.
    fn field_words(self) -> &'static [&'static str] {
        match self {
            Kind::Security => &[
                "permission",
                "group",
                "role",
                "staff",
                "superuser",
                "admin",
                "moderator",
                "privilege",
                "access level",
                "recovery",
                "two-factor",
                "2fa",
                "security question",
                "backup code",
                "backup email",
                "berechtigung",
                "gruppe",
                "rolle",
            ],
            Kind::Send => &[
                "message",
                "comment",
                "reply",
                "review",
                "nachricht",
                "commentaire",
                "comentario",
                "mensaje",
            ],
            Kind::MailForwarding => &[
                "forward",
                "redirect",
                "autoreply",
                "auto-reply",
                "vacation",
                "delegate",
                "weiterleit",
                "transférer",
                "reenviar",
            ],
            Kind::Address => &[
                "street-address",
                "address-line",
                "address-level",
                "postal-code",
                "street",
                "postcode",
                "postal",
                "zip",
                "city",
                "shipping address",
                "billing address",
                "delivery address",
                "adresse",
                "anschrift",
                "straße",
                "dirección",
            ],
            Kind::Account => &[
                "email",
                "e-mail",
                "tel",
                "phone",
                "username",
                "given-name",
                "family-name",
                "full name",
                "display name",
                "nickname",
                "bday",
            ],
            _ => &[],
        }
    }

    /// Words in the person's text that call for such a change.
    fn task_words(self) -> &'static [&'static str] {
        match self {
            Kind::Pay => &[
                "buy",
                "pay",
                "purchase",
                "order",
                "checkout",
                "check out",
                "donate",
                "transfer",
                "book",
                "subscribe",
            ],
            Kind::Delete => &[
                "delete", "remove", "trash", "erase", "destroy", "clear", "clean up", "get rid",
                "discard", "purge", "wipe",
            ],
            Kind::Security => &[
                "password",
                "security",
                "recovery",
                "2fa",
                "two-factor",
                "two factor",
                "backup code",
                "permission",
                "permissions",
                "group",
                "groups",
                "role",
                "staff",
                "superuser",
                "admin",
                "moderator",
                "moderators",
                "access",
                "privilege",
            ],
            Kind::Send => &[
                "message", "write", "reply", "comment", "review", "post", "send", "contact",
                "tell", "ask", "answer", "mail", "email", "e-mail", "notify", "respond", "share",
            ],
            Kind::Publish => &[
                "publish",
                "unpublish",
                "go live",
                "make public",
                "take down",
                "take offline",
            ],
            Kind::MailForwarding => &[
                "forward",
                "redirect",
                "filter",
                "auto-reply",
                "autoreply",
                "vacation",
                "out of office",
                "delegate",
            ],
            Kind::Address => &[
                "address", "ship to", "shipping", "deliver", "street", "zip", "postcode", "move",
            ],
            Kind::Account => &[
                "account",
                "profile",
                "email",
                "e-mail",
                "phone",
                "name",
                "username",
                "sign up",
                "sign me up",
                "sign-up",
                "signup",
                "join",
                "register",
                "subscribe",
                "newsletter",
                "contact",
                "user",
            ],
        }
    }

    /// The clause after the control's name: ", which deletes something…".
    fn clause(self) -> Msg {
        Msg::key(match self {
            Kind::Pay => "judgePay",
            Kind::Delete => "judgeDelete",
            Kind::Security => "judgeSecurity",
            Kind::Send => "judgeSend",
            Kind::Publish => "judgePublish",
            Kind::MailForwarding => "judgeMailForwarding",
            Kind::Address => "judgeAddress",
            Kind::Account => "judgeAccount",
        })
    }
}

/// Where a change's kind was read: what the question adds after the kind.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Evidence {
    /// The control's own words.
    Control,
    /// The confirmation's question on the page (a sentence of it).
    Question(String),
    /// The action the form's list chose ("Delete selected books").
    Chosen(String),
    /// The message that leaves (the filled comment box's text).
    Message(String),
    /// The fields the agent changed, as the page names them.
    Fields(Vec<String>),
}

/// Why a step waits for the user.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ConfirmReason {
    /// It makes a change of `kind`; `unasked` when the person's words do not call for it.
    Change {
        kind: Kind,
        /// The control's label ("Yes, I'm sure", the submitting button for Enter).
        control: String,
        evidence: Evidence,
        unasked: bool,
    },
    /// It submits a form that holds a password field.
    SubmitsPassword,
    /// It submits a form that holds a payment field.
    SubmitsPayment { field: PaymentField },
    /// It types into a password field.
    EntersPassword,
    /// It types into a payment field.
    EntersPayment { field: PaymentField },
}

impl ConfirmReason {
    /// The kind of change, for reasons that are one.
    pub fn kind(&self) -> Option<Kind> {
        match self {
            ConfirmReason::Change { kind, .. } => Some(*kind),
            _ => None,
        }
    }

    /// The reason as the end of a sentence about the action (", which deletes…").
    pub(crate) fn clause(&self) -> Msg {
        match self {
            ConfirmReason::Change {
                kind,
                evidence,
                unasked,
                ..
            } => {
                let mut args = vec![nested(Mark::Plain, kind.clause())];
                let shown = |key: &str, words: &str| {
                    nested(Mark::Plain, Msg::new(key, vec![text(short(words, 200))]))
                };
                match evidence {
                    Evidence::Control => {}
                    Evidence::Question(q) => args.push(shown("judgePageAsks", q)),
                    Evidence::Chosen(c) => args.push(shown("judgeChosen", c)),
                    Evidence::Message(m) => args.push(shown("judgeMessage", m)),
                    Evidence::Fields(f) => args.push(shown("judgeFields", &f.join(", "))),
                }
                if *unasked {
                    args.push(nested(Mark::Plain, Msg::key("judgeUnasked")));
                }
                Msg {
                    key: String::new(),
                    args,
                }
            }
            ConfirmReason::SubmitsPassword => Msg::key("whichSubmitsPassword"),
            ConfirmReason::SubmitsPayment { field } => Msg::new(
                "whichSubmitsPayment",
                vec![nested(Mark::Plain, field.word())],
            ),
            ConfirmReason::EntersPassword => Msg::key("whichIsPassword"),
            ConfirmReason::EntersPayment { field } => {
                Msg::new("whichTakesPayment", vec![nested(Mark::Plain, field.word())])
            }
        }
    }
}

/// The reason on its own, as a log or a test reads it.
impl fmt::Display for ConfirmReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let clause = self.clause().english();
        f.write_str(clause.trim_start_matches([',', '.', ' ']))
    }
}

/// An act the person approved, kept so that the application's own confirmation of it is not
/// asked about again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovedAct {
    pub kind: Kind,
    pub host: String,
    /// [`Step::step`] when it was approved.
    pub step: u32,
    /// What it was about, as words (the control's surroundings, the form's values, the
    /// page's title), lowercased.
    pub about: String,
}

/// What the judge remembers during a task: the fields the agent changed (by the driver's
/// handle, which a DOM node keeps for its document's life) and the last act approved.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct JudgeMemory {
    pub changed: Vec<String>,
    pub approved: Option<ApprovedAct>,
}

/// Handles of changed fields kept (the newest).
const MAX_CHANGED: usize = 64;
/// Steps after an approval within which the application's confirmation is covered by it.
const COVERS_STEPS: u32 = 2;

impl JudgeMemory {
    pub fn is_empty(&self) -> bool {
        self.changed.is_empty() && self.approved.is_none()
    }

    /// After `action` on `el` took effect: a field typed into, chosen in, set, or a box ticked
    /// is one the agent changed.
    pub fn acted(&mut self, action: &Action, el: &Element) {
        let changes = match action {
            Action::Type { .. } | Action::SelectOption { .. } | Action::SetValue { .. } => true,
            Action::Click { .. }
            | Action::ClickAt { .. }
            | Action::ClickTimes { .. }
            | Action::Press { .. } => matches!(
                el.effective_role(),
                Some("checkbox" | "switch" | "radio" | "option" | "menuitemcheckbox")
            ),
            _ => false,
        };
        if changes && !self.changed.contains(&el.handle) {
            if self.changed.len() >= MAX_CHANGED {
                self.changed.remove(0);
            }
            self.changed.push(el.handle.clone());
        }
    }

    /// The person approved `verdict`.
    pub fn approve(&mut self, verdict: &Verdict) {
        if let Some(act) = &verdict.approves {
            self.approved = Some(act.clone());
        }
    }
}

/// A step about to run, as the judge sees it.
pub struct Step<'a> {
    pub action: &'a Action,
    pub element: &'a Element,
    /// The page the element was found in.
    pub page: &'a Snapshot,
    /// The element a `drag` drops onto.
    pub drop_on: Option<&'a Element>,
    /// The page's visible text, when the worker read it ([`wants_page_words`]): where a
    /// confirmation's question is.
    pub page_words: Option<&'a str>,
    /// The person's own words: the task, notes, answers. Never page text.
    pub user_texts: &'a [&'a str],
    pub memory: &'a JudgeMemory,
    /// The task's count of actions so far (`TaskContext::actions_taken`).
    pub step: u32,
}

/// The judge's answer: ask, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub reason: ConfirmReason,
    /// What an approval covers ([`JudgeMemory::approve`]).
    pub approves: Option<ApprovedAct>,
}

impl Verdict {
    pub fn kind(&self) -> Option<Kind> {
        self.reason.kind()
    }
}

/// Whether the judge needs the page's words for this step: a click on a confirmation's
/// affirmative button, or a step soon after an approval (to tell its own confirmation from
/// another). The worker reads the page's text only then.
pub fn wants_page_words(action: &Action, el: &Element, memory: &JudgeMemory, step: u32) -> bool {
    clicks(action)
        && (affirms(label(el))
            || memory
                .approved
                .as_ref()
                .is_some_and(|a| step.saturating_sub(a.step) <= COVERS_STEPS))
}

/// Whether `step` must wait for the person, and why. `None`: it goes ahead.
pub fn judge(step: &Step) -> Option<Verdict> {
    let el = step.element;
    let reason = match step.action {
        // A key that activates what has focus (Enter, Space) acts like a click on it, and
        // Enter in a field submits its form like typing with Enter.
        Action::Press { key, .. } if activates(key) => {
            if matches!(el.tag.as_str(), "input" | "textarea") {
                submission(step, true)
            } else {
                click(step)
            }
        }
        Action::Click { .. } | Action::ClickAt { .. } | Action::ClickTimes { .. } => click(step),
        Action::Type { submit, .. } => {
            if is_password(el) {
                Some(ConfirmReason::EntersPassword)
            } else if let Some(field) = payment_field(el) {
                Some(ConfirmReason::EntersPayment { field })
            } else if *submit {
                submission(step, true)
            } else {
                None
            }
        }
        // A drop zone labelled like an irreversible control does what its label says.
        Action::Drag { .. } => step
            .drop_on
            .and_then(|target| control_kind(target).map(|kind| (kind, target)))
            .map(|(kind, target)| change(step, kind, label(target), Evidence::Control)),
        _ => None,
    }?;
    if covered(step, &reason) {
        return None;
    }
    let approves = reason.kind().map(|kind| ApprovedAct {
        kind,
        host: host(step.page),
        step: step.step,
        about: about(step),
    });
    Some(Verdict { reason, approves })
}

fn clicks(action: &Action) -> bool {
    match action {
        Action::Click { .. } | Action::ClickAt { .. } | Action::ClickTimes { .. } => true,
        Action::Press { key, .. } => activates(key),
        _ => false,
    }
}

/// A click: the control's own words, a confirmation's question, then what its form changes.
fn click(step: &Step) -> Option<ConfirmReason> {
    let el = step.element;
    if let Some(kind) = control_kind(el) {
        return Some(change(step, kind, label(el), Evidence::Control));
    }
    if affirms(label(el)) {
        if let Some((kind, question)) = asked_on_page(step) {
            return Some(change(step, kind, label(el), Evidence::Question(question)));
        }
    }
    if submits_form(el) {
        return submission(step, false);
    }
    None
}

/// Submitting the element's form (by its button, or Enter in a field): a password or payment
/// field asks; then the bulk action it chose; then what its changed fields are.
fn submission(step: &Step, enter: bool) -> Option<ConfirmReason> {
    let el = step.element;
    let form = el.form?;
    let in_form: Vec<&Element> = step
        .page
        .elements
        .iter()
        .filter(|o| o.form == Some(form) && o.frame == el.frame)
        .collect();
    let submitters: Vec<&Element> = if enter {
        in_form
            .iter()
            .copied()
            .filter(|o| submits_form(o))
            .collect()
    } else {
        vec![el]
    };
    let control = submitters.first().map(|s| label(s)).unwrap_or_default();
    // A preview or a cancel sends nothing, whatever the form holds.
    if !enter && says_nothing_leaves(control) {
        return None;
    }
    // Enter submits the form, so its buttons' words count as the action's.
    if enter {
        if let Some((kind, button)) = submitters
            .iter()
            .find_map(|s| control_kind(s).map(|k| (k, label(s))))
        {
            return Some(change(step, kind, button, Evidence::Control));
        }
    }
    let mut payment = None;
    for field in &in_form {
        if is_password(field) {
            return Some(ConfirmReason::SubmitsPassword);
        }
        payment = payment.or_else(|| payment_field(field));
    }
    if let Some(field) = payment {
        return Some(ConfirmReason::SubmitsPayment { field });
    }
    // A list's chosen action ("Delete selected books" before "Go") is what the button does.
    for select in in_form.iter().filter(|o| o.tag == "select") {
        let chosen = select.options.iter().skip(1).find(|o| o.selected);
        let named_action = words_of(select).contains("action");
        if let Some(option) =
            chosen.filter(|_| named_action || step.memory.changed.contains(&select.handle))
        {
            if let Some(kind) = words_kind(&option.text, Kind::control_words) {
                return Some(change(
                    step,
                    kind,
                    control,
                    Evidence::Chosen(option.text.clone()),
                ));
            }
        }
    }
    // A form that only fetches (a search) and whose button does not say it saves changes
    // nothing.
    let posts = in_form
        .iter()
        .any(|o| o.form_method.as_deref() == Some("post"));
    let saves = submitters.iter().any(|s| says_it_saves(label(s)));
    if !(posts || saves) {
        return None;
    }
    let changed: Vec<&Element> = in_form
        .iter()
        .copied()
        .filter(|o| is_field(o))
        .filter(|o| step.memory.changed.contains(&o.handle) || o.handle == el.handle && enter)
        .collect();
    // A message box the agent filled, sent with the form: by its words, or under a button
    // that posts a comment or reply.
    let comment_button = submitters
        .iter()
        .any(|s| words_kind(label(s), Kind::submit_words) == Some(Kind::Send));
    let message = changed.iter().find(|o| {
        let boxed = o.tag == "textarea" || field_is(o, Kind::Send);
        boxed
            && !o.attr("value").unwrap_or_default().trim().is_empty()
            && (field_is(o, Kind::Send) || comment_button)
    });
    if let Some(m) = message {
        let words = m.attr("value").unwrap_or_default().trim().to_string();
        return Some(change(step, Kind::Send, control, Evidence::Message(words)));
    }
    // The form is judged by its most serious kind: an address form's name and phone fields
    // belong to the address, a forwarding form's e-mail field to the forwarding.
    let (kind, fields) = [
        Kind::Security,
        Kind::MailForwarding,
        Kind::Address,
        Kind::Account,
    ]
    .into_iter()
    .map(|kind| {
        let fields: Vec<String> = changed
            .iter()
            .filter(|f| field_is(f, kind))
            .map(|f| field_shown(f))
            .collect();
        (kind, fields)
    })
    .find(|(_, fields)| !fields.is_empty())?;
    // Who may do what is said by the fields changed; the other kinds by their name.
    let evidence = if kind == Kind::Security {
        Evidence::Fields(fields)
    } else {
        Evidence::Control
    };
    let reason = change(step, kind, control, evidence);
    (kind.always_asks() || matches!(reason, ConfirmReason::Change { unasked: true, .. }))
        .then_some(reason)
}

/// A change of `kind` made by `control`: asked about, saying whether the person's words
/// called for it.
fn change(step: &Step, kind: Kind, control: &str, evidence: Evidence) -> ConfirmReason {
    let user = step.user_texts.join("\n").lowercase();
    let called_for = kind.task_words().iter().any(|w| has_phrase(&user, w));
    ConfirmReason::Change {
        kind,
        control: control.to_string(),
        evidence,
        unasked: !called_for,
    }
}

/// The kind a control's own words say (its name, else its text; a submit input's value).
fn control_kind(el: &Element) -> Option<Kind> {
    let value = el.attr("value").unwrap_or_default();
    [label(el), value]
        .into_iter()
        .find_map(|t| words_kind(t, Kind::control_words))
}

/// The kind a control's label says it does ("Pay now": paying), if any.
pub fn kind_of_label(label: &str) -> Option<Kind> {
    words_kind(label, Kind::control_words)
}

/// The first kind (most serious first) whose `words` occur in `text`.
fn words_kind(text: &str, words: fn(Kind) -> &'static [&'static str]) -> Option<Kind> {
    let lower = text.lowercase();
    Kind::ALL
        .into_iter()
        .find(|k| words(*k).iter().any(|w| has_phrase(&lower, w)))
}

/// Words of an affirmative answer to a question ("Yes, I'm sure", "OK", "Confirm").
const AFFIRM: &[&str] = &[
    "yes",
    "ok",
    "okay",
    "confirm",
    "proceed",
    "i'm sure",
    "i’m sure",
    "i am sure",
    "do it",
    "go ahead",
    "ja",
    "oui",
    "sí",
    "si",
    "bestätigen",
    "confirmer",
    "confirmar",
    "conferma",
    "はい",
    "确定",
    "确认",
    "是",
];

fn affirms(label: &str) -> bool {
    let lower = label.lowercase();
    AFFIRM.iter().any(|w| has_phrase(&lower, w))
}

/// Words that make a sentence a confirmation's question.
const ASKING: &[&str] = &[
    "are you sure",
    "do you want",
    "do you really",
    "cannot be undone",
    "can't be undone",
    "can not be undone",
    "will be",
    "permanently",
    "êtes-vous sûr",
    "sind sie sicher",
    "estás seguro",
    "está seguro",
    "确定要",
    "よろしいですか",
];

/// The kind and sentence of the confirmation's question around the element: in the page's
/// words, else the element's surroundings.
fn asked_on_page(step: &Step) -> Option<(Kind, String)> {
    let sources = [step.page_words.unwrap_or_default(), &step.element.context];
    sources.into_iter().find_map(|words| {
        sentences(words)
            .filter(|s| {
                let lower = s.lowercase();
                s.ends_with('?') || ASKING.iter().any(|a| lower.contains(a))
            })
            .find_map(|s| question_kind(s).map(|k| (k, s.to_string())))
    })
}

fn question_kind(sentence: &str) -> Option<Kind> {
    words_kind(sentence, Kind::control_words).or_else(|| words_kind(sentence, Kind::question_words))
}

/// The page's sentences: split at line breaks and after `?`, `!`, `.` followed by a space (not
/// at `:`, which often stands between a question and its object: "delete: notes.txt?").
fn sentences(words: &str) -> impl Iterator<Item = &str> {
    words
        .split('\n')
        .flat_map(|line| {
            let mut out = Vec::new();
            let mut start = 0;
            let bytes: Vec<(usize, char)> = line.char_indices().collect();
            for (i, &(at, c)) in bytes.iter().enumerate() {
                let next_space = bytes.get(i + 1).is_none_or(|(_, n)| n.is_whitespace());
                if matches!(c, '?' | '!' | '.' | '？' | '。') && next_space {
                    let end = at + c.len_utf8();
                    out.push(&line[start..end]);
                    start = end;
                }
            }
            out.push(&line[start..]);
            out
        })
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// Whether `reason` is the application's own confirmation of the act the person approved
/// moments ago: same kind, same site, within [`COVERS_STEPS`], a confirmation (its button
/// affirms, or the page asks about that kind), and about the same thing (the question's
/// quoted names, else most of its words, among what the approval was about).
fn covered(step: &Step, reason: &ConfirmReason) -> bool {
    let (Some(kind), Some(act)) = (reason.kind(), step.memory.approved.as_ref()) else {
        return false;
    };
    if act.kind != kind
        || act.host != host(step.page)
        || step.step < act.step
        || step.step - act.step > COVERS_STEPS
        || !clicks(step.action)
    {
        return false;
    }
    let asked = asked_on_page(step);
    if !affirms(label(step.element)) && !asked.as_ref().is_some_and(|(k, _)| *k == kind) {
        return false;
    }
    let question = asked
        .map(|(_, q)| q)
        .unwrap_or_else(|| step.element.context.clone());
    let quoted = quoted_names(&question);
    if !quoted.is_empty() {
        return quoted.iter().any(|q| act.about.contains(&q.lowercase()));
    }
    // Most of its words: "delete: analysis.ipynb?" shares only "ipynb" with an approval
    // about "untitled.ipynb", and is another file.
    let words = object_words(&question);
    if words.is_empty() {
        // "Are you sure you want to unpublish this page?": the object is the page the question
        // is on, which its title names ("Unpublish Summer sale"); every word of it, since a
        // title shares the site's name with every other page's ("Roadmap – Tents Project").
        let title = object_words(&step.page.title);
        return title.iter().all(|w| has_phrase(&act.about, w));
    }
    let shared = words.iter().filter(|w| has_phrase(&act.about, w)).count();
    shared * 2 > words.len()
}

/// What an approved step was about, lowercased: the control's surroundings, its form's
/// values and chosen options, and the page's title.
fn about(step: &Step) -> String {
    let el = step.element;
    let mut parts = vec![
        label(el).to_string(),
        el.context.clone(),
        step.page.title.clone(),
    ];
    if let Some(form) = el.form {
        for o in step
            .page
            .elements
            .iter()
            .filter(|o| o.form == Some(form) && o.frame == el.frame)
        {
            if let Some(v) = o.attr("value") {
                parts.push(v.to_string());
            }
            if o.checked == Some(Checked::True) {
                parts.push(o.context.clone());
            }
            parts.extend(
                o.options
                    .iter()
                    .filter(|p| p.selected)
                    .map(|p| p.text.clone()),
            );
        }
    }
    // Rows ticked on a list page (a bulk action's objects) are outside the action's form;
    // rows selected in a file browser or grid (`aria-selected`) are what its menu acts on.
    for o in step.page.elements.iter() {
        if o.checked == Some(Checked::True) && o.form != el.form {
            parts.push(o.context.clone());
        }
        if o.attr("aria-selected") == Some("true") {
            parts.push(format!("{} {} {}", o.name, o.text, o.context));
        }
        // A menu item is about what its menu was opened for: the open popup's opener
        // ("More options for 'Summer sale'") is flagged open with it.
        if o.open && o.handle != el.handle {
            parts.push(o.name.clone());
        }
    }
    short(&parts.join(" \n "), 4000).lowercase()
}

/// Names a question quotes (“Dune”, "Dune", «Dune», 'Dune').
fn quoted_names(question: &str) -> Vec<String> {
    let mut names = Vec::new();
    for (open, close) in [('“', '”'), ('"', '"'), ('«', '»'), ('‘', '’'), ('「', '」')]
    {
        let mut rest = question;
        while let Some(at) = rest.find(open) {
            let after = &rest[at + open.len_utf8()..];
            let Some(end) = after.find(close) else { break };
            let name = after[..end].trim();
            if !name.is_empty() && name.chars().count() <= 120 {
                names.push(name.to_string());
            }
            rest = &after[end + close.len_utf8()..];
        }
    }
    names
}

/// Common words a question is made of, which say nothing of its object.
const PLAIN_WORDS: &[&str] = &[
    "are",
    "you",
    "sure",
    "want",
    "the",
    "this",
    "that",
    "these",
    "those",
    "and",
    "all",
    "will",
    "be",
    "following",
    "objects",
    "object",
    "items",
    "item",
    "their",
    "related",
    "selected",
    "permanently",
    "cannot",
    "can't",
    "undone",
    "undo",
    "with",
    "from",
    "for",
    "your",
    "yes",
    "really",
    "it",
    "them",
    "of",
    "to",
    "do",
    "is",
    "a",
    "an",
    "or",
    "not",
    "no",
    "take",
    "me",
    "back",
    "cancel",
    "delete",
    "deleted",
    "remove",
    "removed",
    "publish",
    "unpublish",
    "send",
    "sent",
    "pay",
    "trash",
    "move",
    "confirm",
    // How much and what of: "completely delete this page" names no object but the page the
    // question is on, which its title names (see `covered`).
    "completely",
    "entirely",
    "forever",
    "page",
    "pages",
];

/// The words of a question that may name its object (three letters or more, not
/// [`PLAIN_WORDS`]).
fn object_words(question: &str) -> Vec<String> {
    question
        .lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3 && !PLAIN_WORDS.contains(w))
        .map(str::to_string)
        .collect()
}

fn host(page: &Snapshot) -> String {
    let host = domain_of(&page.url).unwrap_or_default();
    host.strip_prefix("www.")
        .map(str::to_string)
        .unwrap_or(host)
}

fn label(el: &Element) -> &str {
    if el.name.trim().is_empty() {
        el.text.trim()
    } else {
        el.name.trim()
    }
}

/// Labels of buttons that save what a form holds, even when the form does not post (a page
/// script may send it).
const SAVES: &[&str] = &[
    "save",
    "update",
    "change",
    "apply",
    "confirm",
    "submit",
    "enable",
    "turn on",
    "set up",
    "add",
    "forward",
    "speichern",
    "enregistrer",
    "guardar",
    "salva",
    "opslaan",
];

/// Labels of buttons that submit without making the change: a preview, a cancel.
const KEEPS: &[&str] = &[
    "preview",
    "cancel",
    "vorschau",
    "aperçu",
    "vista previa",
    "anteprima",
    "abbrechen",
    "annuler",
    "cancelar",
    "annulla",
];

fn says_nothing_leaves(label: &str) -> bool {
    let lower = label.lowercase();
    KEEPS.iter().any(|w| has_phrase(&lower, w))
}

fn says_it_saves(label: &str) -> bool {
    let lower = label.lowercase();
    SAVES.iter().any(|w| has_phrase(&lower, w))
}

fn is_field(el: &Element) -> bool {
    matches!(el.tag.as_str(), "input" | "textarea" | "select")
        && !matches!(
            el.input_type().as_deref(),
            Some("hidden" | "submit" | "button" | "reset" | "image" | "search")
        )
}

/// A field's words: what the page's author named it (name, id, autocomplete, placeholder)
/// and what it is labelled, lowercased, `_` as `-`.
fn words_of(el: &Element) -> String {
    let mut words = String::new();
    for part in [
        el.attr("name"),
        el.attr("id"),
        el.attr("autocomplete"),
        el.attr("placeholder"),
        Some(el.name.as_str()),
        el.group.as_deref(),
    ]
    .into_iter()
    .flatten()
    {
        words.push_str(&part.lowercase().replace('_', "-"));
        words.push(' ');
    }
    words
}

/// Whether a field is of kind `k` by its words, each matched at the start of a word and
/// ending anywhere: "group" in `id-groups-from`, "forward" in `forwardto`, but "city" not in
/// "capacity" nor "tel" in "hotel".
fn field_is(el: &Element, k: Kind) -> bool {
    let words = words_of(el);
    // "Email address" is an account's e-mail, not a postal address.
    if k == Kind::Address && words.contains("mail") {
        return false;
    }
    k.field_words().iter().any(|w| {
        words.match_indices(w).any(|(at, _)| {
            words[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_alphanumeric())
        })
    })
}

/// A changed field as the person sees it: its label, and for a list the options chosen.
fn field_shown(el: &Element) -> String {
    let name = if el.name.trim().is_empty() {
        el.attr("name").unwrap_or_default().trim()
    } else {
        el.name.trim()
    };
    let chosen: Vec<&str> = el
        .options
        .iter()
        .filter(|o| o.selected)
        .map(|o| o.text.trim())
        .collect();
    if chosen.is_empty() {
        name.to_string()
    } else {
        format!("{name}: {}", chosen.join(", "))
    }
}

/// `phrase` in `text` on word edges ("post" in "post a review", not in "postcode"); a phrase
/// in a script written without spaces (CJK) anywhere.
fn has_phrase(text: &str, phrase: &str) -> bool {
    let spaced = phrase
        .chars()
        .any(|c| c.is_ascii_alphabetic() || c.is_alphabetic() && !is_cjk(c));
    text.match_indices(phrase).any(|(at, _)| {
        if !spaced {
            return true;
        }
        let before = text[..at].chars().next_back();
        let after = text[at + phrase.len()..].chars().next();
        let edge = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric());
        edge(before) && edge(after)
    })
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF)
}

fn short(words: &str, chars: usize) -> String {
    let words = words.trim();
    if words.chars().count() <= chars {
        return words.to_string();
    }
    let mut cut: String = words.chars().take(chars - 1).collect();
    cut.push('…');
    cut
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
                (
                    true,
                    ConfirmReason::Change {
                        control,
                        evidence: Evidence::Control,
                        ..
                    },
                ) if !control.is_empty() && *control != label(el) => Msg::new(
                    "approveTypeEnterVia",
                    vec![value, seen, text(control.trim()), clause],
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
