//! Kafka's `ShareCoordinatorShardTest`, with its expected values: the refusals as
//! one table, the other cases one test each (named after Kafka's methods). Kafka's
//! tests replay every record at offset 0 with a mocked offsets manager; here
//! offsets count up, which the cases do not observe.

use std::collections::HashSet;

use group_share_coordinator::{
    NEGATIVE_PARTITION_ID_MESSAGE, READ_UNINITIALIZED_MESSAGE, ShareCoordinatorConfig, ShareCoordinatorShard,
    SharePartitionKey, ShareRecord, ShareSnapshotValue, ShareUpdateValue, TopicsImage,
    WRITE_UNINITIALIZED_MESSAGE,
};
use group_types::{
    ErrorCode, GroupId, InitializeStatePartition, ReadStatePartition, ReadStatePartitionResult,
    ReadStateSummaryPartition, ReadStateSummaryPartitionResult, ShareStatePartitionResult, StateBatch,
    TopicId, WriteStatePartition,
};
use rstest::rstest;

const GROUP: &str = "group1";
const TOPIC: TopicId = TopicId::from_u128(0x1111);
const TOPIC_2: TopicId = TopicId::from_u128(0x2222);
const PARTITION: i32 = 0;
/// Kafka's `MockTime` reads a constant clock.
const NOW: i64 = 1_700_000_000_000;

fn key(partition: i32) -> SharePartitionKey {
    SharePartitionKey::new(GROUP, TOPIC, partition)
}

fn group() -> GroupId {
    GroupId::from(GROUP)
}

/// The shard of Kafka's `ShareCoordinatorShardBuilder`: `ShareCoordinatorTestConfig`
/// (50 updates per snapshot, cold snapshots after 10 s) and an image in which every
/// topic has `PARTITION + 1` partitions.
struct Fixture {
    shard: ShareCoordinatorShard,
    offset: i64,
}

impl Fixture {
    fn new() -> Fixture {
        Fixture::with_updates_per_snapshot(50)
    }

    fn with_updates_per_snapshot(updates: i64) -> Fixture {
        let mut config = ShareCoordinatorConfig::default();
        config.set("share.coordinator.snapshot.update.records.per.snapshot", updates).expect("valid");
        config.set("share.coordinator.cold.partition.snapshot.interval.ms", 10_000).expect("valid");
        let mut shard = ShareCoordinatorShard::new(config);
        shard.on_loaded(TopicsImage::new([(TOPIC, PARTITION + 1), (TOPIC_2, PARTITION + 1)]));
        Fixture { shard, offset: 0 }
    }

    fn replay(&mut self, record: &ShareRecord) {
        self.shard.replay(self.offset, record);
        self.offset += 1;
    }

    fn replay_all(&mut self, records: &[ShareRecord]) {
        for record in records {
            self.replay(record);
        }
    }

    /// Kafka's `initSharePartition`: a bare snapshot at `state_epoch`, leader epoch,
    /// start offset and delivery complete count -1.
    fn init_partition(&mut self, state_epoch: i32) {
        let value = ShareSnapshotValue {
            snapshot_epoch: 0,
            state_epoch,
            leader_epoch: -1,
            start_offset: -1,
            delivery_complete_count: -1,
            create_timestamp: 0,
            write_timestamp: 0,
            state_batches: Vec::new(),
        };
        self.replay(&ShareRecord::Snapshot { key: key(PARTITION), value: Some(value) });
    }

    /// Kafka's `writeAndReplayRecord`: a read at `leader_epoch` (which raises it),
    /// then a write of batch 0-10 (available, count 1) at start offset 0.
    fn write_and_replay(&mut self, leader_epoch: i32) {
        let read = self.read(leader_epoch);
        self.replay(&read.records[0]);
        let write = self.shard.write_state(
            NOW,
            &group(),
            Some(TOPIC),
            &write_data(leader_epoch, 0, 0, 0, vec![b(0, 10, 0, 1)]),
        );
        self.replay(&write.records[0]);
    }

    fn read(
        &self,
        leader_epoch: i32,
    ) -> group_share_coordinator::ShardResult<group_share_coordinator::PartitionReply<ReadStatePartitionResult>>
    {
        self.shard.read_state(
            NOW,
            &group(),
            Some(TOPIC),
            &ReadStatePartition { partition: PARTITION, leader_epoch },
        )
    }

    fn state(&self, partition: i32) -> Option<&ShareSnapshotValue> {
        self.shard.share_partition(&key(partition)).map(|s| &s.offset)
    }

    fn leader_epoch(&self) -> Option<i32> {
        self.shard.share_partition(&key(PARTITION)).map(|s| s.max_leader_epoch)
    }
}

fn b(first: i64, last: i64, state: i8, count: i16) -> StateBatch {
    StateBatch::new(first, last, state, count)
}

fn write_data(
    leader_epoch: i32,
    state_epoch: i32,
    start_offset: i64,
    dcc: i32,
    batches: Vec<StateBatch>,
) -> WriteStatePartition {
    WriteStatePartition {
        partition: PARTITION,
        state_epoch,
        leader_epoch,
        start_offset,
        delivery_complete_count: dcc,
        state_batches: batches,
    }
}

/// Kafka's `ShareGroupOffset.fromRecord(ShareUpdateValue)` of an update made from
/// a write request: what the state is when no snapshot fields differ.
fn update_of(data: &WriteStatePartition, snapshot_epoch: i32) -> ShareUpdateValue {
    ShareUpdateValue {
        snapshot_epoch,
        leader_epoch: data.leader_epoch,
        start_offset: data.start_offset,
        delivery_complete_count: data.delivery_complete_count,
        state_batches: data.state_batches.clone(),
    }
}

/// What is stored before the refused request.
#[derive(Debug, Clone, Copy)]
enum Setup {
    /// Nothing.
    Empty,
    /// `initSharePartition` at a state epoch.
    Init(i32),
    /// `initSharePartition` then `writeAndReplayRecord` at a leader epoch.
    Written(i32),
    /// A snapshot at state epoch 5 (leader epoch 0).
    StateEpoch5,
}

/// What the image holds when the request comes.
#[derive(Debug, Clone, Copy)]
enum Image {
    /// The fixture's.
    Full,
    /// None at all (Kafka's null image).
    Missing,
    /// An image without the topic.
    NoTopic,
    /// The topic with no partitions.
    NoPartitions,
}

/// The refused request.
#[derive(Debug, Clone, Copy)]
enum Op {
    Init { partition: i32, state_epoch: i32 },
    Write { partition: i32, leader_epoch: i32, state_epoch: i32 },
    Read { partition: i32, leader_epoch: i32 },
    Summary { partition: i32, leader_epoch: i32 },
    Delete { partition: i32 },
}

const FENCED_LEADER: &str = "The leader epoch in the request is older than the epoch on the broker.";
const FENCED_STATE: &str =
    "The share coordinator rejected the request because the share-group state epoch did not match.";
const UNKNOWN: &str = "This server does not host this topic-partition.";

#[rstest]
#[case::write_fails_on_uninitialized_partition(Setup::Empty, Image::Full, Op::Write { partition: 0, leader_epoch: 0, state_epoch: 0 }, ErrorCode::InvalidRequest, WRITE_UNINITIALIZED_MESSAGE, None)]
#[case::write_state_invalid_request_data(Setup::Empty, Image::Full, Op::Write { partition: -1, leader_epoch: 0, state_epoch: 0 }, ErrorCode::InvalidRequest, NEGATIVE_PARTITION_ID_MESSAGE, None)]
#[case::write_null_metadata_image(Setup::Init(0), Image::Missing, Op::Write { partition: 0, leader_epoch: 0, state_epoch: 0 }, ErrorCode::UnknownTopicOrPartition, UNKNOWN, Some(-1))]
#[case::write_state_fenced_leader_epoch_error(Setup::Written(1), Image::Full, Op::Write { partition: 0, leader_epoch: 0, state_epoch: 0 }, ErrorCode::FencedLeaderEpoch, FENCED_LEADER, Some(1))]
#[case::write_state_fenced_state_epoch_error(Setup::Init(1), Image::Full, Op::Write { partition: 0, leader_epoch: 5, state_epoch: 0 }, ErrorCode::FencedStateEpoch, FENCED_STATE, Some(-1))]
#[case::read_fails_on_uninitialized_partition(Setup::Empty, Image::Full, Op::Read { partition: 0, leader_epoch: 1 }, ErrorCode::InvalidRequest, READ_UNINITIALIZED_MESSAGE, None)]
#[case::read_state_invalid_request_data(Setup::Written(0), Image::Full, Op::Read { partition: -1, leader_epoch: 5 }, ErrorCode::InvalidRequest, NEGATIVE_PARTITION_ID_MESSAGE, Some(0))]
#[case::read_state_summary_invalid_request_data(Setup::Written(0), Image::Full, Op::Summary { partition: -1, leader_epoch: 5 }, ErrorCode::InvalidRequest, NEGATIVE_PARTITION_ID_MESSAGE, Some(0))]
#[case::read_null_metadata_image(Setup::Written(0), Image::Missing, Op::Read { partition: 0, leader_epoch: 5 }, ErrorCode::UnknownTopicOrPartition, UNKNOWN, Some(0))]
#[case::read_state_fenced_leader_epoch_error(Setup::Written(5), Image::Full, Op::Read { partition: 0, leader_epoch: 3 }, ErrorCode::FencedLeaderEpoch, FENCED_LEADER, Some(5))]
#[case::delete_state_invalid_request_data(Setup::Empty, Image::Full, Op::Delete { partition: -1 }, ErrorCode::InvalidRequest, NEGATIVE_PARTITION_ID_MESSAGE, None)]
#[case::delete_null_metadata_image(Setup::Empty, Image::Missing, Op::Delete { partition: 0 }, ErrorCode::UnknownTopicOrPartition, UNKNOWN, None)]
#[case::delete_topic_id_non_existent_in_metadata_image(Setup::Empty, Image::NoTopic, Op::Delete { partition: 0 }, ErrorCode::UnknownTopicOrPartition, UNKNOWN, None)]
#[case::delete_partition_id_non_existent_in_metadata_image(Setup::Empty, Image::NoPartitions, Op::Delete { partition: 0 }, ErrorCode::UnknownTopicOrPartition, UNKNOWN, None)]
#[case::initialize_state_invalid_request_data_partition(Setup::Empty, Image::Full, Op::Init { partition: -1, state_epoch: 0 }, ErrorCode::InvalidRequest, NEGATIVE_PARTITION_ID_MESSAGE, None)]
#[case::initialize_state_invalid_request_data_state_epoch(Setup::StateEpoch5, Image::Full, Op::Init { partition: 0, state_epoch: 0 }, ErrorCode::FencedStateEpoch, FENCED_STATE, Some(0))]
#[case::initialize_null_metadata_image(Setup::Empty, Image::Missing, Op::Init { partition: 0, state_epoch: 0 }, ErrorCode::UnknownTopicOrPartition, UNKNOWN, None)]
#[case::initialize_topic_id_non_existent_in_metadata_image(Setup::Empty, Image::NoTopic, Op::Init { partition: 0, state_epoch: 0 }, ErrorCode::UnknownTopicOrPartition, UNKNOWN, None)]
#[case::initialize_partition_id_non_existent_in_metadata_image(Setup::Empty, Image::NoPartitions, Op::Init { partition: 0, state_epoch: 0 }, ErrorCode::UnknownTopicOrPartition, UNKNOWN, None)]
fn refusals(
    #[case] setup: Setup,
    #[case] image: Image,
    #[case] op: Op,
    #[case] code: ErrorCode,
    #[case] message: &str,
    #[case] leader_epoch_after: Option<i32>,
) {
    let mut f = Fixture::new();
    match setup {
        Setup::Empty => {}
        Setup::Init(state_epoch) => f.init_partition(state_epoch),
        Setup::Written(leader_epoch) => {
            f.init_partition(0);
            f.write_and_replay(leader_epoch);
        }
        Setup::StateEpoch5 => {
            let value = ShareSnapshotValue {
                state_epoch: 5,
                ..ShareSnapshotValue::from_update(&update_of(&write_data(0, 0, 0, 0, vec![]), 0))
            };
            f.replay(&ShareRecord::Snapshot { key: key(PARTITION), value: Some(value) });
        }
    }
    match image {
        Image::Full => {}
        Image::Missing => f.shard = without_image(&f.shard),
        Image::NoTopic => f.shard.on_new_metadata_image(TopicsImage::new([(TOPIC_2, 1)])),
        Image::NoPartitions => f.shard.on_new_metadata_image(TopicsImage::new([(TOPIC, 0)])),
    }
    let g = group();
    let (records, got): (Vec<ShareRecord>, (i32, ErrorCode, Option<String>)) = match op {
        Op::Init { partition, state_epoch } => {
            let r = f.shard.initialize_state(
                NOW,
                &g,
                Some(TOPIC),
                &InitializeStatePartition { partition, state_epoch, start_offset: 0 },
            );
            (r.records, plain(r.response.result))
        }
        Op::Write { partition, leader_epoch, state_epoch } => {
            let data = WriteStatePartition {
                partition,
                ..write_data(leader_epoch, state_epoch, 0, 11, vec![b(0, 10, 0, 1)])
            };
            let r = f.shard.write_state(NOW, &g, Some(TOPIC), &data);
            (r.records, plain(r.response.result))
        }
        Op::Read { partition, leader_epoch } => {
            let r = f.shard.read_state(NOW, &g, Some(TOPIC), &ReadStatePartition { partition, leader_epoch });
            let expected = ReadStatePartitionResult::error(partition, code, message);
            assert_eq!(r.response.result, expected, "a refused read carries defaults");
            (r.records, (partition, r.response.result.error_code, r.response.result.error_message))
        }
        Op::Summary { partition, leader_epoch } => {
            let r = f.shard.read_state_summary(
                &g,
                Some(TOPIC),
                &ReadStateSummaryPartition { partition, leader_epoch },
            );
            let expected = ReadStateSummaryPartitionResult::error(partition, code, message);
            assert_eq!(r.response.result, expected, "a refused summary carries defaults");
            (r.records, (partition, r.response.result.error_code, r.response.result.error_message))
        }
        Op::Delete { partition } => {
            let r = f.shard.delete_state(&g, Some(TOPIC), partition);
            (r.records, plain(r.response.result))
        }
    };
    assert_eq!((got.1, got.2.as_deref()), (code, Some(message)));
    assert!(records.is_empty(), "a refusal writes nothing");
    assert_eq!(f.leader_epoch(), leader_epoch_after);
    if let Setup::Init(1) = setup {
        let stored = f.shard.share_partition(&key(PARTITION)).map(|s| s.max_state_epoch);
        assert_eq!(stored, Some(Some(1)), "the state epoch map does not change");
    }
}

fn plain(r: ShareStatePartitionResult) -> (i32, ErrorCode, Option<String>) {
    (r.partition, r.error_code, r.error_message)
}

/// The same shard with no metadata image (Kafka's `onNewMetadataImage(null, ...)`),
/// rebuilt by replaying its state as snapshots.
fn without_image(shard: &ShareCoordinatorShard) -> ShareCoordinatorShard {
    let mut bare = ShareCoordinatorShard::new(shard.config().clone());
    for (offset, (key, state)) in shard.share_partitions().enumerate() {
        let record = ShareRecord::Snapshot { key: key.clone(), value: Some(state.offset.clone()) };
        bare.replay(offset as i64, &record);
    }
    bare
}

#[test]
fn replay_with_share_snapshot() {
    let mut f = Fixture::new();
    let first = ShareSnapshotValue {
        snapshot_epoch: 0,
        state_epoch: 0,
        leader_epoch: 1,
        start_offset: 0,
        delivery_complete_count: 11,
        create_timestamp: 0,
        write_timestamp: 0,
        state_batches: vec![b(0, 10, 0, 1)],
    };
    f.replay(&ShareRecord::Snapshot { key: key(PARTITION), value: Some(first.clone()) });
    assert_eq!(f.state(PARTITION), Some(&first));
    assert_eq!(f.leader_epoch(), Some(1));
    let second = ShareSnapshotValue {
        snapshot_epoch: 1,
        state_epoch: 1,
        leader_epoch: 2,
        delivery_complete_count: 13,
        state_batches: vec![b(11, 12, 0, 1)],
        ..first
    };
    f.replay(&ShareRecord::Snapshot { key: key(PARTITION), value: Some(second.clone()) });
    assert_eq!(f.state(PARTITION), Some(&second));
    assert_eq!(f.leader_epoch(), Some(2));
}

#[test]
fn write_state_success() {
    let mut f = Fixture::new();
    f.init_partition(0);
    f.write_and_replay(0);
    let data = write_data(0, 0, 0, 11, vec![b(0, 10, 0, 1)]);
    let result = f.shard.write_state(NOW, &group(), Some(TOPIC), &data);
    assert_eq!(result.response.result, ShareStatePartitionResult::ok(PARTITION));
    let update = update_of(&data, 0);
    assert_eq!(result.records, [ShareRecord::Update { key: key(PARTITION), value: update.clone() }]);
    f.replay_all(&result.records);
    assert_eq!(f.state(PARTITION), Some(&ShareSnapshotValue::from_update(&update)));
    assert_eq!(f.leader_epoch(), Some(0));
}

#[test]
fn subsequent_write_state_snapshot_epoch_updates_successfully() {
    let mut f = Fixture::new();
    f.init_partition(0);
    f.write_and_replay(0);
    let first = write_data(0, 0, 0, 11, vec![b(0, 10, 0, 1)]);
    let result = f.shard.write_state(NOW, &group(), Some(TOPIC), &first);
    assert_eq!(result.records, [ShareRecord::Update { key: key(PARTITION), value: update_of(&first, 0) }]);
    f.replay_all(&result.records);
    assert_eq!(f.state(PARTITION), Some(&ShareSnapshotValue::from_update(&update_of(&first, 0))));

    let second = write_data(0, 0, 0, 21, vec![b(11, 20, 0, 1)]);
    let result = f.shard.write_state(NOW, &group(), Some(TOPIC), &second);
    assert_eq!(result.records, [ShareRecord::Update { key: key(PARTITION), value: update_of(&second, 0) }]);
    f.replay_all(&result.records);
    let combined = f.state(PARTITION).expect("state");
    assert_eq!((combined.snapshot_epoch, combined.leader_epoch, combined.start_offset), (0, 0, 0));
    // The two batches combine into one: same state and count.
    assert_eq!(combined.state_batches, [b(0, 20, 0, 1)]);
    assert_eq!(f.leader_epoch(), Some(0));
}

#[test]
fn read_state_success() {
    let mut f = Fixture::new();
    f.init_partition(0);
    f.write_and_replay(0);
    let result = f.read(1);
    let expected = ReadStatePartitionResult {
        partition: PARTITION,
        state_epoch: 0,
        start_offset: 0,
        state_batches: vec![b(0, 10, 0, 1)],
        ..ReadStatePartitionResult::default()
    };
    assert_eq!(result.response.result, expected);
    assert_eq!(f.leader_epoch(), Some(0), "the record is not replayed yet");
}

#[test]
fn read_state_summary_success() {
    let mut f = Fixture::new();
    f.init_partition(0);
    f.write_and_replay(0);
    let result = f.shard.read_state_summary(
        &group(),
        Some(TOPIC),
        &ReadStateSummaryPartition { partition: PARTITION, leader_epoch: 1 },
    );
    let expected = ReadStateSummaryPartitionResult {
        partition: PARTITION,
        start_offset: 0,
        delivery_complete_count: 0,
        leader_epoch: 0,
        state_epoch: 0,
        ..ReadStateSummaryPartitionResult::default()
    };
    assert_eq!(result.response.result, expected);
    assert!(result.records.is_empty());
    assert_eq!(f.leader_epoch(), Some(0));
}

#[test]
fn non_sequential_batch_updates() {
    // Batch 2 (110-119) must survive batch 1's acknowledgement and a start offset
    // moved past batch 1 with batch 3's acknowledgement, every write a snapshot.
    let mut f = Fixture::with_updates_per_snapshot(0);
    f.init_partition(0);
    f.write_and_replay(0);
    let initial = write_data(0, 0, 100, 0, vec![b(100, 109, 1, 1), b(110, 119, 1, 2), b(120, 129, 1, 0)]);
    let result = f.shard.write_state(NOW, &group(), Some(TOPIC), &initial);
    let snapshot = ShareSnapshotValue {
        snapshot_epoch: 3,
        state_epoch: 0,
        leader_epoch: 0,
        start_offset: 100,
        delivery_complete_count: 0,
        create_timestamp: NOW,
        write_timestamp: NOW,
        state_batches: initial.state_batches.clone(),
    };
    assert_eq!(
        result.records,
        [ShareRecord::Snapshot { key: key(PARTITION), value: Some(snapshot.clone()) }]
    );
    f.replay_all(&result.records);
    assert_eq!(f.state(PARTITION), Some(&snapshot));

    let ack_b1 = write_data(0, 0, -1, 10, vec![b(100, 109, 2, 1)]);
    let result = f.shard.write_state(NOW, &group(), Some(TOPIC), &ack_b1);
    f.replay_all(&result.records);
    let ack_b3 = write_data(0, 0, 110, 10, vec![b(120, 129, 2, 1)]);
    let result = f.shard.write_state(NOW, &group(), Some(TOPIC), &ack_b3);
    let last = ShareSnapshotValue {
        snapshot_epoch: 5,
        start_offset: 110,
        delivery_complete_count: 10,
        state_batches: vec![b(110, 119, 1, 2), b(120, 129, 2, 1)],
        ..snapshot
    };
    assert_eq!(result.records, [ShareRecord::Snapshot { key: key(PARTITION), value: Some(last.clone()) }]);
    f.replay_all(&result.records);
    assert_eq!(f.state(PARTITION), Some(&last));
    assert_eq!(f.leader_epoch(), Some(0));
}

#[test]
fn snapshot_update_count_boundary() {
    let mut f = Fixture::with_updates_per_snapshot(2);
    f.init_partition(0);
    let data = write_data(0, 0, 0, 0, vec![b(0, 10, 0, 1)]);
    let kinds: Vec<i16> = (0..3)
        .map(|_| {
            let result = f.shard.write_state(NOW, &group(), Some(TOPIC), &data);
            f.replay_all(&result.records);
            result.records[0].record_type()
        })
        .collect();
    // Updates while the counter is below the limit (0, 1), then a snapshot at 2.
    assert_eq!(kinds, [1, 1, 0]);
}

#[test]
fn last_redundant_offset() {
    // Kafka's test mocks the offsets manager; here the real one answers the
    // offset of the only snapshot of the only share partition.
    let mut f = Fixture::new();
    f.offset = 10;
    f.init_partition(0);
    assert_eq!(f.shard.last_redundant_offset(), Some(10));
}

#[test]
fn read_state_leader_epoch_update_success() {
    let mut f = Fixture::new();
    f.init_partition(0);
    let result = f.read(2);
    let expected = ReadStatePartitionResult {
        partition: PARTITION,
        start_offset: -1,
        state_epoch: 0,
        ..ReadStatePartitionResult::default()
    };
    assert_eq!(result.response.result, expected);
    let update = ShareUpdateValue {
        snapshot_epoch: 0,
        leader_epoch: 2,
        start_offset: -1,
        delivery_complete_count: -1,
        state_batches: Vec::new(),
    };
    assert_eq!(result.records, [ShareRecord::Update { key: key(PARTITION), value: update.clone() }]);
    f.replay_all(&result.records);
    assert_eq!(f.state(PARTITION), Some(&ShareSnapshotValue::from_update(&update)));
    assert_eq!(f.leader_epoch(), Some(2));
}

#[test]
fn read_state_leader_epoch_update_no_update() {
    let mut f = Fixture::new();
    f.init_partition(0);
    let result = f.read(2);
    assert!(!result.records.is_empty(), "a higher leader epoch writes a record");
    f.replay_all(&result.records);
    assert!(f.read(-1).records.is_empty(), "leader epoch -1: no update");
    assert!(f.read(2).records.is_empty(), "the same leader epoch: no update");
}

#[test]
fn delete_state_success() {
    let mut f = Fixture::new();
    let stored = ShareSnapshotValue {
        state_batches: vec![b(0, 10, 0, 1)],
        ..ShareSnapshotValue::from_update(&update_of(&write_data(0, 0, 0, 0, vec![]), 0))
    };
    f.replay(&ShareRecord::Snapshot { key: key(PARTITION), value: Some(stored) });
    assert!(f.shard.share_partition(&key(PARTITION)).is_some());
    let result = f.shard.delete_state(&group(), Some(TOPIC), PARTITION);
    assert_eq!(result.response.result, ShareStatePartitionResult::ok(PARTITION));
    assert_eq!(result.records, [ShareRecord::Snapshot { key: key(PARTITION), value: None }]);
    f.replay_all(&result.records);
    assert!(f.shard.share_partition(&key(PARTITION)).is_none(), "state and both epoch maps are gone");
}

#[test]
fn delete_state_unintialized_record() {
    let f = Fixture::new();
    let result = f.shard.delete_state(&group(), Some(TOPIC), PARTITION);
    assert_eq!(result.response.result, ShareStatePartitionResult::ok(PARTITION));
    assert!(result.records.is_empty());
}

#[test]
fn initialize_state_success() {
    let mut f = Fixture::new();
    let data = InitializeStatePartition { partition: PARTITION, state_epoch: 5, start_offset: 10 };
    let result = f.shard.initialize_state(NOW, &group(), Some(TOPIC), &data);
    assert!(f.shard.share_partition(&key(PARTITION)).is_none(), "nothing changes before replay");
    assert_eq!(result.response.result, ShareStatePartitionResult::ok(PARTITION));
    let snapshot = ShareSnapshotValue {
        snapshot_epoch: 0,
        state_epoch: 5,
        leader_epoch: 0,
        start_offset: 10,
        delivery_complete_count: 0,
        create_timestamp: NOW,
        write_timestamp: NOW,
        state_batches: Vec::new(),
    };
    assert_eq!(result.records, [ShareRecord::Snapshot { key: key(PARTITION), value: Some(snapshot) }]);
    f.replay_all(&result.records);
    assert_eq!(f.shard.share_partition(&key(PARTITION)).and_then(|s| s.max_state_epoch), Some(5));
}

/// A snapshot of `partition` created and written at `at`, as the cold-snapshot
/// tests replay.
fn cold_snapshot_value(at: i64) -> ShareSnapshotValue {
    ShareSnapshotValue {
        snapshot_epoch: 0,
        state_epoch: 0,
        leader_epoch: 0,
        start_offset: 0,
        delivery_complete_count: 11,
        create_timestamp: at,
        write_timestamp: at,
        state_batches: vec![b(0, 10, 0, 1)],
    }
}

fn two_partitions(f: &mut Fixture, second_at: i64) {
    f.replay(&ShareRecord::Snapshot { key: key(0), value: Some(cold_snapshot_value(NOW)) });
    f.replay(&ShareRecord::Snapshot { key: key(1), value: Some(cold_snapshot_value(second_at)) });
}

#[test]
fn snapshot_cold_partitions_no_eligible_partitions() {
    let mut f = Fixture::new();
    two_partitions(&mut f, NOW);
    assert!(f.shard.snapshot_cold_partitions(NOW + 5_000).is_empty(), "younger than the interval");
}

#[test]
fn snapshot_cold_partitions_snapshot_update_not_considered() {
    let mut f = Fixture::new();
    f.replay(&ShareRecord::Snapshot { key: key(0), value: Some(cold_snapshot_value(NOW)) });
    let sleep = 12_000;
    let expected =
        ShareSnapshotValue { snapshot_epoch: 1, write_timestamp: NOW + sleep, ..cold_snapshot_value(NOW) };
    let records = f.shard.snapshot_cold_partitions(NOW + sleep);
    assert_eq!(records, [ShareRecord::Snapshot { key: key(0), value: Some(expected) }]);
    f.replay_all(&records);
    let update = ShareUpdateValue {
        snapshot_epoch: 0,
        leader_epoch: 0,
        start_offset: 0,
        delivery_complete_count: 11,
        state_batches: vec![b(0, 10, 0, 1)],
    };
    f.replay(&ShareRecord::Update { key: key(0), value: update });
    // An update carries no time: the write timestamp stays the snapshot's.
    assert_eq!(f.state(0).map(|s| s.write_timestamp), Some(NOW + sleep));
}

#[test]
fn snapshot_cold_partitions_does_not_perpetually_snapshot() {
    let mut f = Fixture::new();
    f.replay(&ShareRecord::Snapshot { key: key(0), value: Some(cold_snapshot_value(NOW)) });
    let records = f.shard.snapshot_cold_partitions(NOW + 12_000);
    let expected =
        ShareSnapshotValue { snapshot_epoch: 1, write_timestamp: NOW + 12_000, ..cold_snapshot_value(NOW) };
    assert_eq!(records, [ShareRecord::Snapshot { key: key(0), value: Some(expected) }]);
    f.replay_all(&records);
    assert!(
        f.shard.snapshot_cold_partitions(NOW + 24_000).is_empty(),
        "every partition is already cold-snapshotted"
    );
}

#[test]
fn snapshot_cold_partitions_partial_eligible_partitions() {
    let mut f = Fixture::new();
    let delta = 15_000;
    two_partitions(&mut f, NOW + delta);
    let sleep = 12_000;
    let records = f.shard.snapshot_cold_partitions(NOW + sleep);
    let expected =
        ShareSnapshotValue { snapshot_epoch: 1, write_timestamp: NOW + sleep, ..cold_snapshot_value(NOW) };
    assert_eq!(records, [ShareRecord::Snapshot { key: key(0), value: Some(expected) }]);
    f.replay_all(&records);
    assert_eq!(f.state(1).map(|s| s.write_timestamp), Some(NOW + delta));
    assert_eq!(f.state(0).map(|s| s.write_timestamp), Some(NOW + sleep));
}

#[test]
fn on_topics_deleted_empty_topic_ids() {
    let mut f = Fixture::new();
    f.init_partition(0);
    assert!(f.shard.maybe_cleanup_share_state(&HashSet::new()).is_empty());
    let empty = Fixture::new();
    assert!(empty.shard.maybe_cleanup_share_state(&HashSet::from([TOPIC_2])).is_empty());
}

#[test]
fn on_topics_deleted_topic_ids() {
    let mut f = Fixture::new();
    f.replay(&ShareRecord::Snapshot { key: key(0), value: Some(cold_snapshot_value(NOW)) });
    let other = SharePartitionKey::new(GROUP, TOPIC_2, 0);
    f.replay(&ShareRecord::Snapshot { key: other, value: Some(cold_snapshot_value(NOW)) });
    let records = f.shard.maybe_cleanup_share_state(&HashSet::from([TOPIC]));
    assert_eq!(records, [ShareRecord::Snapshot { key: key(0), value: None }]);
}
