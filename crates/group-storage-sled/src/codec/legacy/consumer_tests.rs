//! Tests of the legacy consumer-group record format: golden bytes of every
//! kind's key and value (read as the landed build wrote them), round trips,
//! and typed errors for bad bytes.

use group_offsets::CoordinatorPartition;
use proptest::prelude::*;
use rstest::rstest;

use super::*;
use crate::keys;

const P7: CoordinatorPartition = CoordinatorPartition(7);

fn id(s: &str) -> Arc<str> {
    Arc::from(s)
}

/// Topic id 1: fifteen zero bytes, then 1.
const T1: TopicId = TopicId::from_u128(1);
const T1_BYTES: [u8; 16] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];

fn full_member() -> ConsumerMemberMetadataValue {
    ConsumerMemberMetadataValue {
        instance_id: Some("i".into()),
        rack_id: None,
        client_id: "c".into(),
        client_host: "/h".into(),
        subscribed_topic_names: vec!["t".into()],
        subscribed_topic_regex: None,
        rebalance_timeout_ms: 100,
        server_assignor: Some("u".into()),
        classic: Some(ClassicMemberMetadata {
            session_timeout_ms: 45_000,
            supported_protocols: vec![ProtocolMetadata::new("range", vec![0, 1])],
        }),
    }
}

fn member(value: ConsumerMemberMetadataValue) -> ConsumerGroupRecord {
    ConsumerGroupRecord::MemberMetadata {
        group_id: id("g"),
        member_id: id("m"),
        value: Some(Box::new(value)),
    }
}

fn with(bytes: &[&[u8]]) -> Vec<u8> {
    bytes.concat()
}

/// Each kind's record of group "g" in partition 7, with its key and value
/// bytes. If one of these fails the on-disk format changed: add a new format
/// version instead of editing the expected bytes.
fn golden() -> Vec<(&'static str, ConsumerGroupRecord, Vec<u8>, Vec<u8>)> {
    let key = |t: u8, sub: &[u8]| with(&[&[0, 0, 0, 7, 3, 0, 1, b'g', 0, t], sub]);
    vec![
        (
            "group metadata",
            ConsumerGroupRecord::GroupMetadata {
                group_id: id("g"),
                value: Some(ConsumerGroupMetadataValue { epoch: 5, metadata_hash: 258 }),
            },
            key(3, b""),
            vec![
                1,  // format version
                10, // epoch 5, zigzag varint
                251, 2, 1, // metadata_hash 258: u16 marker, then LE
            ],
        ),
        (
            "member metadata",
            member(full_member()),
            key(5, b"m"),
            vec![
                1, // format version
                1, 1, b'i', // instance_id Some("i")
                0,    // rack_id None
                1, b'c', // client_id
                2, b'/', b'h', // client_host
                1, 1, b't', // subscribed_topic_names ["t"]
                0,    // subscribed_topic_regex None
                200,  // rebalance_timeout_ms 100, zigzag
                1, 1, b'u', // server_assignor Some("u")
                1,    // classic Some
                252, 0x90, 0x5f, 0x01, 0x00, // session_timeout_ms 45_000, zigzag 90_000: u32 marker, LE
                1, 5, b'r', b'a', b'n', b'g', b'e', 2, 0, 1, // one protocol: "range", bytes [0, 1]
            ],
        ),
        (
            "bare member metadata",
            member(ConsumerMemberMetadataValue::default()),
            key(5, b"m"),
            // Version, then every field None, empty or 0, classic None.
            vec![1, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        ),
        (
            "target assignment metadata",
            ConsumerGroupRecord::TargetAssignmentMetadata { group_id: id("g"), value: Some(7) },
            key(6, b""),
            vec![1, 14], // version, assignment epoch 7 zigzag
        ),
        (
            "target assignment member",
            ConsumerGroupRecord::TargetAssignmentMember {
                group_id: id("g"),
                member_id: id("m"),
                value: Some(vec![TopicIdPartitions::new(T1, [0, 2])]),
            },
            key(7, b"m"),
            // Version, one topic: its 16 id bytes, two partitions 0 and 2 zigzag.
            with(&[&[1, 1], &T1_BYTES, &[2, 0, 4]]),
        ),
        (
            "current member assignment",
            ConsumerGroupRecord::CurrentMemberAssignment {
                group_id: id("g"),
                member_id: id("m"),
                value: Some(CurrentMemberAssignmentValue {
                    member_epoch: 3,
                    previous_member_epoch: 2,
                    state: ConsumerMemberState::UnrevokedPartitions,
                    assigned: vec![TopicIdPartitions::new(T1, [0])],
                    pending_revocation: Vec::new(),
                }),
            },
            key(8, b"m"),
            // Version, epochs 3 and 2 zigzag, state byte 1, one assigned topic
            // with partition 0, nothing pending.
            with(&[&[1, 6, 4, 1, 1], &T1_BYTES, &[1, 0, 0]]),
        ),
        (
            "regular expression",
            ConsumerGroupRecord::RegularExpression {
                group_id: id("g"),
                regex: id("^t"),
                value: Some(RegularExpressionValue {
                    topics: vec!["t".into()],
                    version: 9,
                    timestamp_ms: -1,
                }),
            },
            key(16, b"^t"),
            vec![1, 1, 1, b't', 18, 1], // version, ["t"], version 9 and timestamp -1 zigzag
        ),
    ]
}

fn decode_as(record: &ConsumerGroupRecord, bytes: &[u8]) -> Result<ConsumerGroupRecord, DecodeError> {
    decode_consumer(record.record_type(), Arc::clone(record.group_id()), record.sub_key(), bytes)
}

#[test]
fn consumer_v1_keys_and_values_are_pinned() {
    for (name, record, key, value) in golden() {
        let encoded_key = keys::consumer_key(P7, record.group_id(), record.record_type(), record.sub_key());
        assert_eq!(encoded_key.unwrap(), key, "{name}: key");
        assert_eq!(encode_consumer(&record).unwrap(), Some(value.clone()), "{name}: value");
        assert_eq!(decode_as(&record, &value).unwrap(), record, "{name}: decoded");
    }
}

#[test]
fn every_kind_has_a_golden_value() {
    let mut types: Vec<i16> = golden().iter().map(|(_, r, _, _)| r.record_type()).collect();
    types.dedup();
    assert_eq!(types, [3, 5, 6, 7, 8, 16]);
}

fn big_member() -> ConsumerMemberMetadataValue {
    ConsumerMemberMetadataValue {
        instance_id: Some(String::new()),
        rack_id: Some("r\0ack".into()),
        client_id: "ünïcödé 🦀".into(),
        client_host: "\0".into(),
        subscribed_topic_names: (0..300).map(|i| format!("topic-{i}")).collect(),
        subscribed_topic_regex: Some(String::new()),
        rebalance_timeout_ms: i32::MIN,
        server_assignor: Some("range".into()),
        classic: Some(ClassicMemberMetadata {
            session_timeout_ms: i32::MAX,
            supported_protocols: vec![
                ProtocolMetadata::new("", Vec::new()),
                ProtocolMetadata::new("cooperative-sticky", (0..=255).collect::<Vec<u8>>()),
            ],
        }),
    }
}

fn assignment(state: ConsumerMemberState, assigned: usize, pending: usize) -> ConsumerGroupRecord {
    let topics = |n: usize, base: u128| {
        (0..n).map(|i| TopicIdPartitions::new(TopicId::from_u128(base + i as u128), 0..i as i32)).collect()
    };
    ConsumerGroupRecord::CurrentMemberAssignment {
        group_id: id("g\0h"),
        member_id: id("m-🦀"),
        value: Some(CurrentMemberAssignmentValue {
            member_epoch: i32::MAX,
            previous_member_epoch: -1,
            state,
            assigned: topics(assigned, 1),
            pending_revocation: topics(pending, u128::MAX - 10),
        }),
    }
}

#[rstest]
#[case::group_metadata_zero(ConsumerGroupRecord::GroupMetadata {
    group_id: id(""),
    value: Some(ConsumerGroupMetadataValue::default()),
})]
#[case::group_metadata_extremes(ConsumerGroupRecord::GroupMetadata {
    group_id: id("\0"),
    value: Some(ConsumerGroupMetadataValue { epoch: i32::MIN, metadata_hash: u64::MAX }),
})]
#[case::member_bare(member(ConsumerMemberMetadataValue::default()))]
#[case::member_full(member(big_member()))]
#[case::member_without_classic(member(ConsumerMemberMetadataValue { classic: None, ..big_member() }))]
#[case::member_with_empty_classic(member(ConsumerMemberMetadataValue {
    classic: Some(ClassicMemberMetadata::default()),
    ..ConsumerMemberMetadataValue::default()
}))]
#[case::member_options_empty_strings(member(ConsumerMemberMetadataValue {
    instance_id: Some(String::new()),
    rack_id: Some(String::new()),
    subscribed_topic_regex: Some(String::new()),
    server_assignor: Some(String::new()),
    ..ConsumerMemberMetadataValue::default()
}))]
#[case::target_assignment_metadata_min(ConsumerGroupRecord::TargetAssignmentMetadata {
    group_id: id("g"),
    value: Some(i32::MIN),
})]
#[case::target_assignment_metadata_unset(ConsumerGroupRecord::TargetAssignmentMetadata {
    group_id: id("g"),
    value: Some(-1),
})]
#[case::target_member_empty(ConsumerGroupRecord::TargetAssignmentMember {
    group_id: id("g"),
    member_id: id(""),
    value: Some(Vec::new()),
})]
#[case::target_member_topics(ConsumerGroupRecord::TargetAssignmentMember {
    group_id: id("g"),
    member_id: id("m\0"),
    value: Some(vec![
        TopicIdPartitions::new(TopicId::ZERO, []),
        TopicIdPartitions::new(TopicId::from_u128(u128::MAX), [i32::MIN, -1, 0, i32::MAX]),
        TopicIdPartitions::new(T1, 0..2000),
    ]),
})]
#[case::assignment_stable_empty(assignment(ConsumerMemberState::Stable, 0, 0))]
#[case::assignment_unrevoked(assignment(ConsumerMemberState::UnrevokedPartitions, 3, 2))]
#[case::assignment_unreleased(assignment(ConsumerMemberState::UnreleasedPartitions, 5, 0))]
#[case::assignment_unknown_state(assignment(ConsumerMemberState::Unknown, 0, 4))]
#[case::regex_empty(ConsumerGroupRecord::RegularExpression {
    group_id: id("g"),
    regex: id(""),
    value: Some(RegularExpressionValue::default()),
})]
#[case::regex_full(ConsumerGroupRecord::RegularExpression {
    group_id: id("g"),
    regex: id("^(a|b)\0.*$"),
    value: Some(RegularExpressionValue {
        topics: vec![String::new(), "a\0".into(), "b-🦀".into()],
        version: i64::MIN,
        timestamp_ms: i64::MAX,
    }),
})]
fn consumer_records_round_trip(#[case] record: ConsumerGroupRecord) {
    let bytes = encode_consumer(&record).unwrap().expect("a value, not a tombstone");
    assert_eq!(bytes[0], CONSUMER_FORMAT_V1);
    assert_eq!(decode_as(&record, &bytes).unwrap(), record);
}

#[rstest]
#[case::group_metadata(ConsumerGroupRecord::GroupMetadata { group_id: id("g"), value: None })]
#[case::member_metadata(ConsumerGroupRecord::MemberMetadata { group_id: id("g"), member_id: id("m"), value: None })]
#[case::target_assignment_metadata(ConsumerGroupRecord::TargetAssignmentMetadata { group_id: id("g"), value: None })]
#[case::target_assignment_member(ConsumerGroupRecord::TargetAssignmentMember {
    group_id: id("g"),
    member_id: id("m"),
    value: None,
})]
#[case::current_member_assignment(ConsumerGroupRecord::CurrentMemberAssignment {
    group_id: id("g"),
    member_id: id("m"),
    value: None,
})]
#[case::regular_expression(ConsumerGroupRecord::RegularExpression { group_id: id("g"), regex: id("r"), value: None })]
fn tombstones_have_no_value(#[case] record: ConsumerGroupRecord) {
    assert!(record.is_tombstone());
    assert!(encode_consumer(&record).unwrap().is_none());
}

#[test]
fn unknown_versions_are_reported() {
    for (name, record, _, value) in golden() {
        let mut bytes = value.clone();
        bytes[0] = 2;
        assert!(matches!(decode_as(&record, &bytes), Err(DecodeError::UnknownVersion(2))), "{name}");
    }
}

#[test]
fn truncated_and_padded_values_are_corrupt() {
    for (name, record, _, value) in golden() {
        for len in 0..value.len() {
            assert!(
                matches!(
                    decode_as(&record, &value[..len]),
                    Err(DecodeError::Empty | DecodeError::Bincode(_))
                ),
                "{name}: a prefix of {len} bytes decoded"
            );
        }
        let mut padded = value.clone();
        padded.push(0);
        assert!(matches!(decode_as(&record, &padded), Err(DecodeError::Trailing(1))), "{name}: padded");
    }
}

#[test]
fn keys_no_build_writes_are_corrupt() {
    let (_, record, _, value) = golden().swap_remove(0);
    let unknown = decode_consumer(4, Arc::clone(record.group_id()), "", &value);
    assert!(matches!(&unknown, Err(DecodeError::UnknownRecordType(4))), "{unknown:?}");
    // A group-level kind with a member id in its key.
    let keyed = decode_consumer(record_type::GROUP_METADATA, id("g"), "m", &value);
    assert!(matches!(&keyed, Err(DecodeError::SubKeyOnGroupRecord { record_type: 3, .. })), "{keyed:?}");
}

#[test]
fn a_huge_length_prefix_is_corrupt_not_an_allocation() {
    // Version, then a list of u64::MAX subscribed topics... after four fields.
    let bytes = [1, 0, 0, 0, 0, 253, 255, 255, 255, 255, 255, 255, 255, 255];
    let decoded = decode_consumer(record_type::MEMBER_METADATA, id("g"), "m", &bytes);
    assert!(matches!(decoded, Err(DecodeError::Bincode(_))), "{decoded:?}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_bytes_give_a_record_or_a_typed_error(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        for t in [3, 5, 6, 7, 8, 16] {
            let sub = if matches!(t, 3 | 6) { "" } else { "m" };
            match decode_consumer(t, id("g"), sub, &bytes) {
                Ok(record) => {
                    prop_assert_eq!(bytes[0], CONSUMER_FORMAT_V1);
                    prop_assert_eq!(record.record_type(), t);
                    // What decodes encodes, and decodes to the same record again.
                    let again = encode_consumer(&record).unwrap().expect("a value");
                    prop_assert_eq!(decode_consumer(t, id("g"), sub, &again).unwrap(), record);
                }
                Err(DecodeError::UnknownVersion(v)) => prop_assert!(v != 1 && v == bytes[0]),
                Err(e) => prop_assert!(!e.to_string().is_empty()),
            }
        }
    }
}
