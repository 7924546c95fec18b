//! What the coordinator persists about a group (`kafka-semantics.md` §6.8).

use serde::{Deserialize, Serialize};

/// The persisted form of one group: what a restarted coordinator needs to
/// resume it (generation, protocol, leader, members and their assignments).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GroupMetadataRecord {
    /// The group.
    pub group_id: String,
    /// The protocol type (`consumer`), `None` for a group that never had members.
    pub protocol_type: Option<String>,
    /// The generation.
    pub generation_id: i32,
    /// The selected protocol, `None` when the generation ended Empty.
    pub protocol_name: Option<String>,
    /// The leader's member id.
    pub leader_id: Option<String>,
    /// When the group last changed state, in milliseconds since the Unix epoch
    /// (drives KIP-211 retention of an Empty group's offsets).
    pub state_timestamp_ms: Option<i64>,
    /// The members, in the coordinator's order.
    pub members: Vec<MemberMetadataRecord>,
}

/// The persisted form of one member.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MemberMetadataRecord {
    /// The member id.
    pub member_id: String,
    /// The static instance id.
    pub group_instance_id: Option<String>,
    /// The client id.
    pub client_id: String,
    /// The client host.
    pub client_host: String,
    /// The rebalance timeout.
    pub rebalance_timeout_ms: i32,
    /// The session timeout.
    pub session_timeout_ms: i32,
    /// Its metadata for the selected protocol only.
    pub subscription: Vec<u8>,
    /// Its assignment bytes.
    pub assignment: Vec<u8>,
}
