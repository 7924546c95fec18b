//! Durable commits/s with 1, 64 and 256 concurrent committers: raw sled (one
//! `apply_batch` of one key, then its own `flush()`, and in the second
//! variant an `fsync` of sled's data file, per commit) next to the store's
//! `append` through `MetadataStore`, each committer on its own coordinator
//! partition and group, acknowledged only after a flush the store's flusher
//! shares among every append queued meanwhile (group commit), in both
//! durabilities. Then appends of 10 offsets at once.
//!
//! Run with `cargo bench -p group-storage-sled --bench commits` (add
//! `-- --quick` for a short run). Targets (`benchmarks.md`): with 64
//! committers the store reaches >= 50% of raw sled and >= 10x its own
//! single-committer rate.

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use group_offsets::{CoordinatorPartition, MetadataStore, OwnerEpoch, Record};
use group_storage_sled::{Durability, SledMetadataStore, SledOptions};
use group_types::{CommitMetadata, OffsetAndMetadata, TopicPartition};

const CONCURRENCY: [usize; 3] = [1, 64, 256];

/// One coordinator partition per committer at the highest concurrency.
const PARTITIONS: u32 = 256;

/// Every commit writes a value never written before: sled skips rewriting a
/// key with the value it already holds, which would make flushes free.
static NEXT_OFFSET: AtomicU64 = AtomicU64::new(1);

fn next_offset() -> u64 {
    NEXT_OFFSET.fetch_add(1, Ordering::Relaxed)
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("bench-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn value(offset: i64) -> OffsetAndMetadata {
    OffsetAndMetadata {
        offset,
        leader_epoch: Some(5),
        metadata: CommitMetadata::empty(),
        commit_time: 1_700_000_000_000,
        expire_time: None,
    }
}

/// Runs `iters` commits spread over `threads` threads and returns the time
/// from the moment all threads were ready to the last commit.
fn run_concurrently(threads: usize, iters: u64, commit: impl Fn(usize, u64) + Sync) -> Duration {
    let per_thread = iters.div_ceil(threads as u64);
    let barrier = Barrier::new(threads + 1);
    std::thread::scope(|s| {
        for t in 0..threads {
            let (barrier, commit) = (&barrier, &commit);
            s.spawn(move || {
                barrier.wait();
                for i in 0..per_thread {
                    commit(t, i);
                }
            });
        }
        barrier.wait();
        let start = Instant::now();
        // Scoped threads are joined when the scope ends, before `elapsed`.
        start
    })
    .elapsed()
}

/// The key a commit of committer `t` writes: the store's layout, by hand.
fn raw_key(t: usize, i: u64) -> Vec<u8> {
    let group_id = format!("group-{t}");
    [
        &(t as u32).to_be_bytes()[..],
        &[2, 0, group_id.len() as u8],
        group_id.as_bytes(),
        &[0, 6],
        b"orders",
        &(i % 16).to_be_bytes()[4..],
    ]
    .concat()
}

fn raw_sled(c: &mut Criterion) {
    let mut group = c.benchmark_group("durable_commits");
    group.sample_size(10).throughput(Throughput::Elements(1));
    for threads in CONCURRENCY {
        for fsync in [false, true] {
            let raw_dir = scratch(&format!("raw-{threads}-{fsync}"));
            let db = sled::open(&raw_dir).expect("open raw sled");
            let tree = db.open_tree("raw").expect("open tree");
            let data_file = std::fs::File::open(raw_dir.join("db")).expect("open sled's data file");
            let name = if fsync { "raw_sled_batch_flush_fsync" } else { "raw_sled_batch_flush" };
            group.bench_with_input(BenchmarkId::new(name, threads), &threads, |b, &threads| {
                b.iter_custom(|iters| {
                    run_concurrently(threads, iters, |t, i| {
                        // The same key and value sizes as the store's commits below.
                        let mut value = [0u8; 14];
                        value[..8].copy_from_slice(&next_offset().to_le_bytes());
                        let mut batch = sled::Batch::default();
                        batch.insert(raw_key(t, i), &value[..]);
                        tree.apply_batch(batch).expect("apply_batch");
                        black_box(db.flush().expect("flush"));
                        if fsync {
                            data_file.sync_data().expect("fsync");
                        }
                    })
                })
            });
            drop((tree, db));
            let _ = std::fs::remove_dir_all(&raw_dir);
        }
    }
    group.finish();
}

fn store_appends(c: &mut Criterion) {
    let mut group = c.benchmark_group("durable_commits");
    group.sample_size(10).throughput(Throughput::Elements(1));
    for threads in CONCURRENCY {
        for durability in [Durability::SledFlush, Durability::Fsync] {
            let dir = scratch(&format!("store-{threads}-{durability:?}"));
            let options = SledOptions::new().partitions(PARTITIONS).durability(durability);
            let store = SledMetadataStore::open_with_options(&dir, options).expect("open store");
            let name = match durability {
                Durability::Fsync => "sled_metadata_store_append_fsync",
                _ => "sled_metadata_store_append_sled_flush",
            };
            let groups: Vec<Arc<str>> = (0..threads).map(|t| Arc::from(format!("group-{t}"))).collect();
            let (commits, flushes) = (AtomicU64::new(0), store.flush_count());
            group.bench_with_input(BenchmarkId::new(name, threads), &threads, |b, &threads| {
                b.iter_custom(|iters| {
                    run_concurrently(threads, iters, |t, i| {
                        commits.fetch_add(1, Ordering::Relaxed);
                        let record = Record::Offset {
                            group_id: groups[t].clone(),
                            partition: TopicPartition::new("orders", (i % 16) as i32),
                            offset: value(next_offset() as i64),
                        };
                        store
                            .append_blocking(CoordinatorPartition(t as u32), OwnerEpoch(1), vec![record])
                            .expect("append");
                    })
                })
            });
            // Evidence of group commit: how many appends each flush served.
            let (commits, flushes) = (commits.load(Ordering::Relaxed), store.flush_count() - flushes);
            println!(
                "{name}/{threads}: {commits} appends, {flushes} flushes, {:.1} appends per flush",
                commits as f64 / flushes.max(1) as f64
            );
            drop(store);
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
    group.finish();
}

fn multi_partition_appends(c: &mut Criterion) {
    let mut group = c.benchmark_group("durable_commits_10_partitions");
    group.sample_size(10).throughput(Throughput::Elements(1));
    for threads in [1, 64] {
        let dir = scratch(&format!("multi-{threads}"));
        let store = SledMetadataStore::open_with_partitions(&dir, PARTITIONS).expect("open store");
        let groups: Vec<Arc<str>> = (0..threads).map(|t| Arc::from(format!("group-{t}"))).collect();
        group.bench_with_input(
            BenchmarkId::new("sled_metadata_store_append", threads),
            &threads,
            |b, &threads| {
                b.iter_custom(|iters| {
                    run_concurrently(threads, iters, |t, _| {
                        let offset = next_offset() as i64;
                        let records = (0..10)
                            .map(|p| Record::Offset {
                                group_id: groups[t].clone(),
                                partition: TopicPartition::new("orders", p),
                                offset: value(offset),
                            })
                            .collect();
                        store
                            .append_blocking(CoordinatorPartition(t as u32), OwnerEpoch(1), records)
                            .expect("append");
                    })
                })
            },
        );
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }
    group.finish();
}

criterion_group!(benches, raw_sled, store_appends, multi_partition_appends);
criterion_main!(benches);
