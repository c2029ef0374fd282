//! What `extension/content/driver.js` returns, field for field: `snapshot(opts)` gives a
//! [`Snapshot`], `act(handle, command)` takes a [`DriverCommand`] and gives an [`ActResult`].
//! Change both sides together; the fixtures in `tests/data/agent/` are real driver output.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

mod read;

/// One observation of a document (the top frame plus its same-origin iframes). Read by hand
/// (`snapshot/read.rs`).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    /// Random per driver instance: a new page gets a new one, so handles never collide.
    pub doc_id: String,
    pub url: String,
    pub title: String,
    pub scroll: Point,
    pub viewport: Size,
    /// The scrollable size of the document.
    pub page: Size,
    /// Every iframe met, same-origin or not; cross-origin ones need their own driver call.
    pub frames: Vec<FrameInfo>,
    pub elements: Vec<Element>,
    /// The driver stopped early (`maxElements` / `maxNodes`).
    pub truncated: bool,
    /// The page's visible text, only when asked for with `maxText`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// A digest of the page's text and field values: two snapshots with the same list but a
    /// different digest show a page that changed (a new number after "Generate").
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text_digest: String,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub x: f64,
    pub y: f64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Size {
    pub width: f64,
    pub height: f64,
}

/// A box in the top document's viewport coordinates (iframe offsets already added).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FrameInfo {
    /// Index of the iframe among its document's iframes, from the top document down.
    pub path: Vec<u32>,
    pub url: String,
    /// Same-origin: its elements are in this snapshot, with this `path` as their `frame`.
    /// A cross-origin frame merged with [`Snapshot::merge_frame`] becomes accessible too.
    pub accessible: bool,
    /// The iframe's content box in the top document's coordinates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bbox: Option<Rect>,
    /// Chrome's `frameId` of a merged cross-origin frame: its elements' handles carry it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_id: Option<u32>,
}

/// Prefix of the handles of elements read by a cross-origin frame's own driver.
const FRAME_PREFIX: char = 'f';

/// The Chrome frame that owns `handle` (`None`: the top frame) and the handle as that frame's
/// driver knows it.
pub fn frame_of_handle(handle: &str) -> (Option<u32>, &str) {
    handle
        .strip_prefix(FRAME_PREFIX)
        .and_then(|rest| rest.split_once(':'))
        .and_then(|(id, local)| id.parse().ok().map(|id| (Some(id), local)))
        .unwrap_or((None, handle))
}

/// The origin part of a URL (`http://localhost:8080`), for matching a frame to its iframe.
fn origin_of(url: &str) -> &str {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    url[after_scheme..]
        .find(['/', '?', '#'])
        .map_or(url, |end| &url[..after_scheme + end])
}

impl Snapshot {
    /// Adds what the driver of cross-origin frame `frame_id` saw (`sub`, in that frame's
    /// coordinates) to this snapshot, placed at the iframe of the same URL (else the same
    /// origin) that no frame filled yet. Elements get the iframe's path as their `frame`, boxes
    /// in top-document coordinates, and handles that name the frame ([`frame_of_handle`]).
    /// Returns false (and changes nothing) when no unfilled cross-origin iframe matches:
    /// same-origin frames are read by their parent's driver and are never merged twice.
    pub fn merge_frame(&mut self, frame_id: u32, sub: Snapshot) -> bool {
        let unfilled = |f: &FrameInfo| !f.accessible && f.frame_id.is_none();
        let slot = self
            .frames
            .iter()
            .position(|f| unfilled(f) && f.url == sub.url)
            .or_else(|| {
                self.frames
                    .iter()
                    .position(|f| unfilled(f) && origin_of(&f.url) == origin_of(&sub.url))
            });
        let Some(slot) = slot else {
            return false;
        };
        let (path, offset) = {
            let frame = &mut self.frames[slot];
            frame.accessible = true;
            frame.frame_id = Some(frame_id);
            frame.url = sub.url.clone();
            (frame.path.clone(), frame.bbox.unwrap_or_default())
        };
        let viewport = self.viewport;
        let base = self.elements.len();
        for mut f in sub.frames {
            f.path = path.iter().chain(&f.path).copied().collect();
            if let Some(b) = f.bbox.as_mut() {
                b.x += offset.x;
                b.y += offset.y;
            }
            self.frames.push(f);
        }
        for mut el in sub.elements {
            el.handle = format!("{FRAME_PREFIX}{frame_id}:{}", el.handle);
            el.frame = path.iter().chain(&el.frame).copied().collect();
            el.bbox.x += offset.x;
            el.bbox.y += offset.y;
            el.within = el.within.map(|i| i + base);
            let b = el.bbox;
            el.in_viewport = el.in_viewport
                && b.x < viewport.width
                && b.y < viewport.height
                && b.x + b.width > 0.0
                && b.y + b.height > 0.0;
            self.elements.push(el);
        }
        self.truncated |= sub.truncated;
        true
    }
}

/// A candidate element: anything with at least one [`Hint`] of interactivity.
///
/// A field at its default (no role, not disabled, not in a shadow root…) may be left out: the
/// driver leaves them out, since a large page's snapshot is ~1,500 elements, parsed every step.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Element {
    /// `<docId>.<n>`; the same DOM node keeps its handle across snapshots.
    pub handle: String,
    /// Path of the iframe holding it ([`FrameInfo::path`]); empty in the top document.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frame: Vec<u32>,
    /// Lowercase tag name.
    pub tag: String,
    /// The `role` attribute (first token), when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// The role the tag implies (`button`, `link`, `textbox`…), when it implies one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implicit_role: Option<String>,
    /// Accessible name (aria-labelledby, aria-label, labels, alt, value, content, title,
    /// placeholder), whitespace-collapsed and capped.
    #[serde(default)]
    pub name: String,
    /// Visible text (empty for form fields), collapsed and capped.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// Text of the nearest ancestor that has text besides the element's own (a product card's
    /// title and price): what tells identical buttons apart.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub context: String,
    /// id, name, type, placeholder, href, autocomplete, title, alt, aria-*, and `value` of
    /// fields that are neither passwords nor payment fields.
    #[serde(default)]
    pub attrs: BTreeMap<String, String>,
    pub bbox: Rect,
    /// Rendered with a non-empty box (off-screen elements are visible too).
    pub visible: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub in_viewport: bool,
    pub interactive: Vec<Hint>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub disabled: bool,
    /// A form field whose value cannot be edited (`readonly`); it can still be read, focused
    /// and copied, unlike a disabled one.
    #[serde(default, skip_serializing_if = "is_false")]
    pub readonly: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked: Option<Checked>,
    /// Index of the form owning it, numbered per snapshot: same number, same form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<u32>,
    /// `post` when submitting its form from here posts (the form's method, or a button's own
    /// `formmethod`); absent for a form that gets (a search) and outside forms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form_method: Option<String>,
    /// Inside an open shadow root.
    #[serde(default, skip_serializing_if = "is_false")]
    pub shadow: bool,
    /// The options of a `<select>`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<SelectOption>,
    /// In the viewport, but a person's pointer at any of its spots would land on something
    /// else lying on top of it (a banner, another panel).
    #[serde(default, skip_serializing_if = "is_false")]
    pub covered: bool,
    /// What covers it, as a person would name it (page words), when it is covered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub covered_by: Option<String>,
    /// Index in `elements` of the nearest listed element around this one (same document).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within: Option<usize>,
    /// Holds other listed elements and no text of its own besides theirs (an `li[role=tab]`
    /// around the link that switches the tab): a click on it lands on one of them.
    #[serde(default, skip_serializing_if = "is_false")]
    pub bare: bool,
    /// Form fields: what the field belongs to as a person would say it (the fieldset's legend,
    /// a named group or form, else the nearest heading before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Fields and submit buttons of a form that submits to another origin than their
    /// document: where it goes and how (absent for the usual same-origin form).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submits_to: Option<FormTarget>,
    /// A link's destination as the browser resolved it (`a.href`), when that is another
    /// origin than its document or it sits in a frame: what a click would open. The `href`
    /// attribute's text is no guide: `/\evil.example/x`, `\\evil.example` and (on an http
    /// page) `https:evil.example` all leave the site.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub links_to: Option<String>,
    /// The colour a person sees it in, as CSS computed it (`rgb(255, 0, 0)`): an SVG shape's
    /// fill, or the background of a box that shows no text. The list names the colour.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fill: Option<String>,
    /// Far from the viewport and outside any form, so described only by its handle, tag,
    /// role, box, hints and (a field) its group (no name, text, context, attributes or state):
    /// the list only counts such elements, and the driver describes one in full when asked to (`describeAll`),
    /// which the worker does before acting on it. See `DESCRIBED_BELOW` in the driver.
    #[serde(default, skip_serializing_if = "is_false")]
    pub brief: bool,
    /// In what is open now (an expanded control's popup and that control, a floating menu or
    /// listbox, a dialog), or focused: listed first when the list is cut for length.
    #[serde(default, skip_serializing_if = "is_false")]
    pub open: bool,
    /// Has keyboard focus: where a key pressed without an element goes.
    #[serde(default, skip_serializing_if = "is_false")]
    pub focused: bool,
    /// What the page shows of it beyond its name, for the list (see [`Facts`]).
    #[serde(flatten)]
    pub facts: Facts,
}

/// What tells a candidate apart where the DOM has no words for it: where it sits in a grid or
/// drawing, a mark a CSS image shows on it, a grip, a reaction to hover only.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Facts {
    /// A cell of a grid or table: its row and column (1-based, among the cells that are no
    /// headers) and their headers' text ("2 pm", "Tue") when the grid has them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell: Option<Cell>,
    /// A shape of a drawing: its centre inside the drawing, in percent across and down.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<(i32, i32)>,
    /// Its place among the look-alikes of its list (rank, how many), counted by the driver
    /// over all of them: far items are described briefly, without the name the list ranks by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub among: Option<(usize, usize)>,
    /// A CSS image on a named element (an X placed in a cell): the image's file-name words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shows: Option<String>,
    /// A text area a person can resize by its corner (which is no element of its own).
    #[serde(default, skip_serializing_if = "is_false")]
    pub resizable: bool,
    /// Listens only for the pointer passing over it: hovering it is what does something.
    #[serde(default, skip_serializing_if = "is_false")]
    pub hover_only: bool,
}

/// Where a cell sits in its grid (see [`Facts::cell`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cell {
    pub row: u32,
    pub column: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_header: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column_header: Option<String>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Element {
    /// The explicit role, else the implicit one.
    pub fn effective_role(&self) -> Option<&str> {
        self.role.as_deref().or(self.implicit_role.as_deref())
    }

    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs.get(name).map(String::as_str)
    }

    /// The `type` attribute, lowercased (`text` for inputs without one).
    pub fn input_type(&self) -> Option<String> {
        match (self.tag.as_str(), self.attr("type")) {
            (_, Some(t)) => Some(t.to_ascii_lowercase()),
            ("input", None) => Some("text".to_owned()),
            _ => None,
        }
    }

    pub fn is_interactive(&self) -> bool {
        !self.interactive.is_empty()
    }
}

/// Why the driver thinks an element can be acted on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Hint {
    /// A natively interactive tag (`a[href]`, button, input, select, textarea, summary…).
    Native,
    /// An interactive ARIA role attribute.
    Role,
    /// An `onclick` attribute.
    Onclick,
    /// A click, pointer or key listener added from script (`addEventListener`, `el.onclick =`),
    /// recorded in the page's world by `extension/content/listeners.js`.
    Listener,
    /// `tabindex` ≥ 0.
    Tabindex,
    /// `cursor: pointer` starting at this element.
    Pointer,
    /// The root of a contenteditable region.
    Editable,
    /// An item of a list that is itself a target (a pointer cursor on the `ul`, a listbox
    /// role): what a click on the list lands on.
    Item,
    /// What a person drags though it listens to nothing itself (its handlers on the document):
    /// `draggable`, a grab or move cursor, a handle's or resize grip's class.
    Drag,
}

/// aria-checked's three values; the driver reports native checkboxes the same way.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Checked {
    True,
    False,
    Mixed,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SelectOption {
    pub value: String,
    pub text: String,
    pub selected: bool,
}

/// The second argument of `act(handle, command)`; `handle` is `null` only for page scrolling.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "camelCase")]
pub enum DriverCommand {
    Click,
    Type {
        text: String,
        clear: bool,
        submit: bool,
    },
    /// Matches an option's value, then its text, then its text ignoring case. `mode`
    /// `add`/`remove`: a multi-select keeps its other options (absent: replace).
    Select {
        option: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mode: Option<String>,
    },
    /// A key or chord (`Escape`, `Control+A`); with a null handle, on what has focus.
    Press {
        key: String,
    },
    Hover,
    /// Drag the element onto the element of handle `to` (same frame), else by (`dx`, `dy`).
    Drag {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        to: Option<String>,
        dx: i32,
        dy: i32,
    },
    /// A slider's new value (native range, ARIA slider by keys, custom handle by drag).
    SetValue {
        value: String,
    },
    SelectText {
        text: String,
    },
    /// A click at (`x`, `y`) thousandths of the element's box.
    ClickAt {
        x: u16,
        y: u16,
    },
    /// Scroll the element's own contents.
    ScrollIn {
        direction: ScrollDirection,
    },
    /// Starts watching the element for a trusted repeat of an ignored action (answers at
    /// once); `Collect` then waits for the page to settle and says what changed, in the words
    /// of the action repeated (`of`).
    Observe,
    Collect {
        of: Box<DriverCommand>,
    },
    /// With a null handle: resolves once `text` is on the page, or after `ms`.
    WaitText {
        text: String,
        ms: u32,
    },
    /// With a handle: scroll the element into view. Without: a page up or down.
    Scroll {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        direction: Option<ScrollDirection>,
    },
    #[serde(rename_all = "camelCase")]
    Read {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_chars: Option<u32>,
    },
    Highlight {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ms: Option<u32>,
    },
    /// A right click (the page's context menu): `contextmenu` and the right button's events.
    ContextClick,
    /// Drag the element along `path`: points in pixels from its box's top-left corner.
    DragPath {
        path: Vec<[i32; 2]>,
    },
    /// Click the element `times` times, a frame apart, finding it again by its role and name
    /// before each click (a target that moves or is replaced after each hit).
    ClickTimes {
        times: u32,
    },
    /// With a null handle: watch the page for `ms` and say what changed, in order.
    Record {
        ms: u32,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ScrollDirection {
    Up,
    Down,
    // All the way to the end (the bottom). A plain comment: schemars would send a doc
    // comment to the model, splitting the enum.
    End,
}

/// What `act` returns. Success fields depend on the command; absent ones are `None`. (A
/// click, type or select asked to look also returns `look`, a snapshot's JSON; the worker's
/// wrapper in `agent/page.rs` takes it off before this is read.)
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ActResult {
    Failed(ActFailure),
    Done(ActSuccess),
}

// Dispatched on `ok` rather than by trying each shape: a failure carrying an error code this
// side does not know must never be read as a success.
impl<'de> Deserialize<'de> for ActResult {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let value = serde_json::Value::deserialize(deserializer)?;
        match value.get("ok") {
            Some(serde_json::Value::Bool(true)) => crate::json::from_value(value)
                .map(ActResult::Done)
                .map_err(D::Error::custom),
            Some(serde_json::Value::Bool(false)) => crate::json::from_value(value)
                .map(ActResult::Failed)
                .map_err(D::Error::custom),
            _ => Err(D::Error::custom("an act() result needs a boolean `ok`")),
        }
    }
}

impl ActResult {
    pub fn into_result(self) -> Result<ActSuccess, ActFailure> {
        match self {
            ActResult::Done(s) => Ok(s),
            ActResult::Failed(f) => Err(f),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActSuccess {
    /// Always `true`.
    pub ok: bool,
    /// click, type, select: what the page showed of the action's effects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changes: Option<Changes>,
    /// type: the field holds the typed text afterwards (typed inputs may refuse it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accepted: Option<bool>,
    /// select: the chosen option.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// select: the chosen option's text; read: the element's text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// page scroll: position afterwards and whether it moved or hit an end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scroll: Option<Point>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moved: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_top: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_bottom: Option<bool>,
    /// wait for text: whether the text appeared in time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found: Option<bool>,
    /// hover, drag, press: where the driver aimed, for a trusted repeat when the page
    /// ignored the action (top frame only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aim: Option<Aim>,
    /// drag onto a zone: whether the item ended inside it (absent: a sortable item, or the
    /// page replaced the item).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inside: Option<bool>,
    /// click_times: how many of the clicks found their target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clicks: Option<u32>,
    /// record (a plain wait): what changed during it, in order, each "what: how at 0.3 s".
    /// Page data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seen: Option<Vec<String>>,
}

/// What an action changed on the page, as the driver watched it until the page was quiet
/// (or briefly, when nothing happened). Every field absent: nothing visible changed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Changes {
    /// A new document started loading (a link followed, a form submitted).
    #[serde(default, skip_serializing_if = "is_false")]
    pub loading: bool,
    /// The URL afterwards, when it changed (same document: a hash, `pushState`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub title: bool,
    /// The role (else the tag) of the element focus moved to, when not the one acted on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focus: Option<String>,
    /// The acted-on element's own states that changed, with their new values.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub state: Vec<StateChange>,
    /// Other form fields whose value (or checked state) changed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub fields: u32,
    /// Elements added to and removed from the page.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub added: u32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub removed: u32,
    /// Changed attributes that show (class, style, hidden, open, aria states…).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub attributes: u32,
    /// Text added, removed or edited.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub text: u32,
    /// A click on a menu item changed nothing outside its menu (the menu only closed, or
    /// nothing changed): the page may take only a real pointer's click on its menu items.
    #[serde(default, skip_serializing_if = "is_false")]
    pub menu_only: bool,
    /// The dragged element's box or an SVG shape's transform changed: it moved.
    #[serde(default, skip_serializing_if = "is_false")]
    pub moved: bool,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// One state of the acted-on element: `checked`, `expanded`, `selected`, `open`, `value`,
/// `disabled`, with its value afterwards (`null`: the attribute went away).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateChange {
    pub name: String,
    pub value: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{error}: {message}")]
pub struct ActFailure {
    /// Always `false`.
    pub ok: bool,
    pub error: ActErrorCode,
    pub message: String,
    /// `covered`: what lies on top of the element.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<Cover>,
}

/// The element on top of a covered one: the outermost element at the hit point that does not
/// contain it (the cookie banner rather than a paragraph inside it). Page data.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cover {
    pub tag: String,
    pub role: Option<String>,
    pub name: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ActErrorCode {
    /// The element left the page, or the handle is from another page: snapshot again.
    StaleHandle,
    /// No such handle, or (select) no such option.
    NotFound,
    NotVisible,
    Disabled,
    /// A read-only field: its value cannot be typed over.
    ReadOnly,
    /// Something else lies on top of the element where a person would click: nothing was done.
    Covered,
    NotEditable,
    NotSelect,
    BadAction,
    /// The driver threw; the message is the exception's.
    Exception,
    /// Asked to act only on the page of the last snapshot, and the page changed since:
    /// nothing was done. Look again.
    Changed,
    /// A code from a newer driver.
    #[serde(other)]
    Unknown,
}

impl std::fmt::Display for ActErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The wire name, so logs read like the driver's output.
        let name = serde_json::to_value(self).ok();
        f.write_str(name.as_ref().and_then(|v| v.as_str()).unwrap_or("unknown"))
    }
}

/// Where a form sends its fields, as the driver reports it for the form's fields and submit
/// buttons, only when it is another origin than their document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FormTarget {
    /// The resolved `action` (or the button's `formaction`).
    pub url: String,
    /// `get` or `post`, lowercase.
    pub method: String,
}

/// Where the driver aimed an action the page ignored, in CSS pixels of the top frame's
/// viewport: the element's point, and a drag's end.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Aim {
    pub from: [f64; 2],
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<[f64; 2]>,
    /// A drag of an element the page made draggable (HTML5 drag-and-drop): the browser's own
    /// drag is intercepted (`Input.setInterceptDrags`) and replayed with its data.
    #[serde(default)]
    pub html5: bool,
}

#[cfg(test)]
mod tests {
    use super::{Cell, Element, Facts, Rect};

    /// An element as the driver writes it today, facts beside its other fields: every key is
    /// read where it was read with `#[serde(flatten)]`, and a key neither knows is skipped.
    #[test]
    fn an_element_reads_its_facts_beside_its_fields() {
        let text = r#"{"handle":"d1.4","frame":[0],"tag":"td","role":"gridcell","name":"Tue 2 pm",
            "attrs":{"id":"c4"},"bbox":{"x":1,"y":2,"width":3,"height":4},"visible":true,
            "inViewport":true,"interactive":["pointer"],"within":2,"brief":false,"open":true,
            "cell":{"row":2,"column":3,"rowHeader":"2 pm","columnHeader":"Tue"},"at":[40,-5],
            "among":[3,12],"shows":"cross","resizable":true,"hoverOnly":true,"newer":{"x":[1]}}"#;
        let el: Element = crate::json::from_str(text).unwrap();
        assert_eq!(
            el.facts,
            Facts {
                cell: Some(Cell {
                    row: 2,
                    column: 3,
                    row_header: Some("2 pm".into()),
                    column_header: Some("Tue".into()),
                }),
                at: Some((40, -5)),
                among: Some((3, 12)),
                shows: Some("cross".into()),
                resizable: true,
                hover_only: true,
            }
        );
        assert_eq!(
            (el.handle.as_str(), el.frame.as_slice(), el.role.as_deref()),
            ("d1.4", &[0][..], Some("gridcell"))
        );
        assert_eq!(
            (el.attr("id"), el.within, el.open),
            (Some("c4"), Some(2), true)
        );
        assert_eq!(
            el.bbox,
            Rect {
                x: 1.0,
                y: 2.0,
                width: 3.0,
                height: 4.0
            }
        );
        // What it writes (with the facts flattened) reads back the same.
        let written = serde_json::to_string(&el).unwrap();
        assert!(written.contains(r#""hoverOnly":true"#), "{written}");
        assert_eq!(crate::json::from_str::<Element>(&written).unwrap(), el);
        // A bare element: the facts at their defaults; a missing box is still an error.
        let bare: Element = crate::json::from_str(
            r#"{"handle":"d1.1","tag":"a","bbox":{"x":0,"y":0,"width":1,"height":1},
            "visible":false,"interactive":[]}"#,
        )
        .unwrap();
        assert_eq!(bare.facts, Facts::default());
        let err = crate::json::from_str::<Element>(r#"{"handle":"d1.1","tag":"a"}"#).unwrap_err();
        assert!(err.to_string().starts_with("missing field `bbox`"), "{err}");
    }
}
