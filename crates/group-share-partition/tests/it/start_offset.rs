//! Start-offset movement (Kafka's `SharePartitionTest.testLsoMovement*`,
//! `testMaybeUpdateCachedState*`, `testDeliveryCompleteCountWhenStale*`): records
//! before the log start offset are archived, compacted-away batches too, and fully
//! acknowledged batches at the front leave the cache.

use rstest::rstest;

use crate::script::run;

/// Seven batches of five from offset 2, all acquired by member-1.
const SEVEN_BATCHES: &str = "
    active
    acquire 2-6
    acquire 7-11
    acquire 12-16
    acquire 17-21
    acquire 22-26
    acquire 27-31
    acquire 32-36
";

/// Four batches of ten from offset 11, the first and third released.
const FOUR_BATCHES_TWO_RELEASED: &str = "
    active
    acquire 11-20
    acquire 21-30
    acquire 31-40
    acquire 41-50
    ack 11-20/2 31-40/2 => ok
    expect dcc=0
";

#[rstest]
#[case::stale_batches_are_archived(
    "
    init start=11 epoch=3 batches=11-20/0/1,21-30/0/1
    expect next=11 dcc=0
    acquire fetch=11 21-30 => 21-30/2
    rec 11-20=arch 21-30=acq/2
    expect dcc=10
"
)]
#[case::stale_offsets_are_archived(
    "
    init start=11 epoch=3 batches=11-20/0/1,21-30/0/1
    acquire fetch=11 16-30 => 16-20/2,21-30/2
    rec 11-15=arch 16-20=acq/2 21-30=acq/2
    expect dcc=5
"
)]
#[case::on_initialization(
    "
    active
    lso 0
    expect next=0 start=0 end=0
    lso 5
    expect next=5 start=5 end=5
"
)]
#[case::archiving_batches(&format!("{SEVEN_BATCHES}
    ack 2-6/1 12-16/2 22-26/2 27-31/3 => ok
    expect dcc=5
    lso 20
    expect next=22 start=20 end=36 dcc=5
    batches 7-11,12-16,17-21,22-26,27-31,32-36
    rec 7-11=acq 12-16=arch 17-21=acq 22-26=avail 27-31=arch 32-36=acq
"))]
#[case::post_archived_batches(&format!("{SEVEN_BATCHES}
    ack 2-6/2 12-16/3 22-26/2 27-31/3 => ok
    expect dcc=10
    lso 20
    expect next=22 start=20 end=36 dcc=5
    batches 2-6,7-11,12-16,17-21,22-26,27-31,32-36
    rec 2-6=arch 7-11=acq 12-16=arch 17-21=acq 22-26=avail 27-31=arch 32-36=acq
"))]
#[case::post_archived_records(&format!("{SEVEN_BATCHES}
    ack 2-6/2 12-16/3 19-21/3 22-26/2 27-31/3 => ok
    expect dcc=13
    lso 20
    expect next=22 start=20 end=36 dcc=7
    batches 2-6,7-11,12-16,17-21:o,22-26,27-31,32-36
    rec 2-6=arch 7-11=acq 12-16=arch 17-18=acq 19-21=arch 22-26=avail 27-31=arch 32-36=acq
"))]
#[case::archiving_all_available_batches(&format!("{FOUR_BATCHES_TWO_RELEASED}
    lso 41
    expect next=51 start=41 end=50 dcc=0
    batches 11-20,21-30,31-40,41-50
    rec 11-20=arch 21-30=acq 31-40=arch 41-50=acq
    ack 21-30/2 => ok
    expect dcc=0
    rec 21-30=acq
    advance 30000
    rec 21-30=arch
    expect dcc=0
"))]
#[case::archiving_all_available_offsets(&format!("{FOUR_BATCHES_TWO_RELEASED}
    lso 36
    expect next=36 start=36 end=50 dcc=0
    batches 11-20,21-30,31-40:o,41-50
    rec 11-20=arch 21-30=acq 31-35=arch 36-40=avail 41-50=acq
    ack 21-30/2 => ok
    rec 21-30=acq
    expect dcc=0
    advance 30000
    rec 21-30=arch
    expect dcc=0
"))]
#[case::archiving_offsets(
    "
    active
    acquire 2-6
    acquire 7-11
    ack 4-8/1 => ok
    lso 5
    expect next=12 start=5 end=11
    batches 2-6:o,7-11:o
    rec 2-3=acq/1/member-1 4-6=acked/1/- 7-8=acked/1/- 9-11=acq/1/member-1
"
)]
#[case::archiving_offsets_with_start_and_end_batches_not_full_matches(
    "
    active
    acquire 2-6
    acquire 7-11
    lso 4
    expect next=12 start=4 end=11
    batches 2-6,7-11
    rec 2-11=acq
    lso 8
    expect next=12 start=8 end=11
    batches 2-6,7-11
    rec 2-11=acq
"
)]
#[case::archiving_offsets_with_start_offset_not_full_matches_post_accept(
    "
    active
    acquire 2-6
    acquire 7-11
    lso 4
    expect next=12 start=4 end=11
    ack 7-8/1 => ok
    lso 7
    expect next=12 start=7 end=11
    batches 2-6,7-11:o
    rec 2-6=acq 7-8=acked/1/- 9-11=acq/1/member-1
"
)]
#[case::archiving_offsets_with_start_offset_not_full_matches_post_release(
    "
    active
    acquire 2-6
    acquire 7-11
    lso 4
    ack 7-8/2 => ok
    lso 7
    expect next=7 start=7 end=11
    batches 2-6,7-11:o
    rec 2-6=acq 7-8=avail/1/- 9-11=acq/1/member-1
"
)]
#[case::to_end_offset(
    "
    active
    acquire 2-6
    acquire 7-11
    ack 7-8/2 => ok
    lso 11
    expect next=12 start=11 end=11
    batches 2-6,7-11:o
    rec 2-6=acq 7-8=arch/1/- 9-11=acq/1/member-1
"
)]
#[case::to_end_offset_where_end_offset_is_available(
    "
    active
    acquire 2-6
    acquire 7-11
    ack 7-8/2 11/2 => ok
    lso 11
    expect next=11 start=11 end=11
    batches 2-6,7-11:o
    rec 2-6=acq 7-8=arch/1/- 9-10=acq/1/member-1 11=avail/1/-
"
)]
fn start_offset_movement(#[case] script: &str) {
    run(script);
}

/// Batches of five from 5 (15-19 held by member-2), some acknowledged, then the log
/// start offset moves to 24.
const SIX_BATCHES_LSO_24: &str = "
    active
    acquire 5-9
    acquire 10-14
    acquire member=member-2 15-19
    acquire 20-24
    acquire 25-29
    acquire 30-34
    acquire 35-39
    expect dcc=0
    ack 6-7/1 8/2 25-29/2 35-37/2 => ok
    expect dcc=2
    lso 24
    expect next=25 start=24 end=39 dcc=0
    batches 5-9:o,10-14,15-19,20-24,25-29,30-34,35-39:o
";

#[rstest]
#[case::terminal_records_not_updated_when_batches_before_start_offset_are_expired(
    "
    init start=11 epoch=3 batches=11-20/0/1,21-30/0/1
    acquire 10-20 => 11-20/2
    lso 21
    expect dcc=0
    rec 11-20=acq 21-30=avail
    ack 11-20/2 => ok
    expect dcc=0
    rec 11-20=acq 21-30=avail
    advance 30000
    rec 11-20=arch 21-30=avail
    expect dcc=0
"
)]
#[case::terminal_records_not_updated_when_offsets_before_start_offset_are_expired(
    "
    init start=11 epoch=3 batches=11-20/0/1,21-30/0/1
    acquire 10-20 => 11-20/2
    lso 16
    expect dcc=0 start=16
    rec 11-20=acq 21-30=avail
    advance 30000
    expect dcc=0
    batches 11-20:o,21-30
    rec 11-15=arch 16-20=avail 21-30=avail
"
)]
#[case::terminal_records_not_updated_when_offsets_before_start_offset_are_expired_after_acknowledgements(
    "
    init start=11 epoch=3 batches=11-20/0/1,21-30/0/1
    acquire 10-20 => 11-20/2
    lso 16
    expect dcc=0 start=16
    ack 11-20/2 => ok
    expect dcc=0
    rec 11-15=acq 16-20=avail 21-30=avail
    advance 30000
    expect dcc=0
    rec 11-15=arch 16-20=avail 21-30=avail
"
)]
#[case::release_acquired_records_batches_post_start_offset_movement(&format!("{SIX_BATCHES_LSO_24}
    release => ok
    rec 5=arch/1/- 6-7=acked/1/- 8-9=arch/1/- 10-14=arch
    rec 15-19=acq/1/member-2
    rec 20-23=arch/1/- 24=avail/1/- 25-34=avail 35-39=avail/1/-
    expect dcc=0
"))]
#[case::acquisition_lock_timeout_for_batches_post_start_offset_movement(&format!("{SIX_BATCHES_LSO_24}
    advance 30000
    rec 5=arch/1/- 6-7=acked/1/- 8-9=arch/1/- 10-14=arch 15-19=arch
    rec 20-23=arch/1/- 24=avail/1/- 25-34=avail 35-39=avail/1/-
    expect dcc=0
"))]
#[case::release_acquired_records_batches_post_start_offset_movement_to_start_of_batch(
    "
    active
    acquire 5-9
    acquire 10-14
    lso 10
    expect next=15 start=10 end=14 dcc=0
    release => ok
    rec 5-9=arch 10-14=avail
    expect dcc=0
"
)]
#[case::release_acquired_records_batches_post_start_offset_movement_to_middle_of_batch(
    "
    active
    acquire 5-9
    acquire 10-14
    lso 11
    expect next=15 start=11 end=14 dcc=0
    release => ok
    batches 5-9,10-14:o
    rec 5-9=arch 10=arch/1/- 11-14=avail/1/-
    expect dcc=0
"
)]
#[case::release_acquired_records_do_not_decrease_delivery_count(
    "
    active
    acquire 5-9
    acquire 10-14
    ack 12-13/1 => ok
    expect dcc=2
    lso 11
    expect next=15 start=11 end=14 dcc=2
    rec 10-11=acq/1/member-1 12-13=acked/1/- 14=acq/1/member-1
    release => ok
    rec 5-9=arch/1 10=arch/1/- 11=avail/1/- 12-13=acked/1/- 14=avail/1/-
    expect dcc=2
"
)]
#[case::acquisition_lock_timeout_post_start_offset_movement_to_start_of_batch(
    "
    active
    acquire 5-9
    acquire 10-14
    lso 10
    advance 30000
    rec 5-9=arch/1/- 10-14=avail/1/-
    expect dcc=0
"
)]
#[case::acquisition_lock_timeout_post_start_offset_movement_to_middle_of_batch(
    "
    active
    acquire 5-9
    acquire 10-14
    lso 11
    advance 30000
    rec 5-9=arch/1/- 10=arch/1/- 11-14=avail/1/-
    expect dcc=0
"
)]
#[case::acknowledge_batch_and_offset_post_lso_movement(
    "
    active
    acquire 2-6
    acquire 10-14
    lso 12
    expect next=15 start=12 end=14 dcc=0
    ack 2-6/2 10-14/2 => ok
    expect next=12 start=12 end=14 dcc=0
    batches 2-6,10-14:o
    rec 2-6=acq 10-11=acq/1/member-1 12-14=avail/1/-
"
)]
#[case::acknowledge_batch_post_lso_movement(
    "
    active
    acquire 2-6
    acquire 10-14
    acquire 20-24
    lso 14
    expect next=25 start=14 end=24 dcc=0
    ack 2-14/1 => ok
    expect dcc=1 next=25 start=14 end=24
    batches 2-6,10-14:o,20-24
    rec 2-6=acq 10-13=acq/1/member-1 14=acked/1/- 20-24=acq
"
)]
#[case::lso_movement_then_acquisition_lock_timeout_then_acknowledge(
    "
    active
    acquire 2-6
    lso 7
    expect next=7 start=7 end=7 dcc=0
    batches 2-6
    advance 30000
    expect next=7 start=7 end=7 dcc=0
    batches none
    acquire 10-14 => 10-14/1
    expect next=15 start=10 end=14 dcc=0
"
)]
#[case::ahead_of_end_offset_post_acknowledgement(
    "
    active
    acquire 2-6
    acquire 7-11
    ack 7-8/2 => ok
    lso 12
    expect next=12 start=12 end=12
    batches 2-6,7-11:o
    rec 2-6=acq 7-8=arch/1/- 9-11=acq/1/member-1
"
)]
#[case::ahead_of_end_offset(
    "
    active
    acquire 2-6
    acquire 7-11
    lso 14
    expect next=14 start=14 end=14
    batches 2-6,7-11
    rec 2-11=acq
"
)]
#[case::with_gaps_in_cached_state_map(
    "
    active
    acquire 2-6
    acquire 10-14
    acquire 20-24
    lso 18
    expect next=25 start=18 end=24
    rec 2-6=acq 10-14=acq 20-24=acq
"
)]
#[case::with_gaps_in_cached_state_map_and_acknowledged_batch(
    "
    active
    acquire 2-6
    acquire 10-14
    ack 10-14/2 => ok
    lso 10
    expect next=10 start=10 end=14
    rec 2-6=acq 10-14=avail
"
)]
#[case::post_gaps_in_acknowledgements(
    "
    active
    acquire 5-6
    acquire 10-18
    ack 5-6/2 10-18/[2,2,2,2,2,0,0,0,2] => ok
    lso 18
    expect next=18 start=18 end=18
    batches 5-6,10-18:o
    rec 5-6=arch 10-17=arch/1/- 18=avail/1/-
"
)]
fn start_offset_movement_and_held_records(#[case] script: &str) {
    run(script);
}

#[rstest]
#[case::lso_then_lock_timeout_then_acknowledge_batch_last_offset_ahead_of_start_offset_batch(
    "
    active
    acquire 1-2
    lso 3
    expect next=3 start=3 end=3 dcc=0
    batches 1-2
    advance 30000
    expect next=3 start=3 end=3 dcc=0
    batches none
    acquire 3-4 => 3-4/1
    acquire 5-7 => 5-7/1
    expect next=8 start=3 end=7 dcc=0
    ack 1-7/2 => ok
    expect next=3 start=3 end=7 dcc=0
    batches 3-4,5-7
    rec 3-7=avail/1/-
"
)]
#[case::when_acknowledge_type_accept(
    "
    active
    acquire 0-249 => 0-249/1
    expect can=false
    ack 0-249/1 => ok
    expect next=250 start=250 end=250 can=true dcc=0
    batches none
"
)]
#[case::when_acknowledge_type_reject(
    "
    active
    acquire 0-249 => 0-249/1
    expect can=false
    ack 0-249/3 => ok
    expect next=250 start=250 end=250 can=true dcc=0
    batches none
"
)]
#[case::when_acknowledge_type_release(
    "
    active
    acquire 0-249 => 0-249/1
    expect can=false
    ack 0-249/2 => ok
    expect start=0 end=249 can=true dcc=0
    batches 0-249
    rec 0-249=avail/1/-
"
)]
#[case::when_acknowledgements_from_beginning_for_batch_subset(
    "
    config inflight=20
    active
    acquire 0-14 => 0-14/1
    expect can=true
    acquire 15-29 => 15-29/1
    expect can=false
    ack 0-12/1 => ok
    rec 12=acked 13=acq 15-29=acq
    expect can=true start=13 end=29 next=30 dcc=0
"
)]
#[case::when_acknowledgements_from_beginning_for_entire_batch(
    "
    config inflight=20
    active
    acquire 0-14
    acquire 15-29
    expect can=false
    ack 0-14/3 => ok
    rec 15-29=acq/1
    expect can=true start=15 end=29 next=30 dcc=0
"
)]
#[case::when_acknowledgements_in_between(
    "
    config inflight=20
    active
    acquire 0-14
    acquire 15-29
    expect can=false
    ack 10-14/3 => ok
    rec 9=acq 10=arch 15-29=acq/1
    expect can=false start=0 end=29 next=30 dcc=5
"
)]
#[case::when_all_records_in_cached_state_are_acknowledged(
    "
    config inflight=20
    active
    acquire 0-14
    acquire 15-29
    expect can=false
    ack 0-29/1 => ok
    expect can=true start=30 end=30 next=30 dcc=0
"
)]
#[case::multiple_acquisitions_and_acknowledgements(
    "
    config inflight=100
    active
    acquire 0-19 => 0-19/1
    expect can=true
    acquire 20-39 => 20-39/1
    expect can=true
    acquire 40-59 => 40-59/1
    expect can=true
    ack 0-19/1 => ok
    expect can=true start=20 end=59 next=60 dcc=0
    acquire 60-79 => 60-79/1
    expect can=true
    ack 20-49/1 => ok
    rec 49=acked 50=acq 60-79=acq
    expect can=true start=50 end=79 next=80 dcc=0
    acquire 80-179 => 80-179/1
    expect can=false
    ack 50-179/3 => ok
    batches none
    expect can=true start=180 end=180 next=180 dcc=0
    acquire 180-199 => 180-199/1
    batches 180-199
    expect can=true start=180 end=199 next=200 dcc=0
"
)]
#[case::gap_after_last_offset_acknowledged(
    "
    init start=11 epoch=3 batches=11-20/0/1,31-40/4/1
    expect dcc=10
    acquire 11-20 => 11-20/2
    expect can=true
    ack 11-20/1 => ok
    expect can=true start=21 end=40 next=21 dcc=10 gap=21-40
"
)]
#[case::can_acquire_records_returns_true(
    "
    active
    expect start=0 end=0
    acquire 0-149 => 0-149/1
    expect can=true start=0 end=149
"
)]
#[case::can_acquire_records_change_response_post_acknowledgement(
    "
    active
    acquire 0-149 => 0-149/1
    expect can=true
    acquire 150-249 => 150-249/1
    expect can=false start=0 end=249
    ack 0-249/1 => ok
    expect can=true start=250 end=250
"
)]
#[case::can_acquire_records_after_release_acknowledgement(
    "
    active
    acquire 0-149
    expect can=true start=0 end=149
    acquire 150-249
    expect can=false start=0 end=249
    ack 0-89/2 => ok
    expect start=0 end=249 can=true
"
)]
fn cached_state_updates(#[case] script: &str) {
    run(script);
}

/// Compacted topics: cached batches the log no longer returns are archived so the
/// start offset can pass them (Kafka's `testAcquireWhenBatches*Removed*`).
#[rstest]
#[case::batches_removed_from_between_in_subsequent_fetch_data(
    "
    active
    acquire 0-4,5-19,20-34 => count=35
    acquire 40-44 => count=5
    acquire 45-49 => count=5
    acquire 50-64 => count=15
    release => ok
    batches 0-34,40-44,45-49,50-64
    expect dcc=0
    acquire 0-2,20-34,40-44,50-63 => count=59
    expect next=64 dcc=0
    batches 0-34,40-44,45-49,50-64:o
    rec 0-34=acq 40-49=acq 50-63=acq 64=avail
"
)]
#[case::batches_removed_for_fetch_offset(
    "
    active
    acquire 0-4
    acquire 5-9
    acquire 10-24
    release => ok
    expect dcc=0
    acquire fetch=0 5-9 => count=5
    expect next=10 start=0
    rec 0-4=arch
    release => ok
    expect start=5 next=5 dcc=0
    batches 5-9,10-24
    rec 5-24=avail
"
)]
#[case::batches_removed_for_fetch_offset_within_batch(
    "
    active
    acquire 5-9
    acquire 10-24
    ack 5-7/1 => ok
    expect dcc=0
    release => ok
    batches 5-9:o,10-24
    acquire fetch=8 10-24 => count=15
    expect next=25 start=8 dcc=2
    release => ok
    expect start=10 next=10 dcc=0
    batches 10-24
    rec 10-24=avail
"
)]
#[case::batches_removed_for_fetch_offset_for_same_cached_batch(
    "
    active
    acquire 0-4,5-19,20-34 => count=35
    release => ok
    batches 0-34
    acquire fetch=0 5-9 => count=5
    expect next=10 start=0 dcc=5
    release => ok
    expect start=5 next=5 dcc=0
    batches 0-34:o
    rec 0-4=arch 5-34=avail
"
)]
fn compacted_batches(#[case] script: &str) {
    run(script);
}

#[rstest]
#[case::lso_movement_with_pending_acknowledgements(
    "
    acquire 0-4 => 0-4/1
    ack 1/1 3/1 => ok
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
#[case::lso_movement_with_pending_acknowledgements_for_batches(
    "
    acquire 0-4
    acquire 5-9
    acquire 10-14
    acquire 15-19
    acquire 20-24
    ack 5-9/1 15-19/1 => ok
    lso 12
    expect next=25 start=12 end=24
    batches 0-4,5-9,10-14,15-19,20-24
    rec 0-4=acq 5-9=acked 10-14=acq 15-19=acked 20-24=acq
    advance 101
    expect next=12 start=12 end=24 deadline=none
    batches 0-4,5-9,10-14:o,15-19,20-24
    rec 0-4=arch 5-9=acked 10-11=arch 12-14=avail 15-19=acked 20-24=avail
    writes 4
"
)]
fn lso_movement_with_pending_acknowledgements(#[case] steps: &str) {
    run(&format!("config lock=100 delivery=2\n active\n{steps}"));
}

#[rstest]
#[case::can_acquire_records_after_archive_acknowledgement("3 => ok\n expect start=90 end=249 can=true")]
#[case::can_acquire_records_after_accept_acknowledgement("1 => ok\n expect start=90 end=249 can=true")]
fn can_acquire_after_acknowledging_the_front(#[case] ack: &str) {
    run(&format!(
        "active\n acquire 0-149\n expect can=true start=0 end=149\n acquire 150-249\n expect can=false start=0 end=249\n ack 0-89/{ack}"
    ));
}
