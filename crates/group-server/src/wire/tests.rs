//! The KIP-848 translations against the wire: requests encoded by `kafka-protocol`'s
//! client side at each version and decoded as the node does, responses encoded as the
//! node does and decoded as a client would. Null and empty stay apart everywhere.

use bytes::BytesMut;
use group_types as gt;
use group_types::wire::{Header, WireRequest};
use kafka_protocol::messages as kp;
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use rstest::rstest;

use super::offset_commit::offset_commit_request;
use super::offset_fetch::{FetchGroup, offset_fetch_response};
use crate::test_samples::{s as st, tid};

/// `value` encoded at `version` and decoded back: what the node sees of a client's request
/// (or a client of the node's response).
fn wire<T: Encodable + Decodable>(value: &T, version: i16) -> T {
    let mut out = BytesMut::new();
    value.encode(&mut out, version).expect("encodes");
    T::decode(&mut out.freeze(), version).expect("decodes")
}

fn heartbeat(
    version: i16,
    adjust: impl FnOnce(kp::ConsumerGroupHeartbeatRequest) -> kp::ConsumerGroupHeartbeatRequest,
) -> gt::ConsumerGroupHeartbeatRequest {
    let req = kp::ConsumerGroupHeartbeatRequest::default()
        .with_group_id(st("g").into())
        .with_member_id(st("m"))
        .with_member_epoch(0)
        .with_instance_id(None)
        .with_rack_id(None)
        .with_subscribed_topic_names(None)
        .with_server_assignor(None)
        .with_topic_partitions(None);
    gt::ConsumerGroupHeartbeatRequest::from_wire(
        &wire(&adjust(req), version),
        &Header::new(version, "client-1", "/127.0.0.1"),
    )
}

#[rstest]
#[case::v0(0)]
#[case::v1(1)]
fn a_keep_alive_is_all_nulls(#[case] version: i16) {
    let req = heartbeat(version, |r| r.with_member_epoch(7).with_rebalance_timeout_ms(-1));
    assert_eq!(
        req,
        gt::ConsumerGroupHeartbeatRequest {
            api_version: version,
            group_id: "g".into(),
            member_id: "m".into(),
            member_epoch: 7,
            instance_id: None,
            rack_id: None,
            rebalance_timeout_ms: -1,
            subscribed_topic_names: None,
            subscribed_topic_regex: None,
            server_assignor: None,
            topic_partitions: None,
            client_id: "client-1".into(),
            client_host: "/127.0.0.1".into(),
        }
    );
}

#[rstest]
#[case::instance_null(None, None)]
#[case::instance_empty(Some(""), Some(""))]
#[case::instance_set(Some("i-1"), Some("i-1"))]
fn the_instance_id_keeps_null_apart_from_empty(#[case] sent: Option<&str>, #[case] seen: Option<&str>) {
    for version in [0, 1] {
        let req = heartbeat(version, |r| r.with_instance_id(sent.map(st)));
        assert_eq!(req.instance_id.as_deref(), seen, "v{version}");
    }
}

#[rstest]
#[case::rack_null(None)]
#[case::rack_empty(Some(""))]
#[case::rack_set(Some("rack-a"))]
fn the_rack_and_the_assignor_keep_null_apart_from_empty(#[case] sent: Option<&str>) {
    let req = heartbeat(1, |r| r.with_rack_id(sent.map(st)).with_server_assignor(sent.map(st)));
    assert_eq!(req.rack_id.as_deref(), sent);
    assert_eq!(req.server_assignor.as_deref(), sent);
}

#[rstest]
#[case::null(None, None)]
#[case::empty(Some(vec![]), Some(vec![]))]
#[case::two(Some(vec!["a", "b"]), Some(vec!["a".to_owned(), "b".to_owned()]))]
fn subscribed_names_keep_null_apart_from_empty(
    #[case] sent: Option<Vec<&str>>,
    #[case] seen: Option<Vec<String>>,
) {
    for version in [0, 1] {
        let names = sent.clone().map(|n| n.into_iter().map(|t| st(t).into()).collect());
        let req = heartbeat(version, |r| r.with_subscribed_topic_names(names));
        assert_eq!(req.subscribed_topic_names, seen, "v{version}");
    }
}

/// §1.2: `""` clears a regex, null leaves it unchanged; v0 has no regex at all.
#[rstest]
#[case::v1_null(1, None, None)]
#[case::v1_empty_clears(1, Some(""), Some(""))]
#[case::v1_regex(1, Some("^foo.*"), Some("^foo.*"))]
#[case::v0_has_none(0, None, None)]
fn the_regex_exists_from_v1_and_keeps_null_apart_from_empty(
    #[case] version: i16,
    #[case] sent: Option<&str>,
    #[case] seen: Option<&str>,
) {
    let req = heartbeat(version, |r| r.with_subscribed_topic_regex(sent.map(st)));
    assert_eq!(req.subscribed_topic_regex.as_deref(), seen);
}

#[rstest]
#[case::null_is_unchanged(None, None)]
#[case::empty_on_join(Some(vec![]), Some(vec![]))]
#[case::owned(
    Some(vec![(1, vec![0, 2]), (2, vec![])]),
    Some(vec![
        gt::TopicIdPartitions::new(gt::TopicId::from_u128(1), [0, 2]),
        gt::TopicIdPartitions::new(gt::TopicId::from_u128(2), []),
    ])
)]
fn owned_partitions_keep_null_apart_from_empty(
    #[case] sent: Option<Vec<(u128, Vec<i32>)>>,
    #[case] seen: Option<Vec<gt::TopicIdPartitions>>,
) {
    use kp::consumer_group_heartbeat_request::TopicPartitions;
    for version in [0, 1] {
        let owned = sent.clone().map(|t| {
            t.into_iter()
                .map(|(id, p)| TopicPartitions::default().with_topic_id(tid(id)).with_partitions(p))
                .collect()
        });
        let req = heartbeat(version, |r| r.with_topic_partitions(owned));
        assert_eq!(req.topic_partitions, seen, "v{version}");
    }
}

#[test]
fn the_join_of_librdkafka_reads_as_sent() {
    // What librdkafka 2.16 sends on (re)join (§1.6): names, regex "", owned [], timeout.
    let req = heartbeat(1, |r| {
        r.with_member_id(st("QBdpPDc4SjWaMA7t6RRlAA"))
            .with_rebalance_timeout_ms(300_000)
            .with_subscribed_topic_names(Some(vec![st("t1").into()]))
            .with_subscribed_topic_regex(Some(st("")))
            .with_topic_partitions(Some(vec![]))
    });
    assert_eq!(req.member_id, "QBdpPDc4SjWaMA7t6RRlAA");
    assert_eq!(req.rebalance_timeout_ms, 300_000);
    assert_eq!(req.subscribed_topic_names, Some(vec!["t1".to_owned()]));
    assert_eq!(req.subscribed_topic_regex.as_deref(), Some(""));
    assert_eq!(req.topic_partitions, Some(vec![]));
}

fn answer(assignment: Option<Vec<gt::TopicIdPartitions>>) -> gt::ConsumerGroupHeartbeatResponse {
    gt::ConsumerGroupHeartbeatResponse {
        error_code: gt::ErrorCode::None,
        error_message: None,
        member_id: Some("m".into()),
        member_epoch: 3,
        heartbeat_interval_ms: 500,
        assignment,
    }
}

/// §1.3: the assignment is a nullable struct: null (marker -1) means "no change",
/// present and empty means "nothing is yours".
#[rstest]
#[case::v0_null(0, None)]
#[case::v1_null(1, None)]
#[case::v0_empty(0, Some(vec![]))]
#[case::v1_empty(1, Some(vec![]))]
#[case::v1_two_topics(1, Some(vec![
    gt::TopicIdPartitions::new(gt::TopicId::from_u128(7), [0, 1]),
    gt::TopicIdPartitions::new(gt::TopicId::from_u128(8), [4]),
]))]
fn the_assignment_is_null_or_the_full_set(
    #[case] version: i16,
    #[case] assignment: Option<Vec<gt::TopicIdPartitions>>,
) {
    let resp =
        wire(&gt::ConsumerGroupHeartbeatRequest::to_wire(answer(assignment.clone()), version), version);
    assert_eq!((resp.error_code, resp.member_epoch, resp.heartbeat_interval_ms), (0, 3, 500));
    assert_eq!(resp.member_id.as_deref(), Some("m"));
    assert_eq!(resp.error_message, None);
    let got = resp.assignment.map(|a| {
        a.topic_partitions
            .into_iter()
            .map(|t| gt::TopicIdPartitions::new(gt::TopicId(t.topic_id.into_bytes()), t.partitions))
            .collect::<Vec<_>>()
    });
    assert_eq!(got, assignment);
}

#[test]
fn the_null_assignment_is_the_minus_one_marker() {
    let mut out = BytesMut::new();
    gt::ConsumerGroupHeartbeatRequest::to_wire(answer(None), 1).encode(&mut out, 1).expect("encodes");
    // ..., heartbeat interval (4 bytes), the assignment marker, no tagged fields.
    assert_eq!(&out[out.len() - 2..], &[0xff, 0]);
    let mut out = BytesMut::new();
    gt::ConsumerGroupHeartbeatRequest::to_wire(answer(Some(vec![])), 1).encode(&mut out, 1).expect("encodes");
    // Marker 1, an empty compact array (1), the struct's tagged fields (0), the response's (0).
    assert_eq!(&out[out.len() - 4..], &[1, 1, 0, 0]);
}

#[test]
fn an_error_answer_has_no_member_id_and_keeps_its_message() {
    let err = gt::ConsumerGroupHeartbeatResponse::error(
        gt::ErrorCode::FencedMemberEpoch,
        Some("The consumer group member has a smaller member epoch (1) than the one known by the group coordinator (2).".into()),
    );
    let resp = wire(&gt::ConsumerGroupHeartbeatRequest::to_wire(err, 1), 1);
    assert_eq!(resp.error_code, 110);
    assert_eq!(resp.member_id, None);
    assert!(resp.error_message.is_some_and(|m| m.starts_with("The consumer group member")));
    assert_eq!((resp.member_epoch, resp.heartbeat_interval_ms, resp.assignment), (0, 0, None));
}

#[rstest]
#[case::v0(0)]
#[case::v1(1)]
fn describe_requests_read_as_sent(#[case] version: i16) {
    let req = kp::ConsumerGroupDescribeRequest::default()
        .with_group_ids(vec![st("a").into(), st("").into()])
        .with_include_authorized_operations(true);
    let got =
        gt::ConsumerGroupDescribeRequest::from_wire(&wire(&req, version), &Header::new(version, "", ""));
    assert_eq!(
        got,
        gt::ConsumerGroupDescribeRequest {
            api_version: version,
            group_ids: vec!["a".into(), gt::GroupId::empty()],
            include_authorized_operations: true,
        }
    );
}

fn described() -> gt::ConsumerGroupDescribeResponse {
    let tp = |id, name: &str, p: Vec<i32>| gt::DescribedTopicPartitions {
        topic_id: gt::TopicId::from_u128(id),
        topic_name: name.into(),
        partitions: p,
    };
    let member = gt::DescribedConsumerMember {
        member_id: "m1".into(),
        instance_id: Some("i1".into()),
        rack_id: None,
        member_epoch: 4,
        client_id: "ck".into(),
        client_host: "/127.0.0.1".into(),
        subscribed_topic_names: vec!["t1".into()],
        subscribed_topic_regex: String::new(),
        assignment: vec![tp(1, "t1", vec![0, 1])],
        target_assignment: vec![tp(1, "t1", vec![0])],
        member_type: 1,
    };
    gt::ConsumerGroupDescribeResponse {
        groups: vec![
            gt::DescribedConsumerGroup {
                error_code: gt::ErrorCode::None,
                error_message: None,
                group_id: "g".into(),
                group_state: "Reconciling".into(),
                group_epoch: 5,
                assignment_epoch: 5,
                assignor_name: "uniform".into(),
                members: vec![member],
                authorized_operations: gt::AUTHORIZED_OPERATIONS_OMITTED,
            },
            gt::DescribedConsumerGroup::error(
                "c",
                gt::ErrorCode::GroupIdNotFound,
                Some("Group c not found.".into()),
            ),
        ],
    }
}

/// v1 adds the member type (1: consumer protocol); a v0 reader sees the default, -1.
#[rstest]
#[case::v0(0, -1)]
#[case::v1(1, 1)]
fn described_groups_read_back_with_the_member_type_of_the_version(
    #[case] version: i16,
    #[case] member_type: i8,
) {
    let resp = wire(&gt::ConsumerGroupDescribeRequest::to_wire(described(), version), version);
    let [g, missing] = &resp.groups[..] else { panic!("two groups: {resp:?}") };
    assert_eq!((g.error_code, g.group_id.0.as_str(), g.group_state.as_str()), (0, "g", "Reconciling"));
    assert_eq!((g.group_epoch, g.assignment_epoch, g.assignor_name.as_str()), (5, 5, "uniform"));
    assert_eq!(g.authorized_operations, i32::MIN);
    let m = &g.members[0];
    assert_eq!((m.member_id.as_str(), m.member_epoch, m.member_type), ("m1", 4, member_type));
    assert_eq!(m.instance_id.as_deref(), Some("i1"));
    assert_eq!(m.rack_id, None);
    assert_eq!((m.client_id.as_str(), m.client_host.as_str()), ("ck", "/127.0.0.1"));
    assert_eq!(m.subscribed_topic_regex.as_deref(), Some(""));
    let a = &m.assignment.topic_partitions[0];
    assert_eq!((a.topic_id, a.topic_name.0.as_str(), &a.partitions[..]), (tid(1), "t1", &[0, 1][..]));
    assert_eq!(m.target_assignment.topic_partitions[0].partitions, vec![0]);
    assert_eq!(missing.error_code, 69);
    assert_eq!(missing.error_message.as_deref(), Some("Group c not found."));
    assert!(missing.members.is_empty());
}

#[test]
fn commit_metadata_shares_the_frame_in_and_the_store_out() {
    use kp::offset_commit_request::{OffsetCommitRequestPartition, OffsetCommitRequestTopic};

    let frame = bytes::Bytes::from_static(b"..checkpoint-7..");
    let sent = StrBytes::from_utf8(frame.slice(2..14)).unwrap();
    let partition = |metadata| {
        OffsetCommitRequestPartition::default().with_committed_offset(5).with_committed_metadata(metadata)
    };
    let req = kp::OffsetCommitRequest::default().with_group_id(st("g").into()).with_topics(vec![
        OffsetCommitRequestTopic::default()
            .with_name(st("t").into())
            .with_partitions(vec![partition(Some(sent.clone())), partition(None)]),
    ]);
    let commit = offset_commit_request(&req, 9);
    let [(_, with), (_, null)] = &commit.offsets[0].partitions[..] else { panic!("{commit:?}") };
    let taken = with.metadata.as_ref().unwrap();
    assert_eq!((taken.as_str(), taken.as_bytes().as_ptr()), ("checkpoint-7", sent.as_ptr()));
    assert_eq!(null.metadata, None);

    // An OffsetFetch answer writes the stored bytes, not a copy of them.
    let stored = gt::CommitMetadata::from("checkpoint-7");
    let mut resp = gt::OffsetFetchResponse::default();
    let data = gt::OffsetFetchData { offset: 5, metadata: stored.clone(), ..gt::OffsetFetchData::missing() };
    resp.offsets.entry("t".to_owned()).or_default().insert(0, data);
    let group = FetchGroup { request: gt::OffsetFetchRequest::all("g"), order: None };
    for version in [7, 8] {
        let out = offset_fetch_response(std::slice::from_ref(&group), vec![resp.clone()], version);
        let answered = if version >= 8 {
            out.groups[0].topics[0].partitions[0].metadata.clone()
        } else {
            out.topics[0].partitions[0].metadata.clone()
        };
        let answered = answered.unwrap();
        assert_eq!((answered.as_str(), answered.as_ptr()), ("checkpoint-7", stored.as_bytes().as_ptr()));
    }
}
