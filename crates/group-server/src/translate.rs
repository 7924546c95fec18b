//! Between `kafka-protocol` messages and `group_types` messages, version by version.
//!
//! Decoding is lossless for every field the coordinator reads; encoding leaves out (or
//! fills with the wire default) what a version cannot carry, because the crate refuses to
//! encode a set field its version lacks.

use std::collections::BTreeMap;

use bytes::Bytes;
use group_types as gt;
use kafka_protocol::messages as kp;
use kafka_protocol::protocol::StrBytes;

use crate::node::{Ctx, Node, Reply, RequestError, WireApi, heartbeat_rejected, unavailable};

fn s(value: &StrBytes) -> String {
    value.as_str().to_owned()
}

fn opt(value: &Option<StrBytes>) -> Option<String> {
    value.as_ref().map(s)
}

/// An id (or commit metadata, a type of the same kind) from the wire, sharing
/// the request frame's bytes instead of copying them. The coordinator copies
/// what it keeps, so no frame outlives its request.
fn id<T: TryFrom<Bytes> + for<'a> From<&'a str>>(value: &StrBytes) -> T {
    // `StrBytes` is UTF-8 already: the copy is never taken.
    T::try_from(Bytes::from(value.clone())).unwrap_or_else(|_| T::from(value.as_str()))
}

fn opt_id<T: TryFrom<Bytes> + for<'a> From<&'a str>>(value: &Option<StrBytes>) -> Option<T> {
    value.as_ref().map(id)
}

/// An id (or commit metadata) for the wire: its bytes, not a copy.
fn wire_id(value: impl Into<Bytes>) -> StrBytes {
    let bytes = value.into();
    // Every id is UTF-8 (`group_types::ids`): the empty answer is never given.
    StrBytes::from_utf8(bytes).unwrap_or_default()
}

fn sb(value: impl Into<String>) -> StrBytes {
    StrBytes::from_string(value.into())
}

fn osb(value: Option<String>) -> Option<StrBytes> {
    value.map(sb)
}

/// The epoch on the wire: -1 means unknown.
fn epoch(value: i32) -> Option<i32> {
    (value >= 0).then_some(value)
}

/// JoinGroup, from the wire; `client_id` and `client_host` come from the connection.
pub(crate) fn join_group_request(
    req: &kp::JoinGroupRequest,
    version: i16,
    client_id: &str,
    client_host: &str,
) -> gt::JoinGroupRequest {
    gt::JoinGroupRequest {
        group_id: id(&req.group_id.0),
        member_id: id(&req.member_id),
        group_instance_id: opt_id(&req.group_instance_id),
        client_id: client_id.to_owned(),
        client_host: client_host.to_owned(),
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

pub(crate) fn join_group_response(resp: gt::JoinGroupResponse, version: i16) -> kp::JoinGroupResponse {
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

pub(crate) fn sync_group_request(req: &kp::SyncGroupRequest) -> gt::SyncGroupRequest {
    gt::SyncGroupRequest {
        group_id: id(&req.group_id.0),
        generation_id: req.generation_id,
        member_id: id(&req.member_id),
        group_instance_id: opt_id(&req.group_instance_id),
        protocol_type: opt_id(&req.protocol_type),
        protocol_name: opt_id(&req.protocol_name),
        assignments: req
            .assignments
            .iter()
            .map(|a| gt::MemberAssignmentData::new(id::<gt::MemberId>(&a.member_id), a.assignment.clone()))
            .collect(),
    }
}

pub(crate) fn sync_group_response(resp: gt::SyncGroupResponse, version: i16) -> kp::SyncGroupResponse {
    let v5 = version >= 5;
    kp::SyncGroupResponse::default()
        .with_error_code(resp.error_code.code())
        .with_protocol_type(if v5 { resp.protocol_type.map(wire_id) } else { None })
        .with_protocol_name(if v5 { resp.protocol_name.map(wire_id) } else { None })
        .with_assignment(resp.assignment)
}

pub(crate) fn heartbeat_request(req: &kp::HeartbeatRequest) -> gt::HeartbeatRequest {
    gt::HeartbeatRequest {
        group_id: id(&req.group_id.0),
        generation_id: req.generation_id,
        member_id: id(&req.member_id),
        group_instance_id: opt_id(&req.group_instance_id),
    }
}

pub(crate) fn heartbeat_response(resp: gt::HeartbeatResponse) -> kp::HeartbeatResponse {
    kp::HeartbeatResponse::default().with_error_code(resp.error_code.code())
}

pub(crate) fn leave_group_request(req: &kp::LeaveGroupRequest, version: i16) -> gt::LeaveGroupRequest {
    if version <= 2 {
        return gt::LeaveGroupRequest::single(s(&req.group_id.0), s(&req.member_id));
    }
    gt::LeaveGroupRequest {
        group_id: id(&req.group_id.0),
        members: req
            .members
            .iter()
            .map(|m| gt::MemberIdentity {
                member_id: id(&m.member_id),
                group_instance_id: opt_id(&m.group_instance_id),
                reason: opt(&m.reason),
            })
            .collect(),
    }
}

pub(crate) fn leave_group_response(resp: gt::LeaveGroupResponse, version: i16) -> kp::LeaveGroupResponse {
    if version <= 2 {
        return kp::LeaveGroupResponse::default().with_error_code(resp.collapsed_error().code());
    }
    kp::LeaveGroupResponse::default().with_error_code(resp.error_code.code()).with_members(
        resp.members
            .into_iter()
            .map(|m| {
                kp::leave_group_response::MemberResponse::default()
                    .with_member_id(wire_id(m.member_id))
                    .with_group_instance_id(m.group_instance_id.map(wire_id))
                    .with_error_code(m.error_code.code())
            })
            .collect(),
    )
}

pub(crate) fn offset_commit_request(req: &kp::OffsetCommitRequest, version: i16) -> gt::OffsetCommitRequest {
    let offsets = req
        .topics
        .iter()
        .map(|topic| gt::TopicEntries {
            topic: s(&topic.name.0),
            partitions: topic
                .partitions
                .iter()
                .map(|p| {
                    let data = gt::OffsetCommitData {
                        offset: p.committed_offset,
                        leader_epoch: epoch(p.committed_leader_epoch),
                        metadata: opt_id(&p.committed_metadata),
                        commit_timestamp: None,
                    };
                    (p.partition_index, data)
                })
                .collect(),
        })
        .collect();
    gt::OffsetCommitRequest {
        group_id: id(&req.group_id.0),
        generation_id: req.generation_id_or_member_epoch,
        member_id: id(&req.member_id),
        group_instance_id: opt_id(&req.group_instance_id),
        retention_time_ms: req.retention_time_ms,
        offsets,
        api_version: version,
    }
}

/// OffsetCommit's answer as the coordinator gives it: every partition of the
/// request in request order, duplicates included, with those refused before the
/// coordinator (authorization, unknown partitions) in their topic's entry.
pub(crate) fn offset_commit_response(resp: gt::OffsetCommitResponse) -> kp::OffsetCommitResponse {
    use kp::offset_commit_response as r;
    let topics = resp
        .errors
        .into_iter()
        .map(|topic| {
            let partitions = topic
                .partitions
                .into_iter()
                .map(|(partition, code)| {
                    r::OffsetCommitResponsePartition::default()
                        .with_partition_index(partition)
                        .with_error_code(code.code())
                })
                .collect();
            r::OffsetCommitResponseTopic::default()
                .with_name(kp::TopicName(sb(topic.topic)))
                .with_partitions(partitions)
        })
        .collect();
    kp::OffsetCommitResponse::default().with_topics(topics)
}

/// OffsetCommit's answer when the coordinator could not be asked: every
/// partition of the request, in request order, with `error`.
pub(crate) fn offset_commit_failed(
    req: &kp::OffsetCommitRequest,
    error: gt::ErrorCode,
) -> kp::OffsetCommitResponse {
    use kp::offset_commit_response as r;
    let topics = req
        .topics
        .iter()
        .map(|topic| {
            let partitions = topic
                .partitions
                .iter()
                .map(|p| {
                    r::OffsetCommitResponsePartition::default()
                        .with_partition_index(p.partition_index)
                        .with_error_code(error.code())
                })
                .collect();
            r::OffsetCommitResponseTopic::default().with_name(topic.name.clone()).with_partitions(partitions)
        })
        .collect();
    kp::OffsetCommitResponse::default().with_topics(topics)
}

/// One group of an OffsetFetch: `None` topics means every committed partition.
pub(crate) struct FetchGroup {
    pub(crate) request: gt::OffsetFetchRequest,
    /// The requested partitions in request order, to answer in that order.
    pub(crate) order: Option<Vec<(String, Vec<i32>)>>,
}

pub(crate) fn offset_fetch_groups(req: &kp::OffsetFetchRequest, version: i16) -> Vec<FetchGroup> {
    let build = |group_id: gt::GroupId, topics: Option<Vec<(String, Vec<i32>)>>, member_id, member_epoch| {
        let map = topics.as_ref().map(|t| {
            let mut map: BTreeMap<String, Vec<i32>> = BTreeMap::new();
            for (name, parts) in t {
                map.entry(name.clone()).or_default().extend(parts);
            }
            map
        });
        FetchGroup {
            request: gt::OffsetFetchRequest {
                group_id,
                topics: map,
                require_stable: req.require_stable,
                member_id,
                member_epoch,
            },
            order: topics,
        }
    };
    if version >= 8 {
        req.groups
            .iter()
            .map(|g| {
                let topics = g
                    .topics
                    .as_ref()
                    .map(|t| t.iter().map(|t| (s(&t.name.0), t.partition_indexes.clone())).collect());
                let epoch = (version >= 9).then_some(g.member_epoch);
                build(id(&g.group_id.0), topics, opt_id(&g.member_id), epoch)
            })
            .collect()
    } else {
        let topics = req
            .topics
            .as_ref()
            .map(|t| t.iter().map(|t| (s(&t.name.0), t.partition_indexes.clone())).collect());
        vec![build(id(&req.group_id.0), topics, None, None)]
    }
}

/// The partitions to answer for one group: the requested ones in order, or every committed one.
fn fetch_rows(
    group: &FetchGroup,
    resp: &gt::OffsetFetchResponse,
) -> Vec<(String, Vec<(i32, gt::OffsetFetchData)>)> {
    match &group.order {
        Some(order) => order
            .iter()
            .map(|(topic, parts)| {
                let rows = parts
                    .iter()
                    .map(|&p| (p, resp.get(topic, p).cloned().unwrap_or_else(gt::OffsetFetchData::missing)))
                    .collect();
                (topic.clone(), rows)
            })
            .collect(),
        None => resp
            .offsets
            .iter()
            .map(|(topic, parts)| (topic.clone(), parts.iter().map(|(&p, d)| (p, d.clone())).collect()))
            .collect(),
    }
}

pub(crate) fn offset_fetch_response(
    groups: &[FetchGroup],
    responses: Vec<gt::OffsetFetchResponse>,
    version: i16,
) -> kp::OffsetFetchResponse {
    use kp::offset_fetch_response as r;
    let leader_epoch = |d: &gt::OffsetFetchData| if version >= 5 { d.leader_epoch.unwrap_or(-1) } else { -1 };
    if version >= 8 {
        let out = groups
            .iter()
            .zip(responses)
            .map(|(group, resp)| {
                let topics = fetch_rows(group, &resp)
                    .into_iter()
                    .map(|(topic, rows)| {
                        r::OffsetFetchResponseTopics::default().with_name(sb(topic).into()).with_partitions(
                            rows.into_iter()
                                .map(|(p, d)| {
                                    r::OffsetFetchResponsePartitions::default()
                                        .with_partition_index(p)
                                        .with_committed_offset(d.offset)
                                        .with_committed_leader_epoch(leader_epoch(&d))
                                        .with_metadata(Some(wire_id(d.metadata)))
                                        .with_error_code(d.error_code.code())
                                })
                                .collect(),
                        )
                    })
                    .collect();
                r::OffsetFetchResponseGroup::default()
                    .with_group_id(sb(group.request.group_id.clone()).into())
                    .with_topics(topics)
                    .with_error_code(resp.error_code.code())
            })
            .collect();
        return kp::OffsetFetchResponse::default().with_groups(out);
    }
    let (group, resp) = match (groups.first(), responses.into_iter().next()) {
        (Some(g), Some(r)) => (g, r),
        _ => return kp::OffsetFetchResponse::default(),
    };
    let topics = fetch_rows(group, &resp)
        .into_iter()
        .map(|(topic, rows)| {
            r::OffsetFetchResponseTopic::default().with_name(sb(topic).into()).with_partitions(
                rows.into_iter()
                    .map(|(p, d)| {
                        // v0-1 have no group-level error: it is repeated on every partition.
                        let code = if version < 2 && !resp.error_code.is_ok() {
                            resp.error_code
                        } else {
                            d.error_code
                        };
                        r::OffsetFetchResponsePartition::default()
                            .with_partition_index(p)
                            .with_committed_offset(d.offset)
                            .with_committed_leader_epoch(leader_epoch(&d))
                            .with_metadata(Some(wire_id(d.metadata)))
                            .with_error_code(code.code())
                    })
                    .collect(),
            )
        })
        .collect();
    kp::OffsetFetchResponse::default().with_topics(topics).with_error_code(if version >= 2 {
        resp.error_code.code()
    } else {
        0
    })
}

pub(crate) fn list_groups_request(req: &kp::ListGroupsRequest) -> gt::ListGroupsRequest {
    gt::ListGroupsRequest {
        states_filter: req.states_filter.iter().map(s).collect(),
        types_filter: req.types_filter.iter().map(s).collect(),
    }
}

pub(crate) fn list_groups_response(resp: gt::ListGroupsResponse, version: i16) -> kp::ListGroupsResponse {
    kp::ListGroupsResponse::default().with_error_code(resp.error_code.code()).with_groups(
        resp.groups
            .into_iter()
            .map(|g| {
                kp::list_groups_response::ListedGroup::default()
                    .with_group_id(wire_id(g.group_id).into())
                    .with_protocol_type(sb(g.protocol_type))
                    .with_group_state(if version >= 4 { sb(g.group_state) } else { StrBytes::default() })
                    .with_group_type(if version >= 5 { sb(g.group_type) } else { StrBytes::default() })
            })
            .collect(),
    )
}

/// DescribeGroups, from the wire: from v6 a consumer group is GROUP_ID_NOT_FOUND, with a
/// message (the core decides from the version).
pub(crate) fn describe_groups_request(
    req: &kp::DescribeGroupsRequest,
    version: i16,
) -> gt::DescribeGroupsRequest {
    gt::DescribeGroupsRequest {
        group_ids: req.groups.iter().map(|g| id(&g.0)).collect(),
        api_version: version,
    }
}

pub(crate) fn describe_groups_response(
    resp: gt::DescribeGroupsResponse,
    version: i16,
) -> kp::DescribeGroupsResponse {
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

pub(crate) fn delete_groups_request(req: &kp::DeleteGroupsRequest) -> gt::DeleteGroupsRequest {
    gt::DeleteGroupsRequest { group_ids: req.groups_names.iter().map(|g| id(&g.0)).collect() }
}

pub(crate) fn delete_groups_response(resp: gt::DeleteGroupsResponse) -> kp::DeleteGroupsResponse {
    kp::DeleteGroupsResponse::default().with_results(
        resp.results
            .into_iter()
            .map(|g| {
                kp::delete_groups_response::DeletableGroupResult::default()
                    .with_group_id(wire_id(g.group_id).into())
                    .with_error_code(g.error_code.code())
            })
            .collect(),
    )
}

pub(crate) fn offset_delete_request(req: &kp::OffsetDeleteRequest) -> gt::OffsetDeleteRequest {
    let mut topics: BTreeMap<String, Vec<i32>> = BTreeMap::new();
    for t in &req.topics {
        topics.entry(s(&t.name.0)).or_default().extend(t.partitions.iter().map(|p| p.partition_index));
    }
    gt::OffsetDeleteRequest { group_id: s(&req.group_id.0), topics }
}

pub(crate) fn offset_delete_response(
    req: &kp::OffsetDeleteRequest,
    resp: &gt::OffsetDeleteResponse,
) -> kp::OffsetDeleteResponse {
    use kp::offset_delete_response as r;
    let topics = if resp.error_code.is_ok() {
        req.topics
            .iter()
            .map(|t| {
                let name = s(&t.name.0);
                r::OffsetDeleteResponseTopic::default().with_name(t.name.clone()).with_partitions(
                    t.partitions
                        .iter()
                        .map(|p| {
                            let code = resp
                                .partitions
                                .get(&name)
                                .and_then(|m| m.get(&p.partition_index))
                                .copied()
                                .unwrap_or(gt::ErrorCode::None);
                            r::OffsetDeleteResponsePartition::default()
                                .with_partition_index(p.partition_index)
                                .with_error_code(code.code())
                        })
                        .collect(),
                )
            })
            .collect()
    } else {
        Vec::new()
    };
    kp::OffsetDeleteResponse::default().with_error_code(resp.error_code.code()).with_topics(topics)
}

fn topic_id(id: &uuid::Uuid) -> gt::TopicId {
    gt::TopicId(id.into_bytes())
}

fn uuid(id: gt::TopicId) -> uuid::Uuid {
    uuid::Uuid::from_bytes(id.0)
}

/// ConsumerGroupHeartbeat, from the wire: every nullable field stays null ("unchanged")
/// or empty as sent (`kip848-semantics.md` §1.2); the regex exists from v1 on. The client
/// id comes from the request header and the host from the connection (`/127.0.0.1`).
pub(crate) fn consumer_group_heartbeat_request(
    req: &kp::ConsumerGroupHeartbeatRequest,
    version: i16,
    client_id: &str,
    client_host: &str,
) -> gt::ConsumerGroupHeartbeatRequest {
    gt::ConsumerGroupHeartbeatRequest {
        api_version: version,
        group_id: id(&req.group_id.0),
        member_id: id(&req.member_id),
        member_epoch: req.member_epoch,
        instance_id: opt_id(&req.instance_id),
        rack_id: opt(&req.rack_id),
        rebalance_timeout_ms: req.rebalance_timeout_ms,
        subscribed_topic_names: req
            .subscribed_topic_names
            .as_ref()
            .map(|t| t.iter().map(|n| s(&n.0)).collect()),
        subscribed_topic_regex: if version >= 1 { opt(&req.subscribed_topic_regex) } else { None },
        server_assignor: opt(&req.server_assignor),
        topic_partitions: req.topic_partitions.as_ref().map(|t| {
            t.iter()
                .map(|tp| gt::TopicIdPartitions::new(topic_id(&tp.topic_id), tp.partitions.clone()))
                .collect()
        }),
        client_id: client_id.to_owned(),
        client_host: client_host.to_owned(),
    }
}

/// ConsumerGroupHeartbeat's answer: the assignment is a nullable struct (null = "no
/// change", §1.3), the same at both versions.
pub(crate) fn consumer_group_heartbeat_response(
    resp: gt::ConsumerGroupHeartbeatResponse,
) -> kp::ConsumerGroupHeartbeatResponse {
    use kp::consumer_group_heartbeat_response as r;
    let assignment = resp.assignment.map(|topics| {
        r::Assignment::default().with_topic_partitions(
            topics
                .into_iter()
                .map(|tp| {
                    r::TopicPartitions::default()
                        .with_topic_id(uuid(tp.topic_id))
                        .with_partitions(tp.partitions)
                })
                .collect(),
        )
    });
    kp::ConsumerGroupHeartbeatResponse::default()
        .with_error_code(resp.error_code.code())
        .with_error_message(osb(resp.error_message))
        .with_member_id(resp.member_id.map(wire_id))
        .with_member_epoch(resp.member_epoch)
        .with_heartbeat_interval_ms(resp.heartbeat_interval_ms)
        .with_assignment(assignment)
}

pub(crate) fn consumer_group_describe_request(
    req: &kp::ConsumerGroupDescribeRequest,
    version: i16,
) -> gt::ConsumerGroupDescribeRequest {
    gt::ConsumerGroupDescribeRequest {
        api_version: version,
        group_ids: req.group_ids.iter().map(|g| id(&g.0)).collect(),
        include_authorized_operations: req.include_authorized_operations,
    }
}

/// ConsumerGroupDescribe's answer; v0 has no member type.
pub(crate) fn consumer_group_describe_response(
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

#[cfg(test)]
#[path = "translate_tests.rs"]
mod tests;

// Serving each group API: the wire request translated, handed to the coordinator, its
// answer translated back (`crate::node::WireApi`). A coordinator that failed (stopped,
// storage down) is answered COORDINATOR_NOT_AVAILABLE in the API's shape.

/// The coordinator's answer, or `failed`'s with COORDINATOR_NOT_AVAILABLE when
/// the coordinator gave none.
fn or_unavailable<R>(
    answer: Result<R, group_coordinator::CoordinatorError>,
    failed: impl FnOnce(gt::ErrorCode) -> R,
) -> R {
    answer.unwrap_or_else(|e| failed(unavailable(&e)))
}

impl WireApi for gt::JoinGroupRequest {
    type Wire = kp::JoinGroupRequest;

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: kp::JoinGroupRequest) -> Result<Reply, RequestError> {
        let req = join_group_request(&wire, ctx.version, &ctx.caller.client_id, &ctx.caller.client_host);
        node.record(|| ctx.line(&format!(",\"group\":{:?},\"member\":{:?}", req.group_id, req.member_id)));
        // The response line's prefix is formatted only when there is a log to write.
        let log = node.log.clone().map(|log| (log, ctx.line("")));
        Ok(ctx.later(node.submit(ctx, req), move |r, v| {
            let r = r.unwrap_or_else(|e| gt::JoinGroupResponse::error(unavailable(&e), ""));
            if let Some((log, line)) = log {
                log.write(&format!(
                    "{line},\"response\":true,\"error\":{},\"generation\":{},\"member\":{:?},\"leader\":{:?}",
                    r.error_code.code(),
                    r.generation_id,
                    r.member_id,
                    r.leader_id
                ));
            }
            join_group_response(r, v)
        }))
    }
}

impl WireApi for gt::SyncGroupRequest {
    type Wire = kp::SyncGroupRequest;

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: kp::SyncGroupRequest) -> Result<Reply, RequestError> {
        let req = sync_group_request(&wire);
        node.record(|| {
            ctx.line(&format!(
                ",\"group\":{:?},\"member\":{:?},\"generation\":{},\"assignments\":{}",
                req.group_id,
                req.member_id,
                req.generation_id,
                req.assignments.len()
            ))
        });
        Ok(ctx.later(node.submit(ctx, req), |r, v| {
            sync_group_response(or_unavailable(r, gt::SyncGroupResponse::error), v)
        }))
    }
}

impl WireApi for gt::HeartbeatRequest {
    type Wire = kp::HeartbeatRequest;

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: kp::HeartbeatRequest) -> Result<Reply, RequestError> {
        let req = heartbeat_request(&wire);
        // Formatted only when there is a log: the line costs more than the
        // coordinator's own work for a heartbeat.
        let log = node.log.clone().map(|log| {
            let line =
                ctx.line(&format!(",\"group\":{:?},\"generation\":{}", req.group_id, req.generation_id));
            (log, line)
        });
        Ok(ctx.later(node.submit(ctx, req), move |r, _| {
            let r = or_unavailable(r, |error_code| gt::HeartbeatResponse { error_code });
            if let Some((log, line)) = log {
                log.write(&format!("{line},\"error\":{}", r.error_code.code()));
            }
            heartbeat_response(r)
        }))
    }
}

impl WireApi for gt::LeaveGroupRequest {
    type Wire = kp::LeaveGroupRequest;

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: kp::LeaveGroupRequest) -> Result<Reply, RequestError> {
        let req = leave_group_request(&wire, ctx.version);
        node.record(|| ctx.line(&format!(",\"group\":{:?},\"members\":{}", req.group_id, req.members.len())));
        Ok(ctx.later(node.submit(ctx, req), |r, v| {
            let r =
                or_unavailable(r, |error_code| gt::LeaveGroupResponse { error_code, ..Default::default() });
            leave_group_response(r, v)
        }))
    }
}

impl WireApi for gt::OffsetCommitRequest {
    type Wire = kp::OffsetCommitRequest;

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: kp::OffsetCommitRequest) -> Result<Reply, RequestError> {
        let req = offset_commit_request(&wire, ctx.version);
        node.record(|| {
            ctx.line(&format!(
                ",\"group\":{:?},\"generation\":{},\"member\":{:?},\"partitions\":{}",
                req.group_id,
                req.generation_id,
                req.member_id,
                req.partition_count()
            ))
        });
        Ok(ctx.later(node.submit(ctx, req), move |r, _| match r {
            Ok(resp) => offset_commit_response(resp),
            Err(e) => offset_commit_failed(&wire, unavailable(&e)),
        }))
    }
}

impl WireApi for gt::OffsetFetchRequest {
    type Wire = kp::OffsetFetchRequest;

    /// One coordinator request per group of the wire request (v8+ names several).
    fn serve(node: &Node, ctx: &Ctx<'_>, wire: kp::OffsetFetchRequest) -> Result<Reply, RequestError> {
        let groups = offset_fetch_groups(&wire, ctx.version);
        node.record(|| ctx.line(""));
        let pending = groups.iter().map(|g| node.submit(ctx, g.request.clone())).collect();
        Ok(ctx.later_all(pending, move |answers, v| {
            let responses = answers
                .into_iter()
                .map(|r| {
                    r.unwrap_or_else(|e| gt::OffsetFetchResponse {
                        error_code: unavailable(&e),
                        ..Default::default()
                    })
                })
                .collect();
            offset_fetch_response(&groups, responses, v)
        }))
    }
}

impl WireApi for gt::ListGroupsRequest {
    type Wire = kp::ListGroupsRequest;

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: kp::ListGroupsRequest) -> Result<Reply, RequestError> {
        node.record(|| ctx.line(""));
        Ok(ctx.later(node.submit(ctx, list_groups_request(&wire)), |r, v| {
            let r =
                or_unavailable(r, |error_code| gt::ListGroupsResponse { error_code, ..Default::default() });
            list_groups_response(r, v)
        }))
    }
}

impl WireApi for gt::DescribeGroupsRequest {
    type Wire = kp::DescribeGroupsRequest;

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: kp::DescribeGroupsRequest) -> Result<Reply, RequestError> {
        node.record(|| ctx.line(""));
        let req = describe_groups_request(&wire, ctx.version);
        let ids = req.group_ids.clone();
        Ok(ctx.later(node.submit(ctx, req), move |r, v| {
            let r = r.unwrap_or_else(|e| {
                let groups = ids
                    .into_iter()
                    .map(|group_id| gt::DescribedGroup {
                        error_code: unavailable(&e),
                        group_id,
                        ..Default::default()
                    })
                    .collect();
                gt::DescribeGroupsResponse { groups }
            });
            describe_groups_response(r, v)
        }))
    }
}

impl WireApi for gt::DeleteGroupsRequest {
    type Wire = kp::DeleteGroupsRequest;

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: kp::DeleteGroupsRequest) -> Result<Reply, RequestError> {
        node.record(|| ctx.line(""));
        let req = delete_groups_request(&wire);
        let ids = req.group_ids.clone();
        Ok(ctx.later(node.submit(ctx, req), move |r, _| {
            let r = r.unwrap_or_else(|e| {
                let results = ids
                    .into_iter()
                    .map(|group_id| gt::DeletedGroup { group_id, error_code: unavailable(&e) })
                    .collect();
                gt::DeleteGroupsResponse { results }
            });
            delete_groups_response(r)
        }))
    }
}

impl WireApi for gt::OffsetDeleteRequest {
    type Wire = kp::OffsetDeleteRequest;

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: kp::OffsetDeleteRequest) -> Result<Reply, RequestError> {
        node.record(|| ctx.line(""));
        Ok(ctx.later(node.submit(ctx, offset_delete_request(&wire)), move |r, _| {
            let r =
                or_unavailable(r, |error_code| gt::OffsetDeleteResponse { error_code, ..Default::default() });
            offset_delete_response(&wire, &r)
        }))
    }
}

impl WireApi for gt::ConsumerGroupHeartbeatRequest {
    type Wire = kp::ConsumerGroupHeartbeatRequest;

    fn serve(
        node: &Node,
        ctx: &Ctx<'_>,
        wire: kp::ConsumerGroupHeartbeatRequest,
    ) -> Result<Reply, RequestError> {
        let req = consumer_group_heartbeat_request(
            &wire,
            ctx.version,
            &ctx.caller.client_id,
            &ctx.caller.client_host,
        );
        let (group, member, epoch) = (req.group_id.clone(), req.member_id.clone(), req.member_epoch);
        let log = node.log.clone().map(|log| {
            let line = ctx.line(&format!(",\"group\":{group:?},\"member\":{member:?},\"epoch\":{epoch}"));
            (log, line)
        });
        Ok(ctx.later(node.submit(ctx, req), move |r, _| {
            let r = r.unwrap_or_else(|e| {
                gt::ConsumerGroupHeartbeatResponse::error(unavailable(&e), Some(e.to_string()))
            });
            if let Some((log, line)) = log {
                log.write(&format!(
                    "{line},\"response\":true,\"error\":{},\"member_epoch\":{},\"assignment\":{}",
                    r.error_code.code(),
                    r.member_epoch,
                    r.assignment.as_ref().map_or(-1, |a| a.iter().map(|t| t.partitions.len() as i64).sum())
                ));
            }
            if !r.error_code.is_ok() {
                heartbeat_rejected(&group, &member, epoch, &r);
            }
            consumer_group_heartbeat_response(r)
        }))
    }
}

impl WireApi for gt::ConsumerGroupDescribeRequest {
    type Wire = kp::ConsumerGroupDescribeRequest;

    fn serve(
        node: &Node,
        ctx: &Ctx<'_>,
        wire: kp::ConsumerGroupDescribeRequest,
    ) -> Result<Reply, RequestError> {
        node.record(|| ctx.line(""));
        let req = consumer_group_describe_request(&wire, ctx.version);
        let ids = req.group_ids.clone();
        Ok(ctx.later(node.submit(ctx, req), move |r, v| {
            let r = r.unwrap_or_else(|e| {
                let code = unavailable(&e);
                let groups =
                    ids.into_iter().map(|id| gt::DescribedConsumerGroup::error(id, code, None)).collect();
                gt::ConsumerGroupDescribeResponse { groups }
            });
            consumer_group_describe_response(r, v)
        }))
    }
}
