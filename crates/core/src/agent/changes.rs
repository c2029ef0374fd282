//! Changes the task did not ask for.
//!
//! "Save address" and "Save settings" sound harmless, yet behind them a page's words can
//! have the agent replace the shipping address or forward all mail elsewhere. The model
//! that read the page cannot judge that (it may be the one fooled), so the judge here sees
//! only what the page cannot steer: the form about to be submitted (how it submits, what its
//! fields are by name, autocomplete token and label, as categories) and the words the user
//! wrote (the task, notes, answers) — never the page's text. A submission that changes
//! something (the form posts, or its button says it saves) and holds fields of a sensitive
//! kind the user's words do not call for waits for the user ([`unasked_change`]).

use super::actions::Action;
use super::safety::{matching_phrase, submits_form, Change, ConfirmReason};
use super::snapshot::{Element, Snapshot};

impl Change {
    /// The most serious first: the one a question names when a form holds several.
    const ALL: [Change; 5] = [
        Change::MailForwarding,
        Change::Security,
        Change::Address,
        Change::Message,
        Change::Account,
    ];

    /// Words of a field (its name, id, autocomplete, placeholder, label) that make it one.
    fn field_words(self) -> &'static [&'static str] {
        match self {
            Change::MailForwarding => &[
                "forward",
                "redirect",
                "autoreply",
                "auto-reply",
                "vacation",
                "delegate",
                "filter",
                "weiterleit",
                "transférer",
                "reenviar",
            ],
            Change::Security => &[
                "new-password",
                "newpassword",
                "new password",
                "recovery",
                "two-factor",
                "2fa",
                "security question",
                "backup code",
                "backup email",
            ],
            Change::Address => &[
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
            Change::Message => &["message", "comment", "reply", "review", "nachricht"],
            Change::Account => &[
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
        }
    }

    /// Words in the user's text that call for such a change.
    fn task_words(self) -> &'static [&'static str] {
        match self {
            Change::MailForwarding => &[
                "forward",
                "redirect",
                "filter",
                "auto-reply",
                "autoreply",
                "vacation",
                "out of office",
                "delegate",
            ],
            Change::Security => &[
                "password",
                "security",
                "recovery",
                "2fa",
                "two-factor",
                "two factor",
                "backup code",
            ],
            Change::Address => &[
                "address", "ship to", "shipping", "deliver", "street", "zip", "postcode", "move",
            ],
            Change::Message => &[
                "message", "write", "reply", "comment", "review", "post", "send", "contact",
                "tell", "ask", "answer",
            ],
            Change::Account => &[
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
            ],
        }
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

/// Whether `action` on `el` submits a form that changes something of a kind the user's words
/// (`user_texts`: the task, notes, answers — never page text) do not call for. Payment and
/// password forms are [`super::needs_confirmation`]'s; this covers the rest.
pub fn unasked_change(
    action: &Action,
    el: Option<&Element>,
    page: &Snapshot,
    user_texts: &[&str],
) -> Option<ConfirmReason> {
    let el = el?;
    let form = el.form?;
    let in_form = |o: &&Element| o.form == Some(form) && o.frame == el.frame;
    // The buttons that submit: the one clicked, or (Enter in a field) the form's own.
    let submitters: Vec<&Element> = match action {
        Action::Click { .. } | Action::ClickAt { .. } | Action::ClickTimes { .. }
            if submits_form(el) =>
        {
            vec![el]
        }
        Action::Type { submit: true, .. } => page
            .elements
            .iter()
            .filter(in_form)
            .filter(|o| submits_form(o))
            .collect(),
        _ => return None,
    };
    let posts = el.form_method.as_deref() == Some("post")
        || submitters
            .iter()
            .any(|s| s.form_method.as_deref() == Some("post"))
        || page
            .elements
            .iter()
            .filter(in_form)
            .any(|o| o.form_method.as_deref() == Some("post"));
    let saves = submitters.iter().any(|s| says_it_saves(label(s)));
    // A form that only fetches (a search) and whose button does not say it saves changes
    // nothing; nor does one whose button already asks (buying, deleting: that question is
    // asked instead).
    if !(posts || saves)
        || submitters
            .iter()
            .any(|s| matching_phrase(label(s)).is_some())
    {
        return None;
    }
    let fields: Vec<&Element> = page
        .elements
        .iter()
        .filter(in_form)
        .filter(|o| is_field(o))
        .collect();
    let user = user_texts.join("\n").to_lowercase();
    let called_for = |c: Change| c.task_words().iter().any(|w| has_words(&user, w));
    // The form is judged by its most serious kind: an address form's name and phone fields
    // belong to the address, a forwarding form's e-mail field to the forwarding.
    Change::ALL
        .into_iter()
        .find(|c| fields.iter().any(|f| field_is(f, *c)))
        .filter(|c| !called_for(*c))
        .map(|change| ConfirmReason::UnaskedChange {
            change,
            button: submitters
                .first()
                .map(|s| label(s).to_string())
                .unwrap_or_default(),
        })
}

fn label(el: &Element) -> &str {
    if el.name.trim().is_empty() {
        el.text.trim()
    } else {
        el.name.trim()
    }
}

fn says_it_saves(label: &str) -> bool {
    let lower = label.to_lowercase();
    SAVES.iter().any(|w| has_words(&lower, w))
}

fn is_field(el: &Element) -> bool {
    matches!(el.tag.as_str(), "input" | "textarea" | "select")
        && !matches!(
            el.input_type().as_deref(),
            Some("hidden" | "submit" | "button" | "reset" | "image" | "search")
        )
}

/// Whether a field is of kind `c`, by what the page's author named it (name, id,
/// autocomplete, placeholder) and what it is labelled. A search field is none.
fn field_is(el: &Element, c: Change) -> bool {
    let mut words = String::new();
    for part in [
        el.attr("name"),
        el.attr("id"),
        el.attr("autocomplete"),
        el.attr("placeholder"),
        Some(el.name.as_str()),
    ]
    .into_iter()
    .flatten()
    {
        words.push_str(&part.to_lowercase().replace('_', "-"));
        words.push(' ');
    }
    if c == Change::Message && el.tag == "textarea" {
        return true;
    }
    // "Email address" is an account's e-mail, not a postal address.
    if c == Change::Address && words.contains("mail") {
        return false;
    }
    c.field_words().iter().any(|w| words.contains(w))
}

/// `phrase` in `text` on word edges ("post" in "post a review", not in "postcode").
fn has_words(text: &str, phrase: &str) -> bool {
    text.match_indices(phrase).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + phrase.len()..].chars().next();
        let edge = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric());
        edge(before) && edge(after)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    /// A form as the driver reports it: `fields` are `(tag, attrs, label)`, then its button.
    fn form(method: Option<&str>, fields: &[(&str, Value, &str)], button: &str) -> Snapshot {
        let mut elements = Vec::new();
        let mut push = |tag: &str, attrs: Value, name: &str, role: Option<&str>| {
            let mut e = json!({
                "handle": format!("d.{}", elements.len()), "tag": tag, "name": name,
                "attrs": attrs, "bbox": {"x": 0, "y": 0, "width": 10, "height": 10},
                "visible": true, "interactive": ["native"], "form": 0
            });
            if let Some(m) = method {
                e["formMethod"] = json!(m);
            }
            if let Some(r) = role {
                e["implicitRole"] = json!(r);
            }
            elements.push(e);
        };
        for (tag, attrs, label) in fields {
            push(tag, attrs.clone(), label, Some("textbox"));
        }
        push("button", json!({}), button, Some("button"));
        crate::json::from_value(json!({
            "docId": "d", "url": "https://shop.tandem.test/account", "title": "Account",
            "scroll": {"x": 0, "y": 0}, "viewport": {"width": 800, "height": 600},
            "page": {"width": 800, "height": 600}, "frames": [], "elements": elements,
            "truncated": false
        }))
        .unwrap()
    }

    fn address_form() -> Snapshot {
        form(
            Some("post"),
            &[
                (
                    "input",
                    json!({"name": "fullname", "autocomplete": "name"}),
                    "Full name",
                ),
                (
                    "input",
                    json!({"name": "street", "autocomplete": "street-address"}),
                    "Street",
                ),
                (
                    "input",
                    json!({"name": "zip", "autocomplete": "postal-code"}),
                    "ZIP",
                ),
            ],
            "Save address",
        )
    }

    /// The reason for clicking the form's button under `task`, as the question's words.
    fn click(page: &Snapshot, task: &str) -> Option<String> {
        let button = page.elements.last().unwrap();
        unasked_change(&Action::Click { element: 1 }, Some(button), page, &[task])
            .map(|r| r.to_string())
    }

    #[test]
    fn a_change_the_task_did_not_ask_for_asks_and_the_users_own_does_not() {
        let page = address_form();
        assert_eq!(
            click(&page, "Buy the blue backpack").as_deref(),
            Some("This saves a change to an address, which your task did not ask for.")
        );
        assert_eq!(
            click(&page, "Change my shipping address to 12 Elm St"),
            None
        );
        let forwarding = form(
            Some("post"),
            &[(
                "input",
                json!({"name": "forward_to", "type": "email"}),
                "Forward all mail to",
            )],
            "Save settings",
        );
        assert_eq!(
            click(&forwarding, "Archive the newsletters in my inbox").as_deref(),
            Some("This saves a change to where your mail goes, which your task did not ask for.")
        );
        assert_eq!(
            click(&forwarding, "Forward my mail to ada@example.com"),
            None
        );
        // The page's words never count: only the user's.
        assert!(click(&forwarding, "Read the settings page").is_some());
    }

    #[test]
    fn a_sign_up_the_user_asked_for_is_theirs() {
        let signup = form(
            Some("post"),
            &[("input", json!({"name": "email", "type": "email"}), "Email")],
            "Join",
        );
        assert_eq!(click(&signup, "Sign me up with ada@example.com"), None);
        assert_eq!(click(&signup, "Join the newsletter"), None);
        assert!(click(&signup, "Find the opening hours").is_some());
    }

    #[test]
    fn searching_adding_to_a_cart_and_asking_buttons_are_left_alone() {
        let search = form(
            Some("get"),
            &[("input", json!({"type": "search", "name": "q"}), "Search")],
            "Search",
        );
        assert_eq!(click(&search, "Find a blue backpack"), None);
        let cart = form(
            Some("post"),
            &[("input", json!({"type": "hidden", "name": "sku"}), "")],
            "Add to cart",
        );
        assert_eq!(click(&cart, "Buy the blue backpack"), None);
        let quantity = form(
            Some("post"),
            &[(
                "input",
                json!({"type": "number", "name": "qty"}),
                "Quantity",
            )],
            "Update cart",
        );
        assert_eq!(click(&quantity, "Buy two backpacks"), None);
        // A button that already asks (placing the order) is that question's.
        let checkout = form(
            Some("post"),
            &[("input", json!({"name": "street"}), "Street")],
            "Place order",
        );
        assert_eq!(click(&checkout, "Buy the blue backpack"), None);
        // A form that gets, whose button does not say it saves, changes nothing.
        let lookup = form(
            None,
            &[("input", json!({"name": "zip"}), "ZIP")],
            "Find stores",
        );
        assert_eq!(click(&lookup, "Find a store"), None);
        // A script-sent form whose button says it saves still counts.
        let scripted = form(None, &[("input", json!({"name": "zip"}), "ZIP")], "Save");
        assert!(click(&scripted, "Find a store").is_some());
    }

    #[test]
    fn enter_in_a_field_submits_like_the_forms_button() {
        let page = address_form();
        let street = &page.elements[1];
        let enter = Action::Type {
            element: 2,
            text: "1 Attacker Way".into(),
            clear: true,
            submit: true,
        };
        let reason = unasked_change(&enter, Some(street), &page, &["Buy the backpack"]);
        assert!(
            matches!(
                reason,
                Some(ConfirmReason::UnaskedChange { change: Change::Address, ref button }) if button == "Save address"
            ),
            "{reason:?}"
        );
        let typing = Action::Type {
            element: 2,
            text: "1 Attacker Way".into(),
            clear: true,
            submit: false,
        };
        assert_eq!(
            unasked_change(&typing, Some(street), &page, &["Buy the backpack"]),
            None,
            "typing alone submits nothing"
        );
        let sentence = super::super::safety::approval_sentence(&enter, street, &reason.unwrap());
        assert_eq!(
            sentence,
            "Tandem wants to type \u{201c}1 Attacker Way\u{201d} into the \u{201c}Street\u{201d} field and press Enter: pressing Enter submits the form, which saves a change to an address. Your task did not ask for that: a page may have told the agent to."
        );
    }
}
