//! Criterion benchmarks of the share coordinator's shard: WriteShareGroupState of
//! 1 and of 50 state batches, and ReadShareGroupState, over 1,000 initialized share
//! partitions taken round robin, with Kafka's default of a snapshot every 500
//! updates. A write is timed with the replay of its record (what a write costs the
//! shard end to end, less the log append); each write moves the partition's start
//! offset past its previous batches, as a consuming share group does, so the
//! stored state stays the size of one write.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use group_share_coordinator::{ShareCoordinatorConfig, ShareCoordinatorShard, TopicsImage};
use group_types::{
    DELIVERY_STATE_ACKNOWLEDGED, DELIVERY_STATE_AVAILABLE, GroupId, InitializeStatePartition,
    ReadStatePartition, StateBatch, TopicId, WriteStatePartition,
};

const PARTITIONS: i32 = 1_000;
const TOPIC: TopicId = TopicId::from_u128(0x5eed);

/// A shard with `PARTITIONS` share partitions initialized at start offset 0.
fn shard() -> (ShareCoordinatorShard, i64) {
    let mut shard = ShareCoordinatorShard::new(ShareCoordinatorConfig::default());
    shard.on_loaded(TopicsImage::new([(TOPIC, PARTITIONS)]));
    let group = GroupId::from("bench-group");
    let mut offset = 0;
    for partition in 0..PARTITIONS {
        let init = InitializeStatePartition { partition, state_epoch: 0, start_offset: 0 };
        for record in shard.initialize_state(0, &group, Some(TOPIC), &init).records {
            shard.replay(offset, &record);
            offset += 1;
        }
    }
    (shard, offset)
}

/// `count` batches of 10 offsets from `from`, alternately acknowledged and
/// available (so that none merge).
fn batches(from: i64, count: i64) -> Vec<StateBatch> {
    (0..count)
        .map(|i| {
            let state = if i % 2 == 0 { DELIVERY_STATE_ACKNOWLEDGED } else { DELIVERY_STATE_AVAILABLE };
            StateBatch::new(from + 10 * i, from + 10 * i + 9, state, 1)
        })
        .collect()
}

fn write(c: &mut Criterion, batch_count: i64) {
    let (mut shard, mut offset) = shard();
    let group = GroupId::from("bench-group");
    let mut cursors = vec![0i64; PARTITIONS as usize];
    let mut next = 0usize;
    let mut g = c.benchmark_group("write");
    g.throughput(Throughput::Elements(1));
    g.bench_function(format!("{batch_count}-batches"), |b| {
        b.iter(|| {
            let partition = next % PARTITIONS as usize;
            next += 1;
            let from = cursors[partition];
            cursors[partition] = from + 10 * batch_count;
            let data = WriteStatePartition {
                partition: partition as i32,
                state_epoch: 0,
                leader_epoch: 0,
                start_offset: from,
                delivery_complete_count: -1,
                state_batches: batches(from, batch_count),
            };
            let result = shard.write_state(1, &group, Some(TOPIC), &data);
            for record in &result.records {
                shard.replay(offset, record);
                offset += 1;
            }
            black_box(result.response);
        })
    });
    g.finish();
}

fn read(c: &mut Criterion) {
    let (mut shard, mut offset) = shard();
    let group = GroupId::from("bench-group");
    // Every share partition holds 50 batches.
    for partition in 0..PARTITIONS {
        let data = WriteStatePartition {
            partition,
            state_epoch: 0,
            leader_epoch: 0,
            start_offset: 0,
            delivery_complete_count: -1,
            state_batches: batches(0, 50),
        };
        for record in shard.write_state(1, &group, Some(TOPIC), &data).records {
            shard.replay(offset, &record);
            offset += 1;
        }
    }
    let mut next = 0;
    let mut g = c.benchmark_group("read");
    g.throughput(Throughput::Elements(1));
    g.bench_function("50-batches-stored", |b| {
        b.iter(|| {
            let partition = next % PARTITIONS;
            next += 1;
            let data = ReadStatePartition { partition, leader_epoch: 0 };
            black_box(shard.read_state(2, &group, Some(TOPIC), &data))
        })
    });
    g.finish();
}

fn benches(c: &mut Criterion) {
    write(c, 1);
    write(c, 50);
    read(c);
}

criterion_group! {
    name = shard_benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = benches
}
criterion_main!(shard_benches);
