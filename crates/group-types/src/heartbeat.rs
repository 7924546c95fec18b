//! Heartbeat (API key 12): a member proves it is alive and learns of rebalances.

use serde::{Deserialize, Serialize};

use crate::ErrorCode;
use crate::{GroupId, GroupInstanceId, MemberId};

/// A Heartbeat request, with every field of versions 0 to 4.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct HeartbeatRequest {
    /// The group.
    pub group_id: GroupId,
    /// The generation the member holds.
    pub generation_id: i32,
    /// The member's id.
    pub member_id: MemberId,
    /// The static instance id (v3+).
    pub group_instance_id: Option<GroupInstanceId>,
}

/// A Heartbeat response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct HeartbeatResponse {
    /// The outcome; `REBALANCE_IN_PROGRESS` tells the member to rejoin.
    pub error_code: ErrorCode,
}
