//! Golden bytes of the consumer protocol, written from Kafka's schemas
//! (`ConsumerProtocolSubscription.json`, `ConsumerProtocolAssignment.json`):
//! every version decodes from them and encodes back to them.

use group_types::{CodecError, MemberAssignment, Subscription, TopicPartitions};
use rstest::rstest;

/// Hex with spaces between fields, so each golden reads like the schema.
fn hex(s: &str) -> Vec<u8> {
    let digits: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    (0..digits.len()).step_by(2).map(|i| u8::from_str_radix(&digits[i..i + 2], 16).unwrap()).collect()
}

fn owned() -> Vec<TopicPartitions> {
    vec![TopicPartitions::new("t1", [0, 1])]
}

fn subscription(version: i16) -> Subscription {
    Subscription {
        version,
        topics: vec!["t1".into(), "t2".into()],
        user_data: Some(vec![0xca, 0xfe]),
        owned_partitions: if version >= 1 { owned() } else { Vec::new() },
        generation_id: if version >= 2 { 5 } else { -1 },
        rack_id: if version >= 3 { Some("r1".into()) } else { None },
    }
}

const SUB_V0: &str = "0000 00000002 0002 7431 0002 7432 00000002 cafe";
const OWNED: &str = "00000001 0002 7431 00000002 00000000 00000001";

fn sub_golden(version: i16) -> Vec<u8> {
    let mut s = format!("{:04x}", version) + &SUB_V0[4..];
    if version >= 1 {
        s += OWNED;
    }
    if version >= 2 {
        s += "00000005";
    }
    if version >= 3 {
        s += "0002 7231";
    }
    hex(&s)
}

#[rstest]
fn subscription_golden_bytes(#[values(0, 1, 2, 3)] version: i16) {
    let expected = sub_golden(version);
    let sub = subscription(version);
    assert_eq!(sub.encode().unwrap(), expected, "encode v{version}");
    assert_eq!(Subscription::decode(&expected).unwrap(), sub, "decode v{version}");
}

#[test]
fn kafka_python_v0_subscription() {
    // What kafka-python sends for range/roundrobin: one topic, null user data.
    let bytes = hex("0000 00000001 0002 7431 ffffffff");
    let sub = Subscription::decode(&bytes).unwrap();
    assert_eq!(sub.topics, ["t1"]);
    assert_eq!(sub.user_data, None);
    assert_eq!(sub.encode().unwrap(), bytes);
}

#[test]
fn librdkafka_v3_subscription_with_empty_rack() {
    // librdkafka always sends v3 with rack "" (empty, not null).
    let bytes = hex("0003 00000001 0002 7431 ffffffff 00000000 ffffffff 0000");
    let sub = Subscription::decode(&bytes).unwrap();
    assert_eq!(sub.generation_id, -1);
    assert_eq!(sub.rack_id.as_deref(), Some(""));
    assert!(sub.owned_partitions.is_empty());
    assert_eq!(sub.encode().unwrap(), bytes);
}

#[test]
fn null_and_empty_user_data_differ() {
    let null = Subscription { user_data: None, ..Subscription::default() };
    let empty = Subscription { user_data: Some(Vec::new()), ..Subscription::default() };
    assert_eq!(null.encode().unwrap(), hex("0000 00000000 ffffffff"));
    assert_eq!(empty.encode().unwrap(), hex("0000 00000000 00000000"));
}

#[test]
fn v3_null_rack() {
    let sub = Subscription { version: 3, rack_id: None, ..Subscription::default() };
    let bytes = hex("0003 00000000 ffffffff 00000000 ffffffff ffff");
    assert_eq!(sub.encode().unwrap(), bytes);
    assert_eq!(Subscription::decode(&bytes).unwrap(), sub);
}

#[test]
fn newer_version_reads_the_known_fields() {
    // A v5 subscription from a future client: the v3 fields, then bytes we do not know.
    let mut bytes = sub_golden(3);
    bytes[1] = 5;
    bytes.extend_from_slice(&hex("deadbeef"));
    let sub = Subscription::decode(&bytes).unwrap();
    assert_eq!(sub, subscription(3));
    assert_eq!(Subscription::decode_topics(&bytes).unwrap(), ["t1", "t2"]);
}

#[test]
fn decode_topics_reads_only_the_v0_prefix() {
    // Owned partitions are cut short, but the topic list is intact.
    let mut bytes = sub_golden(1);
    bytes.truncate(bytes.len() - 3);
    assert!(Subscription::decode(&bytes).is_err());
    assert_eq!(Subscription::decode_topics(&bytes).unwrap(), ["t1", "t2"]);
}

const ASSIGNMENT: &str = "00000002 0002 7431 00000002 00000000 00000002 0002 7432 00000001 00000007";

#[rstest]
fn assignment_golden_bytes(#[values(0, 1, 2, 3)] version: i16, #[values(false, true)] with_user_data: bool) {
    let user_data = with_user_data.then(|| vec![1, 2, 3]);
    let tail = if with_user_data { "00000003 010203" } else { "ffffffff" };
    let expected = hex(&format!("{version:04x} {ASSIGNMENT} {tail}"));
    let assignment = MemberAssignment {
        version,
        partitions: vec![TopicPartitions::new("t1", [0, 2]), TopicPartitions::new("t2", [7])],
        user_data,
    };
    assert_eq!(assignment.encode().unwrap(), expected);
    assert_eq!(MemberAssignment::decode(&expected).unwrap(), assignment);
}

#[test]
fn empty_assignment() {
    let bytes = hex("0000 00000000 ffffffff");
    let assignment = MemberAssignment::decode(&bytes).unwrap();
    assert!(assignment.topic_partitions().is_empty());
    assert_eq!(MemberAssignment::new(Vec::new()).encode().unwrap(), bytes);
}

#[rstest]
#[case::empty("", CodecError::Truncated { field: "version", needed: 2, remaining: 0 })]
#[case::negative_version("ffff 00000000 ffffffff", CodecError::UnsupportedVersion { version: -1 })]
#[case::truncated_topic("0000 00000001 0005 7431", CodecError::Truncated { field: "topic", needed: 5, remaining: 2 })]
#[case::null_topic("0000 00000001 ffff ffffffff", CodecError::InvalidLength { field: "topic", length: -1 })]
#[case::negative_string("0000 00000001 fffe ffffffff", CodecError::InvalidLength { field: "topic", length: -2 })]
#[case::negative_count("0000 ffffffff ffffffff", CodecError::InvalidLength { field: "topics", length: -1 })]
#[case::huge_count("0000 7fffffff 0000", CodecError::CountTooLarge { field: "topics", count: i32::MAX, remaining: 2 })]
#[case::bad_user_data("0000 00000000 fffffffe", CodecError::InvalidLength { field: "user_data", length: -2 })]
#[case::user_data_too_long("0000 00000000 00000010 00", CodecError::Truncated { field: "user_data", needed: 16, remaining: 1 })]
#[case::invalid_utf8("0000 00000001 0002 c328 ffffffff", CodecError::InvalidUtf8 { field: "topic" })]
#[case::missing_generation("0002 00000000 ffffffff 00000000 0000", CodecError::Truncated { field: "generation_id", needed: 4, remaining: 2 })]
fn malformed_subscriptions(#[case] input: &str, #[case] expected: CodecError) {
    assert_eq!(Subscription::decode(&hex(input)), Err(expected));
}

#[rstest]
#[case::empty("", CodecError::Truncated { field: "version", needed: 2, remaining: 0 })]
#[case::huge_partition_count(
    "0000 00000001 0001 74 40000000 00000000",
    CodecError::CountTooLarge { field: "partitions", count: 0x4000_0000, remaining: 4 }
)]
#[case::huge_topic_count("0000 10000000", CodecError::CountTooLarge { field: "assigned_partitions", count: 0x1000_0000, remaining: 0 })]
#[case::missing_user_data("0000 00000000", CodecError::Truncated { field: "user_data", needed: 4, remaining: 0 })]
fn malformed_assignments(#[case] input: &str, #[case] expected: CodecError) {
    assert_eq!(MemberAssignment::decode(&hex(input)), Err(expected));
}

#[rstest]
#[case(-1)]
#[case(4)]
fn encoding_an_unknown_version_is_an_error(#[case] version: i16) {
    let sub = Subscription { version, ..Subscription::default() };
    assert_eq!(sub.encode(), Err(CodecError::UnsupportedVersion { version }));
    let assignment = MemberAssignment { version, ..MemberAssignment::default() };
    assert_eq!(assignment.encode(), Err(CodecError::UnsupportedVersion { version }));
}

#[test]
fn a_topic_longer_than_i16_cannot_be_encoded() {
    let sub = Subscription { topics: vec!["x".repeat(40_000)], ..Subscription::default() };
    assert_eq!(sub.encode(), Err(CodecError::TooLong { field: "topic", length: 40_000 }));
}
