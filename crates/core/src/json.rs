//! JSON text from outside, read the way a browser's `JSON.parse` reads it where serde_json
//! is stricter: a UTF-16 surrogate escape without its other half (`"\ud83d"`) is valid JSON
//! to `JSON.parse`, and providers send emoji that way when a stream splits one between two
//! chunks (`"\ud83d"` in one delta, `"\ude00"` in the next).
//!
//! A lone half is read as a mark, one character from the last 2,048 code points of
//! Unicode's plane 16 (private use, never produced by a model), and
//! [`SurrogateJoiner`] puts the halves of consecutive texts back together.
//!
//! Every Rust type read from JSON is read through [`from_str`], [`from_slice`] or
//! [`from_value`] (`objects.rs`): structs from JSON objects only, which keeps serde's
//! array-form code for every struct out of the wasm.

use serde::de::DeserializeOwned;

pub mod fields;
#[doc(hidden)]
pub mod lean;
mod objects;
pub use objects::{from_slice, from_str, from_value, via_value};

/// The first mark: a lone surrogate `u` (0xD800..=0xDFFF) reads as `MARK_BASE + (u - 0xD800)`.
const MARK_BASE: u32 = 0x10_F800;
const HIGH: std::ops::Range<u32> = 0xD800..0xDC00;
const LOW: std::ops::Range<u32> = 0xDC00..0xE000;

/// Parses `text`; lone surrogate escapes become marks instead of an error.
pub fn from_str_lenient<T: DeserializeOwned>(text: &str) -> serde_json::Result<T> {
    from_str(text).or_else(|e| match mark_lone_surrogates(text) {
        Some(marked) => from_str(&marked).map_err(|_| e),
        None => Err(e),
    })
}

/// Whether `text` is one complete JSON value (lone surrogate escapes allowed).
pub fn is_complete(text: &str) -> bool {
    from_str_lenient::<serde::de::IgnoredAny>(text).is_ok()
}

/// The four hex digits at `b[at..at + 4]` as a number.
fn hex4(b: &[u8], at: usize) -> Option<u32> {
    let digits = std::str::from_utf8(b.get(at..at + 4)?).ok()?;
    u32::from_str_radix(digits, 16).ok()
}

/// The `\uXXXX` escape starting at `b[at]`, if there is one.
fn escape_at(b: &[u8], at: usize) -> Option<u32> {
    (b.get(at..at + 2)? == b"\\u")
        .then(|| hex4(b, at + 2))
        .flatten()
}

/// `text` with every lone surrogate escape replaced by its mark; `None` when it has none.
/// Escapes are read in order from each backslash, so `\\u` (an escaped backslash, then `u`)
/// is never taken for an escape.
fn mark_lone_surrogates(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let mut out = String::new();
    let mut copied = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        let Some(unit) = escape_at(b, i) else {
            // Any other escape is two bytes; skipping both keeps `\\` from pairing up wrong.
            i += 2;
            continue;
        };
        let paired = HIGH.contains(&unit) && escape_at(b, i + 6).is_some_and(|l| LOW.contains(&l));
        if paired {
            i += 12;
        } else if HIGH.contains(&unit) || LOW.contains(&unit) {
            out.push_str(&text[copied..i]);
            out.push(char::from_u32(MARK_BASE + (unit - 0xD800))?);
            i += 6;
            copied = i;
        } else {
            i += 6;
        }
    }
    if copied == 0 {
        return None;
    }
    out.push_str(&text[copied..]);
    Some(out)
}

/// The surrogate a mark stands for.
fn unmark(c: char) -> Option<u32> {
    let c = u32::from(c);
    (c >= MARK_BASE).then(|| 0xD800 + (c - MARK_BASE))
}

/// Joins the marked halves of a surrogate pair across consecutive texts (the deltas of one
/// answer). A half that finds no partner becomes U+FFFD, as a browser shows it.
#[derive(Debug, Default)]
pub struct SurrogateJoiner {
    /// A high half that ended the last text, waiting for its low half.
    high: Option<u32>,
}

impl SurrogateJoiner {
    /// `text` with its marks resolved. A high half at its very end is held for the next text.
    pub fn join(&mut self, text: String) -> String {
        if self.high.is_none() && !text.chars().any(|c| unmark(c).is_some()) {
            return text;
        }
        let mut out = String::with_capacity(text.len());
        for c in text.chars() {
            let unit = unmark(c);
            match (self.high.take(), unit) {
                (Some(high), Some(low)) if LOW.contains(&low) => {
                    let code = 0x1_0000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                    out.push(char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER));
                    continue;
                }
                (Some(_), _) => out.push(char::REPLACEMENT_CHARACTER),
                (None, _) => {}
            }
            match unit {
                Some(high) if HIGH.contains(&high) => self.high = Some(high),
                Some(_) => out.push(char::REPLACEMENT_CHARACTER),
                None => out.push(c),
            }
        }
        out
    }

    /// The answer ended: a half still held, as U+FFFD.
    pub fn flush(&mut self) -> Option<String> {
        self.high
            .take()
            .map(|_| char::REPLACEMENT_CHARACTER.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(payloads: &[&str]) -> String {
        let mut joiner = SurrogateJoiner::default();
        let mut out = String::new();
        for p in payloads {
            let s: String = from_str_lenient(p).unwrap();
            out.push_str(&joiner.join(s));
        }
        out.extend(joiner.flush());
        out
    }

    #[test]
    fn surrogate_halves_in_separate_escapes_are_joined() {
        assert_eq!(texts(&[r#""a\ud83d""#, r#""\ude00b""#]), "a😀b");
        assert_eq!(texts(&[r#""\ud83d\ude00""#]), "😀");
        assert_eq!(texts(&[r#""\uD83D""#, r#""\uDE00""#]), "😀");
    }

    #[test]
    fn halves_without_a_partner_read_as_replacement_characters() {
        assert_eq!(texts(&[r#""a\ud83d""#, r#""b""#]), "a\u{fffd}b");
        assert_eq!(texts(&[r#""\ude00x""#]), "\u{fffd}x");
        assert_eq!(texts(&[r#""x\ud83d""#]), "x\u{fffd}");
        assert_eq!(texts(&[r#""\ud83d\ud83d\ude00""#]), "\u{fffd}😀");
    }

    #[test]
    fn an_escaped_backslash_before_u_is_text_not_an_escape() {
        assert_eq!(texts(&[r#""\\ud83d""#]), "\\ud83d");
        assert_eq!(mark_lone_surrogates(r#""\\ud83d""#), None);
        assert!(!is_complete(r#""\ud83d"#));
        assert!(is_complete(r#"{"a":"\ud83d"}"#));
    }
}
