//! Acknowledge and release (Kafka's `SharePartitionTest.testAcknowledge*`,
//! `testRelease*`, `testRenew*`, `testMaybeUpdateCachedState*`).

use rstest::rstest;

use crate::script::run;

#[rstest]
#[case::single_record_batch("
    active
    acquire 0 => 0/1
    acquire 1 => 1/1
    ack 1/1 => ok
    expect next=2 dcc=1
    batches 0,1
    rec 1=acked/1/-
")]
#[case::multiple_record_batch("
    active
    acquire 5-14 => 5-14/1
    ack 5-14/1 => ok
    expect next=15 dcc=0
    batches none
")]
#[case::multiple_record_batch_with_gap_offsets("
    active
    acquire 5-6 => 5-6/1 count=2
    expect next=7
    acquire 10-18 => 10-18/1 count=9
    expect next=19
    ack 5-6/2 10-18/[2,2,2,2,2,0,0,0,1] => ok
    expect next=5 dcc=4
    batches 5-6,10-18:o
    rec 5-6=avail 10-14=avail/1/- 15-17=arch/1/- 18=acked/1/-
")]
#[case::multiple_subset_record_batch_with_gap_offsets("
    active
    acquire 5-6 => 5-6/1 count=2
    acquire 10-20 => 10-20/1 count=11
    expect next=21
    ack 6-18/[1,1,1,1,1,1,0,0,1,0,1,0,1] => ok
    expect next=21 dcc=10
    batches 5-6:o,10-20:o
    rec 5=acq/1/member-1 6=acked/1/- 10-11=acked/1/- 12-13=arch/1/- 14=acked 15=arch 16=acked 17=arch 18=acked
    rec 19-20=acq/1/member-1
")]
#[case::out_of_range_cached_data("
    active
    ack 0-15/3 => err=121
    acquire 5-9 => 5-9/1
    ack 20-25/3 => err=42
    expect dcc=0
")]
fn acknowledge(#[case] script: &str) {
    run(script);
}
