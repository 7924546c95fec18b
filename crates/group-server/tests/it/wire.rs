//! The wire over TCP: versions, header versions, the node APIs and a whole group life cycle
//! at a non-flexible (librdkafka) and a flexible (kafka-python) version set.

use bytes::Bytes;
use group_server::{SUPPORTED_APIS, topic_id_for};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::Decodable;

use crate::client::{Conn, join, produce_one_record, s, server};

#[test]
fn api_versions_advertises_exactly_the_crate_ranges_with_header_v0() {
    let server = server();
    let mut c = Conn::open(server.local_addr());
    for v in [0, 3, 4] {
        let resp: ApiVersionsResponse = c.call(ApiKey::ApiVersions, v, &ApiVersionsRequest::default());
        assert_eq!(resp.error_code, 0);
        let got: Vec<(i16, i16, i16)> =
            resp.api_keys.iter().map(|k| (k.api_key, k.min_version, k.max_version)).collect();
        // A node on its own hosts its share coordinator: share groups are on.
        let want: Vec<(i16, i16, i16)> =
            SUPPORTED_APIS.iter().map(|&(k, lo, hi)| (k as i16, lo, hi)).collect();
        assert_eq!(got, want);
        assert!(
            group_server::SHARE_GROUP_APIS.iter().all(|k| got.iter().any(|&(g, _, _)| g == *k as i16)),
            "the share group APIs are advertised"
        );
        // Produce is advertised (librdkafka needs it), and KIP-848's consumer protocol;
        // OffsetForLeaderEpoch and InitProducerId are not.
        assert!(got.iter().any(|&(k, lo, _)| k == 0 && lo == 3));
        assert!(got.iter().any(|&(k, _, _)| k == 68) && got.iter().any(|&(k, _, _)| k == 69));
        assert!(!got.iter().any(|&(k, _, _)| k == 23 || k == 22));
    }
}

#[test]
fn metadata_lists_the_configured_topic_with_a_stable_id() {
    let server = server();
    let mut c = Conn::open(server.local_addr());
    let topic = |n: &str| metadata_request::MetadataRequestTopic::default().with_name(Some(s(n).into()));
    let req = MetadataRequest::default().with_topics(Some(vec![topic("t1"), topic("nope")]));
    let resp: MetadataResponse = c.call(ApiKey::Metadata, 13, &req);
    assert_eq!(resp.brokers.len(), 1);
    assert_eq!(resp.brokers[0].port, i32::from(server.local_addr().port()));
    assert_eq!(resp.topics[0].error_code, 0);
    assert_eq!(resp.topics[0].topic_id, topic_id_for("t1"));
    assert_eq!(resp.topics[0].partitions.len(), 3);
    assert_eq!(resp.topics[1].error_code, 3);
    // v0: topic ids do not exist; the broker list is the same.
    let resp: MetadataResponse =
        c.call(ApiKey::Metadata, 0, &MetadataRequest::default().with_topics(Some(vec![])));
    assert_eq!(resp.topics.len(), 1);
}

#[test]
fn find_coordinator_points_at_this_node_single_and_batched() {
    let server = server();
    let port = i32::from(server.local_addr().port());
    let mut c = Conn::open(server.local_addr());
    let v2: FindCoordinatorResponse =
        c.call(ApiKey::FindCoordinator, 2, &FindCoordinatorRequest::default().with_key(s("g")));
    assert_eq!((v2.error_code, v2.node_id.0, v2.port), (0, 0, port));
    let req = FindCoordinatorRequest::default().with_coordinator_keys(vec![s("g"), s("h")]);
    let v6: FindCoordinatorResponse = c.call(ApiKey::FindCoordinator, 6, &req);
    assert_eq!(v6.coordinators.len(), 2);
    assert!(v6.coordinators.iter().all(|k| k.port == port && k.error_code == 0));
}

#[test]
fn list_offsets_fetch_and_produce_over_empty_partitions() {
    let server = server();
    let mut c = Conn::open(server.local_addr());
    let part =
        |i| list_offsets_request::ListOffsetsPartition::default().with_partition_index(i).with_timestamp(-2);
    let req = ListOffsetsRequest::default().with_isolation_level(1).with_topics(vec![
        list_offsets_request::ListOffsetsTopic::default()
            .with_name(s("t1").into())
            .with_partitions(vec![part(0), part(9)]),
    ]);
    let resp: ListOffsetsResponse = c.call(ApiKey::ListOffsets, 7, &req);
    let p = &resp.topics[0].partitions;
    assert_eq!((p[0].error_code, p[0].offset), (0, 0));
    assert_eq!(p[1].error_code, 3);

    // Fetch v16 by topic id; an offset past the empty end is not OFFSET_OUT_OF_RANGE.
    let fp = fetch_request::FetchPartition::default().with_partition(1).with_fetch_offset(5);
    let topic =
        fetch_request::FetchTopic::default().with_topic_id(topic_id_for("t1")).with_partitions(vec![fp]);
    let req = FetchRequest::default().with_max_wait_ms(10).with_topics(vec![topic]);
    let resp: FetchResponse = c.call(ApiKey::Fetch, 16, &req);
    let data = &resp.responses[0].partitions[0];
    assert_eq!(resp.responses[0].topic_id, topic_id_for("t1"));
    assert_eq!((data.error_code, data.high_watermark), (0, 5));
    assert_eq!(data.records.as_ref().map(Bytes::len), Some(0));

    // An unknown topic id is UNKNOWN_TOPIC_ID (100).
    let fp = fetch_request::FetchPartition::default().with_partition(0);
    let topic =
        fetch_request::FetchTopic::default().with_topic_id(topic_id_for("nope")).with_partitions(vec![fp]);
    let req = FetchRequest::default().with_max_wait_ms(0).with_topics(vec![topic]);
    let resp: FetchResponse = c.call(ApiKey::Fetch, 16, &req);
    assert_eq!(resp.responses[0].partitions[0].error_code, 100);

    let resp: ProduceResponse = c.call(ApiKey::Produce, 9, &produce_one_record("t1"));
    let p = &resp.responses[0].partition_responses[0];
    assert_eq!(p.error_code, 42);
    assert!(p.error_message.as_ref().is_some_and(|m| m.contains("stores no records")));
}

/// Share groups are off (`--rebalance-protocols` without `share`): ShareFetch and
/// ShareAcknowledge are answered UNSUPPORTED_VERSION (35), as `KafkaApis` answers them
/// without the `share.version` feature, and the connection stays up.
#[test]
fn share_fetch_and_acknowledge_while_share_groups_are_off() {
    let server = crate::client::server_with(|c| c.coordinator.share.enabled = false);
    let mut c = Conn::open(server.local_addr());
    let fp = share_fetch_request::FetchPartition::default().with_partition_index(0);
    let topic = share_fetch_request::FetchTopic::default()
        .with_topic_id(topic_id_for("t1"))
        .with_partitions(vec![fp]);
    let req = ShareFetchRequest::default()
        .with_group_id(Some(s("g").into()))
        .with_member_id(Some(s("m")))
        .with_max_wait_ms(5_000)
        .with_min_bytes(1)
        .with_topics(vec![topic]);
    let resp: ShareFetchResponse = c.call(ApiKey::ShareFetch, 1, &req);
    assert_eq!((resp.error_code, resp.responses.len()), (35, 0));
    let req = ShareAcknowledgeRequest::default()
        .with_group_id(Some(s("g").into()))
        .with_member_id(Some(s("m")))
        .with_share_session_epoch(1);
    let resp: ShareAcknowledgeResponse = c.call(ApiKey::ShareAcknowledge, 1, &req);
    assert_eq!(resp.error_code, 35);
    let resp: ApiVersionsResponse = c.call(ApiKey::ApiVersions, 3, &ApiVersionsRequest::default());
    assert_eq!(resp.error_code, 0);
}

/// The whole life cycle at librdkafka's (non-flexible) and kafka-python's (flexible) versions.
#[rstest::rstest]
#[case::librdkafka(5, 3, 3, 1, 9, 9)]
#[case::kafka_python(7, 5, 4, 5, 8, 8)]
#[case::oldest(0, 0, 0, 0, 2, 1)]
#[case::newest(9, 5, 4, 5, 9, 9)]
fn a_group_life_cycle(
    #[case] jv: i16,
    #[case] sv: i16,
    #[case] hv: i16,
    #[case] lv: i16,
    #[case] cv: i16,
    #[case] fv: i16,
) {
    let server = server();
    let mut c = Conn::open(server.local_addr());
    let mut resp: JoinGroupResponse = c.call(ApiKey::JoinGroup, jv, &join("g", ""));
    if jv >= 4 {
        assert_eq!(resp.error_code, 79, "MEMBER_ID_REQUIRED");
        let id = resp.member_id.as_str().to_owned();
        resp = c.call(ApiKey::JoinGroup, jv, &join("g", &id));
    }
    assert_eq!(resp.error_code, 0);
    assert_eq!(resp.generation_id, 1);
    assert_eq!(resp.leader, resp.member_id);
    assert_eq!(resp.members.len(), 1);
    let member = resp.member_id.clone();

    let assignment =
        Bytes::from_static(&[0, 0, 0, 0, 0, 1, 0, 2, b't', b'1', 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0]);
    let sync = SyncGroupRequest::default()
        .with_group_id(s("g").into())
        .with_generation_id(1)
        .with_member_id(member.clone())
        .with_assignments(vec![
            sync_group_request::SyncGroupRequestAssignment::default()
                .with_member_id(member.clone())
                .with_assignment(assignment.clone()),
        ]);
    let sync = if sv >= 5 {
        sync.with_protocol_type(Some(s("consumer"))).with_protocol_name(Some(s("range")))
    } else {
        sync
    };
    let sresp: SyncGroupResponse = c.call(ApiKey::SyncGroup, sv, &sync);
    assert_eq!(sresp.error_code, 0);
    assert_eq!(sresp.assignment, assignment);

    let hb = HeartbeatRequest::default()
        .with_group_id(s("g").into())
        .with_generation_id(1)
        .with_member_id(member.clone());
    let hresp: HeartbeatResponse = c.call(ApiKey::Heartbeat, hv, &hb);
    assert_eq!(hresp.error_code, 0);

    let p = |i, o| {
        offset_commit_request::OffsetCommitRequestPartition::default()
            .with_partition_index(i)
            .with_committed_offset(o)
            .with_committed_metadata(Some(s("md\0")))
    };
    let commit = OffsetCommitRequest::default()
        .with_group_id(s("g").into())
        .with_generation_id_or_member_epoch(1)
        .with_member_id(member.clone())
        .with_topics(vec![
            offset_commit_request::OffsetCommitRequestTopic::default()
                .with_name(s("t1").into())
                .with_partitions(vec![p(0, 10), p(1, 11)]),
        ]);
    let cresp: OffsetCommitResponse = c.call(ApiKey::OffsetCommit, cv, &commit);
    assert!(cresp.topics[0].partitions.iter().all(|p| p.error_code == 0));
    assert_eq!(cresp.topics[0].partitions.len(), 2);

    // Both layouts' partitions have these fields, in types of their own.
    macro_rules! rows {
        ($partitions:expr) => {
            $partitions
                .iter()
                .map(|p| {
                    (
                        p.partition_index,
                        p.committed_offset,
                        p.metadata.as_ref().map_or("", |m| m.as_str()).into(),
                    )
                })
                .collect()
        };
    }
    let fetched: Vec<(i32, i64, String)> = if fv >= 8 {
        let g = offset_fetch_request::OffsetFetchRequestGroup::default()
            .with_group_id(s("g").into())
            .with_topics(None);
        let fresp: OffsetFetchResponse =
            c.call(ApiKey::OffsetFetch, fv, &OffsetFetchRequest::default().with_groups(vec![g]));
        rows!(&fresp.groups[0].topics[0].partitions)
    } else {
        let t = offset_fetch_request::OffsetFetchRequestTopic::default()
            .with_name(s("t1").into())
            .with_partition_indexes(vec![1, 0, 2]);
        let req = OffsetFetchRequest::default().with_group_id(s("g").into()).with_topics(Some(vec![t]));
        let fresp: OffsetFetchResponse = c.call(ApiKey::OffsetFetch, fv, &req);
        rows!(&fresp.topics[0].partitions)
    };
    let want: Vec<(i32, i64, String)> = if fv >= 8 {
        vec![(0, 10, "md\0".into()), (1, 11, "md\0".into())]
    } else {
        vec![(1, 11, "md\0".into()), (0, 10, "md\0".into()), (2, -1, String::new())]
    };
    assert_eq!(fetched, want, "metadata comes back byte for byte, NUL included");

    let describe: DescribeGroupsResponse =
        c.call(ApiKey::DescribeGroups, 5, &DescribeGroupsRequest::default().with_groups(vec![s("g").into()]));
    assert_eq!(describe.groups[0].group_state.as_str(), "Stable");
    assert_eq!(describe.groups[0].members[0].member_assignment, assignment);

    let leave = if lv <= 2 {
        LeaveGroupRequest::default().with_group_id(s("g").into()).with_member_id(member.clone())
    } else {
        LeaveGroupRequest::default()
            .with_group_id(s("g").into())
            .with_members(vec![leave_group_request::MemberIdentity::default().with_member_id(member.clone())])
    };
    let lresp: LeaveGroupResponse = c.call(ApiKey::LeaveGroup, lv, &leave);
    assert_eq!(lresp.error_code, 0);

    let list: ListGroupsResponse = c.call(ApiKey::ListGroups, 5, &ListGroupsRequest::default());
    assert_eq!(list.groups.len(), 1);
    assert_eq!(list.groups[0].group_state.as_str(), "Empty");
    assert_eq!(list.groups[0].group_type.as_str(), "classic");
}

/// A JoinGroup parked at its barrier holds back only the replies behind it on its own
/// connection; the other connection keeps being served, and order is kept.
#[test]
fn a_parked_join_keeps_request_order_and_blocks_nobody_else() {
    let server = server();
    let mut a = Conn::open(server.local_addr());
    let mut b = Conn::open(server.local_addr());
    let first: JoinGroupResponse = a.call(ApiKey::JoinGroup, 5, &join("g", ""));
    let first: JoinGroupResponse = a.call(ApiKey::JoinGroup, 5, &join("g", first.member_id.as_str()));
    assert_eq!(first.generation_id, 1);
    let a_id = first.member_id.clone();

    // B joins (after the member-id round trip): the group rebalances and parks B until A rejoins.
    let b0: JoinGroupResponse = b.call(ApiKey::JoinGroup, 5, &join("g", ""));
    let join_cid = b.send(ApiKey::JoinGroup, 5, &join("g", b0.member_id.as_str()));
    let api_cid = b.send(ApiKey::ApiVersions, 3, &ApiVersionsRequest::default());

    // Meanwhile A is served: its heartbeat learns of the rebalance.
    let hb = HeartbeatRequest::default()
        .with_group_id(s("g").into())
        .with_generation_id(1)
        .with_member_id(a_id.clone());
    // B's join travels on another connection: heartbeat until the coordinator has seen it.
    let rebalancing = (0..10_000).any(|_| {
        let hresp: HeartbeatResponse = a.call(ApiKey::Heartbeat, 3, &hb);
        hresp.error_code == 27
    });
    assert!(rebalancing, "REBALANCE_IN_PROGRESS never came");
    let rejoin: JoinGroupResponse = a.call(ApiKey::JoinGroup, 5, &join("g", a_id.as_str()));
    assert_eq!(rejoin.generation_id, 2);

    // B's replies arrive in request order: the JoinGroup first, then the ApiVersions.
    let (cid, mut body) = b.recv(ApiKey::JoinGroup, 5);
    assert_eq!(cid, join_cid);
    let bj = JoinGroupResponse::decode(&mut body, 5).expect("join response");
    assert_eq!((bj.error_code, bj.generation_id), (0, 2));
    let (cid, _) = b.recv(ApiKey::ApiVersions, 3);
    assert_eq!(cid, api_cid);
}

/// `--advertise` is what clients are told, not the bind address.
#[test]
fn metadata_and_find_coordinator_name_the_advertised_address() {
    let server = crate::client::server_with(|c| c.advertise = Some(("coordinator.example".into(), 29092)));
    let mut c = Conn::open(server.local_addr());
    let resp: MetadataResponse = c.call(ApiKey::Metadata, 13, &MetadataRequest::default());
    assert_eq!((resp.brokers[0].host.as_str(), resp.brokers[0].port), ("coordinator.example", 29092));
    let found: FindCoordinatorResponse =
        c.call(ApiKey::FindCoordinator, 2, &FindCoordinatorRequest::default().with_key(s("g")));
    assert_eq!((found.host.as_str(), found.port), ("coordinator.example", 29092));
}

/// A commit naming a topic or partition this node does not serve is refused per
/// partition with UNKNOWN_TOPIC_OR_PARTITION (3) and not stored; the rest commits.
#[test]
fn a_commit_outside_the_served_topics_is_refused_per_partition() {
    let server = server();
    let mut c = Conn::open(server.local_addr());
    let part = |i, offset| {
        offset_commit_request::OffsetCommitRequestPartition::default()
            .with_partition_index(i)
            .with_committed_offset(offset)
    };
    let topic = |name: &str, parts| {
        offset_commit_request::OffsetCommitRequestTopic::default()
            .with_name(s(name).into())
            .with_partitions(parts)
    };
    let req = OffsetCommitRequest::default()
        .with_group_id(s("simple").into())
        .with_generation_id_or_member_epoch(-1)
        .with_topics(vec![topic("t1", vec![part(0, 7), part(9, 7)]), topic("nope", vec![part(0, 7)])]);
    let resp: OffsetCommitResponse = c.call(ApiKey::OffsetCommit, 8, &req);
    let codes: Vec<(String, i32, i16)> = resp
        .topics
        .iter()
        .flat_map(|t| t.partitions.iter().map(|p| (t.name.0.to_string(), p.partition_index, p.error_code)))
        .collect();
    assert_eq!(codes, vec![("t1".into(), 0, 0), ("t1".into(), 9, 3), ("nope".into(), 0, 3)]);
    let fetch = OffsetFetchRequest::default().with_group_id(s("simple").into()).with_topics(None);
    let resp: OffsetFetchResponse = c.call(ApiKey::OffsetFetch, 7, &fetch);
    let stored: Vec<(String, i32, i64)> = resp
        .topics
        .iter()
        .flat_map(|t| {
            t.partitions.iter().map(|p| (t.name.0.to_string(), p.partition_index, p.committed_offset))
        })
        .collect();
    assert_eq!(stored, vec![("t1".into(), 0, 7)]);
}
