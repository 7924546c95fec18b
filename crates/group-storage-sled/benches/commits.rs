//! Durable commits/s with 1, 8 and 64 concurrent committers: the store (each
//! commit acknowledged only after a flush, flushes shared by group commit)
//! next to raw sled `insert` + `flush()` per commit at the same concurrency,
//! each in both durabilities: sled's `flush()` alone, and `flush()` + `fsync`
//! (the store's default, see `Durability`).
//!
//! Run with `cargo bench -p group-storage-sled --bench commits`. Targets
//! (`benchmarks.md`): with 64 committers the store reaches >= 50% of raw
//! sled and >= 10x its own single-committer rate.

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Barrier;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use group_offsets::MetadataStore;
use group_storage_sled::{Durability, SledMetadataStore};
use group_types::{OffsetAndMetadata, TopicPartition};

const CONCURRENCY: [usize; 3] = [1, 8, 64];

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
        metadata: String::new(),
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

fn single_partition_commits(c: &mut Criterion) {
    let mut group = c.benchmark_group("durable_commits");
    group.sample_size(10).throughput(Throughput::Elements(1));
    for threads in CONCURRENCY {
        for fsync in [false, true] {
            let raw_dir = scratch(&format!("raw-{threads}-{fsync}"));
            let db = sled::open(&raw_dir).expect("open raw sled");
            let tree = db.open_tree("raw").expect("open tree");
            let data_file = std::fs::File::open(raw_dir.join("db")).expect("open sled's data file");
            let name = if fsync { "raw_sled_insert_flush_fsync" } else { "raw_sled_insert_flush" };
            group.bench_with_input(BenchmarkId::new(name, threads), &threads, |b, &threads| {
                b.iter_custom(|iters| {
                    run_concurrently(threads, iters, |t, i| {
                        // The same key and value sizes as the store's commits below.
                        let group_id = format!("group-{t}");
                        let key = [
                            &[0, group_id.len() as u8][..],
                            group_id.as_bytes(),
                            &[0, 6],
                            b"orders",
                            &(i % 16).to_be_bytes()[4..],
                        ]
                        .concat();
                        let mut value = [0u8; 14];
                        value[..8].copy_from_slice(&next_offset().to_le_bytes());
                        tree.insert(key, &value[..]).expect("insert");
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

        for durability in [Durability::SledFlush, Durability::Fsync] {
            let dir = scratch(&format!("store-{threads}-{durability:?}"));
            let store = SledMetadataStore::open_with(&dir, durability).expect("open store");
            let name = match durability {
                Durability::Fsync => "sled_metadata_store_fsync",
                _ => "sled_metadata_store_sled_flush",
            };
            let commits = AtomicU64::new(0);
            group.bench_with_input(BenchmarkId::new(name, threads), &threads, |b, &threads| {
                b.iter_custom(|iters| {
                    run_concurrently(threads, iters, |t, i| {
                        commits.fetch_add(1, Ordering::Relaxed);
                        let group_id = format!("group-{t}");
                        store
                            .store_group_offset(
                                &group_id,
                                "orders",
                                (i % 16) as i32,
                                &value(next_offset() as i64),
                            )
                            .expect("commit");
                    })
                })
            });
            // Evidence of group commit: how many commits each flush served.
            let commits = commits.load(Ordering::Relaxed);
            println!(
                "{name}/{threads}: {commits} commits, {} flushes, {:.1} commits per flush",
                store.flush_count(),
                commits as f64 / store.flush_count().max(1) as f64
            );
            drop(store);
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
    group.finish();
}

/// Runs last: sled batches switch sled's process-wide concurrency control to
/// a global lock for the rest of the process, which would skew the above.
fn multi_partition_commits(c: &mut Criterion) {
    let mut group = c.benchmark_group("durable_commits_10_partitions");
    group.sample_size(10).throughput(Throughput::Elements(1));
    for threads in [1, 64] {
        let dir = scratch(&format!("multi-{threads}"));
        let store = SledMetadataStore::open(&dir).expect("open store");
        group.bench_with_input(BenchmarkId::new("sled_metadata_store", threads), &threads, |b, &threads| {
            b.iter_custom(|iters| {
                run_concurrently(threads, iters, |t, _| {
                    let offset = next_offset() as i64;
                    let batch: Vec<_> = (0..10)
                        .map(|p| (TopicPartition { topic: "orders".into(), partition: p }, value(offset)))
                        .collect();
                    store.store_group_offsets(&format!("group-{t}"), &batch).expect("commit");
                })
            })
        });
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }
    group.finish();
}

criterion_group!(benches, single_partition_commits, multi_partition_commits);
criterion_main!(benches);
