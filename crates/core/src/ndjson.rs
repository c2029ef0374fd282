//! Newline-delimited JSON (<https://github.com/ndjson/ndjson-spec>), as Ollama streams it: one
//! JSON value per line. Also home of [`LineSplitter`], which the SSE decoder shares.

/// Splits a byte stream into lines ended by LF, CR or CRLF, wherever the chunks were cut.
/// Only complete lines are decoded, so a UTF-8 character or a CRLF pair split across two
/// chunks is whole again before decoding (CR and LF never occur inside a UTF-8 sequence).
#[derive(Debug, Default)]
pub struct LineSplitter {
    partial: Vec<u8>,
    /// The last chunk ended with CR: an LF opening the next chunk belongs to that CRLF.
    after_cr: bool,
}

impl LineSplitter {
    pub fn new() -> Self {
        Self::default()
    }

    /// The lines completed by `bytes`, without their line endings.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        // An empty chunk must not consume the pending CR's chance to swallow its LF.
        if bytes.is_empty() {
            return vec![];
        }
        let mut rest = bytes;
        if std::mem::take(&mut self.after_cr) {
            rest = rest.strip_prefix(b"\n").unwrap_or(rest);
        }
        let mut lines = Vec::new();
        while let Some(end) = rest.iter().position(|&b| b == b'\n' || b == b'\r') {
            self.partial.extend_from_slice(&rest[..end]);
            lines.push(String::from_utf8_lossy(&self.partial).into_owned());
            self.partial.clear();
            let cr = rest[end] == b'\r';
            rest = &rest[end + 1..];
            if cr {
                match rest.strip_prefix(b"\n") {
                    Some(after) => rest = after,
                    None => self.after_cr = rest.is_empty(),
                }
            }
        }
        self.partial.extend_from_slice(rest);
        lines
    }

    /// The body ended: the unterminated last line, if there is one.
    pub fn finish(&mut self) -> Option<String> {
        self.after_cr = false;
        let tail = std::mem::take(&mut self.partial);
        (!tail.is_empty()).then(|| String::from_utf8_lossy(&tail).into_owned())
    }
}

/// Yields each non-blank line of an NDJSON body.
#[derive(Debug, Default)]
pub struct NdjsonDecoder {
    lines: LineSplitter,
}

impl NdjsonDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        self.lines
            .push(bytes)
            .into_iter()
            .filter(|l| !l.trim().is_empty())
            .collect()
    }

    /// The unterminated last line, only if it is a complete JSON value: a body cut in the
    /// middle of a record must read as cut, not as malformed.
    pub fn finish(&mut self) -> Option<String> {
        self.lines
            .finish()
            .filter(|l| serde_json::from_str::<serde::de::IgnoredAny>(l).is_ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `chunks`, returns every line then `<tail>` for what `finish` gave.
    fn lines(chunks: &[&[u8]]) -> Vec<String> {
        let mut d = NdjsonDecoder::new();
        let mut out: Vec<String> = chunks.iter().flat_map(|c| d.push(c)).collect();
        out.extend(d.finish().map(|t| format!("<{t}>")));
        out
    }

    fn check(input: &str, expected: &[&str]) {
        let bytes = input.as_bytes();
        assert_eq!(lines(&[bytes]), expected, "whole {input:?}");
        for i in 0..=bytes.len() {
            assert_eq!(
                lines(&[&bytes[..i], &bytes[i..]]),
                expected,
                "{input:?} split at {i}"
            );
        }
        let singles: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(lines(&singles), expected, "{input:?} byte by byte");
    }

    #[test]
    fn lines_survive_any_split() {
        check(
            "{\"a\":\"héllo 世界 🎉\"}\n{\"b\":2}\n",
            &["{\"a\":\"héllo 世界 🎉\"}", "{\"b\":2}"],
        );
        check(
            "{\"a\":1}\r\n\r\n{\"b\":2}\r\n",
            &["{\"a\":1}", "{\"b\":2}"],
        );
        check("{\"a\":1}\r{\"b\":2}\r", &["{\"a\":1}", "{\"b\":2}"]);
        // A CR, an empty chunk, then the LF: still one line ending.
        assert_eq!(
            lines(&[b"{\"a\":1}\r", b"", b"\n{\"b\":2}\n"]),
            ["{\"a\":1}", "{\"b\":2}"]
        );
    }

    #[test]
    fn unterminated_tail_counts_only_when_complete() {
        check(
            "{\"a\":1}\n{\"done\":true}",
            &["{\"a\":1}", "<{\"done\":true}>"],
        );
        check("{\"a\":1}\n{\"message\":{\"content\":\"hé", &["{\"a\":1}"]);
    }
}
