//! `CoordinatorError`: failures of the coordinator itself (not protocol outcomes).

use group_offsets::{CoordinatorPartition, IoCause, OwnerEpoch, StorageError};

/// A failure of the coordinator itself. Protocol outcomes (unknown member, stale
/// generation, rebalance in progress) are never errors: they are the `error_code`
/// of the response, exactly as Kafka puts them on the wire.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CoordinatorError {
    /// The coordinator was stopped; the request was not (or no longer) served.
    #[error("the group coordinator is stopped")]
    Stopped,
    /// Storage failed while loading what it holds.
    #[error("storage failed: {0}")]
    Storage(#[from] StorageError),
    /// `perform_assignment` was asked about a group that does not exist.
    #[error("group {0:?} does not exist")]
    UnknownGroup(String),
    /// `perform_assignment` was asked about a group that has no selected protocol
    /// (it is Empty or still in its first join phase).
    #[error("group {0:?} has no selected protocol yet")]
    NoSelectedProtocol(String),
    /// The group's selected protocol names no assignor this build knows.
    #[error("group {group_id:?} selected protocol {protocol:?}, which names no known assignor")]
    UnknownAssignor {
        /// The group.
        group_id: String,
        /// The protocol name.
        protocol: String,
    },
    /// A member's subscription could not be decoded as a consumer-protocol subscription.
    #[error("member {member_id:?} of group {group_id:?} has an undecodable subscription: {reason}")]
    InvalidSubscription {
        /// The group.
        group_id: String,
        /// The member.
        member_id: String,
        /// The codec's message.
        reason: String,
    },
    /// The assignor refused the input.
    #[error("assignor {protocol:?} failed: {reason}")]
    Assignment {
        /// The protocol (assignor) name.
        protocol: String,
        /// The assignor's message.
        reason: String,
    },
    /// An invariant of the coordinator broke (a bug): the message says which.
    #[error("internal error: {0}")]
    Internal(&'static str),
    /// `load_partition` could not fence older owners or read the partition
    /// (`source` is [`StorageError::Fenced`] when a node with an epoch at least as
    /// high owns it): the partition is unowned again.
    #[error("could not load {partition} at owner epoch {}: {source}", .epoch.0)]
    LoadFailed {
        /// The partition.
        partition: CoordinatorPartition,
        /// The epoch it was to be loaded at.
        epoch: OwnerEpoch,
        /// What storage said.
        source: StorageError,
    },
    /// An unload or another load of the same partition came while
    /// `load_partition` was reading it: the later call won, and this load
    /// installed nothing.
    #[error("the load of {partition} at owner epoch {} was overtaken by a later unload or load of it", .epoch.0)]
    LoadSuperseded {
        /// The partition.
        partition: CoordinatorPartition,
        /// The epoch it was to be loaded at.
        epoch: OwnerEpoch,
    },
    /// A partition the coordinator does not have (it has `partitions`, the
    /// storage's partition count).
    #[error("{partition} does not exist: the coordinator has {partitions} partitions")]
    UnknownPartition {
        /// The partition asked for.
        partition: CoordinatorPartition,
        /// How many there are.
        partitions: u32,
    },
    /// The coordinator's timer thread could not be started.
    #[error("could not start the timer thread: {0}")]
    Thread(#[source] IoCause),
    /// A consumer-group setting breaks Kafka's bounds (`ConsumerGroupConfig::validate`).
    #[error(transparent)]
    InvalidConfig(#[from] crate::BadConsumerGroupConfig),
    /// The per-group configs could not be read at open.
    #[error("could not load the group configs: {0}")]
    GroupConfigs(#[from] crate::GroupConfigStoreError),
}
