//! `SharePartition`: its state, initialization from the persister, the next fetch
//! offset, and what callers may read of the cache.

use std::collections::BTreeMap;

use group_types::{GroupId, MemberId, TopicId};

use crate::error::ShareError;
use crate::in_flight::{InFlightBatch, InFlightState, Tracking};
use crate::persister::{
    PendingWrite, PersisterFailure, PersisterStateBatch, ReadShareGroupStateParameters,
    ReadShareGroupStateResult, UNINITIALIZED_START_OFFSET, WriteCause, WriteId,
    WriteShareGroupStateParameters,
};
use crate::types::{PartitionState, RecordState, SharePartitionConfig};

/// Kafka's `MINIMUM_THROTTLE_RECORDS_DELIVERY_LIMIT`.
const MIN_THROTTLE_DELIVERY_LIMIT: i32 = 2;

/// Offsets between the persisted batches that no one knows the fate of (Kafka's
/// `GapWindow`): fetched again until the end offset moves past the read's end.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GapWindow {
    pub(crate) end_offset: i64,
    pub(crate) gap_start: i64,
}

/// A write issued and not yet completed: the runs it changed.
#[derive(Debug, Clone)]
pub(crate) struct Outstanding {
    pub(crate) cause: WriteCause,
    pub(crate) ranges: Vec<(i64, i64)>,
}

/// The in-flight records of one partition for one share group (Kafka's
/// `SharePartition`), without I/O: time is an argument, and every state change Kafka
/// writes through its persister comes back as a [`PendingWrite`].
#[derive(Debug)]
pub struct SharePartition {
    pub(crate) group_id: GroupId,
    pub(crate) topic_id: TopicId,
    pub(crate) partition: i32,
    pub(crate) leader_epoch: i32,
    pub(crate) config: SharePartitionConfig,
    /// Records whose delivery count reaches this are delivered in smaller batches.
    pub(crate) throttle_limit: i32,
    /// The cache, by first offset (Kafka's `cachedState`).
    pub(crate) cache: BTreeMap<i64, InFlightBatch>,
    pub(crate) find_next_fetch_offset: bool,
    pub(crate) start_offset: i64,
    pub(crate) end_offset: i64,
    pub(crate) gap_window: Option<GapWindow>,
    pub(crate) state_epoch: i32,
    pub(crate) partition_state: PartitionState,
    pub(crate) next_write: u64,
    pub(crate) outstanding: BTreeMap<WriteId, Outstanding>,
}

/// One cached batch as a caller sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CachedBatch {
    /// The batch's first offset.
    pub first_offset: i64,
    /// The batch's last offset.
    pub last_offset: i64,
    /// Whether its records are tracked offset by offset.
    pub per_offset: bool,
}

/// One record's state as a caller sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordView {
    /// Its delivery state.
    pub state: RecordState,
    /// How many times it was delivered.
    pub delivery_count: i32,
    /// The member holding it (empty when not acquired).
    pub member_id: MemberId,
    /// When its acquisition lock runs out, if it is locked.
    pub lock_deadline_ms: Option<i64>,
    /// Whether an acknowledgement of it is waiting for its write.
    pub in_transition: bool,
}

impl SharePartition {
    /// A share partition for `group_id` on `topic_id`-`partition` at `leader_epoch`,
    /// not yet initialized ([`PartitionState::Empty`]).
    pub fn new(
        group_id: GroupId,
        topic_id: TopicId,
        partition: i32,
        leader_epoch: i32,
        config: SharePartitionConfig,
    ) -> Result<SharePartition, ShareError> {
        if config.max_in_flight_records <= 0 {
            return Err(ShareError::InvalidConfig("max_in_flight_records must be positive"));
        }
        if config.max_delivery_count <= 0 {
            return Err(ShareError::InvalidConfig("max_delivery_count must be positive"));
        }
        if config.record_lock_duration_ms <= 0 {
            return Err(ShareError::InvalidConfig("record_lock_duration_ms must be positive"));
        }
        Ok(SharePartition {
            group_id,
            topic_id,
            partition,
            leader_epoch,
            config,
            throttle_limit: MIN_THROTTLE_DELIVERY_LIMIT.max((config.max_delivery_count + 1) / 2),
            cache: BTreeMap::new(),
            find_next_fetch_offset: false,
            start_offset: 0,
            end_offset: 0,
            gap_window: None,
            state_epoch: 0,
            partition_state: PartitionState::Empty,
            next_write: 0,
            outstanding: BTreeMap::new(),
        })
    }

    /// Sets `share.record.lock.duration.ms` for locks taken from now on (a group
    /// config change).
    pub fn set_record_lock_duration_ms(&mut self, ms: i64) -> Result<(), ShareError> {
        if ms <= 0 {
            return Err(ShareError::InvalidConfig("record_lock_duration_ms must be positive"));
        }
        self.config.record_lock_duration_ms = ms;
        Ok(())
    }

    /// Starts initialization (Kafka's `maybeInitialize`): the read to send, `None`
    /// when already active, or why the partition cannot be initialized.
    pub fn begin_initialize(&mut self) -> Result<Option<ReadShareGroupStateParameters>, ShareError> {
        match self.partition_state {
            PartitionState::Active => return Ok(None),
            PartitionState::Failed => return Err(ShareError::Failed("share partition failed to load")),
            PartitionState::Initializing => {
                return Err(ShareError::LeaderNotAvailable("share partition is already initializing"));
            }
            PartitionState::Fenced => {
                return Err(ShareError::LeaderNotAvailable("share partition is fenced"));
            }
            PartitionState::Empty => {}
        }
        self.partition_state = PartitionState::Initializing;
        Ok(Some(ReadShareGroupStateParameters {
            group_id: self.group_id.clone(),
            topic_id: self.topic_id,
            partition: self.partition,
            leader_epoch: self.leader_epoch,
        }))
    }

    /// Completes initialization with the persister's read. When the read has no
    /// start offset, `reset_offset` is the offset the caller resolved from
    /// `share.auto.offset.reset` (earliest, latest or by duration, Kafka's
    /// `startOffsetDuringInitialization`); without one the call fails and the
    /// partition stays initializing, to be completed again.
    pub fn complete_initialize(
        &mut self,
        read: Result<ReadShareGroupStateResult, PersisterFailure>,
        reset_offset: Option<i64>,
    ) -> Result<(), ShareError> {
        if self.partition_state != PartitionState::Initializing {
            return Err(ShareError::Failed("share partition is not initializing"));
        }
        if let Ok(r) = &read
            && r.error_code == 0
            && r.start_offset == UNINITIALIZED_START_OFFSET
            && reset_offset.is_none()
        {
            return Err(ShareError::StartOffsetUnresolved);
        }
        let outcome = self.initialize_from(read, reset_offset);
        self.partition_state = if outcome.is_ok() { PartitionState::Active } else { PartitionState::Failed };
        outcome
    }

    fn initialize_from(
        &mut self,
        read: Result<ReadShareGroupStateResult, PersisterFailure>,
        reset_offset: Option<i64>,
    ) -> Result<(), ShareError> {
        let read = read.map_err(|f| f.to_error())?;
        if read.topic_id != self.topic_id || read.partition != self.partition {
            return Err(ShareError::Failed("the read answered for another partition"));
        }
        if read.error_code != 0 {
            return Err(ShareError::from_persister_code(read.error_code));
        }
        let start = if read.start_offset == UNINITIALIZED_START_OFFSET {
            reset_offset.ok_or(ShareError::StartOffsetUnresolved)?
        } else {
            read.start_offset
        };
        let mut cache = BTreeMap::new();
        let mut gap_start = -1;
        let mut previous_last = start - 1;
        for b in &read.state_batches {
            if b.first_offset < start || b.last_offset < b.first_offset {
                return Err(ShareError::Failed("invalid state batch in the persisted state"));
            }
            let state = RecordState::from_id(b.delivery_state)?;
            if gap_start == -1 && b.first_offset > previous_last + 1 {
                gap_start = previous_last + 1;
            }
            previous_last = b.last_offset;
            let s = InFlightState::new(state, i32::from(b.delivery_count), MemberId::empty(), None);
            cache.insert(b.first_offset, InFlightBatch::new(b.first_offset, b.last_offset, s));
        }
        self.start_offset = start;
        self.state_epoch = read.state_epoch;
        self.cache = cache;
        if let Some((_, last)) = self.cache.last_key_value() {
            // Available records may be anywhere in what was read.
            self.find_next_fetch_offset = true;
            self.end_offset = last.last;
            if gap_start != -1 {
                self.gap_window = Some(GapWindow { end_offset: self.end_offset, gap_start });
            }
            self.maybe_update_cached_state_and_offsets();
        } else {
            self.end_offset = start;
        }
        Ok(())
    }

    /// Marks the partition fenced (the leader moved): it acquires nothing more.
    pub fn mark_fenced(&mut self) {
        self.partition_state = PartitionState::Fenced;
    }

    /// The partition's life state.
    pub fn partition_state(&self) -> PartitionState {
        self.partition_state
    }

    /// The share-partition start offset (SPSO).
    pub fn start_offset(&self) -> i64 {
        self.start_offset
    }

    /// The share-partition end offset (SPEO): the last offset fetched into the cache.
    pub fn end_offset(&self) -> i64 {
        self.end_offset
    }

    /// The state epoch read at initialization.
    pub fn state_epoch(&self) -> i32 {
        self.state_epoch
    }

    /// The limits in force.
    pub fn config(&self) -> SharePartitionConfig {
        self.config
    }

    /// Whether the next fetch offset must be searched for in the cache (Kafka's
    /// `findNextFetchOffset` flag: something was released or expired).
    pub fn find_next_fetch_offset(&self) -> bool {
        self.find_next_fetch_offset
    }

    /// The first offset of the gaps a persisted read left, while they are still to be
    /// fetched (Kafka's `persisterReadResultGapWindow`): `(gap start, read's end)`.
    pub fn read_gap_window(&self) -> Option<(i64, i64)> {
        self.gap_window.map(|g| (g.gap_start, g.end_offset))
    }

    /// The records between the start and end offsets, 0 with an empty cache.
    pub fn in_flight_record_count(&self) -> i64 {
        if self.cache.is_empty() { 0 } else { self.end_offset - self.start_offset + 1 }
    }

    /// The cached batches, in offset order.
    pub fn cached_batches(&self) -> impl Iterator<Item = CachedBatch> + '_ {
        self.cache.values().map(|b| CachedBatch {
            first_offset: b.first,
            last_offset: b.last,
            per_offset: matches!(b.tracking, Tracking::PerOffset(_)),
        })
    }

    /// The state of `offset`, if it is cached.
    pub fn record(&self, offset: i64) -> Option<RecordView> {
        let (_, batch) = self.cache.range(..=offset).next_back()?;
        let s = batch.state_at(offset)?;
        Some(RecordView {
            state: s.state,
            delivery_count: s.delivery_count,
            member_id: s.member().clone(),
            lock_deadline_ms: s.lock_deadline,
            in_transition: s.in_transition(),
        })
    }

    /// How many cached records at or past the start offset are acknowledged or
    /// archived (Kafka's `deliveryCompleteCount`).
    pub fn delivery_complete_count(&self) -> i32 {
        let mut n: i64 = 0;
        for b in self.cache.values() {
            if b.last < self.start_offset {
                continue;
            }
            match &b.tracking {
                Tracking::Whole(s) => {
                    if s.state.is_terminal() {
                        n += b.last - self.start_offset.max(b.first) + 1;
                    }
                }
                Tracking::PerOffset(v) => {
                    let from = self.start_offset.max(b.first);
                    n += v.iter().skip((from - b.first) as usize).filter(|s| s.state.is_terminal()).count()
                        as i64;
                }
            }
        }
        i32::try_from(n).unwrap_or(i32::MAX)
    }

    /// The offset the next fetch should read from (Kafka's `nextFetchOffset`): the
    /// first available cached record when some were released or expired, else past
    /// the end offset.
    pub fn next_fetch_offset(&mut self) -> i64 {
        let past_cache = match self.cache.last_key_value() {
            None => true,
            Some((_, b)) => self.start_offset > b.last,
        };
        if !self.find_next_fetch_offset {
            return if past_cache { self.end_offset } else { self.end_offset + 1 };
        }
        if past_cache {
            self.find_next_fetch_offset = false;
            return self.end_offset;
        }
        let gap_active = self.gap_window_active();
        let mut gap_start = self.gap_window.map_or(-1, |g| g.gap_start);
        let mut next = -1;
        'batches: for (&key, batch) in &self.cache {
            if gap_active {
                if key > gap_start {
                    next = gap_start;
                    break;
                }
                gap_start = gap_start.max(batch.last + 1);
            }
            match &batch.tracking {
                Tracking::Whole(s) => {
                    if s.state == RecordState::Available && !s.in_transition() {
                        next = batch.first;
                        break;
                    }
                }
                Tracking::PerOffset(v) => {
                    for (i, s) in v.iter().enumerate() {
                        if s.state == RecordState::Available && !s.in_transition() {
                            next = batch.first + i as i64;
                            break 'batches;
                        }
                    }
                }
            }
        }
        if next == -1 {
            self.find_next_fetch_offset = false;
            next = self.end_offset + 1;
        }
        next
    }

    /// Whether a fetch may acquire more (Kafka's `canAcquireRecords`): there is
    /// something to re-acquire in the cache, or room under the in-flight limit.
    pub fn can_acquire_records(&mut self) -> bool {
        if self.next_fetch_offset() != self.end_offset + 1 {
            return true;
        }
        self.in_flight_record_count() < i64::from(self.config.max_in_flight_records)
    }

    pub(crate) fn gap_window_active(&self) -> bool {
        self.gap_window.is_some_and(|g| g.end_offset == self.end_offset)
    }

    /// The key of the cached batch with the greatest first offset at or below `offset`.
    pub(crate) fn floor_key(&self, offset: i64) -> Option<i64> {
        self.cache.range(..=offset).next_back().map(|(k, _)| *k)
    }

    /// The keys of cached batches whose first offsets lie in `from..=to`.
    pub(crate) fn keys_in(&self, from: i64, to: i64) -> Vec<i64> {
        if from > to {
            return Vec::new();
        }
        self.cache.range(from..=to).map(|(k, _)| *k).collect()
    }

    pub(crate) fn start_within(&self, first: i64, last: i64) -> bool {
        first < self.start_offset && last >= self.start_offset
    }

    pub(crate) fn lock_deadline(&self, now_ms: i64) -> i64 {
        now_ms.saturating_add(self.config.record_lock_duration_ms)
    }

    pub(crate) fn allocate_write(&mut self) -> WriteId {
        self.next_write += 1;
        WriteId(self.next_write)
    }

    /// Registers `batches` as write `id` and builds its request (Kafka's
    /// `writeShareGroupState`, with the start offset as it is now).
    pub(crate) fn issue_write(
        &mut self,
        id: WriteId,
        cause: WriteCause,
        batches: Vec<PersisterStateBatch>,
    ) -> PendingWrite {
        let ranges = batches.iter().map(|b| (b.first_offset, b.last_offset)).collect();
        self.outstanding.insert(id, Outstanding { cause, ranges });
        PendingWrite {
            id,
            cause,
            parameters: WriteShareGroupStateParameters {
                group_id: self.group_id.clone(),
                topic_id: self.topic_id,
                partition: self.partition,
                state_epoch: self.state_epoch,
                start_offset: self.start_offset,
                delivery_complete_count: self.delivery_complete_count(),
                leader_epoch: self.leader_epoch,
                state_batches: batches,
            },
        }
    }
}

/// A persister state batch for `state` over `first..=last`.
pub(crate) fn state_batch(first: i64, last: i64, state: &InFlightState) -> PersisterStateBatch {
    let count = i16::try_from(state.delivery_count).unwrap_or(i16::MAX);
    PersisterStateBatch::new(first, last, state.state.id(), count)
}
