//! [`ServingLease`]: until when this node may answer for the partitions it owns,
//! as its ownership manager last confirmed them (an etcd lease renewal, say).
//!
//! The manager unloads every partition once its lease may have expired, but it
//! notices on its own thread: a process paused past its lease (SIGSTOP, a long
//! GC-like stall, a VM migration) that wakes up has requests queued on its
//! connections, and they would be answered from memory before the manager runs.
//! Writes are fenced by the store anyway; reads (OffsetFetch, a heartbeat, a
//! DescribeGroups) are not. With a lease set on the builder every request is
//! refused `NOT_COORDINATOR` once the lease is past, before it reaches a core.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

/// A deadline on a monotonic clock, extended as the lease is renewed; shared by
/// the ownership manager (which extends it) and the runtime (which reads it on
/// every request: one atomic load and one clock reading).
#[derive(Debug)]
pub struct ServingLease {
    base: Instant,
    /// Milliseconds after `base` (negative: before it) until which the lease is
    /// known to hold; `i64::MIN`: not at all.
    valid_until_ms: AtomicI64,
}

impl Default for ServingLease {
    fn default() -> Self {
        ServingLease::new()
    }
}

impl ServingLease {
    /// A lease not valid yet: nothing is served until [`extend`](Self::extend).
    pub fn new() -> ServingLease {
        ServingLease { base: Instant::now(), valid_until_ms: AtomicI64::new(i64::MIN) }
    }

    /// `at` in milliseconds from `base`: a renewal may have been sent before the
    /// lease was made.
    fn ms(&self, at: Instant) -> i64 {
        let millis = |d: Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
        match at.checked_duration_since(self.base) {
            Some(after) => millis(after),
            None => -millis(self.base.duration_since(at)),
        }
    }

    /// The lease holds until `asked + ttl`, where `asked` is when the renewal was
    /// sent (the store started its TTL no earlier). Never moves the deadline back.
    pub fn extend(&self, asked: Instant, ttl: Duration) {
        let until = self.ms(asked).saturating_add(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX));
        self.valid_until_ms.fetch_max(until, Ordering::AcqRel);
    }

    /// Ends the lease at once (it was lost, or given up).
    pub fn revoke(&self) {
        self.valid_until_ms.store(i64::MIN, Ordering::Release);
    }

    /// Whether the lease still holds for at least `margin`.
    pub fn holds_for(&self, margin: Duration) -> bool {
        let margin = i64::try_from(margin.as_millis()).unwrap_or(i64::MAX);
        let now = self.ms(Instant::now()).saturating_add(margin);
        now < self.valid_until_ms.load(Ordering::Acquire)
    }

    /// Whether the lease still holds.
    pub fn holds(&self) -> bool {
        self.holds_for(Duration::ZERO)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_holds_from_its_renewal_for_its_ttl_and_never_moves_back() {
        let lease = ServingLease::new();
        assert!(!lease.holds(), "not valid before the first renewal");
        let asked = Instant::now();
        lease.extend(asked, Duration::from_secs(3600));
        assert!(lease.holds());
        assert!(!lease.holds_for(Duration::from_secs(7200)));
        // A late answer to an older renewal does not shorten it.
        lease.extend(asked, Duration::from_secs(1));
        assert!(lease.holds_for(Duration::from_secs(1800)));
        lease.revoke();
        assert!(!lease.holds());
        // A renewal sent long ago has already run out.
        let stale = ServingLease::new();
        stale.extend(Instant::now() - Duration::from_secs(10), Duration::from_secs(2));
        assert!(!stale.holds());
    }
}
