//! The storage stage: appends each coordinator partition's queued writes as one
//! batch, off every lock, and feeds the outcome back to the partition's core.

use std::sync::atomic::Ordering;
use std::sync::{MutexGuard, Weak};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use group_offsets::{AppendCompletion, CoordinatorPartition, StorageError};

use super::{Delivery, Inner, Shard, fill, lock};

/// What the stage is asked to do.
pub(crate) enum StageMessage {
    /// Append partition `.0`'s queued writes (it has none in flight).
    Append(usize),
    /// The engine completed partition `.0`'s append in flight, after `.2`.
    Completed(usize, Result<(), StorageError>, Duration),
    /// The coordinator stopped.
    Stop,
}

/// The stage's loop: runs until the coordinator stops or is dropped.
pub(crate) fn run(inner: Weak<Inner>, rx: Receiver<StageMessage>, tx: Sender<StageMessage>) {
    while let Ok(message) = rx.recv() {
        let Some(inner) = inner.upgrade() else { return };
        match message {
            StageMessage::Stop => return,
            StageMessage::Append(index) => inner.append_next(index, &tx),
            StageMessage::Completed(index, result, took) => {
                inner.append_latency.record(took);
                inner.on_completed(index, result, &tx)
            }
        }
    }
}

impl Inner {
    /// Takes partition `index`'s queued writes as one batch and appends it, with
    /// the partition lock released.
    fn append_next(&self, index: usize, tx: &Sender<StageMessage>) {
        let shard = lock(&self.shards[index]);
        self.start_append(index, shard, tx);
    }

    /// With the shard locked (the guard is consumed: the append runs unlocked).
    fn start_append(&self, index: usize, mut shard: MutexGuard<'_, Shard>, tx: &Sender<StageMessage>) {
        if shard.queued.is_empty() || self.stopped.load(Ordering::Acquire) {
            shard.appending = false;
            return;
        }
        let mut writes = std::mem::take(&mut shard.queued).into_iter();
        let mut records = Vec::new();
        shard.in_flight.clear();
        if let Some((id, first)) = writes.next() {
            shard.in_flight.push(id);
            records = first;
        }
        for (id, more) in writes {
            shard.in_flight.push(id);
            records.extend(more);
        }
        let epoch = shard.epoch;
        drop(shard);
        let tx = tx.clone();
        // One clock reading per batch, for the append latency metric: wall time
        // on purpose (the coordinator's `Clock` may be a manual one in tests), and
        // taken in the completion so that the stage's own queue is not counted.
        let started = Instant::now();
        let completion = AppendCompletion::new(move |result| {
            let _ = tx.send(StageMessage::Completed(index, result, started.elapsed()));
        });
        self.storage.append(CoordinatorPartition(index as u32), epoch, records, completion);
    }

    /// Feeds an append's outcome to the partition's core, releases what waited for
    /// it, and starts the next batch if writes queued up meanwhile.
    fn on_completed(&self, index: usize, result: Result<(), StorageError>, tx: &Sender<StageMessage>) {
        let mut guard = lock(&self.shards[index]);
        let shard: &mut Shard = &mut guard;
        let outcome = match &result {
            Ok(()) => Ok(()),
            Err(e) => {
                self.failed_appends.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(
                    target: "group_coordinator",
                    partition = index,
                    writes = shard.in_flight.len(),
                    error = %e,
                    "append failed; requests that needed it are answered with the error, the next write tries again"
                );
                Err(e.append_error_code())
            }
        };
        let now = self.clock.now_ms();
        let ids = std::mem::take(&mut shard.in_flight);
        for &id in &ids {
            shard.core.complete_write_into(now, id, outcome, &mut shard.scratch);
        }
        // A failure voids every later write of the partition: drop those still queued.
        let before = shard.queued.len();
        let core = &shard.core;
        shard.queued.retain(|(id, _)| core.is_write_outstanding(*id));
        let voided = before - shard.queued.len();
        shard.appending = false;
        // Answers, events and follow-up writes first: `wait_for_writes` must not see
        // these writes done before what they released is delivered.
        let mut deliver = Delivery::new();
        let kick = self.run_for(shard, None, &mut deliver);
        if kick {
            // The next batch goes out before anyone is woken: they would only
            // queue behind it.
            self.start_append(index, guard, tx);
        } else {
            drop(guard);
        }
        fill(deliver);
        self.writes.sub(ids.len() + voided);
    }
}
