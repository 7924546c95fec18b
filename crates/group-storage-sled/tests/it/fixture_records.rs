//! The appends the fixture store under `tests/fixtures/store-v3` was written
//! with (by `examples/write_fixture.rs`), shared by that writer and the test
//! that loads the fixture.

use std::sync::Arc;

use group_offsets::{
    AssignmentEpochs, ClassicMemberMetadata, ConsumerGroupMetadataValue, ConsumerMemberMetadataValue,
    CurrentMemberAssignmentValue, GroupMetadataRecord, MemberMetadataRecord, ModernGroupRecord, Record,
    RegularExpressionValue, StoredGroups, TargetAssignmentMetadataValue,
};
use group_types::{
    ConsumerMemberState, OffsetAndMetadata, ProtocolMetadata, TopicId, TopicIdPartitions, TopicPartition,
};

/// The fixture store's partition count.
pub(crate) const FIXTURE_PARTITIONS: u32 = 4;

fn offset(group: &str, topic: &str, partition: i32, n: i64) -> Record {
    Record::Offset {
        group_id: Arc::from(group),
        partition: TopicPartition::new(topic, partition),
        offset: OffsetAndMetadata {
            offset: n,
            leader_epoch: (n % 3 != 0).then_some(n as i32 % 7),
            metadata: format!("meta-{n}-é").into(),
            commit_time: 1_700_000_000_000 + n,
            expire_time: (n % 2 == 0).then_some(1_800_000_000_000 + n),
        },
    }
}

fn uncommit(group: &str, topic: &str, partition: i32) -> Record {
    Record::OffsetTombstone { group_id: Arc::from(group), partition: TopicPartition::new(topic, partition) }
}

fn group(group_id: &str, generation_id: i32, members: usize) -> Record {
    Record::Group(Box::new(GroupMetadataRecord {
        group_id: group_id.into(),
        protocol_type: Some("consumer".into()),
        generation_id,
        protocol_name: (members > 0).then(|| "range".into()),
        leader_id: (members > 0).then(|| "m-0".into()),
        state_timestamp_ms: Some(1_700_000_000_000 + i64::from(generation_id)),
        members: (0..members)
            .map(|m| MemberMetadataRecord {
                member_id: format!("m-{m}").into(),
                group_instance_id: (m % 2 == 1).then(|| format!("instance-{m}").into()),
                client_id: format!("client-{m}"),
                client_host: "/10.0.0.1".to_owned(),
                rebalance_timeout_ms: 300_000,
                session_timeout_ms: 45_000 + m as i32,
                subscription: vec![0, 3, m as u8].into(),
                assignment: vec![m as u8; m].into(),
            })
            .collect(),
    }))
}

fn topics(n: i32) -> Vec<TopicIdPartitions> {
    vec![
        TopicIdPartitions::new(TopicId::from_u128(0xabcd_0000 + n as u128), [0, n]),
        TopicIdPartitions::new(TopicId::from_u128(u128::MAX - n as u128), [2]),
    ]
}

fn consumer(group_id: &str, member: &str, n: i32) -> Vec<Record> {
    let g: Arc<str> = Arc::from(group_id);
    let m: Arc<str> = Arc::from(member);
    [
        ModernGroupRecord::GroupMetadata {
            group_id: g.clone(),
            value: Some(ConsumerGroupMetadataValue { epoch: n, metadata_hash: 0xfeed_0000 + n as u64 }),
        },
        ModernGroupRecord::MemberMetadata {
            group_id: g.clone(),
            member_id: m.clone(),
            value: Some(Box::new(ConsumerMemberMetadataValue {
                instance_id: (n % 2 == 0).then(|| format!("instance-{member}")),
                rack_id: Some("rack-a".to_owned()),
                client_id: format!("client-{member}"),
                client_host: "/10.0.0.2".to_owned(),
                subscribed_topic_names: vec!["orders".to_owned(), "payments".to_owned()],
                subscribed_topic_regex: (n % 2 == 1).then(|| "^orders-.*".to_owned()),
                rebalance_timeout_ms: 60_000 + n,
                server_assignor: Some("uniform".to_owned()),
                classic: (n % 2 == 0).then(|| ClassicMemberMetadata {
                    session_timeout_ms: 45_000,
                    supported_protocols: vec![ProtocolMetadata::new("range", vec![0, 3, n as u8])],
                }),
            })),
        },
        // The landed build wrote no assignment timestamp: it reads as 0.
        ModernGroupRecord::TargetAssignmentMetadata {
            group_id: g.clone(),
            value: Some(TargetAssignmentMetadataValue::new(n, 0)),
        },
        ModernGroupRecord::TargetAssignmentMember {
            group_id: g.clone(),
            member_id: m.clone(),
            value: Some(topics(n)),
        },
        ModernGroupRecord::CurrentMemberAssignment {
            group_id: g.clone(),
            member_id: m,
            value: Some(CurrentMemberAssignmentValue {
                member_epoch: n,
                previous_member_epoch: n - 1,
                state: if n % 2 == 0 {
                    ConsumerMemberState::Stable
                } else {
                    ConsumerMemberState::UnrevokedPartitions
                },
                assigned: topics(n),
                pending_revocation: topics(n + 1)[..1].to_vec(),
                // Nor assignment epochs: every partition reads as assigned at
                // the member epoch.
                assigned_epochs: AssignmentEpochs::defaulted(n),
                pending_revocation_epochs: AssignmentEpochs::defaulted(n),
            }),
        },
        ModernGroupRecord::RegularExpression {
            group_id: g,
            regex: Arc::from("^orders-.*"),
            value: Some(RegularExpressionValue {
                topics: vec!["orders-1".to_owned(), format!("orders-{n}")],
                version: 10 + i64::from(n),
                timestamp_ms: 1_700_000_000_000 + i64::from(n),
            }),
        },
    ]
    .into_iter()
    .map(Record::Modern)
    .collect()
}

/// The appends, in order: (the group whose partition is appended to, the
/// owner epoch, the records).
pub(crate) fn fixture_appends() -> Vec<(&'static str, u64, Vec<Record>)> {
    let member_gone = |kind: fn(Arc<str>, Arc<str>) -> ModernGroupRecord| {
        Record::Modern(kind(Arc::from("kip848"), Arc::from("member-b")))
    };
    vec![
        (
            "alpha",
            1,
            vec![group("alpha", 1, 2), offset("alpha", "orders", 0, 10), offset("alpha", "orders", 1, 11)],
        ),
        ("alpha", 1, vec![offset("alpha", "orders", 2, 12), offset("alpha", "payments", -1, 13)]),
        (
            "alpha",
            3,
            vec![group("alpha", 2, 3), offset("alpha", "orders", 1, 21), uncommit("alpha", "orders", 2)],
        ),
        ("beta", 1, vec![group("beta", 5, 1), offset("beta", "orders", 0, 30)]),
        ("beta", 2, vec![Record::GroupTombstone { group_id: Arc::from("beta") }]),
        ("", 1, vec![offset("", "t", 0, 40), group("", 0, 0)]),
        (
            "nul\0group-α",
            1,
            vec![offset("nul\0group-α", "topic\0é", 7, 50), offset("nul\0group-α", "", i32::MAX, 51)],
        ),
        ("gone", 1, vec![offset("gone", "orders", 0, 60), group("gone", 1, 1)]),
        (
            "gone",
            1,
            vec![uncommit("gone", "orders", 0), Record::GroupTombstone { group_id: Arc::from("gone") }],
        ),
        ("kip848", 1, consumer("kip848", "member-a", 1)),
        ("kip848", 2, consumer("kip848", "member-b", 2)),
        ("kip848", 2, {
            let mut records = consumer("kip848", "member-a", 3);
            records.push(member_gone(|group_id, member_id| ModernGroupRecord::MemberMetadata {
                group_id,
                member_id,
                value: None,
            }));
            records.push(member_gone(|group_id, member_id| ModernGroupRecord::TargetAssignmentMember {
                group_id,
                member_id,
                value: None,
            }));
            records.push(member_gone(|group_id, member_id| ModernGroupRecord::CurrentMemberAssignment {
                group_id,
                member_id,
                value: None,
            }));
            records.push(offset("kip848", "orders", 0, 70));
            records
        }),
    ]
}

/// `stored` in a canonical order (groups, offsets and consumer records sorted
/// by their keys), printed: what the fixture's `expected.txt` holds.
pub(crate) fn canonical(mut stored: StoredGroups) -> String {
    stored.groups.sort_by(|a, b| a.group_id.cmp(&b.group_id));
    stored.offsets.sort_by(|a, b| a.group_id.cmp(&b.group_id));
    stored.consumer.sort_by(|a, b| {
        (a.group_id(), a.record_type(), a.sub_key()).cmp(&(b.group_id(), b.record_type(), b.sub_key()))
    });
    format!("{stored:#?}\n")
}
