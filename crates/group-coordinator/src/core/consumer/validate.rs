//! The checks Kafka's service runs before a heartbeat reaches the coordinator
//! (`GroupCoordinatorService.throwIfConsumerGroupHeartbeatRequestIsInvalid`, §2.2).

use group_types::{
    ConsumerGroupHeartbeatRequest, ErrorCode, JOIN_GROUP_MEMBER_EPOCH, LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
};

/// `Utils.throwIfEmptyString`: present and blank after trimming.
fn blank(value: Option<&str>) -> bool {
    value.is_some_and(|v| v.trim().is_empty())
}

/// The first failing check, in Kafka's order, with Kafka's message.
pub(crate) fn validate_heartbeat(
    r: &ConsumerGroupHeartbeatRequest,
    assignors: &[String],
) -> Result<(), (ErrorCode, String)> {
    let invalid = |m: &str| Err((ErrorCode::InvalidRequest, m.to_owned()));
    let epoch = r.member_epoch;
    if (r.api_version >= 1 || epoch > 0 || epoch == LEAVE_GROUP_MEMBER_EPOCH) && r.member_id.trim().is_empty()
    {
        return invalid("MemberId can't be empty.");
    }
    if r.group_id.trim().is_empty() {
        return invalid("GroupId can't be empty.");
    }
    if blank(r.instance_id.as_deref()) {
        return invalid("InstanceId can't be empty.");
    }
    if blank(r.rack_id.as_deref()) {
        return invalid("RackId can't be empty.");
    }
    if epoch == JOIN_GROUP_MEMBER_EPOCH {
        if r.rebalance_timeout_ms == -1 {
            return invalid("RebalanceTimeoutMs must be provided in first request.");
        }
        if r.topic_partitions.as_ref().is_none_or(|t| !t.is_empty()) {
            return invalid("TopicPartitions must be empty when (re-)joining.");
        }
        if r.subscribed_topic_names.is_none() && r.subscribed_topic_regex.is_none() {
            return invalid(
                "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.",
            );
        }
    } else if epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH {
        if r.instance_id.is_none() {
            return invalid("InstanceId can't be null.");
        }
    } else if epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH {
        return invalid("MemberEpoch is invalid.");
    }
    if let Some(name) = &r.server_assignor
        && !assignors.contains(name)
    {
        return Err((
            ErrorCode::UnsupportedAssignor,
            format!("ServerAssignor {name} is not supported. Supported assignors: {}.", assignors.join(", ")),
        ));
    }
    Ok(())
}
