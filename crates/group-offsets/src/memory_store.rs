//! `MemoryMetadataStore`: a `MetadataStore` in process memory, with fault injection.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use group_types::{GroupOffsets, OffsetAndMetadata, TopicPartition};

use crate::shards::MemoryGroups;
use crate::{GroupMetadataRecord, MetadataStore, StorageError, StoredGroups};

/// A [`MetadataStore`] in process memory.
///
/// Meant for tests: of the coordinator (a "restart" is a new coordinator over a
/// [`clone`](Clone::clone) of the same store, since clones share their data) and
/// of code that must handle storage failures ([`fail_writes`](Self::fail_writes),
/// [`fail_reads`](Self::fail_reads)).
///
/// # Durability
///
/// Its data lives as long as one of its clones does: it survives dropping and
/// rebuilding everything above it, not a crash of the process. Everything else
/// in the [`MetadataStore`] contract holds, including atomic multi-partition
/// stores.
///
/// ```
/// use group_offsets::{MemoryMetadataStore, MetadataStore, StorageError};
/// use group_types::OffsetAndMetadata;
///
/// let store = MemoryMetadataStore::new();
/// store.fail_writes(Some(StorageError::io("disk full")));
/// assert!(store.store_group_offset("g", "t", 0, &OffsetAndMetadata::new(1, 0)).is_err());
/// store.fail_writes(None);
/// store.store_group_offset("g", "t", 0, &OffsetAndMetadata::new(1, 0))?;
/// let restarted = store.clone();
/// assert_eq!(restarted.fetch_group_offset("g", "t", 0)?.map(|o| o.offset), Some(1));
/// # Ok::<(), StorageError>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct MemoryMetadataStore {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    groups: MemoryGroups,
    faults: Faults,
}

/// Injected failures. The flags keep the healthy path to one relaxed load.
#[derive(Debug, Default)]
struct Faults {
    writes_failing: AtomicBool,
    write_error: Mutex<Option<StorageError>>,
    reads_failing: AtomicBool,
    read_error: Mutex<Option<StorageError>>,
}

fn check(flag: &AtomicBool, error: &Mutex<Option<StorageError>>) -> Result<(), StorageError> {
    if !flag.load(Ordering::Acquire) {
        return Ok(());
    }
    match &*error.lock().unwrap_or_else(PoisonError::into_inner) {
        Some(e) => Err(e.clone()),
        None => Ok(()),
    }
}

fn set(flag: &AtomicBool, slot: &Mutex<Option<StorageError>>, error: Option<StorageError>) {
    let mut slot = slot.lock().unwrap_or_else(PoisonError::into_inner);
    flag.store(error.is_some(), Ordering::Release);
    *slot = error;
}

impl MemoryMetadataStore {
    /// An empty store.
    pub fn new() -> MemoryMetadataStore {
        MemoryMetadataStore::default()
    }

    /// While `Some`, every write (of this store and its clones) fails with this
    /// error and changes nothing; `None` heals the store.
    pub fn fail_writes(&self, error: Option<StorageError>) {
        set(&self.inner.faults.writes_failing, &self.inner.faults.write_error, error);
    }

    /// While `Some`, every read (fetches and `load_all`) fails with this error;
    /// `None` heals the store.
    pub fn fail_reads(&self, error: Option<StorageError>) {
        set(&self.inner.faults.reads_failing, &self.inner.faults.read_error, error);
    }

    /// How many partition offsets are stored, over every group.
    pub fn offset_count(&self) -> usize {
        self.inner.groups.offset_count()
    }

    fn check_write(&self) -> Result<(), StorageError> {
        check(&self.inner.faults.writes_failing, &self.inner.faults.write_error)
    }

    fn check_read(&self) -> Result<(), StorageError> {
        check(&self.inner.faults.reads_failing, &self.inner.faults.read_error)
    }
}

impl MetadataStore for MemoryMetadataStore {
    fn store_group_offset(
        &self,
        group_id: &str,
        topic: &str,
        partition: i32,
        offset: &OffsetAndMetadata,
    ) -> Result<(), StorageError> {
        self.check_write()?;
        self.inner.groups.store_str(group_id, topic, partition, offset.clone());
        Ok(())
    }

    fn store_group_offsets(
        &self,
        group_id: &str,
        offsets: &[(TopicPartition, OffsetAndMetadata)],
    ) -> Result<(), StorageError> {
        self.check_write()?;
        self.inner.groups.store_many(group_id, offsets);
        Ok(())
    }

    fn fetch_group_offset(
        &self,
        group_id: &str,
        topic: &str,
        partition: i32,
    ) -> Result<Option<OffsetAndMetadata>, StorageError> {
        self.check_read()?;
        Ok(self.inner.groups.fetch(group_id, topic, partition))
    }

    fn fetch_group_offsets(&self, group_id: &str) -> Result<GroupOffsets, StorageError> {
        self.check_read()?;
        Ok(self.inner.groups.fetch_all(group_id))
    }

    fn delete_group_offsets(&self, group_id: &str) -> Result<(), StorageError> {
        self.check_write()?;
        self.inner.groups.delete_all(group_id);
        Ok(())
    }

    fn delete_group_partitions(
        &self,
        group_id: &str,
        partitions: &[TopicPartition],
    ) -> Result<(), StorageError> {
        self.check_write()?;
        self.inner.groups.delete_partitions(group_id, partitions);
        Ok(())
    }

    fn store_group_metadata(&self, record: &GroupMetadataRecord) -> Result<(), StorageError> {
        self.check_write()?;
        self.inner.groups.store_record(record);
        Ok(())
    }

    fn fetch_group_metadata(&self, group_id: &str) -> Result<Option<GroupMetadataRecord>, StorageError> {
        self.check_read()?;
        Ok(self.inner.groups.fetch_record(group_id))
    }

    fn delete_group_metadata(&self, group_id: &str) -> Result<(), StorageError> {
        self.check_write()?;
        self.inner.groups.delete_record(group_id);
        Ok(())
    }

    fn load_all(&self) -> Result<StoredGroups, StorageError> {
        self.check_read()?;
        Ok(self.inner.groups.load_all())
    }
}
