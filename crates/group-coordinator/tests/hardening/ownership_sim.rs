//! Seeded simulation of partition ownership through the threaded runtime: two
//! coordinators ("nodes") over one memory store whose appends are all held until
//! the simulation releases them, one at a time, in any order across partitions
//! and sometimes failing. Simple consumers of several groups (over several
//! partitions) commit and fetch, v3 joins park; partitions move between the nodes
//! at rising epochs (the old owner sometimes unloaded first, sometimes left to be
//! fenced on its next append) and are unloaded at random.
//!
//! Checked: every request is answered (at the end both nodes stop, so parked ones
//! are answered `Stopped`), and by Pending's single slot exactly once; a request
//! for a partition the node did not own when it was sent is answered
//! `NOT_COORDINATOR`, and no answer is anything but success, `NOT_COORDINATOR`
//! (what an unload, a fence and a failed append all map to) or, for a node
//! that did own it, a success; a join is never answered success (time never
//! moves); every OffsetCommit answered NONE is in what a fresh load of the store
//! returns, or superseded by a later commit (offsets only grow); the store
//! accepted the appends of at most one node per partition and epoch; a lost
//! partition is reported at an epoch below the partition's newest.
//!
//! The storage stage runs on its own threads, so a seed replays the same inputs,
//! not necessarily the same interleaving: the invariants hold for every one.
//! `OWNERSHIP_SEEDS=<n>` runs more seeds.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use group_coordinator::{GroupCoordinator, ManualClock, PartitionState, Pending};
use group_offsets::{
    AppendCompletion, CoordinatorPartition, LoadedPartition, MemoryMetadataStore, MetadataStore, OwnerEpoch,
    Record, StorageError,
};
use group_types::{
    ErrorCode, JoinGroupRequest, JoinGroupResponse, OffsetCommitData, OffsetCommitRequest,
    OffsetCommitResponse, OffsetFetchRequest, ProtocolMetadata,
};

use crate::support::{DEADLOCK, Rng, fast_config, subscription};

const PARTITIONS: u32 = 4;
/// Groups of simple consumers (commits, fetches).
const GROUPS: [&str; 6] = ["a", "b", "c", "d", "e", "f"];
/// Groups that v3 joins park in (a member in a group refuses simple commits).
const JOIN_GROUPS: [&str; 4] = ["ja", "jb", "jc", "jd"];
const STEPS: usize = 150;
const DEFAULT_SEEDS: u64 = 40;

/// Accepted appends: (partition, epoch) -> the nodes whose append was accepted.
type Accepted = Arc<Mutex<BTreeMap<(u32, u64), Vec<usize>>>>;

/// One node's view of the shared store: records which appends the store accepted.
#[derive(Debug, Clone)]
struct NodeStore {
    node: usize,
    store: MemoryMetadataStore,
    accepted: Accepted,
}

impl MetadataStore for NodeStore {
    fn partition_count(&self) -> u32 {
        PARTITIONS
    }

    fn append(
        &self,
        partition: CoordinatorPartition,
        epoch: OwnerEpoch,
        records: Vec<Record>,
        completion: AppendCompletion,
    ) {
        let (node, accepted) = (self.node, self.accepted.clone());
        let recorded = AppendCompletion::new(move |result: Result<(), StorageError>| {
            if result.is_ok() {
                accepted.lock().unwrap().entry((partition.0, epoch.0)).or_default().push(node);
            }
            completion.complete(result);
        });
        self.store.append(partition, epoch, records, recorded);
    }

    fn load(&self, partition: CoordinatorPartition) -> Result<LoadedPartition, StorageError> {
        self.store.load(partition)
    }
}

enum Asked {
    Commit { group: &'static str, offset: i64, pending: Pending<OffsetCommitResponse> },
    Join(Pending<JoinGroupResponse>),
}

struct Sent {
    node: usize,
    step: usize,
    /// The partition's state on the node when the request was sent.
    state: PartitionState,
    asked: Asked,
}

struct World {
    rng: Rng,
    store: MemoryMetadataStore,
    nodes: Vec<GroupCoordinator>,
    accepted: Accepted,
    lost: Arc<Mutex<Vec<(usize, CoordinatorPartition, OwnerEpoch)>>>,
    /// The newest epoch handed out per partition.
    epoch: Vec<u64>,
    sent: Vec<Sent>,
    next_offset: i64,
    /// The highest offset acknowledged per group.
    acked: BTreeMap<&'static str, i64>,
    trace: Vec<String>,
    stats: Stats,
}

#[derive(Debug, Default, Clone, Copy)]
struct Stats {
    acked: u64,
    refused: u64,
    moves: u64,
    fenced: u64,
    failed_releases: u64,
}

fn p_of(group: &str) -> CoordinatorPartition {
    CoordinatorPartition::of(group, PARTITIONS)
}

fn commit(group: &str, offset: i64) -> OffsetCommitRequest {
    OffsetCommitRequest { group_id: group.into(), generation_id: -1, ..OffsetCommitRequest::default() }
        .with_offset("t", 0, OffsetCommitData::new(offset))
}

fn parking_join(group: &str) -> JoinGroupRequest {
    JoinGroupRequest {
        group_id: group.into(),
        client_id: "c".into(),
        protocol_type: "consumer".into(),
        protocols: vec![ProtocolMetadata::new("range", subscription(&["t"]))],
        session_timeout_ms: 10_000,
        rebalance_timeout_ms: 10_000,
        api_version: 3,
        ..JoinGroupRequest::default()
    }
}

impl World {
    fn new(seed: u64) -> World {
        let store = MemoryMetadataStore::with_partitions(PARTITIONS);
        store.hold_appends(true);
        let accepted: Accepted = Arc::default();
        let lost: Arc<Mutex<Vec<(usize, CoordinatorPartition, OwnerEpoch)>>> = Arc::default();
        let nodes = (0..2)
            .map(|node| {
                let lost = lost.clone();
                let mut config = fast_config(50);
                config.member_id_seed = seed;
                GroupCoordinator::builder(
                    Arc::new(NodeStore { node, store: store.clone(), accepted: accepted.clone() }),
                    config,
                )
                .clock(Arc::new(ManualClock::new(1_000)))
                .managed_ownership()
                .on_partition_lost(Arc::new(move |p, e| lost.lock().unwrap().push((node, p, e))))
                .open()
                .unwrap()
            })
            .collect();
        World {
            rng: Rng::new(seed),
            store,
            nodes,
            accepted,
            lost,
            epoch: vec![0; PARTITIONS as usize],
            sent: Vec::new(),
            next_offset: 1,
            acked: BTreeMap::new(),
            trace: Vec::new(),
            stats: Stats::default(),
        }
    }

    /// Releases the oldest held append of `partition` (of any when `None`),
    /// failing it now and then.
    fn release(&mut self, partition: Option<CoordinatorPartition>) -> bool {
        release(&self.store, &mut self.rng, &mut self.stats, partition)
    }

    /// Loads `p` on `node` at a new epoch, releasing what the load's fence waits
    /// behind (and the fence itself) meanwhile.
    fn move_partition(&mut self, p: CoordinatorPartition, node: usize, step: usize) {
        self.epoch[p.0 as usize] += 1;
        let epoch = OwnerEpoch(self.epoch[p.0 as usize]);
        self.stats.moves += 1;
        if self.rng.chance(50) {
            self.nodes[1 - node].unload_partition(p);
        }
        let (nodes, store, rng, stats) = (&self.nodes, &self.store, &mut self.rng, &mut self.stats);
        let result = std::thread::scope(|scope| {
            let target = &nodes[node];
            let loading = scope.spawn(move || target.load_partition(p, epoch));
            let deadline = std::time::Instant::now() + DEADLOCK;
            while !loading.is_finished() {
                assert!(std::time::Instant::now() < deadline, "a load finished");
                if !store.held_partitions().contains(&p) || !release(store, rng, stats, Some(p)) {
                    std::thread::yield_now();
                }
            }
            loading.join().unwrap()
        });
        self.trace.push(format!("{step}: load {p} on node {node} at {epoch:?}: {result:?}"));
    }

    fn step(&mut self, step: usize) -> Result<(), String> {
        let roll = self.rng.below(100);
        let node = self.rng.below(2) as usize;
        let group = self.rng.pick(&GROUPS);
        let p = p_of(group);
        match roll {
            0..=39 => {
                let offset = self.next_offset;
                self.next_offset += 1;
                let state = self.nodes[node].partition_state(p);
                let pending = self.nodes[node].offset_commit(commit(group, offset));
                self.trace.push(format!("{step}: node {node} commits {group}={offset} ({state:?})"));
                self.sent.push(Sent { node, step, state, asked: Asked::Commit { group, offset, pending } });
            }
            40..=44 => {
                let group = self.rng.pick(&JOIN_GROUPS);
                let state = self.nodes[node].partition_state(p_of(group));
                let pending = self.nodes[node].join_group(parking_join(group));
                self.sent.push(Sent { node, step, state, asked: Asked::Join(pending) });
            }
            45..=54 => {
                let state = self.nodes[node].partition_state(p);
                let request = OffsetFetchRequest {
                    group_id: group.into(),
                    topics: None,
                    require_stable: false,
                    member_id: None,
                    member_epoch: None,
                };
                let code =
                    self.nodes[node].handle_offset_fetch(request).map_err(|e| e.to_string())?.error_code;
                let ok = match state {
                    PartitionState::Owned(_) => matches!(code, ErrorCode::None | ErrorCode::NotCoordinator),
                    _ => code == ErrorCode::NotCoordinator,
                };
                if !ok {
                    return Err(format!(
                        "node {node} answered a fetch of {group} {code:?} in state {state:?}"
                    ));
                }
            }
            55..=84 => {
                self.release(None);
            }
            85..=94 => self.move_partition(p, node, step),
            _ => {
                self.nodes[node].unload_partition(p);
                self.trace.push(format!("{step}: node {node} unloads {p}"));
            }
        }
        self.collect(false)
    }

    /// Checks the requests answered so far (every one when `all`).
    fn collect(&mut self, all: bool) -> Result<(), String> {
        let mut kept = Vec::new();
        for mut sent in std::mem::take(&mut self.sent) {
            let what = format!("request of step {} to node {} ({:?})", sent.step, sent.node, sent.state);
            let owned = sent.state.is_owned();
            match &mut sent.asked {
                Asked::Commit { group, offset, pending } => {
                    let answer = if all { pending.wait_timeout(DEADLOCK) } else { pending.try_get() };
                    let Some(answer) = answer else {
                        if all {
                            return Err(format!("{what}: never answered"));
                        }
                        kept.push(sent);
                        continue;
                    };
                    let Ok(r) = answer else { continue };
                    match r.error_for("t", 0) {
                        Some(ErrorCode::None) if owned => {
                            self.stats.acked += 1;
                            let max = self.acked.entry(group).or_insert(*offset);
                            *max = (*max).max(*offset);
                        }
                        Some(ErrorCode::NotCoordinator) => self.stats.refused += 1,
                        other => return Err(format!("{what}: commit answered {other:?}")),
                    }
                }
                Asked::Join(pending) => {
                    let answer = if all { pending.wait_timeout(DEADLOCK) } else { pending.try_get() };
                    let Some(answer) = answer else {
                        if all {
                            return Err(format!("{what}: join never answered"));
                        }
                        kept.push(sent);
                        continue;
                    };
                    if let Ok(r) = answer
                        && r.error_code != ErrorCode::NotCoordinator
                    {
                        return Err(format!("{what}: join answered {:?}", r.error_code));
                    }
                }
            }
        }
        self.sent = kept;
        Ok(())
    }

    fn finish(&mut self) -> Result<(), String> {
        self.store.hold_appends(false);
        while self.store.release_held(None, None) {}
        for node in &self.nodes {
            assert!(node.wait_for_writes(DEADLOCK), "writes completed");
        }
        for node in &self.nodes {
            node.stop();
        }
        self.collect(true)?;
        for (group, &max) in &self.acked {
            let stored =
                self.store.fetch_group_offset(group, "t", 0).map_err(|e| e.to_string())?.map(|o| o.offset);
            if stored.is_none_or(|s| s < max) {
                return Err(format!("group {group}: acknowledged {max}, a fresh load has {stored:?}"));
            }
        }
        for ((p, epoch), nodes) in self.accepted.lock().unwrap().iter() {
            if nodes.iter().any(|n| *n != nodes[0]) {
                return Err(format!("partition {p} accepted appends of nodes {nodes:?} at epoch {epoch}"));
            }
        }
        for &(node, p, epoch) in self.lost.lock().unwrap().iter() {
            self.stats.fenced += 1;
            if epoch.0 >= self.epoch[p.0 as usize] {
                return Err(format!("node {node} reported {p} lost at its newest epoch {epoch:?}"));
            }
        }
        Ok(())
    }
}

fn release(
    store: &MemoryMetadataStore,
    rng: &mut Rng,
    stats: &mut Stats,
    partition: Option<CoordinatorPartition>,
) -> bool {
    let failure = rng.chance(15).then(|| StorageError::io("simulated failure"));
    let released = store.release_held(partition, failure.clone());
    if released && failure.is_some() {
        stats.failed_releases += 1;
    }
    released
}

fn run_seed(seed: u64) -> Result<Stats, String> {
    let mut world = World::new(seed);
    let outcome = (0..STEPS).try_for_each(|step| world.step(step)).and_then(|()| world.finish());
    match outcome {
        Ok(()) => Ok(world.stats),
        Err(e) => {
            let tail = world.trace.len().saturating_sub(40);
            Err(format!("seed {seed}: {e}\n  {}", world.trace[tail..].join("\n  ")))
        }
    }
}

#[test]
fn ownership_moves_keep_every_invariant_across_seeds() {
    let seeds = std::env::var("OWNERSHIP_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(DEFAULT_SEEDS);
    let mut total = Stats::default();
    for seed in 0..seeds {
        let stats = run_seed(seed).unwrap_or_else(|e| panic!("{e}"));
        total.acked += stats.acked;
        total.refused += stats.refused;
        total.moves += stats.moves;
        total.fenced += stats.fenced;
        total.failed_releases += stats.failed_releases;
    }
    println!("{seeds} seeds x {STEPS} steps: {total:?}");
    // The harness must keep exercising what it claims to check.
    assert!(total.acked >= seeds * 5, "too few acknowledged commits: {total:?}");
    assert!(total.refused >= seeds * 5, "too few refusals: {total:?}");
    assert!(total.fenced >= seeds / 4, "too few fenced nodes: {total:?}");
    assert!(total.failed_releases >= seeds, "too few failed appends: {total:?}");
}
