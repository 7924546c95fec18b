//! Coordinator benchmarks (`benchmarks.md` "Coordinator"): heartbeats of 10,000 Stable
//! members in 100 groups, OffsetCommit of 1 and 100 partitions, a rebalance of 10, 100 and 1,000
//! members, each on the core alone and through `GroupCoordinator`. The memory per Stable
//! member is the `memory` bench.

mod common;

/// The allocator group-server ships with (`--features system-allocator` for the system's).
#[cfg(not(feature = "system-allocator"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{ASSIGNMENT, SUBSCRIPTION, config, member_id, stored};
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use group_coordinator::{CoordinatorCore, Effects, GroupCoordinator, ManualClock, Request, RequestId};
use group_offsets::{MemoryMetadataStore, MetadataStore, OwnerEpoch, Record};
use group_types::{
    HeartbeatRequest, JoinGroupRequest, MemberAssignmentData, OffsetCommitData, OffsetCommitRequest,
    ProtocolMetadata, SyncGroupRequest,
};

fn heartbeats(groups: usize, members: usize) -> Vec<HeartbeatRequest> {
    (0..members)
        .flat_map(|m| (0..groups).map(move |g| (g, m)))
        .map(|(g, m)| HeartbeatRequest {
            group_id: (format!("group-{g}")).into(),
            generation_id: 1,
            member_id: member_id(g, m).into(),
            group_instance_id: None,
        })
        .collect()
}

fn commit(g: usize, m: usize, partitions: i32) -> OffsetCommitRequest {
    let mut r = OffsetCommitRequest {
        group_id: (format!("group-{g}")).into(),
        generation_id: 1,
        member_id: member_id(g, m).into(),
        ..OffsetCommitRequest::default()
    };
    for p in 0..partitions {
        r = r.with_offset("orders", p, OffsetCommitData::new(1_000 + i64::from(p)));
    }
    r
}

/// Empties a reused effects buffer, keeping its capacity.
fn clear(out: &mut Effects) {
    out.responses.clear();
    out.timers.clear();
    out.writes.clear();
    out.events.clear();
}

fn loaded_core(groups: usize, members: usize) -> CoordinatorCore {
    let mut core = CoordinatorCore::new(config());
    let _ = core.load(0, stored(groups, members));
    core
}

fn loaded_runtime(groups: usize, members: usize) -> GroupCoordinator {
    let storage = MemoryMetadataStore::new();
    for record in stored(groups, members).groups {
        let partition = storage.partition_of(&record.group_id);
        storage
            .append_blocking(partition, OwnerEpoch::default(), vec![Record::Group(Box::new(record))])
            .expect("memory storage");
    }
    GroupCoordinator::with_clock(Arc::new(storage), config(), Arc::new(ManualClock::new(0)))
        .expect("coordinator")
}

fn bench_heartbeats(c: &mut Criterion) {
    let mut group = c.benchmark_group("heartbeat_10k_members_100_groups");
    group.throughput(Throughput::Elements(1));
    let requests = heartbeats(100, 100);
    let mut core = loaded_core(100, 100);
    let mut i = 0;
    let mut rid = 0;
    let mut out = Effects::default();
    group.bench_function("core", |b| {
        b.iter_batched(
            || {
                i = (i + 1) % requests.len();
                Request::Heartbeat(requests[i].clone())
            },
            |request| {
                rid += 1;
                // A driver reuses one effects buffer (`handle_into`).
                core.handle_into(1, RequestId(rid), request, &mut out);
                black_box(&out);
                clear(&mut out);
            },
            BatchSize::SmallInput,
        )
    });
    let runtime = Arc::new(loaded_runtime(100, 100));
    let mut j = 0;
    group.bench_function("runtime_1_thread", |b| {
        b.iter_batched(
            || {
                j = (j + 1) % requests.len();
                requests[j].clone()
            },
            |request| black_box(runtime.handle_heartbeat(request).expect("running")),
            BatchSize::SmallInput,
        )
    });
    // Thread t takes the groups of the shards of its own parity, as a server routing
    // shards to workers would: no lock and no shard state is shared between them.
    // Each worker's ids are copies of its own, as a server's are slices of the frames
    // its connections decoded: clones of one id from two threads would share its
    // reference count, and the first clone of neighbouring ids made on one thread
    // puts their counts on shared cache lines.
    let per_thread: Vec<Arc<Vec<HeartbeatRequest>>> = (0..2)
        .map(|t| {
            let mine = requests
                .iter()
                .filter(|r| runtime.shard_of(&r.group_id) % 2 == t)
                .map(|r| HeartbeatRequest {
                    group_id: r.group_id.detach(),
                    member_id: r.member_id.detach(),
                    ..r.clone()
                })
                .collect();
            Arc::new(mine)
        })
        .collect();
    group.throughput(Throughput::Elements(2));
    group.bench_function("runtime_2_threads", |b| {
        b.iter_custom(|iters| {
            let start = Instant::now();
            let workers: Vec<_> = (0..2)
                .map(|t| {
                    let runtime = Arc::clone(&runtime);
                    let requests = Arc::clone(&per_thread[t]);
                    std::thread::spawn(move || {
                        for k in 0..iters as usize {
                            let request = requests[k % requests.len()].clone();
                            black_box(runtime.handle_heartbeat(request).expect("running"));
                        }
                    })
                })
                .collect();
            for w in workers {
                w.join().expect("worker");
            }
            start.elapsed()
        })
    });
    group.finish();
}

fn bench_commits(c: &mut Criterion) {
    for partitions in [1, 100] {
        let mut group = c.benchmark_group(format!("offset_commit_{partitions}_partitions"));
        group.throughput(Throughput::Elements(partitions as u64));
        let requests: Vec<OffsetCommitRequest> = (0..100).map(|g| commit(g, g % 10, partitions)).collect();
        let mut core = loaded_core(100, 10);
        let mut i = 0;
        let mut rid = 0;
        let mut out = Effects::default();
        let mut writes = Vec::new();
        group.bench_function("core", |b| {
            b.iter_batched(
                || {
                    i = (i + 1) % requests.len();
                    Request::OffsetCommit(requests[i].clone())
                },
                |request| {
                    rid += 1;
                    // A driver reuses one effects buffer, as for heartbeats.
                    core.handle_into(1, RequestId(rid), request, &mut out);
                    // The core alone: the write "succeeds" at once.
                    std::mem::swap(&mut out.writes, &mut writes);
                    for w in writes.drain(..) {
                        core.complete_write_into(1, w.id, Ok(()), &mut out);
                    }
                    black_box(&out);
                    clear(&mut out);
                },
                BatchSize::SmallInput,
            )
        });
        let runtime = loaded_runtime(100, 10);
        let mut j = 0;
        group.bench_function("runtime_memory_storage", |b| {
            b.iter_batched(
                || {
                    j = (j + 1) % requests.len();
                    requests[j].clone()
                },
                |request| black_box(runtime.handle_offset_commit(request).expect("running")),
                BatchSize::SmallInput,
            )
        });
        group.finish();
    }
}

fn rebalance_requests(n: usize, generation: i32) -> (Vec<JoinGroupRequest>, Vec<SyncGroupRequest>) {
    let joins = (0..n)
        .map(|m| JoinGroupRequest {
            group_id: "group-0".into(),
            member_id: member_id(0, m).into(),
            client_id: "consumer".into(),
            client_host: "/127.0.0.1".into(),
            protocols: vec![ProtocolMetadata::new("range", SUBSCRIPTION.to_vec())],
            session_timeout_ms: 45_000,
            rebalance_timeout_ms: 300_000,
            ..JoinGroupRequest::default()
        })
        .collect();
    let syncs = (0..n)
        .map(|m| SyncGroupRequest {
            group_id: "group-0".into(),
            generation_id: generation + 1,
            member_id: member_id(0, m).into(),
            assignments: if m == 0 {
                (0..n).map(|k| MemberAssignmentData::new(member_id(0, k), ASSIGNMENT.to_vec())).collect()
            } else {
                Vec::new()
            },
            ..SyncGroupRequest::default()
        })
        .collect();
    (joins, syncs)
}

fn bench_rebalance(c: &mut Criterion) {
    for n in [10, 100, 1_000] {
        bench_rebalance_of(c, n);
    }
}

/// Every member rejoins, the leader syncs the full assignment, followers sync:
/// first JoinGroup to last SyncGroup answered.
fn bench_rebalance_of(c: &mut Criterion, n: usize) {
    let mut group = c.benchmark_group(format!("rebalance_{n}_members"));
    group.sample_size(20);
    let mut core = loaded_core(1, n);
    let mut generation = 1;
    let mut rid = 0u64;
    // Reused, as the runtime reuses each shard's.
    let mut out = Effects::default();
    let mut writes = Vec::new();
    group.bench_function("core", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let (joins, syncs) = rebalance_requests(n, generation);
                let start = Instant::now();
                let mut answered = 0;
                for j in joins {
                    rid += 1;
                    core.handle_into(1, RequestId(rid), Request::JoinGroup(j), &mut out);
                    answered += out.responses.len();
                    clear(&mut out);
                }
                for s in syncs {
                    rid += 1;
                    core.handle_into(1, RequestId(rid), Request::SyncGroup(s), &mut out);
                    std::mem::swap(&mut out.writes, &mut writes);
                    for w in writes.drain(..) {
                        core.complete_write_into(1, w.id, Ok(()), &mut out);
                    }
                    answered += out.responses.len();
                    clear(&mut out);
                }
                total += start.elapsed();
                assert_eq!(answered, 2 * n, "every join and sync answered");
                generation += 1;
            }
            total
        })
    });
    let runtime = loaded_runtime(1, n);
    let mut generation = 1;
    group.bench_function("runtime", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let (joins, syncs) = rebalance_requests(n, generation);
                let start = Instant::now();
                let pending: Vec<_> = joins.into_iter().map(|j| runtime.join_group(j)).collect();
                for p in pending {
                    black_box(p.wait().expect("joined"));
                }
                for s in syncs {
                    black_box(runtime.handle_sync_group(s).expect("synced"));
                }
                total += start.elapsed();
                generation += 1;
            }
            total
        })
    });
    group.finish();
}

/// A partition's load (a coordinator's start, or a partition moving to this
/// node): 1,000 Stable groups of 10 members, each with 100 committed offsets.
fn bench_load(c: &mut Criterion) {
    let mut stored = stored(1_000, 10);
    stored.offsets = (0..1_000)
        .map(|g| {
            let mut offsets = group_types::GroupOffsets::new(format!("group-{g}"));
            for t in 0..10 {
                let partitions =
                    (0..10).map(|p| (p, group_types::OffsetAndMetadata::new(1_000 + i64::from(p), 0)));
                offsets.offsets.insert(format!("topic-{t}"), partitions.collect());
            }
            offsets
        })
        .collect();
    let mut group = c.benchmark_group("load_1000_groups_100k_offsets");
    group.sample_size(10);
    group.bench_function("core", |b| {
        b.iter_batched(
            || stored.clone(),
            |stored| {
                let mut core = CoordinatorCore::new(config());
                black_box(core.load(0, stored));
                core
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

criterion_group!(benches, bench_heartbeats, bench_commits, bench_rebalance, bench_load);
criterion_main!(benches);
