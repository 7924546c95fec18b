//! DescribeGroups (API key 15): a group's state, protocol and members, for admin tools.

use serde::{Deserialize, Serialize};

use crate::{AUTHORIZED_OPERATIONS_OMITTED, ErrorCode, GroupId, GroupInstanceId, MemberId};

/// A DescribeGroups request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DescribeGroupsRequest {
    /// The groups to describe; `""` is allowed.
    pub group_ids: Vec<GroupId>,
    /// The request's version: from v6 a consumer group is `GROUP_ID_NOT_FOUND`
    /// (0, the default, answers as the oldest versions do).
    #[serde(default)]
    pub api_version: i16,
    /// v3+: answer each group's authorized operations (KIP-430).
    #[serde(default)]
    pub include_authorized_operations: bool,
}

/// One member as DescribeGroups shows it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DescribedMember {
    /// The member id.
    pub member_id: MemberId,
    /// Its static instance id (v4+).
    pub group_instance_id: Option<GroupInstanceId>,
    /// Its client id.
    pub client_id: String,
    /// Its client host.
    pub client_host: String,
    /// Its metadata for the selected protocol, exactly as it was received.
    pub member_metadata: Vec<u8>,
    /// Its assignment, exactly as the leader sent it.
    pub member_assignment: Vec<u8>,
}

/// One group's description. [`Default`] is an empty answer whose authorized
/// operations are [`AUTHORIZED_OPERATIONS_OMITTED`], as Kafka's schema default.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DescribedGroup {
    /// The outcome for this group.
    pub error_code: ErrorCode,
    /// v6+: detail for an error (a consumer group described as a classic one).
    #[serde(default)]
    pub error_message: Option<String>,
    /// The group id.
    pub group_id: GroupId,
    /// The state name (`Dead` for a missing group, `""` on error).
    pub group_state: String,
    /// The protocol type, `""` if none.
    pub protocol_type: String,
    /// The selected protocol name, `""` outside Stable.
    pub protocol_data: String,
    /// The members.
    pub members: Vec<DescribedMember>,
    /// v3+: the operations the caller may perform on the group (a bit per Kafka
    /// `AclOperation` code), or [`AUTHORIZED_OPERATIONS_OMITTED`] when not asked.
    #[serde(default = "omitted")]
    pub authorized_operations: i32,
}

fn omitted() -> i32 {
    AUTHORIZED_OPERATIONS_OMITTED
}

impl Default for DescribedGroup {
    fn default() -> DescribedGroup {
        DescribedGroup {
            error_code: ErrorCode::None,
            error_message: None,
            group_id: GroupId::default(),
            group_state: String::new(),
            protocol_type: String::new(),
            protocol_data: String::new(),
            members: Vec::new(),
            authorized_operations: AUTHORIZED_OPERATIONS_OMITTED,
        }
    }
}

/// A DescribeGroups response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DescribeGroupsResponse {
    /// One entry per requested group, in request order.
    pub groups: Vec<DescribedGroup>,
}

#[cfg(feature = "kafka-protocol")]
mod wire {
    //! DescribeGroups (key 15) on the wire: classic groups' members and protocol.

    use bytes::Bytes;
    use kafka_protocol::messages as kp;

    use crate as gt;
    use crate::wire::layout::Ty::{ArrStr, Bool};
    use crate::wire::layout::{ALL, Layout, Struct, always, f, plain};
    use crate::wire::{Header, WireRequest, id, osb, sb, wire_id};

    impl WireRequest for gt::DescribeGroupsRequest {
        type Wire = kp::DescribeGroupsRequest;
        type Response = gt::DescribeGroupsResponse;
        type WireResponse = kp::DescribeGroupsResponse;
        const LAYOUT: Layout = Layout::new(0, 6, 5, &BODY);

        /// DescribeGroups, from the wire: from v6 a consumer group is GROUP_ID_NOT_FOUND, with a
        /// message (the core decides from the version).
        #[inline]
        fn from_wire(req: &kp::DescribeGroupsRequest, header: &Header<'_>) -> Self {
            let version = header.version;
            gt::DescribeGroupsRequest {
                group_ids: req.groups.iter().map(|g| id(&g.0)).collect(),
                api_version: version,
                include_authorized_operations: version >= 3 && req.include_authorized_operations,
            }
        }

        #[inline]
        fn to_wire(resp: gt::DescribeGroupsResponse, version: i16) -> kp::DescribeGroupsResponse {
            use kp::describe_groups_response as r;
            kp::DescribeGroupsResponse::default().with_groups(
                resp.groups
                    .into_iter()
                    .map(|g| {
                        r::DescribedGroup::default()
                            .with_error_code(g.error_code.code())
                            .with_error_message(if version >= 6 { osb(g.error_message) } else { None })
                            .with_group_id(wire_id(g.group_id).into())
                            .with_group_state(sb(g.group_state))
                            .with_authorized_operations(if version >= 3 {
                                g.authorized_operations
                            } else {
                                gt::AUTHORIZED_OPERATIONS_OMITTED
                            })
                            .with_protocol_type(sb(g.protocol_type))
                            .with_protocol_data(sb(g.protocol_data))
                            .with_members(
                                g.members
                                    .into_iter()
                                    .map(|m| {
                                        r::DescribedGroupMember::default()
                                            .with_member_id(wire_id(m.member_id))
                                            .with_group_instance_id(if version >= 4 {
                                                m.group_instance_id.map(wire_id)
                                            } else {
                                                None
                                            })
                                            .with_client_id(sb(m.client_id))
                                            .with_client_host(sb(m.client_host))
                                            .with_member_metadata(Bytes::from(m.member_metadata))
                                            .with_member_assignment(Bytes::from(m.member_assignment))
                                    })
                                    .collect(),
                            )
                    })
                    .collect(),
            )
        }

        fn sample(_: i16) -> kp::DescribeGroupsRequest {
            kp::DescribeGroupsRequest::default().with_groups(vec![sb("a").into(), sb("bb").into()])
        }
    }

    // The request field by field as `kafka-protocol` decodes it, for the walk (`crate::wire::layout`).
    static BODY: Struct = plain(&[always(ArrStr), f(Bool, 3, ALL)]);
}
