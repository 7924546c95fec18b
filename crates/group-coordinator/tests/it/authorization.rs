//! Authorization through the runtime: every request allowed and denied, the ACL
//! operation each one asks for, and proof that a denied request changes nothing.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use group_coordinator::{
    AclOperation, Authorizer, GroupCoordinator, ManualClock, Principal, RequestContext, Resource,
};
use group_offsets::{MemoryMetadataStore, MetadataStore};
use group_types::{
    DeleteGroupsRequest, DescribeGroupsRequest, ErrorCode, GroupState, JoinGroupRequest, ListGroupsRequest,
    OffsetCommitData, OffsetCommitRequest, OffsetDeleteRequest, OffsetFetchRequest,
};

use crate::support::{commit, heartbeat, join, leave, sync, test_config};

/// One ACL as the tests write it: (principal name, operation, resource).
type Acl = (String, AclOperation, String);

fn resource_key(resource: Resource<'_>) -> String {
    match resource {
        Resource::Group(g) => format!("group:{g}"),
        Resource::Topic(t) => format!("topic:{t}"),
        Resource::Cluster => "cluster".to_owned(),
        Resource::TransactionalId(t) => format!("transactional-id:{t}"),
        _ => "other".to_owned(),
    }
}

/// Allows everything except the listed ACLs, and records every question asked.
#[derive(Debug, Default)]
struct DenyList {
    denied: Mutex<Vec<Acl>>,
    asked: Mutex<Vec<(String, String, AclOperation, String)>>,
}

impl DenyList {
    fn deny(&self, principal: &str, operation: AclOperation, resource: &str) {
        self.denied.lock().unwrap().push((principal.to_owned(), operation, resource.to_owned()));
    }

    /// The questions asked since the last call: (principal, host, operation, resource).
    fn take_asked(&self) -> Vec<(String, String, AclOperation, String)> {
        std::mem::take(&mut *self.asked.lock().unwrap())
    }
}

impl Authorizer for DenyList {
    fn authorize(&self, context: &RequestContext, operation: AclOperation, resource: Resource<'_>) -> bool {
        let key = resource_key(resource);
        let principal = context.principal.to_string();
        self.asked.lock().unwrap().push((
            principal.clone(),
            context.client_host.clone(),
            operation,
            key.clone(),
        ));
        !self.denied.lock().unwrap().iter().any(|(p, o, r)| *p == principal && *o == operation && *r == key)
    }
}

struct Fixture {
    c: GroupCoordinator,
    clock: Arc<ManualClock>,
    storage: MemoryMetadataStore,
    acls: Arc<DenyList>,
    alice: RequestContext,
    mallory: RequestContext,
}

fn fixture() -> Fixture {
    let storage = MemoryMetadataStore::new();
    let clock = Arc::new(ManualClock::new(1_000));
    let acls = Arc::new(DenyList::default());
    let c = GroupCoordinator::builder(Arc::new(storage.clone()), test_config())
        .clock(clock.clone())
        .authorizer(acls.clone())
        .open()
        .unwrap();
    let alice = RequestContext {
        principal: Principal::user("alice"),
        client_id: "consumer".into(),
        client_host: "10.0.0.1".into(),
    };
    let mallory = RequestContext::new(Principal::user("mallory"));
    Fixture { c, clock, storage, acls, alice, mallory }
}

fn join_v3(group: &str) -> JoinGroupRequest {
    JoinGroupRequest { api_version: 3, ..join(group, "") }
}

impl Fixture {
    /// Alice alone in Stable group `group`, generation 1; returns her member id.
    fn stable(&self, group: &str) -> String {
        let pending = self.c.caller(&self.alice).join_group(join_v3(group));
        self.clock.advance(100);
        let joined = pending.wait().unwrap();
        assert_eq!(joined.error_code, ErrorCode::None);
        let id = joined.member_id;
        let synced =
            self.c.caller(&self.alice).handle_sync_group(sync(group, &id, 1, &[(id.as_str(), "a")])).unwrap();
        assert_eq!(synced.error_code, ErrorCode::None);
        assert_eq!(self.c.get_group(group).unwrap().state, GroupState::Stable);
        id.to_string()
    }

    /// What storage holds once every write the coordinator issued so far
    /// completed (a denied request that wrote anyway would show up here).
    fn stored(&self) -> group_offsets::StoredGroups {
        assert!(self.c.wait_for_writes(Duration::from_secs(10)), "writes completed");
        self.storage.load_all().unwrap()
    }

    fn stored_offsets(&self, group: &str) -> usize {
        let stored = self.stored();
        stored
            .offsets
            .iter()
            .filter(|o| o.group_id == group)
            .map(|o| o.offsets.values().map(|p| p.len()).sum::<usize>())
            .sum()
    }
}

#[test]
fn every_request_asks_kafkas_acl_operations_with_the_callers_context() {
    let f = fixture();
    let id = f.stable("g");
    let alice = f.c.caller(&f.alice);
    let group = |op| ("User:alice".to_owned(), "10.0.0.1".to_owned(), op, "group:g".to_owned());
    let topic = |op, t: &str| ("User:alice".to_owned(), "10.0.0.1".to_owned(), op, format!("topic:{t}"));
    f.acls.take_asked();

    alice.handle_heartbeat(heartbeat("g", &id, 1)).unwrap();
    assert_eq!(f.acls.take_asked(), vec![group(AclOperation::Read)]);
    alice.handle_sync_group(sync("g", &id, 1, &[])).unwrap();
    assert_eq!(f.acls.take_asked(), vec![group(AclOperation::Read)]);
    let request = commit("g", &id, 1, 5).with_offset("u", 1, OffsetCommitData::new(6));
    alice.handle_offset_commit(request).unwrap();
    assert_eq!(
        f.acls.take_asked(),
        vec![group(AclOperation::Read), topic(AclOperation::Read, "t"), topic(AclOperation::Read, "u")]
    );
    alice.handle_offset_fetch(OffsetFetchRequest::all("g").with_partition("t", 0)).unwrap();
    assert_eq!(f.acls.take_asked(), vec![group(AclOperation::Describe), topic(AclOperation::Describe, "t")]);
    alice
        .handle_describe_groups(DescribeGroupsRequest { group_ids: vec!["g".into()], ..Default::default() })
        .unwrap();
    assert_eq!(f.acls.take_asked(), vec![group(AclOperation::Describe)]);
    alice.handle_list_groups(ListGroupsRequest::default()).unwrap();
    let asked = f.acls.take_asked();
    assert_eq!(asked[0].2, AclOperation::Describe);
    assert_eq!(asked[0].3, "cluster");
    let offset_delete =
        OffsetDeleteRequest { group_id: "g".into(), topics: [("u".to_owned(), vec![1])].into() };
    alice.handle_offset_delete(offset_delete).unwrap();
    assert_eq!(f.acls.take_asked(), vec![group(AclOperation::Delete), topic(AclOperation::Read, "u")]);
    alice.handle_leave_group(leave("g", &id)).unwrap();
    assert_eq!(f.acls.take_asked(), vec![group(AclOperation::Read)]);
    alice.handle_delete_groups(DeleteGroupsRequest { group_ids: vec!["g".into()] }).unwrap();
    assert_eq!(f.acls.take_asked(), vec![group(AclOperation::Delete)]);
    let pending = alice.join_group(join_v3("g"));
    assert_eq!(f.acls.take_asked(), vec![group(AclOperation::Read)]);
    f.clock.advance(100);
    assert_eq!(pending.wait().unwrap().error_code, ErrorCode::None);
}

#[test]
fn denied_group_membership_requests_change_nothing() {
    let f = fixture();
    let id = f.stable("g");
    f.acls.deny("User:mallory", AclOperation::Read, "group:g");
    let mallory = f.c.caller(&f.mallory);
    f.clock.advance(10);
    let before = f.c.get_group("g").unwrap();

    let joined = mallory.handle_join_group(join_v3("g")).unwrap();
    assert_eq!(joined.error_code, ErrorCode::GroupAuthorizationFailed);
    assert_eq!(joined.member_id, "");
    assert_eq!(joined.generation_id, -1);
    // Even the leader's own id: a rejoin by the leader would start a rebalance.
    let rejoin = mallory
        .handle_join_group(JoinGroupRequest { member_id: id.as_str().into(), ..join_v3("g") })
        .unwrap();
    assert_eq!(rejoin.error_code, ErrorCode::GroupAuthorizationFailed);
    let synced = mallory.handle_sync_group(sync("g", &id, 1, &[(id.as_str(), "stolen")])).unwrap();
    assert_eq!(synced.error_code, ErrorCode::GroupAuthorizationFailed);
    assert!(synced.assignment.is_empty());
    let beat = mallory.handle_heartbeat(heartbeat("g", &id, 1)).unwrap();
    assert_eq!(beat.error_code, ErrorCode::GroupAuthorizationFailed);
    let left = mallory.handle_leave_group(leave("g", &id)).unwrap();
    assert_eq!(left.error_code, ErrorCode::GroupAuthorizationFailed);
    assert!(left.members.is_empty());

    // Same members, state, generation, assignment and session deadline (a heartbeat
    // that reached the core would have moved it).
    assert_eq!(f.c.get_group("g").unwrap(), before);
    assert_eq!(f.c.metrics().authorization_failures, 5);
    // Alice is unaffected.
    assert_eq!(
        f.c.caller(&f.alice).handle_heartbeat(heartbeat("g", &id, 1)).unwrap().error_code,
        ErrorCode::None
    );
}

#[test]
fn denied_join_does_not_create_the_group() {
    let f = fixture();
    f.acls.deny("User:mallory", AclOperation::Read, "group:new");
    let joined = f.c.caller(&f.mallory).handle_join_group(join("new", "")).unwrap();
    assert_eq!(joined.error_code, ErrorCode::GroupAuthorizationFailed);
    // From v7 the protocol name of an error answer is null; before it is "".
    assert_eq!(joined.protocol_name, None);
    assert!(f.c.get_group("new").is_none());
    assert!(f.stored().groups.is_empty());
}

#[test]
fn offset_commit_denied_on_the_group_stores_nothing() {
    let f = fixture();
    let id = f.stable("g");
    f.acls.deny("User:mallory", AclOperation::Read, "group:g");
    let request = commit("g", &id, 1, 42).with_offset("u", 3, OffsetCommitData::new(7));
    let response = f.c.caller(&f.mallory).handle_offset_commit(request).unwrap();
    assert_eq!(response.error_for("t", 0), Some(ErrorCode::GroupAuthorizationFailed));
    assert_eq!(response.error_for("u", 3), Some(ErrorCode::GroupAuthorizationFailed));
    assert_eq!(f.c.get_committed_offset("g", "t", 0).unwrap(), -1);
    assert_eq!(f.stored_offsets("g"), 0);
}

#[test]
fn offset_commit_denied_on_one_topic_commits_the_others() {
    let f = fixture();
    let id = f.stable("g");
    f.acls.deny("User:alice", AclOperation::Read, "topic:secret");
    let request = commit("g", &id, 1, 42).with_offset("secret", 0, OffsetCommitData::new(9)).with_offset(
        "secret",
        1,
        OffsetCommitData::new(9),
    );
    let response = f.c.caller(&f.alice).handle_offset_commit(request).unwrap();
    assert_eq!(response.error_for("t", 0), Some(ErrorCode::None));
    assert_eq!(response.error_for("secret", 0), Some(ErrorCode::TopicAuthorizationFailed));
    assert_eq!(response.error_for("secret", 1), Some(ErrorCode::TopicAuthorizationFailed));
    assert_eq!(f.c.get_committed_offset("g", "t", 0).unwrap(), 42);
    assert_eq!(f.c.get_committed_offset("g", "secret", 0).unwrap(), -1);
    assert_eq!(f.stored_offsets("g"), 1);
    assert_eq!(f.c.metrics().authorization_failures, 1);
}

#[test]
fn offset_commit_with_every_topic_denied_never_reaches_the_coordinator() {
    let f = fixture();
    f.acls.deny("User:alice", AclOperation::Read, "topic:t");
    // A simple (generation -1) commit would create the group if it reached the core.
    let request = OffsetCommitRequest { group_id: "simple".into(), ..OffsetCommitRequest::default() }
        .with_offset("t", 0, OffsetCommitData::new(1));
    let response = f.c.caller(&f.alice).handle_offset_commit(request).unwrap();
    assert_eq!(response.error_for("t", 0), Some(ErrorCode::TopicAuthorizationFailed));
    assert!(f.c.get_group("simple").is_none());
    assert_eq!(f.stored_offsets("simple"), 0);
}

#[test]
fn offset_fetch_checks_describe_on_group_and_topics() {
    let f = fixture();
    let id = f.stable("g");
    let request = commit("g", &id, 1, 42).with_offset("secret", 0, OffsetCommitData::new(9));
    f.c.caller(&f.alice).handle_offset_commit(request).unwrap();

    f.acls.deny("User:mallory", AclOperation::Describe, "group:g");
    let denied = f.c.caller(&f.mallory).handle_offset_fetch(OffsetFetchRequest::all("g")).unwrap();
    assert_eq!(denied.error_code, ErrorCode::GroupAuthorizationFailed);
    assert!(denied.offsets.is_empty());

    f.acls.deny("User:alice", AclOperation::Describe, "topic:secret");
    let alice = f.c.caller(&f.alice);
    let named = alice
        .handle_offset_fetch(OffsetFetchRequest::all("g").with_partition("t", 0).with_partition("secret", 0));
    let named = named.unwrap();
    assert_eq!(named.error_code, ErrorCode::None);
    assert_eq!(named.get("t", 0).unwrap().offset, 42);
    let secret = named.get("secret", 0).unwrap();
    assert_eq!((secret.offset, secret.error_code), (-1, ErrorCode::TopicAuthorizationFailed));
    // Fetching every offset leaves out the topics the caller may not describe.
    let all = alice.handle_offset_fetch(OffsetFetchRequest::all("g")).unwrap();
    assert_eq!(all.offsets.keys().collect::<Vec<_>>(), vec!["t"]);
    // Nothing was lost: the anonymous default principal still sees both.
    let everything = f.c.handle_offset_fetch(OffsetFetchRequest::all("g")).unwrap();
    assert_eq!(everything.get("secret", 0).unwrap().offset, 9);
}

#[test]
fn describe_groups_answers_denied_groups_in_request_order() {
    let f = fixture();
    f.stable("a");
    f.stable("b");
    f.acls.deny("User:mallory", AclOperation::Describe, "group:a");
    let request =
        DescribeGroupsRequest { group_ids: vec!["a".into(), "b".into(), "a".into()], ..Default::default() };
    let response = f.c.caller(&f.mallory).handle_describe_groups(request).unwrap();
    let shown: Vec<_> =
        response.groups.iter().map(|g| (g.group_id.as_str(), g.error_code, g.group_state.as_str())).collect();
    assert_eq!(
        shown,
        vec![
            ("a", ErrorCode::GroupAuthorizationFailed, ""),
            ("b", ErrorCode::None, "Stable"),
            ("a", ErrorCode::GroupAuthorizationFailed, ""),
        ]
    );
    assert!(response.groups[0].members.is_empty());
}

#[test]
fn list_groups_shows_only_describable_groups_without_cluster_describe() {
    let f = fixture();
    f.stable("a");
    f.stable("b");
    f.stable("c");
    let names = |ctx: &RequestContext| -> Vec<String> {
        let listed = f.c.caller(ctx).handle_list_groups(ListGroupsRequest::default()).unwrap();
        listed.groups.into_iter().map(|g| g.group_id.into()).collect()
    };
    // Cluster DESCRIBE lists every group, whatever the group ACLs.
    f.acls.deny("User:mallory", AclOperation::Describe, "group:b");
    assert_eq!(names(&f.mallory), vec!["a", "b", "c"]);
    f.acls.deny("User:mallory", AclOperation::Describe, "cluster");
    assert_eq!(names(&f.mallory), vec!["a", "c"]);
    assert_eq!(names(&f.alice), vec!["a", "b", "c"]);
    // Filtering a list is not a failure.
    assert_eq!(f.c.metrics().authorization_failures, 0);
}

#[test]
fn delete_groups_denied_keeps_the_group() {
    let f = fixture();
    for group in ["a", "b"] {
        let request = OffsetCommitRequest { group_id: group.into(), ..OffsetCommitRequest::default() }
            .with_offset("t", 0, OffsetCommitData::new(1));
        f.c.caller(&f.alice).handle_offset_commit(request).unwrap();
    }
    f.acls.deny("User:mallory", AclOperation::Delete, "group:a");
    let request = DeleteGroupsRequest { group_ids: vec!["a".into(), "b".into()] };
    let response = f.c.caller(&f.mallory).handle_delete_groups(request).unwrap();
    let results: Vec<_> = response.results.iter().map(|r| (r.group_id.as_str(), r.error_code)).collect();
    assert_eq!(results, vec![("a", ErrorCode::GroupAuthorizationFailed), ("b", ErrorCode::None)]);
    assert!(f.c.get_group("a").is_some());
    assert_eq!(f.c.get_committed_offset("a", "t", 0).unwrap(), 1);
    assert_eq!(f.stored_offsets("a"), 1);
    assert!(f.c.get_group("b").is_none());
}

#[test]
fn offset_delete_needs_delete_on_group_and_read_on_topics() {
    let f = fixture();
    let request = OffsetCommitRequest { group_id: "g".into(), ..OffsetCommitRequest::default() }
        .with_offset("t", 0, OffsetCommitData::new(1))
        .with_offset("u", 0, OffsetCommitData::new(2));
    f.c.caller(&f.alice).handle_offset_commit(request).unwrap();
    let both = || OffsetDeleteRequest {
        group_id: "g".into(),
        topics: [("t".to_owned(), vec![0]), ("u".to_owned(), vec![0])].into(),
    };

    f.acls.deny("User:mallory", AclOperation::Delete, "group:g");
    let denied = f.c.caller(&f.mallory).handle_offset_delete(both()).unwrap();
    assert_eq!(denied.error_code, ErrorCode::GroupAuthorizationFailed);
    assert!(denied.partitions.is_empty());
    assert_eq!(f.stored_offsets("g"), 2);

    f.acls.deny("User:alice", AclOperation::Read, "topic:u");
    let partial = f.c.caller(&f.alice).handle_offset_delete(both()).unwrap();
    assert_eq!(partial.error_code, ErrorCode::None);
    assert_eq!(partial.partitions["t"][&0], ErrorCode::None);
    assert_eq!(partial.partitions["u"][&0], ErrorCode::TopicAuthorizationFailed);
    assert_eq!(f.c.get_committed_offset("g", "t", 0).unwrap(), -1);
    assert_eq!(f.c.get_committed_offset("g", "u", 0).unwrap(), 2);
    assert_eq!(f.stored_offsets("g"), 1);
}

#[test]
fn methods_without_a_context_act_as_the_anonymous_principal() {
    let f = fixture();
    let id = f.stable("g");
    assert_eq!(Principal::ANONYMOUS.to_string(), "User:ANONYMOUS");
    f.acls.take_asked();
    assert_eq!(f.c.handle_heartbeat(heartbeat("g", &id, 1)).unwrap().error_code, ErrorCode::None);
    let asked = f.acls.take_asked();
    assert_eq!(
        asked,
        vec![("User:ANONYMOUS".to_owned(), String::new(), AclOperation::Read, "group:g".to_owned())]
    );
    f.acls.deny("User:ANONYMOUS", AclOperation::Read, "group:g");
    let beat = f.c.handle_heartbeat(heartbeat("g", &id, 1)).unwrap();
    assert_eq!(beat.error_code, ErrorCode::GroupAuthorizationFailed);
    let pending = f.c.heartbeat(heartbeat("g", &id, 1));
    assert_eq!(pending.wait().unwrap().error_code, ErrorCode::GroupAuthorizationFailed);
}

#[test]
fn the_default_authorizer_allows_everything() {
    let storage = Arc::new(MemoryMetadataStore::new());
    let clock = Arc::new(ManualClock::new(0));
    let c = GroupCoordinator::with_clock(storage, test_config(), clock).unwrap();
    let mallory = RequestContext::new(Principal::user("mallory"));
    let request = OffsetCommitRequest { group_id: "g".into(), ..OffsetCommitRequest::default() }.with_offset(
        "t",
        0,
        OffsetCommitData::new(1),
    );
    let response = c.caller(&mallory).handle_offset_commit(request).unwrap();
    assert_eq!(response.error_for("t", 0), Some(ErrorCode::None));
    let listed = c.caller(&mallory).handle_list_groups(ListGroupsRequest::default()).unwrap();
    assert_eq!(listed.groups.len(), 1);
    assert_eq!(c.metrics().authorization_failures, 0);
}

/// KIP-848: a consumer heartbeat needs READ on the group and DESCRIBE on every
/// subscribed topic; ConsumerGroupDescribe hides groups holding topics the caller
/// may not describe, and reports authorized operations when asked.
#[test]
fn consumer_protocol_requests_are_authorized_per_group_and_topic() {
    use group_coordinator::{MetadataImage, TopicImage};
    use group_types::{ConsumerGroupDescribeRequest, ConsumerGroupHeartbeatRequest, TopicId};
    let acls = Arc::new(DenyList::default());
    let image = MetadataImage::new(1, [TopicImage::new(TopicId::from_u128(1), "t", 2)]);
    let c = GroupCoordinator::builder(Arc::new(MemoryMetadataStore::new()), test_config())
        .clock(Arc::new(ManualClock::new(1_000)))
        .authorizer(acls.clone())
        .metadata_image(image)
        .open()
        .unwrap();
    let alice = RequestContext::new(Principal::user("alice"));
    let bob = RequestContext::new(Principal::user("bob"));
    let join = |member: &str| ConsumerGroupHeartbeatRequest {
        group_id: "g".into(),
        member_id: member.into(),
        rebalance_timeout_ms: 1_000,
        subscribed_topic_names: Some(vec!["t".into()]),
        topic_partitions: Some(Vec::new()),
        ..ConsumerGroupHeartbeatRequest::default()
    };
    acls.deny("User:bob", AclOperation::Read, "group:g");
    let r = c.caller(&bob).handle_consumer_group_heartbeat(join("b")).unwrap();
    assert_eq!(r.error_code, ErrorCode::GroupAuthorizationFailed);
    acls.deny("User:alice", AclOperation::Describe, "topic:t");
    let r = c.caller(&alice).handle_consumer_group_heartbeat(join("a")).unwrap();
    assert_eq!(r.error_code, ErrorCode::TopicAuthorizationFailed);
    let r = c.handle_consumer_group_heartbeat(join("anon")).unwrap();
    assert_eq!((r.error_code, r.member_epoch), (ErrorCode::None, 1));
    let describe = ConsumerGroupDescribeRequest {
        group_ids: vec!["g".into()],
        include_authorized_operations: true,
        ..Default::default()
    };
    let seen = c.caller(&alice).handle_consumer_group_describe(describe.clone()).unwrap();
    assert_eq!(seen.groups[0].error_code, ErrorCode::TopicAuthorizationFailed);
    assert!(seen.groups[0].members.is_empty());
    let seen = c.caller(&bob).handle_consumer_group_describe(describe).unwrap();
    assert_eq!(seen.groups[0].error_code, ErrorCode::None);
    // DESCRIBE (8), DELETE (6), DESCRIBE_CONFIGS (10) and ALTER_CONFIGS (11) but not
    // READ (3), which bob is denied.
    assert_eq!(seen.groups[0].authorized_operations, (1 << 8) | (1 << 6) | (1 << 10) | (1 << 11));
    c.stop();
}

/// A regex resolves over the topics its triggering member may describe (§6.1).
#[test]
fn a_regex_resolves_only_to_topics_the_member_may_describe() {
    use group_coordinator::{MetadataImage, TopicImage};
    use group_types::{ConsumerGroupHeartbeatRequest, TopicId};
    let acls = Arc::new(DenyList::default());
    let image = MetadataImage::new(
        1,
        [
            TopicImage::new(TopicId::from_u128(1), "foo-a", 2),
            TopicImage::new(TopicId::from_u128(2), "foo-b", 2),
        ],
    );
    let c = GroupCoordinator::builder(Arc::new(MemoryMetadataStore::new()), test_config())
        .clock(Arc::new(ManualClock::new(1_000)))
        .authorizer(acls.clone())
        .metadata_image(image)
        .open()
        .unwrap();
    acls.deny("User:alice", AclOperation::Describe, "topic:foo-b");
    let alice = RequestContext::new(Principal::user("alice"));
    let join = ConsumerGroupHeartbeatRequest {
        group_id: "g".into(),
        member_id: "a".into(),
        rebalance_timeout_ms: 1_000,
        subscribed_topic_regex: Some("foo-.*".into()),
        topic_partitions: Some(Vec::new()),
        ..ConsumerGroupHeartbeatRequest::default()
    };
    let r = c.caller(&alice).handle_consumer_group_heartbeat(join).unwrap();
    assert_eq!(r.error_code, ErrorCode::None);
    let g = c.get_consumer_group("g").expect("a consumer group");
    assert_eq!(g.regexes, vec![("foo-.*".to_owned(), vec!["foo-a".to_owned()])]);
    c.stop();
}

/// `KafkaApis.handleTxnOffsetCommitRequest`'s checks in order: WRITE on the
/// transactional id, READ on the group, READ on each topic; and
/// `handleWriteTxnMarkersRequest`'s CLUSTER_ACTION on the cluster. A denied
/// request leaves nothing pending and commits nothing.
#[test]
fn transactional_offsets_ask_the_transactional_id_the_group_the_topics_and_the_cluster() {
    use group_types::{TransactionResult, TxnOffsetCommitRequest, WriteTxnMarkersRequest};
    let f = fixture();
    let txn = |id: &str| {
        TxnOffsetCommitRequest {
            transactional_id: id.to_owned(),
            group_id: "g".into(),
            producer_id: 7,
            ..Default::default()
        }
        .with_offset("t", 0, OffsetCommitData::new(5))
        .with_offset("secret", 0, OffsetCommitData::new(5))
    };
    f.acls.deny("User:mallory", AclOperation::Write, "transactional-id:tx-m");
    f.acls.deny("User:mallory", AclOperation::Read, "group:g");
    f.acls.deny("User:alice", AclOperation::Read, "topic:secret");
    let denied = f.c.caller(&f.mallory).handle_txn_offset_commit(txn("tx-m")).unwrap();
    assert!(denied.iter().all(|(_, _, c)| c == ErrorCode::TransactionalIdAuthorizationFailed), "{denied:?}");
    let denied = f.c.caller(&f.mallory).handle_txn_offset_commit(txn("tx-other")).unwrap();
    assert!(denied.iter().all(|(_, _, c)| c == ErrorCode::GroupAuthorizationFailed), "{denied:?}");
    assert!(f.c.get_group("g").is_none(), "a denied commit makes no group");

    let answer = f.c.caller(&f.alice).handle_txn_offset_commit(txn("tx-a")).unwrap();
    assert_eq!(answer.error_for("t", 0), Some(ErrorCode::None));
    assert_eq!(answer.error_for("secret", 0), Some(ErrorCode::TopicAuthorizationFailed));
    let asked: Vec<(AclOperation, String)> =
        f.acls.take_asked().into_iter().map(|(_, _, o, r)| (o, r)).collect();
    assert!(asked.contains(&(AclOperation::Write, "transactional-id:tx-a".to_owned())), "{asked:?}");

    let shard = i32::try_from(f.c.shard_of("g")).unwrap();
    let marker = || WriteTxnMarkersRequest::one(7, TransactionResult::Commit, &[shard]);
    f.acls.deny("User:mallory", AclOperation::ClusterAction, "cluster");
    let refused = f.c.caller(&f.mallory).handle_write_txn_markers(marker()).unwrap();
    assert!(refused.iter().all(|(_, _, _, c)| c == ErrorCode::ClusterAuthorizationFailed), "{refused:?}");
    assert_eq!(f.c.get_committed_offset("g", "t", 0).unwrap(), -1, "still pending");
    let written = f.c.caller(&f.alice).handle_write_txn_markers(marker()).unwrap();
    assert!(written.iter().all(|(_, _, _, c)| c == ErrorCode::None), "{written:?}");
    assert_eq!(f.c.get_committed_offset("g", "t", 0).unwrap(), 5);
}
