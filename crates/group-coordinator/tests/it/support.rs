//! Helpers: a core driven with simulated time, and request builders.

use std::collections::HashMap;

use group_coordinator::{
    CoordinatorConfig, CoordinatorCore, Effects, Request, RequestId, Response, TimerQueue,
};
use group_types::{
    ErrorCode, HeartbeatRequest, JoinGroupRequest, JoinGroupResponse, LeaveGroupRequest, OffsetCommitData,
    OffsetCommitRequest, ProtocolMetadata, Subscription, SyncGroupRequest, SyncGroupResponse,
};

/// The §8 test settings: min session 10 ms, max 600 000 ms, initial delay 50 ms.
pub(crate) fn test_config() -> CoordinatorConfig {
    CoordinatorConfig {
        min_session_timeout_ms: 10,
        max_session_timeout_ms: 600_000,
        initial_rebalance_delay_ms: 50,
        ..CoordinatorConfig::default()
    }
}

pub(crate) fn subscription(topics: &[&str]) -> Vec<u8> {
    Subscription { topics: topics.iter().map(|t| (*t).to_owned()).collect(), ..Subscription::default() }
        .encode()
        .unwrap()
}

pub(crate) fn join(group: &str, member_id: &str) -> JoinGroupRequest {
    JoinGroupRequest {
        group_id: group.into(),
        member_id: member_id.into(),
        client_id: "consumer".into(),
        client_host: "/127.0.0.1".into(),
        protocols: vec![ProtocolMetadata::new("range", subscription(&["t"]))],
        session_timeout_ms: 500,
        rebalance_timeout_ms: 500,
        ..JoinGroupRequest::default()
    }
}

pub(crate) fn sync(
    group: &str,
    member_id: &str,
    generation: i32,
    assignments: &[(&str, &str)],
) -> SyncGroupRequest {
    SyncGroupRequest {
        group_id: group.into(),
        generation_id: generation,
        member_id: member_id.into(),
        assignments: assignments
            .iter()
            .map(|(m, a)| group_types::MemberAssignmentData::new(*m, a.as_bytes().to_vec()))
            .collect(),
        ..SyncGroupRequest::default()
    }
}

pub(crate) fn heartbeat(group: &str, member_id: &str, generation: i32) -> HeartbeatRequest {
    HeartbeatRequest {
        group_id: group.into(),
        generation_id: generation,
        member_id: member_id.into(),
        group_instance_id: None,
    }
}

pub(crate) fn commit(group: &str, member_id: &str, generation: i32, offset: i64) -> OffsetCommitRequest {
    OffsetCommitRequest {
        group_id: group.into(),
        generation_id: generation,
        member_id: member_id.into(),
        ..OffsetCommitRequest::default()
    }
    .with_offset("t", 0, OffsetCommitData::new(offset))
}

pub(crate) fn leave(group: &str, member_id: &str) -> LeaveGroupRequest {
    LeaveGroupRequest::single(group, member_id)
}

/// A core with simulated time: timers fire in deadline order as time advances, writes
/// succeed unless `fail_next_write` is set, answers are collected by request id.
pub(crate) struct Sim {
    pub(crate) core: CoordinatorCore,
    pub(crate) timers: TimerQueue,
    pub(crate) now: i64,
    next_id: u64,
    pub(crate) answers: HashMap<RequestId, Response>,
    pub(crate) fail_next_write: Option<ErrorCode>,
    pub(crate) records_written: usize,
    /// Every record of every write that succeeded, in order: a reload folds them.
    pub(crate) log: Vec<group_offsets::Record>,
}

impl Sim {
    pub(crate) fn new(config: CoordinatorConfig) -> Sim {
        let mut core = CoordinatorCore::new(config);
        let mut timers = TimerQueue::new();
        timers.apply(core.start(0).timers);
        Sim {
            core,
            timers,
            now: 0,
            next_id: 0,
            answers: HashMap::new(),
            fail_next_write: None,
            records_written: 0,
            log: Vec::new(),
        }
    }

    /// Carries out what a call of the core made outside [`send`](Self::send).
    pub(crate) fn apply(&mut self, fx: Effects) {
        self.process(fx);
    }

    fn process(&mut self, fx: Effects) {
        self.timers.apply(fx.timers);
        for (rid, r) in fx.responses {
            assert!(self.answers.insert(rid, r).is_none(), "answered twice");
        }
        for w in fx.writes {
            self.records_written += w.records.len();
            let result = match self.fail_next_write.take() {
                Some(e) => Err(e),
                None => Ok(()),
            };
            if result.is_ok() {
                self.log.extend(w.records.iter().cloned());
            }
            let fx = self.core.complete_write(self.now, w.id, result);
            self.process(fx);
        }
    }

    /// Moves time to `at`, firing due timers on the way.
    pub(crate) fn advance_to(&mut self, at: i64) {
        while let Some((deadline, key)) = self.timers.pop_due(at) {
            self.now = deadline;
            let fx = self.core.fire_timer(deadline, &key);
            self.process(fx);
        }
        self.now = at;
    }

    pub(crate) fn send(&mut self, request: Request) -> RequestId {
        self.next_id += 1;
        let rid = RequestId(self.next_id);
        let fx = self.core.handle(self.now, rid, request);
        self.process(fx);
        rid
    }

    pub(crate) fn answer(&self, rid: RequestId) -> Option<&Response> {
        self.answers.get(&rid)
    }

    pub(crate) fn join_answer(&self, rid: RequestId) -> Option<JoinGroupResponse> {
        match self.answers.get(&rid)? {
            Response::JoinGroup(r) => Some(r.clone()),
            other => panic!("not a join answer: {other:?}"),
        }
    }

    pub(crate) fn sync_answer(&self, rid: RequestId) -> Option<SyncGroupResponse> {
        match self.answers.get(&rid)? {
            Response::SyncGroup(r) => Some(r.clone()),
            other => panic!("not a sync answer: {other:?}"),
        }
    }

    pub(crate) fn error_of(&self, rid: RequestId) -> ErrorCode {
        match self.answers.get(&rid).unwrap_or_else(|| panic!("request {rid:?} unanswered")) {
            Response::JoinGroup(r) => r.error_code,
            Response::SyncGroup(r) => r.error_code,
            Response::Heartbeat(r) => r.error_code,
            Response::LeaveGroup(r) => r.collapsed_error(),
            Response::OffsetCommit(r) => r.iter().next().unwrap().2,
            Response::TxnOffsetCommit(r) => r.errors[0].partitions[0].1,
            other => panic!("no single error in {other:?}"),
        }
    }

    /// A full two-step join of a new dynamic member; returns its id (join still parked
    /// unless the barrier closed).
    pub(crate) fn two_step_join(&mut self, group: &str) -> (String, RequestId) {
        let first = self.send(Request::JoinGroup(join(group, "")));
        let id = self.join_answer(first).unwrap().member_id.to_string();
        let second = self.send(Request::JoinGroup(join(group, &id)));
        (id, second)
    }

    /// Builds a Stable group of `n` dynamic members; returns ids (leader first) and the generation.
    pub(crate) fn stable_group(&mut self, group: &str, n: usize) -> (Vec<String>, i32) {
        let joins: Vec<(String, RequestId)> = (0..n).map(|_| self.two_step_join(group)).collect();
        // New members inside the initial-delay window extend it once (§3.4).
        let at = self.now + 100;
        self.advance_to(at);
        let first = self.join_answer(joins[0].1).expect("join completed");
        let generation = first.generation_id;
        let leader = first.leader_id.clone();
        let mut ids: Vec<String> = joins.iter().map(|(id, _)| id.clone()).collect();
        ids.sort_by_key(|id| *id != leader);
        let assignments: Vec<(String, String)> =
            ids.iter().map(|id| (id.clone(), format!("a-{id}"))).collect();
        let refs: Vec<(&str, &str)> = assignments.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        let leader_sync = self.send(Request::SyncGroup(sync(group, &ids[0], generation, &refs)));
        assert_eq!(self.sync_answer(leader_sync).unwrap().error_code, ErrorCode::None);
        for id in &ids[1..] {
            let r = self.send(Request::SyncGroup(sync(group, id, generation, &[])));
            assert_eq!(self.sync_answer(r).unwrap().error_code, ErrorCode::None);
        }
        (ids, generation)
    }
}

/// Waits (at most ten seconds) until `store` holds `n` appends: the storage
/// stage hands them over asynchronously.
pub(crate) fn until_held(store: &group_offsets::MemoryMetadataStore, n: usize) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while store.held_appends() < n {
        assert!(
            std::time::Instant::now() < deadline,
            "{} appends held, waiting for {n}",
            store.held_appends()
        );
        std::thread::yield_now();
    }
}

/// A server assignor named `failing` that always fails (an assignor failure is
/// UNKNOWN_SERVER_ERROR and writes nothing of the request).
#[derive(Debug)]
pub(crate) struct FailingAssignor;

impl group_assignors::server::ServerAssignor for FailingAssignor {
    fn name(&self) -> &str {
        "failing"
    }

    fn assign(
        &self,
        _: &group_assignors::server::GroupSpec<'_>,
        _: &dyn group_assignors::server::SubscribedTopicDescriber,
    ) -> Result<group_assignors::server::TargetAssignment, group_assignors::server::ServerAssignError> {
        Err(group_assignors::server::ServerAssignError { assignor: "failing".into(), message: "test".into() })
    }
}
