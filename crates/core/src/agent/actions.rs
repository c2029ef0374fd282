//! The actions the LLM may take, as ONE flat JSON object (`{"action":"click","element":12}`):
//! small models get nested or tagged-union schemas wrong far more often than flat ones.
//!
//! [`parse_action`] reads a model's reply. It repairs what can be repaired without guessing
//! (code fences, prose around the object, trailing commas, unambiguous single quotes, bare
//! keys, Python literals, a missing final `}`) and otherwise returns an [`ActionError`] whose
//! message is written to be sent back to the model, so the caller can re-ask once.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::snapshot::DriverCommand;
pub use super::snapshot::ScrollDirection;
use crate::float_text::parse_f64;

/// Every action name, in the order the schema lists them.
pub const ACTION_NAMES: [&str; 20] = [
    "click",
    "type",
    "select_option",
    "scroll",
    "press",
    "hover",
    "drag",
    "set_value",
    "select_text",
    "click_at",
    "navigate",
    "back",
    "open_tab",
    "switch_tab",
    "close_tab",
    "extract_text",
    "wait",
    "ask_user",
    "done",
    "context_click",
];

/// The action that calls a tool another extension gave Tandem (`tandem_core::tools`). Not in
/// [`ACTION_NAMES`]: it is offered (in the schema and the instructions) only to a task that
/// has tools, but always read, so a model naming it without tools is told there are none.
pub const TOOL_ACTION: &str = "tool";

/// The action that asks for a screenshot (`tandem_core::agent::look`). Not in
/// [`ACTION_NAMES`]: it is offered only to a model that takes images
/// ([`action_schema_for`]), but always read, so a text-only model naming it is told why not.
pub const LOOK_ACTION: &str = "look";

/// Longest `wait` honoured; longer ones are shortened (and reported as a repair).
pub const MAX_WAIT_MS: u32 = 10_000;

/// How long a `wait` for text waits when the model gives no `ms`.
pub const DEFAULT_TEXT_WAIT_MS: u32 = 5_000;

/// Longest key or chord `press` takes (`Control+Shift+ArrowLeft` is 23).
const MAX_KEY_CHARS: usize = 40;

/// `element` is always an id from the rendered element list, never a driver handle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    Click {
        element: u32,
    },
    Type {
        element: u32,
        text: String,
        clear: bool,
        submit: bool,
    },
    /// `option` is the option's value or its visible text; `mode` says whether it replaces
    /// the selection or (in a multi-select) is added to or removed from it.
    SelectOption {
        element: u32,
        option: String,
        mode: SelectMode,
    },
    /// A key or chord (`Escape`, `Control+A`) on an element, or on whatever has focus.
    Press {
        element: Option<u32>,
        key: String,
    },
    Hover {
        element: u32,
    },
    /// Drags the element onto `to`, or by (`dx`, `dy`) pixels.
    Drag {
        element: u32,
        to: DragTarget,
    },
    /// A slider's (native range, ARIA slider, custom handle) new value, as the model wrote it.
    SetValue {
        element: u32,
        value: String,
    },
    /// Selects the first occurrence of `text` inside the element, or without one, in the
    /// page's visible text (a passage of a paragraph, which is no listed element).
    SelectText {
        element: Option<u32>,
        text: String,
    },
    /// Clicks a point of the element's box, in thousandths of its width and height.
    ClickAt {
        element: u32,
        x: u16,
        y: u16,
    },
    /// Clicks (`x`, `y`) of the screenshot this step's turn carried, in its pixels; the
    /// worker turns it into the [`Action::ClickAt`] of the listed element under that point
    /// (`look::resolve_point`) before anything is checked or done.
    ClickPoint {
        x: u32,
        y: u32,
    },
    /// Asks for a screenshot of the viewport with the next turn.
    Look,
    Scroll {
        target: ScrollTarget,
    },
    Navigate {
        url: String,
    },
    Back,
    OpenTab {
        url: String,
    },
    SwitchTab {
        tab: u32,
    },
    CloseTab,
    /// The page's text, or one element's.
    ExtractText {
        element: Option<u32>,
    },
    /// Waits `ms`; with `text`, until that text is on the page, at most `ms`.
    Wait {
        ms: u32,
        text: Option<String>,
    },
    AskUser {
        question: String,
    },
    Done {
        success: bool,
        answer: Option<String>,
    },
    /// Calls the tool the model knows as `name` (its model-facing name, as listed) with
    /// `arguments` (a JSON object; checked against the tool's schema before anything runs).
    Tool {
        name: String,
        arguments: Value,
    },
    /// A right click on the element (a context menu), sent as trusted input when the page
    /// ignores a synthetic one.
    ContextClick {
        element: u32,
    },
    /// `click` with `times`: quick repeated clicks on one target, found again by its role and
    /// name before each (a target that moves after each hit).
    ClickTimes {
        element: u32,
        times: u32,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScrollTarget {
    Page(ScrollDirection),
    /// Scroll the element into view.
    Element(u32),
    /// Scroll the contents of a scrollable element (an agreement box, a chat log).
    Inside(u32, ScrollDirection),
}

/// How `select_option` treats the options already selected.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SelectMode {
    /// The option becomes the selection.
    #[default]
    Replace,
    /// A multi-select keeps the others selected.
    Add,
    Remove,
}

impl SelectMode {
    /// Whether this is the plain choice (a workflow stores only the other modes).
    pub fn is_replace(&self) -> bool {
        *self == SelectMode::Replace
    }
}

/// Where a `drag` ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DragTarget {
    /// On the element with this id.
    Element(u32),
    /// This many pixels right and down from where it starts.
    Offset { dx: i32, dy: i32 },
    /// Along these points (pixels from the element's top-left corner): a drawn line, a circle.
    Path(Vec<[i32; 2]>),
}

/// Most points a drag's `path` takes (a circle needs a dozen or two).
pub const MAX_PATH_POINTS: usize = 200;

/// Most clicks one `click` with `times` makes.
pub const MAX_CLICK_TIMES: u32 = 50;

fn direction_word(d: ScrollDirection) -> &'static str {
    match d {
        ScrollDirection::Up => "up",
        ScrollDirection::Down => "down",
        ScrollDirection::End => "end",
    }
}

impl Action {
    pub fn name(&self) -> &'static str {
        match self {
            Action::Click { .. } => "click",
            Action::Type { .. } => "type",
            Action::SelectOption { .. } => "select_option",
            Action::Scroll { .. } => "scroll",
            Action::Press { .. } => "press",
            Action::Hover { .. } => "hover",
            Action::Drag { .. } => "drag",
            Action::SetValue { .. } => "set_value",
            Action::SelectText { .. } => "select_text",
            Action::ClickAt { .. } | Action::ClickPoint { .. } => "click_at",
            Action::Look => LOOK_ACTION,
            Action::Navigate { .. } => "navigate",
            Action::Back => "back",
            Action::OpenTab { .. } => "open_tab",
            Action::SwitchTab { .. } => "switch_tab",
            Action::CloseTab => "close_tab",
            Action::ExtractText { .. } => "extract_text",
            Action::Wait { .. } => "wait",
            Action::AskUser { .. } => "ask_user",
            Action::Done { .. } => "done",
            Action::Tool { .. } => TOOL_ACTION,
            Action::ContextClick { .. } => "context_click",
            Action::ClickTimes { .. } => "click",
        }
    }

    /// The element id the action targets, if any.
    pub fn element(&self) -> Option<u32> {
        match self {
            Action::Click { element }
            | Action::Type { element, .. }
            | Action::SelectOption { element, .. }
            | Action::Hover { element }
            | Action::Drag { element, .. }
            | Action::SetValue { element, .. }
            | Action::ClickAt { element, .. }
            | Action::ClickTimes { element, .. }
            | Action::Scroll {
                target: ScrollTarget::Element(element) | ScrollTarget::Inside(element, _),
            } => Some(*element),
            Action::ExtractText { element }
            | Action::Press { element, .. }
            | Action::SelectText { element, .. } => *element,
            Action::ContextClick { element } => Some(*element),
            _ => None,
        }
    }

    /// What the in-page driver runs for this action (with the element's handle), or `None`
    /// for actions the service worker carries out itself (tabs, navigation, waiting, asking).
    pub fn driver_command(&self) -> Option<DriverCommand> {
        Some(match self {
            Action::Click { .. } => DriverCommand::Click,
            Action::Type {
                text,
                clear,
                submit,
                ..
            } => DriverCommand::Type {
                text: text.clone(),
                clear: *clear,
                submit: *submit,
            },
            Action::SelectOption { option, mode, .. } => DriverCommand::Select {
                option: option.clone(),
                mode: match mode {
                    SelectMode::Replace => None,
                    SelectMode::Add => Some("add".into()),
                    SelectMode::Remove => Some("remove".into()),
                },
            },
            Action::Press { key, .. } => DriverCommand::Press { key: key.clone() },
            Action::Hover { .. } => DriverCommand::Hover,
            // The target's handle is filled in by the worker once it has located it.
            Action::Drag { to, .. } => match to {
                DragTarget::Element(_) => DriverCommand::Drag {
                    to: None,
                    dx: 0,
                    dy: 0,
                },
                DragTarget::Offset { dx, dy } => DriverCommand::Drag {
                    to: None,
                    dx: *dx,
                    dy: *dy,
                },
                DragTarget::Path(path) => DriverCommand::DragPath { path: path.clone() },
            },
            Action::SetValue { value, .. } => DriverCommand::SetValue {
                value: value.clone(),
            },
            Action::SelectText { text, .. } => DriverCommand::SelectText { text: text.clone() },
            Action::ClickAt { x, y, .. } => DriverCommand::ClickAt { x: *x, y: *y },
            Action::Scroll {
                target: ScrollTarget::Inside(_, d),
            } => DriverCommand::ScrollIn { direction: *d },
            Action::Scroll {
                target: ScrollTarget::Page(d),
            } => DriverCommand::Scroll {
                direction: Some(*d),
            },
            Action::Scroll {
                target: ScrollTarget::Element(_),
            } => DriverCommand::Scroll { direction: None },
            Action::ExtractText { element: Some(_) } => DriverCommand::Read { max_chars: None },
            Action::ContextClick { .. } => DriverCommand::ContextClick,
            Action::ClickTimes { times, .. } => DriverCommand::ClickTimes { times: *times },
            _ => return None,
        })
    }

    /// The flat JSON form, the same shape [`parse_action`] reads.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("action".into(), self.name().into());
        let mut put = |k: &str, v: Value| {
            m.insert(k.into(), v);
        };
        match self {
            Action::Click { element } => put("element", (*element).into()),
            Action::Type {
                element,
                text,
                clear,
                submit,
            } => {
                put("element", (*element).into());
                put("text", text.as_str().into());
                put("clear", (*clear).into());
                put("submit", (*submit).into());
            }
            Action::SelectOption {
                element,
                option,
                mode,
            } => {
                put("element", (*element).into());
                put("option", option.as_str().into());
                match mode {
                    SelectMode::Replace => {}
                    SelectMode::Add => put("mode", "add".into()),
                    SelectMode::Remove => put("mode", "remove".into()),
                }
            }
            Action::Scroll {
                target: ScrollTarget::Page(d),
            } => put("direction", direction_word(*d).into()),
            Action::Scroll {
                target: ScrollTarget::Element(e),
            } => put("element", (*e).into()),
            Action::Scroll {
                target: ScrollTarget::Inside(e, d),
            } => {
                put("element", (*e).into());
                put("direction", direction_word(*d).into());
            }
            Action::Press { element, key } => {
                if let Some(e) = element {
                    put("element", (*e).into());
                }
                put("key", key.as_str().into());
            }
            Action::Hover { element } => put("element", (*element).into()),
            Action::ContextClick { element } => put("element", (*element).into()),
            Action::Drag { element, to } => {
                put("element", (*element).into());
                match to {
                    DragTarget::Element(t) => put("to", (*t).into()),
                    DragTarget::Offset { dx, dy } => {
                        put("dx", (*dx).into());
                        put("dy", (*dy).into());
                    }
                    DragTarget::Path(path) => put(
                        "path",
                        path.iter()
                            .map(|[x, y]| format!("{x},{y}"))
                            .collect::<Vec<_>>()
                            .join(" ")
                            .into(),
                    ),
                }
            }
            Action::SetValue { element, value } => {
                put("element", (*element).into());
                put("value", value.as_str().into());
            }
            Action::SelectText { element, text } => {
                if let Some(element) = element {
                    put("element", (*element).into());
                }
                put("text", text.as_str().into());
            }
            Action::ClickAt { element, x, y } => {
                put("element", (*element).into());
                put("x", (f64::from(*x) / 1000.0).into());
                put("y", (f64::from(*y) / 1000.0).into());
            }
            Action::ClickPoint { x, y } => {
                put("x", (*x).into());
                put("y", (*y).into());
            }
            Action::Navigate { url } | Action::OpenTab { url } => put("url", url.as_str().into()),
            Action::SwitchTab { tab } => put("tab", (*tab).into()),
            Action::ExtractText { element: Some(e) } => put("element", (*e).into()),
            Action::Wait { ms, text } => {
                put("ms", (*ms).into());
                if let Some(t) = text {
                    put("text", t.as_str().into());
                }
            }
            Action::AskUser { question } => put("question", question.as_str().into()),
            Action::Done { success, answer } => {
                put("success", (*success).into());
                if let Some(a) = answer {
                    put("answer", a.as_str().into());
                }
            }
            Action::Tool { name, arguments } => {
                put("tool", name.as_str().into());
                put("arguments", arguments.clone());
            }
            Action::ClickTimes { element, times } => {
                put("element", (*element).into());
                put("times", (*times).into());
            }
            Action::Back
            | Action::CloseTab
            | Action::Look
            | Action::ExtractText { element: None } => {}
        }
        Value::Object(m)
    }

    /// Validates an already-parsed JSON value (no text repair, but the same lenient field
    /// reading as [`parse_action`]).
    pub fn from_json(value: &Value) -> Result<Action, ActionError> {
        from_value(value, &mut Vec::new())
    }
}

impl Serialize for Action {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Action {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Action::from_json(&Value::deserialize(deserializer)?).map_err(serde::de::Error::custom)
    }
}

/// The navigator's answer as one FLAT object (a derived tagged enum would nest, the shape
/// small models fail on), as `FlatAction` generates it minus the title, serde defaults and
/// integer formats, which only restate the types. A constant: generating it at run time put
/// schemars' generator in the worker's wasm. `the_flat_schema_is_what_flat_action_generates`
/// keeps it in step with `FlatAction` (edit the type, then paste what that test prints).
const FLAT_SCHEMA: &str = r#"{"additionalProperties":false,"description":"Exactly one browser action. Only the fields the chosen action uses may be set.","properties":{"action":{"enum":["click","type","select_option","scroll","press","hover","drag","set_value","select_text","click_at","navigate","back","open_tab","switch_tab","close_tab","extract_text","wait","ask_user","done","context_click","tool"],"type":"string"},"answer":{"description":"done: the result, or what went wrong.","type":"string"},"arguments":{"additionalProperties":true,"description":"tool: the tool's arguments, matching its parameters.","type":"object"},"clear":{"description":"type: empty the field first (default true).","type":"boolean"},"direction":{"description":"scroll: one screen up or down, or to the end.","enum":["up","down","end"],"type":"string"},"dx":{"description":"drag (instead of to): pixels to the right (negative: left).","type":"integer"},"dy":{"description":"drag (instead of to): pixels down (negative: up).","type":"integer"},"element":{"description":"The [number] of an element in the list. Required by click, type, select_option, hover, drag, set_value, click_at, context_click (a right click: the page's own context menu); optional for press (else the focused element), scroll (alone: into view; with direction: inside it), extract_text (else the whole page) and select_text (else the passage is found in the page's text).","minimum":0,"type":"integer"},"key":{"description":"press: a key or chord, e.g. Escape, Enter, Tab, ArrowDown, PageDown, Control+A.","type":"string"},"mode":{"description":"select_option in a multi-select: add to or remove from the selection (default: replace it).","enum":["replace","add","remove"],"type":"string"},"ms":{"description":"wait: milliseconds; the result says what changed meanwhile.","maximum":10000,"minimum":0,"type":"integer"},"option":{"description":"select_option: the option's value or visible text.","type":"string"},"path":{"description":"drag (instead of to): points \"x,y x,y …\" in pixels from the element's top-left, to draw or trace a line.","type":"string"},"question":{"description":"ask_user: the question for the user.","type":"string"},"submit":{"description":"type: submit the form afterwards (default false).","type":"boolean"},"success":{"description":"done: whether the task was accomplished (required).","type":"boolean"},"tab":{"description":"switch_tab: the tab's number in the tab list.","minimum":0,"type":"integer"},"text":{"description":"type: the text to enter; select_text: the passage to select; wait: wait until it is on the page.","type":"string"},"times":{"description":"click: click it this many times quickly, finding it again each time (a moving target).","maximum":50,"minimum":1,"type":"integer"},"to":{"description":"drag: the [number] of the element to drop it on.","minimum":0,"type":"integer"},"tool":{"description":"tool: the name of one of the tools listed.","type":"string"},"url":{"description":"navigate, open_tab: an absolute http(s) URL.","type":"string"},"value":{"description":"set_value: the slider's new value.","type":"number"},"x":{"description":"click_at: where across the element's box, 0 (left) to 1 (right).","maximum":1,"minimum":0,"type":"number"},"y":{"description":"click_at: where down the element's box, 0 (top) to 1 (bottom).","maximum":1,"minimum":0,"type":"number"}},"required":["action"],"type":"object"}"#;

/// The JSON Schema of an action: one flat object, generated from `FlatAction`, without the
/// `tool` action (a task without tools is not told about it).
pub fn action_schema() -> Value {
    let mut schema = flat_schema();
    if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        props.remove("tool");
        props.remove("arguments");
        if let Some(names) = props
            .get_mut("action")
            .and_then(|a| a.get_mut("enum"))
            .and_then(Value::as_array_mut)
        {
            names.retain(|n| n != TOOL_ACTION);
        }
    }
    schema
}

/// The schema of an action for a task that may call `tools` (their model-facing names):
/// [`action_schema`] plus the `tool` action, its `tool` field limited to those names (Nano
/// decodes to this, so it cannot name a tool that does not exist) and its `arguments`.
/// Without tools it is [`action_schema`].
pub fn action_schema_with_tools(tools: &[String]) -> Value {
    if tools.is_empty() {
        return action_schema();
    }
    let mut schema = flat_schema();
    if let Some(tool) = schema.pointer_mut("/properties/tool") {
        tool["enum"] = tools.iter().map(|t| Value::from(t.as_str())).collect();
    }
    schema
}

/// The schema for a task whose model may `look` (it takes images): [`action_schema_with_tools`]
/// plus the `look` action, and `click_at`'s x and y also as pixels of the screenshot when no
/// element is given. A text-only model's schema does not name `look` at all.
pub fn action_schema_for(tools: &[String], look: bool) -> Value {
    let mut schema = action_schema_with_tools(tools);
    if !look {
        return schema;
    }
    if let Some(names) = schema
        .pointer_mut("/properties/action/enum")
        .and_then(Value::as_array_mut)
    {
        names.push(LOOK_ACTION.into());
    }
    for (axis, from) in [("x", "left"), ("y", "top")] {
        if let Some(field) = schema
            .pointer_mut(&format!("/properties/{axis}"))
            .and_then(Value::as_object_mut)
        {
            field.remove("maximum");
            field.insert(
                "description".into(),
                format!("click_at: with element, a fraction of its box from 0 to 1 from the {from}; without element, pixels from the {from} of the latest screenshot.").into(),
            );
        }
    }
    schema
}

/// The action schema as the model reads it: one short line per action the schema offers (its
/// `action` enum), naming its fields, after an example. Per action rather than per field: the
/// text is re-sent with every cloud request of a task, and a field list restated which actions
/// use each field; an action added costs one line. Nano is held to the schema itself
/// (`responseConstraint`); the cloud's structured output carries it too.
pub fn describe_schema(schema: &Value) -> String {
    let offered = schema
        .pointer("/properties/action/enum")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let lines: Vec<String> = offered
        .iter()
        .filter_map(Value::as_str)
        .map(|name| match action_line(name) {
            Some("") | None => name.to_string(),
            Some(fields) => format!("{name} {fields}"),
        })
        .collect();
    format!("{ACTIONS_HEAD}\n{}", lines.join("\n"))
}

/// What the lines of [`describe_schema`] mean, with an example; the element number is said
/// once here.
const ACTIONS_HEAD: &str = "NAVIGATOR: answer one flat JSON object such as \
{\"action\":\"click\",\"element\":3}: \"action\" and only its fields below (`?` optional, (…) \
meaning, element: a listed [number]):";

/// An action's fields as [`describe_schema`] lists them: `field`, `field?` when optional,
/// `(…)` what it means where the name does not say it, `or` between alternatives. Written
/// short by hand; `every_action_line_is_what_the_parser_reads` holds it to [`parse_action`]
/// and the schema (every action and field, which are required). A new action adds its line.
fn action_line(name: &str) -> Option<&'static str> {
    Some(match name {
        "click" => "element times?(quick repeats, a moving target)",
        "hover" => "element",
        "type" => "element text clear?(empty it first; default true) submit?",
        "select_option" => {
            "element option(value or visible text) mode?(replace|add|remove, multi-select)"
        }
        "scroll" => "direction(up|down|end) or element(into view) or both(inside it)",
        "press" => "key(e.g. Escape, Enter, Control+A) element?(else the focused one)",
        "drag" => {
            "element to(drop target) or element dx? dy?(pixels, negative: left/up) or element path(\"x,y x,y …\" from its corner)"
        }
        "set_value" => "element value(a slider's number)",
        "select_text" => "text(passage) element?(else the page)",
        "click_at" => "element x y(0–1 across, down its box)",
        "navigate" => "url(absolute http(s))",
        "open_tab" => "url",
        "switch_tab" => "tab(number in the tab list)",
        "extract_text" => "element?(else the whole page)",
        "wait" => "ms(≤10000; tells what changed) or text(until shown) or both",
        "ask_user" => "question",
        "context_click" => "element(right click)",
        "done" => "success(true|false) answer?(the result or what went wrong)",
        TOOL_ACTION => "tool(a listed tool's name) arguments(object, as its parameters ask)",
        // When to look is the look rule's; click_at's pixels after one, the screenshot turn's.
        "back" | "close_tab" | LOOK_ACTION => "",
        _ => return None,
    })
}

fn flat_schema() -> Value {
    // A constant that a native test parses: it cannot fail here.
    crate::json::from_str(FLAT_SCHEMA).expect("FLAT_SCHEMA is valid JSON (tested natively)")
}

/// Whether `url` starts with a host and has no scheme (`shop.example/p/1`,
/// `shop.example:8443/`): a dotted name without spaces before the first `/`, `?` or `#`,
/// with at most a numeric port. `mailto:a@b.c`, `/p/1` and `about:blank` are not.
fn looks_like_host_first(url: &str) -> bool {
    let host_port = url.split(['/', '?', '#']).next().unwrap_or_default();
    let (host, port) = host_port.split_once(':').unwrap_or((host_port, ""));
    !host.is_empty()
        && !url.contains("://")
        && host.contains('.')
        && !host.starts_with('.')
        && host
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '.' | '-' | '_'))
        && port.chars().all(|c| c.is_ascii_digit())
        && !(host_port.contains(':') && port.is_empty())
}

/// A repair [`parse_action`] made; worth logging, not worth failing for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Repair {
    CodeFence,
    SurroundingProse,
    WrappedInArray,
    TrailingComma,
    SingleQuotes,
    BareKeys,
    PythonLiterals,
    RawControlInString,
    MissingClosingBrace,
    /// A number written as a string (`"element": "12"`, `"[12]"`), or a boolean as one.
    QuotedScalar,
    /// `selectOption`, `Select-Option` → `select_option`.
    ActionNameCase,
    WaitShortened,
    /// `shop.example/p/1` → `https://shop.example/p/1`: a URL written without its scheme, as
    /// compact turns show https URLs and small models often write them.
    SchemeAdded,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ParsedAction {
    pub action: Action,
    pub repairs: Vec<Repair>,
}

/// Why a reply is not an action. The messages are addressed to the model.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ActionError {
    #[error("The reply contains no JSON object. Answer with exactly one JSON object, for example {{\"action\":\"click\",\"element\":3}}.")]
    NoJson,
    #[error("The JSON is malformed: {detail}. Answer with one valid JSON object.")]
    Syntax { detail: String },
    #[error("The reply was cut off {place}. Send the whole JSON object again.")]
    Truncated { place: &'static str },
    #[error("The reply contains more than one action. Send exactly one JSON object per step.")]
    MultipleActions,
    #[error("The JSON is {found}, not an object. Answer with one object such as {{\"action\":\"scroll\",\"direction\":\"down\"}}.")]
    NotAnObject { found: &'static str },
    #[error("The object has no \"action\" field. Set \"action\" to one of: {}.", ACTION_NAMES.join(", "))]
    MissingAction,
    #[error("Unknown action \"{name}\". Use one of: {}.", ACTION_NAMES.join(", "))]
    UnknownAction { name: String },
    #[error("\"{action}\" needs \"{field}\": {hint}.")]
    MissingField {
        action: &'static str,
        field: &'static str,
        hint: &'static str,
    },
    #[error("\"{field}\" of \"{action}\" must be {expected}, not {found}.")]
    InvalidField {
        action: &'static str,
        field: &'static str,
        expected: &'static str,
        found: String,
    },
}

/// Reads one action out of a model's reply. See the module docs for what is repaired.
pub fn parse_action(reply: &str) -> Result<ParsedAction, ActionError> {
    let mut repairs = Vec::new();
    let value = match crate::json::from_str::<Value>(reply.trim()) {
        // `[{...}]`: one action in a list is still one action.
        Ok(Value::Array(mut items)) if items.len() == 1 && items[0].is_object() => {
            repairs.push(Repair::WrappedInArray);
            items.remove(0)
        }
        Ok(Value::Array(items))
            if items.iter().filter(|i| i.get("action").is_some()).count() > 1 =>
        {
            return Err(ActionError::MultipleActions)
        }
        Ok(v) => v,
        Err(_) => extract_object(reply, &mut repairs)?,
    };
    let action = from_value(&value, &mut repairs)?;
    let mut seen = crate::hash::HashSet::default();
    repairs.retain(|r| seen.insert(*r));
    Ok(ParsedAction { action, repairs })
}

/// Finds the object in a reply that is not clean JSON. Tries each `{` in turn so that a stray
/// brace in leading prose does not hide the real object; reports the first attempt's error
/// when none works, since that is where the model most likely meant its JSON to start.
fn extract_object(reply: &str, repairs: &mut Vec<Repair>) -> Result<Value, ActionError> {
    let body = strip_fence(reply, repairs);
    let mut first_error = None;
    for (start, _) in body.match_indices('{') {
        let mut attempt = Vec::new();
        match repair_object(&body[start..], &mut attempt) {
            // Not the action (`{curly}` in prose, or a nested object): keep looking.
            Ok((value, _)) if value.get("action").is_none() => {
                first_error.get_or_insert(ActionError::MissingAction);
            }
            Ok((value, rest)) => {
                if rest.contains("\"action\"") || rest.contains("'action'") {
                    return Err(ActionError::MultipleActions);
                }
                if !body[..start].trim().is_empty() || !rest.trim().is_empty() {
                    attempt.push(Repair::SurroundingProse);
                }
                repairs.extend(attempt);
                return Ok(value);
            }
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    Err(first_error.unwrap_or(ActionError::NoJson))
}

/// The inside of the first ``` fence if there is one (an unterminated fence runs to the end).
fn strip_fence<'r>(reply: &'r str, repairs: &mut Vec<Repair>) -> &'r str {
    let Some(open) = reply.find("```") else {
        return reply;
    };
    let after = &reply[open + 3..];
    // The info string (`json`) runs to the end of the line.
    let content = after.find('\n').map_or("", |nl| &after[nl + 1..]);
    let content = content
        .find("```")
        .map_or(content, |close| &content[..close]);
    if content.contains('{') {
        repairs.push(Repair::CodeFence);
        content
    } else {
        reply
    }
}

/// Rewrites the object starting at `text[0] == '{'` into strict JSON and parses it; returns
/// it with the text after it. Every rewrite is one that cannot change what the model meant.
fn repair_object<'t>(
    text: &'t str,
    repairs: &mut Vec<Repair>,
) -> Result<(Value, &'t str), ActionError> {
    let mut out = String::with_capacity(text.len() + 8);
    let mut depth = 0usize;
    let mut end = None;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' | '\'' => {
                if c == '\'' {
                    repairs.push(Repair::SingleQuotes);
                }
                copy_string(c, &mut chars, &mut out, repairs)?;
                if c == '\'' {
                    // A quote that closes early ('it's') leaves a word behind it; then the
                    // pairing is a guess, and guesses are not repairs.
                    let rest = chars.peek().map_or("", |&(j, _)| &text[j..]);
                    if !matches!(
                        rest.trim_start().chars().next(),
                        None | Some(':' | ',' | '}' | ']')
                    ) {
                        return Err(ActionError::Syntax {
                            detail:
                                "a single-quoted string contains an apostrophe; use double quotes"
                                    .into(),
                        });
                    }
                }
            }
            '{' | '[' => {
                depth += 1;
                out.push(c);
            }
            '}' | ']' => {
                drop_trailing_comma(&mut out, repairs);
                out.push(c);
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    end = Some(i + 1);
                    break;
                }
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let mut word = String::from(c);
                while let Some(&(_, n)) = chars.peek() {
                    if !(n.is_ascii_alphanumeric() || n == '_') {
                        break;
                    }
                    word.push(n);
                    chars.next();
                }
                let rest = chars.peek().map_or("", |&(j, _)| &text[j..]);
                if rest.trim_start().starts_with(':') {
                    repairs.push(Repair::BareKeys);
                    out.push('"');
                    out.push_str(&word);
                    out.push('"');
                } else {
                    let literal = match word.as_str() {
                        "True" => "true",
                        "False" => "false",
                        "None" => "null",
                        other => other,
                    };
                    if literal != word {
                        repairs.push(Repair::PythonLiterals);
                    }
                    out.push_str(literal);
                }
            }
            _ => out.push(c),
        }
    }
    let rest = match end {
        Some(e) => &text[e..],
        None => {
            close_truncated(&mut out, depth, repairs)?;
            ""
        }
    };
    let value = crate::json::from_str(&out).map_err(|e| ActionError::Syntax {
        detail: e.to_string(),
    })?;
    Ok((value, rest))
}

/// Copies a string literal opened by `quote` (already consumed) as a double-quoted JSON string.
fn copy_string(
    quote: char,
    chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>,
    out: &mut String,
    repairs: &mut Vec<Repair>,
) -> Result<(), ActionError> {
    out.push('"');
    while let Some((_, c)) = chars.next() {
        match c {
            '\\' => match chars.next() {
                // `\'` is not a JSON escape; the apostrophe needs none.
                Some((_, '\'')) => out.push('\''),
                Some((_, e)) => {
                    out.push('\\');
                    out.push(e);
                }
                None => break,
            },
            c if c == quote => {
                out.push('"');
                return Ok(());
            }
            '"' => out.push_str("\\\""),
            // JSON forbids raw control characters in strings; models emit raw newlines and
            // tabs in multi-line text.
            c if c.is_control() => {
                repairs.push(Repair::RawControlInString);
                match c {
                    '\n' => out.push_str("\\n"),
                    '\t' => out.push_str("\\t"),
                    '\r' => out.push_str("\\r"),
                    c => out.push_str(&format!("\\u{:04x}", u32::from(c))),
                }
            }
            c => out.push(c),
        }
    }
    Err(ActionError::Truncated {
        place: "inside a string",
    })
}

fn drop_trailing_comma(out: &mut String, repairs: &mut Vec<Repair>) {
    let trimmed = out.trim_end().len();
    if out[..trimmed].ends_with(',') {
        out.truncate(trimmed - 1);
        repairs.push(Repair::TrailingComma);
    }
}

/// Adds the final `}` of an object cut off right after a complete value. A cut right after a
/// number is not repaired: `"element": 1` may have been `12` (after `1,` it may be).
/// `true`/`false`/`null` end in `e` or `l`; any other bare word fails to parse afterwards.
fn close_truncated(
    out: &mut String,
    depth: usize,
    repairs: &mut Vec<Repair>,
) -> Result<(), ActionError> {
    if depth != 1 {
        return Err(ActionError::Truncated {
            place: "inside a nested value",
        });
    }
    let complete = out.trim_end().ends_with([',', '"', 'e', 'l', '}', ']']);
    drop_trailing_comma(out, repairs);
    if !complete || out.trim_end().ends_with([':', '{']) {
        return Err(ActionError::Truncated {
            place: "before the object was complete",
        });
    }
    out.push('}');
    repairs.push(Repair::MissingClosingBrace);
    Ok(())
}

/// Field-level reading of a parsed object into an [`Action`].
fn from_value(value: &Value, repairs: &mut Vec<Repair>) -> Result<Action, ActionError> {
    let obj = value.as_object().ok_or(ActionError::NotAnObject {
        found: json_kind(value),
    })?;
    let raw_name = match obj.get("action") {
        Some(Value::String(s)) => s.as_str(),
        Some(other) => {
            return Err(ActionError::UnknownAction {
                name: other.to_string(),
            })
        }
        None => return Err(ActionError::MissingAction),
    };
    let name = canonical_name(raw_name);
    let Some(&name) = ACTION_NAMES
        .iter()
        .chain([&TOOL_ACTION, &LOOK_ACTION])
        .find(|n| **n == name)
    else {
        return Err(ActionError::UnknownAction {
            name: raw_name.to_owned(),
        });
    };
    if name != raw_name {
        repairs.push(Repair::ActionNameCase);
    }
    let f = Fields { obj, action: name };
    Ok(match name {
        "click" => match f.optional_u32("times", repairs)? {
            Some(times) if times > 1 => Action::ClickTimes {
                element: f.element(repairs)?,
                times: times.min(MAX_CLICK_TIMES),
            },
            _ => Action::Click {
                element: f.element(repairs)?,
            },
        },
        "type" => Action::Type {
            element: f.element(repairs)?,
            text: f.string("text", "the text to enter", repairs)?,
            clear: f.boolean("clear", repairs)?.unwrap_or(true),
            submit: f.boolean("submit", repairs)?.unwrap_or(false),
        },
        "select_option" => Action::SelectOption {
            element: f.element(repairs)?,
            option: f.string("option", "the option's value or visible text", repairs)?,
            mode: match obj.get("mode") {
                None | Some(Value::Null) => SelectMode::Replace,
                Some(Value::String(s)) if s.eq_ignore_ascii_case("add") => SelectMode::Add,
                Some(Value::String(s)) if s.eq_ignore_ascii_case("remove") => SelectMode::Remove,
                Some(Value::String(s)) if s.eq_ignore_ascii_case("replace") => SelectMode::Replace,
                Some(other) => return Err(f.invalid("mode", "\"add\" or \"remove\"", other)),
            },
        },
        "scroll" => {
            let element = f.optional_u32("element", repairs)?;
            let direction = match obj.get("direction") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => match s.trim().to_ascii_lowercase().as_str() {
                    "up" => Some(ScrollDirection::Up),
                    "down" => Some(ScrollDirection::Down),
                    "end" | "bottom" => Some(ScrollDirection::End),
                    _ => {
                        return Err(f.invalid(
                            "direction",
                            "\"up\", \"down\" or \"end\"",
                            &obj["direction"],
                        ))
                    }
                },
                Some(other) => {
                    return Err(f.invalid("direction", "\"up\", \"down\" or \"end\"", other))
                }
            };
            match (direction, element) {
                (Some(d), Some(e)) => Action::Scroll {
                    target: ScrollTarget::Inside(e, d),
                },
                (Some(d), None) => Action::Scroll {
                    target: ScrollTarget::Page(d),
                },
                (None, Some(e)) => Action::Scroll {
                    target: ScrollTarget::Element(e),
                },
                (None, None) => {
                    return Err(f.missing(
                        "direction",
                        "\"up\", \"down\" or \"end\" (or an \"element\" to scroll to)",
                    ))
                }
            }
        }
        "press" => {
            let key = f.string("key", "a key or chord such as Escape or Control+A", repairs)?;
            let key = key.trim();
            if key.is_empty() || key.chars().count() > MAX_KEY_CHARS {
                return Err(f.invalid(
                    "key",
                    "a key or chord such as Escape or Control+A",
                    &obj["key"],
                ));
            }
            // Without an element, the key goes to what has focus, as a person's would; the
            // worker names that element before any check (`keys::aim_at_focus`), so that the
            // approval for what Enter activates (a "Pay now" button) applies.
            let element = f.optional_u32("element", repairs)?;
            Action::Press {
                element,
                key: key.to_owned(),
            }
        }
        "hover" => Action::Hover {
            element: f.element(repairs)?,
        },
        "context_click" => Action::ContextClick {
            element: f.element(repairs)?,
        },
        "drag" => {
            let element = f.element(repairs)?;
            let to = match f.optional_u32("to", repairs)? {
                Some(t) => DragTarget::Element(t),
                None if obj.get("path").is_some_and(|p| !p.is_null()) => {
                    DragTarget::Path(f.path()?)
                }
                None => {
                    let dx = f.optional_i32("dx", repairs)?;
                    let dy = f.optional_i32("dy", repairs)?;
                    if dx.is_none() && dy.is_none() {
                        return Err(f.missing(
                            "to",
                            "the [number] of the element to drop on (or \"dx\"/\"dy\" in pixels)",
                        ));
                    }
                    DragTarget::Offset {
                        dx: dx.unwrap_or(0),
                        dy: dy.unwrap_or(0),
                    }
                }
            };
            Action::Drag { element, to }
        }
        "set_value" => Action::SetValue {
            element: f.element(repairs)?,
            value: f.number_text("value", repairs)?,
        },
        "select_text" => {
            let text = f.string(
                "text",
                "the passage to select, as the page shows it",
                repairs,
            )?;
            if text.trim().is_empty() {
                return Err(f.missing("text", "the passage to select, as the page shows it"));
            }
            Action::SelectText {
                element: f.optional_u32("element", repairs)?,
                text,
            }
        }
        // Without an element, x and y are pixels of the screenshot the turn carried.
        "click_at" => match f.optional_u32("element", repairs)? {
            Some(element) => Action::ClickAt {
                element,
                x: f.fraction("x", repairs)?,
                y: f.fraction("y", repairs)?,
            },
            None => Action::ClickPoint {
                x: f.pixel("x", repairs)?,
                y: f.pixel("y", repairs)?,
            },
        },
        LOOK_ACTION => Action::Look,
        "navigate" => Action::Navigate {
            url: f.url(repairs)?,
        },
        "open_tab" => Action::OpenTab {
            url: f.url(repairs)?,
        },
        "back" => Action::Back,
        "close_tab" => Action::CloseTab,
        "switch_tab" => Action::SwitchTab {
            tab: f
                .optional_u32("tab", repairs)?
                .ok_or(f.missing("tab", "the tab's number in the tab list"))?,
        },
        "extract_text" => Action::ExtractText {
            element: f.optional_u32("element", repairs)?,
        },
        "wait" => {
            let text = match obj.get("text") {
                None | Some(Value::Null) => None,
                Some(_) => Some(f.string("text", "the text to wait for", repairs)?)
                    .filter(|t| !t.trim().is_empty()),
            };
            let ms = match (f.optional_u32("ms", repairs)?, &text) {
                (Some(ms), _) => ms,
                (None, Some(_)) => DEFAULT_TEXT_WAIT_MS,
                (None, None) => return Err(f.missing("ms", "milliseconds to wait")),
            };
            if ms > MAX_WAIT_MS {
                repairs.push(Repair::WaitShortened);
            }
            Action::Wait {
                ms: ms.min(MAX_WAIT_MS),
                text,
            }
        }
        "ask_user" => {
            let question = f.string("question", "the question for the user", repairs)?;
            if question.trim().is_empty() {
                return Err(f.missing("question", "the question for the user"));
            }
            Action::AskUser { question }
        }
        TOOL_ACTION => Action::Tool {
            name: {
                let name = f.string("tool", "the name of one of the tools listed", repairs)?;
                if name.trim().is_empty() {
                    return Err(f.missing("tool", "the name of one of the tools listed"));
                }
                name.trim().to_owned()
            },
            arguments: f.arguments(repairs)?,
        },
        _ => Action::Done {
            success: f
                .boolean("success", repairs)?
                .ok_or(f.missing("success", "true or false"))?,
            answer: match obj.get("answer") {
                None | Some(Value::Null) => None,
                Some(_) => Some(f.string("answer", "the result", repairs)?),
            },
        },
    })
}

/// `selectOption`, `Select-Option`, `select option` → `select_option`.
fn canonical_name(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len() + 4);
    for (i, c) in raw.trim().chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 && !out.ends_with('_') {
            out.push('_');
        }
        match c {
            '-' | ' ' => out.push('_'),
            c => out.push(c.to_ascii_lowercase()),
        }
    }
    out
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Typed access to the fields of one action object, with errors naming the action.
struct Fields<'v> {
    obj: &'v Map<String, Value>,
    action: &'static str,
}

impl Fields<'_> {
    fn missing(&self, field: &'static str, hint: &'static str) -> ActionError {
        ActionError::MissingField {
            action: self.action,
            field,
            hint,
        }
    }

    fn invalid(&self, field: &'static str, expected: &'static str, found: &Value) -> ActionError {
        let found = match found {
            Value::String(s) => format!("\"{}\"", s.chars().take(40).collect::<String>()),
            other => json_kind(other).to_owned(),
        };
        ActionError::InvalidField {
            action: self.action,
            field,
            expected,
            found,
        }
    }

    fn element(&self, repairs: &mut Vec<Repair>) -> Result<u32, ActionError> {
        self.optional_u32("element", repairs)?
            .ok_or(self.missing("element", "the [number] of an element in the list"))
    }

    /// A non-negative integer; `12.0`, `"12"`, `"[12]"` and `"#12"` are read as 12.
    fn optional_u32(
        &self,
        field: &'static str,
        repairs: &mut Vec<Repair>,
    ) -> Result<Option<u32>, ActionError> {
        let expected = "a non-negative whole number";
        match self.obj.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(v @ Value::Number(n)) => {
                let whole = n.as_u64().or_else(|| {
                    n.as_f64()
                        .filter(|f| f.fract() == 0.0 && *f >= 0.0)
                        .map(|f| f as u64)
                });
                whole
                    .and_then(|w| u32::try_from(w).ok())
                    .map(Some)
                    .ok_or_else(|| self.invalid(field, expected, v))
            }
            Some(v @ Value::String(s)) => {
                let t = s.trim();
                let inner = t
                    .strip_prefix('[')
                    .and_then(|t| t.strip_suffix(']'))
                    .unwrap_or(t);
                let inner = inner.strip_prefix('#').unwrap_or(inner).trim();
                let n = inner
                    .parse::<u32>()
                    .map_err(|_| self.invalid(field, expected, v))?;
                repairs.push(Repair::QuotedScalar);
                Ok(Some(n))
            }
            Some(v) => Err(self.invalid(field, expected, v)),
        }
    }

    /// A whole number that may be negative (a drag's offset); `"-40"` is read as -40.
    fn optional_i32(
        &self,
        field: &'static str,
        repairs: &mut Vec<Repair>,
    ) -> Result<Option<i32>, ActionError> {
        let expected = "a whole number of pixels";
        match self.obj.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(v @ Value::Number(n)) => n
                .as_i64()
                .or_else(|| n.as_f64().map(|f| f.round() as i64))
                .and_then(|w| i32::try_from(w).ok())
                .map(Some)
                .ok_or_else(|| self.invalid(field, expected, v)),
            Some(v @ Value::String(s)) => {
                let n = s
                    .trim()
                    .trim_end_matches("px")
                    .parse::<i32>()
                    .map_err(|_| self.invalid(field, expected, v))?;
                repairs.push(Repair::QuotedScalar);
                Ok(Some(n))
            }
            Some(v) => Err(self.invalid(field, expected, v)),
        }
    }

    /// A drag's path: 2 to [`MAX_PATH_POINTS`] points of pixels (rounded), written flat as
    /// the schema asks (`"10,10 60,10 60,60"`, SVG's `points` form) or as `[[10,10],…]`.
    fn path(&self) -> Result<Vec<[i32; 2]>, ActionError> {
        const EXPECTED: &str = "points \"x,y x,y …\" in pixels, at least two";
        let v = &self.obj["path"];
        let pixel = |f: f64| (f.is_finite() && f.abs() < 100_000.0).then(|| f.round() as i32);
        let points: Option<Vec<[i32; 2]>> = match v {
            Value::String(s) => s
                .split_whitespace()
                .map(|pair| {
                    let (x, y) = pair.trim_matches(['(', ')', '[', ']']).split_once(',')?;
                    Some([pixel(parse_f64(x.trim())?)?, pixel(parse_f64(y.trim())?)?])
                })
                .collect(),
            Value::Array(items) => items
                .iter()
                .map(|p| match p.as_array().map(Vec::as_slice) {
                    Some([x, y]) => Some([pixel(x.as_f64()?)?, pixel(y.as_f64()?)?]),
                    _ => None,
                })
                .collect(),
            _ => None,
        };
        points
            .filter(|p| (2..=MAX_PATH_POINTS).contains(&p.len()))
            .ok_or_else(|| self.invalid("path", EXPECTED, v))
    }

    /// A fraction of a box from 0 to 1, in thousandths (`0.25` → 250).
    fn fraction(&self, field: &'static str, repairs: &mut Vec<Repair>) -> Result<u16, ActionError> {
        let expected = "a fraction from 0 to 1";
        let v = self
            .obj
            .get(field)
            .filter(|v| !v.is_null())
            .ok_or(self.missing(field, "a fraction of the element's box from 0 to 1"))?;
        let f = match v {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => {
                repairs.push(Repair::QuotedScalar);
                parse_f64(s.trim())
            }
            _ => None,
        };
        match f {
            Some(f) if (0.0..=1.0).contains(&f) => Ok((f * 1000.0).round() as u16),
            _ => Err(self.invalid(field, expected, v)),
        }
    }

    /// A pixel of the screenshot: a non-negative number, rounded (`412.6` → 413).
    fn pixel(&self, field: &'static str, repairs: &mut Vec<Repair>) -> Result<u32, ActionError> {
        let expected = "a pixel of the screenshot (a whole number from 0)";
        let v = self
            .obj
            .get(field)
            .filter(|v| !v.is_null())
            .ok_or(self.missing(
                field,
                "pixels of the screenshot from its top-left corner (or an \"element\")",
            ))?;
        let f = match v {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => {
                repairs.push(Repair::QuotedScalar);
                parse_f64(s.trim().trim_end_matches("px"))
            }
            _ => None,
        };
        match f {
            // `as` saturates; the value is finite and non-negative.
            Some(f) if f.is_finite() && f >= 0.0 => Ok(f.round() as u32),
            _ => Err(self.invalid(field, expected, v)),
        }
    }

    /// A number, kept as the text the model wrote (`30`, `"7.5"`): the page's slider reads it.
    fn number_text(
        &self,
        field: &'static str,
        repairs: &mut Vec<Repair>,
    ) -> Result<String, ActionError> {
        let expected = "a number";
        match self.obj.get(field) {
            Some(Value::Number(n)) => Ok(n.to_string()),
            Some(v @ Value::String(s)) => {
                let t = s.trim();
                if parse_f64(t).is_some_and(f64::is_finite) {
                    repairs.push(Repair::QuotedScalar);
                    Ok(t.to_owned())
                } else {
                    Err(self.invalid(field, expected, v))
                }
            }
            None | Some(Value::Null) => Err(self.missing(field, "the slider's new value")),
            Some(v) => Err(self.invalid(field, expected, v)),
        }
    }

    /// A string; a number is accepted as its decimal text (`"text": 75001` for a postcode).
    fn string(
        &self,
        field: &'static str,
        hint: &'static str,
        repairs: &mut Vec<Repair>,
    ) -> Result<String, ActionError> {
        match self.obj.get(field) {
            Some(Value::String(s)) => Ok(s.clone()),
            // A whole number has one spelling, so its text is what the model wrote (a zip
            // code typed as 75001). Any other number would be spelled anew (`9E9` as
            // `9000000000.0`, `1.50` as `1.5`): text the reply never contained.
            Some(Value::Number(n)) if n.is_i64() || n.is_u64() => {
                repairs.push(Repair::QuotedScalar);
                Ok(n.to_string())
            }
            None | Some(Value::Null) => Err(self.missing(field, hint)),
            Some(v) => Err(self.invalid(field, "a string in double quotes", v)),
        }
    }

    fn url(&self, repairs: &mut Vec<Repair>) -> Result<String, ActionError> {
        let url = self.string("url", "an absolute http(s) URL", repairs)?;
        let url = url.trim();
        if url.is_empty() {
            return Err(self.missing("url", "an absolute http(s) URL"));
        }
        if looks_like_host_first(url) {
            repairs.push(Repair::SchemeAdded);
            return Ok(format!("https://{url}"));
        }
        Ok(url.to_owned())
    }

    /// A tool's arguments: a JSON object. Nothing (or null) is no arguments; an object
    /// written as a JSON string (`"arguments": "{\"url\": …}"`, which models trained on
    /// OpenAI's wire format send) is read as that object.
    fn arguments(&self, repairs: &mut Vec<Repair>) -> Result<Value, ActionError> {
        let expected = "a JSON object of the tool's arguments";
        match self.obj.get("arguments") {
            None | Some(Value::Null) => Ok(Value::Object(Map::new())),
            Some(v @ Value::Object(_)) => Ok(v.clone()),
            Some(v @ Value::String(s)) => match crate::json::from_str::<Value>(s) {
                Ok(o @ Value::Object(_)) => {
                    repairs.push(Repair::QuotedScalar);
                    Ok(o)
                }
                _ => Err(self.invalid("arguments", expected, v)),
            },
            Some(v) => Err(self.invalid("arguments", expected, v)),
        }
    }

    /// A boolean; the strings "true" and "false" are accepted.
    fn boolean(
        &self,
        field: &'static str,
        repairs: &mut Vec<Repair>,
    ) -> Result<Option<bool>, ActionError> {
        match self.obj.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(Value::String(s))
                if s.eq_ignore_ascii_case("true") || s.eq_ignore_ascii_case("false") =>
            {
                repairs.push(Repair::QuotedScalar);
                Ok(Some(s.eq_ignore_ascii_case("true")))
            }
            Some(v) => Err(self.invalid(field, "true or false", v)),
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_json().to_string())
    }
}

/// The types [`FLAT_SCHEMA`] is generated from. Only native tests build their schema.
/// Whether `key` (a key or chord as `press` takes it) activates the focused control.
pub(crate) fn activates(key: &str) -> bool {
    let last = key.rsplit('+').next().unwrap_or(key).trim();
    ["enter", "return", "space", " ", "spacebar"]
        .iter()
        .any(|k| last.eq_ignore_ascii_case(k))
}

#[cfg(test)]
mod flat_schema_source {
    use super::{ScrollDirection, MAX_WAIT_MS};
    use serde_json::{Map, Value};

    // The action's name, as the flat object's `action` field spells it (in the order of
    // `ACTION_NAMES`). Plain comments, not doc comments: schemars would send those to the model.
    #[derive(schemars::JsonSchema)]
    #[serde(rename_all = "snake_case")]
    #[allow(dead_code)] // Only its schema is used: `parse_action` reads replies leniently itself.
    enum ActionName {
        Click,
        Type,
        SelectOption,
        Scroll,
        Press,
        Hover,
        Drag,
        SetValue,
        SelectText,
        ClickAt,
        Navigate,
        Back,
        OpenTab,
        SwitchTab,
        CloseTab,
        ExtractText,
        Wait,
        AskUser,
        Done,
        ContextClick,
        Tool,
    }

    // The navigator's answer as one FLAT object: a derived tagged enum would nest, the shape
    // small models fail on. Per-action requirements live in the field descriptions (the doc
    // comments), where a model reads them; `parse_action` enforces them.
    #[derive(schemars::JsonSchema)]
    #[schemars(
        description = "Exactly one browser action. Only the fields the chosen action uses may be set."
    )]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)] // Only its schema is used, as above.
    struct FlatAction {
        action: ActionName,
        #[doc = "The [number] of an element in the list. Required by click, type, select_option, hover, drag, set_value, click_at, context_click (a right click: the page's own context menu); optional for press (else the focused element), scroll (alone: into view; with direction: inside it), extract_text (else the whole page) and select_text (else the passage is found in the page's text)."]
        #[serde(default)]
        element: u32,
        /// type: the text to enter; select_text: the passage to select; wait: wait until it is on the page.
        #[serde(default)]
        text: String,
        /// type: empty the field first (default true).
        #[serde(default)]
        clear: bool,
        /// type: submit the form afterwards (default false).
        #[serde(default)]
        submit: bool,
        /// select_option: the option's value or visible text.
        #[serde(default)]
        option: String,
        /// select_option in a multi-select: add to or remove from the selection (default: replace it).
        #[serde(default = "replace")]
        mode: SelectModeName,
        /// scroll: one screen up or down, or to the end.
        #[serde(default = "down")]
        direction: ScrollDirection,
        /// press: a key or chord, e.g. Escape, Enter, Tab, ArrowDown, PageDown, Control+A.
        #[serde(default)]
        key: String,
        /// drag: the [number] of the element to drop it on.
        #[serde(default)]
        to: u32,
        /// drag (instead of to): pixels to the right (negative: left).
        #[serde(default)]
        dx: i32,
        /// drag (instead of to): pixels down (negative: up).
        #[serde(default)]
        dy: i32,
        /// set_value: the slider's new value.
        #[serde(default)]
        value: f64,
        /// click_at: where across the element's box, 0 (left) to 1 (right).
        #[serde(default)]
        #[schemars(range(min = 0, max = 1))]
        x: f64,
        /// click_at: where down the element's box, 0 (top) to 1 (bottom).
        #[serde(default)]
        #[schemars(range(min = 0, max = 1))]
        y: f64,
        /// navigate, open_tab: an absolute http(s) URL.
        #[serde(default)]
        url: String,
        /// switch_tab: the tab's number in the tab list.
        #[serde(default)]
        tab: u32,
        /// wait: milliseconds; the result says what changed meanwhile.
        #[serde(default)]
        #[schemars(range(max = MAX_WAIT_MS))]
        ms: u32,
        /// ask_user: the question for the user.
        #[serde(default)]
        question: String,
        /// done: whether the task was accomplished (required).
        #[serde(default)]
        success: bool,
        /// done: the result, or what went wrong.
        #[serde(default)]
        answer: String,
        /// tool: the name of one of the tools listed.
        #[serde(default)]
        tool: String,
        /// tool: the tool's arguments, matching its parameters.
        #[serde(default)]
        arguments: Map<String, Value>,
        /// drag (instead of to): points "x,y x,y …" in pixels from the element's top-left, to draw or trace a line.
        #[serde(default)]
        path: String,
        /// click: click it this many times quickly, finding it again each time (a moving target).
        #[serde(default)]
        #[schemars(range(min = 1, max = 50))]
        times: u32,
    }

    // How select_option treats a multi-select's other options.
    #[derive(schemars::JsonSchema, serde::Serialize)]
    #[serde(rename_all = "snake_case")]
    #[allow(dead_code)] // Only its schema is used, as above.
    enum SelectModeName {
        Replace,
        Add,
        Remove,
    }

    fn replace() -> SelectModeName {
        SelectModeName::Replace
    }

    fn down() -> ScrollDirection {
        ScrollDirection::Down
    }

    /// [`FlatAction`]'s schema as the model reads it: no Rust type name, and no serde
    /// defaults or integer formats, which only restate the types (and every token of it is
    /// sent once per task).
    fn generated() -> Value {
        let mut schema = crate::session::schema_for::<FlatAction>().json().clone();
        if let Some(top) = schema.as_object_mut() {
            top.remove("title");
        }
        if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
            for p in props.values_mut().filter_map(Value::as_object_mut) {
                p.remove("default");
                p.remove("format");
            }
        }
        schema
    }

    #[test]
    fn the_flat_schema_is_what_flat_action_generates() {
        let generated = generated();
        assert_eq!(
            super::flat_schema(),
            generated,
            "FLAT_SCHEMA is out of date; paste this:\n{}",
            serde_json::to_string(&generated).unwrap_or_default()
        );
    }

    /// The model's description of the schema is what the parser reads: every action the
    /// parser takes has a line; each line's fields are the schema's, and every field is on
    /// some line; an answer with a line's required fields (those before any `or`, without
    /// `?`) is read as that action, and so is one with each optional field added.
    #[test]
    fn every_action_line_is_what_the_parser_reads() {
        let tools = ["tandem_tabs__tab_open".to_string()];
        let schema = super::action_schema_for(&tools, true);
        let props = schema["properties"].as_object().expect("properties");
        let offered: Vec<&str> = schema["properties"]["action"]["enum"]
            .as_array()
            .expect("enum")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let every: Vec<&str> = super::ACTION_NAMES
            .iter()
            .copied()
            .chain([super::TOOL_ACTION, super::LOOK_ACTION])
            .collect();
        assert_eq!(offered.len(), every.len());
        let sample = |field: &str| -> Value {
            match field {
                "element" | "to" | "tab" => 3.into(),
                "x" | "y" => 0.5.into(),
                "dx" | "dy" | "ms" | "value" => 10.into(),
                "times" => 3.into(),
                "path" => "0,0 10,10 20,0".into(),
                "clear" | "submit" | "success" => true.into(),
                "key" => "Escape".into(),
                "direction" => "down".into(),
                "mode" => "add".into(),
                "url" => "https://shop.example/".into(),
                "tool" => tools[0].as_str().into(),
                "arguments" => crate::json!({}),
                _ => "words".into(),
            }
        };
        let mut mentioned = std::collections::BTreeSet::new();
        for &name in &every {
            assert!(offered.contains(&name), "{name} is not in the schema");
            let line = super::action_line(name)
                .unwrap_or_else(|| panic!("{name} has no line in action_line"));
            // Meanings in brackets are words, not fields.
            let mut bare = String::new();
            let mut depth = 0;
            for c in line.chars() {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    c if depth == 0 => bare.push(c),
                    _ => {}
                }
            }
            let mut required = serde_json::Map::new();
            let mut optional = Vec::new();
            let mut first = true;
            for word in bare.split_whitespace() {
                match word {
                    "or" => first = false,
                    "both" => {}
                    word => {
                        let field = word.trim_end_matches('?');
                        assert!(props.contains_key(field), "{field} of {name} is no field");
                        mentioned.insert(field.to_string());
                        if first && !word.ends_with('?') {
                            required.insert(field.into(), sample(field));
                        } else {
                            optional.push(field);
                        }
                    }
                }
            }
            required.insert("action".into(), name.into());
            let read = |object: &serde_json::Map<String, Value>| {
                super::parse_action(&Value::Object(object.clone()).to_string())
                    .map(|p| p.action.to_json()["action"].clone())
            };
            let expected = if name == "click_at" && !required.contains_key("element") {
                "click_at"
            } else {
                name
            };
            assert_eq!(read(&required), Ok(expected.into()), "{name}: {line}");
            for field in optional {
                let mut with = required.clone();
                with.insert(field.into(), sample(field));
                assert_eq!(read(&with), Ok(expected.into()), "{name} with {field}");
            }
        }
        let fields: std::collections::BTreeSet<String> =
            props.keys().filter(|k| *k != "action").cloned().collect();
        assert_eq!(mentioned, fields, "fields on no action's line");
        // Each schema gets the lines of the actions it offers, and only those.
        let plain = super::describe_schema(&super::action_schema());
        assert!(plain.contains("\nhover element\n") && plain.contains("\nback\n"));
        assert!(!plain.contains("\ntool ") && !plain.contains("\nlook "));
        let seeing = super::describe_schema(&schema);
        assert!(seeing.contains("\ntool tool(") && seeing.lines().any(|l| l == "look"));
        assert_eq!(seeing.lines().count(), every.len() + 1);
    }
}

#[cfg(test)]
mod hands_parse_tests {
    use super::*;

    fn parse(reply: &str) -> Result<Action, String> {
        parse_action(reply)
            .map(|p| p.action)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn the_new_hands_are_read_and_their_mistakes_explained() {
        assert_eq!(
            parse(r#"{"action":"drag","element":3,"to":"[7]"}"#),
            Ok(Action::Drag {
                element: 3,
                to: DragTarget::Element(7)
            })
        );
        assert_eq!(
            parse(r#"{"action":"drag","element":3,"dx":-40}"#),
            Ok(Action::Drag {
                element: 3,
                to: DragTarget::Offset { dx: -40, dy: 0 }
            })
        );
        assert!(parse(r#"{"action":"drag","element":3}"#).is_err_and(|e| e.contains("\"to\"")));
        assert_eq!(
            parse(r#"{"action":"scroll","element":5,"direction":"bottom"}"#),
            Ok(Action::Scroll {
                target: ScrollTarget::Inside(5, ScrollDirection::End)
            })
        );
        assert_eq!(
            parse(r#"{"action":"scroll","direction":"end"}"#),
            Ok(Action::Scroll {
                target: ScrollTarget::Page(ScrollDirection::End)
            })
        );
        assert_eq!(
            parse(r#"{"action":"click_at","element":2,"x":0.25,"y":"1"}"#),
            Ok(Action::ClickAt {
                element: 2,
                x: 250,
                y: 1000
            })
        );
        assert!(parse(r#"{"action":"click_at","element":2,"x":120,"y":40}"#)
            .is_err_and(|e| e.contains("a fraction from 0 to 1")));
        assert!(parse(r#"{"action":"press","key":"   "}"#).is_err());
        assert_eq!(
            parse(r#"{"action":"press","key":"Enter"}"#),
            Ok(Action::Press {
                element: None,
                key: "Enter".into()
            }),
            "the focused element's, as the schema says"
        );
        assert_eq!(
            parse(r#"{"action":"press","key":" Escape "}"#),
            Ok(Action::Press {
                element: None,
                key: "Escape".into()
            })
        );
        assert_eq!(
            parse(r#"{"action":"set_value","element":4,"value":"7.5"}"#),
            Ok(Action::SetValue {
                element: 4,
                value: "7.5".into()
            })
        );
        assert!(parse(r#"{"action":"set_value","element":4,"value":"max"}"#).is_err());
        // A path, flat as the schema asks or as pairs; a click repeated on a moving target.
        let loop_path = Action::Drag {
            element: 2,
            to: DragTarget::Path(vec![[10, 10], [60, 10], [10, 10]]),
        };
        assert_eq!(
            parse(r#"{"action":"drag","element":2,"path":"10,10 60,10 10,10"}"#),
            Ok(loop_path.clone())
        );
        assert_eq!(
            parse(r#"{"action":"drag","element":2,"path":[[10,10],[60.2,10],[10,10]]}"#),
            Ok(loop_path)
        );
        assert!(parse(r#"{"action":"drag","element":2,"path":"10,10"}"#).is_err());
        assert!(parse(r#"{"action":"drag","element":2,"path":"a,b c,d"}"#).is_err());
        assert_eq!(
            parse(r#"{"action":"click","element":5,"times":10}"#),
            Ok(Action::ClickTimes {
                element: 5,
                times: 10
            })
        );
        assert_eq!(
            parse(r#"{"action":"click","element":5,"times":1}"#),
            Ok(Action::Click { element: 5 })
        );
        assert_eq!(
            parse(r#"{"action":"click","element":5,"times":500}"#),
            Ok(Action::ClickTimes {
                element: 5,
                times: MAX_CLICK_TIMES
            })
        );
        assert_eq!(
            parse(r#"{"action":"wait","text":"Report ready"}"#),
            Ok(Action::Wait {
                ms: DEFAULT_TEXT_WAIT_MS,
                text: Some("Report ready".into())
            })
        );
        assert_eq!(
            parse(r#"{"action":"select_option","element":1,"option":"Olives","mode":"ADD"}"#),
            Ok(Action::SelectOption {
                element: 1,
                option: "Olives".into(),
                mode: SelectMode::Add
            })
        );
        assert!(
            parse(r#"{"action":"select_option","element":1,"option":"x","mode":"toggle"}"#)
                .is_err()
        );
        assert!(parse(r#"{"action":"select_text","element":1,"text":" "}"#).is_err());
    }
}
