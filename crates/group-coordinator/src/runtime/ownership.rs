//! Coordinator partitions a node gains and loses: [`PartitionState`],
//! [`GroupCoordinator::load_partition`] and [`GroupCoordinator::unload_partition`],
//! as Kafka's `CoordinatorRuntime.scheduleLoadOperation` and
//! `scheduleUnloadOperation` serve `GroupCoordinatorService.onElection` and
//! `onResignation`.
//!
//! A partition is `Unowned` (its groups' requests are answered `NOT_COORDINATOR`),
//! `Loading` (`COORDINATOR_LOAD_IN_PROGRESS`) or `Owned` at an epoch (served by
//! its core, appended with that epoch). Each unload and each load bumps the
//! partition's incarnation, under its lock: what was started in an older one
//! (a load that has not installed its core yet, an append in flight, a request
//! to the storage stage) sees the change and leaves the partition alone.

use group_types::hash::FastMap;
use std::sync::Arc;

use group_offsets::{CoordinatorPartition, OwnerEpoch, StorageError};
use group_types::{ErrorCode, HeartbeatResponse};

use super::pending::Slot;
use super::{Delivery, GroupCoordinator, Inner, Shard, fill, lock, timers};
use crate::{CoordinatorError, Effects, Request, Response};

/// Whether this node serves a coordinator partition, from
/// [`GroupCoordinator::partition_state`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PartitionState {
    /// Not served here: its groups' requests are answered `NOT_COORDINATOR`.
    Unowned,
    /// Being loaded ([`GroupCoordinator::load_partition`] is reading it): its
    /// groups' requests are answered `COORDINATOR_LOAD_IN_PROGRESS`.
    Loading,
    /// Served here; its appends carry this epoch.
    Owned(OwnerEpoch),
}

impl PartitionState {
    /// True when the partition is [`Owned`](Self::Owned).
    pub fn is_owned(self) -> bool {
        matches!(self, PartitionState::Owned(_))
    }
}

/// What the builder's `on_partition_lost` set.
pub(super) type LostListener = Arc<dyn Fn(CoordinatorPartition, OwnerEpoch) + Send + Sync>;

/// The builder's options besides storage, clock, authorizer and topic metadata.
#[derive(Default)]
pub(super) struct Options {
    /// Partitions start unowned; an ownership manager loads them.
    pub(super) managed: bool,
    pub(super) on_lost: Option<LostListener>,
    /// Nothing is served once it has run out (see `ServingLease`).
    pub(super) lease: Option<Arc<super::ServingLease>>,
    /// The first metadata image (see `GroupCoordinatorBuilder::metadata_image`).
    pub(super) image: Arc<crate::MetadataImage>,
    /// Server assignors besides the built-ins.
    pub(super) assignors: Vec<Arc<dyn group_assignors::server::ServerAssignor>>,
    /// Where share groups' partitions get initialized.
    pub(super) share_persister: Option<Arc<dyn super::SharePersister>>,
    /// Where DescribeShareGroupOffsets finds partitions' end offsets (none: lag -1).
    pub(super) end_offsets: Option<Arc<dyn crate::PartitionEndOffsets>>,
    pub(super) share_routing: super::ShareStateRouting,
    /// Where per-group configs are kept (none: in memory).
    pub(super) group_config_store: Option<Arc<dyn crate::GroupConfigStore>>,
}

/// A request waiting in a partition: where its answer goes, and the answer it
/// gets if the partition is unloaded first (`NOT_COORDINATOR` in its shape).
pub(super) struct Waiter {
    pub(super) slot: Arc<Slot>,
    pub(super) lost: Lost,
}

/// A waiting request's answer should its partition be unloaded first.
pub(super) enum Lost {
    /// Built when the request came in.
    Answer(Response),
    /// An OffsetCommit: its answer is held in the core with every partition,
    /// so the `NOT_COORDINATOR` one is made from it at the unload, not built
    /// for every commit that might wait (a response-sized allocation each).
    HeldCommit,
}

impl Lost {
    /// What to keep for `request` (about to go to the core).
    pub(super) fn of(request: &crate::Request) -> Lost {
        match request {
            crate::Request::OffsetCommit(_) => Lost::HeldCommit,
            other => Lost::Answer(other.refused(ErrorCode::NotCoordinator)),
        }
    }
}

/// The answer to `request` when its partition is not owned here, or `None` when
/// the request goes to the partition's core.
///
/// Kafka's order (`GroupCoordinatorService`, then `CoordinatorRuntime`): ACLs were
/// checked before this, in `KafkaApis` (here, `Inner::admit`); a request Kafka's
/// service validates first (an empty group id is `INVALID_GROUP_ID` whatever the
/// partition's state, `isGroupIdNotEmpty`: the table's `core_first`) goes to the
/// core, which is empty while the partition is not owned and answers just that; then a loading partition answers
/// `COORDINATOR_LOAD_IN_PROGRESS` and an unowned one `NOT_COORDINATOR`, the whole
/// request at once (DescribeGroups and DeleteGroups reach this one group at a
/// time, so each group gets its own partition's answer). A Heartbeat during the
/// load is answered `NONE`, blindly, as `GroupCoordinatorService.heartbeat` does
/// (`kafka-semantics.md` §2.0): the member keeps its session, and the loaded
/// group arms every member's session deadline afresh.
pub(super) fn refusal(
    state: PartitionState,
    request: &Request,
    config: &crate::CoordinatorConfig,
) -> Option<Response> {
    // One check for every store and every partition state: an id no answer could
    // carry back (nor sled key) is refused before anything is written for it.
    if let Some((_, group)) = request.group_acl()
        && group.len() > crate::MAX_GROUP_ID_BYTES
    {
        return Some(request.refused(ErrorCode::InvalidGroupId));
    }
    let code = match state {
        PartitionState::Owned(_) => return None,
        PartitionState::Unowned => ErrorCode::NotCoordinator,
        PartitionState::Loading => ErrorCode::CoordinatorLoadInProgress,
    };
    if request.core_first(config) {
        return None;
    }
    if code == ErrorCode::CoordinatorLoadInProgress && matches!(request, Request::Heartbeat(_)) {
        return Some(Response::Heartbeat(HeartbeatResponse { error_code: ErrorCode::None }));
    }
    Some(request.refused(code))
}

impl Inner {
    /// Unloads partition `index` under its lock: `Unowned`, a new incarnation,
    /// every waiting request answered `NOT_COORDINATOR` (returned, for the caller
    /// to deliver once unlocked), queued writes dropped and those in flight
    /// forgotten (their late completion is ignored), timers dropped, and the core
    /// replaced by an empty one. Returns the answers and how many writes left the
    /// write gauge's count (the caller subtracts them after delivering).
    pub(super) fn unload_locked(&self, index: usize, shard: &mut Shard) -> (Delivery, usize) {
        shard.incarnation += 1;
        shard.state = PartitionState::Unowned;
        let mut deliver = Delivery::with_capacity(shard.waiters.len());
        let mut commits = FastMap::default();
        shard.core.for_each_held_commit(|request, held| {
            let mut answer = held.clone();
            answer.set_all(ErrorCode::NotCoordinator);
            commits.insert(request, answer);
        });
        for (request, waiter) in shard.waiters.drain() {
            let answer = match waiter.lost {
                Lost::Answer(answer) => answer,
                Lost::HeldCommit => match commits.remove(&request) {
                    Some(answer) => Response::OffsetCommit(answer),
                    None => {
                        // Every waiting commit is held in the core; should one not
                        // be, its client still learns the partition moved.
                        debug_assert!(false, "waiting OffsetCommit {request:?} not held in the core");
                        tracing::warn!(
                            target: "group_coordinator",
                            partition = index,
                            "a waiting OffsetCommit was not held in the core at unload; answered without partitions"
                        );
                        Response::OffsetCommit(group_types::OffsetCommitResponse::default())
                    }
                },
            };
            shard.counters.on_response(&answer);
            deliver.push((waiter.slot, answer));
        }
        let dropped = shard.queued.len() + shard.in_flight.len();
        shard.queued = Vec::new();
        shard.in_flight = Vec::new();
        shard.appending = false;
        shard.timers = timers::LazyTimers::default();
        shard.scratch = Effects::default();
        let image = lock(&self.image).clone();
        shard.core = super::new_core(
            &self.config,
            self.entropy,
            index as u32,
            shard.incarnation,
            &image,
            &self.assignors,
        );
        self.group_configs.install(&mut shard.core, index as u32, &self.config);
        self.recount(shard);
        (deliver, dropped)
    }

    fn unload(&self, index: usize) {
        let mut shard = lock(&self.shards[index]);
        let (deliver, dropped) = self.unload_locked(index, &mut shard);
        drop(shard);
        fill(deliver);
        self.writes.sub(dropped);
    }

    /// A load of `index` in `incarnation` failed: the partition goes back to
    /// `Unowned`, unless a later call took it over meanwhile (then `false`: the
    /// failure is likely that call's doing, a higher epoch fencing this one).
    fn abandon_load(&self, index: usize, incarnation: u64) -> bool {
        let mut shard = lock(&self.shards[index]);
        if shard.incarnation != incarnation {
            return false;
        }
        shard.state = PartitionState::Unowned;
        true
    }

    fn index_of(&self, partition: CoordinatorPartition) -> Result<usize, CoordinatorError> {
        if partition.0 < self.partitions {
            Ok(partition.0 as usize)
        } else {
            Err(CoordinatorError::UnknownPartition { partition, partitions: self.partitions })
        }
    }
}

impl GroupCoordinator {
    /// Number of coordinator partitions: the storage's
    /// [`partition_count`](group_offsets::MetadataStore::partition_count).
    pub fn partition_count(&self) -> u32 {
        self.inner.partitions
    }

    /// Whether this node serves `partition` (`Unowned` for one out of range).
    pub fn partition_state(&self, partition: CoordinatorPartition) -> PartitionState {
        match self.inner.shards.get(partition.0 as usize) {
            Some(shard) => lock(shard).state,
            None => PartitionState::Unowned,
        }
    }

    /// The partitions this node serves, with their epochs, in partition order.
    pub fn owned_partitions(&self) -> Vec<(CoordinatorPartition, OwnerEpoch)> {
        (0..self.inner.shards.len())
            .filter_map(|i| match lock(&self.inner.shards[i]).state {
                PartitionState::Owned(epoch) => Some((CoordinatorPartition(i as u32), epoch)),
                _ => None,
            })
            .collect()
    }

    /// Makes this node the owner of `partition` at `epoch`, as Kafka's
    /// `CoordinatorRuntime.scheduleLoadOperation` does on `onElection`. Blocks until
    /// the partition is served (call it from the ownership manager's thread).
    ///
    /// The partition is `Loading` meanwhile (its groups' requests answered
    /// `COORDINATOR_LOAD_IN_PROGRESS`). What it held before is unloaded first
    /// (waiting requests answered `NOT_COORDINATOR`) and read again: storage is
    /// the truth once older owners are fenced. The fence is an empty append at
    /// `epoch`, so the engine refuses every later append of a lower epoch before
    /// anything is read; then the partition is loaded, its groups resumed as at
    /// open (Stable groups with every member's session armed, the retention job
    /// armed), and from then on its appends carry `epoch`. No lock is held across
    /// the storage calls.
    ///
    /// # Errors
    ///
    /// [`CoordinatorError::LoadFailed`] when the fence or the load fails (an
    /// `epoch` below what the partition accepted is refused as
    /// [`StorageError::Fenced`]): the partition is `Unowned` again.
    /// [`CoordinatorError::LoadSuperseded`] when an unload or another load of the
    /// same partition came while this one was reading: the later call wins.
    /// [`CoordinatorError::UnknownPartition`], [`CoordinatorError::Stopped`].
    pub fn load_partition(
        &self,
        partition: CoordinatorPartition,
        epoch: OwnerEpoch,
    ) -> Result<(), CoordinatorError> {
        let inner = &*self.inner;
        let index = inner.index_of(partition)?;
        if inner.stopped.load(std::sync::atomic::Ordering::Acquire) {
            return Err(CoordinatorError::Stopped);
        }
        let incarnation = {
            let mut shard = lock(&inner.shards[index]);
            let (deliver, dropped) = inner.unload_locked(index, &mut shard);
            shard.state = PartitionState::Loading;
            let incarnation = shard.incarnation;
            drop(shard);
            fill(deliver);
            inner.writes.sub(dropped);
            incarnation
        };
        let loaded = inner
            .storage
            .append_blocking(partition, epoch, Vec::new())
            .and_then(|()| inner.storage.load(partition))
            .and_then(|loaded| {
                // A node with a higher epoch wrote between the fence and the read.
                if loaded.epoch > epoch {
                    Err(StorageError::Fenced {
                        partition: partition.0,
                        epoch: epoch.0,
                        current: loaded.epoch.0,
                    })
                } else {
                    Ok(loaded)
                }
            });
        let loaded = match loaded {
            Ok(loaded) => loaded,
            Err(source) => {
                if !inner.abandon_load(index, incarnation) {
                    return Err(CoordinatorError::LoadSuperseded { partition, epoch });
                }
                tracing::warn!(
                    target: "group_coordinator",
                    partition = partition.0,
                    epoch = epoch.0,
                    error = %source,
                    "could not load the partition; it stays unowned"
                );
                return Err(CoordinatorError::LoadFailed { partition, epoch, source });
            }
        };
        // The core is built off the lock: requests meanwhile are answered
        // LOAD_IN_PROGRESS without waiting for it.
        let image = lock(&inner.image).clone();
        let mut core =
            super::new_core(&inner.config, inner.entropy, partition.0, incarnation, &image, &inner.assignors);
        inner.group_configs.install(&mut core, partition.0, &inner.config);
        let fx = core.load(inner.clock.now_ms(), loaded.groups);
        let mut shard = lock(&inner.shards[index]);
        if shard.incarnation != incarnation {
            return Err(CoordinatorError::LoadSuperseded { partition, epoch });
        }
        if inner.stopped.load(std::sync::atomic::Ordering::Acquire) {
            shard.state = PartitionState::Unowned;
            return Err(CoordinatorError::Stopped);
        }
        shard.core = core;
        shard.scratch = fx;
        shard.epoch = epoch;
        shard.state = PartitionState::Owned(epoch);
        let mut deliver = Delivery::new();
        let kick = inner.run_for(&mut shard, None, &mut deliver);
        drop(shard);
        fill(deliver);
        if kick {
            inner.kick(index, incarnation);
        }
        tracing::info!(target: "group_coordinator", partition = partition.0, epoch = epoch.0, "partition loaded");
        Ok(())
    }

    /// Stops serving `partition`, as Kafka's `CoordinatorRuntime.scheduleUnloadOperation`
    /// does on `onResignation`: it becomes `Unowned` at once, every request waiting
    /// in it (parked joins and syncs, requests waiting for a write) is answered
    /// `NOT_COORDINATOR`, writes not appended yet are dropped, an append in flight
    /// is left to complete and its outcome ignored (a later owner reads what the
    /// engine made of it), its timers are dropped and its groups freed. Unloading a
    /// partition that is not owned (or out of range) changes nothing but the
    /// incarnation: a load still reading it will not install what it read.
    pub fn unload_partition(&self, partition: CoordinatorPartition) {
        if let Ok(index) = self.inner.index_of(partition) {
            self.inner.unload(index);
            tracing::info!(target: "group_coordinator", partition = partition.0, "partition unloaded");
        }
    }
}
