//! Share groups through the runtime: a heartbeat's share-partition
//! initialization goes to the node's `SharePersister` once durable, its answer
//! comes back through `share_group_state_initialized`, and the next heartbeat
//! assigns the partitions; share groups without a persister are refused at open.

use std::sync::{Arc, Mutex};

use group_coordinator::{
    AclOperation, Authorizer, CoordinatorConfig, GroupCoordinator, ManualClock, MetadataImage,
    RequestContext, Resource, SharePersister, TopicImage,
};
use group_offsets::MemoryMetadataStore;
use group_types::{
    DeleteGroupsRequest, DeleteShareGroupStateRequest, ErrorCode, GroupId, InitializeShareGroupStateRequest,
    MemberId, ShareGroupHeartbeatRequest, TopicId, TopicIdPartitions,
};

const FOO: TopicId = TopicId([3; 16]);
const BAR: TopicId = TopicId([4; 16]);

/// A share coordinator that keeps what it is asked, to answer when the test says.
#[derive(Debug, Default)]
struct Parked(
    Mutex<Vec<InitializeShareGroupStateRequest>>,
    Mutex<Vec<DeleteShareGroupStateRequest>>,
    Mutex<Vec<group_types::ReadShareGroupStateSummaryRequest>>,
);

impl SharePersister for Parked {
    fn initialize(&self, request: InitializeShareGroupStateRequest) {
        self.0.lock().unwrap().push(request);
    }

    fn delete_state(&self, request: DeleteShareGroupStateRequest) {
        self.1.lock().unwrap().push(request);
    }

    fn read_summary(&self, request: group_types::ReadShareGroupStateSummaryRequest) {
        self.2.lock().unwrap().push(request);
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

/// Denies READ and DESCRIBE on topic `bar`, and DELETE, READ and DESCRIBE on group `h`.
#[derive(Debug)]
struct OffsetsAcls;

impl Authorizer for OffsetsAcls {
    fn authorize(&self, _: &RequestContext, operation: AclOperation, resource: Resource<'_>) -> bool {
        !matches!(
            (operation, resource),
            (AclOperation::Read | AclOperation::Describe, Resource::Topic("bar"))
                | (AclOperation::Delete | AclOperation::Read | AclOperation::Describe, Resource::Group("h"))
        )
    }
}

/// A coordinator over topic foo (2 partitions) with [`OffsetsAcls`] and a
/// [`Parked`] persister.
fn with_offsets_acls() -> (GroupCoordinator, Arc<Parked>) {
    let persister = Arc::new(Parked::default());
    let coordinator = GroupCoordinator::builder(Arc::new(MemoryMetadataStore::new()), config())
        .clock(Arc::new(ManualClock::new(0)))
        .metadata_image(MetadataImage::new(
            1,
            [TopicImage::new(FOO, "foo", 2), TopicImage::new(BAR, "bar", 2)],
        ))
        .share_persister(persister.clone())
        .authorizer(Arc::new(OffsetsAcls))
        .open()
        .expect("opens");
    (coordinator, persister)
}

/// DeleteShareGroupOffsets through the runtime (`GroupCoordinatorService.deleteShareGroupOffsets`
/// with `KafkaApis`' ACLs): the initialized topic is asked deleted of the persister
/// once the deleting record is durable, the answer waits for the persister, a topic
/// the caller may not read is answered TOPIC_AUTHORIZATION_FAILED first, and a
/// group it may not delete GROUP_AUTHORIZATION_FAILED.
#[test]
fn deleting_share_offsets_waits_for_the_persister() {
    use group_types::DeleteShareGroupOffsetsRequest;

    let (coordinator, persister) = with_offsets_acls();
    coordinator.handle_share_group_heartbeat(heartbeat(0, Some(vec!["foo".into()]))).expect("joined");
    let asked = std::mem::take(&mut *persister.0.lock().unwrap());
    coordinator.share_group_state_initialized(&asked[0], true);
    coordinator.handle_share_group_heartbeat(heartbeat(1, None)).expect("assigned");
    let request = |group: &str| DeleteShareGroupOffsetsRequest {
        group_id: GroupId::from(group),
        topic_names: vec!["foo".into(), "bar".into()],
    };

    let r = coordinator.handle_delete_share_group_offsets(request("g")).expect("answered");
    assert_eq!(r.error_code, ErrorCode::NonEmptyGroup, "a member holds the group");
    let r = coordinator.handle_delete_share_group_offsets(request("h")).expect("answered");
    assert_eq!(r.error_code, ErrorCode::GroupAuthorizationFailed);

    coordinator.handle_share_group_heartbeat(heartbeat(-1, None)).expect("left");
    let pending = coordinator.delete_share_group_offsets(request("g"));
    assert!(coordinator.wait_for_writes(std::time::Duration::from_secs(5)));
    let asked = std::mem::take(&mut *persister.1.lock().unwrap());
    assert_eq!(asked.len(), 1, "the state deletion is asked: {asked:?}");
    assert_eq!(asked[0].topics.iter().map(|t| t.topic_id).collect::<Vec<_>>(), [FOO]);
    let state = coordinator.get_share_group("g").and_then(|g| g.share_state).expect("state");
    assert_eq!((state.initialized.len(), state.deleting.len()), (0, 1), "foo is deleting");
    coordinator.share_group_state_deleted_topics(&asked[0], Ok(&[(FOO, ErrorCode::None)]));
    let r = pending.wait().expect("answered");
    let topics: Vec<_> =
        r.responses.iter().map(|t| (t.topic_name.as_str(), t.topic_id, t.error_code)).collect();
    assert_eq!(
        topics,
        [("bar", TopicId::ZERO, ErrorCode::TopicAuthorizationFailed), ("foo", FOO, ErrorCode::None)],
        "denied topics first, then the coordinator's"
    );
    assert!(coordinator.wait_for_writes(std::time::Duration::from_secs(5)));
    let state = coordinator.get_share_group("g").and_then(|g| g.share_state).expect("state");
    assert!(state.deleting.is_empty(), "foo's state went: {state:?}");
}

/// AlterShareGroupOffsets through the runtime (`GroupCoordinatorService.alterShareGroupOffsets`
/// with `KafkaApis`' ACLs): the partitions are asked initialized at the given start
/// offsets and the bumped epoch once durable, the answer waits for the persister,
/// a topic the caller may not read is answered TOPIC_AUTHORIZATION_FAILED per
/// partition first, and a group it may not read GROUP_AUTHORIZATION_FAILED.
#[test]
fn altering_share_offsets_waits_for_the_persister() {
    use group_types::{AlterShareGroupOffsetsRequest, AlterShareOffsetsTopic, ShareStartOffset};

    let (coordinator, persister) = with_offsets_acls();
    let topic = |name: &str| AlterShareOffsetsTopic {
        topic_name: name.into(),
        partitions: vec![ShareStartOffset { partition_index: 1, start_offset: 42 }],
    };
    let request = |group: &str| AlterShareGroupOffsetsRequest {
        group_id: GroupId::from(group),
        topics: vec![topic("bar"), topic("foo")],
    };
    let r = coordinator.handle_alter_share_group_offsets(request("h")).expect("answered");
    assert_eq!(r.error_code, ErrorCode::GroupAuthorizationFailed);

    let pending = coordinator.alter_share_group_offsets(request("g"));
    assert!(coordinator.wait_for_writes(std::time::Duration::from_secs(5)));
    let asked = std::mem::take(&mut *persister.0.lock().unwrap());
    assert_eq!(asked.len(), 1, "the initialization is asked: {asked:?}");
    let p = &asked[0].topics[0].partitions[0];
    assert_eq!((asked[0].topics[0].topic_id, p.partition, p.state_epoch, p.start_offset), (FOO, 1, 1, 42));
    coordinator.share_group_state_initialized_partitions(&asked[0], Ok(&[(FOO, 1, ErrorCode::None)]));
    let r = pending.wait().expect("answered");
    let got: Vec<_> = r
        .responses
        .iter()
        .map(|t| {
            (t.topic_name.as_str(), t.topic_id, t.partitions[0].partition_index, t.partitions[0].error_code)
        })
        .collect();
    // A denied topic is named by its id in the metadata, as Kafka's `topicNamesToIds` names it.
    assert_eq!(got, [("bar", BAR, 1, ErrorCode::TopicAuthorizationFailed), ("foo", FOO, 1, ErrorCode::None)]);
    assert!(coordinator.wait_for_writes(std::time::Duration::from_secs(5)));
    let state = coordinator.get_share_group("g").and_then(|g| g.share_state).expect("state");
    assert_eq!((state.initializing.len(), state.initialized.len()), (0, 1), "{state:?}");
}

/// DescribeShareGroupOffsets through the runtime (`GroupCoordinatorService.describeShareGroupOffsets`
/// with `KafkaApis`' ACLs): split per group, each read of the persister's summary;
/// a named topic the caller may not describe is answered TOPIC_AUTHORIZATION_FAILED
/// after the others, a group it may not describe GROUP_AUTHORIZATION_FAILED.
#[test]
fn describing_share_offsets_reads_the_persister() {
    use group_types::{
        DescribeShareGroupOffsetsGroupRequest, DescribeShareGroupOffsetsRequest,
        ReadShareGroupStateSummaryResponse, ReadStateSummaryPartitionResult, ShareOffsetsTopicRequest,
        ShareStateTopic,
    };

    let (coordinator, persister) = with_offsets_acls();
    let topic = |name: &str| ShareOffsetsTopicRequest { topic_name: name.into(), partitions: vec![1] };
    let group = |id: &str| DescribeShareGroupOffsetsGroupRequest {
        group_id: GroupId::from(id),
        topics: Some(vec![topic("bar"), topic("foo")]),
    };
    let request = DescribeShareGroupOffsetsRequest { api_version: 0, groups: vec![group("h"), group("g")] };
    let pending = coordinator.describe_share_group_offsets(request);
    let asked = std::mem::take(&mut *persister.2.lock().unwrap());
    assert_eq!(asked.len(), 1, "g's summary is read: {asked:?}");
    assert_eq!((asked[0].group_id.as_str(), asked[0].topics[0].topic_id), ("g", FOO));
    let read = ReadStateSummaryPartitionResult {
        partition: 1,
        start_offset: 12,
        leader_epoch: 3,
        ..Default::default()
    };
    let summary = ReadShareGroupStateSummaryResponse::new(vec![ShareStateTopic::new(FOO, [read])]);
    coordinator.share_group_state_summary_read(&asked[0], Ok(&summary));
    let r = pending.wait().expect("answered");
    assert_eq!(r.groups.len(), 2);
    // `KafkaApis` sets the code alone on a group the caller may not describe.
    assert_eq!(
        (r.groups[0].group_id.as_str(), r.groups[0].error_code, r.groups[0].error_message.as_deref()),
        ("h", ErrorCode::GroupAuthorizationFailed, None)
    );
    let g = &r.groups[1];
    let got: Vec<_> = g
        .topics
        .iter()
        .map(|t| (t.topic_name.as_str(), t.partitions[0].start_offset, t.partitions[0].error_code))
        .collect();
    assert_eq!(got, [("foo", 12, ErrorCode::None), ("bar", -1, ErrorCode::TopicAuthorizationFailed)]);
}

/// A partition's end offset in [`Ends`]: (topic, partition) and the answer.
type EndOffset = ((&'static str, i32), Result<i64, ErrorCode>);

/// End offsets from a table, keeping what was asked.
#[derive(Debug, Default)]
struct Ends {
    offsets: Vec<EndOffset>,
    asked: Mutex<Vec<(TopicId, String, i32)>>,
}

impl group_coordinator::PartitionEndOffsets for Ends {
    fn latest_offsets(
        &self,
        partitions: &[group_coordinator::EndOffsetQuery],
    ) -> Vec<Result<i64, ErrorCode>> {
        let mut asked = self.asked.lock().unwrap();
        partitions
            .iter()
            .map(|q| {
                asked.push((q.topic_id, q.topic_name.to_string(), q.partition));
                let known = self.offsets.iter().find(|((t, p), _)| *t == &*q.topic_name && *p == q.partition);
                known.map_or(Err(ErrorCode::UnknownTopicOrPartition), |(_, end)| *end)
            })
            .collect()
    }
}

/// DescribeShareGroupOffsets' lag through the builder's `partition_end_offsets`
/// (`GroupCoordinatorService.computeShareGroupLagAndBuildResponse`): the end
/// offsets of the partitions whose lag can be computed are looked up, by the
/// image's names, and the lag is end - start - delivered; an end-offset error is
/// answered for its partition; a partition whose delivery complete count is -1
/// is not looked up. Without the seam every lag is -1.
#[test]
fn describing_share_offsets_computes_lag_from_end_offsets() {
    use group_types::{
        DescribeShareGroupOffsetsGroupRequest, DescribeShareGroupOffsetsRequest,
        ReadShareGroupStateSummaryResponse, ReadStateSummaryPartitionResult, ShareOffsetsTopicRequest,
        ShareStateTopic,
    };

    let ends = Arc::new(Ends {
        offsets: vec![(("foo", 0), Ok(50)), (("foo", 1), Err(ErrorCode::NotLeaderOrFollower))],
        ..Ends::default()
    });
    let open = |ends: Option<Arc<Ends>>| {
        let persister = Arc::new(Parked::default());
        let mut builder = GroupCoordinator::builder(Arc::new(MemoryMetadataStore::new()), config())
            .clock(Arc::new(ManualClock::new(0)))
            .metadata_image(MetadataImage::new(
                1,
                [TopicImage::new(FOO, "foo", 2), TopicImage::new(BAR, "bar", 2)],
            ))
            .share_persister(persister.clone());
        if let Some(ends) = ends {
            builder = builder.partition_end_offsets(ends);
        }
        (builder.open().expect("opens"), persister)
    };
    let describe = |coordinator: &GroupCoordinator, persister: &Parked| {
        let topics = vec![
            ShareOffsetsTopicRequest { topic_name: "foo".into(), partitions: vec![0, 1] },
            ShareOffsetsTopicRequest { topic_name: "bar".into(), partitions: vec![0] },
        ];
        let group =
            DescribeShareGroupOffsetsGroupRequest { group_id: GroupId::from("g"), topics: Some(topics) };
        let pending = coordinator.describe_share_group_offsets(DescribeShareGroupOffsetsRequest {
            api_version: 1,
            groups: vec![group],
        });
        let asked = std::mem::take(&mut *persister.2.lock().unwrap());
        assert_eq!(asked.len(), 1, "{asked:?}");
        let read = |partition, start_offset, delivery_complete_count| ReadStateSummaryPartitionResult {
            partition,
            start_offset,
            leader_epoch: 2,
            delivery_complete_count,
            ..Default::default()
        };
        let summary = ReadShareGroupStateSummaryResponse::new(vec![
            ShareStateTopic::new(FOO, [read(0, 10, 5), read(1, 3, 0)]),
            ShareStateTopic::new(BAR, [read(0, 7, -1)]),
        ]);
        coordinator.share_group_state_summary_read(&asked[0], Ok(&summary));
        let r = pending.wait().expect("answered");
        r.groups[0]
            .topics
            .iter()
            .flat_map(|t| {
                t.partitions
                    .iter()
                    .map(|p| (t.topic_name.clone(), p.partition_index, p.start_offset, p.lag, p.error_code))
            })
            .collect::<Vec<_>>()
    };
    let row = |t: &str, p, start, lag, code| (t.to_owned(), p, start, lag, code);

    let (coordinator, persister) = open(Some(ends.clone()));
    assert_eq!(
        describe(&coordinator, &persister),
        [
            row("foo", 0, 10, 35, ErrorCode::None),
            row("foo", 1, 0, -1, ErrorCode::NotLeaderOrFollower),
            row("bar", 0, 7, -1, ErrorCode::None),
        ]
    );
    assert_eq!(
        *ends.asked.lock().unwrap(),
        [(FOO, "foo".to_owned(), 0), (FOO, "foo".to_owned(), 1)],
        "bar-0's delivery complete count is unknown: not looked up"
    );

    let (coordinator, persister) = open(None);
    assert_eq!(
        describe(&coordinator, &persister),
        [
            row("foo", 0, 10, -1, ErrorCode::None),
            row("foo", 1, 3, -1, ErrorCode::None),
            row("bar", 0, 7, -1, ErrorCode::None),
        ],
        "without end offsets the lag is unknown"
    );
}

/// The hosted share coordinator's summary carries the delivery complete count
/// its initialization set (0 for a start offset given, as Kafka's
/// `ShareGroupOffset.fromRequest` sets it), so an altered group's lag is the end
/// offset less the start offset.
#[test]
fn the_hosted_share_coordinator_answers_lag_after_an_alter() {
    use group_types::{
        AlterShareGroupOffsetsRequest, AlterShareOffsetsTopic, DescribeShareGroupOffsetsGroupRequest,
        DescribeShareGroupOffsetsRequest, ShareStartOffset,
    };

    let ends =
        Arc::new(Ends { offsets: vec![(("foo", 0), Ok(100)), (("foo", 1), Ok(45))], ..Ends::default() });
    let coordinator = GroupCoordinator::builder(Arc::new(MemoryMetadataStore::new()), config())
        .metadata_image(MetadataImage::new(1, [TopicImage::new(FOO, "foo", 2)]))
        .partition_end_offsets(ends)
        .open()
        .expect("opens with the hosted share coordinator");
    let alter = AlterShareGroupOffsetsRequest {
        group_id: GroupId::from("g"),
        topics: vec![AlterShareOffsetsTopic {
            topic_name: "foo".into(),
            partitions: vec![
                ShareStartOffset { partition_index: 0, start_offset: 40 },
                ShareStartOffset { partition_index: 1, start_offset: 41 },
            ],
        }],
    };
    let r = coordinator.handle_alter_share_group_offsets(alter).expect("answered once initialized");
    assert_eq!(r.error_code, ErrorCode::None);
    assert!(coordinator.wait_for_writes(std::time::Duration::from_secs(5)));
    let group = DescribeShareGroupOffsetsGroupRequest { group_id: GroupId::from("g"), topics: None };
    let r = coordinator
        .handle_describe_share_group_offsets(DescribeShareGroupOffsetsRequest {
            api_version: 1,
            groups: vec![group],
        })
        .expect("answered once read");
    let got: std::collections::BTreeSet<_> = r.groups[0]
        .topics
        .iter()
        .flat_map(|t| t.partitions.iter().map(|p| (p.partition_index, p.start_offset, p.lag)))
        .collect();
    assert_eq!(got, [(0, 40, 60), (1, 41, 4)].into());
}

/// The three offset admin APIs against the hosted share coordinator, end to end:
/// an alter of a new group initializes its partitions at the given start offsets,
/// a description of every topic reads them back, a deletion removes their state,
/// and the next description has nothing to read.
#[test]
fn the_offset_admin_apis_against_the_hosted_share_coordinator() {
    use group_types::{
        AlterShareGroupOffsetsRequest, AlterShareOffsetsTopic, DeleteShareGroupOffsetsRequest,
        DescribeShareGroupOffsetsGroupRequest, DescribeShareGroupOffsetsRequest, ShareStartOffset,
    };

    let coordinator = GroupCoordinator::builder(Arc::new(MemoryMetadataStore::new()), config())
        .metadata_image(MetadataImage::new(1, [TopicImage::new(FOO, "foo", 2)]))
        .open()
        .expect("opens with the hosted share coordinator");
    let offsets = |start| {
        (0..2).map(move |p| ShareStartOffset { partition_index: p, start_offset: start + i64::from(p) })
    };
    let alter = AlterShareGroupOffsetsRequest {
        group_id: GroupId::from("g"),
        topics: vec![AlterShareOffsetsTopic { topic_name: "foo".into(), partitions: offsets(40).collect() }],
    };
    let r = coordinator.handle_alter_share_group_offsets(alter).expect("answered once initialized");
    assert_eq!(r.error_code, ErrorCode::None);
    assert!(r.responses[0].partitions.iter().all(|p| p.error_code == ErrorCode::None), "{r:?}");

    let describe = || {
        let group = DescribeShareGroupOffsetsGroupRequest { group_id: GroupId::from("g"), topics: None };
        let r = coordinator
            .handle_describe_share_group_offsets(DescribeShareGroupOffsetsRequest {
                api_version: 0,
                groups: vec![group],
            })
            .expect("answered once read");
        r.groups[0]
            .topics
            .iter()
            .flat_map(|t| {
                t.partitions.iter().map(|p| (t.topic_name.clone(), p.partition_index, p.start_offset))
            })
            .collect::<std::collections::BTreeSet<_>>()
    };
    // The initialized record follows the answer (Kafka does not wait for it either).
    assert!(coordinator.wait_for_writes(std::time::Duration::from_secs(5)));
    // In the order the share coordinator's partitions answered: compared as a set.
    assert_eq!(describe(), [("foo".to_owned(), 0, 40), ("foo".to_owned(), 1, 41)].into());

    let delete =
        DeleteShareGroupOffsetsRequest { group_id: GroupId::from("g"), topic_names: vec!["foo".into()] };
    let r = coordinator.handle_delete_share_group_offsets(delete).expect("answered once deleted");
    assert_eq!(r.error_code, ErrorCode::None);
    assert_eq!(
        r.responses.iter().map(|t| (t.topic_id, t.error_code)).collect::<Vec<_>>(),
        [(FOO, ErrorCode::None)]
    );
    assert!(describe().is_empty(), "no state left to describe");
}

/// Denies DESCRIBE on topic `foo` to `User:mallory`, allows everything else.
#[derive(Debug)]
struct MalloryCannotSeeFoo;

impl Authorizer for MalloryCannotSeeFoo {
    fn authorize(&self, context: &RequestContext, operation: AclOperation, resource: Resource<'_>) -> bool {
        let topic_foo = matches!(resource, Resource::Topic("foo"));
        context.principal.name() != "mallory" || !(topic_foo && operation == AclOperation::Describe)
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

    let mallory = RequestContext::new(group_coordinator::Principal::user("mallory"));
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
    // READ (3), DELETE (6), DESCRIBE (8), DESCRIBE_CONFIGS (10) and ALTER_CONFIGS (11):
    // every operation a group supports (`AclEntry.supportedOperations(GROUP)`).
    assert_eq!(g.authorized_operations, (1 << 3) | (1 << 6) | (1 << 8) | (1 << 10) | (1 << 11));
}
