//! The Port messages (`PanelToWorker` read by the worker, `WorkerToPanel` read by the panel):
//! any text reads without a panic, and a message read, sent again, reads back the same.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tandem_core::protocol::{PanelToWorker, WorkerToPanel};

fuzz_target!(|json: &str| {
    if let Ok(m) = PanelToWorker::from_json(json) {
        let sent = m.to_json();
        assert_eq!(PanelToWorker::from_json(&sent).ok(), Some(m), "sent as {sent}");
    }
    if let Ok(m) = WorkerToPanel::from_json(json) {
        let sent = m.to_json();
        assert_eq!(WorkerToPanel::from_json(&sent).ok(), Some(m), "sent as {sent}");
    }
});
