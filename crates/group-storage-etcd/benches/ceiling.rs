//! What a local 3-member etcd can apply, with nothing else running, for the
//! transaction shapes a log layout could send: the ceiling any store on this
//! machine works under. Two transactions in flight, new keys every time (as
//! log entries are), values of 100 bytes (one offset commit's entry):
//!
//! - `NestedAppends`: 23 nested transactions, each with the 4 compares and
//!   the 1 put of one partition's fenced append (group commit's shape);
//! - `NestedTwoCompares`: the same with only the owner-key and free-entry
//!   compares (what the compares cost);
//! - `FlatPuts`: the same 23 puts with no compares;
//! - `OnePut`: one 2.3 KB put, the 23 appends as one value (a layout that
//!   wrote one key per transaction).
//!
//! Each shape also prints etcd's CPU per append, summed over the members
//! (from `/proc`), which decides how many appends a machine that also runs the
//! coordinator can carry. Run with `cargo bench -p group-storage-etcd --bench
//! ceiling` (the etcd binary as for the tests). etcd's Go runtime reads
//! `GOGC` from the environment, which the members inherit.

use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use etcd_client::{Client, Compare, CompareOp, KvClient, Txn, TxnOp};
use group_storage_etcd::testing::{EtcdCluster, unique_prefix};

const APPENDS: usize = 23;
const IN_FLIGHT: usize = 2;
/// Transactions per flight per iteration.
const ROUNDS: usize = 20;

#[derive(Clone, Copy, Debug)]
enum Shape {
    NestedAppends,
    NestedTwoCompares,
    FlatPuts,
    OnePut,
}

/// The keys one partition's append compares, set up so every compare holds.
struct Fences {
    epoch: String,
    owner: String,
    owner_revision: i64,
    meta: String,
    meta_revision: i64,
}

fn txn(shape: Shape, prefix: &str, n: u64, fences: &[Fences]) -> Txn {
    let value = vec![7u8; 100];
    let key = |i: usize| format!("{prefix}/log/{i:02}/{n:020}");
    // Each partition's append nested with its compares, as group commit sends it.
    let nested = |all_four: bool| {
        let appends = fences.iter().enumerate().map(|(i, f)| {
            let mut compares = Vec::with_capacity(4);
            if all_four {
                compares.push(Compare::value(f.epoch.clone(), CompareOp::Less, "00000000000000000002"));
                compares.push(Compare::mod_revision(f.meta.clone(), CompareOp::Equal, f.meta_revision));
            }
            compares.push(Compare::create_revision(f.owner.clone(), CompareOp::Equal, f.owner_revision));
            compares.push(Compare::create_revision(key(i), CompareOp::Equal, 0));
            TxnOp::txn(Txn::new().when(compares).and_then([TxnOp::put(key(i), value.clone(), None)]))
        });
        Txn::new().and_then(appends.collect::<Vec<_>>())
    };
    match shape {
        Shape::NestedAppends => nested(true),
        Shape::NestedTwoCompares => nested(false),
        Shape::FlatPuts => Txn::new()
            .and_then((0..APPENDS).map(|i| TxnOp::put(key(i), value.clone(), None)).collect::<Vec<_>>()),
        Shape::OnePut => Txn::new().and_then([TxnOp::put(key(0), vec![7u8; 100 * APPENDS], None)]),
    }
}

async fn fences(kv: &mut KvClient, prefix: &str) -> Vec<Fences> {
    let mut out = Vec::new();
    for i in 0..APPENDS {
        let epoch = format!("{prefix}/epoch/{i:02}");
        let owner = format!("{prefix}/owner/{i:02}");
        let meta = format!("{prefix}/meta/{i:02}");
        kv.put(epoch.clone(), "00000000000000000001", None).await.expect("put epoch");
        let owner_revision = kv
            .put(owner.clone(), "node", None)
            .await
            .expect("put owner")
            .header()
            .expect("header")
            .revision();
        let meta_revision =
            kv.put(meta.clone(), "meta", None).await.expect("put meta").header().expect("header").revision();
        out.push(Fences { epoch, owner, owner_revision, meta, meta_revision });
    }
    out
}

fn cpu_seconds(pids: &[u32]) -> f64 {
    // utime and stime, fields 14 and 15 of /proc/PID/stat, in clock ticks of 1/100 s.
    pids.iter()
        .filter_map(|pid| std::fs::read_to_string(format!("/proc/{pid}/stat")).ok())
        .filter_map(|stat| {
            let after = stat.rsplit_once(')')?.1;
            let fields: Vec<&str> = after.split_whitespace().collect();
            Some(fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?)
        })
        .sum::<f64>()
        / 100.0
}

fn ceiling(c: &mut Criterion) {
    let cluster = EtcdCluster::start(3).unwrap_or_else(|e| panic!("cannot start etcd: {e}"));
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("rt");
    let client = runtime.block_on(Client::connect(cluster.endpoints(), None)).expect("connect");
    let mut bench = c.benchmark_group("etcd_ceiling_2_in_flight");
    bench.sample_size(10).measurement_time(Duration::from_secs(10));
    bench.throughput(Throughput::Elements((IN_FLIGHT * ROUNDS * APPENDS) as u64));
    for shape in [Shape::NestedAppends, Shape::NestedTwoCompares, Shape::FlatPuts, Shape::OnePut] {
        let prefix = unique_prefix("ceiling");
        let fences = std::sync::Arc::new(runtime.block_on(fences(&mut client.kv_client(), &prefix)));
        let mut sent = 0u64;
        let mut latencies = Vec::new();
        let cpu_before = cpu_seconds(&cluster.pids());
        bench.bench_function(format!("{shape:?}"), |b| {
            b.iter_custom(|iters| {
                let started = Instant::now();
                for _ in 0..iters {
                    let flights: Vec<_> = (0..IN_FLIGHT)
                        .map(|f| {
                            let (mut kv, prefix, fences) =
                                (client.kv_client(), prefix.clone(), fences.clone());
                            let first = sent + (f * ROUNDS) as u64;
                            runtime.spawn(async move {
                                let mut took = Vec::with_capacity(ROUNDS);
                                for n in first..first + ROUNDS as u64 {
                                    let at = Instant::now();
                                    let resp = kv.txn(txn(shape, &prefix, n, &fences)).await.expect("txn");
                                    assert!(resp.succeeded(), "every compare of {shape:?} holds");
                                    took.push(at.elapsed());
                                }
                                took
                            })
                        })
                        .collect();
                    for flight in flights {
                        latencies.extend(runtime.block_on(flight).expect("flight"));
                    }
                    sent += (IN_FLIGHT * ROUNDS) as u64;
                }
                started.elapsed()
            })
        });
        let cpu = cpu_seconds(&cluster.pids()) - cpu_before;
        latencies.sort();
        if let (Some(p50), Some(p99)) =
            (latencies.get(latencies.len() / 2), latencies.get(latencies.len() * 99 / 100))
        {
            let appends = sent as f64 * APPENDS as f64;
            eprintln!(
                "{shape:?}: {} transactions, p50 {p50:?} p99 {p99:?}; etcd CPU {:.1} µs per append over the members",
                latencies.len(),
                cpu * 1e6 / appends
            );
        }
    }
    bench.finish();
}

criterion_group!(benches, ceiling);
criterion_main!(benches);
