//! Read-committed share fetches (Kafka's `SharePartition.maybeFilterAbortedTransactionalAcquiredRecords`):
//! the acquired records of aborted transactions are archived in the cache and taken
//! out of what the fetch answers.

use std::collections::HashSet;

use crate::partition::SharePartition;
use crate::types::{
    AbortedTransaction, AcquireRequest, AcquiredRecords, FetchedBatch, IsolationLevel, RecordState,
    ShareAcquiredRecords,
};

impl SharePartition {
    /// Kafka's `maybeFilterAbortedTransactionalAcquiredRecords`: under read committed
    /// with aborted transactions in the fetch, archives the acquired records of the
    /// aborted batches (no write: Kafka does not persist this) and answers the rest,
    /// counted again.
    pub(crate) fn maybe_filter_aborted(
        &mut self,
        request: &AcquireRequest<'_>,
        acquired: ShareAcquiredRecords,
    ) -> ShareAcquiredRecords {
        if request.isolation != IsolationLevel::ReadCommitted || request.aborted_transactions.is_empty() {
            return acquired;
        }
        let to_archive = aborted_transaction_batches(request.batches, request.aborted_transactions);
        for b in &to_archive {
            // Kafka's `fetchSubMap`: from the cached batch at or before the base
            // offset. When there is none (an aborted batch starting before the start
            // offset of a cache that starts at it), Kafka throws IllegalStateException
            // out of `acquire`, its records staying acquired until their locks run
            // out; here the cached part of the batch is archived like the rest.
            let floor = self.floor_key(b.base_offset).unwrap_or(b.base_offset);
            let keys = self.keys_in(floor, b.last_offset);
            self.archive_records(b.base_offset, b.last_offset + 1, &keys, RecordState::Acquired);
        }
        let records = filter_batches_from_acquired(acquired.records, &to_archive);
        let count: i64 = records.iter().map(|r| r.last_offset - r.first_offset + 1).sum();
        ShareAcquiredRecords { records, count: i32::try_from(count).unwrap_or(i32::MAX) }
    }
}

/// Kafka's `fetchAbortedTransactionRecordBatches`: the transactional batches (data,
/// and control batches other than an abort marker) of producers whose transaction was
/// aborted, from the aborted transaction's first offset to the producer's abort marker.
pub(crate) fn aborted_transaction_batches(
    batches: &[FetchedBatch],
    aborted: &[AbortedTransaction],
) -> Vec<FetchedBatch> {
    let mut ordered: Vec<AbortedTransaction> = aborted.to_vec();
    ordered.sort_by_key(|t| t.first_offset);
    let mut pending = ordered.into_iter().peekable();
    let mut aborted_producers: HashSet<i64> = HashSet::new();
    let mut result = Vec::new();
    for batch in batches {
        if !batch.has_producer_id() {
            continue;
        }
        while let Some(t) = pending.next_if(|t| t.first_offset <= batch.last_offset) {
            aborted_producers.insert(t.producer_id);
        }
        if batch.contains_abort_marker() {
            aborted_producers.remove(&batch.producer_id);
        } else if batch.transactional && aborted_producers.contains(&batch.producer_id) {
            result.push(*batch);
        }
    }
    result
}

/// Kafka's `filterRecordBatchesFromAcquiredRecords`: the acquired ranges without the
/// offsets of `to_archive` (both in offset order), ranges split around them.
pub(crate) fn filter_batches_from_acquired(
    acquired: Vec<AcquiredRecords>,
    to_archive: &[FetchedBatch],
) -> Vec<AcquiredRecords> {
    let mut archive = to_archive.iter();
    let Some(first_batch) = archive.next() else { return acquired };
    let mut batch = Some(first_batch);
    let mut result = Vec::new();
    let mut records = acquired.into_iter();
    // A range, or what is left of one, still to check against the next batch.
    let mut unresolved: Option<AcquiredRecords> = None;
    while let Some(current) = unresolved.or_else(|| records.next()) {
        unresolved = Some(current);
        let Some(b) = batch else {
            result.push(current);
            unresolved = None;
            continue;
        };
        if current.last_offset < b.base_offset {
            result.push(current);
            unresolved = None;
        }
        if current.first_offset <= b.last_offset && current.last_offset >= b.base_offset {
            unresolved = None;
            if current.first_offset < b.base_offset {
                result.push(AcquiredRecords::new(
                    current.first_offset,
                    b.base_offset - 1,
                    current.delivery_count,
                ));
            }
            if current.last_offset > b.last_offset {
                unresolved = Some(AcquiredRecords::new(
                    b.last_offset + 1,
                    current.last_offset,
                    current.delivery_count,
                ));
            }
        }
        // A range past the batch stays unresolved and meets the next batch.
        if current.last_offset > b.last_offset {
            batch = archive.next();
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acq(first: i64, last: i64, count: i16) -> AcquiredRecords {
        AcquiredRecords::new(first, last, count)
    }

    /// Kafka's `memoryRecordsBuilder(base, n)` batch: `base..base+n-1`.
    fn batch(base: i64, n: i64) -> FetchedBatch {
        FetchedBatch::new(base, base + n - 1)
    }

    /// Kafka's `SharePartitionTest.testFilterRecordBatchesFromAcquiredRecords`.
    #[test]
    fn filter_record_batches_from_acquired_records() {
        let acquired1 = vec![acq(1, 5, 1), acq(10, 15, 2), acq(20, 25, 1)];
        let batches1 = [batch(2, 3), batch(12, 3)];
        assert_eq!(
            filter_batches_from_acquired(acquired1, &batches1),
            vec![acq(1, 1, 1), acq(5, 5, 1), acq(10, 11, 2), acq(15, 15, 2), acq(20, 25, 1)]
        );

        let acquired2 = vec![acq(1, 4, 3), acq(5, 8, 3), acq(9, 30, 2), acq(31, 40, 3)];
        let batches2 = [batch(5, 21), batch(31, 5)];
        assert_eq!(
            filter_batches_from_acquired(acquired2.clone(), &batches2),
            vec![acq(1, 4, 3), acq(26, 30, 2), acq(36, 40, 3)]
        );

        // No batches to archive.
        assert_eq!(filter_batches_from_acquired(acquired2.clone(), &[]), acquired2);

        let acquired3 = vec![acq(0, 19, 1)];
        let batches3 = [batch(8, 1), batch(18, 1)];
        assert_eq!(
            filter_batches_from_acquired(acquired3, &batches3),
            vec![acq(0, 7, 1), acq(9, 17, 1), acq(19, 19, 1)]
        );
    }

    /// A range wholly past a batch to archive meets the next one (Kafka keeps it
    /// unresolved).
    #[test]
    fn filter_range_past_a_batch_meets_the_next() {
        let acquired = vec![acq(0, 1, 1), acq(10, 12, 1)];
        let batches = [batch(3, 2), batch(11, 1)];
        assert_eq!(
            filter_batches_from_acquired(acquired, &batches),
            vec![acq(0, 1, 1), acq(10, 10, 1), acq(12, 12, 1)]
        );
    }

    /// Kafka's `testFetchAbortedTransactionRecordBatchesForOnlyAbortedTransactions`
    /// and `...ForAbortedAndCommittedTransactions`, on the private function.
    #[test]
    fn fetch_aborted_transaction_record_batches() {
        use crate::types::ControlRecordType::{Abort, Commit};
        let txn = |base: i64, n: i64, producer: i64, marker| {
            [
                FetchedBatch::transactional(base, base + n - 1, producer),
                FetchedBatch::control(base + n, base + n, producer, marker),
            ]
        };
        let ranges = |v: Vec<FetchedBatch>| {
            v.iter().map(|b| (b.base_offset, b.last_offset, b.producer_id)).collect::<Vec<_>>()
        };

        let one = txn(0, 10, 1, Abort);
        assert_eq!(
            ranges(aborted_transaction_batches(&one, &[AbortedTransaction::new(1, 0)])),
            vec![(0, 9, 1)]
        );

        let three: Vec<FetchedBatch> = [0, 2, 4].iter().flat_map(|b| txn(*b, 1, 1, Abort)).collect();
        let aborted: Vec<AbortedTransaction> =
            [0, 2, 4].iter().map(|f| AbortedTransaction::new(1, *f)).collect();
        assert_eq!(
            ranges(aborted_transaction_batches(&three, &aborted)),
            vec![(0, 0, 1), (2, 2, 1), (4, 4, 1)]
        );

        let other = txn(0, 10, 2, Abort);
        assert!(aborted_transaction_batches(&other, &[AbortedTransaction::new(1, 0)]).is_empty());

        let mixed: Vec<FetchedBatch> =
            [(0, 1, Abort), (3, 2, Commit), (6, 2, Abort), (9, 1, Abort), (12, 1, Commit), (15, 1, Abort)]
                .iter()
                .flat_map(|(b, p, m)| txn(*b, 2, *p, *m))
                .collect();
        let aborted = [(1, 0), (1, 6), (1, 9), (1, 15)].map(|(p, f)| AbortedTransaction::new(p, f));
        assert_eq!(
            ranges(aborted_transaction_batches(&mixed, &aborted)),
            vec![(0, 1, 1), (9, 10, 1), (15, 16, 1)]
        );
        // Unordered aborted transactions are ordered by first offset, as Kafka's queue does.
        let aborted = [(1, 15), (2, 6), (1, 9), (1, 0)].map(|(p, f)| AbortedTransaction::new(p, f));
        assert_eq!(
            ranges(aborted_transaction_batches(&mixed, &aborted)),
            vec![(0, 1, 1), (6, 7, 2), (9, 10, 1), (15, 16, 1)]
        );
    }
}
