//! Load time of one coordinator partition holding 100,000 offsets (100
//! groups x 10 topics x 100 partitions, one append per group), from a local
//! single-member etcd started by the `testing` harness: first as 100 log
//! entries, then after the store folded them into a snapshot.
//!
//! Run with `cargo bench -p group-storage-etcd --bench load` (the etcd binary
//! as for the tests: `GROUP_ETCD_BIN`, `target/tools/bin/etcd` or `PATH`).

use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use group_offsets::{CoordinatorPartition, MetadataStore, OwnerEpoch, Record};
use group_storage_etcd::testing::{EtcdCluster, unique_prefix};
use group_storage_etcd::{EtcdConfig, EtcdStore};
use group_types::{CommitMetadata, OffsetAndMetadata, TopicPartition};

const GROUPS: usize = 100;
const TOPICS: usize = 10;
const PARTITIONS: i32 = 100;
const P: CoordinatorPartition = CoordinatorPartition(0);

fn group(g: usize) -> Vec<Record> {
    let group_id: Arc<str> = Arc::from(format!("consumer-group-{g:04}"));
    (0..TOPICS)
        .flat_map(|t| {
            let group_id = Arc::clone(&group_id);
            let topic: Arc<str> = Arc::from(format!("topic-{t:02}"));
            (0..PARTITIONS).map(move |p| Record::Offset {
                group_id: Arc::clone(&group_id),
                partition: TopicPartition::new(Arc::clone(&topic), p),
                offset: OffsetAndMetadata {
                    offset: 1_000_000 + i64::from(p),
                    leader_epoch: Some(12),
                    metadata: CommitMetadata::empty(),
                    commit_time: 1_700_000_000_000,
                    expire_time: None,
                },
            })
        })
        .collect()
}

fn load(c: &mut Criterion) {
    let cluster = EtcdCluster::start(1).unwrap_or_else(|e| panic!("cannot start etcd: {e}"));
    let config = EtcdConfig {
        prefix: unique_prefix("bench-load"),
        partitions: 1,
        mvcc_compaction_interval: None,
        compact_after_entries: u64::MAX,
        compact_after_bytes: u64::MAX,
        ..EtcdConfig::new(cluster.endpoints())
    };
    // The bench's own runtime, as an embedding program's: the store runs its tasks there.
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let open = |config: EtcdConfig| {
        let client = runtime.block_on(group_storage_etcd::connect(&config)).expect("connect");
        EtcdStore::new(config, client, runtime.handle()).expect("open")
    };
    let store = open(config.clone());
    for g in 0..GROUPS {
        store.append_blocking(P, OwnerEpoch(1), group(g)).expect("append");
    }
    let offsets = |store: &EtcdStore| {
        store
            .load(P)
            .expect("load")
            .groups
            .offsets
            .iter()
            .map(|g| g.offsets.values().map(|p| p.len()).sum::<usize>())
            .sum::<usize>()
    };
    assert_eq!(offsets(&store), GROUPS * TOPICS * PARTITIONS as usize);

    let mut bench = c.benchmark_group("etcd_load");
    bench.sample_size(10).measurement_time(Duration::from_secs(10));
    bench.bench_function("100k_offsets_from_100_log_entries", |b| b.iter(|| store.load(P).expect("load")));

    // A store that snapshots after one more (empty) append.
    let eager = open(EtcdConfig { compact_after_entries: 1, ..config });
    eager.append_blocking(P, OwnerEpoch(1), vec![]).expect("append");
    assert_eq!(offsets(&eager), GROUPS * TOPICS * PARTITIONS as usize);
    bench.bench_function("100k_offsets_from_a_snapshot", |b| b.iter(|| eager.load(P).expect("load")));
    bench.finish();
}

criterion_group!(benches, load);
criterion_main!(benches);
