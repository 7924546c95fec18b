//! Kafka's share coordinator (KIP-932's `share-coordinator` module) as a
//! deterministic state machine: the persisted state of share partitions (state
//! epoch, leader epoch, start offset, delivery complete count and state batches),
//! the records that carry it in `__share_group_state`, and their replay.
//!
//! # Brief overview
//!
//! - [`ShareCoordinatorShard`] holds the share partitions routed to one partition
//!   of `__share_group_state`. Its operations (`initialize_state`, `write_state`,
//!   `read_state`, `read_state_summary`, `delete_state`, `snapshot_cold_partitions`,
//!   `maybe_cleanup_share_state`) take one share partition and return a
//!   [`ShardResult`]: the answer and the [`ShareRecord`]s to append. State changes
//!   only by [`ShareCoordinatorShard::replay`], which is also how a partition loads.
//! - [`combine_state_batches`] is Kafka's `PersisterStateBatchCombiner`.
//! - [`SharePartitionKey`] names a share partition and routes it to its partition
//!   of `__share_group_state` as Kafka does (FindCoordinator key type 2).
//! - [`split_write`] and its siblings split a multi-partition request into
//!   [`ShardCall`]s with the service's checks; [`merge_answers`] merges the answers.
//!   [`ShareCoordinatorService`] drives hosted shards with them, every record
//!   appended at once, for callers without a runtime.
//! - [`ShareCoordinatorConfig`] holds the `share.coordinator.*` settings.
//!
//! # Who should depend on this crate
//!
//! A runtime that hosts the share coordinator beside the group coordinator, and a
//! broker that wants Kafka's share-state rules without the JVM. It depends only on
//! `group-types`: no I/O, no threads, no clock (time is an argument, `now_ms`), no
//! record codec (records are Rust values).
//!
//! # Example
//!
//! Initialize a share partition, write a batch, read it back, replaying each record
//! as a runtime would once it is written:
//!
//! ```
//! use group_share_coordinator::{ShareCoordinatorConfig, ShareCoordinatorShard, TopicsImage};
//! use group_types::{
//!     ErrorCode, GroupId, InitializeStatePartition, ReadStatePartition, StateBatch, TopicId,
//!     WriteStatePartition,
//! };
//!
//! let topic = TopicId::from_u128(1);
//! let group = GroupId::from("g");
//! let mut shard = ShareCoordinatorShard::new(ShareCoordinatorConfig::default());
//! shard.on_loaded(TopicsImage::new([(topic, 3)]));
//! let mut offset = 0;
//!
//! let init = InitializeStatePartition { partition: 0, state_epoch: 0, start_offset: 0 };
//! for record in shard.initialize_state(0, &group, Some(topic), &init).records {
//!     shard.replay(offset, &record);
//!     offset += 1;
//! }
//! let write = WriteStatePartition {
//!     partition: 0,
//!     leader_epoch: 0,
//!     state_batches: vec![StateBatch::new(0, 9, 2, 1)],
//!     ..WriteStatePartition::default()
//! };
//! let written = shard.write_state(10, &group, Some(topic), &write);
//! assert_eq!(written.response.result.error_code, ErrorCode::None);
//! for record in written.records {
//!     shard.replay(offset, &record);
//!     offset += 1;
//! }
//! let read = shard.read_state(20, &group, Some(topic), &ReadStatePartition { partition: 0, leader_epoch: 0 });
//! assert_eq!(read.response.result.state_batches, [StateBatch::new(0, 9, 2, 1)]);
//! assert!(read.records.is_empty());
//! ```

mod combiner;
mod config;
mod error;
mod key;
mod offsets;
mod record;
mod service;
mod shard;

pub use crate::combiner::combine_state_batches;
pub use crate::config::{Setting, ShareCoordinatorConfig};
pub use crate::error::{ConfigError, KeyError};
pub use crate::key::SharePartitionKey;
pub use crate::record::{ShareRecord, ShareSnapshotValue, ShareUpdateValue};
pub use crate::service::{
    AppendedRecord, NOT_AVAILABLE_MESSAGE, PartitionAnswer, PartitionIndexed, ServiceResult, ShardCall,
    ShareCoordinatorService, Split, merge_answers, split_delete, split_initialize, split_read,
    split_read_summary, split_write,
};
pub use crate::shard::{
    NEGATIVE_PARTITION_ID_MESSAGE, NULL_TOPIC_ID_MESSAGE, PartitionReply, READ_UNINITIALIZED_MESSAGE,
    ShardResult, ShareCoordinatorShard, SharePartitionState, TopicsImage, WRITE_UNINITIALIZED_MESSAGE,
    default_error_message,
};
