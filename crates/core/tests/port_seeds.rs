//! The fuzzer's Port seeds (`fuzz/seeds/port`) are messages the worker or the panel reads:
//! a seed the protocol no longer accepts would start `scripts/fuzz` from noise.

use std::path::Path;

use tandem_core::protocol::{PanelToWorker, WorkerToPanel};

#[test]
fn every_port_seed_is_a_message_one_end_reads() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/port");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).expect("the seeds folder") {
        let path = entry.expect("a seed").path();
        let json = std::fs::read_to_string(&path).expect("a text seed");
        let read =
            PanelToWorker::from_json(&json).is_ok() || WorkerToPanel::from_json(&json).is_ok();
        assert!(read, "{} is read by neither end", path.display());
        seen += 1;
    }
    assert!(seen >= 6, "{seen} seeds");
}
