//! The planner's reply parser and the schema check Nano's answers go through: no panic, a
//! plan taken from the reply itself is never longer than the cap, and a reply the schema
//! accepts reads as JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tandem_core::agent::task::{parse_planner, planner_schema};

fuzz_target!(|reply: &str| {
    let plan = parse_planner(reply);
    if !reply.contains('{') {
        // Without an object the whole (capped) text is the plan.
        assert!(plan.plan.chars().count() <= 600, "{plan:?}");
        assert_eq!(plan.plan, reply.trim().chars().take(600).collect::<String>());
    }
    if let Ok(json) = planner_schema().validate(reply) {
        let value: serde_json::Value = serde_json::from_str(&json).expect("validated JSON parses");
        assert!(value.is_object(), "{json}");
    }
});
