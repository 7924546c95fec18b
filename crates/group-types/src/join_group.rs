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

#[cfg(feature = "kafka-protocol")]
mod wire {
    //! JoinGroup (key 11) on the wire: a classic member joins and waits for the rebalance.

    use kafka_protocol::messages as kp;
    use kafka_protocol::protocol::StrBytes;

    use crate as gt;
    use crate::wire::layout::Ty::{Arr, Bytes, I32, Str};
    use crate::wire::layout::{ALL, Layout, Struct, always, f, plain};
    use crate::wire::{Header, WireRequest, id, opt, opt_id, sb, wire_id};

    impl WireRequest for gt::JoinGroupRequest {
        type Wire = kp::JoinGroupRequest;
        type Response = gt::JoinGroupResponse;
        type WireResponse = kp::JoinGroupResponse;
        const LAYOUT: Layout = Layout::new(0, 9, 6, &BODY);

        /// JoinGroup, from the wire; `client_id` and `client_host` come from the connection.
        #[inline]
        fn from_wire(req: &kp::JoinGroupRequest, header: &Header<'_>) -> Self {
            let version = header.version;
            gt::JoinGroupRequest {
                group_id: id(&req.group_id.0),
                member_id: id(&req.member_id),
                group_instance_id: opt_id(&req.group_instance_id),
                client_id: header.client_id.to_owned(),
                client_host: header.client_host.to_owned(),
                protocol_type: id(&req.protocol_type),
                protocols: req
                    .protocols
                    .iter()
                    .map(|p| gt::ProtocolMetadata::new(id::<gt::ProtocolName>(&p.name), p.metadata.clone()))
                    .collect(),
                session_timeout_ms: req.session_timeout_ms,
                // v0 has none; the coordinator applies `effective_rebalance_timeout_ms`.
                rebalance_timeout_ms: req.rebalance_timeout_ms,
                reason: opt(&req.reason),
                api_version: version,
            }
        }

        #[inline]
        fn to_wire(resp: gt::JoinGroupResponse, version: i16) -> kp::JoinGroupResponse {
            // Before v7 the protocol name is not nullable: Kafka writes "" on errors.
            let protocol_name = match resp.protocol_name {
                None if version < 7 => Some(StrBytes::default()),
                other => other.map(wire_id),
            };
            kp::JoinGroupResponse::default()
                .with_error_code(resp.error_code.code())
                .with_generation_id(resp.generation_id)
                .with_protocol_type(if version >= 7 { resp.protocol_type.map(wire_id) } else { None })
                .with_protocol_name(protocol_name)
                .with_leader(wire_id(resp.leader_id))
                .with_skip_assignment(version >= 9 && resp.skip_assignment)
                .with_member_id(wire_id(resp.member_id))
                .with_members(
                    resp.members
                        .into_iter()
                        .map(|m| {
                            kp::join_group_response::JoinGroupResponseMember::default()
                                .with_member_id(wire_id(m.member_id))
                                .with_group_instance_id(if version >= 5 {
                                    m.group_instance_id.map(wire_id)
                                } else {
                                    None
                                })
                                .with_metadata(m.metadata)
                        })
                        .collect(),
                )
        }

        fn sample(v: i16) -> kp::JoinGroupRequest {
            let p = |n: &str| {
                kp::join_group_request::JoinGroupRequestProtocol::default()
                    .with_name(sb(n))
                    .with_metadata(bytes::Bytes::from_static(&[0, 1, 2, 3]))
            };
            let r = kp::JoinGroupRequest::default()
                .with_group_id(sb("g").into())
                .with_member_id(sb("m"))
                .with_protocol_type(sb("consumer"))
                .with_protocols(vec![p("range"), p("roundrobin")]);
            let r = if v >= 5 { r.with_group_instance_id(Some(sb("i"))) } else { r };
            if v >= 8 { r.with_reason(Some(sb("why"))) } else { r }
        }
    }

    // The request field by field as `kafka-protocol` decodes it, for the walk (`crate::wire::layout`).
    static PROTOCOL: Struct = plain(&[always(Str), always(Bytes)]);
    static BODY: Struct = plain(&[
        always(Str),
        always(I32),
        f(I32, 1, ALL),
        always(Str),
        f(Str, 5, ALL),
        always(Str),
        always(Arr(&PROTOCOL)),
        f(Str, 8, ALL),
    ]);
}
