//! Tests of consumer-group records in batch bodies: golden bytes of every
//! kind, round trips (tombstones, unset and empty fields, awkward names), and
//! bad bytes as typed errors that name the record's key.

use rstest::rstest;

use super::super::{read_records as decode_records, write_records};
use super::*;
use crate::Record;

/// A batch body, as `group-storage-etcd` frames it.
fn encode_records(records: &[Record]) -> Result<Vec<u8>, DecodeError> {
    let mut out = Vec::new();
    write_records(&mut out, records);
    Ok(out)
}

fn id(s: &str) -> Arc<str> {
    Arc::from(s)
}

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

fn member(group: &str, member: &str, value: Option<ConsumerMemberMetadataValue>) -> ConsumerGroupRecord {
    ConsumerGroupRecord::MemberMetadata {
        group_id: id(group),
        member_id: id(member),
        value: value.map(Box::new),
    }
}

fn one(record: ConsumerGroupRecord) -> Vec<Record> {
    vec![Record::Consumer(record)]
}

/// One record of each kind of group "g", as a batch of one, and its bytes.
/// If one of these fails the format changed: add a format version instead.
fn golden() -> Vec<(&'static str, ConsumerGroupRecord, Vec<u8>)> {
    vec![
        (
            "group metadata",
            ConsumerGroupRecord::GroupMetadata {
                group_id: id("g"),
                value: Some(ConsumerGroupMetadataValue { epoch: 5, metadata_hash: 258 }),
            },
            // Count 1, tag 4, type 3 zigzag, group "g", sub-key "", present,
            // epoch 5 zigzag, hash 258 as a uvarint.
            vec![1, 4, 6, 1, b'g', 0, 1, 10, 0x82, 0x02],
        ),
        (
            "member metadata",
            member("g", "m", Some(full_member())),
            [
                &[1, 4, 10, 1, b'g', 1, b'm', 1][..], // count, tag, type 5, group, member, present
                &[1, 1, b'i', 0, 1, b'c', 2, b'/', b'h'], // instance Some("i"), rack None, client, host
                &[1, 1, b't', 0],                     // topics ["t"], regex None
                &[0xc8, 0x01],                        // rebalance timeout 100, zigzag 200
                &[1, 1, b'u'],                        // assignor Some("u")
                &[1, 0x90, 0xbf, 0x05],               // classic Some, session 45_000 zigzag 90_000
                &[1, 5, b'r', b'a', b'n', b'g', b'e', 2, 0, 1], // one protocol "range", [0, 1]
            ]
            .concat(),
        ),
        ("member metadata tombstone", member("g", "m", None), vec![1, 4, 10, 1, b'g', 1, b'm', 0]),
        (
            "target assignment metadata",
            ConsumerGroupRecord::TargetAssignmentMetadata { group_id: id("g"), value: Some(7) },
            vec![1, 4, 12, 1, b'g', 0, 1, 14],
        ),
        (
            "target assignment member",
            ConsumerGroupRecord::TargetAssignmentMember {
                group_id: id("g"),
                member_id: id("m"),
                value: Some(vec![TopicIdPartitions::new(T1, [0, 2])]),
            },
            // One topic: 16 id bytes, partitions 0 and 2 zigzag.
            [&[1, 4, 14, 1, b'g', 1, b'm', 1, 1][..], &T1_BYTES, &[2, 0, 4]].concat(),
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
            // Epochs 3 and 2 zigzag, state 1, one assigned topic with partition 0, none pending.
            [&[1, 4, 16, 1, b'g', 1, b'm', 1, 6, 4, 1, 1][..], &T1_BYTES, &[1, 0, 0]].concat(),
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
            vec![1, 4, 32, 1, b'g', 2, b'^', b't', 1, 1, 1, b't', 18, 1],
        ),
    ]
}

#[test]
fn consumer_record_bytes_are_pinned() {
    for (name, record, bytes) in golden() {
        assert_eq!(encode_records(&one(record.clone())).unwrap(), bytes, "{name}");
        assert_eq!(decode_records(&bytes).unwrap(), one(record), "{name}");
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
            member_epoch: i32::MIN,
            previous_member_epoch: i32::MAX,
            state,
            assigned: topics(assigned, 1),
            pending_revocation: topics(pending, u128::MAX - 10),
        }),
    }
}

#[rstest]
#[case::group_metadata(ConsumerGroupRecord::GroupMetadata {
    group_id: id(""),
    value: Some(ConsumerGroupMetadataValue { epoch: i32::MIN, metadata_hash: u64::MAX }),
})]
#[case::group_metadata_tombstone(ConsumerGroupRecord::GroupMetadata { group_id: id("g"), value: None })]
#[case::member_bare(member("g", "", Some(ConsumerMemberMetadataValue::default())))]
#[case::member_full(member("g\0", "m\0", Some(ConsumerMemberMetadataValue {
    instance_id: Some(String::new()),
    rack_id: Some("r\0".into()),
    subscribed_topic_names: vec![String::new(), "ünïcödé 🦀".into()],
    subscribed_topic_regex: Some(String::new()),
    rebalance_timeout_ms: i32::MIN,
    ..full_member()
})))]
#[case::member_without_classic(member("g", "m", Some(ConsumerMemberMetadataValue { classic: None, ..full_member() })))]
#[case::member_with_empty_classic(member("g", "m", Some(ConsumerMemberMetadataValue {
    classic: Some(ClassicMemberMetadata::default()),
    ..ConsumerMemberMetadataValue::default()
})))]
#[case::member_tombstone(member("g", "m", None))]
#[case::target_assignment_metadata(ConsumerGroupRecord::TargetAssignmentMetadata { group_id: id("g"), value: Some(-1) })]
#[case::target_assignment_metadata_tombstone(ConsumerGroupRecord::TargetAssignmentMetadata {
    group_id: id("g"),
    value: None,
})]
#[case::target_member_empty(ConsumerGroupRecord::TargetAssignmentMember {
    group_id: id("g"),
    member_id: id("m"),
    value: Some(Vec::new()),
})]
#[case::target_member_topics(ConsumerGroupRecord::TargetAssignmentMember {
    group_id: id("g"),
    member_id: id("m"),
    value: Some(vec![
        TopicIdPartitions::new(TopicId::ZERO, []),
        TopicIdPartitions::new(TopicId::from_u128(u128::MAX), [i32::MIN, -1, 0, i32::MAX]),
    ]),
})]
#[case::target_member_tombstone(ConsumerGroupRecord::TargetAssignmentMember {
    group_id: id("g"),
    member_id: id("m"),
    value: None,
})]
#[case::assignment_stable_empty(assignment(ConsumerMemberState::Stable, 0, 0))]
#[case::assignment_unrevoked(assignment(ConsumerMemberState::UnrevokedPartitions, 3, 2))]
#[case::assignment_unreleased(assignment(ConsumerMemberState::UnreleasedPartitions, 4, 0))]
#[case::assignment_unknown_state(assignment(ConsumerMemberState::Unknown, 0, 3))]
#[case::assignment_tombstone(ConsumerGroupRecord::CurrentMemberAssignment {
    group_id: id("g"),
    member_id: id("m"),
    value: None,
})]
#[case::regex_empty(ConsumerGroupRecord::RegularExpression {
    group_id: id("g"),
    regex: id(""),
    value: Some(RegularExpressionValue::default()),
})]
#[case::regex_full(ConsumerGroupRecord::RegularExpression {
    group_id: id("g"),
    regex: id("^(a|b)\0.*$"),
    value: Some(RegularExpressionValue {
        topics: vec![String::new(), "a\0".into()],
        version: i64::MIN,
        timestamp_ms: i64::MAX,
    }),
})]
#[case::regex_tombstone(ConsumerGroupRecord::RegularExpression { group_id: id("g"), regex: id("r"), value: None })]
fn consumer_records_round_trip(#[case] record: ConsumerGroupRecord) {
    let bytes = encode_records(&one(record.clone())).unwrap();
    assert_eq!(decode_records(&bytes).unwrap(), one(record));
}

/// Every golden record, with offsets and classic records of the same group
/// between them, in one batch.
fn mixed_batch() -> Vec<Record> {
    let mut records = Vec::new();
    for (i, (_, record, _)) in golden().into_iter().enumerate() {
        records.push(Record::Consumer(record));
        records.push(Record::OffsetTombstone {
            group_id: id("g"),
            partition: group_types::TopicPartition::new("t", i as i32),
        });
    }
    records.push(Record::GroupTombstone { group_id: id("g") });
    records
}

#[test]
fn a_batch_mixing_every_record_kind_round_trips() {
    let batch = mixed_batch();
    assert_eq!(decode_records(&encode_records(&batch).unwrap()).unwrap(), batch);
}

#[test]
fn every_prefix_of_a_consumer_batch_is_corrupt() {
    let bytes = encode_records(&mixed_batch()).unwrap();
    for len in 0..bytes.len() {
        assert!(decode_records(&bytes[..len]).is_err(), "prefix {len}");
    }
}

#[test]
fn bad_values_name_the_record_key() {
    for (name, record, bytes) in golden() {
        if record.is_tombstone() {
            continue;
        }
        // Cut where the value starts (after count, tag, type, group "g", sub-key, flag).
        let header = 5 + 1 + record.sub_key().len() + 1;
        let error = decode_records(&bytes[..header]).unwrap_err();
        let key = format!("type {}, group \"g\", sub-key {:?}", record.record_type(), record.sub_key());
        assert!(matches!(&error, DecodeError::InConsumerRecord { .. }), "{name}: {error:?}");
        assert!(error.to_string().contains(&key), "{name}: {error}");
    }
    // A bad option flag inside member metadata.
    let mut bytes = golden()[1].2.clone();
    bytes[8] = 7;
    let error = decode_records(&bytes).unwrap_err();
    match &error {
        DecodeError::InConsumerRecord { sub_key, source, .. } => {
            assert_eq!((sub_key.as_str(), &**source), ("m", &DecodeError::Flag(7)));
        }
        other => panic!("{other:?}"),
    }
    assert!(std::error::Error::source(&error).is_some(), "the cause is kept");
}

#[test]
fn keys_no_build_writes_are_corrupt() {
    // Record type 4 (the legacy partition metadata, never stored here).
    let error = decode_records(&[1, 4, 8, 1, b'g', 0, 0]).unwrap_err();
    assert_eq!(error, DecodeError::UnknownRecordType(4));
    // A group-level type with a sub-key.
    let error = decode_records(&[1, 4, 6, 1, b'g', 1, b'm', 0]).unwrap_err();
    assert_eq!(error, DecodeError::SubKeyOnGroupRecord(3));
    // A record type over i16.
    let error = decode_records(&[1, 4, 0x80, 0x80, 0x04, 0, 0, 0]).unwrap_err();
    assert!(matches!(error, DecodeError::OutOfRange { value: 32768, .. }), "{error:?}");
}

#[test]
fn huge_counts_are_corrupt_not_allocations() {
    let huge = [255, 255, 255, 255, 255, 255, 255, 255, 255, 1];
    // A target assignment of u64::MAX topics, then one of u64::MAX partitions.
    let topics = [&[1, 4, 14, 1, b'g', 1, b'm', 1][..], &huge].concat();
    assert!(decode_records(&topics).is_err());
    let partitions = [&[1, 4, 14, 1, b'g', 1, b'm', 1, 1][..], &T1_BYTES, &huge].concat();
    assert!(decode_records(&partitions).is_err());
    let regex_topics = [&[1, 4, 32, 1, b'g', 1, b'r', 1][..], &huge].concat();
    assert!(decode_records(&regex_topics).is_err());
}
