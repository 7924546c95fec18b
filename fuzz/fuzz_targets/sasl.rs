//! Fuzz target `sasl`: any client bytes through one server-side SASL exchange (PLAIN,
//! SCRAM-SHA-256 or SCRAM-SHA-512, picked by the first byte), the parsers of every
//! client message among them: `group_server::sasl::fuzz_sasl`.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| group_server::sasl::fuzz_sasl(data));
