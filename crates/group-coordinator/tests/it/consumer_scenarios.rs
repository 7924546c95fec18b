//! KIP-848 consumer groups through the core: the scenarios of
//! `kip848-semantics.md` §10, each test named after its scenario, beside the
//! oracle replay (which checks the recorded ones step by step).

use std::sync::Arc;

use group_coordinator::{CoordinatorConfig, MetadataImage, Request, Response, TopicImage};
use group_types::{
    ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse, ConsumerGroupState, ConsumerMemberState,
    ErrorCode, GroupId, GroupInstanceId, MemberId, OffsetCommitData, OffsetCommitRequest, OffsetFetchRequest,
    TopicId, TopicIdPartitions,
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
pub(crate) fn join(member: &str, topics: &[&str]) -> ConsumerGroupHeartbeatRequest {
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
pub(crate) fn beat(member: &str, epoch: i32) -> ConsumerGroupHeartbeatRequest {
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

pub(crate) fn hb(sim: &mut Sim, r: ConsumerGroupHeartbeatRequest) -> ConsumerGroupHeartbeatResponse {
    let rid = sim.send(Request::from(r));
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

/// Every answer to a member that sent its id shares the request's (a reference
/// count, not a copy): the full path, the keep-alive and a leave.
#[test]
fn heartbeat_answers_share_the_requests_member_id() {
    let mut sim = sim();
    // From a `String`: the id keeps that allocation, so its address is the request's.
    let sent = |mut r: ConsumerGroupHeartbeatRequest| {
        r.member_id = MemberId::from("m1".to_owned());
        let at = r.member_id.as_bytes().as_ptr();
        (r, at)
    };
    let shared = |answer: &ConsumerGroupHeartbeatResponse| {
        answer.member_id.as_ref().map(|m| (m.as_str().to_owned(), m.as_bytes().as_ptr()))
    };
    let (join, at) = sent(join("m1", &["foo"]));
    assert_eq!(shared(&hb(&mut sim, join)), Some(("m1".to_owned(), at)));
    let (beat_1, at) = sent(beat("m1", 1));
    let answer = hb(&mut sim, beat_1);
    assert_eq!((answer.error_code, answer.member_epoch), (ErrorCode::None, 1));
    assert_eq!(shared(&answer), Some(("m1".to_owned(), at)));
    let (leave, at) = sent(beat("m1", -1));
    assert_eq!(shared(&hb(&mut sim, leave)), Some(("m1".to_owned(), at)));
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

/// Keep-alives move the session deadline without queuing a timer each time
/// (`consumer_keep_alive`): the timer queued at the join finds the deadline
/// later and waits for it, so a member fenced is fenced at its last deadline,
/// neither at its first nor never; a shorter session set meanwhile is armed
/// at once.
#[test]
fn s28_keep_alives_move_the_session_deadline_the_timer_follows() {
    let mut sim = sim();
    hb(&mut sim, join("m1", &["foo"]));
    sim.advance_to(10_000);
    assert_eq!(hb(&mut sim, beat("m1", 1)).error_code, ErrorCode::None);
    sim.advance_to(30_000);
    assert_eq!(hb(&mut sim, beat("m1", 1)).error_code, ErrorCode::None);
    sim.advance_to(74_999);
    assert!(
        sim.core.consumer_group("g").unwrap().members.iter().any(|m| m.member_id == "m1"),
        "fenced before its last deadline (30 s + 45 s)"
    );
    sim.advance_to(75_001);
    assert!(sim.core.consumer_group("g").unwrap().members.is_empty(), "never fenced");

    // A deadline moved earlier (a shorter session set for the group) is armed
    // at once: the timer queued for the longer one would fence too late.
    let session = |ms| group_coordinator::GroupConfigOverrides {
        session_timeout_ms: Some(ms),
        heartbeat_interval_ms: Some(5_000),
        ..Default::default()
    };
    sim.core.set_group_config("g", session(60_000)).expect("within bounds");
    sim.advance_to(80_000);
    hb(&mut sim, join("m2", &["foo"]));
    sim.core.set_group_config("g", session(45_000)).expect("within bounds");
    sim.advance_to(81_000);
    let epoch = epoch_of(&sim, "m2");
    assert_eq!(hb(&mut sim, beat("m2", epoch)).error_code, ErrorCode::None);
    sim.advance_to(126_001);
    assert!(sim.core.consumer_group("g").unwrap().members.is_empty(), "fenced at the shorter deadline");
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
        r.push("foo", 0, OffsetCommitData::new(7));
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
            member_id: member.map(Into::into),
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

/// A classic JoinGroup v9 of a kafka-python-like member subscribed to foo.
fn classic_join(member: &str, rebalance_timeout_ms: i32) -> group_types::JoinGroupRequest {
    let sub = group_types::Subscription { version: 3, topics: vec!["foo".into()], ..Default::default() };
    group_types::JoinGroupRequest {
        group_id: "g".into(),
        member_id: member.into(),
        client_id: "consumer".into(),
        client_host: "/127.0.0.1".into(),
        protocol_type: "consumer".into(),
        protocols: vec![group_types::ProtocolMetadata::new("range", sub.encode().unwrap())],
        session_timeout_ms: 45_000,
        rebalance_timeout_ms,
        api_version: 9,
        ..Default::default()
    }
}

/// A Stable classic group of one kafka-python-like member `c` on foo, owning all
/// six partitions; returns its member id and generation.
fn stable_classic_group(sim: &mut Sim) -> (String, i32) {
    use group_types::{MemberAssignment, TopicPartitions};
    let join = |member: &str| classic_join(member, 300_000);
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
    (id.to_string(), generation)
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

fn with_config(f: impl FnOnce(&mut CoordinatorConfig)) -> Sim {
    let mut config = CoordinatorConfig::default();
    f(&mut config);
    let mut sim = Sim::new(config);
    sim.core.update_metadata_image(image(&[("foo", FOO, 6), ("bar", BAR, 3)]));
    sim
}

fn member<'a>(
    g: &'a group_coordinator::ConsumerGroupSnapshot,
    id: &str,
) -> &'a group_coordinator::ConsumerMemberSnapshot {
    g.members.iter().find(|m| m.member_id == id).unwrap_or_else(|| panic!("{id} is not a member: {g:?}"))
}

fn epoch_of(sim: &Sim, id: &str) -> i32 {
    member(&group(sim), id).member_epoch
}

fn group(sim: &Sim) -> group_coordinator::ConsumerGroupSnapshot {
    sim.core.consumer_group("g").expect("a consumer group")
}

/// §10 #1-#6: the service's validation, first failing check wins.
#[rstest]
#[case::s01_v1_join_without_member_id(|r: &mut ConsumerGroupHeartbeatRequest| r.member_id = MemberId::empty(), ErrorCode::InvalidRequest)]
#[case::s03_join_without_rebalance_timeout(|r: &mut ConsumerGroupHeartbeatRequest| r.rebalance_timeout_ms = -1, ErrorCode::InvalidRequest)]
#[case::s03_join_with_null_partitions(|r: &mut ConsumerGroupHeartbeatRequest| r.topic_partitions = None, ErrorCode::InvalidRequest)]
#[case::s03_join_owning_a_partition(|r: &mut ConsumerGroupHeartbeatRequest| r.topic_partitions = Some(vec![TopicIdPartitions::new(FOO, [0])]), ErrorCode::InvalidRequest)]
#[case::s04_join_without_names_or_regex(|r: &mut ConsumerGroupHeartbeatRequest| r.subscribed_topic_names = None, ErrorCode::InvalidRequest)]
#[case::s04_join_with_no_topics(|r: &mut ConsumerGroupHeartbeatRequest| r.subscribed_topic_names = Some(Vec::new()), ErrorCode::None)]
#[case::s05_empty_instance_id(|r: &mut ConsumerGroupHeartbeatRequest| r.instance_id = Some(GroupInstanceId::empty()), ErrorCode::InvalidRequest)]
#[case::s05_empty_rack(|r: &mut ConsumerGroupHeartbeatRequest| r.rack_id = Some(" ".into()), ErrorCode::InvalidRequest)]
#[case::s05_blank_group(|r: &mut ConsumerGroupHeartbeatRequest| r.group_id = "  ".into(), ErrorCode::InvalidRequest)]
#[case::s05_epoch_below_minus_two(|r: &mut ConsumerGroupHeartbeatRequest| r.member_epoch = -3, ErrorCode::InvalidRequest)]
#[case::s05_static_leave_without_instance(|r: &mut ConsumerGroupHeartbeatRequest| r.member_epoch = -2, ErrorCode::InvalidRequest)]
#[case::s06_sticky_is_not_a_server_assignor(|r: &mut ConsumerGroupHeartbeatRequest| r.server_assignor = Some("sticky".into()), ErrorCode::UnsupportedAssignor)]
#[case::s06_uniform(|r: &mut ConsumerGroupHeartbeatRequest| r.server_assignor = Some("uniform".into()), ErrorCode::None)]
#[case::s06_range(|r: &mut ConsumerGroupHeartbeatRequest| r.server_assignor = Some("range".into()), ErrorCode::None)]
fn s01_to_s06_validation(
    #[case] change: fn(&mut ConsumerGroupHeartbeatRequest),
    #[case] expected: ErrorCode,
) {
    let mut sim = sim();
    let mut r = join("m1", &["foo"]);
    change(&mut r);
    let answer = hb(&mut sim, r);
    assert_eq!(answer.error_code, expected, "{answer:?}");
    if expected != ErrorCode::None {
        assert!(answer.error_message.is_some() && answer.member_id.is_none());
        assert!(sim.core.consumer_group("g").is_none(), "a refused join creates nothing");
    }
}

#[test]
fn s02_v0_join_gets_a_generated_member_id() {
    let mut sim = sim();
    let mut r = join("", &["foo"]);
    r.api_version = 0;
    let answer = hb(&mut sim, r);
    let id = answer.member_id.clone().expect("an id");
    assert_eq!((answer.error_code, answer.member_epoch, id.len()), (ErrorCode::None, 1, 22));
    let mut again = beat(&id, 1);
    again.api_version = 0;
    assert_eq!(hb(&mut sim, again).error_code, ErrorCode::None);
}

#[test]
fn s07_consumer_protocol_disabled_is_unsupported_version() {
    let mut sim = with_config(|c| c.consumer.enabled = false);
    assert_eq!(hb(&mut sim, join("m1", &["foo"])).error_code, ErrorCode::UnsupportedVersion);
    let rid = sim.send(Request::ConsumerGroupDescribe(group_types::ConsumerGroupDescribeRequest {
        group_ids: vec!["g".into()],
        ..Default::default()
    }));
    let Some(Response::ConsumerGroupDescribe(d)) = sim.answer(rid) else { panic!("no describe answer") };
    assert_eq!(d.groups[0].error_code, ErrorCode::UnsupportedVersion);
}

#[test]
fn s09_s10_unknown_group_and_unknown_member() {
    let mut sim = sim();
    assert_eq!(hb(&mut sim, beat("m1", 5)).error_code, ErrorCode::GroupIdNotFound);
    hb(&mut sim, join("m1", &["foo"]));
    let r = hb(&mut sim, beat("nobody", 1));
    assert_eq!(r.error_code, ErrorCode::UnknownMemberId);
    assert_eq!(r.error_message.as_deref(), Some("Member nobody is not a member of group g."));
}

#[test]
fn s13_duplicate_full_heartbeat_while_revoking_is_answered_alike() {
    let mut sim = sim();
    hb(&mut sim, join("m1", &["foo"]));
    hb(&mut sim, join("m2", &["foo"]));
    let mut full = owning(beat("m1", 1), &[(FOO, &[0, 1, 2, 3, 4, 5])]);
    full.rebalance_timeout_ms = 5_000;
    full.subscribed_topic_names = Some(vec!["foo".into()]);
    let first = hb(&mut sim, full.clone());
    let written = sim.records_written;
    let second = hb(&mut sim, full);
    assert_eq!(first, second);
    assert_eq!(sim.records_written, written);
}

#[test]
fn s14_stable_member_rejoining_with_epoch_zero_keeps_its_assignment() {
    let mut sim = sim();
    hb(&mut sim, join("m1", &["foo"]));
    let r = hb(&mut sim, join("m1", &["foo"]));
    assert_eq!((r.error_code, r.member_epoch, count(&r.assignment)), (ErrorCode::None, 1, 6));
}

#[test]
fn s15_metadata_only_changes_do_not_bump() {
    let mut sim = sim();
    hb(&mut sim, join("m1", &["foo"]));
    let mut r = beat("m1", 1);
    r.rack_id = Some("rack-a".into());
    r.server_assignor = Some("range".into());
    r.rebalance_timeout_ms = 9_000;
    let written = sim.records_written;
    assert_eq!(hb(&mut sim, r).member_epoch, 1);
    assert_eq!(sim.records_written, written + 1, "one MemberMetadata record");
    assert_eq!(group(&sim).group_epoch, 1);
}

#[test]
fn s16_subscription_change_bumps_and_targets_the_new_topic() {
    let mut sim = sim();
    hb(&mut sim, join("m1", &["foo"]));
    let mut r = beat("m1", 1);
    r.subscribed_topic_names = Some(vec!["foo".into(), "bar".into()]);
    let answer = hb(&mut sim, r);
    assert_eq!((answer.member_epoch, count(&answer.assignment)), (2, 9));
    let mut same = beat("m1", 2);
    same.subscribed_topic_names = Some(vec!["bar".into(), "foo".into()]);
    hb(&mut sim, same);
    assert_eq!(group(&sim).group_epoch, 2, "the same names in another order are no change");
}

#[test]
fn s17_member_without_topics_joins_without_a_bump() {
    let mut sim = sim();
    hb(&mut sim, join("m1", &["foo"]));
    let r = hb(&mut sim, join("m2", &[]));
    assert_eq!((r.member_epoch, r.assignment.clone()), (1, Some(Vec::new())));
    assert_eq!(group(&sim).group_epoch, 1);
}

#[test]
fn s21_reconciliation_process_of_three_members() {
    // foo 6 and bar 3; m1 and m2 stable, then m3 joins: revocations first, then
    // releases, and the group ends Stable with every partition owned once.
    let mut sim = with_config(|c| c.consumer.assignors = vec!["range".into()]);
    hb(&mut sim, join("m1", &["foo", "bar"]));
    let m2 = hb(&mut sim, join("m2", &["foo", "bar"]));
    let m1 = hb(&mut sim, beat("m1", 1));
    hb(&mut sim, owning(beat("m1", 1), &[(FOO, &[0, 1, 2]), (BAR, &[0, 1])]));
    let _ = (m1, m2);
    hb(&mut sim, beat("m2", 2));
    let m3 = hb(&mut sim, join("m3", &["foo", "bar"]));
    assert_eq!((m3.member_epoch, count(&m3.assignment)), (3, 0));
    for _ in 0..4 {
        for m in ["m1", "m2", "m3"] {
            let epoch = member(&group(&sim), m).member_epoch;
            let owned = member(&group(&sim), m).assigned.clone();
            let mut r = beat(m, epoch);
            r.topic_partitions = Some(owned);
            hb(&mut sim, r);
        }
    }
    let g = group(&sim);
    assert_eq!(g.state, ConsumerGroupState::Stable, "{g:?}");
    let total: usize = g.members.iter().flat_map(|m| &m.assigned).map(|t| t.partitions.len()).sum();
    assert_eq!(total, 9);
}

#[test]
fn s23_narrowed_subscription_revokes_the_dropped_topic_at_once() {
    let mut sim = sim();
    hb(&mut sim, join("m1", &["foo", "bar"]));
    let mut r = beat("m1", 1);
    r.subscribed_topic_names = Some(vec!["foo".into()]);
    let answer = hb(&mut sim, r);
    let m1 = member(&group(&sim), "m1").clone();
    assert_eq!(m1.state, ConsumerMemberState::UnrevokedPartitions);
    assert_eq!(m1.pending_revocation, vec![TopicIdPartitions::new(BAR, 0..3)]);
    assert_eq!(count(&answer.assignment), 6, "only foo remains assigned");
}

#[rstest]
#[case::s24_partitions_added(vec![TopicImage::new(FOO, "foo", 8), TopicImage::new(BAR, "bar", 3)], true)]
#[case::s25_racks_alone_do_not_bump(vec![
    TopicImage { racks: vec![vec![std::sync::Arc::from("r1")]; 6], ..TopicImage::new(FOO, "foo", 6) },
    TopicImage::new(BAR, "bar", 3),
], false)]
fn s24_s25_metadata_changes(#[case] topics: Vec<TopicImage>, #[case] bumps: bool) {
    let mut sim = sim();
    hb(&mut sim, join("m1", &["foo"]));
    sim.core.update_metadata_image(Arc::new(MetadataImage::new(2, topics)));
    let r = hb(&mut sim, beat("m1", 1));
    assert_eq!(r.member_epoch, if bumps { 2 } else { 1 });
    if bumps {
        assert_eq!(count(&r.assignment), 8);
    }
}

#[test]
fn s27_leave_errors() {
    let mut sim = sim();
    assert_eq!(hb(&mut sim, beat("m1", -1)).error_code, ErrorCode::GroupIdNotFound);
    hb(&mut sim, join("m1", &["foo"]));
    assert_eq!(hb(&mut sim, beat("nobody", -1)).error_code, ErrorCode::UnknownMemberId);
}

#[test]
fn s29_rebalance_timeout_fences_a_member_that_does_not_revoke() {
    let mut sim = sim();
    let mut m1 = join("m1", &["foo"]);
    m1.rebalance_timeout_ms = 10_000;
    hb(&mut sim, m1);
    hb(&mut sim, join("m2", &["foo"]));
    hb(&mut sim, beat("m1", 1));
    for t in [3_000, 6_000, 9_000] {
        sim.advance_to(t);
        hb(&mut sim, beat("m1", 1));
        hb(&mut sim, beat("m2", 2));
    }
    sim.advance_to(10_001);
    let g = group(&sim);
    assert!(g.members.iter().all(|m| m.member_id != "m1"), "m1 fenced: {g:?}");
}

#[test]
fn s30_group_max_size() {
    let mut sim = with_config(|c| c.consumer.max_size = 2);
    hb(&mut sim, join("m1", &["foo"]));
    hb(&mut sim, join("m2", &["foo"]));
    let r = hb(&mut sim, join("m3", &["foo"]));
    assert_eq!(r.error_code, ErrorCode::GroupMaxSizeReached);
    assert_eq!(hb(&mut sim, join("m1", &["foo"])).error_code, ErrorCode::None, "a member may rejoin");
}

#[test]
fn s31_dynamic_group_config() {
    let mut sim = sim();
    hb(&mut sim, join("m1", &["foo"]));
    let overrides = group_coordinator::GroupConfigOverrides {
        session_timeout_ms: Some(50_000),
        heartbeat_interval_ms: Some(10_000),
        ..Default::default()
    };
    sim.core.set_group_config("g", overrides).expect("within bounds");
    let r = hb(&mut sim, beat("m1", 1));
    assert_eq!(r.heartbeat_interval_ms, 10_000);
    assert_eq!(member(&group(&sim), "m1").session_deadline_ms, Some(50_000));
    let bad = group_coordinator::GroupConfigOverrides {
        session_timeout_ms: Some(1_000),
        heartbeat_interval_ms: None,
        ..Default::default()
    };
    assert!(sim.core.set_group_config("g", bad).is_err());
}

#[test]
fn s32_assignor_failure_is_unknown_server_error_and_persists_nothing() {
    let mut sim = with_config(|c| c.consumer.assignors = vec!["failing".into()]);
    sim.core.register_server_assignor(Arc::new(super::support::FailingAssignor));
    let written = sim.records_written;
    assert_eq!(hb(&mut sim, join("m1", &["foo"])).error_code, ErrorCode::UnknownServerError);
    assert_eq!(sim.records_written, written);
    assert!(sim.core.consumer_group("g").is_none());
}

fn static_join(member: &str, instance: &str) -> ConsumerGroupHeartbeatRequest {
    ConsumerGroupHeartbeatRequest { instance_id: Some(instance.into()), ..join(member, &["foo"]) }
}

#[test]
fn s33_s34_static_temporary_leave_then_replacement_gets_the_partitions() {
    let mut sim = sim();
    hb(&mut sim, join("m1", &["foo"]));
    hb(&mut sim, static_join("m2", "i2"));
    let kept = hb(&mut sim, beat("m1", 1)).assignment.unwrap();
    hb(&mut sim, ConsumerGroupHeartbeatRequest { topic_partitions: Some(kept), ..beat("m1", 1) });
    let m2 = hb(&mut sim, ConsumerGroupHeartbeatRequest { instance_id: Some("i2".into()), ..beat("m2", 2) });
    assert_eq!(count(&m2.assignment), 3);
    let epoch = group(&sim).group_epoch;
    let left =
        hb(&mut sim, ConsumerGroupHeartbeatRequest { instance_id: Some("i2".into()), ..beat("m2", -2) });
    assert_eq!((left.error_code, left.member_epoch), (ErrorCode::None, -2));
    assert_eq!(group(&sim).group_epoch, epoch, "no bump for a temporary leave");
    let back = hb(&mut sim, static_join("m2b", "i2"));
    assert_eq!((back.error_code, back.member_epoch, count(&back.assignment)), (ErrorCode::None, epoch, 3));
    assert_eq!(group(&sim).group_epoch, epoch, "no bump for an identical replacement");
    assert_eq!(hb(&mut sim, beat("m2", 2)).error_code, ErrorCode::UnknownMemberId);
}

#[test]
fn s35_replacement_with_a_new_subscription_bumps() {
    let mut sim = sim();
    hb(&mut sim, static_join("m2", "i2"));
    hb(&mut sim, ConsumerGroupHeartbeatRequest { instance_id: Some("i2".into()), ..beat("m2", -2) });
    let mut back = static_join("m2b", "i2");
    back.subscribed_topic_names = Some(vec!["foo".into(), "bar".into()]);
    let r = hb(&mut sim, back);
    assert_eq!((r.member_epoch, count(&r.assignment)), (2, 9));
}

#[test]
fn s36_s37_instance_id_in_use_unknown_or_fenced() {
    let mut sim = sim();
    hb(&mut sim, static_join("m1", "i1"));
    assert_eq!(hb(&mut sim, static_join("m9", "i1")).error_code, ErrorCode::UnreleasedInstanceId);
    let unknown = ConsumerGroupHeartbeatRequest { instance_id: Some("i9".into()), ..beat("m1", 1) };
    assert_eq!(hb(&mut sim, unknown).error_code, ErrorCode::UnknownMemberId);
    let fenced = ConsumerGroupHeartbeatRequest { instance_id: Some("i1".into()), ..beat("m9", 1) };
    assert_eq!(hb(&mut sim, fenced).error_code, ErrorCode::FencedInstanceId);
}

#[test]
fn s38_static_permanent_leave_and_expiry_after_a_temporary_leave() {
    let mut sim = sim();
    hb(&mut sim, static_join("m1", "i1"));
    hb(&mut sim, static_join("m2", "i2"));
    let r = hb(&mut sim, ConsumerGroupHeartbeatRequest { instance_id: Some("i1".into()), ..beat("m1", -1) });
    assert_eq!(r.member_epoch, -1);
    assert_eq!(group(&sim).group_epoch, 3, "a permanent leave bumps");
    hb(&mut sim, ConsumerGroupHeartbeatRequest { instance_id: Some("i2".into()), ..beat("m2", -2) });
    sim.advance_to(45_001);
    assert!(group(&sim).members.is_empty(), "not replaced within the session: removed");
}

fn regex_join(member: &str, regex: &str) -> ConsumerGroupHeartbeatRequest {
    ConsumerGroupHeartbeatRequest {
        subscribed_topic_names: None,
        subscribed_topic_regex: Some(regex.into()),
        ..join(member, &[])
    }
}

#[test]
fn s39_invalid_regex_is_refused() {
    let mut sim = sim();
    let r = hb(&mut sim, regex_join("m1", "["));
    assert_eq!(r.error_code, ErrorCode::InvalidRegularExpression);
    assert!(
        r.error_message.unwrap().starts_with("SubscribedTopicRegex `[` is not a valid regular expression")
    );
    assert_eq!(hb(&mut sim, regex_join("m1", ".*")).error_code, ErrorCode::None);
}

#[test]
fn s40_s41_new_regex_resolves_after_the_join_and_a_known_one_bumps_at_once() {
    let mut sim = sim();
    hb(&mut sim, join("m1", &["foo"]));
    let m2 = hb(&mut sim, regex_join("m2", "ba.*"));
    assert_eq!((m2.member_epoch, count(&m2.assignment)), (1, 0), "no bump before the resolution");
    let g = group(&sim);
    assert_eq!(g.regexes, vec![("ba.*".to_owned(), vec!["bar".to_owned()])]);
    assert_eq!((g.group_epoch, g.state), (2, ConsumerGroupState::Assigning));
    assert_eq!(count(&hb(&mut sim, beat("m2", 1)).assignment), 3);
    let m3 = hb(&mut sim, regex_join("m3", "ba.*"));
    assert_eq!(m3.member_epoch, 3, "an already resolved regex bumps at once");
}

#[test]
fn s42_clearing_the_last_regex_tombstones_it_and_bumps() {
    let mut sim = sim();
    hb(&mut sim, regex_join("m1", "foo"));
    let epoch = group(&sim).group_epoch;
    let mut r = beat("m1", epoch_of(&sim, "m1"));
    r.subscribed_topic_regex = Some(String::new());
    hb(&mut sim, r);
    let g = group(&sim);
    assert!(g.regexes.is_empty());
    assert_eq!(g.group_epoch, epoch + 1);
}

#[rstest]
#[case::s43_whole_name_only("foo", &["foo"])]
#[case::s43_prefix("foo.*", &["foo", "foo-1"])]
#[case::s44_internal_topics_too(".*", &["__consumer_offsets", "foo", "foo-1"])]
fn s43_s44_regex_matches_whole_names(#[case] regex: &str, #[case] expected: &[&str]) {
    let mut sim = Sim::new(CoordinatorConfig::default());
    sim.core.update_metadata_image(image(&[
        ("foo", FOO, 1),
        ("foo-1", TopicId::from_u128(7), 1),
        ("__consumer_offsets", TopicId::from_u128(8), 1),
    ]));
    hb(&mut sim, regex_join("m1", regex));
    let g = group(&sim);
    let expected: Vec<String> = expected.iter().map(|s| (*s).to_owned()).collect();
    assert_eq!(g.regexes, vec![(regex.to_owned(), expected)]);
}

#[test]
fn s45_created_topic_is_picked_up_after_the_refresh_interval() {
    let mut sim = sim();
    hb(&mut sim, regex_join("m1", "foo.*"));
    let topics = [TopicImage::new(FOO, "foo", 6), TopicImage::new(TopicId::from_u128(9), "foo-2", 2)];
    sim.core.update_metadata_image(Arc::new(MetadataImage::new(2, topics)));
    sim.advance_to(5_000);
    let epoch = epoch_of(&sim, "m1");
    hb(&mut sim, beat("m1", epoch));
    assert_eq!(group(&sim).regexes[0].1, vec!["foo".to_owned()], "within 10 s of the last resolution");
    sim.advance_to(10_001);
    let epoch = epoch_of(&sim, "m1");
    hb(&mut sim, beat("m1", epoch));
    assert_eq!(group(&sim).regexes[0].1, vec!["foo".to_owned(), "foo-2".to_owned()]);
    let epoch = epoch_of(&sim, "m1");
    let r = hb(&mut sim, beat("m1", epoch));
    assert_eq!(count(&r.assignment), 8);
}

#[test]
fn s47_admin_commit_accepted_only_on_an_empty_group() {
    let mut sim = sim();
    let admin = || {
        let mut r =
            OffsetCommitRequest { group_id: "g".into(), api_version: 9, ..OffsetCommitRequest::default() };
        r.push("foo", 0, OffsetCommitData::new(1));
        Request::OffsetCommit(r)
    };
    let rid = sim.send(admin());
    assert_eq!(sim.error_of(rid), ErrorCode::None, "a missing group takes an admin commit");
    hb(&mut sim, join("m1", &["foo"]));
    let rid = sim.send(admin());
    assert_eq!(sim.error_of(rid), ErrorCode::UnknownMemberId);
    hb(&mut sim, beat("m1", -1));
    let rid = sim.send(admin());
    assert_eq!(sim.error_of(rid), ErrorCode::None);
}

#[test]
fn s49_list_groups_filters_by_type_and_state() {
    let mut sim = sim();
    hb(&mut sim, join("m1", &["foo"]));
    hb(&mut sim, join("m2", &["foo"]));
    let list = |sim: &mut Sim, types: &[&str], states: &[&str]| {
        let rid = sim.send(Request::ListGroups(group_types::ListGroupsRequest {
            types_filter: types.iter().map(|s| (*s).to_owned()).collect(),
            states_filter: states.iter().map(|s| (*s).to_owned()).collect(),
        }));
        let Some(Response::ListGroups(r)) = sim.answer(rid) else { panic!("no list answer") };
        r.groups.clone()
    };
    let all = list(&mut sim, &["Consumer"], &[]);
    assert_eq!(all.len(), 1);
    assert_eq!((all[0].group_type.as_str(), all[0].protocol_type.as_str()), ("consumer", "consumer"));
    assert!(list(&mut sim, &["Invalid"], &[]).is_empty());
    assert!(list(&mut sim, &["classic"], &[]).is_empty());
    assert_eq!(list(&mut sim, &[], &["reconciling"]).len(), 1);
}

#[test]
fn s50_describe_errors() {
    let mut sim = sim();
    hb(&mut sim, join("m1", &["foo"]));
    let mut simple =
        OffsetCommitRequest { group_id: "c".into(), api_version: 9, ..OffsetCommitRequest::default() };
    simple.push("foo", 0, OffsetCommitData::new(1));
    let rid = sim.send(Request::OffsetCommit(simple));
    assert_eq!(sim.error_of(rid), ErrorCode::None, "a simple classic group");
    let rid = sim.send(Request::ConsumerGroupDescribe(group_types::ConsumerGroupDescribeRequest {
        group_ids: vec!["g".into(), "missing".into(), "c".into(), GroupId::empty()],
        api_version: 1,
        ..Default::default()
    }));
    let Some(Response::ConsumerGroupDescribe(d)) = sim.answer(rid) else { panic!("no describe answer") };
    let codes: Vec<ErrorCode> = d.groups.iter().map(|g| g.error_code).collect();
    assert_eq!(
        codes,
        [ErrorCode::None, ErrorCode::GroupIdNotFound, ErrorCode::GroupIdNotFound, ErrorCode::InvalidGroupId]
    );
    assert_eq!(d.groups[2].error_message.as_deref(), Some("Group c is not a consumer group."));
    assert_eq!(d.groups[0].members[0].assignment[0].topic_name, "foo");
    assert_eq!(d.groups[0].members[0].member_type, 1);
}

#[test]
fn s51_describe_groups_and_delete_on_a_consumer_group() {
    let mut sim = sim();
    hb(&mut sim, join("m1", &["foo"]));
    for (version, code) in [(6, ErrorCode::GroupIdNotFound), (5, ErrorCode::None)] {
        let rid = sim.send(Request::DescribeGroups(group_types::DescribeGroupsRequest {
            group_ids: vec!["g".into()],
            api_version: version,
            ..Default::default()
        }));
        let Some(Response::DescribeGroups(d)) = sim.answer(rid) else { panic!("no answer") };
        assert_eq!((d.groups[0].error_code, d.groups[0].group_state.as_str()), (code, "Dead"));
    }
    let delete = |sim: &mut Sim| {
        let rid =
            sim.send(Request::DeleteGroups(group_types::DeleteGroupsRequest { group_ids: vec!["g".into()] }));
        let Some(Response::DeleteGroups(d)) = sim.answer(rid) else { panic!("no answer") };
        d.results[0].error_code
    };
    assert_eq!(delete(&mut sim), ErrorCode::NonEmptyGroup);
    hb(&mut sim, beat("m1", -1));
    assert_eq!(delete(&mut sim), ErrorCode::None);
    assert!(sim.core.consumer_group("g").is_none() && sim.core.group("g").is_none());
}

#[test]
fn s54_empty_groups_convert_either_way() {
    let mut sim = sim();
    hb(&mut sim, join("m1", &["foo"]));
    hb(&mut sim, beat("m1", -1));
    let mut classic = super::support::join("g", "");
    (classic.session_timeout_ms, classic.api_version) = (45_000, 9);
    let rid = sim.send(Request::JoinGroup(classic));
    assert_eq!(sim.error_of(rid), ErrorCode::MemberIdRequired);
    assert!(sim.core.consumer_group("g").is_none(), "the empty consumer group became classic");
    assert!(sim.core.group("g").is_some());
    let r = hb(&mut sim, join("m2", &["foo"]));
    assert_eq!(r.error_code, ErrorCode::None, "an empty classic group becomes a consumer group");
}

#[test]
fn s56_s57_classic_member_joins_a_consumer_group() {
    let mut sim = with_config(|c| c.consumer.assignors = vec!["range".into()]);
    hb(&mut sim, join("m1", &["foo"]));
    let classic = |member: &str| classic_join(member, 10_000);
    let first = sim.send(Request::JoinGroup(classic("")));
    assert_eq!(sim.error_of(first), ErrorCode::MemberIdRequired);
    let id = sim.join_answer(first).unwrap().member_id;
    let joined = sim.send(Request::JoinGroup(classic(&id)));
    let answer = sim.join_answer(joined).expect("answered once written");
    assert_eq!((answer.error_code, answer.generation_id), (ErrorCode::None, 2));
    assert_eq!(answer.protocol_name.as_deref(), Some("range"));
    let sync = sim.send(Request::SyncGroup(super::support::sync("g", &id, 2, &[])));
    assert_eq!(sim.sync_answer(sync).unwrap().error_code, ErrorCode::None);
    // m1 revokes; the classic member is told to rejoin and then gets its share.
    let kept = hb(&mut sim, beat("m1", 1)).assignment.unwrap();
    hb(&mut sim, ConsumerGroupHeartbeatRequest { topic_partitions: Some(kept), ..beat("m1", 1) });
    let rid = sim.send(Request::Heartbeat(super::support::heartbeat("g", &id, 2)));
    assert_eq!(sim.error_of(rid), ErrorCode::RebalanceInProgress);
    let rejoined = sim.send(Request::JoinGroup(classic(&id)));
    assert_eq!(sim.join_answer(rejoined).unwrap().generation_id, 2);
    let sync = sim.send(Request::SyncGroup(super::support::sync("g", &id, 2, &[])));
    let assignment =
        group_types::MemberAssignment::decode(&sim.sync_answer(sync).unwrap().assignment).unwrap();
    assert_eq!(assignment.topic_partitions().len(), 3);
    assert_eq!(group(&sim).state, ConsumerGroupState::Stable);
    // A classic member that never rejoins after a bump is fenced by its join deadline.
    hb(&mut sim, join("m3", &["foo"]));
    let rid = sim.send(Request::Heartbeat(super::support::heartbeat("g", &id, 2)));
    assert_eq!(sim.error_of(rid), ErrorCode::RebalanceInProgress);
    let at = sim.now + 10_001;
    sim.advance_to(at);
    assert!(group(&sim).members.iter().all(|m| m.member_id != id), "fenced by its join deadline");
}

#[rstest]
#[case::defaults(|_: &mut group_coordinator::ConsumerGroupConfig| {}, true)]
#[case::session_below_min(|c: &mut group_coordinator::ConsumerGroupConfig| c.session_timeout_ms = 44_999, false)]
#[case::session_above_max(|c: &mut group_coordinator::ConsumerGroupConfig| c.session_timeout_ms = 60_001, false)]
#[case::interval_not_below_session(|c: &mut group_coordinator::ConsumerGroupConfig| {
    c.min_heartbeat_interval_ms = 1;
    c.max_heartbeat_interval_ms = 100_000;
    c.heartbeat_interval_ms = 45_000;
}, false)]
#[case::zero_max_size(|c: &mut group_coordinator::ConsumerGroupConfig| c.max_size = 0, false)]
#[case::duplicate_assignors(|c: &mut group_coordinator::ConsumerGroupConfig| c.assignors = vec!["range".into(), "range".into()], false)]
#[case::no_assignor(|c: &mut group_coordinator::ConsumerGroupConfig| c.assignors.clear(), false)]
#[case::regex_refresh_too_often(|c: &mut group_coordinator::ConsumerGroupConfig| c.regex_refresh_interval_ms = 9_999, false)]
fn consumer_settings_keep_kafkas_bounds(
    #[case] change: fn(&mut group_coordinator::ConsumerGroupConfig),
    #[case] ok: bool,
) {
    let mut config = CoordinatorConfig::default();
    change(&mut config.consumer);
    assert_eq!(config.consumer.validate().is_ok(), ok);
    let opened =
        group_coordinator::GroupCoordinator::new(Arc::new(group_offsets::MemoryMetadataStore::new()), config);
    assert_eq!(opened.is_ok(), ok, "the coordinator refuses to open with a bad setting");
    if let Ok(c) = opened {
        c.stop();
    }
}

#[rstest]
#[case("disabled", group_coordinator::MigrationPolicy::Disabled)]
#[case("UPGRADE", group_coordinator::MigrationPolicy::Upgrade)]
#[case("Downgrade", group_coordinator::MigrationPolicy::Downgrade)]
#[case("bidirectional", group_coordinator::MigrationPolicy::Bidirectional)]
fn migration_policies_parse_case_insensitively(
    #[case] name: &str,
    #[case] policy: group_coordinator::MigrationPolicy,
) {
    assert_eq!(name.parse::<group_coordinator::MigrationPolicy>(), Ok(policy));
    assert!("sideways".parse::<group_coordinator::MigrationPolicy>().is_err());
}
