//! Kafka's `ShareCoordinatorOffsetsManagerTest`, every case of its generators with
//! Kafka's expected values, driven through the shard: each tuple is a ShareSnapshot
//! (or, for a delete, a tombstone) of a key replayed at an offset, followed by the
//! shard's last redundant offset.

use group_share_coordinator::{
    ShareCoordinatorConfig, ShareCoordinatorShard, SharePartitionKey, ShareRecord, ShareSnapshotValue,
};
use group_types::TopicId;
use rstest::rstest;

/// Kafka's KEY1..KEY4: two groups, four topics.
fn key(index: u8) -> SharePartitionKey {
    match index {
        1 => SharePartitionKey::new("gs1", TopicId::from_u128(1), 0),
        2 => SharePartitionKey::new("gs2", TopicId::from_u128(2), 0),
        3 => SharePartitionKey::new("gs1", TopicId::from_u128(3), 1),
        _ => SharePartitionKey::new("gs1", TopicId::from_u128(4), 7),
    }
}

fn record(index: u8, delete: bool) -> ShareRecord {
    let value = ShareSnapshotValue {
        snapshot_epoch: 0,
        state_epoch: 0,
        leader_epoch: 0,
        start_offset: 0,
        delivery_complete_count: -1,
        create_timestamp: 0,
        write_timestamp: 0,
        state_batches: Vec::new(),
    };
    ShareRecord::Snapshot { key: key(index), value: (!delete).then_some(value) }
}

/// (key, offset, expected last redundant offset, delete).
type Step = (u8, i64, Option<i64>, bool);

#[rstest]
#[case::update_state_adds_to_internal_state(&[(1, 0, None, false), (1, 10, Some(10), false), (2, 15, Some(10), false), (1, 25, Some(15), true)])]
#[case::no_redundant_state_single_key(&[(1, 10, Some(10), false)])]
#[case::no_redundant_state_single_key_with_delete(&[(1, 10, Some(10), true)])]
#[case::no_redundant_state_multiple_keys(&[(1, 10, Some(10), false), (4, 11, Some(10), false), (2, 13, Some(10), false)])]
#[case::no_redundant_state_multiple_keys_with_delete(&[(1, 10, Some(10), true), (4, 11, Some(11), true), (2, 13, Some(13), true)])]
#[case::redundant_state_single_key(&[(1, 10, Some(10), false), (1, 11, Some(11), false), (1, 15, Some(15), false)])]
#[case::redundant_state_multiple_keys(&[
    (1, 10, Some(10), false), (2, 11, Some(10), false), (3, 15, Some(10), false), (2, 16, Some(10), false), (1, 17, Some(15), false),
])]
#[case::redundant_state_multiple_keys_with_delete(&[
    (1, 10, Some(10), false), (2, 11, Some(10), false), (3, 15, Some(10), true), (2, 16, Some(10), false), (1, 17, Some(16), false),
])]
#[case::redundant_state_reverse_key_order(&[
    (1, 10, Some(10), false), (2, 11, Some(10), false), (3, 15, Some(10), false), (3, 18, Some(10), false),
    (2, 20, Some(10), false), (1, 25, Some(18), false),
])]
#[case::redundant_state_reverse_key_order_with_delete(&[
    (1, 10, Some(10), false), (2, 11, Some(10), false), (3, 15, Some(10), false), (3, 18, Some(10), true),
    (2, 20, Some(10), true), (1, 25, Some(25), false),
])]
#[case::redundant_state_infrequently_written_partition(&[
    (1, 10, Some(10), false), (2, 11, Some(10), false), (3, 15, Some(10), false), (2, 18, Some(10), false),
    (3, 20, Some(10), false), (2, 22, Some(10), false), (3, 25, Some(10), false), (2, 27, Some(10), false),
    (3, 28, Some(10), false), (1, 30, Some(27), false),
])]
#[case::redundant_state_infrequently_written_partition_with_delete(&[
    (1, 10, Some(10), false), (2, 11, Some(10), false), (3, 15, Some(10), false), (2, 18, Some(10), false),
    (3, 20, Some(10), true), (2, 22, Some(10), false), (2, 27, Some(10), true), (1, 30, Some(30), false),
])]
fn last_redundant_offset(#[case] steps: &[Step]) {
    let mut shard = ShareCoordinatorShard::new(ShareCoordinatorConfig::default());
    for (i, &(index, offset, expected, delete)) in steps.iter().enumerate() {
        shard.replay(offset, &record(index, delete));
        assert_eq!(shard.last_redundant_offset(), expected, "step {i}");
    }
}

/// `ShareCoordinatorConfigTest.testAppendLingerMs`.
#[rstest]
#[case::adaptive(-1, None)]
#[case::zero(0, Some(0))]
#[case::five(5, Some(5))]
fn append_linger(#[case] value: i64, #[case] expected: Option<i32>) {
    let mut config = ShareCoordinatorConfig::default();
    config.set("share.coordinator.append.linger.ms", value).expect("valid");
    assert_eq!(config.append_linger(), expected);
}
