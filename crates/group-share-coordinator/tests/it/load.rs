//! The load rule: state changes only by replay, so replaying the log of any
//! sequence of operations into an empty shard gives the live shard's state, and a
//! shard loaded from any prefix of the log answers the rest of the operations
//! with the same answers and records as the live shard did.

use std::collections::HashSet;

use group_share_coordinator::{ShareCoordinatorConfig, ShareCoordinatorShard, ShareRecord, TopicsImage};
use group_types::{
    GroupId, InitializeStatePartition, ReadStatePartition, StateBatch, TopicId, WriteStatePartition,
};
use proptest::prelude::*;

const TOPICS: [TopicId; 2] = [TopicId::from_u128(1), TopicId::from_u128(2)];

/// One operation of the sequence, on group `group % 2`, topic `topic % 2`,
/// partition `partition` (the image has 2 partitions per topic, so 2 is unknown).
#[derive(Debug, Clone)]
enum Op {
    Init {
        group: u8,
        topic: u8,
        partition: i32,
        state_epoch: i32,
        start_offset: i64,
    },
    Write {
        group: u8,
        topic: u8,
        partition: i32,
        leader_epoch: i32,
        state_epoch: i32,
        start_offset: i64,
        batches: Vec<StateBatch>,
    },
    Read {
        group: u8,
        topic: u8,
        partition: i32,
        leader_epoch: i32,
    },
    Delete {
        group: u8,
        topic: u8,
        partition: i32,
    },
    Cold,
    TopicDeleted {
        topic: u8,
    },
}

fn op_strategy() -> impl Strategy<Value = Op> {
    let target = (0u8..2, 0u8..2, 0i32..3);
    let batch = (0i64..40, 0i64..8, prop::sample::select(vec![0i8, 2, 4]), 0i16..3)
        .prop_map(|(first, len, state, count)| StateBatch::new(first, first + len, state, count));
    prop_oneof![
        3 => (target.clone(), -1i32..3, -1i64..20).prop_map(|((group, topic, partition), state_epoch, start_offset)| Op::Init { group, topic, partition, state_epoch, start_offset }),
        6 => (target.clone(), -1i32..4, -1i32..3, -1i64..30, prop::collection::vec(batch, 0..4)).prop_map(
            |((group, topic, partition), leader_epoch, state_epoch, start_offset, batches)| Op::Write { group, topic, partition, leader_epoch, state_epoch, start_offset, batches }
        ),
        3 => (target.clone(), -1i32..5).prop_map(|((group, topic, partition), leader_epoch)| Op::Read { group, topic, partition, leader_epoch }),
        1 => target.prop_map(|(group, topic, partition)| Op::Delete { group, topic, partition }),
        1 => Just(Op::Cold),
        1 => (0u8..2).prop_map(|topic| Op::TopicDeleted { topic }),
    ]
}

fn config() -> ShareCoordinatorConfig {
    let mut config = ShareCoordinatorConfig::default();
    config.set("share.coordinator.snapshot.update.records.per.snapshot", 3).expect("valid");
    config.set("share.coordinator.cold.partition.snapshot.interval.ms", 25).expect("valid");
    config
}

fn image() -> TopicsImage {
    TopicsImage::new(TOPICS.map(|t| (t, 2)))
}

/// The answer of `op` on `shard` at `now` (as text, to compare) and its records.
fn run(shard: &ShareCoordinatorShard, op: &Op, now: i64) -> (String, Vec<ShareRecord>) {
    let group = |g: &u8| GroupId::from(if *g == 0 { "g0" } else { "g1" });
    let topic = |t: &u8| Some(TOPICS[usize::from(*t)]);
    match op {
        Op::Init { group: g, topic: t, partition, state_epoch, start_offset } => {
            let data = InitializeStatePartition {
                partition: *partition,
                state_epoch: *state_epoch,
                start_offset: *start_offset,
            };
            let r = shard.initialize_state(now, &group(g), topic(t), &data);
            (format!("{:?}", r.response), r.records)
        }
        Op::Write { group: g, topic: t, partition, leader_epoch, state_epoch, start_offset, batches } => {
            let data = WriteStatePartition {
                partition: *partition,
                state_epoch: *state_epoch,
                leader_epoch: *leader_epoch,
                start_offset: *start_offset,
                delivery_complete_count: -1,
                state_batches: batches.clone(),
            };
            let r = shard.write_state(now, &group(g), topic(t), &data);
            (format!("{:?}", r.response), r.records)
        }
        Op::Read { group: g, topic: t, partition, leader_epoch } => {
            let r = shard.read_state(
                now,
                &group(g),
                topic(t),
                &ReadStatePartition { partition: *partition, leader_epoch: *leader_epoch },
            );
            (format!("{:?}", r.response), r.records)
        }
        Op::Delete { group: g, topic: t, partition } => {
            let r = shard.delete_state(&group(g), topic(t), *partition);
            (format!("{:?}", r.response), r.records)
        }
        Op::Cold => (String::new(), shard.snapshot_cold_partitions(now)),
        // The image keeps the topic: the deleted topic's id may come back in a later
        // operation, which must then be refused or served the same way live and loaded.
        Op::TopicDeleted { topic: t } => {
            (String::new(), shard.maybe_cleanup_share_state(&HashSet::from([TOPICS[usize::from(*t)]])))
        }
    }
}

/// Everything observable of a shard's state.
fn observe(shard: &ShareCoordinatorShard) -> String {
    format!("{:?} {:?}", shard.share_partitions().collect::<Vec<_>>(), shard.last_redundant_offset())
}

fn loaded(log: &[ShareRecord]) -> ShareCoordinatorShard {
    let mut shard = ShareCoordinatorShard::new(config());
    shard.on_loaded(image());
    for (offset, record) in log.iter().enumerate() {
        shard.replay(offset as i64, record);
    }
    shard
}

proptest! {
    #[test]
    fn replaying_the_log_gives_the_live_state(ops in prop::collection::vec(op_strategy(), 1..40), split in 0usize..40) {
        let mut live = ShareCoordinatorShard::new(config());
        live.on_loaded(image());
        let mut log: Vec<ShareRecord> = Vec::new();
        let mut answers = Vec::new();
        // Where each operation's records start in the log.
        let mut starts = Vec::new();
        for (i, op) in ops.iter().enumerate() {
            let now = 10 * i as i64;
            let (answer, records) = run(&live, op, now);
            starts.push(log.len());
            for record in records {
                live.replay(log.len() as i64, &record);
                log.push(record);
            }
            answers.push(answer);
        }
        prop_assert_eq!(observe(&loaded(&log)), observe(&live));

        // Load the records of the first `split` operations, then run the rest.
        let split = split.min(ops.len());
        let prefix = starts.get(split).copied().unwrap_or(log.len());
        let mut resumed = loaded(&log[..prefix]);
        let mut offset = prefix;
        for (i, op) in ops.iter().enumerate().skip(split) {
            let (answer, records) = run(&resumed, op, 10 * i as i64);
            prop_assert_eq!(&answer, &answers[i], "operation {} answers alike", i);
            let end = starts.get(i + 1).copied().unwrap_or(log.len());
            prop_assert_eq!(&records[..], &log[offset..end], "operation {} writes alike", i);
            for record in &records {
                resumed.replay(offset as i64, record);
                offset += 1;
            }
        }
        prop_assert_eq!(observe(&resumed), observe(&live));
    }
}
