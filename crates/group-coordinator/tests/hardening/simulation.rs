//! Deterministic simulation: seeded random clients drive the core with simulated time,
//! and the protocol's safety and liveness invariants are checked after every step.
//!
//! Two to six clients (dynamic or static, JoinGroup v3 to v9, varied timeouts and
//! protocol lists) join with KIP-394's two steps, sync (the leader deals a fixed topic
//! set round-robin), heartbeat, commit, leave, crash (go silent), restart (a static
//! instance with an empty member id, a dynamic one as a new member), rejoin slowly,
//! and commit as simple consumers; time moves in random steps and some writes fail.
//! Checked: one leader per generation; the generation never decreases; no partition
//! has two owners in a generation, and each member gets exactly what its leader
//! planned; successes go only to current members of the current generation; a member
//! a timer expelled never succeeds again with its old id; every request is answered
//! exactly once (at the end everyone leaves and time runs far ahead); an acknowledged
//! commit is what OffsetFetch returns until the next one, and is never lost.
//!
//! Half the seeds run with writes that complete late: each write waits in its
//! coordinator partition's queue while other requests and timers run, queues
//! complete in write order within a partition and in any order across the two
//! partitions of the run (the group's, and a second one where a simple consumer
//! commits), and some fail after later requests were handled. Then also checked:
//! the coordinator's committed offsets equal what storage holds after every step
//! (nothing acknowledged is lost or rolled back, a read never shows a write that
//! later failed), and a commit is acknowledged only once storage holds it.
//!
//! `SIM_SEEDS=<n>` runs more seeds than CI's default; `SIM_SEED=<n>` replays one seed
//! and prints its trace.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;

use group_coordinator::{
    CoordinatorCore, Effects, Record, Request, RequestId, Response, TimerQueue, Write, WriteId,
};
use group_types::{ErrorCode, GroupState, JoinGroupResponse, MemberId, ProtocolMetadata, TopicPartition};

use crate::support::{
    Rng, commit, decode_assignment, encode_plan, fast_config, fetch, heartbeat, join, leave, round_robin,
    subscription, sync, topic_set,
};

const GROUP: &str = "g";
/// The second partition's group (late mode).
const SIDE_GROUP: &str = "h";
/// Seeds run by default (CI).
const DEFAULT_SEEDS: u64 = 1_000;
/// Steps per seed: enough for several generations, crashes and restarts each.
const STEPS: usize = 400;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Not in the group (never joined, left, or reset by an error).
    Out,
    /// Must send JoinGroup (after MEMBER_ID_REQUIRED or a rebalance signal).
    NeedJoin,
    /// JoinGroup outstanding.
    Joining,
    /// Joined a generation; must send SyncGroup.
    NeedSync,
    /// SyncGroup outstanding.
    Syncing,
    /// Has its assignment.
    Stable,
    /// Crashed: sends nothing until it restarts.
    Crashed,
}

#[derive(Debug)]
struct Client {
    name: String,
    instance: Option<String>,
    session_ms: i32,
    rebalance_ms: i32,
    protocols: Vec<ProtocolMetadata>,
    member_id: String,
    generation: i32,
    phase: Phase,
    /// Bumped on crash, leave and restart: answers to an older incarnation are ignored.
    incarnation: u64,
    /// The member list, when this client leads its generation.
    leads: Option<Vec<String>>,
    /// A slow client does not rejoin before this time.
    not_before: i64,
    /// JoinGroup version: v3 and older add a dynamic member without MEMBER_ID_REQUIRED,
    /// v8 and older answer a replaced static leader differently.
    api_version: i16,
}

#[derive(Debug, Clone)]
struct Sent {
    client: usize,
    incarnation: u64,
    step: usize,
    what: &'static str,
    member_id: String,
    instance: Option<String>,
    generation: i32,
    commit: Vec<(TopicPartition, i64)>,
    /// For a commit: why it must not succeed, judged when it was sent (with
    /// late writes its answer comes after the group may have moved on).
    commit_problem: Option<String>,
}

/// The second coordinator partition: a simple consumer commits to its own group.
#[derive(Debug, Default)]
struct Side {
    core: Option<CoordinatorCore>,
    queue: std::collections::VecDeque<Write>,
    /// Commits sent and not answered: request id -> offsets.
    sent: HashMap<RequestId, Vec<(TopicPartition, i64)>>,
    committed: BTreeMap<TopicPartition, i64>,
    persisted: BTreeMap<TopicPartition, i64>,
}

/// A broken invariant: the step it broke at and why.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) step: usize,
    pub(crate) message: String,
    pub(crate) trace: Vec<String>,
}

struct Sim {
    rng: Rng,
    core: CoordinatorCore,
    timers: TimerQueue,
    now: i64,
    step: usize,
    clients: Vec<Client>,
    sent: HashMap<RequestId, Sent>,
    next_rid: u64,
    trace: Vec<String>,
    /// Percent of writes that fail.
    write_failure_percent: u64,
    /// The longest single time step: long steps expire sessions often, short ones let
    /// groups settle so that joins, leaves and restarts drive the rebalances.
    max_tick: u64,
    // Invariant bookkeeping.
    instance_of: HashMap<String, String>,
    leader_of_generation: HashMap<i32, String>,
    plan_of_generation: HashMap<i32, HashMap<String, Vec<TopicPartition>>>,
    owner: HashMap<(i32, TopicPartition), String>,
    last_generation: i32,
    committed: BTreeMap<TopicPartition, i64>,
    next_offset: i64,
    /// Member ids removed by a timer, with the group's generation and the step.
    expelled: HashMap<String, (i32, usize)>,
    /// Writes complete late, from `queue`, instead of at once.
    late: bool,
    queue: std::collections::VecDeque<Write>,
    /// What storage holds of the group's offsets (applied on `Ok` completions).
    persisted: BTreeMap<TopicPartition, i64>,
    /// True while routing answers released by a completion.
    releasing: bool,
    side: Side,
    errors: Vec<String>,
    stats: Stats,
}

/// What the seeds exercised, so that a harness that stopped exercising anything fails.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Stats {
    pub(crate) generations: u64,
    pub(crate) assignments: u64,
    pub(crate) commits_acknowledged: u64,
    pub(crate) expulsions: u64,
    pub(crate) static_restarts: u64,
    pub(crate) crashes: u64,
    pub(crate) leaves: u64,
    pub(crate) failed_writes: u64,
    /// Writes completed after at least one other input ran.
    pub(crate) late_completions: u64,
    /// Writes voided by the failure of an earlier one.
    pub(crate) voided_writes: u64,
}

impl Stats {
    fn add(&mut self, o: Stats) {
        self.generations += o.generations;
        self.assignments += o.assignments;
        self.commits_acknowledged += o.commits_acknowledged;
        self.expulsions += o.expulsions;
        self.static_restarts += o.static_restarts;
        self.crashes += o.crashes;
        self.leaves += o.leaves;
        self.failed_writes += o.failed_writes;
        self.late_completions += o.late_completions;
        self.voided_writes += o.voided_writes;
    }
}

impl Sim {
    fn new(seed: u64) -> Sim {
        let mut rng = Rng::new(seed);
        let delay = rng.pick(&[0, 0, 20, 100]);
        let mut config = fast_config(delay);
        config.member_id_seed = seed;
        if rng.chance(15) {
            config.group_max_size = 3;
        }
        let n = 2 + rng.below(5) as usize;
        let mut clients = Vec::with_capacity(n);
        for i in 0..n {
            let name = char::from(b'A' + i as u8).to_string();
            let instance = rng.chance(40).then(|| format!("instance-{name}"));
            let api_version =
                if instance.is_some() { rng.pick(&[9, 9, 8, 5]) } else { rng.pick(&[9, 9, 9, 4, 3]) };
            let sub = subscription(&["t0", "t1"]);
            let protocols = if rng.chance(30) {
                vec![ProtocolMetadata::new("roundrobin", sub.clone()), ProtocolMetadata::new("range", sub)]
            } else {
                vec![ProtocolMetadata::new("range", sub)]
            };
            clients.push(Client {
                name,
                instance,
                session_ms: rng.pick(&[150, 400, 1_000]),
                rebalance_ms: rng.pick(&[200, 600, 1_500]),
                protocols,
                member_id: Default::default(),
                generation: -1,
                phase: Phase::Out,
                incarnation: 0,
                leads: None,
                not_before: 0,
                api_version,
            });
        }
        let write_failure_percent = rng.pick(&[0, 0, 3, 10]);
        let max_tick = rng.pick(&[300, 300, 60]);
        let late = rng.chance(50);
        let side = Side { core: late.then(|| CoordinatorCore::new(config.clone())), ..Side::default() };
        let mut core = CoordinatorCore::new(config);
        let mut timers = TimerQueue::new();
        timers.apply(core.start(0).timers);
        Sim {
            rng,
            core,
            timers,
            now: 0,
            step: 0,
            clients,
            sent: HashMap::new(),
            next_rid: 1,
            trace: Vec::new(),
            write_failure_percent,
            max_tick,
            instance_of: HashMap::new(),
            leader_of_generation: HashMap::new(),
            plan_of_generation: HashMap::new(),
            owner: HashMap::new(),
            last_generation: 0,
            committed: BTreeMap::new(),
            next_offset: 1,
            expelled: HashMap::new(),
            late,
            queue: std::collections::VecDeque::new(),
            persisted: BTreeMap::new(),
            releasing: false,
            side,
            errors: Vec::new(),
            stats: Stats::default(),
        }
    }

    fn log(&mut self, line: String) {
        self.trace.push(format!("[{} t={}] {line}", self.step, self.now));
    }

    fn fail(&mut self, message: String) {
        self.log(format!("VIOLATION: {message}"));
        self.errors.push(message);
    }

    fn identity(&self, member_id: &str) -> String {
        if let Some(instance) = self.instance_of.get(member_id) {
            return instance.clone();
        }
        // A static member's id is its instance id, a dash and a UUID: with late writes
        // an answer may name a replacement's id before the replacement's own answer.
        match member_id.len().checked_sub(37) {
            Some(cut)
                if member_id.starts_with("instance-") && member_id.as_bytes().get(cut) == Some(&b'-') =>
            {
                member_id[..cut].to_owned()
            }
            _ => member_id.to_owned(),
        }
    }

    fn members(&self) -> Vec<String> {
        self.core
            .group(GROUP)
            .map(|g| g.members.into_iter().map(|m| m.member_id).collect())
            .unwrap_or_default()
    }

    /// Applies effects: timers queued, answers routed, writes completed (some fail).
    fn process(&mut self, fx: Effects) {
        self.timers.apply(fx.timers);
        // Learn every id's instance first: a batch may name a leader before its own answer.
        for (rid, response) in &fx.responses {
            if let (Response::JoinGroup(r), Some(sent)) = (response, self.sent.get(rid))
                && let (false, Some(instance)) = (r.member_id.is_empty(), &sent.instance)
            {
                self.instance_of.insert(r.member_id.to_string(), instance.clone());
            }
        }
        for (rid, response) in fx.responses {
            self.on_response(rid, response);
        }
        for write in fx.writes {
            if self.late {
                self.queue.push_back(write);
            } else {
                self.complete(write);
            }
        }
    }

    /// The outcome storage gives one write: some fail.
    fn outcome(&mut self, id: WriteId) -> Result<(), ErrorCode> {
        if self.rng.chance(self.write_failure_percent) {
            let error = self.rng.pick(&[
                ErrorCode::NotLeaderOrFollower,
                ErrorCode::NotEnoughReplicas,
                ErrorCode::MessageTooLarge,
                ErrorCode::RequestTimedOut,
            ]);
            self.log(format!("write {id:?} fails with {}", error.name()));
            self.stats.failed_writes += 1;
            Err(error)
        } else {
            Ok(())
        }
    }

    /// Storage completes one write of the group's partition.
    fn complete(&mut self, write: Write) {
        let result = self.outcome(write.id);
        if result.is_ok() {
            apply_records(&mut self.persisted, &write.records, GROUP);
        }
        let more = self.core.complete_write(self.now, write.id, result);
        let outstanding = self.queue.len();
        let core = &self.core;
        self.queue.retain(|w| core.is_write_outstanding(w.id));
        self.stats.voided_writes += (outstanding - self.queue.len()) as u64;
        let releasing = std::mem::replace(&mut self.releasing, true);
        self.process(more);
        self.releasing = releasing;
    }

    /// The second partition's simple consumer commits one or two partitions.
    fn side_commit(&mut self) {
        let all = topic_set();
        let tp = all[self.rng.below(all.len() as u64) as usize].clone();
        let offset = self.next_offset;
        self.next_offset += 1;
        let rid = RequestId(self.next_rid);
        self.next_rid += 1;
        self.log(format!("side commits {tp} at {offset} as {rid:?}"));
        self.side.sent.insert(rid, vec![(tp.clone(), offset)]);
        let request = commit(SIDE_GROUP, "", None, -1, &[(tp, offset)]);
        let Some(core) = self.side.core.as_mut() else { return };
        let fx = core.handle(self.now, rid, Request::OffsetCommit(request));
        self.side_process(fx);
    }

    fn side_process(&mut self, fx: Effects) {
        for (rid, response) in fx.responses {
            let Some(offsets) = self.side.sent.remove(&rid) else {
                self.fail(format!("side: answer to unknown {rid:?}"));
                continue;
            };
            let Response::OffsetCommit(r) = response else {
                self.fail(format!("side: {rid:?} answered with another kind"));
                continue;
            };
            for (tp, offset) in offsets {
                if r.error_for(&tp.topic, tp.partition) == Some(ErrorCode::None) {
                    if self.side.persisted.get(&tp) != Some(&offset) {
                        self.fail(format!(
                            "side: commit of {tp} at {offset} acknowledged before storage held it"
                        ));
                    }
                    self.side.committed.insert(tp, offset);
                    self.stats.commits_acknowledged += 1;
                }
            }
        }
        self.side.queue.extend(fx.writes);
    }

    /// Storage completes the second partition's oldest write.
    fn complete_side(&mut self) {
        let Some(write) = self.side.queue.pop_front() else { return };
        let result = self.outcome(write.id);
        if result.is_ok() {
            apply_records(&mut self.side.persisted, &write.records, SIDE_GROUP);
        }
        self.log(format!("storage completes side {:?} late", write.id));
        self.stats.late_completions += 1;
        let Some(core) = self.side.core.as_mut() else { return };
        let fx = core.complete_write(self.now, write.id, result);
        let core = &*core;
        let before = self.side.queue.len();
        self.side.queue.retain(|w| core.is_write_outstanding(w.id));
        self.stats.voided_writes += (before - self.side.queue.len()) as u64;
        self.side_process(fx);
    }

    /// Late mode: everything queued completes (completions may queue more).
    fn drain_storage(&mut self) {
        while !self.queue.is_empty() || !self.side.queue.is_empty() {
            self.storage_progress();
        }
    }

    /// The committed offsets each core reads from equal what storage holds.
    fn check_committed_is_persisted(&mut self) {
        for tp in topic_set() {
            let held = self.core.committed_offset(GROUP, &tp.topic, tp.partition).map(|o| o.offset);
            let stored = self.persisted.get(&tp).copied();
            if held != stored {
                self.fail(format!(
                    "{tp}: the coordinator's committed state says {held:?}, storage holds {stored:?}"
                ));
            }
            if let Some(core) = &self.side.core {
                let held = core.committed_offset(SIDE_GROUP, &tp.topic, tp.partition).map(|o| o.offset);
                let stored = self.side.persisted.get(&tp).copied();
                let acked = self.side.committed.get(&tp).copied();
                if held != stored || acked != stored {
                    self.fail(format!(
                        "side {tp}: committed state {held:?}, storage {stored:?}, last acknowledged {acked:?}"
                    ));
                }
            }
        }
    }

    /// Late mode: storage completes a few queued writes, of either partition.
    fn storage_progress(&mut self) {
        let n = 1 + self.rng.below(3);
        for _ in 0..n {
            let side_first = !self.side.queue.is_empty() && (self.queue.is_empty() || self.rng.chance(40));
            if side_first {
                self.complete_side();
            } else if let Some(write) = self.queue.pop_front() {
                self.log(format!("storage completes {:?} late", write.id));
                self.stats.late_completions += 1;
                self.complete(write);
            }
        }
    }

    fn send(&mut self, client: usize, what: &'static str, request: Request, generation: i32) -> RequestId {
        let rid = RequestId(self.next_rid);
        self.next_rid += 1;
        let c = &self.clients[client];
        let commit = match &request {
            Request::OffsetCommit(r) => r
                .offsets
                .iter()
                .flat_map(|t| {
                    t.partitions
                        .iter()
                        .map(move |(p, d)| (TopicPartition::new(t.topic.as_str(), *p), d.offset))
                })
                .collect(),
            _ => Vec::new(),
        };
        // Who the request claims to be, as the coordinator sees it.
        let (member_id, instance) = match &request {
            Request::JoinGroup(r) => (r.member_id.clone(), r.group_instance_id.clone()),
            Request::SyncGroup(r) => (r.member_id.clone(), r.group_instance_id.clone()),
            Request::Heartbeat(r) => (r.member_id.clone(), r.group_instance_id.clone()),
            Request::OffsetCommit(r) => (r.member_id.clone(), r.group_instance_id.clone()),
            Request::LeaveGroup(r) => r
                .members
                .first()
                .map(|m| (m.member_id.clone(), m.group_instance_id.clone()))
                .unwrap_or_default(),
            _ => (MemberId::empty(), None),
        };
        let (name, incarnation) = (c.name.clone(), c.incarnation);
        self.log(format!("{name} sends {what} (id {member_id:?}, gen {generation}) as {rid:?}"));
        let mut sent = Sent {
            client,
            incarnation,
            step: self.step,
            what,
            member_id: member_id.to_string(),
            instance: instance.map(String::from),
            generation,
            commit,
            commit_problem: None,
        };
        if what == "commit" {
            let probe = Response::OffsetCommit(group_types::OffsetCommitResponse::default());
            sent.commit_problem = self.success_problem(&sent, &probe);
        }
        self.sent.insert(rid, sent);
        let fx = self.core.handle(self.now, rid, request);
        self.process(fx);
        rid
    }

    fn on_response(&mut self, rid: RequestId, response: Response) {
        let Some(sent) = self.sent.remove(&rid) else {
            self.fail(format!("answer to {rid:?}, which is unknown or was already answered: {response:?}"));
            return;
        };
        let name = self.clients[sent.client].name.clone();
        let error = match &response {
            Response::JoinGroup(r) => r.error_code,
            Response::SyncGroup(r) => r.error_code,
            Response::Heartbeat(r) => r.error_code,
            Response::LeaveGroup(r) => r.error_code,
            Response::OffsetCommit(r) => {
                r.iter().map(|(_, _, e)| e).find(|e| *e != ErrorCode::None).unwrap_or(ErrorCode::None)
            }
            _ => ErrorCode::None,
        };
        let detail = match &response {
            Response::JoinGroup(r) => format!(
                " id {:?} gen {} leader {:?} members {:?}",
                r.member_id,
                r.generation_id,
                r.leader_id,
                r.members.iter().map(|m| m.member_id.as_str()).collect::<Vec<_>>()
            ),
            _ => String::new(),
        };
        self.log(format!("{name} <- {} {}{detail} (sent at step {})", sent.what, error.name(), sent.step));
        // A member expelled by a timer never succeeds again with its old id.
        // (An answer a write held back was decided before it was released: only a
        // request sent after the expulsion must not succeed then.)
        if error == ErrorCode::None
            && sent.what != "leave"
            && let Some(&(g, expelled_at)) = self.expelled.get(&sent.member_id)
            && (sent.what == "join" || sent.generation <= g)
            && (!self.releasing || sent.step > expelled_at)
        {
            self.fail(format!(
                "{} answered NONE to {name}'s id {:?}, expelled by a timer in generation {g}",
                sent.what, sent.member_id
            ));
        }
        if error == ErrorCode::None && sent.what == "commit" {
            if let Some(problem) = &sent.commit_problem {
                self.fail(format!("{problem} (id {:?})", sent.member_id));
            }
        } else if error == ErrorCode::None && matches!(sent.what, "join" | "sync" | "heartbeat") {
            if self.releasing {
                self.check_success_not_ahead(&sent, &response);
            } else {
                self.check_success_is_current(&sent, &response);
            }
        }
        match response {
            Response::JoinGroup(r) => self.on_join(&sent, r),
            Response::SyncGroup(r) => {
                if r.error_code == ErrorCode::None {
                    self.on_assignment(&sent, &r.assignment);
                }
                let current = self.clients[sent.client].incarnation == sent.incarnation;
                if current {
                    let c = &mut self.clients[sent.client];
                    match r.error_code {
                        ErrorCode::None => {
                            c.phase = Phase::Stable;
                            self.stats.assignments += 1;
                        }
                        ErrorCode::UnknownMemberId | ErrorCode::FencedInstanceId => {
                            c.member_id.clear();
                            c.phase = Phase::NeedJoin;
                        }
                        _ => c.phase = Phase::NeedJoin,
                    }
                }
            }
            Response::Heartbeat(r) => self.on_signal(&sent, r.error_code),
            Response::OffsetCommit(r) => {
                for (tp, offset) in &sent.commit {
                    if r.error_for(&tp.topic, tp.partition) == Some(ErrorCode::None) {
                        if self.persisted.get(tp) != Some(offset) {
                            self.fail(format!(
                                "commit of {tp} at {offset} acknowledged before storage held it"
                            ));
                        }
                        self.committed.insert(tp.clone(), *offset);
                        self.stats.commits_acknowledged += 1;
                    }
                }
                self.on_signal(&sent, error);
            }
            _ => {}
        }
    }

    /// An answer a write held back may be for a generation the group has since left,
    /// never for one it has not reached.
    fn check_success_not_ahead(&mut self, sent: &Sent, response: &Response) {
        let generation = self.core.group(GROUP).map_or(0, |g| g.generation_id);
        let answered = match response {
            Response::JoinGroup(r) => r.generation_id,
            _ => sent.generation,
        };
        if answered > generation {
            self.fail(format!(
                "{} NONE for generation {answered}, ahead of the group's {generation}",
                sent.what
            ));
        }
    }

    /// A success is only given to a current member of the current generation (or, for a
    /// simple commit, to a group without members).
    fn check_success_is_current(&mut self, sent: &Sent, response: &Response) {
        if let Some(problem) = self.success_problem(sent, response) {
            self.fail(problem);
        }
    }

    /// Why a success for `sent` would break the rule, if it would.
    fn success_problem(&self, sent: &Sent, response: &Response) -> Option<String> {
        let g = self.core.group(GROUP);
        let (state, generation) = g.as_ref().map_or((GroupState::Empty, 0), |g| (g.state, g.generation_id));
        let member_id = match response {
            Response::JoinGroup(r) => r.member_id.to_string(),
            _ => sent.member_id.to_string(),
        };
        let is_member = g.as_ref().is_some_and(|g| g.member(&member_id).is_some());
        let problem = match sent.what {
            "commit" if sent.generation < 0 => (is_member
                || g.as_ref().is_some_and(|g| !g.members.is_empty()))
            .then(|| format!("simple commit accepted by a {state:?} group with members")),
            "join" => (!is_member || r_generation(response) != generation).then(|| {
                format!(
                    "join NONE for generation {}; group at {generation}, member: {is_member}",
                    r_generation(response)
                )
            }),
            _ => (!is_member || sent.generation != generation || state == GroupState::Empty).then(|| {
                format!(
                    "{} NONE for generation {}; group {state:?} at {generation}, member: {is_member}",
                    sent.what, sent.generation
                )
            }),
        };
        problem.map(|problem| format!("{problem} (id {member_id:?})"))
    }

    /// Heartbeat and commit errors tell a client to rejoin or start over.
    fn on_signal(&mut self, sent: &Sent, error: ErrorCode) {
        let now = self.now;
        let slow = self.rng.chance(25);
        let delay = self.rng.below(3 * 1_500) as i64;
        let c = &mut self.clients[sent.client];
        if c.incarnation != sent.incarnation || c.phase == Phase::Joining {
            return;
        }
        match error {
            ErrorCode::RebalanceInProgress | ErrorCode::IllegalGeneration => {
                c.phase = Phase::NeedJoin;
                if slow {
                    c.not_before = now + delay;
                }
            }
            ErrorCode::UnknownMemberId | ErrorCode::FencedInstanceId => {
                c.member_id.clear();
                c.phase = Phase::NeedJoin;
            }
            _ => {}
        }
    }

    fn on_join(&mut self, sent: &Sent, r: JoinGroupResponse) {
        if let (false, Some(instance)) = (r.member_id.is_empty(), &sent.instance) {
            self.instance_of.insert(r.member_id.to_string(), instance.clone());
        }
        for m in &r.members {
            if let Some(instance) = &m.group_instance_id {
                self.instance_of.insert(m.member_id.to_string(), instance.to_string());
            }
        }
        if r.error_code == ErrorCode::None {
            // (An answer a write held back may be for a generation the group has left.)
            if r.generation_id < self.last_generation && !self.releasing {
                self.fail(format!(
                    "JoinGroup answered generation {} after {}",
                    r.generation_id, self.last_generation
                ));
            }
            let leader = self.identity(&r.leader_id);
            match self.leader_of_generation.get(&r.generation_id) {
                Some(known) if *known != leader => {
                    let known = known.clone();
                    self.fail(format!(
                        "generation {} has two leaders: {known} and {leader}",
                        r.generation_id
                    ));
                }
                Some(_) => {}
                None => {
                    self.leader_of_generation.insert(r.generation_id, leader);
                }
            }
        }
        let c = &mut self.clients[sent.client];
        if c.incarnation != sent.incarnation {
            return;
        }
        match r.error_code {
            ErrorCode::MemberIdRequired => {
                c.member_id = r.member_id.into();
                c.phase = Phase::NeedJoin;
            }
            ErrorCode::None => {
                c.member_id = r.member_id.to_string();
                c.generation = r.generation_id;
                c.leads = (r.leader_id == r.member_id && !r.skip_assignment)
                    .then(|| r.members.iter().map(|m| m.member_id.to_string()).collect());
                c.phase = Phase::NeedSync;
            }
            ErrorCode::RebalanceInProgress => c.phase = Phase::NeedJoin,
            _ => {
                c.member_id.clear();
                c.phase = Phase::NeedJoin;
            }
        }
    }

    /// A SyncGroup NONE: the assignment must be what the leader of that generation
    /// planned for this member, and no partition may have two owners in it.
    fn on_assignment(&mut self, sent: &Sent, bytes: &[u8]) {
        let generation = sent.generation;
        let who = self.identity(&sent.member_id);
        let partitions = match decode_assignment(bytes) {
            Ok(p) => p,
            Err(e) => return self.fail(format!("generation {generation}: {e}")),
        };
        match self.plan_of_generation.get(&generation) {
            None => self.fail(format!("SyncGroup NONE in generation {generation} that no leader assigned")),
            Some(plan) => {
                let planned = plan.get(&who).cloned().unwrap_or_default();
                if planned != partitions {
                    self.fail(format!(
                        "generation {generation}: {who} received {partitions:?}, its leader planned {planned:?}"
                    ));
                }
            }
        }
        for tp in partitions {
            let previous = self.owner.insert((generation, tp.clone()), who.clone());
            if let Some(other) = previous.filter(|o| *o != who) {
                self.fail(format!("generation {generation}: {tp} handed to {other} and to {who}"));
            }
        }
    }

    /// Fires every timer due up to `until`, noting members a timer removed.
    fn advance_to(&mut self, until: i64) {
        while let Some((deadline, key)) = self.timers.pop_due(until) {
            self.now = deadline.max(self.now);
            let before = self.members();
            let generation = self.core.group(GROUP).map_or(0, |g| g.generation_id);
            let fx = self.core.fire_timer(self.now, &key);
            self.process(fx);
            let after: HashSet<String> = self.members().into_iter().collect();
            for id in before.into_iter().filter(|id| !after.contains(id)) {
                self.log(format!("timer {key:?} removed {id:?} (generation {generation})"));
                self.expelled.insert(id, (generation, self.step));
                self.stats.expulsions += 1;
            }
        }
        self.now = self.now.max(until);
    }

    fn act(&mut self) {
        if self.late && self.rng.chance(30) {
            self.storage_progress();
            return;
        }
        if self.late && self.rng.chance(10) {
            self.side_commit();
            return;
        }
        if self.rng.chance(25) {
            let dt = 1 + self.rng.below(self.max_tick) as i64;
            self.log(format!("time +{dt}"));
            self.advance_to(self.now + dt);
            return;
        }
        let i = self.rng.below(self.clients.len() as u64) as usize;
        let roll = self.rng.below(100);
        let (phase, name) = (self.clients[i].phase, self.clients[i].name.clone());
        let joining = self
            .sent
            .values()
            .any(|s| s.client == i && s.what == "join" && s.incarnation == self.clients[i].incarnation);
        match phase {
            Phase::Crashed => {
                if roll < 40 {
                    let c = &mut self.clients[i];
                    c.incarnation += 1;
                    c.member_id.clear();
                    c.phase = Phase::NeedJoin;
                    c.not_before = 0;
                    let kind =
                        if c.instance.is_some() { "static restart" } else { "restart as a new member" };
                    self.log(format!("{name}: {kind}"));
                    self.stats.static_restarts += u64::from(self.clients[i].instance.is_some());
                    self.send_join(i);
                }
            }
            Phase::Out | Phase::NeedJoin if !joining => {
                if self.now >= self.clients[i].not_before && roll < 85 {
                    self.send_join(i);
                } else if roll >= 95 {
                    // A simple consumer's commit: accepted only while the group is Empty.
                    self.send_commit(i, true);
                }
            }
            _ => {
                let c = &self.clients[i];
                let has_generation = !c.member_id.is_empty() && c.generation >= 0;
                if phase == Phase::NeedSync && roll < 70 {
                    self.send_sync(i);
                } else if roll < 5 && !c.member_id.is_empty() {
                    self.send_leave(i);
                } else if roll < 10 {
                    let c = &mut self.clients[i];
                    c.phase = Phase::Crashed;
                    c.incarnation += 1;
                    self.log(format!("{name} crashes"));
                    self.stats.crashes += 1;
                } else if roll < 30 && phase == Phase::Stable {
                    self.send_commit(i, false);
                } else if has_generation {
                    let c = &self.clients[i];
                    let request = heartbeat(GROUP, &c.member_id, c.instance.as_deref(), c.generation);
                    let generation = c.generation;
                    self.send(i, "heartbeat", Request::Heartbeat(request), generation);
                }
            }
        }
    }

    fn send_join(&mut self, i: usize) {
        let c = &mut self.clients[i];
        c.phase = Phase::Joining;
        let mut request = join(GROUP, &c.member_id, c.instance.as_deref(), c.session_ms, c.rebalance_ms);
        request.protocols = c.protocols.clone();
        request.api_version = c.api_version;
        self.send(i, "join", Request::JoinGroup(request), -1);
    }

    fn send_sync(&mut self, i: usize) {
        let c = &mut self.clients[i];
        c.phase = Phase::Syncing;
        let generation = c.generation;
        let mut assignments = Vec::new();
        if let Some(members) = c.leads.clone() {
            let plan = round_robin(&members);
            assignments = encode_plan(&plan);
            let by_identity: HashMap<String, Vec<TopicPartition>> =
                plan.into_iter().map(|(id, tps)| (self.identity(&id), tps)).collect();
            self.plan_of_generation.entry(generation).or_insert(by_identity);
        }
        let c = &self.clients[i];
        let request = sync(GROUP, &c.member_id, c.instance.as_deref(), generation, assignments);
        self.send(i, "sync", Request::SyncGroup(request), generation);
    }

    fn send_leave(&mut self, i: usize) {
        let c = &self.clients[i];
        let request = leave(GROUP, &c.member_id, c.instance.as_deref());
        self.stats.leaves += 1;
        self.send(i, "leave", Request::LeaveGroup(request), -1);
        let c = &mut self.clients[i];
        c.incarnation += 1;
        c.member_id.clear();
        c.phase = Phase::Out;
        c.generation = -1;
    }

    fn send_commit(&mut self, i: usize, simple: bool) {
        let all = topic_set();
        let count = 1 + self.rng.below(3) as usize;
        let mut offsets = Vec::new();
        for _ in 0..count {
            let tp = all[self.rng.below(all.len() as u64) as usize].clone();
            if offsets.iter().all(|(t, _)| *t != tp) {
                offsets.push((tp, self.next_offset));
                self.next_offset += 1;
            }
        }
        let c = &self.clients[i];
        let (member_id, instance, generation) =
            if simple { ("", None, -1) } else { (c.member_id.as_str(), c.instance.as_deref(), c.generation) };
        let request = commit(GROUP, member_id, instance, generation, &offsets);
        let partitions: Vec<TopicPartition> = offsets.iter().map(|(tp, _)| tp.clone()).collect();
        self.send(i, "commit", Request::OffsetCommit(request), generation);
        self.check_fetch(&partitions);
    }

    /// OffsetFetch must show the last acknowledged commit of each partition.
    fn check_fetch(&mut self, partitions: &[TopicPartition]) {
        let rid = RequestId(u64::MAX);
        let fx = self.core.handle(self.now, rid, Request::OffsetFetch(fetch(GROUP, partitions)));
        let Some((_, Response::OffsetFetch(r))) = fx.responses.into_iter().find(|(id, _)| *id == rid) else {
            return self.fail("OffsetFetch was not answered at once".into());
        };
        for tp in partitions {
            let expected = self.committed.get(tp).copied().unwrap_or(-1);
            let actual = r
                .offsets
                .get(tp.topic.as_ref())
                .and_then(|ps| ps.get(&tp.partition))
                .map_or(-2, |d| d.offset);
            if actual != expected {
                self.fail(format!(
                    "OffsetFetch of {tp} reads {actual}, last acknowledged commit is {expected}"
                ));
            }
        }
    }

    /// Checks run after every step.
    fn check_step(&mut self) {
        self.check_committed_is_persisted();
        let Some(generation) = self.core.group(GROUP).map(|g| g.generation_id) else {
            // The retention job removes an Empty group without offsets; a new one starts over.
            if !self.committed.is_empty() {
                self.fail("the group vanished although it holds committed offsets".into());
            }
            self.last_generation = 0;
            return;
        };
        if generation < self.last_generation {
            self.fail(format!("generation went back from {} to {generation}", self.last_generation));
        }
        if generation > self.last_generation {
            self.stats.generations += (generation - self.last_generation) as u64;
        }
        self.last_generation = self.last_generation.max(generation);
        let committed: Vec<(TopicPartition, i64)> =
            self.committed.iter().map(|(t, o)| (t.clone(), *o)).collect();
        for (tp, offset) in committed {
            let actual = self.core.committed_offset(GROUP, &tp.topic, tp.partition).map_or(-1, |o| o.offset);
            if actual != offset {
                self.fail(format!(
                    "{tp}: the coordinator holds {actual}, the last acknowledged commit is {offset}"
                ));
            }
        }
    }

    /// Everyone still running leaves, time runs far ahead: nothing may stay unanswered.
    fn finish(&mut self) {
        self.log("finale: every running client leaves, time runs ahead".into());
        for i in 0..self.clients.len() {
            if self.clients[i].phase != Phase::Crashed && !self.clients[i].member_id.is_empty() {
                self.send_leave(i);
            }
        }
        let horizon = self.now + 2 * 300_000 + 10_000;
        self.drain_storage();
        self.advance_to(horizon);
        self.drain_storage();
        self.advance_to(horizon + 10_000);
        self.drain_storage();
        self.check_step();
        if !self.side.sent.is_empty() {
            self.fail(format!("side: {} commits never answered", self.side.sent.len()));
        }
        let mut left: Vec<(RequestId, Sent)> = self.sent.iter().map(|(r, s)| (*r, s.clone())).collect();
        left.sort_by_key(|(r, _)| *r);
        for (rid, s) in left {
            let name = &self.clients[s.client].name;
            self.fail(format!("{rid:?} ({name}'s {} of step {}) was never answered", s.what, s.step));
        }
        if let Some(g) = self.core.group(GROUP)
            && (g.state != GroupState::Empty || !g.members.is_empty() || !g.pending_members.is_empty())
        {
            self.fail(format!(
                "after everyone left or expired the group is {:?} with {} members and {} pending",
                g.state,
                g.members.len(),
                g.pending_members.len()
            ));
        }
        self.check_fetch(&topic_set());
    }
}

/// What storage holds after an `Ok` write: `group`'s offsets, by partition.
fn apply_records(persisted: &mut BTreeMap<TopicPartition, i64>, records: &[Record], group: &str) {
    for record in records {
        match record {
            Record::Offset { group_id, partition, offset } if &**group_id == group => {
                persisted.insert(partition.clone(), offset.offset);
            }
            Record::OffsetTombstone { group_id, partition } if &**group_id == group => {
                persisted.remove(partition);
            }
            _ => {}
        }
    }
}

fn r_generation(response: &Response) -> i32 {
    match response {
        Response::JoinGroup(r) => r.generation_id,
        _ => -1,
    }
}

/// Runs one seed; `Err` carries the step, the violation and the trace.
pub(crate) fn run_seed(seed: u64) -> Result<(Stats, Vec<String>), Failure> {
    let mut sim = Sim::new(seed);
    for step in 0..STEPS {
        sim.step = step;
        sim.act();
        sim.check_step();
        if let Some(message) = sim.errors.first() {
            return Err(Failure { step, message: message.clone(), trace: sim.trace });
        }
    }
    sim.step = STEPS;
    sim.finish();
    match sim.errors.first() {
        Some(message) => Err(Failure { step: STEPS, message: message.clone(), trace: sim.trace }),
        None => Ok((sim.stats, sim.trace)),
    }
}

fn report(seed: u64, failure: &Failure) -> String {
    let mut out = format!(
        "simulation seed {seed} failed at step {}: {}\nrerun: SIM_SEED={seed} cargo test -p group-coordinator --test hardening simulation\ntrace:\n",
        failure.step, failure.message
    );
    for line in &failure.trace {
        let _ = writeln!(out, "  {line}");
    }
    out
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

#[test]
fn simulation_holds_every_invariant_across_seeds() {
    let seeds: Vec<u64> = match env_u64("SIM_SEED") {
        Some(seed) => vec![seed],
        None => (0..env_u64("SIM_SEEDS").unwrap_or(DEFAULT_SEEDS)).collect(),
    };
    let started = std::time::Instant::now();
    let mut total = Stats::default();
    for &seed in &seeds {
        match run_seed(seed) {
            Ok((stats, trace)) => {
                total.add(stats);
                if seeds.len() == 1 {
                    // SIM_SEED=<n>: show what the seed did even when it passes.
                    println!("seed {seed} passed; trace:\n  {}", trace.join("\n  "));
                }
            }
            Err(failure) => panic!("{}", report(seed, &failure)),
        }
    }
    println!("{} seeds x {STEPS} steps in {:?}: {total:?}", seeds.len(), started.elapsed());
    if seeds.len() >= 100 {
        // The harness must keep exercising what it claims to check.
        let n = seeds.len() as u64;
        assert!(total.generations >= 3 * n, "too few generations: {total:?}");
        assert!(total.assignments >= 3 * n, "too few assignments: {total:?}");
        assert!(total.commits_acknowledged >= n, "too few commits: {total:?}");
        assert!(total.expulsions >= n / 2, "too few expulsions: {total:?}");
        assert!(total.static_restarts >= n / 10, "too few static restarts: {total:?}");
        assert!(total.crashes >= n && total.leaves >= n, "too few crashes or leaves: {total:?}");
        assert!(total.failed_writes >= n / 10, "too few failed writes: {total:?}");
        assert!(total.late_completions >= 10 * n, "too few late completions: {total:?}");
        assert!(total.voided_writes >= n / 20, "too few writes voided by an earlier failure: {total:?}");
    }
}

#[test]
fn a_seed_replays_identically() {
    let first = Sim::new(7);
    let second = Sim::new(7);
    assert_eq!(first.clients.len(), second.clients.len());
    let trace = |seed| {
        let mut sim = Sim::new(seed);
        for step in 0..STEPS {
            sim.step = step;
            sim.act();
        }
        sim.trace
    };
    let (a, b) = (trace(7), trace(7));
    assert_eq!(a, b);
    assert!(a.len() > STEPS / 2, "a seed should do something: {} trace lines", a.len());
    assert_ne!(a, trace(8));
}

/// The checks themselves must be able to fail: fabricated violations are caught.
#[test]
fn the_invariant_checks_catch_fabricated_violations() {
    let sent = |sim: &Sim, member_id: &str, what: &'static str, generation: i32| Sent {
        client: 0,
        incarnation: sim.clients[0].incarnation + 1,
        step: 0,
        what,
        member_id: member_id.into(),
        instance: None,
        generation,
        commit: Vec::new(),
        commit_problem: None,
    };
    let tp = TopicPartition::new("t0", 0);
    let bytes = |tps: &[TopicPartition]| encode_plan(&[("x".into(), tps.to_vec())])[0].assignment.clone();

    // Two owners of one partition in one generation.
    let mut sim = Sim::new(1);
    sim.plan_of_generation
        .insert(5, HashMap::from([("x".into(), vec![tp.clone()]), ("y".into(), vec![tp.clone()])]));
    sim.on_assignment(&sent(&sim, "x", "sync", 5), &bytes(std::slice::from_ref(&tp)));
    assert!(sim.errors.is_empty(), "{:?}", sim.errors);
    sim.on_assignment(&sent(&sim, "y", "sync", 5), &bytes(std::slice::from_ref(&tp)));
    assert!(sim.errors.iter().any(|e| e.contains("handed to")), "{:?}", sim.errors);

    // An assignment other than the leader's plan.
    let mut sim = Sim::new(1);
    sim.plan_of_generation.insert(2, HashMap::new());
    sim.on_assignment(&sent(&sim, "x", "sync", 2), &bytes(std::slice::from_ref(&tp)));
    assert!(sim.errors.iter().any(|e| e.contains("planned")), "{:?}", sim.errors);

    // Two leaders in one generation.
    let mut sim = Sim::new(1);
    let answer = |leader: &str| JoinGroupResponse {
        error_code: ErrorCode::None,
        generation_id: 3,
        leader_id: leader.into(),
        member_id: "m".into(),
        ..JoinGroupResponse::default()
    };
    sim.on_join(&sent(&sim, "m", "join", -1), answer("a"));
    sim.on_join(&sent(&sim, "m", "join", -1), answer("b"));
    assert!(sim.errors.iter().any(|e| e.contains("two leaders")), "{:?}", sim.errors);

    // A success for a member a timer expelled, and an answer nobody asked for.
    let mut sim = Sim::new(1);
    sim.expelled.insert("gone".into(), (4, 0));
    let rid = RequestId(777);
    sim.sent.insert(rid, sent(&sim, "gone", "heartbeat", 4));
    sim.on_response(rid, Response::Heartbeat(group_types::HeartbeatResponse { error_code: ErrorCode::None }));
    assert!(sim.errors.iter().any(|e| e.contains("expelled")), "{:?}", sim.errors);
    sim.on_response(rid, Response::Heartbeat(group_types::HeartbeatResponse { error_code: ErrorCode::None }));
    assert!(sim.errors.iter().any(|e| e.contains("already answered")), "{:?}", sim.errors);

    // A request never answered, and an offset the coordinator does not hold.
    let mut sim = Sim::new(1);
    sim.sent.insert(RequestId(778), sent(&sim, "x", "join", -1));
    sim.committed.insert(tp.clone(), 42);
    sim.finish();
    assert!(sim.errors.iter().any(|e| e.contains("never answered")), "{:?}", sim.errors);
    assert!(sim.errors.iter().any(|e| e.contains("last acknowledged commit is 42")), "{:?}", sim.errors);
}
