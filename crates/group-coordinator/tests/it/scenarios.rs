//! Scenarios of `kafka-semantics.md` §8 that the oracle scripts do not cover.

use group_coordinator::{CoordinatorConfig, Record, Request, Response};
use group_offsets::{GroupMetadataRecord, MemberMetadataRecord, StoredGroups};
use group_types::{
    CommitMetadata, DescribeGroupsRequest, ErrorCode, GroupId, GroupState, LeaveGroupRequest,
    ListGroupsRequest, MemberIdentity, OffsetCommitData, OffsetFetchRequest, ProtocolMetadata,
};

use crate::support::{Sim, commit, heartbeat, join, subscription, sync, test_config};

fn static_join(group: &str, member_id: &str, instance: &str) -> group_types::JoinGroupRequest {
    let mut r = join(group, member_id);
    r.group_instance_id = Some(instance.into());
    r
}

/// The persisted record of a Stable consumer group "g" whose first member leads.
fn stored_group(generation_id: i32, member_ids: Vec<String>) -> GroupMetadataRecord {
    GroupMetadataRecord {
        group_id: "g".into(),
        protocol_type: Some("consumer".into()),
        generation_id,
        protocol_name: Some("range".into()),
        leader_id: member_ids.first().cloned().map(Into::into),
        state_timestamp_ms: Some(0),
        members: member_ids
            .into_iter()
            .map(|member_id| MemberMetadataRecord {
                member_id: member_id.into(),
                client_id: "consumer".into(),
                rebalance_timeout_ms: 500,
                session_timeout_ms: 500,
                subscription: subscription(&["t"]).into(),
                ..MemberMetadataRecord::default()
            })
            .collect(),
    }
}

/// Generation 1 of two members in CompletingRebalance, with the follower's SyncGroup
/// parked until the leader's arrives: (sim, leader, follower, parked sync).
fn follower_parked_in_sync() -> (Sim, String, String, group_coordinator::RequestId) {
    let mut sim = Sim::new(test_config());
    let a = sim.two_step_join("g");
    let b = sim.two_step_join("g");
    sim.advance_to(100);
    let leader = sim.join_answer(a.1).unwrap().leader_id.to_string();
    let follower = if leader == a.0 { b.0.clone() } else { a.0.clone() };
    let parked = sim.send(Request::SyncGroup(sync("g", &follower, 1, &[])));
    assert!(sim.answer(parked).is_none());
    (sim, leader, follower, parked)
}

#[test]
fn max_size_admits_exactly_four_of_five_new_members() {
    // §8 #11, #12
    let mut sim = Sim::new(CoordinatorConfig { group_max_size: 4, ..test_config() });
    let joins: Vec<_> = (0..5).map(|_| sim.two_step_join("g")).collect();
    sim.advance_to(200);
    let codes: Vec<ErrorCode> = joins.iter().map(|(_, rid)| sim.error_of(*rid)).collect();
    assert_eq!(codes.iter().filter(|c| **c == ErrorCode::None).count(), 4, "{codes:?}");
    assert_eq!(codes[4], ErrorCode::GroupMaxSizeReached);
    assert_eq!(sim.core.group("g").unwrap().members.len(), 4);
}

#[test]
fn loading_an_oversized_group_rebalances_and_kicks_out_the_last_rejoiners() {
    // §8 #14, #15
    let mut sim = Sim::new(CoordinatorConfig { group_max_size: 4, ..test_config() });
    let record = stored_group(3, (0..6).map(|i| format!("m{i}")).collect());
    let fx = sim.core.load(0, StoredGroups { groups: vec![record], ..StoredGroups::default() });
    sim.timers.apply(fx.timers);
    assert_eq!(sim.core.group("g").unwrap().state, GroupState::PreparingRebalance);
    let rids: Vec<_> = (0..6).map(|i| sim.send(Request::JoinGroup(join("g", &format!("m{i}"))))).collect();
    assert_eq!(sim.error_of(rids[4]), ErrorCode::GroupMaxSizeReached);
    assert_eq!(sim.error_of(rids[5]), ErrorCode::GroupMaxSizeReached);
    sim.advance_to(600);
    for rid in &rids[..4] {
        assert_eq!(sim.error_of(*rid), ErrorCode::None);
    }
    let g = sim.core.group("g").unwrap();
    assert_eq!(g.members.len(), 4);
    assert_eq!(g.generation_id, 4);
}

#[test]
fn a_new_member_in_a_long_rebalance_expires_after_the_new_member_timeout() {
    // §8 #16, #17
    let mut sim = Sim::new(test_config());
    let (a, a_join) = sim.two_step_join("g");
    sim.advance_to(50);
    assert_eq!(sim.error_of(a_join), ErrorCode::None);
    sim.send(Request::SyncGroup(sync("g", &a, 1, &[])));
    let mut long = join("g", &a);
    long.rebalance_timeout_ms = 600_000;
    long.session_timeout_ms = 400_000;
    let rejoin = sim.send(Request::JoinGroup(long));
    assert_eq!(sim.join_answer(rejoin).unwrap().generation_id, 2, "sole member rejoin completes at once");
    sim.send(Request::SyncGroup(sync("g", &a, 2, &[])));
    let first = sim.send(Request::JoinGroup(join("g", "")));
    let b = sim.join_answer(first).unwrap().member_id;
    let b_join = sim.send(Request::JoinGroup(join("g", &b)));
    for t in (1..=3).map(|k| k * 100_000) {
        sim.advance_to(t);
        sim.send(Request::Heartbeat(heartbeat("g", &a, 2)));
    }
    sim.advance_to(300_100);
    assert_eq!(sim.error_of(b_join), ErrorCode::UnknownMemberId);
    let g = sim.core.group("g").unwrap();
    assert!(g.member(&b).is_none());
    assert!(g.member(&a).is_some());
}

#[test]
fn nobody_syncing_empties_the_group_at_the_sync_deadline() {
    // §8 #52
    let mut sim = Sim::new(test_config());
    let a = sim.two_step_join("g");
    let b = sim.two_step_join("g");
    sim.advance_to(100);
    for t in [300, 500] {
        sim.advance_to(t);
        sim.send(Request::Heartbeat(heartbeat("g", &a.0, 1)));
        sim.send(Request::Heartbeat(heartbeat("g", &b.0, 1)));
    }
    sim.advance_to(700);
    let g = sim.core.group("g").unwrap();
    assert_eq!(g.state, GroupState::Empty);
    assert_eq!(g.generation_id, 2);
}

#[test]
fn a_leader_that_never_syncs_is_removed_and_parked_followers_rebalance() {
    // §8 #54
    let (mut sim, leader, _, parked) = follower_parked_in_sync();
    sim.advance_to(600);
    assert_eq!(sim.error_of(parked), ErrorCode::RebalanceInProgress);
    let g = sim.core.group("g").unwrap();
    assert!(g.member(&leader).is_none());
    assert_eq!(g.state, GroupState::PreparingRebalance);
}

#[test]
fn static_replacements_get_fresh_ids_prefixed_by_the_instance() {
    // §8 #43, #63
    let mut sim = Sim::new(test_config());
    let first = sim.send(Request::JoinGroup(static_join("g", "", "inst")));
    sim.advance_to(50);
    let id1 = sim.join_answer(first).unwrap().member_id;
    sim.send(Request::SyncGroup(sync("g", &id1, 1, &[(&id1, "x")])));
    let again = sim.send(Request::JoinGroup(static_join("g", "", "inst")));
    let id2 = sim.join_answer(again).unwrap().member_id;
    assert!(id1.starts_with("inst-") && id2.starts_with("inst-") && id1 != id2);
    let fenced = sim.send(Request::Heartbeat(group_types::HeartbeatRequest {
        group_instance_id: Some("inst".into()),
        ..heartbeat("g", &id1, 1)
    }));
    assert_eq!(sim.error_of(fenced), ErrorCode::FencedInstanceId);
    let request = LeaveGroupRequest {
        group_id: "g".into(),
        members: vec![
            MemberIdentity { group_instance_id: Some("inst".into()), ..MemberIdentity::new("") },
            MemberIdentity { group_instance_id: Some("other".into()), ..MemberIdentity::new("") },
        ],
    };
    let rid = sim.send(Request::LeaveGroup(request));
    let Some(Response::LeaveGroup(r)) = sim.answer(rid) else { panic!() };
    let codes: Vec<_> = r.members.iter().map(|m| m.error_code).collect();
    assert_eq!(codes, [ErrorCode::None, ErrorCode::UnknownMemberId]);
    assert_eq!(sim.core.group("g").unwrap().state, GroupState::Empty);
}

#[test]
fn a_static_replacement_during_completing_rebalance_fences_the_parked_sync() {
    // §8 #30
    let mut sim = Sim::new(test_config());
    let a = sim.send(Request::JoinGroup(static_join("g", "", "ia")));
    let b = sim.send(Request::JoinGroup(static_join("g", "", "ib")));
    sim.advance_to(100);
    let a_id = sim.join_answer(a).unwrap().member_id;
    let b_id = sim.join_answer(b).unwrap().member_id;
    let mut parked = sync("g", &b_id, 1, &[]);
    parked.group_instance_id = Some("ib".into());
    let parked = sim.send(Request::SyncGroup(parked));
    assert!(sim.answer(parked).is_none());
    let replacement = sim.send(Request::JoinGroup(static_join("g", "", "ib")));
    assert_eq!(sim.error_of(parked), ErrorCode::FencedInstanceId);
    assert!(sim.answer(replacement).is_none(), "the replacement waits for the new join phase");
    assert_eq!(sim.core.group("g").unwrap().state, GroupState::PreparingRebalance);
    let _ = a_id;
}

#[test]
fn offsets_of_an_empty_group_expire_together_after_retention() {
    // §8 #73, #74
    let config = CoordinatorConfig {
        offset_retention_ms: 10_000,
        offsets_retention_check_interval_ms: 1_000,
        ..test_config()
    };
    let mut sim = Sim::new(config);
    sim.send(Request::OffsetCommit(commit("simple", "", -1, 1)));
    let (ids, generation) = sim.stable_group("g", 1);
    sim.send(Request::OffsetCommit(commit("g", &ids[0], generation, 7)));
    for t in (1..=9).map(|k| k * 400) {
        sim.advance_to(t);
        sim.send(Request::Heartbeat(heartbeat("g", &ids[0], generation)));
    }
    sim.send(Request::LeaveGroup(crate::support::leave("g", &ids[0])));
    let empty_since = sim.now;
    sim.advance_to(10_500);
    assert!(sim.core.group("simple").is_none(), "simple group removed with its last offset");
    assert_eq!(
        sim.core.committed_offset("g", "t", 0).map(|o| o.offset),
        Some(7),
        "retention counts from Empty"
    );
    sim.advance_to(empty_since + 11_000);
    assert!(sim.core.group("g").is_none(), "expired and removed");
}

#[test]
fn group_id_empty_string_supports_offsets_describe_and_delete() {
    // §8 #71, #78
    let mut sim = Sim::new(test_config());
    let rid = sim.send(Request::OffsetCommit(commit("", "", -1, 3)));
    assert_eq!(sim.error_of(rid), ErrorCode::None);
    let fetch = sim.send(Request::OffsetFetch(OffsetFetchRequest::all("")));
    let Some(Response::OffsetFetch(f)) = sim.answer(fetch) else { panic!() };
    assert_eq!(f.get("t", 0).unwrap().offset, 3);
    let d = sim
        .send(Request::DeleteGroups(group_types::DeleteGroupsRequest { group_ids: vec![GroupId::empty()] }));
    assert!(
        matches!(sim.answer(d), Some(Response::DeleteGroups(r)) if r.results[0].error_code == ErrorCode::None)
    );
    let describe = sim.send(Request::DescribeGroups(DescribeGroupsRequest {
        group_ids: vec![GroupId::empty()],
        ..Default::default()
    }));
    let Some(Response::DescribeGroups(r)) = sim.answer(describe) else { panic!() };
    assert_eq!(r.groups[0].group_state, "Dead");
    let join_empty_id = sim.send(Request::JoinGroup(join("", "")));
    assert_eq!(sim.error_of(join_empty_id), ErrorCode::InvalidGroupId);
}

#[test]
fn list_groups_filters_by_state_and_type() {
    // §8 #76
    let mut sim = Sim::new(test_config());
    sim.stable_group("a", 1);
    sim.send(Request::OffsetCommit(commit("b", "", -1, 1)));
    let list = |sim: &mut Sim, states: &[&str], types: &[&str]| {
        let rid = sim.send(Request::ListGroups(ListGroupsRequest {
            states_filter: states.iter().map(|s| (*s).to_owned()).collect(),
            types_filter: types.iter().map(|s| (*s).to_owned()).collect(),
        }));
        let Some(Response::ListGroups(r)) = sim.answer(rid) else { panic!() };
        r.groups.iter().map(|g| g.group_id.clone()).collect::<Vec<_>>()
    };
    assert_eq!(list(&mut sim, &[], &[]), ["a", "b"]);
    assert_eq!(list(&mut sim, &["stable"], &[]), ["a"]);
    assert_eq!(list(&mut sim, &["Empty"], &["CLASSIC"]), ["b"]);
    assert!(list(&mut sim, &[], &["consumer"]).is_empty());
}

#[test]
fn the_protocol_vote_prefers_the_majority_and_is_deterministic() {
    // §4
    let mut sim = Sim::new(test_config());
    let both = |first: &str, second: &str| {
        vec![
            ProtocolMetadata::new(first, subscription(&["t"])),
            ProtocolMetadata::new(second, subscription(&["t"])),
        ]
    };
    let mut rids = Vec::new();
    for prefs in [("roundrobin", "range"), ("range", "roundrobin"), ("roundrobin", "range")] {
        let first = sim.send(Request::JoinGroup(join("g", "")));
        let id = sim.join_answer(first).unwrap().member_id;
        let mut r = join("g", &id);
        r.protocols = both(prefs.0, prefs.1);
        rids.push(sim.send(Request::JoinGroup(r)));
    }
    sim.advance_to(200);
    assert_eq!(sim.join_answer(rids[0]).unwrap().protocol_name.as_deref(), Some("roundrobin"));
    assert!(sim.records_written > 0);
}

#[test]
fn a_failed_static_replacement_keeps_the_old_member_working() {
    // §8 #38, #46 (with KAFKA_STORAGE_ERROR, mapped to NOT_COORDINATOR)
    let mut sim = Sim::new(test_config());
    let first = sim.send(Request::JoinGroup(static_join("g", "", "inst")));
    sim.advance_to(50);
    let id = sim.join_answer(first).unwrap().member_id;
    sim.send(Request::SyncGroup(sync("g", &id, 1, &[(&id, "x")])));
    sim.fail_next_write = Some(ErrorCode::KafkaStorageError);
    let again = sim.send(Request::JoinGroup(static_join("g", "", "inst")));
    let answer = sim.join_answer(again).unwrap();
    assert_eq!(answer.error_code, ErrorCode::NotCoordinator);
    assert_eq!(answer.member_id, "");
    let ok = sim.send(Request::Heartbeat(heartbeat("g", &id, 1)));
    assert_eq!(sim.error_of(ok), ErrorCode::None);
    assert_eq!(sim.core.group("g").unwrap().state, GroupState::Stable);
}

#[test]
fn a_leaving_members_parked_sync_is_answered() {
    // Deliberate difference from Kafka, which drops it unanswered.
    let (mut sim, _, follower, parked) = follower_parked_in_sync();
    sim.send(Request::LeaveGroup(crate::support::leave("g", &follower)));
    assert_eq!(sim.error_of(parked), ErrorCode::UnknownMemberId);
}

#[test]
fn a_restarted_core_never_hands_out_the_id_of_a_loaded_member() {
    // The id the generator produces first with this seed...
    let mut before = Sim::new(test_config());
    let first = before.send(Request::JoinGroup(join("g", "")));
    let taken = before.join_answer(first).unwrap().member_id.to_string();
    // ...belongs to a member loaded by a core seeded the same way.
    let mut sim = Sim::new(test_config());
    let record = stored_group(1, vec![taken.clone()]);
    let fx = sim.core.load(0, StoredGroups { groups: vec![record], ..StoredGroups::default() });
    sim.timers.apply(fx.timers);
    let rid = sim.send(Request::JoinGroup(join("g", "")));
    let answer = sim.join_answer(rid).unwrap();
    assert_eq!(answer.error_code, ErrorCode::MemberIdRequired);
    assert!(answer.member_id.starts_with("consumer-"), "{}", answer.member_id);
    assert_ne!(answer.member_id, taken, "a new member must not get a loaded member's id");
}

#[test]
fn a_commit_keeps_one_detached_copy_of_its_metadata_shared_with_its_record() {
    let mut sim = Sim::new(test_config());
    // What the front end hands over: the metadata as a slice of the request frame.
    let frame = bytes::Bytes::from(b"\x00\x0ccheckpoint-7".to_vec());
    let wire = frame.slice(2..);
    let data = OffsetCommitData {
        metadata: Some(CommitMetadata::from_utf8(wire.clone()).unwrap()),
        ..OffsetCommitData::new(5)
    };
    let request = commit("simple", "", -1, 0).with_offset("t", 1, data);
    let fx = sim.core.handle(0, group_coordinator::RequestId(1), Request::OffsetCommit(request));
    let [write] = &fx.writes[..] else { panic!("one write: {fx:?}") };
    let recorded = write
        .records
        .iter()
        .find_map(|r| match r {
            Record::Offset { partition, offset, .. } if partition.partition == 1 => {
                Some(offset.metadata.clone())
            }
            _ => None,
        })
        .unwrap();
    let _ = sim.core.complete_write(0, write.id, Ok(()));
    drop(fx);
    let kept = sim.core.committed_offset("simple", "t", 1).unwrap().metadata;
    assert_eq!(kept, "checkpoint-7");
    assert_ne!(kept.as_bytes().as_ptr(), wire.as_ptr(), "the cache keeps a copy");
    assert_eq!(kept.as_bytes().as_ptr(), recorded.as_bytes().as_ptr(), "the record shares it");
    drop(wire);
    assert!(frame.is_unique(), "nothing the core keeps holds the request frame");
}

/// `oracle` finding 3 (a Kafka bug not reproduced, docs/KAFKA-DIFFERENCES.md C2):
/// a member's consumer metadata that does not parse leaves the group's subscribed
/// topics unknown, and the join completes for everyone (Kafka answers the
/// triggering JoinGroup UNKNOWN_SERVER_ERROR and strands the others). Unknown
/// subscriptions count as every topic for a consumer-protocol group
/// (`ClassicGroup.isSubscribedToTopic`), so OffsetDelete is refused either way.
#[rstest::rstest]
#[case::parsable(false)]
#[case::unparsable(true)]
fn unparsable_consumer_metadata_does_not_fail_the_join(#[case] garbage: bool) {
    let mut sim = Sim::new(test_config());
    let a = sim.two_step_join("g");
    let first = sim.send(Request::JoinGroup(join("g", "")));
    let b_id = sim.join_answer(first).unwrap().member_id.to_string();
    let mut b = join("g", &b_id);
    if garbage {
        // A version 3 header, then a topic count no input could hold.
        let bytes = vec![0, 3, 0x7f, 0xff, 0xff, 0xff];
        assert!(group_types::Subscription::decode_topics(&bytes).is_err(), "the bytes must not parse");
        b.protocols = vec![ProtocolMetadata::new("range", bytes)];
    }
    let b_join = sim.send(Request::JoinGroup(b));
    sim.advance_to(100);
    for rid in [a.1, b_join] {
        let answer = sim.join_answer(rid).expect("every parked join is answered");
        assert_eq!((answer.error_code, answer.generation_id), (ErrorCode::None, 1));
    }
    let req = group_types::OffsetDeleteRequest {
        group_id: "g".into(),
        topics: [("t".to_owned(), vec![0])].into_iter().collect(),
    };
    let rid = sim.send(Request::OffsetDelete(req));
    let Some(Response::OffsetDelete(r)) = sim.answer(rid) else { panic!("{:?}", sim.answer(rid)) };
    assert_eq!(r.error_code, ErrorCode::None);
    assert_eq!(r.partitions["t"][&0], ErrorCode::GroupSubscribedToTopic);
}
