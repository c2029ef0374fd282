//! Images in tool results (an MCP tool's `{type:"image", data, mimeType}`, a `resource` whose
//! `blob` is an image): checked before a model or a person gets them.
//!
//! A tool is a third party, so its image is hostile input until read: only PNG, JPEG, GIF and
//! WebP are taken (never SVG, which is a document with scripts and links, not a picture), the
//! data must be clean base64 whose first bytes are the format it claims (a "PNG" that is HTML
//! is refused), and one image is at most [`MAX_IMAGE_BYTES`] (2 MB). Every refusal is a sentence the
//! model reads in place of the image. The panel checks a data: URL again with
//! [`ToolImage::from_data_url`] before it shows it.

use crate::request::RequestMessage;

/// The largest image passed on, decoded. Anthropic refuses images over 5 MB and OpenAI
/// scales big ones down anyway; 2 MB keeps a request (which carries the image as base64,
/// a third larger) well inside every provider's limits, and an MCP answer holding one inside
/// the 4 MB Tandem reads of an answer (a larger answer is refused whole with a sentence).
pub const MAX_IMAGE_BYTES: usize = 2 * 1024 * 1024;
/// Images passed on from one result; more are described and left out.
pub const MAX_IMAGES_PER_RESULT: usize = 4;

/// The image formats every provider reads and a browser shows without risk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageKind {
    Png,
    Jpeg,
    Gif,
    Webp,
}

impl ImageKind {
    /// The format a MIME type names; `None` for anything else (SVG included).
    pub fn from_mime(mime: &str) -> Option<Self> {
        // `image/png; charset=…` is still a PNG.
        let mime = mime.split(';').next().unwrap_or("").trim();
        match mime.to_ascii_lowercase().as_str() {
            "image/png" => Some(Self::Png),
            "image/jpeg" | "image/jpg" => Some(Self::Jpeg),
            "image/gif" => Some(Self::Gif),
            "image/webp" => Some(Self::Webp),
            _ => None,
        }
    }

    pub fn mime(self) -> &'static str {
        match self {
            Self::Png => "image/png",
            Self::Jpeg => "image/jpeg",
            Self::Gif => "image/gif",
            Self::Webp => "image/webp",
        }
    }

    /// How a person names the format.
    pub fn label(self) -> &'static str {
        match self {
            Self::Png => "PNG",
            Self::Jpeg => "JPEG",
            Self::Gif => "GIF",
            Self::Webp => "WebP",
        }
    }

    /// Whether `head` (the first decoded bytes) starts like this format.
    fn starts(self, head: &[u8]) -> bool {
        match self {
            Self::Png => head.starts_with(b"\x89PNG\r\n\x1a\n"),
            Self::Jpeg => head.starts_with(&[0xFF, 0xD8, 0xFF]),
            Self::Gif => head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a"),
            Self::Webp => head.len() >= 12 && &head[..4] == b"RIFF" && &head[8..12] == b"WEBP",
        }
    }
}

/// An image a tool returned, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolImage {
    pub kind: ImageKind,
    /// Standard base64 with padding, no whitespace.
    pub data: String,
    /// Its decoded size.
    pub bytes: usize,
}

impl ToolImage {
    /// Checks an image a tool gave as `mimeType` and base64 `data`. The error is the sentence
    /// the model reads in its place.
    pub fn read(mime: &str, data: &str) -> Result<Self, String> {
        let Some(kind) = ImageKind::from_mime(mime) else {
            let shown: String = mime
                .chars()
                .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '+' | '.' | '-'))
                .take(40)
                .collect();
            let what = if shown.is_empty() {
                "an image without a type".to_string()
            } else {
                format!("an image of type {shown}")
            };
            return Err(format!(
                "{what} was left out: Tandem passes on PNG, JPEG, GIF and WebP images only."
            ));
        };
        // The size first, from the length alone: a 20 MB string is refused before it is
        // scanned or copied.
        let approx = data.len() / 4 * 3;
        if approx > MAX_IMAGE_BYTES + MAX_IMAGE_BYTES / 8 {
            return Err(too_large(kind, approx));
        }
        let clean: String = data.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        let Some(bytes) = decoded_len(&clean) else {
            return Err(format!(
                "a {} image was left out: its data is not valid base64.",
                kind.label()
            ));
        };
        if bytes > MAX_IMAGE_BYTES {
            return Err(too_large(kind, bytes));
        }
        let head = decode_head(&clean, 12);
        if !kind.starts(&head) {
            return Err(format!(
                "an image was left out: its data is not the {} image it claims to be.",
                kind.label()
            ));
        }
        Ok(Self {
            kind,
            data: clean,
            bytes,
        })
    }

    /// Checks a `data:image/…;base64,…` URL exactly as [`Self::read`] does.
    pub fn from_data_url(url: &str) -> Option<Self> {
        let (head, data) = url.strip_prefix("data:")?.split_once(',')?;
        let mime = head.strip_suffix(";base64")?;
        let image = Self::read(mime, data).ok()?;
        // Only the form Tandem writes: nothing appended or spaced.
        (image.data == data).then_some(image)
    }

    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.kind.mime(), self.data)
    }

    /// `PNG, 40 KB`.
    pub fn describe(&self) -> String {
        format!("{}, {}", self.kind.label(), size(self.bytes))
    }
}

/// The sentence a model that takes no images reads for one a tool returned (`url` is the
/// outcome's data: URL).
pub fn unseen_sentence(url: &str) -> String {
    match ToolImage::from_data_url(url) {
        Some(i) => format!(
            "The tool returned an image ({}) that this model cannot see.",
            i.describe()
        ),
        None => "The tool returned an image that this model cannot see.".to_string(),
    }
}

/// For a model that takes no images: each tool result's images become sentences at the end
/// of its text ([`unseen_sentence`]), so the model knows there was a picture it cannot see
/// rather than losing it silently.
pub fn describe_tool_images(messages: &mut [RequestMessage]) {
    for r in messages.iter_mut().flat_map(|m| m.tool_results.iter_mut()) {
        for url in std::mem::take(&mut r.images) {
            r.content.push('\n');
            r.content.push_str(&unseen_sentence(&url));
        }
    }
}

fn too_large(kind: ImageKind, bytes: usize) -> String {
    format!(
        "a {} image of {} was left out: Tandem passes on images up to {}.",
        kind.label(),
        size(bytes),
        size(MAX_IMAGE_BYTES)
    )
}

/// `812 bytes`, `40 KB`, `3 MB`.
pub fn size(bytes: usize) -> String {
    if bytes < 1024 {
        format!("{bytes} bytes")
    } else if bytes < 1024 * 1024 {
        format!("{} KB", bytes.div_ceil(1024))
    } else {
        // Whole megabytes without a decimal: "up to 3 MB", not "3.0 MB".
        let mb = crate::decimal::decimal(bytes as f64 / (1024.0 * 1024.0), 1);
        format!("{} MB", mb.strip_suffix(".0").unwrap_or(&mb))
    }
}

fn sextet(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

/// The decoded length of standard, padded base64, or `None` when it is not that.
fn decoded_len(b64: &str) -> Option<usize> {
    let bytes = b64.as_bytes();
    if bytes.is_empty() || bytes.len() % 4 != 0 {
        return None;
    }
    let pad = bytes.iter().rev().take_while(|&&c| c == b'=').count();
    if pad > 2 {
        return None;
    }
    let body = &bytes[..bytes.len() - pad];
    if !body.iter().all(|&c| sextet(c).is_some()) {
        return None;
    }
    Some(bytes.len() / 4 * 3 - pad)
}

/// The first `n` decoded bytes of valid base64.
fn decode_head(b64: &str, n: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(n + 2);
    for quad in b64.as_bytes().chunks(4) {
        let v: Vec<u8> = quad.iter().filter_map(|&c| sextet(c)).collect();
        let word = v.iter().fold(0u32, |acc, &s| (acc << 6) | u32::from(s)) << (6 * (4 - v.len()));
        let got = v.len().saturating_sub(1);
        out.extend_from_slice(&word.to_be_bytes()[1..1 + got]);
        if out.len() >= n {
            break;
        }
    }
    out.truncate(n);
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A real 1×1 PNG.
    pub const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

    #[test]
    fn real_images_are_taken_with_their_size() {
        let png = ToolImage::read("image/png", PNG).unwrap();
        assert_eq!(png.kind, ImageKind::Png);
        assert_eq!(png.bytes, 70);
        assert_eq!(png.describe(), "PNG, 70 bytes");
        let url = png.data_url();
        assert!(url.starts_with("data:image/png;base64,iVBOR"));
        assert_eq!(ToolImage::from_data_url(&url), Some(png.clone()));
        // Line-wrapped base64 (MIME style) is the same image.
        let wrapped = format!("{}\n{}", &PNG[..40], &PNG[40..]);
        assert_eq!(ToolImage::read("IMAGE/PNG", &wrapped), Ok(png));
        let gif = "R0lGODlhAQABAAAAACw=";
        assert_eq!(
            ToolImage::read("image/gif", gif).unwrap().kind,
            ImageKind::Gif
        );
        let jpeg = "/9j/4AAQSkZJRgABAQ==";
        assert_eq!(
            ToolImage::read("image/jpeg", jpeg).unwrap().kind,
            ImageKind::Jpeg
        );
        let webp = "UklGRiQAAABXRUJQVlA4IA==";
        assert_eq!(
            ToolImage::read("image/webp", webp).unwrap().kind,
            ImageKind::Webp
        );
        assert_eq!(size(40 * 1024), "40 KB");
        assert_eq!(size(5 * 1024 * 1024 + 300_000), "5.3 MB");
    }

    #[test]
    fn hostile_images_are_refused_with_a_sentence() {
        let cases = [
            ("image/svg+xml", "PHN2Zz48L3N2Zz4=", "an image of type image/svg+xml was left out: Tandem passes on PNG, JPEG, GIF and WebP images only."),
            ("", PNG, "an image without a type was left out: Tandem passes on PNG, JPEG, GIF and WebP images only."),
            ("image/png", "not base64!", "a PNG image was left out: its data is not valid base64."),
            ("image/png", "iVBORw0KGgo", "a PNG image was left out: its data is not valid base64."),
            ("image/png", "PGh0bWw+PC9odG1sPg==", "an image was left out: its data is not the PNG image it claims to be."),
            ("image/jpeg", PNG, "an image was left out: its data is not the JPEG image it claims to be."),
        ];
        for (mime, data, want) in cases {
            assert_eq!(
                ToolImage::read(mime, data),
                Err(want.to_string()),
                "{mime} {data}"
            );
        }
        let huge = "A".repeat(20 * 1024 * 1024);
        assert_eq!(
            ToolImage::read("image/png", &huge),
            Err("a PNG image of 15 MB was left out: Tandem passes on images up to 2 MB.".into())
        );
        let just_over = format!(
            "iVBORw0KGgoAAAAN{}",
            "A".repeat(MAX_IMAGE_BYTES / 3 * 4 + 4)
        );
        assert!(ToolImage::read("image/png", &just_over)
            .unwrap_err()
            .contains("up to 2 MB"));
        // The panel's check: only Tandem's own form of a URL passes.
        for url in [
            "data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=".to_string(),
            format!("data:image/png;base64,{PNG}\" onerror=\"x"),
            format!("data:image/png,{PNG}"),
            format!("javascript:alert(1)//data:image/png;base64,{PNG}"),
        ] {
            assert_eq!(ToolImage::from_data_url(&url), None, "{url}");
        }
    }

    #[test]
    fn a_text_only_model_reads_a_sentence() {
        let url = ToolImage::read("image/png", PNG).unwrap().data_url();
        assert_eq!(
            unseen_sentence(&url),
            "The tool returned an image (PNG, 70 bytes) that this model cannot see."
        );
        let outcome = crate::request::ToolOutcome {
            call_id: "c".into(),
            name: "shots__capture".into(),
            content: "[image: PNG, 70 bytes]".into(),
            is_error: false,
            images: vec![url],
        };
        let mut turns = vec![RequestMessage {
            tool_results: vec![outcome],
            ..RequestMessage::text(crate::request::Role::User, "")
        }];
        describe_tool_images(&mut turns);
        let r = &turns[0].tool_results[0];
        assert!(r.images.is_empty());
        assert_eq!(
            r.content,
            "[image: PNG, 70 bytes]\nThe tool returned an image (PNG, 70 bytes) that this model cannot see."
        );
    }
}
