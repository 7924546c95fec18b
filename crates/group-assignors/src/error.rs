//! The typed errors an assignment or a registration can fail with.

use group_types::TopicPartition;

/// Why an assignor refused its input, or why a registration was refused.
///
/// Bad input never panics and never yields a silently wrong assignment: it
/// gets one of these variants. More variants may be added, so match with a
/// wildcard arm.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AssignError {
    /// Two members share a member id; the output is keyed by member id, so it
    /// could not say which partitions belong to which of them.
    #[error("duplicate member id {member_id:?}")]
    DuplicateMember {
        /// The repeated member id.
        member_id: String,
    },
    /// A partition is listed twice in the cluster metadata.
    #[error("partition {partition} is listed twice")]
    DuplicatePartition {
        /// The repeated partition.
        partition: TopicPartition,
    },
    /// A partition number is negative; Kafka numbers partitions from 0.
    #[error("partition {partition} has a negative partition number")]
    NegativePartition {
        /// The offending partition.
        partition: TopicPartition,
    },
    /// More partitions than the assignors' 32-bit indices can address (about 4 billion).
    #[error("{count} partitions are more than an assignment can index")]
    TooManyPartitions {
        /// How many partitions were passed.
        count: usize,
    },
    /// The replica-rack list passed to [`assign_with_racks`](crate::PartitionAssignor::assign_with_racks)
    /// is neither empty nor parallel to the partition list.
    #[error("{racks} replica-rack entries for {partitions} partitions (must be 0 or equal)")]
    RackListLengthMismatch {
        /// Length of the partition list.
        partitions: usize,
        /// Length of the replica-rack list.
        racks: usize,
    },
    /// Sticky user data that is not a valid `StickyAssignorUserData` v0 or v1 blob.
    #[error("invalid sticky assignor user data: {reason}")]
    InvalidUserData {
        /// What was wrong with the bytes.
        reason: &'static str,
    },
    /// [`register_assignor`](crate::register_assignor) was given an assignor whose name is empty.
    #[error("an assignor name must not be empty")]
    InvalidAssignorName,
    /// [`register_assignor`](crate::register_assignor) was given a name already in use
    /// (a built-in name or one registered before).
    #[error("an assignor named {name:?} is already registered")]
    AssignorAlreadyRegistered {
        /// The name already taken.
        name: String,
    },
}
