//! The topic-metadata hook: partitions of an OffsetCommit or OffsetDelete that the
//! metadata does not know are answered `UNKNOWN_TOPIC_OR_PARTITION` after the topic
//! ACL check (`TOPIC_AUTHORIZATION_FAILED` first), never reach a group and are never
//! stored; OffsetFetch is not checked (Kafka's `KafkaApis`).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use group_coordinator::{
    AclOperation, Authorizer, GroupCoordinator, ManualClock, RequestContext, Resource, TopicMetadata,
};
use group_offsets::{MemoryMetadataStore, MetadataStore};
use group_types::{
    ErrorCode, OffsetCommitData, OffsetCommitRequest, OffsetDeleteRequest, OffsetFetchRequest,
};
use proptest::prelude::*;
use rstest::rstest;

use crate::support::test_config;

/// The cluster's topics and their partition counts; counts the questions asked.
#[derive(Debug, Default)]
struct Cluster {
    topics: BTreeMap<String, i32>,
    asked: AtomicUsize,
}

impl TopicMetadata for Cluster {
    fn contains(&self, topic: &str, partition: i32) -> bool {
        self.asked.fetch_add(1, Ordering::Relaxed);
        self.topics.get(topic).is_some_and(|count| (0..*count).contains(&partition))
    }
}

/// Denies READ on the listed topics to everyone; allows everything else.
#[derive(Debug, Default)]
struct DenyRead(BTreeSet<String>);

impl Authorizer for DenyRead {
    fn authorize(&self, _: &RequestContext, operation: AclOperation, resource: Resource<'_>) -> bool {
        !matches!((operation, resource), (AclOperation::Read, Resource::Topic(t)) if self.0.contains(t))
    }
}

/// A topic named for what the case table says about it: known to the metadata or
/// not, readable or not. Every known topic has partitions 0 and 1.
fn topic(authorized: bool, topic_known: bool) -> &'static str {
    match (authorized, topic_known) {
        (true, true) => "known",
        (true, false) => "ghost",
        (false, true) => "secret",
        (false, false) => "secret-ghost",
    }
}

fn partition(partition_known: bool) -> i32 {
    if partition_known { 0 } else { 7 }
}

/// An allowed, known partition: with it, a request always reaches the core.
const ANCHOR: (&str, i32) = ("anchor", 0);

struct Fixture {
    c: GroupCoordinator,
    storage: MemoryMetadataStore,
    cluster: Arc<Cluster>,
}

fn cluster() -> Cluster {
    let topics = [("known", 2), ("secret", 2), ("anchor", 1)];
    Cluster {
        topics: topics.iter().map(|(t, n)| ((*t).to_owned(), *n)).collect(),
        asked: AtomicUsize::new(0),
    }
}

fn deny() -> DenyRead {
    DenyRead(["secret", "secret-ghost"].iter().map(|t| (*t).to_owned()).collect())
}

/// A coordinator over `storage` with the case table's ACLs and metadata.
fn open(storage: MemoryMetadataStore, cluster: Cluster, deny: DenyRead) -> Fixture {
    let cluster = Arc::new(cluster);
    let c = GroupCoordinator::builder(Arc::new(storage.clone()), test_config())
        .clock(Arc::new(ManualClock::new(1_000)))
        .authorizer(Arc::new(deny))
        .topic_metadata(cluster.clone())
        .open()
        .unwrap();
    Fixture { c, storage, cluster }
}

fn fixture() -> Fixture {
    open(MemoryMetadataStore::new(), cluster(), deny())
}

/// A simple consumer's commit (generation -1) of every partition listed.
fn simple_commit(group: &str, partitions: &[(&str, i32)], offset: i64) -> OffsetCommitRequest {
    partitions.iter().fold(
        OffsetCommitRequest { group_id: group.into(), ..OffsetCommitRequest::default() },
        |request, (t, p)| request.with_offset(*t, *p, OffsetCommitData::new(offset)),
    )
}

fn offset_delete(group: &str, partitions: &[(&str, i32)]) -> OffsetDeleteRequest {
    let mut topics: BTreeMap<String, Vec<i32>> = BTreeMap::new();
    for (t, p) in partitions {
        topics.entry((*t).to_owned()).or_default().push(*p);
    }
    OffsetDeleteRequest { group_id: group.into(), topics }
}

impl Fixture {
    /// The partitions storage holds for `group`, once every write completed.
    fn stored(&self, group: &str) -> BTreeSet<(String, i32)> {
        assert!(self.c.wait_for_writes(Duration::from_secs(10)), "writes completed");
        let stored = self.storage.load_all().unwrap();
        stored
            .offsets
            .iter()
            .filter(|o| o.group_id == group)
            .flat_map(|o| o.offsets.iter().flat_map(|(t, ps)| ps.keys().map(move |p| (t.clone(), *p))))
            .collect()
    }

    /// What OffsetFetch reads for one partition: (offset, error).
    fn fetched(&self, group: &str, topic: &str, partition: i32) -> (i64, ErrorCode) {
        let request = OffsetFetchRequest::all(group).with_partition(topic, partition);
        let response = self.c.handle_offset_fetch(request).unwrap();
        assert_eq!(response.error_code, ErrorCode::None);
        let data = response.get(topic, partition).expect("every fetched partition is answered");
        (data.offset, data.error_code)
    }
}

fn set(partitions: &[(&str, i32)]) -> BTreeSet<(String, i32)> {
    partitions.iter().map(|(t, p)| ((*t).to_owned(), *p)).collect()
}

/// What a partition of a commit or a delete is answered, as Kafka checks it:
/// the topic ACL first (`KafkaApis`), then the topic metadata.
fn acl_then_metadata(authorized: bool, known: bool) -> ErrorCode {
    match (authorized, known) {
        (false, _) => ErrorCode::TopicAuthorizationFailed,
        (true, false) => ErrorCode::UnknownTopicOrPartition,
        (true, true) => ErrorCode::None,
    }
}

#[rstest]
fn offset_commit_checks_the_topic_acl_then_the_metadata(
    #[values(true, false)] authorized: bool,
    #[values(true, false)] topic_known: bool,
    #[values(true, false)] partition_known: bool,
) {
    let expected = acl_then_metadata(authorized, topic_known && partition_known);
    let f = fixture();
    let case = (topic(authorized, topic_known), partition(partition_known));
    let response = f.c.handle_offset_commit(simple_commit("g", &[case, ANCHOR], 5)).unwrap();
    assert_eq!(response.error_for(case.0, case.1), Some(expected));
    assert_eq!(response.error_for(ANCHOR.0, ANCHOR.1), Some(ErrorCode::None));
    assert_eq!(response.iter().count(), 2, "{response:?}");

    let kept = expected == ErrorCode::None;
    assert_eq!(f.c.get_committed_offset("g", case.0, case.1).unwrap(), if kept { 5 } else { -1 });
    // A partition never committed reads -1 without error, known or not.
    assert_eq!(f.fetched("g", case.0, case.1), (if kept { 5 } else { -1 }, ErrorCode::None));
    let expected_stored = if kept { set(&[case, ANCHOR]) } else { set(&[ANCHOR]) };
    assert_eq!(f.stored("g"), expected_stored);
    let unknown = u64::from(authorized && expected == ErrorCode::UnknownTopicOrPartition);
    let m = f.c.metrics();
    assert_eq!((m.unknown_topic_partitions, m.authorization_failures), (unknown, u64::from(!authorized)));
}

#[test]
fn a_mixed_commit_answers_every_partition_and_stores_only_the_known_allowed_ones() {
    let f = fixture();
    let mut partitions = vec![ANCHOR];
    for authorized in [true, false] {
        for topic_known in [true, false] {
            for partition_known in [true, false] {
                partitions.push((topic(authorized, topic_known), partition(partition_known)));
            }
        }
    }
    let response = f.c.handle_offset_commit(simple_commit("g", &partitions, 9)).unwrap();
    let codes: BTreeMap<(&str, i32), ErrorCode> =
        partitions.iter().map(|&(t, p)| ((t, p), response.error_for(t, p).unwrap())).collect();
    let expected: BTreeMap<(&str, i32), ErrorCode> = [
        (("anchor", 0), ErrorCode::None),
        (("known", 0), ErrorCode::None),
        (("known", 7), ErrorCode::UnknownTopicOrPartition),
        (("ghost", 0), ErrorCode::UnknownTopicOrPartition),
        (("ghost", 7), ErrorCode::UnknownTopicOrPartition),
        (("secret", 0), ErrorCode::TopicAuthorizationFailed),
        (("secret", 7), ErrorCode::TopicAuthorizationFailed),
        (("secret-ghost", 0), ErrorCode::TopicAuthorizationFailed),
        (("secret-ghost", 7), ErrorCode::TopicAuthorizationFailed),
    ]
    .into_iter()
    .collect();
    assert_eq!(codes, expected);
    assert_eq!(f.stored("g"), set(&[ANCHOR, ("known", 0)]));
    // Only the partitions of allowed topics were looked up.
    assert_eq!(f.cluster.asked.load(Ordering::Relaxed), 5);
}

#[test]
fn a_commit_of_only_unknown_partitions_never_reaches_the_coordinator() {
    let f = fixture();
    // A simple (generation -1) commit would create its group if it reached the core.
    let response = f.c.handle_offset_commit(simple_commit("junk", &[("ghost", 0), ("known", 9)], 1)).unwrap();
    assert_eq!(response.error_for("ghost", 0), Some(ErrorCode::UnknownTopicOrPartition));
    assert_eq!(response.error_for("known", 9), Some(ErrorCode::UnknownTopicOrPartition));
    assert!(f.c.get_group("junk").is_none());
    assert!(f.stored("junk").is_empty());
    assert_eq!(f.storage.append_count(), 0, "nothing was written at all");
}

#[test]
fn a_commit_by_a_member_is_checked_like_a_simple_one() {
    // The partition checks come before the member's: a stale member learns about
    // the unknown partition and the generation, each on its own partitions.
    let f = fixture();
    let request =
        OffsetCommitRequest { generation_id: 3, member_id: "nobody".into(), ..simple_commit("g", &[], 0) }
            .with_offset("ghost", 0, OffsetCommitData::new(1))
            .with_offset("anchor", 0, OffsetCommitData::new(1));
    let response = f.c.handle_offset_commit(request).unwrap();
    assert_eq!(response.error_for("ghost", 0), Some(ErrorCode::UnknownTopicOrPartition));
    assert_eq!(response.error_for("anchor", 0), Some(ErrorCode::GroupIdNotFound));
}

#[test]
fn offset_fetch_of_an_unknown_partition_reads_minus_one_without_asking_the_metadata() {
    let f = fixture();
    f.c.handle_offset_commit(simple_commit("g", &[ANCHOR], 3)).unwrap();
    let asked = f.cluster.asked.load(Ordering::Relaxed);
    assert_eq!(f.fetched("g", "ghost", 4), (-1, ErrorCode::None));
    assert_eq!(f.fetched("g", "known", 7), (-1, ErrorCode::None));
    assert_eq!(f.fetched("g", ANCHOR.0, ANCHOR.1), (3, ErrorCode::None));
    assert_eq!(f.cluster.asked.load(Ordering::Relaxed), asked);
}

/// Storage holding, for simple group "g", an offset for every case partition and
/// the anchor: junk committed before the node had topic metadata.
fn with_junk(partitions: &[(&str, i32)]) -> MemoryMetadataStore {
    let storage = MemoryMetadataStore::new();
    let before = GroupCoordinator::with_clock(
        Arc::new(storage.clone()),
        test_config(),
        Arc::new(ManualClock::new(1_000)),
    )
    .unwrap();
    let response = before.handle_offset_commit(simple_commit("g", partitions, 4)).unwrap();
    assert!(response.iter().all(|(_, _, c)| c == ErrorCode::None));
    before.stop();
    storage
}

#[rstest]
fn offset_delete_checks_the_topic_acl_then_the_metadata(
    #[values(true, false)] authorized: bool,
    #[values(true, false)] topic_known: bool,
    #[values(true, false)] partition_known: bool,
) {
    let expected = acl_then_metadata(authorized, topic_known && partition_known);
    let case = (topic(authorized, topic_known), partition(partition_known));
    let f = open(with_junk(&[case, ANCHOR]), cluster(), deny());
    let response = f.c.handle_offset_delete(offset_delete("g", &[case, ANCHOR])).unwrap();
    assert_eq!(response.error_code, ErrorCode::None);
    assert_eq!(response.partitions[case.0][&case.1], expected);
    assert_eq!(response.partitions[ANCHOR.0][&ANCHOR.1], ErrorCode::None);

    let deleted = expected == ErrorCode::None;
    assert_eq!(f.c.get_committed_offset("g", case.0, case.1).unwrap(), if deleted { -1 } else { 4 });
    assert_eq!(f.c.get_committed_offset("g", ANCHOR.0, ANCHOR.1).unwrap(), -1);
    assert_eq!(f.stored("g"), if deleted { BTreeSet::new() } else { set(&[case]) });
}

#[test]
fn offset_delete_with_nothing_left_still_asks_the_group() {
    // Kafka calls its coordinator whatever is left: the group's own error answers,
    // alone, as it would for a request of known partitions.
    let f = fixture();
    let response =
        f.c.handle_offset_delete(offset_delete("missing", &[("ghost", 0), ("secret", 0)])).unwrap();
    assert_eq!(response.error_code, ErrorCode::GroupIdNotFound);
    assert!(response.partitions.is_empty());

    let f = open(with_junk(&[("ghost", 0)]), cluster(), deny());
    let response = f.c.handle_offset_delete(offset_delete("g", &[("ghost", 0), ("secret", 1)])).unwrap();
    assert_eq!(response.error_code, ErrorCode::None);
    assert_eq!(response.partitions["ghost"][&0], ErrorCode::UnknownTopicOrPartition);
    assert_eq!(response.partitions["secret"][&1], ErrorCode::TopicAuthorizationFailed);
    assert_eq!(f.stored("g"), set(&[("ghost", 0)]));
}

#[test]
fn without_topic_metadata_every_partition_is_kept() {
    let storage = MemoryMetadataStore::new();
    let c = GroupCoordinator::builder(Arc::new(storage), test_config())
        .clock(Arc::new(ManualClock::new(0)))
        .open()
        .unwrap();
    let response = c.handle_offset_commit(simple_commit("g", &[("anything", 999)], 2)).unwrap();
    assert_eq!(response.error_for("anything", 999), Some(ErrorCode::None));
    assert_eq!(c.get_committed_offset("g", "anything", 999).unwrap(), 2);
    assert_eq!(c.metrics().unknown_topic_partitions, 0);
}

/// Kafka's answer for one partition of an offset write, from what is known about it.
fn kafka_rule(
    denied: &BTreeSet<String>,
    known: &BTreeMap<String, i32>,
    topic: &str,
    partition: i32,
) -> ErrorCode {
    if denied.contains(topic) {
        ErrorCode::TopicAuthorizationFailed
    } else if known.get(topic).is_some_and(|n| (0..*n).contains(&partition)) {
        ErrorCode::None
    } else {
        ErrorCode::UnknownTopicOrPartition
    }
}

const TOPICS: [&str; 4] = ["a", "b", "c", "d"];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Whatever the ACLs, the metadata and the request: every requested partition
    /// is answered once, by Kafka's rule, and storage holds exactly the partitions
    /// answered `NONE`.
    #[test]
    fn every_partition_is_answered_by_kafkas_rule_and_only_the_good_ones_stored(
        counts in proptest::collection::vec(0i32..3, TOPICS.len()),
        denied in proptest::collection::btree_set(0usize..TOPICS.len(), 0..3),
        requested in proptest::collection::btree_set((0usize..TOPICS.len(), -1i32..4), 1..10),
    ) {
        let known: BTreeMap<String, i32> =
            TOPICS.iter().zip(&counts).filter(|(_, n)| **n > 0).map(|(t, n)| ((*t).to_owned(), *n)).collect();
        let denied: BTreeSet<String> = denied.into_iter().map(|i| TOPICS[i].to_owned()).collect();
        let partitions: Vec<(&str, i32)> = requested.iter().map(|&(t, p)| (TOPICS[t], p)).collect();
        let f = open(
            MemoryMetadataStore::new(),
            Cluster { topics: known.clone(), asked: AtomicUsize::new(0) },
            DenyRead(denied.clone()),
        );
        let response = f.c.handle_offset_commit(simple_commit("g", &partitions, 1)).unwrap();
        let answered: BTreeSet<(String, i32)> =
            response.iter().map(|(t, p, _)| (t.to_owned(), p)).collect();
        prop_assert_eq!(&answered, &set(&partitions));
        let mut good = BTreeSet::new();
        for &(t, p) in &partitions {
            let expected = kafka_rule(&denied, &known, t, p);
            prop_assert_eq!(response.error_for(t, p), Some(expected), "{}-{}", t, p);
            if expected == ErrorCode::None {
                good.insert((t.to_owned(), p));
            }
        }
        prop_assert_eq!(f.stored("g"), good);
    }
}
