//! Tests of consumer-group records in batch bodies: golden bytes of every
//! kind, round trips (tombstones, unset and empty fields, awkward names), and
//! bad bytes as typed errors that name the record's key.

use super::super::{FORMAT_V2, read_records, write_records};
use super::*;
use crate::{Record, conformance};
use group_share_coordinator::{SharePartitionState, ShareSnapshotValue};
use group_types::StateBatch;

/// A batch body, as `group-storage-etcd` frames it.
fn encode_records(records: &[Record]) -> Result<Vec<u8>, DecodeError> {
    let mut out = Vec::new();
    write_records(&mut out, records);
    Ok(out)
}

/// A batch body in format 3, which every batch holding a consumer-group record is.
fn decode_records(bytes: &[u8]) -> Result<Vec<Record>, DecodeError> {
    read_records(bytes, FORMAT_V3)
}

fn id(s: &str) -> Arc<str> {
    Arc::from(s)
}

const T1_BYTES: [u8; 16] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];

fn one(record: ModernGroupRecord) -> Vec<Record> {
    vec![Record::Modern(record)]
}

/// One record of each kind of group "g" (the shared pinned records, then a
/// tombstone), as a batch of one, and its bytes. If one of these fails the
/// format changed: add a format version instead.
fn golden() -> Vec<(&'static str, ModernGroupRecord, Vec<u8>)> {
    let bytes: [Vec<u8>; 6] = [
        // Group metadata: count 1, tag 4, type 3 zigzag, group "g", sub-key
        // "", present, epoch 5 zigzag, hash 258 as a uvarint.
        vec![1, 4, 6, 1, b'g', 0, 1, 10, 0x82, 0x02],
        // Member metadata.
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
        // Target assignment metadata: epoch 7 and timestamp 5 zigzag.
        vec![1, 4, 12, 1, b'g', 0, 1, 14, 10],
        // Target assignment member: one topic, 16 id bytes, partitions 0 and 2 zigzag.
        [&[1, 4, 14, 1, b'g', 1, b'm', 1, 1][..], &T1_BYTES, &[2, 0, 4]].concat(),
        // Current member assignment: epochs 3 and 2 zigzag, state 1, one
        // assigned topic with partition 0, none pending; one run of one
        // partition at epoch 2 zigzag, no pending runs.
        [&[1, 4, 16, 1, b'g', 1, b'm', 1, 6, 4, 1, 1][..], &T1_BYTES, &[1, 0, 0, 1, 1, 4, 0]].concat(),
        // Regular expression "^t": topics ["t"], version 9 and timestamp -1 zigzag.
        vec![1, 4, 32, 1, b'g', 2, b'^', b't', 1, 1, 1, b't', 18, 1],
    ];
    let mut golden: Vec<_> = conformance::pinned_records()
        .into_iter()
        .zip(bytes)
        .map(|((name, r), bytes)| (name, r, bytes))
        .collect();
    let tombstone = ModernGroupRecord::MemberMetadata { group_id: id("g"), member_id: id("m"), value: None };
    golden.push(("member metadata tombstone", tombstone, vec![1, 4, 10, 1, b'g', 1, b'm', 0]));
    golden.extend(share_golden());
    golden
}

/// One share-group record of each kind (KIP-932's types 10 to 15) and its bytes.
fn share_golden() -> Vec<(&'static str, ModernGroupRecord, Vec<u8>)> {
    let t1 = TopicId(T1_BYTES);
    vec![
        (
            "share member metadata",
            ModernGroupRecord::ShareMemberMetadata {
                group_id: id("g"),
                member_id: id("m"),
                value: Some(Box::new(ShareMemberMetadataValue {
                    rack_id: None,
                    client_id: "c".into(),
                    client_host: "/h".into(),
                    subscribed_topic_names: vec!["t".into()],
                })),
            },
            // Type 10 zigzag, rack None, client, host, topics ["t"].
            vec![1, 4, 20, 1, b'g', 1, b'm', 1, 0, 1, b'c', 2, b'/', b'h', 1, 1, b't'],
        ),
        (
            "share group metadata",
            ModernGroupRecord::ShareGroupMetadata {
                group_id: id("g"),
                value: Some(ConsumerGroupMetadataValue { epoch: 5, metadata_hash: 258 }),
            },
            vec![1, 4, 22, 1, b'g', 0, 1, 10, 0x82, 0x02],
        ),
        (
            "share target assignment metadata",
            ModernGroupRecord::ShareTargetAssignmentMetadata {
                group_id: id("g"),
                value: Some(TargetAssignmentMetadataValue::new(7, 5)),
            },
            vec![1, 4, 24, 1, b'g', 0, 1, 14, 10],
        ),
        (
            "share target assignment member",
            ModernGroupRecord::ShareTargetAssignmentMember {
                group_id: id("g"),
                member_id: id("m"),
                value: Some(vec![TopicIdPartitions::new(t1, [0, 2])]),
            },
            [&[1, 4, 26, 1, b'g', 1, b'm', 1, 1][..], &T1_BYTES, &[2, 0, 4]].concat(),
        ),
        (
            "share current member assignment",
            ModernGroupRecord::ShareCurrentMemberAssignment {
                group_id: id("g"),
                member_id: id("m"),
                value: Some(ShareMemberAssignmentValue {
                    member_epoch: 3,
                    previous_member_epoch: 2,
                    state: ConsumerMemberState::Stable,
                    assigned: vec![TopicIdPartitions::new(t1, [0])],
                }),
            },
            // Epochs 3 and 2 zigzag, state 0, one topic with partition 0.
            [&[1, 4, 28, 1, b'g', 1, b'm', 1, 6, 4, 0, 1][..], &T1_BYTES, &[1, 0]].concat(),
        ),
        (
            "share state partition metadata",
            ModernGroupRecord::ShareStatePartitionMetadata {
                group_id: id("g"),
                value: Some(Box::new(ShareStatePartitionMetadataValue {
                    initializing: vec![ShareTopicPartitions {
                        topic_id: t1,
                        topic_name: "t".into(),
                        partitions: vec![1],
                    }],
                    initialized: Vec::new(),
                    deleting: vec![(t1, "t".into())],
                })),
            },
            // One initializing topic (id, name "t", partition 1), none
            // initialized, one deleting (id, name "t").
            [&[1, 4, 30, 1, b'g', 0, 1, 1][..], &T1_BYTES, &[1, b't', 1, 2, 0, 1], &T1_BYTES, &[1, b't']]
                .concat(),
        ),
        share_state_golden(),
    ]
}

/// The share coordinator's state of one share partition (type 1000) and its bytes.
fn share_state_golden() -> (&'static str, ModernGroupRecord, Vec<u8>) {
    let key = group_share_coordinator::SharePartitionKey::new("g", TopicId(T1_BYTES), 2);
    let state = SharePartitionState {
        offset: ShareSnapshotValue {
            snapshot_epoch: 1,
            state_epoch: 0,
            leader_epoch: 2,
            start_offset: 10,
            delivery_complete_count: 3,
            create_timestamp: 5,
            write_timestamp: 6,
            state_batches: vec![StateBatch::new(10, 19, 2, 1)],
        },
        max_leader_epoch: 2,
        max_state_epoch: Some(0),
        updates_since_snapshot: None,
    };
    let sub = format!("{}:2", TopicId(T1_BYTES));
    // Type 1000 zigzags to 2000 (varint d0 0f); the sub-key is the topic id's
    // base64 and the partition. Then every number zigzagged: epochs 1, 0, 2,
    // start offset 10, count 3, timestamps 5 and 6, one batch (10, 19, state 2,
    // count 1), max leader epoch 2, a max state epoch of 0, no update count.
    let bytes = [
        &[1, 4, 0xd0, 0x0f, 1, b'g', sub.len() as u8][..],
        sub.as_bytes(),
        &[1, 2, 0, 4, 20, 6, 10, 12, 1, 20, 38, 2, 2, 4, 1, 0, 0],
    ]
    .concat();
    ("share state", ModernGroupRecord::share_state(&key, Some(state)), bytes)
}

#[test]
fn consumer_record_bytes_are_pinned() {
    for (name, record, bytes) in golden() {
        assert_eq!(encode_records(&one(record.clone())).unwrap(), bytes, "{name}");
        assert_eq!(decode_records(&bytes).unwrap(), one(record), "{name}");
    }
}

/// Format 2 (before Kafka 4.3's fields): what the landed build wrote.
#[test]
fn format_2_bodies_read_as_kafka_reads_records_without_the_tagged_fields() {
    let t1 = TopicId(T1_BYTES);
    // Target assignment metadata, epoch 7: timestamp 0 ("unknown": the next
    // assignment is not delayed).
    let bytes = [1, 4, 12, 1, b'g', 0, 1, 14];
    let expected = ModernGroupRecord::TargetAssignmentMetadata {
        group_id: id("g"),
        value: Some(TargetAssignmentMetadataValue::new(7, 0)),
    };
    assert_eq!(read_records(&bytes, FORMAT_V2), Ok(one(expected)));
    // The same bytes in format 3 lack the timestamp.
    assert!(read_records(&bytes, FORMAT_V3).is_err());
    // Current member assignment at epoch 3 with one partition assigned and
    // two pending: all at the member epoch.
    let bytes =
        [&[1, 4, 16, 1, b'g', 1, b'm', 1, 6, 4, 1, 1][..], &T1_BYTES, &[1, 0, 1], &T1_BYTES, &[2, 2, 4]]
            .concat();
    let expected = CurrentMemberAssignmentValue {
        member_epoch: 3,
        previous_member_epoch: 2,
        state: ConsumerMemberState::UnrevokedPartitions,
        assigned: vec![TopicIdPartitions::new(t1, [0])],
        pending_revocation: vec![TopicIdPartitions::new(t1, [1, 2])],
        assigned_epochs: AssignmentEpochs::Same(3),
        pending_revocation_epochs: AssignmentEpochs::Same(3),
    };
    let record = ModernGroupRecord::CurrentMemberAssignment {
        group_id: id("g"),
        member_id: id("m"),
        value: Some(expected),
    };
    assert_eq!(read_records(&bytes, FORMAT_V2), Ok(one(record)));
    // A static member that left (epoch -2): epoch 0, never below.
    let bytes = [&[1, 4, 16, 1, b'g', 1, b'm', 1, 3, 4, 0, 1][..], &T1_BYTES, &[1, 0, 0]].concat();
    let Ok(records) = read_records(&bytes, FORMAT_V2) else { panic!("format 2 reads") };
    let [Record::Modern(ModernGroupRecord::CurrentMemberAssignment { value: Some(v), .. })] = &records[..]
    else {
        panic!("{records:?}")
    };
    assert_eq!((v.member_epoch, &v.assigned_epochs), (-2, &AssignmentEpochs::Same(0)));
}

#[test]
fn epoch_runs_must_cover_their_partitions() {
    // One assigned partition, but runs covering two, then zero.
    for (runs, covered) in [(&[1u8, 2, 4][..], 2), (&[0][..], 0)] {
        let bytes =
            [&[1, 4, 16, 1, b'g', 1, b'm', 1, 6, 4, 1, 1][..], &T1_BYTES, &[1, 0, 0], runs, &[0]].concat();
        let error = decode_records(&bytes).unwrap_err();
        let DecodeError::InModernRecord { source, .. } = &error else { panic!("{error:?}") };
        assert_eq!(**source, DecodeError::EpochsMismatch { partitions: 1, epochs: covered });
    }
}

#[test]
fn modern_records_round_trip() {
    let mut records = conformance::awkward_records();
    records.extend(conformance::consumer_tombstones("g\0", "m\0"));
    for record in records {
        let bytes = encode_records(&one(record.clone())).unwrap();
        assert_eq!(decode_records(&bytes).unwrap(), one(record.clone()), "{record:?}");
    }
}

/// Every golden record, with offsets and classic records of the same group
/// between them, in one batch.
fn mixed_batch() -> Vec<Record> {
    let mut records = Vec::new();
    for (i, (_, record, _)) in golden().into_iter().enumerate() {
        records.push(Record::Modern(record));
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
        // The type is one varint byte below 64 (zigzag below 128), else two.
        let type_len = if record.record_type() < 64 { 1 } else { 2 };
        let header = 4 + type_len + 1 + record.sub_key().len() + 1;
        let error = decode_records(&bytes[..header]).unwrap_err();
        let key = format!("type {}, group \"g\", sub-key {:?}", record.record_type(), record.sub_key());
        assert!(matches!(&error, DecodeError::InModernRecord { .. }), "{name}: {error:?}");
        assert!(error.to_string().contains(&key), "{name}: {error}");
    }
    // A bad option flag inside member metadata.
    let mut bytes = golden()[1].2.clone();
    bytes[8] = 7;
    let error = decode_records(&bytes).unwrap_err();
    match &error {
        DecodeError::InModernRecord { sub_key, source, .. } => {
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
