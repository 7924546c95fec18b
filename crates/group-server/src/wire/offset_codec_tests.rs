//! The offset codec against `kafka-protocol` where both know a version (v8, v9: the same
//! bytes both ways), against Kafka's JSON layout at v10 (v9's bytes with the topic name
//! swapped for its id, and golden bytes field by field), and against bodies that end
//! early.

use std::fmt::Debug;

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages as kp;
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use proptest::prelude::*;
use rstest::rstest;

use super::*;
use crate::test_samples::{s, tid};
use crate::wire::share_codec::tests::{dec, enc};

const FOO: u128 = 0xf00;

fn commit_partition(index: i32) -> kp::offset_commit_request::OffsetCommitRequestPartition {
    kp::offset_commit_request::OffsetCommitRequestPartition::default()
        .with_partition_index(index)
        .with_committed_offset(42)
        .with_committed_leader_epoch(3)
        .with_committed_metadata(Some(s("md")))
}

/// A commit of foo-0 and foo-1, by name and id both (each version writes one).
fn commit() -> OffsetCommitRequest {
    OffsetCommitRequest {
        group_id: s("g"),
        generation_id_or_member_epoch: 5,
        member_id: s("m"),
        group_instance_id: Some(s("i")),
        topics: vec![OffsetCommitRequestTopic {
            name: s("foo"),
            topic_id: tid(FOO),
            partitions: vec![Pinned(commit_partition(0)), Pinned(commit_partition(1))],
        }],
    }
}

fn kp_commit() -> kp::OffsetCommitRequest {
    let topic = kp::offset_commit_request::OffsetCommitRequestTopic::default()
        .with_name(s("foo").into())
        .with_partitions(vec![commit_partition(0), commit_partition(1)]);
    kp::OffsetCommitRequest::default()
        .with_group_id(s("g").into())
        .with_generation_id_or_member_epoch(5)
        .with_member_id(s("m"))
        .with_group_instance_id(Some(s("i")))
        .with_topics(vec![topic])
}

fn committed(index: i32, error_code: i16) -> kp::offset_commit_response::OffsetCommitResponsePartition {
    kp::offset_commit_response::OffsetCommitResponsePartition::default()
        .with_partition_index(index)
        .with_error_code(error_code)
}

fn commit_answer() -> OffsetCommitResponse {
    OffsetCommitResponse {
        throttle_time_ms: 7,
        topics: vec![OffsetCommitResponseTopic {
            name: s("foo"),
            topic_id: tid(FOO),
            partitions: vec![Pinned(committed(0, 0)), Pinned(committed(1, 22))],
        }],
    }
}

fn kp_commit_answer() -> kp::OffsetCommitResponse {
    let topic = kp::offset_commit_response::OffsetCommitResponseTopic::default()
        .with_name(s("foo").into())
        .with_partitions(vec![committed(0, 0), committed(1, 22)]);
    kp::OffsetCommitResponse::default().with_throttle_time_ms(7).with_topics(vec![topic])
}

/// A fetch of foo-0 and foo-1 for group g, and of everything for group h; v8 has no
/// member fields (they read as null and -1).
fn fetch(version: i16) -> OffsetFetchRequest {
    let (member_id, member_epoch) = if version >= 9 { (Some(s("m")), 5) } else { (None, -1) };
    let topic =
        OffsetFetchRequestTopics { name: s("foo"), topic_id: tid(FOO), partition_indexes: vec![0, 1] };
    OffsetFetchRequest {
        groups: vec![
            OffsetFetchRequestGroup {
                group_id: s("g"),
                member_id: member_id.clone(),
                member_epoch,
                topics: Some(vec![topic]),
            },
            OffsetFetchRequestGroup { group_id: s("h"), member_id, member_epoch, topics: None },
        ],
        require_stable: true,
    }
}

fn kp_fetch(version: i16) -> kp::OffsetFetchRequest {
    use kp::offset_fetch_request::{OffsetFetchRequestGroup, OffsetFetchRequestTopics};
    let group = |id: &str| {
        let g = OffsetFetchRequestGroup::default().with_group_id(s(id).into());
        if version >= 9 { g.with_member_id(Some(s("m"))).with_member_epoch(5) } else { g }
    };
    let topic =
        OffsetFetchRequestTopics::default().with_name(s("foo").into()).with_partition_indexes(vec![0, 1]);
    kp::OffsetFetchRequest::default()
        .with_groups(vec![group("g").with_topics(Some(vec![topic])), group("h").with_topics(None)])
        .with_require_stable(true)
}

fn fetched(index: i32) -> kp::offset_fetch_response::OffsetFetchResponsePartitions {
    kp::offset_fetch_response::OffsetFetchResponsePartitions::default()
        .with_partition_index(index)
        .with_committed_offset(42)
        .with_committed_leader_epoch(3)
        .with_metadata(Some(s("md")))
}

fn fetch_answer() -> OffsetFetchResponse {
    OffsetFetchResponse {
        throttle_time_ms: 7,
        groups: vec![OffsetFetchResponseGroup {
            group_id: s("g"),
            topics: vec![OffsetFetchResponseTopics {
                name: s("foo"),
                topic_id: tid(FOO),
                partitions: vec![Pinned(fetched(0))],
            }],
            error_code: 0,
        }],
    }
}

fn kp_fetch_answer() -> kp::OffsetFetchResponse {
    use kp::offset_fetch_response::{OffsetFetchResponseGroup, OffsetFetchResponseTopics};
    let topic =
        OffsetFetchResponseTopics::default().with_name(s("foo").into()).with_partitions(vec![fetched(0)]);
    let group = OffsetFetchResponseGroup::default().with_group_id(s("g").into()).with_topics(vec![topic]);
    kp::OffsetFetchResponse::default().with_throttle_time_ms(7).with_groups(vec![group])
}

/// `ours` and `theirs` write the same bytes at `version`, and ours reads theirs back as
/// itself, except for the topic id (never on the wire before v10).
fn agree<T, K>(ours: T, theirs: K, version: i16, without_id: impl Fn(T) -> T)
where
    T: Encodable + Decodable + PartialEq + Debug + Clone,
    K: Encodable,
{
    let bytes = enc(&theirs, version);
    assert_eq!(enc(&ours, version), bytes, "v{version}");
    assert_eq!(dec::<T>(&bytes, version), without_id(ours), "v{version}");
}

fn commit_without_ids(mut m: OffsetCommitRequest) -> OffsetCommitRequest {
    m.topics.iter_mut().for_each(|t| t.topic_id = uuid::Uuid::nil());
    m
}

fn commit_answer_without_ids(mut m: OffsetCommitResponse) -> OffsetCommitResponse {
    m.topics.iter_mut().for_each(|t| t.topic_id = uuid::Uuid::nil());
    m
}

fn fetch_without_ids(mut m: OffsetFetchRequest) -> OffsetFetchRequest {
    m.groups
        .iter_mut()
        .flat_map(|g| g.topics.iter_mut().flatten())
        .for_each(|t| t.topic_id = uuid::Uuid::nil());
    m
}

fn fetch_answer_without_ids(mut m: OffsetFetchResponse) -> OffsetFetchResponse {
    m.groups.iter_mut().flat_map(|g| g.topics.iter_mut()).for_each(|t| t.topic_id = uuid::Uuid::nil());
    m
}

#[rstest]
#[case::v8(8)]
#[case::v9(9)]
fn where_the_crate_knows_the_version_both_write_the_same_bytes(#[case] version: i16) {
    agree(commit(), kp_commit(), version, commit_without_ids);
    agree(commit_answer(), kp_commit_answer(), version, commit_answer_without_ids);
    agree(fetch(version), kp_fetch(version), version, fetch_without_ids);
    agree(fetch_answer(), kp_fetch_answer(), version, fetch_answer_without_ids);
}

/// `bytes` with the one occurrence of topic foo's name (a compact string) swapped
/// for its id: what v10 changes.
fn name_to_id(bytes: &[u8]) -> Vec<u8> {
    let name = [4, b'f', b'o', b'o'];
    let at: Vec<usize> =
        bytes.windows(name.len()).enumerate().filter(|(_, w)| *w == name).map(|(i, _)| i).collect();
    assert_eq!(at.len(), 1, "the name once in {bytes:?}");
    [&bytes[..at[0]], tid(FOO).as_bytes(), &bytes[at[0] + name.len()..]].concat()
}

/// Each message's v10 bytes are its v9 bytes with the topic's name replaced by its id,
/// nothing else (KIP-848: "adds support for topic ids and removes support for topic
/// names"); v10 reads back with the id and no name.
#[rstest]
#[case::commit(enc(&commit(), 9), enc(&commit(), 10))]
#[case::commit_answer(enc(&commit_answer(), 9), enc(&commit_answer(), 10))]
#[case::fetch(enc(&fetch(9), 9), enc(&fetch(9), 10))]
#[case::fetch_answer(enc(&fetch_answer(), 9), enc(&fetch_answer(), 10))]
fn v10_is_v9_with_the_topic_id_for_its_name(#[case] v9: Vec<u8>, #[case] v10: Vec<u8>) {
    assert_eq!(v10, name_to_id(&v9));
}

#[test]
fn v10_reads_back_by_id_alone() {
    let no_name = |mut m: OffsetCommitRequest| {
        m.topics.iter_mut().for_each(|t| t.name = StrBytes::default());
        m
    };
    assert_eq!(dec::<OffsetCommitRequest>(&enc(&commit(), 10), 10), no_name(commit()));
    let mut answer = fetch_answer();
    answer.groups[0].topics[0].name = StrBytes::default();
    assert_eq!(dec::<OffsetFetchResponse>(&enc(&fetch_answer(), 10), 10), answer);
    let mut asked = fetch(10);
    asked.groups[0].topics.iter_mut().flatten().for_each(|t| t.name = StrBytes::default());
    assert_eq!(dec::<OffsetFetchRequest>(&enc(&fetch(10), 10), 10), asked);
    let mut answer = commit_answer();
    answer.topics[0].name = StrBytes::default();
    assert_eq!(dec::<OffsetCommitResponse>(&enc(&commit_answer(), 10), 10), answer);
}

/// Kafka's OffsetCommitRequest.json at v10, field by field.
#[test]
fn a_v10_commit_is_laid_out_as_kafkas_schema() {
    let mut want = vec![2, b'g', 0, 0, 0, 5, 2, b'm', 2, b'i', 2];
    want.extend_from_slice(tid(FOO).as_bytes());
    want.push(3);
    for index in [0, 1] {
        want.extend_from_slice(&[0, 0, 0, index, 0, 0, 0, 0, 0, 0, 0, 42, 0, 0, 0, 3, 3, b'm', b'd', 0]);
    }
    want.extend_from_slice(&[0, 0]);
    assert_eq!(enc(&commit(), 10), want);
}

/// Kafka's OffsetFetchResponse.json at v10, field by field.
#[test]
fn a_v10_fetch_answer_is_laid_out_as_kafkas_schema() {
    let mut want = vec![0, 0, 0, 7, 2, 2, b'g', 2];
    want.extend_from_slice(tid(FOO).as_bytes());
    want.extend_from_slice(&[2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 42, 0, 0, 0, 3, 3, b'm', b'd', 0, 0, 0]);
    want.extend_from_slice(&[0, 0, 0, 0, 0]);
    assert_eq!(enc(&fetch_answer(), 10), want);
}

/// A message is written at the versions of its codec only: the crate's below v10,
/// ours from v10.
#[test]
fn each_side_writes_only_its_versions() {
    type Commit = ByTopicId<kp::OffsetCommitResponse, OffsetCommitResponse>;
    let mut out = BytesMut::new();
    assert!(Commit::ByName(kp_commit_answer()).encode(&mut out, 10).is_err());
    assert!(Commit::ById(commit_answer()).encode(&mut out, 9).is_err());
    assert!(Commit::ById(commit_answer()).compute_size(9).is_err());
    assert_eq!(enc(&Commit::ByName(kp_commit_answer()), 9), enc(&kp_commit_answer(), 9));
    assert_eq!(enc(&Commit::ById(commit_answer()), 10), enc(&commit_answer(), 10));
    assert!(OffsetCommitRequest::decode(&mut Bytes::from(enc(&commit(), 10)), 11).is_err());
}

#[rstest]
#[case::v9(9)]
#[case::v10(10)]
fn by_topic_id_decodes_with_the_codec_of_the_version(#[case] version: i16) {
    type Commit = ByTopicId<kp::OffsetCommitRequest, OffsetCommitRequest>;
    let got: Commit = dec(&enc(&commit(), version), version);
    match got {
        ByTopicId::ByName(m) => assert_eq!((version, m), (9, kp_commit())),
        ByTopicId::ById(m) => assert_eq!((version, m.topics[0].topic_id), (10, tid(FOO))),
    }
}

/// A v10 request cut anywhere is refused, never read past its end or panicking.
#[test]
fn a_truncated_v10_request_is_refused() {
    let commit = enc(&commit(), 10);
    for cut in 0..commit.len() {
        let mut body = Bytes::copy_from_slice(&commit[..cut]);
        assert!(OffsetCommitRequest::decode(&mut body, 10).is_err(), "commit cut at {cut}");
    }
    let fetch = enc(&fetch(10), 10);
    for cut in 0..fetch.len() {
        let mut body = Bytes::copy_from_slice(&fetch[..cut]);
        assert!(OffsetFetchRequest::decode(&mut body, 10).is_err(), "fetch cut at {cut}");
    }
}

proptest! {
    /// Any bytes at all: an answer or an error, never a panic; what is read writes
    /// back the same.
    #[test]
    fn any_v10_body_is_answered(body in proptest::collection::vec(any::<u8>(), 0..256)) {
        if let Ok(request) = OffsetFetchRequest::decode(&mut Bytes::from(body.clone()), 10) {
            let again: OffsetFetchRequest = dec(&enc(&request, 10), 10);
            prop_assert_eq!(again, request);
        }
        let _ = OffsetCommitRequest::decode(&mut Bytes::from(body), 10);
    }
}
