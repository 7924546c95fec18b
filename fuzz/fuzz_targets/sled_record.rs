//! Fuzz target `sled_record`: any bytes as a sled key and value (one length byte,
//! the key, the value), with the round-trip checks of `group_storage_sled::fuzzing`.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| group_storage_sled::fuzzing::record(data));
