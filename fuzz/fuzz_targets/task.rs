//! A stored task (`chrome.storage.session`): any JSON reads without a panic, and a task that
//! was read, saved again, reads back as the same task.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tandem_core::agent::task::parse_stored;

fuzz_target!(|json: &str| {
    if let Ok(Some(task)) = parse_stored(json) {
        let saved = task.to_json();
        assert_eq!(parse_stored(&saved), Ok(Some(task)), "saved as {saved}");
    }
});
