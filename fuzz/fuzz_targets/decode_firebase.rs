//! The Firebase stream decoder: no panic, the same events for any chunking, success only after
//! the end marker.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tandem_core::adapters::adapter_for;
use tandem_core::provider::ProviderKind;

fuzz_target!(|data: &[u8]| {
    tandem_fuzz::check_decoder(|| adapter_for(ProviderKind::Firebase).decoder(), data);
});
