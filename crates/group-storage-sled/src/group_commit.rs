//! Group commit: the store's flusher thread, which makes applied appends
//! durable and completes them, one flush for every append queued meanwhile.
//!
//! An append is applied to sled by the caller's thread and queued; `append`
//! returns at once. The flusher takes everything queued, runs one flush (sled's
//! flush, plus an `fsync` per [`Durability`](crate::Durability)), and
//! completes every append it took, in queue order: each partition's appends
//! are queued in call order, so they complete in call order. Appends that
//! arrive during a flush wait for the next one, so one flush serves every
//! append of every partition that landed while the previous flush ran, and
//! throughput grows with the number of appends in flight.
//!
//! After a failure the flusher fails every applied append that no flush
//! covered yet (keeping their undo records), and the first append that
//! arrives afterwards is deferred to it: holding every partition lock, it
//! recovers the store (see `Shared::recover`), then applies the deferred
//! appends in order and flushes them like any other.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use group_offsets::StorageError;

use crate::engine::{Item, Shared, is_failure, lock};

impl Shared {
    /// The flusher thread's body: rounds until shutdown, then a last round
    /// for whatever is still queued.
    pub(crate) fn run_flusher(self: Arc<Shared>) {
        while let Some(items) = self.next_round() {
            self.round(items);
        }
    }

    /// Asks the flusher to finish what is queued and stop.
    pub(crate) fn shut_down(&self) {
        lock(&self.queue).shutdown = true;
        self.wake.notify_all();
    }

    /// Waits for work; `None` once shut down with nothing left.
    fn next_round(&self) -> Option<Vec<Item>> {
        let mut queue = lock(&self.queue);
        loop {
            if !queue.items.is_empty() {
                return Some(std::mem::take(&mut queue.items));
            }
            if queue.shutdown {
                return None;
            }
            queue = self.wake.wait(queue).unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }

    /// One round: recover first if the store failed, then flush, then complete.
    fn round(&self, mut items: Vec<Item>) {
        if self.failed.load(Ordering::Acquire) {
            self.recovery_round(&mut items);
        }
        let needs_flush = items.iter().any(|item| matches!(item, Item::Applied { error: None, .. }));
        let flushed = if needs_flush { self.flush() } else { Ok(()) };
        if let Err(e) = &flushed {
            self.fail(e);
        }
        for item in items {
            let (completion, result) = match item {
                Item::Done { completion, result } => (completion, result),
                Item::Applied { completion, undo, error } => {
                    let result = match error {
                        Some(e) => Err(e),
                        None => flushed.clone(),
                    };
                    if result.is_err() && !undo.is_empty() {
                        lock(&self.health).undo.push(undo);
                    }
                    (completion, result)
                }
                // Only `recovery_round` sees these, and it turns each into one of the above.
                Item::Deferred { completion, .. } => {
                    (completion, Err(StorageError::io("an append was deferred past recovery")))
                }
            };
            if result.as_ref().is_err_and(is_failure) {
                self.counters.failed_appends.fetch_add(1, Ordering::Relaxed);
            }
            // A completion that panics is its caller's bug; it must not stop
            // the flusher, or every later append would wait forever.
            if catch_unwind(AssertUnwindSafe(|| completion.complete(result))).is_err() {
                tracing::error!("group-storage-sled: an append's completion panicked");
            }
        }
    }

    /// The part of a round run while the store is failed.
    fn recovery_round(&self, items: &mut Vec<Item>) {
        // With every partition lock held nothing can be applied or queued,
        // so what is queued now is every append not yet completed.
        let mut states = self.all_states();
        items.append(&mut lock(&self.queue).items);
        let failure = self.failure();
        let mut deferred = false;
        for item in items.iter_mut() {
            match item {
                // Applied before the failure was seen: no flush covered it.
                Item::Applied { error: error @ None, .. } => *error = Some(failure.clone()),
                Item::Deferred { .. } => deferred = true,
                Item::Applied { .. } | Item::Done { .. } => {}
            }
        }
        if !deferred {
            // Recovery waits for the next append after the failure.
            return;
        }
        // Their undo records must be in before recovery rolls back.
        for item in items.iter_mut() {
            if let Item::Applied { undo, .. } = item
                && !undo.is_empty()
            {
                lock(&self.health).undo.push(std::mem::take(undo));
            }
        }
        let recovered = self.recover(&mut states);
        if let Err(e) = &recovered {
            tracing::warn!(error = %e, "group-storage-sled: recovery from a storage failure failed; the next append retries");
        }
        let queued = std::mem::take(items);
        *items = queued
            .into_iter()
            .map(|item| match item {
                Item::Deferred { completion, partition, epoch, writes } => match &recovered {
                    Ok(()) => {
                        let state = &mut states[partition.0 as usize];
                        self.apply(state, partition, epoch, writes, completion)
                    }
                    Err(e) => Item::Done {
                        completion,
                        result: Err(StorageError::io(format!(
                            "the store failed ({failure}) and has not recovered yet: {e}"
                        ))),
                    },
                },
                other => other,
            })
            .collect();
    }
}
