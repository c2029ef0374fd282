//! The NDJSON framer: no panic, the same lines for any chunking, and no line holds a line
//! ending.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tandem_core::ndjson::NdjsonDecoder;

fn decode(chunks: &[&[u8]]) -> Vec<String> {
    let mut d = NdjsonDecoder::new();
    let mut out: Vec<String> = chunks.iter().flat_map(|c| d.push(c)).collect();
    out.extend(d.finish().map(|t| format!("<{t}>")));
    out
}

fuzz_target!(|data: &[u8]| {
    let (body, chunks) = tandem_fuzz::chunked(data);
    let whole = decode(&[body]);
    assert!(whole.iter().all(|l| !l.contains(['\n', '\r'])), "{whole:?}");
    assert_eq!(decode(&chunks), whole, "cut as {chunks:?}");
    if body.len() <= tandem_fuzz::BYTE_BY_BYTE_MAX {
        let singles: Vec<&[u8]> = body.chunks(1).collect();
        assert_eq!(decode(&singles), whole, "byte by byte");
    }
});
