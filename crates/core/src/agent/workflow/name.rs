//! A workflow's name: the one proposed when a task is saved ([`propose_name`]: a few words of
//! the task that make sense on their own, for the person to keep or change) and the one the
//! person chose ([`chosen_name`]: refused with a sentence when empty, too long or another
//! workflow's, since `/run <name>` finds a workflow by its name).

use crate::i18n::{text, Msg};

use super::Workflow;
use crate::case::Lowercase;

/// The longest name, in characters.
pub const MAX_NAME: usize = 100;
/// A proposal's most words and characters: a name to type after `/run`, not a sentence.
const PROPOSED_WORDS: usize = 5;
const PROPOSED_CHARS: usize = 40;

/// Words a task often opens with that say nothing of what it does (matched as whole leading
/// words, in the languages Tandem speaks).
const FILLER: &[&[&str]] = &[
    &["please"],
    &["pls"],
    &["kindly"],
    &["hey"],
    &["ok"],
    &["okay"],
    &["tandem"],
    &["can", "you"],
    &["could", "you"],
    &["would", "you"],
    &["will", "you"],
    &["i", "want", "you", "to"],
    &["i", "want", "to"],
    &["i", "need", "you", "to"],
    &["i", "need", "to"],
    &["i'd", "like", "you", "to"],
    &["i'd", "like", "to"],
    &["i", "would", "like", "to"],
    &["help", "me"],
    &["bitte"],
    &["kannst", "du"],
    &["könntest", "du"],
    &["por", "favor"],
    &["puedes"],
    &["s'il", "te", "plaît"],
    &["s'il", "vous", "plaît"],
    &["peux-tu"],
    &["pouvez-vous"],
];

/// Words that start the task's next clause ("…, pick size M and add it"): the name stops
/// before them.
const JOINS: &[&str] = &[
    "and", "then", "&", "und", "dann", "et", "puis", "y", "luego", "después",
];

/// Words a name never ends on: what they lead to was cut off (articles, prepositions,
/// conjunctions, pronouns).
const DANGLING: &[&str] = &[
    // English
    "a", "an", "the", "to", "for", "of", "in", "on", "at", "by", "with", "from", "into", "onto",
    "and", "or", "but", "then", "it", "its", "my", "your", "our", "their", "this", "that", "these",
    "those", "some", "me", "as", "so", "if", "up", "out", "all", // German
    "der", "die", "das", "den", "dem", "des", "ein", "eine", "einen", "einem", "einer", "und",
    "oder", "zu", "zum", "zur", "für", "mit", "von", "vom", "im", "auf", "am", "bei", "aus",
    "nach", "es", "mein", "meine", "meinen", // French
    "le", "la", "les", "l'", "un", "une", "des", "du", "de", "d'", "à", "au", "aux", "et", "ou",
    "pour", "avec", "dans", "sur", "en", "par", "mon", "ma", "mes", // Spanish
    "el", "los", "las", "unos", "unas", "y", "o", "para", "con", "del", "al", "por", "mi", "mis",
];

/// Marks that end a clause whatever follows them (the languages written without spaces).
const CLAUSE_ENDS_ALWAYS: &[char] = &['，', '。', '、', '；', '！', '？', '\n'];
/// Marks that end a clause when a space or the end follows (so "3.5", "1,000" and
/// "shop.example" stay whole).
const CLAUSE_ENDS_SPACED: &[char] = &[',', '.', ';', '!', '?'];

/// A short name for a workflow saved from `task`, for the person to keep or change: the
/// task's first clause without its leading courtesies, at most a few words, never ending on
/// a word that leads somewhere ("to", "the", "and"), its first letter a capital.
/// "Search for blue backpack, pick size M and add it to the cart" → "Search for blue
/// backpack".
pub fn propose_name(task: &str) -> String {
    let words = without_filler(task.split_whitespace().collect()).join(" ");
    let clause = first_clause(&words);
    let mut picked: Vec<&str> = Vec::new();
    for word in clause.split_whitespace() {
        if picked.len() >= PROPOSED_WORDS {
            break;
        }
        if !picked.is_empty() && JOINS.contains(&lower(word).as_str()) {
            break;
        }
        picked.push(word);
    }
    while picked.len() > 1 && picked.last().is_some_and(|w| dangles(w)) {
        picked.pop();
    }
    let name = picked.join(" ");
    let name = name.trim_matches(|c: char| !c.is_alphanumeric() && !")]”\"'»」』".contains(c));
    let name = name.trim_start_matches(|c: char| !c.is_alphanumeric());
    if name.is_empty() {
        return "Workflow".into();
    }
    capitalised(&shortened(name))
}

/// The name a person gave a workflow (when saving it, or Rename), as it is kept: trimmed,
/// 1 to [`MAX_NAME`] characters, and no other workflow's of `list` (ignoring case: `/run`
/// finds a workflow by its name so); `own` is the id of the workflow being renamed, whose
/// present name does not count. The error is the sentence shown.
pub fn chosen_name(name: &str, list: &[Workflow], own: Option<&str>) -> Result<String, Msg> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > MAX_NAME {
        return Err(Msg::key("wfNameLength"));
    }
    super::plain(name)?;
    let taken = list
        .iter()
        .filter(|w| Some(w.id.as_str()) != own)
        .find(|w| same_name(&w.name, name));
    match taken {
        Some(w) => Err(Msg::new("wfNameTaken", vec![text(w.name.trim())])),
        None => Ok(name.to_string()),
    }
}

/// Whether two names are one to `/run`: equal but for case and surrounding spaces.
pub fn same_name(a: &str, b: &str) -> bool {
    a.trim().lowercase() == b.trim().lowercase()
}

fn lower(word: &str) -> String {
    word.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'' && c != '&')
        .lowercase()
}

/// `words` without the courtesies they open with ("Please, can you …").
fn without_filler(mut words: Vec<&str>) -> Vec<&str> {
    'again: loop {
        for phrase in FILLER {
            let matches = words.len() > phrase.len()
                && words.iter().zip(phrase.iter()).all(|(w, p)| lower(w) == *p);
            if matches {
                words.drain(..phrase.len());
                continue 'again;
            }
        }
        return words;
    }
}

/// `text` up to the end of its first clause that has words in it.
fn first_clause(text: &str) -> &str {
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let next = chars.peek().map(|(_, n)| *n);
        let ends = CLAUSE_ENDS_ALWAYS.contains(&c)
            || (CLAUSE_ENDS_SPACED.contains(&c) && next.is_none_or(char::is_whitespace));
        if !ends {
            continue;
        }
        let clause = &text[start..at];
        if clause.chars().any(char::is_alphanumeric) {
            return clause;
        }
        start = at + c.len_utf8();
    }
    &text[start..]
}

fn dangles(word: &str) -> bool {
    let w = lower(word);
    w.is_empty() || DANGLING.contains(&w.as_str())
}

/// At most [`PROPOSED_CHARS`] characters, cut after a whole word where there is one.
fn shortened(name: &str) -> String {
    if name.chars().count() <= PROPOSED_CHARS {
        return name.to_string();
    }
    let cut: String = name.chars().take(PROPOSED_CHARS).collect();
    match cut.rfind(char::is_whitespace) {
        Some(at) if at > 0 => cut[..at].trim_end().to_string(),
        _ => cut,
    }
}

fn capitalised(name: &str) -> String {
    let mut chars = name.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proposed_name_is_the_first_clause_in_a_few_words_never_cut_mid_phrase() {
        for (task, name) in [
            (
                "Search for blue backpack, pick size M and add it to the cart",
                "Search for blue backpack",
            ),
            (
                "search for blue backpack and add it to the cart",
                "Search for blue backpack",
            ),
            (
                "Please, can you find the cheapest flight from Paris to Berlin on Friday",
                "Find the cheapest flight",
            ),
            ("Place the order in my cart", "Place the order"),
            (
                "Fill in my delivery details: full name Ada Lovelace, email ada@example.test",
                "Fill in my delivery details",
            ),
            (
                "Check shop.example.com for 3.5 mm cables",
                "Check shop.example.com for 3.5 mm",
            ),
            (
                "Open the inbox. Then archive the newsletters",
                "Open the inbox",
            ),
            (
                "I'd like to book a table for two then pay",
                "Book a table for two",
            ),
            (
                "Suche nach einem blauen Rucksack und lege ihn in den Warenkorb",
                "Suche nach einem blauen Rucksack",
            ),
            (
                "Cherche un sac à dos bleu et ajoute-le au panier",
                "Cherche un sac à dos",
            ),
            (
                "青いリュックを検索して、カートに入れて",
                "青いリュックを検索して",
            ),
            ("   ", "Workflow"),
            ("please", "Please"),
            ("the", "The"),
            (", , buy milk", "Buy milk"),
        ] {
            assert_eq!(propose_name(task), name, "{task}");
        }
    }

    #[test]
    fn a_proposed_name_is_short_even_from_one_long_word() {
        let long = "x".repeat(300);
        assert_eq!(propose_name(&long).chars().count(), PROPOSED_CHARS);
        let name =
            propose_name("Compare supercalifragilisticexpialidocious antidisestablishmentarianism");
        assert!(name.chars().count() <= PROPOSED_CHARS, "{name}");
        assert_eq!(name, "Compare");
    }

    fn named(id: &str, name: &str) -> Workflow {
        Workflow {
            id: id.into(),
            name: name.into(),
            goal: String::new(),
            start_url: "https://shop.test/".into(),
            steps: Vec::new(),
            params: Vec::new(),
            last_run: None,
            schedule: None,
        }
    }

    #[test]
    fn a_chosen_name_is_trimmed_and_refused_when_another_workflow_has_it() {
        let list = [named("a", "Search for blue backpack"), named("b", "Order")];
        assert_eq!(
            chosen_name("  Buy a scarf ", &list, None).as_deref(),
            Ok("Buy a scarf")
        );
        let taken = chosen_name(" search FOR blue backpack ", &list, None).unwrap_err();
        assert_eq!(
            taken.english(),
            "There is already a workflow called “Search for blue backpack”. Choose another name."
        );
        // Its own name is not taken from a workflow being renamed (a change of case, say).
        assert_eq!(
            chosen_name("ORDER", &list, Some("b")).as_deref(),
            Ok("ORDER")
        );
        assert!(chosen_name("order", &list, Some("a")).is_err());
        for bad in ["", "   ", &"n".repeat(MAX_NAME + 1)] {
            assert_eq!(
                chosen_name(bad, &list, None).unwrap_err(),
                Msg::key("wfNameLength")
            );
        }
        assert!(chosen_name("bell\u{7}", &list, None).is_err());
    }
}
