//! `MemoryOffsetStorage`: `PersistentOffsetStorage` over a `MemoryMetadataStore`,
//! under the name and constructor users of plain memory storage know.

use crate::{MemoryMetadataStore, PersistentOffsetStorage};

/// [`OffsetStorage`](crate::OffsetStorage) in process memory, for tests and single-process use.
///
/// It is [`PersistentOffsetStorage`] over a [`MemoryMetadataStore`] (no read
/// cache: the store's own fetches are as fast as a cache), so it follows the
/// same record-append rules as every other storage, and there is one
/// implementation of the offset logic to trust. Groups are spread over the
/// store's coordinator partitions, each with its own lock, so commits to
/// different groups from different threads rarely wait for each other; a
/// multi-partition store is one append, which readers see all of or none of.
/// Nothing survives the process. Cloning gives another handle on the same data.
///
/// ```
/// use group_offsets::{MemoryOffsetStorage, OffsetStorage};
/// use group_types::{OffsetAndMetadata, TopicPartition};
///
/// let storage = MemoryOffsetStorage::new();
/// let tp = TopicPartition::new("orders", 0);
/// storage.store_offset("billing", &tp, OffsetAndMetadata::new(42, 1_700_000_000_000))?;
/// assert_eq!(storage.fetch_offset("billing", &tp)?.map(|o| o.offset), Some(42));
/// assert_eq!(storage.offset_count(), 1);
/// # Ok::<(), group_offsets::StorageError>(())
/// ```
#[derive(Debug, Clone)]
pub struct MemoryOffsetStorage {
    // Every `OffsetStorage` method goes to it (`storage.rs`).
    pub(crate) inner: PersistentOffsetStorage<MemoryMetadataStore>,
}

impl Default for MemoryOffsetStorage {
    fn default() -> MemoryOffsetStorage {
        MemoryOffsetStorage::new()
    }
}

impl MemoryOffsetStorage {
    /// Empty storage.
    pub fn new() -> MemoryOffsetStorage {
        MemoryOffsetStorage::over(MemoryMetadataStore::new())
    }

    /// Storage over an existing memory store (a clone of which the caller may
    /// keep, to inject faults or hold appends back).
    pub fn over(store: MemoryMetadataStore) -> MemoryOffsetStorage {
        MemoryOffsetStorage { inner: PersistentOffsetStorage::new(store) }
    }

    /// The store underneath.
    pub fn store(&self) -> &MemoryMetadataStore {
        self.inner.store()
    }

    /// How many partition offsets are stored, over every group.
    pub fn offset_count(&self) -> usize {
        self.inner.store().offset_count()
    }
}
