//! The threaded runtime: `GroupCoordinator`, cores sharded by group id behind locks,
//! one timer thread, storage I/O before dependent responses are released.

mod assignment;
mod authorization;
mod builder;
mod clock;
mod pending;
mod storage_io;
mod timers;

use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender, bounded};
use group_offsets::{OffsetStorage, StoredGroups};
use group_types::{
    DeleteGroupsRequest, DeleteGroupsResponse, DescribeGroupsRequest, DescribeGroupsResponse,
    HeartbeatRequest, HeartbeatResponse, JoinGroupRequest, JoinGroupResponse, LeaveGroupRequest,
    LeaveGroupResponse, ListGroupsRequest, ListGroupsResponse, OffsetCommitRequest, OffsetCommitResponse,
    OffsetDeleteRequest, OffsetDeleteResponse, OffsetFetchRequest, OffsetFetchResponse, SyncGroupRequest,
    SyncGroupResponse,
};

pub use self::authorization::Caller;
pub use self::builder::GroupCoordinatorBuilder;
pub use self::clock::{Clock, ManualClock, SystemClock, TimerDriver};
pub use self::pending::{Outcome, Pending, ResponseKind};
use crate::core::hash::{FxHashMap, FxHasher};
use crate::{
    CoordinatorConfig, CoordinatorCore, CoordinatorError, Effects, GroupMetadata, Request, RequestId,
    Response,
};

/// Number of independently locked cores. Groups hash to one of them.
const SHARDS: usize = 16;

struct Shard {
    core: CoordinatorCore,
    timers: timers::LazyTimers,
    waiters: FxHashMap<RequestId, Sender<Outcome>>,
    /// Reused effects buffer (see `run_for`).
    scratch: Effects,
    /// The last request id handed to this shard's core.
    next_request: u64,
    /// Metrics counted under this shard's lock.
    counters: crate::metrics::ShardCounters,
}

enum Control {
    Wake,
    Stop,
}

struct Inner {
    shards: Vec<Mutex<Shard>>,
    storage: Arc<dyn OffsetStorage>,
    clock: Arc<dyn Clock>,
    config: CoordinatorConfig,
    stopped: AtomicBool,
    /// When the timer thread plans to wake next; a shard arming an earlier deadline wakes it.
    next_wake: AtomicI64,
    control: Option<Sender<Control>>,
    /// Consulted before any request reaches a core.
    authorizer: Arc<dyn crate::Authorizer>,
    runtime_counters: crate::metrics::RuntimeCounters,
}

/// Kafka's classic group coordinator as a thread-safe service.
///
/// Different groups proceed in parallel (each group lives in one of several locked
/// cores); one timer thread fires session, join and sync deadlines (none with a clock
/// that [drives timers](Clock::drives_timers), such as [`ManualClock`]). Every record
/// reaches [`OffsetStorage`] before the response that depends on it is released; a
/// storage failure is answered as Kafka answers a failed append (`KAFKA_STORAGE_ERROR`,
/// mapped per `kafka-semantics.md` §6.7).
///
/// Blocking `handle_*` methods wait for the answer; the methods without the prefix
/// return a [`Pending`] handle at once.
pub struct GroupCoordinator {
    inner: Arc<Inner>,
    timer_thread: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for GroupCoordinator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupCoordinator")
            .field("shards", &self.inner.shards.len())
            .field("stopped", &self.inner.stopped.load(Ordering::Relaxed))
            .finish()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn shard_of(group_id: &str) -> usize {
    let mut h = FxHasher::default();
    group_id.hash(&mut h);
    (h.finish() % SHARDS as u64) as usize
}

impl Inner {
    /// Applies a core's effects: timers, answers, then each write persisted and its
    /// completion fed back, until nothing is left.
    fn run(&self, shard: &mut Shard) {
        self.run_for(shard, None);
    }

    /// Applies what the core left in the shard's scratch effects: timers, answers,
    /// then each write persisted and its completion fed back, until nothing is left.
    /// The scratch keeps its capacity, so a heartbeat allocates nothing here. The
    /// answer to `caller` (if it comes) is kept for the caller instead of going
    /// through a channel.
    fn run_for(&self, shard: &mut Shard, mut caller: Option<(RequestId, &mut Option<Response>)>) {
        loop {
            let Shard { core, timers, waiters, scratch, counters, .. } = shard;
            timers.apply(scratch.timers.drain(..));
            for event in scratch.events.drain(..) {
                counters.on_event(&event);
            }
            for (rid, response) in scratch.responses.drain(..) {
                counters.on_response(&response);
                if let Some((id, slot)) = caller.as_mut()
                    && *id == rid
                {
                    **slot = Some(response);
                    continue;
                }
                if let Some(tx) = waiters.remove(&rid) {
                    let _ = tx.send(Ok(response));
                }
            }
            if scratch.writes.is_empty() {
                break;
            }
            let mut writes = std::mem::take(&mut scratch.writes);
            for write in writes.drain(..) {
                let result = storage_io::persist(self.storage.as_ref(), write.records);
                let now = self.clock.now_ms();
                core.complete_write_into(now, write.id, result, scratch);
            }
            // Completions seldom ask for more writes: keep the buffer and its capacity.
            if scratch.writes.is_empty() {
                scratch.writes = writes;
            }
        }
        if let Some(next) = shard.timers.next_deadline()
            && next < self.next_wake.load(Ordering::Acquire)
            && let Some(control) = &self.control
        {
            let _ = control.try_send(Control::Wake);
        }
    }

    /// Hands a request to its group's core. The answer, if the request is answered
    /// before the shard is released, comes back directly; otherwise a channel is
    /// registered (under the same lock, so nothing is missed) and returned.
    fn submit(&self, group_id: &str, request: Request) -> Result<Outcome, Receiver<Outcome>> {
        let mut shard = lock(&self.shards[shard_of(group_id)]);
        if self.stopped.load(Ordering::Acquire) {
            return Ok(Err(CoordinatorError::Stopped));
        }
        // Ids only have to be unique within a core: a per-shard counter keeps threads
        // working on different shards off a shared cache line.
        shard.next_request += 1;
        let rid = RequestId(shard.next_request);
        let now = self.clock.now_ms();
        let Shard { core, scratch, .. } = &mut *shard;
        core.handle_into(now, rid, request, scratch);
        let mut answer = None;
        self.run_for(&mut shard, Some((rid, &mut answer)));
        match answer {
            Some(response) => Ok(Ok(response)),
            None => {
                let (tx, rx) = bounded(1);
                shard.waiters.insert(rid, tx);
                Err(rx)
            }
        }
    }

    fn pending<T: ResponseKind>(&self, group_id: &str, request: Request) -> Pending<T> {
        self.pending_as(&crate::authorizer::ANONYMOUS_CONTEXT, group_id, request)
    }

    fn blocking<T: ResponseKind>(&self, group_id: &str, request: Request) -> Result<T, CoordinatorError> {
        self.blocking_as(&crate::authorizer::ANONYMOUS_CONTEXT, group_id, request)
    }

    fn fire_due_in(&self, index: usize, now: i64) -> bool {
        let mut shard = lock(&self.shards[index]);
        if self.stopped.load(Ordering::Acquire) {
            return false;
        }
        let Some((deadline, key)) = shard.timers.pop_due(now) else { return false };
        let Shard { core, scratch, .. } = &mut *shard;
        core.fire_timer_into(deadline.max(0), &key, scratch);
        self.run(&mut shard);
        true
    }

    fn earliest(&self) -> Option<(i64, usize)> {
        (0..self.shards.len())
            .filter_map(|i| lock(&self.shards[i]).timers.next_deadline().map(|d| (d, i)))
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
    pub fn new(storage: Arc<dyn OffsetStorage>, config: CoordinatorConfig) -> Result<Self, CoordinatorError> {
        GroupCoordinator::with_clock(storage, config, Arc::new(SystemClock))
    }

    /// A coordinator reading time from `clock` (a [`ManualClock`] in tests).
    pub fn with_clock(
        storage: Arc<dyn OffsetStorage>,
        config: CoordinatorConfig,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, CoordinatorError> {
        GroupCoordinator::open(storage, config, clock, Arc::new(crate::AllowAll))
    }

    /// The constructor behind [`with_clock`](Self::with_clock) and the builder.
    fn open(
        storage: Arc<dyn OffsetStorage>,
        config: CoordinatorConfig,
        clock: Arc<dyn Clock>,
        authorizer: Arc<dyn crate::Authorizer>,
    ) -> Result<Self, CoordinatorError> {
        let stored = storage.load()?;
        let threaded = !clock.drives_timers();
        let (control_tx, control_rx) = bounded(1);
        let now = clock.now_ms();
        let mut per_shard: Vec<StoredGroups> = (0..SHARDS).map(|_| StoredGroups::default()).collect();
        for g in stored.groups {
            per_shard[shard_of(&g.group_id)].groups.push(g);
        }
        for o in stored.offsets {
            per_shard[shard_of(&o.group_id)].offsets.push(o);
        }
        let mut shards = Vec::with_capacity(SHARDS);
        let mut loaded = Vec::with_capacity(SHARDS);
        for (i, stored) in per_shard.into_iter().enumerate() {
            let mut shard_config = config.clone();
            // Distinct id streams per shard, and a fresh stream per process: like
            // Kafka's random UUIDs, an id handed out before a restart must not be
            // handed out again to someone else (an expelled client may still use it).
            shard_config.member_id_seed =
                config.member_id_seed ^ process_entropy() ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            let mut core = CoordinatorCore::new(shard_config);
            loaded.push(core.load(now, stored));
            shards.push(Mutex::new(Shard {
                core,
                timers: timers::LazyTimers::default(),
                waiters: FxHashMap::default(),
                scratch: Effects::default(),
                next_request: 0,
                counters: crate::metrics::ShardCounters::default(),
            }));
        }
        let inner = Arc::new(Inner {
            shards,
            storage,
            clock: clock.clone(),
            config: config.clone(),
            stopped: AtomicBool::new(false),
            next_wake: AtomicI64::new(i64::MIN),
            control: threaded.then_some(control_tx),
            authorizer,
            runtime_counters: crate::metrics::RuntimeCounters::default(),
        });
        for (i, fx) in loaded.into_iter().enumerate() {
            let mut shard = lock(&inner.shards[i]);
            shard.scratch = fx;
            inner.run(&mut shard);
        }
        let timer_thread = if threaded {
            let weak = Arc::downgrade(&inner);
            let max_sleep = config.heartbeat_check_interval_ms;
            let handle = std::thread::Builder::new()
                .name("group-coordinator-timer".into())
                .spawn(move || timer_loop(weak, control_rx, max_sleep))
                .map_err(|e| CoordinatorError::Thread(e.to_string()))?;
            Some(handle)
        } else {
            let weak: Weak<Inner> = Arc::downgrade(&inner);
            clock.register(weak);
            None
        };
        Ok(GroupCoordinator { inner, timer_thread: Mutex::new(timer_thread) })
    }

    /// The configuration.
    pub fn config(&self) -> &CoordinatorConfig {
        &self.inner.config
    }

    /// JoinGroup; the answer comes when the join barrier closes.
    pub fn join_group(&self, request: JoinGroupRequest) -> Pending<JoinGroupResponse> {
        let group = request.group_id.clone();
        self.inner.pending(&group, Request::JoinGroup(request))
    }

    /// JoinGroup, blocking until answered.
    pub fn handle_join_group(
        &self,
        request: JoinGroupRequest,
    ) -> Result<JoinGroupResponse, CoordinatorError> {
        let group = request.group_id.clone();
        self.inner.blocking(&group, Request::JoinGroup(request))
    }

    /// SyncGroup; a follower's answer comes with the leader's assignment.
    pub fn sync_group(&self, request: SyncGroupRequest) -> Pending<SyncGroupResponse> {
        let group = request.group_id.clone();
        self.inner.pending(&group, Request::SyncGroup(request))
    }

    /// SyncGroup, blocking until answered.
    pub fn handle_sync_group(
        &self,
        request: SyncGroupRequest,
    ) -> Result<SyncGroupResponse, CoordinatorError> {
        let group = request.group_id.clone();
        self.inner.blocking(&group, Request::SyncGroup(request))
    }

    /// Heartbeat.
    pub fn heartbeat(&self, request: HeartbeatRequest) -> Pending<HeartbeatResponse> {
        let group = request.group_id.clone();
        self.inner.pending(&group, Request::Heartbeat(request))
    }

    /// Heartbeat, blocking.
    pub fn handle_heartbeat(&self, request: HeartbeatRequest) -> Result<HeartbeatResponse, CoordinatorError> {
        let group = request.group_id.clone();
        self.inner.blocking(&group, Request::Heartbeat(request))
    }

    /// LeaveGroup.
    pub fn leave_group(&self, request: LeaveGroupRequest) -> Pending<LeaveGroupResponse> {
        let group = request.group_id.clone();
        self.inner.pending(&group, Request::LeaveGroup(request))
    }

    /// LeaveGroup, blocking.
    pub fn handle_leave_group(
        &self,
        request: LeaveGroupRequest,
    ) -> Result<LeaveGroupResponse, CoordinatorError> {
        let group = request.group_id.clone();
        self.inner.blocking(&group, Request::LeaveGroup(request))
    }

    /// OffsetCommit (answered as v9+; see [`Request::OffsetCommit`]).
    pub fn offset_commit(&self, request: OffsetCommitRequest) -> Pending<OffsetCommitResponse> {
        let group = request.group_id.clone();
        self.inner.pending(&group, Request::OffsetCommit(request))
    }

    /// OffsetCommit, blocking until the offsets are in storage.
    pub fn handle_offset_commit(
        &self,
        request: OffsetCommitRequest,
    ) -> Result<OffsetCommitResponse, CoordinatorError> {
        let group = request.group_id.clone();
        self.inner.blocking(&group, Request::OffsetCommit(request))
    }

    /// OffsetFetch.
    pub fn offset_fetch(&self, request: OffsetFetchRequest) -> Pending<OffsetFetchResponse> {
        let group = request.group_id.clone();
        self.inner.pending(&group, Request::OffsetFetch(request))
    }

    /// OffsetFetch, blocking.
    pub fn handle_offset_fetch(
        &self,
        request: OffsetFetchRequest,
    ) -> Result<OffsetFetchResponse, CoordinatorError> {
        let group = request.group_id.clone();
        self.inner.blocking(&group, Request::OffsetFetch(request))
    }

    /// OffsetDelete.
    pub fn offset_delete(&self, request: OffsetDeleteRequest) -> Pending<OffsetDeleteResponse> {
        let group = request.group_id.clone();
        self.inner.pending(&group, Request::OffsetDelete(request))
    }

    /// OffsetDelete, blocking.
    pub fn handle_offset_delete(
        &self,
        request: OffsetDeleteRequest,
    ) -> Result<OffsetDeleteResponse, CoordinatorError> {
        let group = request.group_id.clone();
        self.inner.blocking(&group, Request::OffsetDelete(request))
    }

    /// DescribeGroups over every shard the ids hash to, in request order.
    pub fn handle_describe_groups(
        &self,
        request: DescribeGroupsRequest,
    ) -> Result<DescribeGroupsResponse, CoordinatorError> {
        let mut groups = Vec::with_capacity(request.group_ids.len());
        for id in request.group_ids {
            let req = DescribeGroupsRequest { group_ids: vec![id.clone()] };
            let response: DescribeGroupsResponse = self.inner.blocking(&id, Request::DescribeGroups(req))?;
            groups.extend(response.groups);
        }
        Ok(DescribeGroupsResponse { groups })
    }

    /// ListGroups over every shard, ordered by group id.
    pub fn handle_list_groups(
        &self,
        request: ListGroupsRequest,
    ) -> Result<ListGroupsResponse, CoordinatorError> {
        self.caller(&crate::authorizer::ANONYMOUS_CONTEXT).handle_list_groups(request)
    }

    /// DeleteGroups, each group in its shard, results in request order.
    pub fn handle_delete_groups(
        &self,
        request: DeleteGroupsRequest,
    ) -> Result<DeleteGroupsResponse, CoordinatorError> {
        let mut results: Vec<group_types::DeletedGroup> = Vec::with_capacity(request.group_ids.len());
        for id in request.group_ids {
            if results.iter().any(|r| r.group_id == id) {
                continue;
            }
            let req = DeleteGroupsRequest { group_ids: vec![id.clone()] };
            let response: DeleteGroupsResponse = self.inner.blocking(&id, Request::DeleteGroups(req))?;
            results.extend(response.results);
        }
        Ok(DeleteGroupsResponse { results })
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
        let shard = lock(&self.inner.shards[shard_of(group_id)]);
        Ok(shard.core.committed_offset(group_id, topic, partition).map_or(-1, |o| o.offset))
    }

    /// A read-only snapshot of one group.
    pub fn get_group(&self, group_id: &str) -> Option<GroupMetadata> {
        lock(&self.inner.shards[shard_of(group_id)]).core.group(group_id)
    }

    /// Snapshots of every group, ordered by group id.
    pub fn list_groups(&self) -> Vec<GroupMetadata> {
        let mut all: Vec<GroupMetadata> =
            self.inner.shards.iter().flat_map(|shard| lock(shard).core.groups()).collect();
        all.sort_by(|a, b| a.group_id.cmp(&b.group_id));
        all
    }

    /// Which of the coordinator's independently locked shards holds `group_id`, out of
    /// [`shard_count`](Self::shard_count). Requests for groups of different shards never
    /// wait for each other; a server that routes each shard's groups to one worker
    /// thread also keeps that shard's state in one core's cache.
    pub fn shard_of(&self, group_id: &str) -> usize {
        shard_of(group_id)
    }

    /// Number of shards (see [`shard_of`](Self::shard_of)).
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
            for (_, tx) in shard.waiters.drain() {
                let _ = tx.send(Err(CoordinatorError::Stopped));
            }
        }
        if let Some(handle) = lock(&self.timer_thread).take() {
            let _ = handle.join();
        }
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

/// 64 bits that differ between coordinator instances: std seeds every
/// `RandomState` from the operating system's randomness.
fn process_entropy() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    std::collections::hash_map::RandomState::new().build_hasher().finish()
}
