//! The share-group offset admin APIs in the core, as Kafka 4.2 answers them:
//! `GroupMetadataManagerTest` (`testSharePartitionsEligibleForOffsetDeletion*`,
//! `testCompleteDeleteShareGroupOffsets*`), `GroupCoordinatorShardTest`
//! (`testInitiateDeleteShareGroupOffsets*`, `testCompleteDeleteShareGroupOffsets*`)
//! and `GroupCoordinatorServiceTest` (`testDeleteShareGroupOffsets*`), each driven
//! end to end through the core with the persister answering as the case says.

use std::sync::Arc;

use group_offsets::{
    ConsumerGroupMetadataValue, ModernGroupRecord, Record, ShareStatePartitionMetadataValue,
    ShareTopicPartitions, fold,
};
use group_types::{
    DeleteShareGroupOffsetsRequest, DeleteShareGroupOffsetsResponse, ErrorCode, GroupId, TopicId,
};
use rstest::rstest;

use group_share_coordinator::default_error_message;

use crate::config::CoordinatorConfig;
use crate::core::{CoordinatorCore, Effects, GroupKind, Request, RequestId, Response};
use crate::{MetadataImage, TopicImage};

/// The metadata: t1 with 3 partitions, t2 to t4 with 2 (t5 does not exist).
const TOPICS: [(&str, u32); 4] = [("t1", 3), ("t2", 2), ("t3", 2), ("t4", 2)];

fn topic_id(name: &str) -> TopicId {
    let n = name.trim_start_matches('t').parse::<u128>().unwrap_or(99);
    TopicId::from_u128(n)
}

fn name_of(id: TopicId) -> String {
    TOPICS.iter().map(|(n, _)| *n).find(|n| topic_id(n) == id).unwrap_or("?").to_owned()
}

/// Topics by name, each with partitions 0 to the count given.
type Parts<'a> = &'a [(&'a str, i32)];

fn share_topics(parts: Parts<'_>) -> Vec<ShareTopicPartitions> {
    parts
        .iter()
        .map(|(n, p)| ShareTopicPartitions {
            topic_id: topic_id(n),
            topic_name: (*n).into(),
            partitions: (0..*p).collect(),
        })
        .collect()
}

/// Share groups on.
fn config() -> CoordinatorConfig {
    let mut config = CoordinatorConfig::default();
    config.share.enabled = true;
    config
}

/// A core whose share group `g` (epoch 0, `members` members) has the given share state.
fn core_with(
    initializing: Parts<'_>,
    initialized: Parts<'_>,
    deleting: &[&str],
    members: usize,
) -> CoordinatorCore {
    let g = || Arc::<str>::from("g");
    let mut records = vec![ModernGroupRecord::ShareGroupMetadata {
        group_id: g(),
        value: Some(ConsumerGroupMetadataValue { epoch: 0, metadata_hash: 0 }),
    }];
    for m in 0..members {
        records.push(ModernGroupRecord::ShareMemberMetadata {
            group_id: g(),
            member_id: Arc::from(format!("m{m}").as_str()),
            value: Some(Box::default()),
        });
    }
    records.push(ModernGroupRecord::ShareStatePartitionMetadata {
        group_id: g(),
        value: Some(Box::new(ShareStatePartitionMetadataValue {
            initializing: share_topics(initializing),
            initialized: share_topics(initialized),
            deleting: deleting.iter().map(|n| (topic_id(n), (*n).to_owned())).collect(),
        })),
    });
    let mut core = CoordinatorCore::new(config());
    let image = MetadataImage::new(1, TOPICS.iter().map(|(n, p)| TopicImage::new(topic_id(n), *n, *p)));
    core.update_metadata_image(Arc::new(image));
    let _ = core.load(0, fold(records.into_iter().map(Record::Modern)));
    core
}

/// What one DeleteShareGroupOffsets did.
#[derive(Default)]
struct Run {
    /// The share-state deletion asked: per topic, its partitions.
    asked: Vec<(String, Vec<i32>)>,
    /// Every share-state record written, as (initializing, initialized, deleting) topic names.
    records: Vec<(Vec<String>, Vec<String>, Vec<String>)>,
    answer: Option<DeleteShareGroupOffsetsResponse>,
}

/// Completes every write of `fx` (ok), keeping the records and the answer.
fn drive(core: &mut CoordinatorCore, fx: Effects, run: &mut Run) {
    for (rid, response) in fx.responses {
        if let (RequestId(1), Response::DeleteShareGroupOffsets(r)) = (rid, response) {
            run.answer = Some(r);
        }
    }
    for write in fx.writes {
        for r in &write.records {
            if let Record::Modern(ModernGroupRecord::ShareStatePartitionMetadata { value: Some(v), .. }) = r {
                let names = |t: &[ShareTopicPartitions]| t.iter().map(|t| t.topic_name.clone()).collect();
                let deleting = v.deleting.iter().map(|(_, n)| n.clone()).collect();
                run.records.push((names(&v.initializing), names(&v.initialized), deleting));
            }
        }
        let more = core.complete_write(100, write.id, Ok(()));
        drive(core, more, run);
    }
}

/// The persister's answer to the deletion asked.
#[derive(Clone, Copy)]
enum Persister<'a> {
    /// Per topic, its error (`NONE` where the state went).
    Topics(&'a [(&'a str, ErrorCode)]),
    /// The whole call failed.
    Failed(ErrorCode),
}

fn delete(core: &mut CoordinatorCore, topics: &[&str], persister: Persister<'_>) -> Run {
    let req = DeleteShareGroupOffsetsRequest {
        group_id: GroupId::from("g"),
        topic_names: topics.iter().map(|t| (*t).to_owned()).collect(),
    };
    let mut run = Run::default();
    let fx = core.handle(100, RequestId(1), Request::DeleteShareGroupOffsets(req));
    drive(core, fx, &mut run);
    for ask in core.take_share_state_deletions() {
        for t in &ask.topics {
            run.asked.push((name_of(t.topic_id), t.partitions.iter().map(|p| p.partition).collect()));
        }
        let answered: Vec<(TopicId, ErrorCode)>;
        let result = match persister {
            Persister::Topics(codes) => {
                answered = ask
                    .topics
                    .iter()
                    .map(|t| {
                        let code = codes.iter().find(|(n, _)| topic_id(n) == t.topic_id).map(|(_, c)| *c);
                        (t.topic_id, code.unwrap_or(ErrorCode::None))
                    })
                    .collect();
                Ok(answered.as_slice())
            }
            Persister::Failed(code) => Err(code),
        };
        let fx = core.share_group_state_deleted_topics(100, &ask, result);
        drive(core, fx, &mut run);
    }
    run
}

fn strings(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| (*n).to_owned()).collect()
}

const NOTHING: &str = "There is no offset information to delete.";
const UNKNOWN: &str = "This server does not host this topic-partition.";
const OK: Persister<'static> = Persister::Topics(&[]);

/// `sharePartitionsEligibleForOffsetDeletion` and `completeDeleteShareGroupOffsets`:
/// what is asked of the persister, the deleting record, and the answer (topic,
/// error, message) once the persister deleted everything asked.
#[rstest]
// testSharePartitionsEligibleForOffsetDeletionSuccess
#[case::initialized_topics_are_deleted(
    &[], &[("t1", 3), ("t2", 2)], &[], &["t1", "t2"],
    &[("t1", vec![0, 1, 2]), ("t2", vec![0, 1])], &["t1", "t2"],
    &[("t1", ErrorCode::None, None), ("t2", ErrorCode::None, None)],
)]
// testSharePartitionsEligibleForOffsetDeletionContainsDeletingTopics: t3 is
// deleting, so asked again with every partition; t4 stays deleting.
#[case::a_deleting_topic_is_asked_again(
    &[], &[("t1", 3), ("t2", 2)], &["t3", "t4"], &["t1", "t2", "t3"],
    &[("t1", vec![0, 1, 2]), ("t2", vec![0, 1]), ("t3", vec![0, 1])], &["t1", "t2", "t3", "t4"],
    &[("t1", ErrorCode::None, None), ("t2", ErrorCode::None, None), ("t3", ErrorCode::None, None)],
)]
// testSharePartitionsEligibleForOffsetDeletionErrorTopics
#[case::an_unknown_topic_is_answered_unknown(
    &[], &[("t1", 3)], &[], &["t1", "t5"],
    &[("t1", vec![0, 1, 2])], &["t1"],
    &[("t1", ErrorCode::None, None), ("t5", ErrorCode::UnknownTopicOrPartition, Some(UNKNOWN))],
)]
// testSharePartitionsEligibleForOffsetDeletionUninitializedTopics
#[case::an_initializing_topic_has_nothing_to_delete(
    &[("t2", 2)], &[("t1", 3)], &[], &["t1", "t2"],
    &[("t1", vec![0, 1, 2])], &["t1"],
    &[("t1", ErrorCode::None, None), ("t2", ErrorCode::UnknownTopicOrPartition, Some(NOTHING))],
)]
// testSharePartitionsEligibleForOffsetDeletionUninitializedAndErrorTopics
#[case::uninitialized_and_unknown_topics(
    &[("t2", 2)], &[("t1", 3)], &[], &["t1", "t2", "t5"],
    &[("t1", vec![0, 1, 2])], &["t1"],
    &[
        ("t1", ErrorCode::None, None),
        ("t2", ErrorCode::UnknownTopicOrPartition, Some(NOTHING)),
        ("t5", ErrorCode::UnknownTopicOrPartition, Some(UNKNOWN)),
    ],
)]
// testInitiateDeleteShareGroupOffsetsEmptyResult / testDeleteShareGroupOffsetsRequestReturnsNullParametersWithErrorTopics:
// nothing to ask, answered with the errors once the record is durable.
#[case::nothing_to_ask(
    &[("t2", 2)], &[], &[], &["t2", "t5"],
    &[], &[],
    &[("t2", ErrorCode::UnknownTopicOrPartition, Some(NOTHING)), ("t5", ErrorCode::UnknownTopicOrPartition, Some(UNKNOWN))],
)]
fn delete_share_group_offsets_as_kafka(
    #[case] initializing: Parts<'_>,
    #[case] initialized: Parts<'_>,
    #[case] deleting: &[&str],
    #[case] request: &[&str],
    #[case] asked: &[(&str, Vec<i32>)],
    #[case] deleting_after_initiate: &[&str],
    #[case] topics: &[(&str, ErrorCode, Option<&str>)],
) {
    let mut core = core_with(initializing, initialized, deleting, 0);
    let run = delete(&mut core, request, OK);
    let want_asked: Vec<_> = asked.iter().map(|(n, p)| ((*n).to_owned(), p.clone())).collect();
    assert_eq!(run.asked, want_asked);
    let first = run.records.first().expect("the initiate record");
    let still_initializing: Vec<&str> = initializing.iter().map(|(n, _)| *n).collect();
    assert_eq!(first.0, strings(&still_initializing));
    assert_eq!(first.2, strings(deleting_after_initiate));
    let answer = run.answer.expect("answered");
    assert_eq!((answer.error_code, answer.error_message.as_deref()), (ErrorCode::None, None));
    let mut got: Vec<_> = answer
        .responses
        .iter()
        .map(|t| (t.topic_name.clone(), t.error_code, t.error_message.clone()))
        .collect();
    got.sort();
    let want: Vec<_> = topics.iter().map(|(n, c, m)| ((*n).to_owned(), *c, m.map(str::to_owned))).collect();
    assert_eq!(got, want);
    // Topics the share coordinator deleted left deleting (`completeDeleteShareGroupOffsets`).
    let state = core.groups.get("g").and_then(GroupKind::share).and_then(|g| g.share_state.as_deref());
    let left: Vec<String> = state.map(|s| s.deleting.values().cloned().collect()).unwrap_or_default();
    let asked_names: Vec<&str> = asked.iter().map(|(n, _)| *n).collect();
    let want_left: Vec<&str> =
        deleting_after_initiate.iter().copied().filter(|n| !asked_names.contains(n)).collect();
    assert_eq!(left, strings(&want_left));
}

/// The group-level refusals (`testInitiateDeleteShareGroupOffsetsGroupNotFound`,
/// `...NonEmptyShareGroup`, `testDeleteShareGroupOffsetsInvalidGroupId`): no
/// record, nothing asked.
#[rstest]
#[case::missing_group("missing", 0, ErrorCode::GroupIdNotFound, Some("Group missing not found."))]
#[case::non_empty_group("g", 1, ErrorCode::NonEmptyGroup, Some("The group is not empty."))]
// `getErrorDeleteResponseData(Errors.INVALID_GROUP_ID)`: the error's message.
#[case::empty_group_id("", 0, ErrorCode::InvalidGroupId, Some("The group id is invalid."))]
// `KafkaApis`' `getErrorResponse(..., Errors.UNSUPPORTED_VERSION.exception)`: its message.
#[case::share_groups_off("g", 0, ErrorCode::UnsupportedVersion, Some("The version of API is not supported."))]
fn delete_share_group_offsets_refusals(
    #[case] group: &str,
    #[case] members: usize,
    #[case] code: ErrorCode,
    #[case] message: Option<&str>,
) {
    let mut core = core_with(&[], &[("t1", 3)], &[], members);
    if code == ErrorCode::UnsupportedVersion {
        core.engine.config.share.enabled = false;
    }
    let req =
        DeleteShareGroupOffsetsRequest { group_id: GroupId::from(group), topic_names: vec!["t1".to_owned()] };
    let mut run = Run::default();
    let fx = core.handle(100, RequestId(1), Request::DeleteShareGroupOffsets(req));
    drive(&mut core, fx, &mut run);
    assert!(run.records.is_empty());
    assert!(core.take_share_state_deletions().is_empty());
    let answer = run.answer.expect("answered");
    assert_eq!((answer.error_code, answer.error_message.as_deref()), (code, message));
    assert!(answer.responses.is_empty());
}

/// A group of another kind is not a share group (`GroupMetadataManager.shareGroup`).
#[test]
fn a_consumer_group_is_not_a_share_group() {
    let mut core = CoordinatorCore::new(config());
    let record = ModernGroupRecord::GroupMetadata {
        group_id: Arc::from("c"),
        value: Some(ConsumerGroupMetadataValue { epoch: 1, metadata_hash: 0 }),
    };
    let _ = core.load(0, fold(vec![Record::Modern(record)]));
    let req = DeleteShareGroupOffsetsRequest { group_id: GroupId::from("c"), topic_names: Vec::new() };
    let fx = core.handle(100, RequestId(1), Request::DeleteShareGroupOffsets(req));
    let Some((_, Response::DeleteShareGroupOffsets(r))) = fx.responses.into_iter().next() else {
        panic!("answered at once")
    };
    assert_eq!(
        (r.error_code, r.error_message.as_deref()),
        (ErrorCode::GroupIdNotFound, Some("Group c is not a share group."))
    );
}

/// The persister's errors (`GroupCoordinatorServiceTest`:
/// `testDeleteShareGroupOffsetsPersisterReturnsNoSuccessfulTopics`,
/// `testDeleteShareGroupOffsetsSuccessWithErrorTopics`,
/// `testDeleteShareGroupOffsetsPersisterThrowsError`): a topic that failed keeps
/// deleting and is answered with the persister's error; a failed call answers
/// its error for the group.
#[rstest]
#[case::one_topic_fails(
    Persister::Topics(&[("t2", ErrorCode::UnknownServerError)]),
    ErrorCode::None,
    &[("t1", ErrorCode::None), ("t2", ErrorCode::UnknownServerError)],
    &["t2"],
)]
#[case::every_topic_fails(
    Persister::Topics(&[("t1", ErrorCode::UnknownServerError), ("t2", ErrorCode::UnknownServerError)]),
    ErrorCode::None,
    &[("t1", ErrorCode::UnknownServerError), ("t2", ErrorCode::UnknownServerError)],
    &["t1", "t2"],
)]
#[case::the_call_fails(Persister::Failed(ErrorCode::CoordinatorNotAvailable), ErrorCode::CoordinatorNotAvailable, &[], &["t1", "t2"])]
fn delete_share_group_offsets_persister_errors(
    #[case] persister: Persister<'_>,
    #[case] group_code: ErrorCode,
    #[case] topics: &[(&str, ErrorCode)],
    #[case] still_deleting: &[&str],
) {
    let mut core = core_with(&[], &[("t1", 3), ("t2", 2)], &[], 0);
    let run = delete(&mut core, &["t1", "t2"], persister);
    let answer = run.answer.expect("answered");
    assert_eq!(answer.error_code, group_code);
    // `getErrorDeleteResponseData(Errors.forException(throwable))`: a failed call
    // carries its error's default message.
    let message = (group_code != ErrorCode::None).then(|| default_error_message(group_code));
    assert_eq!(answer.error_message.as_deref(), message);
    let mut got: Vec<_> = answer.responses.iter().map(|t| (t.topic_name.clone(), t.error_code)).collect();
    got.sort();
    let want: Vec<_> = topics.iter().map(|(n, c)| ((*n).to_owned(), *c)).collect();
    assert_eq!(got, want);
    // No completion record when nothing went.
    let went = topics.iter().any(|(_, c)| *c == ErrorCode::None);
    assert_eq!(run.records.len(), 1 + usize::from(went));
    let state = core.groups.get("g").and_then(GroupKind::share).and_then(|g| g.share_state.as_deref());
    let left: Vec<String> = state.map(|s| s.deleting.values().cloned().collect()).unwrap_or_default();
    assert_eq!(left, strings(still_deleting));
}

/// A group without a share-state record has nothing to delete: no record, no
/// topics answered (`testCompleteDeleteShareGroupOffsetsEmptyResult`'s null map).
#[test]
fn a_group_without_share_state_answers_no_topics() {
    let mut core = CoordinatorCore::new(config());
    let record = ModernGroupRecord::ShareGroupMetadata {
        group_id: Arc::from("g"),
        value: Some(ConsumerGroupMetadataValue { epoch: 1, metadata_hash: 0 }),
    };
    let _ = core.load(0, fold(vec![Record::Modern(record)]));
    let run = delete(&mut core, &["t1"], OK);
    assert!(run.records.is_empty() && run.asked.is_empty());
    assert_eq!(run.answer, Some(DeleteShareGroupOffsetsResponse::default()));
}

/// What one AlterShareGroupOffsets did.
#[derive(Default)]
struct AlterRun {
    /// The initialization asked: (topic, partition, state epoch, start offset).
    asked: Vec<(String, i32, i32, i64)>,
    /// The group's epoch after the request's records.
    epoch: Option<i32>,
    answer: Option<group_types::AlterShareGroupOffsetsResponse>,
}

/// The persister's answer to an initialization.
#[derive(Clone, Copy)]
enum InitAnswer<'a> {
    /// Per (topic, partition), its error (`NONE` where not named).
    Partitions(&'a [(&'a str, i32, ErrorCode)]),
    /// The whole call failed.
    Failed(ErrorCode),
}

fn alter(
    core: &mut CoordinatorCore,
    group: &str,
    offsets: &[(&str, i32, i64)],
    persister: InitAnswer<'_>,
) -> AlterRun {
    let mut topics: Vec<group_types::AlterShareOffsetsTopic> = Vec::new();
    for (t, p, o) in offsets {
        let at = match topics.iter().position(|x| x.topic_name == *t) {
            Some(at) => at,
            None => {
                topics.push(group_types::AlterShareOffsetsTopic {
                    topic_name: (*t).to_owned(),
                    partitions: Vec::new(),
                });
                topics.len() - 1
            }
        };
        topics[at].partitions.push(group_types::ShareStartOffset { partition_index: *p, start_offset: *o });
    }
    let req = group_types::AlterShareGroupOffsetsRequest { group_id: GroupId::from(group), topics };
    let fx = core.handle(100, RequestId(1), Request::AlterShareGroupOffsets(req));
    let mut run = AlterRun::default();
    let mut answers = Vec::new();
    drive_all(core, fx, &mut answers);
    run.epoch = core.groups.get(group).and_then(GroupKind::share).map(|g| g.modern.group_epoch);
    for ask in core.take_share_state_initializations() {
        for t in &ask.topics {
            for p in &t.partitions {
                run.asked.push((name_of(t.topic_id), p.partition, p.state_epoch, p.start_offset));
            }
        }
        let codes: Vec<(TopicId, i32, ErrorCode)>;
        let result = match persister {
            InitAnswer::Partitions(failed) => {
                codes = ask
                    .topics
                    .iter()
                    .flat_map(|t| t.partitions.iter().map(move |p| (t.topic_id, p.partition)))
                    .map(|(t, p)| {
                        let code =
                            failed.iter().find(|(n, i, _)| topic_id(n) == t && *i == p).map(|(_, _, c)| *c);
                        (t, p, code.unwrap_or(ErrorCode::None))
                    })
                    .collect();
                Ok(codes.as_slice())
            }
            InitAnswer::Failed(code) => Err(code),
        };
        let fx = core.share_group_state_initialized_partitions(100, &ask, result);
        drive_all(core, fx, &mut answers);
    }
    run.answer = answers.into_iter().find_map(|(rid, r)| match (rid, r) {
        (RequestId(1), Response::AlterShareGroupOffsets(r)) => Some(r),
        _ => None,
    });
    run
}

/// Completes every write of `fx` (ok), keeping the answers.
fn drive_all(core: &mut CoordinatorCore, fx: Effects, answers: &mut Vec<(RequestId, Response)>) {
    answers.extend(fx.responses);
    for write in fx.writes {
        let more = core.complete_write(100, write.id, Ok(()));
        drive_all(core, more, answers);
    }
}

/// Topic names with their partitions.
type Named = Vec<(String, Vec<i32>)>;

/// The share state of `g` as (initializing, initialized, deleting) topic names
/// with their partitions.
fn state_of(core: &CoordinatorCore) -> (Named, Named, Vec<String>) {
    let state = core.groups.get("g").and_then(GroupKind::share).and_then(|g| g.share_state.as_deref());
    let Some(s) = state else { return Default::default() };
    let list = |m: &std::collections::BTreeMap<TopicId, super::group::InitTopic>| {
        m.values().map(|t| (t.name.clone(), t.partitions.iter().copied().collect())).collect()
    };
    (list(&s.initializing), list(&s.initialized), s.deleting.values().cloned().collect())
}

/// `testAlterShareGroupOffsetsBumpsGroupEpoch` and `alterShareGroupOffsets`'
/// per-partition answers: the epoch goes up by one, the existing partitions are
/// asked initialized at their start offsets and the new epoch, and, once the
/// persister initialized them, they are initialized; a partition beyond the
/// topic's count, or of an unknown topic, is UNKNOWN_TOPIC_OR_PARTITION.
#[rstest]
#[case::one_partition(&[("t1", 0, 10)], &[("t1", 0, 6, 10)], &[("t1", 0, ErrorCode::None)], &[("t1", vec![0])])]
#[case::a_partition_beyond_the_count(
    &[("t1", 0, 10), ("t1", 5, 3)],
    &[("t1", 0, 6, 10)],
    &[("t1", 0, ErrorCode::None), ("t1", 5, ErrorCode::UnknownTopicOrPartition)],
    &[("t1", vec![0])],
)]
#[case::an_unknown_topic(
    &[("t5", 0, 1), ("t2", 1, 7)],
    &[("t2", 1, 6, 7)],
    &[("t2", 1, ErrorCode::None), ("t5", 0, ErrorCode::UnknownTopicOrPartition)],
    &[("t2", vec![1])],
)]
fn alter_share_group_offsets_as_kafka(
    #[case] offsets: &[(&str, i32, i64)],
    #[case] asked: &[(&str, i32, i32, i64)],
    #[case] partitions: &[(&str, i32, ErrorCode)],
    #[case] initialized: &[(&str, Vec<i32>)],
) {
    let mut core = core_with(&[], &[], &[], 0);
    // The group at epoch 5, as Kafka's case has it.
    let epoch = ModernGroupRecord::ShareGroupMetadata {
        group_id: Arc::from("g"),
        value: Some(ConsumerGroupMetadataValue { epoch: 5, metadata_hash: 0 }),
    };
    core.groups.get_mut("g").and_then(GroupKind::share_mut).expect("g").replay(&epoch, 0, None);
    let run = alter(&mut core, "g", offsets, InitAnswer::Partitions(&[]));
    assert_eq!(run.epoch, Some(6), "the epoch is bumped");
    let want: Vec<_> = asked.iter().map(|(t, p, e, o)| ((*t).to_owned(), *p, *e, *o)).collect();
    assert_eq!(run.asked, want);
    let answer = run.answer.expect("answered");
    assert_eq!(answer.error_code, ErrorCode::None);
    let mut got: Vec<_> = answer
        .responses
        .iter()
        .flat_map(|t| {
            t.partitions.iter().map(move |p| (t.topic_name.clone(), p.partition_index, p.error_code))
        })
        .collect();
    got.sort();
    let want: Vec<_> = partitions.iter().map(|(t, p, c)| ((*t).to_owned(), *p, *c)).collect();
    assert_eq!(got, want);
    let (initializing, now_initialized, _) = state_of(&core);
    assert!(initializing.is_empty(), "{initializing:?}");
    let want: Vec<_> = initialized.iter().map(|(t, p)| ((*t).to_owned(), p.clone())).collect();
    assert_eq!(now_initialized, want);
}

/// `testAlterShareGroupOffsetsErroneousCallDoesNotBumpGroupEpoch` and the
/// service's refusals: no record, nothing asked, the epoch unchanged.
#[rstest]
#[case::non_empty_group("g", 1, ErrorCode::NonEmptyGroup, Some("The group is not empty."))]
#[case::empty_group_id("", 0, ErrorCode::InvalidGroupId, Some("The group id is invalid."))]
fn alter_share_group_offsets_refusals(
    #[case] group: &str,
    #[case] members: usize,
    #[case] code: ErrorCode,
    #[case] message: Option<&str>,
) {
    let mut core = core_with(&[], &[("t1", 3)], &[], members);
    let run = alter(&mut core, group, &[("t1", 0, 10)], InitAnswer::Partitions(&[]));
    assert!(run.asked.is_empty());
    let answer = run.answer.expect("answered");
    assert_eq!((answer.error_code, answer.error_message.as_deref()), (code, message));
    assert_eq!(core.groups.get("g").and_then(GroupKind::share).map(|g| g.modern.group_epoch), Some(0));
}

/// A missing group is created, as `getOrMaybeCreateShareGroup(groupId, true)` does.
#[test]
fn altering_a_missing_group_creates_it() {
    let mut core = core_with(&[], &[], &[], 0);
    let run = alter(&mut core, "new", &[("t3", 1, 4)], InitAnswer::Partitions(&[]));
    assert_eq!(run.epoch, Some(1));
    assert_eq!(run.asked, [("t3".to_owned(), 1, 1, 4)]);
    assert_eq!(run.answer.map(|a| a.error_code), Some(ErrorCode::None));
}

/// An initialized topic altered again is initializing until the persister
/// answers (`addInitializingTopicsRecords` keeps the initialized map), and a
/// deleting topic altered leaves deleting.
#[test]
fn altering_writes_the_partitions_initializing() {
    let mut core = core_with(&[], &[("t1", 3)], &["t2"], 0);
    let req = group_types::AlterShareGroupOffsetsRequest {
        group_id: GroupId::from("g"),
        topics: vec![
            group_types::AlterShareOffsetsTopic {
                topic_name: "t1".into(),
                partitions: vec![group_types::ShareStartOffset { partition_index: 0, start_offset: 3 }],
            },
            group_types::AlterShareOffsetsTopic {
                topic_name: "t2".into(),
                partitions: vec![group_types::ShareStartOffset { partition_index: 1, start_offset: 0 }],
            },
        ],
    };
    let fx = core.handle(100, RequestId(1), Request::AlterShareGroupOffsets(req));
    let mut answers = Vec::new();
    drive_all(&mut core, fx, &mut answers);
    let (initializing, initialized, deleting) = state_of(&core);
    assert_eq!(initializing, [("t1".to_owned(), vec![0]), ("t2".to_owned(), vec![1])]);
    assert_eq!(initialized, [("t1".to_owned(), vec![0, 1, 2])]);
    assert!(deleting.is_empty());
    assert!(answers.is_empty(), "the answer waits for the persister");
}

/// The persister's failures (`GroupCoordinatorService.buildErrorResponse`): a
/// partition's error is answered for it and nothing moves to initialized; a
/// failed call answers its error for the group.
#[rstest]
#[case::a_partition_fails(
    InitAnswer::Partitions(&[("t1", 1, ErrorCode::FencedStateEpoch)]),
    ErrorCode::None,
    &[("t1", 0, ErrorCode::None), ("t1", 1, ErrorCode::FencedStateEpoch)],
)]
#[case::the_call_fails(InitAnswer::Failed(ErrorCode::CoordinatorNotAvailable), ErrorCode::CoordinatorNotAvailable, &[])]
fn alter_share_group_offsets_persister_errors(
    #[case] persister: InitAnswer<'_>,
    #[case] group_code: ErrorCode,
    #[case] partitions: &[(&str, i32, ErrorCode)],
) {
    let mut core = core_with(&[], &[], &[], 0);
    let run = alter(&mut core, "g", &[("t1", 0, 10), ("t1", 1, 20)], persister);
    let answer = run.answer.expect("answered");
    assert_eq!(answer.error_code, group_code);
    let got: Vec<_> = answer
        .responses
        .iter()
        .flat_map(|t| {
            t.partitions.iter().map(move |p| (t.topic_name.clone(), p.partition_index, p.error_code))
        })
        .collect();
    let want: Vec<_> = partitions.iter().map(|(t, p, c)| ((*t).to_owned(), *p, *c)).collect();
    assert_eq!(got, want);
    let (initializing, initialized, _) = state_of(&core);
    assert!(initialized.is_empty(), "nothing moves: {initialized:?}");
    assert_eq!(initializing, [("t1".to_owned(), vec![0, 1])], "Kafka leaves them initializing");
}

/// The persister's answer to a summary read.
#[derive(Clone, Copy)]
enum SummaryAnswer<'a> {
    /// Per (topic, partition): its error, start offset and leader epoch.
    Partitions(&'a [(&'a str, i32, ErrorCode, i64, i32)]),
    /// The whole call failed.
    Failed(ErrorCode),
}

/// A description of group `g`: per topic its partitions, or every topic (`None`).
fn describe(
    core: &mut CoordinatorCore,
    topics: Option<&[(&str, &[i32])]>,
    persister: SummaryAnswer<'_>,
) -> (Vec<(String, Vec<i32>)>, group_types::DescribedShareOffsetsGroup) {
    describe_with(core, topics, persister, 0, &[])
}

/// [`describe`], the summary answering delivery complete count `dcc` for every
/// partition, and the partitions' end offsets those the core asks for, as the
/// runtime looks them up: (topic, partition, end offset or the lookup's error).
fn describe_with(
    core: &mut CoordinatorCore,
    topics: Option<&[(&str, &[i32])]>,
    persister: SummaryAnswer<'_>,
    dcc: i32,
    ends: &[(&str, i32, Result<i64, ErrorCode>)],
) -> (Vec<(String, Vec<i32>)>, group_types::DescribedShareOffsetsGroup) {
    let topics = topics.map(|t| {
        t.iter()
            .map(|(n, p)| group_types::ShareOffsetsTopicRequest {
                topic_name: (*n).to_owned(),
                partitions: p.to_vec(),
            })
            .collect()
    });
    let group = group_types::DescribeShareGroupOffsetsGroupRequest { group_id: GroupId::from("g"), topics };
    let req = group_types::DescribeShareGroupOffsetsRequest { api_version: 0, groups: vec![group] };
    let mut answers = Vec::new();
    let fx = core.handle(100, RequestId(1), Request::DescribeShareGroupOffsets(req));
    drive_all(core, fx, &mut answers);
    let mut asked = Vec::new();
    for ask in core.take_share_state_summaries() {
        let mut results = Vec::new();
        for t in &ask.topics {
            let partitions: Vec<i32> = t.partitions.iter().map(|p| p.partition).collect();
            asked.push((name_of(t.topic_id), partitions.clone()));
            let answered = partitions.iter().map(|p| {
                let found = match persister {
                    SummaryAnswer::Partitions(all) => {
                        all.iter().find(|(n, i, ..)| topic_id(n) == t.topic_id && i == p)
                    }
                    SummaryAnswer::Failed(_) => None,
                };
                let (code, start, leader) =
                    found.map_or((ErrorCode::None, 0, 0), |(_, _, c, s, l)| (*c, *s, *l));
                group_types::ReadStateSummaryPartitionResult {
                    partition: *p,
                    error_code: code,
                    start_offset: start,
                    leader_epoch: leader,
                    delivery_complete_count: dcc,
                    ..Default::default()
                }
            });
            results.push(group_types::ShareStateTopic::new(t.topic_id, answered));
        }
        let summary = group_types::ReadShareGroupStateSummaryResponse::new(results);
        let result = match persister {
            SummaryAnswer::Failed(code) => Err(code),
            SummaryAnswer::Partitions(_) => Ok(&summary),
        };
        // Only the partitions whose lag can be computed are looked up.
        let end_offsets: Vec<_> = CoordinatorCore::lag_partitions(&summary)
            .into_iter()
            .filter_map(|(t, p)| {
                let end = ends.iter().find(|(n, i, _)| topic_id(n) == t && *i == p)?;
                Some((t, p, end.2))
            })
            .collect();
        let fx = core.share_group_state_summary_read(100, &ask, result, &end_offsets);
        drive_all(core, fx, &mut answers);
    }
    let answer = answers.into_iter().find_map(|(rid, r)| match (rid, r) {
        (RequestId(1), Response::DescribeShareGroupOffsets(mut r)) => r.groups.pop(),
        _ => None,
    });
    (asked, answer.expect("answered"))
}

/// `GroupCoordinatorServiceTest`'s `testDescribeShareGroupOffsets*` and
/// `testDescribeShareGroupAllOffsets*`: what is read of the persister, and the
/// start offset (and leader epoch) answered per partition; -1 for a topic not in
/// the metadata and where the persister answered an error; every initialized
/// partition when no topic is named; a failed call is the group's error.
#[rstest]
// testDescribeShareGroupOffsetsWithDefaultPersister
#[case::named_topics(
    Some(&[("t1", &[0, 1][..])][..]),
    SummaryAnswer::Partitions(&[("t1", 0, ErrorCode::None, 21, 1), ("t1", 1, ErrorCode::None, 5, 2)]),
    &[("t1", vec![0, 1])],
    ErrorCode::None,
    &[("t1", 0, 21, 1), ("t1", 1, 5, 2)],
)]
// testDescribeShareGroupOffsetsNonexistentTopicWithDefaultPersister
#[case::an_unknown_topic(
    Some(&[("t5", &[0][..]), ("t1", &[2][..])][..]),
    SummaryAnswer::Partitions(&[("t1", 2, ErrorCode::None, 7, 0)]),
    &[("t1", vec![2])],
    ErrorCode::None,
    &[("t1", 2, 7, 0), ("t5", 0, -1, 0)],
)]
// testDescribeShareGroupOffsetsWithDefaultPersisterReadSummaryPartitionError
#[case::a_partition_error_is_no_data(
    Some(&[("t1", &[0, 1][..])][..]),
    SummaryAnswer::Partitions(&[("t1", 0, ErrorCode::UnknownServerError, 0, 0), ("t1", 1, ErrorCode::None, 9, 3)]),
    &[("t1", vec![0, 1])],
    ErrorCode::None,
    &[("t1", 0, -1, 0), ("t1", 1, 9, 3)],
)]
// testDescribeShareGroupAllOffsets: the initialized partitions, not the initializing.
#[case::every_initialized_partition(
    None,
    SummaryAnswer::Partitions(&[("t1", 0, ErrorCode::None, 4, 1), ("t1", 1, ErrorCode::None, 4, 1), ("t1", 2, ErrorCode::None, 4, 1)]),
    &[("t1", vec![0, 1, 2])],
    ErrorCode::None,
    &[("t1", 0, 4, 1), ("t1", 1, 4, 1), ("t1", 2, 4, 1)],
)]
// testDescribeShareGroupOffsetsWithDefaultPersisterThrowsError / testDescribeShareGroupAllOffsetsThrowsError
#[case::the_call_fails(
    Some(&[("t1", &[0][..])][..]),
    SummaryAnswer::Failed(ErrorCode::CoordinatorNotAvailable),
    &[("t1", vec![0])],
    ErrorCode::CoordinatorNotAvailable,
    &[],
)]
// testDescribeShareGroupOffsetsWithNoOpPersister's empty read: nothing asked.
#[case::only_unknown_topics(
    Some(&[("t5", &[3][..])][..]),
    SummaryAnswer::Partitions(&[]),
    &[],
    ErrorCode::None,
    &[("t5", 3, -1, 0)],
)]
fn describe_share_group_offsets_as_kafka(
    #[case] topics: Option<&[(&str, &[i32])]>,
    #[case] persister: SummaryAnswer<'_>,
    #[case] asked: &[(&str, Vec<i32>)],
    #[case] code: ErrorCode,
    #[case] offsets: &[(&str, i32, i64, i32)],
) {
    let mut core = core_with(&[("t2", 2)], &[("t1", 3)], &[], 0);
    let (got_asked, group) = describe(&mut core, topics, persister);
    let want: Vec<_> = asked.iter().map(|(n, p)| ((*n).to_owned(), p.clone())).collect();
    assert_eq!(got_asked, want);
    assert_eq!((group.group_id.as_str(), group.error_code), ("g", code));
    let got: Vec<_> = group
        .topics
        .iter()
        .flat_map(|t| {
            t.partitions
                .iter()
                .map(move |p| (t.topic_name.clone(), p.partition_index, p.start_offset, p.leader_epoch))
        })
        .collect();
    let want: Vec<_> = offsets.iter().map(|(t, p, s, l)| ((*t).to_owned(), *p, *s, *l)).collect();
    assert_eq!(got, want);
    // No end offsets given: the lag is unknown (KIP-1226; see `describe_share_group_offsets_lag`).
    assert!(
        group
            .topics
            .iter()
            .flat_map(|t| &t.partitions)
            .all(|p| p.lag == -1 && p.error_code == ErrorCode::None)
    );
}

/// A description of every topic of a group that does not exist reads nothing
/// and answers no topics (`initializedShareGroupPartitions`' empty map).
#[test]
fn describing_every_topic_of_a_missing_group_answers_none() {
    let mut core = CoordinatorCore::new(config());
    let (asked, group) = describe(&mut core, None, SummaryAnswer::Partitions(&[]));
    assert!(asked.is_empty());
    assert_eq!((group.error_code, group.topics.len()), (ErrorCode::None, 0));
}

const NO_SUCH_PARTITION: &str = "This server does not host this topic-partition.";

/// `computeShareGroupLagAndBuildResponse` per partition (KIP-1226), after
/// `GroupCoordinatorServiceTest`'s lag cases: the summary's answer for t1-0
/// (error, start offset, delivery complete count; leader epoch 4), the end offset
/// looked up (none without a source), whether the lag is computed
/// (`shouldComputeSharePartitionLag`), and the partition answered (start offset,
/// leader epoch, lag, error, message).
#[rstest]
#[case::lag_is_end_minus_start_minus_delivered(
    (ErrorCode::None, 10, 3), Some(Ok(20)), true, (10, 4, 7, ErrorCode::None, None),
)]
// The end offset is the next offset to be written: an empty backlog is lag 0.
#[case::nothing_left_to_deliver(
    (ErrorCode::None, 10, 10), Some(Ok(20)), true, (10, 4, 0, ErrorCode::None, None),
)]
// A summary error is absence of data: start offset -1, epoch 0, nothing looked up.
#[case::summary_error(
    (ErrorCode::UnknownServerError, 10, 3), Some(Ok(20)), false, (-1, 0, -1, ErrorCode::None, None),
)]
#[case::start_offset_uninitialized(
    (ErrorCode::None, -1, 0), Some(Ok(20)), false, (-1, 4, -1, ErrorCode::None, None),
)]
// Initialized without a start offset, never written: the count is unknown.
#[case::delivery_complete_count_uninitialized(
    (ErrorCode::None, 10, -1), Some(Ok(20)), false, (10, 4, -1, ErrorCode::None, None),
)]
// Kafka sets only the error and its message on such a partition.
#[case::end_offset_error(
    (ErrorCode::None, 10, 3),
    Some(Err(ErrorCode::UnknownTopicOrPartition)),
    true,
    (0, 0, -1, ErrorCode::UnknownTopicOrPartition, Some(NO_SUCH_PARTITION)),
)]
// No end-offset source (the embedder gave none): lag -1, the rest as read.
#[case::no_end_offset(
    (ErrorCode::None, 10, 3), None, true, (10, 4, -1, ErrorCode::None, None),
)]
fn describe_share_group_offsets_lag(
    #[case] summary: (ErrorCode, i64, i32),
    #[case] end: Option<Result<i64, ErrorCode>>,
    #[case] computed: bool,
    #[case] want: (i64, i32, i64, ErrorCode, Option<&str>),
) {
    let (code, start, dcc) = summary;
    let read = group_types::ReadStateSummaryPartitionResult {
        partition: 0,
        error_code: code,
        start_offset: start,
        leader_epoch: 4,
        delivery_complete_count: dcc,
        ..Default::default()
    };
    let response =
        group_types::ReadShareGroupStateSummaryResponse::new(vec![group_types::ShareStateTopic::new(
            topic_id("t1"),
            [read],
        )]);
    let qualifying = CoordinatorCore::lag_partitions(&response);
    assert_eq!(qualifying == [(topic_id("t1"), 0)], computed, "{qualifying:?}");

    let mut core = core_with(&[], &[("t1", 3)], &[], 0);
    let ends: Vec<_> = end.map(|e| ("t1", 0, e)).into_iter().collect();
    let answer = [("t1", 0, code, start, 4)];
    let (_, group) =
        describe_with(&mut core, Some(&[("t1", &[0][..])]), SummaryAnswer::Partitions(&answer), dcc, &ends);
    assert_eq!((group.error_code, group.error_message.as_deref()), (ErrorCode::None, None));
    let p = &group.topics[0].partitions[0];
    let got = (p.start_offset, p.leader_epoch, p.lag, p.error_code, p.error_message.as_deref());
    assert_eq!((group.topics[0].topic_name.as_str(), p.partition_index), ("t1", 0));
    assert_eq!(got, want);
}

/// The answers of the offset admin APIs refused before the core (the API table's
/// `refused`: ownership, the group ACL, a stopped coordinator) carry Kafka's
/// message: `KafkaApis.handleDescribeShareGroupOffsetsRequest` sends
/// UNSUPPORTED_VERSION and GROUP_AUTHORIZATION_FAILED without one, everything
/// else (`getErrorDescribedGroup`, `Errors.forException(exception).message`,
/// `getErrorDeleteResponseData`, `getErrorResponseData`) with the error's own.
#[rstest]
#[case::describe_unsupported(crate::Api::DescribeShareGroupOffsets, ErrorCode::UnsupportedVersion, None)]
#[case::describe_group_denied(
    crate::Api::DescribeShareGroupOffsets,
    ErrorCode::GroupAuthorizationFailed,
    None
)]
#[case::describe_not_coordinator(
    crate::Api::DescribeShareGroupOffsets,
    ErrorCode::NotCoordinator,
    Some("This is not the correct coordinator.")
)]
#[case::describe_loading(
    crate::Api::DescribeShareGroupOffsets,
    ErrorCode::CoordinatorLoadInProgress,
    Some("The coordinator is loading and hence can't process requests.")
)]
#[case::describe_stopped(
    crate::Api::DescribeShareGroupOffsets,
    ErrorCode::CoordinatorNotAvailable,
    Some("The coordinator is not available.")
)]
#[case::delete_group_denied(
    crate::Api::DeleteShareGroupOffsets,
    ErrorCode::GroupAuthorizationFailed,
    Some("Group authorization failed.")
)]
#[case::delete_not_coordinator(
    crate::Api::DeleteShareGroupOffsets,
    ErrorCode::NotCoordinator,
    Some("This is not the correct coordinator.")
)]
#[case::alter_group_denied(
    crate::Api::AlterShareGroupOffsets,
    ErrorCode::GroupAuthorizationFailed,
    Some("Group authorization failed.")
)]
#[case::alter_stopped(
    crate::Api::AlterShareGroupOffsets,
    ErrorCode::CoordinatorNotAvailable,
    Some("The coordinator is not available.")
)]
fn refusals_carry_kafkas_messages(
    #[case] api: crate::Api,
    #[case] code: ErrorCode,
    #[case] message: Option<&str>,
) {
    let request: Request = match api {
        crate::Api::DescribeShareGroupOffsets => group_types::DescribeShareGroupOffsetsRequest {
            api_version: 0,
            groups: vec![group_types::DescribeShareGroupOffsetsGroupRequest {
                group_id: GroupId::from("g"),
                topics: None,
            }],
        }
        .into(),
        crate::Api::DeleteShareGroupOffsets => {
            DeleteShareGroupOffsetsRequest { group_id: GroupId::from("g"), topic_names: Vec::new() }.into()
        }
        _ => group_types::AlterShareGroupOffsetsRequest { group_id: GroupId::from("g"), topics: Vec::new() }
            .into(),
    };
    let got = match request.refused(code) {
        Response::DescribeShareGroupOffsets(r) => {
            r.groups.into_iter().map(|g| (g.error_code, g.error_message)).next()
        }
        Response::DeleteShareGroupOffsets(r) => Some((r.error_code, r.error_message)),
        Response::AlterShareGroupOffsets(r) => Some((r.error_code, r.error_message)),
        other => panic!("answered {other:?}"),
    };
    assert_eq!(got, Some((code, message.map(str::to_owned))));
}

/// A DeleteShareGroupOffsets whose state record fails to write answers the
/// mapped error for the group with its message (`handleOperationException`
/// hands `getErrorDeleteResponseData` no message, so the error's own), and asks
/// the persister nothing.
#[test]
fn a_failed_write_answers_the_error_with_its_message() {
    let mut core = core_with(&[], &[("t1", 3)], &[], 0);
    let req = DeleteShareGroupOffsetsRequest { group_id: GroupId::from("g"), topic_names: vec!["t1".into()] };
    let fx = core.handle(100, RequestId(1), Request::DeleteShareGroupOffsets(req));
    let write = fx.writes.into_iter().next().expect("the deleting record");
    let fx = core.complete_write(100, write.id, Err(ErrorCode::NotEnoughReplicas));
    let answer = fx.responses.into_iter().find_map(|(rid, r)| match (rid, r) {
        (RequestId(1), Response::DeleteShareGroupOffsets(r)) => Some(r),
        _ => None,
    });
    let answer = answer.expect("answered");
    assert_eq!(
        (answer.error_code, answer.error_message.as_deref()),
        (ErrorCode::CoordinatorNotAvailable, Some("The coordinator is not available."))
    );
    assert!(core.take_share_state_deletions().is_empty());
}

/// A DeleteGroups and a DeleteShareGroupOffsets of the same group ask the same
/// deletion (t1, every partition) one after the other: the answers are matched
/// in the order the deletions were asked, as a persister answers them, so the
/// DeleteGroups asked first gets the first answer (a failure: the group is kept)
/// and the DeleteShareGroupOffsets the second (t1's state went).
#[test]
fn identical_deletions_are_answered_in_the_order_asked() {
    let mut core = core_with(&[], &[("t1", 3)], &[], 0);
    let mut answers = Vec::new();
    let req = group_types::DeleteGroupsRequest { group_ids: vec![GroupId::from("g")] };
    let fx = core.handle(100, RequestId(2), Request::DeleteGroups(req));
    drive_all(&mut core, fx, &mut answers);
    let req = DeleteShareGroupOffsetsRequest { group_id: GroupId::from("g"), topic_names: vec!["t1".into()] };
    let fx = core.handle(100, RequestId(1), Request::DeleteShareGroupOffsets(req));
    drive_all(&mut core, fx, &mut answers);
    let asks = core.take_share_state_deletions();
    assert_eq!(asks.len(), 2, "{asks:?}");
    assert_eq!(asks[0], asks[1], "the same deletion, asked twice");
    assert!(answers.is_empty(), "both wait for the persister");

    let fx = core.share_group_state_deleted_topics(100, &asks[0], Err(ErrorCode::CoordinatorNotAvailable));
    drive_all(&mut core, fx, &mut answers);
    let went = [(topic_id("t1"), ErrorCode::None)];
    let fx = core.share_group_state_deleted_topics(100, &asks[1], Ok(&went));
    drive_all(&mut core, fx, &mut answers);

    let deleted_groups = answers.iter().find_map(|(rid, r)| match (rid, r) {
        (RequestId(2), Response::DeleteGroups(r)) => Some(r.results.clone()),
        _ => None,
    });
    let codes: Vec<_> = deleted_groups.expect("DeleteGroups answered").iter().map(|g| g.error_code).collect();
    assert_eq!(codes, [ErrorCode::CoordinatorNotAvailable], "the first answer is the DeleteGroups'");
    let offsets = answers.iter().find_map(|(rid, r)| match (rid, r) {
        (RequestId(1), Response::DeleteShareGroupOffsets(r)) => Some(r.clone()),
        _ => None,
    });
    let offsets = offsets.expect("DeleteShareGroupOffsets answered");
    assert_eq!(offsets.error_code, ErrorCode::None);
    let topics: Vec<_> = offsets.responses.iter().map(|t| (t.topic_name.as_str(), t.error_code)).collect();
    assert_eq!(topics, [("t1", ErrorCode::None)], "the second answer is the offsets'");
    assert!(core.groups.contains_key("g"), "the group whose state deletion failed is kept");
}
