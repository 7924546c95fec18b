//! DeleteGroups (API key 42) and OffsetDelete (API key 47): removing groups and offsets.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{ErrorCode, GroupId, PartitionMap};

/// A DeleteGroups request; duplicate ids collapse into one result.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DeleteGroupsRequest {
    /// The groups to delete.
    pub group_ids: Vec<GroupId>,
}

/// The outcome for one group of a DeleteGroups request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DeletedGroup {
    /// The group id.
    pub group_id: GroupId,
    /// The outcome.
    pub error_code: ErrorCode,
}

/// A DeleteGroups response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DeleteGroupsResponse {
    /// One entry per distinct requested group.
    pub results: Vec<DeletedGroup>,
}

/// An OffsetDelete request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct OffsetDeleteRequest {
    /// The group; must not be empty.
    pub group_id: String,
    /// The partitions whose offsets to delete, per topic.
    pub topics: BTreeMap<String, Vec<i32>>,
}

/// An OffsetDelete response: a top-level error, or per-partition errors.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct OffsetDeleteResponse {
    /// The top-level outcome.
    pub error_code: ErrorCode,
    /// Per partition, when the top-level outcome is `NONE`.
    pub partitions: PartitionMap<ErrorCode>,
}
