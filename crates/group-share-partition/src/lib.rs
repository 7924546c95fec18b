//! A sans-I/O share partition (KIP-932): the in-flight records of one topic partition
//! for one share group, as a broker that serves share consumers keeps them (Kafka's
//! `SharePartition`).
//!
//! # Brief overview
//!
//! [`SharePartition`] is a state machine driven by its caller, a broker's fetch path:
//!
//! - **initialize**: [`begin_initialize`](SharePartition::begin_initialize) gives the
//!   read to send to the share coordinator, [`complete_initialize`](SharePartition::complete_initialize)
//!   takes its answer (and the offset `share.auto.offset.reset` resolves to, when the
//!   state has none);
//! - **fetch**: [`next_fetch_offset`](SharePartition::next_fetch_offset) says where to
//!   read the log, [`acquire`](SharePartition::acquire) takes the fetched batches'
//!   boundaries and transaction headers ([`FetchedBatch`]) and answers the
//!   [`AcquiredRecords`], each range locked for the record lock duration; under
//!   [`IsolationLevel::ReadCommitted`] the records of the fetch's
//!   [`AbortedTransaction`]s are archived instead;
//! - **acknowledge**: [`acknowledge`](SharePartition::acknowledge) (accept, release,
//!   reject, renew) and [`release_acquired_records`](SharePartition::release_acquired_records);
//! - **time**: [`next_lock_deadline`](SharePartition::next_lock_deadline) and
//!   [`expire_locks`](SharePartition::expire_locks);
//! - **the log**: [`update_cache_and_offsets`](SharePartition::update_cache_and_offsets)
//!   when the log start offset moves;
//! - **persisting**: every change Kafka writes comes back as a [`PendingWrite`] (a
//!   WriteShareGroupState request for this partition); the caller sends it and
//!   reports the outcome with [`complete_write`](SharePartition::complete_write). An
//!   acknowledgement shows at once, blocks other changes to its records, and is
//!   committed on success or rolled back on failure, as in Kafka.
//!
//!   Every write must be completed once: records an acknowledgement changed stay
//!   blocked until then.
//!
//! No threads, no timers, no clock: every call that needs the time takes `now_ms`.
//! The crate depends only on `group-types`, and not on the share coordinator's RPC
//! messages: the persister side is plain data ([`ReadShareGroupStateResult`],
//! [`WriteShareGroupStateParameters`], [`PersisterStateBatch`]) the caller maps to
//! whatever carries it.
//!
//! ```
//! use group_share_partition::{
//!     AcknowledgeType, AcknowledgementBatch, AcquireMode, AcquireRequest, AcquiredRecords,
//!     FetchedBatch, IsolationLevel, ReadShareGroupStateResult, SharePartition, SharePartitionConfig,
//! };
//! use group_types::{GroupId, MemberId, TopicId};
//!
//! let topic = TopicId::from_u128(7);
//! let mut sp = SharePartition::new(GroupId::from_static("g"), topic, 0, 0, SharePartitionConfig::default())?;
//! sp.begin_initialize()?;
//! let read = ReadShareGroupStateResult {
//!     topic_id: topic, partition: 0, error_code: 0, state_epoch: 1, start_offset: 0, state_batches: vec![],
//! };
//! sp.complete_initialize(Ok(read), None)?;
//!
//! let member = MemberId::from_static("m1");
//! let fetched = [FetchedBatch::new(0, 9)];
//! let request = AcquireRequest {
//!     mode: AcquireMode::BatchOptimized, batch_size: 500, max_fetch_records: 500,
//!     fetch_offset: sp.next_fetch_offset(), batches: &fetched,
//!     isolation: IsolationLevel::ReadUncommitted, aborted_transactions: &[],
//! };
//! let acquired = sp.acquire(&member, request, 1_000)?;
//! assert_eq!(acquired.records, vec![AcquiredRecords::new(0, 9, 1)]);
//!
//! let write = sp.acknowledge(&member, &[AcknowledgementBatch::new(0, 9, AcknowledgeType::Accept)], 1_100)?
//!     .expect("an accept is written");
//! let done = sp.complete_write(write.id, Ok(()))?;
//! assert!(done.result.is_ok());
//! assert_eq!(sp.start_offset(), 10);
//! # Ok::<(), group_share_partition::ShareError>(())
//! ```

mod aborted;
mod acknowledge;
mod acquire;
mod error;
mod in_flight;
mod lock;
mod partition;
mod persister;
mod start;
mod types;

pub use crate::acknowledge::WriteCompletion;
pub use crate::error::ShareError;
pub use crate::partition::{CachedBatch, RecordView, SharePartition};
pub use crate::persister::{
    PendingWrite, PersisterFailure, PersisterStateBatch, ReadShareGroupStateParameters,
    ReadShareGroupStateResult, UNINITIALIZED_START_OFFSET, WriteCause, WriteId,
    WriteShareGroupStateParameters,
};
pub use crate::types::{
    AbortedTransaction, AcknowledgeType, AcknowledgementBatch, AcquireMode, AcquireRequest, AcquiredRecords,
    ControlRecordType, FetchedBatch, GAP_ACKNOWLEDGE_TYPE, IsolationLevel, NO_PRODUCER_ID, PartitionState,
    RecordState, ShareAcquiredRecords, SharePartitionConfig,
};
