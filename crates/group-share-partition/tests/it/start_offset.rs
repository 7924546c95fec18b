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
