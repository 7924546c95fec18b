//! The records and values of the fixture files under `tests/fixtures`,
//! written by the build before the shared record codec (`codec::tests::
//! legacy_fixtures_*` read them back).

use std::sync::Arc;

use group_offsets::{
    AssignmentEpochs, ConsumerGroupMetadataValue, ConsumerMemberMetadataValue, CurrentMemberAssignmentValue,
    ModernGroupRecord, Record, RegularExpressionValue, TargetAssignmentMetadataValue, conformance,
};
use group_types::{
    ConsumerMemberState, OffsetAndMetadata, ProtocolMetadata, TopicId, TopicIdPartitions, TopicPartition,
};

/// A batch without consumer-group records (written in format 1).
pub(crate) fn classic_batch() -> Vec<Record> {
    let g: Arc<str> = Arc::from("billing\0é");
    vec![
        // A 5-byte assignment, as the fixture files hold it.
        Record::Group(Box::new(conformance::one_member_group_record("billing\0é", 7, 5))),
        Record::Offset {
            group_id: Arc::clone(&g),
            partition: TopicPartition::new("orders", 3),
            offset: OffsetAndMetadata {
                offset: 1234,
                leader_epoch: Some(5),
                metadata: "checkpoint".into(),
                commit_time: 1_700_000_000_123,
                expire_time: Some(1_800_000_000_000),
            },
        },
        Record::Offset {
            group_id: Arc::clone(&g),
            partition: TopicPartition::new("payments", -1),
            offset: OffsetAndMetadata::new(0, 1),
        },
        Record::OffsetTombstone { group_id: Arc::clone(&g), partition: TopicPartition::new("orders", 2) },
        Record::GroupTombstone { group_id: Arc::from("old") },
    ]
}

/// A batch with a consumer-group record of every kind and a tombstone (format 2).
pub(crate) fn consumer_batch() -> Vec<Record> {
    let g: Arc<str> = Arc::from("kip848");
    let m: Arc<str> = Arc::from("member-a");
    let topics = vec![TopicIdPartitions::new(TopicId::from_u128(0xabcd), [0, 4])];
    let records = vec![
        ModernGroupRecord::GroupMetadata {
            group_id: g.clone(),
            value: Some(ConsumerGroupMetadataValue { epoch: 3, metadata_hash: 0xfeed }),
        },
        ModernGroupRecord::MemberMetadata {
            group_id: g.clone(),
            member_id: m.clone(),
            value: Some(Box::new(ConsumerMemberMetadataValue {
                instance_id: Some("instance".to_owned()),
                rack_id: None,
                client_id: "client".to_owned(),
                client_host: "/10.0.0.2".to_owned(),
                subscribed_topic_names: vec!["orders".to_owned()],
                subscribed_topic_regex: Some("^o.*".to_owned()),
                rebalance_timeout_ms: 60_000,
                server_assignor: Some("uniform".to_owned()),
                classic: Some(group_offsets::ClassicMemberMetadata {
                    session_timeout_ms: 45_000,
                    supported_protocols: vec![ProtocolMetadata::new("range", vec![0, 3])],
                }),
            })),
        },
        // Format 2 has no assignment timestamp: it reads as 0 (unknown).
        ModernGroupRecord::TargetAssignmentMetadata {
            group_id: g.clone(),
            value: Some(TargetAssignmentMetadataValue::new(3, 0)),
        },
        ModernGroupRecord::TargetAssignmentMember {
            group_id: g.clone(),
            member_id: m.clone(),
            value: Some(topics.clone()),
        },
        ModernGroupRecord::CurrentMemberAssignment {
            group_id: g.clone(),
            member_id: m,
            value: Some(CurrentMemberAssignmentValue {
                member_epoch: 3,
                previous_member_epoch: 2,
                state: ConsumerMemberState::UnrevokedPartitions,
                assigned: topics.clone(),
                pending_revocation: topics,
                // Format 2 has no assignment epochs: every partition reads as
                // assigned at the member epoch.
                assigned_epochs: AssignmentEpochs::Same(3),
                pending_revocation_epochs: AssignmentEpochs::Same(3),
            }),
        },
        ModernGroupRecord::RegularExpression {
            group_id: g.clone(),
            regex: Arc::from("^o.*"),
            value: Some(RegularExpressionValue {
                topics: vec!["orders".to_owned()],
                version: 12,
                timestamp_ms: 1_700_000_000_000,
            }),
        },
        ModernGroupRecord::MemberMetadata {
            group_id: g.clone(),
            member_id: Arc::from("member-b"),
            value: None,
        },
    ];
    let mut batch: Vec<Record> = records.into_iter().map(Record::Modern).collect();
    batch.push(Record::Offset {
        group_id: g,
        partition: TopicPartition::new("orders", 0),
        offset: OffsetAndMetadata::new(42, 7),
    });
    batch
}
