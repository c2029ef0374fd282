//! [`Snapshot`] and [`Element`] read from the driver's JSON by hand, through a parsed `Value`
//! ([`crate::json::fields`]): their derived readers were the biggest single function of the
//! worker's module (issue #46: 25.8 KB raw). The same keys, defaults and refusals as the
//! derived readers (`snapshot_tests.rs` reads the fixtures and odd inputs both ways).

use std::collections::BTreeMap;

use serde::de::{Deserialize, Deserializer, Error as _};
use serde_json::Value;

use super::{
    Cell, Checked, Element, Facts, FormTarget, FrameInfo, Hint, Point, Rect, SelectOption, Size,
    Snapshot,
};
use crate::json::fields::{self, list, pair, Fields, Result};

impl<'de> Deserialize<'de> for Snapshot {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        snapshot(Value::deserialize(d)?).map_err(D::Error::custom)
    }
}

impl<'de> Deserialize<'de> for Element {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        element(Value::deserialize(d)?).map_err(D::Error::custom)
    }
}

fn snapshot(value: Value) -> Result<Snapshot> {
    let mut f = Fields::of(value, "struct Snapshot")?;
    let read = Snapshot {
        doc_id: f.str("docId"),
        url: f.str("url"),
        title: f.str("title"),
        scroll: f.with("scroll", point),
        viewport: f.with("viewport", size),
        page: f.with("page", size),
        frames: f.with("frames", |v| list(v, frame)),
        elements: f.with("elements", |v| list(v, element)),
        truncated: f.bool("truncated"),
        text: f.opt_str("text"),
        text_digest: f.str_or_empty("textDigest"),
    };
    f.done(read)
}

fn point(value: Value) -> Result<Point> {
    let mut f = Fields::of(value, "struct Point")?;
    let read = Point {
        x: f.f64("x"),
        y: f.f64("y"),
    };
    f.done(read)
}

fn size(value: Value) -> Result<Size> {
    let mut f = Fields::of(value, "struct Size")?;
    let read = Size {
        width: f.f64("width"),
        height: f.f64("height"),
    };
    f.done(read)
}

fn rect(value: Value) -> Result<Rect> {
    let mut f = Fields::of(value, "struct Rect")?;
    let read = Rect {
        x: f.f64("x"),
        y: f.f64("y"),
        width: f.f64("width"),
        height: f.f64("height"),
    };
    f.done(read)
}

/// A frame's keys are snake_case (`frame_id`), unlike the rest.
fn frame(value: Value) -> Result<FrameInfo> {
    let mut f = Fields::of(value, "struct FrameInfo")?;
    let read = FrameInfo {
        path: f.with("path", |v| list(v, fields::u32)),
        url: f.str("url"),
        accessible: f.bool("accessible"),
        bbox: f.opt("bbox", rect),
        frame_id: f.opt("frame_id", fields::u32),
    };
    f.done(read)
}

/// An element: its fields and its [`Facts`]' side by side, as the driver writes them.
fn element(value: Value) -> Result<Element> {
    let mut f = Fields::of(value, "struct ElementRead")?;
    let read = Element {
        handle: f.str("handle"),
        frame: f.or_default("frame", |v| list(v, fields::u32)),
        tag: f.str("tag"),
        role: f.opt_str("role"),
        implicit_role: f.opt_str("implicitRole"),
        name: f.str_or_empty("name"),
        text: f.str_or_empty("text"),
        context: f.str_or_empty("context"),
        attrs: f.or_default("attrs", attrs),
        bbox: f.with("bbox", rect),
        visible: f.bool("visible"),
        in_viewport: f.bool_or_false("inViewport"),
        interactive: f.with("interactive", |v| list(v, hint)),
        disabled: f.bool_or_false("disabled"),
        readonly: f.bool_or_false("readonly"),
        checked: f.opt("checked", checked),
        form: f.opt("form", fields::u32),
        form_method: f.opt_str("formMethod"),
        shadow: f.bool_or_false("shadow"),
        options: f.or_default("options", |v| list(v, select_option)),
        covered: f.bool_or_false("covered"),
        covered_by: f.opt_str("coveredBy"),
        within: f.opt("within", fields::usize),
        bare: f.bool_or_false("bare"),
        group: f.opt_str("group"),
        submits_to: f.opt("submitsTo", form_target),
        links_to: f.opt_str("linksTo"),
        fill: f.opt_str("fill"),
        brief: f.bool_or_false("brief"),
        open: f.bool_or_false("open"),
        focused: f.bool_or_false("focused"),
        facts: Facts {
            cell: f.opt("cell", cell),
            at: f.opt("at", |v| pair(v, fields::i32)),
            among: f.opt("among", |v| pair(v, fields::usize)),
            shows: f.opt_str("shows"),
            resizable: f.bool_or_false("resizable"),
            hover_only: f.bool_or_false("hoverOnly"),
        },
    };
    f.done(read)
}

/// An object of strings (serde: "a map"). Inserted one by one: `collect` into a map would
/// bring its sort and bulk build into the module for this one map.
fn attrs(value: Value) -> Result<BTreeMap<String, String>> {
    let map = match value {
        Value::Object(map) => map,
        other => return Err(fields::wrong(&other, "a map")),
    };
    let mut attrs = BTreeMap::new();
    for (k, v) in map {
        attrs.insert(k, fields::string(v)?);
    }
    Ok(attrs)
}

fn hint(value: Value) -> Result<Hint> {
    use Hint::*;
    fields::variant(
        value,
        &[
            "native", "role", "onclick", "listener", "tabindex", "pointer", "editable", "item",
            "drag",
        ],
        &[
            Native, Role, Onclick, Listener, Tabindex, Pointer, Editable, Item, Drag,
        ],
    )
}

fn checked(value: Value) -> Result<Checked> {
    fields::variant(
        value,
        &["true", "false", "mixed"],
        &[Checked::True, Checked::False, Checked::Mixed],
    )
}

fn select_option(value: Value) -> Result<SelectOption> {
    let mut f = Fields::of(value, "struct SelectOption")?;
    let read = SelectOption {
        value: f.str("value"),
        text: f.str("text"),
        selected: f.bool("selected"),
    };
    f.done(read)
}

fn form_target(value: Value) -> Result<FormTarget> {
    let mut f = Fields::of(value, "struct FormTarget")?;
    let read = FormTarget {
        url: f.str("url"),
        method: f.str("method"),
    };
    f.done(read)
}

fn cell(value: Value) -> Result<Cell> {
    let mut f = Fields::of(value, "struct Cell")?;
    let read = Cell {
        row: f.with("row", fields::u32),
        column: f.with("column", fields::u32),
        row_header: f.opt_str("rowHeader"),
        column_header: f.opt_str("columnHeader"),
    };
    f.done(read)
}

#[cfg(test)]
mod tests;
