//! The share-group offset admin APIs of KIP-932: DescribeShareGroupOffsets
//! (API key 90, versions 0-1; v1 adds lag, KIP-1226), AlterShareGroupOffsets
//! (91) and DeleteShareGroupOffsets (92). A share group's "offset" per
//! partition is its share-partition start offset, kept by the share
//! coordinator.

use serde::{Deserialize, Serialize};

use crate::{ErrorCode, GroupId, TopicId};

/// The topics and partitions asked of one group.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ShareOffsetsTopicRequest {
    /// The topic.
    pub topic_name: String,
    /// Its partitions.
    pub partitions: Vec<i32>,
}

/// One group of a DescribeShareGroupOffsets request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DescribeShareGroupOffsetsGroupRequest {
    /// The group.
    pub group_id: GroupId,
    /// The topics; `None` asks for every topic the group has state for.
    pub topics: Option<Vec<ShareOffsetsTopicRequest>>,
}

/// A DescribeShareGroupOffsets request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DescribeShareGroupOffsetsRequest {
    /// The request's version (v1 answers lag).
    pub api_version: i16,
    /// The groups.
    pub groups: Vec<DescribeShareGroupOffsetsGroupRequest>,
}

/// One partition's share-partition start offset.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DescribedShareOffset {
    /// The partition.
    pub partition_index: i32,
    /// The share-partition start offset; -1 when it has none.
    pub start_offset: i64,
    /// The leader epoch of the state.
    pub leader_epoch: i32,
    /// v1: the records not yet delivered and acknowledged (KIP-1226); -1 when unknown.
    pub lag: i64,
    /// The outcome for this partition.
    pub error_code: ErrorCode,
    /// Detail for an error.
    pub error_message: Option<String>,
}

/// One topic of a DescribeShareGroupOffsets answer.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DescribedShareOffsetsTopic {
    /// The topic.
    pub topic_name: String,
    /// Its id.
    pub topic_id: TopicId,
    /// Its partitions.
    pub partitions: Vec<DescribedShareOffset>,
}

/// One group of a DescribeShareGroupOffsets answer.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DescribedShareOffsetsGroup {
    /// The group.
    pub group_id: GroupId,
    /// Its topics.
    pub topics: Vec<DescribedShareOffsetsTopic>,
    /// The outcome for the whole group.
    pub error_code: ErrorCode,
    /// Detail for an error.
    pub error_message: Option<String>,
}

/// A DescribeShareGroupOffsets response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DescribeShareGroupOffsetsResponse {
    /// One entry per requested group.
    pub groups: Vec<DescribedShareOffsetsGroup>,
}

/// One partition's new start offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ShareStartOffset {
    /// The partition.
    pub partition_index: i32,
    /// The new share-partition start offset.
    pub start_offset: i64,
}

/// One topic of an AlterShareGroupOffsets request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct AlterShareOffsetsTopic {
    /// The topic.
    pub topic_name: String,
    /// Its partitions and their new start offsets.
    pub partitions: Vec<ShareStartOffset>,
}

/// An AlterShareGroupOffsets request (the group must be empty).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct AlterShareGroupOffsetsRequest {
    /// The group.
    pub group_id: GroupId,
    /// The topics.
    pub topics: Vec<AlterShareOffsetsTopic>,
}

/// One partition's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SharePartitionOutcome {
    /// The partition.
    pub partition_index: i32,
    /// The outcome.
    pub error_code: ErrorCode,
    /// Detail for an error.
    pub error_message: Option<String>,
}

/// One topic of an AlterShareGroupOffsets answer.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct AlteredShareOffsetsTopic {
    /// The topic.
    pub topic_name: String,
    /// Its id (the zero id for a topic that does not exist).
    pub topic_id: TopicId,
    /// Its partitions.
    pub partitions: Vec<SharePartitionOutcome>,
}

/// An AlterShareGroupOffsets response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct AlterShareGroupOffsetsResponse {
    /// The outcome for the whole group.
    pub error_code: ErrorCode,
    /// Detail for an error.
    pub error_message: Option<String>,
    /// Per topic, when the group-level outcome is NONE.
    pub responses: Vec<AlteredShareOffsetsTopic>,
}

/// A DeleteShareGroupOffsets request (the group must be empty).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DeleteShareGroupOffsetsRequest {
    /// The group.
    pub group_id: GroupId,
    /// The topics whose share state is deleted.
    pub topic_names: Vec<String>,
}

/// One topic of a DeleteShareGroupOffsets answer.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DeletedShareOffsetsTopic {
    /// The topic.
    pub topic_name: String,
    /// Its id (the zero id for a topic that does not exist).
    pub topic_id: TopicId,
    /// The outcome.
    pub error_code: ErrorCode,
    /// Detail for an error.
    pub error_message: Option<String>,
}

/// A DeleteShareGroupOffsets response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DeleteShareGroupOffsetsResponse {
    /// The outcome for the whole group.
    pub error_code: ErrorCode,
    /// Detail for an error.
    pub error_message: Option<String>,
    /// Per topic, when the group-level outcome is NONE.
    pub responses: Vec<DeletedShareOffsetsTopic>,
}
