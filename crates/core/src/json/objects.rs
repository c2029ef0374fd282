//! Rust types read from JSON, with a struct (or struct variant) read from a JSON object only.
//!
//! serde_json also accepts a struct written as an array of its fields in order
//! (`["gpt-4o", 128000]` for `{"id": "gpt-4o", "contextWindow": 128000}`). Nothing Tandem reads
//! is written that way, and supporting it costs: every struct's derived `visit_seq` is compiled
//! into the module (about 86 KB of the wasm, 21 KB gzip). `Objects` wraps a deserializer
//! (and, recursively, everything it hands out) and asks for a map wherever a struct is wanted,
//! so no `visit_seq` of a struct is ever reachable. An array where an object belongs is an
//! error ("invalid type: sequence, expected struct …"), as it is for a map. (The variants
//! of an internally tagged enum are read by serde from its own buffer, outside the wrapper:
//! Anthropic's events are read without one for this reason and others.)
//!
//! [`from_str`], [`from_slice`] and [`from_value`] are the project's ways into serde_json
//! (`clippy.toml` disallows serde_json's own in shipped code).

use std::fmt;

use serde::de::{
    Deserialize, DeserializeOwned, DeserializeSeed, Deserializer, EnumAccess, Error, MapAccess,
    SeqAccess, VariantAccess, Visitor,
};
use serde_json::Value;

/// `T` from JSON text, as `serde_json::from_str` reads it (trailing whitespace only), structs
/// from objects only.
pub fn from_str<'a, T: Deserialize<'a>>(text: &'a str) -> serde_json::Result<T> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = T::deserialize(Objects(&mut de))?;
    de.end()?;
    Ok(value)
}

/// `T` from JSON bytes (see [`from_str`]), which must be UTF-8 (JSON's only encoding). The
/// bytes are checked and read as text, not through serde_json's byte reader: every type read
/// both ways would otherwise be compiled twice into the module.
pub fn from_slice<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> serde_json::Result<T> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| serde_json::Error::custom(format_args!("the JSON is not UTF-8: {e}")))?;
    from_str(text)
}

/// `T` from a parsed [`Value`] (see [`from_str`]).
pub fn from_value<T: DeserializeOwned>(value: Value) -> serde_json::Result<T> {
    T::deserialize(Objects(value))
}

/// A field's `T` read as a [`Value`] first, then through [`from_value`]: for a big type read
/// from a `Value` elsewhere too (a saved workflow's steps), so its reader is compiled once
/// into the module, not once more for the text reader of the struct holding it
/// (`#[serde(deserialize_with = "crate::json::via_value")]`). A value `T` refuses fails with
/// the same sentence, placed at the end of the field's value.
pub fn via_value<'de, D: Deserializer<'de>, T: DeserializeOwned>(d: D) -> Result<T, D::Error> {
    from_value(Value::deserialize(d)?).map_err(D::Error::custom)
}

/// A deserializer, visitor, access or seed whose every struct is read from a map. One wrapper
/// for all of them: serde hands each to the next, and each must pass the wrapping on.
struct Objects<T>(T);

/// `fn deserialize_x(self, visitor)` (and, after `; named:`, `fn deserialize_x(self, name,
/// visitor)`) for each name: the same call on the wrapped deserializer, the visitor wrapped.
macro_rules! forward_deserialize {
    ($($method:ident)*; named: $($named:ident)*) => {
        $(
            fn $method<V: Visitor<'de>>(self, v: V) -> Result<V::Value, D::Error> {
                self.0.$method(Objects(v))
            }
        )*
        $(
            fn $named<V: Visitor<'de>>(
                self,
                name: &'static str,
                v: V,
            ) -> Result<V::Value, D::Error> {
                self.0.$named(name, Objects(v))
            }
        )*
    };
}

/// `fn visit_x(self, value)` for each name and value type: the wrapped visitor's, unchanged
/// (a plain value hands out nothing to wrap).
macro_rules! forward_visit {
    ($($method:ident($ty:ty))*) => {$(
        fn $method<E: Error>(self, v: $ty) -> Result<V::Value, E> {
            self.0.$method(v)
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Objects<D> {
    type Error = D::Error;

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        // The point of the wrapper: a map, never the array form.
        self.0.deserialize_map(Objects(visitor))
    }

    forward_deserialize! {
        deserialize_any deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32
        deserialize_i64 deserialize_i128 deserialize_u8 deserialize_u16 deserialize_u32
        deserialize_u64 deserialize_u128 deserialize_f32 deserialize_f64 deserialize_char
        deserialize_str deserialize_string deserialize_bytes deserialize_byte_buf
        deserialize_option deserialize_unit deserialize_seq deserialize_map
        deserialize_identifier deserialize_ignored_any;
        named: deserialize_unit_struct deserialize_newtype_struct
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, v: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple(len, Objects(v))
    }
    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        v: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple_struct(name, len, Objects(v))
    }
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_enum(name, variants, Objects(v))
    }
    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Objects<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.expecting(f)
    }

    forward_visit! {
        visit_bool(bool) visit_i8(i8) visit_i16(i16) visit_i32(i32) visit_i64(i64)
        visit_i128(i128) visit_u8(u8) visit_u16(u16) visit_u32(u32) visit_u64(u64)
        visit_u128(u128) visit_f32(f32) visit_f64(f64) visit_char(char) visit_str(&str)
        visit_borrowed_str(&'de str) visit_string(String) visit_bytes(&[u8])
        visit_borrowed_bytes(&'de [u8]) visit_byte_buf(Vec<u8>)
    }

    fn visit_none<E: Error>(self) -> Result<V::Value, E> {
        self.0.visit_none()
    }
    fn visit_unit<E: Error>(self) -> Result<V::Value, E> {
        self.0.visit_unit()
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.0.visit_some(Objects(d))
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.0.visit_newtype_struct(Objects(d))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<V::Value, A::Error> {
        self.0.visit_seq(Objects(a))
    }
    fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<V::Value, A::Error> {
        self.0.visit_map(Objects(a))
    }
    fn visit_enum<A: EnumAccess<'de>>(self, a: A) -> Result<V::Value, A::Error> {
        self.0.visit_enum(Objects(a))
    }
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Objects<S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        self.0.deserialize(Objects(d))
    }
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Objects<A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, A::Error> {
        self.0.next_element_seed(Objects(seed))
    }
    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Objects<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        self.0.next_key_seed(Objects(seed))
    }
    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        self.0.next_value_seed(Objects(seed))
    }
    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: EnumAccess<'de>> EnumAccess<'de> for Objects<A> {
    type Error = A::Error;
    type Variant = Objects<A::Variant>;

    fn variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, Objects<A::Variant>), A::Error> {
        let (value, variant) = self.0.variant_seed(Objects(seed))?;
        Ok((value, Objects(variant)))
    }
}

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for Objects<A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), A::Error> {
        self.0.unit_variant()
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, A::Error> {
        self.0.newtype_variant_seed(Objects(seed))
    }
    fn tuple_variant<V: Visitor<'de>>(self, len: usize, v: V) -> Result<V::Value, A::Error> {
        self.0.tuple_variant(len, Objects(v))
    }
    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, A::Error> {
        // `VariantAccess::struct_variant` would read the array form too: the variant's body is
        // read as a newtype whose value must be a map instead (the same JSON either way).
        self.0.newtype_variant_seed(MapOf(v))
    }
}

/// Reads a map with the visitor: a struct variant's body.
struct MapOf<V>(V);

impl<'de, V: Visitor<'de>> DeserializeSeed<'de> for MapOf<V> {
    type Value = V::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        d.deserialize_map(Objects(self.0))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Deserialize;
    use serde_json::json;

    use super::{from_slice, from_str, from_value};

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "camelCase")]
    struct Model<'a> {
        id: String,
        #[serde(borrow)]
        owner: &'a str,
        context_window: Option<u32>,
        tags: Vec<Tag>,
        kind: Kind,
        extra: BTreeMap<String, f64>,
        pair: (u8, bool),
        unit: (),
        wrapped: Wrapped,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Tag {
        name: String,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Wrapped(i64);

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "camelCase")]
    enum Kind {
        Chat,
        Tuned(String),
        Pair(u8, u8),
        Custom { base: String, steps: Option<u32> },
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(tag = "type")]
    enum Tagged {
        A { x: u8 },
        B,
    }

    const TEXT: &str = r#"{"id":"m1","owner":"me","contextWindow":null,"tags":[{"name":"a"},{"name":"b"}],
        "kind":{"custom":{"base":"gpt","steps":3}},"extra":{"t":0.5},"pair":[7,true],"unit":null,
        "wrapped":-4}"#;

    /// Everything serde_json reads from objects, arrays, enums in all four forms, options,
    /// tuples, newtypes and borrowed strings reads the same through the wrapper.
    #[test]
    fn reads_what_serde_json_reads_from_objects() {
        #[allow(clippy::disallowed_methods)]
        let direct: Model<'_> = serde_json::from_str(TEXT).unwrap();
        let wrapped: Model<'_> = from_str(TEXT).unwrap();
        assert_eq!(wrapped, direct);
        assert_eq!(from_slice::<Model<'_>>(TEXT.as_bytes()).unwrap(), direct);
        for (text, kind) in [
            (r#""chat""#, Kind::Chat),
            (r#"{"tuned":"x"}"#, Kind::Tuned("x".into())),
            (r#"{"pair":[1,2]}"#, Kind::Pair(1, 2)),
            (
                r#"{"custom":{"base":"b"}}"#,
                Kind::Custom {
                    base: "b".into(),
                    steps: None,
                },
            ),
        ] {
            assert_eq!(from_str::<Kind>(text).unwrap(), kind, "{text}");
            let value: serde_json::Value = from_str(text).unwrap();
            assert_eq!(from_value::<Kind>(value).unwrap(), kind, "{text}");
        }
        assert_eq!(
            from_str::<Tagged>(r#"{"x":1,"type":"A"}"#).unwrap(),
            Tagged::A { x: 1 }
        );
        assert_eq!(
            from_value::<Tagged>(json!({"type": "B"})).unwrap(),
            Tagged::B
        );
        assert_eq!(
            from_value::<Tag>(json!({"name": "n"})).unwrap(),
            Tag { name: "n".into() }
        );
    }

    /// A struct written as an array of its fields, which serde_json accepts, is refused, and
    /// so is trailing text.
    #[test]
    fn refuses_the_array_form_of_a_struct() {
        #[allow(clippy::disallowed_methods)]
        let lenient: Result<Tag, _> = serde_json::from_str(r#"["a"]"#);
        assert!(lenient.is_ok());
        let err = from_str::<Tag>(r#"["a"]"#).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("invalid type: sequence, expected struct Tag"),
            "{err}"
        );
        assert!(from_value::<Tag>(json!(["a"])).is_err());
        assert!(from_str::<Kind>(r#"{"custom":["b",1]}"#).is_err());
        assert!(from_value::<Kind>(json!({"custom": ["b", 1]})).is_err());
        assert!(from_str::<Tag>(r#"{"name":"a"} x"#).is_err());
        assert!(from_str::<Tag>("{\"name\":\"a\"} \n").is_ok());
    }

    /// Bytes that are not UTF-8 are refused, as serde_json's own `from_slice` refuses them,
    /// with a sentence; UTF-8 bytes read as the same text does.
    #[test]
    fn refuses_bytes_that_are_not_utf8() {
        let err = from_slice::<serde_json::Value>(b"{\"name\":\"\xff\"}").unwrap_err();
        assert!(
            err.to_string().starts_with("the JSON is not UTF-8"),
            "{err}"
        );
        #[allow(clippy::disallowed_methods)]
        let theirs = serde_json::from_slice::<serde_json::Value>(b"{\"name\":\"\xff\"}");
        assert!(theirs.is_err());
        assert_eq!(
            from_slice::<Tag>("{\"name\":\"é\"}".as_bytes()).unwrap(),
            Tag { name: "é".into() }
        );
    }
}
