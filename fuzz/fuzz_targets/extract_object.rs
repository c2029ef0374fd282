//! The JSON repair path of `parse_action` (`extract_object`, `repair_object`): the reply is
//! wrapped in prose, so it is never clean JSON and every input reaches the repair code.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|object: &str| {
    tandem_fuzz::check_parse_action(&format!("Here is the action: {object} Done."));
    tandem_fuzz::check_parse_action(&format!("```json\n{object}\n```"));
});
