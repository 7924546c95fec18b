//! KIP-848 consumer groups through the core: the scenarios of
//! `kip848-semantics.md` §10, each test named after its scenario, beside the
//! oracle replay (which checks the recorded ones step by step).

use std::sync::Arc;

use group_coordinator::{CoordinatorConfig, MetadataImage, Request, Response, TopicImage};
use group_types::{
    ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse, ConsumerGroupState, ConsumerMemberState,
    ErrorCode, OffsetCommitData, OffsetCommitRequest, OffsetFetchRequest, TopicId, TopicIdPartitions,
};
use rstest::rstest;

use super::support::Sim;

const FOO: TopicId = TopicId::from_u128(0xf00);
const BAR: TopicId = TopicId::from_u128(0xba4);

fn image(topics: &[(&str, TopicId, u32)]) -> Arc<MetadataImage> {
    Arc::new(MetadataImage::new(1, topics.iter().map(|(n, id, p)| TopicImage::new(*id, *n, *p))))
}

fn sim() -> Sim {
    let mut sim = Sim::new(CoordinatorConfig::default());
    sim.core.update_metadata_image(image(&[("foo", FOO, 6), ("bar", BAR, 3)]));
    sim
}

/// A v1 join of `member` to group `g` with `topics`.
fn join(member: &str, topics: &[&str]) -> ConsumerGroupHeartbeatRequest {
    ConsumerGroupHeartbeatRequest {
        group_id: "g".into(),
        member_id: member.into(),
        member_epoch: 0,
        rebalance_timeout_ms: 5_000,
        subscribed_topic_names: Some(topics.iter().map(|t| (*t).to_owned()).collect()),
        topic_partitions: Some(Vec::new()),
        client_id: "consumer".into(),
        client_host: "/127.0.0.1".into(),
        ..ConsumerGroupHeartbeatRequest::default()
    }
}

/// A keep-alive heartbeat of `member` at `epoch`.
fn beat(member: &str, epoch: i32) -> ConsumerGroupHeartbeatRequest {
    ConsumerGroupHeartbeatRequest {
        group_id: "g".into(),
        member_id: member.into(),
        member_epoch: epoch,
        client_id: "consumer".into(),
        client_host: "/127.0.0.1".into(),
        ..ConsumerGroupHeartbeatRequest::default()
    }
}

fn owning(
    mut r: ConsumerGroupHeartbeatRequest,
    owned: &[(TopicId, &[i32])],
) -> ConsumerGroupHeartbeatRequest {
    r.topic_partitions =
        Some(owned.iter().map(|(t, ps)| TopicIdPartitions::new(*t, ps.iter().copied())).collect());
    r
}

fn hb(sim: &mut Sim, r: ConsumerGroupHeartbeatRequest) -> ConsumerGroupHeartbeatResponse {
    let rid = sim.send(Request::ConsumerGroupHeartbeat(r));
    match sim.answer(rid) {
        Some(Response::ConsumerGroupHeartbeat(r)) => r.clone(),
        other => panic!("heartbeat answered {other:?}"),
    }
}

fn count(assignment: &Option<Vec<TopicIdPartitions>>) -> usize {
    assignment.as_ref().map_or(0, |a| a.iter().map(|t| t.partitions.len()).sum())
}

#[test]
fn s08_first_member_joins_empty_group() {
    let mut sim = sim();
    let r = hb(&mut sim, join("m1", &["foo"]));
    assert_eq!((r.error_code, r.member_epoch, r.heartbeat_interval_ms), (ErrorCode::None, 1, 5_000));
    assert_eq!(r.assignment, Some(vec![TopicIdPartitions::new(FOO, 0..6)]));
    let g = sim.core.consumer_group("g").expect("a consumer group");
    assert_eq!((g.state, g.group_epoch, g.assignment_epoch), (ConsumerGroupState::Stable, 1, 1));
}

#[test]
fn s12_incremental_heartbeat_omits_the_assignment_and_writes_nothing() {
    let mut sim = sim();
    hb(&mut sim, join("m1", &["foo"]));
    let written = sim.records_written;
    let r = hb(&mut sim, beat("m1", 1));
    assert_eq!((r.error_code, r.member_epoch, r.assignment.clone()), (ErrorCode::None, 1, None));
    assert_eq!(sim.records_written, written);
    let mut full = owning(beat("m1", 1), &[(FOO, &[0, 1, 2, 3, 4, 5])]);
    full.rebalance_timeout_ms = 5_000;
    full.subscribed_topic_names = Some(vec!["foo".into()]);
    assert_eq!(count(&hb(&mut sim, full).assignment), 6);
}

#[test]
fn s18_s19_second_member_triggers_revocation_then_release() {
    let mut sim = sim();
    hb(&mut sim, join("m1", &["foo"]));
    let m2 = hb(&mut sim, join("m2", &["foo"]));
    assert_eq!((m2.member_epoch, count(&m2.assignment)), (2, 0), "m2 waits for m1's partitions");
    let m1 = hb(&mut sim, beat("m1", 1));
    assert_eq!(m1.member_epoch, 1, "m1 keeps its epoch while revoking");
    let kept = m1.assignment.clone().expect("the reduced set");
    assert_eq!(count(&m1.assignment), 3);
    let g = sim.core.consumer_group("g").expect("group");
    let m1_state = g.members.iter().find(|m| m.member_id == "m1").map(|m| m.state);
    assert_eq!(m1_state, Some(ConsumerMemberState::UnrevokedPartitions));
    // The acknowledgement moves m1 to epoch 2 without an assignment field.
    let mut ack = beat("m1", 1);
    ack.topic_partitions = Some(kept);
    let m1 = hb(&mut sim, ack);
    assert_eq!((m1.member_epoch, m1.assignment.is_none()), (2, true));
    let m2 = hb(&mut sim, beat("m2", 2));
    assert_eq!(count(&m2.assignment), 3);
    let g = sim.core.consumer_group("g").expect("group");
    assert_eq!(g.state, ConsumerGroupState::Stable);
}

#[test]
fn s20_ack_still_owning_a_pending_partition_changes_nothing() {
    let mut sim = sim();
    hb(&mut sim, join("m1", &["foo"]));
    hb(&mut sim, join("m2", &["foo"]));
    hb(&mut sim, beat("m1", 1));
    let written = sim.records_written;
    let r = hb(&mut sim, owning(beat("m1", 1), &[(FOO, &[0, 1, 2, 3, 4, 5])]));
    assert_eq!(r.member_epoch, 1);
    assert_eq!(sim.records_written, written, "still owning a pending partition writes nothing");
}

#[rstest]
#[case::greater_epoch(200, None, ErrorCode::FencedMemberEpoch)]
#[case::epoch_below_minus_two(-5, None, ErrorCode::InvalidRequest)]
#[case::previous_epoch_without_partitions(1, None, ErrorCode::FencedMemberEpoch)]
#[case::previous_epoch_owning_a_subset(1, Some(&[0, 1][..]), ErrorCode::None)]
#[case::previous_epoch_owning_more(1, Some(&[0, 1, 2, 3, 4, 5][..]), ErrorCode::FencedMemberEpoch)]
fn s11_member_epoch_validation(
    #[case] epoch: i32,
    #[case] owned: Option<&[i32]>,
    #[case] expected: ErrorCode,
) {
    let mut sim = sim();
    hb(&mut sim, join("m1", &["foo"]));
    hb(&mut sim, join("m2", &["foo"]));
    let kept = hb(&mut sim, beat("m1", 1)).assignment.expect("reduced");
    let mut ack = beat("m1", 1);
    ack.topic_partitions = Some(kept);
    assert_eq!(hb(&mut sim, ack).member_epoch, 2);
    // m1 is at epoch 2, previous epoch 1, owning three partitions.
    let mut r = beat("m1", epoch);
    if let Some(owned) = owned {
        let assigned: Vec<i32> =
            sim.core.consumer_group("g").unwrap().members[0].assigned[0].partitions.clone();
        let ps: Vec<i32> = owned.iter().map(|&i| *assigned.get(i as usize).unwrap_or(&(100 + i))).collect();
        r.topic_partitions = Some(vec![TopicIdPartitions::new(FOO, ps)]);
    }
    assert_eq!(hb(&mut sim, r).error_code, expected);
}

#[test]
fn s26_leaving_member_bumps_the_group_epoch() {
    let mut sim = sim();
    hb(&mut sim, join("m1", &["foo"]));
    hb(&mut sim, join("m2", &["foo"]));
    let r = hb(&mut sim, beat("m1", -1));
    assert_eq!((r.error_code, r.member_epoch, r.member_id.as_deref()), (ErrorCode::None, -1, Some("m1")));
    let g = sim.core.consumer_group("g").expect("group");
    assert_eq!((g.group_epoch, g.state), (3, ConsumerGroupState::Assigning));
    let m2 = hb(&mut sim, beat("m2", 2));
    assert_eq!((m2.member_epoch, count(&m2.assignment)), (3, 6));
}

#[test]
fn s28_session_timeout_fences_the_member() {
    let mut sim = sim();
    hb(&mut sim, join("m1", &["foo"]));
    sim.advance_to(44_999);
    assert!(sim.core.consumer_group("g").unwrap().members.iter().any(|m| m.member_id == "m1"));
    sim.advance_to(45_001);
    let g = sim.core.consumer_group("g").expect("group");
    assert!(g.members.is_empty(), "{g:?}");
    assert_eq!((g.group_epoch, g.state), (2, ConsumerGroupState::Empty));
}

#[test]
fn s46_commits_check_the_member_epoch() {
    let mut sim = sim();
    hb(&mut sim, join("m1", &["foo"]));
    let commit = |epoch: i32, member: &str, version: i16| {
        let mut r = OffsetCommitRequest {
            group_id: "g".into(),
            generation_id: epoch,
            member_id: member.into(),
            api_version: version,
            ..OffsetCommitRequest::default()
        };
        r.offsets.entry("foo".into()).or_default().insert(0, OffsetCommitData::new(7));
        Request::OffsetCommit(r)
    };
    for (epoch, member, version, expected) in [
        (0, "m1", 9, ErrorCode::StaleMemberEpoch),
        (2, "m1", 9, ErrorCode::StaleMemberEpoch),
        (1, "nobody", 9, ErrorCode::UnknownMemberId),
        (1, "m1", 8, ErrorCode::UnsupportedVersion),
        (-1, "", 9, ErrorCode::UnknownMemberId),
        (1, "m1", 9, ErrorCode::None),
    ] {
        let rid = sim.send(commit(epoch, member, version));
        assert_eq!(sim.error_of(rid), expected, "epoch {epoch} member {member} v{version}");
    }
    let fetch = |member: Option<&str>, epoch: Option<i32>| {
        Request::OffsetFetch(OffsetFetchRequest {
            member_id: member.map(str::to_owned),
            member_epoch: epoch,
            ..OffsetFetchRequest::all("g")
        })
    };
    for (member, epoch, expected, offsets) in [
        (Some("m1"), Some(1), ErrorCode::None, 1),
        (Some("m1"), Some(5), ErrorCode::StaleMemberEpoch, 0),
        (Some("nobody"), Some(1), ErrorCode::UnknownMemberId, 0),
        (None, Some(-1), ErrorCode::None, 1),
    ] {
        let rid = sim.send(fetch(member, epoch));
        let Some(Response::OffsetFetch(r)) = sim.answer(rid) else { panic!("no fetch answer") };
        assert_eq!((r.error_code, r.offsets.len()), (expected, offsets), "{member:?} {epoch:?}");
    }
}

/// A Stable classic group of one kafka-python-like member `c` on foo, owning all
/// six partitions; returns its member id and generation.
fn stable_classic_group(sim: &mut Sim) -> (String, i32) {
    use group_types::{JoinGroupRequest, MemberAssignment, ProtocolMetadata, Subscription, TopicPartitions};
    let sub =
        Subscription { version: 3, topics: vec!["foo".into()], ..Subscription::default() }.encode().unwrap();
    let join = |member: &str| JoinGroupRequest {
        group_id: "g".into(),
        member_id: member.into(),
        client_id: "consumer".into(),
        client_host: "/127.0.0.1".into(),
        protocol_type: "consumer".into(),
        protocols: vec![ProtocolMetadata::new("range", sub.clone())],
        session_timeout_ms: 45_000,
        rebalance_timeout_ms: 300_000,
        api_version: 9,
        ..JoinGroupRequest::default()
    };
    let first = sim.send(Request::JoinGroup(join("")));
    let id = sim.join_answer(first).unwrap().member_id;
    let second = sim.send(Request::JoinGroup(join(&id)));
    sim.advance_to(sim.now + 3_100);
    let generation = sim.join_answer(second).expect("joined").generation_id;
    let assignment = MemberAssignment {
        version: 3,
        partitions: vec![TopicPartitions::new("foo", (0..6).collect::<Vec<_>>())],
        user_data: None,
    };
    let mut sync = super::support::sync("g", &id, generation, &[]);
    sync.assignments =
        vec![group_types::MemberAssignmentData::new(id.as_str(), assignment.encode().unwrap())];
    let r = sim.send(Request::SyncGroup(sync));
    assert_eq!(sim.sync_answer(r).unwrap().error_code, ErrorCode::None);
    (id, generation)
}

#[test]
fn s52_online_upgrade_then_s55_downgrade_when_the_last_consumer_member_leaves() {
    let mut sim = sim();
    let (c1, generation) = stable_classic_group(&mut sim);
    let mut m2 = join("m2", &["foo"]);
    m2.server_assignor = Some("range".into());
    let r = hb(&mut sim, m2);
    assert_eq!((r.error_code, r.member_epoch), (ErrorCode::None, generation + 1), "{r:?}");
    let g = sim.core.consumer_group("g").expect("upgraded to a consumer group");
    assert_eq!(g.members.len(), 2);
    let c = g.members.iter().find(|m| m.member_id == c1).expect("the classic member kept");
    assert!(c.metadata.classic.is_some());
    assert_eq!(c.target.as_ref().map(|t| t[0].partitions.len()), Some(3));
    // The classic member is told to rejoin, and its rejoin reconciles it.
    let rid = sim.send(Request::Heartbeat(super::support::heartbeat("g", &c1, generation)));
    assert_eq!(sim.error_of(rid), ErrorCode::RebalanceInProgress);
    // m2 leaves: only a classic member remains, so the group is classic again.
    let r = hb(&mut sim, beat("m2", -1));
    assert_eq!((r.error_code, r.member_epoch), (ErrorCode::None, -1));
    assert!(sim.core.consumer_group("g").is_none());
    let classic = sim.core.group("g").expect("a classic group");
    assert_eq!(classic.state, group_types::GroupState::PreparingRebalance);
    assert_eq!(classic.generation_id, generation + 1);
    assert_eq!(classic.members.len(), 1);
}

#[rstest]
#[case::policy_downgrade_only(group_coordinator::MigrationPolicy::Downgrade)]
#[case::policy_disabled(group_coordinator::MigrationPolicy::Disabled)]
fn s53_upgrade_refused_by_policy(#[case] policy: group_coordinator::MigrationPolicy) {
    let mut config = CoordinatorConfig::default();
    config.consumer.migration_policy = policy;
    let mut sim = Sim::new(config);
    sim.core.update_metadata_image(image(&[("foo", FOO, 6)]));
    let (c1, generation) = stable_classic_group(&mut sim);
    let r = hb(&mut sim, join("m2", &["foo"]));
    assert_eq!(r.error_code, ErrorCode::GroupIdNotFound);
    assert!(sim.core.consumer_group("g").is_none());
    let rid = sim.send(Request::Heartbeat(super::support::heartbeat("g", &c1, generation)));
    assert_eq!(sim.error_of(rid), ErrorCode::None, "the classic group is untouched");
}
