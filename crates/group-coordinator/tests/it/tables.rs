//! Request x group state x condition tables from `kafka-semantics.md` §2.

use group_coordinator::Request;
use group_types::{
    DeleteGroupsRequest, DeleteGroupsResponse, ErrorCode, GroupState, OffsetDeleteRequest, ProtocolMetadata,
};
use rstest::rstest;

use crate::support::{Sim, commit, heartbeat, join, leave, subscription, sync, test_config};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Missing,
    Empty,
    Preparing,
    Completing,
    Stable,
}

#[derive(Debug, Clone, Copy)]
enum Who {
    /// A current member (the follower) with the current generation.
    Member,
    /// A current member with a wrong generation.
    WrongGeneration,
    /// A member id the group does not know.
    Unknown,
}

/// A group "g" in the given state, with its (former) members, leader first, and the
/// generation a member of it would send.
fn group_in(state: State) -> (Sim, Vec<String>, i32) {
    let mut sim = Sim::new(test_config());
    match state {
        State::Missing => (sim, vec!["ghost-1".into(), "ghost-2".into()], 1),
        State::Empty => {
            let (ids, generation) = sim.stable_group("g", 2);
            for id in &ids {
                sim.send(Request::LeaveGroup(leave("g", id)));
            }
            assert_eq!(sim.core.group("g").unwrap().state, GroupState::Empty);
            (sim, ids, generation)
        }
        State::Preparing => {
            let (ids, generation) = sim.stable_group("g", 2);
            let rid = sim.send(Request::JoinGroup(join("g", &ids[0])));
            assert!(sim.answer(rid).is_none());
            assert_eq!(sim.core.group("g").unwrap().state, GroupState::PreparingRebalance);
            (sim, ids, generation)
        }
        State::Completing => {
            let a = sim.two_step_join("g");
            let b = sim.two_step_join("g");
            sim.advance_to(100);
            let generation = sim.join_answer(a.1).unwrap().generation_id;
            assert_eq!(sim.core.group("g").unwrap().state, GroupState::CompletingRebalance);
            (sim, vec![a.0, b.0], generation)
        }
        State::Stable => {
            let (ids, generation) = sim.stable_group("g", 2);
            (sim, ids, generation)
        }
    }
}

fn member_and_generation(ids: &[String], generation: i32, who: Who) -> (String, i32) {
    match who {
        Who::Member => (ids[1].clone(), generation),
        Who::WrongGeneration => (ids[1].clone(), generation + 7),
        Who::Unknown => ("nobody".into(), generation),
    }
}

#[rstest]
#[case(State::Missing, Who::Member, ErrorCode::UnknownMemberId)]
#[case(State::Empty, Who::Member, ErrorCode::UnknownMemberId)]
#[case(State::Preparing, Who::Member, ErrorCode::RebalanceInProgress)]
#[case(State::Preparing, Who::WrongGeneration, ErrorCode::IllegalGeneration)]
#[case(State::Preparing, Who::Unknown, ErrorCode::UnknownMemberId)]
#[case(State::Completing, Who::Member, ErrorCode::None)]
#[case(State::Completing, Who::WrongGeneration, ErrorCode::IllegalGeneration)]
#[case(State::Completing, Who::Unknown, ErrorCode::UnknownMemberId)]
#[case(State::Stable, Who::Member, ErrorCode::None)]
#[case(State::Stable, Who::WrongGeneration, ErrorCode::IllegalGeneration)]
#[case(State::Stable, Who::Unknown, ErrorCode::UnknownMemberId)]
fn heartbeat_table(#[case] state: State, #[case] who: Who, #[case] expected: ErrorCode) {
    let (mut sim, ids, generation) = group_in(state);
    let (member, generation) = member_and_generation(&ids, generation, who);
    let rid = sim.send(Request::Heartbeat(heartbeat("g", &member, generation)));
    assert_eq!(sim.error_of(rid), expected);
}

#[rstest]
#[case(State::Missing, Who::Member, Some(ErrorCode::UnknownMemberId))]
#[case(State::Empty, Who::Member, Some(ErrorCode::UnknownMemberId))]
#[case(State::Preparing, Who::Member, Some(ErrorCode::RebalanceInProgress))]
#[case(State::Preparing, Who::WrongGeneration, Some(ErrorCode::IllegalGeneration))]
#[case(State::Completing, Who::Member, None)]
#[case(State::Completing, Who::WrongGeneration, Some(ErrorCode::IllegalGeneration))]
#[case(State::Completing, Who::Unknown, Some(ErrorCode::UnknownMemberId))]
#[case(State::Stable, Who::Member, Some(ErrorCode::None))]
#[case(State::Stable, Who::WrongGeneration, Some(ErrorCode::IllegalGeneration))]
#[case(State::Stable, Who::Unknown, Some(ErrorCode::UnknownMemberId))]
fn sync_table(#[case] state: State, #[case] who: Who, #[case] expected: Option<ErrorCode>) {
    let (mut sim, ids, generation) = group_in(state);
    let (member, generation) = member_and_generation(&ids, generation, who);
    let rid = sim.send(Request::SyncGroup(sync("g", &member, generation, &[])));
    assert_eq!(sim.sync_answer(rid).map(|r| r.error_code), expected, "None = parked for the leader");
}

#[derive(Debug, Clone, Copy)]
enum Committer {
    /// Generation -1, no member id: an admin or simple consumer.
    Simple,
    /// A member of the group (or, when the group is Empty or missing, a former one).
    Member(Who),
}

#[rstest]
#[case(State::Missing, Committer::Simple, ErrorCode::None)]
#[case(State::Missing, Committer::Member(Who::Member), ErrorCode::GroupIdNotFound)]
#[case(State::Empty, Committer::Simple, ErrorCode::None)]
#[case(State::Empty, Committer::Member(Who::Member), ErrorCode::UnknownMemberId)]
#[case(State::Preparing, Committer::Simple, ErrorCode::UnknownMemberId)]
#[case(State::Preparing, Committer::Member(Who::Member), ErrorCode::None)]
#[case(State::Preparing, Committer::Member(Who::Unknown), ErrorCode::UnknownMemberId)]
#[case(State::Preparing, Committer::Member(Who::WrongGeneration), ErrorCode::IllegalGeneration)]
#[case(State::Completing, Committer::Simple, ErrorCode::UnknownMemberId)]
#[case(State::Completing, Committer::Member(Who::Member), ErrorCode::RebalanceInProgress)]
#[case(State::Completing, Committer::Member(Who::Unknown), ErrorCode::UnknownMemberId)]
#[case(State::Completing, Committer::Member(Who::WrongGeneration), ErrorCode::IllegalGeneration)]
#[case(State::Stable, Committer::Simple, ErrorCode::UnknownMemberId)]
#[case(State::Stable, Committer::Member(Who::Member), ErrorCode::None)]
#[case(State::Stable, Committer::Member(Who::Unknown), ErrorCode::UnknownMemberId)]
#[case(State::Stable, Committer::Member(Who::WrongGeneration), ErrorCode::IllegalGeneration)]
fn offset_commit_table(#[case] state: State, #[case] committer: Committer, #[case] expected: ErrorCode) {
    let (mut sim, ids, generation) = group_in(state);
    let request = match committer {
        Committer::Simple => commit("g", "", -1, 5),
        Committer::Member(who) => {
            let (member, generation) = member_and_generation(&ids, generation, who);
            commit("g", &member, generation, 5)
        }
    };
    let rid = sim.send(Request::OffsetCommit(request));
    assert_eq!(sim.error_of(rid), expected);
    let stored = sim.core.committed_offset("g", "t", 0).map(|o| o.offset);
    assert_eq!(stored, (expected == ErrorCode::None).then_some(5), "only accepted commits are visible");
}

/// A commit with a generation to a missing group: Kafka's Java coordinator tells
/// v9+ clients the group is gone, older ones that their generation is stale.
#[rstest]
#[case(2, ErrorCode::IllegalGeneration)]
#[case(8, ErrorCode::IllegalGeneration)]
#[case(9, ErrorCode::GroupIdNotFound)]
fn offset_commit_to_a_missing_group_by_version(#[case] api_version: i16, #[case] expected: ErrorCode) {
    let (mut sim, _, _) = group_in(State::Missing);
    let request = group_types::OffsetCommitRequest { api_version, ..commit("g", "ghost-1", 1, 5) };
    let rid = sim.send(Request::OffsetCommit(request));
    assert_eq!(sim.error_of(rid), expected);
    assert!(sim.core.group("g").is_none(), "a refused commit creates no group");
}

#[derive(Debug, Clone, Copy)]
enum Joiner {
    Leader,
    Follower,
    FollowerChangedMetadata,
    Unknown,
}

/// `Some(code)` = answered at once; `None` = parked.
#[rstest]
#[case(State::Missing, Joiner::Follower, Some(ErrorCode::UnknownMemberId))]
#[case(State::Empty, Joiner::Follower, Some(ErrorCode::UnknownMemberId))]
#[case(State::Preparing, Joiner::Follower, Some(ErrorCode::None))]
#[case(State::Completing, Joiner::Follower, Some(ErrorCode::None))]
#[case(State::Completing, Joiner::FollowerChangedMetadata, None)]
#[case(State::Stable, Joiner::Leader, None)]
#[case(State::Stable, Joiner::Follower, Some(ErrorCode::None))]
#[case(State::Stable, Joiner::FollowerChangedMetadata, None)]
#[case(State::Stable, Joiner::Unknown, Some(ErrorCode::UnknownMemberId))]
fn known_member_join_table(
    #[case] state: State,
    #[case] joiner: Joiner,
    #[case] expected: Option<ErrorCode>,
) {
    let (mut sim, ids, generation) = group_in(state);
    let mut request = match joiner {
        Joiner::Leader => join("g", &ids[0]),
        Joiner::Follower | Joiner::FollowerChangedMetadata => join("g", &ids[1]),
        Joiner::Unknown => join("g", "nobody"),
    };
    if let Joiner::FollowerChangedMetadata = joiner {
        request.protocols = vec![ProtocolMetadata::new("range", subscription(&["t", "u"]))];
    }
    let rid = sim.send(Request::JoinGroup(request));
    let answer = sim.join_answer(rid);
    assert_eq!(answer.as_ref().map(|a| a.error_code), expected);
    if let Some(a) = answer.filter(|a| a.error_code == ErrorCode::None) {
        // In PreparingRebalance the last rejoin closes the barrier: a new generation.
        let expected_generation = if state == State::Preparing { generation + 1 } else { generation };
        assert_eq!(a.generation_id, expected_generation);
    }
}

#[rstest]
#[case(9, ErrorCode::InvalidSessionTimeout)]
#[case(10, ErrorCode::MemberIdRequired)]
#[case(600_000, ErrorCode::MemberIdRequired)]
#[case(600_001, ErrorCode::InvalidSessionTimeout)]
fn session_timeout_bounds_table(#[case] session_timeout_ms: i32, #[case] expected: ErrorCode) {
    let mut sim = Sim::new(test_config());
    let mut request = join("g", "");
    request.session_timeout_ms = session_timeout_ms;
    let rid = sim.send(Request::JoinGroup(request));
    assert_eq!(sim.error_of(rid), expected);
    assert_eq!(sim.core.group("g").is_some(), expected == ErrorCode::MemberIdRequired);
}

#[rstest]
#[case(State::Missing, ErrorCode::GroupIdNotFound)]
#[case(State::Empty, ErrorCode::None)]
#[case(State::Preparing, ErrorCode::NonEmptyGroup)]
#[case(State::Completing, ErrorCode::NonEmptyGroup)]
#[case(State::Stable, ErrorCode::NonEmptyGroup)]
fn delete_groups_table(#[case] state: State, #[case] expected: ErrorCode) {
    let (mut sim, _, _) = group_in(state);
    let rid =
        sim.send(Request::DeleteGroups(DeleteGroupsRequest { group_ids: vec!["g".into(), "g".into()] }));
    let Some(group_coordinator::Response::DeleteGroups(DeleteGroupsResponse { results })) = sim.answer(rid)
    else {
        panic!("no delete answer")
    };
    assert_eq!(results.len(), 1, "duplicates collapse");
    assert_eq!(results[0].error_code, expected);
    assert_eq!(sim.core.group("g").is_none(), matches!(state, State::Missing | State::Empty));
}

#[rstest]
#[case(State::Missing, "t", ErrorCode::GroupIdNotFound, None)]
#[case(State::Empty, "t", ErrorCode::None, Some(ErrorCode::None))]
#[case(State::Stable, "t", ErrorCode::None, Some(ErrorCode::GroupSubscribedToTopic))]
#[case(State::Stable, "u", ErrorCode::None, Some(ErrorCode::None))]
fn offset_delete_table(
    #[case] state: State,
    #[case] topic: &str,
    #[case] top: ErrorCode,
    #[case] partition: Option<ErrorCode>,
) {
    let (mut sim, _, _) = group_in(state);
    let request = OffsetDeleteRequest { group_id: "g".into(), topics: [(topic.to_owned(), vec![0])].into() };
    let rid = sim.send(Request::OffsetDelete(request));
    let Some(group_coordinator::Response::OffsetDelete(response)) = sim.answer(rid) else {
        panic!("no answer")
    };
    assert_eq!(response.error_code, top);
    assert_eq!(response.partitions.get(topic).and_then(|p| p.get(&0)).copied(), partition);
}

#[rstest]
#[case::missing_group(false, "x", Some(ErrorCode::UnknownMemberId))]
#[case::unknown_member(true, "x", Some(ErrorCode::UnknownMemberId))]
#[case::member(true, "member", Some(ErrorCode::None))]
#[case::pending_member(true, "pending", Some(ErrorCode::None))]
fn leave_table(#[case] exists: bool, #[case] who: &str, #[case] expected: Option<ErrorCode>) {
    let mut sim = Sim::new(test_config());
    let mut member_id = who.to_owned();
    if exists {
        let (ids, _) = sim.stable_group("g", 2);
        if who == "member" {
            member_id = ids[1].clone();
        }
        if who == "pending" {
            let rid = sim.send(Request::JoinGroup(join("g", "")));
            member_id = sim.join_answer(rid).unwrap().member_id.to_string();
        }
    }
    let rid = sim.send(Request::LeaveGroup(leave("g", &member_id)));
    let Some(group_coordinator::Response::LeaveGroup(r)) = sim.answer(rid) else { panic!("no answer") };
    assert_eq!(r.error_code, ErrorCode::None, "per-member errors, top level NONE");
    assert_eq!(r.members.first().map(|m| m.error_code), expected);
    if let Some(g) = sim.core.group("g") {
        assert!(g.member(&member_id).is_none() && !g.pending_members.contains(&member_id));
    }
}

/// §6.7 (J): how a failed write reaches the client, for group writes and for
/// operations (commit, offset delete, delete groups).
#[rstest]
#[case(
    ErrorCode::UnknownTopicOrPartition,
    ErrorCode::CoordinatorNotAvailable,
    ErrorCode::CoordinatorNotAvailable
)]
#[case(ErrorCode::NotEnoughReplicas, ErrorCode::CoordinatorNotAvailable, ErrorCode::CoordinatorNotAvailable)]
#[case(ErrorCode::RequestTimedOut, ErrorCode::CoordinatorNotAvailable, ErrorCode::CoordinatorNotAvailable)]
#[case(ErrorCode::NotLeaderOrFollower, ErrorCode::NotCoordinator, ErrorCode::NotCoordinator)]
#[case(ErrorCode::KafkaStorageError, ErrorCode::NotCoordinator, ErrorCode::NotCoordinator)]
#[case(ErrorCode::MessageTooLarge, ErrorCode::UnknownServerError, ErrorCode::UnknownServerError)]
#[case(ErrorCode::RecordListTooLarge, ErrorCode::UnknownServerError, ErrorCode::UnknownServerError)]
#[case(ErrorCode::InvalidFetchSize, ErrorCode::UnknownServerError, ErrorCode::UnknownServerError)]
#[case(ErrorCode::NetworkException, ErrorCode::NetworkException, ErrorCode::CoordinatorLoadInProgress)]
#[case(ErrorCode::UnknownServerError, ErrorCode::UnknownServerError, ErrorCode::UnknownServerError)]
fn append_error_mapping_table(
    #[case] append: ErrorCode,
    #[case] group_write: ErrorCode,
    #[case] operation: ErrorCode,
) {
    assert_eq!(group_coordinator::map_append_error(append), group_write);
    assert_eq!(group_coordinator::map_operation_error(append), operation);
    // And end to end: a simple commit whose write fails.
    let mut sim = Sim::new(test_config());
    sim.fail_next_write = Some(append);
    let rid = sim.send(Request::OffsetCommit(commit("g", "", -1, 5)));
    assert_eq!(sim.error_of(rid), operation);
    assert_eq!(sim.core.committed_offset("g", "t", 0), None);
}
