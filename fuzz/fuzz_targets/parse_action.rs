//! `parse_action` on a model's reply as it came: see `tandem_fuzz::check_parse_action`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|reply: &str| tandem_fuzz::check_parse_action(reply));
