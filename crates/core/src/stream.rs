//! What every provider's stream decoder produces.

use serde::{Deserialize, Serialize};

use crate::errors::ProviderError;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input: u32,
    pub output: u32,
}

impl Usage {
    /// A provider's counts as reported; a count it left out is 0.
    pub fn reported(input: Option<u32>, output: Option<u32>) -> StreamEvent {
        StreamEvent::Usage(Self {
            input: input.unwrap_or(0),
            output: output.unwrap_or(0),
        })
    }

    /// The sum of two requests' counts: an answer with tool rounds sends several requests,
    /// and the person pays for all of them.
    pub fn plus(self, other: Self) -> Self {
        Self {
            input: self.input.saturating_add(other.input),
            output: self.output.saturating_add(other.output),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StreamEvent {
    /// Assistant text to append.
    Delta(String),
    /// A complete tool call: decoders assemble arguments streamed in pieces and emit the
    /// call once, when its arguments are whole.
    ToolCall(crate::request::ToolCall),
    /// Token counts reported by the provider (replace our estimates).
    Usage(Usage),
    /// The provider's reason for stopping ("stop", "length", "end_turn", "STOP", ...).
    Finish(String),
    /// The model name the provider says answered.
    Model(String),
    /// The stream's explicit end marker was seen; nothing after it matters.
    Done,
    /// A frame was skipped (unreadable, or over the size limit) and the stream went on: a
    /// sentence for the Debug drawer, never part of the answer.
    Note(String),
}

/// Turns the raw bytes of a streamed response body into events. Bytes may be split
/// anywhere (inside a UTF-8 character, inside a line); a decoder buffers what it cannot
/// decode yet.
pub trait StreamDecoder {
    fn push(&mut self, bytes: &[u8]) -> Result<Vec<StreamEvent>, ProviderError>;
    /// The body ended. Returns the last events, or `StreamCut` if the provider's stream
    /// ended before its end marker.
    fn finish(&mut self) -> Result<Vec<StreamEvent>, ProviderError>;
}

/// Joins adjacent [`StreamEvent::Delta`]s of one network chunk into one, keeping every other
/// event where it was: a provider that sends a frame per word would otherwise cost the panel
/// one Port message per word (each message costs far more to deliver than to draw).
pub fn coalesce_deltas(events: Vec<StreamEvent>) -> Vec<StreamEvent> {
    let mut out: Vec<StreamEvent> = Vec::with_capacity(events.len());
    for event in events {
        match (out.last_mut(), event) {
            (Some(StreamEvent::Delta(text)), StreamEvent::Delta(more)) => text.push_str(&more),
            (_, event) => out.push(event),
        }
    }
    out
}

#[cfg(test)]
mod coalesce_tests {
    use super::*;

    #[test]
    fn adjacent_deltas_join_and_nothing_else_moves() {
        let d = |s: &str| StreamEvent::Delta(s.into());
        let events = vec![
            StreamEvent::Model("m".into()),
            d("Hel"),
            d("lo "),
            d("wörld"),
            StreamEvent::Note("skipped".into()),
            d("!"),
            StreamEvent::Finish("stop".into()),
            StreamEvent::Done,
        ];
        assert_eq!(
            coalesce_deltas(events),
            vec![
                StreamEvent::Model("m".into()),
                d("Hello wörld"),
                StreamEvent::Note("skipped".into()),
                d("!"),
                StreamEvent::Finish("stop".into()),
                StreamEvent::Done,
            ]
        );
        assert_eq!(coalesce_deltas(Vec::new()), Vec::new());
    }
}
