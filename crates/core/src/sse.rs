//! Server-Sent Events, decoded as the WHATWG HTML standard's "Interpreting an event stream"
//! describes (<https://html.spec.whatwg.org/multipage/server-sent-events.html>): `event:`,
//! multi-line `data:` joined with `\n`, `id:`, `:` comments, a blank line dispatches, CR / LF /
//! CRLF line endings, one optional space after the colon, a leading BOM ignored.

use crate::ndjson::{Line, LineSplitter};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, `"message"` when absent.
    pub event: String,
    pub data: String,
    /// The last event ID seen so far (it persists across events, as in the spec).
    pub id: Option<String>,
    /// Bytes of over-long lines dropped from this event ([`crate::ndjson::MAX_LINE_BYTES`]);
    /// when not 0, `data` is incomplete and the event must not be read as a whole.
    pub dropped: usize,
}

#[derive(Debug, Default)]
pub struct SseDecoder {
    lines: LineSplitter,
    started: bool,
    event: String,
    /// Every `data:` line adds its value and `\n`, so empty means "no data line yet".
    data: String,
    last_id: Option<String>,
    /// Bytes of over-long lines dropped since the last dispatch.
    dropped: usize,
}

impl SseDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder that drops lines longer than `limit` bytes.
    pub fn with_line_limit(limit: usize) -> Self {
        Self {
            lines: LineSplitter::with_limit(limit),
            ..Self::default()
        }
    }

    /// The events completed by `bytes`, which may be cut anywhere.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        for line in self.lines.push(bytes) {
            match line {
                Line::Text(line) => self.line(&line, &mut out),
                // Which field it was is lost with it; the event it belonged to is incomplete.
                Line::Overlong(bytes) => {
                    self.started = true;
                    self.dropped += bytes;
                }
            }
        }
        out
    }

    /// The body ended. An unterminated last line is dropped (it may be cut). Unlike the
    /// spec, which drops an event missing its final blank line, an event whose lines are all
    /// complete is dispatched: some servers end the body right after the last `data:` line,
    /// and whether the stream is complete is the adapter's call, from its end marker.
    pub fn finish(&mut self) -> Vec<SseEvent> {
        self.lines.finish();
        let mut out = Vec::new();
        self.dispatch(&mut out);
        out
    }

    fn line(&mut self, line: &str, out: &mut Vec<SseEvent>) {
        let line = match std::mem::replace(&mut self.started, true) {
            false => line.strip_prefix('\u{feff}').unwrap_or(line),
            true => line,
        };
        if line.is_empty() {
            return self.dispatch(out);
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "" => {} // a comment (`:keep-alive`)
            "event" => self.event = value.to_string(),
            "data" => {
                self.data.push_str(value);
                self.data.push('\n');
            }
            "id" if !value.contains('\0') => self.last_id = Some(value.to_string()),
            _ => {} // `retry` (we never reconnect) and unknown fields
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = std::mem::take(&mut self.event);
        let mut data = std::mem::take(&mut self.data);
        let dropped = std::mem::take(&mut self.dropped);
        if data.pop().is_none() && dropped == 0 {
            return;
        }
        let event = if event.is_empty() {
            "message".to_string()
        } else {
            event
        };
        out.push(SseEvent {
            event,
            data,
            id: self.last_id.clone(),
            dropped,
        });
    }
}

#[cfg(test)]
mod tests {
    use expect_test::{expect, Expect};
    use proptest::prelude::*;

    use super::*;

    fn decode(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut d = SseDecoder::new();
        let mut out: Vec<SseEvent> = chunks.iter().flat_map(|c| d.push(c)).collect();
        out.extend(d.finish());
        out
    }

    fn render(events: &[SseEvent]) -> String {
        events
            .iter()
            .map(|e| match e.dropped {
                0 => format!("{} {:?} id={:?}\n", e.event, e.data, e.id),
                n => format!("{} {:?} id={:?} dropped={n}\n", e.event, e.data, e.id),
            })
            .collect()
    }

    /// Decodes `input` whole against `expect`, then split at every point and byte by byte.
    fn check(input: &str, expect: Expect) -> String {
        let bytes = input.as_bytes();
        let whole = decode(&[bytes]);
        expect.assert_eq(&render(&whole));
        check_splits(bytes, &whole);
        render(&whole)
    }

    fn check_splits(bytes: &[u8], whole: &[SseEvent]) {
        for i in 0..=bytes.len() {
            assert_eq!(decode(&[&bytes[..i], &bytes[i..]]), whole, "split at {i}");
        }
        let singles: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(decode(&singles), whole, "byte by byte");
    }

    #[test]
    fn fields_comments_and_multiline_data() {
        check(
            ": keep-alive\nevent: delta\nid: 7\ndata: héllo\ndata:世界 🎉\n\ndata\n\nevent: empty\n\ndata:  two spaces\nretry: 10\nunknown: x\n\n",
            expect![[r#"
                delta "héllo\n世界 🎉" id=Some("7")
                message "" id=Some("7")
                message " two spaces" id=Some("7")
            "#]],
        );
    }

    #[test]
    fn every_line_ending_and_a_bom() {
        let lf = check(
            "\u{feff}data: a\n\nevent: e\ndata: b\ndata: c\n\n",
            expect![[r#"
                message "a" id=None
                e "b\nc" id=None
            "#]],
        );
        for other in [
            "\u{feff}data: a\r\n\r\nevent: e\r\ndata: b\r\ndata: c\r\n\r\n",
            "data: a\r\revent: e\rdata: b\rdata: c\r\r",
        ] {
            let events = decode(&[other.as_bytes()]);
            assert_eq!(render(&events), lf, "{other:?}");
            check_splits(other.as_bytes(), &events);
        }
    }

    #[test]
    fn end_of_body_keeps_complete_lines_only() {
        check(
            "data: a\n\ndata: b\ndata: c\n",
            expect![[r#"
                message "a" id=None
                message "b\nc" id=None
            "#]],
        );
        check(
            "data: a\n\ndata: {\"cut",
            expect![[r#"
                message "a" id=None
            "#]],
        );
    }

    proptest! {
        #[test]
        fn arbitrary_chunking_never_changes_events(
            cuts in proptest::collection::vec(0usize..200, 0..8),
        ) {
            let input =
                "event: x\r\ndata: é世🎉\r\n\r\n: c\rdata: 1\rdata: 2\r\rid: 9\ndata: z\n\n".as_bytes();
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (input.len() + 1)).collect();
            cuts.sort_unstable();
            let mut chunks = Vec::new();
            let mut start = 0;
            for c in cuts {
                chunks.push(&input[start..c]);
                start = c;
            }
            chunks.push(&input[start..]);
            prop_assert_eq!(decode(&chunks), decode(&[input]));
        }
    }

    #[test]
    fn an_overlong_line_marks_its_event_and_the_stream_goes_on() {
        let input = "data: a\n\ndata: 0123456789abcdef\nid: 2\n\ndata: b\n\n".as_bytes();
        let decode = |chunks: &[&[u8]]| {
            let mut d = SseDecoder::with_line_limit(12);
            let mut out: Vec<SseEvent> = chunks.iter().flat_map(|c| d.push(c)).collect();
            out.extend(d.finish());
            render(&out)
        };
        let whole = decode(&[input]);
        expect![[r#"
            message "a" id=None
            message "" id=Some("2") dropped=22
            message "b" id=Some("2")
        "#]]
        .assert_eq(&whole);
        for i in 0..=input.len() {
            assert_eq!(decode(&[&input[..i], &input[i..]]), whole, "split at {i}");
        }
    }
}
