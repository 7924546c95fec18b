//! Read-committed acquires (Kafka's `SharePartitionTest.testAcquireWithReadCommittedIsolationLevel`,
//! `testContainsAbortMarker`, `testFetchAbortedTransactionRecordBatches*` and
//! `testTerminalRecordsUpdatedWhenAbortedTransaction*`; `testFilterRecordBatchesFromAcquiredRecords`
//! tests a private function and is a unit test in `src/aborted.rs`).
//!
//! Kafka's `newTransactionalRecords(buffer, type, n, producer, base)` is a batch
//! `base..base+n-1` of `producer`'s transactional records then its `type` marker at
//! `base+n`: `base-(base+n-1):tP,(base+n):aP` (or `:cP`) in the script.

use group_share_partition::{ControlRecordType, FetchedBatch, NO_PRODUCER_ID};
use rstest::rstest;

use crate::script::run;

#[test]
fn acquire_with_read_committed_isolation_level() {
    // Kafka mocks `fetchAbortedTransactionRecordBatches` to answer 10-14, 58-67 and
    // 70-74; here producer 1000's transaction from offset 0 is aborted and those are
    // its batches.
    run("
        active
        acquire committed aborted=1000@0 batch=10 max=100 fetch=0 10-14:t1000,15-19,20-34,50-57,58-67:t1000,70-74:t1000 => 15-19/1,20-49/1,50-57/1,68-69/1 count=45
        expect next=75 start=10 end=74 dcc=20
        batches 10-19:o,20-49,50-69:o,70-74
        rec 10-14=arch/1/-/nolock 15-19=acq/1/member-1/lock
        rec 20-49=acq/1/member-1/lock 70-74=arch/1/-/nolock
        rec 50-57=acq/1/member-1/lock 58-67=arch/1/-/nolock 68-69=acq/1/member-1/lock
        writes 0
    ");
}

#[test]
fn contains_abort_marker() {
    // Not a control batch.
    assert!(!FetchedBatch::new(0, 0).contains_abort_marker());
    assert!(!FetchedBatch::transactional(0, 0, 1).contains_abort_marker());
    // A control batch without records.
    assert!(!FetchedBatch::control(0, 0, 1, ControlRecordType::Other).contains_abort_marker());
    // A control batch whose record's key names ABORT (version 5, type 0, a version-5 field).
    let mut key = Vec::new();
    key.extend_from_slice(&5i16.to_be_bytes());
    key.extend_from_slice(&0i16.to_be_bytes());
    key.extend_from_slice(&23432i32.to_be_bytes());
    let abort = ControlRecordType::parse(&key);
    assert_eq!(abort, ControlRecordType::Abort);
    assert!(FetchedBatch::control(0, 0, 1, abort).contains_abort_marker());
    // ... and COMMIT.
    key[2..4].copy_from_slice(&1i16.to_be_bytes());
    let commit = ControlRecordType::parse(&key);
    assert_eq!(commit, ControlRecordType::Commit);
    assert!(!FetchedBatch::control(0, 0, 1, commit).contains_abort_marker());
}

#[test]
fn control_record_type_parse_malformed_keys() {
    // Kafka throws for these; they are never an abort marker here.
    assert_eq!(ControlRecordType::parse(&[0, 0, 0]), ControlRecordType::Other);
    assert_eq!(ControlRecordType::parse(&[0xff, 0xff, 0, 0]), ControlRecordType::Other);
    assert_eq!(ControlRecordType::parse(&[0, 0, 0, 2]), ControlRecordType::Other);
    assert_eq!(ControlRecordType::parse(&[0, 0, 0, 0]), ControlRecordType::Abort);
    let plain = FetchedBatch::new(3, 7);
    assert_eq!(plain.producer_id, NO_PRODUCER_ID);
    assert!(!plain.has_producer_id() && !plain.transactional && plain.control.is_none());
}

/// `testFetchAbortedTransactionRecordBatchesForOnlyAbortedTransactions` and
/// `...ForAbortedAndCommittedTransactions`: Kafka's expected batches to archive are
/// the archived offsets; the rest of the fetch is acquired.
#[rstest]
#[case::only_aborted_single_batch(
    "
    acquire committed aborted=1@0 0-9:t1,10:a1 => 10/1 count=1
    batches 0-10:o
    rec 0-9=arch/1/-/nolock 10=acq/1/member-1/lock
    expect dcc=10
"
)]
#[case::only_aborted_three_batches(
    "
    acquire committed aborted=1@0,1@2,1@4 0:t1,1:a1,2:t1,3:a1,4:t1,5:a1 => 1/1,3/1,5/1 count=3
    batches 0-5:o
    rec 0=arch/1 1=acq/1 2=arch/1 3=acq/1 4=arch/1 5=acq/1
"
)]
#[case::only_aborted_other_producer(
    "
    acquire committed aborted=1@0 0-9:t2,10:a2 => 0-10/1 count=11
    batches 0-10
    rec 0-10=acq/1/member-1/lock
    expect dcc=0
"
)]
#[case::aborted_and_committed_without_producer_2(
    "
    acquire committed aborted=1@0,1@6,1@9,1@15 0-1:t1,2:a1,3-4:t2,5:c2,6-7:t2,8:a2,9-10:t1,11:a1,12-13:t1,14:c1,15-16:t1,17:a1 => 2-8/1,11-14/1,17/1 count=12
    batches 0-17:o
    rec 0-1=arch 2-8=acq 9-10=arch 11-14=acq 15-16=arch 17=acq
"
)]
#[case::aborted_and_committed_with_producer_2(
    "
    acquire committed aborted=1@0,2@6,1@9,1@15 0-1:t1,2:a1,3-4:t2,5:c2,6-7:t2,8:a2,9-10:t1,11:a1,12-13:t1,14:c1,15-16:t1,17:a1 => 2-5/1,8/1,11-14/1,17/1 count=10
    rec 0-1=arch 2-5=acq 6-7=arch 8=acq 9-10=arch 11-14=acq 15-16=arch 17=acq
    expect dcc=8
"
)]
// Read uncommitted (the default) reads neither the aborted transactions nor the flags.
#[case::read_uncommitted_acquires_aborted(
    "
    acquire aborted=1@0,2@6,1@9,1@15 0-1:t1,2:a1,3-4:t2,5:c2,6-7:t2,8:a2,9-10:t1,11:a1,12-13:t1,14:c1,15-16:t1,17:a1 => 0-17/1 count=18
    batches 0-17
"
)]
// Without aborted transactions nothing is archived.
#[case::read_committed_without_aborted_transactions(
    "
    acquire committed 0-1:t1,2:a1,3-4 => 0-4/1 count=5
    batches 0-4
"
)]
// A batch with a producer id that is not transactional is never archived.
#[case::non_transactional_producer_batch_kept(
    "
    acquire committed aborted=1@0 0-1:p1,2-3:t1,4:a1 => 0-1/1,4/1 count=3
    rec 0-1=acq 2-3=arch 4=acq
"
)]
// An aborted transaction that starts after a batch does not abort it.
#[case::aborted_transaction_starting_later(
    "
    acquire committed aborted=1@4 0-1:t1,2:c1,3:p2,4-5:t1,6:a1 => 0-3/1,6/1 count=5
    rec 0-3=acq 4-5=arch 6=acq
"
)]
// Kafka archives any transactional batch of a producer in an aborted transaction but
// its abort marker: other control batches too (a commit marker, here another type).
#[case::other_control_batch_of_aborted_producer_archived(
    "
    acquire committed aborted=1@0 0:t1,1:x1,2:c1,3:t1,4:a1,5:c1 => 4-5/1 count=2
    rec 0-3=arch 4-5=acq
"
)]
fn fetch_aborted_transaction_record_batches(#[case] steps: &str) {
    run(&format!("active\n{steps}"));
}

#[test]
fn terminal_records_updated_when_aborted_transaction_batches_are_archived() {
    // Batch size 1: every fetched batch is its own cached batch, so the aborted one is
    // archived whole.
    run("
        active
        acquire committed aborted=2@10 batch=1 fetch=0 0-8:t1,9:c1,10-18:t2,19:a2,20-28:t3,29:c3 => 0-8/1,9/1,19/1,20-28/1,29/1 count=21
        batches 0-8,9,10-18,19,20-28,29
        rec 0-8=acq 9=acq 10-18=arch/1/-/nolock 19=acq 20-28=acq 29=acq
        expect dcc=9
    ");
}

#[test]
fn terminal_records_updated_when_aborted_transaction_offsets_are_archived() {
    run("
        active
        acquire committed aborted=2@3 fetch=0 0-1:t1,2:c1,3-4:t2,5:a2,6-7:t3,8:c3 => 0-2/1,5-8/1 count=7
        batches 0-8:o
        rec 0-2=acq 3-4=arch/1/-/nolock 5-8=acq
        expect dcc=2
    ");
}

/// Re-acquiring released records goes through Kafka's cached path, which filters too;
/// like Kafka, an aborted batch's records another member holds are archived as well.
#[rstest]
#[case::reacquire_released_records(
    "
    acquire 0-1:t1,2:a1,3-4 => 0-4/1 count=5
    release => ok
    acquire committed aborted=1@0 0-1:t1,2:a1,3-4 => 2-4/2 count=3
    rec 0-1=arch/2/-/nolock 2-4=acq/2/member-1/lock
    expect dcc=2
    writes 1
"
)]
#[case::archives_records_another_member_holds(
    "
    acquire member=m2 max=2 0-1:t1 => 0-1/1 count=2
    acquire committed aborted=1@0 fetch=0 0-1:t1,2:a1,3-4 => 2-4/1 count=3
    rec 0-1=arch/1/-/nolock 2-4=acq/1/member-1
    ack member=m2 0-1/1 => err=121
"
)]
#[case::nothing_reacquired_nothing_filtered(
    "
    acquire 0-1:t1,2:a1 => 0-2/1 count=3
    acquire committed aborted=1@0 fetch=0 0-1:t1,2:a1 => none count=0
    rec 0-2=acq/1/member-1/lock
"
)]
#[case::record_limit_mode(
    "
    acquire committed limit max=3 aborted=1@0 0-1:t1,2:a1,3-9 => 2/1 count=1
    batches 0-2:o
    rec 0-1=arch/1/-/nolock 2=acq/1/member-1/lock
    expect next=3
"
)]
// The archived records are terminal: an accept of the rest moves the start offset past
// them, a lock timeout releases only the rest.
#[case::accept_moves_start_offset_past_archived(
    "
    acquire committed aborted=1@0 0-1:t1,2:a1,3-4 => 2-4/1 count=3
    expect start=0 dcc=2 next=5
    ack 2-4/1 => ok
    expect start=5 dcc=0 next=5
"
)]
#[case::lock_timeout_releases_the_rest(
    "
    acquire committed aborted=1@0 0-1:t1,2:a1,3-4 => 2-4/1 count=3
    expect deadline=30000
    advance 30000
    rec 0-1=arch/1/-/nolock 2-4=avail/1/-/nolock
    expect next=2 deadline=none
    writes 3 last=4/0/1   # one write per offset lock, as Kafka
"
)]
fn read_committed_cached_paths(#[case] steps: &str) {
    run(&format!("active\n{steps}"));
}

/// An aborted batch that starts before the start offset, with nothing cached before it:
/// Kafka's `fetchSubMap` throws IllegalStateException out of `acquire` (the records
/// stay acquired, undelivered, until their lock runs out); here the cached part is
/// archived and the rest delivered.
#[test]
fn aborted_batch_before_the_start_offset() {
    run("
        init start=5
        acquire committed aborted=1@0 0-9:t1,10:a1 => 10/1 count=1
        batches 5-10:o
        rec 5-9=arch/1/-/nolock 10=acq/1/member-1/lock
        expect start=5 dcc=5
    ");
}
