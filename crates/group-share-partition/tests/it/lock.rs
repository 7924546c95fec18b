//! Acquisition locks (Kafka's `SharePartitionTest.testAcquisitionLock*`): Kafka's
//! tests lock for 100 ms and advance the timer by 120 ms.

use rstest::rstest;

use crate::script::run;

#[rstest]
#[case::acquiring_single_record("
    acquire 0 => 0/1
    expect deadline=100 dcc=0
    advance 120
    expect next=0 deadline=none dcc=0
    rec 0=avail/1/-
")]
#[case::acquiring_multiple_records("
    acquire 10-14 => 10-14/1
    advance 120
    expect next=10 deadline=none dcc=0
    rec 10-14=avail/1/-
")]
#[case::acquiring_multiple_records_with_overlap_and_new_batch("
    acquire 0-4 => 0-4/1
    acquire 0-9 => 5-9/1
    advance 120
    expect next=0 deadline=none dcc=0
    batches 0-4,5-9
    rec 0-9=avail/1/-
")]
#[case::acquiring_same_batch_again("
    acquire 10-14 => 10-14/1
    advance 120
    expect next=10 deadline=none
    acquire 10-14 => 10-14/2
    expect deadline=220 dcc=0
")]
#[case::acknowledging_single_record_batch("
    acquire 0 => 0/1
    ack 0/2 => ok
    expect deadline=none dcc=0 next=0
    rec 0=avail/1/-
    advance 120
    expect next=0
    rec 0=avail/1/-
")]
#[case::acknowledging_multiple_record_batch("
    acquire 5-14 => 5-14/1
    ack 5-14/2 => ok
    expect next=5 deadline=none dcc=0
    rec 5-14=avail/1/-
    advance 120
    rec 5-14=avail/1/-
")]
#[case::acknowledging_multiple_record_batch_with_gap_offsets("
    acquire 1-2 => 1-2/1
    acquire 5-6 => 5-6/1
    acquire 10-18 => 10-18/1
    ack 5-18/1 => ok
    expect deadline=100 dcc=11
    advance 120
    expect next=1 deadline=none dcc=11
    rec 1-2=avail/1/- 5-6=acked 10-18=acked
")]
#[case::acquiring_subset_batch_again("
    acquire 10-17 => 10-17/1
    advance 120
    expect next=10 deadline=none
    batches 10-17
    acquire 12-14 => 12-14/2
    batches 10-17:o
    rec 10-11=avail/1 12-14=acq/2 15-17=avail/1
    expect deadline=220
    advance 120
    expect next=10 deadline=none
    rec 10-11=avail/1/- 12-14=avail/2/- 15-17=avail/1/-
")]
fn acquisition_lock(#[case] steps: &str) {
    run(&format!("config lock=100\n active\n {steps}"));
}
