//! Reading a decimal number from text exactly as `str::parse::<f64>` does, without core's
//! parser: that one carries a 10 KB table of 128-bit powers of five (Eisel-Lemire) and its
//! fallbacks into the module, about 14 KB of the worker's gzip, for a few places that read a
//! number a model or a page wrote (`"412px"`, `"0.25"`, `rgb(12, 34, 56)`).
//!
//! Same grammar (a sign, then `inf`, `infinity`, `nan` in any case, or digits with an
//! optional `.` and fraction and an optional `e`/`E` exponent; no spaces, no `_`) and the
//! same value: the nearest `f64`, ties to even, subnormals, overflow to infinity. Written
//! with a small big integer and long division instead of tables: slower, but these are a
//! handful of short strings per step. The test `same_as_std_*` holds it to std's parser.

use std::cmp::Ordering;

/// `text` as `text.parse::<f64>()` reads it; `None` where that is an error.
pub fn parse_f64(text: &str) -> Option<f64> {
    let (negative, rest) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let magnitude = if rest.eq_ignore_ascii_case("inf") || rest.eq_ignore_ascii_case("infinity") {
        f64::INFINITY
    } else if rest.eq_ignore_ascii_case("nan") {
        f64::NAN
    } else {
        decimal(rest.as_bytes())?
    };
    Some(if negative { -magnitude } else { magnitude })
}

/// Significant digits read exactly; the rest only says the number is not exact there.
const MAX_DIGITS: usize = 800;

/// The nearest `f64` to the unsigned decimal `text` (`12`, `1.5`, `.5`, `5.`, `2e-3`).
fn decimal(text: &[u8]) -> Option<f64> {
    let (mantissa, exponent) = match text.iter().position(|&b| b == b'e' || b == b'E') {
        Some(at) => (&text[..at], Some(&text[at + 1..])),
        None => (text, None),
    };
    let (whole, fraction) = match mantissa.iter().position(|&b| b == b'.') {
        Some(at) => (&mantissa[..at], &mantissa[at + 1..]),
        None => (mantissa, &[][..]),
    };
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    if !whole.iter().chain(fraction).all(u8::is_ascii_digit) {
        return None;
    }
    // The exponent saturates: past ±10^18 every value is 0 or infinity anyway.
    let mut exp10: i64 = match exponent {
        None => 0,
        Some(e) => {
            let (sign, digits) = match e.first() {
                Some(b'-') => (-1, &e[1..]),
                Some(b'+') => (1, &e[1..]),
                _ => (1, e),
            };
            if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
                return None;
            }
            let n = digits.iter().fold(0i64, |n, d| {
                n.saturating_mul(10).saturating_add(i64::from(d - b'0'))
            });
            sign * n.min(1_000_000_000_000_000_000)
        }
    };
    // The significant digits as one integer times 10^exp10, without leading or trailing zeros.
    let digits: Vec<u8> = whole.iter().chain(fraction).copied().collect();
    exp10 -= fraction.len() as i64;
    let start = digits.iter().position(|&d| d != b'0');
    let Some(start) = start else {
        return Some(0.0);
    };
    let end = digits
        .iter()
        .rposition(|&d| d != b'0')
        .map_or(start, |e| e + 1);
    exp10 += (digits.len() - end) as i64;
    let mut significant = digits[start..end].to_vec();
    // A model's or a page's text can be long: past MAX_DIGITS significant digits only
    // whether the rest is zero matters (a halfway point between two doubles has at most 767),
    // and it is not (trailing zeros are gone), so the rest becomes one digit 1. This keeps
    // the big integers, and the time, bounded whatever the length.
    if significant.len() > MAX_DIGITS {
        exp10 += (significant.len() - MAX_DIGITS - 1) as i64;
        significant.truncate(MAX_DIGITS);
        significant.push(b'1');
    }
    // The value lies in [10^(top-1), 10^top): past f64::MAX (< 10^309), or below half the
    // least subnormal (2^-1075 > 10^-324), without building a number of that size.
    let top = significant.len() as i64 + exp10;
    if top > 309 {
        return Some(f64::INFINITY);
    }
    if top < -323 {
        return Some(0.0);
    }
    let mut numerator = Big::from_digits(&significant);
    let mut denominator = Big::one();
    if exp10 >= 0 {
        numerator.mul_pow10(exp10 as u32);
    } else {
        denominator.mul_pow10(exp10.unsigned_abs() as u32);
    }
    Some(nearest(numerator, denominator))
}

/// The `f64` nearest to `numerator / denominator` (both non-zero).
fn nearest(mut numerator: Big, mut denominator: Big) -> f64 {
    // Scale by 2^shift so that the quotient has 65 or 66 bits: more than the 53 of an f64,
    // with a round bit and a sticky remainder beside.
    let shift = 65 - (numerator.bits() as i64 - denominator.bits() as i64);
    if shift >= 0 {
        numerator.shl(shift as u32);
    } else {
        denominator.shl(shift.unsigned_abs() as u32);
    }
    let mut quotient: u128 = 0;
    for bit in (0..67).rev() {
        let mut step = denominator.clone();
        step.shl(bit);
        if numerator.cmp(&step) != Ordering::Less {
            numerator.sub(&step);
            quotient |= 1 << bit;
        }
    }
    let sticky = !numerator.is_zero();
    // value = (quotient + a part below one when sticky) × 2^-shift. Keep 53 bits, fewer
    // where the value is subnormal (its last bit weighs 2^-1074).
    let length = 128 - i64::from(quotient.leading_zeros());
    let drop = (length - 53).max(shift - 1074);
    if drop >= 127 {
        return 0.0;
    }
    let mut mantissa = (quotient >> drop) as u64;
    let rest = quotient & ((1u128 << drop) - 1);
    let half = 1u128 << (drop - 1);
    if rest > half || (rest == half && (sticky || mantissa & 1 == 1)) {
        mantissa += 1;
    }
    // Weight of the mantissa's last bit.
    let mut unit = drop - shift;
    if mantissa == 1 << 53 {
        mantissa >>= 1;
        unit += 1;
    }
    if mantissa < 1 << 52 {
        // Subnormal (unit is -1074): the bits are the mantissa itself; one rounded up to
        // 2^52 reads as the least normal number, which is right.
        return f64::from_bits(mantissa);
    }
    let biased = unit + 52 + 1023;
    if biased >= 0x7ff {
        return f64::INFINITY;
    }
    f64::from_bits(((biased as u64) << 52) | (mantissa & ((1 << 52) - 1)))
}

/// An unsigned integer of any size, little-endian 32-bit words.
#[derive(Clone)]
struct Big(Vec<u32>);

impl Big {
    fn one() -> Self {
        Big(vec![1])
    }

    fn from_digits(digits: &[u8]) -> Self {
        let mut n = Big(Vec::new());
        for chunk in digits.chunks(9) {
            let value = chunk.iter().fold(0u32, |v, d| v * 10 + u32::from(d - b'0'));
            n.mul_add(10u32.pow(chunk.len() as u32), value);
        }
        n
    }

    fn mul_add(&mut self, factor: u32, add: u32) {
        let mut carry = u64::from(add);
        for word in &mut self.0 {
            let v = u64::from(*word) * u64::from(factor) + carry;
            *word = v as u32;
            carry = v >> 32;
        }
        if carry != 0 {
            self.0.push(carry as u32);
        }
    }

    fn mul_pow10(&mut self, mut exp: u32) {
        while exp > 0 {
            let step = exp.min(9);
            self.mul_add(10u32.pow(step), 0);
            exp -= step;
        }
    }

    fn shl(&mut self, bits: u32) {
        let (words, bits) = ((bits / 32) as usize, bits % 32);
        if bits > 0 {
            let mut carry = 0;
            for word in &mut self.0 {
                let v = (*word << bits) | carry;
                carry = *word >> (32 - bits);
                *word = v;
            }
            if carry != 0 {
                self.0.push(carry);
            }
        }
        self.0.splice(0..0, std::iter::repeat_n(0, words));
    }

    fn bits(&self) -> u32 {
        let top = self.0.iter().rposition(|&w| w != 0).map_or(0, |i| i + 1);
        match top {
            0 => 0,
            n => 32 * n as u32 - self.0[n - 1].leading_zeros(),
        }
    }

    fn is_zero(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }

    fn cmp(&self, other: &Big) -> Ordering {
        let len = self.0.len().max(other.0.len());
        let word = |n: &Big, i: usize| n.0.get(i).copied().unwrap_or(0);
        (0..len)
            .rev()
            .map(|i| word(self, i).cmp(&word(other, i)))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    }

    /// `self - other`, where `other <= self`.
    fn sub(&mut self, other: &Big) {
        let mut borrow = false;
        for (i, word) in self.0.iter_mut().enumerate() {
            let o = other.0.get(i).copied().unwrap_or(0);
            let (v, b1) = word.overflowing_sub(o);
            let (v, b2) = v.overflowing_sub(u32::from(borrow));
            *word = v;
            borrow = b1 || b2;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_f64;
    use proptest::prelude::*;

    /// Both read `text` alike: both fail, or both give the same bits (any NaN for NaN).
    fn same(text: &str) -> Result<(), String> {
        let std = text.parse::<f64>().ok();
        let ours = parse_f64(text);
        let alike = match (std, ours) {
            (None, None) => true,
            (Some(a), Some(b)) => a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
            _ => false,
        };
        if alike {
            Ok(())
        } else {
            Err(format!("{text:?}: std {std:?}, ours {ours:?}"))
        }
    }

    #[test]
    fn same_as_std_on_the_edges() {
        let cases = [
            "",
            "+",
            "-",
            ".",
            "e",
            "e5",
            ".e5",
            "1e",
            "1e+",
            "1e-",
            "1.",
            ".5",
            "+.5",
            "-.5",
            "5.",
            "0",
            "-0",
            "+0",
            "00",
            "0.0",
            "-0.0e99999999999999999999",
            "1_0",
            " 1",
            "1 ",
            "1e5",
            "1E5",
            "1e+5",
            "1e-5",
            "1.5e",
            "1.5e3.2",
            "1..2",
            "1.2.3",
            "0x10",
            "inf",
            "Inf",
            "INF",
            "-inf",
            "+infinity",
            "Infinity",
            "infinit",
            "infinityy",
            "nan",
            "NaN",
            "-nan",
            "+NAN",
            "nana",
            "in",
            "412px",
            "0.25",
            "7.5",
            "30",
            "255",
            "0.1",
            "0.2",
            "0.3",
            "1e308",
            "1.7976931348623157e308",
            "1.7976931348623158e308",
            "1.7976931348623159e308",
            "1e309",
            "2e308",
            "4.9e-324",
            "5e-324",
            "2.4703282292062327e-324",
            "2.4703282292062328e-324",
            "2.4703282292062327208828439643411068618252990130716238221279284125033775364e-324",
            "1e-324",
            "3e-324",
            "2.2250738585072011e-308",
            "2.2250738585072014e-308",
            "2.2250738585072012e-308",
            "9007199254740993",
            "9007199254740992.5",
            "9007199254740993.0000000000000000000000001",
            "123456789012345678901234567890",
            "0.000000000000000000000000000000000000000000001",
            "1e-400",
            "1e400",
            "1e-99999999",
            "1e99999999",
            "100000000000000000000000000000000000000000000000000000000e-60",
            "0.1e1",
            "00000.00000001",
            "1.00000000000000011102230246251565404236316680908203125",
            "1.00000000000000011102230246251565404236316680908203124",
            "1.00000000000000011102230246251565404236316680908203126",
        ];
        for case in cases {
            same(case).unwrap();
        }
        // A long run of digits.
        same(&format!("0.{}1", "0".repeat(330))).unwrap();
        same(&format!("{}e-700", "7".repeat(700))).unwrap();
        same(&format!("1{}", "0".repeat(320))).unwrap();
        // Past MAX_DIGITS: the digits beyond decide only through being there (a halfway
        // point followed by a far 1 rounds up), and a very long text stays quick.
        let halfway = "1.00000000000000011102230246251565404236316680908203125";
        same(&format!("{halfway}{}1", "0".repeat(900))).unwrap();
        same(&format!("{halfway}{}", "0".repeat(900))).unwrap();
        same(&format!("{}e-1000", "3".repeat(1200))).unwrap();
        same(&format!("0.{}", "9".repeat(200_000))).unwrap();
        same(&"7".repeat(200_000)).unwrap();
    }

    proptest! {
        /// Strings of the characters the grammar knows, in any order.
        #[test]
        fn same_as_std_on_any_short_text(text in "[0-9.eE+\\-infatyINFATY]{0,12}") {
            prop_assert_eq!(same(&text), Ok(()));
        }

        /// Every f64 (any bits) written shortest, with many digits, and in scientific form.
        #[test]
        fn same_as_std_on_written_doubles(bits in any::<u64>(), digits in 0usize..40) {
            let x = f64::from_bits(bits);
            for text in [
                format!("{x}"),
                format!("{x:e}"),
                format!("{x:.digits$e}"),
                format!("{x:.digits$}"),
            ] {
                prop_assert_eq!(same(&text), Ok(()));
            }
        }

        /// Exactly halfway between two neighbouring doubles, and a last digit either side:
        /// where ties to even and the sticky remainder decide. The midpoint of m·2^k and
        /// (m+1)·2^k is (2m+1)·5^(1-k) / 10^(1-k) for k <= 0, (2m+1)·2^(k-1) for k > 0.
        #[test]
        fn same_as_std_halfway(m in (1u64 << 52)..(1u64 << 53), k in -30i32..70) {
            let (digits, exp10) = if k <= 0 {
                (u128::from(2 * m + 1) * 5u128.pow((1 - k) as u32), k - 1)
            } else {
                (u128::from(2 * m + 1) << (k - 1), 0)
            };
            for d in [digits - 1, digits, digits + 1] {
                prop_assert_eq!(same(&format!("{d}e{exp10}")), Ok(()));
                prop_assert_eq!(same(&format!("{d}000000000000000000001e{}", exp10 - 21)), Ok(()));
            }
        }

        /// Random digits with random exponents, long and short.
        #[test]
        fn same_as_std_on_random_decimals(digits in "[0-9]{1,60}", point in 0usize..60, exp in -400i32..400) {
            let point = point.min(digits.len());
            let text = format!("{}.{}e{exp}", &digits[..point], &digits[point..]);
            prop_assert_eq!(same(&text), Ok(()));
        }
    }
}
