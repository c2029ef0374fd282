//! Sentences a person reads, as values: a [`Msg`] is a catalog key and its arguments, built
//! here in pure Rust and put into words where it is shown.
//!
//! Core never asks the browser for a language. It names the sentence (`stepClicked`, with the
//! control as an argument) and [`Msg::render`] fills whatever template the caller's catalog
//! holds for that key: the panel and the worker pass Chrome's (`chrome.i18n.getMessage`, the
//! UI language's `extension/_locales/<lang>/messages.json`), native tests, prompts and logs
//! [`english`], the table below. A key a catalog lacks falls back to English, so a sentence
//! added in English only still reads. Templates use Chrome's own `$1`…`$9` substitutions;
//! an argument may be another message (a role word inside a step line) and carries its
//! emphasis, which the panel shows as `strong` / `em` (never HTML from the text).
//!
//! ```
//! use tandem_core::i18n::{strong, Msg};
//! let m = Msg::new("stepClicked", vec![strong("ONE")]);
//! assert_eq!(m.english(), "Clicked ONE");
//! let german = |key: &str| (key == "stepClicked").then(|| "$1 angeklickt".to_string());
//! assert_eq!(m.plain(&german), "ONE angeklickt");
//! ```
//!
//! A literal message (empty key) is text that is already words, shown as it is: the
//! sentences no catalog has yet (another helper's new step line, a provider's own words).

use serde::{Deserialize, Serialize};

/// One run of a rendered sentence, with its emphasis: the control acted on is `Strong`, what
/// was typed, chosen or asked is `Em`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Piece {
    Text(String),
    Strong(String),
    Em(String),
}

impl Piece {
    fn text(&self) -> &str {
        match self {
            Piece::Text(t) | Piece::Strong(t) | Piece::Em(t) => t,
        }
    }
}

/// How an argument is shown.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Mark {
    #[default]
    Plain,
    Strong,
    Em,
}

/// One argument of a message: words from outside the catalog (a host, a control's name, what
/// was typed), or another message put into words in the same language.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Arg {
    Text(String),
    Strong(String),
    Em(String),
    Msg(Mark, Box<Msg>),
    /// A number of things, shown as `shown`: the message's first count picks its plural form
    /// (see [`Msg::render`]).
    Count {
        n: u64,
        shown: String,
    },
}

/// Plain words as an argument.
pub fn text(t: impl Into<String>) -> Arg {
    Arg::Text(t.into())
}

/// A number of things (`3` in "3 tokens"), whose value picks the sentence's plural form.
pub fn count(n: u64) -> Arg {
    Arg::Count {
        n,
        shown: n.to_string(),
    }
}

/// A count shown otherwise than its digits (grouped: `1,234`).
pub fn count_shown(n: u64, shown: impl Into<String>) -> Arg {
    Arg::Count {
        n,
        shown: shown.into(),
    }
}

/// The catalog key a caller's catalog answers with the plural category of `n` in its
/// language (`one`, `few`, `other`…, as `Intl.PluralRules` names them): `@plural:<n>`. A
/// catalog that does not answer it gets English's rule.
pub const PLURAL_QUESTION: &str = "@plural:";

/// English's rule: one for 1, other for everything else.
fn english_plural(n: u64) -> &'static str {
    if n == 1 {
        "one"
    } else {
        "other"
    }
}

/// The control acted on, emphasised.
pub fn strong(t: impl Into<String>) -> Arg {
    Arg::Strong(t.into())
}

/// What was typed, chosen or asked, emphasised.
pub fn em(t: impl Into<String>) -> Arg {
    Arg::Em(t.into())
}

/// Another message as an argument, shown with `mark`.
pub fn nested(mark: Mark, msg: Msg) -> Arg {
    Arg::Msg(mark, Box::new(msg))
}

/// A sentence as a catalog key and its arguments. Serialized as `{"key":…,"args":[…]}`: it
/// crosses from the worker to the panel and is stored with the task.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Msg {
    /// The message's name in `_locales/*/messages.json`; empty for a literal (the arguments,
    /// one after the other, are the words).
    pub key: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<Arg>,
}

// Read through a `Value` (`json::via_value`): a saved workflow's last run holds a `Msg` read
// from a `Value`, so the one reader serves the texts (a stored task, a conversation) too.
impl<'de> Deserialize<'de> for Msg {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Msg, D::Error> {
        #[derive(Deserialize)]
        #[serde(rename = "Msg")]
        struct Read {
            key: String,
            #[serde(default)]
            args: Vec<Arg>,
        }
        let Read { key, args } = crate::json::via_value(d)?;
        Ok(Msg { key, args })
    }
}

impl Msg {
    pub fn new(key: &str, args: Vec<Arg>) -> Msg {
        debug_assert!(english(key).is_some(), "no English for {key}");
        Msg {
            key: key.to_string(),
            args,
        }
    }

    /// A message without arguments.
    pub fn key(key: &str) -> Msg {
        Msg::new(key, Vec::new())
    }

    /// Words that are not in the catalog, shown as they are.
    pub fn literal(words: impl Into<String>) -> Msg {
        Msg {
            key: String::new(),
            args: vec![Arg::Text(words.into())],
        }
    }

    /// Pieces that are not in the catalog, shown as they are (with their emphasis).
    pub fn literal_pieces(pieces: Vec<Piece>) -> Msg {
        let args = pieces
            .into_iter()
            .map(|p| match p {
                Piece::Text(t) => Arg::Text(t),
                Piece::Strong(t) => Arg::Strong(t),
                Piece::Em(t) => Arg::Em(t),
            })
            .collect();
        Msg {
            key: String::new(),
            args,
        }
    }

    /// This sentence, then `next` after a space: a literal holding both, each put into words
    /// on its own.
    pub fn then(self, next: Msg) -> Msg {
        let gap = if next.english().starts_with(' ') {
            ""
        } else {
            " "
        };
        Msg {
            key: String::new(),
            args: vec![
                nested(Mark::Plain, self),
                text(gap),
                nested(Mark::Plain, next),
            ],
        }
    }

    pub fn is_literal(&self) -> bool {
        self.key.is_empty()
    }

    /// Whether any part of it is a catalog message (a literal may hold one as an argument);
    /// `false`: words only, the same in every language.
    pub fn has_key(&self) -> bool {
        !self.key.is_empty()
            || self
                .args
                .iter()
                .any(|a| matches!(a, Arg::Msg(_, m) if m.has_key()))
    }

    /// The sentence in the language of `catalog` (key → template), English for any key it
    /// lacks, as pieces with their emphasis; adjacent plain text is joined.
    pub fn render(&self, catalog: &dyn Fn(&str) -> Option<String>) -> Vec<Piece> {
        let mut out = Vec::new();
        self.render_into(catalog, Mark::Plain, &mut out);
        out
    }

    fn render_into(
        &self,
        catalog: &dyn Fn(&str) -> Option<String>,
        mark: Mark,
        out: &mut Vec<Piece>,
    ) {
        let arg = |i: usize, out: &mut Vec<Piece>| match self.args.get(i) {
            Some(Arg::Text(t)) => push(out, piece(mark, &visible(t))),
            Some(Arg::Strong(t)) => push(out, Piece::Strong(visible(t))),
            Some(Arg::Em(t)) => push(out, Piece::Em(visible(t))),
            Some(Arg::Msg(inner, m)) => {
                let inner = if *inner == Mark::Plain { mark } else { *inner };
                m.render_into(catalog, inner, out)
            }
            Some(Arg::Count { shown, .. }) => push(out, piece(mark, shown)),
            None => {}
        };
        if self.is_literal() {
            for i in 0..self.args.len() {
                arg(i, out);
            }
            return;
        }
        let template = self
            .plural_form(catalog)
            .or_else(|| catalog(&self.key).filter(|t| !t.is_empty()))
            .or_else(|| english(&self.key).map(str::to_string))
            .unwrap_or_default();
        let mut rest = template.as_str();
        while let Some(at) = rest.find('$') {
            let after = &rest[at + 1..];
            match after.chars().next().and_then(|c| c.to_digit(10)) {
                Some(n @ 1..=9) => {
                    push(out, piece(mark, &rest[..at]));
                    arg(n as usize - 1, out);
                    rest = &after[1..];
                }
                _ => {
                    push(out, piece(mark, &rest[..at + 1]));
                    rest = after;
                }
            }
        }
        push(out, piece(mark, rest));
    }

    /// The template of the plural form its first count calls for, where the sentence has one:
    /// `<key>_<category>` ("nTokens_one": "$1 token"); the key itself is the `other` form. Every
    /// catalog has every key, so a language whose rules never pick a form (Japanese has only
    /// `other`) repeats the `other` words there.
    fn plural_form(&self, catalog: &dyn Fn(&str) -> Option<String>) -> Option<String> {
        let n = self.args.iter().find_map(|a| match a {
            Arg::Count { n, .. } => Some(*n),
            _ => None,
        })?;
        let category = catalog(&format!("{PLURAL_QUESTION}{n}"))
            .filter(|c| !c.is_empty())
            .unwrap_or_else(|| english_plural(n).to_string());
        if category == "other" {
            return None;
        }
        let form = format!("{}_{category}", self.key);
        catalog(&form)
            .filter(|t| !t.is_empty())
            .or_else(|| english(&form).map(str::to_string))
    }

    /// The sentence as plain text in `catalog`'s language: what a screen reader says.
    pub fn plain(&self, catalog: &dyn Fn(&str) -> Option<String>) -> String {
        self.render(catalog).iter().map(Piece::text).collect()
    }

    /// The sentence in English: for prompts, logs, tests and the stored English beside it.
    pub fn english(&self) -> String {
        self.plain(&|_| None)
    }
}

/// The English: what a log, a native test or an error chain reads.
impl std::fmt::Display for Msg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.english())
    }
}

impl From<String> for Msg {
    fn from(words: String) -> Msg {
        Msg::literal(words)
    }
}

impl From<&str> for Msg {
    fn from(words: &str) -> Msg {
        Msg::literal(words)
    }
}

/// Sentences one after the other, each put into words by `catalog`, a space between them.
pub fn plain_all(msgs: &[Msg], catalog: &dyn Fn(&str) -> Option<String>) -> String {
    msgs.iter()
        .map(|m| m.plain(catalog))
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Words from outside as a person may read them: a control character (a bell, an escape, a
/// carriage return) is shown as its picture (`␇`) or code (`\u{9b}`) rather than acting on the
/// line or vanishing, and so is a direction override, which would reorder what is read
/// (`file\u{202e}gpj.exe`). Line breaks and tabs stay, and so do the marks right-to-left text
/// needs (U+200E, U+200F).
pub fn visible(t: &str) -> String {
    let shown = |c: char| c == '\n' || c == '\t' || !(c.is_control() || is_bidi_control(c));
    if t.chars().all(shown) {
        return t.to_string();
    }
    let mut out = String::with_capacity(t.len() + 8);
    for c in t.chars() {
        match c {
            c if shown(c) => out.push(c),
            // Unicode's Control Pictures block draws C0 controls and DEL.
            '\u{0}'..='\u{1f}' => out.push(char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}')),
            '\u{7f}' => out.push('\u{2421}'),
            c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
    out
}

/// The embeddings, overrides and isolates: they reorder the text after them.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn piece(mark: Mark, t: &str) -> Piece {
    match mark {
        Mark::Plain => Piece::Text(t.to_string()),
        Mark::Strong => Piece::Strong(t.to_string()),
        Mark::Em => Piece::Em(t.to_string()),
    }
}

/// Appends `p`, joining it to the last piece when both are of the same kind.
fn push(out: &mut Vec<Piece>, p: Piece) {
    if p.text().is_empty() {
        return;
    }
    match (out.last_mut(), &p) {
        (Some(Piece::Text(a)), Piece::Text(b))
        | (Some(Piece::Strong(a)), Piece::Strong(b))
        | (Some(Piece::Em(a)), Piece::Em(b)) => a.push_str(b),
        _ => out.push(p),
    }
}

/// The English template of `key`; the same text is `extension/_locales/en/messages.json`'s
/// (a test holds them equal, and every other catalog to the same placeholders).
pub fn english(key: &str) -> Option<&'static str> {
    entries(CATALOG)
        .chain(entries(panel_catalog()))
        .find(|(k, _)| *k == key)
        .map(|(_, t)| t)
}

/// A catalog written as one text (see [`catalog!`]): its `(key, English)` pairs in order.
pub fn entries(catalog: &'static str) -> impl Iterator<Item = (&'static str, &'static str)> {
    catalog
        .split_terminator(ENTRY_END)
        .filter_map(|entry| entry.split_once(KEY_END))
}

/// What ends a key, then its English, in a catalog's text: control characters no sentence has
/// (a test holds them out of every entry).
const KEY_END: char = '\u{1f}';
const ENTRY_END: char = '\u{1e}';

/// `("key", "English"),` pairs made into one text, `key␟English␞` each: the worker's table
/// (~390 sentences) as one string costs no pointer and length per key and per sentence
/// (16 bytes each in the module, 2.x KB gzip; issue #46). Read with [`entries`].
macro_rules! catalog {
    ($(($key:literal, $english:literal $(,)?)),* $(,)?) => {
        concat!($($key, "\u{1f}", $english, "\u{1e}"),*)
    };
}

// Only the panel's module carries its own sentences (issue #46: they were 1/3 of the table
// in the worker). Core's own tests run without them, so a sentence core builds that is only
// in the panel's table fails there.
#[cfg(any(test, feature = "panel-words"))]
mod panel_words;

#[cfg(feature = "panel-words")]
fn panel_catalog() -> &'static str {
    panel_words::PANEL_CATALOG
}

#[cfg(not(feature = "panel-words"))]
fn panel_catalog() -> &'static str {
    ""
}

/// Every run-time sentence with a catalog key that core, the worker or `tandem-chrome` builds,
/// in English; the panel's own are in `panel_words` (feature `panel-words`).
pub const CATALOG: &str = catalog![
    // A timeline step that worked (`agent::step_line`).
    ("stepClicked", "Clicked $1"),
    ("stepClickedTimes", "Clicked $1 $2 times"),
    ("stepTyped", "Typed $1 into $2"),
    ("stepTypedSent", "Typed $1 into $2 and sent the form"),
    ("stepTypedPassword", "Typed the password you entered into $1"),
    (
        "stepTypedPasswordSent",
        "Typed the password you entered into $1 and sent the form",
    ),
    ("stepChose", "Chose $1 in $2"),
    ("stepAddedOption", "Added $1 in $2"),
    ("stepRemovedOption", "Removed $1 from $2"),
    ("stepPressed", "Pressed $1"),
    ("stepPressedOn", "Pressed $1 on $2"),
    ("stepPointed", "Pointed at $1"),
    ("stepRightClicked", "Right-clicked $1"),
    ("stepDraggedOnto", "Dragged $1 onto its target"),
    ("stepDraggedBy", "Dragged $1 by $2, $3 pixels"),
    ("stepDraggedAlong", "Dragged $1 along a path of $2 points"),
    ("stepSet", "Set $1 to $2"),
    ("stepSelectedText", "Selected $1 in $2"),
    ("stepClickedPoint", "Clicked a point of $1"),
    ("stepLooked", "Took a screenshot of the page for the next step"),
    ("stepScrolledUp", "Scrolled up"),
    ("stepScrolledDown", "Scrolled down"),
    ("stepScrolledEnd", "Scrolled to the end"),
    ("stepScrolledUpIn", "Scrolled up in $1"),
    ("stepScrolledDownIn", "Scrolled down in $1"),
    ("stepScrolledEndOf", "Scrolled to the end of $1"),
    ("stepScrolledTo", "Scrolled to $1"),
    ("stepWent", "Went to $1"),
    ("stepWentBack", "Went back a page"),
    ("stepOpenedTab", "Opened $1 in a new tab"),
    ("stepSwitchedTab", "Switched to tab $1"),
    ("stepClosedTab", "Closed the tab"),
    ("stepRead", "Read $1"),
    ("stepReadPage", "Read the page"),
    ("stepWaitedFor", "Waited for $1"),
    ("stepWaited", "Waited $1"),
    ("stepAsked", "Asked you $1"),
    ("stepAskedAnswered", "Asked you $1; you answered $2"),
    ("stepFinished", "Finished"),
    ("stepFinishedWith", "Finished: $1"),
    ("stepGaveUp", "Gave up"),
    ("stepGaveUpWith", "Gave up: $1"),
    ("stepUsedTool", "Used the tool $1"),
    (
        "stepNotAStep",
        "The model's answer was not a step Tandem can take: $1",
    ),
    ("stepPlan", "Plan: $1"),
    ("stepChecked", "Checked the result: $1"),
    ("stepCheckedComplete", "Checked the result: the task is complete"),
    (
        "stepCheckedNotYet",
        "Checked the result: the task is not complete yet",
    ),
    // A timeline step that failed: what was tried, then why ($ last).
    ("stepNotClick", "Could not click $1: $2"),
    ("stepNotType", "Could not type $1 into $2: $3"),
    ("stepNotChoose", "Could not choose $1 in $2: $3"),
    ("stepNotPress", "Could not press $1: $2"),
    ("stepNotPoint", "Could not point at $1: $2"),
    ("stepNotRightClick", "Could not right-click $1: $2"),
    ("stepNotDrag", "Could not drag $1: $2"),
    ("stepNotSet", "Could not set $1 to $2: $3"),
    ("stepNotSelect", "Could not select $1: $2"),
    ("stepNotClickPoint", "Could not click a point of $1: $2"),
    ("stepNotLook", "Could not take a screenshot of the page: $1"),
    ("stepNotScroll", "Could not scroll: $1"),
    ("stepNotScrollIn", "Could not scroll in $1: $2"),
    ("stepNotScrollTo", "Could not scroll to $1: $2"),
    ("stepNotGo", "Could not go to $1: $2"),
    ("stepNotBack", "Could not go back: $1"),
    ("stepNotOpen", "Could not open $1: $2"),
    ("stepNotSwitch", "Could not switch to tab $1: $2"),
    ("stepNotClose", "Could not close the tab: $1"),
    ("stepNotRead", "Could not read $1: $2"),
    ("stepNotReadPage", "Could not read the page: $1"),
    ("stepNotSee", "Could not see $1: $2"),
    ("stepNotWait", "Could not wait: $1"),
    ("stepNotAnswer", "Could not get an answer to $1: $2"),
    ("stepNotFinish", "Could not finish: $1"),
    ("stepNotTool", "Could not use the tool $1: $2"),
    // A control without a name, as a step line calls it.
    ("anElement", "an element"),
    ("thePageText", "the page's text"),
    ("aField", "a field"),
    ("aList", "a list"),
    ("aSlider", "a slider"),
    ("theElement", "the element"),
    ("theField", "the field"),
    ("theList", "the list"),
    ("theSlider", "the slider"),
    ("theTextField", "the text field"),
    ("theSearchBox", "the search box"),
    ("theTextBox", "the text box"),
    ("theOption", "the option"),
    ("theMenuItem", "the menu item"),
    ("theLink", "the link"),
    ("theImage", "the image"),
    ("theButton", "the button"),
    ("theCheckbox", "the checkbox"),
    ("theRole", "the $1"),
    ("oneSecond", "1 second"),
    ("nSeconds", "$1 seconds"),
    ("nSeconds_one", "$1 second"),
    ("nTenthSeconds", "$1.$2 seconds"),
    // What waits for the person (`agent::waiting`): the pinned line and the badge's title.
    ("waitSite", "Tandem asks whether it may act on $1."),
    ("waitTool", "Tandem asks before running the tool $1."),
    ("waitSecret", "Tandem needs a password for a field of the page."),
    ("waitApproval", "A task step waits for your approval."),
    ("waitQuestion", "Tandem asked you a question about the task."),
    ("waitProvider", "The extension $1 asks to give Tandem tools."),
    ("waitProviders", "$1 extensions ask to give Tandem tools."),
    ("badgeWaiting", "Tandem is waiting for you. $1"),
    // Questions (`agent::sites`, `agent::safety`).
    ("askSite", "Let Tandem act on $1?"),
    ("approveClick", "Tandem wants to click $1$2."),
    ("approveType", "Tandem wants to type “$1” into $2$3."),
    ("approveTypeEnter", "Tandem wants to type “$1” into $2 and press Enter: pressing Enter submits the form$3."),
    ("approveTypeEnterVia", "Tandem wants to type “$1” into $2 and press Enter: pressing Enter submits the form, as its “$3” button does$4."),
    ("judgePay", ", which buys or pays: that may not be undoable"),
    ("judgeDelete", ", which deletes something: that may not be undoable"),
    ("judgeSecurity", ", which changes who may do what or how an account is protected"),
    ("judgeSend", ", which sends a message others will read"),
    ("judgePublish", ", which publishes or unpublishes something others will see"),
    ("judgeMailForwarding", ", which saves a change to where your mail goes"),
    ("judgeAddress", ", which saves a change to an address"),
    ("judgeAccount", ", which saves a change to your account details"),
    ("judgePageAsks", " (the page asks: “$1”)"),
    ("judgeChosen", " (it runs “$1”)"),
    ("judgeMessage", ": “$1”"),
    ("judgeFields", " (changed: $1)"),
    ("judgeUnasked", ". Your task did not ask for that: a page may have told the agent to"),
    ("approveTypePassword", "Tandem wants to type into $1. Type the password below: it goes to the page only, never to the AI."),
    ("approveChoose", "Tandem wants to choose an option in $1$2."),
    ("approvePress", "Tandem wants to press a key on $1$2."),
    ("approveDrag", "Tandem wants to drag $1$2."),
    ("approveSetValue", "Tandem wants to set the value of $1$2."),
    ("whichSubmitsPassword", ", which submits a form with a password"),
    ("whichIsPassword", ". Type the password below: it goes to the page only, never to the AI"),
    ("whichSubmitsPayment", ", which submits a form with payment details ($1)"),
    ("whichTakesPayment", ", which takes payment details ($1)"),
    ("cardNumber", "card number"),
    ("cardSecurityCode", "card security code"),
    ("cardExpiry", "card expiry date"),
    ("iban", "IBAN"),
    ("seenButton", "the “$1” button"),
    ("seenLink", "the “$1” link"),
    ("seenCheckbox", "the “$1” checkbox"),
    ("seenOption", "the “$1” option"),
    ("seenTab", "the “$1” tab"),
    ("seenMenuItem", "the “$1” menu item"),
    ("seenChoice", "the “$1” choice"),
    ("seenList", "the “$1” list"),
    ("seenField", "the “$1” field"),
    ("seenElement", "the “$1” element"),
    ("aButton", "a button"),
    ("aLink", "a link"),
    ("aCheckbox", "a checkbox"),
    ("anOption", "an option"),
    ("aTab", "a tab"),
    ("aMenuItem", "a menu item"),
    ("aChoice", "a choice"),
    ("aPasswordField", "a password field"),
    // The task's status line and outcomes.
    ("taskDone", "Done"),
    ("taskFailed", "Failed"),
    ("taskCancelled", "Cancelled"),
    ("taskStatusReason", "$1: $2"),
    ("taskComplete", "Task complete."),
    ("taskCancelledByYou", "Cancelled by you."),
    ("taskPausedByYou", "Paused by you. Press Resume to continue."),
    ("taskPlanDenied", "You denied the plan; nothing was done."),
    ("taskSiteDenied", "You did not let Tandem act on $1, so the task stopped there. Nothing was clicked or typed on that site."),
    ("taskTooManySteps", "Stopped after $1 steps, the most a task may take, without finishing."),
    ("taskRepeated", "Stopped: the agent repeated the same action on the same page without progress."),
    ("taskCouldNot", "The agent could not do the task: $1"),
    ("taskProviderFailed", "The AI provider failed: $1"),
    ("taskApprovePlan", "Approve the plan before Tandem acts: $1"),
    // The commonest provider errors (`errors`).
    ("toolAsk", "Allow «$1» to run $2?"),
    ("toolAskWith", "Allow «$1» to run $2 with $3?"),
    (
        "toolReachesWeb",
        "This tool can reach the web: what it is given may be sent to any site.",
    ),
    ("errKeyNeeded", "$1 needs an API key$2. Add it in Settings."),
    ("errKeyRefused", "$1 rejected the API key$2. Check the key in Settings."),
    ("errModelUnknownAt", "$1 does not know the model \"$2\" at $3$4. Check the model name and the base URL in Settings."),
    ("errModelUnknown", "$1 does not know the requested model$2. Check the model name in Settings."),
    ("errUnreachable", "Could not reach $1 at $2. Check your internet connection and the base URL in Settings."),
    ("errLocalUnreachable", "The server at $1 could not be reached. Check that it is running and accepts requests from the extension (CORS). For Ollama, start it with OLLAMA_ORIGINS=chrome-extension://*."),
    ("errAtStep", "Step $1: $2"),
    ("errProviderSaid", "$1 said: \"$2\""),    // Data leaving for a site the task did not name (`agent::effects`, `agent::flow`,
    // `agent::sites`): hosts, addresses and the page's values are arguments.
    ("moreCharacters", "… ($1 more characters)"),
    ("hostLooksLike", "$1 (the address starts with “$2@”, which makes it look like another site: it goes to $1)"),
    ("heldSendTo", "Let the page send data to $1? Tandem held it back because you did not name that site in the task."),
    ("heldQuestion", "Send data to $1? $2, a site you did not name in the task, and Tandem held it back. $3 Approve only if you expect this."),
    ("heldTab", "The page tried to take this tab there"),
    ("heldFrame", "A frame in the page tried to load it"),
    ("heldForm", "The page tried to submit a form there"),
    ("heldFrameForm", "A form in a frame of the page tried to submit there"),
    ("sendsAddressOnly", "It would send the address $1 and nothing more."),
    ("itWouldSend", "It would send: $1."),
    ("effectEnterSubmits", "Typing into $1 and pressing Enter submits its form"),
    ("effectClickSubmits", "Clicking $1 submits its form"),
    ("noFieldsSeen", "no fields Tandem can see"),
    ("effectSubmitQuestion", "Send this form to $1? $2 to $3 ($4), a site you did not name in the task. It would send: $5. Approve only if you expect this."),
    ("addressCarries", "The address carries: $1."),
    ("addressIs", "The address is $1."),
    ("effectLinkQuestion", "Go to $1? Clicking $2 leads to a site you did not name in the task. $3 Approve only if you expect this."),
    ("leaveQuestion", "Tandem wants to open a page on $1, a site you did not name in the task: $2$3. A page can ask the agent to go somewhere with your data in the address: approve only if you expect this."),
    ("userinfoWarning", " (careful: the address begins with “$1@”, which is not the site: the site is $2)"),
    ("flowValue", "“$1” (read on $2)"),
    ("flowQuestion", "Tandem wants to send $1 to $2 ($3). A page can ask the agent to carry your data to another site: approve only if you want $2 to get it."),
    ("listMore", "$1, $2"),
    ("listLast", "$1 and $2"),
    ("flowInAddress", "in the address $1$2"),
    ("flowTypedInto", "typed into $1"),
    ("flowNotNamed", "$1 is a site you did not name in the task."),
    // A workflow's run (the worker's `agent::replay`, `workflows`).
    ("workflowReplayed", "Workflow “$1” replayed: every step matched."),
    ("workflowPausedAt", "The scheduled run stopped at step $1: $2. Its schedule does not let the model take over where a page changed; press Resume to let it."),
    ("workflowNeedsYou", "Scheduled workflow “$1” needs you"),
    ("workflowOpenPanel", "$1 Open Tandem's side panel to answer."),
    // The Workflows view's status lines (the panel's `workflows`).
    ("everyDay", "every day"),
    ("everyWeek", "every week"),
    ("everyHour", "every hour"),
    ("everyNHours", "every $1 hours"),
    ("everyNHours_one", "every hour"),
    // A step's details: how the model was asked and answered (`structured`).
    ("outputModeNative", "Output mode: native tool call (the model called the tool through the provider's tools field)."),
    ("outputMode", "Output mode: $1."),
    ("outputModeTools", "Output mode: $1, with the task's tools offered in the tools field."),
    ("modeJsonSchema", "json_schema (the provider held the reply to the step's JSON Schema)"),
    ("modeJsonObject", "json_object (the provider was asked for any JSON object)"),
    ("modeProseJson", "prose JSON (JSON asked for in the prompt only, read leniently)"),
    ("modeForcedTool", "forced tool (the reply was the input of a tool call the model had to make)"),
    // Why a step failed, read back from its stored English result (`agent::why`), and a
    // workflow replay leaving its saved steps (its timeline line, pause reason and outcome).
    ("whyDisabled", "it is disabled"),
    ("whyNotVisible", "it is not visible"),
    ("whyGone", "it is no longer on the page"),
    ("whyNoDriver", "Tandem could not reach the page"),
    ("whyNotEditable", "nothing can be typed into it"),
    ("whyReadOnly", "the field is read-only"),
    ("whyNotList", "it is not a list of options"),
    ("whyNoOption", "it has no option $1 (it offers $2)"),
    ("whyOptionDisabled", "the option $1 is disabled"),
    ("whyOneOption", "this list takes only one option at a time"),
    ("whyNotAKey", "$1 is not a key"),
    ("whyNotNumber", "the value is not a number"),
    ("whyTypeInstead", "it is a text field: text is typed into it"),
    ("whyNoTextToSelect", "there was no text to select"),
    ("whyNoSuchText", "it does not contain $1"),
    ("whyPointOutside", "that point is outside the window"),
    ("whyNothingScrolls", "nothing inside it scrolls"),
    ("whyPageChanged", "the page changed meanwhile, so nothing was done"),
    ("whyException", "the page's script failed ($1)"),
    ("whyCovered", "something else lies on top of it, where a person would click, so nothing was done"),
    ("whyCoveredBy", "something ($1) lies on top of it, where a person would click, so nothing was done"),
    ("whyCoveredByNamed", "$2 ($1) lies on top of it, where a person would click, so nothing was done"),
    ("whyNoReaction", "the page did not react: nothing visible changed"),
    ("whyRepeated", "the page ignored the first try, so Tandem repeated it as real input through Chrome's debugger; $1"),
    ("whyNoRepeat", "$1; repeating it as real input was not possible ($2)"),
    ("whyTextNotAppeared", "the text did not appear in time"),
    ("whySliderShows", "the slider did not take the value; it shows $1"),
    ("whySliderNotTaken", "the slider did not take the value"),
    ("whyOutsideZone", "it was dragged, but it ended outside the target"),
    ("whyClicksMissed", "only $1 of $2 clicks found it (it was gone or covered the other times)"),
    ("whyPathTooShort", "a path needs at least two points"),
    ("whyNoSuchElement", "the page's list has no element [$1]"),
    ("whyAmbiguous", "$1 elements of the page now match it equally well"),
    ("whyYouDenied", "you denied it, so it was not done"),
    ("whySiteDenied", "you did not let Tandem act on $1"),
    ("whyStopped", "the task was stopped before it acted"),
    ("whySameAgain", "it was the same action on the same page again"),
    ("whyNoLook", "this model does not take images"),
    ("whyNotAnswered", "the question was not answered"),
    ("whyNeedsElement", "it needs an element of the page"),
    ("whyDropFrame", "the drop target is in another frame, so nothing was done"),
    ("whyDropTarget", "the drop target: $1"),
    ("whyNotAllowed", "the site lists do not allow it ($1)"),
    ("whyPageUnread", "the page could not be read ($1)"),
    ("whyTabGone", "the tab is gone"),
    ("replayTookOver", "Replay diverged at step $1: $2; the model took over from there."),
    ("replayDiverged", "Replay diverged at step $1: $2."),
    ("divergedTookOver", "step $1: $2; the model took over from there"),
    ("divergedAt", "step $1: $2"),
    ("divergeOtherPage", "the page is $1, not the page the step was recorded on ($2)"),
    ("divergeNotFound", "$1 “$2” was not found"),
    ("divergeAmbiguous", "$1 “$2” now matches several elements equally well"),
    ("divergeNoElement", "the step has no element to act on"),
    ("divergeStepFailed", "acting on the step failed ($1)"),
    ("divergeActFailed", "acting on $1 “$2” failed ($3)"),
    ("workflowDeniedStep", "You denied step $1 of the workflow; nothing after it was done."),
    ("workflowDoneNoModel", "Done without the model"),
    ("taskStopped", "Stopped"),
    ("workflowScheduled", "Scheduled workflow “$1”"),
    // A scheduled run that could not start (the worker's `agent::on_workflow_alarm`).
    ("workflowNotRunBecause", "Not run: $1."),
    ("pageNotLoaded", "$1 did not load within $2 seconds (the tab showed $3)"),
    ("pageNotLoadedBlank", "$1 did not load within $2 seconds"),
    // A tool card's data-flow question, a step's tokens, Ollama's own errors (`errors`).
    ("flowToolArgs", "in the arguments of $1"),
    ("nTokens", "$1 tokens"),
    ("nTokens_one", "$1 token"),
    ("errOllamaRefused", "Ollama refused the request from the extension$1. Start it with OLLAMA_ORIGINS=chrome-extension://* (for example `OLLAMA_ORIGINS=chrome-extension://* ollama serve`)."),
    ("errOllamaModelUnknown", "$1 does not know the model \"$2\" at $3$4. Check the model name and the base URL in Settings. To download it, run `ollama pull $2`."),
    ("errOllamaLocalUnreachable", "The server at $1 could not be reached. Check that it is running and was started with OLLAMA_ORIGINS=chrome-extension://* (for example `OLLAMA_ORIGINS=chrome-extension://* ollama serve`) so it accepts requests from the extension."),
    ("errOllamaUnreachable", "Could not reach $1 at $2. Check your internet connection and the base URL in Settings. An Ollama server must be started with OLLAMA_ORIGINS=chrome-extension://*."),
    // The panel's own run-time sentences: Settings, tool cards, the Workflows view.
    ("nanoStatusOther", "Gemini Nano: $1 ($2)"),
    ("nanoNoPromptApi", "this browser has no Prompt API"),
    ("nanoReadyLimits", "ready on this device (top-K up to $1, temperature up to $2)"),
    ("nanoReady", "ready on this device"),
    ("nanoCanDownload", "the model can be downloaded (about 2 GB)"),
    ("nanoIsDownloading", "the model is downloading"),
    ("nanoCannotRun", "this device or browser cannot run it"),
    ("nanoDownloadingPercent", "downloading the model: $1%"),
    ("nanoDownloadFailed", "the download failed: $1"),
    ("startPageNotOpened", "Tandem could not open the workflow's start page: $1"),
    ("startNotAllowed", "Tandem does not act on this workflow's site ($1); change the site lists in Settings to allow it"),
    ("startNoTab", "Tandem could not open a tab for it"),
    ("startFailed", "Tandem could not start it"),
    // Settings → Tools: each provider's row and its controls (the panel's `tools`).
    ("toolsPolicyOf", "$1 from $2"),
    ("toolsExtension", "extension $1"),
    // The Workflows view's controls and their accessible names (the panel's `workflows`).
    ("wfNameLength", "A workflow's name is 1 to 100 characters."),
    ("wfNameTaken", "There is already a workflow called “$1”. Choose another name."),
    // A tool card's names and outcome (the panel's `cards`).
    ("cardArguments", "Arguments"),
    ("mcpToken", "token $1"),
    // The chat's own sentences and names (attachments, the tab memory line, the turn's
    // actions, copy, the answer's note and badge).
    ("chatAnsweredVia", "via $1"),
    ("chatAnsweredViaTokens", "via $1 · $2"),
    ("oneToken", "1 token"),
    ("badgeStopped", "Stopped"),
    ("badgeInterrupted", "Interrupted"),
    ("badgeIncomplete", "Incomplete"),
    // A planner step's result in its details.
    ("stepPlanMade", "plan made"),
    ("stepResultComplete", "the task is complete"),
    ("stepResultNotYet", "the task is not complete yet"),
    // A workflow's refusals: saving, running, parameters, schedules, checked and imported files.
    ("wfNothingToRepeat", "This task did nothing on a page that a workflow could repeat."),
    ("wfTooManyStepsTask", "This task took $1 steps; a workflow keeps at most $2."),
    ("wfRunNothing", "The run did nothing a workflow could repeat."),
    ("wfAtMostSteps", "A workflow keeps at most $1 steps."),
    ("wfNoParams", "The workflow “$1” has no parameters; “$2” is not one."),
    ("wfNoSuchParamKnown", "The workflow “$1” has no parameter “$2”; its parameters are: $3."),
    ("wfParamNameChars", "A parameter's name is letters, digits or _."),
    ("wfParamTaken", "There is already a parameter called “$1”."),
    ("wfNoSuchParam", "There is no parameter “$1”."),
    ("wfCheckNoName", "a workflow has no name, or a name longer than 100 characters"),
    ("wfCheckNamed", "the workflow “$1”: $2"),
    ("wfCheckId", "its id is missing or too long"),
    ("wfCheckSteps", "it must have 1 to $1 steps"),
    ("wfCheckParams", "it has more than $1 parameters"),
    ("wfCheckStartUrl", "its start address $1"),
    ("wfCheckParamName", "a parameter's name must be letters, digits or _"),
    ("wfCheckStepUrl", "step $1's address $2"),
    ("wfCheckNoTarget", "step $1 has no element to act on"),
    ("wfCheckAttrs", "step $1 has too many attributes"),
    ("wfCheckLink", "step $1 names a link that is not a web address"),
    ("wfCheckParamMissing", "step $1 uses a parameter it does not have"),
    ("wfTextTooLong", "a text is longer than $1 characters"),
    ("wfTextControl", "a text holds control characters"),
    ("wfNotWebUrl", "is not an http or https address"),
    ("wfImportRefused", "This file cannot be imported: $1"),
    ("wfImportRefusedCheck", "This file cannot be imported: $1."),
    ("wfImportTooBig", "it is larger than $1 KB, more than any workflow needs."),
    ("wfImportNotText", "it is not a text file."),
    ("wfImportNotJson", "it is not a workflow file (not valid JSON)."),
    ("wfImportNoWorkflows", "it holds no workflows."),
    ("wfImportCount", "it must hold 1 to $1 workflows."),
    ("wfImportForm", "workflow $1 is not in the expected form ($2)."),
    ("wfEveryHours", "Every how many hours? A whole number from 1 to $1."),
    ("wfChooseEvery", "Choose daily, weekly or every N hours."),
    ("wfOnlyDone", "Only a task that ended Done can be saved as a workflow."),
    ("wfNotRead", "Tandem could not read the saved workflows ($1)."),
    ("wfKeepsAtMostDelete", "Tandem keeps at most $1 workflows; delete one first."),
    ("wfNoSuchWorkflow", "There is no workflow called “$1”."),
    ("wfSaved", "Saved as the workflow “$1”. Rename it or its parameters under Workflows."),
    ("wfNotSaved", "Tandem could not save the workflow ($1)."),
    ("wfOnlyDoneRun", "Only a workflow run that ended Done can update its workflow."),
    ("wfDeletedMeanwhile", "That workflow was deleted meanwhile."),
    ("wfUpdated", "Updated the workflow “$1” with what this run did; its next run replays that."),
    ("wfRunName", "Name the workflow to run: /run <name> key=value …"),
    // A tool provider's approval question, its warnings and notes, its empty row.
    ("provAsks", "$1 wants to give Tandem $2: $3. Allowed tools can be called by the model in your chats; you choose per tool in Settings → Tools."),
    ("provOneTool", "1 tool"),
    ("provNTools", "$1 tools"),
    ("provCarefulOne", "Careful: $1 says it can delete or change things for good."),
    ("provCarefulMany", "Careful: $1 say they can delete or change things for good."),
    ("provNameUsed", "The name «$1» is already used by another extension ($2, $3): this request comes from a different extension ($4)."),
    ("provStandingAllowed", "one you allowed"),
    ("provStandingDenied", "one you denied"),
    ("provStandingPending", "one that also asks now"),
    ("provNoManagement", "Chrome does not let Tandem see this extension's icon or where it was installed from, so only its id tells the two apart."),
    ("provIconAlt", "Icon of the extension asking, as Chrome shows it"),
    ("provFromStore", "Chrome reports it as installed from the Chrome Web Store."),
    ("provUnpacked", "Chrome reports it as an unpacked extension (loaded by hand, not from the Chrome Web Store)."),
    ("provSideloaded", "Chrome reports it as installed by another program on this computer."),
    ("provByAdmin", "Chrome reports it as installed by your administrator."),
    ("provDenied", "Denied: it cannot give Tandem tools. Allow lets it offer them again; Remove forgets your choice, so it will ask again."),
    ("provWithdrawn", "It offers no tools right now (it withdrew them); they come back when it registers them again."),
    ("provNoArguments", "no arguments"),
    // The token meter under the chat and the Debug drawer's report.
    ("pageToolsNotAWebPage", "Page tools (WebMCP): this browser offers them, but the current tab is not a web page Tandem can look into."),
    ("pageToolsUnsupported", "This browser does not offer page tools (WebMCP), so pages cannot give Tandem tools here."),
    ("pageToolsNone", "Page tools (WebMCP): this page offers no tools."),
    ("pageToolsOffered", "This page offers $1 tools: $2. Tandem asks before each call."),
    ("pageToolsOffered_one", "This page offers $1 tool: $2. Tandem asks before each call."),
    ("workflowsTitle", "Workflows"),
    ("debugImages", "Images"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_picks_the_plural_form_the_language_calls_for() {
        let tokens = |n| Msg::new("nTokens", vec![count(n)]);
        assert_eq!(tokens(1).english(), "1 token");
        assert_eq!(tokens(0).english(), "0 tokens");
        assert_eq!(tokens(2).english(), "2 tokens");
        let grouped = Msg::new("nTokens", vec![count_shown(1234, "1,234")]);
        assert_eq!(grouped.english(), "1,234 tokens");
        // French: 0 and 1 are "one"; the catalog answers the plural question.
        let french = |key: &str| match key {
            "@plural:0" | "@plural:1" => Some("one".to_string()),
            k if k.starts_with("@plural:") => Some("other".to_string()),
            "nTokens" => Some("$1 jetons".to_string()),
            "nTokens_one" => Some("$1 jeton".to_string()),
            _ => None,
        };
        assert_eq!(tokens(0).plain(&french), "0 jeton");
        assert_eq!(tokens(5).plain(&french), "5 jetons");
        // Japanese: only "other"; the `_one` form is never read.
        let japanese = |key: &str| match key {
            k if k.starts_with("@plural:") => Some("other".to_string()),
            "nTokens" => Some("$1 トークン".to_string()),
            _ => None,
        };
        assert_eq!(tokens(1).plain(&japanese), "1 トークン");
    }

    #[test]
    fn outside_words_show_their_control_characters_instead_of_obeying_them() {
        let name = Msg::new(
            "wfImportRefused",
            vec![text("Evil\u{7}\u{1b}[2J\r\u{9b}x\u{202e}gpj")],
        );
        assert_eq!(
            name.english(),
            "This file cannot be imported: Evil␇␛[2J␍\\u{9b}x\\u{202e}gpj"
        );
        assert_eq!(
            visible("two\nlines\tand עברית\u{200f}"),
            "two\nlines\tand עברית\u{200f}"
        );
        let strong = Msg::literal_pieces(vec![Piece::Strong("a\u{0}b".into())]);
        assert_eq!(strong.render(&|_| None), vec![Piece::Strong("a␀b".into())]);
    }
    use std::collections::BTreeSet;

    fn german(key: &str) -> Option<String> {
        match key {
            "stepTyped" => Some("$1 in $2 eingegeben".into()),
            "theTextField" => Some("das Textfeld".into()),
            _ => None,
        }
    }

    #[test]
    fn a_catalog_may_reorder_the_arguments_and_nested_words_follow_it() {
        let m = Msg::new(
            "stepTyped",
            vec![em("Sergio"), nested(Mark::Strong, Msg::key("theTextField"))],
        );
        assert_eq!(
            m.render(&|_| None),
            [
                Piece::Text("Typed ".into()),
                Piece::Em("Sergio".into()),
                Piece::Text(" into ".into()),
                Piece::Strong("the text field".into()),
            ]
        );
        assert_eq!(
            m.render(&german),
            [
                Piece::Em("Sergio".into()),
                Piece::Text(" in ".into()),
                Piece::Strong("das Textfeld".into()),
                Piece::Text(" eingegeben".into()),
            ]
        );
    }

    #[test]
    fn a_key_the_catalog_lacks_reads_in_english_and_a_literal_as_it_is() {
        let m = Msg::new("stepClicked", vec![strong("ONE")]);
        assert_eq!(m.plain(&german), "Clicked ONE");
        assert_eq!(m.plain(&|_| Some(String::new())), "Clicked ONE");
        let literal = Msg::literal_pieces(vec![
            Piece::Text("Looked at ".into()),
            Piece::Strong("the page".into()),
        ]);
        assert_eq!(literal.plain(&german), "Looked at the page");
        assert_eq!(literal.render(&german).len(), 2);
        // A dollar sign that is no placeholder stays, and an argument never read as one.
        let m = Msg::new("stepTyped", vec![em("$1 $9 $$"), text("a field")]);
        assert_eq!(m.english(), "Typed $1 $9 $$ into a field");
    }

    #[test]
    fn a_message_survives_the_trip_through_json() {
        let m = Msg::new(
            "askSite",
            vec![nested(Mark::Em, Msg::literal("shop.example"))],
        );
        let json = serde_json::to_string(&m).unwrap();
        assert_eq!(crate::json::from_str::<Msg>(&json).unwrap(), m);
        let bare: Msg = crate::json::from_str(r#"{"key":"taskDone"}"#).unwrap();
        assert_eq!(bare.english(), "Done");
    }

    #[test]
    fn a_message_reads_from_todays_text_and_refuses_what_it_refused() {
        // `Msg` is read through a `Value` (`json::via_value`): today's text, by hand.
        let text = r#"{"key":"askSite","args":[{"Text":"a"},{"Strong":"b"},{"Em":"c"},
            {"Msg":["Em",{"key":"","args":[{"Text":"shop.example"}]}]},
            {"Count":{"n":3,"shown":"3"}}],"extra":1}"#;
        let want = Msg::new(
            "askSite",
            vec![
                Arg::Text("a".into()),
                Arg::Strong("b".into()),
                Arg::Em("c".into()),
                nested(Mark::Em, Msg::literal("shop.example")),
                Arg::Count {
                    n: 3,
                    shown: "3".into(),
                },
            ],
        );
        assert_eq!(crate::json::from_str::<Msg>(text).unwrap(), want);
        assert_eq!(
            crate::json::from_value::<Msg>(crate::json!({"key": "taskDone", "args": []})).unwrap(),
            Msg::key("taskDone")
        );
        for bad in [
            r#"{"args":[]}"#,
            r#"{"key":1}"#,
            r#"["taskDone"]"#,
            r#"{"key":"k","args":[{"Bold":"x"}]}"#,
        ] {
            assert!(crate::json::from_str::<Msg>(bad).is_err(), "{bad}");
        }
        let e = crate::json::from_str::<Msg>(r#"{"args":[]}"#).unwrap_err();
        assert!(e.to_string().starts_with("missing field `key`"), "{e}");
    }

    /// A catalog's messages with Chrome's named placeholders (`$arg1$`, declared with the
    /// content `$1`) put back as the numbers they stand for: the template `getMessage` gives.
    /// Panics on a name used but not declared, which Chrome refuses to load.
    fn locale(lang: &str) -> std::collections::BTreeMap<String, String> {
        let path = format!(
            "{}/../../extension/_locales/{lang}/messages.json",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).unwrap();
        let all: serde_json::Value = serde_json::from_str(&text).unwrap();
        let mut out = std::collections::BTreeMap::new();
        for (key, entry) in all.as_object().unwrap() {
            let mut message = entry["message"].as_str().unwrap().to_string();
            let parts: Vec<String> = message.split('$').map(str::to_string).collect();
            for name in parts.iter().skip(1).take(parts.len().saturating_sub(2)) {
                if name.is_empty()
                    || !name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '@')
                {
                    continue;
                }
                let content = entry["placeholders"][name.to_lowercase()]["content"].as_str();
                let Some(content) = content else {
                    panic!("{lang} {key}: ${name}$ is not declared, Chrome would not load");
                };
                message = message.replacen(&format!("${name}$"), content, 1);
            }
            out.insert(key.clone(), message);
        }
        out
    }

    fn placeholders(template: &str) -> BTreeSet<char> {
        template
            .split('$')
            .skip(1)
            .filter_map(|s| s.chars().next().filter(char::is_ascii_digit))
            .collect()
    }

    #[test]
    fn every_catalog_has_every_sentence_with_the_same_placeholders() {
        // Words that are the same in a language as in English.
        let same = [
            "iban",
            "taskStatusReason",
            "stepPlan",
            "nTenthSeconds",
            "listMore",
            "nTokens",
            "nanoStatusOther",
            "toolsExtension",
            "toolsPolicyOf",
            "cardArguments",
            "mcpToken",
            "oneToken",
            "nTokens_one",
            "workflowsTitle",
            "chatAnsweredVia",
            "chatAnsweredViaTokens",
            "debugImages",
        ];
        let en = locale("en");
        let mut keys = BTreeSet::new();
        for (key, english) in entries(CATALOG).chain(entries(panel_words::PANEL_CATALOG)) {
            assert!(keys.insert(key), "{key} twice");
            assert!(
                !key.contains([KEY_END, ENTRY_END]) && !english.contains([KEY_END, ENTRY_END]),
                "{key}: a catalog's separators in an entry"
            );
            assert_eq!(en.get(key).map(String::as_str), Some(english), "en {key}");
        }
        for lang in ["de", "es", "fr", "ja", "zh_CN"] {
            let catalog = locale(lang);
            for (key, english) in entries(CATALOG).chain(entries(panel_words::PANEL_CATALOG)) {
                let Some(t) = catalog.get(key) else {
                    panic!("{lang} lacks {key}");
                };
                assert_eq!(placeholders(t), placeholders(english), "{lang} {key}: {t}");
                assert!(
                    t != english || same.contains(&key),
                    "{lang} {key} is not translated"
                );
            }
        }
    }

    /// Every `.rs` file under `dir`, with its text.
    fn sources(dir: &std::path::Path, out: &mut Vec<(std::path::PathBuf, String)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                sources(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                out.push((path, text));
            }
        }
    }

    /// The worker's module has only [`CATALOG`] (issue #46), so every key a crate other than
    /// the side panel names must be there, not only in the panel's table: else the worker would
    /// put that sentence into English (prompts, logs, notes) as nothing. Keys are named as
    /// literals (`Msg::key("…")`, `match … => "…"`); a plural form goes with its key.
    #[test]
    fn every_key_built_outside_the_panel_is_in_the_worker_catalog() {
        let crates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut files = Vec::new();
        sources(&crates, &mut files);
        let scanned: Vec<(std::path::PathBuf, String)> = files
            .into_iter()
            .filter(|(path, _)| {
                !path.components().any(|c| c.as_os_str() == "side-panel")
                    && !path.ends_with("panel_words.rs")
            })
            .map(|(path, text)| {
                // This file's own tests name panel keys (the `same` list).
                let text = if path.ends_with("core/src/i18n.rs") {
                    text.split("#[cfg(test)]").next().unwrap_or("").to_string()
                } else {
                    text
                };
                (path, text)
            })
            .collect();
        assert!(scanned.len() > 100, "{} sources found", scanned.len());
        for (key, _) in entries(panel_words::PANEL_CATALOG) {
            let quoted = format!("\"{key}\"");
            for (path, text) in &scanned {
                assert!(
                    !text.contains(&quoted),
                    "{} names {key}, which only the panel's table has: move it to CATALOG",
                    path.display()
                );
            }
            let base = key.strip_suffix("_one").unwrap_or(key);
            assert!(
                english(base).is_none() && english(&format!("{base}_one")).is_none(),
                "{key} is in the panel's table but its other form is in the worker's"
            );
        }
    }
}
