//! The one error type of the crate: what an acquire, acknowledge or write answers
//! instead of success, each with the Kafka error code a broker puts on the wire.

use thiserror::Error;

/// Why a share-partition call did not succeed.
///
/// The protocol outcomes (an acknowledgement of a record the member does not hold,
/// a persister that refused a write) carry the error code Kafka answers with
/// ([`ShareError::error_code`]); the rest are bad input from the caller.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ShareError {
    /// The records are not in a state that allows the request (Kafka's
    /// `InvalidRecordStateException`, `INVALID_RECORD_STATE`).
    #[error("invalid record state: {0}")]
    InvalidRecordState(&'static str),
    /// The request names offsets or types that cannot be (Kafka's
    /// `InvalidRequestException`, `INVALID_REQUEST`).
    #[error("invalid request: {0}")]
    InvalidRequest(&'static str),
    /// The partition is initializing or fenced (`LEADER_NOT_AVAILABLE`).
    #[error("share partition not available: {0}")]
    LeaderNotAvailable(&'static str),
    /// The partition failed to load, or the persister's answer was not usable
    /// (Kafka's `IllegalStateException`, `UNKNOWN_SERVER_ERROR`).
    #[error("share partition failed: {0}")]
    Failed(&'static str),
    /// The share coordinator is not reachable (`COORDINATOR_NOT_AVAILABLE`).
    #[error("share coordinator not available")]
    CoordinatorNotAvailable,
    /// The share coordinator does not know the group (`GROUP_ID_NOT_FOUND`).
    #[error("share group state not found")]
    GroupIdNotFound,
    /// The share coordinator does not know the partition (`UNKNOWN_TOPIC_OR_PARTITION`).
    #[error("share partition state not found")]
    UnknownTopicOrPartition,
    /// The state or leader epoch was fenced (`NOT_LEADER_OR_FOLLOWER`).
    #[error("share partition fenced by the share coordinator")]
    NotLeaderOrFollower,
    /// Any other persister failure (`UNKNOWN_SERVER_ERROR`).
    #[error("share state write failed")]
    UnknownServerError,
    /// A state batch named a delivery state Kafka does not define.
    #[error("unknown record state id {0}")]
    UnknownRecordState(u8),
    /// The fetched batches were not in offset order, overlapped, or ended before
    /// they began.
    #[error("fetched batches are not ordered, disjoint offset ranges")]
    BadFetchedBatches,
    /// A setting is out of range.
    #[error("invalid share partition setting: {0}")]
    InvalidConfig(&'static str),
    /// The read named no start offset and the caller resolved none
    /// (`share.auto.offset.reset`).
    #[error("the persisted state has no start offset and none was resolved")]
    StartOffsetUnresolved,
    /// The write id was not issued by this partition or was already completed.
    #[error("unknown or completed write")]
    UnknownWrite,
}

impl ShareError {
    /// The Kafka error code a broker answers with.
    pub const fn error_code(&self) -> i16 {
        match self {
            ShareError::InvalidRecordState(_) => 121,
            ShareError::InvalidRequest(_) => 42,
            ShareError::LeaderNotAvailable(_) => 5,
            ShareError::CoordinatorNotAvailable => 15,
            ShareError::GroupIdNotFound => 69,
            ShareError::UnknownTopicOrPartition => 3,
            ShareError::NotLeaderOrFollower => 6,
            ShareError::Failed(_)
            | ShareError::UnknownServerError
            | ShareError::UnknownRecordState(_)
            | ShareError::BadFetchedBatches
            | ShareError::InvalidConfig(_)
            | ShareError::StartOffsetUnresolved
            | ShareError::UnknownWrite => -1,
        }
    }

    /// The error a persister's error code becomes (Kafka's
    /// `SharePartition.fetchPersisterError`).
    pub const fn from_persister_code(code: i16) -> ShareError {
        match code {
            // NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS.
            14..=16 => ShareError::CoordinatorNotAvailable,
            69 => ShareError::GroupIdNotFound,
            3 => ShareError::UnknownTopicOrPartition,
            // FENCED_LEADER_EPOCH, FENCED_STATE_EPOCH.
            74 | 124 => ShareError::NotLeaderOrFollower,
            _ => ShareError::UnknownServerError,
        }
    }
}
