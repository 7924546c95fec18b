//! ShareGroupDescribe (API key 77, KIP-932): share groups as the coordinator
//! holds them. Only version 1 exists.

use serde::{Deserialize, Serialize};

use crate::{AUTHORIZED_OPERATIONS_OMITTED, DescribedTopicPartitions, ErrorCode, GroupId, MemberId};

/// A ShareGroupDescribe request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ShareGroupDescribeRequest {
    /// The groups.
    pub group_ids: Vec<GroupId>,
    /// Whether to report the caller's authorized operations.
    pub include_authorized_operations: bool,
}

/// One member of a described share group.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DescribedShareMember {
    /// The member id.
    pub member_id: MemberId,
    /// The rack.
    pub rack_id: Option<String>,
    /// The member epoch.
    pub member_epoch: i32,
    /// The client id.
    pub client_id: String,
    /// The client host.
    pub client_host: String,
    /// Topics subscribed by name.
    pub subscribed_topic_names: Vec<String>,
    /// The partitions the member holds.
    pub assignment: Vec<DescribedTopicPartitions>,
}

/// One described share group (or the error for it).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DescribedShareGroup {
    /// The outcome for this group.
    pub error_code: ErrorCode,
    /// Detail for an error.
    pub error_message: Option<String>,
    /// The group id.
    pub group_id: GroupId,
    /// `Empty` or `Stable` (a share group has no other state); `""` on errors.
    pub group_state: String,
    /// The group epoch.
    pub group_epoch: i32,
    /// The target assignment's epoch.
    pub assignment_epoch: i32,
    /// The share assignor's name.
    pub assignor_name: String,
    /// The members.
    pub members: Vec<DescribedShareMember>,
    /// The caller's authorized operations, or [`AUTHORIZED_OPERATIONS_OMITTED`].
    pub authorized_operations: i32,
}

impl DescribedShareGroup {
    /// The answer for a group that cannot be described.
    pub fn error(group_id: impl Into<GroupId>, error_code: ErrorCode, message: Option<String>) -> Self {
        DescribedShareGroup {
            error_code,
            error_message: message,
            group_id: group_id.into(),
            authorized_operations: AUTHORIZED_OPERATIONS_OMITTED,
            ..DescribedShareGroup::default()
        }
    }
}

/// A ShareGroupDescribe response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ShareGroupDescribeResponse {
    /// One entry per requested group: invalid (empty) ids first, as Kafka answers
    /// them before looking groups up, then the others in request order.
    pub groups: Vec<DescribedShareGroup>,
}

#[cfg(feature = "kafka-protocol")]
mod wire {
    //! ShareGroupDescribe (key 77, KIP-932) on the wire: share groups' members and assignments.

    use kafka_protocol::messages as kp;

    use crate as gt;
    use crate::wire::layout::Ty::{ArrStr, Bool};
    use crate::wire::layout::{Layout, Struct, always, plain};
    use crate::wire::{Header, WireRequest, id, osb, sb, uuid, wire_id};

    impl WireRequest for gt::ShareGroupDescribeRequest {
        type Wire = kp::ShareGroupDescribeRequest;
        type Response = gt::ShareGroupDescribeResponse;
        type WireResponse = kp::ShareGroupDescribeResponse;
        const LAYOUT: Layout = Layout::new(1, 1, 0, &BODY);

        #[inline]
        fn from_wire(req: &kp::ShareGroupDescribeRequest, _: &Header<'_>) -> Self {
            gt::ShareGroupDescribeRequest {
                group_ids: req.group_ids.iter().map(|g| id(&g.0)).collect(),
                include_authorized_operations: req.include_authorized_operations,
            }
        }

        #[inline]
        fn to_wire(resp: gt::ShareGroupDescribeResponse, _: i16) -> kp::ShareGroupDescribeResponse {
            use kp::share_group_describe_response as r;
            let groups = resp
                .groups
                .into_iter()
                .map(|g| {
                    let members = g
                        .members
                        .into_iter()
                        .map(|m| {
                            let topics = m
                                .assignment
                                .into_iter()
                                .map(|tp| {
                                    r::TopicPartitions::default()
                                        .with_topic_id(uuid(tp.topic_id))
                                        .with_topic_name(sb(tp.topic_name).into())
                                        .with_partitions(tp.partitions)
                                })
                                .collect();
                            r::Member::default()
                                .with_member_id(wire_id(m.member_id))
                                .with_rack_id(osb(m.rack_id))
                                .with_member_epoch(m.member_epoch)
                                .with_client_id(sb(m.client_id))
                                .with_client_host(sb(m.client_host))
                                .with_subscribed_topic_names(
                                    m.subscribed_topic_names.into_iter().map(|n| sb(n).into()).collect(),
                                )
                                .with_assignment(r::Assignment::default().with_topic_partitions(topics))
                        })
                        .collect();
                    r::DescribedGroup::default()
                        .with_error_code(g.error_code.code())
                        .with_error_message(osb(g.error_message))
                        .with_group_id(wire_id(g.group_id).into())
                        .with_group_state(sb(g.group_state))
                        .with_group_epoch(g.group_epoch)
                        .with_assignment_epoch(g.assignment_epoch)
                        .with_assignor_name(sb(g.assignor_name))
                        .with_members(members)
                        .with_authorized_operations(g.authorized_operations)
                })
                .collect();
            kp::ShareGroupDescribeResponse::default().with_groups(groups)
        }

        fn sample(_: i16) -> kp::ShareGroupDescribeRequest {
            kp::ShareGroupDescribeRequest::default()
                .with_group_ids(vec![sb("a").into(), sb("bb").into()])
                .with_include_authorized_operations(true)
        }
    }

    // The request field by field as `kafka-protocol` decodes it, for the walk (`crate::wire::layout`).
    static BODY: Struct = plain(&[always(ArrStr), always(Bool)]);
}
