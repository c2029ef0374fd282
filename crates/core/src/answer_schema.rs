//! The JSON shape a step's answer must have: generated from a Rust type, handed to Nano as
//! `responseConstraint`, and checked on every answer (the cloud path has no constraint, and
//! Nano's can still be cut off by the output limit).

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A JSON Schema (the subset the checks below read: top-level `type` and `required`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Schema(Value);

/// Why an answer is not the JSON asked for.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    #[error("not JSON: {0}")]
    NotJson(String),
    #[error("a JSON {found} where {expected} was asked for")]
    WrongType {
        expected: String,
        found: &'static str,
    },
    #[error("the required field \"{0}\" is missing")]
    MissingField(String),
}

/// The schema of `T`, with every subschema inlined: Chrome turns `responseConstraint` into a
/// grammar and `$ref`s are the part such converters support least.
pub fn schema_for<T: JsonSchema>() -> Schema {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    Schema(generator.into_root_schema_for::<T>().to_value())
}

impl Schema {
    pub fn new(json: Value) -> Self {
        Self(json)
    }

    pub fn json(&self) -> &Value {
        &self.0
    }

    /// The JSON of `text` when it has the schema's top-level type and required fields.
    /// Markdown code fences around it (cloud models add them) are dropped.
    pub fn validate(&self, text: &str) -> Result<String, SchemaError> {
        let (json, value) = parse_json(text)?;
        let found = type_name(&value);
        let allowed: Vec<&str> = match self.0.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let fits = |t: &&str| *t == found || (*t == "number" && found == "integer");
        if !allowed.is_empty() && !allowed.iter().any(fits) {
            return Err(SchemaError::WrongType {
                expected: allowed.join(" or "),
                found,
            });
        }
        if let (Some(object), Some(required)) = (
            value.as_object(),
            self.0.get("required").and_then(Value::as_array),
        ) {
            if let Some(missing) = required
                .iter()
                .filter_map(Value::as_str)
                .find(|k| !object.contains_key(*k))
            {
                return Err(SchemaError::MissingField(missing.to_string()));
            }
        }
        Ok(json.to_string())
    }
}

/// The JSON in `text`: all of it, or inside code fences, or (a cloud model's prose around
/// it) from the first `{` to the last `}`.
fn parse_json(text: &str) -> Result<(&str, Value), SchemaError> {
    let json = strip_fences(text);
    let first = match crate::json::from_str(json) {
        Ok(value) => return Ok((json, value)),
        Err(e) => SchemaError::NotJson(e.to_string()),
    };
    let object = match (json.find('{'), json.rfind('}')) {
        (Some(a), Some(b)) if a < b => json.get(a..=b),
        _ => None,
    };
    object
        .and_then(|o| crate::json::from_str(o).ok().map(|v| (o, v)))
        .ok_or(first)
}

fn strip_fences(text: &str) -> &str {
    let text = text.trim();
    let Some(body) = text.strip_prefix("```") else {
        return text;
    };
    // The info string ("json") runs to the end of the first line.
    let body = body.split_once('\n').map_or("", |(_, rest)| rest);
    body.trim_end().strip_suffix("```").unwrap_or(body).trim()
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}
