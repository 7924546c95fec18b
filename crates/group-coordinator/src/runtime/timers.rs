//! The runtime's deadline queue: lazy re-arming, because a heartbeat moves a deadline
//! later on every call and the core ignores a timer that fires before its deadline.

use std::collections::BTreeMap;

use crate::{TimerKey, TimerOp};
use group_types::hash::ClientMap;

/// Deadlines by key. Moving a deadline later only records the new value; the queued
/// entry is re-queued when it comes up. Moving it earlier re-queues at once.
#[derive(Debug, Default)]
pub(crate) struct LazyTimers {
    queue: BTreeMap<(i64, u64), TimerKey>,
    /// Per key: the deadline wanted, and the queue slot currently holding the key.
    armed: ClientMap<TimerKey, (i64, (i64, u64))>,
    next_seq: u64,
}

impl LazyTimers {
    pub(crate) fn apply(&mut self, ops: impl IntoIterator<Item = TimerOp>) {
        for op in ops {
            match op {
                TimerOp::Arm { key, deadline_ms } => self.arm(key, deadline_ms),
                TimerOp::Cancel { key } => {
                    if let Some((_, slot)) = self.armed.remove(&key) {
                        self.queue.remove(&slot);
                    }
                }
            }
        }
    }

    fn arm(&mut self, key: TimerKey, deadline: i64) {
        if let Some((wanted, slot)) = self.armed.get_mut(&key) {
            if slot.0 <= deadline {
                *wanted = deadline;
                return;
            }
            let old = *slot;
            self.queue.remove(&old);
        }
        let slot = (deadline, self.next_seq);
        self.next_seq += 1;
        self.queue.insert(slot, key.clone());
        self.armed.insert(key, (deadline, slot));
    }

    /// The earliest queued deadline (possibly a stale, earlier one: waking early is harmless).
    pub(crate) fn next_deadline(&self) -> Option<i64> {
        self.queue.keys().next().map(|(d, _)| *d)
    }

    /// The first timer really due at or before `now`, re-queueing entries that moved later.
    pub(crate) fn pop_due(&mut self, now: i64) -> Option<(i64, TimerKey)> {
        loop {
            let (&slot, _) = self.queue.iter().next()?;
            if slot.0 > now {
                return None;
            }
            let key = self.queue.remove(&slot)?;
            let Some(&(wanted, _)) = self.armed.get(&key) else { continue };
            if wanted > slot.0 {
                let moved = (wanted, self.next_seq);
                self.next_seq += 1;
                self.queue.insert(moved, key.clone());
                self.armed.insert(key, (wanted, moved));
                continue;
            }
            self.armed.remove(&key);
            return Some((slot.0, key));
        }
    }
}
