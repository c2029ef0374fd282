//! Workflows: a task that ended Done, kept as the steps that took effect, so it can run again
//! without the model ("replay"), with other values (parameters), and hand over to the model
//! only where the page no longer matches (fallback).
//!
//! While any task runs, the loop records each step that took effect ([`RecordedStep`]: the
//! page's URL, what was done, and the element's identity as its [`Signature`] saw it).
//! "Save as workflow" turns those into a [`Workflow`] ([`Workflow::from_task`]): values typed
//! or chosen that came from the task's text become named [`Param`]s, a password becomes
//! [`Value::Secret`] (asked for on every run, never stored), and the URLs become patterns.
//! A run ([`Replay`]) re-finds each element with [`locate`] (role + name, nearby text,
//! position among look-alikes) and refuses to guess: an element not found unambiguously, or
//! a page that is not the one the step was recorded on, is a [`Divergence`], which the
//! worker hands to the model with [`Replay::hint`].
//!
//! Workflows are the user's data, kept in `chrome.storage.local` under [`WORKFLOWS_KEY`]:
//! target names and the user's own values, no other page text, no secrets. An imported file
//! is read by [`import`], which refuses anything malformed, oversized or hostile with a
//! sentence.

use serde::{Deserialize, Serialize};

use crate::case::Lowercase;
use crate::i18n::{nested, text, Mark, Msg};

use super::actions::{Action, SelectMode};
use super::element_map::Entry;
use super::signature::{self, Match, Place, Signature, Text};

mod name;
mod schedule;
#[cfg(test)]
mod tests;

pub use name::{chosen_name, propose_name, same_name, MAX_NAME};
pub use schedule::{alarm_name, workflow_of_alarm, Every, Schedule, Shown, SHOWN_KEY};

/// Where the workflows live in `chrome.storage.local`.
pub const WORKFLOWS_KEY: &str = "workflows";
/// The largest file "Import" reads.
pub const MAX_IMPORT_BYTES: usize = 512 * 1024;
/// At most this many workflows, steps per workflow and parameters per workflow.
pub const MAX_WORKFLOWS: usize = 200;
pub const MAX_STEPS: usize = 60;
pub const MAX_PARAMS: usize = 20;
/// The longest text kept in any field (a name, a value, a URL).
pub const MAX_TEXT: usize = 2000;
/// Nearby text kept per target: enough to tell look-alikes apart, not the page.
const CONTEXT_CHARS: usize = 80;

/// What one step does. Externally tagged, as every enum Tandem reads back (`json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StepAction {
    Navigate {
        url: String,
    },
    Click,
    Type {
        value: Value,
        submit: bool,
    },
    Select {
        value: Value,
        /// Added to or removed from a multi-select's selection; absent: the choice.
        #[serde(default, skip_serializing_if = "SelectMode::is_replace")]
        mode: SelectMode,
    },
}

/// A value typed or chosen.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Value {
    /// The same every run.
    Fixed(String),
    /// The workflow's parameter of that name.
    Param(String),
    /// A password or other secret: asked for in the panel on every run, never stored.
    Secret,
}

/// How to find a step's element again: its signature without what a re-render changes
/// (handles, ids). Texts are stored normalised (lower case, collapsed spaces).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Target {
    pub role: String,
    pub tag: String,
    /// The accessible name; a parameter's value in it is written `{name}`.
    pub name: String,
    #[serde(default)]
    pub text: String,
    /// Nearby text or label (cut to a few words).
    #[serde(default)]
    pub context: String,
    /// Key attributes but `id` (pages generate ids anew on each render).
    #[serde(default)]
    pub attrs: Vec<(String, String)>,
    /// Rank among the look-alikes (same role and name) and how many there were.
    #[serde(default)]
    pub ordinal: u32,
    #[serde(default = "one")]
    pub group_size: u32,
    #[serde(default)]
    pub frame: Vec<u32>,
}

fn one() -> u32 {
    1
}

/// One step of a workflow.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Step {
    pub action: StepAction,
    /// The page the step is taken on, as a pattern ([`url_pattern`]); empty: any page.
    #[serde(default)]
    pub page: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Target>,
}

/// A named value the user can change per run (`/run <name> query=red scarf`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Param {
    pub name: String,
    /// The value used when a run gives none (the one recorded).
    pub value: String,
}

/// When the workflow last ran and how it ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LastRun {
    /// Milliseconds since the epoch.
    pub at: u64,
    /// How it ended, in English (what an export carries, and all a run stored before
    /// `said` has).
    pub outcome: String,
    /// `outcome` as a catalog message, for the panel and the notification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub said: Option<Msg>,
}

impl LastRun {
    /// A run that ended at `at` as `outcome` says.
    pub fn new(at: u64, outcome: Msg) -> LastRun {
        LastRun {
            at,
            outcome: outcome.english(),
            said: outcome.has_key().then_some(outcome),
        }
    }

    /// How it ended, as a message: `said` while it still is the sentence `outcome` holds
    /// (an imported file may carry any pair), else `outcome` read back when core wrote it.
    pub fn message(&self) -> Msg {
        match &self.said {
            Some(m) if m.english() == self.outcome => m.clone(),
            _ => super::why::reason(&self.outcome),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Workflow {
    pub id: String,
    pub name: String,
    /// The task's text, with each parameter's value written `{name}`.
    pub goal: String,
    pub start_url: String,
    pub steps: Vec<Step>,
    #[serde(default)]
    pub params: Vec<Param>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_run: Option<LastRun>,
    /// When it runs by itself, if ever.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<Schedule>,
}

/// A step that took effect in a task, as the loop records it (before it is a workflow's).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordedStep {
    /// The page the step was taken on.
    pub url: String,
    pub action: StepAction,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Target>,
    /// The text the model typed into a secret field, kept with the task only so that
    /// [`Workflow::from_task`] can take it out of the goal and the name (a user who wrote a
    /// password in the task); never part of a workflow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scrub: Option<String>,
}

impl Target {
    /// The identity of a map entry, as kept in a workflow.
    pub fn of(sig: &Signature) -> Target {
        Target {
            role: sig.role.clone(),
            tag: sig.tag.clone(),
            name: sig.name.norm.clone(),
            text: cut(&sig.text.norm, CONTEXT_CHARS),
            context: cut(&sig.context.norm, CONTEXT_CHARS),
            attrs: sig
                .attrs
                .iter()
                .filter(|(k, _)| *k != "id")
                .map(|(k, v)| ((*k).to_string(), v.clone()))
                .collect(),
            ordinal: u32::try_from(sig.ordinal).unwrap_or(u32::MAX),
            group_size: u32::try_from(sig.group_size).unwrap_or(u32::MAX),
            frame: sig.frame.clone(),
        }
    }

    /// The signature to look for, with `params`' values written in.
    fn signature(&self, params: &[Param]) -> Signature {
        let text = |s: &str| Text::new(&fill(s, params));
        Signature {
            index: usize::MAX,
            // No handle of a new page equals this: a replay never matches by node.
            handle: String::new(),
            frame: self.frame.clone(),
            tag: self.tag.clone(),
            role: self.role.clone(),
            name: text(&self.name),
            text: text(&self.text),
            context: text(&self.context),
            attrs: self
                .attrs
                .iter()
                .filter_map(|(k, v)| static_attr(k).map(|k| (k, v.clone())))
                .collect(),
            ordinal: self.ordinal as usize,
            group_size: self.group_size as usize,
            // A replay finds its element by content on another visit, never by place.
            place: Place::default(),
            brief: false,
        }
    }

    /// How the step names its element to a person: `button "add to cart"`.
    pub fn label(&self, params: &[Param]) -> String {
        format!("{} \u{201c}{}\u{201d}", self.role, fill(&self.name, params))
    }
}

/// The key attribute names a stored target may carry (the signature's own, `'static`).
fn static_attr(name: &str) -> Option<&'static str> {
    ["name", "type", "href", "placeholder", "autocomplete"]
        .into_iter()
        .find(|k| *k == name)
}

fn cut(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}

/// `text` with every `{name}` of `params` replaced by its value.
pub fn fill(text: &str, params: &[Param]) -> String {
    let mut out = text.to_string();
    for p in params {
        out = out.replace(&format!("{{{}}}", p.name), &p.value);
    }
    out
}

/// What the loop records for an action that took effect: `None` for actions a workflow does
/// not replay (reading, scrolling, tabs, questions, tools). `secret`: the value was typed
/// through the panel's password box (or the field is a password), so it is never kept.
pub fn record(
    action: &Action,
    url: &str,
    entry: Option<&Entry>,
    secret: bool,
) -> Option<RecordedStep> {
    let target = entry.map(|e| Target::of(&e.signature));
    let value = |text: &str| {
        if secret {
            Value::Secret
        } else {
            Value::Fixed(text.to_string())
        }
    };
    let scrub = match action {
        Action::Type { text, .. } if secret && !text.is_empty() => Some(text.clone()),
        _ => None,
    };
    let action = match action {
        Action::Navigate { url } => StepAction::Navigate { url: url.clone() },
        Action::Click { .. } => StepAction::Click,
        Action::Type { text, submit, .. } => StepAction::Type {
            value: value(text),
            submit: *submit,
        },
        Action::SelectOption { option, mode, .. } => StepAction::Select {
            value: value(option),
            mode: *mode,
        },
        _ => return None,
    };
    if !matches!(action, StepAction::Navigate { .. }) && target.is_none() {
        return None;
    }
    Some(RecordedStep {
        url: url.to_string(),
        action,
        target,
        scrub,
    })
}

/// Host and path of `url` with the parts that change from run to run written `*`: a path
/// segment with a digit in it (ids, dates), or sharing a word with a parameter's value
/// (`/product/blue-backpack` when `query` was "blue backpack"). Query and fragment are left
/// out. Empty when `url` is not http(s).
pub fn url_pattern(url: &str, params: &[Param]) -> String {
    let Some(rest) = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
    else {
        return String::new();
    };
    let rest = rest.split(['?', '#']).next().unwrap_or_default();
    let words: Vec<String> = params
        .iter()
        .flat_map(|p| words_of(&p.value))
        .filter(|w| w.chars().count() >= 3)
        .collect();
    let mut parts = rest.split('/');
    let host = parts.next().unwrap_or_default().lowercase();
    let mut out = host;
    for segment in parts {
        out.push('/');
        let lower = segment.lowercase();
        let varies = segment.chars().any(|c| c.is_ascii_digit())
            || words_of(&lower).any(|w| words.contains(&w));
        out.push_str(if varies { "*" } else { segment });
    }
    out
}

fn words_of(s: &str) -> impl Iterator<Item = String> + '_ {
    s.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(Lowercase::lowercase)
}

/// Whether `url` is a page `pattern` describes (an empty pattern: any page).
pub fn page_matches(pattern: &str, url: &str) -> bool {
    if pattern.is_empty() {
        return true;
    }
    let actual = url_pattern(url, &[]);
    let (p, a): (Vec<&str>, Vec<&str>) = (
        pattern.trim_end_matches('/').split('/').collect(),
        actual.trim_end_matches('/').split('/').collect(),
    );
    p.len() == a.len() && p.iter().zip(&a).all(|(p, a)| *p == "*" || p == a)
}

impl Workflow {
    /// The workflow of a task that ended Done, called by the name [`propose_name`] makes of
    /// its goal (with any secret typed in the task taken out). The worker always has the
    /// person's choice and calls [`Workflow::from_task`]: kept apart, the proposal (and the
    /// Unicode upper-case tables its capital letter needs) stays out of the worker's module.
    pub fn from_task_proposed(
        id: &str,
        task: &str,
        recorded: &[RecordedStep],
    ) -> Result<Workflow, Msg> {
        let mut goal = task.to_string();
        for secret in recorded.iter().filter_map(|r| r.scrub.as_deref()) {
            goal = goal.replace(secret, "(the secret)");
        }
        Self::from_task(id, task, &propose_name(&goal), recorded)
    }

    /// The workflow of a task that ended Done: its text, the page it started on and the steps
    /// it recorded, called `name` (the person's choice, see [`chosen_name`]). Values typed or
    /// chosen that the task's text contains (as whole words) become parameters, named after
    /// the field (`query` for a search box). A secret typed in the task is taken out of the
    /// goal and the name alike.
    pub fn from_task(
        id: &str,
        task: &str,
        name: &str,
        recorded: &[RecordedStep],
    ) -> Result<Workflow, Msg> {
        let Some(first) = recorded.first() else {
            return Err(Msg::key("wfNothingToRepeat"));
        };
        if recorded.len() > MAX_STEPS {
            return Err(Msg::new(
                "wfTooManyStepsTask",
                vec![
                    text(recorded.len().to_string()),
                    text(MAX_STEPS.to_string()),
                ],
            ));
        }
        let mut params: Vec<Param> = Vec::new();
        let mut goal = task.to_string();
        let mut name = name.to_string();
        for secret in recorded.iter().filter_map(|r| r.scrub.as_deref()) {
            goal = goal.replace(secret, "(the secret)");
            name = name.replace(secret, "(the secret)");
        }
        for step in recorded {
            let Some(text) = step_value(&step.action) else {
                continue;
            };
            if params.iter().any(|p| p.value.eq_ignore_ascii_case(text))
                || params.len() >= MAX_PARAMS
            {
                continue;
            }
            let Some(at) = find_words(&goal, text) else {
                continue;
            };
            let name = unique_name(&param_name(step.target.as_ref()), &params);
            goal.replace_range(at..at + text.len(), &format!("{{{name}}}"));
            params.push(Param {
                name,
                value: text.to_string(),
            });
        }
        let start_url = match &first.action {
            StepAction::Navigate { url } if first.url.is_empty() => url.clone(),
            _ => first.url.clone(),
        };
        Ok(Workflow {
            id: id.to_string(),
            name,
            goal,
            start_url,
            steps: steps_of(recorded, &params),
            params,
            last_run: None,
            schedule: None,
        })
    }

    /// This workflow with its steps replaced by what a run did (the replayed steps and the
    /// model's after a divergence): "Update workflow". The run's values that equal a
    /// parameter's become that parameter again.
    pub fn updated(&self, recorded: &[RecordedStep], values: &[Param]) -> Result<Workflow, Msg> {
        if recorded.is_empty() {
            return Err(Msg::key("wfRunNothing"));
        }
        if recorded.len() > MAX_STEPS {
            return Err(Msg::new("wfAtMostSteps", vec![text(MAX_STEPS.to_string())]));
        }
        let mut next = self.clone();
        next.steps = steps_of(recorded, values);
        // The stored defaults stay the user's, not the run's.
        Ok(next)
    }

    /// The parameters a run uses: the stored ones, with `given` (name, value) in their place.
    /// A name the workflow has no parameter of is refused with a sentence.
    pub fn values(&self, given: &[(String, String)]) -> Result<Vec<Param>, Msg> {
        let mut values = self.params.clone();
        for (name, value) in given {
            let Some(p) = values
                .iter_mut()
                .find(|p| p.name.eq_ignore_ascii_case(name))
            else {
                let known: Vec<&str> = self.params.iter().map(|p| p.name.as_str()).collect();
                return Err(if known.is_empty() {
                    Msg::new("wfNoParams", vec![text(&self.name), text(name)])
                } else {
                    Msg::new(
                        "wfNoSuchParamKnown",
                        vec![text(&self.name), text(name), text(known.join(", "))],
                    )
                });
            };
            p.value = cut(value, MAX_TEXT);
        }
        Ok(values)
    }

    /// Renames the parameter `old` (its uses in the goal, the steps and the targets' names
    /// follow); a name already taken or not made of letters, digits and _ is refused.
    pub fn rename_param(&mut self, old: &str, new: &str) -> Result<(), Msg> {
        let new = new.trim();
        if new.is_empty() || !new.chars().all(|c| c.is_alphanumeric() || c == '_') {
            return Err(Msg::key("wfParamNameChars"));
        }
        if new != old && self.params.iter().any(|p| p.name == new) {
            return Err(Msg::new("wfParamTaken", vec![text(new)]));
        }
        let Some(p) = self.params.iter_mut().find(|p| p.name == old) else {
            return Err(Msg::new("wfNoSuchParam", vec![text(old)]));
        };
        p.name = new.to_string();
        let (from, to) = (format!("{{{old}}}"), format!("{{{new}}}"));
        self.goal = self.goal.replace(&from, &to);
        for step in &mut self.steps {
            if let StepAction::Type { value, .. } | StepAction::Select { value, .. } =
                &mut step.action
            {
                if matches!(value, Value::Param(n) if n == old) {
                    *value = Value::Param(new.to_string());
                }
            }
            if let Some(t) = step.target.as_mut() {
                t.name = t.name.replace(&from, &to);
                t.text = t.text.replace(&from, &to);
            }
        }
        Ok(())
    }

    /// Removes the parameter `name`: its recorded value becomes fixed everywhere it was used.
    pub fn remove_param(&mut self, name: &str) {
        let Some(at) = self.params.iter().position(|p| p.name == name) else {
            return;
        };
        let p = self.params.remove(at);
        let mark = format!("{{{name}}}");
        self.goal = self.goal.replace(&mark, &p.value);
        let lower = p.value.lowercase();
        for step in &mut self.steps {
            if let StepAction::Type { value, .. } | StepAction::Select { value, .. } =
                &mut step.action
            {
                if matches!(value, Value::Param(n) if n == name) {
                    *value = Value::Fixed(p.value.clone());
                }
            }
            if let Some(t) = step.target.as_mut() {
                t.name = t.name.replace(&mark, &lower);
                t.text = t.text.replace(&mark, &lower);
            }
        }
    }

    /// Sets the value the parameter `name` has when a run gives none.
    pub fn set_param_value(&mut self, name: &str, value: &str) -> Result<(), Msg> {
        plain(value)?;
        match self.params.iter_mut().find(|p| p.name == name) {
            Some(p) => {
                p.value = value.to_string();
                Ok(())
            }
            None => Err(Msg::new("wfNoSuchParam", vec![text(name)])),
        }
    }

    /// One line per step, as the Workflows view lists them.
    pub fn step_lines(&self) -> Vec<String> {
        self.steps
            .iter()
            .map(|s| describe(s, &self.params))
            .collect()
    }

    /// The host the workflow starts on.
    pub fn start_site(&self) -> String {
        url_pattern(&self.start_url, &[])
            .split('/')
            .next()
            .unwrap_or_default()
            .to_string()
    }
}

/// A step for a person: `type “{query}” into searchbox “search”`.
pub fn describe(step: &Step, params: &[Param]) -> String {
    let target = step
        .target
        .as_ref()
        .map(|t| t.label(params))
        .unwrap_or_default();
    let value = |v: &Value| match v {
        Value::Fixed(s) => format!("\u{201c}{s}\u{201d}"),
        Value::Param(p) => format!(
            "\u{201c}{}\u{201d} ({p})",
            params
                .iter()
                .find(|x| &x.name == p)
                .map(|x| x.value.as_str())
                .unwrap_or("")
        ),
        Value::Secret => "the secret you enter each run".into(),
    };
    match &step.action {
        StepAction::Navigate { url } => format!("open {url}"),
        StepAction::Click => format!("click {target}"),
        StepAction::Type { value: v, submit } => format!(
            "type {} into {target}{}",
            value(v),
            if *submit { " and submit" } else { "" }
        ),
        StepAction::Select { value: v, .. } => format!("choose {} in {target}", value(v)),
    }
}

fn step_value(action: &StepAction) -> Option<&str> {
    match action {
        StepAction::Type {
            value: Value::Fixed(v),
            ..
        }
        | StepAction::Select {
            value: Value::Fixed(v),
            ..
        } if !v.trim().is_empty() => Some(v.as_str()),
        _ => None,
    }
}

/// The byte offset of `needle` in `hay` (ignoring case) where it stands as whole words.
fn find_words(hay: &str, needle: &str) -> Option<usize> {
    let lower = hay.lowercase();
    let n = needle.lowercase();
    // Lower-casing can change byte lengths outside ASCII: offsets are only trusted when it
    // did not.
    if lower.len() != hay.len() || n.len() != needle.len() || n.is_empty() {
        return None;
    }
    let mut from = 0;
    while let Some(i) = lower[from..].find(&n) {
        let at = from + i;
        let end = at + n.len();
        let before = lower[..at].chars().next_back();
        let after = lower[end..].chars().next();
        if !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric) {
            return Some(at);
        }
        from = at + 1;
        while !lower.is_char_boundary(from) {
            from += 1;
        }
    }
    None
}

/// A parameter's proposed name: `query` for a search field, else the field's name in a
/// word or two (`size`), else `value`.
fn param_name(target: Option<&Target>) -> String {
    let Some(t) = target else {
        return "value".into();
    };
    if t.role == "searchbox" || t.name.contains("search") {
        return "query".into();
    }
    let slug: Vec<String> = words_of(&t.name)
        .filter(|w| w.chars().all(|c| c.is_ascii_alphanumeric()))
        .take(2)
        .collect();
    if slug.is_empty() {
        "value".into()
    } else {
        slug.join("_")
    }
}

fn unique_name(base: &str, taken: &[Param]) -> String {
    let mut name = base.to_string();
    let mut n = 2;
    while taken.iter().any(|p| p.name == name) {
        name = format!("{base}{n}");
        n += 1;
    }
    name
}

/// Recorded steps as workflow steps: values equal to a parameter's become that parameter,
/// the parameter's value in a target's name becomes `{name}`, URLs become patterns.
fn steps_of(recorded: &[RecordedStep], params: &[Param]) -> Vec<Step> {
    let param_of = |v: &str| {
        params
            .iter()
            .find(|p| p.value.eq_ignore_ascii_case(v))
            .map(|p| Value::Param(p.name.clone()))
    };
    let value = |v: &Value| match v {
        Value::Fixed(s) => param_of(s).unwrap_or_else(|| Value::Fixed(cut(s, MAX_TEXT))),
        other => other.clone(),
    };
    recorded
        .iter()
        .map(|r| Step {
            action: match &r.action {
                StepAction::Type { value: v, submit } => StepAction::Type {
                    value: value(v),
                    submit: *submit,
                },
                StepAction::Select { value: v, mode } => StepAction::Select {
                    value: value(v),
                    mode: *mode,
                },
                other => other.clone(),
            },
            page: url_pattern(&r.url, params),
            target: r.target.as_ref().map(|t| templated(t, params)),
        })
        .collect()
}

/// `t` with each parameter's value in its name and text written `{name}`.
fn templated(t: &Target, params: &[Param]) -> Target {
    let mut t = t.clone();
    for p in params {
        let value = p.value.lowercase();
        if value.chars().count() < 2 {
            continue; // "M" would be found in every name
        }
        let mark = format!("{{{}}}", p.name);
        t.name = t.name.replace(&value, &mark);
        t.text = t.text.replace(&value, &mark);
    }
    t
}

/// What an ended task offers in its card.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum WorkflowOffer {
    #[default]
    None,
    /// "Save as workflow": a task that ended Done with steps a workflow can repeat.
    Save,
    /// "Update workflow": a replay the model finished after it diverged.
    Update,
}

impl WorkflowOffer {
    pub fn of(done: bool, recorded: &[RecordedStep], replay: Option<&Replay>) -> WorkflowOffer {
        match replay {
            _ if !done || recorded.is_empty() => WorkflowOffer::None,
            Some(r) if r.diverged.is_some() => WorkflowOffer::Update,
            Some(_) => WorkflowOffer::None,
            None => WorkflowOffer::Save,
        }
    }
}

/// Why a replayed step could not go on without the model.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Divergence {
    #[error("the page is {actual}, not the page the step was recorded on ({expected})")]
    OtherPage { expected: String, actual: String },
    #[error("the {0} was not found")]
    NotFound(String),
    #[error("the {0} now matches several elements equally well")]
    Ambiguous(String),
    #[error("{0}")]
    Failed(String),
}

/// Finds the element of `step` among the entries of the map of the current page, or says
/// why not. A target whose name holds a parameter is looked for among the elements whose
/// name holds this run's value of it (the product the query found).
pub fn locate(target: &Target, params: &[Param], entries: &[Entry]) -> Result<u32, Divergence> {
    let sig = target.signature(params);
    let label = || target.label(params);
    let templated: Vec<&Param> = params
        .iter()
        .filter(|p| target.name.contains(&format!("{{{}}}", p.name)))
        .collect();
    let mut candidates: Vec<Signature> = Vec::new();
    let mut ids: Vec<u32> = Vec::new();
    for e in entries {
        let name = &e.signature.name.norm;
        if !templated.is_empty() {
            let holds = templated
                .iter()
                .all(|p| name.contains(&p.value.lowercase()));
            if !holds || e.signature.role != target.role {
                continue;
            }
        }
        let mut c = e.signature.clone();
        c.attrs.retain(|(k, _)| *k != "id");
        if c.role == sig.role && c.name.norm == sig.name.norm {
            same_markup(&mut c, &sig);
        }
        // Look-alikes are ranked among the candidates, as the target was.
        c.index = ids.len();
        candidates.push(c);
        ids.push(e.id);
    }
    if !templated.is_empty() && candidates.len() == 1 {
        return Ok(ids[0]);
    }
    match signature::find(&sig, &candidates) {
        Match::Found { index, .. } => ids
            .get(index)
            .copied()
            .ok_or_else(|| Divergence::NotFound(label())),
        Match::Ambiguous { .. } => Err(Divergence::Ambiguous(label())),
        Match::NotFound { .. } => Err(Divergence::NotFound(label())),
    }
}

/// Makes `candidate`, which the list names as `target` is named (same role, same name),
/// written in `target`'s markup: a button drawn as `<button>Add to cart</button>` on one visit
/// and `<input type=submit value="Add to cart">` on the next is one control to a person, and
/// the tag, the text inside and the `type` it was written with must not count against it.
/// What says where it is and what it does (its surroundings, its `href`, its form field's
/// `name`) still counts, so a different control stays refused.
fn same_markup(candidate: &mut Signature, target: &Signature) {
    candidate.tag = target.tag.clone();
    candidate.text = target.text.clone();
    candidate.attrs.retain(|(k, _)| *k != "type");
    candidate
        .attrs
        .extend(target.attrs.iter().filter(|(k, _)| *k == "type").cloned());
}

/// The end of a divergence's sentence once the model goes on from it.
const TOOK_OVER: &str = "; the model took over from there";

/// A workflow running as a task: kept in the task (`TaskContext.replay`) so the loop takes
/// its next step from here instead of the model, until it is done or diverges.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Replay {
    pub workflow_id: String,
    pub name: String,
    /// The page the run opens before its first step.
    pub start_url: String,
    pub steps: Vec<Step>,
    /// This run's values.
    pub params: Vec<Param>,
    /// The next step to replay.
    pub next: usize,
    /// Why the model took over, and at which step (1-based, as the user counts them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diverged: Option<String>,
    /// Started by its schedule: an approval or a divergence the schedule does not let the
    /// model take pauses the run and notifies instead of waiting unseen.
    #[serde(default)]
    pub scheduled: bool,
    /// The schedule lets the model take over when a page changed.
    #[serde(default)]
    pub allow_model: bool,
}

impl Replay {
    /// A run of `workflow` with `params` (the caller opens its start page first).
    pub fn new(workflow: &Workflow, params: Vec<Param>) -> Replay {
        Replay {
            workflow_id: workflow.id.clone(),
            name: workflow.name.clone(),
            start_url: workflow.start_url.clone(),
            steps: workflow.steps.clone(),
            params,
            next: 0,
            diverged: None,
            scheduled: false,
            allow_model: false,
        }
    }

    /// The step to replay now, if the replay is still the one acting.
    pub fn current(&self) -> Option<&Step> {
        if self.diverged.is_some() {
            return None;
        }
        self.steps.get(self.next)
    }

    /// Whether every step was replayed.
    pub fn finished(&self) -> bool {
        self.diverged.is_none() && self.next >= self.steps.len()
    }

    /// The action that carries out `step` on the element with map id `id`.
    pub fn action(&self, step: &Step, id: Option<u32>, secret: Option<&str>) -> Option<Action> {
        let value = |v: &Value| match v {
            Value::Fixed(s) => s.clone(),
            Value::Param(p) => self
                .params
                .iter()
                .find(|x| &x.name == p)
                .map(|x| x.value.clone())
                .unwrap_or_default(),
            Value::Secret => secret.unwrap_or_default().to_string(),
        };
        Some(match &step.action {
            StepAction::Navigate { url } => Action::Navigate {
                url: fill(url, &self.params),
            },
            StepAction::Click => Action::Click { element: id? },
            StepAction::Type { value: v, submit } => Action::Type {
                element: id?,
                text: value(v),
                clear: true,
                submit: *submit,
            },
            StepAction::Select { value: v, mode } => Action::SelectOption {
                element: id?,
                option: value(v),
                mode: *mode,
            },
        })
    }

    /// Marks the current step as diverged for `why`; returns the sentence the run shows
    /// (`step 4: the button “checkout” was not found; the model took over from there`, or
    /// without its end when the model may not take over: a scheduled run then waits, and
    /// [`Replay::hand_to_model`] adds it when the person lets the model go on).
    pub fn diverge(&mut self, why: &str, model_takes_over: bool) -> String {
        let mut sentence = format!("step {}: {why}", self.next + 1);
        if model_takes_over {
            sentence.push_str(TOOK_OVER);
        }
        self.diverged = Some(sentence.clone());
        sentence
    }

    /// The person resumed a run that waited at its divergence: the model goes on from there.
    pub fn hand_to_model(&mut self) {
        if let Some(d) = self.diverged.as_mut().filter(|d| !d.ends_with(TOOK_OVER)) {
            d.push_str(TOOK_OVER);
        }
    }

    /// What the model is told when it takes over: the workflow's name, this run's values and
    /// the steps not yet done, as a hint. The target names are the page's words, so the
    /// caller fences this text.
    pub fn hint(&self) -> String {
        let mut out = format!(
            "Replaying the saved workflow \"{}\" stopped at {}.\n",
            self.name,
            self.diverged.as_deref().unwrap_or("a step")
        );
        if !self.params.is_empty() {
            out.push_str("Values for this run: ");
            let values: Vec<String> = self
                .params
                .iter()
                .map(|p| format!("{} = {}", p.name, p.value))
                .collect();
            out.push_str(&values.join("; "));
            out.push('\n');
        }
        out.push_str("Steps that remained, as recorded:\n");
        for (i, step) in self.steps.iter().enumerate().skip(self.next) {
            out.push_str(&format!("{}. {}\n", i + 1, describe(step, &self.params)));
        }
        out
    }
}

/// `/run <name> key=value …` from the task box: the workflow's name and the values given.
/// `None` when the text is not a `/run` command. A value runs up to the next `key=`.
pub fn run_command(text: &str) -> Option<(String, Vec<(String, String)>)> {
    let rest = text.trim().strip_prefix("/run")?;
    if !rest.is_empty() && !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let mut name: Vec<&str> = Vec::new();
    let mut params: Vec<(String, String)> = Vec::new();
    for word in rest.split_whitespace() {
        match word.split_once('=') {
            Some((key, value)) if !key.is_empty() => {
                params.push((key.to_string(), value.to_string()))
            }
            _ => match params.last_mut() {
                Some((_, value)) => {
                    if !value.is_empty() {
                        value.push(' ');
                    }
                    value.push_str(word);
                }
                None => name.push(word),
            },
        }
    }
    Some((name.join(" "), params))
}

/// The workflows as stored; damaged entries are left out (a problem in one never loses the
/// others).
pub fn read_stored(json: &str) -> Vec<Workflow> {
    let Ok(items) = crate::json::from_str::<Vec<serde_json::Value>>(json) else {
        return Vec::new();
    };
    items
        .into_iter()
        .filter_map(|v| crate::json::from_value::<Workflow>(v).ok())
        .filter(|w| check(w).is_ok())
        .collect()
}

/// Checks a workflow from outside (an imported file, storage): every field within bounds,
/// every URL http or https, names and values plain text. The error is the sentence shown.
pub fn check(w: &Workflow) -> Result<(), Msg> {
    let named = |what: Msg| {
        Msg::new(
            "wfCheckNamed",
            vec![text(cut(&w.name, 60)), nested(Mark::Plain, what)],
        )
    };
    let at = |key: &str, n: usize| named(Msg::new(key, vec![text(n.to_string())]));
    if w.name.trim().is_empty() || w.name.chars().count() > MAX_NAME {
        return Err(Msg::key("wfCheckNoName"));
    }
    if w.id.is_empty() || w.id.len() > 100 {
        return Err(named(Msg::key("wfCheckId")));
    }
    if w.steps.is_empty() || w.steps.len() > MAX_STEPS {
        return Err(at("wfCheckSteps", MAX_STEPS));
    }
    if w.params.len() > MAX_PARAMS {
        return Err(at("wfCheckParams", MAX_PARAMS));
    }
    web_url(&w.start_url)
        .map_err(|e| named(Msg::new("wfCheckStartUrl", vec![nested(Mark::Plain, e)])))?;
    let texts = [&w.name, &w.goal]
        .into_iter()
        .chain(w.params.iter().flat_map(|p| [&p.name, &p.value]))
        .chain(w.steps.iter().map(|s| &s.page));
    for t in texts {
        plain(t).map_err(named)?;
    }
    for p in &w.params {
        if p.name.is_empty() || !p.name.chars().all(|c| c.is_alphanumeric() || c == '_') {
            return Err(named(Msg::key("wfCheckParamName")));
        }
    }
    for (i, s) in w.steps.iter().enumerate() {
        let n = i + 1;
        match &s.action {
            StepAction::Navigate { url } => web_url(url).map_err(|e| {
                named(Msg::new(
                    "wfCheckStepUrl",
                    vec![text(n.to_string()), nested(Mark::Plain, e)],
                ))
            })?,
            StepAction::Click | StepAction::Type { .. } | StepAction::Select { .. } => {
                let Some(t) = &s.target else {
                    return Err(at("wfCheckNoTarget", n));
                };
                for text in [&t.role, &t.tag, &t.name, &t.text, &t.context] {
                    plain(text).map_err(named)?;
                }
                if t.attrs.len() > 8 {
                    return Err(at("wfCheckAttrs", n));
                }
                for (k, v) in &t.attrs {
                    plain(k).map_err(named)?;
                    plain(v).map_err(named)?;
                    if k == "href" && !v.is_empty() && !v.starts_with('/') && web_url(v).is_err() {
                        return Err(at("wfCheckLink", n));
                    }
                }
            }
        }
        if let StepAction::Type { value, .. } | StepAction::Select { value, .. } = &s.action {
            match value {
                Value::Fixed(v) => plain(v).map_err(named)?,
                Value::Param(p) if !w.params.iter().any(|x| &x.name == p) => {
                    return Err(at("wfCheckParamMissing", n))
                }
                _ => {}
            }
        }
    }
    Ok(())
}

fn plain(words: &str) -> Result<(), Msg> {
    if words.chars().count() > MAX_TEXT {
        return Err(Msg::new("wfTextTooLong", vec![text(MAX_TEXT.to_string())]));
    }
    if words
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return Err(Msg::key("wfTextControl"));
    }
    Ok(())
}

/// Only http and https: a `javascript:`, `data:` or `file:` address is refused.
fn web_url(url: &str) -> Result<(), Msg> {
    plain(url)?;
    let lower = url.trim().to_ascii_lowercase();
    let host = lower
        .strip_prefix("https://")
        .or_else(|| lower.strip_prefix("http://"));
    match host {
        Some(h) if !h.is_empty() && !h.starts_with('/') && url.trim() == url => Ok(()),
        _ => Err(Msg::key("wfNotWebUrl")),
    }
}

/// An exported file's content: the workflows as a JSON array, no run history.
pub fn export(workflows: &[Workflow]) -> String {
    let clean: Vec<Workflow> = workflows
        .iter()
        .cloned()
        .map(|mut w| {
            w.last_run = None;
            w.schedule = None;
            w
        })
        .collect();
    serde_json::to_string_pretty(&clean).unwrap_or_else(|_| "[]".into())
}

/// Reads an imported file (`bytes`, as the file input read it): a JSON array of workflows
/// (or one workflow), each checked. All or nothing: any problem refuses the whole file with
/// a sentence. Imported workflows get new ids (`new_id(i)`), so they never replace one.
pub fn import(bytes: &[u8], new_id: impl Fn(usize) -> String) -> Result<Vec<Workflow>, Msg> {
    let refused = import_refused;
    if bytes.len() > MAX_IMPORT_BYTES {
        return Err(refused(Msg::new(
            "wfImportTooBig",
            vec![text((MAX_IMPORT_BYTES / 1024).to_string())],
        )));
    }
    let words = std::str::from_utf8(bytes).map_err(|_| refused(Msg::key("wfImportNotText")))?;
    let value: serde_json::Value =
        crate::json::from_str(words).map_err(|_| refused(Msg::key("wfImportNotJson")))?;
    let items = match value {
        serde_json::Value::Array(items) => items,
        one @ serde_json::Value::Object(_) => vec![one],
        _ => return Err(refused(Msg::key("wfImportNoWorkflows"))),
    };
    if items.is_empty() || items.len() > MAX_WORKFLOWS {
        return Err(refused(Msg::new(
            "wfImportCount",
            vec![text(MAX_WORKFLOWS.to_string())],
        )));
    }
    let mut out = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        let mut w: Workflow = crate::json::from_value(item).map_err(|e| {
            refused(Msg::new(
                "wfImportForm",
                vec![text((i + 1).to_string()), text(first_line(&e.to_string()))],
            ))
        })?;
        w.id = new_id(i);
        w.last_run = None;
        // An imported workflow never runs by itself until the user schedules it here.
        w.schedule = None;
        check(&w).map_err(|e| Msg::new("wfImportRefusedCheck", vec![nested(Mark::Plain, e)]))?;
        out.push(w);
    }
    Ok(out)
}

/// "This file cannot be imported: `why`" (each reason ends with its own full stop).
pub fn import_refused(why: Msg) -> Msg {
    Msg::new("wfImportRefused", vec![nested(Mark::Plain, why)])
}

fn first_line(s: &str) -> String {
    cut(s.lines().next().unwrap_or_default(), 120)
}
