//! Distilling a session into a context that never exceeds its token budget.

use serde::{Deserialize, Serialize};

use super::{MemoryConfig, MemoryMessage, SessionContext};
use crate::chat::Role;

const SEPARATOR: &str = "\n\n";
const ELLIPSIS: char = '…';

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextMetrics {
    /// Estimated tokens of the context text; never above `budget`.
    pub used_tokens: usize,
    pub budget: usize,
    /// At least one message is given as a compressed "(Past) …" line.
    pub middle_distilled: bool,
    /// The seed alone did not fit: it was cut (or, when not even its label fits, left out).
    pub seed_truncated: bool,
    /// Messages given, in full or compressed.
    pub included: usize,
    /// Messages left out for lack of budget.
    pub omitted: usize,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BuiltContext {
    /// Chronological lines separated by blank lines; empty when nothing was said yet.
    pub text: String,
    pub metrics: ContextMetrics,
}

/// Picks, in priority order, the seed (in full, or cut to the budget), the last `tail_size`
/// messages in full, then older messages compressed, each newest first while they fit, and
/// renders them oldest first. Messages hidden from context are not there at all: the seed is
/// the first visible message, and the metrics count visible messages only.
pub fn build_context(session: &SessionContext, config: &MemoryConfig) -> BuiltContext {
    let messages: Vec<&MemoryMessage> = session.messages.iter().filter(|m| !m.hidden).collect();
    let budget = config.budget_tokens;
    let mut packer = Packer {
        budget,
        used: 0,
        parts: Vec::new(),
    };
    let first = usize::from(config.preserve_seed && !messages.is_empty());
    let mut seed_truncated = false;
    if let Some(seed) = messages.first().filter(|_| first == 1) {
        if !packer.add(0, full_line(seed), false) {
            seed_truncated = true;
            if let Some(line) = truncated_line(seed, budget) {
                packer.add(0, line, false);
            }
        }
    }
    // A cut seed leaves at most a token or two: nothing else is worth adding after it.
    if !seed_truncated {
        // A tail message too long to give in full is compressed instead, and so is everything
        // older: what is given in full is always the latest, and what is given at all is an
        // unbroken run up to the newest message.
        let tail_start = messages.len().saturating_sub(config.tail_size).max(first);
        let mut in_full = true;
        for (i, message) in messages.iter().enumerate().skip(first).rev() {
            in_full = in_full && i >= tail_start && packer.add(i, full_line(message), false);
            if !in_full && !packer.add(i, compressed_line(message, config.middle_chars), true) {
                break;
            }
        }
    }
    let mut parts = packer.parts;
    crate::sort::sort_by_key(&mut parts, |part| part.index);
    let render = |parts: &[Part]| {
        parts
            .iter()
            .map(|p| p.line.as_str())
            .collect::<Vec<_>>()
            .join(SEPARATOR)
    };
    let mut text = render(&parts);
    // The packer bounds the sum of per-line estimates, which bounds the whole text for this
    // estimator; a real tokenizer may count a joined text differently, so re-measure and drop
    // the oldest non-seed line until it fits.
    while estimate_tokens(&text) > budget {
        parts.remove(usize::from(
            first == 1 && parts.len() > 1 && parts[0].index == 0,
        ));
        text = render(&parts);
    }
    BuiltContext {
        metrics: ContextMetrics {
            used_tokens: estimate_tokens(&text),
            budget,
            middle_distilled: parts.iter().any(|p| p.compressed),
            seed_truncated,
            included: parts.len(),
            omitted: messages.len() - parts.len(),
        },
        text,
    }
}

struct Part {
    index: usize,
    line: String,
    compressed: bool,
}

struct Packer {
    budget: usize,
    used: usize,
    parts: Vec<Part>,
}

impl Packer {
    /// Takes `line` if it fits what is left, counting one separator per line after the first.
    fn add(&mut self, index: usize, line: String, compressed: bool) -> bool {
        let separator = if self.parts.is_empty() {
            0
        } else {
            estimate_tokens(SEPARATOR)
        };
        let cost = estimate_tokens(&line) + separator;
        let fits = self.used + cost <= self.budget;
        if fits {
            self.used += cost;
            self.parts.push(Part {
                index,
                line,
                compressed,
            });
        }
        fits
    }
}

fn label(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

/// The message's text for the context: a quoted selection is marked as such, in brackets,
/// before the question (the whole context is fenced as a record, so this needs no fence).
fn text_of(message: &MemoryMessage) -> String {
    match &message.quote {
        Some(quote) => format!("[selected on the page: {quote}] {}", message.content),
        None => message.content.clone(),
    }
}

fn full_line(message: &MemoryMessage) -> String {
    format!("{}: {}", label(message.role), text_of(message))
}

/// One line per past message: the "(Past) role:" labels stay unambiguous and whitespace runs
/// cost no tokens.
fn compressed_line(message: &MemoryMessage, max_chars: usize) -> String {
    let text = text_of(message);
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let short = if flat.chars().count() <= max_chars {
        flat
    } else {
        format!(
            "{}{ELLIPSIS}",
            prefix_chars(&flat, max_chars.saturating_sub(1)).trim_end()
        )
    };
    format!("(Past) {}: {short}", label(message.role))
}

/// The seed cut to the longest prefix that fits `budget` with its ellipsis; `None` when not
/// even `role: …` fits.
fn truncated_line(seed: &MemoryMessage, budget: usize) -> Option<String> {
    let text = text_of(seed);
    let line = |n| {
        let kept = prefix_chars(&text, n).trim_end();
        format!("{}: {kept}{ELLIPSIS}", label(seed.role))
    };
    if estimate_tokens(&line(0)) > budget {
        return None;
    }
    // The estimate grows with the prefix, so binary-search how many characters to keep.
    let (mut fits, mut too_long) = (0, text.chars().count());
    while fits < too_long {
        let mid = fits + (too_long - fits).div_ceil(2);
        if estimate_tokens(&line(mid)) <= budget {
            fits = mid;
        } else {
            too_long = mid - 1;
        }
    }
    Some(line(fits))
}

/// The longest prefix of at most `max_chars` chars that does not end inside an emoji or
/// accented-letter sequence. A heuristic rather than full UAX #29 segmentation (which would
/// need a dependency): it knows ZWJ sequences, skin tones, variation selectors, keycaps, tag
/// sequences (subdivision flags), regional-indicator flags and combining marks. It may keep
/// fewer chars than asked, down to none when one sequence is longer than `max_chars`.
pub(super) fn prefix_chars(text: &str, max_chars: usize) -> &str {
    let Some((mut end, _)) = text.char_indices().nth(max_chars) else {
        return text;
    };
    while end > 0 && splits_sequence(&text[..end], &text[end..]) {
        end = text[..end].char_indices().next_back().map_or(0, |(i, _)| i);
    }
    &text[..end]
}

fn splits_sequence(before: &str, after: &str) -> bool {
    const ZWJ: char = '\u{200D}';
    let regional = |c: char| ('\u{1F1E6}'..='\u{1F1FF}').contains(&c);
    let (Some(prev), Some(next)) = (before.chars().next_back(), after.chars().next()) else {
        return false;
    };
    // Flags are pairs of regional indicators: an odd run before the cut means a pair is split.
    let odd_flag_run = || before.chars().rev().take_while(|&c| regional(c)).count() % 2 == 1;
    prev == ZWJ
        || matches!(next, ZWJ | '\u{0300}'..='\u{036F}' | '\u{1AB0}'..='\u{1AFF}'
            | '\u{1DC0}'..='\u{1DFF}' | '\u{20D0}'..='\u{20FF}' | '\u{FE00}'..='\u{FE0F}'
            | '\u{FE20}'..='\u{FE2F}' | '\u{1F3FB}'..='\u{1F3FF}' | '\u{E0020}'..='\u{E007F}'
            | '\u{E0100}'..='\u{E01EF}')
        || (regional(prev) && regional(next) && odd_flag_run())
}

/// Estimated tokens of `text`: ≈3.5 ASCII chars per token and ≈1.5 other chars per token (CJK,
/// emoji and accented text tokenize far denser), rounded up.
// TODO(tokens): private stand-in, to be swapped for `crate::tokens` once it lands.
// `build_context` re-measures the joined text, so the budget still holds with an estimator
// that does not add up line by line.
pub(super) fn estimate_tokens(text: &str) -> usize {
    let ascii = text.bytes().filter(u8::is_ascii).count();
    let other = text.chars().count() - ascii;
    // ascii / 3.5 + other / 1.5 == (6 * ascii + 14 * other) / 21, in integers.
    (6 * ascii + 14 * other).div_ceil(21)
}
