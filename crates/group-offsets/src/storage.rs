//! The two storage contracts: `OffsetStorage` (what the coordinator uses) and
//! `MetadataStore` (what a persistence engine implements).

use group_types::{GroupOffsets, OffsetAndMetadata, TopicPartition};

use crate::{GroupMetadataRecord, StorageError};

/// Everything storage holds, as loaded at start-up.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StoredGroups {
    /// Every persisted group record, one per group, in no particular order.
    pub groups: Vec<GroupMetadataRecord>,
    /// The offsets of every group holding at least one, one entry per group, in
    /// no particular order (groups with offsets but no record are simple groups).
    /// A group whose offsets were all deleted is not listed.
    pub offsets: Vec<GroupOffsets>,
}

/// Offset and group storage as the coordinator uses it. `Send + Sync`, shared
/// behind an `Arc`; every method may be called from many threads at once.
///
/// A call that returns `Ok` has made its write visible to every later read; a
/// durable implementation also promises it survives a crash. A call that
/// returns `Err` was not acknowledged: memory storage guarantees it changed
/// nothing, but a durable engine whose flush failed after the engine applied
/// the write cannot take it back, so the write may still become visible (as in
/// Kafka, where a timed-out append can still land in the log). Callers treat
/// such a write as "unknown", never as "done".
///
/// Writes overwrite: the last acknowledged store of a partition wins, even
/// with a lower offset (an offset reset). Offsets and group records are
/// independent: deleting one never deletes the other. Group ids and topics
/// are arbitrary strings (`""` and NUL bytes included) and metadata
/// round-trips byte for byte. `group_offsets::conformance` (feature
/// `conformance`) checks all of this against an implementation.
///
/// Implemented by [`MemoryOffsetStorage`](crate::MemoryOffsetStorage),
/// [`PersistentOffsetStorage`](crate::PersistentOffsetStorage), and by
/// `Arc`, `Box` and `&` of any implementation.
pub trait OffsetStorage: Send + Sync {
    /// Stores one partition's offset.
    fn store_offset(
        &self,
        group_id: &str,
        partition: &TopicPartition,
        offset: OffsetAndMetadata,
    ) -> Result<(), StorageError>;

    /// Stores several partitions' offsets all-or-nothing: after an error none of them is visible.
    fn store_offsets(
        &self,
        group_id: &str,
        offsets: &[(TopicPartition, OffsetAndMetadata)],
    ) -> Result<(), StorageError>;

    /// One partition's offset, `None` when nothing is committed.
    fn fetch_offset(
        &self,
        group_id: &str,
        partition: &TopicPartition,
    ) -> Result<Option<OffsetAndMetadata>, StorageError>;

    /// Every offset of a group, with `group_id` set (empty for an unknown group).
    fn fetch_offsets(&self, group_id: &str) -> Result<GroupOffsets, StorageError>;

    /// Deletes every offset of a group (`Ok` for an unknown group).
    fn delete_offsets(&self, group_id: &str) -> Result<(), StorageError>;

    /// Deletes the given partitions' offsets (OffsetDelete, retention); absent ones are ignored.
    fn delete_partitions(&self, group_id: &str, partitions: &[TopicPartition]) -> Result<(), StorageError>;

    /// Persists a group's record, replacing the previous one.
    ///
    /// The record is given away: a rebalance of a large group writes one record
    /// holding every member's subscription and assignment, and memory storage
    /// keeps it as it is instead of copying it.
    fn store_group(&self, record: GroupMetadataRecord) -> Result<(), StorageError>;

    /// Removes a group's record (its offsets are deleted separately; `Ok` when
    /// there is no record).
    fn delete_group(&self, group_id: &str) -> Result<(), StorageError>;

    /// Everything stored, for a coordinator starting up.
    fn load(&self) -> Result<StoredGroups, StorageError>;
}

/// What a persistence engine implements: group offsets and group metadata records.
///
/// # Durability
///
/// A method returns `Ok` only once its write would survive a crash of the
/// process: after an `Ok`, reopening the store after `kill -9` must show the
/// write. A multi-partition store is atomic: after a crash either every partition
/// of the call is there or none is. A call that returns `Err` has changed
/// nothing visible.
///
/// # Semantics
///
/// The same as [`OffsetStorage`]'s: the last acknowledged write of a
/// partition wins (lower offsets included); within one multi-partition store a
/// partition named twice takes the later entry; deleting absent things is
/// `Ok`; offsets and group records are independent; group ids, topics and
/// metadata are arbitrary strings (`""`, NUL bytes, any Unicode) and
/// round-trip byte for byte, and groups or topics whose names prefix each
/// other never mix. `load_all` lists only groups that hold offsets or a
/// record. Every method may be called from many threads at once.
///
/// Run `group_offsets::conformance::metadata_store_suite` (feature
/// `conformance`) against an implementation to check all of this, and
/// `metadata_store_restart_suite` to check that reopening keeps it.
///
/// Implemented by [`MemoryMetadataStore`](crate::MemoryMetadataStore), and by
/// `Arc`, `Box` and `&` of any implementation.
pub trait MetadataStore: Send + Sync {
    /// Stores one partition's offset.
    fn store_group_offset(
        &self,
        group_id: &str,
        topic: &str,
        partition: i32,
        offset: &OffsetAndMetadata,
    ) -> Result<(), StorageError>;

    /// Stores several partitions' offsets atomically.
    fn store_group_offsets(
        &self,
        group_id: &str,
        offsets: &[(TopicPartition, OffsetAndMetadata)],
    ) -> Result<(), StorageError>;

    /// One partition's offset.
    fn fetch_group_offset(
        &self,
        group_id: &str,
        topic: &str,
        partition: i32,
    ) -> Result<Option<OffsetAndMetadata>, StorageError>;

    /// Every offset of a group.
    fn fetch_group_offsets(&self, group_id: &str) -> Result<GroupOffsets, StorageError>;

    /// Deletes every offset of a group.
    fn delete_group_offsets(&self, group_id: &str) -> Result<(), StorageError>;

    /// Deletes the given partitions' offsets of a group.
    fn delete_group_partitions(
        &self,
        group_id: &str,
        partitions: &[TopicPartition],
    ) -> Result<(), StorageError>;

    /// Persists a group's metadata record, replacing the previous one.
    fn store_group_metadata(&self, record: &GroupMetadataRecord) -> Result<(), StorageError>;

    /// A group's metadata record.
    fn fetch_group_metadata(&self, group_id: &str) -> Result<Option<GroupMetadataRecord>, StorageError>;

    /// Removes a group's metadata record.
    fn delete_group_metadata(&self, group_id: &str) -> Result<(), StorageError>;

    /// Everything stored: every group record and every group's offsets.
    fn load_all(&self) -> Result<StoredGroups, StorageError>;
}

macro_rules! forward_offset_storage {
    ($($ptr:ty),*) => {$(
        impl<T: OffsetStorage + ?Sized> OffsetStorage for $ptr {
            fn store_offset(
                &self,
                group_id: &str,
                partition: &TopicPartition,
                offset: OffsetAndMetadata,
            ) -> Result<(), StorageError> {
                (**self).store_offset(group_id, partition, offset)
            }
            fn store_offsets(
                &self,
                group_id: &str,
                offsets: &[(TopicPartition, OffsetAndMetadata)],
            ) -> Result<(), StorageError> {
                (**self).store_offsets(group_id, offsets)
            }
            fn fetch_offset(
                &self,
                group_id: &str,
                partition: &TopicPartition,
            ) -> Result<Option<OffsetAndMetadata>, StorageError> {
                (**self).fetch_offset(group_id, partition)
            }
            fn fetch_offsets(&self, group_id: &str) -> Result<GroupOffsets, StorageError> {
                (**self).fetch_offsets(group_id)
            }
            fn delete_offsets(&self, group_id: &str) -> Result<(), StorageError> {
                (**self).delete_offsets(group_id)
            }
            fn delete_partitions(
                &self,
                group_id: &str,
                partitions: &[TopicPartition],
            ) -> Result<(), StorageError> {
                (**self).delete_partitions(group_id, partitions)
            }
            fn store_group(&self, record: GroupMetadataRecord) -> Result<(), StorageError> {
                (**self).store_group(record)
            }
            fn delete_group(&self, group_id: &str) -> Result<(), StorageError> {
                (**self).delete_group(group_id)
            }
            fn load(&self) -> Result<StoredGroups, StorageError> {
                (**self).load()
            }
        }
    )*};
}

macro_rules! forward_metadata_store {
    ($($ptr:ty),*) => {$(
        impl<T: MetadataStore + ?Sized> MetadataStore for $ptr {
            fn store_group_offset(
                &self,
                group_id: &str,
                topic: &str,
                partition: i32,
                offset: &OffsetAndMetadata,
            ) -> Result<(), StorageError> {
                (**self).store_group_offset(group_id, topic, partition, offset)
            }
            fn store_group_offsets(
                &self,
                group_id: &str,
                offsets: &[(TopicPartition, OffsetAndMetadata)],
            ) -> Result<(), StorageError> {
                (**self).store_group_offsets(group_id, offsets)
            }
            fn fetch_group_offset(
                &self,
                group_id: &str,
                topic: &str,
                partition: i32,
            ) -> Result<Option<OffsetAndMetadata>, StorageError> {
                (**self).fetch_group_offset(group_id, topic, partition)
            }
            fn fetch_group_offsets(&self, group_id: &str) -> Result<GroupOffsets, StorageError> {
                (**self).fetch_group_offsets(group_id)
            }
            fn delete_group_offsets(&self, group_id: &str) -> Result<(), StorageError> {
                (**self).delete_group_offsets(group_id)
            }
            fn delete_group_partitions(
                &self,
                group_id: &str,
                partitions: &[TopicPartition],
            ) -> Result<(), StorageError> {
                (**self).delete_group_partitions(group_id, partitions)
            }
            fn store_group_metadata(&self, record: &GroupMetadataRecord) -> Result<(), StorageError> {
                (**self).store_group_metadata(record)
            }
            fn fetch_group_metadata(
                &self,
                group_id: &str,
            ) -> Result<Option<GroupMetadataRecord>, StorageError> {
                (**self).fetch_group_metadata(group_id)
            }
            fn delete_group_metadata(&self, group_id: &str) -> Result<(), StorageError> {
                (**self).delete_group_metadata(group_id)
            }
            fn load_all(&self) -> Result<StoredGroups, StorageError> {
                (**self).load_all()
            }
        }
    )*};
}

// So `Arc<dyn OffsetStorage>` (or a shared concrete storage) can go wherever
// one is expected, e.g. `OffsetManager::new(Arc::clone(&storage))`.
forward_offset_storage!(std::sync::Arc<T>, Box<T>, &T);
forward_metadata_store!(std::sync::Arc<T>, Box<T>, &T);
