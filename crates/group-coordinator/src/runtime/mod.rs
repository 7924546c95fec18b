//! The threaded runtime: `GroupCoordinator`, one core per coordinator partition
//! behind its own lock, one timer thread, and one storage stage that appends the
//! cores' writes off every lock and feeds completions back.
//!
//! # Threads and locks
//!
//! A request locks its group's partition, runs the core, and leaves with its
//! answer or a [`Pending`] slot; writes the core issued are queued on the
//! partition. The storage stage (threads `group-coordinator-storage-N`, two per
//! core up to four, each owning a share of the partitions) takes a
//! partition's queued writes as one batch, releases the lock, and hands the batch
//! to [`MetadataStore::append`]; the engine completes it whenever it is durable,
//! on any thread, and the stage feeds the outcome back to the core under the
//! lock, which releases the answers that waited for it. One append per partition
//! is in flight at a time (so completions come back in write order, as the core's
//! contract requires), while writes issued meanwhile wait in the queue and go out
//! together as the next batch; appends of different partitions are in flight
//! together, and a durable engine serves them with shared flushes. The timer
//! thread only runs cores. No thread ever holds a partition lock across storage
//! I/O. With an engine that [completes inline](MetadataStore::completes_inline)
//! (memory), the thread that issues a write to an idle partition makes the
//! append itself and feeds the completion to the core at once: nothing is
//! handed over and no thread is woken. A request thread does so still holding
//! the lock (there is no I/O to hold it across), so a request whose answer
//! waited for that write gets it back directly, without a slot (see
//! `Inner::submit`; timers and loads go through `Inner::kick`).

mod assignment;
mod authorization;
mod builder;
mod clock;
mod group_configs;
mod ownership;
mod pending;
mod serving_lease;
mod share_persister;
mod share_state;
mod storage_stage;
mod timers;
mod txn_markers;

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender, bounded};
use group_offsets::{CoordinatorPartition, MetadataStore, OwnerEpoch, Record, StorageError};

pub use self::authorization::Caller;
pub(crate) use self::authorization::EachGroup;
pub use self::builder::GroupCoordinatorBuilder;
pub use self::clock::{Clock, ManualClock, SystemClock, TimerDriver};
pub use self::ownership::PartitionState;
use self::ownership::{LostListener, Waiter};
use self::pending::Slot;
pub use self::pending::{Outcome, Pending, ResponseKind};
pub use self::serving_lease::ServingLease;
pub use self::share_persister::SharePersister;
pub(crate) use self::share_state::SharePartitions;
pub use self::share_state::ShareStateRouting;
use self::storage_stage::StageMessage;
use crate::{
    CoordinatorConfig, CoordinatorCore, CoordinatorError, Effects, GroupMetadata, Request, RequestId,
    Response, WriteId,
};
use group_types::ErrorCode;
use group_types::hash::FastMap;

use crate::MetadataImage;

/// One coordinator partition: its core and what the runtime keeps beside it.
struct Shard {
    core: CoordinatorCore,
    timers: timers::LazyTimers,
    /// Requests not answered yet, each with its answer should the partition be
    /// lost meanwhile.
    waiters: FastMap<RequestId, Waiter>,
    /// Reused effects buffer (see `Inner::run_for`).
    scratch: Effects,
    /// The last request id handed to this shard's core.
    next_request: u64,
    /// Metrics counted under this shard's lock.
    counters: crate::metrics::ShardCounters,
    /// Writes the core issued that are not appended yet, in issue order.
    queued: Vec<(WriteId, Vec<Record>)>,
    /// The writes of the append in flight, in issue order.
    in_flight: Vec<WriteId>,
    /// True from the moment the stage is asked to append until the partition has
    /// nothing queued or in flight: at most one append per partition at a time.
    appending: bool,
    /// The epoch this node appends with: one above what the partition had when
    /// `open` loaded it, or the one `load_partition` was given.
    epoch: OwnerEpoch,
    /// Whether this node serves the partition.
    state: PartitionState,
    /// The core's groups as last added to [`Inner::groups`] (see `Inner::recount`).
    groups: usize,
    /// Bumped by every unload and every load. A load that finds it moved was
    /// overtaken by a later call; an append or its completion carrying an older
    /// one belongs to an incarnation that is gone, and is ignored.
    incarnation: u64,
}

/// What an inline append left for after the unlock (see `Inner::append_inline`).
enum Inline {
    /// Nothing was appended, or the outcome comes later, through the stage.
    Later,
    /// Fed to the core: whether the next batch is due, and how many writes ended.
    Completed { next: bool, done: usize },
    /// Fenced: the partition is to be unloaded.
    Fenced(Result<(), StorageError>),
}

enum Control {
    Wake,
    Stop,
}

/// Counts writes not yet completed, for [`GroupCoordinator::wait_for_writes`]. An
/// atomic, so that committers of different partitions share no lock; the mutex
/// and condition variable only serve someone waiting for zero.
#[derive(Default)]
struct WriteGauge {
    outstanding: AtomicU64,
    idle_lock: Mutex<()>,
    idle: Condvar,
}

impl WriteGauge {
    fn add(&self, n: usize) {
        if n > 0 {
            self.outstanding.fetch_add(n as u64, Ordering::AcqRel);
        }
    }

    fn sub(&self, n: usize) {
        if n > 0 && self.outstanding.fetch_sub(n as u64, Ordering::AcqRel) == n as u64 {
            let _guard = lock(&self.idle_lock);
            self.idle.notify_all();
        }
    }

    fn is_idle(&self) -> bool {
        self.outstanding.load(Ordering::Acquire) == 0
    }
}

pub(crate) struct Inner {
    shards: Vec<Mutex<Shard>>,
    partitions: u32,
    storage: Arc<dyn MetadataStore>,
    clock: Arc<dyn Clock>,
    config: CoordinatorConfig,
    stopped: AtomicBool,
    /// When the timer thread plans to wake next; a shard arming an earlier deadline wakes it.
    next_wake: AtomicI64,
    control: Option<Sender<Control>>,
    /// The storage stage's queues, one per stage thread; partition `p` belongs
    /// to thread `p % len`.
    stage: Vec<Sender<StageMessage>>,
    writes: WriteGauge,
    /// Appends that failed (logged with the engine's message).
    failed_appends: AtomicU64,
    /// How long appends took (see `CoordinatorMetrics::append_latency`).
    append_latency: crate::LatencyHistogram,
    /// Consulted before any request reaches a core.
    authorizer: Arc<dyn crate::Authorizer>,
    /// Consulted for the partitions of offset writes before they reach a core.
    topics: Arc<dyn crate::TopicMetadata>,
    runtime_counters: crate::metrics::RuntimeCounters,
    /// Mixed into every core's member id seed (see `shard_config`).
    entropy: u64,
    /// Told when a fenced append took a partition away.
    on_lost: Option<LostListener>,
    /// See `GroupCoordinatorBuilder::serving_lease`.
    lease: Option<Arc<ServingLease>>,
    /// The metadata image every new core starts with.
    image: Mutex<Arc<MetadataImage>>,
    /// Server assignors registered besides the built-ins.
    assignors: Vec<Arc<dyn group_assignors::server::ServerAssignor>>,
    /// The engine [completes inline](MetadataStore::completes_inline): the thread
    /// that issues a write to an idle partition appends it (see `kick`).
    inline_appends: bool,
    /// Tells inline appends apart (see `storage_stage::INLINE`).
    append_tokens: AtomicU64,
    /// Groups held by every core together, for `max_groups` (kept by `recount`).
    groups: AtomicUsize,
    /// Where share groups' partitions get initialized (`GroupCoordinatorBuilder::share_persister`).
    share_persister: Option<Arc<dyn SharePersister>>,
    /// Partitions' end offsets for share lag (`GroupCoordinatorBuilder::partition_end_offsets`).
    end_offsets: Option<Arc<dyn crate::PartitionEndOffsets>>,
    /// Which partition hosts a share partition's state (`GroupCoordinatorBuilder::share_state_routing`).
    share_routing: ShareStateRouting,
    /// Every group's configs (`GroupCoordinatorBuilder::group_config_store`).
    group_configs: group_configs::GroupConfigs,
}

/// Kafka's classic group coordinator as a thread-safe service.
///
/// Groups live in coordinator partitions as in Kafka (`abs(hashCode(group_id)) %
/// partitions`, the storage's [`partition_count`](MetadataStore::partition_count),
/// 50 by default), each with its own core behind its own lock, so different groups
/// proceed in parallel; one timer thread fires session, join and sync deadlines
/// (none with a clock that [drives timers](Clock::drives_timers), such as
/// [`ManualClock`]); one storage stage appends every partition's writes to the
/// [`MetadataStore`] off the locks, batching the writes of one partition and keeping
/// appends of many partitions in flight. A response that depends on a write is
/// released once the write is durable; a failed append reverts its partition to
/// the last committed state and is answered as Kafka answers a failed append
/// (mapped per `kafka-semantics.md` §6.7), logged and counted
/// ([`CoordinatorMetrics::write_failures`](crate::CoordinatorMetrics)); the next
/// write tries the engine again, so the coordinator recovers as soon as the
/// engine can write.
///
/// Blocking `handle_*` methods wait for the answer; the methods without the prefix
/// return a [`Pending`] handle at once, which can also be `.await`ed.
///
/// `tracing` events come from the thread that ran the step: the caller's for a
/// request, `group-coordinator-timer` for a deadline, `group-coordinator-storage-N`
/// for what a write's completion released. A subscriber must be global (or set on
/// those threads) to see them all.
pub struct GroupCoordinator {
    inner: Arc<Inner>,
    timer_thread: Mutex<Option<JoinHandle<()>>>,
    stage_threads: Mutex<Vec<JoinHandle<()>>>,
}

impl std::fmt::Debug for GroupCoordinator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupCoordinator")
            .field("partitions", &self.inner.shards.len())
            .field("stopped", &self.inner.stopped.load(Ordering::Relaxed))
            .finish()
    }
}

/// Answers to hand to their waiters once the shard is unlocked.
type Delivery = Vec<(Arc<Slot>, Response)>;

fn fill(deliver: Delivery) {
    for (slot, response) in deliver {
        slot.fill(Ok(response));
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Inner {
    fn shard_of(&self, group_id: &str) -> usize {
        CoordinatorPartition::of(group_id, self.partitions).0 as usize
    }

    /// Applies effects left in the shard's scratch: timers, events, answers, and
    /// writes queued for the storage stage. The answer to `caller`, if it came, is
    /// kept for the caller instead of going through a slot; the others are put in
    /// `deliver`, for the caller to fill once the shard is unlocked (a woken waiter
    /// often comes straight back for the same lock). Returns true when the stage
    /// must be asked to append this partition.
    fn run_for(
        &self,
        shard: &mut Shard,
        mut caller: Option<(RequestId, &mut Option<Response>)>,
        deliver: &mut Delivery,
    ) -> bool {
        self.recount(shard);
        let Shard { timers, waiters, scratch, counters, queued, .. } = shard;
        timers.apply(scratch.timers.drain(..));
        for event in scratch.events.drain(..) {
            counters.on_event(&event);
        }
        // All but the caller's answer go to waiters: one growth, not a doubling
        // series, when a join barrier answers a thousand members at once.
        deliver.reserve(scratch.responses.len().saturating_sub(1));
        for (rid, response) in scratch.responses.drain(..) {
            counters.on_response(&response);
            if let Some((id, slot)) = caller.as_mut()
                && *id == rid
            {
                **slot = Some(response);
                continue;
            }
            if let Some(waiter) = waiters.remove(&rid) {
                deliver.push((waiter.slot, response));
            }
        }
        self.writes.add(scratch.writes.len());
        for write in scratch.writes.drain(..) {
            queued.push((write.id, write.records));
        }
        if shard.core.has_share_state_initializations()
            || shard.core.has_share_state_deletions()
            || shard.core.has_share_state_summaries()
        {
            let (asks, deletions, summaries) = (
                shard.core.take_share_state_initializations(),
                shard.core.take_share_state_deletions(),
                shard.core.take_share_state_summaries(),
            );
            match &self.share_persister {
                Some(persister) => {
                    asks.into_iter().for_each(|ask| persister.initialize(ask));
                    deletions.into_iter().for_each(|ask| persister.delete_state(ask));
                    summaries.into_iter().for_each(|ask| persister.read_summary(ask));
                }
                // `open` refuses share groups without a persister: nothing asks then.
                None => tracing::warn!(
                    target: "group_coordinator",
                    "share state work asked for but no share persister is configured"
                ),
            }
        }
        if let Some(next) = shard.timers.next_deadline()
            && next < self.next_wake.load(Ordering::Acquire)
            && let Some(control) = &self.control
        {
            let _ = control.try_send(Control::Wake);
        }
        if !shard.appending && !shard.queued.is_empty() {
            shard.appending = true;
            return true;
        }
        false
    }

    /// Brings the node's count of groups up to date with `shard`'s core: called
    /// after every step of the core and whenever a core is replaced (a load, an
    /// unload), so that the count never needs another shard's lock.
    fn recount(&self, shard: &mut Shard) {
        let now = shard.core.group_count();
        if now > shard.groups {
            self.groups.fetch_add(now - shard.groups, Ordering::Relaxed);
        } else if now < shard.groups {
            self.groups.fetch_sub(shard.groups - now, Ordering::Relaxed);
        }
        shard.groups = now;
    }

    /// `max_groups` reached and `request` would create a group this node does not
    /// hold: its refusal (`GROUP_MAX_SIZE_REACHED`), counted and logged.
    fn over_group_cap(&self, shard: &mut Shard, request: &Request) -> Option<Response> {
        if self.groups.load(Ordering::Relaxed) < self.config.max_groups || !request.may_create_group() {
            return None;
        }
        let (_, group) = request.group_acl()?;
        if shard.core.has_group(group) {
            return None;
        }
        shard.counters.group_refused(group, self.config.max_groups);
        Some(request.refused(ErrorCode::GroupMaxSizeReached))
    }

    /// Starts the append of partition `index`'s queued writes (of incarnation
    /// `incarnation`: a request that outlives it is ignored). With an engine that
    /// [completes inline](MetadataStore::completes_inline) this thread appends
    /// and handles the completion itself ([`append_inline`](Self::append_inline)),
    /// so no thread is woken; otherwise the storage stage is asked to.
    fn kick(&self, index: usize, incarnation: u64) {
        let tx = &self.stage[index % self.stage.len()];
        if !self.inline_appends {
            let _ = tx.send(StageMessage::Append(index, incarnation));
            return;
        }
        let mut shard = lock(&self.shards[index]);
        if shard.incarnation != incarnation {
            return;
        }
        let mut deliver = Delivery::new();
        let inline = self.append_inline(index, &mut shard, None, &mut deliver);
        self.finish_inline(index, incarnation, shard, inline, deliver, tx);
    }

    /// For an engine that completes inline, with the partition locked and a batch
    /// due: appends it under the lock (there is no I/O to hold it across) and, if
    /// the engine reports at once, feeds the outcome to the core, keeping the
    /// answer to `caller` for it. A fenced outcome is left to
    /// [`finish_inline`](Self::finish_inline), which unloads the partition.
    fn append_inline(
        &self,
        index: usize,
        shard: &mut Shard,
        caller: Option<(RequestId, &mut Option<Response>)>,
        deliver: &mut Delivery,
    ) -> Inline {
        let tx = &self.stage[index % self.stage.len()];
        let Some(batch) = self.take_batch(shard) else { return Inline::Later };
        let Some((result, took)) = self.issue_append(index, batch, tx, true) else { return Inline::Later };
        self.append_latency.record(took);
        if matches!(result, Err(StorageError::Fenced { .. })) {
            return Inline::Fenced(result);
        }
        let (next, done) = self.complete_locked(index, shard, result, caller, deliver);
        Inline::Completed { next, done }
    }

    /// Unlocks after [`append_inline`](Self::append_inline) and does what its
    /// outcome leaves: the next batch, the deliveries, or the unload of a fenced
    /// partition (after anything registered under the lock, such as a slot).
    fn finish_inline(
        &self,
        index: usize,
        incarnation: u64,
        shard: MutexGuard<'_, Shard>,
        inline: Inline,
        deliver: Delivery,
        tx: &Sender<StageMessage>,
    ) {
        let (next, done) = match inline {
            Inline::Completed { next, done } => (next, done),
            Inline::Later | Inline::Fenced(_) => (false, 0),
        };
        self.release_completed(index, shard, next, deliver, done, tx);
        if let Inline::Fenced(result) = inline {
            self.on_completed(index, incarnation, result, tx);
        }
    }

    /// Hands a request to its group's core. The answer, if the request is answered
    /// before the shard is released, comes back directly; otherwise a slot is
    /// registered (under the same lock, so nothing is missed) and returned.
    /// Runs `request` in coordinator partition `index` (its group's: callers pick it
    /// with [`shard_of`](Self::shard_of) before the request moves, so the group id is
    /// never copied to find it).
    /// `visible` says which topics the caller may describe: a regex resolution the
    /// request triggers sees only those (§6.1).
    fn submit(
        &self,
        index: usize,
        request: Request,
        visible: &dyn Fn(&str) -> bool,
    ) -> Result<Outcome, Arc<Slot>> {
        let mut shard = lock(&self.shards[index]);
        if self.stopped.load(Ordering::Acquire) {
            return Ok(Err(CoordinatorError::Stopped));
        }
        let state = match &self.lease {
            Some(lease) if !lease.holds() => PartitionState::Unowned,
            _ => shard.state,
        };
        if let Some(response) = ownership::refusal(state, &request, &self.config) {
            shard.counters.on_response(&response);
            return Ok(Ok(response));
        }
        if let Some(response) = self.over_group_cap(&mut shard, &request) {
            return Ok(Ok(response));
        }
        // Ids only have to be unique within a core: a per-shard counter keeps threads
        // working on different shards off a shared cache line.
        shard.next_request += 1;
        let rid = RequestId(shard.next_request);
        let now = self.clock.now_ms();
        // Taken before the request moves into the core: how the request is
        // answered should the partition be lost while it waits.
        let lost = ownership::Lost::of(&request);
        let Shard { core, scratch, .. } = &mut *shard;
        core.handle_visible_into(now, rid, request, scratch, visible);
        let mut answer = None;
        let mut deliver = Delivery::new();
        let mut kick = self.run_for(&mut shard, Some((rid, &mut answer)), &mut deliver);
        let incarnation = shard.incarnation;
        // With an engine that completes inline the append is made here, so that an
        // answer waiting for this write comes back directly instead of through a slot.
        let mut inline = Inline::Later;
        if kick && answer.is_none() && self.inline_appends {
            kick = false;
            inline = self.append_inline(index, &mut shard, Some((rid, &mut answer)), &mut deliver);
        }
        let result = match answer {
            Some(response) => Ok(Ok(response)),
            None => {
                let slot = Arc::new(Slot::default());
                shard.waiters.insert(rid, Waiter { slot: slot.clone(), lost });
                Err(slot)
            }
        };
        let tx = &self.stage[index % self.stage.len()];
        self.finish_inline(index, incarnation, shard, inline, deliver, tx);
        if kick {
            self.kick(index, incarnation);
        }
        result
    }

    /// Runs `step` on the core holding group `group_id`, at the clock's time,
    /// then applies what it left; nothing when its partition is not served here.
    fn step_group(&self, group_id: &str, step: impl FnOnce(&mut CoordinatorCore, i64, &mut Effects)) {
        self.step_shard(self.shard_of(group_id), step);
    }

    /// Runs `step` on shard `index`'s core, as [`step_group`](Self::step_group).
    fn step_shard(&self, index: usize, step: impl FnOnce(&mut CoordinatorCore, i64, &mut Effects)) {
        let mut shard = lock(&self.shards[index]);
        if self.stopped.load(Ordering::Acquire) || !shard.state.is_owned() {
            return;
        }
        let now = self.clock.now_ms();
        let Shard { core, scratch, .. } = &mut *shard;
        step(core, now, scratch);
        self.run_unlocked(index, shard);
    }

    /// Runs shard `index`'s pending effects (no caller waits on them), then, with the
    /// shard unlocked, delivers the answers and wakes its storage stage if a write is due.
    fn run_unlocked(&self, index: usize, mut shard: MutexGuard<'_, Shard>) {
        let mut deliver = Delivery::new();
        let kick = self.run_for(&mut shard, None, &mut deliver);
        let incarnation = shard.incarnation;
        drop(shard);
        fill(deliver);
        if kick {
            self.kick(index, incarnation);
        }
    }

    fn fire_due_in(&self, index: usize, now: i64) -> bool {
        let mut shard = lock(&self.shards[index]);
        if self.stopped.load(Ordering::Acquire) || !shard.state.is_owned() {
            return false;
        }
        let Some((deadline, key)) = shard.timers.pop_due(now) else { return false };
        let Shard { core, scratch, .. } = &mut *shard;
        core.fire_timer_into(deadline.max(0), &key, scratch);
        self.run_unlocked(index, shard);
        true
    }

    fn earliest(&self) -> Option<(i64, usize)> {
        // Unowned and loading partitions have no timers (an unload drops them); the
        // check keeps the timer thread off them regardless.
        (0..self.shards.len())
            .filter_map(|i| {
                let shard = lock(&self.shards[i]);
                if shard.state.is_owned() { shard.timers.next_deadline().map(|d| (d, i)) } else { None }
            })
            .min()
    }
}

impl TimerDriver for Inner {
    fn next_deadline(&self) -> Option<i64> {
        if self.stopped.load(Ordering::Acquire) {
            return None;
        }
        self.earliest().map(|(d, _)| d)
    }

    fn fire_next_due(&self, now_ms: i64) -> bool {
        match self.earliest() {
            Some((deadline, index)) if deadline <= now_ms => self.fire_due_in(index, now_ms),
            _ => false,
        }
    }
}

fn timer_loop(inner: Weak<Inner>, control: Receiver<Control>, max_sleep_ms: i64) {
    loop {
        let Some(strong) = inner.upgrade() else { return };
        if strong.stopped.load(Ordering::Acquire) {
            return;
        }
        strong.next_wake.store(i64::MIN, Ordering::Release);
        let now = strong.clock.now_ms();
        while strong.fire_next_due(now) {}
        let next = strong.earliest().map_or(i64::MAX, |(d, _)| d);
        strong.next_wake.store(next, Ordering::Release);
        let wait_ms = next.saturating_sub(strong.clock.now_ms()).clamp(0, max_sleep_ms.max(1));
        drop(strong);
        match control.recv_timeout(Duration::from_millis(wait_ms.unsigned_abs())) {
            Ok(Control::Stop) | Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return,
            Ok(Control::Wake) | Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
        }
    }
}

impl GroupCoordinator {
    /// A coordinator on the system clock that resumes what `storage` holds.
    pub fn new(storage: Arc<dyn MetadataStore>, config: CoordinatorConfig) -> Result<Self, CoordinatorError> {
        GroupCoordinator::with_clock(storage, config, Arc::new(SystemClock))
    }

    /// A coordinator reading time from `clock` (a [`ManualClock`] in tests).
    pub fn with_clock(
        storage: Arc<dyn MetadataStore>,
        config: CoordinatorConfig,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, CoordinatorError> {
        GroupCoordinator::builder(storage, config).clock(clock).open()
    }

    /// The constructor behind [`with_clock`](Self::with_clock) and the builder:
    /// loads every coordinator partition (none with managed ownership: they
    /// start unowned), then starts the threads.
    fn open(
        storage: Arc<dyn MetadataStore>,
        config: CoordinatorConfig,
        clock: Arc<dyn Clock>,
        authorizer: Arc<dyn crate::Authorizer>,
        topics: Arc<dyn crate::TopicMetadata>,
        ownership: ownership::Options,
    ) -> Result<Self, CoordinatorError> {
        config.consumer.validate()?;
        config.share.validate()?;
        // Share groups without a persister of the caller's use the share
        // coordinator the coordinator partitions host, through a thread of their own.
        let mut ownership = ownership;
        let hosted = match (config.share.enabled, &ownership.share_persister) {
            (true, None) => {
                let (persister, asks) = share_persister::HostedSharePersister::new();
                ownership.share_persister = Some(Arc::new(persister));
                Some(asks)
            }
            _ => None,
        };
        let partitions = storage.partition_count().max(1);
        let threaded = !clock.drives_timers();
        let (control_tx, control_rx) = bounded(1);
        let stage_channels: Vec<(Sender<StageMessage>, Receiver<StageMessage>)> =
            (0..stage_thread_count(partitions)).map(|_| crossbeam_channel::unbounded()).collect();
        let now = clock.now_ms();
        let entropy = process_entropy();
        let store = ownership.group_config_store.take();
        let store = store.unwrap_or_else(|| Arc::new(crate::MemoryGroupConfigStore::new()));
        let group_configs = group_configs::GroupConfigs::open(store, partitions)?;
        let mut shards = Vec::with_capacity(partitions as usize);
        let mut loaded = Vec::with_capacity(partitions as usize);
        for p in 0..partitions {
            let mut core = new_core(&config, entropy, p, 0, &ownership.image, &ownership.assignors);
            group_configs.install(&mut core, p, &config);
            let (epoch, state) = if ownership.managed {
                // The ownership manager loads what this node gains (`load_partition`).
                loaded.push(Effects::default());
                (OwnerEpoch::default(), PartitionState::Unowned)
            } else {
                let stored = storage.load(CoordinatorPartition(p))?;
                loaded.push(core.load(now, stored.groups));
                let epoch = stored.epoch.next();
                (epoch, PartitionState::Owned(epoch))
            };
            shards.push(Mutex::new(Shard {
                core,
                timers: timers::LazyTimers::default(),
                waiters: FastMap::default(),
                scratch: Effects::default(),
                next_request: 0,
                counters: crate::metrics::ShardCounters::default(),
                queued: Vec::new(),
                in_flight: Vec::new(),
                appending: false,
                epoch,
                state,
                incarnation: 0,
                groups: 0,
            }));
        }
        let storage_inline = storage.completes_inline();
        let inner = Arc::new(Inner {
            shards,
            partitions,
            storage,
            clock: clock.clone(),
            config: config.clone(),
            stopped: AtomicBool::new(false),
            next_wake: AtomicI64::new(i64::MIN),
            control: threaded.then_some(control_tx),
            stage: stage_channels.iter().map(|(tx, _)| tx.clone()).collect(),
            writes: WriteGauge::default(),
            failed_appends: AtomicU64::new(0),
            append_latency: crate::LatencyHistogram::new(),
            authorizer,
            topics,
            runtime_counters: crate::metrics::RuntimeCounters::default(),
            entropy,
            on_lost: ownership.on_lost,
            lease: ownership.lease,
            image: Mutex::new(ownership.image),
            assignors: ownership.assignors,
            inline_appends: storage_inline,
            append_tokens: AtomicU64::new(0),
            groups: AtomicUsize::new(0),
            share_persister: ownership.share_persister,
            end_offsets: ownership.end_offsets,
            share_routing: ownership.share_routing,
            group_configs,
        });
        let mut stage_threads = Vec::with_capacity(stage_channels.len());
        for (i, (tx, rx)) in stage_channels.into_iter().enumerate() {
            let weak = Arc::downgrade(&inner);
            let handle = std::thread::Builder::new()
                .name(format!("group-coordinator-storage-{i}"))
                .spawn(move || storage_stage::run(weak, rx, tx))
                .map_err(|e| CoordinatorError::Thread(e.into()))?;
            stage_threads.push(handle);
        }
        for (i, fx) in loaded.into_iter().enumerate() {
            let mut shard = lock(&inner.shards[i]);
            shard.scratch = fx;
            inner.run_unlocked(i, shard);
        }
        if let Some(asks) = hosted {
            let weak = Arc::downgrade(&inner);
            // Detached: it ends once the coordinator (and the sender it holds) is dropped.
            std::thread::Builder::new()
                .name("group-coordinator-share-persister".into())
                .spawn(move || share_persister::serve(weak, asks))
                .map_err(|e| CoordinatorError::Thread(e.into()))?;
        }
        let timer_thread = if threaded {
            let weak = Arc::downgrade(&inner);
            let max_sleep = config.heartbeat_check_interval_ms;
            let handle = std::thread::Builder::new()
                .name("group-coordinator-timer".into())
                .spawn(move || timer_loop(weak, control_rx, max_sleep))
                .map_err(|e| CoordinatorError::Thread(e.into()))?;
            Some(handle)
        } else {
            let weak: Weak<Inner> = Arc::downgrade(&inner);
            clock.register(weak);
            None
        };
        Ok(GroupCoordinator {
            inner,
            timer_thread: Mutex::new(timer_thread),
            stage_threads: Mutex::new(stage_threads),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &CoordinatorConfig {
        &self.inner.config
    }

    /// Replaces the metadata image every coordinator partition's consumer groups
    /// see (see [`CoordinatorCore::update_metadata_image`]).
    ///
    /// Share groups first drop the share state of deleted topics
    /// ([`CoordinatorCore::share_topics_deleted`]), as Kafka's
    /// `maybeCleanupShareGroupState` runs before the new image.
    pub fn update_metadata_image(&self, image: MetadataImage) {
        let image = Arc::new(image);
        let old = std::mem::replace(&mut *lock(&self.inner.image), image.clone());
        let deleted = image.deleted_since(&old);
        for (index, shard) in self.inner.shards.iter().enumerate() {
            if !deleted.is_empty() {
                self.inner.step_shard(index, |core, now, scratch| {
                    scratch.extend(core.share_topics_deleted(now, &deleted));
                    scratch.extend(core.share_state_topics_deleted(now, &deleted));
                });
            }
            lock(shard).core.update_metadata_image(image.clone());
        }
    }

    /// The metadata image consumer groups see now.
    pub fn metadata_image(&self) -> Arc<MetadataImage> {
        lock(&self.inner.image).clone()
    }

    /// A snapshot of consumer group `group_id`.
    pub fn get_consumer_group(&self, group_id: &str) -> Option<crate::ConsumerGroupSnapshot> {
        lock(&self.inner.shards[self.inner.shard_of(group_id)]).core.consumer_group(group_id)
    }

    /// A snapshot of share group `group_id`.
    pub fn get_share_group(&self, group_id: &str) -> Option<crate::ShareGroupSnapshot> {
        lock(&self.inner.shards[self.inner.shard_of(group_id)]).core.share_group(group_id)
    }

    /// What share group `group_id` runs with: the broker's `group.share.*` defaults
    /// with the group's own settings ([`set_group_config`](Self::set_group_config))
    /// over them. A broker's fetch path reads its lock duration and limits here.
    pub fn share_group_settings(&self, group_id: &str) -> crate::ShareGroupSettings {
        let shard = self.inner.shard_of(group_id);
        let shard = lock(&self.inner.shards[shard]);
        crate::ShareGroupSettings::of(&self.inner.config.share, shard.core.group_config(group_id))
    }

    /// The coordinator partition that hosts share partition `key`'s state (see
    /// [`ShareStateRouting`]): where FindCoordinator of key type 2 points.
    pub fn share_partition_of(
        &self,
        key: &group_share_coordinator::SharePartitionKey,
    ) -> CoordinatorPartition {
        match self.inner.share_routing {
            ShareStateRouting::WithGroup => {
                CoordinatorPartition::of(key.group_id.as_str(), self.inner.partitions)
            }
            _ => {
                let partitions = i32::try_from(self.inner.partitions).unwrap_or(i32::MAX);
                CoordinatorPartition(key.coordinator_partition(partitions).unsigned_abs())
            }
        }
    }

    /// The coordinator as the anonymous principal sees it (the methods without a
    /// [`RequestContext`](crate::RequestContext)).
    pub(crate) fn anonymous(&self) -> Caller<'_> {
        self.caller(&crate::authorizer::ANONYMOUS_CONTEXT)
    }

    /// The committed offset of one partition, `-1` when none is committed.
    pub fn get_committed_offset(
        &self,
        group_id: &str,
        topic: &str,
        partition: i32,
    ) -> Result<i64, CoordinatorError> {
        if self.inner.stopped.load(Ordering::Acquire) {
            return Err(CoordinatorError::Stopped);
        }
        let shard = lock(&self.inner.shards[self.inner.shard_of(group_id)]);
        Ok(shard.core.committed_offset(group_id, topic, partition).map_or(-1, |o| o.offset))
    }

    /// A read-only snapshot of one group.
    pub fn get_group(&self, group_id: &str) -> Option<GroupMetadata> {
        lock(&self.inner.shards[self.inner.shard_of(group_id)]).core.group(group_id)
    }

    /// Snapshots of every group, ordered by group id.
    pub fn list_groups(&self) -> Vec<GroupMetadata> {
        let mut all: Vec<GroupMetadata> =
            self.inner.shards.iter().flat_map(|shard| lock(shard).core.groups()).collect();
        all.sort_by(|a, b| a.group_id.cmp(&b.group_id));
        all
    }

    /// The coordinator partition that holds `group_id` (Kafka's
    /// `abs(hashCode(group_id)) % partitions`), out of
    /// [`shard_count`](Self::shard_count). Each partition has its own lock: requests
    /// for groups of different partitions never wait for each other, and a server
    /// that routes each partition's groups to one worker thread also keeps that
    /// partition's state in one core's cache.
    pub fn shard_of(&self, group_id: &str) -> usize {
        self.inner.shard_of(group_id)
    }

    /// Number of coordinator partitions (see [`shard_of`](Self::shard_of)).
    pub fn shard_count(&self) -> usize {
        self.inner.shards.len()
    }

    /// Number of requests parked in the coordinator (joins and syncs waiting).
    pub fn waiting_requests(&self) -> usize {
        self.inner.shards.iter().map(|s| lock(s).waiters.len()).sum()
    }

    /// Stops the coordinator: every waiting request is answered
    /// [`CoordinatorError::Stopped`], later requests too, and the timer thread is
    /// joined. Calling it again does nothing.
    pub fn stop(&self) {
        self.inner.stopped.store(true, Ordering::Release);
        if let Some(control) = &self.inner.control {
            let _ = control.try_send(Control::Stop);
        }
        for shard in &self.inner.shards {
            let mut shard = lock(shard);
            for (_, waiter) in shard.waiters.drain() {
                waiter.slot.fill(Err(CoordinatorError::Stopped));
            }
        }
        for stage in &self.inner.stage {
            let _ = stage.send(StageMessage::Stop);
        }
        if let Some(handle) = lock(&self.timer_thread).take() {
            let _ = handle.join();
        }
        for handle in lock(&self.stage_threads).drain(..) {
            let _ = handle.join();
        }
    }

    /// Blocks until every write issued so far has completed (or `timeout`
    /// passed; then `false`): for an orderly shutdown, and for tests that look at
    /// storage after a write the coordinator started on its own (a timer's).
    pub fn wait_for_writes(&self, timeout: Duration) -> bool {
        let gauge = &self.inner.writes;
        let deadline = std::time::Instant::now() + timeout;
        let mut guard = lock(&gauge.idle_lock);
        while !gauge.is_idle() {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return false;
            }
            // Bounded: the count may reach zero between the check and the wait.
            let wait = left.min(Duration::from_millis(5));
            guard = gauge.idle.wait_timeout(guard, wait).unwrap_or_else(PoisonError::into_inner).0;
        }
        true
    }

    /// Appends the storage engine failed since the coordinator opened.
    pub fn failed_appends(&self) -> u64 {
        self.inner.failed_appends.load(Ordering::Relaxed)
    }

    /// True once [`stop`](Self::stop) ran.
    pub fn is_stopped(&self) -> bool {
        self.inner.stopped.load(Ordering::Acquire)
    }
}

impl Drop for GroupCoordinator {
    fn drop(&mut self) {
        self.stop();
    }
}

/// How many storage-stage threads serve `partitions`: two per core (one can
/// apply a batch while the other delivers completions), at most 4, never more
/// than partitions. Each owns its partitions' appends and completions,
/// so a partition's completions stay in order.
fn stage_thread_count(partitions: u32) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    (cores * 2).clamp(1, 4).min(partitions as usize)
}

/// The configuration of partition `p`'s core in its `incarnation`-th load:
/// distinct member id streams per partition, and a fresh stream per process and
/// per load. Like Kafka's random UUIDs, an id handed out before a restart or an
/// unload must not be handed out again to someone else (an expelled client may
/// still use it).
/// The core of partition `p` in its `incarnation`, with the image and assignors.
fn new_core(
    config: &CoordinatorConfig,
    entropy: u64,
    p: u32,
    incarnation: u64,
    image: &Arc<MetadataImage>,
    assignors: &[Arc<dyn group_assignors::server::ServerAssignor>],
) -> CoordinatorCore {
    let mut core = CoordinatorCore::new(shard_config(config, entropy, p, incarnation));
    core.update_metadata_image(image.clone());
    for assignor in assignors {
        core.register_server_assignor(assignor.clone());
    }
    core
}

fn shard_config(config: &CoordinatorConfig, entropy: u64, p: u32, incarnation: u64) -> CoordinatorConfig {
    let mut shard_config = config.clone();
    shard_config.member_id_seed = config.member_id_seed
        ^ entropy
        ^ u64::from(p).wrapping_mul(0x9e37_79b9_7f4a_7c15)
        ^ incarnation.wrapping_mul(0xd1b5_4a32_d192_ed03);
    shard_config
}

/// 64 bits that differ between coordinator instances: std seeds every
/// `RandomState` from the operating system's randomness.
fn process_entropy() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    std::collections::hash_map::RandomState::new().build_hasher().finish()
}
