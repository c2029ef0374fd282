//! Stored settings (`chrome.storage.local` `settings`): any JSON reads without a panic, and
//! what was read, saved again, reads back as the same value with nothing reset.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tandem_core::settings::Settings;

fuzz_target!(|json: &str| {
    let first = Settings::from_stored_json(json);
    let saved = serde_json::to_string(&first.settings).expect("settings serialise");
    let again = Settings::from_stored_json(&saved);
    assert_eq!(again.settings, first.settings, "saved as {saved}");
    assert!(again.reset.is_empty(), "saved as {saved}, reset {:?}", again.reset);
});
