//! The oracle README's findings about rules whose scripts are not in the published
//! folder (06 state-epoch fencing, 09 snapshots every 2 updates, 15 topic deletion),
//! each as a short sequence on the shard.

use std::collections::HashSet;

use group_share_coordinator::{
    ShareCoordinatorConfig, ShareCoordinatorShard, SharePartitionKey, ShareRecord, TopicsImage,
};
use group_types::{ErrorCode, GroupId, InitializeStatePartition, StateBatch, TopicId, WriteStatePartition};

const TOPIC: TopicId = TopicId::from_u128(0xF00);

struct Log {
    shard: ShareCoordinatorShard,
    offset: i64,
}

impl Log {
    fn new(updates_per_snapshot: i64) -> Log {
        let mut config = ShareCoordinatorConfig::default();
        config
            .set("share.coordinator.snapshot.update.records.per.snapshot", updates_per_snapshot)
            .expect("valid");
        let mut shard = ShareCoordinatorShard::new(config);
        shard.on_loaded(TopicsImage::new([(TOPIC, 3)]));
        Log { shard, offset: 0 }
    }

    fn apply(&mut self, records: Vec<ShareRecord>) -> Vec<ShareRecord> {
        for record in &records {
            self.shard.replay(self.offset, record);
            self.offset += 1;
        }
        records
    }

    fn init(&mut self, group: &str, partition: i32, state_epoch: i32) -> (ErrorCode, Vec<ShareRecord>) {
        let data = InitializeStatePartition { partition, state_epoch, start_offset: 0 };
        let r = self.shard.initialize_state(self.offset, &GroupId::from(group), Some(TOPIC), &data);
        (r.response.result.error_code, self.apply(r.records))
    }

    fn write(&mut self, partition: i32, state_epoch: i32) -> (ErrorCode, Vec<ShareRecord>) {
        let data = WriteStatePartition {
            partition,
            state_epoch,
            leader_epoch: 0,
            start_offset: -1,
            delivery_complete_count: -1,
            state_batches: vec![StateBatch::new(0, 1, 2, 1)],
        };
        let r = self.shard.write_state(self.offset, &GroupId::from("g"), Some(TOPIC), &data);
        (r.response.result.error_code, self.apply(r.records))
    }

    fn state(&self, group: &str, partition: i32) -> Option<(i32, Option<i32>, Option<i32>)> {
        let s = self.shard.share_partition(&SharePartitionKey::new(group, TOPIC, partition))?;
        Some((s.offset.snapshot_epoch, s.max_state_epoch, s.updates_since_snapshot))
    }
}

/// Finding 7: a write below the stored state epoch is fenced, -1 and higher pass,
/// and a write never raises the state epoch; a re-init at a higher one does, and
/// does not reset the update counter (finding 2).
#[test]
fn state_epoch_fencing() {
    let mut log = Log::new(500);
    assert_eq!(log.init("g", 0, 2).0, ErrorCode::None);
    assert_eq!(log.write(0, 1).0, ErrorCode::FencedStateEpoch);
    assert_eq!(log.write(0, -1).0, ErrorCode::None);
    assert_eq!(log.write(0, 7).0, ErrorCode::None);
    assert_eq!(log.state("g", 0), Some((0, Some(2), Some(2))));
    assert_eq!(log.init("g", 0, 1).0, ErrorCode::FencedStateEpoch);
    assert_eq!(log.init("g", 0, 3).0, ErrorCode::None);
    assert_eq!(log.state("g", 0), Some((1, Some(3), Some(2))));
}

/// Finding 2 with the limit at 2: Update, Update, Snapshot, and the counter
/// restarts from 0 after the snapshot.
#[test]
fn snapshot_every_two_updates() {
    let mut log = Log::new(2);
    log.init("g", 0, 0);
    let kinds: Vec<i16> = (0..6).map(|_| log.write(0, 0).1[0].record_type()).collect();
    assert_eq!(kinds, [1, 1, 0, 1, 1, 0]);
    assert_eq!(log.state("g", 0), Some((2, Some(0), Some(0))));
    // Snapshots at offsets 0, 3 and 6: everything below the last is redundant.
    assert_eq!(log.shard.last_redundant_offset(), Some(6));
}

/// Finding 9: topic deletion tombstones every share partition of the topic, of
/// every group; afterwards each is uninitialized, and a re-init starts at snapshot
/// epoch 0.
#[test]
fn topic_deletion_cleans_every_group() {
    let mut log = Log::new(500);
    log.init("g", 0, 0);
    log.init("g", 1, 0);
    log.init("h", 0, 0);
    let tombstones = log.shard.maybe_cleanup_share_state(&HashSet::from([TOPIC]));
    assert_eq!(tombstones.len(), 3);
    assert!(tombstones.iter().all(ShareRecord::is_tombstone));
    log.apply(tombstones);
    assert_eq!(log.shard.share_partitions().count(), 0);
    // Every tombstone took part once, then left: the last one's offset remains.
    assert_eq!(log.shard.last_redundant_offset(), Some(5));
    log.init("g", 0, 0);
    assert_eq!(log.state("g", 0), Some((0, Some(0), None)));
}
