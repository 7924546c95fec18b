//! Records for the fold's and the codec's property tests: few groups, topics,
//! partitions and members, so that keys repeat and later records replace
//! earlier ones; every kind of record and tombstone.

use std::sync::Arc;

use group_types::{
    ConsumerMemberState, OffsetAndMetadata, ProtocolMetadata, TopicId, TopicIdPartitions, TopicPartition,
};
use proptest::prelude::*;

use crate::{
    AssignmentEpochs, ClassicMemberMetadata, ConsumerGroupMetadataValue, ConsumerMemberMetadataValue,
    CurrentMemberAssignmentValue, GroupMetadataRecord, MemberMetadataRecord, ModernGroupRecord, Record,
    RegularExpressionValue, TargetAssignmentMetadataValue,
};

fn group_id() -> impl Strategy<Value = Arc<str>> {
    prop_oneof![Just(""), Just("a"), Just("b"), Just("a\0b")].prop_map(Arc::from)
}

fn topic_partition() -> impl Strategy<Value = TopicPartition> {
    (
        prop_oneof![Just("t"), Just("u"), Just("")],
        prop_oneof![Just(0), Just(1), Just(-1), Just(70), any::<i32>()],
    )
        .prop_map(|(t, p)| TopicPartition::new(t, p))
}

fn offset() -> impl Strategy<Value = OffsetAndMetadata> {
    (any::<i64>(), any::<Option<i32>>(), ".{0,6}", any::<i64>(), any::<Option<i64>>()).prop_map(
        |(offset, leader_epoch, metadata, commit_time, expire_time)| OffsetAndMetadata {
            offset,
            leader_epoch,
            metadata: metadata.into(),
            commit_time,
            expire_time,
        },
    )
}

fn member() -> impl Strategy<Value = MemberMetadataRecord> {
    ("[a-c]{0,2}", any::<Option<bool>>(), any::<i32>(), proptest::collection::vec(any::<u8>(), 0..4))
        .prop_map(|(id, instance, timeout, bytes)| MemberMetadataRecord {
            member_id: id.as_str().into(),
            group_instance_id: instance.map(|i| format!("i-{i}").into()),
            client_id: format!("c-{id}"),
            client_host: "/h".to_owned(),
            rebalance_timeout_ms: timeout,
            session_timeout_ms: timeout.wrapping_neg(),
            subscription: bytes.clone().into(),
            assignment: bytes.into_iter().rev().collect::<Vec<u8>>().into(),
        })
}

fn group_record(group_id: Arc<str>) -> impl Strategy<Value = GroupMetadataRecord> {
    (any::<i32>(), any::<Option<bool>>(), any::<Option<i64>>(), proptest::collection::vec(member(), 0..3))
        .prop_map(move |(generation_id, protocol, state_timestamp_ms, members)| GroupMetadataRecord {
            group_id: group_id.to_string().into(),
            protocol_type: protocol.map(|_| "consumer".into()),
            generation_id,
            protocol_name: protocol.and_then(|p| p.then(|| "range".into())),
            leader_id: members.first().map(|m| m.member_id.clone()),
            state_timestamp_ms,
            members,
        })
}

fn topics() -> impl Strategy<Value = Vec<TopicIdPartitions>> {
    proptest::collection::vec(
        (any::<u128>(), proptest::collection::vec(any::<i32>(), 0..3))
            .prop_map(|(id, partitions)| TopicIdPartitions { topic_id: TopicId::from_u128(id), partitions }),
        0..3,
    )
}

/// A consumer-group record of any kind for `group_id`, a tombstone one time in three.
fn consumer(group_id: Arc<str>) -> impl Strategy<Value = ModernGroupRecord> {
    let sub = prop_oneof![Just("m1"), Just("m2"), Just("")].prop_map(Arc::<str>::from);
    (0..6u8, sub, 0..3u8, any::<i32>(), topics(), ".{0,4}").prop_map(
        move |(kind, sub, tomb, n, topics, text)| {
            let g = Arc::clone(&group_id);
            let live = tomb != 0;
            match kind {
                0 => ModernGroupRecord::GroupMetadata {
                    group_id: g,
                    value: live.then_some(ConsumerGroupMetadataValue { epoch: n, metadata_hash: n as u64 }),
                },
                1 => ModernGroupRecord::MemberMetadata {
                    group_id: g,
                    member_id: sub,
                    value: live.then(|| {
                        Box::new(ConsumerMemberMetadataValue {
                            instance_id: (n % 2 == 0).then(|| text.clone()),
                            rack_id: None,
                            client_id: text.clone(),
                            client_host: "/h".to_owned(),
                            subscribed_topic_names: vec![text.clone()],
                            subscribed_topic_regex: (n % 3 == 0).then(|| "^t.*".to_owned()),
                            rebalance_timeout_ms: n,
                            server_assignor: Some("uniform".to_owned()),
                            classic: (n % 2 == 1).then(|| ClassicMemberMetadata {
                                session_timeout_ms: n,
                                supported_protocols: vec![ProtocolMetadata::new(
                                    "range",
                                    text.clone().into_bytes(),
                                )],
                            }),
                        })
                    }),
                },
                2 => ModernGroupRecord::TargetAssignmentMetadata {
                    group_id: g,
                    value: live.then_some(TargetAssignmentMetadataValue::new(n, i64::from(n) * 1000)),
                },
                3 => ModernGroupRecord::TargetAssignmentMember {
                    group_id: g,
                    member_id: sub,
                    value: live.then_some(topics),
                },
                4 => ModernGroupRecord::CurrentMemberAssignment {
                    group_id: g,
                    member_id: sub,
                    value: live.then(|| CurrentMemberAssignmentValue {
                        member_epoch: n,
                        previous_member_epoch: n.wrapping_sub(1),
                        state: [
                            ConsumerMemberState::Stable,
                            ConsumerMemberState::UnrevokedPartitions,
                            ConsumerMemberState::UnreleasedPartitions,
                            ConsumerMemberState::Unknown,
                        ][n.rem_euclid(4) as usize],
                        assigned_epochs: AssignmentEpochs::from_epochs(
                            topics
                                .iter()
                                .flat_map(|t| t.partitions.iter().map(move |p| n.wrapping_sub(*p % 2))),
                        ),
                        pending_revocation_epochs: AssignmentEpochs::from_epochs(
                            topics.iter().flat_map(|t| t.partitions.iter().map(move |_| n)),
                        ),
                        assigned: topics.clone(),
                        pending_revocation: topics,
                    }),
                },
                _ => ModernGroupRecord::RegularExpression {
                    group_id: g,
                    regex: sub,
                    value: live.then(|| RegularExpressionValue {
                        topics: vec![text],
                        version: i64::from(n),
                        timestamp_ms: -i64::from(n),
                    }),
                },
            }
        },
    )
}

/// Any record, of one of a few groups.
pub(crate) fn record() -> impl Strategy<Value = Record> {
    group_id().prop_flat_map(|g| {
        prop_oneof![
            group_record(Arc::clone(&g)).prop_map(|r| Record::Group(Box::new(r))),
            Just(Record::GroupTombstone { group_id: Arc::clone(&g) }),
            (topic_partition(), offset()).prop_map({
                let g = Arc::clone(&g);
                move |(partition, offset)| Record::Offset { group_id: Arc::clone(&g), partition, offset }
            }),
            topic_partition().prop_map({
                let g = Arc::clone(&g);
                move |partition| Record::OffsetTombstone { group_id: Arc::clone(&g), partition }
            }),
            consumer(Arc::clone(&g)).prop_map(Record::Modern),
            (0..3_i64, topic_partition(), offset(), any::<u64>(), any::<bool>()).prop_map({
                let g = Arc::clone(&g);
                move |(producer_id, partition, offset, sequence, superseded)| {
                    Record::TxnOffset(Box::new(crate::TxnOffsetRecord {
                        group_id: Arc::clone(&g),
                        producer_id,
                        partition,
                        offset,
                        sequence,
                        superseded,
                    }))
                }
            }),
            (0..3_i64, topic_partition()).prop_map({
                let g = Arc::clone(&g);
                move |(producer_id, partition)| Record::TxnOffsetTombstone {
                    group_id: Arc::clone(&g),
                    producer_id,
                    partition,
                }
            }),
        ]
    })
}

/// Up to `n` records.
pub(crate) fn records(n: usize) -> impl Strategy<Value = Vec<Record>> {
    proptest::collection::vec(record(), 0..n)
}
