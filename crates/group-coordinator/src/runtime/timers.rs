//! The runtime's deadline queue: lazy re-arming, because a heartbeat moves a deadline
//! later on every call and the core ignores a timer that fires before its deadline.

use std::collections::BTreeMap;
use std::collections::hash_map::Entry;

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
        // One lookup of the key either way; a timer moved earlier takes its key
        // back from its old queue slot instead of cloning it again.
        let slot = (deadline, self.next_seq);
        match self.armed.entry(key) {
            Entry::Occupied(mut armed) => {
                let (wanted, queued) = armed.get_mut();
                if queued.0 <= deadline {
                    *wanted = deadline;
                    return;
                }
                let old = std::mem::replace(queued, slot);
                *wanted = deadline;
                let key = self.queue.remove(&old).unwrap_or_else(|| armed.key().clone());
                self.queue.insert(slot, key);
            }
            Entry::Vacant(unarmed) => {
                self.queue.insert(slot, unarmed.key().clone());
                unarmed.insert((deadline, slot));
            }
        }
        self.next_seq += 1;
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

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::Arc;

    use proptest::prelude::*;

    use super::*;

    #[derive(Debug, Clone)]
    enum Op {
        Arm(usize, i64),
        Cancel(usize),
        PopDue(i64),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0..6usize, 0..100i64).prop_map(|(k, d)| Op::Arm(k, d)),
            1 => (0..6usize).prop_map(Op::Cancel),
            2 => (0..100i64).prop_map(Op::PopDue),
        ]
    }

    proptest! {
        /// Whatever moves timers later or earlier, a timer fires once, at the
        /// deadline it was last armed with, earliest first, and never after a cancel.
        #[test]
        fn timers_fire_at_their_last_deadline_earliest_first(ops in proptest::collection::vec(op(), 0..200)) {
            let keys: Vec<TimerKey> = (0..6).map(|k| TimerKey::Join(Arc::from(format!("g{k}")))).collect();
            let mut timers = LazyTimers::default();
            let mut model: HashMap<usize, i64> = HashMap::new();
            for op in ops {
                match op {
                    Op::Arm(k, d) => {
                        timers.apply([TimerOp::Arm { key: keys[k].clone(), deadline_ms: d }]);
                        model.insert(k, d);
                    }
                    Op::Cancel(k) => {
                        timers.apply([TimerOp::Cancel { key: keys[k].clone() }]);
                        model.remove(&k);
                    }
                    Op::PopDue(now) => {
                        let earliest = model.values().copied().min();
                        match timers.pop_due(now) {
                            Some((d, key)) => {
                                let k = keys.iter().position(|x| *x == key).expect("a known key");
                                prop_assert_eq!(model.remove(&k), Some(d));
                                prop_assert!(d <= now && Some(d) == earliest);
                            }
                            None => prop_assert!(earliest.is_none_or(|e| e > now)),
                        }
                    }
                }
                if let Some(e) = model.values().copied().min() {
                    // Possibly an earlier, stale deadline: waking early is harmless.
                    prop_assert!(timers.next_deadline().is_some_and(|n| n <= e));
                }
            }
        }
    }
}
