//! OffsetCommit and OffsetFetch v10 (topics by id) against Kafka's rules for them
//! (`KafkaApis.handleOffsetCommitRequest`, `KafkaApis.fetchOffsetsForGroup` and
//! `fetchAllOffsetsForGroup`): known ids named for the coordinator and answered by id
//! again, unknown ones answered UNKNOWN_TOPIC_ID where and as Kafka answers them.

use group_types as gt;
use kafka_protocol::messages as kp;
use rstest::rstest;

use super::offset_codec::{self as codec, Pinned};
use super::offset_commit::{commit_answer_by_id, commit_failed_by_id, named_commit, offset_commit_response};
use super::offset_fetch::{fetch_answer_by_id, named_fetch, offset_fetch_groups, offset_fetch_response};
use crate::TopicSpec;
use crate::test_samples::{s, tid};
use crate::topics::{Topics, topic_id_for};

const UNKNOWN_TOPIC_ID: i16 = 100;

fn topics() -> Topics {
    let spec = |name: &str| TopicSpec { name: name.into(), partitions: 2 };
    Topics::new(&[spec("foo"), spec("bar")])
}

/// An id this node does not know.
fn unknown(n: u128) -> uuid::Uuid {
    tid(n)
}

fn commit_topic(topic_id: uuid::Uuid, partitions: &[i32]) -> codec::OffsetCommitRequestTopic {
    let partition = |&i: &i32| {
        Pinned(
            kp::offset_commit_request::OffsetCommitRequestPartition::default()
                .with_partition_index(i)
                .with_committed_offset(7),
        )
    };
    codec::OffsetCommitRequestTopic {
        topic_id,
        partitions: partitions.iter().map(partition).collect(),
        ..Default::default()
    }
}

fn commit(topics: Vec<codec::OffsetCommitRequestTopic>) -> codec::OffsetCommitRequest {
    codec::OffsetCommitRequest {
        group_id: s("g"),
        generation_id_or_member_epoch: -1,
        member_id: s(""),
        group_instance_id: None,
        topics,
    }
}

/// A commit answer's topics: id and (partition, error code) each.
fn commit_rows(answer: &codec::OffsetCommitResponse) -> Vec<(uuid::Uuid, Vec<(i32, i16)>)> {
    answer
        .topics
        .iter()
        .map(|t| (t.topic_id, t.partitions.iter().map(|p| (p.0.partition_index, p.0.error_code)).collect()))
        .collect()
}

/// The coordinator's answer to `named`: every partition `code`.
fn coordinator_answer(named: &kp::OffsetCommitRequest, code: gt::ErrorCode) -> kp::OffsetCommitResponse {
    let req = super::offset_commit::offset_commit_request(named, 10);
    offset_commit_response(gt::OffsetCommitResponse::uniform(&req, code))
}

/// Known ids go to the coordinator by name, in request order; the answer is by id,
/// the unknown ids first with every partition UNKNOWN_TOPIC_ID, one entry per id
/// (`OffsetCommitResponse.TopicIdBuilder`), then the coordinator's answer.
#[rstest]
#[case::all_known(
    vec![(topic_id_for("foo"), vec![0, 1]), (topic_id_for("bar"), vec![0])],
    vec!["foo", "bar"],
    vec![(topic_id_for("foo"), vec![(0, 0), (1, 0)]), (topic_id_for("bar"), vec![(0, 0)])],
)]
#[case::one_unknown_between(
    vec![(topic_id_for("foo"), vec![0]), (unknown(9), vec![3, 4]), (topic_id_for("bar"), vec![1])],
    vec!["foo", "bar"],
    vec![
        (unknown(9), vec![(3, UNKNOWN_TOPIC_ID), (4, UNKNOWN_TOPIC_ID)]),
        (topic_id_for("foo"), vec![(0, 0)]),
        (topic_id_for("bar"), vec![(1, 0)]),
    ],
)]
#[case::an_unknown_id_twice_is_one_entry(
    vec![(unknown(9), vec![0]), (unknown(8), vec![0]), (unknown(9), vec![1])],
    vec![],
    vec![
        (unknown(9), vec![(0, UNKNOWN_TOPIC_ID), (1, UNKNOWN_TOPIC_ID)]),
        (unknown(8), vec![(0, UNKNOWN_TOPIC_ID)]),
    ],
)]
#[case::the_zero_id_is_unknown(
    vec![(uuid::Uuid::nil(), vec![0])],
    vec![],
    vec![(uuid::Uuid::nil(), vec![(0, UNKNOWN_TOPIC_ID)])],
)]
fn a_v10_commit_is_named_and_answered_by_id(
    #[case] asked: Vec<(uuid::Uuid, Vec<i32>)>,
    #[case] named: Vec<&str>,
    #[case] want: Vec<(uuid::Uuid, Vec<(i32, i16)>)>,
) {
    let wire = commit(asked.iter().map(|(id, p)| commit_topic(*id, p)).collect());
    let topics = topics();
    let by_name = named_commit(&wire, &topics);
    let names: Vec<&str> = by_name.topics.iter().map(|t| t.name.0.as_str()).collect();
    assert_eq!(names, named);
    let answer = commit_answer_by_id(&wire, &topics, coordinator_answer(&by_name, gt::ErrorCode::None));
    assert_eq!(commit_rows(&answer), want);
}

/// A commit the coordinator could not take (or whose group is denied) is answered
/// `error` on every partition in request order, unknown ids included and not merged
/// (`OffsetCommitRequest.getErrorResponse`).
#[test]
fn a_failed_v10_commit_answers_every_partition_in_request_order() {
    let wire = commit(vec![
        commit_topic(unknown(9), &[0]),
        commit_topic(topic_id_for("foo"), &[1]),
        commit_topic(unknown(9), &[2]),
    ]);
    let code = gt::ErrorCode::GroupAuthorizationFailed.code();
    let want = vec![
        (unknown(9), vec![(0, code)]),
        (topic_id_for("foo"), vec![(1, code)]),
        (unknown(9), vec![(2, code)]),
    ];
    assert_eq!(commit_rows(&commit_failed_by_id(&wire, gt::ErrorCode::GroupAuthorizationFailed)), want);
}

fn fetch(topics: Option<Vec<(uuid::Uuid, Vec<i32>)>>) -> codec::OffsetFetchRequest {
    let topics = topics.map(|ts| {
        ts.into_iter()
            .map(|(topic_id, partition_indexes)| codec::OffsetFetchRequestTopics {
                topic_id,
                partition_indexes,
                ..Default::default()
            })
            .collect()
    });
    let group =
        codec::OffsetFetchRequestGroup { group_id: s("g"), member_id: None, member_epoch: -1, topics };
    codec::OffsetFetchRequest { groups: vec![group], require_stable: false }
}

/// A fetch answer's first group: its error code, and its topics' ids with
/// (partition, offset, error code) each.
type FetchRows = (i16, Vec<(uuid::Uuid, Vec<(i32, i64, i16)>)>);

fn fetch_rows(answer: &codec::OffsetFetchResponse) -> FetchRows {
    let group = &answer.groups[0];
    let topics = group
        .topics
        .iter()
        .map(|t| {
            let rows =
                t.partitions.iter().map(|p| (p.0.partition_index, p.0.committed_offset, p.0.error_code));
            (t.topic_id, rows.collect())
        })
        .collect();
    (group.error_code, topics)
}

/// `wire` named, the coordinator answering `committed` (topic, partition, offset) or
/// the group error `error`, and that answer by id.
fn fetch_by_id(
    wire: &codec::OffsetFetchRequest,
    committed: &[(&str, i32, i64)],
    error: gt::ErrorCode,
) -> codec::OffsetFetchResponse {
    let topics = topics();
    let groups = offset_fetch_groups(&named_fetch(wire, &topics), 10);
    let mut resp = gt::OffsetFetchResponse { error_code: error, ..Default::default() };
    for &(topic, partition, offset) in committed {
        let data = gt::OffsetFetchData { offset, ..gt::OffsetFetchData::missing() };
        resp.offsets.entry(topic.to_owned()).or_default().insert(partition, data);
    }
    fetch_answer_by_id(wire, &topics, offset_fetch_response(&groups, vec![resp], 10))
}

/// `KafkaApis.fetchOffsetsForGroup`: known ids are asked by name and answered by id in
/// request order; unknown ones follow, every partition UNKNOWN_TOPIC_ID with offset
/// -1, unless the group itself failed (then its error stands alone, without topics:
/// `OffsetFetchResponse.groupError`). A fetch of everything (`fetchAllOffsetsForGroup`)
/// leaves out topics without an id. The `unknown_after_known` and
/// `everything_but_a_topic_without_an_id` rows are the two groups of
/// `KafkaApisTest.testHandleOffsetFetchWithUnknownTopicIds`.
#[rstest]
#[case::known(
    Some(vec![(topic_id_for("foo"), vec![0, 1])]),
    gt::ErrorCode::None,
    (0, vec![(topic_id_for("foo"), vec![(0, 5, 0), (1, -1, 0)])]),
)]
#[case::unknown_after_known(
    Some(vec![(unknown(9), vec![2]), (topic_id_for("foo"), vec![0]), (unknown(8), vec![0])]),
    gt::ErrorCode::None,
    (0, vec![
        (topic_id_for("foo"), vec![(0, 5, 0)]),
        (unknown(9), vec![(2, -1, UNKNOWN_TOPIC_ID)]),
        (unknown(8), vec![(0, -1, UNKNOWN_TOPIC_ID)]),
    ]),
)]
#[case::only_unknown(
    Some(vec![(unknown(9), vec![0])]),
    gt::ErrorCode::None,
    (0, vec![(unknown(9), vec![(0, -1, UNKNOWN_TOPIC_ID)])]),
)]
#[case::a_group_error_stands_alone(
    Some(vec![(unknown(9), vec![0]), (topic_id_for("foo"), vec![0])]),
    gt::ErrorCode::GroupAuthorizationFailed,
    (30, vec![]),
)]
#[case::everything_but_a_topic_without_an_id(
    None,
    gt::ErrorCode::None,
    (0, vec![(topic_id_for("foo"), vec![(0, 5, 0)])]),
)]
fn a_v10_fetch_is_named_and_answered_by_id(
    #[case] asked: Option<Vec<(uuid::Uuid, Vec<i32>)>>,
    #[case] error: gt::ErrorCode,
    #[case] want: FetchRows,
) {
    // "gone" has offsets but no topic here any more (so no id).
    let answer = fetch_by_id(&fetch(asked), &[("foo", 0, 5), ("gone", 0, 3)], error);
    assert_eq!(fetch_rows(&answer), want);
}

/// Unknown ids are not asked of the coordinator, and a group whose every id is
/// unknown asks for no topic rather than for all of them.
#[test]
fn unknown_ids_are_not_asked_and_none_left_is_not_all() {
    let named = named_fetch(&fetch(Some(vec![(unknown(9), vec![0])])), &topics());
    assert_eq!(named.groups[0].topics.as_ref().map(Vec::len), Some(0));
    let named = named_fetch(&fetch(None), &topics());
    assert_eq!(named.groups[0].topics, None);
    let named =
        named_fetch(&fetch(Some(vec![(unknown(9), vec![0]), (topic_id_for("bar"), vec![1])])), &topics());
    let names: Vec<_> = named.groups[0].topics.iter().flatten().map(|t| t.name.0.as_str()).collect();
    assert_eq!(names, ["bar"]);
}

/// The unknown-id partitions of a fetch carry Kafka's defaults (`buildErrorResponse`):
/// no leader epoch, empty metadata.
#[test]
fn an_unknown_id_partition_has_no_epoch_and_empty_metadata() {
    let answer = fetch_by_id(&fetch(Some(vec![(unknown(9), vec![0])])), &[], gt::ErrorCode::None);
    let p = &answer.groups[0].topics[0].partitions[0].0;
    assert_eq!((p.committed_leader_epoch, p.metadata.as_deref()), (-1, Some("")));
}
