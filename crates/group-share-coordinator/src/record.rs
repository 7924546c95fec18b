//! The records of `__share_group_state` (Kafka's generated `ShareSnapshotKey` /
//! `ShareSnapshotValue` and `ShareUpdateKey` / `ShareUpdateValue`, built by
//! `ShareCoordinatorRecordHelpers`) as Rust values. Their bytes are the codec's
//! business, not this crate's.

use group_types::StateBatch;
use serde::{Deserialize, Serialize};

use crate::SharePartitionKey;

/// A full snapshot of a share partition's state (`ShareSnapshotValue`, record type
/// 0). It is also the shape of the state the shard keeps per share partition
/// (Kafka's `ShareGroupOffset`): a ShareUpdate is merged into it on replay.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShareSnapshotValue {
    /// Counts the snapshots of the share partition since its state was created.
    pub snapshot_epoch: i32,
    /// The state epoch, set by InitializeShareGroupState.
    pub state_epoch: i32,
    /// The leader epoch of the share partition's leader.
    pub leader_epoch: i32,
    /// The start offset, -1 when not initialized.
    pub start_offset: i64,
    /// How many offsets at or above the start offset completed delivery (tagged
    /// field 0; -1 = unknown).
    pub delivery_complete_count: i32,
    /// When the state was created (ms; kept by cold snapshots, 0 in state built
    /// from a ShareUpdate alone).
    pub create_timestamp: i64,
    /// When the state was last snapshotted (ms).
    pub write_timestamp: i64,
    /// The state batches, sorted and non-overlapping.
    pub state_batches: Vec<StateBatch>,
}

impl ShareSnapshotValue {
    /// Kafka's `ShareGroupOffset.fromRecord(ShareUpdateValue)`: the state an update
    /// makes when no snapshot precedes it (state epoch and timestamps 0).
    pub fn from_update(update: &ShareUpdateValue) -> ShareSnapshotValue {
        ShareSnapshotValue {
            snapshot_epoch: update.snapshot_epoch,
            state_epoch: 0,
            leader_epoch: update.leader_epoch,
            start_offset: update.start_offset,
            delivery_complete_count: update.delivery_complete_count,
            create_timestamp: 0,
            write_timestamp: 0,
            state_batches: update.state_batches.clone(),
        }
    }

    /// Kafka's `ShareCoordinatorShard.merge`: this state with `update` applied. The
    /// start offset and leader epoch change unless the update says -1; the
    /// delivery complete count is replaced; the batches are combined under the new
    /// start offset; epochs and timestamps stay.
    pub(crate) fn merged(&self, update: &ShareUpdateValue) -> ShareSnapshotValue {
        let start_offset = if update.start_offset == -1 { self.start_offset } else { update.start_offset };
        let leader_epoch = if update.leader_epoch == -1 { self.leader_epoch } else { update.leader_epoch };
        ShareSnapshotValue {
            snapshot_epoch: self.snapshot_epoch,
            state_epoch: self.state_epoch,
            leader_epoch,
            start_offset,
            delivery_complete_count: update.delivery_complete_count,
            create_timestamp: self.create_timestamp,
            write_timestamp: self.write_timestamp,
            state_batches: crate::combine_state_batches(
                &self.state_batches,
                &update.state_batches,
                start_offset,
            ),
        }
    }
}

/// An incremental change of a share partition's state (`ShareUpdateValue`, record
/// type 1): the batches one write changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareUpdateValue {
    /// The snapshot epoch of the snapshot this update follows.
    pub snapshot_epoch: i32,
    /// The leader epoch (-1: unchanged).
    pub leader_epoch: i32,
    /// The start offset, -1 when it is not being updated.
    pub start_offset: i64,
    /// How many offsets at or above the start offset completed delivery (tagged
    /// field 0; -1 = unknown).
    pub delivery_complete_count: i32,
    /// The state batches the write changed.
    pub state_batches: Vec<StateBatch>,
}

/// A record of `__share_group_state`, keyed by its share partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShareRecord {
    /// A ShareSnapshot; `None` is a tombstone (the share partition's state is
    /// deleted).
    Snapshot {
        /// The share partition (`ShareSnapshotKey`).
        key: SharePartitionKey,
        /// The full state, or `None` for a tombstone.
        value: Option<ShareSnapshotValue>,
    },
    /// A ShareUpdate.
    Update {
        /// The share partition (`ShareUpdateKey`).
        key: SharePartitionKey,
        /// The change.
        value: ShareUpdateValue,
    },
}

impl ShareRecord {
    /// The share partition the record is about.
    pub fn key(&self) -> &SharePartitionKey {
        match self {
            ShareRecord::Snapshot { key, .. } | ShareRecord::Update { key, .. } => key,
        }
    }

    /// Kafka's record type id (`CoordinatorRecordType`): 0 ShareSnapshot, 1 ShareUpdate.
    pub fn record_type(&self) -> i16 {
        match self {
            ShareRecord::Snapshot { .. } => 0,
            ShareRecord::Update { .. } => 1,
        }
    }

    /// True for a tombstone.
    pub fn is_tombstone(&self) -> bool {
        matches!(self, ShareRecord::Snapshot { value: None, .. })
    }
}
