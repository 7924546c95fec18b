//! Error codes carry Kafka's numbers and names, and unknown numbers are safe.

use group_types::{ErrorCode, GroupError};
use rstest::rstest;

#[rstest]
#[case(ErrorCode::UnknownServerError, -1, "UNKNOWN_SERVER_ERROR")]
#[case(ErrorCode::None, 0, "NONE")]
#[case(ErrorCode::UnknownTopicOrPartition, 3, "UNKNOWN_TOPIC_OR_PARTITION")]
#[case(ErrorCode::InvalidFetchSize, 4, "INVALID_FETCH_SIZE")]
#[case(ErrorCode::NotLeaderOrFollower, 6, "NOT_LEADER_OR_FOLLOWER")]
#[case(ErrorCode::RequestTimedOut, 7, "REQUEST_TIMED_OUT")]
#[case(ErrorCode::MessageTooLarge, 10, "MESSAGE_TOO_LARGE")]
#[case(ErrorCode::OffsetMetadataTooLarge, 12, "OFFSET_METADATA_TOO_LARGE")]
#[case(ErrorCode::NetworkException, 13, "NETWORK_EXCEPTION")]
#[case(ErrorCode::CoordinatorLoadInProgress, 14, "COORDINATOR_LOAD_IN_PROGRESS")]
#[case(ErrorCode::CoordinatorNotAvailable, 15, "COORDINATOR_NOT_AVAILABLE")]
#[case(ErrorCode::NotCoordinator, 16, "NOT_COORDINATOR")]
#[case(ErrorCode::RecordListTooLarge, 18, "RECORD_LIST_TOO_LARGE")]
#[case(ErrorCode::NotEnoughReplicas, 19, "NOT_ENOUGH_REPLICAS")]
#[case(ErrorCode::NotEnoughReplicasAfterAppend, 20, "NOT_ENOUGH_REPLICAS_AFTER_APPEND")]
#[case(ErrorCode::IllegalGeneration, 22, "ILLEGAL_GENERATION")]
#[case(ErrorCode::InconsistentGroupProtocol, 23, "INCONSISTENT_GROUP_PROTOCOL")]
#[case(ErrorCode::InvalidGroupId, 24, "INVALID_GROUP_ID")]
#[case(ErrorCode::UnknownMemberId, 25, "UNKNOWN_MEMBER_ID")]
#[case(ErrorCode::InvalidSessionTimeout, 26, "INVALID_SESSION_TIMEOUT")]
#[case(ErrorCode::RebalanceInProgress, 27, "REBALANCE_IN_PROGRESS")]
#[case(ErrorCode::InvalidCommitOffsetSize, 28, "INVALID_COMMIT_OFFSET_SIZE")]
#[case(ErrorCode::TopicAuthorizationFailed, 29, "TOPIC_AUTHORIZATION_FAILED")]
#[case(ErrorCode::GroupAuthorizationFailed, 30, "GROUP_AUTHORIZATION_FAILED")]
#[case(ErrorCode::UnsupportedVersion, 35, "UNSUPPORTED_VERSION")]
#[case(ErrorCode::InvalidRequest, 42, "INVALID_REQUEST")]
#[case(ErrorCode::KafkaStorageError, 56, "KAFKA_STORAGE_ERROR")]
#[case(ErrorCode::NonEmptyGroup, 68, "NON_EMPTY_GROUP")]
#[case(ErrorCode::GroupIdNotFound, 69, "GROUP_ID_NOT_FOUND")]
#[case(ErrorCode::MemberIdRequired, 79, "MEMBER_ID_REQUIRED")]
#[case(ErrorCode::GroupMaxSizeReached, 81, "GROUP_MAX_SIZE_REACHED")]
#[case(ErrorCode::FencedInstanceId, 82, "FENCED_INSTANCE_ID")]
#[case(ErrorCode::GroupSubscribedToTopic, 86, "GROUP_SUBSCRIBED_TO_TOPIC")]
#[case(ErrorCode::UnstableOffsetCommit, 88, "UNSTABLE_OFFSET_COMMIT")]
#[case(ErrorCode::UnknownTopicId, 100, "UNKNOWN_TOPIC_ID")]
#[case(ErrorCode::InvalidRecordState, 121, "INVALID_RECORD_STATE")]
#[case(ErrorCode::ShareSessionNotFound, 122, "SHARE_SESSION_NOT_FOUND")]
#[case(ErrorCode::InvalidShareSessionEpoch, 123, "INVALID_SHARE_SESSION_EPOCH")]
#[case(ErrorCode::ShareSessionLimitReached, 133, "SHARE_SESSION_LIMIT_REACHED")]
fn kafka_number_and_name(#[case] code: ErrorCode, #[case] number: i16, #[case] name: &str) {
    assert_eq!(code.code(), number);
    assert_eq!(ErrorCode::from_code(number), code);
    assert_eq!(ErrorCode::try_from_code(number), Some(code));
    assert_eq!(code.to_string(), name);
    assert_eq!(i16::from(code), number);
}

#[rstest]
#[case(-2)]
#[case(1)]
#[case(2)]
#[case(99)]
#[case(i16::MAX)]
#[case(i16::MIN)]
fn unknown_numbers_map_to_unknown_server_error(#[case] number: i16) {
    assert_eq!(ErrorCode::try_from_code(number), None);
    assert_eq!(ErrorCode::from_code(number), ErrorCode::UnknownServerError);
    assert_eq!(ErrorCode::from(number), ErrorCode::UnknownServerError);
}

#[test]
fn every_code_round_trips_and_numbers_are_distinct() {
    let mut seen = std::collections::HashSet::new();
    for &code in ErrorCode::ALL {
        assert!(seen.insert(code.code()), "{code} repeats a number");
        assert_eq!(ErrorCode::from_code(code.code()), code);
    }
    assert!(ErrorCode::ALL.windows(2).all(|w| w[0].code() < w[1].code()), "ALL is ascending");
}

#[test]
fn only_none_is_ok() {
    for &code in ErrorCode::ALL {
        assert_eq!(code.is_ok(), code == ErrorCode::None, "{code}");
    }
    assert_eq!(ErrorCode::default(), ErrorCode::None);
}

#[test]
fn group_error_displays_code_and_message() {
    let err = GroupError::new(ErrorCode::IllegalGeneration, "generation 3 is not 4");
    assert_eq!(err.to_string(), "ILLEGAL_GENERATION: generation 3 is not 4");
    assert_eq!(err.code.code(), 22);
}
