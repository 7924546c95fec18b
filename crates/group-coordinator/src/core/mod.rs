//! The deterministic core: every group's state machine, with no threads, locks,
//! clock or I/O. Each entry point takes `now` and returns [`Effects`].
//!
//! The call contract is written on [`CoordinatorCore`].

mod admin;
pub(crate) mod classic;
pub(crate) mod consumer;
mod events;
mod ids;
mod kind;
mod load;
mod migration;
pub(crate) mod modern;
pub(crate) mod offsets;
pub(crate) mod share;
pub(crate) mod share_coordinator;
mod timeline;
mod timer_queue;
mod types;
mod undo;

use crate::core::classic::member_payload::MemberPayload;
use std::collections::BTreeSet;
use std::sync::Arc;

use group_types::{ErrorCode, JoinGroupResponse, OffsetAndMetadata, TopicId, TopicPartition};

use crate::config::CoordinatorConfig;
use crate::snapshot::{GroupMetadata, MemberMetadata};

pub(crate) use self::classic::{Group, JoinTimer, Member, validate_member, validate_member_at};
pub(crate) use self::events::RebalanceReason;
pub use self::events::{ExpirationReason, GroupEvent};
use self::ids::MemberIdGenerator;
pub(crate) use self::kind::GroupKind;
use self::offsets::OffsetChanges;
pub(crate) use self::offsets::OffsetStore;
use self::timeline::Timeline;
pub use self::timer_queue::TimerQueue;
pub use self::types::{
    Effects, Request, RequestId, Response, TimerKey, TimerOp, Write, WriteId, map_append_error,
    map_operation_error,
};
use self::undo::Undo;
pub use group_offsets::Record;
use group_types::hash::{ClientMap, ClientSet, FastMap};

/// How many topic names [`Engine::topic`] keeps for sharing.
const MAX_SHARED_TOPICS: usize = 65_536;

/// What a write's completion must do, besides committing or reverting the
/// timeline (`timeline.rs`).
#[derive(Debug)]
pub(crate) enum PendingWrite {
    /// J's empty group record for a group a JoinGroup created (§10 #11): the
    /// requester's answer, if the join built one, waits for it.
    /// Boxed, as is `Respond`'s answer: an inline `Response` would make every
    /// pending write (an offset commit's too) 176 bytes to move, not 56.
    NewGroup { request: RequestId, answered: Option<Box<Response>> },
    /// The leader's assignment (§2.2).
    /// `assignments` is indexed like the group's members.
    LeaderSync { group: Arc<str>, generation: i32, assignments: Vec<bytes::Bytes> },
    /// A static replacement in Stable that keeps the protocol (§2.1.2).
    StaticReplace(Box<StaticReplace>),
    /// An offset commit (§2.5); the offsets are applied already.
    Commit { request: RequestId, response: group_types::OffsetCommitResponse },
    /// DeleteGroups; the groups are removed already (`deleted`: each with its
    /// offset count, reported once committed).
    DeleteGroups {
        request: RequestId,
        response: group_types::DeleteGroupsResponse,
        deleted: Vec<(Arc<str>, usize)>,
    },
    /// OffsetDelete; the offsets are removed already.
    OffsetDelete { request: RequestId, response: group_types::OffsetDeleteResponse },
    /// The retention job's tombstones: per group, how many offsets went and
    /// whether the group went with them (reported once committed).
    Expiration { removals: Vec<(Arc<str>, usize, bool)> },
    /// A record whose failure Kafka only logs (a join phase that ended Empty).
    Logged,
    /// A write whose requester gets `response` once it is durable, or the mapped
    /// error if it fails (consumer group heartbeats).
    Respond { request: RequestId, response: Box<Response> },
    /// A consumer group's regex resolution (Kafka's executor task result): applied
    /// again if the write is voided (`regex_resolution_voided`).
    RegexResolution { group: Arc<str>, resolved: Box<consumer::ResolvedRegexes> },
    /// The write of an expired deadline (a consumer member's fencing): if it
    /// fails, the deadline fires again after a backoff, as Kafka's timer retries.
    RetryTimer { key: TimerKey },
    /// A share group heartbeat (or deadline): its answer, and the share
    /// partitions it asks to initialize, released once durable.
    ShareHeartbeat {
        answer: Option<(RequestId, Box<Response>)>,
        initialize: Option<Box<group_types::InitializeShareGroupStateRequest>>,
    },
    /// A DeleteShareGroupOffsets' deleting topics: once durable, the share-state
    /// deletion it asks (none: it is answered) and the request parked for it.
    ShareOffsetsDelete {
        parked: Box<share::ParkedOffsetsDelete>,
        ask: Option<Box<group_types::DeleteShareGroupStateRequest>>,
    },
    /// An AlterShareGroupOffsets' epoch and initializing partitions: once durable,
    /// the initialization it asks (none: it is answered) and the request parked for it.
    ShareOffsetsAlter(Box<share::ParkedOffsetsAlter>),
}

/// What a Stable static replacement must restore if its record cannot be written.
#[derive(Debug)]
pub(crate) struct StaticReplace {
    pub(crate) group: Arc<str>,
    pub(crate) request: RequestId,
    pub(crate) api_version: i16,
    /// The generation the replacement joined (Stable).
    pub(crate) generation: i32,
    pub(crate) old_id: Arc<str>,
    pub(crate) new_id: Arc<str>,
    pub(crate) old_protocols: MemberPayload,
    pub(crate) old_rebalance_timeout_ms: i32,
    pub(crate) old_session_timeout_ms: i32,
    pub(crate) current_leader: Option<Arc<str>>,
}

/// Everything but the groups: configuration, the effects being built, id and write
/// counters. Split from the groups so that a handler can hold a group and this at once.
#[derive(Debug)]
pub(crate) struct Engine {
    pub(crate) config: CoordinatorConfig,
    pub(crate) now: i64,
    pub(crate) fx: Effects,
    ids: MemberIdGenerator,
    next_write: u64,
    pub(crate) pending_writes: FastMap<WriteId, PendingWrite>,
    /// Undo log of what records describe (`timeline.rs`, `undo.rs`).
    pub(crate) timeline: Timeline<Undo>,
    /// Group metadata writes outstanding, with their group: until one commits,
    /// answers about its group wait for it (`Group::barrier`).
    barriers: Vec<(WriteId, Arc<str>)>,
    /// Answers held until a write commits: (write, request, answer).
    deferred: Vec<(WriteId, RequestId, Response)>,
    /// Topic names committed so far, shared by every `TopicPartition` the core builds:
    /// a commit to a known topic allocates no name.
    topics: ClientSet<Arc<str>>,
    /// The topics consumer groups subscribe to and are assigned.
    pub(crate) image: Arc<crate::MetadataImage>,
    /// The version of the last image that created a topic (regexes refresh then).
    pub(crate) image_with_new_topics: i64,
    /// Per-group overrides of consumer-group settings.
    pub(crate) group_configs: ClientMap<String, crate::GroupConfigOverrides>,
    /// Share-partition initializations released by durable heartbeats, until
    /// taken (`CoordinatorCore::take_share_state_initializations`). Kept apart from
    /// `Effects`, which every request moves: share groups alone pay for them.
    pub(crate) share_state_initializations: Vec<group_types::InitializeShareGroupStateRequest>,
    /// Share-state deletions asked by DeleteGroups and DeleteShareGroupOffsets, until taken.
    pub(crate) share_state_deletions: Vec<group_types::DeleteShareGroupStateRequest>,
    /// DeleteGroups requests waiting for the share coordinator's deletions.
    pub(crate) share_deletes: Vec<share::ParkedDelete>,
    /// The deletions DeleteGroups asked and the share coordinator has not answered:
    /// group, topics and ask number, to tell them from a DeleteShareGroupOffsets'
    /// identical ask (`share_group_state_deleted_topics`).
    pub(crate) share_group_deletion_asks: Vec<(Arc<str>, BTreeSet<TopicId>, u64)>,
    /// Numbers the share-state deletions in the order they are asked.
    pub(crate) share_deletion_seq: u64,
    /// DeleteShareGroupOffsets requests waiting for the share coordinator's deletions.
    pub(crate) share_offset_deletes: Vec<share::ParkedOffsetsDelete>,
    /// AlterShareGroupOffsets requests waiting for the share coordinator's initializations.
    pub(crate) share_offset_alters: Vec<share::ParkedOffsetsAlter>,
    /// Share-state summary reads asked by DescribeShareGroupOffsets, until taken.
    pub(crate) share_state_summaries: Vec<group_types::ReadShareGroupStateSummaryRequest>,
    /// DescribeShareGroupOffsets requests waiting for the share coordinator's summaries.
    pub(crate) share_offset_describes: Vec<share::ParkedOffsetsDescribe>,
    /// Server assignors by name: the built-ins (`uniform`, `range`), then those
    /// registered, which replace a built-in of the same name.
    pub(crate) assignors: Vec<Arc<dyn group_assignors::server::ServerAssignor>>,
}

impl Engine {
    /// The number of the share-state deletion asked next.
    pub(crate) fn next_share_deletion(&mut self) -> u64 {
        self.share_deletion_seq += 1;
        self.share_deletion_seq
    }

    // Inlined so that an answer built at the call is written straight into the
    // vector, not built, passed by pointer and copied (168 bytes, 30 instructions
    // of a keep-alive's 900).
    #[inline]
    pub(crate) fn respond(&mut self, request: RequestId, response: Response) {
        self.fx.responses.push((request, response));
    }

    pub(crate) fn arm(&mut self, key: TimerKey, deadline_ms: i64) {
        self.fx.timers.push(TimerOp::Arm { key, deadline_ms });
    }

    pub(crate) fn cancel(&mut self, key: TimerKey) {
        self.fx.timers.push(TimerOp::Cancel { key });
    }

    pub(crate) fn write(&mut self, records: Vec<Record>, pending: PendingWrite) -> WriteId {
        let id = WriteId(self.next_write);
        self.next_write += 1;
        self.fx.writes.push(Write { id, records });
        self.pending_writes.insert(id, pending);
        self.timeline.issued(id);
        id
    }

    /// A write of `g`'s metadata: until it commits, answers about `g` wait for it.
    pub(crate) fn write_group(
        &mut self,
        g: &mut Group,
        records: Vec<Record>,
        pending: PendingWrite,
    ) -> WriteId {
        let group = g.id.clone();
        self.write_group_barrier(group, &mut g.barrier, records, pending)
    }

    /// A write of group `group`'s metadata, whose barrier is kept in `barrier`.
    pub(crate) fn write_group_barrier(
        &mut self,
        group: Arc<str>,
        barrier: &mut Option<WriteId>,
        records: Vec<Record>,
        pending: PendingWrite,
    ) -> WriteId {
        let id = self.write(records, pending);
        *barrier = Some(id);
        self.barriers.push((id, group));
        id
    }

    /// Remembers how to undo changes to one topic's offsets of group `group`:
    /// each `(partition, prev)` in the order the changes were made.
    pub(crate) fn offsets_changed(&mut self, group: &Arc<str>, topic: &Arc<str>, prev: OffsetChanges) {
        if !prev.is_empty() {
            self.timeline.push(Undo::Offsets { group: group.clone(), topic: topic.clone(), prev });
        }
    }

    /// Removes a committed offset of group `group`, remembering it.
    pub(crate) fn remove_offset(
        &mut self,
        store: &mut OffsetStore,
        group: &Arc<str>,
        partition: &TopicPartition,
    ) {
        if let Some(prev) = store.get_mut(group).and_then(|o| o.remove(partition)) {
            let mut changes = OffsetChanges::default();
            changes.push(partition.partition, Some(prev));
            self.offsets_changed(group, &partition.topic, changes);
        }
    }

    /// The shared name of `topic`.
    pub(crate) fn topic(&mut self, topic: &str) -> Arc<str> {
        if let Some(known) = self.topics.get(topic) {
            return known.clone();
        }
        let name: Arc<str> = Arc::from(topic);
        if self.topics.len() >= MAX_SHARED_TOPICS {
            // Bounded: names of deleted or mistyped topics must not pile up forever.
            self.topics.clear();
        }
        self.topics.insert(name.clone());
        name
    }

    pub(crate) fn generate_member_id(&mut self, prefix: &str) -> Arc<str> {
        Arc::from(self.ids.generate(prefix))
    }
}

/// A JoinGroup error as Kafka's `new JoinGroupResponseData()` builds it: protocol
/// type null, protocol name `""`.
pub(crate) fn join_error(
    error_code: ErrorCode,
    member_id: impl Into<group_types::MemberId>,
) -> JoinGroupResponse {
    JoinGroupResponse {
        error_code,
        member_id: member_id.into(),
        protocol_name: Some(group_types::ProtocolName::empty()),
        ..JoinGroupResponse::default()
    }
}

/// A JoinGroup error from member validation: both protocol fields null.
pub(crate) fn join_validation_error(
    error_code: ErrorCode,
    member_id: impl Into<group_types::MemberId>,
) -> JoinGroupResponse {
    JoinGroupResponse { error_code, member_id: member_id.into(), ..JoinGroupResponse::default() }
}

/// The classic group coordinator as a pure state machine over many groups.
///
/// Feed it requests ([`handle`](Self::handle)), due timers
/// ([`fire_timer`](Self::fire_timer)) and write outcomes
/// ([`complete_write`](Self::complete_write)); each call returns the responses,
/// deadlines and records it produced. Given the same calls it produces the same
/// effects, member ids included (they come from a generator seeded by
/// [`CoordinatorConfig::member_id_seed`]).
///
/// # The call contract
///
/// One [`CoordinatorCore`] serves one coordinator partition (the runtime keeps
/// one per partition; a test may use one for everything). A driver feeds it
/// three kinds of input, one at a time, each returning (or appending to) the
/// [`Effects`] it produced:
///
/// 1. [`handle`](CoordinatorCore::handle) / [`handle_into`](CoordinatorCore::handle_into):
///    a request, with a [`RequestId`] the driver chose (unique among the requests
///    not yet answered).
/// 2. [`fire_timer`](CoordinatorCore::fire_timer) / [`fire_timer_into`](CoordinatorCore::fire_timer_into):
///    a [`TimerKey`] whose deadline (from a [`TimerOp::Arm`]) has passed. A stale
///    or cancelled timer fired anyway does nothing.
/// 3. [`complete_write`](CoordinatorCore::complete_write) / [`complete_write_into`](CoordinatorCore::complete_write_into):
///    the outcome of a [`Write`] from [`Effects::writes`]: `Ok` once every record of
///    the write is durable, or the append error.
///
/// What comes back: [`Effects::responses`] answer this input's request or
/// earlier ones (a closing join barrier answers every parked member, a committed
/// write releases what waited for it); [`Effects::timers`] are deadlines to arm or
/// cancel, in order; [`Effects::writes`] are record batches to persist, each all or
/// nothing; [`Effects::events`] are for logs and metrics only.
///
/// The rules:
///
/// - **Anything may arrive while writes are outstanding.** Requests and timers do
///   not wait for writes: the core applies each change at once and keeps how to
///   undo it (`timeline.rs`). A driver may keep any number of writes outstanding
///   and batch consecutive writes into one append.
/// - **Completions come back in write order** within one core, as a log's appends
///   do; the cores of different partitions are independent, so across partitions
///   completions come in any order.
/// - **An answer that depends on a write is released only once that write, and so
///   every earlier one of the core, committed**: the requester of a write, and
///   answers about a group whose metadata write is in flight (`Group::barrier`).
///   Reads (OffsetFetch, DescribeGroups, ListGroups) answer at once from committed
///   state, as Kafka's do. Heartbeats of a group with no metadata write in flight
///   never wait, whatever other groups are writing.
/// - **A failed write reverts the core to the state before it** and voids every
///   later outstanding write: their changes were made on top of it. Every request
///   that waited for any of them is answered with the error (mapped as Kafka maps
///   a failed append, §6.7), every request parked in a group the revert removes is
///   answered, and Kafka's own reactions to a failed append follow (§2.2: the
///   leader's assignment failed, the group rebalances). The driver must drop
///   voided writes it has not persisted yet ([`CoordinatorCore::is_write_outstanding`]);
///   a completion reported for a voided write is ignored.
/// - Every request is answered exactly once, sooner or later.
///
/// A driver must never: complete a write out of order within a core, persist a
/// write after an earlier one of the same core failed, report a write `Ok` before
/// it is durable, reuse a [`RequestId`] that is not answered yet, or feed a core
/// from two threads at once (it is `Send`, not `Sync`: lock it).
#[derive(Debug)]
pub struct CoordinatorCore {
    /// Every group of the partition, of whatever kind (one id namespace).
    pub(crate) groups: ClientMap<Arc<str>, GroupKind>,
    /// Every group's committed offsets, beside the groups.
    pub(crate) offsets: OffsetStore,
    /// Every group's pending transactional offsets, beside the committed ones.
    pub(crate) transactions: offsets::transactions::TxnOffsets,
    /// An empty consumer group that holds a consumer group's slot while a
    /// request works on it (`kind.rs`), kept to spare an allocation each time.
    pub(crate) spare_consumer: Option<Box<consumer::ConsumerGroup>>,
    pub(crate) engine: Engine,
    /// The share coordinator of the share partitions whose keys route here
    /// (`share_coordinator.rs`).
    pub(crate) share_coordinator: group_share_coordinator::ShareCoordinatorShard,
    /// The offset the shard's next record replays at (its offsets only order
    /// its own bookkeeping: the store keeps state, not a log).
    pub(crate) share_log_offset: i64,
    started: bool,
}

impl CoordinatorCore {
    /// A core with no groups.
    pub fn new(config: CoordinatorConfig) -> CoordinatorCore {
        let ids = MemberIdGenerator::new(config.member_id_seed);
        let mut share_coordinator =
            group_share_coordinator::ShareCoordinatorShard::new(config.share_coordinator.clone());
        share_coordinator.on_loaded(group_share_coordinator::TopicsImage::default());
        CoordinatorCore {
            share_coordinator,
            share_log_offset: 0,
            groups: ClientMap::default(),
            offsets: OffsetStore::default(),
            transactions: Default::default(),
            spare_consumer: None,
            engine: Engine {
                config,
                now: 0,
                fx: Effects::default(),
                ids,
                next_write: 0,
                pending_writes: FastMap::default(),
                timeline: Timeline::default(),
                barriers: Vec::new(),
                deferred: Vec::new(),
                topics: ClientSet::default(),
                image: Arc::new(crate::MetadataImage::default()),
                image_with_new_topics: 0,
                group_configs: ClientMap::default(),
                share_state_initializations: Vec::new(),
                share_state_deletions: Vec::new(),
                share_deletes: Vec::new(),
                share_group_deletion_asks: Vec::new(),
                share_deletion_seq: 0,
                share_offset_deletes: Vec::new(),
                share_offset_alters: Vec::new(),
                share_state_summaries: Vec::new(),
                share_offset_describes: Vec::new(),
                assignors: vec![
                    Arc::new(group_assignors::server::UniformAssignor),
                    Arc::new(group_assignors::server::ServerRangeAssignor),
                ],
            },
            started: false,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &CoordinatorConfig {
        &self.engine.config
    }

    fn begin(&mut self, now_ms: i64) {
        self.engine.now = now_ms;
        self.engine.timeline.begin_step();
    }

    fn end(&mut self) {
        self.engine.timeline.end_step();
    }

    fn finish(&mut self) -> Effects {
        self.end();
        std::mem::take(&mut self.engine.fx)
    }

    /// Arms the periodic offset-retention job (Kafka arms it when it becomes coordinator).
    pub fn start(&mut self, now_ms: i64) -> Effects {
        self.begin(now_ms);
        self.arm_expiration();
        self.finish()
    }

    fn arm_expiration(&mut self) {
        if !self.started {
            self.started = true;
            let deadline = self.engine.now + self.engine.config.offsets_retention_check_interval_ms;
            self.engine.arm(TimerKey::OffsetExpiration, deadline);
        }
    }

    /// Handles one request. Its answer may be in the returned effects, or come later
    /// (a parked JoinGroup or SyncGroup, or a response waiting for a write).
    pub fn handle(&mut self, now_ms: i64, request_id: RequestId, request: Request) -> Effects {
        let mut out = Effects::default();
        self.handle_into(now_ms, request_id, request, &mut out);
        out
    }

    /// The outstanding metadata write of `group` that answers about it must wait
    /// for, if any (reads answer from committed state and wait for nothing).
    fn barrier(&self, group: &str) -> Option<WriteId> {
        if !self.engine.timeline.has_outstanding() {
            return None;
        }
        self.groups.get(group).and_then(GroupKind::barrier)
    }

    /// Holds the answers produced since `from` until `barrier` commits.
    fn defer_from(&mut self, from: usize, barrier: Option<WriteId>) {
        let Some(write) = barrier else { return };
        if !self.engine.timeline.is_outstanding(write) || self.engine.fx.responses.len() <= from {
            return;
        }
        for (request, response) in self.engine.fx.responses.drain(from..) {
            self.engine.deferred.push((write, request, response));
        }
    }

    /// As [`handle`](Self::handle), appending to `out` instead of returning new
    /// effects: a caller that drains and reuses one `Effects` allocates nothing for it.
    pub fn handle_into(&mut self, now_ms: i64, request_id: RequestId, request: Request, out: &mut Effects) {
        self.handle_visible_into(now_ms, request_id, request, out, &|_| true);
    }

    /// As [`handle_into`](Self::handle_into), for a caller that may describe only
    /// the topics `visible` accepts: a regex resolution this request triggers
    /// matches only those (Kafka drops the topics the triggering member may not
    /// describe, `kip848-semantics.md` §6.1). It is asked only when a regex resolves.
    pub fn handle_visible_into(
        &mut self,
        now_ms: i64,
        request_id: RequestId,
        request: Request,
        out: &mut Effects,
        visible: &dyn Fn(&str) -> bool,
    ) {
        let barrier = request.barrier_group().and_then(|group| self.barrier(group));
        // The engine's own effects are empty between calls: lend it `out` to append
        // to, then hand it back (two swaps, nothing moved or dropped).
        std::mem::swap(&mut self.engine.fx, out);
        let from = self.engine.fx.responses.len();
        self.begin(now_ms);
        // The table row's handler (`crate::api`).
        request.run(self, request_id, visible);
        self.defer_from(from, barrier);
        self.end();
        std::mem::swap(&mut self.engine.fx, out);
    }

    /// As [`fire_timer`](Self::fire_timer), appending to `out`.
    pub fn fire_timer_into(&mut self, now_ms: i64, key: &TimerKey, out: &mut Effects) {
        let barrier = match key {
            TimerKey::Join(g)
            | TimerKey::Sync(g)
            | TimerKey::Session(g, _)
            | TimerKey::ConsumerSession(g, _)
            | TimerKey::ShareSession(g, _)
            | TimerKey::ConsumerRebalance(g, _)
            | TimerKey::ConsumerClassicJoin(g, _)
            | TimerKey::ConsumerClassicSync(g, _) => self.barrier(g),
            TimerKey::OffsetExpiration => None,
        };
        std::mem::swap(&mut self.engine.fx, out);
        let from = self.engine.fx.responses.len();
        self.begin(now_ms);
        self.dispatch_timer(key);
        self.defer_from(from, barrier);
        self.end();
        std::mem::swap(&mut self.engine.fx, out);
    }

    /// As [`complete_write`](Self::complete_write), appending to `out`.
    pub fn complete_write_into(
        &mut self,
        now_ms: i64,
        id: WriteId,
        result: Result<(), ErrorCode>,
        out: &mut Effects,
    ) {
        std::mem::swap(&mut self.engine.fx, out);
        self.begin(now_ms);
        self.dispatch_write(id, result);
        self.end();
        std::mem::swap(&mut self.engine.fx, out);
    }

    /// Runs a due timer. Stale timers (re-armed later, or whose group or member is
    /// gone) do nothing.
    pub fn fire_timer(&mut self, now_ms: i64, key: &TimerKey) -> Effects {
        let mut out = Effects::default();
        self.fire_timer_into(now_ms, key, &mut out);
        out
    }

    fn dispatch_timer(&mut self, key: &TimerKey) {
        match key {
            TimerKey::Join(group) => self.fire_join(group),
            TimerKey::Sync(group) => self.fire_sync(group),
            TimerKey::Session(group, member) => self.fire_session(group, member),
            TimerKey::OffsetExpiration => self.fire_expiration(),
            TimerKey::ConsumerSession(group, member) => self.fire_consumer_session(group, member),
            TimerKey::ShareSession(group, member) => self.fire_share_session(group, member),
            TimerKey::ConsumerRebalance(group, member) => self.fire_consumer_rebalance(group, member),
            TimerKey::ConsumerClassicJoin(group, member) => {
                self.fire_consumer_classic_deadline(consumer::ClassicDeadline::Join, group, member)
            }
            TimerKey::ConsumerClassicSync(group, member) => {
                self.fire_consumer_classic_deadline(consumer::ClassicDeadline::Sync, group, member)
            }
        }
    }

    /// Reports the outcome of a write: `Ok` once every record is persisted, or the
    /// append error (a Kafka code, mapped per §6.7 before a client sees it).
    ///
    /// Completions of one core must come in the order the writes were issued. A
    /// failure reverts the core to the state before the failed write and voids
    /// every later write as well (their changes were made on top of it): their
    /// requests are answered with the error, and the driver must not persist them
    /// (a completion reported for a voided write is ignored).
    pub fn complete_write(&mut self, now_ms: i64, id: WriteId, result: Result<(), ErrorCode>) -> Effects {
        let mut out = Effects::default();
        self.complete_write_into(now_ms, id, result, &mut out);
        out
    }

    /// How many writes were issued and neither completed nor voided: what a
    /// driver still owes a completion for.
    pub fn outstanding_writes(&self) -> usize {
        self.engine.pending_writes.len()
    }

    /// True while write `id` was issued and neither completed nor voided. A driver
    /// drops a queued write that is no longer outstanding instead of persisting it.
    pub fn is_write_outstanding(&self, id: WriteId) -> bool {
        self.engine.pending_writes.contains_key(&id)
    }

    /// Every OffsetCommit answer the core holds back (until its write commits,
    /// or behind its group's barrier), by request: what a driver that loses the
    /// partition answers in their shape (every partition with its error)
    /// instead of building that answer for every commit in advance.
    pub(crate) fn for_each_held_commit(
        &self,
        mut f: impl FnMut(RequestId, &group_types::OffsetCommitResponse),
    ) {
        for pending in self.engine.pending_writes.values() {
            if let PendingWrite::Commit { request, response } = pending {
                f(*request, response);
            }
        }
        for (_, request, response) in &self.engine.deferred {
            if let Response::OffsetCommit(r) = response {
                f(*request, r);
            }
        }
    }

    fn dispatch_write(&mut self, id: WriteId, result: Result<(), ErrorCode>) {
        match result {
            Ok(()) => {
                let Some(pending) = self.engine.pending_writes.remove(&id) else { return };
                self.engine.timeline.committed(id);
                // An offset commit, the common write, holds no barrier and no
                // answer of another request.
                if !self.engine.barriers.is_empty() {
                    self.release_barriers(&[id]);
                }
                if !self.engine.deferred.is_empty() {
                    let mut held = std::mem::take(&mut self.engine.deferred);
                    held.retain(|(write, request, response)| {
                        if *write == id {
                            self.engine.fx.responses.push((*request, response.clone()));
                            false
                        } else {
                            true
                        }
                    });
                    self.engine.deferred = held;
                }
                self.on_write_completed(pending, Ok(()));
            }
            Err(error) => {
                let Some((voided, undone)) = self.engine.timeline.fail(id) else { return };
                self.engine.write_failed(error, voided.len());
                self.release_barriers(&voided);
                // Back to the state before the failed write, newest change first.
                for undo in undone {
                    self.undo(undo, error);
                }
                // Answers held for voided writes become the error.
                let held = std::mem::take(&mut self.engine.deferred);
                let mut kept = Vec::with_capacity(held.len());
                for (write, request, response) in held {
                    if voided.contains(&write) {
                        let failed = response.with_error(map_operation_error(error));
                        self.engine.fx.responses.push((request, failed));
                    } else {
                        kept.push((write, request, response));
                    }
                }
                self.engine.deferred = kept;
                // Kafka's own reactions to a failed append, in write order, on the
                // reverted state; what they change is a new step.
                self.engine.timeline.begin_step();
                for write in voided {
                    if let Some(pending) = self.engine.pending_writes.remove(&write) {
                        self.on_write_completed(pending, Err(error));
                    }
                }
            }
        }
    }

    /// Clears the barrier of each group whose metadata write is in `writes`.
    fn release_barriers(&mut self, writes: &[WriteId]) {
        let barriers = &mut self.engine.barriers;
        let groups = &mut self.groups;
        barriers.retain(|(write, group)| {
            if !writes.contains(write) {
                return true;
            }
            if let Some(g) = groups.get_mut(group)
                && g.barrier() == Some(*write)
            {
                *g.barrier_mut() = None;
            }
            false
        });
    }

    /// Replaces the metadata image. Consumer and share groups subscribed to a topic that
    /// was created, deleted or changed recompute their metadata at their next
    /// heartbeat (`GroupMetadataManager.onNewMetadataImage`); regexes are
    /// resolved again if a topic was created.
    pub fn update_metadata_image(&mut self, image: Arc<crate::MetadataImage>) {
        let (changed, created) = image.changed_since(&self.engine.image);
        if created {
            self.engine.image_with_new_topics = image.version();
        }
        if !changed.is_empty() {
            for g in self.groups.values_mut() {
                match g {
                    GroupKind::Consumer(cg) => {
                        // Names and resolved regex topics; new topics a regex may match
                        // are its refresh's business (`groupsSubscribedToTopic`).
                        let names = consumer::subscribed_topic_names(cg);
                        if changed.iter().any(|t| names.contains(&**t)) {
                            cg.refresh_needed = true;
                        }
                    }
                    GroupKind::Share(sg) => {
                        let names = sg.subscribed();
                        if changed.iter().any(|t| names.contains_key(&**t)) {
                            sg.refresh_needed = true;
                        }
                    }
                    GroupKind::Classic(_) => {}
                }
            }
        }
        self.share_coordinator.on_new_metadata_image(share_coordinator::topics_image(&image));
        self.engine.image = image;
    }

    /// The metadata image consumer groups see.
    pub fn metadata_image(&self) -> &Arc<crate::MetadataImage> {
        &self.engine.image
    }

    /// Makes `assignor` available to consumer groups under its name, before the
    /// built-ins (`uniform`, `range`); members may name it once
    /// [`ConsumerGroupConfig::assignors`](crate::ConsumerGroupConfig::assignors) lists it.
    pub fn register_server_assignor(&mut self, assignor: Arc<dyn group_assignors::server::ServerAssignor>) {
        self.engine.assignors.retain(|a| a.name() != assignor.name());
        self.engine.assignors.push(assignor);
    }

    /// The server assignor named `name`: a registered one, else a built-in.
    pub(crate) fn server_assignor(
        &self,
        name: &str,
    ) -> Option<Arc<dyn group_assignors::server::ServerAssignor>> {
        self.engine.assignors.iter().find(|a| a.name() == name).cloned()
    }

    /// Sets group `group_id`'s overrides of the consumer-group settings, checked
    /// against the broker's bounds; effective from its members' next heartbeat.
    pub fn set_group_config(
        &mut self,
        group_id: &str,
        overrides: crate::GroupConfigOverrides,
    ) -> Result<(), crate::BadConsumerGroupConfig> {
        overrides.validate(&self.engine.config.consumer)?;
        overrides.validate_share(&self.engine.config.share)?;
        overrides.validate_intervals(&self.engine.config.group_config_bounds)?;
        self.engine.group_configs.insert(group_id.to_owned(), overrides);
        Ok(())
    }

    /// Group `group_id`'s overrides, if it has any.
    pub fn group_config(&self, group_id: &str) -> Option<&crate::GroupConfigOverrides> {
        self.engine.group_configs.get(group_id)
    }

    /// A read-only snapshot of one group, sharing nothing with the live group.
    pub fn group(&self, group_id: &str) -> Option<GroupMetadata> {
        let (id, kind) = self.groups.get_key_value(group_id)?;
        Some(snapshot(id, kind, self.offsets.get(group_id)))
    }

    /// Snapshots of every group, ordered by group id.
    pub fn groups(&self) -> Vec<GroupMetadata> {
        let mut all: Vec<GroupMetadata> =
            self.groups.iter().map(|(id, kind)| snapshot(id, kind, self.offsets.get(id))).collect();
        all.sort_by(|a, b| a.group_id.cmp(&b.group_id));
        all
    }

    /// The committed offset of one partition: what OffsetFetch answers, never a
    /// value whose write has not completed.
    pub fn committed_offset(&self, group_id: &str, topic: &str, partition: i32) -> Option<OffsetAndMetadata> {
        self.committed_view(group_id)?;
        let (base, overrides) = self.committed_offsets(group_id);
        match overrides.into_iter().find(|(tp, _)| &*tp.topic == topic && tp.partition == partition) {
            Some((_, value)) => value,
            None => base?.get_partition(topic, partition).cloned(),
        }
    }

    /// The pending transactional offsets of group `group_id` (live state: what a
    /// marker would commit or abort now), ordered by producer then partition.
    pub fn pending_transactional_offsets(
        &self,
        group_id: &str,
    ) -> Vec<(i64, TopicPartition, OffsetAndMetadata)> {
        let producers = self.transactions.of_group(group_id).into_iter().flatten();
        producers
            .flat_map(|(producer, offsets)| {
                offsets.iter().map(|(tp, p)| (*producer, tp.clone(), p.offset.clone()))
            })
            .collect()
    }

    /// Number of groups held.
    pub fn group_count(&self) -> usize {
        self.groups.len()
    }
}

/// A group as [`GroupMetadata`] shows it: a consumer group shows as an empty
/// group with its offsets (its own view is `consumer_group`).
fn snapshot(id: &Arc<str>, kind: &GroupKind, offsets: Option<&offsets::OffsetCache>) -> GroupMetadata {
    let shell;
    let g = match kind {
        GroupKind::Classic(g) => g,
        GroupKind::Consumer(cg) => {
            shell = Group::new(id.clone(), cg.created_ms);
            &shell
        }
        GroupKind::Share(_) => {
            shell = Group::new(id.clone(), 0);
            &shell
        }
    };
    let protocol = g.protocol_name.as_deref().unwrap_or("");
    GroupMetadata {
        group_id: str::to_owned(&g.id),
        state: g.state,
        generation_id: g.generation,
        protocol_type: g.protocol_type.as_deref().map(str::to_owned),
        protocol_name: g.protocol_name.as_deref().map(str::to_owned),
        leader_id: g.leader.as_deref().map(str::to_owned),
        state_timestamp_ms: g.state_ts,
        members: g
            .members()
            .iter()
            .map(|m| MemberMetadata {
                member_id: str::to_owned(&m.id),
                group_instance_id: m.instance().map(str::to_owned),
                client_id: m.client_id().to_owned(),
                client_host: m.client_host().to_owned(),
                session_timeout_ms: m.session_timeout_ms,
                rebalance_timeout_ms: m.rebalance_timeout_ms,
                protocol_type: g.protocol_type.as_deref().unwrap_or_default().to_owned(),
                protocols: m.payload.to_metadata(),
                subscription: m.metadata(protocol).to_vec(),
                assignment: m.payload.assignment().to_vec(),
                awaiting_join: m.awaiting_join().is_some(),
                awaiting_sync: m.awaiting_sync().is_some(),
                is_new: m.is_new,
                session_deadline_ms: m.session_deadline.get(),
            })
            .collect(),
        pending_members: g.pending_join.keys().map(|k| str::to_owned(k)).collect(),
        join_deadline_ms: g.join_timer.map(|(d, _)| d),
        sync_deadline_ms: g.sync_timer.map(|(d, _)| d),
        offsets: offsets.into_iter().flat_map(|o| o.iter()).map(|(tp, o)| (tp, o.clone())).collect(),
    }
}
