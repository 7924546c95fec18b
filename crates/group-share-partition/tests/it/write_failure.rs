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

/// Writes that complete later, in any order (Kafka's futures completed by the test).
#[rstest]
#[case::acquire_when_batch_has_ongoing_transition(
    "
    acquire fetch=21 21-30 => 21-30/1
    persister hold
    ack 21-30/2 => ok
    expect dcc=0 start=21
    rec 21-30=avail/1/-
    acquire member=member-2 fetch=21 21-30 => none count=0
    rec 21-30=avail/1/-
    complete ok
    acquire member=member-2 fetch=21 21-30 => 21-30/2 count=10
    rec 21-30=acq/2/member-2
    expect dcc=0
"
)]
#[case::next_fetch_offset_when_batch_has_ongoing_transition(
    "
    acquire fetch=0 0-9
    acquire fetch=10 10-19
    persister hold
    ack 0-9/2 => ok
    ack 10-19/2 => ok
    complete at=1 ok
    expect dcc=0 next=10
"
)]
#[case::next_fetch_offset_when_offsets_have_ongoing_transition(
    "
    acquire fetch=0 0-49
    persister hold
    ack 5-9/2 => ok
    ack 20-24/2 => ok
    complete at=1 ok
    expect dcc=0 next=20
"
)]
#[case::acquisition_lock_timeout_with_concurrent_acknowledgement(
    "
    acquire batch=5 max=10 fetch=0 0-4,5-19 => count=20
    batches 0-4,5-19
    persister hold
    ack 0/2 1/1 5-19/1 => ok
    expect start=0 dcc=16
    batches 0-4:o,5-19
    rec 0=avail 1=acked 2=acq 5-19=acked
    complete ok
    expect dcc=16
    rec 1=acked 2=acq 5-19=acked
    persister ok
    advance 120
    rec 0=avail 1=acked 2-4=avail/1/- 5-19=acked
    expect dcc=16
"
)]
#[case::lso_movement_with_write_failures_in_acknowledgement(
    "
    acquire 2-6
    acquire 7-11
    persister hold
    ack 2-6/2 => ok
    ack 7-11/1 => ok
    expect dcc=5
    lso 7
    expect next=12 start=7 end=11 dcc=5
    rec 2-6=arch 7-11=acked
    complete fail=69 => err=69
    expect next=12 start=7 end=11 dcc=5
    rec 2-6=arch 7-11=acked
    complete fail=69 => err=69
    expect next=12 start=7 end=11 dcc=0
    batches 2-6,7-11
    rec 2-6=arch 7-11=acq/1/member-1
"
)]
#[case::acquisition_lock_timeout_with_write_failure(
    "
    acquire fetch=0 0-1 => 0-1/1
    persister hold
    ack 0-1/1 => ok
    expect start=0 dcc=2
    rec 0-1=acked/1/-
    advance 120
    rec 0-1=acked/1/-
    expect dcc=2
    complete fail=69 => err=69
    batches 0-1
    rec 0-1=avail/1/-
    expect dcc=0 deadline=none
"
)]
#[case::record_archived_with_write_failure(
    "
    config delivery=2
    acquire 2-6
    acquire 7-11
    persister hold
    ack 3/1 => ok
    ack 7-11/1 => ok
    rec 3=acked/1 7-11=acked/1
    expect dcc=6
    complete fail=69 => err=69
    expect next=12 dcc=5
    rec 3=acq/1 7-11=acked/1
    complete fail=69 => err=69
    expect next=12 dcc=0
    rec 3=acq/1 7-11=acq/1
    persister ok
    advance 120
    rec 3=avail/1 7-11=avail/1
    expect next=2 dcc=0
    acquire 2-6 => count=5
    acquire 7-11 => count=5
    persister hold
    ack 3/1 => ok
    ack 7-11/1 => ok
    expect dcc=6
    advance 120
    rec 2=arch 3=acked 4-6=arch 7-11=acked
    expect dcc=10
    complete fail=69 => err=69
    expect next=12
    rec 3=arch/2 7-11=acked/2
    # Kafka's futures run their callbacks last registered first: the four timeout
    # writes complete before the second acknowledgement's.
    complete at=1 fail=69 => err=69
    complete at=1 fail=69 => err=69
    complete at=1 fail=69 => err=69
    complete at=1 fail=69 => err=69
    complete fail=69 => err=69
    expect next=12 start=7 dcc=5
    batches 7-11
    rec 7-11=arch/2
"
)]
fn delayed_writes(#[case] steps: &str) {
    let steps = if steps.contains("config") {
        steps.replacen("\n", "\n config lock=100\n", 1).replacen("acquire", "active\n acquire", 1)
    } else {
        format!("config lock=100\n active\n{steps}")
    };
    run(&steps);
}
