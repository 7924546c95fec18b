//! Acknowledge and release (Kafka's `SharePartitionTest.testAcknowledge*`,
//! `testRelease*`, `testRenew*`, `testMaybeUpdateCachedState*`).

use rstest::rstest;

use crate::script::run;

#[rstest]
#[case::single_record_batch(
    "
    active
    acquire 0 => 0/1
    acquire 1 => 1/1
    ack 1/1 => ok
    expect next=2 dcc=1
    batches 0,1
    rec 1=acked/1/-
"
)]
#[case::multiple_record_batch(
    "
    active
    acquire 5-14 => 5-14/1
    ack 5-14/1 => ok
    expect next=15 dcc=0
    batches none
"
)]
#[case::multiple_record_batch_with_gap_offsets(
    "
    active
    acquire 5-6 => 5-6/1 count=2
    expect next=7
    acquire 10-18 => 10-18/1 count=9
    expect next=19
    ack 5-6/2 10-18/[2,2,2,2,2,0,0,0,1] => ok
    expect next=5 dcc=4
    batches 5-6,10-18:o
    rec 5-6=avail 10-14=avail/1/- 15-17=arch/1/- 18=acked/1/-
"
)]
#[case::multiple_subset_record_batch_with_gap_offsets(
    "
    active
    acquire 5-6 => 5-6/1 count=2
    acquire 10-20 => 10-20/1 count=11
    expect next=21
    ack 6-18/[1,1,1,1,1,1,0,0,1,0,1,0,1] => ok
    expect next=21 dcc=10
    batches 5-6:o,10-20:o
    rec 5=acq/1/member-1 6=acked/1/- 10-11=acked/1/- 12-13=arch/1/- 14=acked 15=arch 16=acked 17=arch 18=acked
    rec 19-20=acq/1/member-1
"
)]
#[case::out_of_range_cached_data(
    "
    active
    ack 0-15/3 => err=121
    acquire 5-9 => 5-9/1
    ack 20-25/3 => err=42
    expect dcc=0
"
)]
fn acknowledge(#[case] script: &str) {
    run(script);
}

#[rstest]
#[case::out_of_range_cached_data_first_batch(
    "
    active
    acquire 0-4 => 0-4/1
    acquire 20-24 => 20-24/1
    ack 0-10/1 20-24/1 => err=42
    acquire 5-10 => 5-10/1
    expect dcc=0
    ack 0-10/1 20-24/1 => ok
    expect dcc=0
"
)]
#[case::another_member(
    "
    active
    acquire 5-9 => 5-9/1
    ack member=member-2 5-9/3 => err=121
"
)]
#[case::when_offset_not_acquired(
    "
    active
    acquire 5-9 => 5-9/1
    ack 5-9/2 => ok
    expect dcc=0
    ack 5-9/1 => err=121
    acquire 5-9 => 5-9/2
    expect dcc=0
    ack 6-8/3 => ok
    expect dcc=3
    ack 6-8/3 => err=121
    expect dcc=3
"
)]
#[case::rollback_with_full_batch_error(
    "
    active
    acquire 5-9
    acquire 10-14
    acquire 15-19
    ack 5-9/2 10-14/1 15-19/1 15-19/1 => err=121
    batches 5-9,10-14,15-19
    rec 5-19=acq/1/member-1
    expect dcc=0
"
)]
#[case::rollback_with_subset_error(
    "
    active
    acquire 5-9
    acquire 10-14
    acquire 15-19
    ack 5-9/2 10-14/1 15-19/1 16-19/1 => err=121
    batches 5-9,10-14,15-19
    rec 5-19=acq/1/member-1
    expect dcc=0
"
)]
#[case::acquire_released_record(
    "
    active
    acquire 10-14 => 10-14/1
    expect next=15
    ack 12-13/2 => ok
    expect next=12 dcc=0
    batches 10-14:o
    rec 10-11=acq/1/member-1 12-13=avail/1/- 14=acq/1/member-1
    acquire 10-14 => 12-13/2 count=2
    expect next=15 dcc=0
"
)]
#[case::acquire_released_record_multiple_batches(
    "
    active
    acquire 10-14 => 10-14/1
    acquire 15-19 => 15-19/1
    acquire 23-27 => 23-27/1
    acquire 28-32 => 28-32/1
    expect next=33
    ack 12-30/2 => ok
    expect next=12
    batches 10-14:o,15-19,23-27,28-32:o
    rec 10-11=acq/1/member-1 12-14=avail/1/- 15-19=avail 23-27=avail 28-30=avail/1/- 31-32=acq/1/member-1
    acquire 10-14 => 12-14/2 count=3
    expect next=15
    acquire 23-27 => 23-27/2 count=5
    expect next=15
    acquire 17-18 => 17-18/2 count=2
    expect next=15
    acquire 28 => 28/2 count=1
    expect next=15
    acquire 15-19 => 15-16/2,19/2 count=3
    expect next=29
"
)]
fn acknowledge_and_reacquire(#[case] script: &str) {
    run(script);
}

/// The acknowledgement of 6-18 with gaps most release cases start from: 5 stays
/// acquired, 19-20 too.
const ACK_6_18_WITH_GAPS: &str = "
    acquire 5-6 => 5-6/1
    acquire 10-20 => 10-20/1
    ack 6-18/[1,1,1,1,1,1,0,0,1,0,1,0,1] => ok
    expect dcc=10
";

#[rstest]
#[case::release_single_record_batch(
    "
    acquire 0 => 0/1
    release => ok
    expect next=0 dcc=0
    rec 0=avail/1/-
"
)]
#[case::release_multiple_record_batch(
    "
    acquire 5-14 => 5-14/1
    release => ok
    expect next=5 dcc=0
    rec 5-14=avail/1/-
"
)]
#[case::release_multiple_acknowledged_record_batch(
    "
    acquire 0-4
    acquire 5-6
    acquire 10-18
    ack 5-18/1 => ok
    expect dcc=11
    release => ok
    expect next=0 dcc=11
    batches 0-4,5-6,10-18
    rec 0-4=avail/1/- 5-6=acked 10-18=acked
"
)]
#[case::release_acknowledged_multiple_subset_record_batch(&format!("{ACK_6_18_WITH_GAPS}
    release => ok
    expect next=5 dcc=10
    rec 5=avail/1/- 6=acked 10-11=acked 12-13=arch 14=acked 15=arch 16=acked 17=arch 18=acked 19-20=avail/1/-
"))]
#[case::release_acquired_records_with_another_member(
    "
    acquire member=member-2 5 => 5/1
    acquire 10-20 => 10-20/1
    ack 10-18/[1,1,0,0,1,0,1,0,1] => ok
    expect dcc=9
    release => ok
    expect next=19 dcc=9
    rec 5=acq/1/member-2 10-11=acked 12-13=arch 14=acked 15=arch 16=acked 17=arch 18=acked 19-20=avail/1/-
    release member=member-2 => ok
    expect next=5 dcc=9
    rec 5=avail/1/-
"
)]
#[case::release_acquired_records_with_another_member_and_subset_acknowledged(
    "
    acquire member=member-2 5-6 => 5-6/1
    acquire 10-20 => 10-20/1
    ack 10-18/[1,1,0,0,1,0,1,0,1] => ok
    expect dcc=9
    release => ok
    expect next=19 dcc=9
    rec 5-6=acq/1/member-2
    ack member=member-2 5/1 => ok
    expect dcc=9
    release member=member-2 => ok
    expect next=6 dcc=9
    rec 5=acked/1/- 6=avail/1/- 19-20=avail/1/-
"
)]
#[case::release_acquired_records_for_empty_cached_data(
    "
    release => ok
    expect next=0
    batches none
"
)]
#[case::release_acquired_records_after_different_acknowledges(
    "
    acquire 5-9 => 5-9/1
    ack 5-6/2 => ok
    ack 8-9/1 => ok
    expect dcc=2
    release => ok
    expect next=5 dcc=2
    rec 5-7=avail/1/- 8-9=acked/1/-
"
)]
#[case::max_delivery_count_not_exceeded_for_records_subset_after_release_acquired_records(
    "
    config delivery=2
    active
    acquire 0-9 => 0-9/1
    acquire 10-14 => 10-14/1
    ack 10-14/2 => ok
    expect dcc=0
    acquire 10-14 => 10-14/2
    release => ok
    expect next=0 dcc=5
    batches 0-9,10-14
    rec 0-9=avail/1 10-14=arch/2
"
)]
#[case::max_delivery_count_not_exceeded_for_records_subset_after_release_acquired_records_subset(
    "
    config delivery=2
    active
    acquire 10-14
    acquire 15-19
    acquire 20-24
    ack 13-16/2 17-19/3 20-24/2 => ok
    expect dcc=3
    acquire 10-14 => 13-14/2 count=2
    acquire 15-19 => 15-16/2 count=2
    acquire 20-24 => 20-24/2 count=5
    release => ok
    expect next=10 dcc=12
    batches 10-14:o,15-19:o,20-24
    rec 10-12=avail/1/- 13-14=arch/2/- 15-16=arch/2/- 17-19=arch/1/- 20-24=arch/2
"
)]
#[case::max_delivery_count_limit_exceeded_for_records_subset_cache_cleared(
    "
    config delivery=2
    active
    acquire 10-14
    acquire 15-19
    acquire 20-24
    ack 10-12/1 13-16/2 17-19/3 20-24/2 => ok
    expect dcc=3
    acquire 10-14 => count=2
    acquire 15-19 => count=2
    acquire 20-24 => count=5
    ack 13-16/2 20-24/2 => ok
    expect next=25 dcc=0
    batches none
"
)]
#[case::release_acquired_records_subset_with_another_member(
    "
    acquire 5-11 => 5-11/1
    ack 5-7/1 => ok
    expect dcc=0
    release member=member-2 => ok
    rec 5-7=acked/1/- 8-11=acq/1/member-1
    expect dcc=0
"
)]
fn release(#[case] steps: &str) {
    let steps = if steps.contains("active") { steps.to_owned() } else { format!("active\n{steps}") };
    run(&steps);
}

#[rstest]
#[case::acknowledge_subset_with_another_member(
    "
    acquire 5-11 => 5-11/1
    ack 5-7/1 => ok
    ack member=member-2 9-11/1 => err=121
"
)]
#[case::acknowledge_with_another_member_rollback_batch_error(
    "
    acquire 5-9
    acquire member=member-2 10-14
    acquire 15-19
    ack 5-9/2 10-14/1 15-19/1 => err=121
    rec 5-9=acq/1/member-1 10-14=acq/1/member-2 15-19=acq/1/member-1
"
)]
#[case::acknowledge_with_another_member_rollback_subset_error(
    "
    acquire 5-9
    acquire 10-14
    acquire member=member-2 15-19
    ack 5-9/2 10-14/1 16-18/1 => err=121
    batches 5-9,10-14,15-19
    rec 5-14=acq/1/member-1 15-19=acq/1/member-2
"
)]
#[case::max_delivery_count_limit_exceeded_for_record_batch(
    "
    config delivery=2
    active
    acquire 5-14 => 5-14/1
    ack 5-14/2 => ok
    acquire 5-14 => 5-14/2
    ack 5-14/2 => ok
    expect next=15 start=15 end=15
    batches none
"
)]
#[case::max_delivery_count_limit_exceeded_for_records_subset(
    "
    config delivery=2
    active
    acquire 10-14
    acquire 15-19
    ack 10-12/1 13-16/2 17-19/1 => ok
    acquire 10-14 => 13-14/2 count=2
    acquire 15-19 => 15-16/2 count=2
    ack 13-16/2 => ok
    expect next=20
    batches none
"
)]
#[case::max_delivery_count_limit_exceeded_for_records_subset_and_cached_state_not_cleared(
    "
    config delivery=2
    active
    acquire 0-4
    ack 0-1/2 => ok
    acquire 0-1 => 0-1/2 count=2
    ack 0-4/2 => ok
    expect next=2
    batches 0-4:o
    rec 0-1=arch/2/- 2-4=avail/1/-
"
)]
#[case::next_fetch_offset_post_acquire_and_acknowledge(
    "
    acquire member=memberId-1 fetch=0 0-9
    expect find=false next=10 find=false
    acquire member=memberId-2 fetch=10 10-19
    expect next=20
    ack member=memberId-1 5-9/2 => ok
    expect find=true next=5 find=true
    acquire member=memberId-1 fetch=0 0-9 => 5-9/2
    expect next=20 find=false
"
)]
#[case::next_fetch_offset_with_multiple_consumers(
    "
    config inflight=100
    active
    acquire fetch=0 0-2
    expect next=3
    ack 0-2/2 => ok
    expect next=0
    acquire member=member-2 fetch=3 3-4 => 3-4/1
    expect next=0
    acquire fetch=0 0-2 => 0-2/2
    expect next=5
    ack member=member-2 3-4/2 => ok
    expect next=3 dcc=0
"
)]
#[case::number_of_write_calls_on_updates(
    "
    acquire 2-6
    ack 2-6/1 => ok
    writes 1
    release => ok
    writes 1
"
)]
#[case::reacquire_subset_with_another_member(
    "
    acquire 5-9
    acquire 10-21
    ack 5-11/2 12-13/0 14-15/2 17-20/2 => ok
    expect dcc=2
    acquire member=member-2 fetch=5 5-9 => 5-9/2
    expect next=10
    acquire member=member-2 fetch=10 10-16 => 10-11/2,14-15/2
    expect next=17
    rec 5-9=acq/2/member-2 10-11=acq/2/member-2 12-13=arch/1/- 14-15=acq/2/member-2 16=acq/1/member-1
    rec 17-20=avail/1/- 21=acq/1/member-1
"
)]
#[case::acquire_with_write_share_group_state_delay(
    "
    acquire 0-4
    acquire 5-9
    persister hold
    ack 2-3/2 5-9/2 => ok
    batches 0-4:o,5-9
    rec 0-1=acq 2-3=avail 4=acq 5-9=avail
    acquire fetch=0 0-14 => 10-14/1 count=5
    rec 0-1=acq 2-3=avail 4=acq 5-9=avail 10-14=acq
    complete ok
    acquire fetch=0 0-14 => 2-3/2,5-9/2 count=7
    rec 0-14=acq
"
)]
#[case::cache_update_when_batch_has_ongoing_transition(
    "
    acquire fetch=21 21-30 => 21-30/1
    persister hold
    ack 21-30/1 => ok
    expect start=21
    batches 21-30
    complete ok
    expect start=31
    batches none
"
)]
#[case::cache_update_when_offset_state_has_ongoing_transition(
    "
    acquire fetch=21 21-30 => 21-30/1
    persister hold
    ack 21-23/1 => ok
    expect start=21
    batches 21-30:o
    complete ok
    expect start=24
    batches 21-30:o
"
)]
#[case::acquire_and_acknowledge_with_records_ahead_of_record_batch_start_offset(
    "
    acquire 5-16 => 5-16/1 count=12
    ack 5-9/0 10-11/1 12-14/3 15-16/2 => ok
    expect next=15 dcc=0
    batches 5-16:o
    rec 5-9=arch/1/- 10-11=acked/1/- 12-14=arch/1/- 15-16=avail/1/-
"
)]
fn acknowledge_members_and_delivery_limit(#[case] steps: &str) {
    let steps = if steps.contains("active") { steps.to_owned() } else { format!("active\n{steps}") };
    run(&steps);
}

/// Renewals (KIP-1222, Kafka's `testRenew*`, `testLsoMovementWith*Renewal`): a new
/// lock from now, no state change, nothing written.
#[rstest]
#[case::renew_acknowledge_with_complete_batch_ack(
    "
    acquire 0 => 0/1
    advance 50
    ack 0/4 => ok
    expect deadline=150
    rec 0=acq/1/member-1
    writes 0
    advance 60
    rec 0=acq/1/member-1
    advance 41
    rec 0=avail/1/-
    expect deadline=none
    writes 1
"
)]
#[case::renew_acknowledge_on_expired_batch(
    "
    acquire 0 => 0/1
    advance 101
    expect deadline=none
    ack 0/4 => err=121
    rec 0=avail
    writes 1
"
)]
#[case::renew_acknowledge_with_per_offset_ack(
    "
    acquire 0-1 => 0-1/1
    ack 0-1/[4,1] => ok
    batches 0-1:o
    rec 0=acq/1/member-1 1=acked/1/-
    expect deadline=100
    writes 1
    advance 101
    rec 0=avail/1/-
    expect deadline=none
    writes 2
"
)]
#[case::lso_movement_with_batch_renewal(
    "
    acquire 0-9 => 0-9/1
    ack 0-9/4 => ok
    lso 5
    expect next=10 start=5 end=9 deadline=100
    batches 0-9
    rec 0-9=acq/1/member-1
    writes 0
"
)]
#[case::lso_movement_with_per_offset_renewal(
    "
    acquire 0-4 => 0-4/1
    ack 0-4/[4,1,4,1,4] => ok
    lso 3
    expect next=5 start=3 end=4
    batches 0-4:o
    rec 0=acq 1=acked 2=acq 3=acked 4=acq
    advance 101
    rec 0=arch 1=acked 2=arch 3=acked 4=avail
    expect deadline=none
    writes 4
"
)]
#[case::renew_acknowledge_with_per_offset_and_batch_mix(
    "
    acquire 0 => 0/1
    acquire 1-2 => 1-2/1
    ack 0/4 1-2/[4,1] => ok
    batches 0,1-2:o
    rec 0=acq/1/member-1 1=acq/1/member-1 2=acked/1/-
    writes 1
"
)]
fn renew(#[case] steps: &str) {
    run(&format!("config lock=100 delivery=2\n active\n{steps}"));
}

/// testAckTypeToRecordStateMapping, testFetchAckTypeMapForBatch,
/// testInvalidAcknowledgeType*: 0 archives a gap, 1 accepts, 2 releases, 3 rejects;
/// anything else is an invalid request and changes nothing.
#[rstest]
#[case::gap(0, "rec 1-4=arch/1/-\n ack 0/1 => ok\n batches none\n expect start=5")]
#[case::accept(1, "rec 1-4=acked/1/-\n ack 0/1 => ok\n batches none\n expect start=5")]
#[case::release(2, "rec 1-4=avail/1/-\n expect start=0 next=1")]
#[case::reject(3, "rec 1-4=arch/1/-\n ack 0/1 => ok\n batches none\n expect start=5")]
fn acknowledge_type_moves_to(#[case] ack: u8, #[case] then: &str) {
    run(&format!("active\n acquire 0-4\n ack 1-4/{ack} => ok\n {then}"));
}

#[rstest]
#[case::invalid_type_in_batch_acknowledgement("ack 0-4/5 => err=42")]
#[case::negative_type("ack 0-4/255 => err=42")]
#[case::invalid_type_in_subset_acknowledgement("ack 0-4/[1,1,7,1,1] => err=42")]
#[case::types_not_matching_the_range("ack 0-4/[1,1] => err=42")]
fn invalid_acknowledge_type(#[case] ack: &str) {
    run(&format!("active\n acquire 0-4\n {ack}\n rec 0-4=acq/1/member-1\n expect dcc=0"));
}

/// testAcquisitionLockOnReleasingMultipleRecordBatch and
/// testAcquisitionLockOnReleasingAcknowledgedMultipleSubsetRecordBatchWithGapOffsets: a
/// release drops the locks it releases.
#[rstest]
#[case::acquisition_lock_on_releasing_multiple_record_batch(
    "
    acquire 5-14
    release => ok
    expect next=5 deadline=none dcc=0
    rec 5-14=avail/1/-
"
)]
#[case::acquisition_lock_on_releasing_acknowledged_multiple_subset_record_batch_with_gap_offsets(&format!("{ACK_6_18_WITH_GAPS}
    release => ok
    expect next=5 deadline=none dcc=10
    rec 5=avail/1/- 6=acked 19-20=avail/1/-
"))]
fn release_drops_locks(#[case] steps: &str) {
    run(&format!("active\n{steps}"));
}
