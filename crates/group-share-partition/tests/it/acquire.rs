//! Acquire (Kafka's `SharePartitionTest.testAcquire*`, `testMaybeInitializeAndAcquire*`,
//! `testNextFetchOffset*`, `testCanAcquireRecords*`, and the record-limit and
//! throttling cases).

use rstest::rstest;

use crate::script::run;

/// The persisted state most `testMaybeInitializeAndAcquire*` cases start from.
const READ_15_30: &str = "init start=10 epoch=3 batches=15-18/0/2,20-22/4/2,26-30/0/1";

#[rstest]
#[case::initialize_and_acquire(
    "
    expect start=10 end=30 next=10 gap=10-30 dcc=3
    acquire max=1 fetch=10 10-49 => 10-14/1 count=5
    expect next=15 gap=15-30 dcc=3
    batches 10-14,15-18,20-22,26-30
    acquire max=10 fetch=15 10-49 => 15-18/3,19/1,23-25/1,26-30/2 count=13
    expect next=31 end=30 gap=none dcc=3
    batches 10-14,15-18,19,20-22,23-25,26-30
    rec 19=acq/1 15-18=acq/3 20-22=arch 23-25=acq/1 26-30=acq/2
    acquire max=1 fetch=31 10-49 => 31-49/1 count=19
    expect next=50 end=49 dcc=3
"
)]
#[case::initialize_and_acquire_higher_max_fetch(
    "
    acquire max=500 fetch=10 10-49 => 10-14/1,15-18/3,19/1,23-25/1,26-30/2,31-49/1 count=37
    expect next=50 end=49 gap=none dcc=3
    batches 10-14,15-18,19,20-22,23-25,26-30,31-49
"
)]
#[case::initialize_and_acquire_fetch_last_within_cached_batch(
    "
    acquire max=500 fetch=10 12-27 => 12-14/1,15-18/3,19/1,23-25/1,26-27/2 count=13
    expect next=28 end=30 gap=28-30 dcc=3
    batches 12-14,15-18,19,20-22,23-25,26-30:o
    rec 26-27=acq 28-30=avail
"
)]
#[case::initialize_and_acquire_fetch_prior_start_offset(
    "
    acquire max=500 fetch=10 6-21 => 10-14/1,15-18/3,19/1 count=10
    expect next=23 end=30 gap=20-30 dcc=3
    batches 10-14,15-18,19,20-22,26-30
    rec 26-30=avail
"
)]
#[case::initialize_and_acquire_multiple_batches(
    "
    expect start=10
    acquire max=1 fetch=10 10-49 => 10-14/1 count=5
"
)]
fn initialize_and_acquire(#[case] steps: &str) {
    run(&format!("{READ_15_30}\n{steps}"));
}

#[rstest]
#[case::multiple_batches_from_5(
    "
    init start=5 epoch=3 batches=15-18/0/2,20-22/4/2,26-30/0/1
    expect start=5 end=30 next=5 gap=5-30
    acquire max=1 fetch=5 5-6,8,10-11,13-18,19-21,22-30,31-49 => 5-6/1 count=2
    expect next=7 gap=7-30
    batches 5-6,15-18,20-22,26-30
    acquire max=3 fetch=7 8,10-11,13-18,19-21,22-30,31-49 => 8-11/1 count=4
    expect next=12 end=30 gap=12-30
    acquire max=8 fetch=12 13-18,19-21,22-30,31-49 => 13-14/1,15-18/3,19/1,23-25/1 count=10
    expect next=26 end=30 gap=26-30
    batches 5-6,8-11,13-14,15-18,19,20-22,23-25,26-30
    acquire max=10 fetch=26 22-30,31-49 => 26-30/2,31-49/1 count=24
    expect next=50 end=49 gap=none dcc=3
"
)]
fn initialize_and_acquire_batches(#[case] script: &str) {
    run(script);
}

#[rstest]
#[case::multiple_batches_last_offset_within_cached_batch(
    "
    init start=5 epoch=3 batches=15-18/0/2,20-22/4/2,26-30/0/1
    acquire max=500 fetch=5 7-8,10-11,13-18,20-27 => 7-14/1,15-18/3,19/1,23-25/1,26-27/2 count=18
    expect next=28 end=30 gap=28-30 dcc=3
    batches 7-14,15-18,19,20-22,23-25,26-30:o
    rec 26-27=acq 28-30=avail
"
)]
#[case::multiple_batches_prior_start_offset(
    "
    init start=10 epoch=3 batches=15-18/0/2,20-22/4/2,26-30/0/1
    acquire max=500 fetch=10 3-4,6,8-11,13-22 => 10-14/1,15-18/3,19/1 count=10
    expect next=23 end=30 gap=20-30 dcc=3
    batches 10-14,15-18,19,20-22,26-30
"
)]
#[case::single_record(
    "
    active
    acquire 0 => 0/1 count=1
    expect next=1 dcc=0
    batches 0
    rec 0=acq/1/member-1
"
)]
#[case::multiple_records(
    "
    active
    acquire 10-14 => 10-14/1 count=5
    expect next=15 dcc=0
    batches 10-14
    rec 10-14=acq/1/member-1
"
)]
#[case::max_fetch_records(
    "
    active
    acquire max=10 fetch=0 0-4 => 0-4/1 count=5
    expect next=5
    acquire max=10 fetch=0 0-24 => 5-24/1 count=20
    expect next=25
    batches 0-4,5-24
    rec 5-24=acq/1/member-1
"
)]
#[case::multiple_batches_and_max_fetch_records(
    "
    active
    acquire max=10 fetch=0 10-14,15-29,30-44 => 10-29/1 count=20
    expect next=30
    batches 10-29
"
)]
#[case::overlap_and_new_batch(
    "
    active
    acquire 0-4 => 0-4/1 count=5
    expect next=5
    acquire 0-9 => 5-9/1 count=5
    expect next=10
    batches 0-4,5-9
"
)]
#[case::same_batch_again(
    "
    active
    acquire 10-14 => 10-14/1 count=5
    expect next=15
    acquire 10-14 => none count=0
    expect next=15
    acquire 10-11 => none count=0
    expect next=15
    batches 10-14
"
)]
#[case::empty_fetch_records(
    "
    active
    acquire fetch=0 => none count=0
    expect next=0
"
)]
#[case::batch_size_and_single_batch(
    "
    active
    acquire batch=2 max=10 fetch=0 0-4 => 0-4/1 count=5
    expect next=5
    batches 0-4
"
)]
#[case::batch_size_and_multiple_batches(
    "
    active
    acquire batch=5 max=100 fetch=0 2-6,10-14,15-21,22-27 => 2-9/1,10-14/1,15-21/1,22-27/1 count=26
    expect next=28
    batches 2-9,10-14,15-21,22-27
    rec 2-27=acq/1/member-1
"
)]
#[case::batch_size_and_max_fetch_records(
    "
    active
    acquire batch=2 max=10 fetch=0 0-4,5-19,20-34 => 0-4/1,5-19/1 count=20
    expect next=20
    batches 0-4,5-19
"
)]
#[case::single_batch_with_batch_size_and_end_offset_larger_than_batch_first_offset(
    "
    active
    lso 8
    acquire batch=5 max=100 fetch=0 5-14 => 8-14/1 count=7
    expect next=15
    batches 8-14
"
)]
#[case::batch_size_and_end_offset_larger_than_batch_first_offset(
    "
    active
    lso 4
    acquire batch=5 max=100 fetch=0 2-9,10-16 => 4-9/1,10-16/1 count=13
    expect next=17
    batches 4-9,10-16
"
)]
#[case::batch_skip_with_batch_size_and_end_offset_larger_than_first_batch(
    "
    active
    lso 12
    acquire batch=5 max=100 fetch=0 2-9,10-16 => 12-16/1 count=5
    expect next=17
    batches 12-16
"
)]
#[case::max_in_flight_records_and_try_acquire_new_batch(
    "
    config inflight=20
    active
    acquire max=500 fetch=0 0-9 => 0-9/1 count=10
    expect next=10
    acquire max=500 fetch=0 10-14,15-24,25-29,30-31 => 10-24/1 count=15
    expect next=25
    acquire max=500 fetch=25 25-34 => none count=0
    expect next=25
"
)]
fn acquire(#[case] script: &str) {
    run(script);
}

#[rstest]
#[case::max_in_flight_records_and_release_last_offset(
    "
    config inflight=20
    active
    acquire max=500 fetch=0 10-14,15-24,25-29,30-31 => 10-29/1 count=20
    expect next=30
    ack 15-19/2 => ok
    expect next=15
    acquire max=500 fetch=15 10-14,15-24,25-29,30-31 => 15-19/2 count=5
    expect next=30
    ack 29/2 => ok
    expect next=29
    acquire max=500 fetch=29 10-14,15-24,25-29,30-31 => 29/2 count=1
    expect next=30
"
)]
#[case::max_in_flight_records_release_batch_and_acquire_subset_records(
    "
    config inflight=20
    active
    acquire 0-4 => count=5
    acquire 5-14 => count=10
    acquire 15-24 => count=10
    batches 0-4,5-14,15-24
    expect next=25
    ack 5-14/2 => ok
    expect next=5
    acquire max=500 fetch=5 5-14 => 5-14/2 count=10
    expect next=25
"
)]
#[case::max_in_flight_records_release_batch_and_acquire_subset_records_overlap(
    "
    config inflight=20
    active
    acquire 0-4 => count=5
    acquire 5-9 => count=5
    acquire 10-14 => count=5
    acquire 15-24 => count=10
    batches 0-4,5-9,10-14,15-24
    ack 5-9/2 => ok
    expect next=5
    acquire max=6 fetch=5 5-9 => 5-9/2 count=5
    expect next=25
"
)]
#[case::batch_prior_to_start_offset(
    "
    init start=5 epoch=3 batches=5-99/0/1
    expect next=5 start=5
    acquire limit batch=10 max=10 fetch=0 0-4 => none count=0
    expect next=5 start=5
    batches 5-99
    rec 5-99=avail
"
)]
#[case::moved_start_offset_and_no_overlap_with_cached_batch(
    "
    init start=5 epoch=3 batches=15-20/4/1
    expect next=5 start=5 gap=5-20
    acquire limit batch=10 max=10 fetch=5 0-9 => 5-9/1 count=5
    batches 5-9,15-20
    expect next=10 start=5 gap=10-20
"
)]
#[case::next_fetch_offset_initial_state("active\n expect next=0")]
#[case::next_fetch_offset_with_cached_state_acquired("active\n acquire 0-4 => count=5\n expect next=5")]
#[case::next_fetch_offset_with_find_and_cached_state(
    "
    active
    acquire 0-4 => count=5
    ack 0-4/2
    expect find=true next=0 find=true
"
)]
#[case::can_acquire_records_with_empty_cache("active\n expect can=true")]
#[case::can_acquire_records_limit_not_reached(
    "config inflight=6\n active\n acquire 0-4 => count=5\n expect can=true"
)]
#[case::can_acquire_records_limit_reached(
    "config inflight=1\n active\n acquire 0-4 => count=5\n expect can=false"
)]
fn acquire_in_flight_limit(#[case] script: &str) {
    run(script);
}

#[rstest]
#[case::gap_at_beginning_and_records_fetched_from_gap(
    "
    init start=11 epoch=3 batches=21-30/2/2,31-40/4/1
    expect dcc=20
    acquire 11-15 => 11-15/1 count=5
    expect start=11 end=40 epoch=3 next=16 dcc=20 gap=16-40
"
)]
#[case::gap_at_beginning_and_fetched_records_overlap_in_flight_batches(
    "
    init start=11 epoch=3 batches=21-30/2/2,31-40/4/1
    acquire 11-25 => 11-20/1 count=10
    expect start=11 end=40 next=41 dcc=20 gap=21-40
"
)]
#[case::gap_at_beginning_and_fetched_records_overlap_in_flight_available_batches(
    "
    init start=11 epoch=3 batches=21-30/0/2,31-40/4/1
    expect dcc=10
    acquire 11-25 => 11-20/1,21-25/3 count=15
    expect start=11 end=40 next=26 dcc=10 gap=26-40
"
)]
#[case::cached_state_contains_gaps_and_records_fetched_from_non_gap_offset(
    "
    init start=11 epoch=3 batches=11-20/0/2,31-40/4/1
    expect dcc=10
    acquire 11-25 => 11-20/3,21-25/1 count=15
    expect start=11 end=40 next=26 dcc=10 gap=26-40
"
)]
#[case::gap_at_beginning_and_fetched_records_overlap_multiple_in_flight_batches(
    "
    init start=11 epoch=3 batches=21-30/2/2,41-50/0/1,61-70/4/1,81-90/0/1
    expect dcc=20
    acquire 11-85 => 11-20/1,31-40/1,41-50/2,51-60/1,71-80/1,81-85/2 count=55
    expect start=11 end=90 next=86 dcc=20 gap=86-90
"
)]
#[case::gap_at_beginning_and_fetched_records_end_just_before_gap(
    "
    init start=11 epoch=3 batches=21-30/0/2,41-50/2/1,61-70/4/1
    expect dcc=20
    acquire 11-30 => 11-20/1,21-30/3 count=20
    expect start=11 end=70 next=31 dcc=20 gap=31-70
"
)]
#[case::gap_at_beginning_and_fetched_records_include_gap_offsets_at_end(
    "
    init start=11 epoch=3 batches=21-30/2/2,41-50/0/1,61-70/4/1,81-90/0/1
    acquire 11-75 => 11-20/1,31-40/1,41-50/2,51-60/1,71-75/1 count=45
    expect start=11 end=90 next=76 dcc=20 gap=76-90
"
)]
fn acquire_read_gaps(#[case] script: &str) {
    run(script);
}

#[rstest]
#[case::records_fetched_from_gap_and_max_fetch_records_exceeded(
    "
    init start=11 epoch=3 batches=11-20/2/2,31-40/4/1
    acquire max=6 fetch=0 21-23,24-26,27-28 => 21-26/1 count=6
    expect start=21 end=40 epoch=3 next=27 gap=27-40
"
)]
#[case::max_fetch_records_exceeded_after_acquiring_gaps(
    "
    init start=11 epoch=3 batches=21-30/0/2,31-40/4/1
    expect dcc=10
    acquire max=8 fetch=0 11-20,21-30 => 11-20/1 count=10
    expect start=11 end=40 next=21 gap=21-40
"
)]
#[case::max_fetch_records_exceeded_before_acquiring_gaps(
    "
    init start=11 epoch=3 batches=11-20/0/2,31-40/0/1
    expect dcc=0
    acquire max=8 fetch=0 11-20,21-40 => 11-20/3 count=10
    expect start=11 end=40 next=21 gap=21-40
"
)]
#[case::records_fetched_from_gap_and_partition_contains_natural_gaps(
    "
    init start=10 epoch=3 batches=15-20/2/2,30-40/4/1
    expect dcc=17
    acquire 10-20,30-50 => 10-14/1,21-29/1,41-50/1 count=24
    expect start=10 end=50 next=51 gap=none
"
)]
#[case::initial_gap_matches_with_actual_partition_gap(
    "
    init start=11 epoch=3 batches=21-30/2/2,41-50/4/1
    expect dcc=20
    acquire 21-35,36-60 => 31-40/1,51-60/1 count=20
    expect start=11 end=60 next=61 gap=none
"
)]
#[case::initial_gap_overlaps_with_actual_partition_gap(
    "
    init start=11 epoch=3 batches=21-30/2/2,41-50/4/1
    acquire 16-35,36-60 => 16-20/1,31-40/1,51-60/1 count=25
    expect start=16 end=60 next=61 gap=none
"
)]
#[case::gap_in_between_overlaps_with_actual_partition_gap(
    "
    init start=11 epoch=3 batches=21-30/2/2,41-50/4/1
    acquire 11-20,21-35,41-60 => 11-20/1,31-40/1,51-60/1 count=30
    expect start=11 end=60 next=61 gap=none
"
)]
#[case::records_fetched_after_gaps_are_fetched(
    "
    init start=11 epoch=3 batches=11-20/2/2,31-40/4/1
    expect dcc=10
    acquire 21-35 => 21-30/1 count=10
    expect start=21 end=40 next=41 gap=31-40
    acquire 41-55 => 41-55/1 count=15
    expect start=21 end=55 next=56 gap=none
"
)]
fn acquire_read_gaps_and_limits(#[case] script: &str) {
    run(script);
}

/// `share.acquire.mode=record_limit` (Kafka's `*InRecordLimitMode` cases): never more
/// than the limit; the rest of the fetched batch is cached available.
#[rstest]
#[case::single_batch(
    "
    acquire limit batch=2 max=5 fetch=0 0-9 => 0-4/1 count=5
    expect next=5
    batches 0-9:o
    rec 0-4=acq/1/member-1 5-9=avail/0/-
    acquire member=member-2 limit batch=2 max=5 fetch=0 0-9 => 5-9/1 count=5
    expect next=10
    batches 0-9:o
    rec 5-9=acq/1/member-2
"
)]
#[case::multiple_batches(
    "
    acquire limit max=10 fetch=0 10-14,15-29,30-44 => 10-19/1 count=10
    expect next=20
    batches 10-29:o
    rec 19=acq/1/member-1 20=avail
"
)]
#[case::insufficient_records(
    "
    acquire limit batch=2 max=20 fetch=0 10-14,15-19,20-24 => 10-24/1 count=15
    expect next=25
    batches 10-24
    rec 10-24=acq
"
)]
#[case::acquire_and_acknowledge_multiple_subset_record(
    "
    acquire limit batch=2 max=10 fetch=0 5-20 => 5-14/1 count=10
    expect next=15
    batches 5-20:o
    ack 5-9/0 10/2 11/1 12/1 => ok
    expect next=10
    batches 5-20:o
    acquire member=member-2 limit batch=2 max=10 fetch=0 5-20 => 10/2,15-20/1 count=7
    batches 5-20:o
    rec 5-9=arch/1/- 10=acq/2/member-2 11-12=acked/1/- 13-14=acq/1/member-1 15-20=acq/1/member-2
"
)]
#[case::multiple_records_with_overlap_and_new_batch(
    "
    acquire limit max=3 fetch=0 0-4 => 0-2/1 count=3
    expect next=3
    acquire limit max=3 fetch=0 0-9 => 3-4/1,5/1 count=3
    expect next=6
    batches 0-4:o,5-9:o
    rec 0-4=acq/1/member-1 5=acq/1/member-1 6-9=avail
"
)]
#[case::batch_with_moved_start_offset(
    "
    init start=5 epoch=3 batches=5-99/0/1
    expect next=5 start=5
    batches 5-99
    acquire limit batch=10 max=10 fetch=5 0-99 => 5-14/2 count=10
    expect next=15 start=5
    batches 5-99:o
    rec 5-14=acq/2 15=avail
    ack 5-14/1 => ok
    expect next=15 start=15
    batches 5-99:o
    rec 5-14=acked 15=avail
    acquire limit batch=10 max=10 fetch=15 0-99 => 15-24/2 count=10
    expect next=25 start=15
    batches 5-99:o
    rec 15-24=acq 25=avail
"
)]
#[case::acknowledge(
    "
    acquire limit batch=2 max=1 fetch=0 0-9 => 0/1 count=1
    expect next=1
    ack 0/1 => ok
    expect next=1 start=1 end=9
    batches 0-9:o
    rec 1=avail
    acquire limit batch=2 max=2 fetch=0 0-9 => 1-2/1 count=2
    ack 1/1 => ok
    expect next=3 start=2 end=9
    rec 2=acq 3=avail
"
)]
fn record_limit_mode(#[case] steps: &str) {
    let steps = if steps.contains("init") { steps.to_owned() } else { format!("active\n{steps}") };
    run(&steps);
}

#[rstest]
#[case::acquisition_lock_single_record_batch_in_record_limit_mode(
    "
    acquire 10-14 => 10-14/1
    advance 120
    expect next=10
    rec 10-14=avail/1
    acquire limit max=2 fetch=0 10-14 => 10-11/2 count=2
    expect next=12
    batches 10-14:o
    rec 10-11=acq/2/member-1 12-14=avail/1/-
"
)]
#[case::acquisition_lock_timeout_multiple_record_batch_in_record_limit_mode(
    "
    acquire limit max=2 fetch=0 0-4,5-19 => 0-1/1 count=2
    batches 0-4:o
    rec 1=acq 2=avail
    advance 120
    rec 0-1=avail/1/-
    expect next=0 deadline=none
    acquire limit max=2 fetch=0 0-4,5-19 => 0-1/2 count=2
    ack 1/2 => ok
    advance 120
    rec 0=avail/2/-
    expect next=0
"
)]
#[case::initial_gap_overlaps_with_actual_partition_gap_in_record_limit_mode(
    "
    init start=11 epoch=3 batches=21-30/2/2,41-50/4/1
    acquire limit max=20 fetch=0 16-35,36-60 => 16-20/1,31-40/1,51-55/1 count=20
    expect state=active start=16 end=60 epoch=3 next=56 gap=none
"
)]
#[case::gap_in_between_overlaps_with_actual_partition_gap_in_record_limit_mode(
    "
    init start=11 epoch=3 batches=21-30/2/2,41-50/4/1
    acquire limit max=15 fetch=0 11-20,21-35,41-60 => 11-20/1,31-35/1 count=15
    expect state=active start=11 end=50 epoch=3 next=36 gap=36-50
"
)]
#[case::releasing_acknowledged_multiple_subset_record_batch_with_gap_offsets_in_record_limit_mode(
    "
    acquire limit max=2 fetch=0 5-6 => 5-6/1 count=2
    expect next=7
    acquire limit max=5 fetch=0 10-20 => 10-14/1 count=5
    expect next=15
    batches 5-6,10-20:o
    rec 10-14=acq/1/member-1 15=avail
    ack 10-12/[1,1,0] => ok
    release => ok
    expect next=5
    batches 5-6,10-20:o
    rec 5-6=avail 10-11=acked/1/- 12=arch/1/- 13-14=avail/1/- 15-20=avail/0/-
"
)]
#[case::multiple_member_acquire_in_different_acquire_modes(
    "
    acquire max=10 fetch=5 10-14,15-29,30-44 => count=20
    ack 10-14/2 15-20/1 21-22/2 23-28/1 => ok
    acquire member=member-2 limit max=2 fetch=5 10-14,15-29,30-44 => 10-11/2 count=2
    expect next=12
    acquire member=member-3 max=10 fetch=5 10-14,15-29,30-44 => 12-14/2,21-22/2,30-44/1 count=20
    expect next=45
"
)]
fn record_limit_mode_and_locks(#[case] steps: &str) {
    let steps =
        if steps.contains("init") { steps.to_owned() } else { format!("config lock=100\n active\n{steps}") };
    run(&steps);
}

/// Records near the delivery limit go out in smaller batches, the last attempt alone
/// (Kafka's throttling cases).
#[rstest]
#[case::throttle_records_when_pending_deliveries_exist(
    "
    init start=5 epoch=3 batches=15-19/0/2,20-22/4/3,26-30/0/3
    expect start=5 end=30 next=5
    acquire max=500 fetch=5 7-19,20-27 => 7-14/1,15-19/3,23-25/1 count=16
    expect next=26 end=30 dcc=3
    batches 7-14,15-19,20-22,23-25,26-30
    rec 26-30=avail
    acquire max=500 fetch=26 7-19,20-27 => 26-27/4 count=2
"
)]
#[case::halves_batch_size_on_each_failure_until_single_record_on_last_attempt(
    "
    config delivery=7 lock=120
    init start=5 epoch=3 batches=15-34/0/4
    expect start=5 end=34 next=5
    acquire max=500 fetch=5 15-34 => 15-24/5 count=10
    advance 121
    acquire max=500 fetch=5 15-34 => 15-19/6 count=5
    advance 121
    acquire max=500 fetch=5 15-34 => 15/7 count=1
    acquire max=500 fetch=5 15-34 => 16/7 count=1
    acquire max=500 fetch=5 15-34 => 17/7 count=1
    acquire max=500 fetch=5 15-34 => 18/7 count=1
    acquire max=500 fetch=5 15-34 => 19/7 count=1
    acquire max=500 fetch=5 15-34 => 20-24/6 count=5
    acquire max=500 fetch=5 15-34 => 25-34/5 count=10
"
)]
#[case::last_attempt_record_isolation_with_mixed_delivery_count(
    "
    init start=15 epoch=3 batches=15-34/0/2
    acquire max=500 fetch=15 15-34 => count=20
    ack 17/2 20/2 => ok
    acquire max=500 fetch=15 15-34 => count=2
    ack 15-34/2 => ok
    batches 15-34:o
    rec 15-16=avail/3 17=avail/4 18=avail/3
    acquire max=500 fetch=5 15-34 => 15-16/4 count=2
    acquire max=500 fetch=5 15-34 => 17/5 count=1
"
)]
#[case::not_throttled_if_high_delivery_count_record_not_acquired(
    "
    init start=15 epoch=3 batches=15-19/0/1
    acquire max=500 fetch=15 15-19 => count=5
    ack 15/2 => ok
    acquire max=500 fetch=15 15-19 => count=1
    ack 16-19/2 => ok
    batches 15-19:o
    rec 15=acq/3 16-19=avail/2
    acquire max=500 fetch=5 15-19 => 16-19/3 count=4
"
)]
#[case::throttling_with_ongoing_state_transition("
    init start=15 epoch=3 batches=15-19/0/1,20-24/0/2,25-29/0/2,30-34/0/2,35-39/0/2,40-44/4/5,45-49/0/1
    acquire 20-24 => count=5
    rec 20-24=acq
    acquire 36-37 => count=2
    rec 35=avail 36-37=acq 38=avail
    persister hold
    ack 20-24/2 36-37/2 => ok
    rec 20-24=avail 36-37=avail
    acquire max=10 fetch=15 15-19,20-24,25-29,30-34,35-39,40-44,45-49 => count=10
    batches 15-19,20-24,25-29,30-34,35-39:o,40-44,45-49
    rec 15-19=acq 20-24=avail 25-29=acq 30-34=avail 35-39=avail 40-44=arch 45-49=avail
    acquire max=500 fetch=15 15-19,20-24,25-29,30-34,35-39,40-44,45-49 => 30-34/3,35/3,38-39/3,45-49/2 count=13
")]
#[case::release_acquired_records_per_offset_with_different_member_id(
    "
    active
    acquire fetch=21 5-14 => count=10
    ack 5-6/1 => ok
    ack 10-12/2 => ok
    batches 5-14:o
    rec 5-6=acked 7-9=acq 10-12=avail 13-14=acq
    acquire member=member-2 fetch=21 10-12 => count=3
    rec 5-6=acked/1/- 7-9=acq/1/member-1 10-12=acq/2/member-2 13-14=acq/1/member-1
    release => ok
    expect next=7
    rec 5-6=acked/1/- 7-9=avail/1/- 10-12=acq/2/member-2 13-14=avail/1/-
"
)]
fn throttling(#[case] script: &str) {
    run(script);
}
