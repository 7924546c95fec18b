//! Offset storage for a Kafka-compatible group coordinator: the storage
//! contracts, memory and persistent storage, the offset manager, and Kafka's
//! offset rules (KIP-211 retention, the metadata size limit) as plain functions.
//!
//! # Brief overview
//!
//! - [`OffsetStorage`] is what the coordinator uses: offsets (one, all, an
//!   atomic multi-partition store, deletions) and group records.
//!   [`MemoryOffsetStorage`] implements it in memory, sharded by group so
//!   groups committing from many threads rarely wait for each other.
//! - [`MetadataStore`] is what a persistence engine implements, with a written
//!   durability promise. [`MemoryMetadataStore`] implements it in memory (with
//!   fault injection, for tests); `group-storage-sled` on disk.
//!   [`PersistentOffsetStorage`] turns any `MetadataStore` into an
//!   `OffsetStorage`, optionally with a read cache.
//! - [`OffsetManager`] validates and commits offsets over any `OffsetStorage`:
//!   [`NO_OFFSET`] (-1) for nothing committed, per-partition
//!   [`OffsetError::MetadataTooLarge`], [`validate_offset`].
//! - [`expired_offsets`] is KIP-211 retention, data in and data out;
//!   [`validate_metadata`] is the `offset.metadata.max.bytes` check, counted in
//!   UTF-16 code units as Kafka does.
//! - [`GroupMetadataRecord`] is what is persisted about a group;
//!   [`StorageError`] is a failure of storage itself.
//! - With the `conformance` feature, [`conformance`](crate#conformance) holds
//!   the checks every `OffsetStorage` and `MetadataStore` must pass.
//!
//! # Who should depend on this crate
//!
//! The coordinator (generic over [`OffsetStorage`]), storage engines
//! (implementing [`MetadataStore`], and running the conformance suite in their
//! tests), and anyone who needs Kafka's offset rules without a coordinator. It
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
//!
//! [`OffsetAndMetadata`]: group_types::OffsetAndMetadata
//! [`PartitionMap`]: group_types::PartitionMap
//!
//! # Conformance
//!
//! `group_offsets::conformance` (feature `conformance`, meant for
//! dev-dependencies) has `metadata_store_suite`, `offset_storage_suite` and
//! `metadata_store_restart_suite`: run them against an implementation to check
//! overwrite semantics, atomic multi-partition stores, deletions, group
//! records, byte-exact round trips and concurrent use.
//!
//! # Example
//!
//! A commit where one partition's metadata is too long, then a retention pass
//! after the group emptied:
//!
//! ```
//! use group_offsets::{
//!     DEFAULT_OFFSETS_RETENTION_MS, MemoryMetadataStore, OffsetError, OffsetManager,
//!     PersistentOffsetStorage, RetentionGroup,
//! };
//! use group_types::{GroupState, OffsetAndMetadata, TopicPartition};
//!
//! let store = MemoryMetadataStore::new();
//! let manager = OffsetManager::new(PersistentOffsetStorage::new(store.clone()));
//! let now = 1_700_000_000_000;
//! let ok = OffsetAndMetadata::new(10, now);
//! let too_long = OffsetAndMetadata { metadata: "x".repeat(5000), ..OffsetAndMetadata::new(20, now) };
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

mod error;
mod manager;
mod memory;
mod memory_store;
mod metadata_limit;
mod persistent;
mod records;
mod retention;
mod shards;
mod storage;

#[cfg(feature = "conformance")]
pub mod conformance;

pub use crate::error::{OffsetError, StorageError};
pub use crate::manager::{CommitResults, NO_OFFSET, OffsetManager, validate_offset};
pub use crate::memory::MemoryOffsetStorage;
pub use crate::memory_store::MemoryMetadataStore;
pub use crate::metadata_limit::{DEFAULT_OFFSET_METADATA_MAX_BYTES, metadata_length, validate_metadata};
pub use crate::persistent::PersistentOffsetStorage;
pub use crate::records::{GroupMetadataRecord, MemberMetadataRecord};
pub use crate::retention::{
    CONSUMER_PROTOCOL_TYPE, DEFAULT_OFFSETS_RETENTION_MS, ExpirationRule, RetentionGroup, TopicSet,
    expired_offsets, retention_ms_from_minutes,
};
pub use crate::storage::{MetadataStore, OffsetStorage, StoredGroups};
