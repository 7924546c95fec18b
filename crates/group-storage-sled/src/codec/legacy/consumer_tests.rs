//! Tests of the legacy consumer-group record format: golden bytes of every
//! kind's key and value (read as the landed build wrote them), round trips,
//! and typed errors for bad bytes.

use group_offsets::{CoordinatorPartition, conformance};
use proptest::prelude::*;

use super::*;
use crate::keys;

const P7: CoordinatorPartition = CoordinatorPartition(7);

fn id(s: &str) -> Arc<str> {
    Arc::from(s)
}

/// Topic id 1: fifteen zero bytes, then 1.
const T1_BYTES: [u8; 16] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];

fn with(bytes: &[&[u8]]) -> Vec<u8> {
    bytes.concat()
}

/// Each kind's record of group "g" in partition 7 (the shared pinned
/// records, then a bare member), with its key and value bytes. If one of
/// these fails the on-disk format changed: add a new format version instead
/// of editing the expected bytes.
fn golden() -> Vec<(&'static str, ModernGroupRecord, Vec<u8>, Vec<u8>)> {
    let key = |t: u8, sub: &[u8]| with(&[&[0, 0, 0, 7, 3, 0, 1, b'g', 0, t], sub]);
    let keys_and_values: [(Vec<u8>, Vec<u8>); 6] = [
        (
            key(3, b""),
            vec![
                1,  // format version
                10, // epoch 5, zigzag varint
                251, 2, 1, // metadata_hash 258: u16 marker, then LE
            ],
        ),
        (
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
        (key(6, b""), vec![1, 14]), // version, assignment epoch 7 zigzag
        // Version, one topic: its 16 id bytes, two partitions 0 and 2 zigzag.
        (key(7, b"m"), with(&[&[1, 1], &T1_BYTES, &[2, 0, 4]])),
        // Version, epochs 3 and 2 zigzag, state byte 1, one assigned topic
        // with partition 0, nothing pending.
        (key(8, b"m"), with(&[&[1, 6, 4, 1, 1], &T1_BYTES, &[1, 0, 0]])),
        // Version, ["t"], version 9 and timestamp -1 zigzag.
        (key(16, b"^t"), vec![1, 1, 1, b't', 18, 1]),
    ];
    let mut golden: Vec<_> = conformance::pinned_records()
        .into_iter()
        .zip(keys_and_values)
        .map(|((name, record), (key, value))| (name, record, key, value))
        .collect();
    let bare = ModernGroupRecord::MemberMetadata {
        group_id: id("g"),
        member_id: id("m"),
        value: Some(Box::new(ConsumerMemberMetadataValue::default())),
    };
    // Version, then every field None, empty or 0, classic None.
    golden.push(("bare member metadata", bare, key(5, b"m"), vec![1, 0, 0, 0, 0, 0, 0, 0, 0, 0]));
    golden
}

/// `record` as the legacy format keeps it: without Kafka 4.3's assignment
/// epochs and timestamp, which read back as a record without them reads.
fn as_legacy(mut record: ModernGroupRecord) -> ModernGroupRecord {
    match &mut record {
        ModernGroupRecord::TargetAssignmentMetadata { value: Some(m), .. } => m.assignment_timestamp_ms = 0,
        ModernGroupRecord::CurrentMemberAssignment { value: Some(a), .. } => {
            let defaulted = |topics: &[group_types::TopicIdPartitions]| {
                if topics.iter().all(|t| t.partitions.is_empty()) {
                    group_offsets::AssignmentEpochs::default()
                } else {
                    group_offsets::AssignmentEpochs::defaulted(a.member_epoch)
                }
            };
            a.assigned_epochs = defaulted(&a.assigned);
            a.pending_revocation_epochs = defaulted(&a.pending_revocation);
        }
        _ => {}
    }
    record
}

fn decode_as(record: &ModernGroupRecord, bytes: &[u8]) -> Result<ModernGroupRecord, DecodeError> {
    decode_consumer(record.record_type(), Arc::clone(record.group_id()), record.sub_key(), bytes)
}

#[test]
fn consumer_v1_keys_and_values_are_pinned() {
    for (name, record, key, value) in golden() {
        let encoded_key = keys::consumer_key(P7, record.group_id(), record.record_type(), record.sub_key());
        assert_eq!(encoded_key.unwrap(), key, "{name}: key");
        assert_eq!(encode_consumer(&record).unwrap(), Some(value.clone()), "{name}: value");
        assert_eq!(decode_as(&record, &value).unwrap(), as_legacy(record), "{name}: decoded");
    }
}

#[test]
fn every_kind_has_a_golden_value() {
    let mut types: Vec<i16> = golden().iter().map(|(_, r, _, _)| r.record_type()).collect();
    types.sort_unstable();
    types.dedup();
    assert_eq!(types, [3, 5, 6, 7, 8, 16]);
}

/// True for the record types the legacy format had: share groups and the share
/// coordinator's state came after it.
fn has_legacy_form(record: &ModernGroupRecord) -> bool {
    !(10..=15).contains(&record.record_type())
        && record.record_type() != group_offsets::record_type::SHARE_STATE
}

#[test]
fn modern_records_round_trip() {
    for record in conformance::awkward_records().into_iter().filter(has_legacy_form) {
        let bytes = encode_consumer(&record).unwrap().expect("a value, not a tombstone");
        assert_eq!(bytes[0], CONSUMER_FORMAT_V1, "{record:?}");
        assert_eq!(decode_as(&record, &bytes).unwrap(), as_legacy(record));
    }
}

#[test]
fn tombstones_have_no_value() {
    for record in conformance::consumer_tombstones("g", "m").into_iter().filter(has_legacy_form) {
        assert!(record.is_tombstone(), "{record:?}");
        assert!(encode_consumer(&record).unwrap().is_none(), "{record:?}");
    }
}

#[test]
fn share_records_have_no_legacy_form() {
    let share: Vec<_> = conformance::awkward_records().into_iter().filter(|r| !has_legacy_form(r)).collect();
    assert!(!share.is_empty());
    for record in share {
        let t = record.record_type();
        assert!(
            matches!(encode_consumer(&record), Err(EncodeError::NoLegacyForm(n)) if n == t),
            "{record:?}"
        );
    }
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
