//! Restart cost: open a store holding 1,000,000 offsets (1,000 groups x 10
//! topics x 100 partitions, spread over the default 50 coordinator
//! partitions) and load them all with `load_all`.
//!
//! Run with `cargo bench -p group-storage-sled --bench load`. Target
//! (`benchmarks.md`): <= 2 s.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use std::sync::Arc;

use group_offsets::{MetadataStore, OwnerEpoch, Record};
use group_storage_sled::SledMetadataStore;
use group_types::{CommitMetadata, OffsetAndMetadata, TopicPartition};

const GROUPS: usize = 1_000;
const TOPICS: usize = 10;
const PARTITIONS: i32 = 100;
const OFFSETS: usize = GROUPS * TOPICS * PARTITIONS as usize;

fn populate(dir: &PathBuf) {
    let store = SledMetadataStore::open(dir).expect("open store");
    for g in 0..GROUPS {
        let group_id: Arc<str> = Arc::from(format!("consumer-group-{g:04}"));
        let records: Vec<_> = (0..TOPICS)
            .flat_map(|t| {
                let group_id = group_id.clone();
                (0..PARTITIONS).map(move |p| {
                    let offset = OffsetAndMetadata {
                        offset: 1_000_000 + i64::from(p),
                        leader_epoch: Some(12),
                        metadata: CommitMetadata::empty(),
                        commit_time: 1_700_000_000_000,
                        expire_time: None,
                    };
                    Record::Offset {
                        group_id: group_id.clone(),
                        partition: TopicPartition { topic: format!("topic-{t:02}").into(), partition: p },
                        offset,
                    }
                })
            })
            .collect();
        store.append_blocking(store.partition_of(&group_id), OwnerEpoch(1), records).expect("append");
    }
}

fn open_and_load(c: &mut Criterion) {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("bench-load-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    populate(&dir);

    let mut group = c.benchmark_group("restart");
    group.sample_size(10);
    group.bench_function("open_and_load_all_1M_offsets", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let start = Instant::now();
                let store = SledMetadataStore::open(&dir).expect("open");
                let loaded = store.load_all().expect("load_all");
                total += start.elapsed();
                let count: usize = loaded.offsets.iter().map(|g| g.len()).sum();
                assert_eq!(count, OFFSETS);
            }
            total
        })
    });
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, open_and_load);
criterion_main!(benches);
