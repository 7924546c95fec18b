//! Shared helpers: a seeded PRNG, request builders and assignment codecs.

use std::collections::BTreeMap;
use std::time::Duration;

use group_coordinator::{
    CoordinatorConfig, CoordinatorCore, Effects, GroupCoordinator, Pending, Request, RequestId, Response,
    ResponseKind, TimerQueue,
};
use group_types::{
    HeartbeatRequest, JoinGroupRequest, JoinGroupResponse, LeaveGroupRequest, MemberAssignment,
    MemberAssignmentData, MemberIdentity, OffsetCommitData, OffsetCommitRequest, OffsetFetchRequest,
    ProtocolMetadata, Subscription, SyncGroupRequest, TopicPartition,
};

/// How long a test waits for an answer that must come before it calls it a deadlock.
pub(crate) const DEADLOCK: Duration = Duration::from_secs(60);

/// splitmix64: tiny, seedable, and the same on every platform, so a seed replays exactly.
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x2545_f491_4f6c_dd1d)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// True with probability `percent`/100.
    pub(crate) fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    pub(crate) fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}

/// Small timeouts so that timers matter: min session 10 ms, initial delay `delay_ms`.
pub(crate) fn fast_config(delay_ms: i32) -> CoordinatorConfig {
    CoordinatorConfig {
        min_session_timeout_ms: 10,
        max_session_timeout_ms: 600_000,
        initial_rebalance_delay_ms: delay_ms,
        ..CoordinatorConfig::default()
    }
}

pub(crate) fn subscription(topics: &[&str]) -> Vec<u8> {
    Subscription { topics: topics.iter().map(|t| (*t).to_owned()).collect(), ..Subscription::default() }
        .encode()
        .expect("a subscription encodes")
}

pub(crate) fn join(
    group: &str,
    member_id: &str,
    instance: Option<&str>,
    session_ms: i32,
    rebalance_ms: i32,
) -> JoinGroupRequest {
    JoinGroupRequest {
        group_id: group.into(),
        member_id: member_id.into(),
        group_instance_id: instance.map(Into::into),
        client_id: "consumer".into(),
        client_host: "/127.0.0.1".into(),
        protocol_type: "consumer".into(),
        protocols: vec![ProtocolMetadata::new("range", subscription(&["t0", "t1"]))],
        session_timeout_ms: session_ms,
        rebalance_timeout_ms: rebalance_ms,
        reason: None,
        api_version: 9,
    }
}

pub(crate) fn sync(
    group: &str,
    member_id: &str,
    instance: Option<&str>,
    generation: i32,
    assignments: Vec<MemberAssignmentData>,
) -> SyncGroupRequest {
    SyncGroupRequest {
        group_id: group.into(),
        generation_id: generation,
        member_id: member_id.into(),
        group_instance_id: instance.map(Into::into),
        protocol_type: Some("consumer".into()),
        protocol_name: None,
        assignments,
    }
}

pub(crate) fn heartbeat(
    group: &str,
    member_id: &str,
    instance: Option<&str>,
    generation: i32,
) -> HeartbeatRequest {
    HeartbeatRequest {
        group_id: group.into(),
        generation_id: generation,
        member_id: member_id.into(),
        group_instance_id: instance.map(Into::into),
    }
}

pub(crate) fn leave(group: &str, member_id: &str, instance: Option<&str>) -> LeaveGroupRequest {
    LeaveGroupRequest {
        group_id: group.into(),
        members: vec![MemberIdentity {
            member_id: member_id.into(),
            group_instance_id: instance.map(Into::into),
            reason: None,
        }],
    }
}

pub(crate) fn commit(
    group: &str,
    member_id: &str,
    instance: Option<&str>,
    generation: i32,
    offsets: &[(TopicPartition, i64)],
) -> OffsetCommitRequest {
    let mut request = OffsetCommitRequest {
        group_id: group.into(),
        generation_id: generation,
        member_id: member_id.into(),
        group_instance_id: instance.map(Into::into),
        retention_time_ms: -1,
        ..OffsetCommitRequest::default()
    };
    for (tp, offset) in offsets {
        request = request.with_offset(&tp.topic, tp.partition, OffsetCommitData::new(*offset));
    }
    request
}

pub(crate) fn fetch(group: &str, partitions: &[TopicPartition]) -> OffsetFetchRequest {
    let mut topics: BTreeMap<String, Vec<i32>> = BTreeMap::new();
    for tp in partitions {
        topics.entry(tp.topic.to_string()).or_default().push(tp.partition);
    }
    OffsetFetchRequest {
        group_id: group.into(),
        topics: Some(topics),
        require_stable: false,
        member_id: None,
        member_epoch: None,
    }
}

/// The fixed topic set every simulated consumer subscribes to.
pub(crate) fn topic_set() -> Vec<TopicPartition> {
    let mut all = Vec::new();
    for p in 0..4 {
        all.push(TopicPartition::new("t0", p));
    }
    for p in 0..3 {
        all.push(TopicPartition::new("t1", p));
    }
    all
}

/// The leader's plan: partitions dealt round-robin over the members, sorted by id.
pub(crate) fn round_robin(member_ids: &[String]) -> Vec<(String, Vec<TopicPartition>)> {
    let mut ids = member_ids.to_vec();
    ids.sort();
    ids.dedup();
    let mut plan: Vec<(String, Vec<TopicPartition>)> = ids.into_iter().map(|id| (id, Vec::new())).collect();
    if plan.is_empty() {
        return plan;
    }
    let n = plan.len();
    for (i, tp) in topic_set().into_iter().enumerate() {
        plan[i % n].1.push(tp);
    }
    plan
}

pub(crate) fn encode_plan(plan: &[(String, Vec<TopicPartition>)]) -> Vec<MemberAssignmentData> {
    plan.iter()
        .map(|(id, tps)| {
            MemberAssignmentData::new(
                id.clone(),
                MemberAssignment::from_partitions(tps).encode().expect("encodes"),
            )
        })
        .collect()
}

/// A member's partitions from SyncGroup bytes; empty bytes mean "nothing assigned".
pub(crate) fn decode_assignment(bytes: &[u8]) -> Result<Vec<TopicPartition>, String> {
    if bytes.is_empty() {
        return Ok(Vec::new());
    }
    MemberAssignment::decode(bytes)
        .map(|a| a.topic_partitions())
        .map_err(|e| format!("undecodable assignment: {e}"))
}

/// Waits for an answer that must come; a missing one is reported as a deadlock.
pub(crate) fn must<T: ResponseKind>(mut pending: Pending<T>, what: &str) -> T {
    match pending.wait_timeout(DEADLOCK) {
        Some(Ok(response)) => response,
        Some(Err(e)) => panic!("{what}: coordinator error {e}"),
        None => panic!("{what}: no answer within {DEADLOCK:?} (deadlock?)"),
    }
}

/// Waits until every write `c` issued so far has completed and what the
/// completions released (answers, follow-up writes) was handed out.
///
/// Appends complete on the runtime's storage thread, while a manual clock moves as
/// fast as the test moves it: a test that steps the clock until an answer comes
/// must let each step's writes complete first, or timers run far past a write that
/// has not completed yet (a loaded machine may not schedule the storage thread for
/// a while). The write count can read zero a moment before a completion's answers
/// are released (under its partition's lock), so once it does, every partition's
/// lock is taken once (`waiting_requests`), and the count read again in case a
/// completion issued another write.
pub(crate) fn settle(c: &GroupCoordinator) {
    loop {
        assert!(c.wait_for_writes(DEADLOCK), "the coordinator's writes completed within {DEADLOCK:?}");
        let _ = c.waiting_requests();
        if c.wait_for_writes(Duration::ZERO) {
            return;
        }
    }
}

/// A core with its timer queue, writes completed successfully at once.
#[derive(Debug)]
pub(crate) struct CoreDriver {
    pub(crate) core: CoordinatorCore,
    pub(crate) timers: TimerQueue,
    pub(crate) now: i64,
    next: u64,
}

impl CoreDriver {
    pub(crate) fn new(config: CoordinatorConfig) -> CoreDriver {
        let mut core = CoordinatorCore::new(config);
        let mut timers = TimerQueue::new();
        timers.apply(core.start(0).timers);
        CoreDriver { core, timers, now: 0, next: 1 }
    }

    fn drain(&mut self, mut fx: Effects, out: &mut Vec<(RequestId, Response)>) {
        self.timers.apply(std::mem::take(&mut fx.timers));
        out.append(&mut fx.responses);
        for write in fx.writes {
            let more = self.core.complete_write(self.now, write.id, Ok(()));
            self.drain(more, out);
        }
    }

    /// Sends a request at the current time; returns its id and every answer produced.
    pub(crate) fn send(&mut self, request: Request) -> (RequestId, Vec<(RequestId, Response)>) {
        let rid = RequestId(self.next);
        self.next += 1;
        let fx = self.core.handle(self.now, rid, request);
        let mut out = Vec::new();
        self.drain(fx, &mut out);
        (rid, out)
    }

    /// Moves time to `now`, firing due timers; returns the answers they produced.
    pub(crate) fn advance_to(&mut self, now: i64) -> Vec<(RequestId, Response)> {
        let mut out = Vec::new();
        while let Some((deadline, key)) = self.timers.pop_due(now) {
            self.now = deadline.max(self.now);
            let fx = self.core.fire_timer(self.now, &key);
            self.drain(fx, &mut out);
        }
        self.now = self.now.max(now);
        out
    }
}

/// The JoinGroup answer to `rid` among `answers`.
pub(crate) fn join_answer(answers: &[(RequestId, Response)], rid: RequestId) -> Option<JoinGroupResponse> {
    answers.iter().find_map(|(id, r)| match r {
        Response::JoinGroup(j) if *id == rid => Some(j.clone()),
        _ => None,
    })
}
