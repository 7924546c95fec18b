//! Acquisition locks (Kafka's `AcquisitionLockTimerTask` and the partition's timeout
//! handler), without a timer: the caller asks for the next deadline and calls
//! [`SharePartition::expire_locks`] when it has passed.

use group_types::MemberId;

use crate::in_flight::{CountOp, Tracking};
use crate::partition::{SharePartition, state_batch};
use crate::persister::{PendingWrite, WriteCause};
use crate::types::RecordState;

impl SharePartition {
    /// The earliest acquisition-lock deadline still to fire, if any lock is held.
    pub fn next_lock_deadline(&self) -> Option<i64> {
        let mut next: Option<i64> = None;
        let mut consider = |d: Option<i64>, expired: bool| {
            if let Some(d) = d
                && !expired
            {
                next = Some(next.map_or(d, |n| n.min(d)));
            }
        };
        for batch in self.cache.values() {
            match &batch.tracking {
                Tracking::Whole(s) => consider(s.lock_deadline, s.lock_expired),
                Tracking::PerOffset(v) => v.iter().for_each(|s| consider(s.lock_deadline, s.lock_expired)),
            }
        }
        next
    }

    /// Fires every acquisition lock whose deadline is at or before `now_ms`, in
    /// deadline order: acquired records become available again, or archived at the
    /// delivery limit or before the start offset. Kafka applies these at once and
    /// writes them one write per lock (batch or offset); the writes come back for
    /// the caller to send, and their failure changes nothing.
    ///
    /// A lock that runs out while an acknowledgement of its records is being
    /// written only marks them: if that write fails, they are released.
    pub fn expire_locks(&mut self, now_ms: i64) -> Vec<PendingWrite> {
        let mut due: Vec<(i64, i64, i64)> = Vec::new();
        for batch in self.cache.values_mut() {
            let (first, last) = (batch.first, batch.last);
            match &mut batch.tracking {
                Tracking::Whole(s) => {
                    if s.lock_due(now_ms) {
                        if s.state == RecordState::Acquired {
                            due.push((s.lock_deadline.unwrap_or(now_ms), first, last));
                        } else {
                            s.lock_expired = true;
                        }
                    }
                }
                Tracking::PerOffset(v) => {
                    for (i, s) in v.iter_mut().enumerate() {
                        if s.lock_due(now_ms) {
                            if s.state == RecordState::Acquired {
                                let o = first + i as i64;
                                due.push((s.lock_deadline.unwrap_or(now_ms), o, o));
                            } else {
                                s.lock_expired = true;
                            }
                        }
                    }
                }
            }
        }
        due.sort_unstable();
        let mut writes = Vec::new();
        for (_, first, last) in due {
            if let Some(w) = self.release_on_timeout(first, last, now_ms) {
                writes.push(w);
            }
        }
        writes
    }

    /// Kafka's `releaseAcquisitionLockOnTimeout` for the lock over `first..=last`.
    fn release_on_timeout(&mut self, first: i64, last: i64, now_ms: i64) -> Option<PendingWrite> {
        let floor = self.floor_key(first)?;
        let keys = self.keys_in(floor, last);
        let start = self.start_offset;
        let max_delivery = self.config.max_delivery_count;
        let empty = MemberId::empty();
        let mut changed = Vec::new();
        let mut released = false;
        for key in keys {
            let Some(batch) = self.cache.get_mut(&key) else { continue };
            if let Some(s) = batch.whole()
                && s.state == RecordState::Acquired
                && batch.first < start
                && batch.last >= start
            {
                batch.split();
            }
            // A whole batch's lock is the one that fired (the task covers the batch);
            // in a split batch, each offset of the task's range.
            batch.visit_runs(first, last, |run_first, run_last, s| {
                if s.state != RecordState::Acquired || !s.lock_due(now_ms) {
                    return true;
                }
                let to = if run_last < start { RecordState::Archived } else { RecordState::Available };
                if s.try_update(to, CountOp::Keep, max_delivery, &empty) {
                    s.clear_lock();
                    released |= s.state != RecordState::Archived;
                    changed.push(state_batch(run_first, run_last, s));
                }
                true
            });
        }
        if released {
            self.find_next_fetch_offset = true;
        }
        if changed.is_empty() {
            return None;
        }
        let id = self.allocate_write();
        Some(self.issue_write(id, WriteCause::LockTimeout, changed))
    }
}
