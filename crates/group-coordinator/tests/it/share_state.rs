//! The share coordinator the coordinator partitions host, through the runtime:
//! the share-state RPCs split by share partition key and merged, their writes
//! durable before the answer and undone when they fail, the state loaded again
//! by a coordinator reopened on the same store, and CLUSTER_ACTION asked first.

use std::sync::Arc;

use group_coordinator::{
    AclOperation, Authorizer, CoordinatorConfig, GroupCoordinator, ManualClock, MetadataImage,
    RequestContext, Resource, TopicImage,
};
use group_offsets::{MemoryMetadataStore, MetadataStore, StorageError};
use group_share_coordinator::SharePartitionKey;
use group_types::{
    ErrorCode, GroupId, InitializeShareGroupStateRequest, InitializeStatePartition,
    ReadShareGroupStateRequest, ReadShareGroupStateSummaryRequest, ReadStatePartition,
    ReadStateSummaryPartition, ShareStateTopic, StateBatch, TopicId, WriteShareGroupStateRequest,
    WriteStatePartition,
};

const FOO: TopicId = TopicId([7; 16]);
const PARTITIONS: i32 = 8;

fn open(store: &Arc<MemoryMetadataStore>) -> GroupCoordinator {
    GroupCoordinator::builder(store.clone(), CoordinatorConfig::default())
        .clock(Arc::new(ManualClock::new(1_000)))
        .metadata_image(MetadataImage::new(1, [TopicImage::new(FOO, "foo", PARTITIONS as u32)]))
        .open()
        .expect("opens")
}

fn initialize(group: &str, start_offset: i64) -> InitializeShareGroupStateRequest {
    let partitions =
        (0..PARTITIONS).map(|partition| InitializeStatePartition { partition, state_epoch: 0, start_offset });
    InitializeShareGroupStateRequest {
        api_version: 0,
        group_id: GroupId::from(group),
        topics: vec![ShareStateTopic::new(FOO, partitions)],
    }
}

fn write(group: &str, partition: i32, batch: StateBatch) -> WriteShareGroupStateRequest {
    let data = WriteStatePartition {
        partition,
        leader_epoch: 1,
        start_offset: batch.first_offset,
        state_batches: vec![batch],
        ..WriteStatePartition::default()
    };
    WriteShareGroupStateRequest {
        api_version: 0,
        group_id: GroupId::from(group),
        topics: vec![ShareStateTopic::new(FOO, [data])],
    }
}

/// Every partition's (partition, error, start offset, batches) of a read of all.
fn read_all(coordinator: &GroupCoordinator, group: &str) -> Vec<(i32, ErrorCode, i64, Vec<StateBatch>)> {
    let partitions = (0..PARTITIONS).map(|partition| ReadStatePartition { partition, leader_epoch: 1 });
    let request = ReadShareGroupStateRequest {
        api_version: 0,
        group_id: GroupId::from(group),
        topics: vec![ShareStateTopic::new(FOO, partitions)],
    };
    let r = coordinator.handle_read_share_group_state(request).expect("answered");
    assert_eq!(r.results.len(), 1, "one topic, merged from every coordinator partition");
    let mut all: Vec<_> = r.results[0]
        .partitions
        .iter()
        .map(|p| (p.partition, p.error_code, p.start_offset, p.state_batches.clone()))
        .collect();
    all.sort_by_key(|p| p.0);
    all
}

#[test]
fn share_state_is_split_by_key_written_and_read_back_merged() {
    let store = Arc::new(MemoryMetadataStore::new());
    let coordinator = open(&store);
    let keys: std::collections::BTreeSet<i32> = (0..PARTITIONS)
        .map(|p| SharePartitionKey::new("g", FOO, p).coordinator_partition(store.partition_count() as i32))
        .collect();
    assert!(keys.len() > 1, "the share partitions spread over coordinator partitions: {keys:?}");

    let r = coordinator.handle_initialize_share_group_state(initialize("g", 10)).expect("answered");
    let codes: Vec<ErrorCode> =
        r.results.iter().flat_map(|t| t.partitions.iter().map(|p| p.error_code)).collect();
    assert_eq!(codes, vec![ErrorCode::None; PARTITIONS as usize]);

    let batch = StateBatch::new(10, 19, 2, 1);
    let r = coordinator.handle_write_share_group_state(write("g", 3, batch)).expect("answered");
    assert_eq!(r.results[0].partitions[0].error_code, ErrorCode::None);

    let read = read_all(&coordinator, "g");
    for (partition, code, start, batches) in &read {
        assert_eq!(*code, ErrorCode::None, "partition {partition}");
        if *partition == 3 {
            assert_eq!((*start, batches.as_slice()), (10, &[batch][..]));
        } else {
            assert_eq!((*start, batches.len()), (10, 0));
        }
    }

    // Reopened on the same store, every coordinator partition loads its share state.
    coordinator.stop();
    drop(coordinator);
    let reopened = open(&store);
    assert_eq!(read_all(&reopened, "g"), read, "the state survives a restart");
}

/// Refuses every append while set.
#[test]
fn a_failed_write_answers_its_error_and_leaves_the_state_as_it_was() {
    let store = Arc::new(MemoryMetadataStore::new());
    let coordinator = open(&store);
    coordinator.handle_initialize_share_group_state(initialize("g", 0)).expect("answered");
    let before = read_all(&coordinator, "g");

    store.fail_writes(Some(StorageError::unavailable("disk gone")));
    let r = coordinator
        .handle_write_share_group_state(write("g", 1, StateBatch::new(0, 4, 2, 1)))
        .expect("answered");
    let failed = &r.results[0].partitions[0];
    assert_ne!(failed.error_code, ErrorCode::None, "the write failed: {failed:?}");
    store.fail_writes(None);

    assert_eq!(read_all(&coordinator, "g"), before, "the failed write was undone");
    let r = coordinator
        .handle_write_share_group_state(write("g", 1, StateBatch::new(0, 4, 2, 1)))
        .expect("answered");
    assert_eq!(r.results[0].partitions[0].error_code, ErrorCode::None, "the store recovered");
}

#[test]
fn the_service_checks_come_before_any_partition() {
    let store = Arc::new(MemoryMetadataStore::new());
    let coordinator = open(&store);
    // An empty group id: Kafka answers an empty response.
    let r = coordinator.handle_initialize_share_group_state(initialize("", 0)).expect("answered");
    assert!(r.results.is_empty(), "{r:?}");
    // A summary of a share partition with no state: start offset -1.
    let request = ReadShareGroupStateSummaryRequest {
        api_version: 0,
        group_id: GroupId::from("g"),
        topics: vec![ShareStateTopic::new(
            FOO,
            [ReadStateSummaryPartition { partition: 2, leader_epoch: 0 }],
        )],
    };
    let r = coordinator.handle_read_share_group_state_summary(request).expect("answered");
    let p = &r.results[0].partitions[0];
    assert_eq!((p.error_code, p.start_offset), (ErrorCode::None, -1));
}

/// Denies CLUSTER_ACTION, allows the rest.
#[derive(Debug)]
struct NoClusterAction;

impl Authorizer for NoClusterAction {
    fn authorize(&self, _: &RequestContext, operation: AclOperation, resource: Resource<'_>) -> bool {
        !(operation == AclOperation::ClusterAction && resource == Resource::Cluster)
    }
}

#[test]
fn the_share_state_rpcs_need_cluster_action() {
    let coordinator =
        GroupCoordinator::builder(Arc::new(MemoryMetadataStore::new()), CoordinatorConfig::default())
            .clock(Arc::new(ManualClock::new(0)))
            .authorizer(Arc::new(NoClusterAction))
            .metadata_image(MetadataImage::new(1, [TopicImage::new(FOO, "foo", PARTITIONS as u32)]))
            .open()
            .expect("opens");
    let r = coordinator.handle_initialize_share_group_state(initialize("g", 0)).expect("answered");
    let codes: Vec<ErrorCode> =
        r.results.iter().flat_map(|t| t.partitions.iter().map(|p| p.error_code)).collect();
    assert_eq!(codes, vec![ErrorCode::ClusterAuthorizationFailed; PARTITIONS as usize]);
    assert_eq!(read_all(&coordinator, "g")[0].1, ErrorCode::ClusterAuthorizationFailed);
}

/// A coordinator partition that moves to another node takes its share state and its
/// share groups along: the new owner loads both from the store.
#[test]
fn share_state_and_share_groups_move_with_their_partitions() {
    let store = Arc::new(MemoryMetadataStore::new());
    let mut config = CoordinatorConfig::default();
    config.share.enabled = true;
    let node = |store: &Arc<MemoryMetadataStore>| {
        GroupCoordinator::builder(store.clone(), config.clone())
            .clock(Arc::new(ManualClock::new(1_000)))
            .metadata_image(MetadataImage::new(1, [TopicImage::new(FOO, "foo", PARTITIONS as u32)]))
            .managed_ownership()
            .open()
            .expect("opens")
    };
    let all = || (0..store.partition_count()).map(group_offsets::CoordinatorPartition);
    let first = node(&store);
    for p in all() {
        first.load_partition(p, group_offsets::OwnerEpoch(1)).expect("loads");
    }
    first.handle_initialize_share_group_state(initialize("g", 5)).expect("answered");
    first.handle_write_share_group_state(write("g", 6, StateBatch::new(5, 9, 2, 1))).expect("answered");
    // Another group: its own initializations (on the hosted persister's thread) would
    // reset "g"'s share partitions, as Kafka's would, at a moment of their choosing.
    let joined = first
        .handle_share_group_heartbeat(group_types::ShareGroupHeartbeatRequest {
            group_id: GroupId::from("sg"),
            member_id: group_types::MemberId::from("m1"),
            member_epoch: 0,
            subscribed_topic_names: Some(vec!["foo".into()]),
            ..Default::default()
        })
        .expect("answered");
    assert_eq!(joined.error_code, ErrorCode::None);
    let before = read_all(&first, "g");
    for p in all() {
        first.unload_partition(p);
    }

    let stored = store.load_all().expect("loads");
    // "g"'s only: "sg"'s initializations may or may not have landed by now.
    let kept = stored
        .consumer
        .iter()
        .filter(|r| r.record_type() == group_offsets::record_type::SHARE_STATE && &**r.group_id() == "g")
        .count();
    assert_eq!(kept, PARTITIONS as usize, "every share partition's state is stored");
    let second = node(&store);
    for p in all() {
        second.load_partition(p, group_offsets::OwnerEpoch(2)).expect("loads");
    }
    assert_eq!(read_all(&second, "g"), before, "the share state moved");
    assert_eq!(before[6].3, [StateBatch::new(5, 9, 2, 1)]);
    let group = second.get_share_group("sg").expect("the share group moved");
    assert_eq!(group.members.len(), 1);
}

/// A deleted topic's share state goes (`maybeCleanupShareState`): tombstones in every
/// coordinator partition holding some of it, so a restart finds none.
#[test]
fn a_deleted_topics_share_state_goes() {
    let store = Arc::new(MemoryMetadataStore::new());
    let coordinator = open(&store);
    coordinator.handle_initialize_share_group_state(initialize("g", 0)).expect("answered");
    let stored = |store: &MemoryMetadataStore| {
        let all = store.load_all().expect("loads");
        all.consumer.iter().filter(|r| r.record_type() == group_offsets::record_type::SHARE_STATE).count()
    };
    assert_eq!(stored(&store), PARTITIONS as usize);
    coordinator.update_metadata_image(MetadataImage::new(2, []));
    assert!(coordinator.wait_for_writes(std::time::Duration::from_secs(5)));
    assert_eq!(stored(&store), 0, "every share partition of the deleted topic is gone");
}

/// With `ShareStateRouting::WithGroup` every share partition of a group lives in the
/// group's own coordinator partition, and `share_partition_of` says so.
#[test]
fn share_state_routed_with_its_group_lives_in_the_groups_partition() {
    let store = Arc::new(MemoryMetadataStore::new());
    let coordinator = GroupCoordinator::builder(store.clone(), CoordinatorConfig::default())
        .clock(Arc::new(ManualClock::new(1_000)))
        .metadata_image(MetadataImage::new(1, [TopicImage::new(FOO, "foo", PARTITIONS as u32)]))
        .share_state_routing(group_coordinator::ShareStateRouting::WithGroup)
        .open()
        .expect("opens");
    coordinator.handle_initialize_share_group_state(initialize("g", 3)).expect("answered");
    let home = store.partition_of("g");
    for p in 0..PARTITIONS {
        assert_eq!(coordinator.share_partition_of(&SharePartitionKey::new("g", FOO, p)), home);
    }
    let held = store.load(home).expect("loads").groups.consumer;
    let states = held.iter().filter(|r| r.record_type() == group_offsets::record_type::SHARE_STATE).count();
    assert_eq!(states, PARTITIONS as usize, "every share partition's state is in the group's partition");
    assert!(
        read_all(&coordinator, "g").iter().all(|(_, code, start, _)| (*code, *start) == (ErrorCode::None, 3))
    );
}
