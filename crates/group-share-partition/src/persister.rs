//! The persister side of a share partition (Kafka's `Persister` seam): what it reads
//! at initialization and what it writes after every state change, as plain data the
//! caller carries to the share coordinator and back.

use group_types::{GroupId, TopicId};

use crate::error::ShareError;

/// The start offset a read answers when the share coordinator has none yet
/// (Kafka's `PartitionFactory.UNINITIALIZED_START_OFFSET`).
pub const UNINITIALIZED_START_OFFSET: i64 = -1;

/// A run of offsets in one delivery state (Kafka's `PersisterStateBatch`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PersisterStateBatch {
    /// The first offset of the run.
    pub first_offset: i64,
    /// The last offset of the run.
    pub last_offset: i64,
    /// The [`RecordState`](crate::RecordState) id of every offset in the run.
    pub delivery_state: u8,
    /// How many times the offsets were delivered.
    pub delivery_count: i16,
}

impl PersisterStateBatch {
    /// The run `first_offset..=last_offset`.
    pub const fn new(first_offset: i64, last_offset: i64, delivery_state: u8, delivery_count: i16) -> Self {
        PersisterStateBatch { first_offset, last_offset, delivery_state, delivery_count }
    }
}

/// What a share partition asks the persister to read (Kafka's
/// `ReadShareGroupStateParameters`, for one partition).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadShareGroupStateParameters {
    /// The share group.
    pub group_id: GroupId,
    /// The topic.
    pub topic_id: TopicId,
    /// The partition.
    pub partition: i32,
    /// The leader epoch of the partition on this broker.
    pub leader_epoch: i32,
}

/// The persister's answer for one partition (Kafka's `PartitionAllData` inside a
/// `ReadShareGroupStateResult`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadShareGroupStateResult {
    /// The topic answered for.
    pub topic_id: TopicId,
    /// The partition answered for.
    pub partition: i32,
    /// 0, or the Kafka error code of the read.
    pub error_code: i16,
    /// The state epoch.
    pub state_epoch: i32,
    /// The share-partition start offset, or [`UNINITIALIZED_START_OFFSET`].
    pub start_offset: i64,
    /// The stored state batches, in offset order.
    pub state_batches: Vec<PersisterStateBatch>,
}

/// What a share partition asks the persister to write (Kafka's
/// `WriteShareGroupStateParameters`, for one partition).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteShareGroupStateParameters {
    /// The share group.
    pub group_id: GroupId,
    /// The topic.
    pub topic_id: TopicId,
    /// The partition.
    pub partition: i32,
    /// The state epoch read at initialization.
    pub state_epoch: i32,
    /// The share-partition start offset when the write was made.
    pub start_offset: i64,
    /// How many records at or past the start offset are acknowledged or archived
    /// (KIP-1226's lag).
    pub delivery_complete_count: i32,
    /// The leader epoch of the partition on this broker.
    pub leader_epoch: i32,
    /// The changed runs.
    pub state_batches: Vec<PersisterStateBatch>,
}

/// Identifies a write this partition issued, for [`complete_write`](crate::SharePartition::complete_write).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WriteId(pub u64);

/// What caused a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WriteCause {
    /// An acknowledgement: applied only if the write succeeds, rolled back if not.
    Acknowledge,
    /// A member's acquired records released when it left: as an acknowledgement.
    Release,
    /// Expired acquisition locks: Kafka applies these at once and keeps them even if
    /// the write fails.
    LockTimeout,
}

/// A write the caller must send to the share coordinator and report back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingWrite {
    /// The id to complete it by.
    pub id: WriteId,
    /// Why it was made.
    pub cause: WriteCause,
    /// The WriteShareGroupState request for this partition.
    pub parameters: WriteShareGroupStateParameters,
}

/// How a persister call went, as the caller reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PersisterFailure {
    /// The share coordinator answered with this Kafka error code.
    ErrorCode(i16),
    /// No usable answer (the request failed, or answered for another partition).
    NoAnswer,
}

impl PersisterFailure {
    /// The error a share partition answers for this failure.
    pub const fn to_error(&self) -> ShareError {
        match self {
            PersisterFailure::ErrorCode(code) => ShareError::from_persister_code(*code),
            PersisterFailure::NoAnswer => ShareError::Failed("the share group state write failed"),
        }
    }
}
