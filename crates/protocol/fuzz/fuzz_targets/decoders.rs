//! Every protocol decoder over arbitrary bytes: errors are expected, panics are bugs.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    onelog_protocol::fuzz::all_decoders(data);
});
