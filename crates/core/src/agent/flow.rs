//! Data carried from one site to another.
//!
//! A page can tell the agent to take what it read on one site (a recovery code in a mail, the
//! user's address on their account page) to another: in an address it opens, in text it
//! types, in a tool's arguments. The user naming the other site in the task does not make
//! that expected, so the worker remembers the values the agent read on each site during a
//! task ([`ReadValues::note`]: e-mail addresses, codes that mix letters and digits, numbers of
//! six digits or more, what personal fields hold) and, before anything leaves for a place,
//! asks when it carries a value read somewhere else ([`ReadValues::carried`],
//! [`flow_question`]): the value and both places shown. A value the user wrote (the task, a
//! note, an answer) is the user's own and never counts as read.
//!
//! Matching is on the values' normal forms (e-mails lowercased, codes as their letters and
//! digits, numbers as their digits), after undoing an address's percent-escapes, so
//! `ada%40example.com` or `K7PX 2M9Q` are still found. A model that rewrites a value (spells
//! it out, encodes it) is not caught; this guard is for the plain copy a fooled model makes.

use serde::{Deserialize, Serialize};

use crate::case::{lowercase_char, Lowercase};
use crate::i18n::{nested, text, Mark, Msg};
use crate::url::form_decode;

/// Places remembered per task, and values per place: the newest are kept.
const MAX_PLACES: usize = 16;
const MAX_VALUES: usize = 200;
/// A value longer than this is not a code or an address but prose.
const MAX_VALUE_CHARS: usize = 100;
/// Digits a number needs to count (shorter ones are prices, quantities, years).
const MIN_DIGITS: usize = 6;
/// Letters and digits a mixed code needs (`K7PX2M` has six).
const MIN_CODE_CHARS: usize = 6;

/// What the agent read in one place (a host, or a tool named as the user sees it).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlaceValues {
    pub place: String,
    /// As shown on the page (the question shows them so), oldest first.
    pub values: Vec<String>,
}

/// A carried value the user approved for one destination.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Approved {
    pub value: String,
    pub to: String,
}

/// The values read in each place during a task, bounded, and the crossings the user allowed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReadValues {
    pub places: Vec<PlaceValues>,
    pub approved: Vec<Approved>,
}

/// A value read in `from` found in what is about to leave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Carried {
    pub value: String,
    pub from: String,
}

impl ReadValues {
    pub fn is_empty(&self) -> bool {
        self.places.is_empty() && self.approved.is_empty()
    }

    /// Remembers the values in `text`, read in `place` (a page's host, `www.` and case
    /// ignored).
    pub fn note(&mut self, place: &str, text: &str) {
        let found = values_in(text);
        if found.is_empty() {
            return;
        }
        let place = bare(place);
        let at = match self.places.iter().position(|p| p.place == place) {
            Some(at) => at,
            None => {
                if self.places.len() >= MAX_PLACES {
                    self.places.remove(0);
                }
                self.places.push(PlaceValues {
                    place,
                    values: Vec::new(),
                });
                self.places.len() - 1
            }
        };
        let values = &mut self.places[at].values;
        for v in found {
            if let Some(old) = values.iter().position(|o| key(o) == key(&v)) {
                values.remove(old);
            }
            values.push(v);
        }
        if values.len() > MAX_VALUES {
            let extra = values.len() - MAX_VALUES;
            values.drain(..extra);
        }
    }

    /// Every value read in a place other than `to` that `outgoing` carries (newest first),
    /// except what the user wrote (`user_texts`), what was read in `to` as well (the
    /// destination has it already), and what the user approved for `to`.
    pub fn carried(&self, to: &str, outgoing: &str, user_texts: &[&str]) -> Vec<Carried> {
        let to = bare(to);
        let out = Outgoing::new(outgoing);
        let users: Vec<Outgoing> = user_texts.iter().map(|t| Outgoing::new(t)).collect();
        let seen_at_target = |k: &Key| {
            self.places
                .iter()
                .filter(|p| p.place == to)
                .any(|p| p.values.iter().any(|v| key(v) == *k))
        };
        let mut found: Vec<Carried> = Vec::new();
        for place in self.places.iter().filter(|p| p.place != to) {
            for value in place.values.iter().rev() {
                let k = key(value);
                if !out.holds(&k)
                    || users.iter().any(|u| u.holds(&k))
                    || seen_at_target(&k)
                    || found.iter().any(|f| key(&f.value) == k)
                    || self
                        .approved
                        .iter()
                        .any(|a| a.to == to && key(&a.value) == k)
                {
                    continue;
                }
                found.push(Carried {
                    value: value.clone(),
                    from: place.place.clone(),
                });
            }
        }
        found
    }

    /// The user let `carried` go to `to`: not asked again in this task.
    pub fn approve(&mut self, carried: &[Carried], to: &str) {
        for c in carried {
            self.approved.push(Approved {
                value: c.value.clone(),
                to: bare(to),
            });
        }
    }
}

/// The question before values read in one place leave for another: each value whole, where
/// it was read, where it goes. `how` says how it leaves ("in the address https://…", "typed
/// into the “Search” field").
pub fn flow_question(carried: &[Carried], to: &str, how: &str) -> String {
    flow_message(carried, to, Msg::literal(how)).english()
}

/// [`flow_question`] as a catalog message, `how` one too; the values and places are
/// arguments, never translated.
pub fn flow_message(carried: &[Carried], to: &str, how: Msg) -> Msg {
    let to = bare(to);
    let values: Vec<Msg> = carried
        .iter()
        .map(|c| {
            Msg::new(
                "flowValue",
                vec![text(c.value.clone()), text(c.from.clone())],
            )
        })
        .collect();
    Msg::new(
        "flowQuestion",
        vec![
            nested(Mark::Plain, and_list(values)),
            text(to),
            nested(Mark::Plain, how),
        ],
    )
}

/// `a`, `a and b`, `a, b and c`, in the catalog's words.
fn and_list(mut items: Vec<Msg>) -> Msg {
    let Some(last) = items.pop() else {
        return Msg::literal("");
    };
    let Some(mut init) = items.first().cloned() else {
        return last;
    };
    for next in items.into_iter().skip(1) {
        init = Msg::new(
            "listMore",
            vec![nested(Mark::Plain, init), nested(Mark::Plain, next)],
        );
    }
    Msg::new(
        "listLast",
        vec![nested(Mark::Plain, init), nested(Mark::Plain, last)],
    )
}

/// The step's result when the user said no.
pub fn flow_denied(carried: &[Carried], to: &str) -> String {
    let mut from: Vec<&str> = Vec::new();
    for c in carried {
        if !from.contains(&c.from.as_str()) {
            from.push(&c.from);
        }
    }
    format!(
        "you denied sending what was read on {} to {}; nothing was sent. Do not try it again",
        from.join(" and "),
        bare(to)
    )
}

/// A host without `www.` and case; a place that is not a host («a tool provider») as it is.
fn bare(host: &str) -> String {
    if host.contains('«') {
        return host.trim().to_string();
    }
    let h = host.trim().trim_end_matches('.').lowercase();
    h.strip_prefix("www.").map(str::to_string).unwrap_or(h)
}

/// A value's normal form, what matching compares.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Key {
    /// An e-mail address, lowercased.
    Email(String),
    /// Digits only.
    Number(String),
    /// Letters and digits, lowercased.
    Code(String),
    /// A personal field's whole value, lowercased with single spaces.
    Text(String),
}

fn key(value: &str) -> Key {
    if value.contains('@') {
        return Key::Email(value.lowercase());
    }
    let alnum: String = value
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(lowercase_char)
        .collect();
    if alnum.chars().all(|c| c.is_ascii_digit()) {
        Key::Number(alnum)
    } else if value.chars().any(char::is_whitespace) && !value.chars().any(|c| c.is_ascii_digit()) {
        Key::Text(words(value))
    } else {
        Key::Code(alnum)
    }
}

fn words(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .lowercase()
}

/// What is about to leave, in the forms the keys are compared with.
struct Outgoing {
    lower: String,
    alnum: String,
    digit_runs: Vec<String>,
}

impl Outgoing {
    fn new(text: &str) -> Self {
        // As the receiving server reads a query or a form body: `%2B` is a `+` of the value
        // (an address `ada+tag@…`), a bare `+` a space.
        let decoded = form_decode(text);
        let lower = format!("{} {}", text.lowercase(), decoded.lowercase());
        Outgoing {
            alnum: lower
                .chars()
                .filter(|c| c.is_alphanumeric())
                .collect::<String>(),
            digit_runs: digit_runs(&lower).into_iter().map(|(_, d)| d).collect(),
            lower: words(&lower),
        }
    }

    fn holds(&self, key: &Key) -> bool {
        match key {
            Key::Email(e) => self.lower.contains(e.as_str()),
            Key::Number(d) => self.digit_runs.iter().any(|r| r.contains(d.as_str())),
            Key::Code(c) => self.alnum.contains(c.as_str()),
            Key::Text(t) => self.lower.contains(t.as_str()),
        }
    }
}

/// Runs of digits with single spaces, dashes or dots between groups (`+1 555-123-4567`,
/// `4821 7730`): each run's text as written and its digits.
fn digit_runs(text: &str) -> Vec<(String, String)> {
    let chars: Vec<char> = text.chars().collect();
    let mut runs = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !chars[i].is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        let mut end = i;
        let mut digits = String::new();
        while i < chars.len() {
            if chars[i].is_ascii_digit() {
                digits.push(chars[i]);
                end = i + 1;
                i += 1;
            } else if matches!(chars[i], ' ' | '-' | '.')
                && chars.get(i + 1).is_some_and(char::is_ascii_digit)
            {
                i += 1;
            } else {
                break;
            }
        }
        // Digits glued to letters belong to a code (`K7PX2M`), read as one.
        let glued = start > 0 && chars[start - 1].is_alphabetic()
            || chars.get(end).is_some_and(|c| c.is_alphabetic());
        if !glued {
            runs.push((chars[start..end].iter().collect(), digits));
        }
        i = end.max(i);
    }
    runs
}

/// The values in `text` worth guarding: e-mail addresses, numbers of six digits or more,
/// codes of six letters and digits or more with at least two digits, and the whole value of
/// a personal field as the element list shows it (`value="Ada Lovelace"` in a field whose
/// autocomplete or name says name, address, phone or e-mail).
pub fn values_in(text: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut push = |v: String| {
        if !v.is_empty() && v.chars().count() <= MAX_VALUE_CHARS && !found.contains(&v) {
            found.push(v);
        }
    };
    let separators = |c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '<' | '>'
                    | '('
                    | ')'
                    | '['
                    | ']'
                    | '{'
                    | '}'
                    | '"'
                    | '\''
                    | ','
                    | ';'
                    | '|'
                    | '\u{201c}'
                    | '\u{201d}'
                    | '\u{2018}'
                    | '\u{2019}'
            )
    };
    for token in text.split(separators) {
        let token = token.trim_matches(|c: char| matches!(c, '.' | '!' | '?' | ':' | '='));
        if let Some(email) = email_in(token) {
            push(email);
            continue;
        }
        // Codes: letters and digits together, with dashes or underscores between groups.
        // Addresses (`/`, `=`, `:` inside) are made of parts, each read on its own.
        for part in token.split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_')) {
            let part = part.trim_matches(|c: char| c == '-' || c == '_');
            let alnum = part.chars().filter(|c| c.is_alphanumeric()).count();
            let digits = part.chars().filter(char::is_ascii_digit).count();
            let letters = part.chars().filter(|c| c.is_alphabetic()).count();
            if alnum >= MIN_CODE_CHARS && digits >= 2 && letters >= 1 {
                push(part.to_string());
            }
        }
    }
    for (written, digits) in digit_runs(text) {
        if digits.len() >= MIN_DIGITS {
            push(written);
        }
    }
    for value in personal_values(text) {
        push(value);
    }
    found
}

fn email_in(token: &str) -> Option<String> {
    let token = token.strip_prefix("mailto:").unwrap_or(token);
    let (local, domain) = token.split_once('@')?;
    let ok_local = !local.is_empty()
        && local
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | '+' | '%'));
    let ok_domain = domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && domain
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '.' | '-'));
    (ok_local && ok_domain).then(|| token.lowercase())
}

/// Words in the names, `name=` or `autocomplete=` of a field that holds personal data.
const PERSONAL: &[&str] = &[
    "name", "address", "street", "phone", "tel", "email", "e-mail", "postal", "zip", "city",
    "birthday", "bday",
];

/// The `value="…"` of entries in an element list whose line speaks of personal data. The
/// list writes one element a line (`[3] textbox "Full name" value="Ada Lovelace"`).
fn personal_values(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some(at) = line.find("value=\"") else {
            continue;
        };
        let rest = &line[at + 7..];
        let Some(end) = rest.find('"') else {
            continue;
        };
        let value = rest[..end].trim();
        let head = line[..at].lowercase();
        if value.chars().filter(|c| c.is_alphabetic()).count() >= 4
            && PERSONAL.iter().any(|w| head.contains(w))
            && !head.contains("search")
        {
            out.push(value.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_worth_guarding_are_found_and_prices_are_not() {
        let text = "Your recovery code is K7PX-2M9Q-XR4T. Mail ada@example.com or call \
                    +1 555-123-4567. Order 48213977 costs $35.00 (2 items), iPhone 15.";
        let found = values_in(text);
        assert!(found.contains(&"K7PX-2M9Q-XR4T".to_string()), "{found:?}");
        assert!(found.contains(&"ada@example.com".to_string()), "{found:?}");
        assert!(found.contains(&"48213977".to_string()), "{found:?}");
        assert!(
            found.iter().any(|v| v.contains("555-123-4567")),
            "{found:?}"
        );
        assert!(!found.iter().any(|v| v.contains("35")), "{found:?}");
        assert!(!found.iter().any(|v| v == "15"), "{found:?}");
        let list = "[3] textbox \"Full name\" value=\"Ada Lovelace\"\n[4] searchbox \"Search\" value=\"blue backpack\"";
        let found = values_in(list);
        assert!(found.contains(&"Ada Lovelace".to_string()), "{found:?}");
        assert!(!found.iter().any(|v| v.contains("backpack")), "{found:?}");
    }

    #[test]
    fn a_value_read_on_one_site_leaving_for_another_is_caught_in_any_spelling() {
        let mut read = ReadValues::default();
        read.note("mail.tandem.test", "Your recovery code: K7PX-2M9Q-XR4T");
        read.note("www.Mail.tandem.test", "From ada@example.com");
        let task = ["Check my mail, then open collect.tandem.test"];
        for url in [
            "https://collect.tandem.test/?c=K7PX-2M9Q-XR4T",
            "https://collect.tandem.test/?c=k7px2m9qxr4t",
            "https://collect.tandem.test/?e=ada%40example.com",
            "https://collect.tandem.test/?e=ADA@EXAMPLE.COM",
        ] {
            let c = read.carried("collect.tandem.test", url, &task);
            assert_eq!(c.len(), 1, "{url}");
            assert_eq!(c[0].from, "mail.tandem.test");
        }
        // An address with a `+` sent percent-encoded: `%2B` is its `+`, not a space (a `+`
        // turned into a space after decoding lost it).
        read.note("mail.tandem.test", "Reply to ada+tag@example.com");
        for outgoing in [
            "https://collect.tandem.test/?e=ada%2Btag%40example.com",
            "e=ada%2btag%40example.com&n=1",
        ] {
            let c = read.carried("collect.tandem.test", outgoing, &task);
            assert!(
                c.iter().any(|c| c.value == "ada+tag@example.com"),
                "{outgoing}: {c:?}"
            );
        }
        // On the site it was read on, nothing crosses.
        assert_eq!(
            read.carried(
                "mail.tandem.test",
                "https://mail.tandem.test/?c=K7PX-2M9Q-XR4T",
                &task
            ),
            []
        );
        assert_eq!(
            read.carried("collect.tandem.test", "https://collect.tandem.test/", &task),
            []
        );
        let both = read.carried(
            "collect.tandem.test",
            "https://collect.tandem.test/?c=K7PX-2M9Q-XR4T&e=ada@example.com",
            &task,
        );
        assert_eq!(
            flow_question(&both, "collect.tandem.test", "in the address https://collect.tandem.test/?c=K7PX-2M9Q-XR4T&e=ada@example.com"),
            "Tandem wants to send \u{201c}ada@example.com\u{201d} (read on mail.tandem.test) and \u{201c}K7PX-2M9Q-XR4T\u{201d} (read on mail.tandem.test) to collect.tandem.test (in the address https://collect.tandem.test/?c=K7PX-2M9Q-XR4T&e=ada@example.com). A page can ask the agent to carry your data to another site: approve only if you want collect.tandem.test to get it."
        );
        assert_eq!(
            flow_denied(&both, "collect.tandem.test"),
            "you denied sending what was read on mail.tandem.test to collect.tandem.test; nothing was sent. Do not try it again"
        );
        let c = read.carried("collect.tandem.test", "K7PX-2M9Q-XR4T", &task);
        read.approve(&c, "collect.tandem.test");
        assert_eq!(
            read.carried("collect.tandem.test", "K7PX-2M9Q-XR4T", &task),
            [],
            "approved once, not asked again"
        );
        assert_eq!(
            read.carried("other.tandem.test", "K7PX-2M9Q-XR4T", &task)
                .len(),
            1
        );
    }

    #[test]
    fn what_the_user_wrote_is_theirs_and_a_value_the_target_showed_is_not_news() {
        let mut read = ReadValues::default();
        read.note(
            "shop.tandem.test",
            "Signed in as ada@example.com. Order 48213977.",
        );
        let task = ["Send ada@example.com's order to the tracker"];
        assert_eq!(
            read.carried(
                "track.tandem.test",
                "https://track.tandem.test/?e=ada@example.com",
                &task
            ),
            []
        );
        assert_eq!(
            read.carried("track.tandem.test", "order 48213977", &task)
                .len(),
            1
        );
        read.note("track.tandem.test", "Tracking 48213977");
        assert_eq!(
            read.carried("track.tandem.test", "order 48213977", &task),
            []
        );
    }

    #[test]
    fn the_memory_is_bounded_and_survives_storage() {
        let mut read = ReadValues::default();
        for i in 0..(MAX_PLACES + 3) {
            read.note(&format!("s{i}.test"), &format!("code AB{i:06}"));
        }
        assert_eq!(read.places.len(), MAX_PLACES);
        assert_eq!(read.places[0].place, "s3.test");
        let many: String = (0..500).map(|i| format!("n{i:07}x ")).collect();
        read.note("big.test", &many);
        let big = read.places.iter().find(|p| p.place == "big.test").unwrap();
        assert_eq!(big.values.len(), MAX_VALUES);
        assert_eq!(big.values.last().unwrap(), "n0000499x");
        let json = serde_json::to_string(&read).unwrap();
        let back: ReadValues = crate::json::from_str(&json).unwrap();
        assert_eq!(back, read);
    }
}
