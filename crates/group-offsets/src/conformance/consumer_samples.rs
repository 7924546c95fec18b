//! Modern-group records (consumer and share groups) for the checks: one builder per kind, values with
//! every optional field set or unset, and a set of awkward records that must
//! round-trip byte for byte.

use std::sync::Arc;

use group_share_coordinator::{SharePartitionState, ShareSnapshotValue};
use group_types::{ConsumerMemberState, ProtocolMetadata, StateBatch, TopicId, TopicIdPartitions};

use crate::{
    AssignmentEpochs, ClassicMemberMetadata, ConsumerGroupMetadataValue, ConsumerMemberMetadataValue,
    CurrentMemberAssignmentValue, ModernGroupRecord, Record, RegularExpressionValue,
    ShareMemberAssignmentValue, ShareMemberMetadataValue, ShareStatePartitionMetadataValue,
    ShareTopicPartitions, TargetAssignmentMetadataValue, record_type,
};

/// The thirteen kinds, for checks that go over every one of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    GroupMetadata,
    MemberMetadata,
    TargetAssignmentMetadata,
    TargetAssignmentMember,
    CurrentMemberAssignment,
    RegularExpression,
    ShareMemberMetadata,
    ShareGroupMetadata,
    ShareTargetAssignmentMetadata,
    ShareTargetAssignmentMember,
    ShareCurrentMemberAssignment,
    ShareStatePartitionMetadata,
    ShareState,
}

impl Kind {
    pub(super) const ALL: [Kind; 13] = [
        Kind::GroupMetadata,
        Kind::MemberMetadata,
        Kind::TargetAssignmentMetadata,
        Kind::TargetAssignmentMember,
        Kind::CurrentMemberAssignment,
        Kind::RegularExpression,
        Kind::ShareMemberMetadata,
        Kind::ShareGroupMetadata,
        Kind::ShareTargetAssignmentMetadata,
        Kind::ShareTargetAssignmentMember,
        Kind::ShareCurrentMemberAssignment,
        Kind::ShareStatePartitionMetadata,
        Kind::ShareState,
    ];

    /// True for the kinds keyed by the group alone (their sub-key is `""`).
    pub(super) fn group_level(self) -> bool {
        record_type::is_group_level(self.tombstone("g", "m").record_type())
    }

    /// A record of this kind for `group` and `sub` (ignored by group-level
    /// kinds), its value derived from `n` so that two values of one key differ.
    pub(super) fn record(self, group: &str, sub: &str, n: i32) -> ModernGroupRecord {
        self.with_value(group, sub, Some(n))
    }

    /// The tombstone of this kind's key for `group` and `sub`.
    pub(super) fn tombstone(self, group: &str, sub: &str) -> ModernGroupRecord {
        self.with_value(group, sub, None)
    }

    fn with_value(self, group: &str, sub: &str, n: Option<i32>) -> ModernGroupRecord {
        let group_id: Arc<str> = Arc::from(group);
        let sub: Arc<str> = Arc::from(sub);
        match self {
            Kind::GroupMetadata => {
                ModernGroupRecord::GroupMetadata { group_id, value: n.map(group_metadata) }
            }
            Kind::MemberMetadata => ModernGroupRecord::MemberMetadata {
                group_id,
                member_id: sub,
                value: n.map(|n| Box::new(member_metadata(n))),
            },
            Kind::TargetAssignmentMetadata => {
                ModernGroupRecord::TargetAssignmentMetadata { group_id, value: n.map(target_metadata) }
            }
            Kind::TargetAssignmentMember => ModernGroupRecord::TargetAssignmentMember {
                group_id,
                member_id: sub,
                value: n.map(|n| partitions(n, 2)),
            },
            Kind::CurrentMemberAssignment => ModernGroupRecord::CurrentMemberAssignment {
                group_id,
                member_id: sub,
                value: n.map(current_assignment),
            },
            Kind::RegularExpression => {
                ModernGroupRecord::RegularExpression { group_id, regex: sub, value: n.map(regex_value) }
            }
            Kind::ShareMemberMetadata => ModernGroupRecord::ShareMemberMetadata {
                group_id,
                member_id: sub,
                value: n.map(|n| Box::new(share_member_metadata(n))),
            },
            Kind::ShareGroupMetadata => {
                ModernGroupRecord::ShareGroupMetadata { group_id, value: n.map(group_metadata) }
            }
            Kind::ShareTargetAssignmentMetadata => {
                ModernGroupRecord::ShareTargetAssignmentMetadata { group_id, value: n.map(target_metadata) }
            }
            Kind::ShareTargetAssignmentMember => ModernGroupRecord::ShareTargetAssignmentMember {
                group_id,
                member_id: sub,
                value: n.map(|n| partitions(n, 3)),
            },
            Kind::ShareCurrentMemberAssignment => ModernGroupRecord::ShareCurrentMemberAssignment {
                group_id,
                member_id: sub,
                value: n.map(|n| ShareMemberAssignmentValue {
                    member_epoch: n,
                    previous_member_epoch: n - 1,
                    state: ConsumerMemberState::Stable,
                    assigned: partitions(n, 2),
                }),
            },
            Kind::ShareStatePartitionMetadata => ModernGroupRecord::ShareStatePartitionMetadata {
                group_id,
                value: n.map(|n| Box::new(share_state(n))),
            },
            // The store keeps the sub-key as it is: any string stands in for `topicId:partition`.
            Kind::ShareState => ModernGroupRecord::ShareState {
                group_id,
                share_partition: sub,
                value: n.map(|n| Box::new(share_partition_state(n))),
            },
        }
    }
}

/// `record` as a log record.
pub(super) fn consumer(record: ModernGroupRecord) -> Record {
    Record::Modern(record)
}

/// A record of every kind for `group`, members and regex named `sub`.
pub(super) fn every_kind(group: &str, sub: &str, n: i32) -> Vec<Record> {
    Kind::ALL.iter().map(|kind| consumer(kind.record(group, sub, n))).collect()
}

/// The tombstones of every kind's key for `group` and `sub`, as log records.
pub(super) fn every_tombstone(group: &str, sub: &str) -> Vec<Record> {
    consumer_tombstones(group, sub).into_iter().map(consumer).collect()
}

fn topic_id(n: i32) -> TopicId {
    TopicId::from_u128(0x0123_4567_89ab_cdef_0000_0000_0000_0000 | n as u32 as u128)
}

/// `topics` topics, topic `t` holding partitions `0..=t` (and `n` itself).
fn partitions(n: i32, topics: i32) -> Vec<TopicIdPartitions> {
    (0..topics).map(|t| TopicIdPartitions::new(topic_id(n + t), (0..=t).chain([n]))).collect()
}

fn group_metadata(n: i32) -> ConsumerGroupMetadataValue {
    ConsumerGroupMetadataValue { epoch: n, metadata_hash: 0xfeed_0000_0000_0000 | n as u32 as u64 }
}

fn member_metadata(n: i32) -> ConsumerMemberMetadataValue {
    ConsumerMemberMetadataValue {
        instance_id: Some(format!("instance-{n}")),
        rack_id: Some("rack-a".to_owned()),
        client_id: format!("client-{n}"),
        client_host: "/10.0.0.1".to_owned(),
        subscribed_topic_names: vec!["orders".to_owned(), format!("topic-{n}")],
        subscribed_topic_regex: Some("^orders-.*".to_owned()),
        rebalance_timeout_ms: 300_000 + n,
        server_assignor: Some("uniform".to_owned()),
        classic: Some(ClassicMemberMetadata {
            session_timeout_ms: 45_000,
            supported_protocols: vec![ProtocolMetadata::new("range", vec![0, 3, n as u8])],
        }),
    }
}

fn current_assignment(n: i32) -> CurrentMemberAssignmentValue {
    let assigned = partitions(n, 2);
    let pending_revocation = partitions(n + 10, 1);
    CurrentMemberAssignmentValue {
        member_epoch: n,
        previous_member_epoch: n - 1,
        state: ConsumerMemberState::UnrevokedPartitions,
        assigned_epochs: staggered(&assigned, n),
        pending_revocation_epochs: staggered(&pending_revocation, n - 3),
        assigned,
        pending_revocation,
    }
}

/// A target assignment's epoch `n`, computed at a time made of `n`.
fn target_metadata(n: i32) -> TargetAssignmentMetadataValue {
    TargetAssignmentMetadataValue::new(n, 1_700_000_000_000 + i64::from(n))
}

/// The first half of `parts` assigned at epoch `n - 1`, the rest at `n`: two runs.
fn staggered(parts: &[TopicIdPartitions], n: i32) -> AssignmentEpochs {
    let count: usize = parts.iter().map(|t| t.partitions.len()).sum();
    AssignmentEpochs::from_epochs((0..count).map(|i| if i < count / 2 { n.wrapping_sub(1) } else { n }))
}

fn share_member_metadata(n: i32) -> ShareMemberMetadataValue {
    ShareMemberMetadataValue {
        rack_id: (n % 2 == 0).then(|| "rack-b".to_owned()),
        client_id: format!("share-client-{n}"),
        client_host: "/10.0.0.2".to_owned(),
        subscribed_topic_names: vec![format!("queue-{n}")],
    }
}

fn share_state(n: i32) -> ShareStatePartitionMetadataValue {
    let topic = |t: i32, partitions: Vec<i32>| ShareTopicPartitions {
        topic_id: topic_id(t),
        topic_name: format!("queue-{t}"),
        partitions,
    };
    ShareStatePartitionMetadataValue {
        initializing: vec![topic(n, vec![n, n + 1])],
        initialized: vec![topic(n + 1, vec![0]), topic(n + 2, Vec::new())],
        deleting: vec![(topic_id(n + 3), format!("queue-{}", n + 3))],
    }
}

fn share_partition_state(n: i32) -> SharePartitionState {
    SharePartitionState {
        offset: ShareSnapshotValue {
            snapshot_epoch: n,
            state_epoch: n + 1,
            leader_epoch: n + 2,
            start_offset: i64::from(n) * 100,
            delivery_complete_count: n,
            create_timestamp: 1_700_000_000_000,
            write_timestamp: 1_700_000_000_000 + i64::from(n),
            state_batches: vec![StateBatch::new(i64::from(n) * 100, i64::from(n) * 100 + 9, 2, 1)],
        },
        max_leader_epoch: n + 2,
        max_state_epoch: (n % 2 == 0).then_some(n + 1),
        updates_since_snapshot: (n % 3 != 0).then_some(n),
    }
}

fn regex_value(n: i32) -> RegularExpressionValue {
    RegularExpressionValue {
        topics: vec!["orders-1".to_owned(), format!("orders-{n}")],
        version: i64::from(n) * 1000,
        timestamp_ms: 1_700_000_000_000 + i64::from(n),
    }
}

/// One record of each kind for group `"g"` (member `"m"`, regex `"^t"`), with
/// small values that set every field: the records both codecs pin to golden
/// bytes, named, in record-type order.
#[doc(hidden)]
pub fn pinned_records() -> Vec<(&'static str, ModernGroupRecord)> {
    let g = || Arc::<str>::from("g");
    let m = || Arc::<str>::from("m");
    let t1 = TopicId::from_u128(1);
    let member = ConsumerMemberMetadataValue {
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
    };
    vec![
        (
            "group metadata",
            ModernGroupRecord::GroupMetadata {
                group_id: g(),
                value: Some(ConsumerGroupMetadataValue { epoch: 5, metadata_hash: 258 }),
            },
        ),
        (
            "member metadata",
            ModernGroupRecord::MemberMetadata {
                group_id: g(),
                member_id: m(),
                value: Some(Box::new(member)),
            },
        ),
        (
            "target assignment metadata",
            ModernGroupRecord::TargetAssignmentMetadata {
                group_id: g(),
                value: Some(TargetAssignmentMetadataValue::new(7, 5)),
            },
        ),
        (
            "target assignment member",
            ModernGroupRecord::TargetAssignmentMember {
                group_id: g(),
                member_id: m(),
                value: Some(vec![TopicIdPartitions::new(t1, [0, 2])]),
            },
        ),
        (
            "current member assignment",
            ModernGroupRecord::CurrentMemberAssignment {
                group_id: g(),
                member_id: m(),
                value: Some(CurrentMemberAssignmentValue {
                    member_epoch: 3,
                    previous_member_epoch: 2,
                    state: ConsumerMemberState::UnrevokedPartitions,
                    assigned: vec![TopicIdPartitions::new(t1, [0])],
                    pending_revocation: Vec::new(),
                    assigned_epochs: AssignmentEpochs::Same(2),
                    pending_revocation_epochs: AssignmentEpochs::default(),
                }),
            },
        ),
        (
            "regular expression",
            ModernGroupRecord::RegularExpression {
                group_id: g(),
                regex: Arc::from("^t"),
                value: Some(RegularExpressionValue {
                    topics: vec!["t".into()],
                    version: 9,
                    timestamp_ms: -1,
                }),
            },
        ),
    ]
}

/// The tombstone of every kind's key for `group` and `sub`.
#[doc(hidden)]
pub fn consumer_tombstones(group: &str, sub: &str) -> Vec<ModernGroupRecord> {
    Kind::ALL.iter().map(|kind| kind.tombstone(group, sub)).collect()
}

/// Every value of a member's metadata empty or unset: what `Some("")` and
/// `Some(vec![])` must stay distinct from.
pub(super) fn bare_member_metadata() -> ConsumerMemberMetadataValue {
    ConsumerMemberMetadataValue::default()
}

/// Records of every kind whose values push the encodings: every optional
/// field unset and set (to `""` too), classic metadata absent, present and
/// empty, empty lists, every member state, extreme numbers, NUL bytes and
/// non-ASCII text, large lists. Keys are all distinct. The codecs' own tests
/// round-trip these too.
#[doc(hidden)]
pub fn awkward_records() -> Vec<ModernGroupRecord> {
    let nul = "a\0b\u{0}";
    let unicode = "ünïcödé 日本語 🦀 e\u{301}\u{10FFFF}";
    let g = |s: &str| -> Arc<str> { Arc::from(s) };
    let full_member = ConsumerMemberMetadataValue {
        instance_id: Some(String::new()),
        rack_id: Some(nul.to_owned()),
        client_id: unicode.to_owned(),
        client_host: "\0".to_owned(),
        subscribed_topic_names: vec![String::new(), nul.to_owned(), unicode.to_owned()],
        subscribed_topic_regex: Some(String::new()),
        rebalance_timeout_ms: i32::MIN,
        server_assignor: Some(String::new()),
        classic: Some(ClassicMemberMetadata {
            session_timeout_ms: i32::MAX,
            supported_protocols: vec![
                ProtocolMetadata::new("", Vec::new()),
                ProtocolMetadata::new(nul, (0..=255).collect::<Vec<u8>>()),
            ],
        }),
    };
    let empty_classic = ConsumerMemberMetadataValue {
        classic: Some(ClassicMemberMetadata::default()),
        rebalance_timeout_ms: -1,
        ..bare_member_metadata()
    };
    let big_member = ConsumerMemberMetadataValue {
        subscribed_topic_names: (0..1000).map(|i| format!("topic-{i:04}-{unicode}")).collect(),
        ..member_metadata(7)
    };
    let mut records = vec![
        ModernGroupRecord::GroupMetadata {
            group_id: g("min"),
            value: Some(ConsumerGroupMetadataValue { epoch: i32::MIN, metadata_hash: 0 }),
        },
        ModernGroupRecord::GroupMetadata {
            group_id: g("max"),
            value: Some(ConsumerGroupMetadataValue { epoch: i32::MAX, metadata_hash: u64::MAX }),
        },
        ModernGroupRecord::GroupMetadata {
            group_id: g(""),
            value: Some(ConsumerGroupMetadataValue::default()),
        },
        ModernGroupRecord::GroupMetadata { group_id: g(nul), value: Some(group_metadata(-1)) },
        ModernGroupRecord::MemberMetadata {
            group_id: g(unicode),
            member_id: g(""),
            value: Some(Box::new(bare_member_metadata())),
        },
        ModernGroupRecord::MemberMetadata {
            group_id: g(unicode),
            member_id: g(nul),
            value: Some(Box::new(full_member)),
        },
        ModernGroupRecord::MemberMetadata {
            group_id: g(unicode),
            member_id: g("empty-classic"),
            value: Some(Box::new(empty_classic)),
        },
        ModernGroupRecord::MemberMetadata {
            group_id: g(unicode),
            member_id: g("no-classic"),
            value: Some(Box::new(ConsumerMemberMetadataValue { classic: None, ..member_metadata(3) })),
        },
        ModernGroupRecord::MemberMetadata {
            group_id: g(unicode),
            member_id: g("empty-options"),
            value: Some(Box::new(ConsumerMemberMetadataValue {
                instance_id: Some(String::new()),
                rack_id: Some(String::new()),
                subscribed_topic_regex: Some(String::new()),
                server_assignor: Some(String::new()),
                ..bare_member_metadata()
            })),
        },
        ModernGroupRecord::MemberMetadata {
            group_id: g(""),
            member_id: g("big"),
            value: Some(Box::new(big_member)),
        },
        ModernGroupRecord::TargetAssignmentMetadata {
            group_id: g("min"),
            value: Some(TargetAssignmentMetadataValue::new(i32::MIN, i64::MIN)),
        },
        ModernGroupRecord::TargetAssignmentMetadata {
            group_id: g("max"),
            value: Some(TargetAssignmentMetadataValue::new(i32::MAX, i64::MAX)),
        },
        ModernGroupRecord::TargetAssignmentMetadata {
            group_id: g(nul),
            value: Some(TargetAssignmentMetadataValue::new(-1, 0)),
        },
        ModernGroupRecord::TargetAssignmentMember {
            group_id: g(nul),
            member_id: g(nul),
            value: Some(Vec::new()),
        },
        ModernGroupRecord::TargetAssignmentMember {
            group_id: g(nul),
            member_id: g(unicode),
            value: Some(vec![
                TopicIdPartitions::new(TopicId::ZERO, []),
                TopicIdPartitions::new(TopicId::from_u128(u128::MAX), [i32::MIN, -1, 0, i32::MAX]),
            ]),
        },
        ModernGroupRecord::TargetAssignmentMember {
            group_id: g(nul),
            member_id: g("many"),
            value: Some(vec![TopicIdPartitions::new(topic_id(1), 0..5000)]),
        },
        ModernGroupRecord::RegularExpression {
            group_id: g(nul),
            regex: g(""),
            value: Some(RegularExpressionValue::default()),
        },
        ModernGroupRecord::RegularExpression {
            group_id: g(nul),
            regex: g("^(a|b)\\0.*[\u{0}-\u{10FFFF}]$"),
            value: Some(RegularExpressionValue {
                topics: vec![String::new(), nul.to_owned(), unicode.to_owned()],
                version: i64::MIN,
                timestamp_ms: i64::MAX,
            }),
        },
    ];
    let states = [
        ConsumerMemberState::Stable,
        ConsumerMemberState::UnrevokedPartitions,
        ConsumerMemberState::UnreleasedPartitions,
        ConsumerMemberState::Unknown,
    ];
    for (i, state) in states.into_iter().enumerate() {
        records.push(ModernGroupRecord::CurrentMemberAssignment {
            group_id: g(unicode),
            member_id: g(&format!("state-{i}")),
            value: Some(CurrentMemberAssignmentValue {
                member_epoch: [i32::MIN, -1, 0, i32::MAX][i],
                previous_member_epoch: [i32::MAX, 0, -1, i32::MIN][i],
                state,
                assigned: if i % 2 == 0 { Vec::new() } else { partitions(i as i32, 3) },
                pending_revocation: if i < 2 { Vec::new() } else { partitions(-(i as i32), 2) },
                assigned_epochs: if i % 2 == 0 {
                    AssignmentEpochs::default()
                } else {
                    staggered(&partitions(i as i32, 3), [i32::MIN, i32::MAX][i / 2])
                },
                pending_revocation_epochs: if i < 2 {
                    AssignmentEpochs::default()
                } else {
                    AssignmentEpochs::Same([i32::MAX, i32::MIN][i - 2])
                },
            }),
        });
    }
    records.extend([
        ModernGroupRecord::ShareMemberMetadata {
            group_id: g(nul),
            member_id: g(""),
            value: Some(Box::new(ShareMemberMetadataValue::default())),
        },
        ModernGroupRecord::ShareMemberMetadata {
            group_id: g(nul),
            member_id: g(unicode),
            value: Some(Box::new(ShareMemberMetadataValue {
                rack_id: Some(String::new()),
                client_id: unicode.to_owned(),
                client_host: nul.to_owned(),
                subscribed_topic_names: vec![String::new(), unicode.to_owned()],
            })),
        },
        ModernGroupRecord::ShareGroupMetadata {
            group_id: g("max"),
            value: Some(ConsumerGroupMetadataValue { epoch: i32::MAX, metadata_hash: u64::MAX }),
        },
        ModernGroupRecord::ShareTargetAssignmentMetadata {
            group_id: g("min"),
            value: Some(TargetAssignmentMetadataValue::new(i32::MIN, -1)),
        },
        ModernGroupRecord::ShareTargetAssignmentMember {
            group_id: g(unicode),
            member_id: g("many"),
            value: Some(vec![TopicIdPartitions::new(TopicId::from_u128(u128::MAX), 0..5000)]),
        },
        ModernGroupRecord::ShareCurrentMemberAssignment {
            group_id: g(unicode),
            member_id: g(nul),
            value: Some(ShareMemberAssignmentValue {
                member_epoch: i32::MIN,
                previous_member_epoch: i32::MAX,
                state: ConsumerMemberState::Unknown,
                assigned: Vec::new(),
            }),
        },
        ModernGroupRecord::ShareStatePartitionMetadata {
            group_id: g(""),
            value: Some(Box::new(ShareStatePartitionMetadataValue::default())),
        },
        ModernGroupRecord::ShareStatePartitionMetadata {
            group_id: g(unicode),
            value: Some(Box::new(ShareStatePartitionMetadataValue {
                initializing: vec![ShareTopicPartitions {
                    topic_id: TopicId::ZERO,
                    topic_name: nul.to_owned(),
                    partitions: vec![i32::MIN, -1, i32::MAX],
                }],
                initialized: vec![ShareTopicPartitions {
                    topic_id: TopicId::from_u128(u128::MAX),
                    topic_name: unicode.to_owned(),
                    partitions: (0..3000).collect(),
                }],
                deleting: vec![(TopicId::ZERO, String::new()), (topic_id(9), unicode.to_owned())],
            })),
        },
        ModernGroupRecord::ShareState {
            group_id: g(unicode),
            share_partition: g(nul),
            value: Some(Box::new(SharePartitionState {
                offset: ShareSnapshotValue {
                    snapshot_epoch: i32::MIN,
                    state_epoch: i32::MAX,
                    leader_epoch: -1,
                    start_offset: i64::MIN,
                    delivery_complete_count: -1,
                    create_timestamp: i64::MAX,
                    write_timestamp: 0,
                    state_batches: (0..2000)
                        .map(|i| StateBatch::new(i * 10, i * 10 + 9, 4, i16::MAX))
                        .collect(),
                },
                max_leader_epoch: i32::MAX,
                max_state_epoch: Some(i32::MIN),
                updates_since_snapshot: Some(0),
            })),
        },
        ModernGroupRecord::ShareState {
            group_id: g(""),
            share_partition: g(""),
            value: Some(Box::new(share_partition_state(0))),
        },
    ]);
    records
}
