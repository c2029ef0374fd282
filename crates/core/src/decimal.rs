//! Numbers with a fixed count of decimals, as people and models read them (`1.5 s`, `42%`,
//! `scroll 0,1200`). Written with integer arithmetic: `format!("{:.1}", x)` would carry
//! core's float formatting (Grisu and Dragon with their tables) into the module for a handful
//! of display strings. Ties round away from zero, which differs from `{:.N}` only at exact
//! halves, where either is right for display.

/// `value` with `places` decimals (at most 6), rounded. Not finite: `NaN`, `inf`, `-inf`.
/// Beyond what `u64` holds of `value × 10^places`: saturates, no display needs more.
pub fn decimal(value: f64, places: u32) -> String {
    if value.is_nan() {
        return "NaN".into();
    }
    if value.is_infinite() {
        return if value > 0.0 { "inf" } else { "-inf" }.into();
    }
    let places = places.min(6);
    let scale = 10u64.pow(places);
    // `as` saturates: a value past u64 prints as u64::MAX scaled, never wraps.
    let n = (value.abs() * scale as f64).round() as u64;
    let sign = if value < 0.0 && n != 0 { "-" } else { "" };
    let (whole, fraction) = (n / scale, n % scale);
    match places {
        0 => format!("{sign}{whole}"),
        _ => format!("{sign}{whole}.{fraction:0width$}", width = places as usize),
    }
}

/// [`decimal`] without the zeros that end its fraction: `2`, `1.5`, `0.25` for 2 places.
pub fn trimmed(value: f64, places: u32) -> String {
    let mut text = decimal(value, places);
    if text.contains('.') {
        text.truncate(text.trim_end_matches('0').trim_end_matches('.').len());
    }
    text
}

#[cfg(test)]
mod tests {
    use super::{decimal, trimmed};
    use proptest::prelude::*;

    #[test]
    fn reads_like_the_standard_formatting() {
        assert_eq!(decimal(1.5, 1), "1.5");
        assert_eq!(decimal(1.25, 1), "1.3");
        assert_eq!(decimal(0.04, 1), "0.0");
        assert_eq!(decimal(-0.04, 1), "0.0");
        assert_eq!(decimal(-2.26, 1), "-2.3");
        assert_eq!(decimal(99.6, 0), "100");
        assert_eq!(decimal(0.123, 2), "0.12");
        assert_eq!(decimal(1200.0, 0), "1200");
        assert_eq!(decimal(0.5, 9), "0.500000");
        assert_eq!(decimal(f64::NAN, 1), "NaN");
        assert_eq!(decimal(f64::INFINITY, 0), "inf");
        assert_eq!(decimal(f64::NEG_INFINITY, 0), "-inf");
        assert_eq!(decimal(1e30, 0), u64::MAX.to_string());
        assert_eq!(trimmed(2.0, 2), "2");
        assert_eq!(trimmed(1.5, 2), "1.5");
        assert_eq!(trimmed(0.25, 2), "0.25");
        assert_eq!(trimmed(100.0, 0), "100");
        assert_eq!(trimmed(0.001, 2), "0");
    }

    proptest! {
        /// Away from exact halves (where the two roundings may differ) it prints what
        /// `{:.N}` prints.
        #[test]
        fn matches_std_off_ties(whole in -1_000_000i64..1_000_000, frac in 0u32..1_000_000, places in 0u32..4) {
            let x = whole as f64 + f64::from(frac) / 1e6;
            let scaled = x.abs() * 10f64.powi(places as i32);
            prop_assume!((scaled - scaled.trunc() - 0.5).abs() > 1e-6);
            let std = format!("{x:.p$}", p = places as usize);
            // `{:.N}` keeps the sign of a negative value that rounds to zero.
            let std = if std.starts_with('-') && std[1..].chars().all(|c| c == '0' || c == '.') {
                std[1..].to_string()
            } else {
                std
            };
            prop_assert_eq!(decimal(x, places), std);
        }
    }
}
