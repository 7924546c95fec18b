//! Kafka's numeric error codes, as the classic group coordinator returns them.

use std::fmt;

use serde::{Deserialize, Serialize};

macro_rules! error_codes {
    ($($(#[$doc:meta])* $variant:ident = $code:literal, $name:literal;)*) => {
        /// A Kafka protocol error code (`i16` on the wire).
        ///
        /// Covers every code the classic group coordinator returns, the broker-level
        /// codes an embedding server puts next to them (authorization, unknown topic),
        /// and the storage errors the coordinator maps into coordinator errors
        /// (`kafka-semantics.md` §6.7). [`ErrorCode::from_code`] maps a number Kafka
        /// does not define here to [`ErrorCode::UnknownServerError`], as Kafka's own
        /// `Errors.forCode` does.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        #[derive(Serialize, Deserialize)]
        #[non_exhaustive]
        pub enum ErrorCode {
            $($(#[$doc])* $variant,)*
        }

        impl ErrorCode {
            /// Every code this type knows, in ascending numeric order.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)*];

            /// The numeric value Kafka puts on the wire.
            pub const fn code(self) -> i16 {
                match self {
                    $(ErrorCode::$variant => $code,)*
                }
            }

            /// The code for a wire value, or `None` when this type does not know it.
            pub const fn try_from_code(code: i16) -> Option<ErrorCode> {
                match code {
                    $($code => Some(ErrorCode::$variant),)*
                    _ => None,
                }
            }

            /// Kafka's upper-case name, as in `Errors.java` (`REBALANCE_IN_PROGRESS`).
            pub const fn name(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $name,)*
                }
            }
        }
    };
}

error_codes! {
    /// -1: an unexpected failure; also what an unknown numeric code decodes to.
    UnknownServerError = -1, "UNKNOWN_SERVER_ERROR";
    /// 0: success.
    #[default]
    None = 0, "NONE";
    /// 3: the topic or partition does not exist (broker-level, per partition).
    UnknownTopicOrPartition = 3, "UNKNOWN_TOPIC_OR_PARTITION";
    /// 4: an append failed with an invalid fetch size (mapped before it reaches a client).
    InvalidFetchSize = 4, "INVALID_FETCH_SIZE";
    /// 6: the log append hit a leader change (mapped to `NOT_COORDINATOR`).
    NotLeaderOrFollower = 6, "NOT_LEADER_OR_FOLLOWER";
    /// 7: an append timed out.
    RequestTimedOut = 7, "REQUEST_TIMED_OUT";
    /// 10: a record was too large to append.
    MessageTooLarge = 10, "MESSAGE_TOO_LARGE";
    /// 12: commit metadata longer than `offset.metadata.max.bytes`.
    OffsetMetadataTooLarge = 12, "OFFSET_METADATA_TOO_LARGE";
    /// 13: a network failure (transaction verification input).
    NetworkException = 13, "NETWORK_EXCEPTION";
    /// 14: the coordinator is still loading the group's state.
    CoordinatorLoadInProgress = 14, "COORDINATOR_LOAD_IN_PROGRESS";
    /// 15: the coordinator is not active, or the group is Dead.
    CoordinatorNotAvailable = 15, "COORDINATOR_NOT_AVAILABLE";
    /// 16: this node does not own the group.
    NotCoordinator = 16, "NOT_COORDINATOR";
    /// 18: a record batch was too large to append.
    RecordListTooLarge = 18, "RECORD_LIST_TOO_LARGE";
    /// 19: not enough in-sync replicas for the append.
    NotEnoughReplicas = 19, "NOT_ENOUGH_REPLICAS";
    /// 20: the append was written but not enough replicas acknowledged it.
    NotEnoughReplicasAfterAppend = 20, "NOT_ENOUGH_REPLICAS_AFTER_APPEND";
    /// 22: the request's generation is not the group's.
    IllegalGeneration = 22, "ILLEGAL_GENERATION";
    /// 23: protocol type or protocol names do not match the group's.
    InconsistentGroupProtocol = 23, "INCONSISTENT_GROUP_PROTOCOL";
    /// 24: the group id is empty where it may not be.
    InvalidGroupId = 24, "INVALID_GROUP_ID";
    /// 25: the member (or instance) is not in the group.
    UnknownMemberId = 25, "UNKNOWN_MEMBER_ID";
    /// 26: the session timeout is outside the broker's bounds.
    InvalidSessionTimeout = 26, "INVALID_SESSION_TIMEOUT";
    /// 27: the group is rebalancing; the member must rejoin.
    RebalanceInProgress = 27, "REBALANCE_IN_PROGRESS";
    /// 28: an offset-commit batch was too large.
    InvalidCommitOffsetSize = 28, "INVALID_COMMIT_OFFSET_SIZE";
    /// 29: the caller may not read the topic.
    TopicAuthorizationFailed = 29, "TOPIC_AUTHORIZATION_FAILED";
    /// 30: the caller may not use the group.
    GroupAuthorizationFailed = 30, "GROUP_AUTHORIZATION_FAILED";
    /// 31: the caller may not perform the operation on the cluster (an
    /// inter-broker RPC without CLUSTER_ACTION).
    ClusterAuthorizationFailed = 31, "CLUSTER_AUTHORIZATION_FAILED";
    /// 35: the request version is not supported.
    UnsupportedVersion = 35, "UNSUPPORTED_VERSION";
    /// 40: a config value (or name) is not valid (DescribeConfigs and
    /// IncrementalAlterConfigs of GROUP resources).
    InvalidConfig = 40, "INVALID_CONFIG";
    /// 42: the request is malformed.
    InvalidRequest = 42, "INVALID_REQUEST";
    /// 53: the caller may not use the transactional id (TxnOffsetCommit without
    /// WRITE on it).
    TransactionalIdAuthorizationFailed = 53, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED";
    /// 56: the log directory failed (mapped to `NOT_COORDINATOR`).
    KafkaStorageError = 56, "KAFKA_STORAGE_ERROR";
    /// 68: the group still has members.
    NonEmptyGroup = 68, "NON_EMPTY_GROUP";
    /// 69: the group does not exist.
    GroupIdNotFound = 69, "GROUP_ID_NOT_FOUND";
    /// 74: a share-state write or read carried a leader epoch below the one the share
    /// coordinator holds for the share partition (KIP-932).
    FencedLeaderEpoch = 74, "FENCED_LEADER_EPOCH";
    /// 79: a new dynamic member must rejoin with the member id it was given (KIP-394).
    MemberIdRequired = 79, "MEMBER_ID_REQUIRED";
    /// 81: the group already holds `group.max.size` members.
    GroupMaxSizeReached = 81, "GROUP_MAX_SIZE_REACHED";
    /// 82: the static instance id now belongs to another member id.
    FencedInstanceId = 82, "FENCED_INSTANCE_ID";
    /// 86: OffsetDelete on a topic the group still subscribes to.
    GroupSubscribedToTopic = 86, "GROUP_SUBSCRIBED_TO_TOPIC";
    /// 88: a `require_stable` fetch found an unacknowledged commit.
    UnstableOffsetCommit = 88, "UNSTABLE_OFFSET_COMMIT";
    /// 100: a request named a topic id the server does not know.
    UnknownTopicId = 100, "UNKNOWN_TOPIC_ID";
    /// 110: a consumer-protocol member's epoch is not the coordinator's (KIP-848): it
    /// must rejoin with epoch 0 and the same member id.
    FencedMemberEpoch = 110, "FENCED_MEMBER_EPOCH";
    /// 111: a static instance id is still held by a member that did not leave with -2.
    UnreleasedInstanceId = 111, "UNRELEASED_INSTANCE_ID";
    /// 112: the requested server-side assignor is not configured.
    UnsupportedAssignor = 112, "UNSUPPORTED_ASSIGNOR";
    /// 113: an offset commit or fetch carried an epoch that is not the member's current one.
    StaleMemberEpoch = 113, "STALE_MEMBER_EPOCH";
    /// 121: a share acknowledgement named records that are not in a state it can
    /// change (never acquired, or acquired by another member) (KIP-932).
    InvalidRecordState = 121, "INVALID_RECORD_STATE";
    /// 122: ShareFetch or ShareAcknowledge named a share session the broker does not hold.
    ShareSessionNotFound = 122, "SHARE_SESSION_NOT_FOUND";
    /// 123: the share session epoch is not the session's next one.
    InvalidShareSessionEpoch = 123, "INVALID_SHARE_SESSION_EPOCH";
    /// 124: a share-state initialize or write carried a state epoch below the share
    /// partition's (KIP-932).
    FencedStateEpoch = 124, "FENCED_STATE_EPOCH";
    /// 128: a subscription's regular expression does not compile.
    InvalidRegularExpression = 128, "INVALID_REGULAR_EXPRESSION";
    /// 133: the broker holds `group.share.max.share.sessions` share sessions already.
    ShareSessionLimitReached = 133, "SHARE_SESSION_LIMIT_REACHED";
}

impl ErrorCode {
    /// The code for a wire value; numbers this type does not know become
    /// [`ErrorCode::UnknownServerError`], as in Kafka's `Errors.forCode`.
    ///
    /// ```
    /// use group_types::ErrorCode;
    /// assert_eq!(ErrorCode::from_code(27), ErrorCode::RebalanceInProgress);
    /// assert_eq!(ErrorCode::from_code(9999), ErrorCode::UnknownServerError);
    /// ```
    pub const fn from_code(code: i16) -> ErrorCode {
        match ErrorCode::try_from_code(code) {
            Some(known) => known,
            None => ErrorCode::UnknownServerError,
        }
    }

    /// True for [`ErrorCode::None`].
    pub const fn is_ok(self) -> bool {
        matches!(self, ErrorCode::None)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl From<ErrorCode> for i16 {
    fn from(code: ErrorCode) -> i16 {
        code.code()
    }
}

impl From<i16> for ErrorCode {
    fn from(code: i16) -> ErrorCode {
        ErrorCode::from_code(code)
    }
}

/// A failed group operation: a Kafka error code and a message for humans.
///
/// Protocol outcomes travel as [`ErrorCode`]s inside responses; this type is for
/// APIs that return `Result`, so a caller can still map the failure to the wire.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct GroupError {
    /// The Kafka error code to put on the wire.
    pub code: ErrorCode,
    /// What went wrong, for logs.
    pub message: String,
}

impl GroupError {
    /// An error with a code and a message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> GroupError {
        GroupError { code, message: message.into() }
    }
}
