//! The state of in-flight records (Kafka's `InFlightState` and `InFlightBatch`): a
//! batch is tracked as a whole until a request touches part of it, then offset by
//! offset.

use std::num::NonZeroU64;

use group_types::MemberId;

use crate::persister::WriteId;
use crate::types::RecordState;

/// How a transition changes the delivery count (Kafka's `DeliveryCountOps`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CountOp {
    Increase,
    Decrease,
    Keep,
}

/// The holder a record shows while not acquired (Kafka's `EMPTY_MEMBER_ID`).
static EMPTY: MemberId = MemberId::empty();

/// The state of one record, or of every record of a batch tracked whole.
///
/// A transition started by an acknowledgement or release (whose new holder is always
/// empty) keeps what it reverts to in place: the state before in `prev_state`, the
/// holder before in `member`, the write in `pending`. So a pending transition costs
/// no allocation, and a state is 64 bytes.
#[derive(Debug, Clone)]
pub(crate) struct InFlightState {
    pub(crate) state: RecordState,
    prev_state: RecordState,
    /// Archived by start-offset movement or compaction: a rolled-back transition
    /// leaves it archived.
    terminal: bool,
    /// The acquisition lock ran out while an acknowledgement was being written; a
    /// rollback then releases the records instead of restoring the lock holder.
    pub(crate) lock_expired: bool,
    pub(crate) delivery_count: i32,
    /// The holder (empty when not acquired); while a transition is pending, the
    /// holder before it.
    member: MemberId,
    /// When the acquisition lock runs out, if one is held.
    pub(crate) lock_deadline: Option<i64>,
    /// The write whose completion ends the pending transition.
    pending: Option<NonZeroU64>,
}

impl InFlightState {
    pub(crate) fn new(state: RecordState, delivery_count: i32, member: MemberId, lock: Option<i64>) -> Self {
        InFlightState {
            state,
            prev_state: state,
            terminal: false,
            lock_expired: false,
            delivery_count,
            member,
            lock_deadline: lock,
            pending: None,
        }
    }

    /// The holder as Kafka shows it: empty while a transition is pending.
    pub(crate) fn member(&self) -> &MemberId {
        if self.pending.is_some() { &EMPTY } else { &self.member }
    }

    /// A copy for one offset of a batch being split: Kafka's copy keeps the state,
    /// count, holder and lock deadline, not the pending transition or terminal flag.
    fn split_copy(&self) -> Self {
        InFlightState::new(self.state, self.delivery_count, self.member().clone(), self.lock_deadline)
    }

    pub(crate) fn in_transition(&self) -> bool {
        self.pending.is_some()
    }

    /// Kafka's `InFlightState.tryUpdateState`: false when a transition is pending or
    /// the move is not allowed. Releasing a record that reached the delivery limit
    /// archives it instead.
    pub(crate) fn try_update(
        &mut self,
        next: RecordState,
        op: CountOp,
        max_delivery: i32,
        member: &MemberId,
    ) -> bool {
        if self.in_transition() {
            return false;
        }
        let next = if next == RecordState::Available
            && op != CountOp::Decrease
            && self.delivery_count >= max_delivery
        {
            RecordState::Archived
        } else {
            next
        };
        if !self.state.can_become(next) {
            return false;
        }
        self.state = next;
        if next != RecordState::Archived {
            self.delivery_count = match op {
                CountOp::Increase => self.delivery_count.saturating_add(1),
                CountOp::Decrease => self.delivery_count.saturating_sub(1),
                CountOp::Keep => self.delivery_count,
            };
        }
        self.member = member.clone();
        true
    }

    /// Kafka's `startStateTransition` to an empty holder: the change shows at once
    /// and is committed or rolled back when `write` completes.
    pub(crate) fn start_transition(
        &mut self,
        next: RecordState,
        op: CountOp,
        max_delivery: i32,
        write: WriteId,
    ) -> bool {
        let Some(write) = NonZeroU64::new(write.0) else { return false };
        let before = self.state;
        let holder = std::mem::replace(&mut self.member, MemberId::empty());
        let moved = self.try_update(next, op, max_delivery, &EMPTY);
        self.member = holder;
        if moved {
            self.prev_state = before;
            self.pending = Some(write);
        }
        moved
    }

    /// Kafka's `completeStateTransition`.
    pub(crate) fn complete_transition(&mut self, commit: bool, max_delivery: i32) {
        if self.pending.take().is_none() {
            return;
        }
        if commit || self.terminal {
            self.member = MemberId::empty();
            self.clear_lock();
            return;
        }
        if self.lock_deadline.is_some() && self.lock_expired {
            // The lock ran out meanwhile: release as the timeout would have. The count
            // is unchanged by acknowledgements, so it is the count before.
            self.state = if self.delivery_count >= max_delivery {
                RecordState::Archived
            } else {
                RecordState::Available
            };
            self.member = MemberId::empty();
            self.clear_lock();
        } else {
            // The holder before is still in `member`.
            self.state = self.prev_state;
        }
    }

    /// Kafka's `InFlightState.archive`: terminal whatever happens to a pending
    /// transition.
    pub(crate) fn archive(&mut self) {
        self.terminal = true;
        self.state = RecordState::Archived;
        self.member = MemberId::empty();
        self.clear_lock();
    }

    pub(crate) fn clear_lock(&mut self) {
        self.lock_deadline = None;
        self.lock_expired = false;
    }

    /// Whether this state's lock is one a timeout should fire for at `now_ms`.
    pub(crate) fn lock_due(&self, now_ms: i64) -> bool {
        !self.lock_expired && self.lock_deadline.is_some_and(|d| d <= now_ms)
    }

    pub(crate) fn rollback_write(&self) -> Option<WriteId> {
        self.pending.map(|w| WriteId(w.get()))
    }
}

/// A batch's records: one state for all, or one per offset.
#[derive(Debug, Clone)]
pub(crate) enum Tracking {
    Whole(InFlightState),
    /// Index `i` is offset `first + i`: a split batch tracks every offset it covers.
    PerOffset(Vec<InFlightState>),
}

/// A cached batch of in-flight records (Kafka's `InFlightBatch`).
#[derive(Debug, Clone)]
pub(crate) struct InFlightBatch {
    pub(crate) first: i64,
    pub(crate) last: i64,
    pub(crate) tracking: Tracking,
}

impl InFlightBatch {
    pub(crate) fn new(first: i64, last: i64, state: InFlightState) -> Self {
        InFlightBatch { first, last, tracking: Tracking::Whole(state) }
    }

    pub(crate) fn len(&self) -> i64 {
        self.last - self.first + 1
    }

    pub(crate) fn whole(&self) -> Option<&InFlightState> {
        match &self.tracking {
            Tracking::Whole(s) => Some(s),
            Tracking::PerOffset(_) => None,
        }
    }

    pub(crate) fn whole_mut(&mut self) -> Option<&mut InFlightState> {
        match &mut self.tracking {
            Tracking::Whole(s) => Some(s),
            Tracking::PerOffset(_) => None,
        }
    }

    /// The per-offset states with `from..=to`, as (offset, state).
    pub(crate) fn offsets_mut(
        &mut self,
        from: i64,
        to: i64,
    ) -> impl Iterator<Item = (i64, &mut InFlightState)> + '_ {
        let first = self.first;
        let states: &mut [InFlightState] = match &mut self.tracking {
            Tracking::PerOffset(v) => v,
            Tracking::Whole(_) => &mut [],
        };
        let lo = usize::try_from(from.max(first) - first).unwrap_or(0).min(states.len());
        let hi = usize::try_from(to.saturating_sub(first).saturating_add(1)).unwrap_or(0).min(states.len());
        let slice = if lo < hi { &mut states[lo..hi] } else { &mut [] };
        slice.iter_mut().enumerate().map(move |(i, s)| (first + (lo + i) as i64, s))
    }

    /// Visits the batch's states: a batch tracked whole once, as the run
    /// `first..=last`; a split batch offset by offset within `from..=to`, each a run
    /// of one. Stops, answering false, when `visit` does.
    pub(crate) fn visit_runs(
        &mut self,
        from: i64,
        to: i64,
        mut visit: impl FnMut(i64, i64, &mut InFlightState) -> bool,
    ) -> bool {
        let (first, last) = (self.first, self.last);
        if let Tracking::Whole(s) = &mut self.tracking {
            return visit(first, last, s);
        }
        self.offsets_mut(from, to).all(|(offset, s)| visit(offset, offset, s))
    }

    /// The state of `offset`, whichever way the batch is tracked.
    pub(crate) fn state_at(&self, offset: i64) -> Option<&InFlightState> {
        if offset < self.first || offset > self.last {
            return None;
        }
        match &self.tracking {
            Tracking::Whole(s) => Some(s),
            Tracking::PerOffset(v) => v.get(usize::try_from(offset - self.first).ok()?),
        }
    }

    /// Kafka's `maybeInitializeOffsetStateUpdate()`: track offset by offset, each
    /// keeping the batch's lock deadline.
    pub(crate) fn split(&mut self) {
        if let Tracking::Whole(s) = &self.tracking {
            let n = usize::try_from(self.len()).unwrap_or(0);
            let states = vec![s.split_copy(); n];
            self.tracking = Tracking::PerOffset(states);
        }
    }

    /// Kafka's `maybeInitializeOffsetStateUpdate(target, delay)` for a record-limit
    /// acquire: offsets up to `target` stay acquired with a fresh lock, the rest are
    /// available again at one delivery less.
    pub(crate) fn split_acquired_up_to(&mut self, target: i64, deadline: i64) {
        if let Tracking::Whole(s) = &self.tracking {
            let states = (self.first..=self.last)
                .map(|offset| {
                    if offset <= target {
                        InFlightState::new(s.state, s.delivery_count, s.member().clone(), Some(deadline))
                    } else {
                        InFlightState::new(
                            RecordState::Available,
                            s.delivery_count - 1,
                            MemberId::empty(),
                            None,
                        )
                    }
                })
                .collect();
            self.tracking = Tracking::PerOffset(states);
        }
    }
}
