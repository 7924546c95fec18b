//! The checks Kafka's service runs before a heartbeat reaches the coordinator
//! (`GroupCoordinatorService.throwIfConsumerGroupHeartbeatRequestIsInvalid`, §2.2).

use crate::core::modern::java_blank;
use group_types::{
    ConsumerGroupHeartbeatRequest, ErrorCode, JOIN_GROUP_MEMBER_EPOCH, LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
};

/// `GroupMetadataManager.throwIfEmptyString`: present and blank after trimming.
fn blank(value: Option<&str>) -> bool {
    value.is_some_and(java_blank)
}

/// The first failing check, in Kafka's order, with Kafka's message.
pub(crate) fn validate_heartbeat(
    r: &ConsumerGroupHeartbeatRequest,
    assignors: &[String],
) -> Result<(), (ErrorCode, String)> {
    let invalid = |m: &str| Err((ErrorCode::InvalidRequest, m.to_owned()));
    let epoch = r.member_epoch;
    if (r.api_version >= 1 || epoch > 0 || epoch == LEAVE_GROUP_MEMBER_EPOCH) && java_blank(&r.member_id) {
        return invalid("MemberId can't be empty.");
    }
    if java_blank(&r.group_id) {
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

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    #[rstest]
    #[case::empty("", true)]
    #[case::spaces("   ", true)]
    #[case::tab_and_newline("\t\n\r", true)]
    #[case::control_chars_java_trims("\u{1}\u{1f}", true)]
    #[case::vertical_tab("\u{b}", true)]
    #[case::a_letter("a", false)]
    #[case::padded(" a ", false)]
    #[case::delete_is_above_the_space("\u{7f}", false)]
    #[case::no_break_space_java_keeps("\u{a0}", false)]
    #[case::ideographic_space_java_keeps("\u{3000}", false)]
    fn blank_is_javas_trim_then_empty(#[case] id: &str, #[case] is_blank: bool) {
        assert_eq!(java_blank(id), is_blank);
        let r = ConsumerGroupHeartbeatRequest {
            group_id: id.into(),
            member_id: "m".into(),
            member_epoch: 1,
            ..ConsumerGroupHeartbeatRequest::default()
        };
        let expected = match is_blank {
            true => Err((ErrorCode::InvalidRequest, "GroupId can't be empty.".to_owned())),
            false => Ok(()),
        };
        assert_eq!(validate_heartbeat(&r, &[]), expected);
        let r = ConsumerGroupHeartbeatRequest { group_id: "g".into(), rack_id: Some(id.to_owned()), ..r };
        let expected = expected.map_err(|_| (ErrorCode::InvalidRequest, "RackId can't be empty.".to_owned()));
        assert_eq!(validate_heartbeat(&r, &[]), expected);
    }
}
