//! ConsumerGroupDescribe (API key 69): consumer groups as the coordinator holds
//! them (`kip848-semantics.md` §1.5).

use serde::{Deserialize, Serialize};

use crate::{ErrorCode, GroupId, GroupInstanceId, MemberId, TopicId};

/// Kafka's "authorized operations not requested" marker (`Integer.MIN_VALUE`).
pub const AUTHORIZED_OPERATIONS_OMITTED: i32 = i32::MIN;

/// A ConsumerGroupDescribe request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ConsumerGroupDescribeRequest {
    /// The request's version (v1 adds the member type).
    pub api_version: i16,
    /// The groups.
    pub group_ids: Vec<GroupId>,
    /// Whether to report the caller's authorized operations.
    pub include_authorized_operations: bool,
}

/// Partitions of one topic, with its id and name.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DescribedTopicPartitions {
    /// The topic id.
    pub topic_id: TopicId,
    /// Its name.
    pub topic_name: String,
    /// Partition indices, ascending.
    pub partitions: Vec<i32>,
}

/// One member of a described consumer group.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DescribedConsumerMember {
    /// The member id.
    pub member_id: MemberId,
    /// The static instance id.
    pub instance_id: Option<GroupInstanceId>,
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
    /// The regex, `""` when none.
    pub subscribed_topic_regex: String,
    /// The partitions the member owns now.
    pub assignment: Vec<DescribedTopicPartitions>,
    /// Its target assignment.
    pub target_assignment: Vec<DescribedTopicPartitions>,
    /// v1+: 0 classic-protocol member, 1 consumer-protocol member, -1 unknown.
    pub member_type: i8,
}

/// One described group (or the error for it).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DescribedConsumerGroup {
    /// The outcome for this group.
    pub error_code: ErrorCode,
    /// Detail for an error.
    pub error_message: Option<String>,
    /// The group id.
    pub group_id: GroupId,
    /// `Empty`, `Assigning`, `Reconciling` or `Stable`; `""` on errors.
    pub group_state: String,
    /// The group epoch.
    pub group_epoch: i32,
    /// The target assignment's epoch.
    pub assignment_epoch: i32,
    /// The group's preferred server assignor.
    pub assignor_name: String,
    /// The members.
    pub members: Vec<DescribedConsumerMember>,
    /// The caller's authorized operations, or [`AUTHORIZED_OPERATIONS_OMITTED`].
    pub authorized_operations: i32,
}

impl DescribedConsumerGroup {
    /// The answer for a group that cannot be described.
    pub fn error(group_id: impl Into<GroupId>, error_code: ErrorCode, message: Option<String>) -> Self {
        DescribedConsumerGroup {
            error_code,
            error_message: message,
            group_id: group_id.into(),
            authorized_operations: AUTHORIZED_OPERATIONS_OMITTED,
            ..DescribedConsumerGroup::default()
        }
    }
}

/// A ConsumerGroupDescribe response.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ConsumerGroupDescribeResponse {
    /// One entry per requested group, in request order (an empty id first, as Kafka
    /// answers it before looking groups up).
    pub groups: Vec<DescribedConsumerGroup>,
}

#[cfg(feature = "kafka-protocol")]
mod wire {
    //! ConsumerGroupDescribe (key 69, KIP-848) on the wire: consumer groups' members and assignments.

    use kafka_protocol::messages as kp;

    use crate as gt;
    use crate::wire::layout::Ty::{ArrStr, Bool};
    use crate::wire::layout::{Layout, Struct, always, plain};
    use crate::wire::{Header, WireRequest, id, osb, sb, uuid, wire_id};

    impl WireRequest for gt::ConsumerGroupDescribeRequest {
        type Wire = kp::ConsumerGroupDescribeRequest;
        type Response = gt::ConsumerGroupDescribeResponse;
        type WireResponse = kp::ConsumerGroupDescribeResponse;
        const LAYOUT: Layout = Layout::new(0, 1, 0, &BODY);

        #[inline]
        fn from_wire(req: &kp::ConsumerGroupDescribeRequest, header: &Header<'_>) -> Self {
            let version = header.version;
            gt::ConsumerGroupDescribeRequest {
                api_version: version,
                group_ids: req.group_ids.iter().map(|g| id(&g.0)).collect(),
                include_authorized_operations: req.include_authorized_operations,
            }
        }

        /// ConsumerGroupDescribe's answer; v0 has no member type.
        #[inline]
        fn to_wire(
            resp: gt::ConsumerGroupDescribeResponse,
            version: i16,
        ) -> kp::ConsumerGroupDescribeResponse {
            use kp::consumer_group_describe_response as r;
            let assignment = |topics: Vec<gt::DescribedTopicPartitions>| {
                r::Assignment::default().with_topic_partitions(
                    topics
                        .into_iter()
                        .map(|tp| {
                            r::TopicPartitions::default()
                                .with_topic_id(uuid(tp.topic_id))
                                .with_topic_name(sb(tp.topic_name).into())
                                .with_partitions(tp.partitions)
                        })
                        .collect(),
                )
            };
            let groups = resp
                .groups
                .into_iter()
                .map(|g| {
                    let members = g
                        .members
                        .into_iter()
                        .map(|m| {
                            r::Member::default()
                                .with_member_id(wire_id(m.member_id))
                                .with_instance_id(m.instance_id.map(wire_id))
                                .with_rack_id(osb(m.rack_id))
                                .with_member_epoch(m.member_epoch)
                                .with_client_id(sb(m.client_id))
                                .with_client_host(sb(m.client_host))
                                .with_subscribed_topic_names(
                                    m.subscribed_topic_names.into_iter().map(|n| sb(n).into()).collect(),
                                )
                                .with_subscribed_topic_regex(Some(sb(m.subscribed_topic_regex)))
                                .with_assignment(assignment(m.assignment))
                                .with_target_assignment(assignment(m.target_assignment))
                                .with_member_type(if version >= 1 { m.member_type } else { -1 })
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
            kp::ConsumerGroupDescribeResponse::default().with_groups(groups)
        }

        fn sample(_: i16) -> kp::ConsumerGroupDescribeRequest {
            kp::ConsumerGroupDescribeRequest::default()
                .with_group_ids(vec![sb("a").into(), sb("bb").into()])
                .with_include_authorized_operations(true)
        }
    }

    // The request field by field as `kafka-protocol` decodes it, for the walk (`crate::wire::layout`).
    static BODY: Struct = plain(&[always(ArrStr), always(Bool)]);
}
