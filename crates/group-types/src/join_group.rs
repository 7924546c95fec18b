//! JoinGroup (API key 11): a member enters the join barrier of a rebalance.

use bytes::Bytes;
use serde::{Deserialize, Serialize};

use crate::ErrorCode;
use crate::{GroupId, GroupInstanceId, MemberId, ProtocolName, ProtocolType};

/// One protocol a member supports, with its opaque metadata
/// (for consumers, an encoded [`Subscription`](crate::Subscription)).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ProtocolMetadata {
    /// The protocol name (for consumers, the assignor: `range`, `cooperative-sticky`).
    pub name: ProtocolName,
    /// The bytes the client sent, shared with the request frame; the coordinator
    /// never looks inside them.
    pub metadata: Bytes,
}

impl ProtocolMetadata {
    /// A protocol with its metadata bytes.
    pub fn new(name: impl Into<ProtocolName>, metadata: impl Into<Bytes>) -> ProtocolMetadata {
        ProtocolMetadata { name: name.into(), metadata: metadata.into() }
    }

    /// A copy whose name and metadata have allocations of their own: what state
    /// that outlives the request keeps, so that it does not pin the request frame
    /// they were decoded from (as [`GroupId::detach`]).
    pub fn detach(&self) -> ProtocolMetadata {
        ProtocolMetadata { name: self.name.detach(), metadata: Bytes::copy_from_slice(&self.metadata) }
    }
}

/// A JoinGroup request, with every field of versions 0 to 9.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JoinGroupRequest {
    /// The group to join.
    pub group_id: GroupId,
    /// The member's id; `""` for a member that has none yet.
    pub member_id: MemberId,
    /// The static instance id (`group.instance.id`, v5+), `None` for dynamic members.
    pub group_instance_id: Option<GroupInstanceId>,
    /// The client id from the request header.
    pub client_id: String,
    /// The client's address as the broker saw it (Kafka reports `/127.0.0.1`).
    pub client_host: String,
    /// The protocol type; `consumer` for Kafka consumers.
    pub protocol_type: ProtocolType,
    /// The protocols the member supports, in its order of preference.
    pub protocols: Vec<ProtocolMetadata>,
    /// How long the member may go without heartbeating.
    pub session_timeout_ms: i32,
    /// How long the group waits for this member to rejoin (v1+; v0 uses the session timeout).
    pub rebalance_timeout_ms: i32,
    /// Why the member is joining (v8+, for logs).
    pub reason: Option<String>,
    /// The request's API version: v4+ dynamic members get `MEMBER_ID_REQUIRED`
    /// first, and v9+ understands `skip_assignment`.
    pub api_version: i16,
}

impl JoinGroupRequest {
    /// The newest JoinGroup version, the one [`Default`] uses.
    pub const LATEST_VERSION: i16 = 9;

    /// The rebalance timeout the coordinator applies: JoinGroup v0 carries none
    /// (nor does a request that leaves it negative), and Kafka then uses the
    /// session timeout. The one place this rule lives.
    ///
    /// ```
    /// use group_types::JoinGroupRequest;
    ///
    /// let v0 = JoinGroupRequest { api_version: 0, session_timeout_ms: 10_000, ..JoinGroupRequest::default() };
    /// assert_eq!(v0.effective_rebalance_timeout_ms(), 10_000);
    /// assert_eq!(JoinGroupRequest::default().effective_rebalance_timeout_ms(), 300_000);
    /// ```
    pub fn effective_rebalance_timeout_ms(&self) -> i32 {
        if self.api_version == 0 || self.rebalance_timeout_ms < 0 {
            self.session_timeout_ms
        } else {
            self.rebalance_timeout_ms
        }
    }
}

impl Default for JoinGroupRequest {
    /// A new dynamic consumer at the newest version, with the Java consumer's timeouts.
    fn default() -> JoinGroupRequest {
        JoinGroupRequest {
            group_id: GroupId::empty(),
            member_id: MemberId::empty(),
            group_instance_id: None,
            client_id: String::new(),
            client_host: String::new(),
            protocol_type: ProtocolType::from_static("consumer"),
            protocols: Vec::new(),
            session_timeout_ms: 45_000,
            rebalance_timeout_ms: 300_000,
            reason: None,
            api_version: JoinGroupRequest::LATEST_VERSION,
        }
    }
}

/// One member of the group as the leader sees it in its JoinGroup response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct JoinGroupMember {
    /// The member id.
    pub member_id: MemberId,
    /// Its static instance id, if any.
    pub group_instance_id: Option<GroupInstanceId>,
    /// Its metadata for the selected protocol.
    pub metadata: Bytes,
}

/// A JoinGroup response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JoinGroupResponse {
    /// The outcome.
    pub error_code: ErrorCode,
    /// The generation the member joined; -1 on error.
    pub generation_id: i32,
    /// The group's protocol type; `None` on error.
    pub protocol_type: Option<ProtocolType>,
    /// The selected protocol; `None` on error.
    pub protocol_name: Option<ProtocolName>,
    /// The leader's member id; `""` on error.
    pub leader_id: MemberId,
    /// v9+: the leader must not run the assignor (a static leader replaced in a Stable group).
    pub skip_assignment: bool,
    /// The member's id: new, echoed, or `""`, depending on the outcome.
    pub member_id: MemberId,
    /// Every member with its metadata, for the leader only; empty for followers.
    pub members: Vec<JoinGroupMember>,
}

impl JoinGroupResponse {
    /// An error answer with Kafka's error-path field values.
    pub fn error(error_code: ErrorCode, member_id: impl Into<MemberId>) -> JoinGroupResponse {
        JoinGroupResponse { error_code, member_id: member_id.into(), ..JoinGroupResponse::default() }
    }

    /// True when this member is the generation's leader.
    pub fn is_leader(&self) -> bool {
        !self.member_id.is_empty() && self.member_id == self.leader_id
    }
}

impl Default for JoinGroupResponse {
    fn default() -> JoinGroupResponse {
        JoinGroupResponse {
            error_code: ErrorCode::None,
            generation_id: -1,
            protocol_type: None,
            protocol_name: None,
            leader_id: MemberId::empty(),
            skip_assignment: false,
            member_id: MemberId::empty(),
            members: Vec::new(),
        }
    }
}
