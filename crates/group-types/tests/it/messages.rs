//! Message defaults follow Kafka's wire defaults, and the helpers say what they do.

use group_types::{
    ErrorCode, GroupState, JoinGroupRequest, JoinGroupResponse, LeaveGroupRequest, LeaveGroupResponse,
    LeaveMemberResponse, OffsetCommitData, OffsetCommitRequest, OffsetCommitResponse, OffsetFetchData,
    OffsetFetchRequest, SyncGroupResponse, TopicPartition,
};
use rstest::rstest;

#[test]
fn join_request_defaults_are_a_new_dynamic_consumer() {
    let req = JoinGroupRequest::default();
    assert_eq!(req.member_id, "");
    assert_eq!(req.group_instance_id, None);
    assert_eq!(req.protocol_type, "consumer");
    assert_eq!(req.session_timeout_ms, 45_000);
    assert_eq!(req.rebalance_timeout_ms, 300_000);
    assert_eq!(req.api_version, JoinGroupRequest::LATEST_VERSION);
}

#[test]
fn join_error_response_has_kafka_error_fields() {
    let resp = JoinGroupResponse::error(ErrorCode::MemberIdRequired, "consumer-1");
    assert_eq!(resp.error_code, ErrorCode::MemberIdRequired);
    assert_eq!(resp.generation_id, -1);
    assert_eq!(resp.protocol_type, None);
    assert_eq!(resp.protocol_name, None);
    assert_eq!(resp.leader_id, "");
    assert!(resp.members.is_empty());
    assert!(!resp.skip_assignment);
    assert!(!resp.is_leader());
}

#[test]
fn join_response_knows_its_leader() {
    let resp =
        JoinGroupResponse { member_id: "a".into(), leader_id: "a".into(), ..JoinGroupResponse::default() };
    assert!(resp.is_leader());
    let follower = JoinGroupResponse { member_id: "b".into(), ..resp };
    assert!(!follower.is_leader());
}

#[test]
fn commit_request_defaults_are_a_simple_consumer() {
    let req = OffsetCommitRequest::default();
    assert_eq!(req.generation_id, -1);
    assert_eq!(req.member_id, "");
    assert_eq!(req.retention_time_ms, -1);
    assert_eq!(req.partition_count(), 0);
    let data = OffsetCommitData::new(42);
    assert_eq!(
        (data.offset, data.leader_epoch, data.metadata, data.commit_timestamp),
        (42, None, None, None)
    );
}

#[test]
fn commit_response_copies_a_group_error_to_every_partition() {
    let req = OffsetCommitRequest::default()
        .with_offset("a", 0, OffsetCommitData::new(1))
        .with_offset("a", 1, OffsetCommitData::new(2))
        .with_offset("b", 7, OffsetCommitData::new(3));
    assert_eq!(req.partition_count(), 3);
    let resp = OffsetCommitResponse::uniform(&req, ErrorCode::RebalanceInProgress);
    for (topic, partition) in [("a", 0), ("a", 1), ("b", 7)] {
        assert_eq!(resp.error_for(topic, partition), Some(ErrorCode::RebalanceInProgress));
    }
    assert_eq!(resp.error_for("b", 0), None);
}

#[test]
fn commit_lists_keep_request_order_and_repeats() {
    let req = OffsetCommitRequest::default()
        .with_offset("b", 7, OffsetCommitData::new(1))
        .with_offset("a", 1, OffsetCommitData::new(2))
        .with_offset("b", 7, OffsetCommitData::new(3));
    let topics: Vec<&str> = req.offsets.iter().map(|t| t.topic.as_str()).collect();
    assert_eq!(topics, ["b", "a"]);
    assert_eq!(req.partition_count(), 3);
    let mut resp = OffsetCommitResponse::default();
    resp.push("b", 7, ErrorCode::None);
    resp.push("a", 1, ErrorCode::None);
    resp.push("b", 7, ErrorCode::OffsetMetadataTooLarge);
    let answered: Vec<(&str, i32, ErrorCode)> = resp.iter().collect();
    assert_eq!(
        answered,
        [("b", 7, ErrorCode::None), ("b", 7, ErrorCode::OffsetMetadataTooLarge), ("a", 1, ErrorCode::None)]
    );
    // The later answer of a repeated partition is the one that counts.
    assert_eq!(resp.error_for("b", 7), Some(ErrorCode::OffsetMetadataTooLarge));
    resp.set_all(ErrorCode::NotCoordinator);
    assert!(resp.iter().all(|(_, _, code)| code == ErrorCode::NotCoordinator));
}

#[test]
fn fetch_of_a_missing_offset_reads_minus_one() {
    let missing = OffsetFetchData::missing();
    assert_eq!((missing.offset, missing.leader_epoch, missing.metadata.as_str()), (-1, None, ""));
    assert_eq!(missing.error_code, ErrorCode::None);
    assert_eq!(OffsetFetchData::default(), missing);
    assert_eq!(OffsetFetchData::error(ErrorCode::UnstableOffsetCommit).offset, -1);
}

#[test]
fn fetch_request_all_versus_some() {
    let all = OffsetFetchRequest::all("g");
    assert_eq!(all.topics, None);
    let some = all.with_partition("t", 0).with_partition("t", 2);
    assert_eq!(some.topics.unwrap()["t"], vec![0, 2]);
}

#[test]
fn leave_single_is_one_identity() {
    let req = LeaveGroupRequest::single("g", "m-1");
    assert_eq!(req.members.len(), 1);
    assert_eq!(req.members[0].member_id, "m-1");
    assert_eq!(req.members[0].group_instance_id, None);
}

#[rstest]
#[case(ErrorCode::None, ErrorCode::UnknownMemberId, ErrorCode::UnknownMemberId)]
#[case(ErrorCode::CoordinatorNotAvailable, ErrorCode::None, ErrorCode::CoordinatorNotAvailable)]
#[case(ErrorCode::None, ErrorCode::None, ErrorCode::None)]
fn leave_collapses_for_old_versions(
    #[case] top: ErrorCode,
    #[case] member: ErrorCode,
    #[case] expected: ErrorCode,
) {
    let resp = LeaveGroupResponse {
        error_code: top,
        members: vec![LeaveMemberResponse {
            member_id: "m".into(),
            group_instance_id: None,
            error_code: member,
        }],
    };
    assert_eq!(resp.collapsed_error(), expected);
}

#[test]
fn sync_error_has_no_protocol_fields() {
    let resp = SyncGroupResponse::error(ErrorCode::RebalanceInProgress);
    assert_eq!((resp.protocol_type, resp.protocol_name), (None, None));
    assert!(resp.assignment.is_empty());
}

#[rstest]
#[case("Empty", GroupState::Empty)]
#[case("preparingrebalance", GroupState::PreparingRebalance)]
#[case("COMPLETINGREBALANCE", GroupState::CompletingRebalance)]
#[case("Stable", GroupState::Stable)]
#[case("dead", GroupState::Dead)]
fn group_state_names_parse_case_insensitively(#[case] name: &str, #[case] state: GroupState) {
    assert_eq!(name.parse::<GroupState>(), Ok(state));
    assert!(state.to_string().eq_ignore_ascii_case(name));
}

#[test]
fn unknown_group_state_is_an_error() {
    assert!("Rebalancing".parse::<GroupState>().is_err());
}

#[test]
fn topic_partitions_order_by_topic_then_partition() {
    let mut tps = [TopicPartition::new("b", 0), TopicPartition::new("a", 10), TopicPartition::new("a", 2)];
    tps.sort();
    let shown: Vec<String> = tps.iter().map(ToString::to_string).collect();
    assert_eq!(shown, ["a-2", "a-10", "b-0"]);
}

#[test]
fn topic_partition_clones_share_the_topic() {
    let tp = TopicPartition::new("orders", 1);
    let copy = tp.clone();
    assert!(std::sync::Arc::ptr_eq(&tp.topic, &copy.topic));
}
