//! `FlushFaults`: injected flush failures and pauses, so tests can drive the
//! store's failure handling and group commit without a broken disk.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use group_offsets::StorageError;

/// Failures and pauses injected into a store's flushes, shared by every clone
/// of the handle. Give one to [`SledOptions::flush_faults`](crate::SledOptions::flush_faults).
///
/// - [`fail_fsync`](Self::fail_fsync): every flush fails after sled's own
///   flush succeeded, as an `fsync` that fails would; sled stays healthy, so
///   the store recovers in place.
/// - [`fail_sled`](Self::fail_sled): every flush fails as if sled itself had
///   failed (sled stays failed after an I/O error), so the store must reopen
///   its database to recover.
/// - [`pause`](Self::pause): flushes wait until [`resume`](Self::resume), so a
///   test can watch appends return before they are durable, and pile up
///   behind one flush. Dropping the last handle of a store waits for its
///   pending appends, so resume before dropping the store.
///
/// A real disk failure (a full disk) is handled the same way; the crate's
/// tests fill a small tmpfs for that.
#[derive(Debug, Clone, Default)]
pub struct FlushFaults {
    inner: Arc<Shared>,
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    resumed: Condvar,
}

#[derive(Debug, Default)]
struct State {
    fault: Option<(Fault, StorageError)>,
    paused: bool,
    waiting: usize,
    injected: u64,
}

/// Which step of a flush an injected failure hits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fault {
    /// The `fsync` after sled's flush.
    Fsync,
    /// sled's flush itself.
    Sled,
}

impl FlushFaults {
    /// A handle that injects nothing until told to.
    pub fn new() -> FlushFaults {
        FlushFaults::default()
    }

    /// Until [`heal`](Self::heal), flushes fail with `error` after sled's own
    /// flush succeeded.
    pub fn fail_fsync(&self, error: StorageError) {
        self.lock().fault = Some((Fault::Fsync, error));
    }

    /// Until [`heal`](Self::heal), flushes fail with `error` as if sled had
    /// failed, so recovery has to reopen the database.
    pub fn fail_sled(&self, error: StorageError) {
        self.lock().fault = Some((Fault::Sled, error));
    }

    /// Stops injecting failures.
    pub fn heal(&self) {
        self.lock().fault = None;
    }

    /// Makes flushes wait until [`resume`](Self::resume).
    pub fn pause(&self) {
        self.lock().paused = true;
    }

    /// Lets waiting and future flushes run.
    pub fn resume(&self) {
        self.lock().paused = false;
        self.inner.resumed.notify_all();
    }

    /// How many flushes are waiting for [`resume`](Self::resume) right now.
    pub fn paused_flushes(&self) -> usize {
        self.lock().waiting
    }

    /// How many flushes have been failed by injection so far: a test that arms a
    /// failure waits for this to move, rather than for a failed append (which an
    /// earlier failure's stragglers may also produce).
    pub fn injected_failures(&self) -> u64 {
        self.lock().injected
    }

    /// Called at the start of every flush: waits while paused, then reports
    /// the failure to inject, if any, and at which step.
    pub(crate) fn before_flush(&self) -> Option<(Fault, StorageError)> {
        let mut state = self.lock();
        state.waiting += 1;
        while state.paused {
            state = self.inner.resumed.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
        state.waiting -= 1;
        if state.fault.is_some() {
            state.injected += 1;
        }
        state.fault.clone()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Every update leaves the state consistent, so a poisoned lock is usable.
        self.inner.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
