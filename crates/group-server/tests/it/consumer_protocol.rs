//! KIP-848 over TCP: ConsumerGroupHeartbeat and ConsumerGroupDescribe frames at both
//! versions, the Metadata-by-topic-id lookups librdkafka resolves assignments with, and
//! CreateTopics feeding the coordinator's metadata image.

use group_server::topic_id_for;
use kafka_protocol::messages::*;
use rstest::rstest;

use crate::client::{Conn, s, server, server_with};

/// UNKNOWN_TOPIC_ID.
const UNKNOWN_TOPIC_ID: i16 = 100;

fn join_request(member: &str, topics: &[&str]) -> ConsumerGroupHeartbeatRequest {
    ConsumerGroupHeartbeatRequest::default()
        .with_group_id(s("g").into())
        .with_member_id(s(member))
        .with_member_epoch(0)
        .with_rebalance_timeout_ms(10_000)
        .with_subscribed_topic_names(Some(topics.iter().map(|t| s(t).into()).collect()))
        .with_subscribed_topic_regex(Some(s("")))
        .with_topic_partitions(Some(vec![]))
}

fn heartbeat(
    c: &mut Conn,
    version: i16,
    req: &ConsumerGroupHeartbeatRequest,
) -> ConsumerGroupHeartbeatResponse {
    c.call(ApiKey::ConsumerGroupHeartbeat, version, req)
}

fn assigned(resp: &ConsumerGroupHeartbeatResponse) -> Option<Vec<(uuid::Uuid, Vec<i32>)>> {
    resp.assignment
        .as_ref()
        .map(|a| a.topic_partitions.iter().map(|t| (t.topic_id, t.partitions.clone())).collect())
}

#[test]
fn api_versions_advertises_both_kip_848_apis_and_create_topics() {
    let server = server();
    let mut c = Conn::open(server.local_addr());
    let resp: ApiVersionsResponse = c.call(ApiKey::ApiVersions, 3, &ApiVersionsRequest::default());
    let range =
        |key: i16| resp.api_keys.iter().find(|k| k.api_key == key).map(|k| (k.min_version, k.max_version));
    assert_eq!(range(68), Some((0, 1)), "ConsumerGroupHeartbeat");
    assert_eq!(range(69), Some((0, 1)), "ConsumerGroupDescribe");
    assert_eq!(range(19), Some((2, 7)), "CreateTopics");
    // librdkafka resolves assigned topic ids with Metadata v12+, OffsetCommit and
    // OffsetFetch v9 carry the member epoch, and v10 names topics by id (KIP-848).
    assert_eq!(range(3), Some((0, 13)));
    assert_eq!(range(8).map(|r| r.1), Some(10));
    assert_eq!(range(9).map(|r| r.1), Some(10));
    assert_eq!(range(16).map(|r| r.1), Some(5));
}

/// A v1 join, a keep-alive and a leave, as librdkafka sends them (§1.6).
#[test]
fn a_member_joins_heartbeats_and_leaves() {
    let server = server();
    let mut c = Conn::open(server.local_addr());
    let resp = heartbeat(&mut c, 1, &join_request("m-1", &["t1"]));
    assert_eq!((resp.error_code, resp.member_epoch), (0, 1), "{resp:?}");
    assert_eq!(resp.member_id.as_deref(), Some("m-1"));
    assert_eq!(resp.heartbeat_interval_ms, 5000);
    assert_eq!(assigned(&resp), Some(vec![(topic_id_for("t1"), vec![0, 1, 2])]));
    // Every nullable field null: "unchanged"; no assignment comes back.
    let keep_alive = ConsumerGroupHeartbeatRequest::default()
        .with_group_id(s("g").into())
        .with_member_id(s("m-1"))
        .with_member_epoch(1);
    let resp = heartbeat(&mut c, 1, &keep_alive);
    assert_eq!((resp.error_code, resp.member_epoch, assigned(&resp)), (0, 1, None), "{resp:?}");
    let leave = keep_alive.clone().with_member_epoch(-1);
    let resp = heartbeat(&mut c, 1, &leave);
    assert_eq!((resp.error_code, resp.member_epoch), (0, -1), "{resp:?}");
    // Gone: its next heartbeat is from an unknown member.
    let resp = heartbeat(&mut c, 1, &keep_alive);
    assert_eq!(resp.error_code, 25, "{resp:?}");
    assert_eq!(resp.member_id, None);
}

/// v0 lets the coordinator make up the member id; v1 requires the client's (KIP-1082).
#[rstest]
#[case::v0_generates_an_id(0, 0)]
#[case::v1_requires_one(1, 42)]
fn an_empty_member_id_on_join(#[case] version: i16, #[case] error: i16) {
    let server = server();
    let mut c = Conn::open(server.local_addr());
    let req = join_request("", &["t1"]);
    let req = if version == 0 { req.with_subscribed_topic_regex(None) } else { req };
    let resp = heartbeat(&mut c, version, &req);
    assert_eq!(resp.error_code, error, "{resp:?}");
    if error == 0 {
        assert!(resp.member_id.is_some_and(|m| !m.is_empty()));
    } else {
        assert!(resp.error_message.is_some(), "INVALID_REQUEST says why");
    }
}

#[test]
fn a_regex_subscription_is_resolved_against_the_topics() {
    let server = server_with(|c| {
        c.topics.push(group_server::TopicSpec { name: "foo-a".into(), partitions: 2 });
    });
    let mut c = Conn::open(server.local_addr());
    let req = join_request("m", &[]).with_subscribed_topic_regex(Some(s("foo-.*")));
    let resp = heartbeat(&mut c, 1, &req);
    assert_eq!((resp.error_code, resp.member_epoch), (0, 1), "{resp:?}");
    // The regex is resolved after the join; the next heartbeat carries the partitions.
    let keep_alive = ConsumerGroupHeartbeatRequest::default()
        .with_group_id(s("g").into())
        .with_member_id(s("m"))
        .with_member_epoch(1)
        .with_topic_partitions(Some(vec![]));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let resp = heartbeat(&mut c, 1, &keep_alive.clone().with_member_epoch(resp.member_epoch.max(1)));
        assert_eq!(resp.error_code, 0, "{resp:?}");
        if let Some(a) = assigned(&resp).filter(|a| !a.is_empty()) {
            assert_eq!(a, vec![(topic_id_for("foo-a"), vec![0, 1])]);
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the regex never resolved");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn without_the_consumer_protocol_both_apis_are_unsupported() {
    let server = server_with(|c| c.coordinator.consumer.enabled = false);
    let mut c = Conn::open(server.local_addr());
    let resp = heartbeat(&mut c, 1, &join_request("m", &["t1"]));
    assert_eq!(resp.error_code, 35, "{resp:?}");
    let req = ConsumerGroupDescribeRequest::default().with_group_ids(vec![s("g").into()]);
    let resp: ConsumerGroupDescribeResponse = c.call(ApiKey::ConsumerGroupDescribe, 0, &req);
    assert_eq!(resp.groups[0].error_code, 35, "{resp:?}");
}

/// The member's client id is the request header's, its host the peer as Kafka prints an
/// `InetAddress`; v0 has no member type.
#[rstest]
#[case::v0(0, -1)]
#[case::v1(1, 1)]
fn describe_shows_the_member_as_it_connected(#[case] version: i16, #[case] member_type: i8) {
    let server = server();
    let mut c = Conn::open(server.local_addr());
    let resp = heartbeat(&mut c, 1, &join_request("m-1", &["t1"]).with_instance_id(Some(s("i-1"))));
    assert_eq!(resp.error_code, 0, "{resp:?}");
    let req = ConsumerGroupDescribeRequest::default().with_group_ids(vec![s("g").into(), s("nope").into()]);
    let resp: ConsumerGroupDescribeResponse = c.call(ApiKey::ConsumerGroupDescribe, version, &req);
    let [g, nope] = &resp.groups[..] else { panic!("two groups: {resp:?}") };
    assert_eq!((g.error_code, g.group_state.as_str(), g.group_epoch), (0, "Stable", 1), "{g:?}");
    let m = &g.members[0];
    assert_eq!(
        (m.member_id.as_str(), m.client_id.as_str(), m.client_host.as_str()),
        ("m-1", "it", "/127.0.0.1")
    );
    assert_eq!(m.instance_id.as_deref(), Some("i-1"));
    assert_eq!(m.member_type, member_type);
    let names: Vec<&str> = m.subscribed_topic_names.iter().map(|t| t.0.as_str()).collect();
    assert_eq!(names, ["t1"]);
    let a = &m.assignment.topic_partitions[0];
    assert_eq!(
        (a.topic_id, a.topic_name.0.as_str(), a.partitions.clone()),
        (topic_id_for("t1"), "t1", vec![0, 1, 2])
    );
    assert_eq!(nope.error_code, 69, "{nope:?}");
}

/// librdkafka asks Metadata for assigned topic ids (v12+): a known id is answered with
/// its name, an unknown one with UNKNOWN_TOPIC_ID and the id echoed, no name.
#[rstest]
#[case::v12(12)]
#[case::v13(13)]
fn metadata_by_topic_id(#[case] version: i16) {
    let server = server();
    let mut c = Conn::open(server.local_addr());
    let by_id = |id| metadata_request::MetadataRequestTopic::default().with_name(None).with_topic_id(id);
    let unknown = uuid::Uuid::from_u128(0x1234);
    let req = MetadataRequest::default().with_topics(Some(vec![by_id(topic_id_for("t1")), by_id(unknown)]));
    let resp: MetadataResponse = c.call(ApiKey::Metadata, version, &req);
    let [known, missing] = &resp.topics[..] else { panic!("two topics: {resp:?}") };
    assert_eq!(known.error_code, 0);
    assert_eq!(known.name.as_ref().map(|n| n.0.as_str()), Some("t1"));
    assert_eq!((known.topic_id, known.partitions.len()), (topic_id_for("t1"), 3));
    assert_eq!(
        (missing.error_code, missing.topic_id, missing.name.clone()),
        (UNKNOWN_TOPIC_ID, unknown, None)
    );
}

fn create(name: &str, partitions: i32) -> create_topics_request::CreatableTopic {
    create_topics_request::CreatableTopic::default()
        .with_name(s(name).into())
        .with_num_partitions(partitions)
        .with_replication_factor(1)
}

fn create_topics(
    c: &mut Conn,
    version: i16,
    topics: Vec<create_topics_request::CreatableTopic>,
    validate_only: bool,
) -> Vec<(String, i16, i32)> {
    let req = CreateTopicsRequest::default()
        .with_topics(topics)
        .with_timeout_ms(5000)
        .with_validate_only(validate_only);
    let resp: CreateTopicsResponse = c.call(ApiKey::CreateTopics, version, &req);
    resp.topics.iter().map(|t| (t.name.0.to_string(), t.error_code, t.num_partitions)).collect()
}

#[rstest]
#[case::v4_librdkafka(4)]
#[case::v7(7)]
fn create_topics_checks_each_topic_as_kafka_does(#[case] version: i16) {
    let server = server();
    let mut c = Conn::open(server.local_addr());
    let got = create_topics(
        &mut c,
        version,
        vec![
            create("new-1", 2),
            create("t1", 1),
            create("bad name", 1),
            create("zero", 0),
            create("dup", 1),
            create("dup", 1),
        ],
        false,
    );
    let n = if version >= 5 { 2 } else { -1 };
    assert_eq!(
        got,
        [
            ("new-1".to_owned(), 0, n),
            ("t1".to_owned(), 36, -1),
            ("bad name".to_owned(), 17, -1),
            ("zero".to_owned(), 37, -1),
            ("dup".to_owned(), 42, -1),
            ("dup".to_owned(), 42, -1),
        ]
    );
    // Checked only: nothing is created.
    assert_eq!(create_topics(&mut c, version, vec![create("dry", -1)], true)[0].1, 0);
    let topic = |n: &str| metadata_request::MetadataRequestTopic::default().with_name(Some(s(n).into()));
    let req = MetadataRequest::default().with_topics(Some(vec![topic("new-1"), topic("dry")]));
    let resp: MetadataResponse = c.call(ApiKey::Metadata, 12, &req);
    assert_eq!((resp.topics[0].error_code, resp.topics[0].partitions.len()), (0, 2));
    assert_eq!(resp.topics[0].topic_id, topic_id_for("new-1"));
    assert_eq!(resp.topics[1].error_code, 3, "a validate-only topic is not created");
}

/// A topic created at run time is in the coordinator's metadata image (a member
/// subscribed to it is assigned its partitions) and may be committed to.
#[test]
fn a_created_topic_reaches_the_coordinator() {
    let server = server();
    let mut c = Conn::open(server.local_addr());
    let resp = heartbeat(&mut c, 1, &join_request("m", &["later"]));
    assert_eq!((resp.error_code, assigned(&resp)), (0, Some(vec![])), "{resp:?}");
    assert_eq!(create_topics(&mut c, 7, vec![create("later", 2)], false)[0].1, 0);
    let keep_alive = ConsumerGroupHeartbeatRequest::default()
        .with_group_id(s("g").into())
        .with_member_id(s("m"))
        .with_member_epoch(resp.member_epoch);
    let resp = heartbeat(&mut c, 1, &keep_alive);
    assert_eq!(resp.error_code, 0, "{resp:?}");
    assert_eq!(assigned(&resp), Some(vec![(topic_id_for("later"), vec![0, 1])]));
    // A standalone commit to the new topic is accepted (the coordinator's topics too).
    use offset_commit_request::{OffsetCommitRequestPartition, OffsetCommitRequestTopic};
    let commit = OffsetCommitRequest::default()
        .with_group_id(s("standalone").into())
        .with_generation_id_or_member_epoch(-1)
        .with_topics(vec![OffsetCommitRequestTopic::default().with_name(s("later").into()).with_partitions(
            vec![OffsetCommitRequestPartition::default().with_partition_index(1).with_committed_offset(3)],
        )]);
    let resp: OffsetCommitResponse = c.call(ApiKey::OffsetCommit, 9, &commit);
    assert_eq!(resp.topics[0].partitions[0].error_code, 0, "{resp:?}");
}

fn commit_at(member: &str, epoch: i32) -> OffsetCommitRequest {
    use offset_commit_request::{OffsetCommitRequestPartition, OffsetCommitRequestTopic};
    let partition = OffsetCommitRequestPartition::default().with_partition_index(0).with_committed_offset(5);
    OffsetCommitRequest::default()
        .with_group_id(s("g").into())
        .with_member_id(s(member))
        .with_generation_id_or_member_epoch(epoch)
        .with_topics(vec![
            OffsetCommitRequestTopic::default().with_name(s("t1").into()).with_partitions(vec![partition]),
        ])
}

/// §7.1: a consumer-protocol member commits at its member epoch from OffsetCommit v9 on;
/// another epoch is STALE_MEMBER_EPOCH, an older version UNSUPPORTED_VERSION.
#[rstest]
#[case::v9_at_the_member_epoch(9, 1, 0)]
#[case::v9_another_epoch(9, 2, 113)]
#[case::v8_is_too_old(8, 1, 35)]
fn commits_from_a_consumer_protocol_member(#[case] version: i16, #[case] epoch: i32, #[case] error: i16) {
    let server = server();
    let mut c = Conn::open(server.local_addr());
    let resp = heartbeat(&mut c, 1, &join_request("m", &["t1"]));
    assert_eq!((resp.error_code, resp.member_epoch), (0, 1), "{resp:?}");
    let resp: OffsetCommitResponse = c.call(ApiKey::OffsetCommit, version, &commit_at("m", epoch));
    assert_eq!(resp.topics[0].partitions[0].error_code, error, "{resp:?}");
}

/// §7.2: OffsetFetch v9 from a member checks its epoch (STALE_MEMBER_EPOCH otherwise).
#[test]
fn offset_fetch_checks_the_member_epoch() {
    use offset_fetch_request::{OffsetFetchRequestGroup, OffsetFetchRequestTopics};
    let server = server();
    let mut c = Conn::open(server.local_addr());
    let resp = heartbeat(&mut c, 1, &join_request("m", &["t1"]));
    assert_eq!(resp.error_code, 0, "{resp:?}");
    let fetch = |epoch| {
        let topic =
            OffsetFetchRequestTopics::default().with_name(s("t1").into()).with_partition_indexes(vec![0]);
        let group = OffsetFetchRequestGroup::default()
            .with_group_id(s("g").into())
            .with_member_id(Some(s("m")))
            .with_member_epoch(epoch)
            .with_topics(Some(vec![topic]));
        OffsetFetchRequest::default().with_groups(vec![group]).with_require_stable(true)
    };
    let ok: OffsetFetchResponse = c.call(ApiKey::OffsetFetch, 9, &fetch(1));
    assert_eq!(ok.groups[0].error_code, 0, "{ok:?}");
    let stale: OffsetFetchResponse = c.call(ApiKey::OffsetFetch, 9, &fetch(7));
    assert_eq!(stale.groups[0].error_code, 113, "{stale:?}");
}

/// ListGroups v5: the group type, and the types filter (case-insensitive).
#[test]
fn list_groups_v5_knows_consumer_groups() {
    let server = server();
    let mut c = Conn::open(server.local_addr());
    assert_eq!(heartbeat(&mut c, 1, &join_request("m", &["t1"])).error_code, 0);
    let mut list = |types: &[&str]| {
        let req = ListGroupsRequest::default().with_types_filter(types.iter().map(|t| s(t)).collect());
        let resp: ListGroupsResponse = c.call(ApiKey::ListGroups, 5, &req);
        resp.groups.iter().map(|g| (g.group_id.0.to_string(), g.group_type.to_string())).collect::<Vec<_>>()
    };
    assert_eq!(list(&[]), [("g".to_owned(), "consumer".to_owned())]);
    assert_eq!(list(&["Consumer"]).len(), 1);
    assert!(list(&["classic"]).is_empty());
}
