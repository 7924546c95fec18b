//! Acquisition locks (Kafka's `SharePartitionTest.testAcquisitionLock*`): Kafka's
//! tests lock for 100 ms and advance the timer by 120 ms.

use rstest::rstest;

use crate::script::run;

#[rstest]
#[case::acquiring_single_record(
    "
    acquire 0 => 0/1
    expect deadline=100 dcc=0
    advance 120
    expect next=0 deadline=none dcc=0
    rec 0=avail/1/-
"
)]
#[case::acquiring_multiple_records(
    "
    acquire 10-14 => 10-14/1
    advance 120
    expect next=10 deadline=none dcc=0
    rec 10-14=avail/1/-
"
)]
#[case::acquiring_multiple_records_with_overlap_and_new_batch(
    "
    acquire 0-4 => 0-4/1
    acquire 0-9 => 5-9/1
    advance 120
    expect next=0 deadline=none dcc=0
    batches 0-4,5-9
    rec 0-9=avail/1/-
"
)]
#[case::acquiring_same_batch_again(
    "
    acquire 10-14 => 10-14/1
    advance 120
    expect next=10 deadline=none
    acquire 10-14 => 10-14/2
    expect deadline=220 dcc=0
"
)]
#[case::acknowledging_single_record_batch(
    "
    acquire 0 => 0/1
    ack 0/2 => ok
    expect deadline=none dcc=0 next=0
    rec 0=avail/1/-
    advance 120
    expect next=0
    rec 0=avail/1/-
"
)]
#[case::acknowledging_multiple_record_batch(
    "
    acquire 5-14 => 5-14/1
    ack 5-14/2 => ok
    expect next=5 deadline=none dcc=0
    rec 5-14=avail/1/-
    advance 120
    rec 5-14=avail/1/-
"
)]
#[case::acknowledging_multiple_record_batch_with_gap_offsets(
    "
    acquire 1-2 => 1-2/1
    acquire 5-6 => 5-6/1
    acquire 10-18 => 10-18/1
    ack 5-18/1 => ok
    expect deadline=100 dcc=11
    advance 120
    expect next=1 deadline=none dcc=11
    rec 1-2=avail/1/- 5-6=acked 10-18=acked
"
)]
#[case::acquiring_subset_batch_again(
    "
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
"
)]
fn acquisition_lock(#[case] steps: &str) {
    run(&format!("config lock=100\n active\n {steps}"));
}

#[rstest]
#[case::acknowledging_multiple_subset_record_batch_with_gap_offsets(
    "
    active
    acquire 5-6 => 5-6/1
    acquire 10-20 => 10-20/1
    ack 6-18/[1,1,1,1,1,1,0,0,1,0,1,0,1] => ok
    expect dcc=10
    advance 120
    expect next=5 dcc=10 deadline=none
    rec 5=avail/1/- 6=acked 10-11=acked 12-13=arch 14=acked 15=arch 16=acked 17=arch 18=acked 19-20=avail/1/-
"
)]
#[case::timeout_cause_max_delivery_count_exceed(
    "
    config delivery=2
    active
    acquire 0-9 => 0-9/1
    acquire 10-19 => 10-19/1
    advance 120
    expect next=0 dcc=0
    rec 10-19=avail/1/-
    acquire 10-19 => 10-19/2
    rec 10-19=acq/2
    advance 120
    expect next=0 dcc=10
    rec 10-19=arch/2/-
"
)]
#[case::timeout_cause_spso_move_forward(
    "
    config delivery=2
    active
    acquire 0-9 => 0-9/1
    advance 120
    expect next=0 dcc=0
    rec 0-9=avail/1/-
    acquire 0-4 => 0-4/2
    advance 120
    rec 0-4=arch/2/- 5-9=avail/1/-
    batches 0-9:o
    expect start=5 dcc=0
"
)]
#[case::timeout_cause_spso_move_forward_and_clear_cached_state(
    "
    config delivery=2
    active
    acquire 0-9 => 0-9/1
    advance 120
    expect next=0
    acquire 0-9 => 0-9/2
    advance 120
    batches none
    expect next=10 dcc=0
"
)]
#[case::acknowledge_after_acquisition_lock_timeout(
    "
    active
    acquire 5-9 => 5-9/1
    advance 120
    expect next=5 dcc=0
    rec 5-9=avail
    ack 5-9/1 => err=121
    ack 5-9/3 => err=121
    expect dcc=0
"
)]
#[case::after_different_acknowledges(
    "
    active
    acquire 5-9 => 5-9/1
    ack 5-6/2 => ok
    expect dcc=0
    ack 8-9/1 => ok
    expect dcc=2
    advance 120
    rec 5-7=avail/1/- 8-9=acked/1/-
    expect dcc=2
"
)]
#[case::on_batch_with_write_failure(
    "
    active
    persister fail=69
    acquire 5-14 => 5-14/1
    advance 120
    expect next=5 deadline=none
    batches 5-14
    rec 5-14=avail/1/-
"
)]
#[case::delivery_complete_count_on_lock_expiry_and_write_failure_on_batch_last_delivery(
    "
    config delivery=2
    active
    persister fail=69
    acquire 5-14 => 5-14/1
    acquire 15-24 => 15-24/1
    advance 120
    expect next=5 dcc=0
    batches 5-14,15-24
    rec 15-24=avail
    acquire 15-24 => 15-24/2
    expect dcc=0
    advance 120
    expect next=5 dcc=10
    rec 15-24=arch/2
"
)]
#[case::delivery_complete_count_on_lock_expiry_and_write_failure_on_offset_last_delivery(
    "
    config delivery=2
    active
    acquire 5-10 => 5-10/1
    ack 8-9/1 => ok
    expect dcc=2
    persister fail=69
    advance 120
    rec 5-7=avail/1/- 8-9=acked/1/- 10=avail/1/-
    expect dcc=2
    acquire 10 => 10/2
    advance 120
    rec 5-7=avail/1/- 8-9=acked/1/- 10=arch/2/-
    expect dcc=3
"
)]
#[case::on_offset_with_write_failure(
    "
    active
    acquire 5-10 => 5-10/1
    ack 8-9/1 => ok
    persister fail=69
    advance 120
    rec 5-7=avail/1/- 8-9=acked/1/- 10=avail/1/-
"
)]
fn acquisition_lock_timeout(#[case] steps: &str) {
    run(&format!("config lock=100\n {steps}"));
}

/// testScheduleAcquisitionLockTimeoutValueFromGroupConfig / ...UpdatesSuccessfully: a
/// group's `share.record.lock.duration.ms` applies to the locks taken after it changes.
#[test]
fn lock_duration_from_group_config() {
    run("
        active
        setlock 500
        acquire 0-4
        expect deadline=500
        setlock 1000
        acquire 5-9
        advance 500
        rec 0-4=avail 5-9=acq
        expect deadline=1000
    ");
}
