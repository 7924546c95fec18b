//! What the coordinator persists about a group (`kafka-semantics.md` §6.8).

use bytes::Bytes;
use group_types::{GroupId, GroupInstanceId, MemberId, ProtocolName, ProtocolType};
use serde::{Deserialize, Serialize};

/// The persisted form of one group: what a restarted coordinator needs to
/// resume it (generation, protocol, leader, members and their assignments).
///
/// Ids and payloads are the types the requests carried them in, so a record
/// shares what it can with them (a leader's assignments are not copied to be
/// stored) and an engine encodes them without converting.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GroupMetadataRecord {
    /// The group.
    pub group_id: GroupId,
    /// The protocol type (`consumer`), `None` for a group that never had members.
    pub protocol_type: Option<ProtocolType>,
    /// The generation.
    pub generation_id: i32,
    /// The selected protocol, `None` when the generation ended Empty.
    pub protocol_name: Option<ProtocolName>,
    /// The leader's member id.
    pub leader_id: Option<MemberId>,
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
    pub member_id: MemberId,
    /// The static instance id.
    pub group_instance_id: Option<GroupInstanceId>,
    /// The client id.
    pub client_id: String,
    /// The client host.
    pub client_host: String,
    /// The rebalance timeout.
    pub rebalance_timeout_ms: i32,
    /// The session timeout.
    pub session_timeout_ms: i32,
    /// Its metadata for the selected protocol only.
    pub subscription: Bytes,
    /// Its assignment bytes.
    pub assignment: Bytes,
}
