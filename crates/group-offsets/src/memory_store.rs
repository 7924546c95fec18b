//! `MemoryMetadataStore`: a `MetadataStore` in process memory, with fault
//! injection and hooks that hold appends back, for tests of late completions.

use std::collections::VecDeque;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use group_types::{GroupOffsets, OffsetAndMetadata};

use crate::partition::PartitionData;
use crate::shards::Padded;
use crate::{
    AppendCompletion, CoordinatorPartition, DEFAULT_COORDINATOR_PARTITIONS, LoadedPartition, MetadataStore,
    OwnerEpoch, Record, StorageError, StoredGroups,
};

/// A [`MetadataStore`] in process memory.
///
/// Meant for tests: of the coordinator (a "restart" is a new coordinator over a
/// [`clone`](Clone::clone) of the same store, since clones share their data,
/// epochs and hooks), of code that must handle storage failures
/// ([`fail_writes`](Self::fail_writes), [`fail_reads`](Self::fail_reads)), and
/// of code that must handle appends completing late
/// ([`hold_appends`](Self::hold_appends) and [`release_held`](Self::release_held)).
///
/// Each coordinator partition has its own lock, so appends to different
/// partitions from different threads rarely wait for each other, and an append
/// applies under its partition's lock, so readers see all of it or none of it.
///
/// # Durability
///
/// Its data lives as long as one of its clones does: it survives dropping and
/// rebuilding everything above it, not a crash of the process. Everything else
/// in the [`MetadataStore`] contract holds: atomic appends, order within a
/// partition, per-partition epochs and fencing.
///
/// # Holding appends back
///
/// A real engine completes an append milliseconds later, on another thread.
/// To test what callers do meanwhile, turn [`hold_appends`](Self::hold_appends)
/// on: every append from then on is queued, neither applied nor completed,
/// until the test [releases](Self::release_held) it, successfully or with an
/// error of its choice. Order within a partition is never broken: an append
/// made while holding is off, to a partition that still has held appends,
/// waits behind them (it is not counted as held) and is applied right after
/// the last of them is released. Completion callbacks run on the thread that
/// applies the append (the caller of `append` or of `release_held`), never
/// under one of the store's locks, so a callback may call back into the store.
///
/// ```
/// use group_offsets::{
///     AppendCompletion, CoordinatorPartition, MemoryMetadataStore, MetadataStore, OwnerEpoch, StorageError,
/// };
/// use group_types::OffsetAndMetadata;
/// use std::sync::mpsc;
///
/// let store = MemoryMetadataStore::new();
/// store.fail_writes(Some(StorageError::io("disk full")));
/// assert!(store.store_group_offset("g", "t", 0, &OffsetAndMetadata::new(1, 0)).is_err());
/// store.fail_writes(None);
/// store.store_group_offset("g", "t", 0, &OffsetAndMetadata::new(1, 0))?;
/// let restarted = store.clone();
/// assert_eq!(restarted.fetch_group_offset("g", "t", 0)?.map(|o| o.offset), Some(1));
///
/// // An append that completes late.
/// let (tx, rx) = mpsc::channel();
/// store.hold_appends(true);
/// store.append(
///     CoordinatorPartition(7),
///     OwnerEpoch(1),
///     vec![],
///     AppendCompletion::new(move |result| tx.send(result).unwrap()),
/// );
/// assert_eq!(store.held_partitions(), [CoordinatorPartition(7)]);
/// assert!(rx.try_recv().is_err(), "not completed yet");
/// assert!(store.release_held(None, None));
/// assert_eq!(rx.try_recv().unwrap(), Ok(()));
/// assert_eq!(store.owner_epoch(CoordinatorPartition(7))?, OwnerEpoch(1));
/// # Ok::<(), StorageError>(())
/// ```
#[derive(Clone)]
pub struct MemoryMetadataStore {
    inner: Arc<Inner>,
}

struct Inner {
    partitions: Box<[Padded<Slot>]>,
    faults: Faults,
    hold: Hold,
    /// Appends to partitions the store does not have.
    stray_appends: AtomicU64,
}

/// One coordinator partition, on cache lines of its own.
#[derive(Default)]
struct Slot {
    data: RwLock<PartitionData>,
    /// Counted per partition: one counter shared by every thread would bounce
    /// its cache line between the cores committing to different partitions.
    appends: AtomicU64,
}

/// Injected failures. The flags keep the healthy path to one load.
#[derive(Default)]
struct Faults {
    writes_failing: AtomicBool,
    write_error: Mutex<Option<StorageError>>,
    reads_failing: AtomicBool,
    read_error: Mutex<Option<StorageError>>,
}

/// Appends waiting to be applied, in call order.
///
/// Invariant: the first queued append of each partition is a held one
/// (`held: true`); the appends that only wait for order are applied as soon as
/// they reach the front of their partition. `queued` mirrors `queue.len()` so
/// that the healthy path (nothing held, nothing queued) never takes the
/// queue's lock; it is decremented only under the lock of the partition being
/// drained, so an append that sees it reach zero then waits for that lock and
/// lands after the appends drained before it.
#[derive(Default)]
struct Hold {
    holding: AtomicBool,
    queued: AtomicUsize,
    queue: Mutex<VecDeque<Queued>>,
}

struct Queued {
    partition: CoordinatorPartition,
    epoch: OwnerEpoch,
    records: Vec<Record>,
    completion: AppendCompletion,
    /// Queued while holding was on (as opposed to waiting behind such an append).
    held: bool,
}

/// Nothing done under the store's locks panics (allocation failure aborts),
/// so a poisoned lock, if one ever occurs, still guards whole appends: keep going.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn check(flag: &AtomicBool, error: &Mutex<Option<StorageError>>) -> Result<(), StorageError> {
    if !flag.load(Ordering::Acquire) {
        return Ok(());
    }
    match &*lock(error) {
        Some(e) => Err(e.clone()),
        None => Ok(()),
    }
}

fn set(flag: &AtomicBool, slot: &Mutex<Option<StorageError>>, error: Option<StorageError>) {
    let mut slot = lock(slot);
    flag.store(error.is_some(), Ordering::Release);
    *slot = error;
}

impl Default for MemoryMetadataStore {
    fn default() -> MemoryMetadataStore {
        MemoryMetadataStore::with_partitions(DEFAULT_COORDINATOR_PARTITIONS)
    }
}

impl fmt::Debug for MemoryMetadataStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryMetadataStore")
            .field("partitions", &self.inner.partitions.len())
            .field("offsets", &self.offset_count())
            .field("held_appends", &self.held_appends())
            .field("append_count", &self.append_count())
            .finish()
    }
}

impl MemoryMetadataStore {
    /// An empty store of [`DEFAULT_COORDINATOR_PARTITIONS`] (50) partitions.
    pub fn new() -> MemoryMetadataStore {
        MemoryMetadataStore::default()
    }

    /// An empty store of `partitions` coordinator partitions (at least 1).
    /// Appends to and loads of a partition at or above the count fail with
    /// [`StorageError::InvalidInput`].
    pub fn with_partitions(partitions: u32) -> MemoryMetadataStore {
        let partitions = (0..partitions.max(1)).map(|_| Padded(Slot::default())).collect();
        MemoryMetadataStore {
            inner: Arc::new(Inner {
                partitions,
                faults: Faults::default(),
                hold: Hold::default(),
                stray_appends: AtomicU64::new(0),
            }),
        }
    }

    /// While `Some`, every append (of this store and its clones) that is
    /// applied fails with this error and changes nothing, epoch included;
    /// `None` heals the store. The fault is checked when an append is applied:
    /// at once for an append that is not held, at release for a held one.
    /// The provided write methods (`store_group_offset`, ...) fail likewise.
    pub fn fail_writes(&self, error: Option<StorageError>) {
        set(&self.inner.faults.writes_failing, &self.inner.faults.write_error, error);
    }

    /// While `Some`, every read of data (`load`, `load_all`,
    /// `fetch_group_offset`, `fetch_group_offsets`) fails with this error;
    /// `None` heals the store. [`owner_epoch`](MetadataStore::owner_epoch) keeps
    /// answering, so writes are not affected.
    pub fn fail_reads(&self, error: Option<StorageError>) {
        set(&self.inner.faults.reads_failing, &self.inner.faults.read_error, error);
    }

    /// While `true`, every append (of this store and its clones) is queued in
    /// call order, neither applied nor completed, until
    /// [`release_held`](Self::release_held) releases it. Turning it off
    /// releases nothing: appends already held stay held, and a later append to
    /// a partition with held appends waits behind them (see the
    /// [type docs](Self#holding-appends-back)). `append_blocking` (and the
    /// provided write methods built on it) blocks until another thread
    /// releases its append.
    pub fn hold_appends(&self, hold: bool) {
        self.inner.hold.holding.store(hold, Ordering::SeqCst);
    }

    /// How many appends are held, over every partition (not counting the
    /// appends that only wait behind held ones).
    pub fn held_appends(&self) -> usize {
        lock(&self.inner.hold.queue).iter().filter(|q| q.held).count()
    }

    /// The partition of each held append, oldest first.
    pub fn held_partitions(&self) -> Vec<CoordinatorPartition> {
        lock(&self.inner.hold.queue).iter().filter(|q| q.held).map(|q| q.partition).collect()
    }

    /// Completes the oldest held append, of `partition` when given (of any
    /// partition otherwise), and returns `false` when there is none.
    ///
    /// With `failure` `None` the append is applied now, with every check an
    /// append gets (injected write faults, then the epoch: a lower epoch than
    /// the partition's completes it with [`StorageError::Fenced`]), and
    /// completed with the outcome. With `Some(error)` nothing of it is applied
    /// and it completes with `Err(error)`. Either way the appends that were
    /// waiting behind it for order, up to the partition's next held append,
    /// are then applied and completed too. Completion callbacks run on this
    /// thread, after every lock of the store is released.
    pub fn release_held(
        &self,
        partition: Option<CoordinatorPartition>,
        failure: Option<StorageError>,
    ) -> bool {
        let mut done = Vec::new();
        {
            let hold = &self.inner.hold;
            let mut queue = lock(&hold.queue);
            let Some(index) = queue.iter().position(|q| partition.is_none_or(|p| q.partition == p)) else {
                return false;
            };
            // The invariant makes this a held append: it leads its partition.
            let Some(first) = queue.remove(index) else { return false };
            let p = first.partition;
            let mut data = self.partition(p).map(|slot| write(slot));
            let mut run = |q: Queued, failure: Option<StorageError>| {
                let result = match (failure, &mut data) {
                    (Some(e), _) => Err(e),
                    (None, Ok(data)) => self.apply(data, p, q.epoch, q.records),
                    (None, Err(e)) => Err(e.clone()),
                };
                done.push((q.completion, result));
            };
            run(first, failure);
            let mut drained = 1;
            // Then the appends that waited only for order, up to the next held one.
            let mut i = index;
            while i < queue.len() {
                if queue[i].partition != p {
                    i += 1;
                    continue;
                }
                if queue[i].held {
                    break;
                }
                if let Some(next) = queue.remove(i) {
                    run(next, None);
                    drained += 1;
                }
            }
            hold.queued.fetch_sub(drained, Ordering::SeqCst);
        }
        for (completion, result) in done {
            completion.complete(result);
        }
        true
    }

    /// How many appends the store was given (by `append` or
    /// `append_blocking`, including the provided write methods), since it was
    /// created, whatever their outcome: held, failed and fenced ones count.
    /// Lets a test observe how a caller batches its writes.
    pub fn append_count(&self) -> u64 {
        let counted =
            self.inner.partitions.iter().map(|slot| slot.0.appends.load(Ordering::SeqCst)).sum::<u64>();
        counted + self.inner.stray_appends.load(Ordering::SeqCst)
    }

    /// How many partition offsets are stored, over every group and partition.
    pub fn offset_count(&self) -> usize {
        self.inner.partitions.iter().map(|slot| read(&slot.0.data).offset_count()).sum()
    }

    fn partition(&self, p: CoordinatorPartition) -> Result<&RwLock<PartitionData>, StorageError> {
        match self.inner.partitions.get(p.0 as usize) {
            Some(slot) => Ok(&slot.0.data),
            None => Err(StorageError::InvalidInput {
                message: format!(
                    "{p} does not exist: the store has {} partitions",
                    self.inner.partitions.len()
                ),
            }),
        }
    }

    fn count_append(&self, partition: CoordinatorPartition) {
        let counter = match self.inner.partitions.get(partition.0 as usize) {
            Some(slot) => &slot.0.appends,
            None => &self.inner.stray_appends,
        };
        counter.fetch_add(1, Ordering::SeqCst);
    }

    fn check_read(&self) -> Result<(), StorageError> {
        check(&self.inner.faults.reads_failing, &self.inner.faults.read_error)
    }

    /// Applies one append to its partition's data (locked by the caller):
    /// faults first, then the epoch, then every record, or nothing.
    fn apply(
        &self,
        data: &mut PartitionData,
        partition: CoordinatorPartition,
        epoch: OwnerEpoch,
        records: Vec<Record>,
    ) -> Result<(), StorageError> {
        check(&self.inner.faults.writes_failing, &self.inner.faults.write_error)?;
        if epoch < data.epoch {
            return Err(StorageError::Fenced {
                partition: partition.0,
                epoch: epoch.0,
                current: data.epoch.0,
            });
        }
        data.epoch = epoch;
        data.apply(records);
        Ok(())
    }

    /// Applies an append now if nothing is held or queued (the healthy path,
    /// which takes only the partition's lock); gives the records back otherwise.
    fn apply_now(
        &self,
        partition: CoordinatorPartition,
        epoch: OwnerEpoch,
        records: Vec<Record>,
    ) -> Result<Result<(), StorageError>, Vec<Record>> {
        let hold = &self.inner.hold;
        if hold.holding.load(Ordering::SeqCst) || hold.queued.load(Ordering::SeqCst) > 0 {
            return Err(records);
        }
        Ok(self.partition(partition).and_then(|slot| self.apply(&mut write(slot), partition, epoch, records)))
    }

    /// The slow path, under the queue's lock: queues the append (held while
    /// holding is on, waiting behind its partition's held appends otherwise)
    /// or applies it and completes it after the locks are released.
    fn submit(
        &self,
        partition: CoordinatorPartition,
        epoch: OwnerEpoch,
        records: Vec<Record>,
        completion: AppendCompletion,
    ) {
        let hold = &self.inner.hold;
        let mut queue = lock(&hold.queue);
        let held = hold.holding.load(Ordering::SeqCst);
        if held || queue.iter().any(|q| q.partition == partition) {
            queue.push_back(Queued { partition, epoch, records, completion, held });
            hold.queued.fetch_add(1, Ordering::SeqCst);
            return;
        }
        let result = self
            .partition(partition)
            .and_then(|slot| self.apply(&mut write(slot), partition, epoch, records));
        drop(queue);
        completion.complete(result);
    }
}

fn read(slot: &RwLock<PartitionData>) -> RwLockReadGuard<'_, PartitionData> {
    slot.read().unwrap_or_else(PoisonError::into_inner)
}

fn write(slot: &RwLock<PartitionData>) -> RwLockWriteGuard<'_, PartitionData> {
    slot.write().unwrap_or_else(PoisonError::into_inner)
}

impl MetadataStore for MemoryMetadataStore {
    fn partition_count(&self) -> u32 {
        self.inner.partitions.len() as u32
    }

    fn append(
        &self,
        partition: CoordinatorPartition,
        epoch: OwnerEpoch,
        records: Vec<Record>,
        completion: AppendCompletion,
    ) {
        self.count_append(partition);
        match self.apply_now(partition, epoch, records) {
            Ok(result) => completion.complete(result),
            Err(records) => self.submit(partition, epoch, records, completion),
        }
    }

    fn load(&self, partition: CoordinatorPartition) -> Result<LoadedPartition, StorageError> {
        self.check_read()?;
        let data = read(self.partition(partition)?);
        Ok(LoadedPartition { epoch: data.epoch, groups: data.stored() })
    }

    fn owner_epoch(&self, partition: CoordinatorPartition) -> Result<OwnerEpoch, StorageError> {
        Ok(read(self.partition(partition)?).epoch)
    }

    /// Appends apply under the partition's lock and complete at once, except
    /// while appends are held (tests), when they complete on release.
    fn completes_inline(&self) -> bool {
        true
    }

    /// Applied on the caller's thread without a channel, unless the append
    /// must wait (held, or behind held appends).
    fn append_blocking(
        &self,
        partition: CoordinatorPartition,
        epoch: OwnerEpoch,
        records: Vec<Record>,
    ) -> Result<(), StorageError> {
        self.count_append(partition);
        let records = match self.apply_now(partition, epoch, records) {
            Ok(result) => return result,
            Err(records) => records,
        };
        let (completion, rx) = AppendCompletion::channel();
        self.submit(partition, epoch, records, completion);
        rx.recv().unwrap_or_else(|_| Err(StorageError::unavailable("the store dropped an append unanswered")))
    }

    fn fetch_group_offset(
        &self,
        group_id: &str,
        topic: &str,
        partition: i32,
    ) -> Result<Option<OffsetAndMetadata>, StorageError> {
        self.check_read()?;
        Ok(read(self.partition(self.partition_of(group_id))?).fetch(group_id, topic, partition))
    }

    fn fetch_group_offsets(&self, group_id: &str) -> Result<GroupOffsets, StorageError> {
        self.check_read()?;
        Ok(read(self.partition(self.partition_of(group_id))?).fetch_all(group_id))
    }

    /// Every partition, one at a time (a consistent view of each partition,
    /// not a snapshot of the whole store), sorted by group id.
    fn load_all(&self) -> Result<StoredGroups, StorageError> {
        self.check_read()?;
        let mut all = StoredGroups::default();
        for slot in self.inner.partitions.iter() {
            all.extend(read(&slot.0.data).stored());
        }
        all.groups.sort_by(|a, b| a.group_id.cmp(&b.group_id));
        all.offsets.sort_by(|a, b| a.group_id.cmp(&b.group_id));
        Ok(all)
    }
}
