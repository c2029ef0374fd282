//! Newline-delimited JSON (<https://github.com/ndjson/ndjson-spec>), as Ollama streams it: one
//! JSON value per line. Also home of [`LineSplitter`], which the SSE decoder shares.

/// The longest line kept, in bytes. No provider sends a frame anywhere near this (image
/// output, the largest, is a few megabytes of base64); a longer line is a broken or hostile
/// server, and buffering it whole would let one line take the worker's memory.
pub const MAX_LINE_BYTES: usize = 4 << 20;

/// One line of a body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Line {
    /// A complete line, without its line ending.
    Text(String),
    /// A line longer than the limit, dropped as it arrived; its length in bytes.
    Overlong(usize),
}

/// Splits a byte stream into lines ended by LF, CR or CRLF, wherever the chunks were cut.
/// Only complete lines are decoded, so a UTF-8 character or a CRLF pair split across two
/// chunks is whole again before decoding (CR and LF never occur inside a UTF-8 sequence).
#[derive(Debug)]
pub struct LineSplitter {
    partial: Vec<u8>,
    /// The last chunk ended with CR: an LF opening the next chunk belongs to that CRLF.
    after_cr: bool,
    limit: usize,
    /// The current line passed the limit: its bytes are counted, not kept.
    dropped: Option<usize>,
}

impl Default for LineSplitter {
    fn default() -> Self {
        Self::with_limit(MAX_LINE_BYTES)
    }
}

impl LineSplitter {
    pub fn new() -> Self {
        Self::default()
    }

    /// A splitter that drops lines longer than `limit` bytes (tests use a small one).
    pub fn with_limit(limit: usize) -> Self {
        Self {
            partial: Vec::new(),
            after_cr: false,
            limit,
            dropped: None,
        }
    }

    /// The lines completed by `bytes`, without their line endings.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<Line> {
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
            self.take(&rest[..end]);
            lines.push(match self.dropped.take() {
                Some(bytes) => Line::Overlong(bytes),
                None => Line::Text(String::from_utf8_lossy(&self.partial).into_owned()),
            });
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
        self.take(rest);
        lines
    }

    /// Adds `bytes` to the current line, or only counts them once it is over the limit. The
    /// decision depends on the line's total length only, never on where chunks were cut.
    fn take(&mut self, bytes: &[u8]) {
        if let Some(dropped) = &mut self.dropped {
            *dropped += bytes.len();
        } else if self.partial.len() + bytes.len() > self.limit {
            self.dropped = Some(self.partial.len() + bytes.len());
            self.partial = Vec::new();
        } else {
            self.partial.extend_from_slice(bytes);
        }
    }

    /// The body ended: the unterminated last line, if there is one.
    pub fn finish(&mut self) -> Option<Line> {
        self.after_cr = false;
        let tail = std::mem::take(&mut self.partial);
        if let Some(bytes) = self.dropped.take() {
            return Some(Line::Overlong(bytes));
        }
        (!tail.is_empty()).then(|| Line::Text(String::from_utf8_lossy(&tail).into_owned()))
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

    /// A decoder that drops lines longer than `limit` bytes.
    pub fn with_line_limit(limit: usize) -> Self {
        Self {
            lines: LineSplitter::with_limit(limit),
        }
    }

    pub fn push(&mut self, bytes: &[u8]) -> Vec<Line> {
        self.lines
            .push(bytes)
            .into_iter()
            .filter(|l| !matches!(l, Line::Text(t) if t.trim().is_empty()))
            .collect()
    }

    /// The unterminated last line, only if it is a complete JSON value: a body cut in the
    /// middle of a record must read as cut, not as malformed. An over-long one cannot be
    /// told apart from a cut one, so it is dropped too.
    pub fn finish(&mut self) -> Option<String> {
        match self.lines.finish()? {
            Line::Text(l) if crate::json::is_complete(&l) => Some(l),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `chunks`, returns every line then `<tail>` for what `finish` gave.
    fn lines(chunks: &[&[u8]]) -> Vec<String> {
        lines_with(NdjsonDecoder::new(), chunks)
    }

    fn lines_with(mut d: NdjsonDecoder, chunks: &[&[u8]]) -> Vec<String> {
        let mut out: Vec<String> = chunks
            .iter()
            .flat_map(|c| d.push(c))
            .map(|l| match l {
                Line::Text(t) => t,
                Line::Overlong(n) => format!("({n} bytes dropped)"),
            })
            .collect();
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

    #[test]
    fn an_overlong_line_is_dropped_whatever_the_chunking_and_the_next_line_is_read() {
        let input = b"{\"a\":1}\n{\"long\":\"0123456789\"}\r\n{\"b\":2}\n{\"c\":\"cut-too-long";
        let expected = ["{\"a\":1}", "(21 bytes dropped)", "{\"b\":2}"];
        let decode = |chunks: &[&[u8]]| lines_with(NdjsonDecoder::with_line_limit(16), chunks);
        assert_eq!(decode(&[input]), expected);
        for i in 0..=input.len() {
            assert_eq!(
                decode(&[&input[..i], &input[i..]]),
                expected,
                "split at {i}"
            );
        }
        let singles: Vec<&[u8]> = input.chunks(1).collect();
        assert_eq!(decode(&singles), expected);
        // Exactly at the limit is kept.
        assert_eq!(decode(&[b"{\"k\":\"123456\"}\n"]), ["{\"k\":\"123456\"}"]);
    }
}
