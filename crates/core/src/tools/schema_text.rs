//! A schema written for a model to read: one line per field, `name (values or type, bounds,
//! required): description`. The one way Tandem writes a schema into a prompt, for a tool's
//! arguments and for the agent's action fields alike; a JSON Schema dump says the same in
//! about twice the tokens, re-sent with every cloud request. (Checking values against a
//! schema is `super::schema`'s.)

use serde_json::Value;

use super::protocol::clip;

/// The fields of an object schema, one string each, in order: `name (kind bounds,
/// required): description`, where the kind is the field's values (`click | type`) or its
/// type (`string or null`), and the bounds are `0–10000`, `≥ 0` or `≤ 5`. Values and
/// descriptions longer than `clip_at` characters are cut (a provider's words; Tandem's own
/// stay short).
pub fn describe_fields(schema: &Value, clip_at: usize) -> impl Iterator<Item = String> + '_ {
    properties(schema).map(move |(name, p, required)| {
        let mut kind = match p.get("enum").and_then(Value::as_array) {
            Some(values) => clip(
                &values
                    .iter()
                    .map(|v| match v.as_str() {
                        // Plain words go bare; anything else quoted, so `|` and spaces
                        // inside a value cannot blur where it ends.
                        Some(s)
                            if !s.is_empty()
                                && s.chars()
                                    .all(|c| c.is_alphanumeric() || c == '_' || c == '-') =>
                        {
                            s.to_string()
                        }
                        _ => v.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join(" | "),
                clip_at,
            ),
            None => match p.get("type") {
                Some(Value::String(t)) => t.clone(),
                Some(Value::Array(ts)) => ts
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(" or "),
                _ => "any".into(),
            },
        };
        match (p.get("minimum"), p.get("maximum")) {
            (Some(min), Some(max)) => kind.push_str(&format!(" {min}–{max}")),
            (Some(min), None) => kind.push_str(&format!(" ≥ {min}")),
            (None, Some(max)) => kind.push_str(&format!(" ≤ {max}")),
            (None, None) => {}
        }
        if required {
            kind.push_str(", required");
        }
        let note = p
            .get("description")
            .and_then(Value::as_str)
            .map(|d| format!(": {}", clip(d.trim(), clip_at)))
            .unwrap_or_default();
        format!("{name} ({kind}){note}")
    })
}

/// An object schema's properties in order, each with whether `required` names it.
fn properties(schema: &Value) -> impl Iterator<Item = (&str, &Value, bool)> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(move |(name, p)| (name.as_str(), p, required.contains(&name.as_str())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_are_written_one_way_for_every_schema() {
        let schema = json!({
            "type": "object",
            "required": ["city"],
            "properties": {
                "city": {"type": "string", "description": "  Where  "},
                "unit": {"enum": ["metric", "us customary", "a|b"]},
                "days": {"type": "integer", "minimum": 1, "maximum": 14},
                "note": {"type": ["string", "null"], "description": "x".repeat(30)},
                "raw": {}
            }
        });
        // In the schema's key order as serde_json keeps it (sorted here).
        let fields: Vec<String> = describe_fields(&schema, 40).collect();
        assert_eq!(
            fields,
            [
                "city (string, required): Where",
                "days (integer 1–14)",
                "note (string or null): xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
                "raw (any)",
                "unit (metric | \"us customary\" | \"a|b\")",
            ]
        );
        let clipped: Vec<String> = describe_fields(&schema, 20).collect();
        assert_eq!(
            clipped[2],
            format!("note (string or null): {}…", "x".repeat(19))
        );
        assert_eq!(clipped[4], "unit (metric | \"us custom…)");
    }
}
