//! TxnOffsetCommit (API key 28): a transactional producer's offsets, pending
//! until its transaction coordinator's marker commits or aborts them (KIP-98,
//! KIP-447, KIP-890; the markers are `write_txn_markers.rs`).

use serde::{Deserialize, Serialize};

use crate::offset_commit::{entry_of, error_for, iter_errors, set_all_errors, uniform_errors};
use crate::{ErrorCode, GroupId, GroupInstanceId, MemberId, OffsetCommitData, TopicEntries};

/// A TxnOffsetCommit request, with every field of versions 0 to 5.
///
/// Fields a version lacks take Kafka's defaults: before v2 no leader epoch,
/// before v3 no member id (`""`), generation (-1) or instance id (`None`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TxnOffsetCommitRequest {
    /// The producer's transactional id (checked by the broker's ACLs, not by the
    /// coordinator).
    pub transactional_id: String,
    /// The group.
    pub group_id: GroupId,
    /// The producer whose transaction the offsets join.
    pub producer_id: i64,
    /// The producer's epoch (the coordinator ignores it, as Kafka's shard does).
    pub producer_epoch: i16,
    /// v3+: the member's generation (classic group) or member epoch (consumer
    /// group); -1 (the default) when the producer is not a member.
    pub generation_id: i32,
    /// v3+: the member's id; `""` (the default) when the producer is not a member.
    pub member_id: MemberId,
    /// v3+: the member's static instance id.
    pub group_instance_id: Option<GroupInstanceId>,
    /// The offsets, per topic and partition, in request order (`commit_timestamp`
    /// is not part of this API and is ignored).
    pub offsets: Vec<TopicEntries<OffsetCommitData>>,
    /// The request's API version.
    pub api_version: i16,
}

impl Default for TxnOffsetCommitRequest {
    fn default() -> TxnOffsetCommitRequest {
        TxnOffsetCommitRequest {
            transactional_id: String::new(),
            group_id: GroupId::empty(),
            producer_id: -1,
            producer_epoch: -1,
            generation_id: -1,
            member_id: MemberId::empty(),
            group_instance_id: None,
            offsets: Vec::new(),
            api_version: TxnOffsetCommitRequest::LATEST_VERSION,
        }
    }
}

impl TxnOffsetCommitRequest {
    /// The newest TxnOffsetCommit version served, the one [`Default`] uses.
    pub const LATEST_VERSION: i16 = 5;

    /// Adds one partition's commit to its topic's entry (builder style).
    pub fn with_offset(
        mut self,
        topic: impl AsRef<str>,
        partition: i32,
        data: OffsetCommitData,
    ) -> TxnOffsetCommitRequest {
        entry_of(&mut self.offsets, topic.as_ref()).partitions.push((partition, data));
        self
    }

    /// The number of partitions in the request.
    pub fn partition_count(&self) -> usize {
        self.offsets.iter().map(|t| t.partitions.len()).sum()
    }
}

/// A TxnOffsetCommit response: only per-partition errors, as on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TxnOffsetCommitResponse {
    /// The outcome of every requested partition, in request order.
    pub errors: Vec<TopicEntries<ErrorCode>>,
}

impl TxnOffsetCommitResponse {
    /// Every partition of `request` with the same error
    /// (`TxnOffsetCommitRequest.getErrorResponse`).
    pub fn uniform(request: &TxnOffsetCommitRequest, error_code: ErrorCode) -> TxnOffsetCommitResponse {
        TxnOffsetCommitResponse { errors: uniform_errors(&request.offsets, error_code) }
    }

    /// The outcome of one partition, if it was in the request (the last one, if
    /// it was named twice).
    pub fn error_for(&self, topic: &str, partition: i32) -> Option<ErrorCode> {
        error_for(&self.errors, topic, partition)
    }

    /// Every outcome with its topic and partition, in response order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, i32, ErrorCode)> {
        iter_errors(&self.errors)
    }

    /// Sets every outcome to `error_code`: how a failed write answers every partition.
    pub fn set_all(&mut self, error_code: ErrorCode) {
        set_all_errors(&mut self.errors, error_code);
    }
}
