//! `SledMetadataStore`: the `MetadataStore` contract on a sled database.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::{JoinHandle, ThreadId};
use std::time::{Duration, Instant};

use group_offsets::{
    AppendCompletion, CoordinatorPartition, EngineCause, LoadedPartition, MetadataStore, OwnerEpoch, Record,
    StorageError, StoredGroups,
};
use group_types::{GroupOffsets, OffsetAndMetadata};

pub(crate) use crate::engine::Handles;
use crate::engine::Shared;
use crate::keys::{self, PARTITIONS_TREE};
use crate::layout::{self, Prepared};
use crate::load::{self, Unreadable};
use crate::{Durability, SledOptions};

/// The file `open` writes beside sled's once the layout record is durable.
const MARKER_FILE: &str = "group-storage-sled.marker";

const MARKER_TEXT: &str =
    "A group-storage-sled store lives here; its layout record must be in the database.\n";

/// A durable [`MetadataStore`] on an embedded sled database, laid out in
/// coordinator partitions.
///
/// [`append`](MetadataStore::append) applies its records atomically (with the
/// partition's owner epoch, when it rises; see the [crate docs](crate#durability))
/// and returns at once; the
/// store's flusher thread completes it once a flush (by default sled's flush
/// plus an `fsync`, see [`Durability`]) has made it durable, one flush for
/// every append queued meanwhile (group commit). After a storage failure the
/// store recovers by itself on the next append (see the [crate docs](crate#recovery)).
///
/// Completions run on the flusher thread (or, for an append refused before
/// it was queued, on the caller's): they should hand the outcome on and
/// return. A completion may call `append` again, but must not wait for
/// another append's outcome (`append_blocking`), which only the flusher it
/// is holding up could deliver.
///
/// Cloning is cheap; clones share the database, its flusher and its counters.
/// The flusher stops, after completing every pending append, when the last
/// clone is dropped.
///
/// The key layout and value format are described in the [crate docs](crate).
#[derive(Debug, Clone)]
pub struct SledMetadataStore {
    inner: Arc<Inner>,
}

/// Owns the flusher thread: stopping it is the last clone's job.
#[derive(Debug)]
struct Inner {
    shared: Arc<Shared>,
    flusher: Option<JoinHandle<()>>,
    flusher_id: ThreadId,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.shared.shut_down();
        // A completion running on the flusher may hold the last clone; the
        // thread then ends by itself after this round.
        if std::thread::current().id() != self.flusher_id
            && let Some(flusher) = self.flusher.take()
        {
            let _ = flusher.join();
        }
    }
}

impl SledMetadataStore {
    /// How long [`open`](SledMetadataStore::open) waits for a directory
    /// another handle still holds.
    pub const LOCK_WAIT: Duration = Duration::from_secs(2);

    /// Opens (creating if needed) the store in the directory `path`, with
    /// [`DEFAULT_COORDINATOR_PARTITIONS`](group_offsets::DEFAULT_COORDINATOR_PARTITIONS)
    /// partitions and [`Durability::Fsync`].
    ///
    /// A store in layout v1 is migrated to v2 (see the [crate docs](crate#migration-from-layout-v1)).
    /// A damaged database gives [`StorageError::Unavailable`], never a panic.
    /// Beside sled's own files the directory holds a small marker file,
    /// written once the store's layout record is durable: if the marker is
    /// there but sled recovers a database without the record (sled silently
    /// starts empty from a zeroed or garbage log), opening fails instead of
    /// serving an empty store. A log cut short that still holds the record
    /// recovers to an earlier consistent state and cannot be told apart.
    ///
    /// Recovery is an operator's decision: restore the directory from a
    /// backup, or move it aside and start empty (committed offsets are lost
    /// and consumers fall back to their reset policy).
    ///
    /// sled holds an exclusive lock on its files, and its background writes
    /// may keep them open for a moment after the last handle is dropped, so
    /// `open` waits up to [`LOCK_WAIT`](SledMetadataStore::LOCK_WAIT) for the lock
    /// before reporting the directory as in use.
    pub fn open(path: impl AsRef<Path>) -> Result<SledMetadataStore, StorageError> {
        SledMetadataStore::open_with_options(path, SledOptions::default())
    }

    /// Like [`open`](SledMetadataStore::open), with the given durability.
    pub fn open_with(
        path: impl AsRef<Path>,
        durability: Durability,
    ) -> Result<SledMetadataStore, StorageError> {
        SledMetadataStore::open_with_options(path, SledOptions::new().durability(durability))
    }

    /// Like [`open`](SledMetadataStore::open), with `partitions` coordinator
    /// partitions. A store created (or migrated) with another number is
    /// refused with [`StorageError::InvalidInput`].
    pub fn open_with_partitions(
        path: impl AsRef<Path>,
        partitions: u32,
    ) -> Result<SledMetadataStore, StorageError> {
        SledMetadataStore::open_with_options(path, SledOptions::new().partitions(partitions))
    }

    /// Like [`open`](SledMetadataStore::open), with every option.
    ///
    /// Fails with [`StorageError::InvalidInput`] when the partition count is
    /// out of range or differs from the one the store was created with, and
    /// with [`StorageError::Unavailable`] when the database cannot be opened.
    pub fn open_with_options(
        path: impl AsRef<Path>,
        options: SledOptions,
    ) -> Result<SledMetadataStore, StorageError> {
        options.check()?;
        let path = path.as_ref();
        let unavailable = |e: StorageError| match e {
            // Kept as they are: the caller's mistake, and a directory another process holds.
            StorageError::InvalidInput { .. } | StorageError::Locked { .. } => e,
            e => StorageError::unavailable_from(
                format_args!("cannot open the sled database at {}", path.display()),
                e,
            ),
        };
        let marker = path.join(MARKER_FILE);
        let existed = marker.exists();
        let handles =
            Handles::open(path, options.durability_mode(), options.lock_wait_time()).map_err(unavailable)?;
        let shared = Shared::new(
            handles,
            Some(path.to_owned()),
            options.partition_count(),
            options.durability_mode(),
            options.faults().cloned(),
        );
        let prepared = shared
            .with_handles(|h| layout::prepare(h, shared.partitions, existed, |h| shared.flush_handles(h)))
            .map_err(unavailable)?;
        if prepared == Prepared::Created || !existed {
            shared.flush().map_err(unavailable)?;
            std::fs::write(&marker, MARKER_TEXT).map_err(|e| {
                unavailable(StorageError::io_from(format_args!("cannot write {}", marker.display()), e))
            })?;
        }
        SledMetadataStore::start(shared)
    }

    /// A store over an already open database (for custom sled settings, or
    /// to share a database with other trees), with
    /// [`DEFAULT_COORDINATOR_PARTITIONS`](group_offsets::DEFAULT_COORDINATOR_PARTITIONS)
    /// partitions. It uses the tree [`PARTITIONS_TREE`] and one layout record
    /// in the default tree. Unlike [`open`](SledMetadataStore::open) it cannot
    /// tell a database sled silently emptied from a new one; not knowing
    /// sled's file, it acknowledges writes after sled's flush alone
    /// ([`Durability::SledFlush`]); and not knowing the directory, it cannot
    /// reopen the database after a failure sled does not recover from in
    /// place (every append fails until the store is rebuilt).
    pub fn from_db(db: sled::Db) -> Result<SledMetadataStore, StorageError> {
        SledMetadataStore::from_db_with_partitions(db, group_offsets::DEFAULT_COORDINATOR_PARTITIONS)
    }

    /// Like [`from_db`](SledMetadataStore::from_db), with `partitions`
    /// coordinator partitions.
    pub fn from_db_with_partitions(db: sled::Db, partitions: u32) -> Result<SledMetadataStore, StorageError> {
        SledOptions::new().partitions(partitions).check()?;
        let shared = Shared::new(Handles::new(db, None)?, None, partitions, Durability::SledFlush, None);
        let prepared =
            shared.with_handles(|h| layout::prepare(h, partitions, false, |h| shared.flush_handles(h)))?;
        if prepared == Prepared::Created {
            shared.flush()?;
        }
        SledMetadataStore::start(shared)
    }

    fn start(shared: Shared) -> Result<SledMetadataStore, StorageError> {
        let shared = Arc::new(shared);
        let flusher = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("sled-group-commit".to_owned())
                .spawn(move || shared.run_flusher())
                .map_err(|e| StorageError::io_from("cannot start the flusher thread", e))?
        };
        let flusher_id = flusher.thread().id();
        Ok(SledMetadataStore { inner: Arc::new(Inner { shared, flusher: Some(flusher), flusher_id }) })
    }

    fn shared(&self) -> &Shared {
        &self.inner.shared
    }

    /// What writes wait for before they are acknowledged.
    pub fn durability(&self) -> Durability {
        self.shared().durability
    }

    /// How many flushes this store (and its clones) have run: with many
    /// appends in flight this grows slower than the number of appends.
    pub fn flush_count(&self) -> u64 {
        self.shared().counters.flushes.load(Ordering::Relaxed)
    }

    /// How many appends completed with a storage failure (`Io` or
    /// `Unavailable`; not refusals such as `Fenced` or `InvalidInput`).
    pub fn failed_appends(&self) -> u64 {
        self.shared().counters.failed_appends.load(Ordering::Relaxed)
    }

    /// How many times the store recovered from a storage failure (in place or
    /// by reopening its database).
    pub fn recoveries(&self) -> u64 {
        self.shared().counters.recoveries.load(Ordering::Relaxed)
    }

    /// How many times recovery reopened the database from its directory.
    pub fn reopen_count(&self) -> u64 {
        self.shared().counters.reopens.load(Ordering::Relaxed)
    }

    /// True from a storage failure until the store has recovered from it.
    pub fn is_failed(&self) -> bool {
        self.shared().failed.load(Ordering::Acquire)
    }

    /// Like [`MetadataStore::load`], but a value or key that cannot be read
    /// is skipped and reported instead of failing the whole load, so an
    /// operator can start with every readable group and see what was lost.
    /// An unreadable epoch is reported, and given as `OwnerEpoch(0)`; appends
    /// to that partition fail until it is repaired.
    pub fn load_skipping_unreadable(
        &self,
        partition: CoordinatorPartition,
    ) -> Result<(LoadedPartition, Vec<StorageError>), StorageError> {
        self.shared().load_partition(partition, Unreadable::Skip, load::parallelism())
    }

    /// Like [`MetadataStore::load_all`], skipping and reporting what cannot be
    /// read, as [`load_skipping_unreadable`](Self::load_skipping_unreadable) does.
    pub fn load_all_skipping_unreadable(&self) -> Result<(StoredGroups, Vec<StorageError>), StorageError> {
        self.shared().load_all(Unreadable::Skip)
    }
}

impl MetadataStore for SledMetadataStore {
    fn partition_count(&self) -> u32 {
        self.shared().partitions
    }

    fn append(
        &self,
        partition: CoordinatorPartition,
        epoch: OwnerEpoch,
        records: Vec<Record>,
        completion: AppendCompletion,
    ) {
        self.shared().append(partition, epoch, records, completion);
    }

    fn load(&self, partition: CoordinatorPartition) -> Result<LoadedPartition, StorageError> {
        self.shared()
            .load_partition(partition, Unreadable::Fail, load::parallelism())
            .map(|(loaded, _)| loaded)
    }

    fn owner_epoch(&self, partition: CoordinatorPartition) -> Result<OwnerEpoch, StorageError> {
        self.shared().owner_epoch(partition)
    }

    fn fetch_group_offset(
        &self,
        group_id: &str,
        topic: &str,
        partition: i32,
    ) -> Result<Option<OffsetAndMetadata>, StorageError> {
        let coordinator = self.partition_of(group_id);
        let key = keys::offset_key(coordinator, group_id, topic, partition)?;
        self.shared().with_handles(|h| {
            let Some(value) = h.tree.get(key).map_err(from_sled)? else { return Ok(None) };
            let parsed = keys::OffsetKey { coordinator, group_id, topic, partition };
            load::decode_offset(&parsed, &value).map(Some)
        })
    }

    fn fetch_group_offsets(&self, group_id: &str) -> Result<GroupOffsets, StorageError> {
        let coordinator = self.partition_of(group_id);
        let prefix = keys::group_offsets_prefix(coordinator, group_id)?;
        self.shared().read_partition(coordinator, |h| {
            let mut group = GroupOffsets::new(group_id);
            for entry in h.tree.scan_prefix(prefix) {
                let (key, value) = entry.map_err(from_sled)?;
                let parsed = keys::parse_offset_key(&key).map_err(|reason| StorageError::Corrupt {
                    group_id: group_id.to_owned(),
                    key: keys::display_raw_key(PARTITIONS_TREE, &key),
                    reason: format!("malformed key: {reason}"),
                })?;
                let offset = load::decode_offset(&parsed, &value)?;
                group.offsets.entry(parsed.topic.to_owned()).or_default().insert(parsed.partition, offset);
            }
            Ok(group)
        })
    }

    fn load_all(&self) -> Result<StoredGroups, StorageError> {
        self.shared().load_all(Unreadable::Fail).map(|(stored, _)| stored)
    }
}

/// Opens sled's database, waiting (bounded) for a lock a closing handle holds.
pub(crate) fn open_db(path: &Path, lock_wait: Duration) -> Result<sled::Db, StorageError> {
    let start = Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        match guarded(|| Ok(sled::open(path))) {
            Ok(Ok(db)) => return Ok(db),
            Ok(Err(sled::Error::Io(e))) if is_locked(path) => {
                if start.elapsed() >= lock_wait {
                    return Err(StorageError::Locked {
                        message: format!(
                            "the directory is in use by another process or handle (sled's lock on it is held): {e}"
                        ),
                        source: Some(EngineCause::new(e)),
                    });
                }
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            Ok(Err(e)) => return Err(from_sled(e)),
            Err(e) => return Err(e),
        }
    }
}

/// True when another handle holds the lock sled takes on its data file.
///
/// sled reports a held lock as an I/O error of kind `Other` whose only mark is
/// its text; asking the lock itself decides it without reading that text.
/// sled locks with `flock`, as `File::try_lock` does, and `flock` locks held
/// through another open file of this process conflict too.
fn is_locked(path: &Path) -> bool {
    let Ok(file) = std::fs::File::open(path.join("db")) else { return false };
    matches!(file.try_lock(), Err(std::fs::TryLockError::WouldBlock))
}

/// Maps sled's errors onto the contract's.
pub(crate) fn from_sled(e: sled::Error) -> StorageError {
    match e {
        sled::Error::Io(e) => StorageError::io_from("sled I/O error", e),
        sled::Error::Corruption { at, .. } => match at {
            Some(at) => StorageError::io(format!("sled found corrupt data at {at}")),
            None => StorageError::io("sled found corrupt data"),
        },
        sled::Error::CollectionNotFound(name) => {
            StorageError::unavailable(format!("sled tree {:?} was dropped", String::from_utf8_lossy(&name)))
        }
        other => StorageError::io_from("sled failed", other),
    }
}

/// Runs a sled call, turning a panic inside sled (it has a few on damaged
/// data) into an error so one bad page cannot take the coordinator down.
pub(crate) fn guarded<T>(f: impl FnOnce() -> Result<T, StorageError>) -> Result<T, StorageError> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_owned());
        Err(StorageError::io(format!("sled panicked: {what}")))
    })
}
