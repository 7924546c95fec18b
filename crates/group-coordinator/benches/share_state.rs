//! Share-state writes through the runtime (issue 29's "share-state Write throughput
//! through the runtime on memory and sled"): WriteShareGroupState of one share
//! partition, as a broker's `SharePartition` sends one after acknowledgements, each
//! answered once durable. One writer in turn, and 64 writers on 64 share partitions
//! at once (spread over the coordinator partitions by their keys, so that appends of
//! many partitions share flushes). Criterion reports writes per second.

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use group_coordinator::{CoordinatorConfig, GroupCoordinator, MetadataImage, TopicImage};
use group_offsets::{MemoryMetadataStore, MetadataStore};
use group_storage_sled::SledMetadataStore;
use group_types::{
    ErrorCode, GroupId, InitializeShareGroupStateRequest, InitializeStatePartition, ShareStateTopic,
    StateBatch, TopicId, WriteShareGroupStateRequest, WriteStatePartition,
};

#[cfg(not(feature = "system-allocator"))]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const TOPIC: TopicId = TopicId([9; 16]);
const PARTITIONS: i32 = 64;

fn coordinator(store: Arc<dyn MetadataStore>) -> GroupCoordinator {
    let coordinator = GroupCoordinator::builder(store, CoordinatorConfig::default())
        .metadata_image(MetadataImage::new(1, [TopicImage::new(TOPIC, "queue", PARTITIONS as u32)]))
        .open()
        .expect("opens");
    let partitions = (0..PARTITIONS).map(|partition| InitializeStatePartition {
        partition,
        state_epoch: 0,
        start_offset: 0,
    });
    let init = InitializeShareGroupStateRequest {
        api_version: 0,
        group_id: GroupId::from("queue-readers"),
        topics: vec![ShareStateTopic::new(TOPIC, partitions)],
    };
    coordinator.handle_initialize_share_group_state(init).expect("initialized");
    coordinator
}

/// The `n`th write of share partition `partition`: the start offset moves past
/// 500 acknowledged records and 500 more are acknowledged beyond it.
fn write(partition: i32, n: i64) -> WriteShareGroupStateRequest {
    let start = n * 500;
    let data = WriteStatePartition {
        partition,
        state_epoch: 0,
        leader_epoch: 0,
        start_offset: start,
        delivery_complete_count: 500,
        state_batches: vec![
            StateBatch::new(start, start + 499, 2, 1),
            StateBatch::new(start + 500, start + 999, 0, 1),
        ],
    };
    WriteShareGroupStateRequest {
        api_version: 0,
        group_id: GroupId::from("queue-readers"),
        topics: vec![ShareStateTopic::new(TOPIC, [data])],
    }
}

fn written(coordinator: &GroupCoordinator, partition: i32, n: i64) {
    let r = coordinator.handle_write_share_group_state(write(partition, n)).expect("answered");
    assert_eq!(r.results[0].partitions[0].error_code, ErrorCode::None);
}

/// `writers` threads, each writing its own share partition `per_writer` times;
/// the time from the start to the last answer.
fn concurrent(coordinator: &Arc<GroupCoordinator>, writers: i32, per_writer: i64, round: i64) -> Duration {
    let start = Arc::new(Barrier::new(writers as usize + 1));
    let threads: Vec<_> = (0..writers)
        .map(|p| {
            let (coordinator, start) = (coordinator.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                for n in 0..per_writer {
                    written(&coordinator, p, round * per_writer + n + 1);
                }
            })
        })
        .collect();
    start.wait();
    let began = Instant::now();
    for t in threads {
        t.join().expect("writer");
    }
    began.elapsed()
}

fn bench_engine(c: &mut Criterion, engine: &str, store: Arc<dyn MetadataStore>) {
    let coordinator = Arc::new(coordinator(store));
    let mut group = c.benchmark_group(format!("share_state_write/{engine}"));
    group.throughput(Throughput::Elements(1));
    let mut n = 0;
    group.bench_function("1 writer", |b| {
        b.iter(|| {
            n += 1;
            written(&coordinator, 0, n);
        })
    });
    group.throughput(Throughput::Elements(PARTITIONS as u64 * 20));
    let mut round = 1_000_000;
    group.bench_function("64 writers", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                round += 1;
                total += concurrent(&coordinator, PARTITIONS, 20, round);
            }
            total
        })
    });
    group.finish();
}

fn bench_share_state(c: &mut Criterion) {
    bench_engine(c, "memory", Arc::new(MemoryMetadataStore::new()));
    let dir = std::env::temp_dir().join(format!("share-state-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let sled = SledMetadataStore::open(&dir).expect("sled opens");
    bench_engine(c, "sled", Arc::new(sled));
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10).measurement_time(Duration::from_secs(3));
    targets = bench_share_state
}
criterion_main!(benches);
