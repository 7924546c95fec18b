//! The deadlines of classic members inside consumer groups, and across a
//! migration either way, through the core with simulated time (Kafka's
//! `GroupMetadataManager`: `scheduleConsumerGroupSessionTimeout` with the
//! member's own session timeout, `scheduleConsumerGroupJoinTimeoutIfAbsent`,
//! `scheduleConsumerGroupSyncTimeout`, and no revocation deadline for classic
//! members; after a downgrade, the classic group's own rebalance and sync
//! deadlines). Cases from `GroupMetadataManagerTest`'s
//! `testConsumerGroupMemberUsingClassicProtocolFencedWhen{Session,Join}Timeout`,
//! `testClassicGroupSyncToConsumerGroupRebalanceInProgress`,
//! `testClassicGroupHeartbeatToConsumerGroup{MaintainsSession,RebalanceInProgress}`
//! and the migration tests (an upgrade answering what the classic group parked,
//! a static classic member replacing the last consumer-protocol member), played
//! as scripts.

use std::sync::Arc;

use group_coordinator::{CoordinatorConfig, MetadataImage, Request, TimerKey, TopicImage};
use group_types::{
    ConsumerGroupHeartbeatRequest, ErrorCode, GroupState, JoinGroupRequest, MemberAssignment,
    ProtocolMetadata, Subscription, TopicId, TopicPartitions,
};
use rstest::rstest;

use super::support::Sim;

const FOO: TopicId = TopicId::from_u128(0xf00);
const BAR: TopicId = TopicId::from_u128(0xba4);
/// The classic member's session timeout: not the consumer group's 45 s.
const SESSION: i64 = 6_000;
/// The classic member's rebalance timeout.
const REBALANCE: i64 = 10_000;

fn image() -> Arc<MetadataImage> {
    Arc::new(MetadataImage::new(1, [TopicImage::new(FOO, "foo", 6), TopicImage::new(BAR, "bar", 3)]))
}

fn sim() -> Sim {
    let mut sim = Sim::new(CoordinatorConfig::default());
    sim.core.update_metadata_image(image());
    sim
}

/// A JoinGroup v9 of classic member `member` (empty: a new one) subscribed to
/// bar, owning `owned` of it.
pub(crate) fn classic_join(member: &str, owned: &[i32]) -> JoinGroupRequest {
    let sub = Subscription {
        version: 3,
        topics: vec!["bar".into()],
        owned_partitions: if owned.is_empty() {
            Vec::new()
        } else {
            vec![TopicPartitions::new("bar", owned.to_vec())]
        },
        ..Default::default()
    };
    JoinGroupRequest {
        group_id: "g".into(),
        member_id: member.into(),
        client_id: "consumer".into(),
        client_host: "/127.0.0.1".into(),
        protocol_type: "consumer".into(),
        protocols: vec![ProtocolMetadata::new("range", sub.encode().unwrap())],
        session_timeout_ms: SESSION as i32,
        rebalance_timeout_ms: REBALANCE as i32,
        api_version: 9,
        ..Default::default()
    }
}

/// A ConsumerGroupHeartbeat join of consumer member `member` to foo.
pub(crate) fn consumer_join(member: &str) -> ConsumerGroupHeartbeatRequest {
    ConsumerGroupHeartbeatRequest {
        group_id: "g".into(),
        member_id: member.into(),
        member_epoch: 0,
        rebalance_timeout_ms: 5_000,
        subscribed_topic_names: Some(vec!["foo".into()]),
        topic_partitions: Some(Vec::new()),
        client_id: "consumer".into(),
        client_host: "/127.0.0.1".into(),
        ..ConsumerGroupHeartbeatRequest::default()
    }
}

fn consumer_hb(sim: &mut Sim, r: ConsumerGroupHeartbeatRequest) -> ErrorCode {
    crate::consumer_scenarios::hb(sim, r).error_code
}

/// A consumer group of consumer member m1 (foo) and classic member c (bar),
/// both settled at epoch 2, at time 0; c's id.
fn mixed(sim: &mut Sim) -> String {
    assert_eq!(consumer_hb(sim, consumer_join("m1")), ErrorCode::None);
    let first = sim.send(Request::JoinGroup(classic_join("", &[])));
    assert_eq!(sim.error_of(first), ErrorCode::MemberIdRequired);
    let id = sim.join_answer(first).unwrap().member_id.to_string();
    let joined = sim.send(Request::JoinGroup(classic_join(&id, &[])));
    let joined = sim.join_answer(joined).expect("answered once written");
    assert_eq!((joined.error_code, joined.generation_id), (ErrorCode::None, 2));
    assert_eq!(sync(sim, &id, 2), ErrorCode::None);
    id
}

pub(crate) fn sync(sim: &mut Sim, member: &str, generation: i32) -> ErrorCode {
    let mut r = super::support::sync("g", member, generation, &[]);
    r.protocol_type = Some("consumer".into());
    r.protocol_name = Some("range".into());
    let rid = sim.send(Request::SyncGroup(r));
    sim.error_of(rid)
}

pub(crate) fn beat(sim: &mut Sim, member: &str, generation: i32) -> ErrorCode {
    let rid = sim.send(Request::Heartbeat(super::support::heartbeat("g", member, generation)));
    sim.error_of(rid)
}

fn in_consumer_group(sim: &Sim, member: &str) -> bool {
    sim.core.consumer_group("g").is_some_and(|g| g.members.iter().any(|m| m.member_id == member))
}

fn group_epoch(sim: &Sim) -> i32 {
    sim.core.consumer_group("g").expect("a consumer group").group_epoch
}

/// One step of a classic member's script.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// Its Heartbeat at its generation, answered so.
    Beat(ErrorCode),
    /// Its JoinGroup, owning all of bar: answered at its new generation.
    Rejoin,
    /// Its SyncGroup at its generation, answered so.
    Sync(ErrorCode),
    /// A new consumer member joins: the group epoch goes up.
    Bump,
}

use ErrorCode::{None as NONE, RebalanceInProgress as REBALANCING};
use Step::{Beat, Bump, Rejoin, Sync};

/// Plays `script` (time, step) on classic member c of a mixed group, then
/// checks that c is fenced at `fenced_at` exactly (a member at the millisecond
/// before, gone with the group epoch bumped at it, and its next Heartbeat and
/// SyncGroup answered UNKNOWN_MEMBER_ID), or is still a member at `until`.
/// A classic member never has a revocation deadline.
fn play(script: &[(i64, Step)], fenced_at: Option<i64>, until: i64) {
    let mut sim = sim();
    let c = mixed(&mut sim);
    let mut generation = 2;
    let mut joined = 1;
    let revocation = TimerKey::ConsumerRebalance(Arc::from("g"), Arc::from(c.as_str()));
    for &(at, step) in script {
        sim.advance_to(at);
        assert!(in_consumer_group(&sim, &c), "fenced before {at} ({step:?})");
        match step {
            Beat(code) => assert_eq!(beat(&mut sim, &c, generation), code, "heartbeat at {at}"),
            Sync(code) => assert_eq!(sync(&mut sim, &c, generation), code, "sync at {at}"),
            Rejoin => {
                let rid = sim.send(Request::JoinGroup(classic_join(&c, &[0, 1, 2])));
                let answer = sim.join_answer(rid).expect("a rejoin is answered once written");
                assert_eq!(answer.error_code, NONE);
                generation = answer.generation_id;
            }
            Bump => {
                joined += 1;
                assert_eq!(consumer_hb(&mut sim, consumer_join(&format!("m{joined}"))), NONE);
            }
        }
        assert_eq!(sim.timers.deadline(&revocation), None, "no revocation deadline for {c}");
    }
    match fenced_at {
        Some(at) => {
            sim.advance_to(at - 1);
            assert!(in_consumer_group(&sim, &c), "fenced before {at}");
            let epoch = group_epoch(&sim);
            let written = sim.records_written;
            sim.advance_to(at);
            assert!(!in_consumer_group(&sim, &c), "still a member at {at}");
            assert_eq!(group_epoch(&sim), epoch + 1, "the fencing bumps the group epoch");
            assert!(sim.records_written >= written + 4, "three tombstones and the epoch written");
            assert_eq!(beat(&mut sim, &c, generation), ErrorCode::UnknownMemberId);
            assert_eq!(sync(&mut sim, &c, generation), ErrorCode::UnknownMemberId);
        }
        None => {
            sim.advance_to(until);
            assert!(in_consumer_group(&sim, &c), "fenced by {until}");
        }
    }
}

#[rstest]
// The session is the classic member's own (6 s), armed by its last request.
#[case::silent_member_expires_at_its_session_timeout(&[], Some(SESSION), 0)]
#[case::heartbeats_keep_the_session(&[(3_000, Beat(NONE)), (6_000, Beat(NONE))], Some(6_000 + SESSION), 0)]
#[case::heartbeats_until_then_silent(
    &[(3_000, Beat(NONE)), (6_000, Beat(NONE)), (9_000, Beat(NONE)), (12_000, Beat(NONE))],
    None,
    12_000 + SESSION - 1
)]
// Told to rejoin at 200: the deadline is 200 + 10 s, and later answers to
// rejoin keep it (if absent), however the member keeps its session.
#[case::join_deadline_from_the_first_rebalance_answer(
    &[(100, Bump), (200, Beat(REBALANCING)), (3_000, Beat(REBALANCING)), (6_000, Beat(REBALANCING)),
      (9_000, Beat(REBALANCING))],
    Some(200 + REBALANCE),
    0
)]
#[case::rejoining_in_time_ends_the_join_deadline(
    &[(100, Bump), (200, Beat(REBALANCING)), (3_000, Beat(REBALANCING)), (6_000, Beat(REBALANCING)),
      (9_000, Rejoin), (9_100, Sync(NONE)), (12_000, Beat(NONE)),
      (15_000, Beat(NONE)), (18_000, Beat(NONE))],
    None,
    18_000 + SESSION - 1
)]
// The rejoin at 5000 starts the SyncGroup deadline (15000); heartbeats do not end it.
#[case::sync_deadline_after_a_rejoin(
    &[(100, Bump), (200, Beat(REBALANCING)), (5_000, Rejoin), (8_000, Beat(NONE)), (11_000, Beat(NONE)),
      (14_000, Beat(NONE))],
    Some(5_000 + REBALANCE),
    0
)]
// A SyncGroup refused with REBALANCE_IN_PROGRESS (the epoch moved on at 2000)
// keeps the SyncGroup deadline of the rejoin at 1000 and adds a join deadline
// (13000), later than it.
#[case::refused_sync_keeps_the_sync_deadline(
    &[(100, Bump), (200, Beat(REBALANCING)), (1_000, Rejoin), (2_000, Bump), (3_000, Sync(REBALANCING)),
      (4_000, Beat(REBALANCING)), (7_000, Beat(REBALANCING)), (10_000, Beat(REBALANCING))],
    Some(1_000 + REBALANCE),
    0
)]
#[case::refused_sync_then_a_rejoin_in_time(
    &[(100, Bump), (200, Beat(REBALANCING)), (1_000, Rejoin), (2_000, Bump), (3_000, Sync(REBALANCING)),
      (4_000, Rejoin), (4_100, Sync(NONE)), (7_000, Beat(NONE)), (10_000, Beat(NONE)), (13_000, Beat(NONE))],
    None,
    13_000 + SESSION - 1
)]
// A SyncGroup that succeeds restarts the session.
#[case::sync_restarts_the_session(&[(100, Bump), (200, Rejoin), (4_000, Sync(NONE))], Some(4_000 + SESSION), 0)]
fn classic_member_deadlines_in_a_consumer_group(
    #[case] script: &[(i64, Step)],
    #[case] fenced_at: Option<i64>,
    #[case] until: i64,
) {
    play(script, fenced_at, until);
}

/// A Stable classic group of classic member c on bar (generation 1, all of bar
/// assigned), settled at 3000 (the initial rebalance delay); c's id.
fn classic_group(sim: &mut Sim) -> String {
    let first = sim.send(Request::JoinGroup(classic_join("", &[])));
    let id = sim.join_answer(first).unwrap().member_id.to_string();
    let second = sim.send(Request::JoinGroup(classic_join(&id, &[])));
    sim.advance_to(3_000);
    assert_eq!(sim.join_answer(second).expect("joined").generation_id, 1);
    let assignment = MemberAssignment {
        version: 3,
        partitions: vec![TopicPartitions::new("bar", vec![0, 1, 2])],
        user_data: None,
    };
    let mut leader = super::support::sync("g", &id, 1, &[]);
    leader.assignments =
        vec![group_types::MemberAssignmentData::new(id.as_str(), assignment.encode().unwrap())];
    let rid = sim.send(Request::SyncGroup(leader));
    assert_eq!(sim.error_of(rid), NONE);
    id
}

/// What a classic member does after the upgrade.
#[derive(Debug, Clone, Copy)]
enum AfterUpgrade {
    Silent,
    /// Heartbeats every 3 s from 100 on, never rejoining.
    BeatsOnly,
    /// Rejoins at 100, then only heartbeats.
    RejoinsWithoutSync,
    /// Rejoins at 100, syncs at 200, then heartbeats.
    RejoinsAndSyncs,
}

/// The upgrade: consumer member m2 joins classic group g at 4000, and c becomes
/// a classic member of the consumer group, at epoch 1 behind the group's 2, with
/// its own session timeout from the conversion on (`convertToConsumerGroup`).
#[rstest]
#[case::session_from_the_conversion(AfterUpgrade::Silent, Some(4_000 + SESSION))]
#[case::join_deadline(AfterUpgrade::BeatsOnly, Some(4_100 + REBALANCE))]
#[case::sync_deadline(AfterUpgrade::RejoinsWithoutSync, Some(4_100 + REBALANCE))]
#[case::kept(AfterUpgrade::RejoinsAndSyncs, None)]
fn classic_member_deadlines_after_an_upgrade(#[case] after: AfterUpgrade, #[case] fenced_at: Option<i64>) {
    let mut sim = sim();
    let c = classic_group(&mut sim);
    sim.advance_to(4_000);
    assert_eq!(consumer_hb(&mut sim, consumer_join("m2")), NONE);
    assert_eq!(group_epoch(&sim), 2, "upgraded at generation 1, bumped by m2");
    let mut generation = 1;
    for step in 0..8 {
        let at = 4_100 + step * 3_000;
        if fenced_at.is_some_and(|f| f <= at) {
            break;
        }
        sim.advance_to(at);
        match (after, step) {
            (AfterUpgrade::Silent, _) => {}
            (AfterUpgrade::BeatsOnly, _) => assert_eq!(beat(&mut sim, &c, generation), REBALANCING),
            (AfterUpgrade::RejoinsWithoutSync | AfterUpgrade::RejoinsAndSyncs, 0) => {
                let rid = sim.send(Request::JoinGroup(classic_join(&c, &[0, 1, 2])));
                generation = sim.join_answer(rid).expect("answered").generation_id;
                assert_eq!(generation, 2);
                if matches!(after, AfterUpgrade::RejoinsAndSyncs) {
                    sim.advance_to(at + 100);
                    assert_eq!(sync(&mut sim, &c, generation), NONE);
                }
            }
            _ => assert_eq!(beat(&mut sim, &c, generation), NONE),
        }
    }
    match fenced_at {
        Some(at) => {
            sim.advance_to(at - 1);
            assert!(in_consumer_group(&sim, &c), "fenced before {at}");
            sim.advance_to(at);
            assert!(!in_consumer_group(&sim, &c), "still a member at {at}");
            assert_eq!(group_epoch(&sim), 3, "the fencing bumps the group epoch");
            assert!(in_consumer_group(&sim, "m2"), "a consumer group of m2 alone");
        }
        None => assert!(in_consumer_group(&sim, &c)),
    }
}

/// Where the classic group is when a consumer member upgrades it.
#[derive(Debug, Clone, Copy)]
enum Parked {
    /// A second member's JoinGroup waits for c to rejoin (PreparingRebalance).
    Join,
    /// A follower's SyncGroup waits for the leader's (CompletingRebalance).
    Sync,
}

/// The upgrade answers what the classic group parked with REBALANCE_IN_PROGRESS
/// (`convertToConsumerGroup`: `completeAllJoinFutures`, `completeAllSyncFutures`;
/// `testConsumerGroupHeartbeatWith{PreparingRebalance,CompletingRebalance}ClassicGroup`),
/// and the parked member is a classic member of the consumer group, deadlines and all.
#[rstest]
#[case::preparing_rebalance(Parked::Join)]
#[case::completing_rebalance(Parked::Sync)]
fn an_upgrade_answers_what_the_classic_group_parked(#[case] parked: Parked) {
    let mut sim = sim();
    let c = classic_group(&mut sim);
    sim.advance_to(4_000);
    let first = sim.send(Request::JoinGroup(classic_join("", &[])));
    let d = sim.join_answer(first).unwrap().member_id.to_string();
    let join = sim.send(Request::JoinGroup(classic_join(&d, &[])));
    let waiting = match parked {
        Parked::Join => join,
        Parked::Sync => {
            let rejoin = sim.send(Request::JoinGroup(classic_join(&c, &[0, 1, 2])));
            assert_eq!(sim.join_answer(rejoin).expect("the join phase completes").generation_id, 2);
            let follower = sim.send(Request::SyncGroup(super::support::sync("g", &d, 2, &[])));
            assert!(sim.answer(follower).is_none(), "parked until the leader syncs");
            follower
        }
    };
    assert!(sim.answer(waiting).is_none());
    sim.advance_to(4_100);
    assert_eq!(consumer_hb(&mut sim, consumer_join("m3")), NONE);
    assert_eq!(sim.error_of(waiting), REBALANCING);
    let g = sim.core.consumer_group("g").expect("upgraded");
    assert_eq!(g.members.len(), 3);
    // d never joins the consumer group's way: its session (from the upgrade) ends it.
    sim.advance_to(4_100 + SESSION - 1);
    assert!(in_consumer_group(&sim, &d));
    sim.advance_to(4_100 + SESSION);
    assert!(!in_consumer_group(&sim, &d));
}

/// What the classic member does after the downgrade.
#[derive(Debug, Clone, Copy)]
enum AfterDowngrade {
    /// Heartbeats (answered REBALANCE_IN_PROGRESS) but never rejoins.
    BeatsOnly,
    /// Rejoins at 1000 (the join phase completes: it is alone), never syncs.
    RejoinsWithoutSync,
    /// Rejoins at 1000 and syncs at 1100, then falls silent.
    RejoinsAndSyncs,
}

/// The downgrade: m1, the last consumer member, leaves at 500 and the group is
/// a classic group of c rebalancing (`convertToClassicGroup`); from there the
/// classic group's deadlines apply to c: the rebalance timeout for its rejoin,
/// the pending-sync deadline for its SyncGroup, its session.
#[rstest]
#[case::rebalance_timeout(AfterDowngrade::BeatsOnly, 500 + REBALANCE, 3)]
#[case::sync_deadline(AfterDowngrade::RejoinsWithoutSync, 1_000 + REBALANCE, 4)]
#[case::session(AfterDowngrade::RejoinsAndSyncs, 1_100 + SESSION, 4)]
fn classic_member_deadlines_after_a_downgrade(
    #[case] after: AfterDowngrade,
    #[case] removed_at: i64,
    #[case] generation_after: i32,
) {
    let mut sim = sim();
    let c = mixed(&mut sim);
    sim.advance_to(500);
    let leave = ConsumerGroupHeartbeatRequest { member_epoch: -1, ..consumer_join("m1") };
    assert_eq!(consumer_hb(&mut sim, leave), NONE);
    let g = sim.core.group("g").expect("a classic group again");
    assert_eq!((g.state, g.generation_id), (GroupState::PreparingRebalance, 2));
    match after {
        AfterDowngrade::BeatsOnly => {
            for at in [600, 3_600, 6_600, 9_600] {
                sim.advance_to(at);
                assert_eq!(beat(&mut sim, &c, 2), REBALANCING);
            }
        }
        AfterDowngrade::RejoinsWithoutSync | AfterDowngrade::RejoinsAndSyncs => {
            sim.advance_to(1_000);
            let rid = sim.send(Request::JoinGroup(classic_join(&c, &[0, 1, 2])));
            let joined = sim.join_answer(rid).expect("alone: the join phase completes");
            assert_eq!((joined.error_code, joined.generation_id), (NONE, 3));
            if matches!(after, AfterDowngrade::RejoinsWithoutSync) {
                // Heartbeats keep its session while its SyncGroup is due.
                for at in [4_000, 7_000, 10_000] {
                    sim.advance_to(at);
                    assert_eq!(beat(&mut sim, &c, 3), NONE);
                }
            } else {
                sim.advance_to(1_100);
                let mut leader = super::support::sync("g", &c, 3, &[]);
                leader.assignments = vec![group_types::MemberAssignmentData::new(c.as_str(), Vec::new())];
                let rid = sim.send(Request::SyncGroup(leader));
                assert_eq!(sim.error_of(rid), NONE);
            }
        }
    }
    sim.advance_to(removed_at - 1);
    assert!(sim.core.group("g").unwrap().members.iter().any(|m| m.member_id == c), "removed too soon");
    sim.advance_to(removed_at);
    let g = sim.core.group("g").expect("the classic group stays");
    assert!(g.members.is_empty(), "{c} still a member at {removed_at}: {g:?}");
    assert_eq!((g.state, g.generation_id), (GroupState::Empty, generation_after));
    assert_eq!(beat(&mut sim, &c, generation_after - 1), ErrorCode::UnknownMemberId);
}

/// The downgrade by a deadline: m1 falls silent while c keeps its session, and
/// m1's session expiry (the consumer group's 45 s) turns the group classic; c is
/// told to rejoin by its next heartbeat and is removed by the classic rebalance
/// timeout if it does not.
#[test]
fn a_consumer_members_expiry_downgrades_and_the_classic_rebalance_timeout_follows() {
    let mut sim = sim();
    let c = mixed(&mut sim);
    let mut at = 0;
    while at < 45_000 {
        at += 3_000;
        sim.advance_to(at);
        if sim.core.consumer_group("g").is_none() {
            break;
        }
        assert_eq!(beat(&mut sim, &c, 2), NONE, "at {at}");
    }
    let g = sim.core.group("g").expect("downgraded at m1's session expiry");
    assert_eq!((g.state, g.generation_id, g.members.len()), (GroupState::PreparingRebalance, 2, 1));
    assert_eq!(beat(&mut sim, &c, 2), REBALANCING);
    for at in [48_000, 51_000, 54_000] {
        sim.advance_to(at);
        assert_eq!(beat(&mut sim, &c, 2), REBALANCING);
    }
    sim.advance_to(45_000 + REBALANCE - 1);
    assert_eq!(sim.core.group("g").unwrap().members.len(), 1);
    sim.advance_to(45_000 + REBALANCE);
    assert!(sim.core.group("g").unwrap().members.is_empty());
}

/// A write that fails brings back the deadlines it replaced
/// (`testJoiningConsumerGroupFailingToPersistRecords`): a rejoin whose records
/// cannot be written leaves the member with its join deadline, not a sync one.
#[test]
fn a_failed_rejoin_keeps_the_join_deadline() {
    let mut sim = sim();
    let c = mixed(&mut sim);
    sim.advance_to(100);
    assert_eq!(consumer_hb(&mut sim, consumer_join("m2")), NONE);
    sim.advance_to(200);
    assert_eq!(beat(&mut sim, &c, 2), REBALANCING);
    sim.advance_to(3_000);
    assert_eq!(beat(&mut sim, &c, 2), REBALANCING);
    sim.advance_to(5_000);
    sim.fail_next_write = Some(ErrorCode::NotLeaderOrFollower);
    let rid = sim.send(Request::JoinGroup(classic_join(&c, &[0, 1, 2])));
    assert_eq!(sim.error_of(rid), ErrorCode::NotCoordinator);
    sim.advance_to(8_000);
    assert_eq!(beat(&mut sim, &c, 2), REBALANCING);
    sim.advance_to(200 + REBALANCE - 1);
    assert_eq!(beat(&mut sim, &c, 2), REBALANCING, "still at epoch 2, told to rejoin");
    sim.advance_to(200 + REBALANCE);
    assert!(!in_consumer_group(&sim, &c), "fenced by the join deadline it kept");
}

/// The same deadlines through the threaded runtime, on its injectable clock.
mod runtime {
    use std::sync::Arc;

    use group_coordinator::{CoordinatorConfig, GroupCoordinator, ManualClock};
    use group_offsets::MemoryMetadataStore;
    use group_types::{ErrorCode, GroupState, MemberAssignment, TopicPartitions};

    use super::{REBALANCE, SESSION, classic_join, consumer_join};
    use crate::support::{heartbeat, sync};

    fn open() -> (GroupCoordinator, Arc<ManualClock>) {
        let clock = Arc::new(ManualClock::new(0));
        let c = GroupCoordinator::builder(Arc::new(MemoryMetadataStore::new()), CoordinatorConfig::default())
            .clock(clock.clone())
            .metadata_image(Arc::unwrap_or_clone(super::image()))
            .open()
            .unwrap();
        (c, clock)
    }

    fn beat(c: &GroupCoordinator, member: &str, generation: i32) -> ErrorCode {
        c.handle_heartbeat(heartbeat("g", member, generation)).unwrap().error_code
    }

    /// Three heartbeats 3 s apart (what keeps a 6 s session), each answered `code`.
    fn beats(c: &GroupCoordinator, clock: &ManualClock, member: &str, generation: i32, code: ErrorCode) {
        for _ in 0..3 {
            clock.advance(3_000);
            assert_eq!(beat(c, member, generation), code);
        }
    }

    /// Still a member `ms - 1` milliseconds on, fenced at `ms`.
    fn fenced_after(c: &GroupCoordinator, clock: &ManualClock, member: &str, ms: i64, why: &str) {
        clock.advance(ms - 1);
        assert!(member_of(c, member), "fenced too soon: {why}");
        clock.advance(1);
        assert!(!member_of(c, member), "{why}");
    }

    fn member_of(c: &GroupCoordinator, member: &str) -> bool {
        c.get_consumer_group("g").is_some_and(|g| g.members.iter().any(|m| m.member_id == member))
    }

    fn epoch(c: &GroupCoordinator) -> i32 {
        c.get_consumer_group("g").expect("a consumer group").group_epoch
    }

    /// m1 (consumer, foo) and classic member c (bar) at epoch 2, at time 0.
    fn mixed(c: &GroupCoordinator) -> String {
        assert_eq!(
            c.handle_consumer_group_heartbeat(consumer_join("m1")).unwrap().error_code,
            ErrorCode::None
        );
        let first = c.handle_join_group(classic_join("", &[])).unwrap();
        let id = first.member_id.to_string();
        let joined = c.handle_join_group(classic_join(&id, &[])).unwrap();
        assert_eq!((joined.error_code, joined.generation_id), (ErrorCode::None, 2));
        assert_eq!(c.handle_sync_group(sync("g", &id, 2, &[])).unwrap().error_code, ErrorCode::None);
        id
    }

    /// A mixed group (c's id) whose epoch m2's join moved on at 0; the clock at 100.
    fn bumped() -> (GroupCoordinator, Arc<ManualClock>, String) {
        let (c, clock) = open();
        let id = mixed(&c);
        bump(&c, "m2");
        clock.advance(100);
        (c, clock, id)
    }

    fn bump(c: &GroupCoordinator, member: &str) {
        assert_eq!(
            c.handle_consumer_group_heartbeat(consumer_join(member)).unwrap().error_code,
            ErrorCode::None
        );
    }

    #[test]
    fn session_deadline() {
        let (c, clock) = open();
        let id = mixed(&c);
        fenced_after(&c, &clock, &id, SESSION, "fenced at its own session timeout");
        assert_eq!(epoch(&c), 3);
    }

    #[test]
    fn join_deadline_is_kept_by_later_answers_to_rejoin() {
        let (c, clock, id) = bumped();
        assert_eq!(beat(&c, &id, 2), ErrorCode::RebalanceInProgress);
        beats(&c, &clock, &id, 2, ErrorCode::RebalanceInProgress);
        fenced_after(&c, &clock, &id, 100 + REBALANCE - 9_100, "fenced at the first rejoin deadline");
        assert_eq!(epoch(&c), 4);
    }

    #[test]
    fn sync_deadline_after_a_rejoin() {
        let (c, clock, id) = bumped();
        let rejoined = c.handle_join_group(classic_join(&id, &[0, 1, 2])).unwrap();
        assert_eq!((rejoined.error_code, rejoined.generation_id), (ErrorCode::None, 3));
        beats(&c, &clock, &id, 3, ErrorCode::None);
        fenced_after(&c, &clock, &id, REBALANCE - 9_000, "fenced at its SyncGroup deadline");
    }

    #[test]
    fn rebalance_deadline_after_a_downgrade() {
        let (c, clock) = open();
        let id = mixed(&c);
        clock.advance(500);
        let leave = group_types::ConsumerGroupHeartbeatRequest { member_epoch: -1, ..consumer_join("m1") };
        assert_eq!(c.handle_consumer_group_heartbeat(leave).unwrap().error_code, ErrorCode::None);
        let g = c.get_group("g").expect("a classic group");
        assert_eq!(g.state, GroupState::PreparingRebalance);
        beats(&c, &clock, &id, 2, ErrorCode::RebalanceInProgress);
        clock.advance(REBALANCE - 9_000 - 1);
        assert_eq!(c.get_group("g").unwrap().members.len(), 1);
        clock.advance(1);
        let g = c.get_group("g").unwrap();
        assert_eq!((g.state, g.members.len()), (GroupState::Empty, 0), "removed by the rebalance timeout");
    }

    #[test]
    fn join_deadline_after_an_upgrade() {
        let (c, clock) = open();
        let first = c.handle_join_group(classic_join("", &[])).unwrap();
        let id = first.member_id.to_string();
        let parked = c.join_group(classic_join(&id, &[]));
        clock.advance(3_000);
        assert_eq!(parked.wait().unwrap().generation_id, 1);
        let assignment = MemberAssignment {
            version: 3,
            partitions: vec![TopicPartitions::new("bar", vec![0, 1, 2])],
            user_data: None,
        };
        let mut leader = sync("g", &id, 1, &[]);
        leader.assignments =
            vec![group_types::MemberAssignmentData::new(id.as_str(), assignment.encode().unwrap())];
        assert_eq!(c.handle_sync_group(leader).unwrap().error_code, ErrorCode::None);
        bump(&c, "m2");
        assert_eq!(epoch(&c), 2, "upgraded");
        clock.advance(100);
        assert_eq!(beat(&c, &id, 1), ErrorCode::RebalanceInProgress);
        beats(&c, &clock, &id, 1, ErrorCode::RebalanceInProgress);
        fenced_after(&c, &clock, &id, REBALANCE - 9_000, "fenced at its rejoin deadline");
        assert!(member_of(&c, "m2"));
    }
}

/// A classic member with the instance id of the last consumer-protocol member
/// replaces it and the group turns classic at once
/// (`testLastStaticConsumerProtocolMemberReplacedByClassicProtocolMember`): Stable
/// at the consumer group's epoch with the joining member holding the replaced
/// one's partitions, or, when the target assignment is stale (the joining
/// member's subscription differs, or a member left since the last target:
/// `...WhenTargetAssignmentIsStale`, KAFKA-20273), rebalancing, the join answered
/// at generation 0.
#[rstest]
#[case::same_subscription(false, false)]
#[case::new_subscription(true, false)]
#[case::stale_target(false, true)]
fn a_classic_member_replacing_the_last_consumer_member_downgrades(
    #[case] subscription_changed: bool,
    #[case] stale: bool,
) {
    let mut sim = sim();
    let m2 = ConsumerGroupHeartbeatRequest { instance_id: Some("i2".into()), ..consumer_join("m2") };
    assert_eq!(consumer_hb(&mut sim, m2.clone()), NONE);
    let first = sim.send(Request::JoinGroup(classic_join("", &[])));
    let c1 = sim.join_answer(first).unwrap().member_id.to_string();
    let joined = sim.send(Request::JoinGroup(classic_join(&c1, &[])));
    assert_eq!(sim.join_answer(joined).unwrap().generation_id, 2);
    assert_eq!(sync(&mut sim, &c1, 2), NONE);
    let settle = ConsumerGroupHeartbeatRequest {
        member_epoch: 1,
        subscribed_topic_names: None,
        topic_partitions: None,
        rebalance_timeout_ms: -1,
        ..m2
    };
    assert_eq!(consumer_hb(&mut sim, settle), NONE);
    assert_eq!(group_epoch(&sim), 2);
    if stale {
        // A member that subscribes to nothing the image has joins and leaves: the
        // leave bumps the group epoch past the target's.
        let d = ConsumerGroupHeartbeatRequest {
            subscribed_topic_names: Some(vec!["baz".into()]),
            ..consumer_join("d")
        };
        assert_eq!(consumer_hb(&mut sim, d.clone()), NONE);
        assert_eq!(consumer_hb(&mut sim, ConsumerGroupHeartbeatRequest { member_epoch: -1, ..d }), NONE);
        let g = sim.core.consumer_group("g").unwrap();
        assert_eq!((g.group_epoch, g.assignment_epoch), (4, 3));
    }
    let epoch = group_epoch(&sim);
    sim.advance_to(100);
    let topics: Vec<String> =
        if subscription_changed { vec!["foo".into(), "bar".into()] } else { vec!["foo".into()] };
    let sub = Subscription { version: 3, topics, ..Default::default() };
    let mut replacing = classic_join("", &[]);
    replacing.group_instance_id = Some("i2".into());
    replacing.protocols = vec![ProtocolMetadata::new("range", sub.encode().unwrap())];
    let rid = sim.send(Request::JoinGroup(replacing));
    let answer = sim.join_answer(rid).expect("answered once written");
    assert_eq!(answer.error_code, NONE);
    let rebalance = subscription_changed || stale;
    assert_eq!(answer.generation_id, if rebalance { 0 } else { epoch });
    assert!(sim.core.consumer_group("g").is_none(), "downgraded");
    let g = sim.core.group("g").expect("a classic group");
    let mut members: Vec<&str> = g.members.iter().map(|m| m.member_id.as_str()).collect();
    members.sort_unstable();
    let mut expected = vec![c1.as_str(), answer.member_id.as_str()];
    expected.sort_unstable();
    assert_eq!(members, expected, "m2 replaced by the joining member");
    assert_eq!(g.generation_id, epoch);
    if rebalance {
        assert_eq!(g.state, GroupState::PreparingRebalance);
    } else {
        assert_eq!(g.state, GroupState::Stable);
        let rid = sim.send(Request::SyncGroup(super::support::sync("g", &answer.member_id, 2, &[])));
        let synced = sim.sync_answer(rid).expect("answered");
        assert_eq!(synced.error_code, NONE);
        let assignment = MemberAssignment::decode(&synced.assignment).unwrap();
        assert_eq!(assignment.partitions, vec![TopicPartitions::new("foo", vec![0, 1, 2, 3, 4, 5])]);
    }
}

/// Kafka 4.3 tells a classic member to rejoin only once a newer target assignment
/// exists (KAFKA-20272: `assignmentEpoch() > memberEpoch`, where 4.2 compared the
/// group epoch): a bump by a leave, which computes no target, does not, and the
/// next consumer heartbeat, which does, does.
#[test]
fn classic_members_rejoin_only_for_a_newer_target_assignment() {
    let mut sim = sim();
    let c = mixed(&mut sim);
    let d = ConsumerGroupHeartbeatRequest {
        subscribed_topic_names: Some(vec!["baz".into()]),
        ..consumer_join("d")
    };
    assert_eq!(consumer_hb(&mut sim, d.clone()), NONE);
    assert_eq!(beat(&mut sim, &c, 2), REBALANCING, "a newer target: epoch 3");
    let rid = sim.send(Request::JoinGroup(classic_join(&c, &[0, 1, 2])));
    assert_eq!(sim.join_answer(rid).unwrap().generation_id, 3);
    assert_eq!(sync(&mut sim, &c, 3), NONE);
    assert_eq!(consumer_hb(&mut sim, ConsumerGroupHeartbeatRequest { member_epoch: -1, ..d }), NONE);
    let g = sim.core.consumer_group("g").unwrap();
    assert_eq!((g.group_epoch, g.assignment_epoch), (4, 3));
    assert_eq!(beat(&mut sim, &c, 3), NONE, "the group epoch moved, the target did not");
    assert_eq!(sync(&mut sim, &c, 3), NONE);
    let m1_epoch = sim
        .core
        .consumer_group("g")
        .unwrap()
        .members
        .iter()
        .find(|m| m.member_id == "m1")
        .unwrap()
        .member_epoch;
    let m1 = ConsumerGroupHeartbeatRequest {
        member_epoch: m1_epoch,
        subscribed_topic_names: None,
        topic_partitions: None,
        rebalance_timeout_ms: -1,
        ..consumer_join("m1")
    };
    assert_eq!(consumer_hb(&mut sim, m1), NONE);
    assert_eq!(sim.core.consumer_group("g").unwrap().assignment_epoch, 4);
    assert_eq!(beat(&mut sim, &c, 3), REBALANCING, "a newer target: epoch 4");
}
