//! OffsetCommit (API key 8): a member or a simple consumer stores its positions.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::ErrorCode;

/// Per topic, per partition: the shape of every offset request and response.
pub type PartitionMap<T> = BTreeMap<String, BTreeMap<i32, T>>;

/// One partition's commit.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct OffsetCommitData {
    /// The next offset to consume.
    pub offset: i64,
    /// The leader epoch of the record at `offset - 1` (v6+); `None` when unknown (-1 on the wire).
    pub leader_epoch: Option<i32>,
    /// Free-form client metadata, stored exactly as received; `None` is stored as `""`.
    pub metadata: Option<String>,
    /// v1 only: an explicit commit timestamp; `None` means "now".
    pub commit_timestamp: Option<i64>,
}

impl OffsetCommitData {
    /// A commit of `offset` with no epoch and no metadata.
    pub fn new(offset: i64) -> OffsetCommitData {
        OffsetCommitData { offset, ..OffsetCommitData::default() }
    }
}

/// An OffsetCommit request, with every field of versions 0 to 9.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OffsetCommitRequest {
    /// The group.
    pub group_id: String,
    /// The member's generation; -1 for a simple consumer (the default).
    pub generation_id: i32,
    /// The member's id; `""` for a simple consumer.
    pub member_id: String,
    /// The static instance id (v7+).
    pub group_instance_id: Option<String>,
    /// v2-4: how long to keep these offsets; -1 (the default) means the broker's retention.
    pub retention_time_ms: i64,
    /// The commits, per topic and partition.
    pub offsets: PartitionMap<OffsetCommitData>,
    /// The request's API version: a commit with a generation to a missing group
    /// is `GROUP_ID_NOT_FOUND` from v9 and `ILLEGAL_GENERATION` before.
    pub api_version: i16,
}

impl Default for OffsetCommitRequest {
    fn default() -> OffsetCommitRequest {
        OffsetCommitRequest {
            group_id: String::new(),
            generation_id: -1,
            member_id: String::new(),
            group_instance_id: None,
            retention_time_ms: -1,
            offsets: PartitionMap::new(),
            api_version: OffsetCommitRequest::LATEST_VERSION,
        }
    }
}

impl OffsetCommitRequest {
    /// The newest OffsetCommit version, the one [`Default`] uses.
    pub const LATEST_VERSION: i16 = 9;

    /// Adds one partition's commit (builder style).
    pub fn with_offset(
        mut self,
        topic: impl Into<String>,
        partition: i32,
        data: OffsetCommitData,
    ) -> OffsetCommitRequest {
        self.offsets.entry(topic.into()).or_default().insert(partition, data);
        self
    }

    /// The number of partitions in the request.
    pub fn partition_count(&self) -> usize {
        self.offsets.values().map(BTreeMap::len).sum()
    }
}

/// An OffsetCommit response: only per-partition errors, as on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct OffsetCommitResponse {
    /// The outcome of every requested partition.
    pub errors: PartitionMap<ErrorCode>,
}

impl OffsetCommitResponse {
    /// Every partition of `request` with the same error: how group-level errors reach the wire.
    pub fn uniform(request: &OffsetCommitRequest, error_code: ErrorCode) -> OffsetCommitResponse {
        let errors = request
            .offsets
            .iter()
            .map(|(topic, partitions)| (topic.clone(), partitions.keys().map(|&p| (p, error_code)).collect()))
            .collect();
        OffsetCommitResponse { errors }
    }

    /// The error of one partition, if it was in the request.
    pub fn error_for(&self, topic: &str, partition: i32) -> Option<ErrorCode> {
        self.errors.get(topic)?.get(&partition).copied()
    }
}
