//! Committed offsets as storage keeps them.

use serde::{Deserialize, Serialize};

use crate::{CommitMetadata, PartitionMap};

/// One committed position, as Kafka's offset record value holds it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct OffsetAndMetadata {
    /// The next offset to consume.
    pub offset: i64,
    /// Kafka's `i32` leader epoch; `None` when the client sent -1.
    pub leader_epoch: Option<i32>,
    /// The client's metadata, byte for byte (`""` when it sent null).
    pub metadata: CommitMetadata,
    /// When the commit was made, in milliseconds since the Unix epoch.
    pub commit_time: i64,
    /// An explicit expiry from a v2-4 commit with a retention time; `None` otherwise.
    pub expire_time: Option<i64>,
}

impl OffsetAndMetadata {
    /// A commit of `offset` at `commit_time` with no epoch, metadata or expiry.
    pub fn new(offset: i64, commit_time: i64) -> OffsetAndMetadata {
        OffsetAndMetadata { offset, commit_time, ..OffsetAndMetadata::default() }
    }

    /// The same commit with its metadata [`detach`](CommitMetadata::detach)ed:
    /// the copy that state outliving the request keeps, so that it does not pin
    /// the request frame the metadata was cut from.
    pub fn detach(&self) -> OffsetAndMetadata {
        OffsetAndMetadata { metadata: self.metadata.detach(), ..*self }
    }
}

/// Every committed offset of one group.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GroupOffsets {
    /// The group.
    pub group_id: String,
    /// Its offsets by topic and partition.
    pub offsets: PartitionMap<OffsetAndMetadata>,
}

impl GroupOffsets {
    /// No offsets yet.
    pub fn new(group_id: impl Into<String>) -> GroupOffsets {
        GroupOffsets { group_id: group_id.into(), offsets: PartitionMap::new() }
    }

    /// The offset of one partition.
    pub fn get(&self, topic: &str, partition: i32) -> Option<&OffsetAndMetadata> {
        self.offsets.get(topic)?.get(&partition)
    }

    /// Number of partitions with an offset.
    pub fn len(&self) -> usize {
        self.offsets.values().map(|p| p.len()).sum()
    }

    /// True when the group has no offsets.
    pub fn is_empty(&self) -> bool {
        self.offsets.values().all(|p| p.is_empty())
    }
}

/// The record of one partition's commit: what a store that appends commits
/// as log records writes, and replays in order at start-up.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct OffsetCommitLog {
    /// The group.
    pub group_id: String,
    /// The committing member (`""` for a simple consumer).
    pub member_id: String,
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The committed offset.
    pub offset: i64,
    /// The committed leader epoch.
    pub leader_epoch: Option<i32>,
    /// The committed metadata.
    pub metadata: CommitMetadata,
    /// The commit time, in milliseconds since the Unix epoch.
    pub timestamp: i64,
    /// The explicit expiry, if the commit carried one.
    pub expire_timestamp: Option<i64>,
}

impl OffsetCommitLog {
    /// The record of committing `offset` to one partition.
    pub fn new(
        group_id: impl Into<String>,
        member_id: impl Into<String>,
        topic: impl Into<String>,
        partition: i32,
        offset: &OffsetAndMetadata,
    ) -> OffsetCommitLog {
        OffsetCommitLog {
            group_id: group_id.into(),
            member_id: member_id.into(),
            topic: topic.into(),
            partition,
            offset: offset.offset,
            leader_epoch: offset.leader_epoch,
            metadata: offset.metadata.clone(),
            timestamp: offset.commit_time,
            expire_timestamp: offset.expire_time,
        }
    }

    /// The stored value this record restores.
    pub fn offset_and_metadata(&self) -> OffsetAndMetadata {
        OffsetAndMetadata {
            offset: self.offset,
            leader_epoch: self.leader_epoch,
            metadata: self.metadata.clone(),
            commit_time: self.timestamp,
            expire_time: self.expire_timestamp,
        }
    }
}
