//! Token estimates without shipping a tokenizer.
//!
//! A real BPE vocabulary is megabytes of wasm and differs per provider anyway, so the budget
//! works from an estimate. The flat rule of thumb (≈3.5 ASCII chars or ≈1.5 other chars per
//! token) is off by 20–40 % on code, JSON and numbers, so [`estimate_tokens`] instead walks the
//! text once and mimics how the GPT-4-era pre-tokenisers cut it (words with their leading
//! space, digits in groups of three, punctuation runs, line breaks, indentation), charging
//! each piece a cost fitted against tiktoken's `o200k_base` and `cl100k_base` on the corpus in
//! `tests/data/corpus/` (`cargo bench -p tandem-core --bench pipeline` prints the error, on
//! that corpus and on the held-out `tests/data/corpus-heldout/`, which is never tuned on).
//! Where the two tokenisers disagree (CJK, Cyrillic, Arabic, Hindi: cl100k needs 1.4–3× the
//! tokens) the rates follow `o200k_base`, the tokeniser of current OpenAI models; older
//! cl100k models are then underestimated there, and a provider's reported usage replaces the
//! estimate anyway. Anthropic and Gemini publish no tokeniser, only "≈ 3.5 / ≈ 4 English
//! characters a token", which the bench compares with.
//!
//! Every function here is O(n), allocation-free and total: any `&str` gives a count.

/// Tokens charged per attached image. Providers bill images by size (OpenAI: 85 + 170 per
/// 512-px tile; Anthropic: ≈ width × height / 750; Gemini: 258) and the side panel does not
/// know the size, so this is OpenAI's figure for a 1024×1024 image in high detail
/// (85 + 4 tiles × 170), which also covers Gemini and a mid-sized Anthropic image.
pub const IMAGE_TOKENS: u32 = 85 + 4 * 170;

/// Tokens each chat message costs beyond its text (role markers and separators in the
/// providers' chat templates; OpenAI documents 3–4).
pub const MESSAGE_OVERHEAD: u32 = 4;

/// Non-ASCII characters per token in the flat rule of thumb.
const FLAT_NON_ASCII_CHARS_PER_TOKEN: f32 = 1.5;

/// How text is turned into a token count.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Estimator {
    /// The character-class estimator ([`estimate_tokens`]).
    #[default]
    Classified,
    /// The flat rule with a user-chosen ASCII rate (non-ASCII stays at 1.5 chars per token, so
    /// a rate tuned for English cannot make CJK text look nearly free).
    CharsPerToken(f32),
}

impl Estimator {
    /// The estimator for an optional user override; a non-finite or non-positive rate is
    /// ignored rather than trusted (it would make every message look free or infinite).
    pub fn from_override(chars_per_token: Option<f32>) -> Self {
        match chars_per_token {
            Some(rate) if rate.is_finite() && rate > 0.0 => Estimator::CharsPerToken(rate),
            _ => Estimator::Classified,
        }
    }

    /// Estimated tokens of `text`.
    pub fn count(self, text: &str) -> u32 {
        match self {
            Estimator::Classified => estimate_tokens(text),
            Estimator::CharsPerToken(rate) => flat_estimate(text, rate),
        }
    }
}

/// Tokens for `n` attached images.
pub fn image_tokens(n: usize) -> u32 {
    u32::try_from(n)
        .unwrap_or(u32::MAX)
        .saturating_mul(IMAGE_TOKENS)
}

/// The flat rule of thumb: `ascii_chars / ascii_chars_per_token + other_chars / 1.5`, rounded
/// up. Kept as the user override and as the baseline the benchmark compares against.
pub fn flat_estimate(text: &str, ascii_chars_per_token: f32) -> u32 {
    let (ascii, other) = text.chars().fold((0u64, 0u64), |(a, o), c| {
        if c.is_ascii() {
            (a + 1, o)
        } else {
            (a, o + 1)
        }
    });
    let tokens = ascii as f64 / f64::from(ascii_chars_per_token)
        + other as f64 / f64::from(FLAT_NON_ASCII_CHARS_PER_TOKEN);
    // `as` saturates for floats, so huge or odd rates cannot wrap.
    tokens.ceil() as u32
}

/// Estimated tokens of `text` for a modern BPE tokeniser (see the module docs).
pub fn estimate_tokens(text: &str) -> u32 {
    // The budget estimates whole conversations when its cache is cold, so this walks ASCII a
    // run at a time instead of a char at a time (`Scan::push_ascii_run`): the first char of a
    // run is pushed as usual (it closes what came before, which is where the costs are
    // decided), and the rest of the run only extends what that char opened. Only non-ASCII
    // chars are decoded and classified one by one. The property tests below hold this to the
    // plain scan.
    let mut scan = Scan::default();
    let mut rest = text.as_bytes();
    while let [b, tail @ ..] = rest {
        if let Some(&class) = ASCII_CLASS.get(usize::from(*b)) {
            rest = scan.push_ascii_run(*b, class, tail);
        } else {
            // `rest` always starts at a char boundary: it only moves by whole chars.
            let at = text.len() - rest.len();
            let Some(c) = text.get(at..).and_then(|rest| rest.chars().next()) else {
                break;
            };
            scan = scan.pushed(c);
            rest = rest.get(c.len_utf8()..).unwrap_or_default();
        }
    }
    scan.finish()
}

// Costs in thousandths of a token, fitted on the corpus and rounded.
/// A word of up to `WORD_SHORT` letters is nearly always one token...
const WORD: u64 = 950;
const WORD_SHORT: u64 = 6;
/// ...longer ones split into common stems and suffixes.
const WORD_EXTRA_PER_LETTER: u64 = 120;
/// Each accented Latin letter usually breaks a word's BPE merges.
const LATIN_EXT: u64 = 1050;
/// One punctuation char glued to the next word: `.push`, `(self`, `_id`, `-lamp` mostly merge...
const PREFIX_JOINING: u64 = 200;
/// ...while `,x`, `=x`, `:x` mostly stay two tokens.
const PREFIX_SEPARATE: u64 = 1200;
/// A run of ASCII punctuation: common runs (`();`, `"},`, `=>`) are one token.
const PUNCT_RUN: u64 = 1000;
const PUNCT_EXTRA_PER_CHAR: u64 = 300;
const ONE: u64 = 1000;
/// Per-character rates of the scripts and symbols the two tokenisers disagree on most.
const SYMBOL: u64 = 750;
// CJK and Cyrillic are fitted to o200k on the tuning corpus (cl100k needs ~40 % more there).
const HAN: u64 = 820;
const KANA: u64 = 820;
const HANGUL: u64 = 870;
const CYRILLIC: u64 = 320;
/// The tuning corpus has no Greek: this is the earlier Cyrillic-and-Greek rate, unchanged.
const GREEK: u64 = 400;
/// Arabic-script and Devanagari letters and their combining marks (harakat, matras,
/// virama). The tuning corpus has neither, so the rate comes from how o200k treats them:
/// OpenAI reports 2–3× fewer tokens than cl100k for Arabic and Hindi, where cl100k pays
/// roughly 0.7–1 token a character; common words are single tokens, as in Cyrillic.
const ARABIC: u64 = 350;
const DEVANAGARI: u64 = 350;
/// Letters only Vietnamese uses (ơ, ư and the stacked tone marks of U+1EA0–U+1EF9): o200k
/// has merges for whole Vietnamese syllables, so they cost far less than an accented letter
/// in French or German, which breaks a word's merges.
const VIETNAMESE: u64 = 300;
const OTHER_SCRIPT: u64 = 800;
const EMOJI: u64 = 2050;
const EMOJI_MODIFIER: u64 = 1550;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
enum Class {
    Lower,
    Upper,
    Digit,
    Space,
    #[default]
    Newline,
    Punct,
    LatinExt,
    Vietnamese,
    Cyrillic,
    Greek,
    Arabic,
    Devanagari,
    OtherScript,
    Han,
    Kana,
    Hangul,
    Emoji,
    EmojiModifier,
    Symbol,
}

/// The class of each ASCII byte, so that the hot loop of [`estimate_tokens`] looks a class up
/// instead of running [`Class::of`]'s chain of comparisons.
const ASCII_CLASS: [Class; 128] = {
    let mut table = [Class::Punct; 128];
    let mut b = 0;
    while b < 128 {
        table[b] = Class::of_ascii(b as u8);
        b += 1;
    }
    table
};

impl Class {
    fn of(c: char) -> Class {
        match u8::try_from(c) {
            Ok(b) if b.is_ascii() => Class::of_ascii(b),
            _ => match u32::from(c) {
                // Skin tones, ZWJ, variation selectors, keycaps and tags extend the emoji before.
                0x200D | 0xFE0E | 0xFE0F | 0x20E3 | 0x1F3FB..=0x1F3FF | 0xE0020..=0xE007F => {
                    Class::EmojiModifier
                }
                0x1F000..=0x1FAFF | 0x2600..=0x27BF | 0x2B00..=0x2BFF => Class::Emoji,
                0x3005..=0x3007
                | 0x3400..=0x4DBF
                | 0x4E00..=0x9FFF
                | 0xF900..=0xFAFF
                | 0x20000..=0x3FFFF => Class::Han,
                0x3040..=0x30FF | 0x31F0..=0x31FF | 0xFF66..=0xFF9F => Class::Kana,
                0x1100..=0x11FF | 0x3130..=0x318F | 0xAC00..=0xD7AF => Class::Hangul,
                0x0400..=0x052F if c.is_alphabetic() => Class::Cyrillic,
                0x0370..=0x03FF | 0x1F00..=0x1FFF if c.is_alphabetic() => Class::Greek,
                // Arabic and Devanagari full stops, commas and question marks are punctuation...
                0x060C | 0x061B | 0x061F | 0x06D4 | 0x0964 | 0x0965 => Class::Symbol,
                // ...the rest of their blocks, combining marks included, is part of a word.
                0x0600..=0x06FF | 0x0750..=0x077F | 0xFB50..=0xFDFF | 0xFE70..=0xFEFF => {
                    Class::Arabic
                }
                0x0900..=0x097F => Class::Devanagari,
                0x01A0 | 0x01A1 | 0x01AF | 0x01B0 | 0x1EA0..=0x1EF9 => Class::Vietnamese,
                _ if c.is_whitespace() => Class::Space,
                u if u < 0x0370 && c.is_alphabetic() => Class::LatinExt,
                _ if c.is_alphabetic() => Class::OtherScript,
                _ => Class::Symbol,
            },
        }
    }

    const fn of_ascii(b: u8) -> Class {
        match b {
            b'a'..=b'z' => Class::Lower,
            b'A'..=b'Z' => Class::Upper,
            b'0'..=b'9' => Class::Digit,
            b'\n' | b'\r' => Class::Newline,
            b' ' | b'\t' => Class::Space,
            _ => Class::Punct,
        }
    }

    fn is_word_letter(self) -> bool {
        matches!(
            self,
            Class::Lower | Class::Upper | Class::LatinExt | Class::Vietnamese
        )
    }
}

/// The single-pass state machine behind [`estimate_tokens`]. Pieces whose cost depends on
/// what follows (spaces, punctuation, words) stay open until the next char decides.
#[derive(Default)]
struct Scan {
    milli: u64,
    prev: Class,
    /// The class before the current run of spaces (to merge `\n  \n` into one break).
    before_spaces: Class,
    // u64 so that no in-memory string can overflow a counter.
    spaces: u64,
    word_letters: u64,
    digits: u64,
    punct_len: u64,
    punct_first: char,
    punct_after_space: bool,
}

impl Scan {
    fn push(&mut self, c: char) {
        self.push_classified(c, Class::of(c));
    }

    /// [`Scan::push`] by value, for the chars outside ASCII: with no reference to the scan
    /// leaving [`estimate_tokens`], its counters can live in registers there.
    #[inline(never)]
    fn pushed(mut self, c: char) -> Scan {
        self.push(c);
        self
    }

    /// [`Scan::push`] of `c`, whose class is `class`.
    #[inline(always)]
    fn push_classified(&mut self, c: char, class: Class) {
        self.close_pieces(Some(class));
        match class {
            Class::Lower | Class::Upper | Class::LatinExt | Class::Vietnamese => {
                self.word_letters += 1;
                match class {
                    Class::LatinExt => self.milli += LATIN_EXT,
                    Class::Vietnamese => self.milli += VIETNAMESE,
                    _ => {}
                }
            }
            Class::Digit => {
                // Digits are cut into groups of three.
                if self.digits % 3 == 0 {
                    self.milli += ONE;
                }
                self.digits += 1;
            }
            Class::Space => {
                if self.spaces == 0 {
                    self.before_spaces = self.prev;
                }
                self.spaces += 1;
            }
            Class::Newline => {
                // Consecutive breaks (with blanks between) are one token; a break right after
                // punctuation joins that run (`{\n`, `;\n`).
                let joined = matches!(self.prev, Class::Newline | Class::Punct)
                    || (self.prev == Class::Space && self.before_spaces == Class::Newline);
                if !joined {
                    self.milli += ONE;
                }
            }
            Class::Punct => {
                if self.punct_len == 0 {
                    self.punct_first = c;
                    self.punct_after_space = self.prev == Class::Space;
                }
                self.punct_len += 1;
            }
            Class::Cyrillic => self.milli += CYRILLIC,
            Class::Greek => self.milli += GREEK,
            Class::Arabic => self.milli += ARABIC,
            Class::Devanagari => self.milli += DEVANAGARI,
            Class::OtherScript => self.milli += OTHER_SCRIPT,
            Class::Han => self.milli += HAN,
            Class::Kana => self.milli += KANA,
            Class::Hangul => self.milli += HANGUL,
            Class::Emoji => self.milli += EMOJI,
            Class::EmojiModifier => self.milli += EMOJI_MODIFIER,
            Class::Symbol => self.milli += SYMBOL,
        }
        self.prev = class;
    }

    /// [`Scan::push`] of the ASCII `b` (of class `class`) and of the rest of its run, which
    /// `rest` starts with; moves `rest` past that run.
    ///
    /// Within a run pushing is simple, because the run's first char already closed everything
    /// else: a letter only counts (a capital after a lower-case letter also starts a new word);
    /// a digit only opens a new group of three; a space or a punctuation char only counts; a
    /// line break after a line break is joined to it. One case across runs is as plain and
    /// common enough to take here too: a single space between two words charges the word
    /// before and costs nothing itself (it joins the next word).
    fn push_ascii_run<'a>(&mut self, b: u8, class: Class, mut rest: &'a [u8]) -> &'a [u8] {
        // One arm per class, so that each inlined copy of `push_classified` knows its class
        // and the compiler drops the branches for the others.
        let c = char::from(b);
        match class {
            Class::Lower => {
                self.push_classified(c, Class::Lower);
                rest = self.extend_word(rest);
            }
            Class::Upper => {
                self.push_classified(c, Class::Upper);
                rest = self.extend_word(rest);
            }
            Class::Digit => {
                self.push_classified(c, Class::Digit);
                let mut n = 0;
                while let [b'0'..=b'9', tail @ ..] = rest {
                    n += 1;
                    rest = tail;
                }
                let before = self.digits;
                self.digits += n;
                self.milli += (self.digits.div_ceil(3) - before.div_ceil(3)) * ONE;
            }
            Class::Space => {
                self.push_classified(c, Class::Space);
                while let [b' ' | b'\t', tail @ ..] = rest {
                    self.spaces += 1;
                    rest = tail;
                }
            }
            Class::Newline => {
                self.push_classified(c, Class::Newline);
                while let [b'\n' | b'\r', tail @ ..] = rest {
                    rest = tail;
                }
            }
            _ => {
                self.push_classified(c, Class::Punct);
                while let [b, tail @ ..] = rest {
                    if ASCII_CLASS.get(usize::from(*b)) != Some(&Class::Punct) {
                        break;
                    }
                    self.punct_len += 1;
                    rest = tail;
                }
            }
        }
        rest
    }

    /// Continues the open word over the ASCII letters `rest` starts with (and over single
    /// spaces between words); moves `rest` past them.
    #[inline(always)]
    fn extend_word<'a>(&mut self, mut rest: &'a [u8]) -> &'a [u8] {
        loop {
            rest = self.extend_lower_words(rest);
            match rest {
                [b'A'..=b'Z', tail @ ..] => {
                    if self.prev == Class::Lower {
                        self.close_word();
                    }
                    self.word_letters += 1;
                    self.prev = Class::Upper;
                    rest = tail;
                }
                [b' ', tail @ ..] if tail.first().is_some_and(u8::is_ascii_alphabetic) => {
                    self.close_word();
                    // As after the space: a capital next is no camelCase break.
                    self.prev = Class::Space;
                    rest = tail;
                }
                _ => return rest,
            }
        }
    }

    /// Continues the open word over the lower-case letters `rest` starts with, and over the
    /// lower-case words after it that single spaces separate; moves `rest` past them.
    #[inline(always)]
    fn extend_lower_words<'a>(&mut self, mut rest: &'a [u8]) -> &'a [u8] {
        // Eight bytes at a time, taking every word break among them from the same load:
        // stepping a word at a time made each load wait for the end of the word before. The
        // counts live in locals until the end, so that they stay in registers.
        let (mut letters, mut milli) = (self.word_letters, self.milli);
        let start = rest.len();
        while let &[a, b, c, d, e, f, g, h, ref after @ ..] = rest {
            let chunk = u64::from_le_bytes([a, b, c, d, e, f, g, h]);
            let mut breaks = not_lower_bytes(chunk);
            // Bit offsets (8 per byte) in `chunk`: where the current stretch of letters began,
            // and the next byte that is not a letter (64: none left).
            let mut from = 0;
            loop {
                let at = breaks.trailing_zeros() & !7;
                letters += u64::from((at - from) / 8);
                if at == 64 {
                    break;
                }
                // One space, then a letter within this chunk (else the caller decides).
                let space_then_letter =
                    (chunk >> at) as u8 == b' ' && at < 56 && breaks & (0x80 << (at + 8)) == 0;
                if !space_then_letter {
                    rest = rest.get((at / 8) as usize..).unwrap_or_default();
                    return self.end_lower_words(rest, start, letters, milli);
                }
                milli += word_cost(letters);
                letters = 0;
                breaks &= breaks - 1;
                from = at + 8;
            }
            rest = after;
        }
        while let [b'a'..=b'z', tail @ ..] = rest {
            letters += 1;
            rest = tail;
        }
        self.end_lower_words(rest, start, letters, milli)
    }

    /// Stores what [`Scan::extend_lower_words`] counted, from `start` bytes to `rest`.
    #[inline(always)]
    fn end_lower_words<'a>(
        &mut self,
        rest: &'a [u8],
        start: usize,
        letters: u64,
        milli: u64,
    ) -> &'a [u8] {
        // The last byte taken, if any, was a lower-case letter: a space is only taken with the
        // letter after it.
        if rest.len() != start {
            self.prev = Class::Lower;
        }
        self.word_letters = letters;
        self.milli = milli;
        rest
    }

    /// Charges the open pieces that `next` (`None`: end of text) ends.
    #[inline(always)]
    fn close_pieces(&mut self, next: Option<Class>) {
        let next_is_letter = next.is_some_and(Class::is_word_letter);
        // A capital after a lower-case letter starts a new word (`TokenCache` → 2 words).
        let camel = next == Some(Class::Upper) && self.prev == Class::Lower;
        if self.word_letters > 0 && (!next_is_letter || camel) {
            self.close_word();
        }
        if next != Some(Class::Digit) {
            self.digits = 0;
        }
        if self.punct_len > 0 && next != Some(Class::Punct) {
            self.milli += if self.punct_len == 1 && next_is_letter && !self.punct_after_space {
                if matches!(
                    self.punct_first,
                    ',' | '=' | '>' | '+' | ':' | ';' | '!' | '*' | '|' | '%' | ')' | ']' | '}'
                ) {
                    PREFIX_SEPARATE
                } else {
                    PREFIX_JOINING
                }
            } else {
                PUNCT_RUN + self.punct_len.saturating_sub(2) * PUNCT_EXTRA_PER_CHAR
            };
            self.punct_len = 0;
        }
        if self.spaces > 0 && next != Some(Class::Space) {
            // The last space joins the piece after it, except before digits and at the end;
            // the rest is one whitespace token. Blanks before a line break join the break.
            let standalone = match next {
                None | Some(Class::Digit) => self.spaces,
                Some(Class::Newline) => 0,
                Some(_) => self.spaces - 1,
            };
            if standalone > 0 {
                self.milli += ONE;
            }
            self.spaces = 0;
        }
    }

    /// Charges the open word.
    #[inline(always)]
    fn close_word(&mut self) {
        self.milli += word_cost(self.word_letters);
        self.word_letters = 0;
    }

    fn finish(mut self) -> u32 {
        self.close_pieces(None);
        u32::try_from(self.milli.div_ceil(1000)).unwrap_or(u32::MAX)
    }
}

/// What a word of `letters` letters costs.
#[inline(always)]
fn word_cost(letters: u64) -> u64 {
    WORD + letters.saturating_sub(WORD_SHORT) * WORD_EXTRA_PER_LETTER
}

/// The high bit of each byte of `w` that is not `a`–`z`.
#[inline(always)]
fn not_lower_bytes(w: u64) -> u64 {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const ONES: u64 = 0x0101_0101_0101_0101;
    // Without their high bits no byte can carry into the next one when added to below.
    let low = w & !HIGH;
    // Reaches 0x80 from `a` (0x61) up...
    let from_a = low + (0x80 - u64::from(b'a')) * ONES;
    // ...and from the byte after `z` up.
    let after_z = low + (0x80 - u64::from(b'z') - 1) * ONES;
    // Non-ASCII bytes (high bit set) are not lower-case either.
    (!from_a | after_z | w) & HIGH
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The scan one char at a time, without the fast paths of [`estimate_tokens`].
    fn char_by_char(text: &str) -> u32 {
        let mut scan = Scan::default();
        for c in text.chars() {
            scan.push(c);
        }
        scan.finish()
    }

    /// Text made of the pieces the fast paths take at once: words (long ones too, longer than
    /// the eight bytes read at a time), capitalised and camelCase words, digit groups,
    /// punctuation runs, runs of blanks and line breaks, and non-ASCII chars right against
    /// them.
    fn piecewise_text() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            "[a-z]{1,20}",
            "[A-Z][a-z]{0,12}",
            "[a-z]{1,6}[A-Z][a-z]{1,6}",
            "[A-Z]{2,5}",
            " ",
            "[ \t]{2,4}",
            "[0-9]{1,7}",
            "[.,;:!?(){}\"'_=<>-]{1,4}",
            "[\n\r]{1,3}",
            "[éơ漢😀\u{a0}]",
        ];
        prop::collection::vec(piece, 0..40).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        /// The fast paths (runs of letters, digits, blanks, punctuation and line breaks, a
        /// space between two words) change how fast, never what: any text costs what the plain
        /// scan says.
        #[test]
        fn the_fast_paths_count_exactly_what_the_plain_scan_counts(
            text in "[a-zA-Z0-9 \n\r\t.,;:!?(){}\"'é漢😀_-]{0,200}"
        ) {
            prop_assert_eq!(estimate_tokens(&text), char_by_char(&text));
        }

        #[test]
        fn the_fast_paths_count_word_like_text_as_the_plain_scan(text in piecewise_text()) {
            prop_assert_eq!(estimate_tokens(&text), char_by_char(&text));
        }
    }

    #[test]
    fn eight_bytes_at_a_time_finds_exactly_the_lower_case_letters() {
        for b in 0..=u8::MAX {
            for at in 0..8 {
                let mut bytes = *b"abcxyzaz";
                bytes[at] = b;
                let expected = if b.is_ascii_lowercase() {
                    0
                } else {
                    0x80 << (8 * at)
                };
                assert_eq!(
                    not_lower_bytes(u64::from_le_bytes(bytes)),
                    expected,
                    "{b:#x} at {at}"
                );
            }
        }
    }

    #[test]
    fn the_fast_paths_count_the_corpora_exactly_as_the_plain_scan() {
        let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data");
        let mut files = 0;
        for dir in ["corpus", "corpus-heldout"] {
            for entry in std::fs::read_dir(data.join(dir)).expect("corpus dir") {
                let text = std::fs::read_to_string(entry.expect("entry").path()).expect("text");
                assert_eq!(estimate_tokens(&text), char_by_char(&text));
                files += 1;
            }
        }
        assert!(files > 40, "{files} files");
    }

    #[test]
    fn pieces_are_charged_like_a_bpe_pre_tokeniser() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("hello world"), 2);
        // Digits in groups of three; the space before a number is its own token.
        assert_eq!(estimate_tokens("1234567"), 3);
        assert_eq!(estimate_tokens("a 1"), 3);
        // Indentation is one token however wide.
        assert_eq!(estimate_tokens("{\n            x"), 3);
        // camelCase identifiers split into words.
        assert!(
            estimate_tokens("parseHttpRequestHeader") > estimate_tokens("parsehttprequestheader")
        );
        // Devanagari vowel signs and the virama are part of the word, not symbols
        // (o200k: 5 tokens, cl100k: 13; charged as symbols this was 10).
        assert_eq!(estimate_tokens("नमस्ते दुनिया"), 5);
    }

    #[test]
    fn images_and_overrides() {
        assert_eq!(image_tokens(2), 1530);
        assert_eq!(Estimator::from_override(Some(4.0)).count("abcdefgh"), 2);
        assert_eq!(Estimator::from_override(Some(4.0)).count("日本"), 2);
        for bad in [
            Some(0.0),
            Some(-1.0),
            Some(f32::NAN),
            Some(f32::INFINITY),
            None,
        ] {
            assert_eq!(Estimator::from_override(bad), Estimator::Classified);
        }
    }

    proptest! {
        #[test]
        fn never_panics_and_stays_in_range(s in any::<String>()) {
            let n = estimate_tokens(&s);
            // At most ~2 tokens per char plus rounding; at least one token for non-empty text.
            prop_assert!(u64::from(n) <= 3 * s.chars().count() as u64 + 1);
            prop_assert_eq!(n == 0, s.is_empty());
            let _ = flat_estimate(&s, 3.5);
        }

        #[test]
        fn appending_text_never_lowers_the_estimate_much(
            a in any::<String>(),
            b in any::<String>(),
        ) {
            // Joining can merge pieces at the seam (a word split in two), never more than a couple
            // of tokens' worth.
            let joined = estimate_tokens(&format!("{a}{b}"));
            prop_assert!(joined + 2 >= estimate_tokens(&a).max(estimate_tokens(&b)));
        }
    }
}
