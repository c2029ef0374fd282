//! Distilling a session into a context that never exceeds its token budget.

use serde::{Deserialize, Serialize};

use super::{MemoryConfig, MemoryMessage, SessionContext};
use crate::chat::Role;
use crate::tokens::Estimator;

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
/// the first visible message, and the metrics count visible messages only. Tokens are counted
/// with `estimator`, the one the request's budget counts with, so a context packed to fit its
/// share is measured the same way when the budget checks the whole request.
pub fn build_context(
    session: &SessionContext,
    config: &MemoryConfig,
    estimator: Estimator,
) -> BuiltContext {
    let messages: Vec<&MemoryMessage> = session.messages.iter().filter(|m| !m.hidden).collect();
    let budget = config.budget_tokens;
    let tokens = |text: &str| estimator.count(text) as usize;
    let first = usize::from(config.preserve_seed && !messages.is_empty());
    let render = |parts: &[Part]| {
        parts
            .iter()
            .map(|p| p.line.as_str())
            .collect::<Vec<_>>()
            .join(SEPARATOR)
    };
    // The packer bounds the sum of per-line estimates, but an estimate (like a real tokenizer)
    // counts a joined text differently from its lines: a line break costs a token after text
    // and none at the start. So the joined text is measured, and when it is over, packed again
    // with the overshoot taken off: the packer then compresses or leaves out what it must, the
    // way it does for any budget, instead of a whole line being dropped after the fact.
    let mut room = budget;
    let mut attempts = 0;
    let (mut parts, seed_truncated, mut text, mut used) = loop {
        let (parts, seed_truncated) = pack(&messages, config, first, room, &tokens);
        let text = render(&parts);
        let used = tokens(&text);
        let over = used.saturating_sub(budget);
        attempts += 1;
        if over == 0 || room == 0 || attempts == REPACKS {
            break (parts, seed_truncated, text, used);
        }
        room = room.saturating_sub(over);
    };
    // The guarantee, should the repacking not have converged: drop the oldest non-seed line
    // until the text fits.
    while used > budget {
        parts.remove(usize::from(
            first == 1 && parts.len() > 1 && parts[0].index == 0,
        ));
        text = render(&parts);
        used = tokens(&text);
    }
    BuiltContext {
        metrics: ContextMetrics {
            used_tokens: used,
            budget,
            middle_distilled: parts.iter().any(|p| p.compressed),
            seed_truncated,
            included: parts.len(),
            omitted: messages.len() - parts.len(),
        },
        text,
    }
}

/// How many times [`build_context`] packs before it falls back to dropping lines. The
/// overshoot is a token or so per line break, so the second packing nearly always fits.
const REPACKS: usize = 4;

/// The lines [`build_context`] gives within `budget`, sorted oldest first, and whether the
/// seed had to be cut.
fn pack(
    messages: &[&MemoryMessage],
    config: &MemoryConfig,
    first: usize,
    budget: usize,
    tokens: &dyn Fn(&str) -> usize,
) -> (Vec<Part>, bool) {
    let mut packer = Packer {
        budget,
        used: 0,
        parts: Vec::new(),
        separator: tokens(SEPARATOR),
        tokens,
    };
    let mut seed_truncated = false;
    if let Some(seed) = messages.first().filter(|_| first == 1) {
        if !packer.add(0, full_line(seed), false) {
            seed_truncated = true;
            if let Some(line) = truncated_line(seed, budget, tokens) {
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
    (parts, seed_truncated)
}

struct Part {
    index: usize,
    line: String,
    compressed: bool,
}

struct Packer<'a> {
    budget: usize,
    used: usize,
    parts: Vec<Part>,
    /// Tokens of [`SEPARATOR`].
    separator: usize,
    tokens: &'a dyn Fn(&str) -> usize,
}

impl Packer<'_> {
    /// Takes `line` if it fits what is left, counting one separator per line after the first.
    fn add(&mut self, index: usize, line: String, compressed: bool) -> bool {
        let separator = if self.parts.is_empty() {
            0
        } else {
            self.separator
        };
        let cost = (self.tokens)(&line) + separator;
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
fn truncated_line(
    seed: &MemoryMessage,
    budget: usize,
    tokens: &dyn Fn(&str) -> usize,
) -> Option<String> {
    let text = text_of(seed);
    let line = |n| {
        let kept = prefix_chars(&text, n).trim_end();
        format!("{}: {kept}{ELLIPSIS}", label(seed.role))
    };
    if tokens(&line(0)) > budget {
        return None;
    }
    // The estimate grows with the prefix, so binary-search how many characters to keep. Only
    // a measured length is kept, so the cut fits even where a longer prefix estimates lower.
    let (mut fits, mut too_long) = (0, text.chars().count());
    while fits < too_long {
        let mid = fits + (too_long - fits).div_ceil(2);
        if tokens(&line(mid)) <= budget {
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
