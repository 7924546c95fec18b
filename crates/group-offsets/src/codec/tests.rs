//! Tests of the record codec: golden bytes of each kind of record, round
//! trips of any record and batch, and arbitrary bytes as typed errors.

use proptest::prelude::*;

use super::*;
use crate::TargetAssignmentMetadataValue;
use crate::test_records::{record, records};

fn offset_record() -> Record {
    Record::Offset {
        group_id: Arc::from("g"),
        partition: TopicPartition::new("t", 0),
        offset: OffsetAndMetadata {
            offset: 5,
            leader_epoch: None,
            metadata: "m".into(),
            commit_time: 1,
            expire_time: Some(-1),
        },
    }
}

fn group_record() -> Record {
    Record::Group(Box::new(GroupMetadataRecord {
        group_id: "g".into(),
        protocol_type: Some("c".into()),
        generation_id: 3,
        protocol_name: None,
        leader_id: Some("m".into()),
        state_timestamp_ms: None,
        members: vec![MemberMetadataRecord {
            member_id: "m".into(),
            group_instance_id: None,
            client_id: "c".to_owned(),
            client_host: "h".to_owned(),
            rebalance_timeout_ms: 1,
            session_timeout_ms: -2,
            subscription: vec![7].into(),
            assignment: Vec::new().into(),
        }],
    }))
}

fn txn_offset_record() -> Record {
    let Record::Offset { offset, .. } = offset_record() else { unreachable!() };
    Record::TxnOffset(Box::new(TxnOffsetRecord {
        group_id: Arc::from("g"),
        producer_id: -2,
        partition: TopicPartition::new("t", 1),
        offset,
        sequence: 300,
        superseded: true,
    }))
}

/// If one of these fails, the format changed: add a version instead.
fn golden() -> Vec<(Record, Vec<u8>)> {
    vec![
        (
            txn_offset_record(),
            // Version, tag, group, producer -2 zigzag, topic, partition 1
            // zigzag, sequence 300 (varint), superseded, then tag 2's offset.
            vec![2, 5, 1, b'g', 3, 1, b't', 2, 0xac, 0x02, 1, 10, 0, 1, b'm', 2, 1, 1],
        ),
        (
            Record::TxnOffsetTombstone {
                group_id: Arc::from("g"),
                producer_id: 1000,
                partition: TopicPartition::new("t", 0),
            },
            vec![2, 6, 1, b'g', 0xd0, 0x0f, 1, b't', 0],
        ),
        (
            offset_record(),
            // Version, tag, group, topic, partition 0, offset 5 zigzag, no
            // epoch, metadata, commit time 1 zigzag, expire time Some(-1) zigzag.
            vec![2, 2, 1, b'g', 1, b't', 0, 10, 0, 1, b'm', 2, 1, 1],
        ),
        (
            Record::OffsetTombstone { group_id: Arc::from("g"), partition: TopicPartition::new("t", -1) },
            vec![2, 3, 1, b'g', 1, b't', 1],
        ),
        (Record::GroupTombstone { group_id: Arc::from("") }, vec![2, 1, 0]),
        (
            group_record(),
            [
                &[2, 0, 1, b'g'][..],            // version, tag, group
                &[1, 1, b'c', 6, 0, 1, 1, b'm'], // protocol type "c", generation 3, no protocol, leader "m"
                &[0, 1],                         // no state timestamp, one member
                &[1, b'm', 0, 1, b'c', 1, b'h'], // member "m", no instance, client, host
                &[2, 3, 1, 7, 0],                // timeouts 1 and -2 zigzag, subscription [7], no assignment
            ]
            .concat(),
        ),
    ]
}

#[test]
fn record_bytes_are_pinned() {
    for (record, bytes) in golden() {
        assert_eq!(encode_record(&record), bytes, "{record:?}");
        assert_eq!(decode_record(&bytes).as_ref(), Ok(&record));
    }
}

#[test]
fn value_bytes_are_the_records_fields_after_its_key() {
    let offset = encode_value(&offset_record()).unwrap();
    // Version, then what follows tag, group, topic and partition in the record.
    assert_eq!(offset, [2, 10, 0, 1, b'm', 2, 1, 1]);
    let Record::Offset { offset: expected, .. } = offset_record() else { unreachable!() };
    assert_eq!(decode_offset_value(&offset), Ok(expected));
    let group = encode_value(&group_record()).unwrap();
    assert_eq!(group[1..], encode_record(&group_record())[2..], "the record after version and tag");
    let Record::Group(expected) = group_record() else { unreachable!() };
    assert_eq!(decode_group_value("g", &group), Ok(*expected));
    assert_eq!(
        decode_group_value("h", &group),
        Err(DecodeError::OtherGroup { expected: "h".into(), found: "g".into() })
    );
    let consumer = ModernGroupRecord::TargetAssignmentMetadata {
        group_id: Arc::from("g"),
        value: Some(TargetAssignmentMetadataValue::new(7, 5)),
    };
    let value = encode_value(&Record::Modern(consumer.clone())).unwrap();
    assert_eq!(value, [FORMAT_V3, 14, 10], "format 3: a consumer-group record");
    // What the landed build wrote (format 2, no timestamp) still reads.
    let old = ModernGroupRecord::TargetAssignmentMetadata {
        group_id: Arc::from("g"),
        value: Some(TargetAssignmentMetadataValue::new(7, 0)),
    };
    assert_eq!(decode_modern_value(6, Arc::from("g"), "", &[2, 14]), Ok(old));
    assert_eq!(decode_modern_value(6, Arc::from("g"), "", &value), Ok(consumer));
    let tombstone = ModernGroupRecord::TargetAssignmentMetadata { group_id: Arc::from("g"), value: None };
    assert_eq!(encode_value(&Record::Modern(tombstone)), None);
    assert_eq!(encode_value(&Record::GroupTombstone { group_id: Arc::from("g") }), None);
    // The key decides the kind: a group-level type with a sub-key is refused.
    assert_eq!(decode_modern_value(6, Arc::from("g"), "m", &value), Err(DecodeError::SubKeyOnGroupRecord(6)));
    let txn = encode_value(&txn_offset_record()).unwrap();
    assert_eq!(txn, [2, 0xac, 0x02, 1, 10, 0, 1, b'm', 2, 1, 1], "sequence, superseded, the offset");
    let Record::TxnOffset(expected) = txn_offset_record() else { unreachable!() };
    assert_eq!(decode_txn_offset_value(Arc::from("g"), -2, TopicPartition::new("t", 1), &txn), Ok(*expected));
    let mut bad_flag = txn.clone();
    bad_flag[3] = 2;
    let key = || (Arc::from("g"), TopicPartition::new("t", 1));
    let (g, tp) = key();
    assert_eq!(decode_txn_offset_value(g, -2, tp, &bad_flag), Err(DecodeError::Flag(2)));
    let tombstone = Record::TxnOffsetTombstone {
        group_id: Arc::from("g"),
        producer_id: 1,
        partition: TopicPartition::new("t", 0),
    };
    assert_eq!(encode_value(&tombstone), None);
    assert_eq!(decode_offset_value(&[9, 0]), Err(DecodeError::UnknownVersion(9)));
    assert_eq!(decode_offset_value(&[]), Err(DecodeError::Empty));
}

#[test]
fn batch_bytes_are_pinned() {
    let records: Vec<Record> = golden().into_iter().map(|(r, _)| r).collect();
    let mut expected = vec![FORMAT_V2, records.len() as u8];
    for (_, bytes) in golden() {
        expected.extend_from_slice(&bytes[1..]);
    }
    assert_eq!(encode_records(&records), expected);
    assert_eq!(decode_records(&expected), Ok(records));
    assert_eq!(decode_records(&encode_records(&[])), Ok(Vec::new()));
}

#[test]
fn versions_are_checked() {
    let mut bytes = encode_record(&offset_record());
    assert_eq!(decode_record(&[]), Err(DecodeError::Empty));
    bytes[0] = 1;
    assert_eq!(decode_record(&bytes), Err(DecodeError::UnknownVersion(1)));
    // Format 3 differs from 2 only in consumer-group bodies: an offset reads alike.
    bytes[0] = FORMAT_V3;
    assert_eq!(decode_record(&bytes), Ok(offset_record()));
    bytes[0] = 4;
    assert_eq!(decode_record(&bytes), Err(DecodeError::UnknownVersion(4)));
    assert_eq!(decode_records(&[9, 0]), Err(DecodeError::UnknownVersion(9)));
}

#[test]
fn every_prefix_is_an_error_and_so_is_padding() {
    for (_, bytes) in golden() {
        for len in 0..bytes.len() {
            assert!(decode_record(&bytes[..len]).is_err(), "prefix {len} of {bytes:?}");
        }
        let mut padded = bytes.clone();
        padded.push(0);
        assert_eq!(decode_record(&padded), Err(DecodeError::Trailing(1)));
    }
}

#[test]
fn a_huge_count_or_length_is_an_error_not_an_allocation() {
    let huge = [255, 255, 255, 255, 255, 255, 255, 255, 255, 1];
    assert!(matches!(read_records(&huge, FORMAT_V2), Err(DecodeError::Truncated { .. })));
    let mut bytes = vec![1, RECORD_GROUP_TOMBSTONE];
    bytes.extend_from_slice(&huge);
    assert!(matches!(read_records(&bytes, FORMAT_V2), Err(DecodeError::Truncated { wanted: u64::MAX, .. })));
    assert_eq!(read_records(&[255; 11], FORMAT_V3), Err(DecodeError::Varint));
}

#[test]
fn bad_fields_are_typed() {
    // A group tombstone whose id is not UTF-8 keeps the UTF-8 error as its source.
    let error = decode_record(&[2, 1, 1, 0xff]).unwrap_err();
    assert!(matches!(error, DecodeError::NotUtf8(_)), "{error:?}");
    assert!(std::error::Error::source(&error).is_some());
    assert_eq!(decode_record(&[2, 9]), Err(DecodeError::UnknownKind(9)));
    // An offset record whose leader-epoch flag is 2.
    assert_eq!(decode_record(&[2, 2, 1, b'g', 1, b't', 0, 10, 2]), Err(DecodeError::Flag(2)));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn every_record_round_trips(record in record()) {
        let bytes = encode_record(&record);
        prop_assert_eq!(bytes[0], if matches!(record, Record::Modern(_)) { FORMAT_V3 } else { FORMAT_V2 });
        prop_assert_eq!(decode_record(&bytes), Ok(record));
    }

    #[test]
    fn every_value_round_trips_under_its_key(record in record()) {
        let Some(value) = encode_value(&record) else {
            let tombstone = match &record {
                Record::Modern(c) => c.is_tombstone(),
                other => matches!(
                    other,
                    Record::GroupTombstone { .. }
                        | Record::OffsetTombstone { .. }
                        | Record::TxnOffsetTombstone { .. }
                ),
            };
            prop_assert!(tombstone, "only tombstones have no value");
            return Ok(());
        };
        prop_assert_eq!(value[0], format_of([&record]));
        match record {
            Record::Offset { offset, .. } => prop_assert_eq!(decode_offset_value(&value), Ok(offset)),
            Record::Group(g) => prop_assert_eq!(decode_group_value(g.group_id.as_str(), &value), Ok(*g)),
            Record::Modern(c) => {
                let decoded = decode_modern_value(c.record_type(), Arc::clone(c.group_id()), c.sub_key(), &value);
                prop_assert_eq!(decoded, Ok(c));
            }
            Record::TxnOffset(t) => {
                let decoded =
                    decode_txn_offset_value(Arc::clone(&t.group_id), t.producer_id, t.partition.clone(), &value);
                prop_assert_eq!(decoded, Ok(*t));
            }
            other => prop_assert!(false, "{other:?} has a value"),
        }
    }

    #[test]
    fn arbitrary_bytes_are_a_value_or_an_error(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        let _ = decode_offset_value(&bytes);
        let _ = decode_group_value("g", &bytes);
        let _ = decode_txn_offset_value(Arc::from("g"), 1, TopicPartition::new("t", 0), &bytes);
        for t in [3, 5, 6, 7, 8, 16] {
            let sub = if matches!(t, 3 | 6) { "" } else { "m" };
            if let Ok(record) = decode_modern_value(t, Arc::from("g"), sub, &bytes) {
                prop_assert_eq!(record.record_type(), t);
            }
        }
    }

    #[test]
    fn every_batch_round_trips(records in records(20)) {
        prop_assert_eq!(decode_records(&encode_records(&records)), Ok(records));
    }

    #[test]
    fn arbitrary_bytes_decode_or_fail_without_panicking(bytes in proptest::collection::vec(any::<u8>(), 0..96)) {
        // What decodes is a record like any other (varints have several
        // encodings, so the bytes need not be the same).
        if let Ok(record) = decode_record(&bytes) {
            prop_assert_eq!(decode_record(&encode_record(&record)), Ok(record));
        }
        for format in [FORMAT_V2, FORMAT_V3] {
            if let Ok(records) = read_records(&bytes, format) {
                let mut again = Vec::new();
                write_records(&mut again, &records);
                prop_assert_eq!(read_records(&again, format_of(&records)), Ok(records));
            }
        }
    }

    #[test]
    fn corrupted_records_fail_without_panicking(record in record(), at in any::<prop::sample::Index>(), byte in any::<u8>()) {
        let mut bytes = encode_record(&record);
        let i = at.index(bytes.len());
        bytes[i] = byte;
        let _ = decode_record(&bytes);
    }
}
