//! A JSON object read by hand from a parsed [`Value`]: its fields taken out one by one with
//! small shared readers, instead of a derived `Deserialize` per type.
//!
//! Why: every derived reader is compiled into the module once per way it is read (the text
//! reader inlines serde_json's parser into each struct's `visit_map`), and the page snapshot's
//! and the providers' chunks were the biggest of them (issue #46). serde_json's `Value` reader
//! is in the module anyway; reading a `Value` once and then taking fields out costs a call per
//! field.
//!
//! The readers accept and refuse what the derived ones did: the same keys, a missing field as
//! its `#[serde(default)]` (or refused when it had none), `null` as `None` only for an
//! `Option`, integers checked against their type's range, unknown keys skipped, and the same
//! sentences ("missing field `tag`", "invalid type: null, expected a string"). Differences,
//! none of which a caller sees: an error has no line and column (there is no text any more),
//! and a key written twice keeps its last value where a derived struct refused it
//! (`JSON.stringify` and the providers never write one twice).

use serde::de::{Error as _, Unexpected};
use serde_json::{Error, Map, Value};

#[cfg(test)]
pub(crate) use odd::odd_versions;

pub type Result<T> = std::result::Result<T, Error>;

/// What `value` is, in serde's words for an error (`null` as serde_json says it).
fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => Unexpected::Unsigned(u),
            (None, Some(i)) => Unexpected::Signed(i),
            _ => Unexpected::Float(n.as_f64().unwrap_or_default()),
        },
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

/// "invalid type: …, expected `what`".
#[cold]
#[inline(never)]
pub fn wrong(value: &Value, what: &'static str) -> Error {
    Error::invalid_type(unexpected(value), &what)
}

/// A string (serde: "a string").
pub fn string(value: Value) -> Result<String> {
    match value {
        Value::String(s) => Ok(s),
        other => Err(wrong(&other, "a string")),
    }
}

/// A boolean (serde: "a boolean").
pub fn boolean(value: Value) -> Result<bool> {
    match value {
        Value::Bool(b) => Ok(b),
        other => Err(wrong(&other, "a boolean")),
    }
}

/// Any number, as `f64` reads one (an integer too).
pub fn float(value: Value) -> Result<f64> {
    match &value {
        Value::Number(n) => n.as_f64().ok_or_else(|| wrong(&value, "f64")),
        _ => Err(wrong(&value, "f64")),
    }
}

/// An integer from 0 to `max`, for the unsigned type named `what` ("u32"): a negative one or
/// one above `max` is an invalid value, a fraction an invalid type, as serde says.
#[inline(never)]
pub fn unsigned(value: Value, max: u64, what: &'static str) -> Result<u64> {
    if let Value::Number(n) = &value {
        match (n.as_u64(), n.as_i64()) {
            (Some(u), _) if u <= max => return Ok(u),
            (Some(u), _) => return Err(Error::invalid_value(Unexpected::Unsigned(u), &what)),
            (None, Some(i)) => return Err(Error::invalid_value(Unexpected::Signed(i), &what)),
            _ => {}
        }
    }
    Err(wrong(&value, what))
}

/// A `u32`.
pub fn u32(value: Value) -> Result<u32> {
    unsigned(value, u64::from(u32::MAX), "u32").map(|n| n as u32)
}

/// A `u64`.
pub fn u64(value: Value) -> Result<u64> {
    unsigned(value, u64::MAX, "u64")
}

/// A `usize`.
pub fn usize(value: Value) -> Result<usize> {
    unsigned(value, usize::MAX as u64, "usize").map(|n| n as usize)
}

/// An `i32` (serde: a positive one out of range is an invalid unsigned value, a negative one an
/// invalid signed value).
pub fn i32(value: Value) -> Result<i32> {
    if let Value::Number(n) = &value {
        match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => {
                return i32::try_from(i).map_err(|_| match n.as_u64() {
                    Some(u) => Error::invalid_value(Unexpected::Unsigned(u), &"i32"),
                    None => Error::invalid_value(Unexpected::Signed(i), &"i32"),
                })
            }
            (None, Some(u)) => return Err(Error::invalid_value(Unexpected::Unsigned(u), &"i32")),
            _ => {}
        }
    }
    Err(wrong(&value, "i32"))
}

/// An array's items (serde: "a sequence").
pub fn array(value: Value) -> Result<Vec<Value>> {
    match value {
        Value::Array(items) => Ok(items),
        other => Err(wrong(&other, "a sequence")),
    }
}

/// An array, each item read with `read`.
#[inline(never)]
pub fn list<T>(value: Value, read: fn(Value) -> Result<T>) -> Result<Vec<T>> {
    array(value)?.into_iter().map(read).collect()
}

/// An array of exactly two items, as a tuple `(A, B)` reads one (serde: "a tuple of size 2";
/// serde_json says a third item is "trailing characters").
#[inline(never)]
pub fn pair<T>(value: Value, read: fn(Value) -> Result<T>) -> Result<(T, T)> {
    let items = match value {
        Value::Array(items) => items,
        other => return Err(wrong(&other, "a tuple of size 2")),
    };
    // Item by item, as serde reads a tuple: a wrong first item is named before a short array.
    let len = items.len();
    let mut items = items.into_iter();
    let a = items.next().map(read).transpose()?;
    let b = items.next().map(read).transpose()?;
    match (a, b) {
        (Some(a), Some(b)) if len == 2 => Ok((a, b)),
        (Some(_), Some(_)) => Err(Error::custom("trailing characters")),
        _ => Err(Error::invalid_length(len, &"a tuple of size 2")),
    }
}

/// One of a unit enum's variants by name (`values[i]` for `names[i]`), written as its name or
/// as serde's map form `{"name": null}`; another name is an unknown variant, as serde says
/// (and anything else "expected value", as serde_json's text reader says).
pub fn variant<T: Copy>(value: Value, names: &'static [&'static str], values: &[T]) -> Result<T> {
    let (name, rest, more) = match value {
        Value::String(s) => (s, Value::Null, false),
        Value::Object(map) if !map.is_empty() => {
            let more = map.len() > 1;
            let (name, rest) = map.into_iter().next().unwrap_or_default();
            (name, rest, more)
        }
        _ => return Err(Error::custom("expected value")),
    };
    match names.iter().position(|n| *n == name) {
        None => Err(Error::unknown_variant(&name, names)),
        Some(_) if !rest.is_null() => Err(wrong(&rest, "unit")),
        Some(_) if more => Err(Error::custom("expected `}`")),
        Some(i) => values
            .get(i)
            .copied()
            .ok_or_else(|| Error::custom("expected value")),
    }
}

/// An object's fields, taken out by name. Keys never taken are skipped.
///
/// Each field is read to its value, or to its type's default with the error kept; the first
/// error is the object's ([`Fields::done`]). Not `?` at every field: each early return would
/// drop the fields read so far, and for an object of 37 fields that drop code was most of
/// its reader.
pub struct Fields {
    map: Map<String, Value>,
    error: Option<Error>,
}

impl Fields {
    /// `value`'s fields; anything but an object is refused as a struct named `what`
    /// ("struct Element") refuses it.
    pub fn of(value: Value, what: &'static str) -> Result<Fields> {
        match value {
            Value::Object(map) => Ok(Fields { map, error: None }),
            other => Err(wrong(&other, what)),
        }
    }

    /// `read`'s value, or `T`'s default with the error kept (the first one only).
    #[inline(never)]
    fn keep<T: Default>(&mut self, read: Result<T>) -> T {
        read.unwrap_or_else(|e| {
            self.error.get_or_insert(e);
            T::default()
        })
    }

    /// `value` read: the first error met, if any.
    pub fn done<T>(self, value: T) -> Result<T> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(value),
        }
    }

    /// The field `key`, `null` included; `None` when it is missing.
    #[inline(never)]
    pub fn take(&mut self, key: &str) -> Option<Value> {
        self.map.remove(key)
    }

    /// The field `key`, which must be there ("missing field `key`").
    #[inline(never)]
    fn need(&mut self, key: &'static str) -> Result<Value> {
        self.take(key).ok_or_else(|| Error::missing_field(key))
    }

    /// The field `key` read with `read`; it must be there.
    #[inline(never)]
    pub fn with<T: Default>(&mut self, key: &'static str, read: fn(Value) -> Result<T>) -> T {
        let read = self.need(key).and_then(read);
        self.keep(read)
    }

    /// The field `key` read with `read`; `None` when it is missing or `null` (an `Option`).
    #[inline(never)]
    pub fn opt<T>(&mut self, key: &str, read: fn(Value) -> Result<T>) -> Option<T> {
        let read = match self.take(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => read(v).map(Some),
        };
        self.keep(read)
    }

    /// The field `key` read with `read`; `T`'s default when it is missing (`null` is read,
    /// as `#[serde(default)]` reads it).
    #[inline(never)]
    pub fn or_default<T: Default>(&mut self, key: &str, read: fn(Value) -> Result<T>) -> T {
        let read = self.take(key).map_or_else(|| Ok(T::default()), read);
        self.keep(read)
    }

    /// A string field that must be there.
    pub fn str(&mut self, key: &'static str) -> String {
        self.with(key, string)
    }

    /// A string field, empty when missing.
    pub fn str_or_empty(&mut self, key: &str) -> String {
        self.or_default(key, string)
    }

    /// A string field that may be missing or `null`.
    pub fn opt_str(&mut self, key: &str) -> Option<String> {
        self.opt(key, string)
    }

    /// A boolean field that must be there.
    pub fn bool(&mut self, key: &'static str) -> bool {
        self.with(key, boolean)
    }

    /// A boolean field, false when missing.
    pub fn bool_or_false(&mut self, key: &str) -> bool {
        self.or_default(key, boolean)
    }

    /// A number field that must be there, as `f64`.
    pub fn f64(&mut self, key: &'static str) -> f64 {
        self.with(key, float)
    }
}

/// Test inputs: a realistic value made odd in every place, to read with a derived reader and a
/// hand-written one and compare.
#[cfg(test)]
pub(crate) mod odd {
    use serde_json::{json, Value};

    /// What goes in place of a value: each JSON type, odd numbers and strings, a variant's map form.
    pub fn odd_values() -> Vec<Value> {
        vec![
            json!(null),
            json!(true),
            json!(false),
            json!(0),
            json!(1),
            json!(-1),
            json!(1.5),
            json!(4294967295u64),
            json!(4294967296u64),
            json!(-2147483649i64),
            json!(2147483648u64),
            json!(u64::MAX),
            json!(""),
            json!("x"),
            json!("native"),
            json!("mixed"),
            json!("日本 🎉"),
            json!([]),
            json!([1]),
            json!([1, 2]),
            json!([1, 2, 3]),
            json!([-1, 2]),
            json!(["native"]),
            json!({}),
            json!({"native": null}),
            json!({"x": 1}),
            json!({"x": 1, "y": 2, "width": 3, "height": 4}),
        ]
    }

    /// Every place in `value` where a value sits, as a path of keys and indexes.
    pub fn places(value: &Value, at: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
        match value {
            Value::Object(map) => {
                for (k, v) in map {
                    at.push(json!(k));
                    out.push(at.clone());
                    places(v, at, out);
                    at.pop();
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    at.push(json!(i));
                    out.push(at.clone());
                    places(v, at, out);
                    at.pop();
                }
            }
            _ => {}
        }
    }

    /// `value` with what sits at `path` replaced by `with` (`None`: taken away).
    pub fn changed(value: &Value, path: &[Value], with: Option<&Value>) -> Value {
        let mut value = value.clone();
        let mut here = &mut value;
        for step in &path[..path.len() - 1] {
            here = match step {
                Value::String(k) => &mut here[k.as_str()],
                _ => &mut here[step.as_u64().unwrap() as usize],
            };
        }
        match (here, path.last().unwrap(), with) {
            (Value::Object(map), Value::String(k), Some(w)) => {
                map.insert(k.clone(), w.clone());
            }
            (Value::Object(map), Value::String(k), None) => {
                map.remove(k);
            }
            (Value::Array(items), i, Some(w)) => items[i.as_u64().unwrap() as usize] = w.clone(),
            (Value::Array(items), i, None) => {
                items.remove(i.as_u64().unwrap() as usize);
            }
            _ => unreachable!(),
        }
        value
    }

    /// `value` with each place in it (every key and item, nested ones too) taken away or replaced
    /// by each of [`odd_values`], with a line naming the case.
    pub fn odd_versions(value: &Value) -> Vec<(String, Value)> {
        let mut paths = Vec::new();
        places(value, &mut Vec::new(), &mut paths);
        let mut out = Vec::new();
        for path in &paths {
            for with in std::iter::once(None).chain(odd_values().iter().map(Some)) {
                out.push((format!("{path:?} = {with:?}"), changed(value, path, with)));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    /// Each reader gives what the derived reader of its type gives, the same error sentence
    /// included (without the position text has).
    #[test]
    fn leaves_read_and_refuse_as_serde_does() {
        fn same<T: for<'de> Deserialize<'de> + PartialEq + std::fmt::Debug>(
            text: &str,
            read: fn(Value) -> Result<T>,
        ) {
            let theirs = crate::json::from_str::<T>(text).map_err(|e| {
                let e = e.to_string();
                e.split(" at line ").next().unwrap_or_default().to_owned()
            });
            let value: Value = crate::json::from_str(text).unwrap();
            let ours = read(value).map_err(|e| e.to_string());
            assert_eq!(ours, theirs, "{text}");
        }
        // Values of every kind, then the edges of each number type and of a pair: every reader
        // reads every one of them.
        let kinds = [r#""é🎉""#, "null", "1", "true", "[]", "{}", "-2", "1.5"];
        let edges = [
            "4294967295",
            "4294967296",
            "-1",
            "2147483647",
            "2147483648",
            "-2147483648",
            "-2147483649",
            "18446744073709551615",
            "18446744073709551616",
            "1e3",
            "[1,2]",
            "[1]",
            "[1,2,3]",
            "[1,\"a\"]",
            "[-1,2]",
        ];
        for text in kinds.into_iter().chain(edges) {
            same(text, string);
            same(text, boolean);
            same(text, float);
            same(text, u32);
            same(text, usize);
            same(text, i32);
            same(text, |v| list(v, u32));
            same(text, |v| pair(v, i32));
        }
    }

    #[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
    #[serde(rename_all = "kebab-case")]
    enum Kind {
        One,
        TwoWords,
    }

    #[test]
    fn variants_read_and_refuse_as_serde_does() {
        let read = |v| variant(v, &["one", "two-words"], &[Kind::One, Kind::TwoWords]);
        for text in [
            r#""one""#,
            r#""two-words""#,
            r#"{"one":null}"#,
            r#""three""#,
            r#""One""#,
            r#"{"one":1}"#,
            r#"{"x":1}"#,
            "1",
            "[]",
            "null",
        ] {
            let theirs = crate::json::from_str::<Kind>(text).map_err(|e| {
                let e = e.to_string();
                e.split(" at line ").next().unwrap_or_default().to_owned()
            });
            let ours = read(crate::json::from_str(text).unwrap()).map_err(|e| e.to_string());
            assert_eq!(ours, theirs, "{text}");
        }
        // Refused both ways (serde_json's text reader says it differently).
        for text in ["{}", r#"{"one":null,"two-words":null}"#] {
            assert!(crate::json::from_str::<Kind>(text).is_err(), "{text}");
            assert!(
                read(crate::json::from_str(text).unwrap()).is_err(),
                "{text}"
            );
        }
    }

    #[test]
    fn fields_are_taken_with_their_defaults() {
        let mut f = Fields::of(
            json!({"s": "x", "n": null, "b": true, "f": 2, "e": ""}),
            "struct T",
        )
        .unwrap();
        assert_eq!(f.str("s"), "x");
        assert_eq!(f.opt_str("n"), None);
        assert_eq!(f.opt_str("gone"), None);
        assert_eq!(f.str_or_empty("gone"), "");
        assert!(f.bool("b"));
        assert!(!f.bool_or_false("gone"));
        assert_eq!(f.f64("f"), 2.0);
        assert!(f.done(()).is_ok());
        let mut f = Fields::of(json!({"s": "x", "e": ""}), "struct T").unwrap();
        assert_eq!(f.str("s"), "x");
        assert_eq!(f.str("s"), "", "taken once");
        assert!(!f.bool_or_false("e"));
        assert_eq!(
            f.done(()).unwrap_err().to_string(),
            "missing field `s`",
            "the first error"
        );
        let mut f = Fields::of(json!({"n": null}), "struct T").unwrap();
        f.str_or_empty("n");
        assert_eq!(
            f.done(()).unwrap_err().to_string(),
            "invalid type: null, expected a string"
        );
        assert_eq!(
            Fields::of(json!([1]), "struct T")
                .err()
                .unwrap()
                .to_string(),
            "invalid type: sequence, expected struct T"
        );
    }
}
