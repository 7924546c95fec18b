//! Initialization from the persister's read (Kafka's `SharePartitionTest.testMaybeInitialize*`).

use rstest::rstest;

use crate::script::run;

#[rstest]
#[case::maybe_initialize(
    "
    init start=5 epoch=3 batches=5-10/0/2,11-15/4/3
    expect state=active start=5 end=15 epoch=3 next=5 dcc=5
    batches 5-10,11-15
    rec 5-10=avail/2 11-15=arch/3
"
)]
#[case::default_start_earliest(
    "
    init start=-1 reset=0
    expect state=active start=0 end=0 epoch=0 dcc=0
"
)]
#[case::default_start_latest(
    "
    init start=-1 reset=15
    expect state=active start=15 end=15 epoch=0 dcc=0
"
)]
#[case::default_start_by_duration(
    "
    init start=-1 reset=15
    expect state=active start=15 end=15 epoch=0 dcc=0 inflight=0
"
)]
#[case::empty_state_batches(
    "
    init start=10 epoch=5
    expect state=active start=10 end=10 epoch=5 next=10 dcc=0
    batches none
"
)]
#[case::error_not_coordinator("init start=10 epoch=5 error=16 => err=15\n expect state=failed")]
#[case::error_coordinator_not_available("init start=10 epoch=5 error=15 => err=15\n expect state=failed")]
#[case::error_coordinator_load_in_progress("init start=10 epoch=5 error=14 => err=15\n expect state=failed")]
#[case::error_group_id_not_found("init start=10 epoch=5 error=69 => err=69\n expect state=failed")]
#[case::error_unknown_topic_or_partition("init start=10 epoch=5 error=3 => err=3\n expect state=failed")]
#[case::error_fenced_state_epoch("init start=10 epoch=5 error=124 => err=6\n expect state=failed")]
#[case::error_fenced_leader_epoch("init start=10 epoch=5 error=74 => err=6\n expect state=failed")]
#[case::error_unknown_server_error("init start=10 epoch=5 error=-1 => err=-1\n expect state=failed")]
#[case::error_network_exception("init start=10 epoch=5 error=13 => err=-1\n expect state=failed")]
#[case::invalid_start_offset_state_batches(
    "
    init start=6 epoch=3 batches=5-10/0/2,11-15/4/3 => err=-1
    expect state=failed
"
)]
#[case::invalid_offset_in_batch(
    "
    init start=5 epoch=3 batches=5-10/0/2,15-11/4/3 => err=-1
    expect state=failed
"
)]
#[case::read_exception("init noanswer=1 => err=-1\n expect state=failed")]
#[case::no_op_state_persister(
    "
    init start=-1 reset=0
    expect state=active start=0 end=0 epoch=0 next=0
    batches none
"
)]
#[case::gap_at_beginning(
    "
    init start=10 epoch=3 batches=15-20/2/2,21-30/4/3
    expect state=active start=10 end=30 epoch=3 next=10 gap=10-30 dcc=16
    batches 15-20,21-30
    rec 15-20=acked/2 21-30=arch/3
"
)]
#[case::multiple_gaps(
    "
    init start=10 epoch=3 batches=15-20/2/2,30-40/4/3
    expect state=active start=10 end=40 epoch=3 next=10 gap=10-40 dcc=17
    batches 15-20,30-40
"
)]
#[case::gap_not_at_beginning(
    "
    init start=15 epoch=3 batches=15-20/2/2,30-40/4/3
    expect state=active start=21 end=40 epoch=3 next=21 gap=21-40 dcc=11
    batches 30-40
    rec 30-40=arch/3
"
)]
#[case::without_gaps(
    "
    init start=15 epoch=3 batches=15-20/2/2,21-30/4/3
    expect state=active start=31 end=31 epoch=3 next=31 dcc=0 gap=none
    batches none
"
)]
fn initialize(#[case] script: &str) {
    run(script);
}

/// testMaybeInitializeSharePartitionAgain, testMaybeInitializeFencedSharePartition:
/// a second initialization reads nothing; a fenced partition refuses.
#[test]
fn initialize_again_and_fenced() {
    use group_share_partition::{PartitionState, ShareError, SharePartition, SharePartitionConfig};
    use group_types::{GroupId, TopicId};
    let mut sp = SharePartition::new(
        GroupId::from_static("g"),
        TopicId::from_u128(1),
        0,
        0,
        SharePartitionConfig::default(),
    )
    .expect("valid");
    assert!(sp.begin_initialize().expect("empty").is_some());
    // Concurrent requests: one read only.
    assert_eq!(sp.begin_initialize().map_err(|e| e.error_code()), Err(5));
    let read = group_share_partition::ReadShareGroupStateResult {
        topic_id: TopicId::from_u128(1),
        partition: 0,
        error_code: 0,
        state_epoch: 3,
        start_offset: 5,
        state_batches: vec![],
    };
    sp.complete_initialize(Ok(read), None).expect("read");
    assert_eq!(sp.begin_initialize(), Ok(None));
    sp.mark_fenced();
    assert!(matches!(sp.begin_initialize(), Err(ShareError::LeaderNotAvailable(_))));
    assert_eq!(sp.partition_state(), PartitionState::Fenced);
}

/// testMaybeInitializeWithInvalidTopicIdResponse / InvalidPartitionResponse.
#[rstest]
#[case::other_topic(2, 0)]
#[case::other_partition(1, 1)]
fn initialize_answer_for_another_partition(#[case] topic: u128, #[case] partition: i32) {
    use group_share_partition::{PartitionState, SharePartition, SharePartitionConfig};
    use group_types::{GroupId, TopicId};
    let mut sp = SharePartition::new(
        GroupId::from_static("g"),
        TopicId::from_u128(1),
        0,
        0,
        SharePartitionConfig::default(),
    )
    .expect("valid");
    sp.begin_initialize().expect("empty");
    let read = group_share_partition::ReadShareGroupStateResult {
        topic_id: TopicId::from_u128(topic),
        partition,
        error_code: 0,
        state_epoch: 3,
        start_offset: 5,
        state_batches: vec![],
    };
    assert_eq!(sp.complete_initialize(Ok(read), None).map_err(|e| e.error_code()), Err(-1));
    assert_eq!(sp.partition_state(), PartitionState::Failed);
}

/// A read without a start offset waits for the caller's `share.auto.offset.reset`.
#[test]
fn unresolved_start_offset_keeps_initializing() {
    run("
        init start=-1 => err=StartOffsetUnresolved
        expect state=initializing
    ");
}

/// testMaybeInitializeWhenReadStateRpcReturnsZeroAvailableRecords: a read of only
/// terminal runs leaves nothing cached.
#[test]
fn read_with_zero_available_records() {
    let mut batches = vec!["233/4/1".to_owned()];
    batches.extend((234..734).map(|o| format!("{o}/2/1")));
    run(&format!(
        "init start=233 epoch=3 batches={}\n expect next=734 start=734 end=734 dcc=0\n batches none",
        batches.join(",")
    ));
}

/// testMaybeInitializeWithNullResponse / NullTopicsData / EmptyTopicsData: no usable
/// answer fails the partition.
#[rstest]
#[case::null_response("init noanswer=1 => err=-1\n expect state=failed")]
#[case::null_topics_data("init noanswer=1 => err=-1\n expect state=failed")]
#[case::empty_topics_data("init noanswer=1 => err=-1\n expect state=failed")]
fn initialize_without_an_answer(#[case] script: &str) {
    run(script);
}
