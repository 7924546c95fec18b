//! KIP-1251 (Kafka 4.3) through the core: a member whose epoch was bumped
//! still commits with the epoch it last heard of, for the partitions it has
//! held since then, and for no other; the epochs survive a reload, a static
//! member's leave resets them, and a classic member of a consumer group is
//! held to the same rule with its generation. Kafka's cases are
//! `ConsumerGroupTest.testValidateOffsetCommitWithEpochValidation`,
//! `testValidateOffsetCommitWithClassicProtocolMember`,
//! `testValidateOffsetCommitWithUnassignedTopicOrPartition` and
//! `GroupMetadataManagerTest`'s static-member leave.

use crate::classic_timers::consumer_join;
use crate::consumer_scenarios::hb;
use std::sync::Arc;

use group_coordinator::{CoordinatorConfig, CoordinatorCore, MetadataImage, Request, Response, TopicImage};
use group_types::{
    ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse, ConsumerMemberState, ErrorCode,
    OffsetCommitData, OffsetCommitRequest, TopicEntries, TopicId, TopicIdPartitions, TxnOffsetCommitRequest,
};
use rstest::rstest;

use super::support::Sim;

const FOO: TopicId = TopicId::from_u128(0xf00);

fn image() -> Arc<MetadataImage> {
    Arc::new(MetadataImage::new(
        1,
        [TopicImage::new(FOO, "foo", 6), TopicImage::new(TopicId::from_u128(7), "bar", 2)],
    ))
}

fn sim() -> Sim {
    let mut sim = Sim::new(CoordinatorConfig::default());
    sim.core.update_metadata_image(image());
    sim
}

fn join(member: &str, instance: Option<&str>) -> ConsumerGroupHeartbeatRequest {
    ConsumerGroupHeartbeatRequest { instance_id: instance.map(Into::into), ..consumer_join(member) }
}

/// A heartbeat of `member` at `epoch` that owns `owned` of foo.
fn owning(member: &str, epoch: i32, owned: &[i32]) -> ConsumerGroupHeartbeatRequest {
    ConsumerGroupHeartbeatRequest {
        group_id: "g".into(),
        member_id: member.into(),
        member_epoch: epoch,
        topic_partitions: Some(vec![TopicIdPartitions::new(FOO, owned.iter().copied())]),
        client_id: "consumer".into(),
        client_host: "/127.0.0.1".into(),
        ..ConsumerGroupHeartbeatRequest::default()
    }
}

/// Foo's partitions in a heartbeat's assignment.
fn foo_of(r: &ConsumerGroupHeartbeatResponse) -> Vec<i32> {
    r.assignment.iter().flatten().filter(|t| t.topic_id == FOO).flat_map(|t| t.partitions.clone()).collect()
}

/// An OffsetCommit v9 of `member` at `epoch` of foo's `partitions`.
fn commit_of(member: &str, epoch: i32, partitions: Vec<(i32, OffsetCommitData)>) -> OffsetCommitRequest {
    let mut r = OffsetCommitRequest {
        group_id: "g".into(),
        generation_id: epoch,
        member_id: member.into(),
        api_version: 9,
        ..OffsetCommitRequest::default()
    };
    for (partition, data) in partitions {
        r.push("foo", partition, data);
    }
    r
}

fn commit(member: &str, epoch: i32, topic: &str, partition: i32) -> Request {
    let mut r = commit_of(member, epoch, Vec::new());
    r.push(topic, partition, OffsetCommitData::new(7));
    Request::OffsetCommit(r)
}

fn txn_commit(member: &str, epoch: i32, partition: i32) -> Request {
    Request::TxnOffsetCommit(TxnOffsetCommitRequest {
        group_id: "g".into(),
        transactional_id: "tx".into(),
        producer_id: 1,
        producer_epoch: 0,
        generation_id: epoch,
        member_id: member.into(),
        api_version: 4,
        offsets: vec![TopicEntries {
            topic: "foo".into(),
            partitions: vec![(partition, OffsetCommitData::new(7))],
        }],
        ..TxnOffsetCommitRequest::default()
    })
}

/// m1 held all of foo from epoch 1; m2 joined at epoch 2 and m1 gave up what
/// the target moves to m2, so m1 is at epoch 2 with `kept` (held since epoch
/// 1), and m2 at epoch 2 with the rest (held since epoch 2).
fn rebalanced() -> (Sim, Vec<i32>, Vec<i32>) {
    let mut sim = sim();
    let r = hb(&mut sim, join("m1", None));
    assert_eq!((r.member_epoch, foo_of(&r)), (1, (0..6).collect::<Vec<_>>()));
    let r = hb(&mut sim, join("m2", None));
    assert_eq!((r.error_code, r.member_epoch), (ErrorCode::None, 2));
    // m1 learns what it keeps; what it revokes stays pending at epoch 1.
    let r = hb(&mut sim, owning("m1", 1, &[0, 1, 2, 3, 4, 5]));
    let kept = foo_of(&r);
    assert_eq!((r.member_epoch, kept.len()), (1, 3), "{r:?}");
    let r = hb(&mut sim, owning("m1", 1, &kept));
    assert_eq!((r.member_epoch, r.error_code), (2, ErrorCode::None));
    let r = hb(&mut sim, owning("m2", 2, &[]));
    let moved = foo_of(&r);
    assert_eq!((r.member_epoch, moved.len()), (2, 3), "{r:?}");
    assert!(moved.iter().all(|p| !kept.contains(p)));
    (sim, kept, moved)
}

#[test]
fn a_bumped_member_commits_with_its_old_epoch_what_it_held_since() {
    let (mut sim, kept, moved) = rebalanced();
    for (who, epoch, partition, expected) in [
        // Held since epoch 1: 1 <= 1 <= 2 (Kafka 4.2 answered STALE_MEMBER_EPOCH).
        ("m1", 1, kept[0], ErrorCode::None),
        ("m1", 2, kept[1], ErrorCode::None),
        // Given up: not the member's any more.
        ("m1", 1, moved[0], ErrorCode::StaleMemberEpoch),
        // The current epoch lets any partition through, as before KIP-1251.
        ("m1", 2, moved[0], ErrorCode::None),
        // Older than the assignment, newer than the member.
        ("m1", 0, kept[0], ErrorCode::StaleMemberEpoch),
        ("m1", 3, kept[0], ErrorCode::StaleMemberEpoch),
        // m2 got its partitions at epoch 2.
        ("m2", 1, moved[0], ErrorCode::StaleMemberEpoch),
        ("m2", 2, moved[0], ErrorCode::None),
        // A partition no one was assigned, or a topic no one subscribes to.
        ("m1", 1, 6, ErrorCode::StaleMemberEpoch),
    ] {
        let rid = sim.send(commit(who, epoch, "foo", partition));
        assert_eq!(sim.error_of(rid), expected, "{who} at epoch {epoch} commits foo-{partition}");
    }
    let rid = sim.send(commit("m1", 1, "bar", 0));
    assert_eq!(sim.error_of(rid), ErrorCode::StaleMemberEpoch, "bar is not assigned");
    let rid = sim.send(commit("m1", 1, "unknown", 0));
    assert_eq!(sim.error_of(rid), ErrorCode::StaleMemberEpoch, "a topic the image lacks");
}

#[test]
fn one_partition_not_held_since_the_epoch_fails_the_whole_commit() {
    let (mut sim, kept, moved) = rebalanced();
    let r =
        commit_of("m1", 1, vec![(kept[0], OffsetCommitData::new(1)), (moved[0], OffsetCommitData::new(1))]);
    let rid = sim.send(Request::OffsetCommit(r));
    assert_eq!(sim.error_of(rid), ErrorCode::StaleMemberEpoch);
    assert_eq!(sim.core.committed_offset("g", "foo", kept[0]), None, "nothing of it is committed");
}

#[test]
fn a_partition_whose_metadata_is_too_large_is_answered_before_it_is_checked() {
    let (mut sim, kept, moved) = rebalanced();
    let big = "x".repeat(sim.core.config().offset_metadata_max_bytes + 1);
    let too_large = OffsetCommitData { metadata: Some(big.into()), ..OffsetCommitData::new(1) };
    let r = commit_of("m1", 1, vec![(kept[0], OffsetCommitData::new(1)), (moved[0], too_large)]);
    let rid = sim.send(Request::OffsetCommit(r));
    let Some(Response::OffsetCommit(answer)) = sim.answer(rid) else { panic!("{:?}", sim.answer(rid)) };
    let codes: Vec<ErrorCode> =
        answer.errors.iter().flat_map(|t| t.partitions.iter().map(|(_, c)| *c)).collect();
    assert_eq!(codes, [ErrorCode::None, ErrorCode::OffsetMetadataTooLarge]);
}

/// TxnOffsetCommit: the same rule, its errors ILLEGAL_GENERATION (Kafka maps
/// the validator's STALE_MEMBER_EPOCH so before v6).
#[rstest]
#[case::held_since_then(1, true, ErrorCode::None)]
#[case::given_up(1, false, ErrorCode::IllegalGeneration)]
#[case::older_than_the_assignment(0, true, ErrorCode::IllegalGeneration)]
#[case::newer_than_the_member(3, true, ErrorCode::IllegalGeneration)]
fn transactional_commits_follow_the_rule(
    #[case] epoch: i32,
    #[case] kept: bool,
    #[case] expected: ErrorCode,
) {
    let (mut sim, kept_ps, moved) = rebalanced();
    let partition = if kept { kept_ps[0] } else { moved[0] };
    let rid = sim.send(txn_commit("m1", epoch, partition));
    assert_eq!(sim.error_of(rid), expected);
}

#[test]
fn the_epochs_survive_a_reload() {
    let (sim, kept, moved) = rebalanced();
    let mut core = CoordinatorCore::new(CoordinatorConfig::default());
    core.update_metadata_image(image());
    core.load(sim.now, group_offsets::fold(sim.log.clone()));
    let mut answer =
        |rid: u64, request: Request| match core.handle(sim.now, group_coordinator::RequestId(rid), request) {
            fx if fx.writes.is_empty() => fx.responses.into_iter().next().map(|(_, r)| r),
            mut fx => {
                let w = fx.writes.remove(0);
                core.complete_write(sim.now, w.id, Ok(())).responses.into_iter().next().map(|(_, r)| r)
            }
        };
    let code = |r: Option<Response>| match r {
        Some(Response::OffsetCommit(c)) => c.errors[0].partitions[0].1,
        other => panic!("{other:?}"),
    };
    assert_eq!(code(answer(1, commit("m1", 1, "foo", kept[0]))), ErrorCode::None);
    assert_eq!(code(answer(2, commit("m1", 1, "foo", moved[0]))), ErrorCode::StaleMemberEpoch);
    assert_eq!(code(answer(3, commit("m2", 1, "foo", moved[0]))), ErrorCode::StaleMemberEpoch);
}

/// `consumerGroupStaticMemberGroupLeave` resets the partitions' epochs to 0:
/// the replacement holds them from epoch 0, so its commits with an old epoch
/// pass (and the old member id's are fenced by the id).
#[test]
fn a_static_members_replacement_holds_its_partitions_from_epoch_zero() {
    let mut sim = sim();
    let r = hb(&mut sim, join("s1", Some("i1")));
    assert_eq!(r.member_epoch, 1);
    let r = hb(&mut sim, join("other", None));
    assert_eq!(r.member_epoch, 2);
    let r = hb(&mut sim, owning("s1", 1, &[0, 1, 2, 3, 4, 5]));
    let kept = foo_of(&r);
    let r = hb(&mut sim, owning("s1", 1, &kept));
    assert_eq!(r.member_epoch, 2);
    // Held since epoch 1 until the leave.
    let rid = sim.send(commit("s1", 1, "foo", kept[0]));
    assert_eq!(sim.error_of(rid), ErrorCode::None);
    let mut leave = owning("s1", -2, &kept);
    leave.instance_id = Some("i1".into());
    assert_eq!(hb(&mut sim, leave).error_code, ErrorCode::None);
    let r = hb(&mut sim, join("s2", Some("i1")));
    assert_eq!(r.error_code, ErrorCode::None);
    let snapshot = sim.core.consumer_group("g").expect("the group");
    let s2 = snapshot.members.iter().find(|m| m.member_id == "s2").expect("s2 replaced s1");
    assert_eq!(s2.state, ConsumerMemberState::Stable);
    assert!(s2.member_epoch >= 2, "{s2:?}");
    // From epoch 0: any epoch up to the member's passes for what it took over.
    let rid = sim.send(commit("s2", 0, "foo", kept[0]));
    assert_eq!(sim.error_of(rid), ErrorCode::None);
    let rid = sim.send(commit("s1", 1, "foo", kept[0]));
    assert_eq!(sim.error_of(rid), ErrorCode::UnknownMemberId, "the old id is gone");
}
