//! Append throughput of one node's store over a local 3-member etcd: 64
//! appenders on 50 coordinator partitions, each appending one offset commit
//! and waiting for it before the next (the shape of 64 committers on distinct
//! groups behind a coordinator, which has one append in flight per
//! partition). Measured for several [`EtcdConfig::transactions_in_flight`];
//! each setting also prints its append latency percentiles.
//!
//! Run with `cargo bench -p group-storage-etcd --bench append` (the etcd binary
//! as for the tests: `GROUP_ETCD_BIN`, `target/tools/bin/etcd` or `PATH`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use group_offsets::{AppendCompletion, CoordinatorPartition, MetadataStore, OwnerEpoch, Record};
use group_storage_etcd::testing::{EtcdCluster, unique_prefix};
use group_storage_etcd::{EtcdConfig, EtcdStore};
use group_types::{OffsetAndMetadata, TopicPartition};
use tokio::sync::oneshot;

const APPENDERS: usize = 64;
const PARTITIONS: u32 = 50;
/// Appends per appender per iteration.
const ROUNDS: usize = 8;

fn commit(appender: usize, offset: i64) -> Vec<Record> {
    vec![Record::Offset {
        group_id: Arc::from(format!("committer-{appender:03}")),
        partition: TopicPartition::new("orders", 0),
        offset: OffsetAndMetadata::new(offset, 1_700_000_000_000),
    }]
}

/// `ROUNDS` appends by each appender; every append's latency goes to `latencies`.
async fn round(store: &EtcdStore, latencies: &mut Vec<Duration>) {
    let mut appenders = tokio::task::JoinSet::new();
    for a in 0..APPENDERS {
        let store = store.clone();
        appenders.spawn(async move {
            let mut took = Vec::with_capacity(ROUNDS);
            for r in 0..ROUNDS {
                let (tx, rx) = oneshot::channel();
                let started = Instant::now();
                let p = CoordinatorPartition(a as u32 % PARTITIONS);
                store.append(
                    p,
                    OwnerEpoch(1),
                    commit(a, r as i64),
                    AppendCompletion::new(|result| {
                        let _ = tx.send(result);
                    }),
                );
                rx.await.expect("completed").expect("appended");
                took.push(started.elapsed());
            }
            took
        });
    }
    while let Some(took) = appenders.join_next().await {
        latencies.extend(took.expect("appender"));
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 * p) as usize).min(sorted.len() - 1)]
}

fn append(c: &mut Criterion) {
    let cluster = EtcdCluster::start(3).unwrap_or_else(|e| panic!("cannot start etcd: {e}"));
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("rt");
    let mut bench = c.benchmark_group("etcd_append_64_appenders_50_partitions");
    bench.sample_size(10).measurement_time(Duration::from_secs(10));
    bench.throughput(Throughput::Elements((APPENDERS * ROUNDS) as u64));
    for in_flight in [1, 2, 4, 16] {
        let config = EtcdConfig {
            prefix: unique_prefix("bench-append"),
            partitions: PARTITIONS,
            transactions_in_flight: in_flight,
            ..EtcdConfig::new(cluster.endpoints())
        };
        let client = runtime.block_on(group_storage_etcd::connect(&config)).expect("connect");
        let store = EtcdStore::new(config, client, runtime.handle()).expect("open");
        for p in 0..PARTITIONS {
            store.append_blocking(CoordinatorPartition(p), OwnerEpoch(1), vec![]).expect("fence");
        }
        let mut latencies = Vec::new();
        bench.bench_function(format!("transactions_in_flight_{in_flight}"), |b| {
            b.iter_custom(|iters| {
                let started = Instant::now();
                for _ in 0..iters {
                    runtime.block_on(round(&store, &mut latencies));
                }
                started.elapsed()
            })
        });
        latencies.sort();
        let sent = store.append_transactions();
        if !latencies.is_empty() {
            eprintln!(
                "transactions_in_flight {in_flight}: {} appends, {:.1} per transaction, {:?}, latency p50 {:?} p99 {:?} max {:?}",
                latencies.len(),
                sent.appends as f64 / sent.transactions.max(1) as f64,
                store.snapshots(),
                percentile(&latencies, 0.5),
                percentile(&latencies, 0.99),
                latencies[latencies.len() - 1]
            );
        }
    }
    bench.finish();
}

criterion_group!(benches, append);
criterion_main!(benches);
