//! Share groups loaded from their records, and what the other kinds' APIs
//! answer about one (Kafka 4.2.1's answers, as the share oracle recorded them:
//! scripts `17`, `19`, `24`, `25` and `26` of `shared/oracle-share`).

use std::sync::Arc;

use group_offsets::{
    ConsumerGroupMetadataValue, ModernGroupRecord, Record, ShareMemberAssignmentValue,
    ShareMemberMetadataValue, ShareStatePartitionMetadataValue, ShareTopicPartitions, fold,
};
use group_types::{
    ConsumerGroupHeartbeatRequest, ConsumerMemberState, DeleteGroupsRequest, DescribeGroupsRequest, GroupId,
    JoinGroupRequest, ListGroupsRequest, MemberId, OffsetCommitData, OffsetCommitRequest,
    OffsetDeleteRequest, TopicId, TopicIdPartitions,
};
use rstest::rstest;

use crate::config::CoordinatorConfig;
use crate::core::{CoordinatorCore, GroupKind, Request, RequestId, Response};

const FOO: TopicId = TopicId([7; 16]);

fn id(s: &str) -> Arc<str> {
    Arc::from(s)
}

/// The records Kafka writes for a share group `g` at epoch 2 whose members
/// (`members`) each hold foo 0-1, with foo initialized.
fn share_group(members: &[&str]) -> Vec<Record> {
    let g = || id("g");
    let mut out = vec![ModernGroupRecord::ShareGroupMetadata {
        group_id: g(),
        value: Some(ConsumerGroupMetadataValue { epoch: 2, metadata_hash: 9 }),
    }];
    for m in members {
        out.push(ModernGroupRecord::ShareMemberMetadata {
            group_id: g(),
            member_id: id(m),
            value: Some(Box::new(ShareMemberMetadataValue {
                rack_id: None,
                client_id: "consumer".into(),
                client_host: "/127.0.0.1".into(),
                subscribed_topic_names: vec!["foo".into()],
            })),
        });
        out.push(ModernGroupRecord::ShareTargetAssignmentMember {
            group_id: g(),
            member_id: id(m),
            value: Some(vec![TopicIdPartitions::new(FOO, [0, 1])]),
        });
    }
    out.push(ModernGroupRecord::ShareTargetAssignmentMetadata {
        group_id: g(),
        value: Some(group_offsets::TargetAssignmentMetadataValue::new(2, 0)),
    });
    for m in members {
        out.push(ModernGroupRecord::ShareCurrentMemberAssignment {
            group_id: g(),
            member_id: id(m),
            value: Some(ShareMemberAssignmentValue {
                member_epoch: 2,
                previous_member_epoch: 1,
                state: ConsumerMemberState::Stable,
                assigned: vec![TopicIdPartitions::new(FOO, [0, 1])],
            }),
        });
    }
    out.push(ModernGroupRecord::ShareStatePartitionMetadata {
        group_id: g(),
        value: Some(Box::new(ShareStatePartitionMetadataValue {
            initialized: vec![ShareTopicPartitions {
                topic_id: FOO,
                topic_name: "foo".into(),
                partitions: vec![0, 1],
            }],
            ..ShareStatePartitionMetadataValue::default()
        })),
    });
    out.into_iter().map(Record::Modern).collect()
}

/// A core that loaded the fold of `records`, as a restart does.
fn loaded(records: Vec<Record>) -> CoordinatorCore {
    let mut core = CoordinatorCore::new(CoordinatorConfig::default());
    let _ = core.load(0, fold(records));
    core
}

fn answer(core: &mut CoordinatorCore, request: Request) -> Response {
    let effects = core.handle(100, RequestId(1), request);
    effects.responses.into_iter().find(|(rid, _)| *rid == RequestId(1)).expect("an answer").1
}

#[rstest]
#[case::with_members(&["m1", "m2"], "Stable")]
#[case::empty(&[], "Empty")]
fn a_loaded_share_group_is_what_its_records_say(#[case] members: &[&str], #[case] state: &str) {
    let core = loaded(share_group(members));
    let Some(GroupKind::Share(g)) = core.groups.get("g") else { panic!("g is not a share group") };
    assert_eq!((g.modern.group_epoch, g.modern.assignment_epoch, g.modern.metadata_hash), (2, 2, 9));
    assert_eq!(g.modern.members.len(), members.len());
    for m in members {
        let member = g.modern.members.get(m).expect("a member");
        assert_eq!((member.member_epoch, member.previous_member_epoch), (2, 1));
        assert_eq!(member.subscribed_topic_names, ["foo"]);
        assert_eq!(
            crate::core::modern::assignment::to_wire(&member.assigned),
            [TopicIdPartitions::new(FOO, [0, 1])]
        );
    }
    assert_eq!(g.share_state.as_ref().map(|s| s.initialized.len()), Some(1));
    assert_eq!(g.state_name(), state);
    let listed = core.listed_groups(&ListGroupsRequest::default());
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (listed[0].group_type.as_str(), listed[0].protocol_type.as_str(), listed[0].group_state.as_str()),
        ("share", "share", state)
    );
}

#[test]
fn a_member_tombstone_and_the_group_tombstone_remove_what_they_key() {
    // A leave's tombstones (`shareGroupFenceMember`): the member's three keys.
    let mut records = share_group(&["m1", "m2"]);
    records.extend(
        [
            ModernGroupRecord::ShareCurrentMemberAssignment {
                group_id: id("g"),
                member_id: id("m2"),
                value: None,
            },
            ModernGroupRecord::ShareTargetAssignmentMember {
                group_id: id("g"),
                member_id: id("m2"),
                value: None,
            },
            ModernGroupRecord::ShareMemberMetadata { group_id: id("g"), member_id: id("m2"), value: None },
        ]
        .map(Record::Modern),
    );
    let core = loaded(records.clone());
    let g = core.groups.get("g").and_then(GroupKind::share).expect("a share group");
    assert_eq!(g.modern.members.keys().map(|k| &**k).collect::<Vec<_>>(), ["m1"]);
    // The deletion records of the group remove every key it has.
    records.extend(core.groups["g"].deletion_records(&id("g")));
    assert!(loaded(records).groups.is_empty());
}

#[rstest]
#[case::consumer_heartbeat_at_epoch_0(
    Request::ConsumerGroupHeartbeat(Box::new(ConsumerGroupHeartbeatRequest {
        group_id: GroupId::from("g"),
        member_id: MemberId::from("c1"),
        rebalance_timeout_ms: 5_000,
        subscribed_topic_names: Some(vec!["foo".into()]),
        topic_partitions: Some(Vec::new()),
        ..ConsumerGroupHeartbeatRequest::default()
    })),
    "GROUP_ID_NOT_FOUND Group g is not a consumer group."
)]
#[case::classic_join(
    Request::JoinGroup(JoinGroupRequest { group_id: GroupId::from("g"), ..JoinGroupRequest::default() }),
    "INCONSISTENT_GROUP_PROTOCOL"
)]
#[case::admin_commit(
    Request::OffsetCommit(OffsetCommitRequest { group_id: GroupId::from("g"), ..OffsetCommitRequest::default() }
        .with_offset("foo", 0, OffsetCommitData::new(5))),
    "GROUP_ID_NOT_FOUND"
)]
#[case::offset_delete(
    Request::OffsetDelete(OffsetDeleteRequest { group_id: "g".into(), topics: [("foo".to_owned(), vec![0])].into() }),
    "GROUP_ID_NOT_FOUND"
)]
#[case::classic_describe(
    Request::DescribeGroups(DescribeGroupsRequest { group_ids: vec![GroupId::from("g")], api_version: 6, ..Default::default() }),
    "GROUP_ID_NOT_FOUND Group g is not a classic group. Dead"
)]
#[case::delete_with_members(
    Request::DeleteGroups(DeleteGroupsRequest { group_ids: vec![GroupId::from("g")] }),
    "NON_EMPTY_GROUP"
)]
fn other_kinds_apis_refuse_a_share_group(#[case] request: Request, #[case] expected: &str) {
    let mut core = loaded(share_group(&["m1"]));
    let got = match answer(&mut core, request) {
        Response::ConsumerGroupHeartbeat(r) => {
            format!("{} {}", r.error_code.name(), r.error_message.unwrap_or_default())
        }
        Response::JoinGroup(r) => r.error_code.name().to_owned(),
        Response::OffsetCommit(r) => {
            let codes: Vec<_> = r.iter().map(|(_, _, c)| c.name()).collect();
            assert_eq!(codes.len(), 1);
            codes[0].to_owned()
        }
        Response::OffsetDelete(r) => r.error_code.name().to_owned(),
        Response::DescribeGroups(r) => {
            let g = &r.groups[0];
            format!(
                "{} {} {}",
                g.error_code.name(),
                g.error_message.clone().unwrap_or_default(),
                g.group_state
            )
        }
        Response::DeleteGroups(r) => r.results[0].error_code.name().to_owned(),
        other => panic!("unexpected answer {other:?}"),
    };
    assert_eq!(got, expected);
    // Nothing was written, and the group is still the share group it was.
    let g = core.groups.get("g").and_then(GroupKind::share).expect("still a share group");
    assert_eq!(g.modern.members.len(), 1);
}

/// An empty group of another kind is replaced by a consumer group's first
/// heartbeat (offline migration); an empty share group is not.
#[test]
fn a_consumer_heartbeat_does_not_replace_an_empty_share_group() {
    let mut core = loaded(share_group(&[]));
    let request = Request::ConsumerGroupHeartbeat(Box::new(ConsumerGroupHeartbeatRequest {
        group_id: GroupId::from("g"),
        member_id: MemberId::from("c1"),
        rebalance_timeout_ms: 5_000,
        subscribed_topic_names: Some(vec!["foo".into()]),
        topic_partitions: Some(Vec::new()),
        ..ConsumerGroupHeartbeatRequest::default()
    }));
    let Response::ConsumerGroupHeartbeat(r) = answer(&mut core, request) else { panic!("another answer") };
    assert_eq!(r.error_message.as_deref(), Some("Group g is not a consumer group."));
    assert!(core.groups.get("g").and_then(GroupKind::share).is_some());
}

#[test]
fn an_empty_share_group_is_deleted_with_a_tombstone_for_every_key() {
    let mut core = loaded(share_group(&[]));
    let request = Request::DeleteGroups(DeleteGroupsRequest { group_ids: vec![GroupId::from("g")] });
    let effects = core.handle(100, RequestId(1), request);
    let written: Vec<Record> = effects.writes.iter().flat_map(|w| w.records.iter().cloned()).collect();
    assert!(written.iter().all(|r| matches!(r, Record::Modern(m) if m.is_tombstone())), "{written:?}");
    let mut records = share_group(&[]);
    records.extend(written);
    assert!(fold(records).consumer.is_empty(), "a key outlived the deletion");
    assert!(!core.groups.contains_key("g"));
}

mod heartbeats {
    use group_types::{ErrorCode, ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse};

    use super::*;
    use crate::core::{Effects, TimerKey, TimerOp};
    use crate::{MetadataImage, TopicImage};

    /// A core serving share groups over topic `foo` (6 partitions).
    fn core(enabled: bool) -> CoordinatorCore {
        let mut config = CoordinatorConfig::default();
        config.share.enabled = enabled;
        let mut core = CoordinatorCore::new(config);
        let image = MetadataImage::new(1, [TopicImage::new(FOO, "foo", 6)]);
        core.update_metadata_image(Arc::new(image));
        core
    }

    fn join(member: &str) -> Request {
        Request::ShareGroupHeartbeat(ShareGroupHeartbeatRequest {
            group_id: GroupId::from("g"),
            member_id: MemberId::from(member),
            member_epoch: 0,
            subscribed_topic_names: Some(vec!["foo".into()]),
            client_id: "c".into(),
            client_host: "/h".into(),
            ..ShareGroupHeartbeatRequest::default()
        })
    }

    fn beat(member: &str, epoch: i32) -> Request {
        Request::ShareGroupHeartbeat(ShareGroupHeartbeatRequest {
            group_id: GroupId::from("g"),
            member_id: MemberId::from(member),
            member_epoch: epoch,
            client_id: "c".into(),
            client_host: "/h".into(),
            ..ShareGroupHeartbeatRequest::default()
        })
    }

    /// Completes every write of `fx` with `result`, returning the answers and
    /// initializations released.
    fn complete(core: &mut CoordinatorCore, fx: Effects, result: Result<(), ErrorCode>) -> Effects {
        let mut out = Effects::default();
        out.responses.extend(fx.responses);
        out.timers.extend(fx.timers);
        for w in fx.writes {
            let more = core.complete_write(100, w.id, result);
            out.extend(complete(core, more, result));
        }
        out
    }

    fn answer_of(fx: &Effects) -> &ShareGroupHeartbeatResponse {
        match fx.responses.first() {
            Some((_, Response::ShareGroupHeartbeat(r))) => r,
            other => panic!("no heartbeat answer: {other:?}"),
        }
    }

    #[test]
    fn share_groups_off_answer_unsupported_version() {
        let mut core = core(false);
        let fx = core.handle(0, RequestId(1), join("m1"));
        assert_eq!(answer_of(&fx).error_code, ErrorCode::UnsupportedVersion);
        assert!(fx.writes.is_empty() && core.groups.is_empty());
    }

    /// A join's write that fails leaves no group (the group it made goes), and no
    /// initialization is asked for.
    #[test]
    fn a_failed_join_leaves_nothing() {
        let mut core = core(true);
        let fx = core.handle(0, RequestId(1), join("m1"));
        assert!(!fx.writes.is_empty());
        let done = complete(&mut core, fx, Err(ErrorCode::NotEnoughReplicas));
        assert_eq!(answer_of(&done).error_code, ErrorCode::CoordinatorNotAvailable);
        assert!(!core.has_share_state_initializations(), "{done:?}");
        assert!(!core.groups.contains_key("g"), "the group the failed join made is gone");
    }

    /// A heartbeat whose write fails leaves the group exactly as before it.
    #[test]
    fn a_failed_heartbeat_is_undone_exactly() {
        let mut core = core(true);
        let fx = core.handle(0, RequestId(1), join("m1"));
        let done = complete(&mut core, fx, Ok(()));
        assert_eq!(answer_of(&done).member_epoch, 1);
        let asked = core.take_share_state_initializations();
        assert_eq!(asked.len(), 1, "foo is asked to be initialized");
        let init = &asked[0];
        let partitions: Vec<(TopicId, Vec<i32>)> = init
            .topics
            .iter()
            .map(|t| (t.topic_id, t.partitions.iter().map(|p| p.partition).collect()))
            .collect();
        let fx = core.share_group_state_initialized(50, "g", &partitions, true);
        complete(&mut core, fx, Ok(()));
        let before = core.share_group("g").expect("a share group");
        // The next heartbeat would bump the epoch and assign foo; its write fails.
        let fx = core.handle(100, RequestId(2), beat("m1", 1));
        let done = complete(&mut core, fx, Err(ErrorCode::NotEnoughReplicas));
        assert_eq!(answer_of(&done).error_code, ErrorCode::CoordinatorNotAvailable);
        assert_eq!(core.share_group("g"), Some(before), "the failed heartbeat's changes are undone");
        // And it succeeds when tried again.
        let fx = core.handle(200, RequestId(3), beat("m1", 1));
        let done = complete(&mut core, fx, Ok(()));
        assert_eq!(answer_of(&done).member_epoch, 2);
        let assigned = &core.share_group("g").unwrap().members[0].assigned;
        assert_eq!(assigned, &[TopicIdPartitions::new(FOO, 0..6)]);
    }

    /// A settled member's keep-alive moves its session deadline without a timer;
    /// the timer armed earlier fires early, queues itself again at the moved
    /// deadline, and the member is fenced only once that one passes.
    #[test]
    fn keep_alives_move_the_session_deadline_the_timer_follows() {
        let mut core = core(true);
        let done = {
            let fx = core.handle(0, RequestId(1), join("m1"));
            complete(&mut core, fx, Ok(()))
        };
        assert_eq!(answer_of(&done).member_epoch, 1);
        let init = core.take_share_state_initializations().remove(0);
        let partitions: Vec<(TopicId, Vec<i32>)> = init
            .topics
            .iter()
            .map(|t| (t.topic_id, t.partitions.iter().map(|p| p.partition).collect()))
            .collect();
        let fx = core.share_group_state_initialized(0, "g", &partitions, true);
        complete(&mut core, fx, Ok(()));
        let done = {
            let fx = core.handle(100, RequestId(2), beat("m1", 1));
            complete(&mut core, fx, Ok(()))
        };
        assert_eq!(answer_of(&done).member_epoch, 2, "settled at epoch 2, deadline 45,100");
        // Twice, so the second takes the settled path: no timer, no record.
        {
            let fx = core.handle(5_000, RequestId(3), beat("m1", 2));
            complete(&mut core, fx, Ok(()))
        };
        let fx = core.handle(10_000, RequestId(4), beat("m1", 2));
        assert!(fx.writes.is_empty() && fx.timers.is_empty(), "a keep-alive arms and writes nothing: {fx:?}");
        assert_eq!(answer_of(&fx).member_epoch, 2);
        let key = TimerKey::ShareSession(id("g"), id("m1"));
        let fx = core.fire_timer(45_100, &key);
        assert!(fx.writes.is_empty(), "not fenced at the old deadline");
        assert!(
            fx.timers.iter().any(|t| matches!(t, TimerOp::Arm { deadline_ms: 55_000, .. })),
            "queued again at the moved deadline: {fx:?}"
        );
        {
            let fx = core.fire_timer(55_000, &key);
            complete(&mut core, fx, Ok(()))
        };
        assert!(core.share_group("g").expect("the group").members.is_empty(), "fenced at the moved deadline");
    }

    /// A member that stops heartbeating is fenced when its session deadline passes.
    #[test]
    fn an_expired_session_fences_the_member() {
        let mut core = core(true);
        let fx = core.handle(0, RequestId(1), join("m1"));
        let done = complete(&mut core, fx, Ok(()));
        let deadline = done
            .timers
            .iter()
            .find_map(|t| match t {
                TimerOp::Arm { key: TimerKey::ShareSession(_, m), deadline_ms } if &**m == "m1" => {
                    Some(*deadline_ms)
                }
                _ => None,
            })
            .expect("a session deadline");
        assert_eq!(deadline, 45_000);
        let key = TimerKey::ShareSession(id("g"), id("m1"));
        let fx = core.fire_timer(deadline, &key);
        complete(&mut core, fx, Ok(()));
        let g = core.share_group("g").expect("the group stays, empty");
        assert!(g.members.is_empty());
        assert_eq!(g.group_epoch, 2, "the fencing bumps the group epoch");
    }

    /// The retention job never expires a share group (`ShareGroup.shouldExpire` is
    /// false): an empty one stays, with its epoch and share state, however long it
    /// has been empty. Deleting it would orphan that state, whose epochs would then
    /// fence every initialization of a new group of the same id.
    #[test]
    fn the_retention_job_leaves_an_empty_share_group() {
        let mut core = core(true);
        let fx = core.handle(0, RequestId(1), join("m1"));
        complete(&mut core, fx, Ok(()));
        let fx = core.fire_timer(45_000, &TimerKey::ShareSession(id("g"), id("m1")));
        complete(&mut core, fx, Ok(()));
        let before = core.share_group("g").expect("the group, empty");
        assert!(before.members.is_empty());
        let a_year = 365 * 24 * 3_600_000;
        let fx = core.fire_timer(a_year, &TimerKey::OffsetExpiration);
        assert!(fx.writes.is_empty(), "the job writes nothing for a share group: {fx:?}");
        let after = core.share_group("g").expect("the group stays");
        assert_eq!((after.group_epoch, after.share_state.clone()), (before.group_epoch, before.share_state));
    }
}

mod kept_counts {
    use proptest::prelude::*;

    use super::*;
    use crate::core::share::ShareGroup;

    fn metadata(member: u8, topics: &[u8]) -> ModernGroupRecord {
        ModernGroupRecord::ShareMemberMetadata {
            group_id: id("g"),
            member_id: id(&format!("m{member}")),
            value: Some(Box::new(ShareMemberMetadataValue {
                subscribed_topic_names: topics.iter().map(|t| format!("t{t}")).collect(),
                ..ShareMemberMetadataValue::default()
            })),
        }
    }

    fn leave(member: u8) -> ModernGroupRecord {
        ModernGroupRecord::ShareMemberMetadata {
            group_id: id("g"),
            member_id: id(&format!("m{member}")),
            value: None,
        }
    }

    /// The counts as the definition gives them: a walk of the members.
    fn recount(g: &ShareGroup) -> std::collections::BTreeMap<String, usize> {
        let mut out = std::collections::BTreeMap::new();
        for m in g.modern.members.values() {
            for t in &m.subscribed_topic_names {
                *out.entry(t.clone()).or_default() += 1;
            }
        }
        out
    }

    proptest! {
        /// Whatever records come and whichever are undone, the subscriber counts a
        /// heartbeat reads are the members' own.
        #[test]
        fn kept_counts_agree_with_the_members(
            ops in proptest::collection::vec((0u8..5, proptest::collection::vec(0u8..4, 0..3), any::<bool>()), 0..40),
            undo_from in 0usize..40,
        ) {
            let mut g = ShareGroup::new();
            let mut changes = Vec::new();
            let mut before = None;
            for (i, (member, topics, goes)) in ops.iter().enumerate() {
                if i == undo_from {
                    before = Some((g.subscribed().clone(), g.modern.members.len()));
                }
                let record = if *goes { leave(*member) } else { metadata(*member, topics) };
                let undo = (i >= undo_from).then_some(&mut changes);
                g.replay(&record, 0, undo);
                prop_assert_eq!(g.subscribed(), &recount(&g));
            }
            g.undo(changes);
            prop_assert_eq!(g.subscribed(), &recount(&g));
            if let Some((counts, members)) = before {
                prop_assert_eq!(g.subscribed(), &counts);
                prop_assert_eq!(g.modern.members.len(), members);
            }
        }
    }
}

/// Share groups are counted by state (Empty, Stable) and members, beside the other kinds.
#[rstest]
#[case::with_members(&["m1", "m2"], [0, 1], 2)]
#[case::empty(&[], [1, 0], 0)]
fn share_groups_are_counted(#[case] members: &[&str], #[case] groups: [usize; 2], #[case] n: usize) {
    let core = loaded(share_group(members));
    let mut metrics = crate::CoordinatorMetrics::default();
    core.count_groups(&mut metrics);
    assert_eq!((metrics.share_groups, metrics.share_members, metrics.groups()), (groups, n, 1));
}

/// A deleted topic leaves every share group's state (`maybeCleanupShareGroupState`):
/// one record per group that named it, none for the others.
#[test]
fn a_deleted_topic_leaves_the_share_state() {
    let mut core = loaded(share_group(&["m1"]));
    let fx = core.share_topics_deleted(100, &[TopicId([9; 16])]);
    assert!(fx.writes.is_empty(), "a topic no group names writes nothing");
    let fx = core.share_topics_deleted(100, &[FOO]);
    let written: Vec<&Record> = fx.writes.iter().flat_map(|w| w.records.iter()).collect();
    assert_eq!(written.len(), 1, "{written:?}");
    let state = core.share_group("g").and_then(|g| g.share_state).expect("the group keeps a state record");
    assert!(state.initialized.is_empty() && state.initializing.is_empty(), "{state:?}");
}
