//! `TimerQueue`: the deadlines a core asked for, in firing order.

use std::collections::BTreeMap;

use group_types::hash::ClientMap;

use crate::core::types::{TimerKey, TimerOp};

/// The armed deadlines, one per key, ordered by deadline and then by the order in
/// which they were (re)armed, as Kafka's coordinator timer orders them. The runtime
/// and simulations drive a core with it.
#[derive(Debug, Default, Clone)]
pub struct TimerQueue {
    by_deadline: BTreeMap<(i64, u64), TimerKey>,
    by_key: ClientMap<TimerKey, (i64, u64)>,
    next_seq: u64,
}

impl TimerQueue {
    /// An empty queue.
    pub fn new() -> TimerQueue {
        TimerQueue::default()
    }

    /// Applies a core's timer operations, in order.
    pub fn apply(&mut self, ops: impl IntoIterator<Item = TimerOp>) {
        for op in ops {
            match op {
                TimerOp::Arm { key, deadline_ms } => self.arm(key, deadline_ms),
                TimerOp::Cancel { key } => self.cancel(&key),
            }
        }
    }

    /// Arms `key` at `deadline_ms`, replacing its previous deadline.
    pub fn arm(&mut self, key: TimerKey, deadline_ms: i64) {
        let slot = (deadline_ms, self.next_seq);
        self.next_seq += 1;
        if let Some(old) = self.by_key.insert(key.clone(), slot) {
            self.by_deadline.remove(&old);
        }
        self.by_deadline.insert(slot, key);
    }

    /// Disarms `key`.
    pub fn cancel(&mut self, key: &TimerKey) {
        if let Some(old) = self.by_key.remove(key) {
            self.by_deadline.remove(&old);
        }
    }

    /// The earliest deadline.
    pub fn next_deadline(&self) -> Option<i64> {
        self.by_deadline.keys().next().map(|(d, _)| *d)
    }

    /// Removes and returns the first timer due at or before `now_ms`.
    pub fn pop_due(&mut self, now_ms: i64) -> Option<(i64, TimerKey)> {
        let (&(deadline, seq), _) = self.by_deadline.iter().next()?;
        if deadline > now_ms {
            return None;
        }
        let key = self.by_deadline.remove(&(deadline, seq))?;
        self.by_key.remove(&key);
        Some((deadline, key))
    }

    /// The deadline armed for `key`.
    pub fn deadline(&self, key: &TimerKey) -> Option<i64> {
        self.by_key.get(key).map(|(d, _)| *d)
    }

    /// Number of armed timers.
    pub fn len(&self) -> usize {
        self.by_key.len()
    }

    /// True when nothing is armed.
    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }
}
