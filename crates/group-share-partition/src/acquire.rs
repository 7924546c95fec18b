//! Acquire (Kafka's `SharePartition.acquire`): fetched batch boundaries in, acquired
//! ranges with their delivery counts out, under the in-flight limit, re-acquiring
//! released and expired records and throttling records near the delivery limit.

use group_types::MemberId;

use crate::error::ShareError;
use crate::in_flight::{CountOp, InFlightBatch, InFlightState, Tracking};
use crate::partition::{GapWindow, SharePartition};
use crate::types::{
    AcquireMode, AcquireRequest, AcquiredRecords, FetchedBatch, PartitionState, RecordState,
    ShareAcquiredRecords,
};

/// What one acquire call has fixed: who, how, when.
struct Ctx<'a> {
    member: &'a MemberId,
    record_limit: bool,
    batch_size: i64,
    batches: &'a [FetchedBatch],
    now_ms: i64,
}

impl SharePartition {
    /// Acquires fetched records for `member` at `now_ms`, locking each acquired
    /// batch or offset until `now_ms` + the record lock duration.
    ///
    /// Nothing is acquired when the partition is not active, the limit is not
    /// positive, the fetch is empty or ends before the start offset, or the
    /// partition is at its in-flight limit (unless the fetch re-reads cached
    /// records). Batches that are not in order are refused.
    ///
    /// Under [`IsolationLevel::ReadCommitted`](crate::IsolationLevel::ReadCommitted),
    /// the acquired records of the fetch's aborted transactions are archived (Kafka
    /// does not write this change) and left out of the answer, whose count is that of
    /// the ranges left (Kafka's `maybeFilterAbortedTransactionalAcquiredRecords`).
    /// Kafka's rules (`fetchAbortedTransactionRecordBatches`): going through the
    /// fetched batches with a producer id, a producer is aborted from the first offset
    /// of its aborted transaction until its abort marker; its transactional batches
    /// meanwhile (data, and control batches other than the abort marker) are archived,
    /// the abort marker itself is delivered. Like Kafka, every cached record of such a
    /// batch that is acquired, by this member or another, is archived.
    pub fn acquire(
        &mut self,
        member: &MemberId,
        request: AcquireRequest<'_>,
        now_ms: i64,
    ) -> Result<ShareAcquiredRecords, ShareError> {
        let batches = request.batches;
        let ordered = batches.iter().all(|b| b.base_offset <= b.last_offset)
            && batches.windows(2).all(|w| w[0].last_offset < w[1].base_offset);
        if !ordered {
            return Err(ShareError::BadFetchedBatches);
        }
        if self.partition_state != PartitionState::Active || request.max_fetch_records <= 0 {
            return Ok(ShareAcquiredRecords::default());
        }
        let (Some(first_batch), Some(last_batch)) = (batches.first(), batches.last()) else {
            return Ok(ShareAcquiredRecords::default());
        };
        if last_batch.last_offset < self.start_offset {
            return Ok(ShareAcquiredRecords::default());
        }
        let (last_to_acquire, mut max_records) = self.last_offset_and_max_records(
            request.fetch_offset,
            i64::from(request.max_fetch_records),
            last_batch.last_offset,
        );
        if max_records <= 0 {
            return Ok(ShareAcquiredRecords::default());
        }
        let ctx = Ctx {
            member,
            record_limit: request.mode == AcquireMode::RecordLimit,
            batch_size: i64::from(request.batch_size.max(1)),
            batches,
            now_ms,
        };
        let fetch_base = first_batch.base_offset;
        let mut base = fetch_base;
        self.maybe_archive_stale_batches(request.fetch_offset, base);

        match self.cache.range(..=base).next_back() {
            Some((&key, batch)) if batch.last >= base => base = key,
            // No cached batch holds the base offset: records before the start offset
            // are not acquired. Kafka adjusts only when nothing is cached before the
            // base, and so acquires records the log start offset has passed when an
            // older batch is still cached (its lock not yet expired).
            _ => {
                if base < self.start_offset {
                    base = self.start_offset;
                }
            }
        }
        let low = fetch_base.min(base);
        let keys = self.keys_in(low, last_to_acquire);
        if keys.is_empty() {
            let (records, count) = self.acquire_new(&ctx, base, last_to_acquire, max_records);
            let acquired = ShareAcquiredRecords { records, count: count as i32 };
            return Ok(self.maybe_filter_aborted(&request, acquired));
        }

        let mut result = Vec::new();
        let mut acquired: i64 = 0;
        let mut gap_start = base;
        for key in keys {
            if acquired >= max_records {
                break;
            }
            let (batch_first, batch_last, whole) = match self.cache.get(&key) {
                Some(b) => (b.first, b.last, b.whole().is_some()),
                None => continue,
            };
            if self.gap_window_active() {
                if gap_start < key {
                    let (records, count) = self.acquire_new(&ctx, gap_start, key - 1, max_records - acquired);
                    result.extend(records);
                    acquired += count;
                }
                gap_start = batch_last + 1;
                if acquired >= max_records {
                    break;
                }
            }
            let full_match = batch_first >= fetch_base && batch_last <= last_to_acquire;
            let remaining = max_records - acquired;
            let record_limit_subset = ctx.record_limit && batch_last - batch_first + 1 > remaining;
            let throttle = self.should_throttle(key, fetch_base, last_to_acquire);
            if throttle && acquired > 0 {
                max_records = 0;
                break;
            }
            if !full_match || !whole || record_limit_subset || throttle {
                let Some(batch) = self.cache.get_mut(&key) else { continue };
                if let Some(s) = batch.whole() {
                    if s.state != RecordState::Available || s.in_transition() {
                        continue;
                    }
                    batch.split();
                }
                let n = self.acquire_subset(&ctx, remaining, fetch_base, last_to_acquire, key, &mut result);
                acquired += n;
                if throttle && n > 0 {
                    max_records = 0;
                    break;
                }
                continue;
            }
            let max_delivery = self.config.max_delivery_count;
            let deadline = self.lock_deadline(now_ms);
            let Some(s) = self.cache.get_mut(&key).and_then(InFlightBatch::whole_mut) else { continue };
            if s.state != RecordState::Available || s.in_transition() {
                continue;
            }
            if !s.try_update(RecordState::Acquired, CountOp::Increase, max_delivery, member)
                || s.state != RecordState::Acquired
            {
                continue;
            }
            s.lock_deadline = Some(deadline);
            s.lock_expired = false;
            result.push(AcquiredRecords::new(batch_first, batch_last, count16(s.delivery_count)));
            acquired += batch_last - batch_first + 1;
        }

        // Fetched offsets past the cache are new records.
        let last_cached = self.cache.range(low..=last_to_acquire).next_back().map(|(_, b)| b.last);
        if let Some(last_cached) = last_cached
            && acquired < max_records
            && last_cached < last_to_acquire
        {
            let (records, count) =
                self.acquire_new(&ctx, last_cached + 1, last_to_acquire, max_records - acquired);
            result.extend(records);
            acquired += count;
        }
        let Some(last) = result.last() else {
            return Ok(ShareAcquiredRecords { records: result, count: acquired as i32 });
        };
        let next = last.last_offset + 1;
        self.maybe_update_gap_window_start(next);
        let acquired = ShareAcquiredRecords { records: result, count: acquired as i32 };
        Ok(self.maybe_filter_aborted(&request, acquired))
    }

    /// Kafka's `lastOffsetAndMaxRecordsToAcquire`: the fetch's limit cut to the room
    /// under the in-flight limit; at the limit, a fetch inside the cache may still
    /// re-acquire up to the end offset.
    fn last_offset_and_max_records(&self, fetch_offset: i64, max_fetch: i64, last_offset: i64) -> (i64, i64) {
        let in_flight = self.in_flight_record_count();
        let mut max = max_fetch.min(i64::from(self.config.max_in_flight_records) - in_flight);
        let mut last = last_offset;
        if max <= 0 && fetch_offset <= self.end_offset {
            max = max_fetch.min(self.end_offset - fetch_offset + 1);
            last = last_offset.min(self.end_offset);
        }
        (last, max)
    }

    /// Kafka's `maybeArchiveStaleBatches`: cached available batches between the fetch
    /// offset and the first fetched batch were compacted away; archive them so the
    /// start offset can move past.
    fn maybe_archive_stale_batches(&mut self, fetch_offset: i64, base: i64) {
        if self.cache.is_empty() || fetch_offset >= base {
            return;
        }
        let mut floor = fetch_offset;
        if let Some((&k, b)) = self.cache.range(..=fetch_offset).next_back()
            && b.last >= fetch_offset
        {
            floor = k;
        }
        let keys = self.keys_in(floor, base - 1);
        if keys.is_empty() {
            return;
        }
        if self.archive_records(fetch_offset, base, &keys, RecordState::Available) {
            self.find_next_fetch_offset = true;
        }
    }

    /// Kafka's `shouldThrottleRecordsDelivery`: whether the available records of
    /// the batch in the request reached the throttle limit.
    fn should_throttle(&self, key: i64, from: i64, to: i64) -> bool {
        let Some(batch) = self.cache.get(&key) else { return false };
        let limit = self.throttle_limit;
        match &batch.tracking {
            Tracking::Whole(s) => {
                s.state == RecordState::Available && !s.in_transition() && s.delivery_count >= limit
            }
            Tracking::PerOffset(v) => {
                let max = v
                    .iter()
                    .enumerate()
                    .map(|(i, s)| (batch.first + i as i64, s))
                    .filter(|(o, s)| {
                        *o >= from && *o <= to && s.state == RecordState::Available && !s.in_transition()
                    })
                    .map(|(_, s)| s.delivery_count)
                    .max()
                    .unwrap_or(0);
                max >= limit
            }
        }
    }

    /// Kafka's `acquireSubsetBatchRecords`: available offsets of a per-offset batch,
    /// isolating the records on their last delivery and halving the batch for
    /// records past the throttle limit.
    fn acquire_subset(
        &mut self,
        ctx: &Ctx<'_>,
        max_fetch: i64,
        from: i64,
        to: i64,
        key: i64,
        result: &mut Vec<AcquiredRecords>,
    ) -> i64 {
        let max_delivery = self.config.max_delivery_count;
        let throttle_limit = self.throttle_limit;
        let deadline = self.lock_deadline(ctx.now_ms);
        let Some(batch) = self.cache.get_mut(&key) else { return 0 };
        let size = batch.len();
        let mut acquired = 0;
        let mut max_while_throttled: i64 = -1;
        let mut throttled = false;
        let mut taken: Vec<AcquiredRecords> = Vec::new();
        for (offset, s) in batch.offsets_mut(from, to) {
            if s.state != RecordState::Available || s.in_transition() {
                continue;
            }
            let count = s.delivery_count;
            if max_delivery > 2 && count == max_delivery - 1 && acquired > 0 {
                break;
            }
            if count >= throttle_limit && max_while_throttled < 0 {
                let shift = u32::try_from(count - throttle_limit + 1).unwrap_or(63).min(63);
                max_while_throttled = (size >> shift).max(1);
                throttled = true;
            }
            if !s.try_update(RecordState::Acquired, CountOp::Increase, max_delivery, ctx.member)
                || s.state != RecordState::Acquired
            {
                continue;
            }
            s.lock_deadline = Some(deadline);
            s.lock_expired = false;
            taken.push(AcquiredRecords::new(offset, offset, count16(s.delivery_count)));
            acquired += 1;
            if s.delivery_count == max_delivery && max_delivery > 2 {
                break;
            }
            if ctx.record_limit && acquired == max_fetch {
                break;
            }
            if throttled && acquired == max_while_throttled {
                break;
            }
        }
        accumulate(result, &taken);
        acquired
    }

    /// Kafka's `acquireNewBatchRecords`: records past the cache, as new batches.
    fn acquire_new(
        &mut self,
        ctx: &Ctx<'_>,
        first: i64,
        last: i64,
        max_fetch: i64,
    ) -> (Vec<AcquiredRecords>, i64) {
        let mut first_acquired = first;
        if self.cache.is_empty() && self.end_offset > first_acquired {
            first_acquired = self.end_offset;
        }
        let mut last_acquired = last;
        if max_fetch < last_acquired - first_acquired + 1 {
            last_acquired = last_offset_of_batch_with(ctx.batches, first_acquired + max_fetch - 1);
            if self.gap_window_active() && last_acquired > last {
                last_acquired = last;
            }
        }
        if last_acquired < first_acquired {
            return (Vec::new(), 0);
        }
        let records = self.create_batches(ctx, max_fetch, first_acquired, last_acquired);
        if self.cache.first_key_value().map(|(k, _)| *k) == Some(first_acquired) {
            self.start_offset = first_acquired;
        }
        if last_acquired > self.end_offset {
            self.end_offset = last_acquired;
        }
        if ctx.record_limit
            && let Some(r) = records.first()
        {
            last_acquired = r.last_offset;
        }
        self.maybe_update_gap_window_start(last_acquired + 1);
        (records, last_acquired - first_acquired + 1)
    }

    /// Kafka's `createBatches`: acquired batches of about `batch_size` records cut at
    /// fetched batch boundaries, or one batch acquired up to the record limit.
    fn create_batches(
        &mut self,
        ctx: &Ctx<'_>,
        max_fetch: i64,
        first: i64,
        last: i64,
    ) -> Vec<AcquiredRecords> {
        let mut result = Vec::new();
        let mut current_first = first;
        if !ctx.record_limit && last - first + 1 > ctx.batch_size {
            for b in ctx.batches {
                if b.base_offset > last {
                    break;
                }
                if b.base_offset - current_first >= ctx.batch_size {
                    result.push(AcquiredRecords::new(current_first, b.base_offset - 1, 1));
                    current_first = b.base_offset;
                }
            }
        }
        result.push(AcquiredRecords::new(current_first, last, 1));
        let deadline = self.lock_deadline(ctx.now_ms);
        if ctx.record_limit {
            let mut r = result[0];
            if r.last_offset - r.first_offset + 1 > max_fetch {
                let state = InFlightState::new(RecordState::Acquired, 1, ctx.member.clone(), None);
                let mut batch = InFlightBatch::new(r.first_offset, r.last_offset, state);
                let target = r.first_offset + max_fetch - 1;
                batch.split_acquired_up_to(target, deadline);
                self.find_next_fetch_offset = true;
                self.cache.insert(r.first_offset, batch);
                r.last_offset = target;
                return vec![r];
            }
        }
        for r in &result {
            let state = InFlightState::new(RecordState::Acquired, 1, ctx.member.clone(), Some(deadline));
            self.cache.insert(r.first_offset, InFlightBatch::new(r.first_offset, r.last_offset, state));
        }
        result
    }

    /// Kafka's `maybeUpdatePersisterGapWindowStartOffset`.
    pub(crate) fn maybe_update_gap_window_start(&mut self, offset: i64) {
        if let Some(g) = self.gap_window {
            if g.end_offset == self.end_offset && offset <= g.end_offset {
                self.gap_window = Some(GapWindow { gap_start: offset, ..g });
            } else {
                self.gap_window = None;
            }
        }
    }
}

/// Kafka's `lastOffsetFromBatchWithRequestOffset`: the last offset of the fetched
/// batch holding `offset`, so acquired batches end on fetched boundaries.
fn last_offset_of_batch_with(batches: &[FetchedBatch], offset: i64) -> i64 {
    let holding = batches.iter().take_while(|b| offset >= b.base_offset).last();
    match holding {
        Some(b) if offset <= b.last_offset => b.last_offset,
        _ => offset,
    }
}

/// Kafka's `ShareFetchUtils.accumulateAcquiredRecords`: adjacent offsets at one
/// delivery count become one range.
fn accumulate(result: &mut Vec<AcquiredRecords>, taken: &[AcquiredRecords]) {
    let Some((head, rest)) = taken.split_first() else { return };
    let mut run = *head;
    for r in rest {
        if r.first_offset == run.last_offset + 1 && r.delivery_count == run.delivery_count {
            run.last_offset = r.last_offset;
        } else {
            result.push(run);
            run = *r;
        }
    }
    result.push(run);
}

pub(crate) fn count16(count: i32) -> i16 {
    i16::try_from(count).unwrap_or(i16::MAX)
}
