//! Lower case as `str::to_lowercase` and `char::to_lowercase` give it, without std's Unicode
//! case tables: those (the whole `to_lowercase`/`to_uppercase` mapping of every code point,
//! plus the `Cased` and `Case_Ignorable` sets its Greek final-sigma rule reads) cost the
//! worker about 8 KB of gzip, for matching words, hosts and labels case-blind.
//!
//! The same mapping in a small form: runs of letters that move by one offset (`A`–`Z` → +32),
//! or every second one does (`Ā ā Ă ă …`), searched by halves; `İ` the one letter that
//! lowers to two; and, read only when a `Σ` appears, which letters are cased and which are
//! skipped (marks, modifiers) to decide `ς` at a word's end. Generated once from std and held
//! to it by the tests below, which compare every code point and every sigma context class:
//! a newer Unicode in std fails them, and the tables are made again from the test's output.

/// `text` in lower case, exactly as `text.to_lowercase()`.
pub trait Lowercase {
    fn lowercase(&self) -> String;
}

impl Lowercase for str {
    fn lowercase(&self) -> String {
        // Most of what is lowered (labels, hosts, keywords) is ASCII: lowered byte by byte,
        // as std does, without a search of the runs per letter.
        if self.is_ascii() {
            return self.to_ascii_lowercase();
        }
        let mut out = String::with_capacity(self.len());
        for (at, c) in self.char_indices() {
            if c == 'Σ' {
                // Unicode's Final_Sigma: a cased letter before it (marks between skipped)
                // and none after it.
                let word_final = cased_first(self[..at].chars().rev())
                    && !cased_first(self[at + 'Σ'.len_utf8()..].chars());
                out.push(if word_final { 'ς' } else { 'σ' });
            } else {
                out.extend(lowercase_char(c));
            }
        }
        out
    }
}

/// `c` in lower case, exactly as `c.to_lowercase()`: one letter, or two for `İ`.
pub fn lowercase_char(c: char) -> impl Iterator<Item = char> {
    if c.is_ascii() {
        let lower = c.to_ascii_lowercase();
        return [lower, lower].into_iter().take(1);
    }
    if c == '\u{130}' {
        return ['i', '\u{307}'].into_iter().take(2);
    }
    let code = u32::from(c);
    let run = LOWER_RUNS.partition_point(|&(key, _)| key >> 11 <= code);
    let lower = run
        .checked_sub(1)
        .map(|i| LOWER_RUNS[i])
        .and_then(|(key, delta)| {
            let (start, len, stride) = (key >> 11, (key >> 1) & 0x3ff, (key & 1) + 1);
            let offset = code - start;
            (offset % stride == 0 && offset / stride < len)
                .then(|| char::from_u32(code.wrapping_add_signed(delta)))
                .flatten()
        })
        .unwrap_or(c);
    [lower, lower].into_iter().take(1)
}

/// Whether the first letter of `chars` that is not case-ignorable is cased.
fn cased_first(chars: impl Iterator<Item = char>) -> bool {
    chars
        .map(sigma_class)
        .find(|&class| class != IGNORABLE)
        .is_some_and(|class| class == CASED)
}

const CASED: u32 = 1;
const IGNORABLE: u32 = 2;

/// `c`'s class for the final-sigma rule: [`CASED`] (and not case-ignorable), [`IGNORABLE`],
/// or 0. A linear read of [`SIGMA_CLASSES`]: only letters next to a `Σ` are asked.
fn sigma_class(c: char) -> u32 {
    let code = u32::from(c);
    let (mut start, mut class, mut value, mut shift) = (0, 0, 0, 0);
    for &byte in SIGMA_CLASSES.iter() {
        value |= u32::from(byte & 0x7f) << shift;
        shift += 7;
        if byte & 0x80 != 0 {
            continue;
        }
        start += value >> 2;
        if start > code {
            break;
        }
        class = value & 3;
        (value, shift) = (0, 0);
    }
    class
}

/// Lower-case runs, each `(start << 11 | length << 1 | every-second, offset)`: the `length`
/// letters from `start` (each one, or every second one) lower to themselves plus `offset`.
#[rustfmt::skip]
const LOWER_RUNS: [(u32, i32); 185] = [
    (0x20834, 32), (0x6002e, 32), (0x6c00e, 32), (0x80031, 1), (0x99007, 1), (0x9c811, 1),
    (0xa502f, 1), (0xbc002, -121), (0xbc807, 1), (0xc0802, 210), (0xc1005, 1), (0xc3002, 206),
    (0xc3802, 1), (0xc4804, 205), (0xc5802, 1), (0xc7002, 79), (0xc7802, 202), (0xc8002, 203),
    (0xc8802, 1), (0xc9802, 205), (0xca002, 207), (0xcb002, 211), (0xcb802, 209), (0xcc002, 1),
    (0xce002, 211), (0xce802, 213), (0xcf802, 214), (0xd0007, 1), (0xd3002, 218), (0xd3802, 1),
    (0xd4802, 218), (0xd6002, 1), (0xd7002, 218), (0xd7802, 1), (0xd8804, 217), (0xd9805, 1),
    (0xdb802, 219), (0xdc002, 1), (0xde002, 1), (0xe2002, 2), (0xe2802, 1), (0xe3802, 2),
    (0xe4002, 1), (0xe5002, 2), (0xe5813, 1), (0xef013, 1), (0xf8802, 2), (0xf9005, 1),
    (0xfb002, -97), (0xfb802, -56), (0xfc029, 1), (0x110002, -130), (0x111013, 1),
    (0x11d002, 10795), (0x11d802, 1), (0x11e802, -163), (0x11f002, 10792), (0x120802, 1),
    (0x121802, -195), (0x122002, 69), (0x122802, 71), (0x12300b, 1), (0x1b8005, 1), (0x1bb002, 1),
    (0x1bf802, 116), (0x1c3002, 38), (0x1c4006, 37), (0x1c6002, 64), (0x1c7004, 63), (0x1c8822, 32),
    (0x1d1812, 32), (0x1e7802, 8), (0x1ec019, 1), (0x1fa002, -60), (0x1fb802, 1), (0x1fc802, -7),
    (0x1fd002, 1), (0x1fe806, -130), (0x200020, 80), (0x208040, 32), (0x230023, 1), (0x245037, 1),
    (0x260002, 15), (0x26080f, 1), (0x268061, 1), (0x29884c, 48), (0x85004c, 7264),
    (0x863802, 7264), (0x866802, 7264), (0x9d00a0, 38864), (0x9f800c, 8), (0xe44802, 1),
    (0xe48056, -3008), (0xe5e806, -3008), (0xf00097, 1), (0xf4f002, -7615), (0xf50061, 1),
    (0xf84010, -8), (0xf8c00c, -8), (0xf94010, -8), (0xf9c010, -8), (0xfa400c, -8), (0xfac809, -8),
    (0xfb4010, -8), (0xfc4010, -8), (0xfcc010, -8), (0xfd4010, -8), (0xfdc004, -8), (0xfdd004, -74),
    (0xfde002, -9), (0xfe4008, -86), (0xfe6002, -9), (0xfec004, -8), (0xfed004, -100),
    (0xff4004, -8), (0xff5004, -112), (0xff6002, -7), (0xffc004, -128), (0xffd004, -126),
    (0xffe002, -9), (0x1093002, -7517), (0x1095002, -8383), (0x1095802, -8262), (0x1099002, 28),
    (0x10b0020, 16), (0x10c1802, 1), (0x125b034, 26), (0x1600060, 48), (0x1630002, 1),
    (0x1631002, -10743), (0x1631802, -3814), (0x1632002, -10727), (0x1633807, 1),
    (0x1636802, -10780), (0x1637002, -10749), (0x1637802, -10783), (0x1638002, -10782),
    (0x1639002, 1), (0x163a802, 1), (0x163f004, -10815), (0x1640065, 1), (0x1675805, 1),
    (0x1679002, 1), (0x532002f, 1), (0x534001d, 1), (0x539100f, 1), (0x539903f, 1), (0x53bc805, 1),
    (0x53be802, -35332), (0x53bf00b, 1), (0x53c5802, 1), (0x53c6802, -42280), (0x53c8005, 1),
    (0x53cb015, 1), (0x53d5002, -42308), (0x53d5802, -42319), (0x53d6002, -42315),
    (0x53d6802, -42305), (0x53d7002, -42308), (0x53d8002, -42258), (0x53d8802, -42282),
    (0x53d9002, -42261), (0x53d9802, 928), (0x53da011, 1), (0x53e2002, -48), (0x53e2802, -42307),
    (0x53e3002, -35384), (0x53e3805, 1), (0x53e5802, -42343), (0x53e6011, 1), (0x53ee002, -42561),
    (0x53fa802, 1), (0x7f90834, 32), (0x8200050, 40), (0x8258048, 40), (0x82b8016, 39),
    (0x82be01e, 39), (0x82c600e, 39), (0x82ca004, 39), (0x8640066, 64), (0x86a802c, 32),
    (0x8c50040, 32), (0xb720040, 32), (0xb750032, 27), (0xf480044, 34),
];

/// Where the final-sigma class changes, from U+0000 (class 0): LEB128 varints of
/// `(code point - previous change) << 2 | class`.
#[rustfmt::skip]
const SIGMA_CLASSES: [u8; 1407] = [
    158, 1, 4, 26, 4, 46, 4, 25, 104, 14, 4, 6, 5, 104, 182, 1, 4, 5, 4, 10, 4, 6, 4, 18, 5, 4, 6,
    8, 5, 4, 21, 92, 5, 124, 5, 140, 6, 5, 16, 17, 192, 6, 9, 106, 129, 6, 18, 9, 8, 10, 5, 12, 5,
    4, 18, 9, 6, 5, 12, 5, 4, 5, 80, 5, 204, 2, 5, 172, 4, 6, 29, 152, 5, 5, 152, 1, 10, 4, 22, 5,
    164, 1, 34, 180, 1, 6, 4, 6, 8, 6, 8, 6, 4, 178, 1, 4, 46, 24, 42, 44, 6, 4, 142, 1, 4, 42, 84,
    66, 4, 150, 3, 32, 6, 40, 6, 16, 134, 1, 4, 6, 4, 122, 108, 238, 2, 44, 234, 1, 44, 18, 4, 10,
    4, 98, 96, 174, 1, 12, 178, 1, 4, 30, 8, 22, 36, 166, 1, 232, 1, 222, 1, 4, 6, 4, 18, 32, 18, 4,
    14, 28, 42, 8, 54, 4, 62, 4, 234, 1, 4, 18, 16, 34, 4, 82, 8, 106, 4, 10, 8, 230, 1, 4, 18, 8,
    18, 8, 10, 12, 14, 4, 122, 8, 14, 4, 46, 8, 230, 1, 4, 18, 20, 6, 8, 18, 4, 82, 8, 90, 24, 6, 4,
    234, 1, 4, 10, 4, 6, 16, 34, 4, 30, 8, 46, 8, 122, 4, 246, 1, 4, 50, 4, 202, 1, 4, 14, 4, 222,
    1, 4, 6, 12, 22, 12, 6, 16, 30, 8, 46, 8, 118, 4, 234, 1, 4, 10, 4, 26, 4, 22, 8, 82, 8, 114, 8,
    230, 1, 8, 18, 16, 34, 4, 82, 8, 118, 4, 162, 2, 4, 30, 12, 6, 4, 234, 2, 4, 10, 28, 46, 36,
    138, 3, 4, 10, 36, 38, 4, 6, 28, 166, 2, 8, 110, 4, 6, 4, 6, 4, 222, 1, 56, 6, 20, 6, 8, 22, 44,
    6, 144, 1, 38, 4, 154, 3, 16, 6, 24, 6, 8, 10, 8, 102, 8, 18, 12, 66, 16, 54, 4, 10, 8, 26, 4,
    62, 4, 9, 152, 1, 5, 4, 21, 4, 9, 172, 1, 6, 5, 12, 246, 18, 12, 129, 2, 216, 2, 9, 24, 210, 24,
    12, 118, 8, 122, 8, 122, 8, 130, 2, 8, 6, 28, 34, 4, 10, 44, 14, 4, 22, 4, 182, 1, 20, 206, 1,
    4, 134, 2, 8, 138, 1, 4, 218, 3, 12, 18, 8, 38, 4, 26, 12, 238, 6, 8, 10, 4, 234, 1, 4, 6, 28,
    6, 4, 6, 4, 10, 32, 26, 40, 10, 4, 158, 1, 4, 34, 184, 1, 10, 48, 82, 16, 194, 1, 4, 6, 20, 6,
    4, 22, 4, 162, 1, 36, 50, 8, 130, 1, 16, 10, 8, 6, 12, 226, 1, 4, 6, 8, 14, 4, 6, 12, 234, 1,
    32, 10, 8, 130, 2, 24, 9, 44, 21, 172, 1, 9, 12, 66, 12, 6, 52, 6, 28, 18, 4, 26, 4, 14, 8, 25,
    178, 1, 253, 1, 54, 5, 138, 1, 149, 3, 216, 8, 9, 24, 9, 152, 1, 9, 24, 9, 32, 5, 4, 5, 4, 5, 4,
    5, 124, 9, 212, 1, 5, 30, 5, 6, 13, 12, 5, 30, 13, 16, 9, 24, 6, 13, 54, 12, 9, 12, 5, 30, 8,
    50, 20, 34, 8, 42, 4, 10, 4, 10, 20, 198, 1, 20, 6, 40, 6, 4, 54, 4, 66, 52, 206, 1, 132, 1, 69,
    4, 17, 4, 9, 40, 5, 4, 13, 20, 25, 4, 5, 4, 5, 4, 5, 16, 5, 24, 17, 4, 9, 16, 21, 20, 17, 4, 69,
    128, 1, 13, 8, 197, 25, 208, 1, 217, 56, 242, 3, 9, 156, 3, 25, 18, 13, 8, 49, 152, 1, 5, 4, 21,
    4, 134, 2, 4, 62, 4, 130, 3, 128, 1, 190, 1, 4, 214, 14, 4, 146, 1, 16, 14, 20, 22, 4, 246, 2,
    24, 246, 2, 12, 218, 248, 6, 4, 138, 39, 24, 186, 8, 4, 205, 1, 184, 1, 6, 16, 6, 40, 6, 5, 114,
    16, 194, 2, 8, 58, 137, 1, 186, 2, 5, 94, 13, 16, 5, 180, 2, 82, 17, 8, 6, 9, 4, 30, 4, 14, 4,
    18, 4, 102, 8, 22, 4, 222, 4, 8, 106, 72, 54, 4, 154, 1, 32, 102, 44, 186, 1, 12, 194, 1, 4, 10,
    16, 10, 8, 70, 4, 86, 8, 138, 2, 24, 10, 8, 10, 8, 50, 4, 34, 4, 142, 1, 4, 46, 4, 206, 1, 4, 6,
    12, 10, 8, 22, 8, 6, 4, 110, 4, 58, 8, 22, 8, 6, 4, 229, 1, 174, 1, 21, 38, 12, 17, 192, 2, 150,
    1, 4, 10, 4, 18, 4, 201, 248, 4, 28, 49, 20, 26, 4, 206, 4, 68, 246, 17, 64, 14, 4, 50, 64, 138,
    1, 4, 10, 4, 166, 5, 4, 30, 4, 26, 4, 46, 4, 25, 104, 14, 4, 6, 5, 104, 86, 4, 182, 1, 8, 142,
    2, 4, 86, 12, 134, 16, 4, 138, 7, 4, 214, 4, 20, 149, 4, 192, 2, 129, 3, 144, 1, 17, 144, 1,
    209, 3, 44, 5, 60, 5, 28, 5, 8, 5, 44, 5, 60, 5, 28, 5, 8, 142, 14, 24, 6, 168, 1, 6, 36, 154,
    18, 12, 6, 8, 22, 16, 162, 1, 12, 18, 4, 150, 5, 8, 229, 12, 204, 1, 53, 204, 1, 198, 1, 16,
    154, 1, 4, 5, 88, 14, 20, 6, 5, 88, 150, 9, 8, 98, 4, 210, 1, 24, 154, 2, 44, 198, 1, 16, 238,
    3, 4, 218, 1, 60, 166, 1, 4, 10, 8, 42, 12, 198, 1, 16, 10, 8, 10, 4, 18, 4, 42, 4, 202, 1, 12,
    146, 1, 20, 6, 32, 250, 1, 4, 50, 8, 210, 1, 36, 42, 16, 10, 4, 254, 2, 12, 10, 4, 6, 8, 26, 4,
    10, 4, 246, 4, 4, 14, 32, 86, 8, 230, 1, 8, 14, 4, 150, 1, 28, 14, 20, 154, 2, 24, 54, 4, 6, 4,
    6, 4, 58, 8, 214, 2, 32, 10, 12, 6, 4, 94, 4, 210, 2, 24, 6, 4, 18, 8, 6, 8, 186, 7, 16, 26, 8,
    6, 8, 110, 8, 214, 2, 32, 10, 4, 6, 8, 170, 3, 4, 6, 4, 10, 24, 6, 4, 150, 3, 4, 6, 4, 10, 16,
    6, 20, 142, 8, 36, 6, 8, 149, 3, 128, 2, 238, 2, 8, 6, 4, 18, 4, 194, 4, 16, 10, 8, 18, 4, 130,
    1, 40, 162, 1, 24, 10, 16, 34, 4, 38, 24, 10, 12, 186, 1, 52, 6, 8, 154, 6, 4, 6, 12, 6, 4, 166,
    6, 28, 6, 24, 6, 4, 202, 2, 88, 10, 28, 6, 8, 6, 8, 234, 3, 24, 14, 4, 6, 8, 6, 28, 6, 4, 162,
    2, 8, 14, 4, 6, 4, 134, 2, 4, 230, 8, 8, 46, 8, 210, 1, 20, 22, 4, 6, 4, 94, 4, 214, 166, 1, 68,
    26, 60, 162, 230, 2, 48, 14, 12, 130, 78, 20, 238, 1, 28, 38, 16, 242, 15, 12, 162, 1, 8, 205,
    6, 128, 2, 129, 1, 100, 9, 100, 238, 3, 4, 254, 1, 68, 130, 2, 8, 6, 8, 54, 8, 242, 255, 3, 16,
    6, 28, 6, 8, 250, 100, 8, 6, 16, 242, 146, 1, 184, 1, 10, 92, 130, 17, 12, 38, 64, 10, 28, 122,
    16, 210, 4, 12, 237, 13, 212, 2, 5, 156, 2, 5, 8, 9, 4, 9, 8, 9, 16, 5, 48, 5, 4, 5, 28, 5, 132,
    2, 5, 16, 9, 32, 5, 28, 5, 112, 5, 16, 5, 20, 5, 4, 13, 28, 5, 208, 10, 9, 100, 5, 100, 5, 124,
    5, 100, 5, 124, 5, 100, 5, 124, 5, 100, 5, 124, 5, 100, 5, 32, 210, 17, 220, 1, 18, 200, 1, 34,
    4, 58, 4, 90, 20, 6, 60, 193, 34, 40, 5, 80, 25, 24, 214, 6, 28, 6, 68, 10, 28, 6, 8, 6, 20, 22,
    248, 1, 134, 1, 4, 130, 5, 56, 194, 11, 4, 246, 1, 16, 238, 15, 20, 250, 7, 8, 206, 7, 4, 10, 4,
    30, 8, 22, 4, 38, 4, 194, 14, 28, 165, 1, 146, 2, 32, 145, 63, 104, 25, 104, 25, 104, 198, 19,
    20, 134, 224, 192, 1, 4, 122, 128, 3, 130, 4, 192, 7,
];

#[cfg(test)]
mod tests {
    use super::{
        lowercase_char, sigma_class, Lowercase, CASED, IGNORABLE, LOWER_RUNS, SIGMA_CLASSES,
    };
    use proptest::prelude::*;

    fn every_char() -> impl Iterator<Item = char> {
        (0..=0x10ffff).filter_map(char::from_u32)
    }

    #[test]
    fn every_code_point_lowers_as_std() {
        for c in every_char() {
            assert!(
                lowercase_char(c).eq(c.to_lowercase()),
                "{c:?} U+{:04X}",
                u32::from(c)
            );
        }
    }

    /// std does not expose `Cased` and `Case_Ignorable`, but its `str::to_lowercase` shows
    /// them: `cΣ` ends in `ς` only after a cased, not ignorable `c`; `AcΣ` also after an
    /// ignorable `c` (skipped back to the `A`).
    fn std_sigma_class(c: char) -> u32 {
        let final_sigma = |text: String| text.to_lowercase().ends_with('ς');
        if final_sigma(format!("{c}Σ")) {
            CASED
        } else if final_sigma(format!("A{c}Σ")) {
            IGNORABLE
        } else {
            0
        }
    }

    #[test]
    fn every_code_point_has_the_sigma_class_std_reads() {
        for c in every_char() {
            assert_eq!(
                sigma_class(c),
                std_sigma_class(c),
                "{c:?} U+{:04X}",
                u32::from(c)
            );
        }
    }

    /// The tables are the ones std's mapping makes; when a newer std's Unicode changes them,
    /// this fails and prints both anew for this file.
    #[test]
    fn tables_are_made_from_std() {
        let lower = |c: char| {
            let mut it = c.to_lowercase();
            it.next().filter(|_| it.next().is_none())
        };
        let mut runs: Vec<(u32, u32, u32, i64)> = Vec::new();
        for c in every_char() {
            let (code, Some(l)) = (u32::from(c), lower(c)) else {
                continue;
            };
            let delta = i64::from(u32::from(l)) - i64::from(code);
            if delta == 0 {
                continue;
            }
            if let Some(last) = runs.last_mut() {
                if last.3 == delta && code == last.0 + last.1 * last.2 && last.1 < 1023 {
                    last.1 += 1;
                    continue;
                }
                // Every second letter, when the one between lowers to itself.
                let between = char::from_u32(last.0 + 1);
                if last.1 == 1
                    && last.3 == delta
                    && code == last.0 + 2
                    && between.and_then(lower) == between
                {
                    (last.1, last.2) = (2, 2);
                    continue;
                }
            }
            runs.push((code, 1, 1, delta));
        }
        let runs: Vec<(u32, i32)> = runs
            .into_iter()
            .map(|(start, len, stride, delta)| {
                ((start << 11) | (len << 1) | (stride - 1), delta as i32)
            })
            .collect();
        let (mut previous, mut class, mut classes) = (0, 0, Vec::<u8>::new());
        for c in every_char() {
            let now = std_sigma_class(c);
            if now != class {
                let mut value = ((u32::from(c) - previous) << 2) | now;
                while value >= 0x80 {
                    classes.push((value & 0x7f) as u8 | 0x80);
                    value >>= 7;
                }
                classes.push(value as u8);
                (previous, class) = (u32::from(c), now);
            }
        }
        assert!(
            runs == LOWER_RUNS && classes == SIGMA_CLASSES,
            "LOWER_RUNS: {runs:x?}\nSIGMA_CLASSES: {classes:?}"
        );
    }

    proptest! {
        /// Greek words with sigmas among marks, spaces, other letters and `İ`.
        #[test]
        fn text_lowers_as_std(text in "[ΣσςΑΒΓαβγ \\u{300}\\u{301}'.:İIAa1ʰᾈǅ-]{0,12}") {
            prop_assert_eq!(text.lowercase(), text.to_lowercase());
        }

        #[test]
        fn any_text_lowers_as_std(text in any::<String>()) {
            prop_assert_eq!(text.lowercase(), text.to_lowercase());
        }
    }
}
