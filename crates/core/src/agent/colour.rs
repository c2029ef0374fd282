//! Colour names for what the eye tells apart where the page has no words ("click the red
//! circle", "the darker square"): the driver reports a computed CSS colour, the element list
//! says it as a person would.

/// `rgb(255, 0, 0)` → `red`, `rgb(0, 0, 139)` → `dark blue`; `None` for a transparent colour
/// or one that does not parse.
pub fn colour_name(css: &str) -> Option<String> {
    let (r, g, b) = parse_rgb(css)?;
    let (h, s, l) = hsl(r, g, b);
    if l < 0.1 {
        return Some("black".into());
    }
    if l > 0.94 {
        return Some("white".into());
    }
    if s < 0.15 {
        let grey = match l {
            l if l < 0.35 => "dark gray",
            l if l > 0.75 => "light gray",
            _ => "gray",
        };
        return Some(grey.into());
    }
    let hue = match h {
        h if !(15.0..345.0).contains(&h) => "red",
        h if h < 40.0 => {
            if l < 0.4 {
                return Some("brown".into());
            }
            "orange"
        }
        h if h < 66.0 => "yellow",
        h if h < 165.0 => "green",
        h if h < 190.0 => "cyan",
        h if h < 255.0 => "blue",
        h if h < 320.0 => "purple",
        _ => "pink",
    };
    let shade = match l {
        l if l < 0.22 => "dark ",
        l if l > 0.75 => "light ",
        _ => "",
    };
    Some(format!("{shade}{hue}"))
}

/// The red, green and blue of `rgb(r, g, b)` / `rgba(r, g, b, a)` (as `getComputedStyle`
/// writes them, commas or spaces) or `#rrggbb`; `None` when fully transparent.
fn parse_rgb(css: &str) -> Option<(f64, f64, f64)> {
    let css = css.trim();
    if let Some(hex) = css.strip_prefix('#') {
        if hex.len() != 6 {
            return None;
        }
        let byte = |i: usize| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok();
        return Some((
            f64::from(byte(0)?),
            f64::from(byte(2)?),
            f64::from(byte(4)?),
        ));
    }
    let inner = css
        .strip_prefix("rgba(")
        .or_else(|| css.strip_prefix("rgb("))?
        .strip_suffix(')')?;
    let parts: Vec<f64> = inner
        .split([',', ' ', '/'])
        .filter(|p| !p.is_empty())
        .map(|p| crate::float_text::parse_f64(p.trim()))
        .collect::<Option<_>>()?;
    match parts.as_slice() {
        [_, _, _, a] if *a <= 0.0 => None,
        [r, g, b] | [r, g, b, _] => Some((*r, *g, *b)),
        _ => None,
    }
}

/// Hue in degrees, saturation and lightness in [0, 1].
fn hsl(r: f64, g: f64, b: f64) -> (f64, f64, f64) {
    let (r, g, b) = (r / 255.0, g / 255.0, b / 255.0);
    let max = r.max(g).max(b);
    let min = r.min(g).min(b);
    let l = (max + min) / 2.0;
    let d = max - min;
    if d == 0.0 {
        return (0.0, 0.0, l);
    }
    let s = d / (1.0 - (2.0 * l - 1.0).abs());
    let h = if max == r {
        60.0 * (((g - b) / d).rem_euclid(6.0))
    } else if max == g {
        60.0 * ((b - r) / d + 2.0)
    } else {
        60.0 * ((r - g) / d + 4.0)
    };
    (h, s, l)
}

#[cfg(test)]
mod tests {
    use super::colour_name;

    #[test]
    fn colours_are_named_as_a_person_would() {
        let cases = [
            ("rgb(255, 0, 0)", Some("red")),
            ("rgb(220, 38, 38)", Some("red")),
            ("rgb(0, 128, 0)", Some("green")),
            ("rgb(34, 197, 94)", Some("green")),
            ("rgb(0, 0, 255)", Some("blue")),
            ("rgb(0, 0, 100)", Some("dark blue")),
            ("rgb(173, 216, 230)", Some("light blue")),
            ("rgb(255, 255, 0)", Some("yellow")),
            ("rgb(255, 165, 0)", Some("orange")),
            ("rgb(139, 69, 19)", Some("brown")),
            ("rgb(128, 0, 128)", Some("purple")),
            ("rgb(255, 105, 180)", Some("pink")),
            ("rgb(128, 128, 128)", Some("gray")),
            ("rgb(0, 0, 0)", Some("black")),
            ("rgb(255, 255, 255)", Some("white")),
            ("#ff0000", Some("red")),
            ("rgba(255, 0, 0, 0.5)", Some("red")),
            ("rgba(0, 0, 0, 0)", None),
            ("none", None),
            ("url(#gradient)", None),
        ];
        for (css, want) in cases {
            assert_eq!(colour_name(css).as_deref(), want, "{css}");
        }
    }
}
