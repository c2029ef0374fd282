//! The NDJSON framer: no panic, the same lines for any chunking, no line holds a line
//! ending, and (with a small line limit, so the fuzzer reaches it) an over-long line is
//! dropped the same way whatever the chunking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tandem_core::ndjson::{Line, NdjsonDecoder};

fn decode(make: &dyn Fn() -> NdjsonDecoder, chunks: &[&[u8]]) -> Vec<String> {
    let mut d = make();
    let mut out: Vec<String> = chunks
        .iter()
        .flat_map(|c| d.push(c))
        .map(|l| match l {
            Line::Text(t) => t,
            Line::Overlong(n) => format!("({n} bytes dropped)"),
        })
        .collect();
    out.extend(d.finish().map(|t| format!("<{t}>")));
    out
}

fuzz_target!(|data: &[u8]| {
    let (body, chunks) = tandem_fuzz::chunked(data);
    let makers: [&dyn Fn() -> NdjsonDecoder; 2] =
        [&NdjsonDecoder::new, &|| NdjsonDecoder::with_line_limit(32)];
    for make in makers {
        let whole = decode(make, &[body]);
        assert!(whole.iter().all(|l| !l.contains(['\n', '\r'])), "{whole:?}");
        assert_eq!(decode(make, &chunks), whole, "cut as {chunks:?}");
        if body.len() <= tandem_fuzz::BYTE_BY_BYTE_MAX {
            let singles: Vec<&[u8]> = body.chunks(1).collect();
            assert_eq!(decode(make, &singles), whole, "byte by byte");
        }
    }
});
