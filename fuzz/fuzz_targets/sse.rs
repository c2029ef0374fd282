//! The SSE framer: no panic, and the same events for any chunking, also with a small line
//! limit (so the fuzzer reaches the over-long line path).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tandem_core::sse::SseDecoder;

fn decode(make: &dyn Fn() -> SseDecoder, chunks: &[&[u8]]) -> Vec<String> {
    let mut d = make();
    let mut out: Vec<String> = chunks
        .iter()
        .flat_map(|c| d.push(c))
        .map(|e| format!("{e:?}"))
        .collect();
    out.extend(d.finish().into_iter().map(|e| format!("{e:?}")));
    out
}

fuzz_target!(|data: &[u8]| {
    let (body, chunks) = tandem_fuzz::chunked(data);
    let makers: [&dyn Fn() -> SseDecoder; 2] =
        [&SseDecoder::new, &|| SseDecoder::with_line_limit(32)];
    for make in makers {
        let whole = decode(make, &[body]);
        assert_eq!(decode(make, &chunks), whole, "cut as {chunks:?}");
        if body.len() <= tandem_fuzz::BYTE_BY_BYTE_MAX {
            let singles: Vec<&[u8]> = body.chunks(1).collect();
            assert_eq!(decode(make, &singles), whole, "byte by byte");
        }
    }
});
