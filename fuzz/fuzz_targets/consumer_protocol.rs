//! Fuzz target `consumer_protocol`: any bytes as a consumer-protocol subscription
//! and assignment, with the round-trip checks of `group_types::fuzzing`.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| group_types::fuzzing::consumer_protocol(data));
