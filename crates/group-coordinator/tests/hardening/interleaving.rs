//! Writes that complete late, one scenario per former undo path: a request runs
//! between a write and its failing completion, and the core must answer as if the
//! failed write (and every later one) had never been made, answer every request
//! exactly once, and never acknowledge what storage does not hold.

use std::collections::{BTreeMap, HashMap, VecDeque};

use group_coordinator::{
    CoordinatorConfig, CoordinatorCore, Effects, Record, Request, RequestId, Response, TimerKey, TimerQueue,
    Write,
};
use group_types::{
    DeleteGroupsRequest, DescribeGroupsRequest, ErrorCode, JoinGroupResponse, ListGroupsRequest,
    TopicPartition,
};

use crate::support::{commit, encode_plan, fast_config, fetch, heartbeat, join, leave, round_robin, sync};

const FAILED: ErrorCode = ErrorCode::NotEnoughReplicas;
/// What clients see for `FAILED` (`kafka-semantics.md` §6.7).
const MAPPED: ErrorCode = ErrorCode::CoordinatorNotAvailable;

/// A core whose writes wait until the test completes them, in order.
struct Late {
    core: CoordinatorCore,
    timers: TimerQueue,
    now: i64,
    next: u64,
    queue: VecDeque<Write>,
    answers: HashMap<RequestId, Vec<Response>>,
    /// What storage holds: (group, partition) -> offset, applied on `Ok` completions.
    stored: BTreeMap<(String, TopicPartition), i64>,
}

impl Late {
    fn new(config: CoordinatorConfig) -> Late {
        let mut core = CoordinatorCore::new(config);
        let mut timers = TimerQueue::new();
        timers.apply(core.start(0).timers);
        Late {
            core,
            timers,
            now: 0,
            next: 1,
            queue: VecDeque::new(),
            answers: HashMap::new(),
            stored: BTreeMap::new(),
        }
    }

    fn take(&mut self, fx: Effects) {
        self.timers.apply(fx.timers);
        for (rid, response) in fx.responses {
            self.answers.entry(rid).or_default().push(response);
        }
        self.queue.extend(fx.writes);
    }

    fn send(&mut self, request: Request) -> RequestId {
        let rid = RequestId(self.next);
        self.next += 1;
        let fx = self.core.handle(self.now, rid, request);
        self.take(fx);
        rid
    }

    /// Storage completes the oldest outstanding write.
    fn complete(&mut self, result: Result<(), ErrorCode>) {
        let write = self.queue.pop_front().expect("a write is outstanding");
        if result.is_ok() {
            for record in &write.records {
                match record {
                    Record::Offset { group_id, partition, offset } => {
                        self.stored.insert((group_id.to_string(), partition.clone()), offset.offset);
                    }
                    Record::OffsetTombstone { group_id, partition } => {
                        self.stored.remove(&(group_id.to_string(), partition.clone()));
                    }
                    _ => {}
                }
            }
        }
        let fx = self.core.complete_write(self.now, write.id, result);
        let core = &self.core;
        self.queue.retain(|w| core.is_write_outstanding(w.id));
        self.take(fx);
    }

    fn complete_all(&mut self) {
        while !self.queue.is_empty() {
            self.complete(Ok(()));
        }
    }

    fn advance_to(&mut self, now: i64) {
        while let Some((deadline, key)) = self.timers.pop_due(now) {
            self.now = deadline.max(self.now);
            let fx = self.core.fire_timer(self.now, &key);
            self.take(fx);
        }
        self.now = now;
    }

    fn fire(&mut self, key: &TimerKey) {
        let fx = self.core.fire_timer(self.now, key);
        self.take(fx);
    }

    /// The one answer `rid` got; fails on none or several.
    fn answer(&self, rid: RequestId) -> &Response {
        match self.answers.get(&rid).map(Vec::as_slice) {
            Some([one]) => one,
            Some(many) => panic!("{rid:?} answered {} times: {many:?}", many.len()),
            None => panic!("{rid:?} not answered"),
        }
    }

    fn unanswered(&self, rid: RequestId) -> bool {
        !self.answers.contains_key(&rid)
    }

    fn join_answer(&self, rid: RequestId) -> JoinGroupResponse {
        match self.answer(rid) {
            Response::JoinGroup(r) => r.clone(),
            other => panic!("{rid:?}: not a JoinGroup answer: {other:?}"),
        }
    }

    fn commit_error(&self, rid: RequestId, tp: &TopicPartition) -> Option<ErrorCode> {
        match self.answer(rid) {
            Response::OffsetCommit(r) => r.error_for(&tp.topic, tp.partition),
            other => panic!("{rid:?}: not an OffsetCommit answer: {other:?}"),
        }
    }

    fn fetched(&mut self, group: &str, tp: &TopicPartition) -> i64 {
        let rid = self.send(Request::OffsetFetch(fetch(group, std::slice::from_ref(tp))));
        match self.answer(rid) {
            Response::OffsetFetch(r) => {
                r.offsets.get(tp.topic.as_ref()).and_then(|p| p.get(&tp.partition)).map_or(-1, |d| d.offset)
            }
            other => panic!("not an OffsetFetch answer: {other:?}"),
        }
    }

    fn listed(&mut self) -> Vec<String> {
        let rid = self.send(Request::ListGroups(ListGroupsRequest::default()));
        match self.answer(rid) {
            Response::ListGroups(r) => r.groups.iter().map(|g| g.group_id.to_string()).collect(),
            other => panic!("not a ListGroups answer: {other:?}"),
        }
    }

    fn described_state(&mut self, group: &str) -> String {
        let rid = self.send(Request::DescribeGroups(DescribeGroupsRequest {
            group_ids: vec![group.into()],
            ..Default::default()
        }));
        match self.answer(rid) {
            Response::DescribeGroups(r) => r.groups[0].group_state.clone(),
            other => panic!("not a DescribeGroups answer: {other:?}"),
        }
    }

    /// Every committed offset the core reads equals what storage holds.
    fn assert_committed_is_stored(&self, group: &str, partitions: &[TopicPartition]) {
        for tp in partitions {
            let held = self.core.committed_offset(group, &tp.topic, tp.partition).map(|o| o.offset);
            let stored = self.stored.get(&(group.to_owned(), tp.clone())).copied();
            assert_eq!(held, stored, "{group} {tp}: committed state vs storage");
        }
    }

    /// A Stable group of `n` dynamic members (v3 joins: no member id round trip),
    /// every write completed; returns their ids, the leader first.
    fn stable_group(&mut self, group: &str, n: usize) -> Vec<String> {
        let mut rids = Vec::new();
        for _ in 0..n {
            let mut request = join(group, "", None, 10_000, 10_000);
            request.api_version = 3;
            rids.push(self.send(Request::JoinGroup(request)));
            self.complete_all();
        }
        self.advance_to(self.now + 1);
        self.complete_all();
        let answers: Vec<JoinGroupResponse> = rids.iter().map(|r| self.join_answer(*r)).collect();
        let leader = answers[0].leader_id.clone();
        let generation = answers[0].generation_id;
        let mut ids: Vec<String> = answers.iter().map(|a| a.member_id.to_string()).collect();
        ids.sort_by_key(|id| *id != leader);
        let plan = encode_plan(&round_robin(&ids));
        for id in &ids {
            let assignments = if *id == leader { plan.clone() } else { Vec::new() };
            self.send(Request::SyncGroup(sync(group, id, None, generation, assignments)));
        }
        self.complete_all();
        ids
    }
}

fn tp(partition: i32) -> TopicPartition {
    TopicPartition::new("t0", partition)
}

fn config() -> CoordinatorConfig {
    fast_config(0)
}

/// Group creation: a JoinGroup creates the group and writes its record; another
/// member parks in the group before the record fails. The group never existed:
/// the parked member is answered (once, with the error), and no read showed the
/// group while its creation was in flight.
#[test]
fn a_group_whose_creation_fails_answers_the_members_that_joined_meanwhile() {
    let mut late = Late::new(config());
    let first = late.send(Request::JoinGroup(join("g", "", None, 10_000, 10_000)));
    assert!(late.unanswered(first), "the creator's answer waits for the group's record");
    let mut parked = join("g", "", None, 10_000, 10_000);
    parked.api_version = 3;
    let second = late.send(Request::JoinGroup(parked));
    assert!(!late.listed().contains(&"g".to_owned()), "ListGroups reads committed state");
    assert_eq!(late.described_state("g"), "Dead", "DescribeGroups reads committed state");

    late.complete(Err(FAILED));
    assert_eq!(late.join_answer(first).error_code, ErrorCode::MemberIdRequired, "J answers what it built");
    assert_eq!(late.join_answer(second).error_code, MAPPED, "the parked join is answered with the error");
    assert!(late.core.group("g").is_none(), "the group is gone with its failed record");
    late.advance_to(60_000);
    late.complete_all();
    assert_eq!(late.answers[&second].len(), 1, "answered exactly once");
}

/// Static member replacement: an instance restarts in a Stable group (its record
/// is written) and the leader leaves before the record completes. The restarted
/// member's join now belongs to the new join phase: it is answered once, with the
/// next generation, never with the old generation and a leader that has left.
#[test]
fn a_static_replacement_completing_after_a_rebalance_began_is_answered_by_the_rebalance() {
    let mut late = Late::new(config());
    let mut rids = Vec::new();
    for (client, instance) in [("leader", None), ("static", Some("i")), ("follower", None)] {
        let mut request = join("g", "", instance, 10_000, 10_000);
        request.client_id = client.into();
        request.api_version = if instance.is_some() { 9 } else { 3 };
        rids.push(late.send(Request::JoinGroup(request)));
        late.complete_all();
    }
    late.advance_to(1);
    late.complete_all();
    let answers: Vec<JoinGroupResponse> = rids.iter().map(|r| late.join_answer(*r)).collect();
    let generation = answers[0].generation_id;
    let leader = answers.iter().find(|a| a.leader_id == a.member_id).expect("a leader").member_id.clone();
    let ids: Vec<String> = answers.iter().map(|a| a.member_id.to_string()).collect();
    let plan = encode_plan(&round_robin(&ids));
    for (id, instance) in ids.iter().zip([None, Some("i"), None]) {
        let assignments = if *id == leader { plan.clone() } else { Vec::new() };
        late.send(Request::SyncGroup(sync("g", id, instance, generation, assignments)));
    }
    late.complete_all();
    assert_eq!(late.core.group("g").map(|g| g.state.as_str()), Some("Stable"));

    // The instance restarts: its replacement record is in flight.
    let restarted = late.send(Request::JoinGroup(join("g", "", Some("i"), 10_000, 10_000)));
    assert_eq!(late.queue.len(), 1, "the replacement writes the group's record");
    // The leader leaves meanwhile: a join phase begins, waiting for the follower.
    late.send(Request::LeaveGroup(leave("g", &leader, None)));
    late.complete(Ok(()));
    assert!(
        late.unanswered(restarted),
        "the join phase has not completed: {:?}",
        late.answers.get(&restarted)
    );
    let follower = ids.iter().zip([None, Some("i"), None]).find(|(id, i)| **id != leader && i.is_none());
    if let Some((id, _)) = follower {
        let mut rejoin = join("g", id, None, 10_000, 10_000);
        rejoin.client_id = "follower".into();
        late.send(Request::JoinGroup(rejoin));
    }
    late.advance_to(late.now + 20_000);
    late.complete_all();
    let answer = late.join_answer(restarted);
    assert_eq!(answer.error_code, ErrorCode::None);
    assert!(answer.generation_id > generation, "answered by the new generation: {answer:?}");
    assert_ne!(answer.leader_id, leader, "never named the leader that left: {answer:?}");
}

/// Leader sync: the leader's assignment is being written when a member of another
/// group of the partition commits. The assignment fails: the commit issued after
/// it is voided with it (never acknowledged, never stored), the parked follower is
/// answered once, and the group rebalances.
#[test]
fn a_failed_leader_sync_voids_the_writes_issued_after_it() {
    let mut late = Late::new(config());
    let ids = late.stable_group("other", 1);
    let mut a = join("g", "", None, 10_000, 10_000);
    a.api_version = 3;
    let mut b = a.clone();
    b.client_id = "b".into();
    let a_rid = late.send(Request::JoinGroup(a));
    let b_rid = late.send(Request::JoinGroup(b));
    late.complete_all();
    late.advance_to(late.now + 1);
    late.complete_all();
    let (ja, jb) = (late.join_answer(a_rid), late.join_answer(b_rid));
    let (leader, follower) = if ja.leader_id == ja.member_id { (ja, jb) } else { (jb, ja) };
    let plan = encode_plan(&round_robin(&[leader.member_id.to_string(), follower.member_id.to_string()]));
    let parked =
        late.send(Request::SyncGroup(sync("g", &follower.member_id, None, leader.generation_id, Vec::new())));
    late.send(Request::SyncGroup(sync("g", &leader.member_id, None, leader.generation_id, plan)));
    let other_generation = late.core.group("other").map(|g| g.generation_id).unwrap_or(-1);
    let committed =
        late.send(Request::OffsetCommit(commit("other", &ids[0], None, other_generation, &[(tp(0), 7)])));
    assert!(late.unanswered(committed), "the commit waits for its write");

    late.complete(Err(FAILED));
    assert_eq!(late.commit_error(committed, &tp(0)), Some(MAPPED), "voided with the failed sync");
    assert_eq!(late.fetched("other", &tp(0)), -1);
    match late.answer(parked) {
        Response::SyncGroup(r) => assert_eq!(r.error_code, MAPPED),
        other => panic!("{other:?}"),
    }
    assert_eq!(late.core.group("g").map(|g| g.state.as_str()), Some("PreparingRebalance"));
    late.complete_all();
    late.assert_committed_is_stored("other", &[tp(0)]);
}

/// Commits: a commit is in flight when a read and a second commit of the same
/// partition arrive. The read shows the committed value; the first commit fails,
/// the second is voided with it, and nothing of either is visible or stored.
#[test]
fn a_failed_commit_takes_the_later_ones_with_it_and_reads_never_saw_it() {
    let mut late = Late::new(config());
    let first = late.send(Request::OffsetCommit(commit("g", "", None, -1, &[(tp(0), 5)])));
    late.complete(Ok(()));
    assert_eq!(late.commit_error(first, &tp(0)), Some(ErrorCode::None));

    let failing = late.send(Request::OffsetCommit(commit("g", "", None, -1, &[(tp(0), 10)])));
    assert_eq!(late.fetched("g", &tp(0)), 5, "a read shows committed state only");
    let later = late.send(Request::OffsetCommit(commit("g", "", None, -1, &[(tp(0), 20), (tp(1), 21)])));
    late.complete(Err(FAILED));
    assert_eq!(late.commit_error(failing, &tp(0)), Some(MAPPED));
    assert_eq!(late.commit_error(later, &tp(0)), Some(MAPPED), "the later commit is voided too");
    assert!(late.queue.is_empty(), "a voided write is not to be persisted");
    assert_eq!(late.fetched("g", &tp(0)), 5);
    assert_eq!(late.fetched("g", &tp(1)), -1);
    late.assert_committed_is_stored("g", &[tp(0), tp(1)]);
}

/// A simple consumer's first commit creates its group; while it is in flight the
/// group is not listed, and when it fails the group never existed.
#[test]
fn a_group_created_by_a_failing_commit_never_appears() {
    let mut late = Late::new(config());
    let rid = late.send(Request::OffsetCommit(commit("g", "", None, -1, &[(tp(0), 5)])));
    assert!(!late.listed().contains(&"g".to_owned()));
    late.complete(Err(FAILED));
    assert_eq!(late.commit_error(rid, &tp(0)), Some(MAPPED));
    assert!(late.core.group("g").is_none());
    assert!(!late.listed().contains(&"g".to_owned()));
}

/// Deletes: DeleteGroups is in flight when a simple consumer commits to the same
/// group id (creating a new group). The deletion fails: the group comes back as it
/// was, with its offsets, and the newer group, built on the deletion, is gone with
/// its commit, which is never acknowledged.
#[test]
fn a_failed_deletion_restores_the_group_and_voids_what_was_built_on_it() {
    let mut late = Late::new(config());
    late.send(Request::OffsetCommit(commit("g", "", None, -1, &[(tp(0), 5)])));
    late.complete_all();
    let delete = late.send(Request::DeleteGroups(DeleteGroupsRequest { group_ids: vec!["g".into()] }));
    assert_eq!(late.fetched("g", &tp(0)), 5, "reads see the group until its deletion commits");
    assert!(late.listed().contains(&"g".to_owned()));
    let recommit = late.send(Request::OffsetCommit(commit("g", "", None, -1, &[(tp(1), 9)])));
    late.complete(Err(FAILED));
    match late.answer(delete) {
        Response::DeleteGroups(r) => assert_eq!(r.results[0].error_code, MAPPED),
        other => panic!("{other:?}"),
    }
    assert_eq!(late.commit_error(recommit, &tp(1)), Some(MAPPED), "built on the failed deletion");
    assert_eq!(late.fetched("g", &tp(0)), 5, "the group is back with its offsets");
    assert_eq!(late.fetched("g", &tp(1)), -1);
    late.complete_all();
    late.assert_committed_is_stored("g", &[tp(0), tp(1)]);
}

/// Retention: an old offset's partition gets a new commit, still in flight, when
/// the retention job runs. The job must leave that partition alone (Kafka's
/// `pendingOffsetCommits`): the new commit, once acknowledged, stays.
#[test]
fn retention_never_expires_a_partition_with_a_commit_in_flight() {
    let mut late = Late::new(CoordinatorConfig { offset_retention_ms: 1_000, ..config() });
    late.send(Request::OffsetCommit(commit("g", "", None, -1, &[(tp(0), 5), (tp(1), 6)])));
    late.complete_all();
    late.now = 10_000;
    let fresh = late.send(Request::OffsetCommit(commit("g", "", None, -1, &[(tp(0), 50)])));
    let mut old = commit("g", "", None, -1, &[(tp(0), 51)]);
    // An explicit commit time in the past: expired by the time the job runs.
    for (_, data) in old.offsets.iter_mut().flat_map(|t| t.partitions.iter_mut()) {
        data.commit_timestamp = Some(0);
    }
    let backdated = late.send(Request::OffsetCommit(old));
    late.fire(&TimerKey::OffsetExpiration);
    late.complete_all();
    assert_eq!(late.commit_error(fresh, &tp(0)), Some(ErrorCode::None));
    assert_eq!(late.commit_error(backdated, &tp(0)), Some(ErrorCode::None));
    assert_eq!(
        late.fetched("g", &tp(0)),
        51,
        "an acknowledged commit is never expired by a job that ran before it"
    );
    assert_eq!(late.fetched("g", &tp(1)), -1, "the idle partition expired");
    late.assert_committed_is_stored("g", &[tp(0), tp(1)]);
}

/// A heartbeat of a group with no metadata write in flight is answered at once,
/// whatever else of the partition is being written.
#[test]
fn heartbeats_do_not_wait_for_other_writes() {
    let mut late = Late::new(config());
    let ids = late.stable_group("g", 2);
    let generation = late.core.group("g").map(|g| g.generation_id).unwrap_or(-1);
    late.send(Request::OffsetCommit(commit("g", &ids[0], None, generation, &[(tp(0), 1)])));
    late.send(Request::OffsetCommit(commit("h", "", None, -1, &[(tp(0), 1)])));
    let beat = late.send(Request::Heartbeat(heartbeat("g", &ids[1], None, generation)));
    match late.answer(beat) {
        Response::Heartbeat(r) => assert_eq!(r.error_code, ErrorCode::None),
        other => panic!("{other:?}"),
    }
    assert_eq!(late.queue.len(), 2, "both commits are still in flight");
}
