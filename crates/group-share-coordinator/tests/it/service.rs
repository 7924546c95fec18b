//! Kafka's `ShareCoordinatorServiceTest`, the parts about the service's own
//! checks, the split of a request into one shard call per share partition, the
//! merge of the answers, and routing (`testPartitionFor`). Kafka's results are
//! `HashSet`s of topic results; here they keep request order, so they are compared
//! as lists.

use std::collections::HashSet;

use group_share_coordinator::{
    NOT_AVAILABLE_MESSAGE, ShareCoordinatorConfig, ShareCoordinatorService, SharePartitionKey, Split,
    TopicsImage, split_delete, split_initialize, split_read, split_read_summary, split_write,
};
use group_types::{
    DeleteShareGroupStateRequest, DeleteStatePartition, ErrorCode, GroupId, InitializeShareGroupStateRequest,
    InitializeStatePartition, ReadShareGroupStateRequest, ReadShareGroupStateSummaryRequest,
    ReadStatePartition, ReadStatePartitionResult, ReadStateSummaryPartition, ReadStateSummaryPartitionResult,
    ShareStatePartitionResult, ShareStateRequest, ShareStateResponse, ShareStateTopic, StateBatch, TopicId,
    WriteShareGroupStateRequest, WriteStatePartition,
};
use rstest::rstest;

const T1: TopicId = TopicId::from_u128(0xA1);
const T2: TopicId = TopicId::from_u128(0xB2);

/// The five APIs.
#[derive(Debug, Clone, Copy)]
enum Api {
    Initialize,
    Read,
    Write,
    Delete,
    Summary,
}

/// A request for group `group` over `topics` (topic id, partitions), each
/// partition's data made by `data`.
fn request<P>(group: &str, topics: &[(TopicId, Vec<i32>)], data: impl Fn(i32) -> P) -> ShareStateRequest<P> {
    let topics =
        topics.iter().map(|(id, ps)| ShareStateTopic::new(*id, ps.iter().map(|&p| data(p)))).collect();
    ShareStateRequest { api_version: 0, group_id: GroupId::from(group), topics }
}

/// (shard calls, the answer's number of topic results) of a split.
fn shape<P, R>(split: Split<P, ShareStateResponse<R, P>>) -> (usize, Option<usize>) {
    match split {
        Split::Calls(calls) => (calls.len(), None),
        Split::Answered(answer) => (0, Some(answer.results.len())),
    }
}

fn split_of(api: Api, group: &str, topics: &[(TopicId, Vec<i32>)], active: bool) -> (usize, Option<usize>) {
    let read = |partition| ReadStatePartition { partition, leader_epoch: 0 };
    let summary = |partition| ReadStateSummaryPartition { partition, leader_epoch: 0 };
    match api {
        Api::Initialize => shape(split_initialize(
            &request(group, topics, |partition| InitializeStatePartition { partition, ..Default::default() }),
            active,
            50,
        )),
        Api::Read => shape(split_read(&request(group, topics, read), active, 50)),
        Api::Write => shape(split_write(
            &request(group, topics, |partition| WriteStatePartition { partition, ..Default::default() }),
            active,
            50,
        )),
        Api::Delete => shape(split_delete(
            &request(group, topics, |partition| DeleteStatePartition { partition }),
            active,
            50,
        )),
        Api::Summary => shape(split_read_summary(&request(group, topics, summary), active, 50)),
    }
}

/// `test*ValidationsError`: an empty topic list, a topic without partitions and
/// an empty group id are answered with an empty response, no shard call (except
/// Initialize, which does not check for partitions: the topic simply makes no
/// call and the merged response is empty too).
#[rstest]
#[case::write_empty_topics(Api::Write, "group1", vec![], (0, Some(0)))]
#[case::write_empty_partitions(Api::Write, "group1", vec![(T1, vec![])], (0, Some(0)))]
#[case::write_empty_group(Api::Write, "", vec![(T1, vec![0])], (0, Some(0)))]
#[case::read_empty_topics(Api::Read, "group1", vec![], (0, Some(0)))]
#[case::read_empty_partitions(Api::Read, "group1", vec![(T1, vec![])], (0, Some(0)))]
#[case::read_empty_group(Api::Read, "", vec![(T1, vec![0])], (0, Some(0)))]
#[case::summary_empty_topics(Api::Summary, "group1", vec![], (0, Some(0)))]
#[case::summary_empty_partitions(Api::Summary, "group1", vec![(T1, vec![])], (0, Some(0)))]
#[case::summary_empty_group(Api::Summary, "", vec![(T1, vec![0])], (0, Some(0)))]
#[case::delete_empty_topics(Api::Delete, "group1", vec![], (0, Some(0)))]
#[case::delete_empty_partitions(Api::Delete, "group1", vec![(T1, vec![])], (0, Some(0)))]
#[case::delete_empty_group(Api::Delete, "", vec![(T1, vec![0])], (0, Some(0)))]
#[case::initialize_empty_topics(Api::Initialize, "group1", vec![], (0, Some(0)))]
#[case::initialize_empty_partitions(Api::Initialize, "group1", vec![(T1, vec![])], (0, None))]
#[case::initialize_empty_group(Api::Initialize, "", vec![(T1, vec![0])], (0, Some(0)))]
#[case::write_two_topics(Api::Write, "group1", vec![(T1, vec![0]), (T2, vec![1])], (2, None))]
#[case::read_two_topics(Api::Read, "group1", vec![(T1, vec![0]), (T2, vec![1])], (2, None))]
#[case::summary_two_topics(Api::Summary, "group1", vec![(T1, vec![0]), (T2, vec![1])], (2, None))]
#[case::delete_two_topics(Api::Delete, "group1", vec![(T1, vec![0]), (T2, vec![1])], (2, None))]
#[case::initialize_two_topics(Api::Initialize, "group1", vec![(T1, vec![0]), (T2, vec![1])], (2, None))]
fn validations(
    #[case] api: Api,
    #[case] group: &str,
    #[case] topics: Vec<(TopicId, Vec<i32>)>,
    #[case] expected: (usize, Option<usize>),
) {
    assert_eq!(split_of(api, group, &topics, true), expected);
}

/// Which check comes first when a request is both malformed (empty group id) and
/// the coordinator is not active: Write and Read check the request first (an empty
/// response), Summary, Delete and Initialize check activity first (an error per
/// partition).
#[rstest]
#[case::write(Api::Write, (0, Some(0)))]
#[case::read(Api::Read, (0, Some(0)))]
#[case::summary(Api::Summary, (0, Some(1)))]
#[case::delete(Api::Delete, (0, Some(1)))]
#[case::initialize(Api::Initialize, (0, Some(1)))]
fn check_order(#[case] api: Api, #[case] expected: (usize, Option<usize>)) {
    assert_eq!(split_of(api, "", &[(T1, vec![0])], false), expected);
}

/// `test*WhenNotStarted`: every partition answers COORDINATOR_NOT_AVAILABLE
/// "Share coordinator is not available.", nothing is called.
#[rstest]
#[case::write(Api::Write)]
#[case::read(Api::Read)]
#[case::summary(Api::Summary)]
#[case::delete(Api::Delete)]
#[case::initialize(Api::Initialize)]
fn when_not_started(#[case] api: Api) {
    let mut service = ShareCoordinatorService::new(ShareCoordinatorConfig::default());
    let topics = [(T1, vec![0]), (T2, vec![1])];
    let read = |partition| ReadStatePartition { partition, leader_epoch: 1 };
    let summary = |partition| ReadStateSummaryPartition { partition, leader_epoch: 1 };
    let plain = |r: &ShareStatePartitionResult| (r.partition, r.error_code, r.error_message.clone());
    let answers = match api {
        Api::Write => {
            let r = service.write_state(
                0,
                &ShareStateRequest { api_version: 1, group_id: "group1".into(), topics: two_write_topics() },
            );
            assert!(r.records.is_empty());
            outcomes(&r.response, plain)
        }
        Api::Read => outcomes(&service.read_state(0, &request("group1", &topics, read)).response, |r| {
            (r.partition, r.error_code, r.error_message.clone())
        }),
        Api::Summary => {
            outcomes(&service.read_state_summary(&request("group1", &topics, summary)).response, |r| {
                (r.partition, r.error_code, r.error_message.clone())
            })
        }
        Api::Delete => outcomes(
            &service
                .delete_state(&request("group1", &topics, |partition| DeleteStatePartition { partition }))
                .response,
            plain,
        ),
        Api::Initialize => {
            let init = |partition| InitializeStatePartition { partition, state_epoch: 0, start_offset: 0 };
            outcomes(&service.initialize_state(0, &request("group1", &topics, init)).response, plain)
        }
    };
    let not_available = |topic, partition| {
        (topic, partition, ErrorCode::CoordinatorNotAvailable, Some(NOT_AVAILABLE_MESSAGE.to_owned()))
    };
    assert_eq!(answers, [not_available(T1, 0), not_available(T2, 1)]);
}

/// Every partition's (topic, partition, error code, message).
fn outcomes<R, P>(
    response: &ShareStateResponse<R, P>,
    of: impl Fn(&R) -> (i32, ErrorCode, Option<String>),
) -> Vec<(TopicId, i32, ErrorCode, Option<String>)> {
    let mut all = Vec::new();
    for topic in &response.results {
        for (partition, code, message) in topic.partitions.iter().map(&of) {
            all.push((topic.topic_id, partition, code, message));
        }
    }
    all
}

fn two_write_topics() -> Vec<ShareStateTopic<WriteStatePartition>> {
    let data = |partition| WriteStatePartition {
        partition,
        state_epoch: 1,
        leader_epoch: 1,
        start_offset: 0,
        delivery_complete_count: 11,
        state_batches: vec![StateBatch::new(0, 10, 0, 1)],
    };
    vec![ShareStateTopic::new(T1, [data(0)]), ShareStateTopic::new(T2, [data(1)])]
}

fn two_read_topics() -> Vec<ShareStateTopic<ReadStatePartition>> {
    vec![
        ShareStateTopic::new(T1, [ReadStatePartition { partition: 0, leader_epoch: 1 }]),
        ShareStateTopic::new(T2, [ReadStatePartition { partition: 1, leader_epoch: 1 }]),
    ]
}

fn started() -> ShareCoordinatorService {
    let mut service = ShareCoordinatorService::new(ShareCoordinatorConfig::default());
    service.startup(TopicsImage::new([(T1, 2), (T2, 2)]));
    service
}

/// `test*StateSuccess`: a two-topic request runs one shard call per share
/// partition and merges the answers per topic.
#[test]
fn initialize_write_read_summary_delete_success() {
    let mut service = started();
    let group = GroupId::from("group1");
    let init_topics = vec![
        ShareStateTopic::new(
            T1,
            [InitializeStatePartition { partition: 0, state_epoch: 1, start_offset: 0 }],
        ),
        ShareStateTopic::new(
            T2,
            [InitializeStatePartition { partition: 1, state_epoch: 1, start_offset: 0 }],
        ),
    ];
    let init = service.initialize_state(
        0,
        &InitializeShareGroupStateRequest { api_version: 0, group_id: group.clone(), topics: init_topics },
    );
    let ok = |t, p| ShareStateTopic::new(t, [ShareStatePartitionResult::ok(p)]);
    assert_eq!(init.response.results, [ok(T1, 0), ok(T2, 1)]);
    assert_eq!(init.records.len(), 2);
    // Each record went to the partition of `__share_group_state` of its key.
    for appended in &init.records {
        assert_eq!(appended.coordinator_partition, service.partition_for(appended.record.key()));
    }

    let write = service.write_state(
        10,
        &WriteShareGroupStateRequest { api_version: 1, group_id: group.clone(), topics: two_write_topics() },
    );
    assert_eq!(write.response.results, [ok(T1, 0), ok(T2, 1)]);
    assert_eq!(write.records.len(), 2);

    let read = service.read_state(
        20,
        &ReadShareGroupStateRequest { api_version: 0, group_id: group.clone(), topics: two_read_topics() },
    );
    let state = |p| ReadStatePartitionResult {
        partition: p,
        state_epoch: 1,
        start_offset: 0,
        state_batches: vec![StateBatch::new(0, 10, 0, 1)],
        ..ReadStatePartitionResult::default()
    };
    assert_eq!(
        read.response.results,
        [ShareStateTopic::new(T1, [state(0)]), ShareStateTopic::new(T2, [state(1)])]
    );

    let summary = service.read_state_summary(&ReadShareGroupStateSummaryRequest {
        api_version: 1,
        group_id: group.clone(),
        topics: two_read_topics()
            .into_iter()
            .map(|t| {
                let parts = t.partitions.iter().map(|p| ReadStateSummaryPartition {
                    partition: p.partition,
                    leader_epoch: p.leader_epoch,
                });
                ShareStateTopic::new(t.topic_id, parts)
            })
            .collect(),
    });
    let summary_of = |p| ReadStateSummaryPartitionResult {
        partition: p,
        state_epoch: 1,
        leader_epoch: 1,
        start_offset: 0,
        delivery_complete_count: 11,
        ..ReadStateSummaryPartitionResult::default()
    };
    assert_eq!(
        summary.response.results,
        [ShareStateTopic::new(T1, [summary_of(0)]), ShareStateTopic::new(T2, [summary_of(1)])]
    );

    let topics = vec![
        ShareStateTopic::new(T1, [DeleteStatePartition { partition: 0 }]),
        ShareStateTopic::new(T2, [DeleteStatePartition { partition: 1 }]),
    ];
    let delete =
        service.delete_state(&DeleteShareGroupStateRequest { api_version: 0, group_id: group, topics });
    assert_eq!(delete.response.results, [ok(T1, 0), ok(T2, 1)]);
    assert!(delete.records.iter().all(|r| r.record.is_tombstone()));
}

/// Answers for one topic named twice, and for one partition named twice, merge
/// into one topic entry, the later answer replacing the earlier (Kafka's map).
#[test]
fn answers_merge_per_topic_and_partition() {
    let mut service = started();
    let topics = vec![
        ShareStateTopic::new(T1, [ReadStateSummaryPartition { partition: 0, leader_epoch: 0 }]),
        ShareStateTopic::new(T2, [ReadStateSummaryPartition { partition: 0, leader_epoch: 0 }]),
        ShareStateTopic::new(
            T1,
            [
                ReadStateSummaryPartition { partition: 1, leader_epoch: 0 },
                ReadStateSummaryPartition { partition: 0, leader_epoch: 0 },
            ],
        ),
    ];
    let summary = service.read_state_summary(&ReadShareGroupStateSummaryRequest {
        api_version: 1,
        group_id: "g".into(),
        topics,
    });
    let shape: Vec<(TopicId, Vec<i32>)> = summary
        .response
        .results
        .iter()
        .map(|t| (t.topic_id, t.partitions.iter().map(|p| p.partition).collect()))
        .collect();
    assert_eq!(shape, [(T1, vec![0, 1]), (T2, vec![0])]);
}

/// `test*FutureReturnsError`: a share partition whose partition of
/// `__share_group_state` is not hosted answers NOT_COORDINATOR with Kafka's
/// "Unable to ..." message; the others are served.
#[test]
fn a_partition_not_hosted_answers_not_coordinator() {
    let mut service = started();
    let key = SharePartitionKey::new("group1", T1, 0);
    service.unload(service.partition_for(&key));
    let request = ReadShareGroupStateRequest {
        api_version: 0,
        group_id: "group1".into(),
        topics: vec![ShareStateTopic::new(T1, [ReadStatePartition { partition: 0, leader_epoch: 0 }])],
    };
    let read = service.read_state(0, &request);
    let expected = ReadStatePartitionResult::error(
        0,
        ErrorCode::NotCoordinator,
        "Unable to read share group state: This is not the correct coordinator.",
    );
    assert_eq!(read.response.results, [ShareStateTopic::new(T1, [expected])]);
}

/// `testPartitionFor`: `Utils.abs(key.asCoordinatorKey().hashCode()) % partitions`,
/// with Java's hash values (computed outside this code) and `Math.abs` for
/// negative hashes, not a sign mask.
#[rstest]
#[case::negative_hash("group1:LCa0a2j_xo_5m0U8HTBBNA:0", 50, 46)]
#[case::positive_hash("g:LCa0a2j_xo_5m0U8HTBBNA:2", 50, 9)]
#[case::negative_hash_2("my-share-group:AAAAAAAAAAAAAAAAAAAAAQ:7", 50, 11)]
#[case::utf16_units("grüppe😀:LCa0a2j_xo_5m0U8HTBBNA:1", 50, 16)]
#[case::one_partition("group1:LCa0a2j_xo_5m0U8HTBBNA:0", 1, 0)]
fn partition_for(#[case] key: &str, #[case] partitions: i32, #[case] expected: i32) {
    let parsed: SharePartitionKey = key.parse().expect("a key");
    assert_eq!(parsed.to_string(), key);
    assert_eq!(parsed.coordinator_partition(partitions), expected);
}

/// Kafka's `SharePartitionKey.getInstance(String)`: parsed from the right, the group
/// id may hold colons but may not be blank.
#[rstest]
#[case::colons_in_group("a:b:LCa0a2j_xo_5m0U8HTBBNA:3", Some(("a:b", 3)))]
#[case::empty("", None)]
#[case::two_parts("g:1", None)]
#[case::blank_group(" :LCa0a2j_xo_5m0U8HTBBNA:3", None)]
#[case::bad_topic("g:not-a-uuid:3", None)]
#[case::bad_partition("g:LCa0a2j_xo_5m0U8HTBBNA:x", None)]
fn key_parsing(#[case] key: &str, #[case] expected: Option<(&str, i32)>) {
    let parsed = key.parse::<SharePartitionKey>().ok();
    assert_eq!(parsed.as_ref().map(|k| (k.group_id.as_str(), k.partition)), expected);
}

/// `onTopicsDeleted`: tombstones in every hosted shard for the deleted topics.
#[test]
fn on_topics_deleted() {
    let mut service = started();
    let topics = vec![
        ShareStateTopic::new(
            T1,
            [
                InitializeStatePartition { partition: 0, state_epoch: 0, start_offset: 0 },
                InitializeStatePartition { partition: 1, state_epoch: 0, start_offset: 0 },
            ],
        ),
        ShareStateTopic::new(
            T2,
            [InitializeStatePartition { partition: 0, state_epoch: 0, start_offset: 0 }],
        ),
    ];
    service.initialize_state(
        0,
        &InitializeShareGroupStateRequest { api_version: 0, group_id: "g".into(), topics },
    );
    assert!(service.on_topics_deleted(&HashSet::new()).is_empty());
    let deleted = service.on_topics_deleted(&HashSet::from([T1]));
    let mut keys: Vec<(TopicId, i32)> =
        deleted.iter().map(|a| (a.record.key().topic_id, a.record.key().partition)).collect();
    keys.sort();
    assert_eq!(keys, [(T1, 0), (T1, 1)]);
    assert!(deleted.iter().all(|a| a.record.is_tombstone()));
}

/// `ShareCoordinatorConfigTest` and the bounds of `ShareCoordinatorConfig`.
#[rstest]
#[case::snapshot_records_zero("share.coordinator.snapshot.update.records.per.snapshot", 0, true)]
#[case::snapshot_records_max("share.coordinator.snapshot.update.records.per.snapshot", 500, true)]
#[case::snapshot_records_over("share.coordinator.snapshot.update.records.per.snapshot", 501, false)]
#[case::snapshot_records_negative("share.coordinator.snapshot.update.records.per.snapshot", -1, false)]
#[case::partitions_zero("share.coordinator.state.topic.num.partitions", 0, false)]
#[case::linger_adaptive("share.coordinator.append.linger.ms", -1, true)]
#[case::cold_interval_zero("share.coordinator.cold.partition.snapshot.interval.ms", 0, false)]
#[case::unknown("share.coordinator.nonsense", 1, false)]
fn config_bounds(#[case] name: &str, #[case] value: i64, #[case] accepted: bool) {
    let mut config = ShareCoordinatorConfig::default();
    assert_eq!(config.set(name, value).is_ok(), accepted);
}

#[test]
fn config_defaults_are_kafkas() {
    let config = ShareCoordinatorConfig::default();
    assert_eq!(config.state_topic_num_partitions, 50);
    assert_eq!(config.snapshot_update_records_per_snapshot, 500);
    assert_eq!(config.cold_partition_snapshot_interval_ms, 300_000);
    assert_eq!(config.state_topic_prune_interval_ms, 300_000);
    assert_eq!(config.write_timeout_ms, 5_000);
    assert_eq!(config.append_linger_ms, -1);
    assert_eq!(ShareCoordinatorConfig::SETTINGS.len(), 11);
}
