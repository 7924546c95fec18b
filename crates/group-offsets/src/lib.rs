//! Offset storage for a Kafka-compatible group coordinator: the storage
//! contracts, memory and persistent storage, the offset manager, and Kafka's
//! offset rules (KIP-211 retention, the metadata size limit) as plain functions.
//!
//! # Brief overview
//!
//! - [`MetadataStore`] is the one trait a storage engine implements: an
//!   ordered log of [`Record`]s per [`CoordinatorPartition`] (as Kafka's
//!   `__consumer_offsets` partitions). [`append`](MetadataStore::append) is
//!   atomic, durable on `Ok`, applied and completed in call order within a
//!   partition, and may complete later on another thread;
//!   [`load`](MetadataStore::load) returns one partition's groups and its
//!   [`OwnerEpoch`]. The engine keeps the highest epoch each partition
//!   accepted and refuses a lower one with [`StorageError::Fenced`], so a
//!   deposed coordinator cannot write. The seed's per-offset methods
//!   (`store_group_offset`, `fetch_group_offset(s)`, `delete_group_offsets`)
//!   and `load_all` are provided on top.
//! - [`MemoryMetadataStore`] implements it in memory, with fault injection
//!   and hooks that hold appends back and release them (for tests of writes
//!   that complete late); `group-storage-sled` implements it on disk.
//! - [`OffsetStorage`] is offsets and group records for users who need nothing
//!   else: one call, one answer. [`PersistentOffsetStorage`] is its one
//!   implementation, over any `MetadataStore` (optionally with a read cache),
//!   and [`MemoryOffsetStorage`] is that over memory.
//! - [`OffsetManager`] validates and commits offsets over any `OffsetStorage`:
//!   [`NO_OFFSET`] (-1) for nothing committed, per-partition
//!   [`OffsetError::MetadataTooLarge`], [`validate_offset`].
//! - [`expired_offsets`] is KIP-211 retention, data in and data out;
//!   [`validate_metadata`] is the `offset.metadata.max.bytes` check, counted in
//!   UTF-16 code units as Kafka does.
//! - [`GroupMetadataRecord`] is what is persisted about a group;
//!   [`StorageError`] is a failure of storage itself.
//! - [`Fold`] (and [`fold`]) is the one fold of records into what a partition
//!   holds ([`StoredGroups`]): later records win, tombstones remove. The
//!   memory store keeps one per partition and every engine folds what it
//!   reads back. [`codec`] is the one record encoding (a version byte, then
//!   the record) every engine stores.
//! - With the `conformance` feature, [`conformance`](crate#conformance) holds
//!   the checks every `MetadataStore` and `OffsetStorage` must pass.
//!
//! # Who should depend on this crate
//!
//! The coordinator (appending records to the partitions it owns, through
//! [`MetadataStore`]), storage engines (implementing it, and running the
//! conformance suite in their tests), and anyone who needs offsets or Kafka's
//! offset rules without a coordinator ([`OffsetStorage`]). It
//! depends only on `group-types`, spawns no thread and reads no clock: every
//! time is an argument.
//!
//! # Differences from the seed's Go API
//!
//! The names are the seed's (`api-contract.md`); the shapes are Rust's. Storage
//! methods return `Result<Option<_>, StorageError>` instead of `(nil, nil)`
//! pairs. `OffsetManager::commit_offset` takes a whole [`OffsetAndMetadata`]
//! (commit time, leader epoch, expiry) instead of `(offset, metadata)` and
//! reading the clock itself, `get_all_offsets` returns a
//! [`PartitionMap`]`<i64>`, and `validate_offset` returns a typed
//! [`OffsetError`]. Storage handles are shared as `Arc<dyn OffsetStorage>` (or
//! any `Arc`/`Box`/`&` of a storage), not as pointers to mutable structs.
//! The seed's `MetadataStore` wrote one offset at a time; here an engine
//! implements atomic record appends and loads per coordinator partition,
//! fenced by owner epochs, and the seed's per-offset methods are provided on
//! top of them.
//!
//! [`OffsetAndMetadata`]: group_types::OffsetAndMetadata
//! [`PartitionMap`]: group_types::PartitionMap
//!
//! # Conformance
//!
//! `group_offsets::conformance` (feature `conformance`, meant for
//! dev-dependencies) has `metadata_store_suite`, `metadata_store_restart_suite`
//! and `offset_storage_suite`: run them against an implementation to check
//! byte-exact round trips, replacement and tombstones, atomic appends, order
//! within a partition, partition-scoped loads, epoch fencing, concurrent use
//! and, over a reopened store, durability of records and epochs.
//!
//! # Example
//!
//! A coordinator's view: a new owner appends with a higher epoch, which fences
//! the old one; then the offsets-only view of the same store, with a commit
//! where one partition's metadata is too long and a retention pass after the
//! group emptied.
//!
//! ```
//! use std::sync::Arc;
//!
//! use group_offsets::{
//!     DEFAULT_OFFSETS_RETENTION_MS, MemoryMetadataStore, MetadataStore, OffsetError, OffsetManager,
//!     OwnerEpoch, PersistentOffsetStorage, Record, RetentionGroup, StorageError,
//! };
//! use group_types::{GroupState, OffsetAndMetadata, TopicPartition};
//!
//! let store = MemoryMetadataStore::new();
//! let now = 1_700_000_000_000;
//! let p = store.partition_of("billing");
//! let commit = |offset| Record::Offset {
//!     group_id: Arc::from("billing"),
//!     partition: TopicPartition::new("orders", 0),
//!     offset: OffsetAndMetadata::new(offset, now),
//! };
//! store.append_blocking(p, OwnerEpoch(1), vec![commit(5)])?;
//! store.append_blocking(p, OwnerEpoch(2), vec![commit(6)])?;
//! let stale = store.append_blocking(p, OwnerEpoch(1), vec![commit(7)]);
//! assert!(matches!(stale, Err(StorageError::Fenced { epoch: 1, current: 2, .. })));
//! assert_eq!(store.load(p)?.epoch, OwnerEpoch(2));
//! assert_eq!(store.fetch_group_offset("billing", "orders", 0)?.map(|o| o.offset), Some(6));
//!
//! let manager = OffsetManager::new(PersistentOffsetStorage::new(store.clone()));
//! let ok = OffsetAndMetadata::new(10, now);
//! let too_long = OffsetAndMetadata { metadata: "x".repeat(5000).into(), ..OffsetAndMetadata::new(20, now) };
//! let results = manager.commit_offsets(
//!     "billing",
//!     &[(TopicPartition::new("orders", 0), ok), (TopicPartition::new("orders", 1), too_long)],
//! );
//! assert!(results[0].1.is_ok());
//! assert!(matches!(results[1].1, Err(OffsetError::MetadataTooLarge { length: 5000, .. })));
//! assert_eq!(manager.get_offset("billing", &TopicPartition::new("orders", 1))?, -1);
//!
//! // The group emptied at `now`: its offsets go together, 7 days later.
//! let group = RetentionGroup::new(GroupState::Empty, Some(now)).with_protocol_type("consumer");
//! let week = DEFAULT_OFFSETS_RETENTION_MS;
//! assert!(manager.expire_offsets("billing", &group, now + week - 1, week)?.is_empty());
//! assert_eq!(manager.expire_offsets("billing", &group, now + week, week)?.len(), 1);
//! assert_eq!(manager.get_offset("billing", &TopicPartition::new("orders", 0))?, -1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod assignment_epochs;
pub mod codec;
mod error;
mod fold;
mod manager;
mod memory;
mod memory_store;
mod metadata_limit;
mod modern_records;
mod partition;
mod partition_offsets;
mod persistent;
mod records;
mod retention;
mod shards;
mod storage;
#[cfg(test)]
mod test_records;

#[cfg(feature = "conformance")]
pub mod conformance;

pub use crate::assignment_epochs::{AssignmentEpochs, EpochRun};
pub use crate::error::{EngineCause, IoCause, OffsetError, Shared, StorageError};
pub use crate::fold::{Fold, fold};
pub use crate::manager::{CommitResults, NO_OFFSET, OffsetManager, validate_offset};
pub use crate::memory::MemoryOffsetStorage;
pub use crate::memory_store::MemoryMetadataStore;
pub use crate::metadata_limit::{DEFAULT_OFFSET_METADATA_MAX_BYTES, metadata_length, validate_metadata};
pub use crate::modern_records::{
    ClassicMemberMetadata, ConsumerGroupMetadataValue, ConsumerMemberMetadataValue,
    CurrentMemberAssignmentValue, ModernGroupRecord, RegularExpressionValue, ShareMemberAssignmentValue,
    ShareMemberMetadataValue, ShareStatePartitionMetadataValue, ShareTopicPartitions,
    TargetAssignmentMetadataValue, record_type,
};
pub use crate::partition_offsets::PartitionOffsets;
pub use crate::persistent::PersistentOffsetStorage;
pub use crate::records::{GroupMetadataRecord, MemberMetadataRecord, TxnOffsetRecord};
// The share coordinator's types a `ModernGroupRecord::ShareState` holds, so that an
// engine names them through the crate whose records they are.
pub use crate::retention::{
    CONSUMER_PROTOCOL_TYPE, DEFAULT_OFFSETS_RETENTION_MS, ExpirationRule, RetentionGroup, TopicSet,
    expired_offsets, retention_ms_from_minutes,
};
pub use crate::storage::{
    AppendCompletion, CoordinatorPartition, DEFAULT_COORDINATOR_PARTITIONS, LoadedPartition, MetadataStore,
    OffsetStorage, OwnerEpoch, Record, StoredGroups,
};
pub use group_share_coordinator::{SharePartitionKey, SharePartitionState, ShareSnapshotValue};
