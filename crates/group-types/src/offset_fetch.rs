//! OffsetFetch (API key 9): read a group's committed positions.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{CommitMetadata, GroupId, MemberId};
use crate::{ErrorCode, PartitionMap};

/// An OffsetFetch request for one group (v8+ batch several; a front end splits them).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct OffsetFetchRequest {
    /// The group.
    pub group_id: GroupId,
    /// The partitions to read per topic; `None` means every committed partition (v2+).
    pub topics: Option<BTreeMap<String, Vec<i32>>>,
    /// v7+: answer `UNSTABLE_OFFSET_COMMIT` for partitions with an unacknowledged commit.
    pub require_stable: bool,
    /// v9+: the member id (ignored for classic groups).
    pub member_id: Option<MemberId>,
    /// v9+: the member epoch (ignored for classic groups).
    pub member_epoch: Option<i32>,
}

impl OffsetFetchRequest {
    /// Every committed partition of `group_id`.
    pub fn all(group_id: impl Into<GroupId>) -> OffsetFetchRequest {
        OffsetFetchRequest { group_id: group_id.into(), ..OffsetFetchRequest::default() }
    }

    /// Adds one partition to read (builder style); turns an "all" request into an explicit one.
    pub fn with_partition(mut self, topic: impl Into<String>, partition: i32) -> OffsetFetchRequest {
        self.topics.get_or_insert_with(BTreeMap::new).entry(topic.into()).or_default().push(partition);
        self
    }
}

/// One partition's committed position.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OffsetFetchData {
    /// The committed offset; -1 when nothing is committed.
    pub offset: i64,
    /// The committed leader epoch; `None` (-1 on the wire) when unknown.
    pub leader_epoch: Option<i32>,
    /// The committed metadata; `""` when nothing is committed.
    pub metadata: CommitMetadata,
    /// The outcome for this partition.
    pub error_code: ErrorCode,
}

impl OffsetFetchData {
    /// What a partition with no committed offset reads as: offset -1, no epoch, `""`, `NONE`.
    pub fn missing() -> OffsetFetchData {
        OffsetFetchData::error(ErrorCode::None)
    }

    /// A partition that could not be read: offset -1 with `error_code`.
    pub fn error(error_code: ErrorCode) -> OffsetFetchData {
        OffsetFetchData { offset: -1, leader_epoch: None, metadata: CommitMetadata::empty(), error_code }
    }
}

impl Default for OffsetFetchData {
    fn default() -> OffsetFetchData {
        OffsetFetchData::missing()
    }
}

/// An OffsetFetch response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct OffsetFetchResponse {
    /// The group-level outcome (v2+).
    pub error_code: ErrorCode,
    /// The requested (or every committed) partition.
    pub offsets: PartitionMap<OffsetFetchData>,
}

impl OffsetFetchResponse {
    /// The entry of one partition, if present.
    pub fn get(&self, topic: &str, partition: i32) -> Option<&OffsetFetchData> {
        self.offsets.get(topic)?.get(&partition)
    }
}
