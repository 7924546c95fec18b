//! `perform_assignment`: the group's selected protocol, decoded subscriptions, no fallback.

use std::sync::Arc;

use group_coordinator::{CoordinatorError, GroupCoordinator, ManualClock};
use group_offsets::MemoryMetadataStore;
use group_types::{ProtocolMetadata, Subscription, TopicPartition, TopicPartitions};

use crate::support::{join, test_config};

fn group_with(protocol: &str, subscriptions: &[Subscription]) -> (GroupCoordinator, Vec<String>) {
    let clock = Arc::new(ManualClock::new(0));
    let c = GroupCoordinator::with_clock(Arc::new(MemoryMetadataStore::new()), test_config(), clock.clone())
        .unwrap();
    let mut pendings = Vec::new();
    for sub in subscriptions {
        let mut request = join("g", "");
        request.protocols = vec![ProtocolMetadata::new(protocol, sub.encode().unwrap())];
        let first = c.handle_join_group(request.clone()).unwrap();
        request.member_id = first.member_id;
        pendings.push(c.join_group(request));
    }
    clock.advance(500);
    let ids = pendings.into_iter().map(|p| p.wait().unwrap().member_id.to_string()).collect();
    (c, ids)
}

fn partitions(topic: &str, n: i32) -> Vec<TopicPartition> {
    (0..n).map(|p| TopicPartition::new(topic, p)).collect()
}

#[test]
fn range_assigns_every_partition_to_subscribed_members() {
    let sub = Subscription { topics: vec!["t".into()], ..Subscription::default() };
    let (c, ids) = group_with("range", &[sub.clone(), sub]);
    assert_eq!(c.get_group("g").unwrap().members.len(), 2);
    let assignment = c.perform_assignment("g", &partitions("t", 4)).unwrap();
    assert_eq!(assignment.len(), 2);
    let total: usize = ids.iter().map(|id| assignment[id].len()).sum();
    assert_eq!(total, 4);
}

#[test]
fn sticky_keeps_owned_partitions_from_the_decoded_subscription() {
    let owned = |ps: &[i32]| Subscription {
        version: 2,
        topics: vec!["t".into()],
        owned_partitions: vec![TopicPartitions::new("t", ps.to_vec())],
        generation_id: 1,
        ..Subscription::default()
    };
    let (c, ids) = group_with("sticky", &[owned(&[1, 3]), owned(&[0, 2])]);
    let assignment = c.perform_assignment("g", &partitions("t", 4)).unwrap();
    let mut first = assignment[&ids[0]].iter().map(|tp| tp.partition).collect::<Vec<_>>();
    first.sort();
    assert_eq!(first, [1, 3], "owned partitions stay put");
}

#[test]
fn an_unknown_protocol_is_an_error_not_a_range_fallback() {
    let sub = Subscription { topics: vec!["t".into()], ..Subscription::default() };
    let (c, _) = group_with("my-custom", &[sub]);
    let err = c.perform_assignment("g", &partitions("t", 2)).unwrap_err();
    assert!(
        matches!(err, CoordinatorError::UnknownAssignor { ref protocol, .. } if protocol == "my-custom"),
        "{err}"
    );
    assert!(matches!(c.perform_assignment("nope", &[]), Err(CoordinatorError::UnknownGroup(_))));
}
