//! Writes the persister refuses (Kafka's `SharePartitionTest.*WriteShareGroupStateFailure`,
//! `testAcquireWithWriteShareGroupStateDelay`): an acknowledgement or release is rolled
//! back, and a lock that expired meanwhile releases the records.

use rstest::rstest;

use crate::script::run;

#[rstest]
#[case::release_batch_with_write_failure(
    "
    persister fail=69
    acquire 5-14 => 5-14/1
    release => err=69
    batches 5-14
    rec 5-14=acq/1/member-1
    expect dcc=0
"
)]
#[case::release_offset_with_write_failure(
    "
    acquire 5-10 => 5-10/1
    ack 8-9/1 => ok
    expect dcc=2
    persister fail=69
    release => err=69
    batches 5-10:o
    rec 5-7=acq/1/member-1 8-9=acked 10=acq/1/member-1
    expect dcc=2
"
)]
#[case::acknowledge_batch_with_write_failure(
    "
    persister fail=69
    acquire 5-14 => 5-14/1
    ack 5-14/1 => err=69
    rec 5-14=acq/1/member-1
    expect dcc=0
"
)]
#[case::acknowledge_offset_with_write_failure(
    "
    acquire 5-10 => 5-10/1
    persister fail=69
    ack 8-9/1 => err=69
    rec 5-10=acq/1/member-1
    expect dcc=0
"
)]
#[case::error_codes_map_as_kafka_fetch_persister_error(
    "
    acquire 0-9
    persister fail=16
    ack 0-9/1 => err=15
    persister fail=14
    ack 0-9/1 => err=15
    persister fail=3
    ack 0-9/1 => err=3
    persister fail=124
    ack 0-9/1 => err=6
    persister fail=74
    ack 0-9/1 => err=6
    persister fail=35
    ack 0-9/1 => err=-1
    rec 0-9=acq/1/member-1
"
)]
#[case::pending_write_blocks_other_changes(
    "
    acquire 0-9
    persister hold
    ack 0-9/1 => ok
    rec 0-9=acked/1/-
    ack 0-9/1 => err=121
    complete ok
    batches none
    expect start=10 end=10
"
)]
#[case::lock_expires_while_write_pending_then_write_fails(
    "
    config lock=100
    acquire 0-9 => 0-9/1
    persister hold
    ack 0-9/2 => ok
    advance 120
    rec 0-9=avail/1/-
    complete fail=69 => err=69
    rec 0-9=avail/1/-
    expect deadline=none next=0
"
)]
#[case::lock_expires_while_accept_pending_then_write_fails(
    "
    config lock=100
    acquire 0-9 => 0-9/1
    persister hold
    ack 0-9/1 => ok
    advance 120
    rec 0-9=acked/1/-
    complete fail=69 => err=69
    rec 0-9=avail/1/-
    expect deadline=none next=0
"
)]
#[case::lock_still_held_when_write_fails(
    "
    config lock=100
    acquire 0-9 => 0-9/1
    persister hold
    ack 0-9/1 => ok
    complete fail=69 => err=69
    rec 0-9=acq/1/member-1
    expect deadline=100
"
)]
fn write_failure(#[case] steps: &str) {
    let steps = if steps.contains("config") {
        steps.replacen("config lock=100", "config lock=100\n active", 1)
    } else {
        format!("active\n{steps}")
    };
    run(&steps);
}
