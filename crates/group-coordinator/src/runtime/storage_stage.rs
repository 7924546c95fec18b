//! The storage stage: appends each coordinator partition's queued writes as one
//! batch, off every lock, and feeds the outcome back to the partition's core.

use std::cell::RefCell;
use std::sync::atomic::Ordering;
use std::sync::{MutexGuard, Weak};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use group_offsets::{AppendCompletion, CoordinatorPartition, StorageError};

use super::{Delivery, Inner, Shard, fill, lock};
use crate::{RequestId, Response};
use group_offsets::{OwnerEpoch, Record};

/// A partition's queued writes taken as one append.
pub(crate) struct Batch {
    records: Vec<Record>,
    epoch: OwnerEpoch,
    incarnation: u64,
}

/// What the stage is asked to do.
pub(crate) enum StageMessage {
    /// Append partition `.0`'s queued writes (it has none in flight), if it is
    /// still in incarnation `.1`.
    Append(usize, u64),
    /// The engine completed partition `.0`'s append in flight, made in
    /// incarnation `.1`, after `.3`.
    Completed(usize, u64, Result<(), StorageError>, Duration),
    /// The coordinator stopped.
    Stop,
}

/// The most writes whose room a partition's queue and in-flight list keep
/// between batches.
const RETAINED_QUEUE: usize = 64;

/// An append made inline (see [`Inner::start_append`]) on this thread, and its
/// outcome once the engine reported it.
struct InlineAppend {
    token: u64,
    outcome: Option<Result<(), StorageError>>,
}

thread_local! {
    static INLINE: RefCell<Option<InlineAppend>> = const { RefCell::new(None) };
}

/// Keeps `result` for the inline append `token` when it is the one this thread
/// is making; otherwise hands it back, to go to the stage.
fn inline_outcome(token: Option<u64>, result: Result<(), StorageError>) -> Option<Result<(), StorageError>> {
    let Some(token) = token else { return Some(result) };
    INLINE.with(|cell| match cell.borrow_mut().as_mut() {
        Some(append) if append.token == token && append.outcome.is_none() => {
            append.outcome = Some(result);
            None
        }
        _ => Some(result),
    })
}

/// The stage's loop: runs until the coordinator stops or is dropped.
pub(crate) fn run(inner: Weak<Inner>, rx: Receiver<StageMessage>, tx: Sender<StageMessage>) {
    while let Ok(message) = rx.recv() {
        let Some(inner) = inner.upgrade() else { return };
        match message {
            StageMessage::Stop => return,
            StageMessage::Append(index, incarnation) => inner.append_next(index, incarnation, &tx),
            StageMessage::Completed(index, incarnation, result, took) => {
                inner.append_latency.record(took);
                inner.on_completed(index, incarnation, result, &tx)
            }
        }
    }
}

impl Inner {
    /// Takes partition `index`'s queued writes as one batch and appends it, with
    /// the partition lock released.
    fn append_next(&self, index: usize, incarnation: u64, tx: &Sender<StageMessage>) {
        let shard = lock(&self.shards[index]);
        // Asked before an unload: what it asked for was dropped with it, and a
        // later incarnation asks for its own appends.
        if shard.incarnation != incarnation {
            return;
        }
        self.start_append(index, shard, tx);
    }

    /// With the shard locked (the guard is consumed: the append runs unlocked);
    /// the outcome goes to the stage.
    pub(super) fn start_append(
        &self,
        index: usize,
        mut shard: MutexGuard<'_, Shard>,
        tx: &Sender<StageMessage>,
    ) {
        if let Some(batch) = self.take_batch(&mut shard) {
            drop(shard);
            self.issue_append(index, batch, tx, false);
        }
    }

    /// The partition's queued writes as one batch, now in flight; `None` (and the
    /// partition no longer appending) when there are none or the coordinator stopped.
    pub(super) fn take_batch(&self, shard: &mut Shard) -> Option<Batch> {
        if shard.queued.is_empty() || self.stopped.load(Ordering::Acquire) {
            shard.appending = false;
            return None;
        }
        // Drained, not taken: the queue keeps its capacity for the next writes.
        let Shard { queued, in_flight, .. } = shard;
        let mut writes = queued.drain(..);
        let mut records = Vec::new();
        in_flight.clear();
        if let Some((id, first)) = writes.next() {
            in_flight.push(id);
            records = first;
        }
        for (id, more) in writes {
            in_flight.push(id);
            records.extend(more);
        }
        // A burst must not pin its queue's size for the partition's lifetime.
        queued.shrink_to(RETAINED_QUEUE);
        Some(Batch { records, epoch: shard.epoch, incarnation: shard.incarnation })
    }

    /// Hands `batch` to the engine. With `inline`, an outcome the engine reports
    /// before `append` returns, on this thread, is returned (with the append's
    /// duration) for the caller to feed to the core; every other outcome goes to
    /// the stage, as without it.
    pub(super) fn issue_append(
        &self,
        index: usize,
        batch: Batch,
        tx: &Sender<StageMessage>,
        inline: bool,
    ) -> Option<(Result<(), StorageError>, Duration)> {
        let Batch { records, epoch, incarnation } = batch;
        let tx = tx.clone();
        // One clock reading per batch, for the append latency metric: wall time
        // on purpose (the coordinator's `Clock` may be a manual one in tests), and
        // taken in the completion so that the stage's own queue is not counted.
        let started = Instant::now();
        let token = inline.then(|| self.append_tokens.fetch_add(1, Ordering::Relaxed));
        let completion = AppendCompletion::new(move |result| {
            if let Some(result) = inline_outcome(token, result) {
                let _ = tx.send(StageMessage::Completed(index, incarnation, result, started.elapsed()));
            }
        });
        if let Some(token) = token {
            INLINE.with(|cell| *cell.borrow_mut() = Some(InlineAppend { token, outcome: None }));
        }
        self.storage.append(CoordinatorPartition(index as u32), epoch, records, completion);
        let outcome = token.and_then(|_| INLINE.with(|cell| cell.borrow_mut().take()?.outcome));
        outcome.map(|result| (result, started.elapsed()))
    }

    /// Feeds an append's outcome to the partition's core, releases what waited for
    /// it, and starts the next batch if writes queued up meanwhile.
    ///
    /// The completion of an append made before an unload is ignored: its requests
    /// were answered `NOT_COORDINATOR` by the unload, its writes left the write
    /// gauge then, and a later load read what the engine made of it. A fenced
    /// append (a node with a higher epoch owns the partition now) unloads the
    /// partition and tells the `on_partition_lost` listener.
    pub(super) fn on_completed(
        &self,
        index: usize,
        incarnation: u64,
        result: Result<(), StorageError>,
        tx: &Sender<StageMessage>,
    ) {
        let mut guard = lock(&self.shards[index]);
        if guard.incarnation != incarnation {
            if result.is_err() {
                self.failed_appends.fetch_add(1, Ordering::Relaxed);
            }
            tracing::debug!(
                target: "group_coordinator",
                partition = index,
                ok = result.is_ok(),
                "an append made before the partition was unloaded completed; ignored"
            );
            return;
        }
        if let Err(e @ StorageError::Fenced { .. }) = &result {
            self.failed_appends.fetch_add(1, Ordering::Relaxed);
            let epoch = guard.epoch;
            tracing::warn!(
                target: "group_coordinator",
                partition = index,
                epoch = epoch.0,
                error = %e,
                "append fenced: another node owns the partition now; unloading it"
            );
            // Kafka's `CoordinatorRuntime` fails the batch and, on a
            // `NotLeaderOrFollowerException`, the partition is resigned
            // (`GroupCoordinatorService.onResignation`): every request waiting in it,
            // those of this append included, is answered NOT_COORDINATOR.
            let (deliver, dropped) = self.unload_locked(index, &mut guard);
            drop(guard);
            // Told before the answers go out: whoever sees a NOT_COORDINATOR of
            // this loss knows the ownership manager has heard of it.
            if let Some(listener) = &self.on_lost {
                listener(CoordinatorPartition(index as u32), epoch);
            }
            fill(deliver);
            self.writes.sub(dropped);
            return;
        }
        let mut deliver = Delivery::new();
        let (next, done) = self.complete_locked(index, &mut guard, result, None, &mut deliver);
        self.release_completed(index, guard, next, deliver, done, tx);
    }

    /// After [`complete_locked`](Self::complete_locked): sends the next batch if
    /// one is due, unlocks, delivers, and takes the completed writes off the gauge.
    pub(super) fn release_completed(
        &self,
        index: usize,
        guard: MutexGuard<'_, Shard>,
        next: bool,
        deliver: Delivery,
        done: usize,
        tx: &Sender<StageMessage>,
    ) {
        if next {
            // The next batch goes out before anyone is woken: they would only
            // queue behind it. Its outcome goes to the stage even after an
            // inline append: a thread that issued one write does not go on
            // appending for everyone else.
            self.start_append(index, guard, tx);
        } else {
            drop(guard);
        }
        fill(deliver);
        self.writes.sub(done);
    }

    /// The part of [`on_completed`](Self::on_completed) made under the partition's
    /// lock, for an append that was not fenced: the core learns the outcome, later
    /// writes a failure voided are dropped, and the effects are applied (the answer
    /// to `caller` kept for it, as in [`run_for`](Self::run_for)). Returns whether
    /// the next batch must go out, and how many writes left the write gauge's count
    /// (to take off once what they released is delivered).
    pub(super) fn complete_locked(
        &self,
        index: usize,
        shard: &mut Shard,
        result: Result<(), StorageError>,
        caller: Option<(RequestId, &mut Option<Response>)>,
        deliver: &mut Delivery,
    ) -> (bool, usize) {
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
        // Taken and put back, emptied, so that the next batch reuses its capacity.
        let mut ids = std::mem::take(&mut shard.in_flight);
        for &id in &ids {
            shard.core.complete_write_into(now, id, outcome, &mut shard.scratch);
        }
        let completed = ids.len();
        ids.clear();
        ids.shrink_to(RETAINED_QUEUE);
        shard.in_flight = ids;
        // A failure voids every later write of the partition: drop those still queued.
        let before = shard.queued.len();
        let core = &shard.core;
        shard.queued.retain(|(id, _)| core.is_write_outstanding(*id));
        let voided = before - shard.queued.len();
        shard.appending = false;
        // Answers, events and follow-up writes first: `wait_for_writes` must not see
        // these writes done before what they released is delivered.
        let kick = self.run_for(shard, caller, deliver);
        (kick, completed + voided)
    }
}
