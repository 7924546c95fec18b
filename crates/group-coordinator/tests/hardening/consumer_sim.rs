//! Deterministic simulation of KIP-848 consumer groups: seeded clients join,
//! heartbeat, acknowledge what they were given (or not), change subscriptions,
//! leave, crash and restart, while time moves in random steps and writes complete
//! late, in order, some failing after later requests were handled. Half the runs
//! mix in classic clients (JoinGroup, SyncGroup, Heartbeat, eager): they become
//! classic members of the consumer group, the group turns classic when its
//! consumer members go and back when one joins again.
//!
//! Checked after every step: the coordinator never records a partition as owned
//! by two members (assigned or pending revocation); epochs never run ahead of the
//! group epoch; a client is only ever handed a partition that no other client
//! still holds, unless the coordinator had already removed that other client (its
//! session or revocation deadline passed); every request is answered exactly once.
//! At the end failures stop and every live client keeps heartbeating: the group
//! must converge to Stable, each client owning exactly what the coordinator says,
//! every partition of the subscribed topics assigned.
//!
//! `CONSUMER_SIM_SEEDS=<n>` runs more seeds than CI's default.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use group_coordinator::{
    CoordinatorConfig, CoordinatorCore, Effects, MetadataImage, Request, RequestId, Response, TimerQueue,
    TopicImage, Write,
};
use group_types::{ConsumerGroupHeartbeatRequest, ConsumerGroupState, ErrorCode, TopicId, TopicIdPartitions};

use crate::support::Rng;

const DEFAULT_SEEDS: u64 = 200;
const STEPS: usize = 300;
const FOO: TopicId = TopicId::from_u128(1);
const BAR: TopicId = TopicId::from_u128(2);

type Owned = BTreeSet<(TopicId, i32)>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Out,
    In,
    Crashed,
}

#[derive(Debug)]
struct Client {
    member_id: String,
    epoch: i32,
    phase: Phase,
    owned: Owned,
    topics: Vec<String>,
    waiting: Option<RequestId>,
    /// The request in flight is a leave.
    leaving: bool,
    /// The next heartbeat is a full one (after an error, as librdkafka sends).
    full: bool,
    /// Speaks the classic protocol (JoinGroup, SyncGroup, Heartbeat), eagerly:
    /// it gives up what it owns whenever it rejoins.
    classic: bool,
    /// A classic client's generation (its member epoch inside a consumer group).
    generation: i32,
    restarts: u32,
}

struct Sim {
    core: CoordinatorCore,
    timers: TimerQueue,
    now: i64,
    rng: Rng,
    late: bool,
    queue: Vec<Write>,
    clients: Vec<Client>,
    next_request: u64,
    answered: HashSet<RequestId>,
    owner_of: HashMap<RequestId, usize>,
    trace: Vec<String>,
    /// The assignment epoch (KIP-1251) of every partition each member held at
    /// the last check.
    held_since: HashMap<(String, TopicId, i32), (i32, bool)>,
    /// A write failed: the state went back to before it (and every later one),
    /// so the next check takes the epochs as they are.
    rebaseline: bool,
}

fn config() -> CoordinatorConfig {
    let mut config = CoordinatorConfig {
        min_session_timeout_ms: 100,
        initial_rebalance_delay_ms: 50,
        ..Default::default()
    };
    config.consumer.session_timeout_ms = 1_000;
    config.consumer.min_session_timeout_ms = 100;
    config.consumer.heartbeat_interval_ms = 100;
    config.consumer.min_heartbeat_interval_ms = 10;
    config
}

fn wire(owned: &Owned) -> Vec<TopicIdPartitions> {
    let mut out: Vec<TopicIdPartitions> = Vec::new();
    for (t, p) in owned {
        match out.last_mut() {
            Some(last) if last.topic_id == *t => last.partitions.push(*p),
            _ => out.push(TopicIdPartitions::new(*t, [*p])),
        }
    }
    out
}

fn set(parts: &[TopicIdPartitions]) -> Owned {
    parts.iter().flat_map(|t| t.partitions.iter().map(move |p| (t.topic_id, *p))).collect()
}

impl Sim {
    fn new(seed: u64, late: bool) -> Sim {
        let mut core = CoordinatorCore::new(config());
        let image = MetadataImage::new(1, [TopicImage::new(FOO, "foo", 8), TopicImage::new(BAR, "bar", 5)]);
        core.update_metadata_image(Arc::new(image));
        let mut timers = TimerQueue::new();
        timers.apply(core.start(0).timers);
        let mut rng = Rng::new(seed);
        let n = 2 + rng.below(4) as usize;
        // Some runs mix classic clients in: they join the consumer group as classic
        // members, the group goes classic when the consumer members go, and back.
        let classic_clients = rng.chance(50);
        let clients = (0..n)
            .map(|i| Client {
                member_id: format!("c{i}"),
                epoch: 0,
                phase: Phase::Out,
                owned: Owned::new(),
                topics: vec!["foo".into()],
                waiting: None,
                leaving: false,
                full: false,
                classic: i > 0 && classic_clients && i % 2 == 1,
                generation: -1,
                restarts: 0,
            })
            .collect();
        Sim {
            core,
            timers,
            now: 0,
            rng,
            late,
            queue: Vec::new(),
            clients,
            next_request: 0,
            answered: HashSet::new(),
            owner_of: HashMap::new(),
            trace: Vec::new(),
            held_since: HashMap::new(),
            rebaseline: false,
        }
    }

    fn members(&self) -> HashSet<String> {
        let mut members: HashSet<String> = self
            .core
            .consumer_group("g")
            .map(|g| g.members.into_iter().filter(|m| m.member_epoch >= 0).map(|m| m.member_id).collect())
            .unwrap_or_default();
        if let Some(g) = self.core.group("g") {
            members.extend(g.members.into_iter().map(|m| m.member_id));
        }
        members
    }

    /// `me` just gained `gained`: no other live client that is still a member may
    /// hold any of it.
    fn check_gain(&self, me: usize, gained: &[(TopicId, i32)], members: &HashSet<String>) {
        for (j, other) in self.clients.iter().enumerate() {
            if j == me || other.phase == Phase::Crashed {
                continue;
            }
            for p in gained {
                assert!(
                    !other.owned.contains(p) || !members.contains(&other.member_id),
                    "c{me} was given {p:?} while c{j} (still a member) owns it\n{}\n{:#?}",
                    self.trace.join("\n"),
                    self.core.consumer_group("g")
                );
            }
        }
    }

    fn process(&mut self, fx: Effects) {
        self.timers.apply(fx.timers);
        self.queue.extend(fx.writes);
        for (rid, response) in fx.responses {
            assert!(self.answered.insert(rid), "request {rid:?} answered twice\n{}", self.trace.join("\n"));
            self.deliver(rid, response);
        }
        if !self.late {
            self.complete_writes(usize::MAX, None);
        }
        self.check_coordinator();
    }

    fn complete_writes(&mut self, n: usize, fail: Option<ErrorCode>) {
        for _ in 0..n {
            if self.queue.is_empty() {
                return;
            }
            let w = self.queue.remove(0);
            if !self.core.is_write_outstanding(w.id) {
                continue;
            }
            let result = match fail {
                Some(code) => {
                    self.rebaseline = true;
                    Err(code)
                }
                None => Ok(()),
            };
            self.trace.push(format!("{} complete {:?} {:?}", self.now, w.id, result));
            let fx = self.core.complete_write(self.now, w.id, result);
            self.process(fx);
        }
    }

    fn deliver(&mut self, rid: RequestId, response: Response) {
        let Some(i) = self.owner_of.remove(&rid) else { return };
        if self.clients[i].classic {
            self.deliver_classic(i, rid, response);
            return;
        }
        let Response::ConsumerGroupHeartbeat(r) = response else {
            panic!("not a heartbeat answer: {response:?}")
        };
        self.trace
            .push(format!("{} c{i} <- {:?} e{} {:?}", self.now, r.error_code, r.member_epoch, r.assignment));
        let members = self.members();
        let c = &mut self.clients[i];
        if c.waiting != Some(rid) {
            return;
        }
        c.waiting = None;
        match r.error_code {
            ErrorCode::None if c.leaving => {
                c.leaving = false;
                c.phase = Phase::Out;
                c.epoch = 0;
                c.owned.clear();
            }
            ErrorCode::None => {
                c.phase = Phase::In;
                c.epoch = r.member_epoch;
                if let Some(assignment) = &r.assignment {
                    let new = set(assignment);
                    let gained: Vec<(TopicId, i32)> = new.difference(&c.owned).copied().collect();
                    c.owned = new;
                    self.check_gain(i, &gained, &members);
                }
            }
            // The group went classic after this member was removed (a joining
            // member: an upgrade the group cannot take yet); start over later.
            ErrorCode::FencedMemberEpoch | ErrorCode::UnknownMemberId | ErrorCode::GroupIdNotFound => {
                // librdkafka: everything is lost, rejoin with epoch 0 and the same id.
                c.owned.clear();
                c.epoch = 0;
                c.phase = Phase::Out;
                c.leaving = false;
            }
            ErrorCode::NotCoordinator
            | ErrorCode::CoordinatorNotAvailable
            | ErrorCode::UnknownServerError => {
                c.leaving = false;
                c.full = true;
            }
            other => panic!("unexpected error {other:?}\n{}", self.trace.join("\n")),
        }
    }

    fn check_coordinator(&mut self) {
        let Some(g) = self.core.consumer_group("g") else {
            self.held_since.clear();
            return;
        };
        self.check_assignment_epochs(&g);
        assert!(g.assignment_epoch <= g.group_epoch, "{g:?}");
        let mut seen = HashSet::new();
        for m in &g.members {
            assert!(m.member_epoch <= g.group_epoch, "{g:?}");
            for t in m.assigned.iter().chain(&m.pending_revocation) {
                for p in &t.partitions {
                    assert!(
                        seen.insert((t.topic_id, *p)),
                        "{:?}-{p} owned twice: {g:#?}\n{}",
                        t.topic_id,
                        self.trace.join("\n")
                    );
                }
            }
        }
    }

    /// KIP-1251: a partition a member keeps (assigned, then pending revocation)
    /// keeps the epoch it was assigned at; one it gains, or gets back while
    /// still revoking it, is assigned at its new member epoch (the target's);
    /// none is newer than its member.
    fn check_assignment_epochs(&mut self, g: &group_coordinator::ConsumerGroupSnapshot) {
        let mut held = HashMap::new();
        for m in &g.members {
            let lists =
                [(&m.assigned, &m.assigned_epochs), (&m.pending_revocation, &m.pending_revocation_epochs)];
            for (pending, (list, epochs)) in lists.into_iter().enumerate() {
                let pending = pending == 1;
                let partitions: Vec<(TopicId, i32)> =
                    list.iter().flat_map(|t| t.partitions.iter().map(move |p| (t.topic_id, *p))).collect();
                assert!(epochs.fits(partitions.len()), "{m:?}");
                for (i, (t, p)) in partitions.into_iter().enumerate() {
                    let epoch = epochs.get(i).expect("fits");
                    let key = (m.member_id.clone(), t, p);
                    match self.held_since.get(&key).filter(|_| !self.rebaseline) {
                        // Back from pending revocation: assigned again, at the target's epoch.
                        Some((_, true)) if !pending && epoch == m.member_epoch => {}
                        Some((before, _)) => assert_eq!(
                            epoch,
                            *before,
                            "{t:?}-{p} kept by {} changed its assignment epoch\n{}",
                            m.member_id,
                            self.trace.join("\n")
                        ),
                        None if self.rebaseline => {}
                        None => assert_eq!(
                            epoch,
                            m.member_epoch,
                            "{t:?}-{p} gained by {m:?} is not at its epoch\n{}",
                            self.trace.join("\n")
                        ),
                    }
                    assert!(epoch <= m.member_epoch, "{m:?}");
                    held.insert(key, (epoch, pending));
                }
            }
        }
        self.held_since = held;
        self.rebaseline = false;
    }

    fn send(&mut self, i: usize, r: ConsumerGroupHeartbeatRequest) {
        self.next_request += 1;
        let rid = RequestId(self.next_request);
        self.trace.push(format!(
            "{} c{i} -> e{} {:?} {:?}",
            self.now, r.member_epoch, r.subscribed_topic_names, r.topic_partitions
        ));
        self.clients[i].waiting = Some(rid);
        self.owner_of.insert(rid, i);
        let fx = self.core.handle(self.now, rid, Request::from(r));
        self.process(fx);
    }

    fn request(&self, i: usize) -> ConsumerGroupHeartbeatRequest {
        let c = &self.clients[i];
        ConsumerGroupHeartbeatRequest {
            group_id: "g".into(),
            member_id: c.member_id.as_str().into(),
            member_epoch: c.epoch,
            client_id: "sim".into(),
            client_host: "/127.0.0.1".into(),
            ..ConsumerGroupHeartbeatRequest::default()
        }
    }

    fn act(&mut self, i: usize, acks: bool) {
        let phase = self.clients[i].phase;
        if self.clients[i].waiting.is_some() {
            return;
        }
        if self.clients[i].classic && phase != Phase::Crashed {
            self.act_classic(i, acks);
            return;
        }
        match phase {
            Phase::Out => {
                let mut r = self.request(i);
                r.member_epoch = 0;
                r.rebalance_timeout_ms = 300 + self.rng.below(1_000) as i32;
                r.subscribed_topic_names = Some(self.clients[i].topics.clone());
                r.topic_partitions = Some(Vec::new());
                self.send(i, r);
            }
            Phase::In => {
                let mut r = self.request(i);
                if acks || self.rng.chance(70) {
                    r.topic_partitions = Some(wire(&self.clients[i].owned));
                }
                if std::mem::take(&mut self.clients[i].full) {
                    r.rebalance_timeout_ms = 1_000;
                    r.subscribed_topic_names = Some(self.clients[i].topics.clone());
                    r.topic_partitions = Some(wire(&self.clients[i].owned));
                }
                if !acks && self.rng.chance(5) {
                    let topics: Vec<String> = if self.rng.chance(50) {
                        vec!["foo".into()]
                    } else {
                        vec!["foo".into(), "bar".into()]
                    };
                    self.clients[i].topics = topics.clone();
                    r.subscribed_topic_names = Some(topics);
                }
                if !acks && self.rng.chance(3) {
                    r.member_epoch = -1;
                    r.topic_partitions = None;
                    self.clients[i].leaving = true;
                }
                self.send(i, r);
            }
            Phase::Crashed => {
                if !acks && self.rng.chance(20) {
                    let c = &mut self.clients[i];
                    c.restarts += 1;
                    c.member_id = format!("c{i}-{}", c.restarts);
                    c.phase = Phase::Out;
                    c.epoch = 0;
                    c.generation = -1;
                }
            }
        }
    }

    fn send_request(&mut self, i: usize, request: Request) {
        self.next_request += 1;
        let rid = RequestId(self.next_request);
        self.trace.push(format!("{} c{i} -> {request:?}", self.now));
        self.clients[i].waiting = Some(rid);
        self.owner_of.insert(rid, i);
        let fx = self.core.handle(self.now, rid, request);
        self.process(fx);
    }

    /// A classic client: joins (giving up what it owns, eagerly), syncs (dealing
    /// foo round-robin when it leads a classic generation), heartbeats, leaves.
    fn act_classic(&mut self, i: usize, settled: bool) {
        let c = &self.clients[i];
        let (member_id, generation) = (c.member_id.clone(), c.generation);
        match c.phase {
            Phase::Out => {
                self.clients[i].owned.clear();
                let sub = group_types::Subscription {
                    version: 3,
                    topics: vec!["foo".into()],
                    ..Default::default()
                };
                let join = group_types::JoinGroupRequest {
                    group_id: "g".into(),
                    member_id: (if generation == -2 { String::new() } else { member_id }).into(),
                    client_id: "classic".into(),
                    client_host: "/127.0.0.1".into(),
                    protocol_type: "consumer".into(),
                    protocols: vec![group_types::ProtocolMetadata::new("range", sub.encode().unwrap())],
                    session_timeout_ms: 1_000,
                    rebalance_timeout_ms: 1_000,
                    api_version: 9,
                    ..Default::default()
                };
                self.send_request(i, Request::JoinGroup(join));
            }
            Phase::In if !settled && self.rng.chance(3) => {
                self.clients[i].leaving = true;
                self.send_request(
                    i,
                    Request::LeaveGroup(group_types::LeaveGroupRequest::single("g", member_id)),
                );
            }
            Phase::In => {
                let hb = group_types::HeartbeatRequest {
                    group_id: "g".into(),
                    generation_id: generation,
                    member_id: member_id.into(),
                    group_instance_id: None,
                };
                self.send_request(i, Request::Heartbeat(hb));
            }
            Phase::Crashed => {}
        }
    }

    fn deliver_classic(&mut self, i: usize, rid: RequestId, response: Response) {
        self.trace.push(format!("{} c{i} <- {response:?}", self.now));
        if self.clients[i].waiting != Some(rid) {
            return;
        }
        self.clients[i].waiting = None;
        let members = self.members();
        let c = &mut self.clients[i];
        let rejoin = |c: &mut Client| {
            c.phase = Phase::Out;
            c.owned.clear();
        };
        match response {
            Response::JoinGroup(r) => match r.error_code {
                ErrorCode::None => {
                    c.generation = r.generation_id;
                    c.member_id = r.member_id.to_string();
                    let assignments: Vec<group_types::MemberAssignmentData> = if r.leader_id == r.member_id {
                        let ids: Vec<&str> = r.members.iter().map(|m| m.member_id.as_str()).collect();
                        ids.iter()
                            .enumerate()
                            .map(|(k, id)| {
                                let mine: Vec<i32> =
                                    (0..8).filter(|p| *p as usize % ids.len() == k).collect();
                                let a = group_types::MemberAssignment::new(vec![
                                    group_types::TopicPartitions::new("foo", mine),
                                ]);
                                group_types::MemberAssignmentData::new(*id, a.encode().unwrap())
                            })
                            .collect()
                    } else {
                        Vec::new()
                    };
                    let sync = group_types::SyncGroupRequest {
                        group_id: "g".into(),
                        generation_id: r.generation_id,
                        member_id: r.member_id,
                        assignments,
                        ..Default::default()
                    };
                    self.send_request(i, Request::SyncGroup(sync));
                }
                ErrorCode::MemberIdRequired => {
                    c.member_id = r.member_id.into();
                    c.generation = -1;
                }
                ErrorCode::UnknownMemberId => c.generation = -2,
                _ => {}
            },
            Response::SyncGroup(r) => match r.error_code {
                ErrorCode::None => {
                    let a = group_types::MemberAssignment::decode(&r.assignment).unwrap_or_default();
                    let new: Owned = a
                        .partitions
                        .iter()
                        .flat_map(|t| {
                            t.partitions.iter().map(|p| (if t.topic == "foo" { FOO } else { BAR }, *p))
                        })
                        .collect();
                    let gained: Vec<(TopicId, i32)> = new.difference(&c.owned).copied().collect();
                    c.owned = new;
                    c.phase = Phase::In;
                    self.check_gain(i, &gained, &members);
                }
                _ => rejoin(c),
            },
            Response::Heartbeat(r) => match r.error_code {
                ErrorCode::None => {}
                ErrorCode::UnknownMemberId => {
                    rejoin(c);
                    c.generation = -2;
                }
                _ => rejoin(c),
            },
            Response::LeaveGroup(_) => {
                c.leaving = false;
                rejoin(c);
                c.generation = -2;
            }
            other => panic!("unexpected answer {other:?}"),
        }
    }

    fn advance(&mut self, ms: i64) {
        let at = self.now + ms;
        while let Some((deadline, key)) = self.timers.pop_due(at) {
            self.now = deadline;
            let fx = self.core.fire_timer(deadline, &key);
            self.process(fx);
        }
        self.now = at;
    }

    fn step(&mut self) {
        let i = self.rng.below(self.clients.len() as u64) as usize;
        if self.rng.chance(3) && self.clients[i].phase == Phase::In {
            let c = &mut self.clients[i];
            c.phase = Phase::Crashed;
            c.owned.clear();
            c.waiting = None;
        } else {
            self.act(i, false);
        }
        if self.late && self.rng.chance(40) {
            let fail = self.rng.chance(6).then_some(ErrorCode::NotLeaderOrFollower);
            let n = 1 + self.rng.below(2) as usize;
            self.complete_writes(n, fail);
        }
        let ms = self.rng.below(150) as i64;
        self.advance(ms);
    }

    /// Failures stop; every live client heartbeats and acknowledges until the
    /// group is Stable.
    fn converge(&mut self) {
        for c in &mut self.clients {
            if c.phase == Phase::Crashed {
                c.phase = Phase::Out;
                c.member_id.push_str("-final");
                c.epoch = 0;
            }
        }
        for _ in 0..200 {
            self.complete_writes(usize::MAX, None);
            for i in 0..self.clients.len() {
                self.act(i, true);
                self.complete_writes(usize::MAX, None);
            }
            self.advance(50);
        }
        self.late = false;
        self.complete_writes(usize::MAX, None);
        let g = self.core.consumer_group("g").expect("the group");
        assert_eq!(
            g.state,
            ConsumerGroupState::Stable,
            "did not converge: {g:#?}\n{}",
            self.trace.join("\n")
        );
        let mut all = Owned::new();
        for c in &self.clients {
            let m = g.members.iter().find(|m| m.member_id == c.member_id).expect("every client is a member");
            assert_eq!(c.owned, set(&m.assigned), "client {} and coordinator disagree", c.member_id);
            all.extend(c.owned.iter().copied());
        }
        let bar = self.clients.iter().any(|c| c.topics.iter().any(|t| t == "bar"));
        let expected = 8 + if bar { 5 } else { 0 };
        let topics: Vec<(&str, &Vec<String>)> =
            self.clients.iter().map(|c| (c.member_id.as_str(), &c.topics)).collect();
        assert_eq!(
            all.len(),
            expected,
            "every subscribed partition is owned; clients {topics:?}\n{}",
            self.trace.join("\n")
        );
    }
}

fn run(seed: u64) {
    let mut sim = Sim::new(seed, seed % 2 == 1);
    for _ in 0..STEPS {
        sim.step();
    }
    sim.converge();
    let unanswered: Vec<&RequestId> = sim.owner_of.keys().collect();
    assert!(unanswered.is_empty(), "unanswered requests {unanswered:?}");
}

#[test]
fn consumer_groups_stay_safe_and_converge_over_many_seeds() {
    let seeds =
        std::env::var("CONSUMER_SIM_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(DEFAULT_SEEDS);
    for seed in 0..seeds {
        run(seed);
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 32, ..Default::default() })]

    /// Reconciliation as a property: whatever the seed, no partition is ever owned
    /// twice and every member converges.
    #[test]
    fn reconciliation_never_double_assigns_and_converges(seed in proptest::prelude::any::<u64>()) {
        run(seed);
    }
}
