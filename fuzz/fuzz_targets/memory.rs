//! Stored conversation memory and a waiting selection (`chrome.storage.session`): any JSON
//! reads without a panic, and what was read, saved again, reads back as the same value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tandem_core::memory::{PendingSelection, SessionMemory};

fn round_trip<T>(json: &str)
where
    T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
{
    if let Ok(value) = serde_json::from_str::<T>(json) {
        let saved = serde_json::to_string(&value).expect("stored state serialises");
        let again: T = serde_json::from_str(&saved).expect("saved state reads back");
        assert_eq!(again, value, "saved as {saved}");
    }
}

fuzz_target!(|json: &str| {
    round_trip::<SessionMemory>(json);
    round_trip::<PendingSelection>(json);
});
