//! Deterministic simulation of transactional offsets: seeded producers send
//! TxnOffsetCommits to two groups while plain commits, transaction markers
//! (COMMIT and ABORT), OffsetDeletes and reads (with and without
//! `require_stable`) interleave; writes complete late, in order, and some fail
//! after later requests were handled (a failure voids every later write, as
//! Kafka's `CoordinatorRuntime.failCurrentBatch` reverts to the last committed
//! offset).
//!
//! The reference is Kafka's rule over its log (`OffsetMetadataManager`): every
//! acknowledged write is one log entry, in the order acknowledged; a COMMIT
//! makes a pending offset committed only if its record is newer than the
//! committed one; a tombstone drops committed and pending offsets; an ABORT
//! drops the producer's. Checked after every step: every request is answered
//! exactly once; a read answers what the acknowledged history says (nothing
//! committed appears before its marker is acknowledged, nothing aborted ever
//! appears, a `require_stable` read sees every open transaction). At the end,
//! with every write done, loading what was written gives back exactly the
//! acknowledged history's committed and pending offsets (nothing acknowledged
//! is lost), and its COMMITs then land where Kafka's would.
//!
//! `TXN_SIM_SEEDS=<n>` runs more seeds than CI's default; `TXN_SIM_TRACE=1` prints every
//! request, completion and answer.

use std::collections::{BTreeMap, HashMap, VecDeque};

use group_coordinator::{
    CoordinatorConfig, CoordinatorCore, Effects, Record, Request, RequestId, Response, Write,
};
use group_offsets::fold;
use group_types::{
    ErrorCode, GroupId, OffsetCommitData, OffsetCommitRequest, OffsetDeleteRequest, OffsetFetchRequest,
    TransactionResult, TxnOffsetCommitRequest, WriteTxnMarkersRequest,
};

use crate::support::Rng;

const DEFAULT_SEEDS: u64 = 200;
const STEPS: usize = 250;
const GROUPS: [&str; 2] = ["g1", "g2"];
const PRODUCERS: u64 = 3;

/// A change, as the log applies it once acknowledged.
#[derive(Debug, Clone)]
enum Op {
    Txn { group: &'static str, producer: i64, offsets: Vec<(i32, i64)> },
    Plain { group: &'static str, offsets: Vec<(i32, i64)> },
    End { producer: i64, commit: bool },
    Delete { group: &'static str, partitions: Vec<i32> },
}

/// A read, checked against the history when answered.
#[derive(Debug, Clone)]
struct Read {
    group: &'static str,
    partitions: Vec<i32>,
    stable: bool,
}

#[derive(Debug)]
enum Asked {
    Write(Op),
    Read(Read),
}

/// Offsets by (group, partition of foo), each with the log position of its record.
type Positioned = BTreeMap<(&'static str, i32), (i64, u64)>;

/// Kafka's log: per group, committed (offset, log position) and per producer pending.
#[derive(Debug, Default, Clone)]
struct Log {
    position: u64,
    committed: Positioned,
    pending: BTreeMap<i64, Positioned>,
}

impl Log {
    fn apply(&mut self, op: &Op) {
        self.position += 1;
        let at = self.position;
        match op {
            Op::Txn { group, producer, offsets } => {
                for &(p, o) in offsets {
                    self.pending.entry(*producer).or_default().insert((group, p), (o, at));
                }
            }
            Op::Plain { group, offsets } => {
                for &(p, o) in offsets {
                    self.committed.insert((group, p), (o, at));
                }
            }
            Op::End { producer, commit } => {
                for (key, (o, written)) in self.pending.remove(producer).unwrap_or_default() {
                    if *commit && self.committed.get(&key).is_none_or(|(_, c)| *c < written) {
                        self.committed.insert(key, (o, written));
                    }
                }
            }
            Op::Delete { group, partitions } => {
                for &p in partitions {
                    self.committed.remove(&(group, p));
                    for offsets in self.pending.values_mut() {
                        offsets.remove(&(group, p));
                    }
                }
                self.pending.retain(|_, o| !o.is_empty());
            }
        }
    }

    fn open(&self, group: &str, partition: i32) -> bool {
        self.pending.values().any(|o| o.contains_key(&(group, partition)))
    }

    fn committed(&self, group: &str, partition: i32) -> i64 {
        self.committed.iter().find(|((g, p), _)| *g == group && *p == partition).map_or(-1, |(_, (o, _))| *o)
    }
}

struct Sim {
    core: CoordinatorCore,
    rng: Rng,
    now: i64,
    next: u64,
    queue: VecDeque<Write>,
    written: Vec<Record>,
    asked: HashMap<RequestId, Asked>,
    log: Log,
    seed: u64,
}

impl Sim {
    fn offsets(&mut self) -> Vec<(i32, i64)> {
        let n = 1 + self.rng.below(2);
        (0..n).map(|_| (self.rng.below(3) as i32, self.rng.below(1000) as i64)).collect()
    }

    fn request(&mut self) -> (Request, Asked) {
        let group = self.rng.pick(&GROUPS);
        let producer = 1 + self.rng.below(PRODUCERS) as i64;
        match self.rng.below(10) {
            0..=3 => {
                let offsets = self.offsets();
                let mut req = TxnOffsetCommitRequest {
                    transactional_id: format!("tx-{producer}"),
                    group_id: GroupId::from(group),
                    producer_id: producer,
                    ..Default::default()
                };
                for &(p, o) in &offsets {
                    req = req.with_offset("foo", p, OffsetCommitData::new(o));
                }
                (req.into(), Asked::Write(Op::Txn { group, producer, offsets }))
            }
            4 | 5 => {
                let offsets = self.offsets();
                let mut req = OffsetCommitRequest { group_id: GroupId::from(group), ..Default::default() };
                for &(p, o) in &offsets {
                    req = req.with_offset("foo", p, OffsetCommitData::new(o));
                }
                (req.into(), Asked::Write(Op::Plain { group, offsets }))
            }
            6 | 7 => {
                let commit = self.rng.chance(60);
                let result = if commit { TransactionResult::Commit } else { TransactionResult::Abort };
                (
                    WriteTxnMarkersRequest::one(producer, result, &[0]).into(),
                    Asked::Write(Op::End { producer, commit }),
                )
            }
            8 => {
                let partitions = vec![self.rng.below(3) as i32];
                let req = OffsetDeleteRequest {
                    group_id: group.to_owned(),
                    topics: BTreeMap::from([("foo".to_owned(), partitions.clone())]),
                };
                (req.into(), Asked::Write(Op::Delete { group, partitions }))
            }
            _ => {
                let stable = self.rng.chance(50);
                let partitions = vec![0, 1, 2];
                let mut req = OffsetFetchRequest::all(group);
                req.require_stable = stable;
                req.topics = Some(BTreeMap::from([("foo".to_owned(), partitions.clone())]));
                (req.into(), Asked::Read(Read { group, partitions, stable }))
            }
        }
    }

    fn effects(&mut self, fx: Effects) {
        self.queue.extend(fx.writes);
        for (rid, response) in fx.responses {
            let asked = self.asked.remove(&rid);
            let asked =
                asked.unwrap_or_else(|| panic!("seed {}: {rid:?} answered twice or never asked", self.seed));
            self.check(asked, response);
        }
    }

    fn check(&mut self, asked: Asked, response: Response) {
        let seed = self.seed;
        if std::env::var("TXN_SIM_TRACE").is_ok() {
            eprintln!("{asked:?} -> {response:?}");
        }
        match (asked, response) {
            (Asked::Read(read), Response::OffsetFetch(r)) => {
                if r.error_code == ErrorCode::GroupIdNotFound {
                    return;
                }
                assert_eq!(r.error_code, ErrorCode::None, "seed {seed}: {read:?}");
                for p in read.partitions {
                    let got = r.get("foo", p).map(|d| (d.offset, d.error_code));
                    let expected = if read.stable && self.log.open(read.group, p) {
                        (-1, ErrorCode::UnstableOffsetCommit)
                    } else {
                        (self.log.committed(read.group, p), ErrorCode::None)
                    };
                    assert_eq!(
                        got,
                        Some(expected),
                        "seed {seed}: {} foo-{p} (stable {}); live pending {:?}, the log's {:?}",
                        read.group,
                        read.stable,
                        self.core.pending_transactional_offsets(read.group),
                        self.log.pending
                    );
                }
            }
            (Asked::Write(op), response) => {
                let codes: Vec<ErrorCode> = match &response {
                    Response::TxnOffsetCommit(r) => r.iter().map(|(_, _, c)| c).collect(),
                    Response::OffsetCommit(r) => r.iter().map(|(_, _, c)| c).collect(),
                    Response::WriteTxnMarkers(r) => r.iter().map(|(_, _, _, c)| c).collect(),
                    Response::OffsetDelete(r) => vec![r.error_code],
                    other => panic!("seed {seed}: {op:?} answered {other:?}"),
                };
                match codes.first() {
                    Some(ErrorCode::None) => {
                        assert!(codes.iter().all(|c| *c == ErrorCode::None), "seed {seed}: {op:?} {codes:?}");
                        self.log.apply(&op);
                    }
                    // OffsetDelete of a group no write created yet.
                    Some(ErrorCode::GroupIdNotFound) if matches!(op, Op::Delete { .. }) => {}
                    // A failed or voided write: nothing of it may show.
                    Some(ErrorCode::NotCoordinator | ErrorCode::UnknownServerError) => {}
                    other => panic!("seed {seed}: {op:?} answered {other:?}"),
                }
            }
            (asked, response) => panic!("seed {seed}: {asked:?} answered {response:?}"),
        }
    }

    /// Completes the oldest outstanding write: OK, or (rarely) failed.
    fn complete(&mut self, fail: bool) {
        while let Some(write) = self.queue.pop_front() {
            if !self.core.is_write_outstanding(write.id) {
                continue;
            }
            let result = if fail { Err(ErrorCode::NotCoordinator) } else { Ok(()) };
            if !fail {
                self.written.extend(write.records.iter().cloned());
            }
            if std::env::var("TXN_SIM_TRACE").is_ok() {
                eprintln!("DONE {:?} {result:?}", write.id);
            }
            let fx = self.core.complete_write(self.now, write.id, result);
            self.effects(fx);
            if std::env::var("TXN_SIM_TRACE").is_ok() {
                eprintln!(
                    "   live g2 {:?}",
                    self.core
                        .pending_transactional_offsets("g2")
                        .iter()
                        .map(|(p, tp, o)| (*p, tp.partition, o.offset))
                        .collect::<Vec<_>>()
                );
            }
            return;
        }
    }
}

fn run(seed: u64) {
    let mut core = CoordinatorCore::new(CoordinatorConfig::default());
    let _ = core.load(0, fold([]));
    let mut sim = Sim {
        core,
        rng: Rng::new(seed),
        now: 1_000,
        next: 0,
        queue: VecDeque::new(),
        written: Vec::new(),
        asked: HashMap::new(),
        log: Log::default(),
        seed,
    };
    for _ in 0..STEPS {
        sim.now += sim.rng.below(5) as i64;
        if !sim.queue.is_empty() && sim.rng.chance(45) {
            let fail = sim.rng.chance(8);
            sim.complete(fail);
            continue;
        }
        let (request, asked) = sim.request();
        sim.next += 1;
        let rid = RequestId(sim.next);
        if std::env::var("TXN_SIM_TRACE").is_ok() {
            eprintln!("ASK {rid:?} {asked:?}");
        }
        sim.asked.insert(rid, asked);
        let fx = sim.core.handle(sim.now, rid, request);
        sim.effects(fx);
        if std::env::var("TXN_SIM_TRACE").is_ok() {
            eprintln!(
                "   live g2 {:?}",
                sim.core
                    .pending_transactional_offsets("g2")
                    .iter()
                    .map(|(p, tp, o)| (*p, tp.partition, o.offset))
                    .collect::<Vec<_>>()
            );
        }
    }
    while !sim.queue.is_empty() {
        sim.complete(false);
    }
    assert!(sim.asked.is_empty(), "seed {seed}: unanswered {:?}", sim.asked);

    // Nothing acknowledged is lost: a reload of what was written is the history.
    let mut reloaded = CoordinatorCore::new(CoordinatorConfig::default());
    let _ = reloaded.load(sim.now, fold(sim.written.clone()));
    for core in [&sim.core, &reloaded] {
        for group in GROUPS {
            for p in 0..3 {
                let got = core.committed_offset(group, "foo", p).map_or(-1, |o| o.offset);
                assert_eq!(got, sim.log.committed(group, p), "seed {seed}: {group} foo-{p}");
            }
            let mut pending: Vec<(i64, i32, i64)> = core
                .pending_transactional_offsets(group)
                .into_iter()
                .map(|(producer, tp, o)| (producer, tp.partition, o.offset))
                .collect();
            pending.sort_unstable();
            let mut expected: Vec<(i64, i32, i64)> = sim
                .log
                .pending
                .iter()
                .flat_map(|(producer, o)| {
                    o.iter().filter(|((g, _), _)| *g == group).map(|((_, p), (off, _))| (*producer, *p, *off))
                })
                .collect();
            expected.sort_unstable();
            assert_eq!(pending, expected, "seed {seed}: {group} pending");
        }
    }
    // And its COMMITs land where Kafka's would.
    sim.core = reloaded;
    for producer in 1..=PRODUCERS as i64 {
        sim.next += 1;
        let rid = RequestId(sim.next);
        sim.asked.insert(rid, Asked::Write(Op::End { producer, commit: true }));
        let fx = sim.core.handle(
            sim.now,
            rid,
            WriteTxnMarkersRequest::one(producer, TransactionResult::Commit, &[0]).into(),
        );
        sim.effects(fx);
        while !sim.queue.is_empty() {
            sim.complete(false);
        }
    }
    for group in GROUPS {
        for p in 0..3 {
            let got = sim.core.committed_offset(group, "foo", p).map_or(-1, |o| o.offset);
            assert_eq!(
                got,
                sim.log.committed(group, p),
                "seed {seed}: {group} foo-{p} after the reload's COMMITs"
            );
        }
    }
}

#[test]
fn transactional_offsets_follow_kafkas_log_under_late_and_failed_writes() {
    let seeds = std::env::var("TXN_SIM_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(DEFAULT_SEEDS);
    for seed in 0..seeds {
        run(seed);
    }
}
