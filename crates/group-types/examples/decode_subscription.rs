//! Decodes consumer-protocol bytes as real clients send them and prints them.
//!
//! With no arguments it decodes two captured shapes: a kafka-python v0
//! subscription and a librdkafka v3 subscription. Pass hex strings to decode
//! your own (`cargo run -p group-types --example decode_subscription -- 0000...`).

use group_types::{MemberAssignment, Subscription};

/// kafka-python 3.0.12, range/roundrobin: v0, topics ["t1"], null user data.
const KAFKA_PYTHON_V0: &str = "00000000000100027431ffffffff";
/// librdkafka 2.16.0: v3, topics ["t1"], null user data, owns t1[0,2] in generation 4, rack "".
const LIBRDKAFKA_V3: &str =
    "00030000000100027431ffffffff0000000100027431000000020000000000000002000000040000";

fn main() {
    let inputs: Vec<String> = std::env::args().skip(1).collect();
    let inputs =
        if inputs.is_empty() { vec![KAFKA_PYTHON_V0.to_owned(), LIBRDKAFKA_V3.to_owned()] } else { inputs };
    for hex in inputs {
        let Some(bytes) = parse_hex(&hex) else {
            eprintln!("{hex}: not a hex string");
            continue;
        };
        match Subscription::decode(&bytes) {
            Ok(sub) => println!("subscription {hex}\n  {sub:?}"),
            Err(sub_err) => match MemberAssignment::decode(&bytes) {
                Ok(assignment) => println!("assignment {hex}\n  {assignment:?}"),
                Err(_) => println!("{hex}: not consumer-protocol bytes: {sub_err}"),
            },
        }
    }
}

fn parse_hex(hex: &str) -> Option<Vec<u8>> {
    let hex = hex.trim();
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok()).collect()
}
