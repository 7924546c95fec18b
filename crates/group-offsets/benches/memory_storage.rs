//! Memory storage: commits/s and fetch latency at 1, 2 and 8 threads, record
//! appends to the memory store, and the memory one stored offset costs.
//!
//! `memory_commit_1_partition/N` reports the aggregate throughput of N threads
//! committing one partition per call to their own groups (criterion's
//! `thrpt` line is commits/s over all threads). `memory_fetch_latency/N`
//! reports the mean latency of one `fetch_offset` as each of N concurrent
//! threads sees it. `memory_store_append/{callback,blocking}` reports one
//! append of one offset record straight to a `MemoryMetadataStore`, completed
//! through a callback or waited for. Memory per stored offset is measured once, before the
//! timings, from the process's resident set growth while storing a million
//! offsets, and printed as `memory per stored offset: ...`.

use std::hint::black_box;
use std::sync::Barrier;
use std::time::{Duration, Instant};

use std::sync::Arc;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group};
use group_offsets::{
    AppendCompletion, MemoryMetadataStore, MemoryOffsetStorage, MetadataStore, OffsetStorage, OwnerEpoch,
    Record,
};
use group_types::{OffsetAndMetadata, TopicPartition};

const GROUPS: usize = 1_024;
const PARTITIONS: i32 = 16;
const THREADS: [usize; 3] = [1, 2, 8];

struct Fixture {
    storage: MemoryOffsetStorage,
    groups: Vec<String>,
    partitions: Vec<TopicPartition>,
}

/// 1,024 groups with 16 committed partitions each, so the timed commits
/// overwrite (the steady state of a consumer group) and fetches hit.
fn fixture() -> Fixture {
    let storage = MemoryOffsetStorage::new();
    let groups: Vec<String> = (0..GROUPS).map(|g| format!("consumer-group-{g}")).collect();
    let partitions: Vec<TopicPartition> = (0..PARTITIONS).map(|p| TopicPartition::new("orders", p)).collect();
    for group in &groups {
        let batch: Vec<_> = partitions.iter().map(|tp| (tp.clone(), OffsetAndMetadata::new(0, 0))).collect();
        storage.store_offsets(group, &batch).expect("memory storage does not fail");
    }
    Fixture { storage, groups, partitions }
}

/// Runs `op(thread, i)` `iters` times in total over `threads` threads released
/// together, and returns the wall time from release to the last thread done.
fn run_parallel(threads: usize, iters: u64, op: impl Fn(usize, u64) + Sync) -> Duration {
    let per_thread = iters.div_ceil(threads as u64);
    let barrier = Barrier::new(threads + 1);
    std::thread::scope(|scope| {
        for thread in 0..threads {
            let (barrier, op) = (&barrier, &op);
            scope.spawn(move || {
                barrier.wait();
                for i in 0..per_thread {
                    op(thread, i);
                }
            });
        }
        barrier.wait();
        let start = Instant::now();
        // The scope joins every thread before returning.
        start
    })
    .elapsed()
}

/// Thread `t` works on the groups `g` with `g % threads == t`: one consumer
/// group's commits arrive through one coordinator thread at a time.
fn key(f: &Fixture, threads: usize, thread: usize, i: u64) -> (&str, &TopicPartition) {
    let per_thread = GROUPS / threads;
    let i = i as usize;
    let group = (i % per_thread) * threads + thread;
    let partition = (i / per_thread) % PARTITIONS as usize;
    (&f.groups[group], &f.partitions[partition])
}

fn commits(c: &mut Criterion) {
    let f = fixture();
    let mut group = c.benchmark_group("memory_commit_1_partition");
    group.throughput(Throughput::Elements(1));
    for threads in THREADS {
        group.bench_with_input(BenchmarkId::from_parameter(threads), &threads, |b, &threads| {
            b.iter_custom(|iters| {
                run_parallel(threads, iters, |thread, i| {
                    let (g, tp) = key(&f, threads, thread, i);
                    f.storage.store_offset(g, tp, OffsetAndMetadata::new(i as i64, 1)).expect("store");
                })
            });
        });
    }
    group.finish();

    let mut group = c.benchmark_group("memory_commit_100_partitions");
    group.throughput(Throughput::Elements(100));
    let batch: Vec<_> =
        (0..100).map(|p| (TopicPartition::new("orders", p), OffsetAndMetadata::new(7, 1))).collect();
    group.bench_function("1", |b| {
        let mut i = 0;
        b.iter(|| {
            i = (i + 1) % GROUPS;
            f.storage.store_offsets(&f.groups[i], black_box(&batch)).expect("store");
        });
    });
    group.finish();
}

fn fetches(c: &mut Criterion) {
    let f = fixture();
    let mut group = c.benchmark_group("memory_fetch_latency");
    for threads in THREADS {
        group.bench_with_input(BenchmarkId::from_parameter(threads), &threads, |b, &threads| {
            // Wall time times threads: the mean latency each thread sees per fetch.
            b.iter_custom(|iters| {
                run_parallel(threads, iters, |thread, i| {
                    let (g, tp) = key(&f, threads, thread, i);
                    black_box(f.storage.fetch_offset(g, tp).expect("fetch"));
                }) * threads as u32
            });
        });
    }
    group.finish();
}

fn appends(c: &mut Criterion) {
    let store = MemoryMetadataStore::new();
    let group: Arc<str> = Arc::from("consumer-group-0");
    let partition = store.partition_of(&group);
    let record = |i: u64| Record::Offset {
        group_id: Arc::clone(&group),
        partition: TopicPartition::new("orders", (i % 16) as i32),
        offset: OffsetAndMetadata::new(i as i64, 1),
    };
    let mut bench = c.benchmark_group("memory_store_append");
    bench.throughput(Throughput::Elements(1));
    bench.bench_function("callback", |b| {
        let mut i = 0;
        b.iter(|| {
            i += 1;
            store.append(
                partition,
                OwnerEpoch(1),
                vec![record(i)],
                AppendCompletion::new(|result| {
                    black_box(result).expect("memory storage does not fail");
                }),
            );
        });
    });
    bench.bench_function("blocking", |b| {
        let mut i = 0;
        b.iter(|| {
            i += 1;
            store.append_blocking(partition, OwnerEpoch(1), vec![record(i)]).expect("append");
        });
    });
    bench.finish();
}

/// Resident set size in bytes, from `/proc/self/statm` (Linux); `None` elsewhere.
fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

/// Stores 1,000,000 offsets (10,000 groups x 10 topics x 10 partitions, empty
/// metadata, as most clients send) and divides the resident set growth by
/// their number. Includes every map's spare capacity and the allocator's
/// overhead: what a deployment pays, not just `size_of`.
fn report_memory_per_offset() {
    const GROUP_COUNT: usize = 10_000;
    let topics: Vec<TopicPartition> =
        (0..10).flat_map(|t| (0..10).map(move |p| TopicPartition::new(format!("topic-{t}"), p))).collect();
    let ids: Vec<String> = (0..GROUP_COUNT).map(|g| format!("consumer-group-{g}")).collect();
    let Some(before) = resident_bytes() else {
        println!("memory per stored offset: not measured (no /proc/self/statm)");
        return;
    };
    let storage = MemoryOffsetStorage::new();
    for id in &ids {
        for tp in &topics {
            storage
                .store_offset(id, tp, OffsetAndMetadata::new(1_000_000, 1_700_000_000_000))
                .expect("store");
        }
    }
    let after = resident_bytes().unwrap_or(before);
    let count = storage.offset_count();
    println!(
        "memory per stored offset: {:.1} bytes ({} offsets in {} groups, resident set +{:.1} MiB)",
        (after - before) as f64 / count as f64,
        count,
        GROUP_COUNT,
        (after - before) as f64 / (1024.0 * 1024.0)
    );
    drop(black_box(storage));
}

criterion_group!(benches, commits, fetches, appends);

fn main() {
    report_memory_per_offset();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
