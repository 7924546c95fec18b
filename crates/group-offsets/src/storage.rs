//! The two storage contracts: `OffsetStorage` (what the coordinator uses) and
//! `MetadataStore` (what a persistence engine implements).

use group_types::{GroupOffsets, OffsetAndMetadata, TopicPartition};

use crate::{GroupMetadataRecord, StorageError};

/// Everything storage holds, as loaded at start-up.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StoredGroups {
    /// Every persisted group record.
    pub groups: Vec<GroupMetadataRecord>,
    /// Every group's offsets (groups with offsets but no record are simple groups).
    pub offsets: Vec<GroupOffsets>,
}

/// Offset and group storage as the coordinator uses it. `Send + Sync`, shared
/// behind an `Arc`; every method may be called from many threads at once.
///
/// A call that returns `Ok` has made its write visible to every later read; a
/// durable implementation also promises it survives a crash.
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

    /// Every offset of a group (empty for an unknown group).
    fn fetch_offsets(&self, group_id: &str) -> Result<GroupOffsets, StorageError>;

    /// Deletes every offset of a group.
    fn delete_offsets(&self, group_id: &str) -> Result<(), StorageError>;

    /// Deletes the given partitions' offsets (OffsetDelete, retention); absent ones are ignored.
    fn delete_partitions(&self, group_id: &str, partitions: &[TopicPartition]) -> Result<(), StorageError>;

    /// Persists a group's record, replacing the previous one.
    fn store_group(&self, record: &GroupMetadataRecord) -> Result<(), StorageError>;

    /// Removes a group's record (its offsets are deleted separately).
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
/// of the call is there or none is.
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
