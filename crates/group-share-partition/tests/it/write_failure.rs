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

/// testWriteShareGroupStateFailure, testWriteShareGroupStateWith*: the error a failed
/// write answers (Kafka's `fetchPersisterError`; no usable answer is an
/// `IllegalStateException`, UNKNOWN_SERVER_ERROR).
#[rstest]
#[case::not_coordinator(Some(16), 15)]
#[case::coordinator_not_available(Some(15), 15)]
#[case::coordinator_load_in_progress(Some(14), 15)]
#[case::group_id_not_found(Some(69), 69)]
#[case::unknown_topic_or_partition(Some(3), 3)]
#[case::fenced_state_epoch(Some(124), 6)]
#[case::fenced_leader_epoch(Some(74), 6)]
#[case::unknown_server_error(Some(-1), -1)]
#[case::sasl_authentication_failed(Some(58), -1)]
#[case::unsupported_version(Some(35), -1)]
#[case::null_or_invalid_response(None, -1)]
fn write_error_mapping(#[case] code: Option<i16>, #[case] answered: i16) {
    use group_share_partition::PersisterFailure;
    let failure = code.map_or(PersisterFailure::NoAnswer, PersisterFailure::ErrorCode);
    assert_eq!(failure.to_error().error_code(), answered);
}

/// testWriteShareGroupState: what a write carries (the state epoch read, the start
/// offset when written, the changed runs with their delivery counts).
#[test]
fn write_carries_epoch_start_offset_and_runs() {
    run("
        init start=5 epoch=3 batches=5-9/0/2
        acquire 5-14 => 5-9/3,10-14/1
        ack 5-9/1 10-12/[2,3,0] => ok
        writes 1 last=5-9/2/3,10/0/1,11/4/1,12/4/1 start=5
        expect start=10
    ");
}
