//! A timeline step as a person reads it: "Clicked **ONE**", "Typed *Sergio* into **the text
//! field**", "Finished: …", with what a developer wants (the action as the model wrote it, how
//! it went, which model answered, the tokens) kept apart as [`StepLine::details`], which the
//! panel puts one click away.
//!
//! The worker records a step as the action's JSON, the element as the element list named it
//! (`[8] link "Blue backpack"`) and the result sentence ([`super::task::StepRecord`]); this
//! module reads those back, so nothing about what is stored changes and a task saved before
//! reads the same. Each sentence is a catalog message ([`crate::i18n`]): the panel puts it
//! into the person's language, English where a key has no translation yet. A new action's
//! line is `say("stepX", args)` with `stepX` added to the catalogs, or, until then,
//! `Sentence::default().text("…").into()`, shown in English in every language.

use super::actions::{Action, DragTarget, ScrollDirection, ScrollTarget, SelectMode};
use super::task::{StepKind, StepRecord};
use super::why::{reason, role_word};
use crate::fence::{FENCE_CLOSE, FENCE_OPEN};
pub use crate::i18n::Piece;
use crate::i18n::{count, em, nested, strong, text, Arg, Mark, Msg};

/// The provider column of a step a workflow's replay took (`agent/replay.rs`).
pub const REPLAYED: &str = "replayed";

/// Longest piece of page or model text put in a step's sentence; the whole is in the details.
const MAX_SHOWN: usize = 140;

/// The result of a step whose password the user typed in the panel (`agent/act.rs`).
const SECRET_TYPED: &str = "typed (the value you entered in the panel)";

/// A step's sentence (a catalog message, see [`crate::i18n`]) and its details (each a line;
/// empty for a note the user wrote, which already is a sentence of theirs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepLine {
    pub message: Msg,
    /// Each a line: the action and result as recorded (literal), how the model answered
    /// (a catalog message).
    pub details: Vec<Msg>,
}

impl StepLine {
    /// The details in English.
    pub fn details_english(&self) -> Vec<String> {
        self.details.iter().map(Msg::english).collect()
    }

    /// The sentence in English, as pieces with their emphasis.
    pub fn pieces(&self) -> Vec<Piece> {
        self.message.render(&|_| None)
    }

    /// The sentence as plain English text (`**`/`*` not added).
    pub fn plain(&self) -> String {
        self.message.english()
    }

    /// The sentence with Markdown-style marks (`Clicked **ONE**`), for tests and logs.
    pub fn marked(&self) -> String {
        self.pieces()
            .iter()
            .map(|p| match p {
                Piece::Text(t) => t.clone(),
                Piece::Strong(t) => format!("**{t}**"),
                Piece::Em(t) => format!("*{t}*"),
            })
            .collect()
    }
}

/// Builds a sentence that has no catalog key yet, in English, pieces in order: `text` plain,
/// `strong` / `em` emphasised. A step line added this way reads in English in every language
/// until its key joins the catalog (`say`).
#[derive(Default)]
struct Sentence(Vec<Piece>);

#[allow(dead_code)] // Kept for sentences not yet in the catalog.
impl Sentence {
    fn text(mut self, t: impl Into<String>) -> Self {
        self.0.push(Piece::Text(t.into()));
        self
    }
    fn strong(mut self, t: impl Into<String>) -> Self {
        self.0.push(Piece::Strong(t.into()));
        self
    }
    fn em(mut self, t: &str) -> Self {
        self.0.push(Piece::Em(clip(t)));
        self
    }
}

impl From<Sentence> for Msg {
    fn from(s: Sentence) -> Msg {
        Msg::literal_pieces(s.0)
    }
}

/// The catalog's sentence `key` with `args`.
fn say(key: &str, args: Vec<Arg>) -> Msg {
    Msg::new(key, args)
}

/// What was typed, chosen or asked, cut to [`MAX_SHOWN`] and emphasised.
fn quoted(t: &str) -> Arg {
    em(clip(t))
}

/// The line a person reads for `step`.
pub fn step_line(step: &StepRecord) -> StepLine {
    let cost = cost(step);
    match step.kind {
        // A replay that left its saved steps says so as a line of its own (`agent/replay.rs`);
        // any other is a note the person wrote, shown as they wrote it.
        StepKind::User if step.provider.as_deref() == Some(REPLAYED) => StepLine {
            message: reason(&readable(&step.action)),
            details: Vec::new(),
        },
        StepKind::User => StepLine {
            message: Msg::literal(step.action.clone()),
            details: Vec::new(),
        },
        StepKind::Switch => StepLine {
            message: Msg::literal(format!("{}: {}", step.action, step.result)),
            details: cost.into_iter().collect(),
        },
        StepKind::Plan => {
            let plan = step.action.trim();
            // The planner also checks a `done` ("the task is (not) complete yet"): that line
            // says what it found; the plan it restates is in the details.
            let checked = step.result != "plan made";
            let message = if checked {
                // The worker's two findings (`agent/run.rs`), else what it recorded.
                match step.result.as_str() {
                    "the task is complete" => Msg::key("stepCheckedComplete"),
                    "the task is not complete yet" => Msg::key("stepCheckedNotYet"),
                    other => say("stepChecked", vec![text(other)]),
                }
            } else {
                say("stepPlan", vec![text(readable(plan))])
            };
            let mut details = Vec::new();
            if checked && !plan.is_empty() {
                details.push(say("stepPlan", vec![text(plan)]));
            }
            details.push(join_cost(
                nested(Mark::Plain, plan_result(&step.result)),
                cost,
            ));
            details.extend(output_detail(step));
            StepLine { message, details }
        }
        StepKind::Action => action_line(step, cost),
    }
}

/// " · Gemini Nano · 120 tokens", when known (the provider's name as it is, the tokens in the
/// person's words).
fn cost(step: &StepRecord) -> Option<Msg> {
    let mut args = Vec::new();
    if let Some(p) = &step.provider {
        args.push(text(format!(" · {p}")));
    }
    if let Some(t) = step.tokens {
        args.push(text(" · "));
        args.push(nested(
            Mark::Plain,
            Msg::new("nTokens", vec![count(u64::from(t))]),
        ));
    }
    (!args.is_empty()).then_some(Msg {
        key: String::new(),
        args,
    })
}

/// How the cloud was asked for the step and how it answered (json_schema, a forced tool, a
/// native tool call…), as a sentence: `None` on Nano and for lines no model answered.
pub fn output_detail(step: &StepRecord) -> Option<Msg> {
    step.output.as_deref().map(crate::structured::mode_message)
}

/// `first` (words as recorded) followed by the step's cost.
/// A planner step's result as the worker records it (`agent/run.rs`), in the person's words.
fn plan_result(result: &str) -> Msg {
    match result {
        "plan made" => Msg::key("stepPlanMade"),
        "the task is complete" => Msg::key("stepResultComplete"),
        "the task is not complete yet" => Msg::key("stepResultNotYet"),
        other => Msg::literal(other),
    }
}

fn join_cost(first: Arg, cost: Option<Msg>) -> Msg {
    let mut args = vec![first];
    args.extend(cost.map(|c| nested(Mark::Plain, c)));
    Msg {
        key: String::new(),
        args,
    }
}

fn action_line(step: &StepRecord, cost: Option<Msg>) -> StepLine {
    let target = step.target.as_deref().map(Target::read);
    let result = readable(&step.result);
    let mark = if step.ok { "✓" } else { "✗" };
    // What the model asked for, as it asked, and how it went: the developer's view.
    let on = step
        .target
        .as_deref()
        .map(|t| format!(" on {t}"))
        .unwrap_or_default();
    let mut details: Vec<Msg> = vec![
        format!("{}{on}", step.action).into(),
        // Page words in a result are fenced for the model; a person reads them plain.
        join_cost(
            text(format!("{mark} {}", crate::fence::for_person(&step.result))),
            cost,
        ),
    ];
    details.extend(output_detail(step));
    let Ok(action) = crate::json::from_str::<serde_json::Value>(&step.action)
        .map_err(|_| ())
        .and_then(|v| Action::from_json(&v).map_err(|_| ()))
    else {
        // "(no valid action)": the model's answer could not be read twice.
        return StepLine {
            message: say("stepNotAStep", vec![text(result)]),
            details,
        };
    };
    let message = if step.ok {
        done_sentence(&action, target.as_ref(), &step.result, &result)
    } else {
        failed_sentence(&action, target.as_ref(), &result)
    };
    StepLine { message, details }
}

/// The element acted on, read back from `[8] link "Blue backpack"`.
struct Target {
    role: String,
    name: String,
}

impl Target {
    fn read(label: &str) -> Target {
        // `[id] role "name"`: the id is the list's, not the person's.
        let rest = label
            .strip_prefix('[')
            .and_then(|r| r.split_once("] "))
            .map(|(_, r)| r)
            .unwrap_or(label);
        let (role, name) = match (rest.find('"'), rest.rfind('"')) {
            (Some(a), Some(b)) if b > a => (rest[..a].trim(), rest[a + 1..b].trim()),
            _ => (rest.trim(), ""),
        };
        Target {
            role: role.to_string(),
            name: name.to_string(),
        }
    }

    /// Its name, or "the text field" when it has none.
    fn called(&self) -> Msg {
        if self.name.is_empty() {
            role_word(&self.role)
        } else {
            Msg::literal(clip(&self.name))
        }
    }
}

/// The control acted on, emphasised: its name, else what kind of control it is, else
/// `fallback` (a catalog key: "an element").
fn named(target: Option<&Target>, fallback: &str) -> Arg {
    let called = target
        .map(Target::called)
        .unwrap_or_else(|| Msg::key(fallback));
    nested(Mark::Strong, called)
}

fn done_sentence(action: &Action, target: Option<&Target>, raw: &str, result: &str) -> Msg {
    match action {
        Action::Click { .. } => say("stepClicked", vec![named(target, "anElement")]),
        Action::Type {
            text: typed,
            submit,
            ..
        } => {
            let field = named(target, "aField");
            match (raw.starts_with(SECRET_TYPED), submit) {
                (true, false) => say("stepTypedPassword", vec![field]),
                (true, true) => say("stepTypedPasswordSent", vec![field]),
                (false, false) => say("stepTyped", vec![quoted(typed), field]),
                (false, true) => say("stepTypedSent", vec![quoted(typed), field]),
            }
        }
        Action::SelectOption { option, mode, .. } => say(
            match mode {
                SelectMode::Replace => "stepChose",
                SelectMode::Add => "stepAddedOption",
                SelectMode::Remove => "stepRemovedOption",
            },
            vec![quoted(option), named(target, "aList")],
        ),
        Action::Press { key, element } => match element {
            Some(_) => say(
                "stepPressedOn",
                vec![quoted(key), named(target, "anElement")],
            ),
            None => say("stepPressed", vec![quoted(key)]),
        },
        Action::Hover { .. } => say("stepPointed", vec![named(target, "anElement")]),
        Action::ContextClick { .. } => say("stepRightClicked", vec![named(target, "anElement")]),
        Action::Drag { to, .. } => match to {
            DragTarget::Element(_) => say("stepDraggedOnto", vec![named(target, "anElement")]),
            DragTarget::Offset { dx, dy } => say(
                "stepDraggedBy",
                vec![
                    named(target, "anElement"),
                    text(dx.to_string()),
                    text(dy.to_string()),
                ],
            ),
            DragTarget::Path(path) => say(
                "stepDraggedAlong",
                vec![named(target, "anElement"), text(path.len().to_string())],
            ),
        },
        Action::SetValue { value, .. } => {
            say("stepSet", vec![named(target, "aSlider"), quoted(value)])
        }
        // Without an element, the passage was found in the page's text.
        Action::SelectText { text: t, element } => say(
            "stepSelectedText",
            vec![
                quoted(t),
                named(
                    target,
                    if element.is_some() {
                        "anElement"
                    } else {
                        "thePageText"
                    },
                ),
            ],
        ),
        Action::ClickAt { .. } | Action::ClickPoint { .. } => {
            say("stepClickedPoint", vec![named(target, "anElement")])
        }
        Action::Look => Msg::key("stepLooked"),
        Action::Scroll {
            target: ScrollTarget::Page(d),
        } => Msg::key(match d {
            ScrollDirection::Up => "stepScrolledUp",
            ScrollDirection::Down => "stepScrolledDown",
            ScrollDirection::End => "stepScrolledEnd",
        }),
        Action::Scroll {
            target: ScrollTarget::Inside(_, d),
        } => say(
            match d {
                ScrollDirection::Up => "stepScrolledUpIn",
                ScrollDirection::Down => "stepScrolledDownIn",
                ScrollDirection::End => "stepScrolledEndOf",
            },
            vec![named(target, "anElement")],
        ),
        Action::Scroll { .. } => say("stepScrolledTo", vec![named(target, "anElement")]),
        Action::Navigate { url } => say("stepWent", vec![quoted(&address(url))]),
        Action::Back => Msg::key("stepWentBack"),
        Action::OpenTab { url } => say("stepOpenedTab", vec![quoted(&address(url))]),
        Action::SwitchTab { tab } => say("stepSwitchedTab", vec![text(tab.to_string())]),
        Action::CloseTab => Msg::key("stepClosedTab"),
        Action::ExtractText { element: Some(_) } => {
            say("stepRead", vec![named(target, "anElement")])
        }
        Action::ExtractText { element: None } => Msg::key("stepReadPage"),
        Action::Wait { text: Some(t), .. } => say("stepWaitedFor", vec![quoted(t)]),
        Action::Wait { ms, .. } => say("stepWaited", vec![nested(Mark::Plain, seconds(*ms))]),
        Action::AskUser { question } => match result.split_once("the user answered: ") {
            Some((_, answer)) => say("stepAskedAnswered", vec![quoted(question), quoted(answer)]),
            None => say("stepAsked", vec![quoted(question)]),
        },
        Action::Done { success, answer } => {
            let answer = answer.as_deref().map(readable).unwrap_or_default();
            match (success, answer.is_empty()) {
                (true, true) => Msg::key("stepFinished"),
                (true, false) => say("stepFinishedWith", vec![text(clip(&answer))]),
                (false, true) => Msg::key("stepGaveUp"),
                (false, false) => say("stepGaveUpWith", vec![text(clip(&answer))]),
            }
        }
        Action::Tool { name, .. } => say("stepUsedTool", vec![strong(name.clone())]),
        Action::ClickTimes { times, .. } => say(
            "stepClickedTimes",
            vec![named(target, "anElement"), text(times.to_string())],
        ),
    }
}

fn failed_sentence(action: &Action, target: Option<&Target>, why: &str) -> Msg {
    // The result is the English the model read; a person reads it in their language when it
    // is one of the sentences core and the driver write.
    let said = reason(why);
    let why = if said.is_literal() {
        text(clip(why))
    } else {
        nested(Mark::Plain, said)
    };
    match action {
        Action::Click { .. } => say("stepNotClick", vec![named(target, "theElement"), why]),
        Action::Type { text: typed, .. } => say(
            "stepNotType",
            vec![quoted(typed), named(target, "theField"), why],
        ),
        Action::SelectOption { option, .. } => say(
            "stepNotChoose",
            vec![quoted(option), named(target, "theList"), why],
        ),
        Action::Press { key, .. } => say("stepNotPress", vec![quoted(key), why]),
        Action::Hover { .. } => say("stepNotPoint", vec![named(target, "theElement"), why]),
        Action::ContextClick { .. } => {
            say("stepNotRightClick", vec![named(target, "theElement"), why])
        }
        Action::Drag { .. } => say("stepNotDrag", vec![named(target, "theElement"), why]),
        Action::SetValue { value, .. } => say(
            "stepNotSet",
            vec![named(target, "theSlider"), quoted(value), why],
        ),
        Action::SelectText { text: t, .. } => say("stepNotSelect", vec![quoted(t), why]),
        Action::ClickAt { .. } | Action::ClickPoint { .. } => {
            say("stepNotClickPoint", vec![named(target, "theElement"), why])
        }
        Action::Look => say("stepNotLook", vec![why]),
        Action::Scroll {
            target: ScrollTarget::Page(_),
        } => say("stepNotScroll", vec![why]),
        Action::Scroll {
            target: ScrollTarget::Inside(..),
        } => say("stepNotScrollIn", vec![named(target, "theElement"), why]),
        Action::Scroll { .. } => say("stepNotScrollTo", vec![named(target, "theElement"), why]),
        Action::Navigate { url } => say("stepNotGo", vec![quoted(&address(url)), why]),
        Action::Back => say("stepNotBack", vec![why]),
        Action::OpenTab { url } => say("stepNotOpen", vec![quoted(&address(url)), why]),
        Action::SwitchTab { tab } => say("stepNotSwitch", vec![text(tab.to_string()), why]),
        Action::CloseTab => say("stepNotClose", vec![why]),
        Action::ExtractText { element: Some(_) } => {
            say("stepNotRead", vec![named(target, "theElement"), why])
        }
        Action::ExtractText { element: None } => say("stepNotReadPage", vec![why]),
        Action::Wait { text: Some(t), .. } => say("stepNotSee", vec![quoted(t), why]),
        Action::Wait { .. } => say("stepNotWait", vec![why]),
        Action::AskUser { question } => say("stepNotAnswer", vec![quoted(question), why]),
        Action::Done { .. } => say("stepNotFinish", vec![why]),
        Action::Tool { name, .. } => say("stepNotTool", vec![strong(name.clone()), why]),
        Action::ClickTimes { .. } => say("stepNotClick", vec![named(target, "theElement"), why]),
    }
}

/// An address without `https://`, as a person reads it.
fn address(url: &str) -> String {
    let bare = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
        .unwrap_or(url);
    bare.strip_suffix('/').unwrap_or(bare).to_string()
}

fn seconds(ms: u32) -> Msg {
    let tenths = (ms + 50) / 100;
    match (tenths / 10, tenths % 10) {
        (1, 0) => Msg::key("oneSecond"),
        (s, 0) => Msg::new("nSeconds", vec![count(u64::from(s))]),
        (s, t) => Msg::new(
            "nTenthSeconds",
            vec![text(s.to_string()), text(t.to_string())],
        ),
    }
}

/// `text` on one line, with the fence that frames page text for the model shown as quotes
/// (`covered by a dialog “Cookie consent”`).
fn readable(text: &str) -> String {
    let mut marked = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('⟦') {
        marked.push_str(&rest[..at]);
        let from = &rest[at..];
        if let Some(after) = from.strip_prefix(FENCE_CLOSE) {
            marked.push('\u{2}');
            rest = after;
        } else if from.starts_with(FENCE_OPEN) {
            marked.push('\u{1}');
            rest = from
                .find('⟧')
                .map(|end| &from[end + '⟧'.len_utf8()..])
                .unwrap_or("");
        } else {
            marked.push('⟦');
            rest = &from['⟦'.len_utf8()..];
        }
    }
    marked.push_str(rest);
    let one_line = marked.split_whitespace().collect::<Vec<_>>().join(" ");
    one_line
        .replace("\u{1} ", "\u{1}")
        .replace(" \u{2}", "\u{2}")
        .replace('\u{1}', "“")
        .replace('\u{2}', "”")
}

/// At most [`MAX_SHOWN`] characters, cut with "…".
fn clip(text: &str) -> String {
    let text = text.trim();
    if text.chars().count() <= MAX_SHOWN {
        return text.to_string();
    }
    let mut out: String = text.chars().take(MAX_SHOWN - 1).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(action: &str, target: Option<&str>, ok: bool, result: &str) -> StepRecord {
        StepRecord {
            target: target.map(Into::into),
            provider: Some("OpenAI-compatible".into()),
            tokens: Some(1072),
            ..StepRecord::new(StepKind::Action, action, result, ok)
        }
    }

    #[track_caller]
    fn check(record: StepRecord, expected: &str) {
        let line = step_line(&record);
        assert_eq!(line.marked(), expected);
        assert!(
            !line.plain().contains("{\""),
            "no JSON in {:?}",
            line.plain()
        );
        assert!(
            !line.plain().contains('⟦'),
            "no fence in {:?}",
            line.plain()
        );
    }

    #[test]
    fn every_action_kind_reads_as_a_sentence() {
        let ok = |a: &str, t: Option<&str>, r: &str| step(a, t, true, r);
        check(
            ok(
                r#"{"action":"click","element":1}"#,
                Some(r#"[1] button "ONE""#),
                "clicked",
            ),
            "Clicked **ONE**",
        );
        check(
            ok(
                r#"{"action":"type","element":3,"text":"Sergio","clear":true,"submit":false}"#,
                Some(r#"[3] textbox """#),
                "typed",
            ),
            "Typed *Sergio* into **the text field**",
        );
        check(
            ok(
                r#"{"action":"type","element":3,"text":"backpack","clear":true,"submit":true}"#,
                Some(r#"[3] searchbox "Search""#),
                "typed; a new page is loading",
            ),
            "Typed *backpack* into **Search** and sent the form",
        );
        check(
            ok(
                r#"{"action":"type","element":4,"text":"x","clear":true,"submit":false}"#,
                Some(r#"[4] textbox "Password""#),
                SECRET_TYPED,
            ),
            "Typed the password you entered into **Password**",
        );
        check(
            ok(
                r#"{"action":"select_option","element":2,"option":"M"}"#,
                Some(r#"[2] combobox "Size""#),
                "selected",
            ),
            "Chose *M* in **Size**",
        );
        check(
            ok(
                r#"{"action":"scroll","direction":"down"}"#,
                None,
                "scrolled",
            ),
            "Scrolled down",
        );
        check(
            ok(
                r#"{"action":"scroll","element":9}"#,
                Some(r#"[9] region "Reviews""#),
                "scrolled",
            ),
            "Scrolled to **Reviews**",
        );
        check(
            ok(
                r#"{"action":"navigate","url":"https://shop.example/p/1"}"#,
                None,
                "went",
            ),
            "Went to *shop.example/p/1*",
        );
        check(
            ok(r#"{"action":"back"}"#, None, "went back"),
            "Went back a page",
        );
        check(
            ok(
                r#"{"action":"open_tab","url":"https://shop.example/"}"#,
                None,
                "opened",
            ),
            "Opened *shop.example* in a new tab",
        );
        check(
            ok(r#"{"action":"switch_tab","tab":1}"#, None, "switched"),
            "Switched to tab 1",
        );
        check(
            ok(r#"{"action":"close_tab"}"#, None, "closed the tab"),
            "Closed the tab",
        );
        check(
            ok(
                r#"{"action":"extract_text"}"#,
                None,
                "⟦untrusted data: page⟧\nhello\n⟦/untrusted data⟧",
            ),
            "Read the page",
        );
        check(
            ok(
                r#"{"action":"extract_text","element":5}"#,
                Some(r#"[5] article "Hours""#),
                "read",
            ),
            "Read **Hours**",
        );
        check(
            ok(r#"{"action":"wait","ms":1500}"#, None, "waited"),
            "Waited 1.5 seconds",
        );
        check(
            ok(
                r#"{"action":"ask_user","question":"Which colour?"}"#,
                None,
                "you asked “Which colour?”; the user answered: green",
            ),
            "Asked you *Which colour?*; you answered *green*",
        );
        check(
            ok(
                r#"{"action":"done","success":true,"answer":"Added the blue backpack."}"#,
                None,
                "the navigator reports the task done",
            ),
            "Finished: Added the blue backpack.",
        );
        check(
            ok(
                r#"{"action":"done","success":false,"answer":"The shop is closed."}"#,
                None,
                "the navigator reports the task done",
            ),
            "Gave up: The shop is closed.",
        );
        check(
            ok(
                r#"{"action":"tool","tool":"tabs__open","arguments":{"url":"https://a.example"}}"#,
                None,
                "answered",
            ),
            "Used the tool **tabs__open**",
        );
    }

    #[test]
    fn a_failed_step_says_why_without_the_fence() {
        check(
            step(
                r#"{"action":"click","element":7}"#,
                Some(r#"[7] button "Add to cart""#),
                false,
                "covered by a dialog ⟦untrusted data: what covers it⟧\nCookies\n⟦/untrusted data⟧\nclose it first",
            ),
            "Could not click **Add to cart**: covered by a dialog “Cookies” close it first",
        );
        check(
            step(
                "(no valid action)",
                None,
                false,
                "The reply contains no JSON object.",
            ),
            "The model's answer was not a step Tandem can take: The reply contains no JSON object.",
        );
    }

    #[test]
    fn a_failed_steps_reason_is_a_catalog_sentence_when_core_or_the_driver_wrote_it() {
        let failed = |result: &str| {
            step_line(&step(
                r#"{"action":"click","element":3}"#,
                Some(r#"[3] button "Pay""#),
                false,
                result,
            ))
            .message
        };
        let line = failed("disabled: the element is disabled");
        assert_eq!(line.english(), "Could not click Pay: it is disabled");
        let german = |key: &str| match key {
            "stepNotClick" => Some("$1 konnte nicht angeklickt werden: $2".to_string()),
            "whyDisabled" => Some("es ist deaktiviert".to_string()),
            _ => None,
        };
        assert_eq!(
            line.plain(&german),
            "Pay konnte nicht angeklickt werden: es ist deaktiviert"
        );
        // What `report` writes for a covered element, fence and all.
        let covered: super::super::ActResult = crate::json::from_str(
            r#"{"ok":false,"error":"covered","message":"m","by":{"tag":"div","role":"dialog","name":"Cookies"}}"#,
        )
        .unwrap();
        let result = covered
            .sentence(&super::super::DriverCommand::Click)
            .unwrap_err();
        let line = failed(&result);
        assert_eq!(
            line.english(),
            "Could not click Pay: Cookies (dialog) lies on top of it, where a person would click, so nothing was done"
        );
        // A sentence from elsewhere stays as it was.
        assert_eq!(
            failed("the site refused: 403").english(),
            "Could not click Pay: the site refused: 403"
        );
    }

    #[test]
    fn a_replays_divergence_is_a_catalog_sentence_and_a_persons_note_stays_theirs() {
        let note = |action: &str, provider: Option<&str>| {
            let mut s = step(action, None, false, "");
            s.kind = StepKind::User;
            s.provider = provider.map(Into::into);
            step_line(&s).message
        };
        let diverged = note(
            "Replay diverged at step 2: acting on the button “Pay” failed (disabled: the element is disabled); the model took over from there.",
            Some(REPLAYED),
        );
        assert_eq!(diverged.key, "replayTookOver");
        assert_eq!(
            diverged.english(),
            "Replay diverged at step 2: acting on the button “Pay” failed (it is disabled); the model took over from there."
        );
        let waits = note(
            "Replay diverged at step 1: the page is shop.test/cart, not the page the step was recorded on (shop.test/basket).",
            Some(REPLAYED),
        );
        assert_eq!(waits.key, "replayDiverged");
        let theirs = "Replay diverged at step 2: a note I wrote.";
        assert!(note(theirs, None).is_literal());
    }

    #[test]
    fn the_details_keep_the_action_as_written_and_who_answered() {
        let line = step_line(&step(
            r#"{"action":"click","element":1}"#,
            Some(r#"[1] button "ONE""#),
            true,
            "clicked; a new page is loading",
        ));
        assert_eq!(
            line.details_english(),
            [
                r#"{"action":"click","element":1} on [1] button "ONE""#,
                "✓ clicked; a new page is loading · OpenAI-compatible · 1072 tokens",
            ]
        );
    }

    #[test]
    fn the_details_say_how_the_step_was_asked_and_answered() {
        let mut clicked = step(r#"{"action":"click","element":1}"#, None, true, "clicked");
        clicked.output = Some("json_schema + tools".into());
        assert_eq!(
            step_line(&clicked).details_english().last().map(String::as_str),
            Some("Output mode: json_schema (the provider held the reply to the step's JSON Schema), with the task's tools offered in the tools field.")
        );
        let mut plan = step("1. search", None, true, "plan made");
        plan.kind = StepKind::Plan;
        plan.output = Some("forced tool".into());
        assert_eq!(
            step_line(&plan).details_english().last().map(String::as_str),
            Some("Output mode: forced tool (the reply was the input of a tool call the model had to make).")
        );
        clicked.output = None;
        assert_eq!(output_detail(&clicked), None, "Nano: nothing to say");
    }

    #[test]
    fn plans_notes_and_switches() {
        let mut plan = step("1. search 2. add", None, true, "plan made");
        plan.kind = StepKind::Plan;
        let line = step_line(&plan);
        assert_eq!(line.marked(), "Plan: 1. search 2. add");
        assert_eq!(
            line.details_english(),
            ["plan made · OpenAI-compatible · 1072 tokens"]
        );
        // Said in the person's words: the result is the catalog's, not the recorded English.
        let first = line.details[0].args.first();
        assert!(
            matches!(first, Some(Arg::Msg(_, m)) if m.key == "stepPlanMade"),
            "{first:?}"
        );
        let mut note = step("Your note: size M", None, true, "the agent reads it");
        note.kind = StepKind::User;
        note.provider = None;
        let line = step_line(&note);
        assert_eq!(line.marked(), "Your note: size M");
        assert!(line.details.is_empty());
    }
}
