//! Group commit: concurrent writers share flushes instead of paying one each.
//!
//! A writer applies its write to sled, then calls [`GroupCommit::wait_durable`].
//! Flushes are numbered; a write is durable once a flush that *started after
//! it* has succeeded. If no flush is running, the writer runs one itself (it
//! becomes the leader) and every writer that arrived meanwhile waits for it;
//! writers that arrive while a flush runs wait for the next one, which one of
//! them leads. So one fsync acknowledges every write that landed during the
//! previous fsync, and throughput grows with the number of committers.
//!
//! Waiters sleep on one of two condition variables by the parity of the flush
//! they need, so a finished flush wakes only the writers it covers, plus one
//! writer waiting for the next flush to lead it: on a small machine with many
//! committers, needless wake-ups cost more than the flushes.

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use group_offsets::StorageError;

/// Shares flushes between concurrent writers.
#[derive(Debug, Default)]
pub(crate) struct GroupCommit {
    state: Mutex<FlushState>,
    /// `flushed[n % 2]` wakes the writers waiting for flush `n`.
    flushed: [Condvar; 2],
}

#[derive(Debug, Default)]
struct FlushState {
    /// The number of the last flush started.
    started: u64,
    /// The number of the last flush finished, successfully or not.
    completed: u64,
    /// The number of the last flush that succeeded.
    succeeded: u64,
    /// True while a leader is flushing.
    in_progress: bool,
    /// Why the last failed flush failed.
    last_error: Option<StorageError>,
    /// How many flushes ran (for tests and diagnostics).
    flushes: u64,
    /// How many writers wait for a flush of each parity.
    waiting: [usize; 2],
}

impl GroupCommit {
    /// Returns once a flush that started after this call began has made every
    /// earlier write durable, running that flush itself when no one else is.
    pub(crate) fn wait_durable(
        &self,
        flush: impl Fn() -> Result<(), StorageError>,
    ) -> Result<(), StorageError> {
        let mut state = self.lock();
        // A flush already running may have started before our write: only the
        // next one is sure to cover it.
        let needed = state.started + 1;
        loop {
            if state.completed >= needed {
                return if state.succeeded >= needed {
                    Ok(())
                } else {
                    Err(state.last_error.clone().unwrap_or_else(|| StorageError::io("flush failed")))
                };
            }
            if state.in_progress {
                let parity = (needed % 2) as usize;
                state.waiting[parity] += 1;
                state = self.flushed[parity].wait(state).unwrap_or_else(PoisonError::into_inner);
                state.waiting[parity] -= 1;
                continue;
            }
            state.in_progress = true;
            state.started += 1;
            let epoch = state.started;
            drop(state);

            let result = flush();

            state = self.lock();
            state.in_progress = false;
            state.completed = epoch;
            state.flushes += 1;
            match result {
                Ok(()) => state.succeeded = epoch,
                Err(e) => state.last_error = Some(e),
            }
            self.flushed[(epoch % 2) as usize].notify_all();
            let next = ((epoch + 1) % 2) as usize;
            if state.waiting[next] > 0 {
                // Someone wrote during this flush: wake one of them to lead the next.
                self.flushed[next].notify_one();
            }
        }
    }

    /// How many flushes have run.
    pub(crate) fn flushes(&self) -> u64 {
        self.lock().flushes
    }

    /// How many writers are waiting for a flush someone else runs.
    #[cfg(test)]
    fn waiting(&self) -> usize {
        self.lock().waiting.iter().sum()
    }

    fn lock(&self) -> MutexGuard<'_, FlushState> {
        // The lock is never held across a call that can panic, but a poisoned
        // state is still consistent: every field is updated before unlocking.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Arc, Barrier};

    use super::*;

    #[test]
    fn a_lone_writer_flushes_once_per_write() {
        let commit = GroupCommit::default();
        let calls = AtomicU64::new(0);
        for _ in 0..3 {
            commit
                .wait_durable(|| {
                    calls.fetch_add(1, Ordering::SeqCst);
                    Ok(())
                })
                .unwrap();
        }
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        assert_eq!(commit.flushes(), 3);
    }

    #[test]
    fn a_failed_flush_fails_its_waiters_and_the_next_one_recovers() {
        let commit = GroupCommit::default();
        let err = commit.wait_durable(|| Err(StorageError::io("disk on fire"))).unwrap_err();
        assert_eq!(err, StorageError::io("disk on fire"));
        commit.wait_durable(|| Ok(())).unwrap();
    }

    #[test]
    fn writers_arriving_during_a_flush_share_the_next_one() {
        let commit = Arc::new(GroupCommit::default());
        let (started_tx, started_rx) = std::sync::mpsc::channel();
        let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
        let leader = {
            let commit = commit.clone();
            std::thread::spawn(move || {
                commit.wait_durable(|| {
                    started_tx.send(()).unwrap();
                    release_rx.recv().unwrap();
                    Ok(())
                })
            })
        };
        started_rx.recv().unwrap();

        let second_flushes = Arc::new(AtomicU64::new(0));
        let followers: Vec<_> = (0..3)
            .map(|_| {
                let (commit, second_flushes) = (commit.clone(), second_flushes.clone());
                std::thread::spawn(move || {
                    commit.wait_durable(|| {
                        second_flushes.fetch_add(1, Ordering::SeqCst);
                        Ok(())
                    })
                })
            })
            .collect();
        // All three wrote while the first flush ran, so it cannot cover them.
        while commit.waiting() < 3 {
            std::thread::yield_now();
        }
        assert_eq!(commit.flushes(), 0);
        release_tx.send(()).unwrap();

        leader.join().unwrap().unwrap();
        for follower in followers {
            follower.join().unwrap().unwrap();
        }
        assert_eq!(second_flushes.load(Ordering::SeqCst), 1, "one flush serves all three followers");
        assert_eq!(commit.flushes(), 2);
    }

    #[test]
    fn every_write_is_covered_by_a_flush_that_started_after_it() {
        // Each writer bumps `written`; each flush records how many writes had
        // happened when it started. A writer must only return after a flush
        // whose snapshot includes its own write.
        let commit = Arc::new(GroupCommit::default());
        let written = Arc::new(AtomicU64::new(0));
        let durable = Arc::new(AtomicU64::new(0));
        let threads = 8;
        let per_thread = 50;
        let barrier = Arc::new(Barrier::new(threads));
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let (commit, written, durable, barrier) =
                    (commit.clone(), written.clone(), durable.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    for _ in 0..per_thread {
                        let mine = written.fetch_add(1, Ordering::SeqCst) + 1;
                        commit
                            .wait_durable(|| {
                                let snapshot = written.load(Ordering::SeqCst);
                                std::thread::yield_now();
                                durable.fetch_max(snapshot, Ordering::SeqCst);
                                Ok(())
                            })
                            .unwrap();
                        assert!(durable.load(Ordering::SeqCst) >= mine, "write {mine} acknowledged early");
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        let writes = (threads * per_thread) as u64;
        assert_eq!(durable.load(Ordering::SeqCst), writes);
        assert!(commit.flushes() <= writes);
    }
}
