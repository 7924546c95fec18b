//! The requests the scenarios send, at the versions real clients use
//! (librdkafka's JoinGroup v5, SyncGroup v3 and Heartbeat v3; OffsetCommit v8
//! as kafka-python sends it; see `real-clients.md`).

use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::messages::consumer_protocol_assignment::TopicPartition;
use kafka_protocol::messages::{
    ApiVersionsRequest, ConsumerProtocolAssignment, ConsumerProtocolSubscription, HeartbeatRequest,
    JoinGroupRequest, OffsetCommitRequest, SyncGroupRequest, join_group_request, offset_commit_request,
    sync_group_request,
};
use kafka_protocol::protocol::{Encodable, StrBytes};

use crate::LoadgenError;

/// ApiVersions, flexible (librdkafka's).
pub(crate) const API_VERSIONS_VERSION: i16 = 3;
/// JoinGroup, librdkafka's (the first with MEMBER_ID_REQUIRED and static membership).
pub(crate) const JOIN_GROUP_VERSION: i16 = 5;
/// SyncGroup, librdkafka's.
pub(crate) const SYNC_GROUP_VERSION: i16 = 3;
/// Heartbeat, librdkafka's.
pub(crate) const HEARTBEAT_VERSION: i16 = 3;
/// OffsetCommit, kafka-python's (flexible).
pub(crate) const OFFSET_COMMIT_VERSION: i16 = 8;

/// The topic members subscribe to and committers commit to.
pub const TOPIC: &str = "bench";

/// Long enough that no member expires while thousands of others are set up,
/// or while idle connections are opened.
pub(crate) const SESSION_TIMEOUT_MS: i32 = 120_000;
/// How long a rebalance may wait for members to rejoin.
pub(crate) const REBALANCE_TIMEOUT_MS: i32 = 60_000;

/// The Kafka error code a JoinGroup v4+ answers a member without an id with.
pub(crate) const MEMBER_ID_REQUIRED: i16 = 79;
/// The error code of a SyncGroup or Heartbeat during a rebalance.
pub(crate) const REBALANCE_IN_PROGRESS: i16 = 27;

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_owned())
}

pub(crate) fn api_versions() -> ApiVersionsRequest {
    ApiVersionsRequest::default()
        .with_client_software_name(StrBytes::from_static_str("group-loadgen"))
        .with_client_software_version(StrBytes::from_static_str(env!("CARGO_PKG_VERSION")))
}

/// A ConsumerProtocolSubscription v0 to [`TOPIC`], behind its version prefix.
pub(crate) fn subscription() -> Result<Bytes, LoadgenError> {
    let sub = ConsumerProtocolSubscription::default().with_topics(vec![s(TOPIC)]);
    versioned(&sub, 0)
}

/// The same subscription with `round` as its user data: metadata that
/// differs from the last JoinGroup's.
pub(crate) fn subscription_for_round(round: u32) -> Result<Bytes, LoadgenError> {
    let sub = ConsumerProtocolSubscription::default()
        .with_topics(vec![s(TOPIC)])
        .with_user_data(Some(Bytes::copy_from_slice(&round.to_be_bytes())));
    versioned(&sub, 0)
}

/// A ConsumerProtocolAssignment v0 of `partitions` of [`TOPIC`].
pub(crate) fn assignment(partitions: Vec<i32>) -> Result<Bytes, LoadgenError> {
    let tp = TopicPartition::default().with_topic(s(TOPIC).into()).with_partitions(partitions);
    versioned(&ConsumerProtocolAssignment::default().with_assigned_partitions(vec![tp]), 0)
}

fn versioned<T: Encodable>(message: &T, version: i16) -> Result<Bytes, LoadgenError> {
    let mut buf = BytesMut::new();
    buf.put_i16(version);
    message
        .encode(&mut buf, version)
        .map_err(|e| LoadgenError::Protocol(format!("consumer protocol: {e}")))?;
    Ok(buf.freeze())
}

pub(crate) fn join_group(group: &str, member_id: &str, subscription: &Bytes) -> JoinGroupRequest {
    let protocol = join_group_request::JoinGroupRequestProtocol::default()
        .with_name(StrBytes::from_static_str("range"))
        .with_metadata(subscription.clone());
    JoinGroupRequest::default()
        .with_group_id(s(group).into())
        .with_session_timeout_ms(SESSION_TIMEOUT_MS)
        .with_rebalance_timeout_ms(REBALANCE_TIMEOUT_MS)
        .with_member_id(s(member_id))
        .with_protocol_type(StrBytes::from_static_str("consumer"))
        .with_protocols(vec![protocol])
}

/// A SyncGroup; the leader's carries `assignments` (member id, assignment).
pub(crate) fn sync_group(
    group: &str,
    generation: i32,
    member_id: &str,
    assignments: Vec<(StrBytes, Bytes)>,
) -> SyncGroupRequest {
    SyncGroupRequest::default()
        .with_group_id(s(group).into())
        .with_generation_id(generation)
        .with_member_id(s(member_id))
        .with_assignments(
            assignments
                .into_iter()
                .map(|(member, bytes)| {
                    sync_group_request::SyncGroupRequestAssignment::default()
                        .with_member_id(member)
                        .with_assignment(bytes)
                })
                .collect(),
        )
}

pub(crate) fn heartbeat(group: &str, generation: i32, member_id: &str) -> HeartbeatRequest {
    HeartbeatRequest::default()
        .with_group_id(s(group).into())
        .with_generation_id(generation)
        .with_member_id(s(member_id))
}

/// A simple consumer's commit (generation -1, no member id: no join needed)
/// of one partition of [`TOPIC`].
pub(crate) fn simple_commit(group: &str, partition: i32, offset: i64) -> OffsetCommitRequest {
    let p = offset_commit_request::OffsetCommitRequestPartition::default()
        .with_partition_index(partition)
        .with_committed_offset(offset)
        .with_committed_leader_epoch(-1)
        .with_committed_metadata(Some(StrBytes::from_static_str("")));
    OffsetCommitRequest::default()
        .with_group_id(s(group).into())
        .with_generation_id_or_member_epoch(-1)
        .with_member_id(StrBytes::from_static_str(""))
        .with_topics(vec![
            offset_commit_request::OffsetCommitRequestTopic::default()
                .with_name(s(TOPIC).into())
                .with_partitions(vec![p]),
        ])
}
