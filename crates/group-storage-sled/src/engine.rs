//! The engine behind `SledMetadataStore`: the swappable database handles, the
//! per-partition locks and epochs, how an append is checked and applied, and
//! how the store recovers from a storage failure. The group-commit flusher
//! that completes appends is in `group_commit.rs`.
//!
//! # Locks
//!
//! Always taken in this order: a partition's lock (one, or all of them in
//! index order), the handle slot, the health record, the queue. An append
//! holds its partition's lock for writing from the epoch check until its
//! item is queued, so the queue holds each partition's appends in call
//! order, and whoever holds every partition lock knows nothing else can be
//! applied or queued. Reads that scan keys (`load`, a group's offsets) hold
//! it for reading: sled's iterators are not snapshots, and a scan running
//! beside a batch could see part of it. No lock is held while a completion
//! runs.

use std::collections::BTreeMap;
use std::fs::File;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use group_offsets::{LoadedPartition, StoredGroups};

use group_offsets::{AppendCompletion, CoordinatorPartition, OwnerEpoch, Record, StorageError};

use crate::SledMetadataStore;
use crate::codec;
use crate::faults::Fault;
use crate::intent;
use crate::keys;
use crate::layout::{self, Prepared};
use crate::load;
use crate::store::{from_sled, guarded, open_db};
use crate::{Durability, FlushFaults};

/// An append's writes, by key (`None` removes): a later record of the same
/// key replaces an earlier one, as sled's batches do.
pub(crate) type Writes = BTreeMap<Vec<u8>, Option<Vec<u8>>>;

/// What the keys an append wrote held before it: restoring them undoes it.
pub(crate) type Undo = Vec<(Vec<u8>, Option<sled::IVec>)>;

/// An open database: what the handle slot holds.
#[derive(Debug)]
pub(crate) struct Handles {
    pub(crate) db: sled::Db,
    pub(crate) tree: sled::Tree,
    /// The intents of multi-key appends in progress (see `intent.rs`).
    pub(crate) intents: sled::Tree,
    /// sled's data file, to `fsync` after each flush ([`Durability::Fsync`]).
    pub(crate) fsync: Option<File>,
    /// Set by an injected sled failure: like sled after a real I/O error,
    /// this database then never flushes again and must be reopened.
    injected_failure: Mutex<Option<StorageError>>,
}

impl Handles {
    /// Opens the database in `path`, with sled's data file for `fsync` when
    /// `durability` asks for it, waiting up to `lock_wait` for a lock another
    /// handle still holds.
    pub(crate) fn open(
        path: &Path,
        durability: Durability,
        lock_wait: Duration,
    ) -> Result<Handles, StorageError> {
        let db = open_db(path, lock_wait)?;
        let fsync = match durability {
            // sled keeps its log in the file `db` of its directory; an fsync
            // through any descriptor of that file syncs all of it.
            Durability::Fsync => {
                let data_file = path.join("db");
                Some(File::open(&data_file).map_err(|e| {
                    StorageError::io_from(format_args!("cannot open {} to fsync it", data_file.display()), e)
                })?)
            }
            Durability::SledFlush => None,
        };
        Handles::new(db, fsync)
    }

    /// Handles over an open database.
    pub(crate) fn new(db: sled::Db, fsync: Option<File>) -> Result<Handles, StorageError> {
        let tree = guarded(|| db.open_tree(keys::PARTITIONS_TREE).map_err(from_sled))?;
        let intents = guarded(|| db.open_tree(intent::INTENTS_TREE).map_err(from_sled))?;
        Ok(Handles { db, tree, intents, fsync, injected_failure: Mutex::new(None) })
    }
}

/// A partition's lock, and what it guards.
#[derive(Debug, Default)]
pub(crate) struct PartitionState {
    /// The highest epoch the partition accepted, once read from the database.
    epoch: Option<OwnerEpoch>,
}

/// One append on its way to its completion, in the flusher's queue.
#[derive(Debug)]
pub(crate) enum Item {
    /// Refused or answered before anything was applied (a fenced epoch,
    /// invalid input, an append with nothing to write).
    Done { completion: AppendCompletion, result: Result<(), StorageError> },
    /// Applied to the database (or, with `error`, failed while applying):
    /// durable once a flush after it succeeds.
    Applied { completion: AppendCompletion, undo: Undo, error: Option<StorageError> },
    /// Arrived while the store was failed: applied by the flusher once the
    /// store has recovered.
    Deferred {
        completion: AppendCompletion,
        partition: CoordinatorPartition,
        epoch: OwnerEpoch,
        writes: Writes,
    },
}

/// What the flusher has still to do.
#[derive(Debug, Default)]
pub(crate) struct Queue {
    pub(crate) items: Vec<Item>,
    pub(crate) shutdown: bool,
}

/// What the store knows about its last failure.
#[derive(Debug, Default)]
pub(crate) struct Health {
    /// The failure that put the store in the failed state.
    pub(crate) error: Option<StorageError>,
    /// The undo records of every append that failed since, in apply order.
    pub(crate) undo: Vec<Undo>,
}

/// Counters, for tests and diagnostics.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) flushes: AtomicU64,
    pub(crate) failed_appends: AtomicU64,
    pub(crate) recoveries: AtomicU64,
    pub(crate) reopens: AtomicU64,
}

/// Everything the store's clones and its flusher thread share.
#[derive(Debug)]
pub(crate) struct Shared {
    /// The directory, when the store opened it (and so can reopen it).
    pub(crate) path: Option<PathBuf>,
    pub(crate) partitions: u32,
    pub(crate) durability: Durability,
    pub(crate) faults: Option<FlushFaults>,
    /// `None` only while a reopen after a failure has not succeeded yet.
    slot: RwLock<Option<Handles>>,
    states: Box<[RwLock<PartitionState>]>,
    /// Set from a failure until the store has recovered; appends that arrive
    /// meanwhile are deferred to the flusher, which recovers first.
    pub(crate) failed: AtomicBool,
    /// Set once the layout record is known to name v3, which it must before
    /// a consumer-group record is written (`layout::require_v3`).
    layout_v3: AtomicBool,
    pub(crate) health: Mutex<Health>,
    pub(crate) queue: Mutex<Queue>,
    /// Wakes the flusher when an item is queued or the store shuts down.
    pub(crate) wake: Condvar,
    pub(crate) counters: Counters,
}

impl Shared {
    pub(crate) fn new(
        handles: Handles,
        path: Option<PathBuf>,
        partitions: u32,
        durability: Durability,
        faults: Option<FlushFaults>,
    ) -> Shared {
        Shared {
            path,
            partitions,
            durability,
            faults,
            slot: RwLock::new(Some(handles)),
            states: (0..partitions).map(|_| RwLock::default()).collect(),
            failed: AtomicBool::new(false),
            layout_v3: AtomicBool::new(false),
            health: Mutex::default(),
            queue: Mutex::default(),
            wake: Condvar::new(),
            counters: Counters::default(),
        }
    }

    /// Runs `f` on the open database; `Unavailable` while a reopen is pending.
    pub(crate) fn with_handles<T>(
        &self,
        f: impl FnOnce(&Handles) -> Result<T, StorageError>,
    ) -> Result<T, StorageError> {
        let slot = self.read_slot();
        match slot.as_ref() {
            Some(handles) => guarded(|| f(handles)),
            None => Err(StorageError::unavailable(
                "the store is reopening its database after a storage failure".to_owned(),
            )),
        }
    }

    /// Refuses a partition the store does not have.
    pub(crate) fn check_partition(&self, partition: CoordinatorPartition) -> Result<(), StorageError> {
        if partition.0 < self.partitions {
            Ok(())
        } else {
            Err(StorageError::InvalidInput {
                message: format!(
                    "{partition} is outside the store's {} coordinator partitions",
                    self.partitions
                ),
            })
        }
    }

    /// The append entry point (see `MetadataStore::append`).
    pub(crate) fn append(
        &self,
        partition: CoordinatorPartition,
        epoch: OwnerEpoch,
        records: Vec<Record>,
        completion: AppendCompletion,
    ) {
        if let Err(e) = self.check_partition(partition) {
            // No append of a partition that does not exist can be in flight.
            return completion.complete(Err(e));
        }
        // Encoded before the partition lock, to keep the lock short.
        let writes = encode_records(partition, records);
        let mut state = self.state(partition);
        let item = match writes {
            Err(e) => Item::Done { completion, result: Err(e) },
            Ok(writes) if self.failed.load(Ordering::Acquire) => {
                Item::Deferred { completion, partition, epoch, writes }
            }
            Ok(writes) => self.apply(&mut state, partition, epoch, writes, completion),
        };
        self.enqueue(item);
        drop(state);
    }

    /// The highest epoch `partition` accepted.
    pub(crate) fn owner_epoch(&self, partition: CoordinatorPartition) -> Result<OwnerEpoch, StorageError> {
        self.check_partition(partition)?;
        let mut state = self.state(partition);
        self.current_epoch(&mut state, partition)
    }

    fn current_epoch(
        &self,
        state: &mut PartitionState,
        partition: CoordinatorPartition,
    ) -> Result<OwnerEpoch, StorageError> {
        if let Some(epoch) = state.epoch {
            return Ok(epoch);
        }
        let epoch = self.with_handles(|h| load::read_epoch(&h.tree, partition))?;
        state.epoch = Some(epoch);
        Ok(epoch)
    }

    /// Checks the epoch and applies the writes, holding the partition's lock.
    pub(crate) fn apply(
        &self,
        state: &mut PartitionState,
        partition: CoordinatorPartition,
        epoch: OwnerEpoch,
        mut writes: Writes,
        completion: AppendCompletion,
    ) -> Item {
        let current = match self.current_epoch(state, partition) {
            Ok(current) => current,
            Err(e) => {
                if is_failure(&e) {
                    self.fail(&e);
                }
                return Item::Done { completion, result: Err(e) };
            }
        };
        if epoch < current {
            let result =
                Err(StorageError::Fenced { partition: partition.0, epoch: epoch.0, current: current.0 });
            return Item::Done { completion, result };
        }
        if let Err(e) = self.layout_for(&writes) {
            if is_failure(&e) {
                self.fail(&e);
            }
            return Item::Done { completion, result: Err(e) };
        }
        if epoch > current {
            writes.insert(keys::epoch_key(partition).to_vec(), Some(codec::encode_epoch(epoch).to_vec()));
        }
        if writes.is_empty() {
            return Item::Done { completion, result: Ok(()) };
        }
        let mut undo = Undo::with_capacity(writes.len());
        let applied = self.with_handles(|h| {
            for key in writes.keys() {
                undo.push((key.clone(), h.tree.get(key).map_err(from_sled)?));
            }
            intent::write(h, partition, writes).map_err(from_sled)
        });
        match applied {
            Ok(()) => {
                state.epoch = Some(epoch);
                Item::Applied { completion, undo, error: None }
            }
            Err(e) => {
                self.fail(&e);
                // Part of the batch may be visible: read the epoch again after recovery.
                state.epoch = None;
                Item::Applied { completion, undo, error: Some(e) }
            }
        }
    }

    /// Makes the layout record name v3 before the first consumer-group record
    /// or pending transactional offset is written (once per store; tombstones
    /// need no flip: a v2 store holds nothing they could remove).
    fn layout_for(&self, writes: &Writes) -> Result<(), StorageError> {
        if self.layout_v3.load(Ordering::Acquire)
            || !writes.iter().any(|(key, value)| value.is_some() && keys::is_v3_key(key))
        {
            return Ok(());
        }
        self.with_handles(|h| {
            layout::require_v3(h, self.partitions, |h| {
                self.counters.flushes.fetch_add(1, Ordering::Relaxed);
                self.flush_handles(h)
            })
        })?;
        self.layout_v3.store(true, Ordering::Release);
        Ok(())
    }

    fn enqueue(&self, item: Item) {
        let mut queue = lock(&self.queue);
        queue.items.push(item);
        drop(queue);
        self.wake.notify_one();
    }

    /// Puts the store in the failed state (logging the first failure).
    pub(crate) fn fail(&self, error: &StorageError) {
        let mut health = lock(&self.health);
        if health.error.is_none() {
            tracing::error!(
                error = %error,
                "group-storage-sled: a write failed; appends fail until the store recovers (on the next append)"
            );
            health.error = Some(error.clone());
        }
        self.failed.store(true, Ordering::Release);
    }

    /// The error appends applied before a failure are failed with.
    pub(crate) fn failure(&self) -> StorageError {
        lock(&self.health).error.clone().unwrap_or_else(|| StorageError::io("the store failed"))
    }

    /// One flush of the open database: sled's, then the `fsync`.
    pub(crate) fn flush(&self) -> Result<(), StorageError> {
        self.counters.flushes.fetch_add(1, Ordering::Relaxed);
        self.with_handles(|h| self.flush_handles(h))
    }

    /// Makes everything written to `handles` durable, per the durability.
    pub(crate) fn flush_handles(&self, handles: &Handles) -> Result<(), StorageError> {
        let fault = self.faults.as_ref().and_then(FlushFaults::before_flush);
        if let Some(e) = lock(&handles.injected_failure).clone() {
            return Err(e);
        }
        if let Some((Fault::Sled, e)) = fault {
            *lock(&handles.injected_failure) = Some(e.clone());
            return Err(e);
        }
        guarded(|| handles.db.flush().map(drop).map_err(from_sled))?;
        if let Some((Fault::Fsync, e)) = fault {
            return Err(e);
        }
        match &handles.fsync {
            Some(file) => file.sync_data().map_err(|e| StorageError::io_from("fsync of sled's data file", e)),
            None => Ok(()),
        }
    }

    /// Brings a failed store back, holding every partition lock: in place if
    /// the database still flushes, else by reopening it; then restores what
    /// every failed append overwrote, durably, so that nothing but
    /// acknowledged appends remains. On `Err` the store stays failed (and
    /// keeps the undo records for the next attempt).
    pub(crate) fn recover(
        &self,
        states: &mut [RwLockWriteGuard<'_, PartitionState>],
    ) -> Result<(), StorageError> {
        let mut slot = self.write_slot();
        let mut reopened = false;
        let in_place = match slot.as_ref() {
            Some(handles) => self.flush_handles(handles),
            None => Err(StorageError::io("no database is open")),
        };
        if let Err(in_place) = in_place {
            let Some(path) = &self.path else {
                return Err(StorageError::unavailable(format!(
                    "the database cannot recover in place ({in_place}) and a store made with \
                         `from_db` cannot reopen it"
                )));
            };
            // sled stays failed after an I/O error: drop it (releasing its
            // file lock) and open the directory again. Dropping a database
            // flushes it, which panics in sled if the disk is still broken.
            let old = slot.take();
            if catch_unwind(AssertUnwindSafe(move || drop(old))).is_err() {
                tracing::warn!("group-storage-sled: sled panicked while closing the failed database");
            }
            let handles = Handles::open(path, self.durability, SledMetadataStore::LOCK_WAIT)?;
            match layout::prepare(&handles, self.partitions, true, |h| self.flush_handles(h))? {
                Prepared::Existing => {}
                other => {
                    return Err(StorageError::unavailable(format!(
                        "the reopened database is not the store's ({other:?})"
                    )));
                }
            }
            *slot = Some(handles);
            self.counters.reopens.fetch_add(1, Ordering::Relaxed);
            reopened = true;
        }
        let Some(handles) = slot.as_ref() else { return Err(StorageError::io("no database is open")) };
        let mut health = lock(&self.health);
        let rolled_back = health.undo.len();
        // Intents first: one left by a failed append must not be rolled forward
        // over the restored values by a later open.
        guarded(|| intent::clear(handles))?;
        if !health.undo.is_empty() {
            // Restored latest first, so each key ends with what it held before
            // the first failed append that wrote it.
            let mut restore = BTreeMap::new();
            for undo in health.undo.iter().rev() {
                for (key, value) in undo {
                    restore.insert(key.clone(), value.clone());
                }
            }
            let mut batch = sled::Batch::default();
            for (key, value) in restore {
                match value {
                    Some(value) => batch.insert(key, value),
                    None => batch.remove(key),
                }
            }
            guarded(|| handles.tree.apply_batch(batch).map_err(from_sled))?;
            self.flush_handles(handles)?;
        }
        let error = health.error.take();
        health.undo.clear();
        for state in states.iter_mut() {
            state.epoch = None;
        }
        self.failed.store(false, Ordering::Release);
        self.counters.recoveries.fetch_add(1, Ordering::Relaxed);
        tracing::info!(
            reopened,
            rolled_back,
            failure = %error.map_or_else(String::new, |e| e.to_string()),
            "group-storage-sled: recovered from a storage failure"
        );
        Ok(())
    }

    /// Every partition lock, in index order.
    pub(crate) fn all_states(&self) -> Vec<RwLockWriteGuard<'_, PartitionState>> {
        self.states.iter().map(|s| s.write().unwrap_or_else(PoisonError::into_inner)).collect()
    }

    /// A partition's lock, to append.
    pub(crate) fn state(&self, partition: CoordinatorPartition) -> RwLockWriteGuard<'_, PartitionState> {
        self.states[partition.0 as usize].write().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `f` on the open database while no append of `partition` is
    /// being applied, so that it sees every append whole.
    pub(crate) fn read_partition<T>(
        &self,
        partition: CoordinatorPartition,
        f: impl FnOnce(&Handles) -> Result<T, StorageError>,
    ) -> Result<T, StorageError> {
        self.check_partition(partition)?;
        let _state = self.states[partition.0 as usize].read().unwrap_or_else(PoisonError::into_inner);
        self.with_handles(f)
    }

    /// One partition, read whole.
    pub(crate) fn load_partition(
        &self,
        partition: CoordinatorPartition,
        mode: load::Unreadable,
        parts: usize,
    ) -> Result<(LoadedPartition, Vec<StorageError>), StorageError> {
        self.read_partition(partition, |h| load::load_partition(&h.tree, partition, mode, parts))
    }

    /// Every partition, each read whole (not all at one moment).
    pub(crate) fn load_all(
        &self,
        mode: load::Unreadable,
    ) -> Result<(StoredGroups, Vec<StorageError>), StorageError> {
        load::load_all(self.partitions, |p| self.load_partition(p, mode, 1))
    }

    fn read_slot(&self) -> RwLockReadGuard<'_, Option<Handles>> {
        self.slot.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write_slot(&self) -> RwLockWriteGuard<'_, Option<Handles>> {
        self.slot.write().unwrap_or_else(PoisonError::into_inner)
    }
}

/// True for errors of the machinery (I/O, an unavailable database), which
/// put the store in the failed state and count as failed appends; false for
/// refusals of the append itself.
pub(crate) fn is_failure(e: &StorageError) -> bool {
    matches!(e, StorageError::Io { .. } | StorageError::Unavailable { .. } | StorageError::Locked { .. })
}

/// An append's records as writes to `partition`'s keys (a live record's
/// value in the shared codec; a tombstone removes its key); bad input writes
/// nothing.
fn encode_records(partition: CoordinatorPartition, records: Vec<Record>) -> Result<Writes, StorageError> {
    let mut writes = Writes::new();
    for record in records {
        let key = match &record {
            Record::Group(group) => keys::group_key(partition, &group.group_id),
            Record::GroupTombstone { group_id } => keys::group_key(partition, group_id),
            Record::Offset { group_id, partition: tp, .. }
            | Record::OffsetTombstone { group_id, partition: tp } => {
                keys::offset_key(partition, group_id, tp.topic(), tp.partition)?
            }
            // A group whose consumer records are all removed leaves no key behind.
            Record::Modern(c) => keys::consumer_key(partition, c.group_id(), c.record_type(), c.sub_key())?,
            Record::TxnOffset(t) => keys::txn_offset_key(
                partition,
                &t.group_id,
                t.producer_id,
                t.partition.topic(),
                t.partition.partition,
            )?,
            Record::TxnOffsetTombstone { group_id, producer_id, partition: tp } => {
                keys::txn_offset_key(partition, group_id, *producer_id, tp.topic(), tp.partition)?
            }
            #[allow(unreachable_patterns)]
            other => {
                return Err(StorageError::InvalidInput {
                    message: format!("a record kind this store cannot hold: {other:?}"),
                });
            }
        };
        writes.insert(key, codec::encode_value(&record));
    }
    Ok(writes)
}

/// Locks a mutex whose data stays consistent even if a holder panicked
/// (every update is complete before the lock is released).
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
