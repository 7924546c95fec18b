//! KIP-1263's assignment batching through the core: a group computes its next
//! target assignment only once `<kind>.assignment.interval.ms` has passed since
//! the last one was computed; until then members reconcile towards the last
//! target, at its epoch. Kafka's `GroupMetadataManagerTest` cases
//! (`testConsumerGroupAssignmentInterval`, `testShareGroupAssignmentInterval`,
//! `testShareGroupHeartbeatDoesNotBumpGroupEpochDuringAssignmentDelay`,
//! `testLastStaticConsumerProtocolMemberReplacedByClassicProtocolMemberWhenTargetAssignmentIsMissing`),
//! each with batching off (this build's default, Kafka 4.2's behaviour) and on.
//! Epochs are Kafka 4.2.1's: a group's first epoch is 1, not 4.3's 2 (KAFKA-20268).

use std::sync::Arc;

use group_coordinator::{
    CoordinatorConfig, GroupConfigOverrides, MetadataImage, Request, Response, TopicImage,
};
use group_offsets::{ModernGroupRecord, Record};
use group_types::{
    ConsumerGroupHeartbeatRequest, ConsumerGroupState, ErrorCode, GroupId, GroupState, JoinGroupRequest,
    MemberId, ProtocolMetadata, ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse, Subscription,
    TopicId, TopicIdPartitions,
};
use rstest::rstest;

use super::classic_timers::{beat as classic_beat, classic_join, sync as classic_sync};
use super::consumer_scenarios::{beat, hb, join as join_to};
use super::support::Sim;

const FOO: TopicId = TopicId::from_u128(0xf00);
const BAR: TopicId = TopicId::from_u128(0xba4);

/// When the tests start: a target computed at time 0 would count as "time
/// unknown", which never delays the next (`canComputeNextTargetAssignment`).
const T0: i64 = 1_000_000;

/// A core at [`T0`] with topics foo (6 partitions) and bar (3, which classic
/// members subscribe to) whose consumer and share
/// groups batch assignments every `interval` ms (the node's setting).
fn sim(interval: i32) -> Sim {
    let mut config = CoordinatorConfig::default();
    config.share.enabled = true;
    config.group_config_bounds.consumer_assignment_interval_ms.default = interval;
    config.group_config_bounds.share_assignment_interval_ms.default = interval;
    let mut sim = Sim::new(config);
    sim.core.update_metadata_image(Arc::new(MetadataImage::new(
        1,
        [TopicImage::new(FOO, "foo", 6), TopicImage::new(BAR, "bar", 3)],
    )));
    sim.advance_to(T0);
    sim
}

/// A join of `member` to foo, asking for the range assignor (as Kafka's test does).
fn join(member: &str) -> ConsumerGroupHeartbeatRequest {
    ConsumerGroupHeartbeatRequest { server_assignor: Some("range".into()), ..join_to(member, &["foo"]) }
}

fn share_hb(sim: &mut Sim, member: &str, epoch: i32) -> ShareGroupHeartbeatResponse {
    let r = ShareGroupHeartbeatRequest {
        group_id: GroupId::from("g"),
        member_id: MemberId::from(member),
        member_epoch: epoch,
        subscribed_topic_names: (epoch == 0).then(|| vec!["foo".into()]),
        client_id: "consumer".into(),
        client_host: "/127.0.0.1".into(),
        ..ShareGroupHeartbeatRequest::default()
    };
    let rid = sim.send(Request::from(r));
    match sim.answer(rid) {
        Some(Response::ShareGroupHeartbeat(r)) => r.clone(),
        other => panic!("share heartbeat answered {other:?}"),
    }
}

fn parts(topics: &[TopicIdPartitions]) -> String {
    let all: Vec<String> = topics.iter().flat_map(|t| t.partitions.iter().map(|p| p.to_string())).collect();
    format!("[{}]", all.join(","))
}

/// A record as the tests compare it: its kind, key and the values that matter here
/// (a target's timestamp as `@` milliseconds after [`T0`]).
fn show(record: &Record) -> String {
    use ModernGroupRecord as M;
    let Record::Modern(record) = record else { return format!("{record:?}") };
    match record {
        M::GroupMetadata { value: Some(v), .. } => format!("GroupMetadata {}", v.epoch),
        M::ShareGroupMetadata { value: Some(v), .. } => format!("ShareGroupMetadata {}", v.epoch),
        M::MemberMetadata { member_id, value: Some(_), .. } => format!("MemberMetadata {member_id}"),
        M::ShareMemberMetadata { member_id, value: Some(_), .. } => {
            format!("ShareMemberMetadata {member_id}")
        }
        M::TargetAssignmentMetadata { value: Some(v), .. } => {
            format!("TargetAssignmentMetadata {} @{}", v.assignment_epoch, v.assignment_timestamp_ms - T0)
        }
        M::ShareTargetAssignmentMetadata { value: Some(v), .. } => {
            format!(
                "ShareTargetAssignmentMetadata {} @{}",
                v.assignment_epoch,
                v.assignment_timestamp_ms - T0
            )
        }
        M::TargetAssignmentMember { member_id, value: Some(v), .. } => {
            format!("TargetAssignmentMember {member_id} {}", parts(v))
        }
        M::ShareTargetAssignmentMember { member_id, value: Some(v), .. } => {
            format!("ShareTargetAssignmentMember {member_id} {}", parts(v))
        }
        M::CurrentMemberAssignment { member_id, value: Some(v), .. } => format!(
            "CurrentMemberAssignment {member_id} {} {:?} {}",
            v.member_epoch,
            v.state,
            parts(&v.assigned)
        ),
        M::ShareCurrentMemberAssignment { member_id, value: Some(v), .. } => {
            format!("ShareCurrentMemberAssignment {member_id} {} {}", v.member_epoch, parts(&v.assigned))
        }
        M::ShareStatePartitionMetadata { .. } => "ShareStatePartitionMetadata".to_owned(),
        other => format!("{other:?}"),
    }
}

/// The records written since `from` (an index into `sim.log`).
fn written_since(sim: &Sim, from: usize) -> Vec<String> {
    sim.log[from..].iter().map(show).collect()
}

/// `GroupMetadataManagerTest.testConsumerGroupAssignmentInterval`: member 1 gets
/// its assignment at once; member 2, joining 5 ms before the interval is over,
/// joins at the last target's epoch with nothing and the group waits in
/// Assigning; its next heartbeat after the interval computes the new target.
/// Batching off (this build's default), member 2's join computes it at once; at
/// Kafka 4.3's default of 1 s and at the Kafka test's 5 s, it waits.
#[rstest]
#[case::batching_off(0)]
#[case::kafka_4_3_default(1_000)]
#[case::batching_every_5s(5_000)]
fn consumer_group_assignment_interval(#[case] interval: i32) {
    let batching = interval > 0;
    // When member 2 joins and beats again: 5 ms before and after the interval.
    let wait = if batching { i64::from(interval) } else { 5_000 };
    let (before, after) = (wait - 5, wait + 5);
    let mut sim = sim(interval);
    let r1 = hb(&mut sim, join("m1"));
    assert_eq!((r1.error_code, r1.member_epoch), (ErrorCode::None, 1));
    assert_eq!(r1.assignment, Some(vec![TopicIdPartitions::new(FOO, 0..6)]));
    assert_eq!(
        written_since(&sim, 0),
        [
            "MemberMetadata m1",
            "GroupMetadata 1",
            "TargetAssignmentMember m1 [0,1,2,3,4,5]",
            "TargetAssignmentMetadata 1 @0",
            "CurrentMemberAssignment m1 1 Stable [0,1,2,3,4,5]",
        ]
    );

    // Just before the interval is over, member 2 joins.
    sim.advance_to(T0 + before);
    let from = sim.log.len();
    let r2 = hb(&mut sim, join("m2"));
    assert_eq!((r2.member_epoch, r2.assignment), (if batching { 1 } else { 2 }, Some(Vec::new())));
    let expected: Vec<String> = if batching {
        vec![
            "MemberMetadata m2".into(),
            "GroupMetadata 2".into(),
            "CurrentMemberAssignment m2 1 Stable []".into(),
        ]
    } else {
        vec![
            "MemberMetadata m2".into(),
            "GroupMetadata 2".into(),
            "TargetAssignmentMember m1 [0,1,2]".into(),
            "TargetAssignmentMember m2 [3,4,5]".into(),
            format!("TargetAssignmentMetadata 2 @{before}"),
            "CurrentMemberAssignment m2 2 UnreleasedPartitions []".into(),
        ]
    };
    assert_eq!(written_since(&sim, from), expected);
    let g = sim.core.consumer_group("g").expect("a consumer group");
    let assigning = (ConsumerGroupState::Assigning, 2, 1);
    let reconciling = (ConsumerGroupState::Reconciling, 2, 2);
    assert_eq!((g.state, g.group_epoch, g.assignment_epoch), if batching { assigning } else { reconciling });

    // While the target waits, member 1 keeps what it has and writes nothing.
    let from = sim.log.len();
    let r = hb(&mut sim, beat("m1", 1));
    assert_eq!(r.member_epoch, 1);
    if batching {
        assert_eq!((r.assignment, written_since(&sim, from)), (None, Vec::<String>::new()));
    } else {
        assert_eq!(r.assignment, Some(vec![TopicIdPartitions::new(FOO, 0..3)]), "asked to revoke");
    }

    // The interval is over: member 2's next heartbeat computes the new target.
    sim.advance_to(T0 + after);
    let from = sim.log.len();
    let r3 = hb(&mut sim, beat("m2", r2.member_epoch));
    assert_eq!((r3.error_code, r3.member_epoch, r3.assignment), (ErrorCode::None, 2, None));
    if batching {
        assert_eq!(
            written_since(&sim, from),
            [
                "TargetAssignmentMember m1 [0,1,2]",
                "TargetAssignmentMember m2 [3,4,5]",
                &format!("TargetAssignmentMetadata 2 @{after}"),
                "CurrentMemberAssignment m2 2 UnreleasedPartitions []",
            ]
        );
    } else {
        assert!(!written_since(&sim, from).iter().any(|r| r.starts_with("Target")), "no new target");
    }
}

/// Member `member` of share group `g` at `epoch`, with foo's partitions
/// initialized by the share coordinator as soon as the group asks.
fn share_group_with_initialized_foo(sim: &mut Sim) {
    let r = share_hb(sim, "m1", 0);
    assert_eq!((r.error_code, r.member_epoch), (ErrorCode::None, 1));
    let asked = sim.core.take_share_state_initializations();
    assert_eq!(asked.len(), 1, "{asked:?}");
    let now = sim.now;
    let fx = sim.core.share_group_state_initialized(now, "g", &[(FOO, (0..6).collect())], true);
    sim.apply(fx);
}

/// `GroupMetadataManagerTest.testShareGroupAssignmentInterval`: member 1 holds
/// foo; member 2, joining 5 ms before the interval is over, joins at the last
/// target's epoch with nothing; its heartbeat after the interval computes the
/// new target, which shares foo out. Batching off, its join does at once.
/// The group's own `share.assignment.interval.ms` (set once member 1 holds foo)
/// takes effect from the next heartbeat, over the node's 0.
#[rstest]
#[case::batching_off(None)]
#[case::batching_every_5s(Some(5_000))]
fn share_group_assignment_interval(#[case] interval: Option<i32>) {
    let mut sim = sim(0);
    share_group_with_initialized_foo(&mut sim);
    let r1 = share_hb(&mut sim, "m1", 1);
    assert_eq!(r1.member_epoch, 2);
    assert_eq!(r1.assignment, Some(vec![TopicIdPartitions::new(FOO, 0..6)]));
    let overrides = GroupConfigOverrides { share_assignment_interval_ms: interval, ..Default::default() };
    sim.core.set_group_config("g", overrides).expect("within the node's bounds");
    let batching = interval.is_some();

    sim.advance_to(T0 + 4_995);
    let from = sim.log.len();
    let r2 = share_hb(&mut sim, "m2", 0);
    // The simple assignor shares foo out as Java's hash order says: m2's half is
    // read from the answer that gives it, m1 keeps the rest.
    let split = |r: &ShareGroupHeartbeatResponse| {
        let mine = r.assignment.clone().expect("an assignment");
        let theirs: Vec<i32> = (0..6).filter(|p| !mine.iter().any(|t| t.partitions.contains(p))).collect();
        assert_eq!(theirs.len(), 3, "foo shared out evenly: {mine:?}");
        (parts(&mine), parts(&[TopicIdPartitions::new(FOO, theirs)]))
    };
    let new_target = |epoch: i32, at: i64, (m2, m1): &(String, String)| {
        vec![
            format!("ShareTargetAssignmentMember m1 {m1}"),
            format!("ShareTargetAssignmentMember m2 {m2}"),
            format!("ShareTargetAssignmentMetadata {epoch} @{at}"),
            format!("ShareCurrentMemberAssignment m2 {epoch} {m2}"),
        ]
    };
    let joined = ["ShareMemberMetadata m2".to_owned(), "ShareGroupMetadata 3".to_owned()];
    if batching {
        assert_eq!((r2.member_epoch, r2.assignment.clone()), (2, Some(Vec::new())));
        assert_eq!(
            written_since(&sim, from),
            [&joined[..], &["ShareCurrentMemberAssignment m2 2 []".to_owned()]].concat()
        );
    } else {
        assert_eq!(r2.member_epoch, 3);
        assert_eq!(written_since(&sim, from), [&joined[..], &new_target(3, 4_995, &split(&r2))].concat());
    }

    sim.advance_to(T0 + 5_005);
    let from = sim.log.len();
    let r3 = share_hb(&mut sim, "m2", r2.member_epoch);
    assert_eq!(r3.member_epoch, 3);
    if batching {
        assert_eq!(written_since(&sim, from), new_target(3, 5_005, &split(&r3)));
    } else {
        assert_eq!((r3.assignment, written_since(&sim, from)), (None, Vec::<String>::new()));
    }
}

/// `GroupMetadataManagerTest.testShareGroupHeartbeatDoesNotBumpGroupEpochDuringAssignmentDelay`
/// (KAFKA-20291 2/3): partitions initialized while the next target waits bump the
/// group epoch once, not at every heartbeat; the target comes after the interval.
#[test]
fn share_group_epoch_is_bumped_once_while_the_target_waits() {
    let mut sim = sim(5_000);
    share_group_with_initialized_foo(&mut sim);
    sim.advance_to(T0 + 10);
    let from = sim.log.len();
    let r = share_hb(&mut sim, "m1", 1);
    assert_eq!((r.member_epoch, r.assignment), (1, None));
    assert_eq!(written_since(&sim, from), ["ShareGroupMetadata 2"]);

    sim.advance_to(T0 + 20);
    let from = sim.log.len();
    assert_eq!(share_hb(&mut sim, "m1", 1).member_epoch, 1);
    assert_eq!(written_since(&sim, from), Vec::<String>::new(), "not bumped again");

    sim.advance_to(T0 + 5_000);
    let r = share_hb(&mut sim, "m1", 1);
    assert_eq!((r.member_epoch, r.assignment), (2, Some(vec![TopicIdPartitions::new(FOO, 0..6)])));
}

/// A JoinGroup of a new classic member, answered MEMBER_ID_REQUIRED, then again
/// with its id: its generation and id.
fn classic_member_joins(sim: &mut Sim, mut join: JoinGroupRequest) -> (i32, String) {
    let first = sim.send(Request::JoinGroup(join.clone()));
    assert_eq!(sim.error_of(first), ErrorCode::MemberIdRequired);
    join.member_id = sim.join_answer(first).expect("answered").member_id;
    let again = sim.send(Request::JoinGroup(join.clone()));
    let answer = sim.join_answer(again).expect("answered once written");
    assert_eq!(answer.error_code, ErrorCode::None);
    (answer.generation_id, join.member_id.to_string())
}

/// KAFKA-20272 where batching makes it matter: a classic member of a consumer
/// group is told to rejoin only once a newer target assignment exists, so a
/// consumer member's join whose target waits for the interval leaves it be, and
/// the heartbeat that computes the target after the interval makes it rejoin.
#[rstest]
#[case::batching_off(0)]
#[case::batching_every_5s(5_000)]
fn classic_members_rejoin_when_the_delayed_target_comes(#[case] interval: i32) {
    let batching = interval > 0;
    let mut sim = sim(interval);
    assert_eq!(hb(&mut sim, join("m1")).member_epoch, 1);
    sim.advance_to(T0 + 5_000);
    let (generation, c) = classic_member_joins(&mut sim, classic_join("", &[]));
    assert_eq!(generation, 2);
    assert_eq!(classic_sync(&mut sim, &c, 2), ErrorCode::None);

    sim.advance_to(T0 + 5_100);
    assert_eq!(hb(&mut sim, join("m2")).error_code, ErrorCode::None);
    let g = sim.core.consumer_group("g").expect("a consumer group");
    assert_eq!((g.group_epoch, g.assignment_epoch), (3, if batching { 2 } else { 3 }));
    let expected = if batching { ErrorCode::None } else { ErrorCode::RebalanceInProgress };
    assert_eq!(classic_beat(&mut sim, &c, 2), expected, "rejoin only for a newer target");

    sim.advance_to(T0 + 10_000);
    assert_eq!(hb(&mut sim, beat("m2", g.assignment_epoch)).error_code, ErrorCode::None);
    assert_eq!(sim.core.consumer_group("g").expect("a consumer group").assignment_epoch, 3);
    assert_eq!(classic_beat(&mut sim, &c, 2), ErrorCode::RebalanceInProgress);
}

/// `GroupMetadataManagerTest.testLastStaticConsumerProtocolMemberReplacedByClassicProtocolMemberWhenTargetAssignmentIsMissing`
/// (KAFKA-20273): a classic member joined while the target waits has none; a
/// classic member replacing the last consumer-protocol member by its instance id
/// turns the group classic, which rebalances because the target is stale (the
/// join answered at generation 0). Batching off, the classic member's join
/// computed the target: the classic group is Stable.
#[rstest]
#[case::batching_off(0)]
#[case::batching_every_5s(5_000)]
fn a_downgrade_with_a_stale_target_rebalances(#[case] interval: i32) {
    let batching = interval > 0;
    let mut sim = sim(interval);
    let m2 = ConsumerGroupHeartbeatRequest { instance_id: Some("i2".into()), ..join("m2") };
    assert_eq!(hb(&mut sim, m2).member_epoch, 1);
    sim.advance_to(T0 + 100);
    let (generation, c1) = classic_member_joins(&mut sim, classic_join("", &[]));
    assert_eq!(generation, if batching { 1 } else { 2 });
    let g = sim.core.consumer_group("g").expect("a consumer group");
    assert_eq!((g.group_epoch, g.assignment_epoch), (2, if batching { 1 } else { 2 }));

    sim.advance_to(T0 + 200);
    // m2's subscription, so that only the target's staleness can call a rebalance.
    let foo = Subscription { version: 3, topics: vec!["foo".into()], ..Default::default() };
    let mut replacing = classic_join("", &[]);
    replacing.group_instance_id = Some("i2".into());
    replacing.protocols = vec![ProtocolMetadata::new("range", foo.encode().expect("encodes"))];
    let rid = sim.send(Request::JoinGroup(replacing));
    let answer = sim.join_answer(rid).expect("answered once written");
    assert_eq!(answer.error_code, ErrorCode::None);
    assert_eq!(answer.generation_id, if batching { 0 } else { 2 });
    assert!(sim.core.consumer_group("g").is_none(), "downgraded");
    let g = sim.core.group("g").expect("a classic group");
    let state = if batching { GroupState::PreparingRebalance } else { GroupState::Stable };
    assert_eq!((g.state, g.members.len()), (state, 2), "{c1} and the replacing member");
}

/// How a reload sees the target assignment's timestamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stored {
    /// As written (through the record codec, FORMAT_V3).
    AsWritten,
    /// Unknown: 0, as a record written before the timestamp was kept reads.
    Unknown,
}

/// Every record written so far, through the codec (encoded and decoded as an
/// engine stores them), the targets' timestamps as `stored` says.
fn stored_records(sim: &Sim, stored: Stored) -> Vec<Record> {
    let mut records = group_offsets::codec::decode_records(&group_offsets::codec::encode_records(&sim.log))
        .expect("decodes what it encoded");
    if stored == Stored::Unknown {
        for r in &mut records {
            if let Record::Modern(
                ModernGroupRecord::TargetAssignmentMetadata { value: Some(v), .. }
                | ModernGroupRecord::ShareTargetAssignmentMetadata { value: Some(v), .. },
            ) = r
            {
                v.assignment_timestamp_ms = 0;
            }
        }
    }
    records
}

/// A new core (the same config, image and time) that loaded `records`, as a
/// restart or a partition move does.
fn reloaded(sim: &Sim, records: Vec<Record>) -> Sim {
    let mut next = Sim::new(sim.core.config().clone());
    next.core.update_metadata_image(Arc::new(MetadataImage::new(
        1,
        [TopicImage::new(FOO, "foo", 6), TopicImage::new(BAR, "bar", 3)],
    )));
    next.advance_to(sim.now);
    let fx = next.core.load(sim.now, group_offsets::fold(records));
    next.apply(fx);
    next
}

/// The target's timestamp survives a reload (it is in the target assignment
/// metadata record and replayed from it): a group whose next target waits still
/// waits after a restart, and gets it once the interval is over. A record that
/// carries no timestamp (0) never delays the next target
/// (`canComputeNextTargetAssignment`). Consumer and share groups.
#[rstest]
#[case::consumer_as_written(false, Stored::AsWritten)]
#[case::consumer_unknown(false, Stored::Unknown)]
#[case::share_as_written(true, Stored::AsWritten)]
#[case::share_unknown(true, Stored::Unknown)]
fn the_assignment_timestamp_survives_a_reload(#[case] share: bool, #[case] stored: Stored) {
    let mut sim = sim(5_000);
    // m1 holds its target from T0; m2 joins at T0 + 100, its target waits.
    let epoch = if share {
        share_group_with_initialized_foo(&mut sim);
        sim.advance_to(T0 + 100);
        share_hb(&mut sim, "m2", 0).member_epoch
    } else {
        hb(&mut sim, join("m1"));
        sim.advance_to(T0 + 100);
        hb(&mut sim, join("m2")).member_epoch
    };
    assert_eq!(epoch, 1, "the target waits");

    sim.advance_to(T0 + 200);
    let mut sim = reloaded(&sim, stored_records(&sim, stored));
    let beat_m2 = |sim: &mut Sim| match share {
        true => share_hb(sim, "m2", 1).member_epoch,
        false => hb(sim, beat("m2", 1)).member_epoch,
    };
    let waits = stored == Stored::AsWritten;
    assert_eq!(beat_m2(&mut sim), if waits { 1 } else { 2 }, "computed at once only when unknown");
    if waits {
        sim.advance_to(T0 + 5_000);
        assert_eq!(beat_m2(&mut sim), 2, "computed once the interval is over");
    }
}

/// One step of the batching simulation.
#[derive(Debug, Clone)]
enum Op {
    /// Client `i` heartbeats (joins when it is not a member), acknowledging what it owns.
    Beat(usize),
    /// Client `i` leaves.
    Leave(usize),
    /// Time passes.
    Advance(i64),
}

fn op() -> impl proptest::strategy::Strategy<Value = Op> {
    use proptest::prelude::*;
    prop_oneof![
        4 => (0usize..5).prop_map(Op::Beat),
        1 => (0usize..5).prop_map(Op::Leave),
        2 => (0i64..3_000).prop_map(Op::Advance),
    ]
}

/// A consumer client as KIP-848 clients behave: it owns what its last answer
/// with an assignment gave it, gives back at once what it lost, and rejoins
/// with nothing after an error.
#[derive(Debug, Clone, Default)]
struct Client {
    epoch: Option<i32>,
    owned: Vec<TopicIdPartitions>,
}

impl Client {
    fn beat(&mut self, sim: &mut Sim, i: usize) {
        let id = format!("m{i}");
        let request = match self.epoch {
            None => {
                let mut r = join(&id);
                r.server_assignor = None;
                if i % 2 == 1 {
                    r.subscribed_topic_names = Some(vec!["foo".into(), "bar".into()]);
                }
                r
            }
            Some(epoch) => ConsumerGroupHeartbeatRequest {
                topic_partitions: Some(self.owned.clone()),
                ..beat(&id, epoch)
            },
        };
        let r = hb(sim, request);
        if r.error_code == ErrorCode::None {
            self.epoch = Some(r.member_epoch);
            if let Some(assignment) = r.assignment {
                self.owned = assignment;
            }
        } else {
            *self = Client::default();
        }
    }

    fn leave(&mut self, sim: &mut Sim, i: usize) {
        if let Some(epoch) = self.epoch {
            let _ =
                hb(sim, ConsumerGroupHeartbeatRequest { member_epoch: -1, ..beat(&format!("m{i}"), epoch) });
            *self = Client::default();
        }
    }
}

/// No partition is owned (assigned or still to be revoked) by two members.
fn owned_once(sim: &Sim) -> Result<(), proptest::test_runner::TestCaseError> {
    let Some(g) = sim.core.consumer_group("g") else { return Ok(()) };
    let mut seen = std::collections::BTreeMap::new();
    for m in &g.members {
        for t in m.assigned.iter().chain(&m.pending_revocation) {
            for p in &t.partitions {
                if let Some(other) = seen.insert((t.topic_id, *p), m.member_id.clone()) {
                    proptest::prop_assert!(
                        false,
                        "{:?}-{p} owned by {other} and {}: {g:?}",
                        t.topic_id,
                        m.member_id
                    );
                }
            }
        }
    }
    Ok(())
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// With any interval, batching never lets two members own a partition, and
    /// once the clock passes the interval and members keep heartbeating, the group
    /// settles with every subscribed partition assigned exactly once.
    #[test]
    fn batched_groups_never_share_a_partition_and_converge(
        interval in proptest::prop_oneof![proptest::strategy::Just(0), proptest::strategy::Just(1_000), proptest::strategy::Just(5_000)],
        ops in proptest::collection::vec(op(), 1..60),
    ) {
        let mut sim = sim(interval);
        let mut clients = vec![Client::default(); 5];
        for op in ops {
            match op {
                Op::Beat(i) => clients[i].beat(&mut sim, i),
                Op::Leave(i) => clients[i].leave(&mut sim, i),
                Op::Advance(ms) => sim.advance_to(sim.now + ms),
            }
            owned_once(&sim)?;
        }
        // Every client that is a member keeps heartbeating while the clock passes
        // the interval twice over: a target computed during these rounds may be
        // followed by a rejoin's bump, whose target waits for the next interval.
        let members: Vec<usize> = (0..5).filter(|&i| clients[i].epoch.is_some()).collect();
        for _ in 0..12 {
            for &i in &members {
                clients[i].beat(&mut sim, i);
                owned_once(&sim)?;
            }
            sim.advance_to(sim.now + i64::from(interval) / 4 + 100);
        }
        let Some(g) = sim.core.consumer_group("g") else { return Ok(()) };
        if g.members.is_empty() {
            return Ok(());
        }
        proptest::prop_assert_eq!(g.state, ConsumerGroupState::Stable, "{:?}", g);
        let subscribed_bar = g.members.iter().any(|m| m.metadata.subscribed_topic_names.iter().any(|t| t == "bar"));
        let expected = 6 + if subscribed_bar { 3 } else { 0 };
        let assigned: usize = g.members.iter().flat_map(|m| &m.assigned).map(|t| t.partitions.len()).sum();
        proptest::prop_assert_eq!(assigned, expected, "every subscribed partition assigned once: {:?}", g);
        for &i in &members {
            let m = g.members.iter().find(|m| m.member_id == format!("m{i}"));
            let server = m.map(|m| m.assigned.clone()).unwrap_or_default();
            proptest::prop_assert_eq!(&clients[i].owned, &server, "m{} owns what the coordinator says", i);
        }
    }
}
