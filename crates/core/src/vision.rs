//! Which models see images, what an image costs them, and the screenshot's size.
//!
//! A screenshot goes only to a model known to take images: sent to a text-only model it is
//! refused (400) or, worse, silently dropped while the model is told to read it. Unknown
//! models are treated as text-only; a wrong "no" costs the agent its eyes, a wrong "yes" a
//! failed or misled step.
//!
//! Image tokens follow each provider's published rule (checked against their docs):
//! - OpenAI ("Images and vision", high detail): fit in 2048×2048, then scale down so the
//!   shortest side is at most 768 px; 85 tokens plus 170 per 512-px tile.
//! - Anthropic ("Vision"): about width × height / 750 tokens, after scaling the long side
//!   down to 1568 px.
//! - Gemini and Firebase (Gemini 2.x "Image understanding"): 258 tokens when both sides are
//!   at most 384 px, else 258 per 768×768 tile.
//! - Ollama: local vision models (LLaVA's CLIP encoder, Gemma 3's SigLIP) turn an image into
//!   a fixed number of tokens after resizing it, 576 (LLaVA 1.5) to 256 (Gemma 3); 576 is
//!   charged, the larger.
//! - Gemini Nano (Chrome's Prompt API): Chrome publishes no per-image figure, and the
//!   session's own `contextUsage` is read only after the prompt. [`NANO_IMAGE_TOKENS`] (256)
//!   is the figure of Gemma 3n, the open model built on Gemini Nano's architecture, whose
//!   MobileNet-V5 encoder turns an image of any of its sizes into 256 tokens.
//!
//! Gemini Nano takes images only from a session created with image input
//! (`expectedInputs: [{type: "image"}]`): [`takes_images`] is about cloud models, and the
//! on-device rule is the session's (`NanoSession::takes_images`), asked for when a task may
//! look and Chrome says this device's model takes images.
//!
//! The screenshot's long side is [`SHOT_LONG_SIDE`] (1024) CSS pixels at most: a 1280×720
//! viewport becomes 1024×576, which costs OpenAI 765 tokens (4 tiles), Anthropic 787 and
//! Gemini 516 (2 tiles), against 1,105, 1,229 and 516 at full size; page text at 80 % is still
//! read reliably, while at 768 px (OpenAI 425 tokens) 13-px text starts to blur.

use crate::provider::ProviderKind;

/// The screenshot's longest side, in pixels (see the module docs for the trade-off).
pub const SHOT_LONG_SIDE: f64 = 1024.0;

/// Estimated tokens of one screenshot on Gemini Nano, whatever its size (see the module docs
/// for where the figure comes from).
pub const NANO_IMAGE_TOKENS: u32 = 256;

/// Whether `model` of `kind` takes images in a request.
pub fn takes_images(kind: ProviderKind, model: &str) -> bool {
    let m = model.trim().to_ascii_lowercase();
    // A provider prefix (`openai/gpt-4o` on a router) does not change the model.
    let m = m.rsplit('/').next().unwrap_or_default();
    match kind {
        ProviderKind::Anthropic => {
            m.starts_with("claude-") && !m.starts_with("claude-2") && !m.contains("instant")
        }
        ProviderKind::Gemini | ProviderKind::Firebase => gemini_sees(m),
        ProviderKind::Ollama => ollama_sees(m),
        ProviderKind::OpenAi | ProviderKind::OpenAiCompatible => {
            openai_sees(m)
                || m.starts_with("claude-") && !m.starts_with("claude-2")
                || gemini_sees(m)
                || ollama_sees(m)
        }
    }
}

fn gemini_sees(m: &str) -> bool {
    // Gemini 1.0 Pro was text-only (its vision twin was `gemini-pro-vision`); every later
    // Gemini takes images.
    m.starts_with("gemini-")
        && m != "gemini-pro"
        && !m.starts_with("gemini-1.0-pro")
        && !m.contains("embedding")
}

fn openai_sees(m: &str) -> bool {
    const VISION: [&str; 8] = [
        "gpt-4o",
        "chatgpt-4o",
        "gpt-4.1",
        "gpt-4.5",
        "gpt-4-turbo",
        "gpt-4-vision",
        "gpt-5",
        "o4-",
    ];
    // o1 and o3 take images, their -mini versions do not (o4-mini does).
    let reasoning = (m == "o1" || m.starts_with("o1-2") || m == "o3" || m.starts_with("o3-2"))
        && !m.contains("mini");
    reasoning
        || VISION.iter().any(|p| m.starts_with(p))
            && !["audio", "realtime", "search", "transcribe", "tts"]
                .iter()
                .any(|w| m.contains(w))
}

/// Local vision models by family, as Ollama's library names them (tags after `:`).
fn ollama_sees(m: &str) -> bool {
    let (name, tag) = m.split_once(':').unwrap_or((m, ""));
    const FAMILIES: [&str; 12] = [
        "llava",
        "bakllava",
        "llama3.2-vision",
        "llama4",
        "qwen2.5vl",
        "qwen2.5-vl",
        "qwen3-vl",
        "minicpm-v",
        "moondream",
        "granite3.2-vision",
        "mistral-small3.",
        "gemma3",
    ];
    // Gemma 3's 270M and 1B take text only.
    if name == "gemma3" && (tag.starts_with("1b") || tag.starts_with("270m")) {
        return false;
    }
    FAMILIES.iter().any(|f| name.starts_with(f)) || name.ends_with("-vision")
}

/// Estimated input tokens of one `width` × `height` image for `kind` (see the module docs).
pub fn image_tokens_for(kind: ProviderKind, width: u32, height: u32) -> u32 {
    let (w, h) = (f64::from(width.max(1)), f64::from(height.max(1)));
    let tokens = match kind {
        ProviderKind::Anthropic => {
            let scale = (1568.0 / w.max(h)).min(1.0);
            ((w * scale).round() * (h * scale).round() / 750.0).ceil()
        }
        ProviderKind::Gemini | ProviderKind::Firebase => {
            if w <= 384.0 && h <= 384.0 {
                258.0
            } else {
                258.0 * (w / 768.0).ceil() * (h / 768.0).ceil()
            }
        }
        ProviderKind::Ollama => 576.0,
        ProviderKind::OpenAi | ProviderKind::OpenAiCompatible => {
            let fit = (2048.0 / w.max(h)).min(1.0);
            let (w, h) = (w * fit, h * fit);
            let short = (768.0 / w.min(h)).min(1.0);
            let (w, h) = ((w * short).floor(), (h * short).floor());
            85.0 + 170.0 * (w / 512.0).ceil() * (h / 512.0).ceil()
        }
    };
    // `as` saturates; the figures above are small whole numbers.
    tokens as u32
}

/// The screenshot's size for a viewport of `width` × `height` CSS pixels: the long side at
/// most [`SHOT_LONG_SIDE`], never enlarged, at least 1 × 1.
pub fn shot_size(width: f64, height: f64) -> (u32, u32) {
    let (w, h) = (width.max(1.0), height.max(1.0));
    let scale = (SHOT_LONG_SIDE / w.max(h)).min(1.0);
    // `as` saturates; both are at most SHOT_LONG_SIDE.
    (
        ((w * scale).round() as u32).max(1),
        ((h * scale).round() as u32).max(1),
    )
}

/// Standard base64 (with padding), for a screenshot's `data:` URL.
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18u32, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The media type and bytes of a base64 `data:` URL (`data:image/jpeg;base64,…`); `None`
/// for anything else or broken base64. Whitespace in the payload is skipped.
pub fn decode_data_url(url: &str) -> Option<(String, Vec<u8>)> {
    let rest = url.strip_prefix("data:")?;
    let (head, payload) = rest.split_once(',')?;
    let mime = head.strip_suffix(";base64")?;
    let mut out = Vec::with_capacity(payload.len() / 4 * 3);
    let (mut acc, mut bits) = (0u32, 0u32);
    let mut ended = false;
    for c in payload.bytes().filter(|c| !c.is_ascii_whitespace()) {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' => {
                ended = true;
                continue;
            }
            _ => return None,
        };
        if ended {
            return None;
        }
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            // Masked to one byte.
            out.push(((acc >> bits) & 0xff) as u8);
        }
    }
    Some((mime.to_string(), out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ProviderKind::*;

    #[test]
    fn vision_models_by_provider() {
        for (kind, model) in [
            (OpenAi, "gpt-4o"),
            (OpenAi, "gpt-4o-mini-2024-07-18"),
            (OpenAi, "gpt-4.1-nano"),
            (OpenAi, "gpt-5"),
            (OpenAi, "o1"),
            (OpenAi, "o4-mini"),
            (OpenAiCompatible, "openai/gpt-4o"),
            (OpenAiCompatible, "llava:13b"),
            (Anthropic, "claude-3-5-haiku-latest"),
            (Anthropic, "claude-sonnet-4-20250514"),
            (Gemini, "gemini-2.5-flash"),
            (Firebase, "gemini-2.0-flash"),
            (Ollama, "llama3.2-vision:11b"),
            (Ollama, "gemma3:4b"),
            (Ollama, "qwen2.5vl:7b"),
            (Ollama, "llava"),
        ] {
            assert!(takes_images(kind, model), "{kind:?} {model}");
        }
        for (kind, model) in [
            (OpenAi, "gpt-3.5-turbo"),
            (OpenAi, "gpt-4"),
            (OpenAi, "o1-mini"),
            (OpenAi, "o3-mini"),
            (OpenAi, "gpt-4o-audio-preview"),
            (OpenAi, "gpt-4o-mini-transcribe"),
            (OpenAiCompatible, "gpt-test"),
            (OpenAiCompatible, "mistral-7b-instruct"),
            (Anthropic, "claude-2.1"),
            (Anthropic, "claude-instant-1.2"),
            (Gemini, "gemini-pro"),
            (Gemini, "gemini-1.0-pro-001"),
            (Gemini, "text-embedding-004"),
            (Ollama, "llama3.1:8b"),
            (Ollama, "gemma3:1b"),
            (Ollama, "qwen2.5:7b"),
            (Ollama, ""),
        ] {
            assert!(!takes_images(kind, model), "{kind:?} {model}");
        }
    }

    #[test]
    fn image_tokens_follow_each_providers_rule() {
        // OpenAI's documented examples: 1024×1024 → 768×768, 4 tiles: 765; 2048×4096 →
        // 1024×2048 → 768×1536, 6 tiles: 1105.
        assert_eq!(image_tokens_for(OpenAi, 1024, 1024), 765);
        assert_eq!(image_tokens_for(OpenAi, 2048, 4096), 1105);
        assert_eq!(image_tokens_for(OpenAiCompatible, 1024, 576), 765);
        assert_eq!(image_tokens_for(OpenAi, 512, 300), 255);
        // Anthropic: 1092×1092 is about 1590 tokens in its table.
        assert_eq!(image_tokens_for(Anthropic, 1092, 1092), 1590);
        assert_eq!(image_tokens_for(Anthropic, 1024, 576), 787);
        // Gemini: small is one unit, larger is tiled.
        assert_eq!(image_tokens_for(Gemini, 300, 200), 258);
        assert_eq!(image_tokens_for(Gemini, 1024, 576), 516);
        assert_eq!(image_tokens_for(Firebase, 1536, 768), 516);
        assert_eq!(image_tokens_for(Ollama, 1024, 576), 576);
        // Degenerate sizes still count something.
        assert!(image_tokens_for(Anthropic, 0, 0) >= 1);
    }

    #[test]
    fn shot_size_bounds_the_long_side_and_never_enlarges() {
        assert_eq!(shot_size(1280.0, 720.0), (1024, 576));
        assert_eq!(shot_size(720.0, 1280.0), (576, 1024));
        assert_eq!(shot_size(800.0, 600.0), (800, 600));
        assert_eq!(shot_size(0.0, -5.0), (1, 1));
    }

    #[test]
    fn base64_matches_the_standard_alphabet() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64(&[0xff, 0xfe, 0x00]), "//4A");
    }

    #[test]
    fn data_urls_decode_back_to_their_bytes() {
        for bytes in [
            &b""[..],
            b"f",
            b"fo",
            b"foo",
            b"foobar",
            &[0xff, 0xd8, 0xff, 0xe0],
        ] {
            let url = format!("data:image/jpeg;base64,{}", base64(bytes));
            assert_eq!(
                decode_data_url(&url),
                Some(("image/jpeg".to_string(), bytes.to_vec()))
            );
        }
        assert_eq!(
            decode_data_url("data:image/png;base64,Zm9v\nYmFy"),
            Some(("image/png".to_string(), b"foobar".to_vec())),
            "line breaks in the payload are skipped"
        );
        assert_eq!(decode_data_url("data:image/png;base64,Zg==Zg=="), None);
        assert_eq!(decode_data_url("data:text/plain,hello"), None, "not base64");
        assert_eq!(decode_data_url("https://x.test/a.png"), None);
        assert_eq!(decode_data_url("data:image/png;base64,a$b="), None);
    }

    #[test]
    fn image_reading_models_are_known_by_family() {
        use ProviderKind::*;
        for (kind, model, sees) in [
            (OpenAi, "gpt-4o-mini", true),
            (OpenAi, "gpt-5", true),
            (OpenAi, "o3-mini", false),
            (OpenAi, "gpt-3.5-turbo", false),
            (OpenAiCompatible, "gpt-test", false),
            (OpenAiCompatible, "Qwen2.5-VL-7B-Instruct", true),
            (Ollama, "llava:13b", true),
            (Ollama, "llama3.2-vision", true),
            (Ollama, "llama3.1:8b", false),
            (Anthropic, "claude-sonnet-4-5", true),
            (Anthropic, "claude-2.1", false),
            (Gemini, "gemini-2.5-flash", true),
            (Firebase, "gemini-2.5-flash", true),
        ] {
            assert_eq!(takes_images(kind, model), sees, "{kind:?} {model}");
        }
    }
}
