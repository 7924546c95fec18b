//! The stored-record codec as a fuzz target: [`record`] reads any bytes as a sled key
//! and value, the way loading a partition does, and checks the round trip of whatever
//! decodes.
//!
//! Not an API: it exists for `fuzz/fuzz_targets/sled_record.rs` and for the stable test
//! that replays the kept crash inputs and seeds (`fuzzing::tests`, below), so that both run
//! exactly the same checks. A panic here is either a decoder bug (a corrupt record must
//! be a typed error) or a broken round trip.

use std::sync::Arc;

use group_offsets::CoordinatorPartition;

use crate::codec::{self, legacy};
use crate::{keys, load};

/// Splits `input` into a key and a value and decodes both; see [`split`] for the layout.
///
/// Asserts, for whatever decodes:
///
/// - a parsed offset, group or consumer-group record key re-encodes to the same bytes
///   (keys are hand-encoded and have one encoding), and so does a parsed layout v1
///   offset key;
/// - an offset, group or consumer-group record value of the shared codec, and a legacy
///   one (read as each kind), decodes to the same value after re-encoding
///   (decode ∘ encode ∘ decode = decode: varints may accept more than one encoding, so
///   the bytes need not match), and an epoch re-encodes to its bytes;
/// - the value is also decoded as the key's kind says, through the loader's functions
///   that name the key in their errors.
///
/// Panics when a property does not hold: that is the finding.
pub fn record(input: &[u8]) {
    let (key, value) = split(input);
    check_key(key, value);
    if let Ok(offset) = group_offsets::codec::decode_offset_value(value) {
        let record = group_offsets::Record::Offset {
            group_id: Arc::from("g"),
            partition: group_types::TopicPartition::new("t", 0),
            offset: offset.clone(),
        };
        let encoded = codec::encode_value(&record).expect("an offset has a value");
        assert_eq!(codec::decode_offset(&encoded).ok(), Some(offset), "offset value round trip");
    }
    if let Ok(group) = group_offsets::codec::decode_group_value("g", value) {
        let encoded = codec::encode_value(&group_offsets::Record::Group(Box::new(group.clone())))
            .expect("a group record has a value");
        assert_eq!(codec::decode_group("g", &encoded).ok(), Some(group), "group value round trip");
    }
    if let Ok(offset) = legacy::decode_offset(value) {
        let encoded = legacy::encode_offset(&offset).expect("a decoded offset encodes");
        assert_eq!(legacy::decode_offset(&encoded).ok(), Some(offset), "offset round trip");
    }
    if let Ok(group) = legacy::decode_group(value) {
        let encoded = legacy::encode_group(&group).expect("a decoded group record encodes");
        assert_eq!(legacy::decode_group(&encoded).ok(), Some(group), "group record round trip");
    }
    if let Ok(epoch) = codec::decode_epoch(value) {
        assert_eq!(codec::encode_epoch(epoch).as_slice(), value, "epoch round trip");
    }
    for record_type in MODERN_RECORD_TYPES {
        let sub = if group_offsets::record_type::is_group_level(record_type) { "" } else { "m" };
        let shared = group_offsets::codec::decode_modern_value(record_type, Arc::from("g"), sub, value);
        if let Ok(record) = shared {
            let encoded = codec::encode_value(&group_offsets::Record::Modern(record.clone()))
                .expect("a decoded consumer record is no tombstone");
            let again = group_offsets::codec::decode_modern_value(record_type, Arc::from("g"), sub, &encoded);
            assert_eq!(again.ok(), Some(record), "consumer value round trip");
        }
        if let Ok(record) = legacy::decode_consumer(record_type, Arc::from("g"), sub, value) {
            let encoded = legacy::encode_consumer(&record).expect("a decoded consumer record encodes");
            let encoded = encoded.expect("a decoded consumer record is no tombstone");
            let again = legacy::decode_consumer(record_type, Arc::from("g"), sub, &encoded);
            assert_eq!(again.ok(), Some(record), "consumer record round trip");
        }
    }
}

/// Kafka's record types of the modern kinds (`group_offsets::record_type`): the
/// consumer group's, then the share group's (which have no legacy form).
const MODERN_RECORD_TYPES: [i16; 12] = [3, 5, 6, 7, 8, 16, 10, 11, 12, 13, 14, 15];

/// The fuzz input's layout: one byte `n`, then a key of `n` bytes (fewer if the input
/// ends first), then the value, the rest.
pub fn split(input: &[u8]) -> (&[u8], &[u8]) {
    let Some((&n, rest)) = input.split_first() else { return (&[], &[]) };
    rest.split_at(usize::from(n).min(rest.len()))
}

/// The inverse of [`split`], for writing seeds: keys of at most 255 bytes.
pub fn join(key: &[u8], value: &[u8]) -> Vec<u8> {
    let n = u8::try_from(key.len()).expect("a seed key of at most 255 bytes");
    let mut out = Vec::with_capacity(1 + key.len() + value.len());
    out.push(n);
    out.extend_from_slice(key);
    out.extend_from_slice(value);
    out
}

fn check_key(key: &[u8], value: &[u8]) {
    if let Ok(offset_key) = keys::parse_offset_key(key) {
        let again = keys::offset_key(
            offset_key.coordinator,
            offset_key.group_id,
            offset_key.topic,
            offset_key.partition,
        )
        .expect("a parsed offset key re-encodes");
        assert_eq!(again, key, "offset key round trip");
        drop(offset_key.display());
        let _ = load::decode_offset(&offset_key, value).map_err(|e| e.to_string());
    }
    if let Some((prefix, rest)) = key.split_first_chunk::<4>()
        && rest.first() == Some(&keys::KIND_GROUP)
    {
        let partition = CoordinatorPartition(u32::from_be_bytes(*prefix));
        if let Ok(group_id) = keys::parse_group_key(key) {
            assert_eq!(keys::group_key(partition, group_id), key, "group key round trip");
            let _ = load::decode_group(partition, group_id, value).map_err(|e| e.to_string());
        }
    }
    if let Ok(consumer_key) = keys::parse_consumer_key(key) {
        let again = keys::consumer_key(
            consumer_key.coordinator,
            consumer_key.group_id,
            consumer_key.record_type,
            consumer_key.sub_key,
        )
        .expect("a parsed consumer key re-encodes");
        assert_eq!(again, key, "consumer key round trip");
        let group_id = Arc::from(consumer_key.group_id);
        let _ = load::decode_consumer(&consumer_key, group_id, value).map_err(|e| e.to_string());
    }
    if let Ok((group_id, topic, partition)) = keys::v1::parse_offset_key(key) {
        let again = keys::offset_key(CoordinatorPartition(0), group_id, topic, partition)
            .expect("a parsed v1 offset key re-encodes");
        assert_eq!(&again[5..], key, "v1 offset key round trip");
    }
    drop(keys::display_raw_key(keys::PARTITIONS_TREE, key));
}

// The kept inputs as files, shared with the other crates' replay tests.
#[cfg(test)]
#[path = "../../../fuzz/replay.rs"]
mod replay;

/// The kept crash inputs and the seeds, replayed on stable through the fuzz target's
/// own function; the seeds are written by [`tests::seeds_are_current`].
#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::replay::Target;
    use group_offsets::{GroupMetadataRecord, MemberMetadataRecord, ModernGroupRecord, OwnerEpoch};
    use group_types::OffsetAndMetadata;

    use super::{CoordinatorPartition, join, record, split};
    use crate::{codec, keys};

    const TARGET: &str = "sled_record";

    fn target() -> Target {
        Target::new(env!("CARGO_MANIFEST_DIR"), TARGET)
    }

    /// One consumer-group record of each kind (the records the codecs pin), with the
    /// member's optional fields all set, named `consumer-<kind>`.
    fn consumer_seeds() -> Vec<(String, ModernGroupRecord)> {
        let mut records = group_offsets::conformance::pinned_records();
        for (_, record) in &mut records {
            if let ModernGroupRecord::MemberMetadata { value: Some(member), .. } = record {
                member.rack_id = Some("r1".into());
                member.subscribed_topic_regex = Some("^t.*".into());
            }
        }
        records.into_iter().map(|(name, r)| (format!("consumer-{}", name.replace(' ', "-")), r)).collect()
    }

    /// One small share-group record of each type (KIP-932): shared-codec values
    /// only (they have no legacy form).
    fn share_seeds() -> Vec<(String, ModernGroupRecord)> {
        use group_offsets::{
            ConsumerGroupMetadataValue, ShareMemberAssignmentValue, ShareMemberMetadataValue,
            ShareStatePartitionMetadataValue, ShareTopicPartitions,
        };
        use group_types::{ConsumerMemberState, TopicId, TopicIdPartitions};
        let (g, m) = (|| Arc::<str>::from("g"), || Arc::<str>::from("m"));
        let t = TopicId::from_u128(1);
        let topic = ShareTopicPartitions { topic_id: t, topic_name: "t1".into(), partitions: vec![0, 1] };
        let records = vec![
            ModernGroupRecord::ShareMemberMetadata {
                group_id: g(),
                member_id: m(),
                value: Some(Box::new(ShareMemberMetadataValue {
                    rack_id: Some("r1".into()),
                    client_id: "c".into(),
                    client_host: "/h".into(),
                    subscribed_topic_names: vec!["t1".into()],
                })),
            },
            ModernGroupRecord::ShareGroupMetadata {
                group_id: g(),
                value: Some(ConsumerGroupMetadataValue { epoch: 3, metadata_hash: 258 }),
            },
            ModernGroupRecord::ShareTargetAssignmentMetadata {
                group_id: g(),
                value: Some(group_offsets::TargetAssignmentMetadataValue::new(3, 1_000)),
            },
            ModernGroupRecord::ShareTargetAssignmentMember {
                group_id: g(),
                member_id: m(),
                value: Some(vec![TopicIdPartitions::new(t, [0, 1])]),
            },
            ModernGroupRecord::ShareCurrentMemberAssignment {
                group_id: g(),
                member_id: m(),
                value: Some(ShareMemberAssignmentValue {
                    member_epoch: 3,
                    previous_member_epoch: 2,
                    state: ConsumerMemberState::Stable,
                    assigned: vec![TopicIdPartitions::new(t, [1])],
                }),
            },
            ModernGroupRecord::ShareStatePartitionMetadata {
                group_id: g(),
                value: Some(Box::new(ShareStatePartitionMetadataValue {
                    initializing: vec![topic.clone()],
                    initialized: vec![topic],
                    deleting: vec![(t, "t1".into())],
                })),
            },
            ModernGroupRecord::share_state(
                &group_offsets::SharePartitionKey::new("g", t, 1),
                Some(group_offsets::SharePartitionState {
                    offset: group_offsets::ShareSnapshotValue {
                        snapshot_epoch: 1,
                        state_epoch: 0,
                        leader_epoch: 2,
                        start_offset: 10,
                        delivery_complete_count: 3,
                        create_timestamp: 5,
                        write_timestamp: 6,
                        state_batches: vec![group_types::StateBatch::new(10, 19, 2, 1)],
                    },
                    max_leader_epoch: 2,
                    max_state_epoch: Some(0),
                    updates_since_snapshot: Some(1),
                }),
            ),
        ];
        records.into_iter().map(|r| (format!("share-{}", r.type_name()), r)).collect()
    }

    /// One record of each kind under its own key, and a layout v1 offset.
    fn seeds() -> Vec<(String, Vec<u8>)> {
        let p = CoordinatorPartition(7);
        let offset = OffsetAndMetadata {
            offset: 42,
            leader_epoch: Some(3),
            metadata: "meta".into(),
            commit_time: 1_700_000_000_000,
            expire_time: Some(1_700_000_600_000),
        };
        let offset_value = codec::legacy::encode_offset(&offset).expect("encodes");
        let group = GroupMetadataRecord {
            group_id: "g".into(),
            protocol_type: Some("consumer".into()),
            generation_id: 2,
            protocol_name: Some("range".into()),
            leader_id: Some("m1".into()),
            state_timestamp_ms: Some(1_700_000_000_000),
            members: vec![MemberMetadataRecord {
                member_id: "m1".into(),
                group_instance_id: Some("i1".into()),
                client_id: "c".into(),
                client_host: "/127.0.0.1".into(),
                rebalance_timeout_ms: 300_000,
                session_timeout_ms: 45_000,
                subscription: vec![0, 0, 0, 0, 0, 1, 0, 2, b't', b'1', 255, 255, 255, 255].into(),
                assignment: vec![
                    0, 0, 0, 0, 0, 1, 0, 2, b't', b'1', 0, 0, 0, 1, 0, 0, 0, 0, 255, 255, 255, 255,
                ]
                .into(),
            }],
        };
        let offset_key = keys::offset_key(p, "g", "t1", 0).expect("a key");
        let consumer = consumer_seeds().into_iter().flat_map(|(name, r)| {
            let key = keys::consumer_key(p, r.group_id(), r.record_type(), r.sub_key()).expect("a key");
            let legacy = codec::legacy::encode_consumer(&r).expect("encodes").expect("a value");
            let shared = codec::encode_value(&group_offsets::Record::Modern(r)).expect("a value");
            // The file names the format (the landed build's format-2 seeds stay, replayed).
            [(format!("{name}-v{}", shared[0]), join(&key, &shared)), (name, join(&key, &legacy))]
        });
        let share = share_seeds().into_iter().map(|(name, r)| {
            let key = keys::consumer_key(p, r.group_id(), r.record_type(), r.sub_key()).expect("a key");
            let shared = codec::encode_value(&group_offsets::Record::Modern(r)).expect("a value");
            (format!("{name}-v{}", shared[0]), join(&key, &shared))
        });
        let shared_offset = codec::encode_value(&group_offsets::Record::Offset {
            group_id: Arc::from("g"),
            partition: group_types::TopicPartition::new("t1", 0),
            offset: offset.clone(),
        })
        .expect("an offset has a value");
        let shared_group =
            codec::encode_value(&group_offsets::Record::Group(Box::new(group.clone()))).expect("a value");
        let mut seeds = vec![
            ("offset".into(), join(&offset_key, &offset_value)),
            (
                "group".into(),
                join(&keys::group_key(p, "g"), &codec::legacy::encode_group(&group).expect("encodes")),
            ),
            ("epoch".into(), join(&keys::epoch_key(p), &codec::encode_epoch(OwnerEpoch(5)))),
            ("offset-v2".into(), join(&offset_key, &shared_offset)),
            ("group-v2".into(), join(&keys::group_key(p, "g"), &shared_group)),
            ("offset-layout-v1".into(), join(&offset_key[5..], &offset_value)),
            (
                "group-empty".into(),
                join(
                    &keys::group_key(p, ""),
                    &codec::legacy::encode_group(&GroupMetadataRecord::default()).expect("encodes"),
                ),
            ),
        ];
        seeds.extend(consumer);
        seeds.extend(share);
        seeds
    }

    #[test]
    fn split_inverts_join() {
        assert_eq!(split(&join(b"key", b"value")), (&b"key"[..], &b"value"[..]));
        assert_eq!(split(&[]), (&[][..], &[][..]));
        assert_eq!(split(&[9, 1, 2]), (&[1, 2][..], &[][..]));
    }

    #[test]
    fn kept_crash_inputs_and_seeds_pass() {
        target().replay(seeds().len(), true, record);
    }

    /// The committed seeds are what [`seeds`] makes; `GROUP_FUZZ_WRITE_SEEDS=1` rewrites them.
    #[test]
    fn seeds_are_current() {
        target().check_seeds(seeds());
    }
}
