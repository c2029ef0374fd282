//! Why a step failed, as a person reads it in their language: the stored result of a failed
//! step read back into a catalog message.
//!
//! A failed step's result stays the English sentence the model reads in its next turn (the
//! driver's `error: message`, [`super::report`]'s "covered by …", the worker's refusals), and
//! is stored as it is; the timeline line says it in the person's language by recognising
//! those sentences here. Core and the driver write them, so the templates below are theirs
//! (a test holds them to the driver's `fail(…)` calls). A result no template fits, like the
//! words of a newer driver or an exception's message, is shown as it is.
//!
//! ```
//! use tandem_core::agent::why::reason;
//! assert_eq!(reason("disabled: the element is disabled").key, "whyDisabled");
//! assert_eq!(reason("something new").english(), "something new");
//! ```

use crate::i18n::{em, nested, text, Arg, Mark, Msg};

/// How a `{…}` slot of a template becomes an argument.
#[derive(Clone, Copy)]
enum Slot {
    /// Words of the page or the model (an option's text, a key's name), emphasised.
    Page,
    /// A number or a role word, plain.
    Plain,
    /// Another result, read back in turn.
    Why,
    /// A role or tag (`button`), said as a person calls such a control ("the button").
    Role,
}

/// A result as core and the driver write it (after [`readable`](super::step_line) turned the
/// fences into quotes and the lines into one), and the key it is said with. In a template,
/// `{}` is page words, `{n}` plain words, `{why}` another result, `{role}` a role said as a
/// control's kind ("the button"); a slot's words are given to
/// the key's placeholders in order; `{_}` is matched and dropped.
const READINGS: &[(&str, &str)] = &[
    // The driver's failures (`extension/content/driver.js`, `code: message`).
    ("disabled: the element is disabled", "whyDisabled"),
    ("not-visible: the element is not visible", "whyNotVisible"),
    (
        "stale-handle: the element of handle {_} is no longer in the page",
        "whyGone",
    ),
    (
        "stale-handle: handle {_} belongs to another page or frame",
        "whyGone",
    ),
    ("not-found: no element was ever given handle {_}", "whyGone"),
    ("stale-handle: the page driver is not loaded", "whyNoDriver"),
    ("not-editable: a {_} cannot be typed into", "whyNotEditable"),
    (
        "read-only: the field is read-only: its value cannot be changed by typing",
        "whyReadOnly",
    ),
    ("not-select: a {_} is not a <select>", "whyNotList"),
    (
        "not-found: “no option \"{}\"; available: {}”",
        "whyNoOption",
    ),
    ("disabled: “option \"{}\" is disabled”", "whyOptionDisabled"),
    (
        "bad-action: “this list holds one option at a time: choose it without \"mode\"”",
        "whyOneOption",
    ),
    (
        "bad-action: \"{}\" is not a key; use names such as Escape, Enter, Tab, ArrowDown, PageDown, Control+A",
        "whyNotAKey",
    ),
    ("bad-action: the value is not a number", "whyNotNumber"),
    (
        "bad-action: this is a text field: type into it instead",
        "whyTypeInstead",
    ),
    ("bad-action: “no text to select”", "whyNoTextToSelect"),
    ("not-found: “the field does not contain \"{}\"”", "whyNoSuchText"),
    (
        "not-found: “the element does not contain \"{}\"”",
        "whyNoSuchText",
    ),
    (
        "not-visible: that point of the element is outside the window",
        "whyPointOutside",
    ),
    (
        "bad-action: nothing inside this element scrolls; scroll the page instead",
        "whyNothingScrolls",
    ),
    (
        "changed: the page changed since the last look; nothing was done",
        "whyPageChanged",
    ),
    ("the page changed", "whyPageChanged"),
    ("exception: “{}”", "whyException"),
    // `report`: what lies on top, an action the page ignored, a wait that found nothing.
    (
        "covered by another element: a person could not reach the element there, so nothing was done; close or move what covers it (or scroll) first",
        "whyCovered",
    ),
    // "an" before "a": "covered by a " is also the start of "covered by an ".
    (
        "covered by an {n} “{}” a person could not reach the element there, so nothing was done; close or move what covers it (or scroll) first",
        "whyCoveredByNamed",
    ),
    (
        "covered by a {n} “{}” a person could not reach the element there, so nothing was done; close or move what covers it (or scroll) first",
        "whyCoveredByNamed",
    ),
    (
        "covered by an {n}: a person could not reach the element there, so nothing was done; close or move what covers it (or scroll) first",
        "whyCoveredBy",
    ),
    (
        "covered by a {n}: a person could not reach the element there, so nothing was done; close or move what covers it (or scroll) first",
        "whyCoveredBy",
    ),
    (
        "the page did not react: {_} but nothing visible changed",
        "whyNoReaction",
    ),
    (
        "the page ignored script events, so Tandem repeated it as real input through Chrome's debugger (Chrome shows a \"debugging this browser\" bar meanwhile); {why}",
        "whyRepeated",
    ),
    (
        "{why}; repeating it as real input was not possible: {}",
        "whyNoRepeat",
    ),
    ("the text did not appear in time", "whyTextNotAppeared"),
    // `report`: an action carried out whose result is not what was asked.
    (
        "the slider did not take the value; it shows {n}",
        "whySliderShows",
    ),
    ("the slider did not take the value", "whySliderNotTaken"),
    ("the slider did not take the value; {_}", "whySliderNotTaken"),
    (
        "dragged it, but it ended outside the target",
        "whyOutsideZone",
    ),
    (
        "dragged it, but it ended outside the target; {_}",
        "whyOutsideZone",
    ),
    (
        "clicked it only {n} of {n} times (it was gone or covered the other times)",
        "whyClicksMissed",
    ),
    (
        "clicked it only {n} of {n} times (it was gone or covered the other times); {_}",
        "whyClicksMissed",
    ),
    (
        "bad-action: a path needs at least two [x, y] points",
        "whyPathTooShort",
    ),
    // The worker's look for the element, and its own refusals.
    (
        "there is no element [{n}] in the current list",
        "whyNoSuchElement",
    ),
    (
        "element [{_}] is no longer on the page (best look-alike scored {_})",
        "whyGone",
    ),
    (
        "element [{_}] now matches {n} elements equally well; look at the list again",
        "whyAmbiguous",
    ),
    (
        "you denied this action; it was not done. Do not try it again",
        "whyYouDenied",
    ),
    (
        "you denied opening {_}; it was not opened. Do not try it again",
        "whyYouDenied",
    ),
    ("you did not let Tandem act on {n}", "whySiteDenied"),
    ("stopped before acting", "whyStopped"),
    ("the same action on the same page again", "whySameAgain"),
    (
        "look is not available: this model does not take images; use the element list",
        "whyNoLook",
    ),
    ("not answered", "whyNotAnswered"),
    ("this action needs an element", "whyNeedsElement"),
    (
        "the drop target is in another frame than the element; nothing was done",
        "whyDropFrame",
    ),
    ("the drop target: {why}", "whyDropTarget"),
    ("not allowed: “{}”", "whyNotAllowed"),
    ("the page could not be read ({})", "whyPageUnread"),
    ("the tab is gone ({_})", "whyTabGone"),
    // A scheduled run's page that did not load (`agent/page.rs`), and the run not started.
    (
        "{n} did not load within {n} seconds (the tab showed nothing, {_})",
        "pageNotLoadedBlank",
    ),
    (
        "{n} did not load within {n} seconds (the tab showed {n}, {_})",
        "pageNotLoaded",
    ),
    ("Not run: {why}.", "workflowNotRunBecause"),
    (
        "Tandem could not open the workflow's start page: {why}",
        "startPageNotOpened",
    ),
    (
        "Tandem does not act on this workflow's site ({}); change the site lists in Settings to allow it",
        "startNotAllowed",
    ),
    ("Tandem could not open a tab for it ({_})", "startNoTab"),
    ("Tandem could not start it ({_})", "startFailed"),
    ("Done without the model", "workflowDoneNoModel"),
    // A workflow's replay leaving its saved steps (the worker's `agent/replay.rs`, core's
    // `workflow::Divergence`), on the timeline and in the run's stored outcome.
    (
        "Replay diverged at step {n}: {why}; the model took over from there.",
        "replayTookOver",
    ),
    ("Replay diverged at step {n}: {why}.", "replayDiverged"),
    (
        "step {n}: {why}; the model took over from there",
        "divergedTookOver",
    ),
    ("step {n}: {why}", "divergedAt"),
    (
        "the page is {}, not the page the step was recorded on ({})",
        "divergeOtherPage",
    ),
    ("the {role} “{}” was not found", "divergeNotFound"),
    (
        "the {role} “{}” now matches several elements equally well",
        "divergeAmbiguous",
    ),
    ("the step has no element to act on", "divergeNoElement"),
    ("acting on the step failed ({why})", "divergeStepFailed"),
    ("acting on the {role} “{}” failed ({why})", "divergeActFailed"),
];

/// A role or tag as a person calls the control, with "the".
pub(crate) fn role_word(role: &str) -> Msg {
    Msg::key(match role {
        "textbox" | "input" => "theTextField",
        "searchbox" => "theSearchBox",
        "textarea" => "theTextBox",
        "combobox" | "select" | "listbox" => "theList",
        "radio" => "theOption",
        "menuitem" | "menuitemcheckbox" | "menuitemradio" => "theMenuItem",
        "a" | "link" => "theLink",
        "img" | "image" => "theImage",
        "button" => "theButton",
        "checkbox" | "switch" => "theCheckbox",
        "" => "theElement",
        other => return Msg::new("theRole", vec![text(other)]),
    })
}

/// `result` (one line, fences shown as quotes) as a catalog message when it is one of the
/// sentences core and the driver write, else as it is.
pub fn reason(result: &str) -> Msg {
    let result = result.trim();
    for (template, key) in READINGS {
        if let Some(args) = read(template, result) {
            return Msg::new(key, args);
        }
    }
    Msg::literal(result)
}

/// The arguments of `result` read with `template`, or `None` when it does not fit.
fn read(template: &str, result: &str) -> Option<Vec<Arg>> {
    let mut literals = Vec::new();
    let mut slots = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let close = open + rest[open..].find('}')?;
        literals.push(&rest[..open]);
        slots.push(match &rest[open + 1..close] {
            "" => Some(Slot::Page),
            "n" => Some(Slot::Plain),
            "why" => Some(Slot::Why),
            "role" => Some(Slot::Role),
            _ => None,
        });
        rest = &rest[close + 1..];
    }
    literals.push(rest);
    let words = fit(&literals, result)?;
    Some(
        slots
            .iter()
            .zip(words)
            .filter_map(|(slot, w)| match slot {
                Some(Slot::Page) => Some(em(w)),
                Some(Slot::Plain) => Some(text(w)),
                Some(Slot::Why) => Some(nested(Mark::Plain, reason(w))),
                Some(Slot::Role) => Some(nested(Mark::Plain, role_word(w))),
                None => None,
            })
            .collect(),
    )
}

/// The words between `literals` when `s` is them with words between, each non-empty; the
/// first way that fits, trying every place a literal occurs.
fn fit<'a>(literals: &[&str], s: &'a str) -> Option<Vec<&'a str>> {
    let (first, rest) = literals.split_first()?;
    let s = s.strip_prefix(first)?;
    let Some((next, _)) = rest.split_first() else {
        return s.is_empty().then(Vec::new);
    };
    let last = rest.len() == 1;
    let mut from = 0;
    while let Some(at) = s[from..].find(next).map(|i| i + from) {
        let (word, tail) = s.split_at(at);
        if !word.is_empty() && (!last || tail.len() == next.len()) {
            if let Some(mut more) = fit(rest, tail) {
                more.insert(0, word);
                return Some(more);
            }
        }
        from = at + next.len().max(1);
        if from > s.len() {
            break;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::CATALOG;

    #[track_caller]
    fn check(result: &str, key: &str, english: &str) {
        let m = reason(result);
        assert_eq!(m.key, key, "{result}");
        assert_eq!(m.english(), english);
    }

    #[test]
    fn the_drivers_and_the_workers_sentences_are_read_back_into_catalog_messages() {
        check(
            "disabled: the element is disabled",
            "whyDisabled",
            "it is disabled",
        );
        check(
            "stale-handle: the element of handle doc1.8 is no longer in the page",
            "whyGone",
            "it is no longer on the page",
        );
        check(
            "not-found: “no option \"XL\"; available: \"S\", \"M\"”",
            "whyNoOption",
            "it has no option XL (it offers \"S\", \"M\")",
        );
        check(
            "covered by a dialog “Cookie consent” a person could not reach the element there, so nothing was done; close or move what covers it (or scroll) first",
            "whyCoveredByNamed",
            "Cookie consent (dialog) lies on top of it, where a person would click, so nothing was done",
        );
        check(
            "covered by an element: a person could not reach the element there, so nothing was done; close or move what covers it (or scroll) first",
            "whyCoveredBy",
            "something (element) lies on top of it, where a person would click, so nothing was done",
        );
        check(
            "the page did not react: it was clicked there but nothing visible changed",
            "whyNoReaction",
            "the page did not react: nothing visible changed",
        );
        check(
            "element [7] now matches 3 elements equally well; look at the list again",
            "whyAmbiguous",
            "3 elements of the page now match it equally well",
        );
        check(
            "the drop target: element [4] is no longer on the page (best look-alike scored 0.41)",
            "whyDropTarget",
            "the drop target: it is no longer on the page",
        );
        // A scheduled run that could not start, as its last run says it.
        check(
            "Not run: Tandem could not open the workflow's start page: https://shop.test/ did not load within 20 seconds (the tab showed nothing, still loading).",
            "workflowNotRunBecause",
            "Not run: Tandem could not open the workflow's start page: https://shop.test/ did not load within 20 seconds.",
        );
        check(
            "https://shop.test/ did not load within 20 seconds (the tab showed https://shop.test/login, loaded)",
            "pageNotLoaded",
            "https://shop.test/ did not load within 20 seconds (the tab showed https://shop.test/login)",
        );
        // Page words are arguments, never read as a template's words.
        let m = reason("not-found: “the field does not contain \"it is disabled\"”");
        assert_eq!(m.key, "whyNoSuchText");
        assert_eq!(m.args, vec![em("it is disabled")]);
        // A sentence no template fits, and an exception's words, stay as they are.
        check("a new driver's words", "", "a new driver's words");
        check(
            "exception: “TypeError: x is null”",
            "whyException",
            "the page's script failed (TypeError: x is null)",
        );
    }

    #[test]
    fn every_key_read_back_is_in_the_catalog_with_its_placeholders() {
        for (template, key) in READINGS {
            let english = crate::i18n::entries(CATALOG)
                .find(|(k, _)| k == key)
                .unwrap_or_else(|| panic!("{key} is not in the catalog"))
                .1;
            let given = template.matches("{}").count()
                + template.matches("{n}").count()
                + template.matches("{why}").count()
                + template.matches("{role}").count();
            let wanted = (1..=9)
                .filter(|n| english.contains(&format!("${n}")))
                .count();
            assert_eq!(given, wanted, "{key}: {template} / {english}");
        }
    }

    /// The driver's own failure sentences: every `fail('code', 'message')` in driver.js with a
    /// fixed message is read back (a message built from page words is checked above).
    #[test]
    fn every_fixed_driver_failure_is_read_back() {
        let driver = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../extension/content/driver.js"
        ))
        .unwrap();
        let mut seen = 0;
        for call in driver.split("fail('").skip(1) {
            let Some((code, rest)) = call.split_once("', ") else {
                continue;
            };
            let quote = rest.chars().next().unwrap_or(' ');
            if !matches!(quote, '\'' | '`') {
                continue;
            }
            let Some(end) = rest[1..].find(quote) else {
                continue;
            };
            // A `${…}` part stands for a handle or a tag name here.
            let mut message = rest[1..=end].to_string();
            while let (Some(a), Some(b)) = (message.find("${"), message.find('}')) {
                if b < a {
                    break;
                }
                message.replace_range(a..=b, "x1");
            }
            if code == "exception"
                || message.contains('"')
                || message == "nothing was being watched"
            {
                continue; // Page words, fenced for the model: checked above.
            }
            let result = format!("{code}: {message}");
            if code == "bad-action" && message.starts_with("unknown op") {
                continue; // The worker's own mistake, never a model's action.
            }
            let m = reason(&result);
            let fenced = reason(&format!("{code}: “{message}”"));
            assert!(
                !m.is_literal() || !fenced.is_literal(),
                "the driver's {result:?} is not read back"
            );
            seen += 1;
        }
        assert!(seen >= 10, "only {seen} driver failures found");
    }
}
