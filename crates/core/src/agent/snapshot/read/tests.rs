//! The hand-written readers against the derived readers they replaced (kept here as the
//! reference): the driver's fixtures, and every field of a full snapshot made missing, null,
//! of each other JSON type, out of range or unknown, read both ways to the same result or to
//! the same refusal.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::super::{
    Cell, Checked, Element, Facts, FormTarget, FrameInfo, Hint, Point, SelectOption, Size,
};
use crate::agent::snapshot::Rect;

/// The derived reader of a snapshot as it was before `read.rs` (the reference; named as it
/// was, for the same error sentences).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Snapshot {
    doc_id: String,
    url: String,
    title: String,
    scroll: Point,
    viewport: Size,
    page: Size,
    frames: Vec<FrameInfo>,
    elements: Vec<ElementRead>,
    truncated: bool,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    text_digest: String,
}

impl From<Snapshot> for super::super::Snapshot {
    fn from(s: Snapshot) -> Self {
        super::super::Snapshot {
            doc_id: s.doc_id,
            url: s.url,
            title: s.title,
            scroll: s.scroll,
            viewport: s.viewport,
            page: s.page,
            frames: s.frames,
            elements: s.elements.into_iter().map(Element::from).collect(),
            truncated: s.truncated,
            text: s.text,
            text_digest: s.text_digest,
        }
    }
}

/// The derived reader of an element as it was before `read.rs` (the reference).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ElementRead {
    handle: String,
    #[serde(default)]
    frame: Vec<u32>,
    tag: String,
    #[serde(default)]
    role: Option<String>,
    #[serde(default)]
    implicit_role: Option<String>,
    #[serde(default)]
    name: String,
    #[serde(default)]
    text: String,
    #[serde(default)]
    context: String,
    #[serde(default)]
    attrs: BTreeMap<String, String>,
    bbox: Rect,
    visible: bool,
    #[serde(default)]
    in_viewport: bool,
    interactive: Vec<Hint>,
    #[serde(default)]
    disabled: bool,
    #[serde(default)]
    readonly: bool,
    #[serde(default)]
    checked: Option<Checked>,
    #[serde(default)]
    form: Option<u32>,
    #[serde(default)]
    form_method: Option<String>,
    #[serde(default)]
    shadow: bool,
    #[serde(default)]
    options: Vec<SelectOption>,
    #[serde(default)]
    covered: bool,
    #[serde(default)]
    covered_by: Option<String>,
    #[serde(default)]
    within: Option<usize>,
    #[serde(default)]
    bare: bool,
    #[serde(default)]
    group: Option<String>,
    #[serde(default)]
    submits_to: Option<FormTarget>,
    #[serde(default)]
    links_to: Option<String>,
    #[serde(default)]
    fill: Option<String>,
    #[serde(default)]
    brief: bool,
    #[serde(default)]
    open: bool,
    #[serde(default)]
    focused: bool,
    // Facts' fields.
    #[serde(default)]
    cell: Option<Cell>,
    #[serde(default)]
    at: Option<(i32, i32)>,
    #[serde(default)]
    among: Option<(usize, usize)>,
    #[serde(default)]
    shows: Option<String>,
    #[serde(default)]
    resizable: bool,
    #[serde(default)]
    hover_only: bool,
}

impl From<ElementRead> for Element {
    fn from(e: ElementRead) -> Self {
        Element {
            handle: e.handle,
            frame: e.frame,
            tag: e.tag,
            role: e.role,
            implicit_role: e.implicit_role,
            name: e.name,
            text: e.text,
            context: e.context,
            attrs: e.attrs,
            bbox: e.bbox,
            visible: e.visible,
            in_viewport: e.in_viewport,
            interactive: e.interactive,
            disabled: e.disabled,
            readonly: e.readonly,
            checked: e.checked,
            form: e.form,
            form_method: e.form_method,
            shadow: e.shadow,
            options: e.options,
            covered: e.covered,
            covered_by: e.covered_by,
            within: e.within,
            bare: e.bare,
            group: e.group,
            submits_to: e.submits_to,
            links_to: e.links_to,
            fill: e.fill,
            brief: e.brief,
            open: e.open,
            focused: e.focused,
            facts: Facts {
                cell: e.cell,
                at: e.at,
                among: e.among,
                shows: e.shows,
                resizable: e.resizable,
                hover_only: e.hover_only,
            },
        }
    }
}

/// `text` read by the derived reader and by `read.rs`: the same snapshot, or the same
/// sentence (the derived one without its position).
fn both(
    text: &str,
) -> (
    Result<super::super::Snapshot, String>,
    Result<super::super::Snapshot, String>,
) {
    let old = crate::json::from_str::<Snapshot>(text)
        .map(super::super::Snapshot::from)
        .map_err(|e| {
            let e = e.to_string();
            e.split(" at line ").next().unwrap_or_default().to_owned()
        });
    let new = crate::json::from_str::<super::super::Snapshot>(text).map_err(|e| e.to_string());
    (old, new)
}

#[test]
fn the_fixtures_read_the_same() {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/agent");
    let mut read = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            let text = std::fs::read_to_string(&path).unwrap();
            let (old, new) = both(&text);
            assert!(old.is_ok(), "{path:?}: {old:?}");
            assert_eq!(new, old, "{path:?}");
            read += 1;
        }
    }
    assert!(read >= 5, "{read} fixtures");
}

/// The same snapshot, or both refused: with the same sentence where it names a field, a type
/// or a value (serde_json's text reader words a few shapes after its syntax: "expected `}`").
fn same_or_both_refused(
    new: &Result<super::super::Snapshot, String>,
    old: &Result<super::super::Snapshot, String>,
    case: &str,
) {
    match (new, old) {
        (Err(n), Err(o))
            if !["missing", "invalid", "unknown"]
                .iter()
                .any(|w| o.starts_with(w)) =>
        {
            assert!(!n.is_empty(), "{case}")
        }
        _ => assert_eq!(new, old, "{case}"),
    }
}

/// A snapshot with every field of every type written (a cross-origin frame merged, a
/// cell, a select, a form posting elsewhere), unicode and unknown keys included.
fn full() -> Value {
    crate::json::from_str(
        r#"{
        "docId": "d9", "url": "https://shop.test/ä?q=🎉", "title": "Ünïcode — 日本語 🎉",
        "scroll": {"x": 0, "y": 12.5}, "viewport": {"width": 1280, "height": 720},
        "page": {"width": 1280, "height": 4000.25},
        "frames": [
            {"path": [0], "url": "https://a.test/", "accessible": true},
            {"path": [1, 2], "url": "https://b.test/", "accessible": false,
             "bbox": {"x": 1, "y": 2, "width": 3, "height": 4}, "frame_id": 7, "newer": 1}
        ],
        "elements": [
            {"handle": "d9.1", "tag": "a", "bbox": {"x": 0, "y": 0, "width": 1, "height": 1},
             "visible": false, "interactive": []},
            {"handle": "d9.2", "frame": [0, 3], "tag": "td", "role": "gridcell",
             "implicitRole": "cell", "name": "Tue 2 pm 🎉", "text": "x\ny", "context": "ctx",
             "attrs": {"id": "c4", "aria-label": "Zelle"},
             "bbox": {"x": -1.5, "y": 2, "width": 3, "height": 4}, "visible": true,
             "inViewport": true, "interactive": ["native", "role", "onclick", "listener",
             "tabindex", "pointer", "editable", "item", "drag"], "disabled": true,
             "readonly": true, "checked": "mixed", "form": 2, "formMethod": "post",
             "shadow": true, "options": [{"value": "a", "text": "A", "selected": true}],
             "covered": true, "coveredBy": "Cookie banner", "within": 0, "bare": true,
             "group": "Delivery", "submitsTo": {"url": "https://pay.test/", "method": "post"},
             "linksTo": "https://other.test/", "fill": "rgb(255, 0, 0)", "brief": true,
             "open": true, "focused": true,
             "cell": {"row": 2, "column": 3, "rowHeader": "2 pm", "columnHeader": "Tue"},
             "at": [40, -5], "among": [3, 12], "shows": "cross", "resizable": true,
             "hoverOnly": true, "newer": {"x": [1]}}
        ],
        "truncated": true, "text": "page text", "textDigest": "abc", "newer": null
    }"#,
    )
    .unwrap()
}

#[test]
fn every_field_missing_null_or_of_another_type_reads_the_same() {
    let full = full();
    let (old, new) = both(&full.to_string());
    assert!(old.is_ok(), "{old:?}");
    assert_eq!(new, old);
    let (mut cases, mut refused) = (0, 0);
    for (case, changed) in crate::json::fields::odd_versions(&full) {
        let (old, new) = both(&changed.to_string());
        same_or_both_refused(&new, &old, &case);
        cases += 1;
        refused += usize::from(old.is_err());
    }
    // Enough of each: the comparison is not vacuous.
    assert!(
        cases > 2000 && refused > 1000 && cases - refused > 500,
        "{cases} {refused}"
    );
    for text in ["[]", "null", "1", "\"x\"", "{}"] {
        let (old, new) = both(text);
        assert!(old.is_err(), "{text}");
        assert_eq!(new, old, "{text}");
    }
}

/// The one difference: a key written twice, which a derived struct refused and a `Value`
/// keeps the last of. `JSON.stringify` never writes one.
#[test]
fn a_key_written_twice_keeps_the_last() {
    let text =
        full()
            .to_string()
            .replacen("\"docId\":\"d9\"", "\"docId\":\"a\",\"docId\":\"d9\"", 1);
    let (old, new) = both(&text);
    assert_eq!(old.unwrap_err(), "duplicate field `docId`");
    assert_eq!(new.unwrap().doc_id, "d9");
}
