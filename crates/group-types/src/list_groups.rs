//! ListGroups (API key 16): the groups this coordinator owns.

use serde::{Deserialize, Serialize};

use crate::{ErrorCode, GroupId};

/// A ListGroups request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ListGroupsRequest {
    /// v4+: keep only groups in these states (case-insensitive); empty means all.
    pub states_filter: Vec<String>,
    /// v5+: keep only groups of these types (`classic`); empty means all.
    pub types_filter: Vec<String>,
}

/// One listed group.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ListedGroup {
    /// The group id.
    pub group_id: GroupId,
    /// The protocol type, `""` if none.
    pub protocol_type: String,
    /// The state name (v4+).
    pub group_state: String,
    /// The group type (v5+): always `classic` here.
    pub group_type: String,
}

/// A ListGroups response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ListGroupsResponse {
    /// The top-level outcome.
    pub error_code: ErrorCode,
    /// The groups.
    pub groups: Vec<ListedGroup>,
}
