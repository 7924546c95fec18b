//! Share groups through the runtime: a heartbeat's share-partition
//! initialization goes to the node's `SharePersister` once durable, its answer
//! comes back through `share_group_state_initialized`, and the next heartbeat
//! assigns the partitions; share groups without a persister are refused at open.

use std::sync::{Arc, Mutex};

use group_coordinator::{
    CoordinatorConfig, GroupCoordinator, ManualClock, MetadataImage, SharePersister, TopicImage,
};
use group_offsets::MemoryMetadataStore;
use group_types::{
    DeleteGroupsRequest, DeleteShareGroupStateRequest, ErrorCode, GroupId, InitializeShareGroupStateRequest,
    MemberId, ShareGroupHeartbeatRequest, TopicId, TopicIdPartitions,
};

const FOO: TopicId = TopicId([3; 16]);

/// A share coordinator that keeps what it is asked, to answer when the test says.
#[derive(Debug, Default)]
struct Parked(Mutex<Vec<InitializeShareGroupStateRequest>>, Mutex<Vec<DeleteShareGroupStateRequest>>);

impl SharePersister for Parked {
    fn initialize(&self, request: InitializeShareGroupStateRequest) {
        self.0.lock().unwrap().push(request);
    }

    fn delete_state(&self, request: DeleteShareGroupStateRequest) {
        self.1.lock().unwrap().push(request);
    }
}

fn config() -> CoordinatorConfig {
    let mut config = CoordinatorConfig::default();
    config.share.enabled = true;
    config
}

fn heartbeat(epoch: i32, topics: Option<Vec<String>>) -> ShareGroupHeartbeatRequest {
    ShareGroupHeartbeatRequest {
        group_id: GroupId::from("g"),
        member_id: MemberId::from("m1"),
        member_epoch: epoch,
        subscribed_topic_names: topics,
        client_id: "c".into(),
        client_host: "/h".into(),
        ..ShareGroupHeartbeatRequest::default()
    }
}

#[test]
fn an_initialization_goes_to_the_persister_and_its_answer_assigns_the_partitions() {
    let persister = Arc::new(Parked::default());
    let coordinator = GroupCoordinator::builder(Arc::new(MemoryMetadataStore::new()), config())
        .clock(Arc::new(ManualClock::new(0)))
        .metadata_image(MetadataImage::new(1, [TopicImage::new(FOO, "foo", 4)]))
        .share_persister(persister.clone())
        .open()
        .expect("opens");
    let r =
        coordinator.handle_share_group_heartbeat(heartbeat(0, Some(vec!["foo".into()]))).expect("answered");
    assert_eq!((r.error_code, r.member_epoch), (ErrorCode::None, 1));
    assert_eq!(r.assignment, Some(Vec::new()), "nothing is initialized yet");
    let asked = std::mem::take(&mut *persister.0.lock().unwrap());
    assert_eq!(asked.len(), 1, "the heartbeat asked once: {asked:?}");
    assert_eq!(asked[0].group_id.as_str(), "g");
    let partitions: Vec<i32> = asked[0].topics[0].partitions.iter().map(|p| p.partition).collect();
    assert_eq!(partitions, [0, 1, 2, 3]);

    // The next heartbeat neither assigns nor asks again while the answer is out.
    let r = coordinator.handle_share_group_heartbeat(heartbeat(1, None)).expect("answered");
    assert_eq!(r.member_epoch, 1);
    assert!(persister.0.lock().unwrap().is_empty());

    coordinator.share_group_state_initialized(&asked[0], true);
    assert!(coordinator.wait_for_writes(std::time::Duration::from_secs(5)));
    let r = coordinator.handle_share_group_heartbeat(heartbeat(1, None)).expect("answered");
    assert_eq!(r.member_epoch, 2, "the initialized partitions bump the group");
    assert_eq!(r.assignment, Some(vec![TopicIdPartitions::new(FOO, 0..4)]));

    // The topic is deleted: its share state goes before the image changes.
    coordinator.update_metadata_image(MetadataImage::new(2, []));
    assert!(coordinator.wait_for_writes(std::time::Duration::from_secs(5)));
    let state = coordinator.get_share_group("g").and_then(|g| g.share_state).expect("a state record");
    assert!(state.initialized.is_empty(), "{state:?}");
    let r = coordinator.handle_share_group_heartbeat(heartbeat(2, None)).expect("answered");
    assert_eq!((r.member_epoch, r.assignment), (3, Some(Vec::new())), "the next heartbeat drops the topic");
}

/// DeleteGroups of an empty share group waits for the share coordinator to
/// delete its state; a failed deletion keeps the group and answers the error.
#[test]
fn deleting_a_share_group_waits_for_its_state_to_go() {
    let persister = Arc::new(Parked::default());
    let coordinator = GroupCoordinator::builder(Arc::new(MemoryMetadataStore::new()), config())
        .clock(Arc::new(ManualClock::new(0)))
        .metadata_image(MetadataImage::new(1, [TopicImage::new(FOO, "foo", 2)]))
        .share_persister(persister.clone())
        .open()
        .expect("opens");
    coordinator.handle_share_group_heartbeat(heartbeat(0, Some(vec!["foo".into()]))).expect("joined");
    let asked = std::mem::take(&mut *persister.0.lock().unwrap());
    coordinator.share_group_state_initialized(&asked[0], true);
    coordinator.handle_share_group_heartbeat(heartbeat(1, None)).expect("assigned");
    coordinator.handle_share_group_heartbeat(heartbeat(-1, None)).expect("left");
    let delete = || coordinator.delete_groups(DeleteGroupsRequest { group_ids: vec![GroupId::from("g")] });

    let pending = delete();
    assert!(coordinator.wait_for_writes(std::time::Duration::from_secs(5)));
    let asked = std::mem::take(&mut *persister.1.lock().unwrap());
    assert_eq!(asked.len(), 1, "the state deletion is asked: {asked:?}");
    let state = coordinator.get_share_group("g").and_then(|g| g.share_state).expect("state");
    assert_eq!((state.initialized.len(), state.deleting.len()), (0, 1), "foo is deleting");
    coordinator.share_group_state_deleted(&asked[0], Err(ErrorCode::CoordinatorNotAvailable));
    let r = pending.wait().expect("answered");
    assert_eq!(r.results[0].error_code, ErrorCode::CoordinatorNotAvailable);
    assert!(coordinator.get_share_group("g").is_some(), "a failed state deletion keeps the group");

    let pending = delete();
    assert!(coordinator.wait_for_writes(std::time::Duration::from_secs(5)));
    let asked = std::mem::take(&mut *persister.1.lock().unwrap());
    assert_eq!(asked.len(), 1, "asked again, deleting topics retried");
    coordinator.share_group_state_deleted(&asked[0], Ok(()));
    let r = pending.wait().expect("answered");
    assert_eq!(r.results[0].error_code, ErrorCode::None);
    assert!(coordinator.get_share_group("g").is_none());
}

#[test]
fn share_groups_without_a_persister_use_the_hosted_share_coordinator() {
    let coordinator = GroupCoordinator::builder(Arc::new(MemoryMetadataStore::new()), config())
        .metadata_image(MetadataImage::new(1, [TopicImage::new(FOO, "foo", 4)]))
        .open()
        .expect("opens with the hosted share coordinator");
    let r =
        coordinator.handle_share_group_heartbeat(heartbeat(0, Some(vec!["foo".into()]))).expect("answered");
    assert_eq!((r.error_code, r.member_epoch, r.assignment), (ErrorCode::None, 1, Some(Vec::new())));
    // The hosted persister answers on its own thread; the group's state record follows.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let assigned = loop {
        let r = coordinator
            .handle_share_group_heartbeat(heartbeat(r.member_epoch.max(1), None))
            .expect("answered");
        if r.assignment.as_ref().is_some_and(|a| !a.is_empty()) || std::time::Instant::now() > deadline {
            break r;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    assert_eq!(assigned.assignment, Some(vec![TopicIdPartitions::new(FOO, 0..4)]));
    assert_eq!(assigned.member_epoch, 2);
}

/// Denies DESCRIBE on topic `foo` to `User:mallory`, allows everything else.
#[derive(Debug)]
struct MalloryCannotSeeFoo;

impl group_coordinator::Authorizer for MalloryCannotSeeFoo {
    fn authorize(
        &self,
        context: &group_coordinator::RequestContext,
        operation: group_coordinator::AclOperation,
        resource: group_coordinator::Resource<'_>,
    ) -> bool {
        let topic_foo = matches!(resource, group_coordinator::Resource::Topic("foo"));
        context.principal.name() != "mallory"
            || !(topic_foo && operation == group_coordinator::AclOperation::Describe)
    }
}

/// `KafkaApis`' topic checks of the share APIs: a heartbeat subscribing to a topic the
/// caller may not describe, and a description of a group holding one, are
/// TOPIC_AUTHORIZATION_FAILED (the description with Kafka's message and no members).
#[test]
fn share_apis_hide_topics_the_caller_may_not_describe() {
    let coordinator = GroupCoordinator::builder(Arc::new(MemoryMetadataStore::new()), config())
        .metadata_image(MetadataImage::new(1, [TopicImage::new(FOO, "foo", 2)]))
        .authorizer(Arc::new(MalloryCannotSeeFoo))
        .open()
        .expect("opens");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut r =
        coordinator.handle_share_group_heartbeat(heartbeat(0, Some(vec!["foo".into()]))).expect("answered");
    while r.assignment.as_ref().is_none_or(|a| a.is_empty()) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(5));
        r = coordinator.handle_share_group_heartbeat(heartbeat(r.member_epoch, None)).expect("answered");
    }
    assert_eq!(r.assignment, Some(vec![TopicIdPartitions::new(FOO, 0..2)]), "the member holds foo");

    let mallory = group_coordinator::RequestContext::new(group_coordinator::Principal::user("mallory"));
    let as_mallory = coordinator.caller(&mallory);
    let mut join = heartbeat(0, Some(vec!["foo".into()]));
    join.member_id = MemberId::from("m2");
    let refused = as_mallory.handle_share_group_heartbeat(join).expect("answered");
    assert_eq!(refused.error_code, ErrorCode::TopicAuthorizationFailed);

    let describe = group_types::ShareGroupDescribeRequest {
        group_ids: vec![GroupId::from("g")],
        include_authorized_operations: true,
    };
    let hidden = as_mallory.handle_share_group_describe(describe.clone()).expect("answered");
    let g = &hidden.groups[0];
    assert_eq!(g.error_code, ErrorCode::TopicAuthorizationFailed);
    assert!(g.members.is_empty() && g.error_message.as_deref().is_some_and(|m| m.contains("not authorized")));

    let seen = coordinator.handle_share_group_describe(describe).expect("answered");
    let g = &seen.groups[0];
    assert_eq!((g.error_code, g.members.len()), (ErrorCode::None, 1));
    // READ (3), DELETE (6) and DESCRIBE (8) on the group.
    assert_eq!(g.authorized_operations, (1 << 3) | (1 << 6) | (1 << 8));
}
