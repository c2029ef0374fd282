//! Helpers the fuzz targets share: cutting one input into network chunks, and running a
//! stream decoder over chunks into a log that two runs can be compared by.

use tandem_core::stream::{StreamDecoder, StreamEvent};

/// Inputs longer than this are not also decoded byte by byte: that costs one call per byte,
/// and the cut points already test splits anywhere.
pub const BYTE_BY_BYTE_MAX: usize = 4096;

/// Takes a chunking plan off the front of `data`: the first byte says how many cut points
/// follow (0 to 7), each one byte read as a fraction of the body's length. Returns the body
/// and its chunks, so a target decodes the same bytes whole and cut.
pub fn chunked(data: &[u8]) -> (&[u8], Vec<&[u8]>) {
    let Some((&n, rest)) = data.split_first() else {
        return (data, vec![data]);
    };
    let n = usize::from(n % 8).min(rest.len());
    let (plan, body) = rest.split_at(n);
    let mut cuts: Vec<usize> = plan
        .iter()
        .map(|&b| usize::from(b) * body.len() / 255)
        .collect();
    cuts.sort_unstable();
    let mut chunks = Vec::with_capacity(cuts.len() + 1);
    let mut start = 0;
    for cut in cuts {
        chunks.push(&body[start..cut]);
        start = cut;
    }
    chunks.push(&body[start..]);
    (body, chunks)
}

/// One line per event, then `END` or the error that ended the stream, as the worker reads it
/// (it stops at the first error).
pub fn run(decoder: &mut dyn StreamDecoder, chunks: &[&[u8]]) -> Vec<String> {
    let mut log = Vec::new();
    for i in 0..=chunks.len() {
        let result = match chunks.get(i) {
            Some(chunk) => decoder.push(chunk),
            None => decoder.finish(),
        };
        match result {
            Ok(events) => log.extend(events.iter().map(|e| format!("{e:?}"))),
            Err(e) => {
                log.push(format!("ERR {:?}: {}", e.kind, e.message));
                return log;
            }
        }
    }
    log.push("END".into());
    log
}

/// The rules every decoder keeps whatever the bytes: nothing after the end marker, one end
/// marker at most, and a stream that reports success has ended with its end marker.
pub fn check_stream_rules(log: &[String]) {
    let done = format!("{:?}", StreamEvent::Done);
    let dones: Vec<usize> = log
        .iter()
        .enumerate()
        .filter(|(_, l)| **l == done)
        .map(|(i, _)| i)
        .collect();
    assert!(dones.len() <= 1, "more than one Done: {log:?}");
    if let Some(&at) = dones.first() {
        assert_eq!(log.len(), at + 2, "events after Done: {log:?}");
    }
    if log.last().map(String::as_str) == Some("END") {
        assert_eq!(dones.len(), 1, "a success without its end marker: {log:?}");
    }
}

/// Decodes `data`'s body whole, cut as its plan says and byte by byte with fresh decoders
/// from `make`, asserts the logs are equal and the stream rules hold.
pub fn check_decoder(make: impl Fn() -> Box<dyn StreamDecoder>, data: &[u8]) {
    let (body, chunks) = chunked(data);
    let whole = run(&mut *make(), &[body]);
    check_stream_rules(&whole);
    assert_eq!(run(&mut *make(), &chunks), whole, "cut as {chunks:?}");
    if body.len() <= BYTE_BY_BYTE_MAX {
        let singles: Vec<&[u8]> = body.chunks(1).collect();
        assert_eq!(run(&mut *make(), &singles), whole, "byte by byte");
    }
}

/// The properties of [`tandem_core::agent::parse_action`] on any reply: no panic; an action
/// read from `reply` serialises to JSON that reads back as the same action with no repair;
/// and a repair never invents a field: every field the action carries is named in the reply,
/// or is one of the defaulted fields of [`default_of`] with exactly its default, and every text
/// value is in the reply (unless the reply has escapes, which spell a value differently). The
/// one value a repair may write is the scheme of a URL the model wrote host first
/// (`shop.example/p` → `https://shop.example/p`, [`Repair::SchemeAdded`]): then the URL without
/// its `https://` is in the reply, and what was added is exactly that scheme.
///
/// [`Repair::SchemeAdded`]: tandem_core::agent::actions::Repair::SchemeAdded
pub fn check_parse_action(reply: &str) {
    use tandem_core::agent::actions::{parse_action, Repair};
    let Ok(parsed) = parse_action(reply) else {
        return;
    };
    let json = parsed.action.to_json();
    let again = parse_action(&json.to_string()).expect("an action's own JSON reads back");
    assert_eq!(again.action, parsed.action, "round trip of {json}");
    assert!(again.repairs.is_empty(), "its own JSON needed {:?}", again.repairs);
    if reply.contains('\\') {
        return;
    }
    let lower = reply.to_lowercase();
    let Some(fields) = json.as_object() else {
        panic!("an action's JSON is an object: {json}")
    };
    let name = parsed.action.name();
    for (key, value) in fields {
        if key == "action" {
            continue;
        }
        if !reply.contains(key.as_str()) {
            let Some(default) = default_of(name, key) else {
                panic!("invented field {key} from {reply:?}")
            };
            assert_eq!(value, &default, "{name}'s {key} is not its default, from {reply:?}");
            continue;
        }
        if let Some(text) = value.as_str() {
            let text = match key.as_str() {
                "url" if parsed.repairs.contains(&Repair::SchemeAdded) => {
                    let Some(written) = text.strip_prefix("https://") else {
                        panic!("SchemeAdded, but the URL {text:?} does not start with https://")
                    };
                    assert!(
                        !written.contains("://"),
                        "a scheme added to a URL that had one: {text:?} from {reply:?}"
                    );
                    written
                }
                _ => text,
            };
            assert!(
                lower.contains(&text.to_lowercase()),
                "invented {key} value {text:?} from {reply:?}"
            );
        }
    }
}

/// The fields an action's JSON carries even when the model left them out, and the one value
/// each then has. A default is no invented value: the action cannot run without one, the
/// value is the same for every reply, and the JSON carries it so the timeline's details and a
/// workflow record say exactly what ran. `clear` and `submit` of `type` (the schema gives
/// their defaults), `ms` of a `wait` for text ([`DEFAULT_TEXT_WAIT_MS`]; a wait without text
/// needs `ms`), and the axis of a `drag` by `dx`/`dy` not given (no move along it).
///
/// [`DEFAULT_TEXT_WAIT_MS`]: tandem_core::agent::actions::DEFAULT_TEXT_WAIT_MS
pub fn default_of(action: &str, field: &str) -> Option<serde_json::Value> {
    use tandem_core::agent::actions::DEFAULT_TEXT_WAIT_MS;
    Some(match (action, field) {
        ("type", "clear") => true.into(),
        ("type", "submit") => false.into(),
        ("wait", "ms") => DEFAULT_TEXT_WAIT_MS.into(),
        ("drag", "dx" | "dy") => 0.into(),
        _ => return None,
    })
}
