//! Every request has a `Pending`-returning method that never blocks the caller: the
//! admin requests' ones answer as their blocking twins, and an offset write trimmed
//! by authorization or the topic metadata is answered, merged, once the core's part
//! is durable, with no thread waiting for it.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use group_coordinator::{
    AclOperation, Authorizer, CoordinatorError, GroupCoordinator, ManualClock, Pending, Principal,
    RequestContext, Resource, TopicMetadata,
};
use group_offsets::MemoryMetadataStore;
use group_types::{
    DeleteGroupsRequest, DeleteGroupsResponse, DescribeGroupsRequest, DescribeGroupsResponse, ErrorCode,
    GroupState, ListGroupsRequest, ListGroupsResponse, OffsetCommitData, OffsetCommitRequest,
    OffsetCommitResponse, OffsetDeleteRequest, OffsetDeleteResponse,
};
use rstest::rstest;

use crate::support::{join, sync, test_config, until_held};

const SOON: Duration = Duration::from_secs(10);

/// Denies every operation on the listed resources (`group:x`, `topic:x`) to
/// `User:mallory`, allows everything else.
#[derive(Debug, Default)]
struct DenyMallory(Vec<String>);

impl Authorizer for DenyMallory {
    fn authorize(&self, context: &RequestContext, _: AclOperation, resource: Resource<'_>) -> bool {
        let key = match resource {
            Resource::Group(g) => format!("group:{g}"),
            Resource::Topic(t) => format!("topic:{t}"),
            _ => "cluster".to_owned(),
        };
        context.principal.name() != "mallory" || !self.0.contains(&key)
    }
}

/// Topic `t` with partitions 0 and 1, nothing else.
#[derive(Debug)]
struct OnlyT;

impl TopicMetadata for OnlyT {
    fn contains(&self, topic: &str, partition: i32) -> bool {
        topic == "t" && (0..2).contains(&partition)
    }
}

fn mallory() -> RequestContext {
    RequestContext::new(Principal::user("mallory"))
}

fn open(storage: &MemoryMetadataStore, denied: &[&str]) -> (GroupCoordinator, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(1_000));
    let c = GroupCoordinator::builder(Arc::new(storage.clone()), test_config())
        .clock(clock.clone())
        .authorizer(Arc::new(DenyMallory(denied.iter().map(|d| (*d).to_owned()).collect())))
        .topic_metadata(Arc::new(OnlyT))
        .open()
        .unwrap();
    (c, clock)
}

fn simple_commit(group: &str, partitions: &[(&str, i32)], offset: i64) -> OffsetCommitRequest {
    partitions.iter().fold(
        OffsetCommitRequest { group_id: group.into(), ..OffsetCommitRequest::default() },
        |request, (t, p)| request.with_offset(*t, *p, OffsetCommitData::new(offset)),
    )
}

/// Groups in every state the admin requests see: `stable` (one member), `empty-a`
/// and `empty-b` (simple groups with offsets), `joining` (PreparingRebalance).
fn populate(c: &GroupCoordinator, clock: &ManualClock) {
    let parked = c.join_group(group_types::JoinGroupRequest { api_version: 3, ..join("stable", "") });
    clock.advance(100);
    let joined = parked.wait().unwrap();
    let id = joined.member_id;
    assert_eq!(
        c.handle_sync_group(sync("stable", &id, 1, &[(id.as_str(), "a")])).unwrap().error_code,
        ErrorCode::None
    );
    for group in ["empty-a", "empty-b"] {
        c.handle_offset_commit(simple_commit(group, &[("t", 0)], 1)).unwrap();
    }
    let _parked = c.join_group(group_types::JoinGroupRequest { api_version: 3, ..join("joining", "") });
    assert_eq!(c.get_group("joining").map(|g| g.state), Some(GroupState::PreparingRebalance));
}

fn describe_request() -> DescribeGroupsRequest {
    let ids = ["stable", "empty-a", "missing", "joining", "stable", ""];
    DescribeGroupsRequest { group_ids: ids.iter().map(|g| (*g).into()).collect(), ..Default::default() }
}

fn delete_request() -> DeleteGroupsRequest {
    let ids = ["empty-a", "stable", "missing", "empty-a", "empty-b", "joining"];
    DeleteGroupsRequest { group_ids: ids.iter().map(|g| (*g).into()).collect() }
}

#[rstest]
#[case::anonymous(RequestContext::ANONYMOUS)]
#[case::denied_some(mallory())]
fn describe_groups_answers_as_its_blocking_twin(#[case] context: RequestContext) {
    let storage = MemoryMetadataStore::new();
    let (c, clock) = open(&storage, &["group:empty-a"]);
    populate(&c, &clock);
    let caller = c.caller(&context);
    let pending: Pending<DescribeGroupsResponse> = caller.describe_groups(describe_request());
    let blocking = caller.handle_describe_groups(describe_request()).unwrap();
    assert_eq!(pending.wait().unwrap(), blocking);
    assert_eq!(blocking.groups.len(), 6);
    let denied = blocking.groups[1].error_code;
    let expected = if context.principal.name() == "mallory" {
        ErrorCode::GroupAuthorizationFailed
    } else {
        ErrorCode::None
    };
    assert_eq!(denied, expected);
    // The coordinator's own methods are the anonymous caller's.
    assert_eq!(
        c.describe_groups(describe_request()).wait().unwrap(),
        c.handle_describe_groups(describe_request()).unwrap()
    );
}

#[rstest]
#[case::every_group(ListGroupsRequest::default())]
#[case::empty_ones(ListGroupsRequest { states_filter: vec!["empty".into()], ..ListGroupsRequest::default() })]
#[case::no_such_type(ListGroupsRequest { types_filter: vec!["consumer".into()], ..ListGroupsRequest::default() })]
fn list_groups_matching_answers_as_its_blocking_twin(#[case] request: ListGroupsRequest) {
    let storage = MemoryMetadataStore::new();
    let (c, clock) = open(&storage, &["cluster", "group:empty-b"]);
    populate(&c, &clock);
    // Listings read committed state: the twins must see the same writes.
    assert!(c.wait_for_writes(SOON));
    for context in [RequestContext::ANONYMOUS, mallory()] {
        let caller = c.caller(&context);
        let mut pending: Pending<ListGroupsResponse> = caller.list_groups_matching(request.clone());
        assert!(pending.is_ready(), "listing writes nothing: answered at once");
        let answer = pending.try_get().expect("ready").unwrap();
        assert_eq!(answer, caller.handle_list_groups(request.clone()).unwrap());
    }
    assert_eq!(
        c.list_groups_matching(request.clone()).wait().unwrap(),
        c.handle_list_groups(request).unwrap()
    );
}

#[test]
fn list_groups_keeps_its_meaning() {
    let storage = MemoryMetadataStore::new();
    let (c, clock) = open(&storage, &[]);
    populate(&c, &clock);
    assert!(c.wait_for_writes(SOON));
    let snapshots: Vec<String> = c.list_groups().into_iter().map(|g| g.group_id).collect();
    let listed: Vec<String> = c
        .list_groups_matching(ListGroupsRequest::default())
        .wait()
        .unwrap()
        .groups
        .into_iter()
        .map(|g| g.group_id.into())
        .collect();
    assert_eq!(snapshots, vec!["empty-a", "empty-b", "joining", "stable"]);
    assert_eq!(listed, snapshots);
}

#[rstest]
#[case::anonymous(RequestContext::ANONYMOUS)]
#[case::denied_some(mallory())]
fn delete_groups_answers_as_its_blocking_twin(#[case] context: RequestContext) {
    // Deleting changes what it deletes: the twins run on two coordinators set up
    // alike.
    let answers: Vec<DeleteGroupsResponse> = [true, false]
        .into_iter()
        .map(|pending| {
            let storage = MemoryMetadataStore::new();
            let (c, clock) = open(&storage, &["group:empty-b"]);
            populate(&c, &clock);
            let caller = c.caller(&context);
            let answer = if pending {
                caller.delete_groups(delete_request()).wait().unwrap()
            } else {
                caller.handle_delete_groups(delete_request()).unwrap()
            };
            assert!(c.get_group("empty-a").is_none());
            answer
        })
        .collect();
    assert_eq!(answers[0], answers[1]);
    let results: Vec<(&str, ErrorCode)> =
        answers[0].results.iter().map(|r| (r.group_id.as_str(), r.error_code)).collect();
    let empty_b = if context.principal.name() == "mallory" {
        ErrorCode::GroupAuthorizationFailed
    } else {
        ErrorCode::None
    };
    assert_eq!(
        results,
        vec![
            ("empty-a", ErrorCode::None),
            ("stable", ErrorCode::NonEmptyGroup),
            ("missing", ErrorCode::GroupIdNotFound),
            ("empty-b", empty_b),
            ("joining", ErrorCode::NonEmptyGroup),
        ]
    );
}

/// A commit of a good partition, a denied topic and an unknown partition.
fn trimmed_commit() -> OffsetCommitRequest {
    simple_commit("g", &[("t", 0), ("secret", 0), ("t", 9), ("ghost", 1)], 42)
}

fn assert_merged(answer: &OffsetCommitResponse) {
    let codes: BTreeMap<(&str, i32), ErrorCode> = answer.iter().map(|(t, p, c)| ((t, p), c)).collect();
    let expected: BTreeMap<(&str, i32), ErrorCode> = [
        (("ghost", 1), ErrorCode::UnknownTopicOrPartition),
        (("secret", 0), ErrorCode::TopicAuthorizationFailed),
        (("t", 0), ErrorCode::None),
        (("t", 9), ErrorCode::UnknownTopicOrPartition),
    ]
    .into_iter()
    .collect();
    assert_eq!(codes, expected);
}

#[test]
fn a_trimmed_commit_is_answered_merged_once_its_write_is_durable() {
    let storage = MemoryMetadataStore::new();
    let c = Arc::new(open(&storage, &["topic:secret"]).0);
    storage.hold_appends(true);
    // On another thread, so that a call blocking for the write fails the test
    // instead of hanging it.
    let (tx, rx) = std::sync::mpsc::channel();
    let caller = c.clone();
    std::thread::spawn(move || {
        let _ = tx.send(caller.caller(&mallory()).offset_commit(trimmed_commit()));
    });
    let mut pending = rx.recv_timeout(SOON).expect("the call returns while its write is held");
    assert!(!pending.is_ready(), "{pending:?}");
    until_held(&storage, 1);
    assert!(pending.try_get().is_none());
    assert!(pending.wait_timeout(Duration::from_millis(20)).is_none(), "not answered before it is durable");
    assert_eq!(c.get_committed_offset("g", "t", 0).unwrap(), -1, "not read before it is durable");

    assert!(storage.release_held(None, None));
    let answer = pending.wait_timeout(SOON).expect("answered once durable").unwrap();
    assert_merged(&answer);
    assert!(matches!(pending.try_get(), Some(Err(CoordinatorError::Internal(_)))), "answered once");
    assert_eq!(c.get_committed_offset("g", "t", 0).unwrap(), 42);
}

/// Counts its wake-ups.
#[derive(Debug, Default)]
struct CountingWaker(AtomicUsize);

impl Wake for CountingWaker {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn a_trimmed_commit_polled_as_a_future_wakes_its_task_once() {
    let storage = MemoryMetadataStore::new();
    let (c, _clock) = open(&storage, &["topic:secret"]);
    storage.hold_appends(true);
    let counter = Arc::new(CountingWaker::default());
    let waker = Waker::from(counter.clone());
    let mut cx = Context::from_waker(&waker);
    let mut pending = c.caller(&mallory()).offset_commit(trimmed_commit());

    assert!(Pin::new(&mut pending).poll(&mut cx).is_pending());
    until_held(&storage, 1);
    // Polled again meanwhile: still pending, and the waker is not stored twice.
    assert!(Pin::new(&mut pending).poll(&mut cx).is_pending());
    assert_eq!(counter.0.load(Ordering::SeqCst), 0);

    assert!(storage.release_held(None, None));
    let deadline = Instant::now() + SOON;
    while counter.0.load(Ordering::SeqCst) == 0 {
        assert!(Instant::now() < deadline, "never woken");
        std::thread::yield_now();
    }
    match Pin::new(&mut pending).poll(&mut cx) {
        Poll::Ready(answer) => assert_merged(&answer.unwrap()),
        Poll::Pending => panic!("woken but not ready"),
    }
    assert_eq!(counter.0.load(Ordering::SeqCst), 1, "woken exactly once");
}

#[test]
fn a_trimmed_offset_delete_waits_for_its_tombstones_without_blocking() {
    let storage = MemoryMetadataStore::new();
    let (c, _clock) = open(&storage, &["topic:secret"]);
    c.handle_offset_commit(simple_commit("g", &[("t", 0), ("t", 1)], 3)).unwrap();
    storage.hold_appends(true);
    let request = OffsetDeleteRequest {
        group_id: "g".into(),
        topics: [("t".to_owned(), vec![0, 5]), ("secret".to_owned(), vec![0])].into_iter().collect(),
    };
    let mut pending: Pending<OffsetDeleteResponse> = c.caller(&mallory()).offset_delete(request);
    assert!(!pending.is_ready());
    until_held(&storage, 1);
    assert!(storage.release_held(None, None));
    let answer = pending.wait_timeout(SOON).expect("answered once durable").unwrap();
    assert_eq!(answer.error_code, ErrorCode::None);
    assert_eq!(answer.partitions["t"][&0], ErrorCode::None);
    assert_eq!(answer.partitions["t"][&5], ErrorCode::UnknownTopicOrPartition);
    assert_eq!(answer.partitions["secret"][&0], ErrorCode::TopicAuthorizationFailed);
    assert_eq!(
        (c.get_committed_offset("g", "t", 0).unwrap(), c.get_committed_offset("g", "t", 1).unwrap()),
        (-1, 3)
    );
}

#[test]
fn delete_groups_over_two_partitions_is_answered_once_both_deletions_are_durable() {
    let storage = MemoryMetadataStore::new();
    let (c, _clock) = open(&storage, &[]);
    let first = "empty-a".to_owned();
    let second = (0..).map(|i| format!("other-{i}")).find(|g| c.shard_of(g) != c.shard_of(&first)).unwrap();
    for group in [&first, &second] {
        c.handle_offset_commit(simple_commit(group, &[("t", 0)], 1)).unwrap();
    }
    storage.hold_appends(true);
    let mut pending =
        c.delete_groups(DeleteGroupsRequest { group_ids: vec![first.clone().into(), second.clone().into()] });
    until_held(&storage, 2);
    assert!(!pending.is_ready());
    assert!(storage.release_held(None, None));
    assert!(pending.wait_timeout(Duration::from_millis(20)).is_none(), "one deletion is still held");
    assert!(storage.release_held(None, None));
    let answer = pending.wait_timeout(SOON).expect("answered once both are durable").unwrap();
    let results: Vec<(&str, ErrorCode)> =
        answer.results.iter().map(|r| (r.group_id.as_str(), r.error_code)).collect();
    assert_eq!(results, vec![(first.as_str(), ErrorCode::None), (second.as_str(), ErrorCode::None)]);
}

#[test]
fn a_stopped_coordinator_answers_every_pending_method_stopped() {
    let storage = MemoryMetadataStore::new();
    let (c, _clock) = open(&storage, &[]);
    c.stop();
    assert!(matches!(c.describe_groups(describe_request()).wait(), Err(CoordinatorError::Stopped)));
    assert!(matches!(
        c.list_groups_matching(ListGroupsRequest::default()).wait(),
        Err(CoordinatorError::Stopped)
    ));
    assert!(matches!(c.delete_groups(delete_request()).wait(), Err(CoordinatorError::Stopped)));
    assert!(matches!(
        c.caller(&mallory()).offset_commit(trimmed_commit()).wait(),
        Err(CoordinatorError::Stopped)
    ));
}

#[test]
fn pending_answers_can_move_to_and_be_shared_with_other_threads() {
    fn send_sync_static<T: Send + Sync + 'static>(_: &T) {}
    let storage = MemoryMetadataStore::new();
    let (c, _clock) = open(&storage, &["topic:secret"]);
    storage.hold_appends(true);
    let pending = c.caller(&mallory()).offset_commit(trimmed_commit());
    send_sync_static(&pending);
    send_sync_static(&c.describe_groups(describe_request()));
    let waiter = std::thread::spawn(move || pending.wait());
    until_held(&storage, 1);
    assert!(storage.release_held(None, None));
    assert_merged(&waiter.join().unwrap().unwrap());
}
