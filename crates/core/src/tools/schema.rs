//! A JSON Schema validator for the subset tool schemas use, and the shape check a provider's
//! `parameters` must pass at registration.
//!
//! Why not a full validator crate: tool schemas are small and use a handful of keywords, the
//! core must stay lean for wasm, and the errors must be sentences a model can act on
//! (`params.url: expected string`) rather than a library's wording. Keywords outside the
//! subset are ignored (accepting more than the schema says, never less), so a provider's
//! `$ref`, `pattern` or `format` does not make its tool unusable; the provider still checks
//! its own input.
//!
//! Supported: `type` (one name or an array), `required`, `properties`,
//! `additionalProperties` (`false` or a schema), `enum`, `const`, `minimum`, `maximum`,
//! `exclusiveMinimum`, `exclusiveMaximum` (numbers, or draft-4 booleans), `minLength`,
//! `maxLength` (in characters), `minItems`, `maxItems`, `items` (a schema or a draft-4
//! tuple), `prefixItems`, `allOf`, `anyOf`, `oneOf`, boolean schemas.

use std::fmt;

use serde_json::{Map, Value};

/// How deep [`check_schema`] lets a schema nest (each keyword level counts): real tool schemas
/// stay far below it, and it bounds the recursion of [`validate`].
pub const MAX_SCHEMA_DEPTH: usize = 32;

/// At most this many problems are collected per validation: enough for a model to fix its
/// call in one go, and a hostile value cannot make the list grow without bound.
const MAX_VIOLATIONS: usize = 8;

/// How many violations the one-line message lists.
const SHOWN_VIOLATIONS: usize = 4;

const TYPES: &[&str] = &[
    "string", "number", "integer", "boolean", "object", "array", "null",
];

/// One thing wrong, at a path like `params.tabIds[2]` or `parameters.properties.url.type`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {problem}")]
pub struct Violation {
    pub path: String,
    pub problem: String,
}

impl Violation {
    fn new(path: &str, problem: impl Into<String>) -> Self {
        Self {
            path: path.to_string(),
            problem: problem.into(),
        }
    }
}

/// Why arguments do not fit a tool's schema: at least one [`Violation`], in the order found.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct Invalid(pub Vec<Violation>);

impl fmt::Display for Invalid {
    /// The first few violations joined with "; " (`params.url: expected string; params:
    /// missing required property "tabId"`), then how many more there are.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, v) in self.0.iter().take(SHOWN_VIOLATIONS).enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{v}")?;
        }
        if self.0.len() > SHOWN_VIOLATIONS {
            write!(f, "; and {} more", self.0.len() - SHOWN_VIOLATIONS)?;
        }
        Ok(())
    }
}

/// Checks `value` (a tool call's arguments) against `schema`; paths start at `params`.
pub fn validate(schema: &Value, value: &Value) -> Result<(), Invalid> {
    let mut out = Vec::new();
    check(schema, value, "params", &mut out, 0);
    if out.is_empty() {
        Ok(())
    } else {
        Err(Invalid(out))
    }
}

/// Whether `value` fits `schema`, without collecting why.
pub fn fits(schema: &Value, value: &Value) -> bool {
    validate(schema, value).is_ok()
}

fn check(schema: &Value, value: &Value, path: &str, out: &mut Vec<Violation>, depth: usize) {
    if out.len() >= MAX_VIOLATIONS {
        return;
    }
    if depth > MAX_SCHEMA_DEPTH {
        // Only reachable with a schema that skipped check_schema: stop rather than recurse on.
        out.push(Violation::new(
            path,
            "the schema is nested too deeply to check",
        ));
        return;
    }
    let s = match schema {
        Value::Bool(false) => {
            out.push(Violation::new(path, "no value is allowed here"));
            return;
        }
        Value::Object(s) => s,
        // `true`, and anything that is not a schema at all, accepts every value.
        _ => return,
    };

    let types = type_list(s.get("type"));
    if !types.is_empty() && !types.iter().any(|t| has_type(value, t)) {
        out.push(Violation::new(
            path,
            format!("expected {}", types.join(" or ")),
        ));
        // The other keywords would only repeat the same mistake in other words.
        return;
    }
    if let Some(c) = s.get("const") {
        if !same_json(c, value) {
            out.push(Violation::new(path, format!("expected {}", short_json(c))));
        }
    }
    if let Some(Value::Array(options)) = s.get("enum") {
        if !options.iter().any(|o| same_json(o, value)) {
            let listed: Vec<String> = options.iter().take(12).map(short_json).collect();
            let more = if options.len() > 12 { ", …" } else { "" };
            out.push(Violation::new(
                path,
                format!("expected one of {}{more}", listed.join(", ")),
            ));
        }
    }

    match value {
        Value::Number(n) => check_number(s, n.as_f64().unwrap_or(f64::NAN), path, out),
        Value::String(text) => check_length(s, text.chars().count(), path, out),
        Value::Array(items) => check_array(s, items, path, out, depth),
        Value::Object(object) => check_object(s, object, path, out, depth),
        _ => {}
    }

    if let Some(Value::Array(all)) = s.get("allOf") {
        for sub in all {
            check(sub, value, path, out, depth + 1);
        }
    }
    if let Some(Value::Array(any)) = s.get("anyOf") {
        if !any.is_empty() && !any.iter().any(|sub| fits_at(sub, value, depth)) {
            out.push(no_shape(any, value, path, depth));
        }
    }
    if let Some(Value::Array(one)) = s.get("oneOf") {
        let matching = one.iter().filter(|sub| fits_at(sub, value, depth)).count();
        if !one.is_empty() && matching == 0 {
            out.push(no_shape(one, value, path, depth));
        } else if matching > 1 {
            out.push(Violation::new(
                path,
                format!("matches {matching} of the allowed shapes where exactly one must match"),
            ));
        }
    }
}

fn fits_at(schema: &Value, value: &Value, depth: usize) -> bool {
    let mut sub = Vec::new();
    check(schema, value, "params", &mut sub, depth + 1);
    sub.is_empty()
}

/// The sentence for a value that fits none of `options`, with the first option's first
/// complaint as a hint of what was expected.
fn no_shape(options: &[Value], value: &Value, path: &str, depth: usize) -> Violation {
    let mut first = Vec::new();
    if let Some(o) = options.first() {
        check(o, value, path, &mut first, depth + 1);
    }
    let hint = first
        .first()
        .map(|v| format!(" (the first one: {v})"))
        .unwrap_or_default();
    Violation::new(
        path,
        format!("does not match any of the allowed shapes{hint}"),
    )
}

fn check_number(s: &Map<String, Value>, n: f64, path: &str, out: &mut Vec<Violation>) {
    let num = |k: &str| s.get(k).and_then(|v| v.as_f64().map(|f| (f, v)));
    // Draft 4 spells exclusive bounds as booleans next to minimum/maximum.
    let draft4_min = s.get("exclusiveMinimum") == Some(&Value::Bool(true));
    let draft4_max = s.get("exclusiveMaximum") == Some(&Value::Bool(true));
    if let Some((min, raw)) = num("minimum") {
        if draft4_min && n <= min {
            out.push(Violation::new(path, format!("must be greater than {raw}")));
        } else if n < min {
            out.push(Violation::new(path, format!("must be at least {raw}")));
        }
    }
    if let Some((max, raw)) = num("maximum") {
        if draft4_max && n >= max {
            out.push(Violation::new(path, format!("must be less than {raw}")));
        } else if n > max {
            out.push(Violation::new(path, format!("must be at most {raw}")));
        }
    }
    if let Some((min, raw)) = num("exclusiveMinimum") {
        if n <= min {
            out.push(Violation::new(path, format!("must be greater than {raw}")));
        }
    }
    if let Some((max, raw)) = num("exclusiveMaximum") {
        if n >= max {
            out.push(Violation::new(path, format!("must be less than {raw}")));
        }
    }
}

fn check_length(s: &Map<String, Value>, chars: usize, path: &str, out: &mut Vec<Violation>) {
    if let Some(min) = count(s, "minLength") {
        if chars < min {
            out.push(Violation::new(
                path,
                format!("must be at least {min} {} long", plural(min, "character")),
            ));
        }
    }
    if let Some(max) = count(s, "maxLength") {
        if chars > max {
            out.push(Violation::new(
                path,
                format!("must be at most {max} {} long", plural(max, "character")),
            ));
        }
    }
}

fn check_array(
    s: &Map<String, Value>,
    items: &[Value],
    path: &str,
    out: &mut Vec<Violation>,
    depth: usize,
) {
    if let Some(min) = count(s, "minItems") {
        if items.len() < min {
            out.push(Violation::new(
                path,
                format!("must hold at least {min} {}", plural(min, "item")),
            ));
        }
    }
    if let Some(max) = count(s, "maxItems") {
        if items.len() > max {
            out.push(Violation::new(
                path,
                format!("must hold at most {max} {}", plural(max, "item")),
            ));
        }
    }
    // A tuple (`prefixItems`, or draft 4's array form of `items`) fixes the first
    // positions; `items` as a schema covers the rest (2020-12) or all of them.
    let (tuple, rest) = match (s.get("prefixItems"), s.get("items")) {
        (Some(Value::Array(prefix)), items) => (prefix.as_slice(), items),
        (_, Some(Value::Array(tuple))) => (tuple.as_slice(), s.get("additionalItems")),
        (_, items) => (&[][..], items),
    };
    for (i, item) in items.iter().enumerate() {
        let sub = tuple.get(i).or(rest);
        if let Some(sub) = sub {
            check(sub, item, &format!("{path}[{i}]"), out, depth + 1);
        }
        if out.len() >= MAX_VIOLATIONS {
            return;
        }
    }
}

fn check_object(
    s: &Map<String, Value>,
    object: &Map<String, Value>,
    path: &str,
    out: &mut Vec<Violation>,
    depth: usize,
) {
    if let Some(Value::Array(required)) = s.get("required") {
        for key in required.iter().filter_map(Value::as_str) {
            if !object.contains_key(key) {
                out.push(Violation::new(
                    path,
                    format!("missing required property {}", short_json(&key.into())),
                ));
            }
        }
    }
    let properties = s.get("properties").and_then(Value::as_object);
    // Properties matched by `patternProperties` (not checked here: no regex engine) are not
    // "additional", so `additionalProperties` is only enforced without it.
    let extra = match s.get("patternProperties") {
        Some(_) => None,
        None => s.get("additionalProperties"),
    };
    for (key, item) in object {
        let child = child_path(path, key);
        match properties.and_then(|p| p.get(key)) {
            Some(sub) => check(sub, item, &child, out, depth + 1),
            None => match extra {
                Some(Value::Bool(false)) => out.push(Violation::new(
                    path,
                    format!("unexpected property {}", short_json(&key.as_str().into())),
                )),
                Some(sub @ Value::Object(_)) => check(sub, item, &child, out, depth + 1),
                _ => {}
            },
        }
        if out.len() >= MAX_VIOLATIONS {
            return;
        }
    }
}

/// `params.url` for a plain key, `params["tab id"]` for any other.
fn child_path(path: &str, key: &str) -> String {
    let plain = key
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    if plain {
        format!("{path}.{key}")
    } else {
        format!("{path}[{}]", short_json(&key.into()))
    }
}

fn type_list(t: Option<&Value>) -> Vec<&str> {
    match t {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
    .into_iter()
    // A name outside the spec constrains nothing (check_schema refuses it at registration).
    .filter(|t| TYPES.contains(t))
    .collect()
}

fn has_type(v: &Value, t: &str) -> bool {
    match t {
        "string" => v.is_string(),
        "number" => v.is_number(),
        // JSON Schema counts 2.0 as an integer: only the value matters, not its spelling.
        "integer" => match v {
            Value::Number(n) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        },
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        "null" => v.is_null(),
        _ => false,
    }
}

/// JSON equality where numbers compare by value (`1` equals `1.0`).
fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => x == y,
            _ => x == y,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_json(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

/// Compact JSON, cut at 60 characters: an enum of long objects must not flood a message.
fn short_json(v: &Value) -> String {
    let text = v.to_string();
    if text.chars().count() <= 60 {
        text
    } else {
        let cut: String = text.chars().take(59).collect();
        format!("{cut}…")
    }
}

fn count(s: &Map<String, Value>, key: &str) -> Option<usize> {
    s.get(key)
        .and_then(Value::as_u64)
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        word.to_string()
    } else {
        format!("{word}s")
    }
}

/// Checks that `schema` is usable as a tool's `parameters`: a JSON Schema object whose
/// `type` is `"object"`, with every keyword of the subset shaped as the spec says (so
/// [`validate`] never has to guess), nested at most [`MAX_SCHEMA_DEPTH`] levels. Paths start
/// at `parameters`.
pub fn check_schema(schema: &Value) -> Result<(), Violation> {
    let root = "parameters";
    let Some(s) = schema.as_object() else {
        return Err(Violation::new(
            root,
            "must be a JSON Schema object with \"type\": \"object\"",
        ));
    };
    if s.get("type") != Some(&Value::String("object".into())) {
        return Err(Violation::new(
            root,
            "must be a JSON Schema object with \"type\": \"object\" (tool arguments are always an object)",
        ));
    }
    check_shape(schema, root, 0)
}

fn check_shape(schema: &Value, path: &str, depth: usize) -> Result<(), Violation> {
    if depth > MAX_SCHEMA_DEPTH {
        return Err(Violation::new(
            path,
            format!("the schema nests more than {MAX_SCHEMA_DEPTH} levels deep"),
        ));
    }
    let s = match schema {
        Value::Bool(_) => return Ok(()),
        Value::Object(s) => s,
        _ => {
            return Err(Violation::new(
                path,
                "a schema must be an object or a boolean",
            ))
        }
    };
    let at = |key: &str| format!("{path}.{key}");
    let sub = |key: &str, v: &Value| check_shape(v, &at(key), depth + 1);

    if let Some(t) = s.get("type") {
        let names: Vec<&Value> = match t {
            Value::Array(ts) if !ts.is_empty() => ts.iter().collect(),
            Value::Array(_) => {
                return Err(Violation::new(&at("type"), "an empty list of types"));
            }
            one => vec![one],
        };
        for name in names {
            match name.as_str() {
                Some(n) if TYPES.contains(&n) => {}
                _ => {
                    return Err(Violation::new(
                        &at("type"),
                        format!(
                            "{} is not a JSON Schema type (string, number, integer, boolean, object, array, null)",
                            short_json(name)
                        ),
                    ))
                }
            }
        }
    }
    if let Some(p) = s.get("properties") {
        let Some(p) = p.as_object() else {
            return Err(Violation::new(
                &at("properties"),
                "must be an object of schemas",
            ));
        };
        for (key, v) in p {
            check_shape(v, &child_path(&at("properties"), key), depth + 1)?;
        }
    }
    if let Some(r) = s.get("required") {
        if !r.as_array().is_some_and(|r| r.iter().all(Value::is_string)) {
            return Err(Violation::new(
                &at("required"),
                "must be a list of property names",
            ));
        }
    }
    if let Some(a) = s.get("additionalProperties") {
        sub("additionalProperties", a)?;
    }
    match s.get("items") {
        Some(Value::Array(tuple)) => {
            for (i, v) in tuple.iter().enumerate() {
                check_shape(v, &format!("{}[{i}]", at("items")), depth + 1)?;
            }
        }
        Some(v) => sub("items", v)?,
        None => {}
    }
    for key in ["prefixItems", "allOf", "anyOf", "oneOf"] {
        if let Some(list) = s.get(key) {
            let Some(list) = list.as_array().filter(|l| !l.is_empty()) else {
                return Err(Violation::new(
                    &at(key),
                    "must be a non-empty list of schemas",
                ));
            };
            for (i, v) in list.iter().enumerate() {
                check_shape(v, &format!("{}[{i}]", at(key)), depth + 1)?;
            }
        }
    }
    if let Some(e) = s.get("enum") {
        if e.as_array().is_none_or(Vec::is_empty) {
            return Err(Violation::new(
                &at("enum"),
                "must be a non-empty list of values",
            ));
        }
    }
    for key in ["minimum", "maximum"] {
        if s.get(key).is_some_and(|v| !v.is_number()) {
            return Err(Violation::new(&at(key), "must be a number"));
        }
    }
    for key in ["exclusiveMinimum", "exclusiveMaximum"] {
        if s.get(key)
            .is_some_and(|v| !v.is_number() && !v.is_boolean())
        {
            return Err(Violation::new(&at(key), "must be a number"));
        }
    }
    for key in ["minLength", "maxLength", "minItems", "maxItems"] {
        if s.get(key).is_some_and(|v| v.as_u64().is_none()) {
            return Err(Violation::new(
                &at(key),
                "must be a whole number, 0 or more",
            ));
        }
    }
    Ok(())
}

/// The keywords [`validate`] reads, and nothing else: what Gemini Nano's
/// `responseConstraint` gets for a tool's arguments. Chrome turns the constraint into a
/// grammar, and a keyword its converter does not know (`format`, `$ref`, `pattern`) could
/// make the whole prompt fail; descriptions are dropped too, they only cost tokens there.
pub fn known_subset(schema: &Value) -> Value {
    subset(schema, 0)
}

fn subset(schema: &Value, depth: usize) -> Value {
    let Value::Object(s) = schema else {
        return schema.clone();
    };
    if depth > MAX_SCHEMA_DEPTH {
        return Value::Bool(true);
    }
    let mut out = Map::new();
    for (key, v) in s {
        let kept = match key.as_str() {
            "type" | "required" | "enum" | "const" | "minimum" | "maximum" | "exclusiveMinimum"
            | "exclusiveMaximum" | "minLength" | "maxLength" | "minItems" | "maxItems" => v.clone(),
            "properties" => match v {
                Value::Object(p) => {
                    let mut props = Map::new();
                    for (k, v) in p {
                        props.insert(k.clone(), subset(v, depth + 1));
                    }
                    Value::Object(props)
                }
                _ => continue,
            },
            "additionalProperties" | "items" => match v {
                Value::Array(list) => {
                    Value::Array(list.iter().map(|v| subset(v, depth + 1)).collect())
                }
                v => subset(v, depth + 1),
            },
            "anyOf" | "oneOf" | "prefixItems" => match v {
                Value::Array(list) => {
                    Value::Array(list.iter().map(|v| subset(v, depth + 1)).collect())
                }
                _ => continue,
            },
            _ => continue,
        };
        out.insert(key.clone(), kept);
    }
    Value::Object(out)
}

/// How deeply `v` nests (a scalar is 1), counting no further than `cap + 1` so a hostile
/// value cannot make this walk long.
pub fn json_depth(v: &Value, cap: usize) -> usize {
    fn walk(v: &Value, level: usize, cap: usize) -> usize {
        if level > cap {
            return level;
        }
        let children: Box<dyn Iterator<Item = &Value>> = match v {
            Value::Array(a) => Box::new(a.iter()),
            Value::Object(o) => Box::new(o.values()),
            _ => return level,
        };
        children
            .map(|c| walk(c, level + 1, cap))
            .max()
            .unwrap_or(level)
    }
    walk(v, 1, cap)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tab_schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "url": {"type": "string", "minLength": 1, "maxLength": 20},
                "active": {"type": "boolean"},
                "tabIds": {"type": "array", "items": {"type": "integer"}, "minItems": 1, "maxItems": 3},
                "mode": {"enum": ["tab", "window"]},
                "kind": {"const": "open"},
                "zoom": {"type": "number", "minimum": 0.25, "maximum": 5},
                "count": {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 10},
                "note": {"type": ["string", "null"]},
                "pos": {
                    "type": "object",
                    "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
                    "required": ["x"],
                    "additionalProperties": false
                },
                "target": {"anyOf": [{"type": "integer"}, {"type": "string", "minLength": 3}]},
                "pick": {"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 0}]},
                "tab id": {"type": "integer"}
            },
            "required": ["url"],
            "additionalProperties": false
        })
    }

    #[test]
    fn arguments_are_checked_with_paths_a_model_can_act_on() {
        let s = tab_schema();
        let cases: &[(Value, &str)] = &[
            (json!({"url": "a"}), ""),
            (json!({"url": 3}), "params.url: expected string"),
            (json!({}), "params: missing required property \"url\""),
            (json!("open it"), "params: expected object"),
            (json!({"url": ""}), "params.url: must be at least 1 character long"),
            (
                json!({"url": "x".repeat(21)}),
                "params.url: must be at most 20 characters long",
            ),
            // Characters, not bytes: 20 é are 40 bytes.
            (json!({"url": "é".repeat(20)}), ""),
            (json!({"url": "a", "active": "yes"}), "params.active: expected boolean"),
            (
                json!({"url": "a", "tabIds": [1, 2, "3"]}),
                "params.tabIds[2]: expected integer",
            ),
            (json!({"url": "a", "tabIds": [1, 2.0]}), ""),
            (json!({"url": "a", "tabIds": [1.5]}), "params.tabIds[0]: expected integer"),
            (json!({"url": "a", "tabIds": []}), "params.tabIds: must hold at least 1 item"),
            (
                json!({"url": "a", "tabIds": [1, 2, 3, 4]}),
                "params.tabIds: must hold at most 3 items",
            ),
            (
                json!({"url": "a", "mode": "popup"}),
                "params.mode: expected one of \"tab\", \"window\"",
            ),
            (json!({"url": "a", "kind": "close"}), "params.kind: expected \"open\""),
            (json!({"url": "a", "zoom": 0.1}), "params.zoom: must be at least 0.25"),
            (json!({"url": "a", "zoom": 6}), "params.zoom: must be at most 5"),
            (json!({"url": "a", "zoom": 5}), ""),
            (json!({"url": "a", "count": 0}), "params.count: must be greater than 0"),
            (json!({"url": "a", "count": 10}), "params.count: must be less than 10"),
            (json!({"url": "a", "note": null}), ""),
            (json!({"url": "a", "note": 1}), "params.note: expected string or null"),
            (json!({"url": "a", "pos": {"x": 1}}), ""),
            (
                json!({"url": "a", "pos": {"y": 1}}),
                "params.pos: missing required property \"x\"",
            ),
            (
                json!({"url": "a", "pos": {"x": 1, "z": 2}}),
                "params.pos: unexpected property \"z\"",
            ),
            (json!({"url": "a", "extra": 1}), "params: unexpected property \"extra\""),
            (json!({"url": "a", "target": 4}), ""),
            (json!({"url": "a", "target": "main"}), ""),
            (
                json!({"url": "a", "target": "ab"}),
                "params.target: does not match any of the allowed shapes (the first one: params.target: expected integer)",
            ),
            (json!({"url": "a", "pick": -1}), ""),
            (
                json!({"url": "a", "pick": 2}),
                "params.pick: matches 2 of the allowed shapes where exactly one must match",
            ),
            (json!({"url": "a", "tab id": "x"}), "params[\"tab id\"]: expected integer"),
            (
                json!({"url": 1, "active": 2}),
                "params.active: expected boolean; params.url: expected string",
            ),
        ];
        for (value, want) in cases {
            let got = match validate(&s, value) {
                Ok(()) => String::new(),
                Err(e) => e.to_string(),
            };
            assert_eq!(got, *want, "{value}");
        }
    }

    #[test]
    fn unknown_keywords_and_boolean_schemas() {
        let s = json!({"type": "object", "properties": {
            "u": {"type": "string", "format": "uri", "pattern": "^https:"},
            "no": false,
            "any": true
        }, "patternProperties": {"^x-": {"type": "string"}}, "additionalProperties": false});
        assert!(fits(&s, &json!({"u": "ftp:x", "any": [1], "x-a": 1})));
        assert_eq!(
            validate(&s, &json!({"no": 1})).unwrap_err().to_string(),
            "params.no: no value is allowed here"
        );
        // Draft 4 exclusive bounds.
        let d4 = json!({"type": "number", "minimum": 0, "exclusiveMinimum": true});
        assert_eq!(
            validate(&d4, &json!(0)).unwrap_err().to_string(),
            "params: must be greater than 0"
        );
        // additionalProperties as a schema; tuples.
        let s = json!({"type": "object", "additionalProperties": {"type": "integer"},
            "properties": {"t": {"type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "integer"}}}});
        assert!(fits(&s, &json!({"a": 1, "t": ["x", 1, 2]})));
        assert_eq!(
            validate(&s, &json!({"a": "1", "t": ["x", "y"]}))
                .unwrap_err()
                .to_string(),
            "params.a: expected integer; params.t[1]: expected integer"
        );
    }

    #[test]
    fn a_flood_of_mistakes_is_reported_briefly() {
        let s = json!({"type": "object", "additionalProperties": false});
        let value: Value = (0..100)
            .map(|i| (format!("k{i:03}"), json!(i)))
            .collect::<Map<_, _>>()
            .into();
        let err = validate(&s, &value).unwrap_err();
        assert_eq!(err.0.len(), MAX_VIOLATIONS);
        assert!(err.to_string().ends_with("; and 4 more"), "{err}");
    }

    #[test]
    fn registration_refuses_schemas_that_are_not_object_schemas() {
        let cases: &[(Value, &str)] = &[
            (json!({"type": "object"}), ""),
            (tab_schema(), ""),
            (
                json!("object"),
                "parameters: must be a JSON Schema object with \"type\": \"object\"",
            ),
            (
                json!({"properties": {}}),
                "parameters: must be a JSON Schema object with \"type\": \"object\" (tool arguments are always an object)",
            ),
            (
                json!({"type": "object", "properties": {"url": {"type": "strin"}}}),
                "parameters.properties.url.type: \"strin\" is not a JSON Schema type (string, number, integer, boolean, object, array, null)",
            ),
            (
                json!({"type": "object", "properties": []}),
                "parameters.properties: must be an object of schemas",
            ),
            (
                json!({"type": "object", "required": "url"}),
                "parameters.required: must be a list of property names",
            ),
            (
                json!({"type": "object", "properties": {"a b": 3}}),
                "parameters.properties[\"a b\"]: a schema must be an object or a boolean",
            ),
            (
                json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": "1"}}}),
                "parameters.properties.n.minimum: must be a number",
            ),
            (
                json!({"type": "object", "properties": {"s": {"maxLength": -1}}}),
                "parameters.properties.s.maxLength: must be a whole number, 0 or more",
            ),
            (
                json!({"type": "object", "anyOf": []}),
                "parameters.anyOf: must be a non-empty list of schemas",
            ),
            (
                json!({"type": "object", "properties": {"t": {"items": [{"type": 1}]}}}),
                "parameters.properties.t.items[0].type: 1 is not a JSON Schema type (string, number, integer, boolean, object, array, null)",
            ),
        ];
        for (schema, want) in cases {
            let got = match check_schema(schema) {
                Ok(()) => String::new(),
                Err(e) => e.to_string(),
            };
            assert_eq!(got, *want, "{schema}");
        }
        let mut deep = json!({"type": "string"});
        for _ in 0..40 {
            deep = json!({"type": "array", "items": deep});
        }
        let deep = json!({"type": "object", "properties": {"d": deep}});
        assert!(check_schema(&deep)
            .unwrap_err()
            .problem
            .contains("more than 32 levels"));
    }

    #[test]
    fn the_subset_keeps_only_what_the_validator_reads() {
        let s = json!({"type": "object", "description": "d", "$schema": "x",
            "properties": {"u": {"type": "string", "format": "uri", "description": "the url"},
                           "l": {"type": "array", "items": {"type": "integer", "title": "t"}}},
            "required": ["u"], "additionalProperties": false});
        assert_eq!(
            known_subset(&s),
            json!({"type": "object",
                "properties": {"u": {"type": "string"}, "l": {"type": "array", "items": {"type": "integer"}}},
                "required": ["u"], "additionalProperties": false})
        );
    }

    #[test]
    fn depth_is_counted_up_to_the_cap() {
        assert_eq!(json_depth(&json!(1), 10), 1);
        assert_eq!(json_depth(&json!({"a": [1, {"b": 2}]}), 10), 4);
        let mut deep = json!(1);
        for _ in 0..100 {
            deep = json!([deep]);
        }
        assert_eq!(json_depth(&deep, 10), 11);
    }
}
