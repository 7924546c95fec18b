//! The frame path without sockets: whatever the bytes, `Node::handle` answers or refuses,
//! and never panics or aborts.

use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use group_coordinator::Principal;
use kafka_protocol::messages::{ApiKey, ApiVersionsResponse, RequestHeader, ResponseHeader};
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use proptest::prelude::*;

use super::{Node, Reply, RequestError, SUPPORTED_APIS};
use crate::session::Session;
use crate::test_samples::sample;
use crate::{CoordinatorService, ServerConfig, StorageMode};

fn session() -> Session {
    Session::new("127.0.0.1:9092".parse().expect("address"), Principal::ANONYMOUS)
}

fn node() -> Node {
    let mut config = ServerConfig { storage: StorageMode::Memory, ..ServerConfig::default() };
    config.coordinator.initial_rebalance_delay_ms = 0;
    let service = CoordinatorService::open(&config).expect("memory coordinator");
    crate::test_samples::test_node(
        service,
        Arc::new(group_coordinator::AllowAll),
        crate::share_session::DEFAULT_MAX_SHARE_SESSIONS,
    )
}

fn frame(api: ApiKey, version: i16, correlation_id: i32, body: &[u8]) -> Bytes {
    let mut out = BytesMut::new();
    RequestHeader::default()
        .with_request_api_key(api as i16)
        .with_request_api_version(version)
        .with_correlation_id(correlation_id)
        .with_client_id(Some(StrBytes::from_static_str("test")))
        .encode(&mut out, api.request_header_version(version))
        .expect("header encodes");
    out.extend_from_slice(body);
    out.freeze()
}

/// The reply's frame without its length prefix, which must be right.
fn body_of(reply: Reply) -> BytesMut {
    let mut frame = frame_of(reply);
    if frame.is_empty() {
        return frame;
    }
    let body = frame.split_off(4);
    assert_eq!(frame[..], (body.len() as u32).to_be_bytes(), "the length prefix");
    body
}

fn frame_of(reply: Reply) -> BytesMut {
    match reply {
        Reply::Now(b) | Reply::NotBefore(_, b) => b,
        Reply::Later(answer) => tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a test runtime")
            .block_on(answer)
            .expect("reply encodes"),
        Reply::Nothing => BytesMut::new(),
    }
}

#[test]
fn every_sample_of_every_version_is_answered() {
    let node = node();
    for &(api, min, max) in SUPPORTED_APIS {
        for v in min..=max {
            // JoinGroup and SyncGroup would park: they are exercised over TCP in tests/it.
            if matches!(api, ApiKey::JoinGroup | ApiKey::SyncGroup) {
                continue;
            }
            let reply = node.handle(frame(api, v, 7, &sample(api, v)), &mut session());
            let mut body = body_of(reply.unwrap_or_else(|e| panic!("{api:?} v{v}: {e}"))).freeze();
            if api == ApiKey::Produce {
                continue;
            }
            let header = ResponseHeader::decode(&mut body, api.response_header_version(v)).expect("header");
            assert_eq!(header.correlation_id, 7, "{api:?} v{v}");
        }
    }
}

/// ApiVersions lists every API once, in key order as Kafka does: the node's own, and
/// each group API of the coordinator's table with the table's versions.
#[test]
fn supported_apis_are_the_nodes_and_the_tables_in_key_order() {
    let keys: Vec<i16> = SUPPORTED_APIS.iter().map(|&(k, _, _)| k as i16).collect();
    assert!(keys.windows(2).all(|w| w[0] < w[1]), "{keys:?}");
    assert_eq!(SUPPORTED_APIS.len(), super::BROKER_APIS.len() + group_coordinator::Api::ALL.len());
    for api in group_coordinator::Api::ALL {
        let (min, max) = api.versions();
        assert!(
            SUPPORTED_APIS.contains(&(ApiKey::try_from(api.key()).expect("a Kafka key"), min, max)),
            "{} v{min}-v{max} is not advertised",
            api.name()
        );
    }
    for (api, _, _) in super::BROKER_APIS {
        assert!(SUPPORTED_APIS.iter().any(|&(k, _, _)| k == api), "{api:?} is not advertised");
    }
}

/// A coordinator that stopped answers each group API with COORDINATOR_NOT_AVAILABLE in
/// the API's shape (the client looks the coordinator up again), never an error frame.
#[test]
fn a_stopped_coordinator_is_not_available() {
    let node = node();
    node.service.stop();
    let v = 4;
    let reply = node.handle(frame(ApiKey::Heartbeat, v, 9, &sample(ApiKey::Heartbeat, v)), &mut session());
    let mut body = body_of(reply.expect("answered")).freeze();
    let _ = ResponseHeader::decode(&mut body, ApiKey::Heartbeat.response_header_version(v)).expect("header");
    let resp = kafka_protocol::messages::HeartbeatResponse::decode(&mut body, v).expect("body");
    assert_eq!(resp.error_code, group_types::ErrorCode::CoordinatorNotAvailable.code());
}

/// The plain APIs (`wire::Plain`, no file of their own) are answered so too: each
/// group they name, or the whole answer, carries COORDINATOR_NOT_AVAILABLE, as their
/// table row refuses a request.
#[test]
fn a_stopped_coordinator_answers_the_plain_apis_in_their_shape() {
    use kafka_protocol::messages as kp;
    fn answer<R: Decodable>(node: &Node, api: ApiKey, v: i16) -> R {
        let reply = node.handle(frame(api, v, 9, &sample(api, v)), &mut session());
        let mut body = body_of(reply.expect("answered")).freeze();
        ResponseHeader::decode(&mut body, api.response_header_version(v)).expect("header");
        R::decode(&mut body, v).expect("body")
    }
    const UNAVAILABLE: i16 = group_types::ErrorCode::CoordinatorNotAvailable.code();
    let node = node();
    node.service.stop();
    let r: kp::DescribeGroupsResponse = answer(&node, ApiKey::DescribeGroups, 5);
    let got: Vec<(&str, i16)> = r.groups.iter().map(|g| (g.group_id.0.as_str(), g.error_code)).collect();
    assert_eq!(got, [("a", UNAVAILABLE), ("bb", UNAVAILABLE)]);
    let r: kp::DeleteGroupsResponse = answer(&node, ApiKey::DeleteGroups, 2);
    let got: Vec<(&str, i16)> = r.results.iter().map(|g| (g.group_id.0.as_str(), g.error_code)).collect();
    assert_eq!(got, [("a", UNAVAILABLE), ("bb", UNAVAILABLE)]);
    let r: kp::ConsumerGroupDescribeResponse = answer(&node, ApiKey::ConsumerGroupDescribe, 1);
    assert_eq!(r.groups.iter().map(|g| g.error_code).collect::<Vec<_>>(), [UNAVAILABLE; 2]);
    let r: kp::ShareGroupDescribeResponse = answer(&node, ApiKey::ShareGroupDescribe, 1);
    assert_eq!(r.groups.iter().map(|g| g.error_code).collect::<Vec<_>>(), [UNAVAILABLE; 2]);
    let r: kp::ListGroupsResponse = answer(&node, ApiKey::ListGroups, 5);
    assert_eq!((r.error_code, r.groups.len()), (UNAVAILABLE, 0));
    let r: kp::AlterShareGroupOffsetsResponse = answer(&node, ApiKey::AlterShareGroupOffsets, 0);
    assert_eq!((r.error_code, r.responses.len()), (UNAVAILABLE, 0));
    let r: kp::DeleteShareGroupOffsetsResponse = answer(&node, ApiKey::DeleteShareGroupOffsets, 0);
    assert_eq!((r.error_code, r.responses.len()), (UNAVAILABLE, 0));
}

#[test]
fn a_too_new_api_versions_gets_error_35_with_a_v0_body() {
    let reply = node().handle(frame(ApiKey::ApiVersions, 9, 3, &[]), &mut session()).expect("answered");
    let mut body = body_of(reply).freeze();
    let header = ResponseHeader::decode(&mut body, 0).expect("header v0");
    assert_eq!(header.correlation_id, 3);
    let resp = ApiVersionsResponse::decode(&mut body, 0).expect("v0 body");
    assert_eq!(resp.error_code, 35);
    assert_eq!(resp.api_keys.len(), SUPPORTED_APIS.len(), "share groups on, as by default");
}

/// A cluster node's topics are its configuration: CreateTopics is checked, then refused
/// with POLICY_VIOLATION and the reason; nothing is added.
#[test]
fn a_node_that_may_not_create_topics_says_why() {
    use kafka_protocol::messages::{CreateTopicsRequest, CreateTopicsResponse, create_topics_request};
    let mut node = node();
    node.topic_creation_refused = Some("a cluster node cannot create topics");
    let topic = |name: &str, partitions| {
        create_topics_request::CreatableTopic::default()
            .with_name(StrBytes::from_string(name.to_owned()).into())
            .with_num_partitions(partitions)
            .with_replication_factor(1)
    };
    let req = CreateTopicsRequest::default().with_topics(vec![topic("n", 2), topic("m", 0)]);
    let mut body = BytesMut::new();
    req.encode(&mut body, 7).expect("encodes");
    let reply = node.handle(frame(ApiKey::CreateTopics, 7, 3, &body), &mut session()).expect("answered");
    let mut body = body_of(reply).freeze();
    ResponseHeader::decode(&mut body, ApiKey::CreateTopics.response_header_version(7)).expect("header");
    let resp = CreateTopicsResponse::decode(&mut body, 7).expect("response");
    let got: Vec<(i16, Option<String>)> =
        resp.topics.iter().map(|t| (t.error_code, t.error_message.as_deref().map(str::to_owned))).collect();
    assert_eq!(
        got,
        [
            (44, Some("a cluster node cannot create topics".to_owned())),
            (37, Some("Number of partitions was set to an invalid non-positive value.".to_owned())),
        ]
    );
    assert!(node.topics.get().get("n").is_none());
}

#[test]
fn short_unknown_and_unsupported_frames_are_refused() {
    let node = node();
    assert_eq!(
        node.handle(Bytes::from_static(&[0, 18, 0]), &mut session()).err(),
        Some(RequestError::Short(3))
    );
    let err = node.handle(frame(ApiKey::DeleteTopics, 5, 1, &[]), &mut session()).err();
    assert_eq!(err, Some(RequestError::UnsupportedApi(20)));
    assert_eq!(
        err.map(|e| e.to_string()).as_deref(),
        Some("api key 20 (DeleteTopics) is not served by this coordinator node")
    );
    assert!(matches!(
        node.handle(frame(ApiKey::JoinGroup, 10, 1, &[]), &mut session()),
        Err(RequestError::UnsupportedVersion { .. })
    ));
}

/// A group API's body is walked with the layout its `Serve` carries before it is
/// decoded: a count the frame cannot hold closes the connection instead of aborting.
#[test]
fn a_group_api_body_is_walked_before_decoding() {
    // The 26-byte JoinGroup v9 body of dependencies.md 2.4: `protocols` claims ~2^31 entries.
    let mut body = vec![2, b'g', 0, 0, 0x75, 0x30, 0, 0, 0x75, 0x30, 1, 1, 9];
    body.extend_from_slice(b"consumer");
    body.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x07]);
    let refused = node().handle(frame(ApiKey::JoinGroup, 9, 1, &body), &mut session()).err();
    assert!(
        matches!(
            refused,
            Some(RequestError::Schema {
                api: ApiKey::JoinGroup,
                version: 9,
                source: crate::SchemaError::BadLength { .. }
            })
        ),
        "{refused:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Mutated samples of every API and version, and random garbage: never a panic.
    #[test]
    fn mutated_frames_never_panic(api_index in 0..SUPPORTED_APIS.len(), v_off in 0i16..20,
                                  flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..8),
                                  cut in any::<prop::sample::Index>(),
                                  garbage in proptest::collection::vec(any::<u8>(), 0..64)) {
        let node = node();
        let (api, min, max) = SUPPORTED_APIS[api_index];
        let v = min + v_off % (max - min + 1);
        let mut bytes = frame(api, v, 1, &sample(api, v)).to_vec();
        for (at, byte) in flips {
            let i = at % bytes.len();
            bytes[i] = byte;
        }
        bytes.truncate(cut.index(bytes.len() + 1));
        if let Ok(reply) = node.handle(Bytes::from(bytes), &mut session()) {
            // Parked joins and syncs are dropped unanswered, as when a client disconnects.
            if !matches!(reply, Reply::Later(_)) {
                let _ = body_of(reply);
            }
        }
        let _ = node.handle(Bytes::from(garbage), &mut session());
    }
}

/// FindCoordinator of a share partition (key type 2, KIP-932), as `KafkaApis.getCoordinator`
/// answers it: from v6 only, with CLUSTER_ACTION, for a well-formed `group:topicId:partition`,
/// while share groups are on; the node that hosts the key's coordinator partition.
#[test]
fn find_coordinator_of_a_share_partition() {
    use kafka_protocol::messages::{FindCoordinatorRequest, FindCoordinatorResponse};

    let share_node = |share: bool, authorizer: Arc<dyn group_coordinator::Authorizer>| {
        let mut config = ServerConfig { storage: StorageMode::Memory, ..ServerConfig::default() };
        config.coordinator.share.enabled = share;
        let service = CoordinatorService::open(&config).expect("memory coordinator");
        crate::test_samples::test_node(service, authorizer, 10)
    };
    let good = "g1:LCa0a2j_xo_5m0U8HTBBNA:3";
    let cases: [(&str, bool, bool, &str, i16, i16); 6] = [
        ("a share partition", true, true, good, 6, 0),
        ("before v6", true, true, good, 5, 42),
        ("no CLUSTER_ACTION", true, false, good, 6, 31),
        ("a malformed key", true, true, "g1:not-a-topic-id:3", 6, 42),
        ("a blank group", true, true, " :LCa0a2j_xo_5m0U8HTBBNA:3", 6, 42),
        ("share groups off", false, true, good, 6, 15),
    ];
    for (name, share, cluster_action, key, version, expected) in cases {
        let authorizer: Arc<dyn group_coordinator::Authorizer> = if cluster_action {
            Arc::new(group_coordinator::AllowAll)
        } else {
            Deny::anywhere(vec![group_coordinator::AclOperation::ClusterAction])
        };
        let node = share_node(share, authorizer);
        let mut req = FindCoordinatorRequest::default().with_key_type(2);
        if version >= 4 {
            req = req.with_coordinator_keys(vec![StrBytes::from_string(key.to_owned())]);
        } else {
            req = req.with_key(StrBytes::from_string(key.to_owned()));
        }
        let mut body = BytesMut::new();
        req.encode(&mut body, version).expect("encodes");
        let reply =
            node.handle(frame(ApiKey::FindCoordinator, version, 1, &body), &mut session()).expect("answered");
        let mut out = body_of(reply).freeze();
        let _ = ResponseHeader::decode(&mut out, ApiKey::FindCoordinator.response_header_version(version));
        let resp = FindCoordinatorResponse::decode(&mut out, version).expect("decodes");
        let (code, node_id) = if version >= 4 {
            (resp.coordinators[0].error_code, resp.coordinators[0].node_id.0)
        } else {
            (resp.error_code, resp.node_id.0)
        };
        assert_eq!(code, expected, "{name}");
        assert_eq!(node_id, if expected == 0 { 0 } else { -1 }, "{name}");
    }
}

/// Denies `operations` on the resources `on` picks, allows everything else.
#[derive(Debug)]
struct Deny {
    operations: Vec<group_coordinator::AclOperation>,
    on: fn(group_coordinator::Resource<'_>) -> bool,
}

impl Deny {
    fn anywhere(operations: Vec<group_coordinator::AclOperation>) -> Arc<Deny> {
        Arc::new(Deny { operations, on: |_| true })
    }

    fn on_groups(operations: Vec<group_coordinator::AclOperation>) -> Arc<Deny> {
        Arc::new(Deny { operations, on: |r| matches!(r, group_coordinator::Resource::Group(_)) })
    }

    fn on_cluster(operations: Vec<group_coordinator::AclOperation>) -> Arc<Deny> {
        Arc::new(Deny { operations, on: |r| r == group_coordinator::Resource::Cluster })
    }
}

impl group_coordinator::Authorizer for Deny {
    fn authorize(
        &self,
        _: &group_coordinator::RequestContext,
        operation: group_coordinator::AclOperation,
        resource: group_coordinator::Resource<'_>,
    ) -> bool {
        !(self.operations.contains(&operation) && (self.on)(resource))
    }
}

/// `req` sent at v0 as `api` to a memory node with share groups `share`, and its answer.
fn share_admin_call<Q: Encodable, R: Decodable>(share: bool, api: ApiKey, req: &Q) -> R {
    let mut config = ServerConfig { storage: StorageMode::Memory, ..ServerConfig::default() };
    config.coordinator.share.enabled = share;
    let service = CoordinatorService::open(&config).expect("memory coordinator");
    let node = crate::test_samples::test_node(service, Arc::new(group_coordinator::AllowAll), 10);
    let mut body = BytesMut::new();
    req.encode(&mut body, 0).expect("encodes");
    let reply = node.handle(frame(api, 0, 1, &body), &mut session()).expect("answered");
    let mut out = body_of(reply).freeze();
    let _ = ResponseHeader::decode(&mut out, api.response_header_version(0));
    R::decode(&mut out, 0).expect("decodes")
}

/// DeleteShareGroupOffsets (key 92) through the frame path, as
/// `KafkaApis.handleDeleteShareGroupOffsetsRequest` answers before and in its
/// coordinator: UNSUPPORTED_VERSION while share groups are off, DELETE on the group,
/// an empty id INVALID_GROUP_ID, a missing group GROUP_ID_NOT_FOUND with its message
/// (the ACLs are the coordinator's: `group-coordinator`'s `share_runtime` tests).
#[test]
fn delete_share_group_offsets_on_the_wire() {
    use kafka_protocol::messages::delete_share_group_offsets_request::DeleteShareGroupOffsetsRequestTopic;
    use kafka_protocol::messages::{DeleteShareGroupOffsetsRequest, DeleteShareGroupOffsetsResponse};

    // Kafka's refusals carry the error's default message (`getErrorDeleteResponseData`,
    // `KafkaApis`' `getErrorResponse(Errors)`).
    let cases: [(&str, bool, &str, i16, Option<&str>); 3] = [
        ("a missing group", true, "nope", 69, Some("Group nope not found.")),
        ("an empty group id", true, "", 24, Some("The group id is invalid.")),
        ("share groups off", false, "nope", 35, Some("The version of API is not supported.")),
    ];
    for (name, share, group, expected, message) in cases {
        let topic = DeleteShareGroupOffsetsRequestTopic::default()
            .with_topic_name(StrBytes::from_static_str("t").into());
        let req = DeleteShareGroupOffsetsRequest::default()
            .with_group_id(StrBytes::from_string(group.to_owned()).into())
            .with_topics(vec![topic]);
        let resp: DeleteShareGroupOffsetsResponse =
            share_admin_call(share, ApiKey::DeleteShareGroupOffsets, &req);
        assert_eq!(resp.error_code, expected, "{name}");
        assert_eq!(resp.error_message.as_ref().map(|m| m.as_str()), message, "{name}");
        assert!(resp.responses.is_empty(), "{name}");
    }
}

/// AlterShareGroupOffsets (key 91) through the frame path: UNSUPPORTED_VERSION while
/// share groups are off, an empty id INVALID_GROUP_ID, and a topic the node does not
/// have answered UNKNOWN_TOPIC_OR_PARTITION per partition (`KafkaApis.handleAlterShareGroupOffsetsRequest`).
#[test]
fn alter_share_group_offsets_on_the_wire() {
    use kafka_protocol::messages::alter_share_group_offsets_request::{
        AlterShareGroupOffsetsRequestPartition, AlterShareGroupOffsetsRequestTopic,
    };
    use kafka_protocol::messages::{AlterShareGroupOffsetsRequest, AlterShareGroupOffsetsResponse};

    /// Per partition, its error code.
    type Codes<'a> = &'a [(i32, i16)];
    let unknown: Codes<'_> = &[(0, 3), (1, 3)];
    let cases: [(&str, bool, &str, i16, Codes<'_>); 3] = [
        ("an unknown topic", true, "g", 0, unknown),
        ("an empty group id", true, "", 24, &[]),
        ("share groups off", false, "g", 35, &[]),
    ];
    for (name, share, group, expected, partitions) in cases {
        let p = |i| {
            AlterShareGroupOffsetsRequestPartition::default().with_partition_index(i).with_start_offset(5)
        };
        let topic = AlterShareGroupOffsetsRequestTopic::default()
            .with_topic_name(StrBytes::from_static_str("no-such-topic").into())
            .with_partitions(vec![p(0), p(1)]);
        let req = AlterShareGroupOffsetsRequest::default()
            .with_group_id(StrBytes::from_string(group.to_owned()).into())
            .with_topics(vec![topic]);
        let resp: AlterShareGroupOffsetsResponse =
            share_admin_call(share, ApiKey::AlterShareGroupOffsets, &req);
        assert_eq!(resp.error_code, expected, "{name}");
        let got: Vec<(i32, i16)> = resp
            .responses
            .iter()
            .flat_map(|t| t.partitions.iter().map(|p| (p.partition_index, p.error_code)))
            .collect();
        assert_eq!(got, partitions, "{name}");
    }
}

/// DescribeShareGroupOffsets (key 90) through the frame path: each group answered in
/// request order; a topic not in the metadata has start offset -1 (absence of data,
/// as `GroupCoordinatorService.describeShareGroupOffsets` answers it); UNSUPPORTED_VERSION
/// for every group while share groups are off.
#[test]
fn describe_share_group_offsets_on_the_wire() {
    use kafka_protocol::messages::describe_share_group_offsets_request::{
        DescribeShareGroupOffsetsRequestGroup, DescribeShareGroupOffsetsRequestTopic,
    };
    use kafka_protocol::messages::{DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsResponse};

    for share in [true, false] {
        let topic = DescribeShareGroupOffsetsRequestTopic::default()
            .with_topic_name(StrBytes::from_static_str("no-such-topic").into())
            .with_partitions(vec![4]);
        let group = |id: &'static str, topics| {
            DescribeShareGroupOffsetsRequestGroup::default()
                .with_group_id(StrBytes::from_static_str(id).into())
                .with_topics(topics)
        };
        let req = DescribeShareGroupOffsetsRequest::default()
            .with_groups(vec![group("b", Some(vec![topic])), group("a", None)]);
        let resp: DescribeShareGroupOffsetsResponse =
            share_admin_call(share, ApiKey::DescribeShareGroupOffsets, &req);
        let ids: Vec<&str> = resp.groups.iter().map(|g| g.group_id.0.as_str()).collect();
        assert_eq!(ids, ["b", "a"], "request order");
        let codes: Vec<i16> = resp.groups.iter().map(|g| g.error_code).collect();
        assert_eq!(codes, if share { [0, 0] } else { [35, 35] });
        if share {
            let b = &resp.groups[0].topics;
            assert_eq!(b.len(), 1);
            assert_eq!((b[0].partitions[0].partition_index, b[0].partitions[0].start_offset), (4, -1));
            assert!(resp.groups[1].topics.is_empty(), "a missing group has no offsets");
        }
    }
}

/// DescribeShareGroupOffsets' lag (KIP-1226) on a node: the coordinator's end
/// offsets are the node's topics (empty logs, end offset 0), so a share group
/// altered to start at 0 lags by 0 where it would be -1 without them, and a
/// partition the node does not have is UNKNOWN_TOPIC_OR_PARTITION. v0 carries no
/// lag on the wire: the frame path answers the start offsets, the lag is checked
/// through the coordinator's API.
#[test]
fn share_offsets_lag_comes_from_the_nodes_topics() {
    use group_types::{
        AlterShareGroupOffsetsRequest, AlterShareOffsetsTopic, DescribeShareGroupOffsetsGroupRequest,
        DescribeShareGroupOffsetsRequest, ErrorCode, GroupId, ShareOffsetsTopicRequest, ShareStartOffset,
    };
    use kafka_protocol::messages::describe_share_group_offsets_request::{
        DescribeShareGroupOffsetsRequestGroup, DescribeShareGroupOffsetsRequestTopic,
    };

    let mut config = ServerConfig { storage: StorageMode::Memory, ..ServerConfig::default() };
    config.coordinator.share.enabled = true;
    config.topics = vec![crate::TopicSpec { name: "foo".into(), partitions: 2 }];
    let service = CoordinatorService::open(&config).expect("memory coordinator");
    let node = crate::test_samples::test_node(service, Arc::new(group_coordinator::AllowAll), 10);
    let coordinator = node.service.coordinator();
    let start = |partition_index| ShareStartOffset { partition_index, start_offset: 0 };
    let alter = AlterShareGroupOffsetsRequest {
        group_id: GroupId::from("g"),
        topics: vec![AlterShareOffsetsTopic {
            topic_name: "foo".into(),
            partitions: vec![start(0), start(1)],
        }],
    };
    let r = coordinator.handle_alter_share_group_offsets(alter).expect("answered once initialized");
    assert_eq!(r.error_code, ErrorCode::None, "{r:?}");
    assert!(coordinator.wait_for_writes(std::time::Duration::from_secs(5)));

    let group = DescribeShareGroupOffsetsGroupRequest {
        group_id: GroupId::from("g"),
        topics: Some(vec![ShareOffsetsTopicRequest { topic_name: "foo".into(), partitions: vec![0, 1] }]),
    };
    let r = coordinator
        .handle_describe_share_group_offsets(DescribeShareGroupOffsetsRequest {
            api_version: 1,
            groups: vec![group],
        })
        .expect("answered once read");
    let mut got: Vec<_> = r.groups[0]
        .topics
        .iter()
        .flat_map(|t| t.partitions.iter().map(|p| (p.partition_index, p.start_offset, p.lag, p.error_code)))
        .collect();
    got.sort();
    assert_eq!(got, [(0, 0, 0, ErrorCode::None), (1, 0, 0, ErrorCode::None)]);

    // The same description at v0 on the wire: the start offsets, no lag field.
    let topic = DescribeShareGroupOffsetsRequestTopic::default()
        .with_topic_name(StrBytes::from_static_str("foo").into())
        .with_partitions(vec![0, 1]);
    let group = DescribeShareGroupOffsetsRequestGroup::default()
        .with_group_id(StrBytes::from_static_str("g").into())
        .with_topics(Some(vec![topic]));
    let req = kafka_protocol::messages::DescribeShareGroupOffsetsRequest::default().with_groups(vec![group]);
    let mut body = BytesMut::new();
    req.encode(&mut body, 0).expect("encodes");
    let api = ApiKey::DescribeShareGroupOffsets;
    let reply = node.handle(frame(api, 0, 1, &body), &mut session()).expect("answered");
    let mut out = body_of(reply).freeze();
    let _ = ResponseHeader::decode(&mut out, api.response_header_version(0));
    let resp =
        kafka_protocol::messages::DescribeShareGroupOffsetsResponse::decode(&mut out, 0).expect("decodes");
    let mut got: Vec<_> = resp.groups[0]
        .topics
        .iter()
        .flat_map(|t| t.partitions.iter().map(|p| (p.partition_index, p.start_offset, p.error_code)))
        .collect();
    got.sort();
    assert_eq!(got, [(0, 0, 0), (1, 0, 0)]);

    // At v1 the lag is on the wire too (KIP-1226; `wire::share_codec`): 0, not the
    // unknown -1, since the empty partitions have nothing left to deliver.
    let mut body = BytesMut::new();
    crate::wire::share_codec::SameAfter::<_, 0>(req).encode(&mut body, 1).expect("encodes");
    let reply = node.handle(frame(api, 1, 1, &body), &mut session()).expect("answered");
    let mut out = body_of(reply).freeze();
    let _ = ResponseHeader::decode(&mut out, api.response_header_version(1));
    let resp =
        crate::wire::share_codec::DescribeShareGroupOffsetsResponse::decode(&mut out, 1).expect("decodes");
    assert!(out.is_empty(), "all of v1's fields read");
    let mut got: Vec<_> = resp.groups[0]
        .topics
        .iter()
        .flat_map(|t| t.partitions.iter().map(|p| (p.partition_index, p.start_offset, p.lag, p.error_code)))
        .collect();
    got.sort();
    assert_eq!(got, [(0, 0, 0, 0), (1, 0, 0, 0)]);
}

/// A memory node whose coordinator and broker APIs both ask `authorizer`.
fn node_with(authorizer: Arc<dyn group_coordinator::Authorizer>) -> Node {
    let config = group_coordinator::CoordinatorConfig::default();
    let coordinator = group_coordinator::GroupCoordinator::builder(
        Arc::new(group_offsets::MemoryMetadataStore::new()),
        config,
    )
    .authorizer(authorizer.clone())
    .open()
    .expect("memory coordinator");
    crate::test_samples::test_node(CoordinatorService::new(coordinator), authorizer, 10)
}

/// `req` sent at `version` as `api` to `node`, and its answer.
fn call<Q: Encodable, R: Decodable>(node: &Node, api: ApiKey, version: i16, req: &Q) -> R {
    let mut body = BytesMut::new();
    req.encode(&mut body, version).expect("encodes");
    let reply = node.handle(frame(api, version, 1, &body), &mut session()).expect("answered");
    let mut out = body_of(reply).freeze();
    let _ = ResponseHeader::decode(&mut out, api.response_header_version(version));
    R::decode(&mut out, version).expect("decodes")
}

/// DescribeGroups (key 15) with `IncludeAuthorizedOperations` through the frame path
/// (`KafkaApis.handleDescribeGroupsRequest`, KIP-430): from v3 the group's bits from the
/// ACLs (DESCRIBE 8 and ALTER_CONFIGS 11 here), `i32::MIN` when not asked; v0-v2 have
/// no such field.
#[test]
fn describe_groups_answers_authorized_operations_on_the_wire() {
    use kafka_protocol::messages::{DescribeGroupsRequest, DescribeGroupsResponse};

    use group_coordinator::AclOperation::{Delete, DescribeConfigs, Read};
    // Only DESCRIBE and ALTER_CONFIGS on groups.
    let node = node_with(Deny::on_groups(vec![Read, Delete, DescribeConfigs]));
    let cases: [(i16, bool, i32); 5] = [
        (3, true, (1 << 8) | (1 << 11)),
        (5, true, (1 << 8) | (1 << 11)),
        (5, false, i32::MIN),
        (2, true, i32::MIN),
        (0, false, i32::MIN),
    ];
    for (version, include, expected) in cases {
        let mut req =
            DescribeGroupsRequest::default().with_groups(vec![StrBytes::from_static_str("g").into()]);
        if version >= 3 {
            req = req.with_include_authorized_operations(include);
        }
        let resp: DescribeGroupsResponse = call(&node, ApiKey::DescribeGroups, version, &req);
        let g = &resp.groups[0];
        assert_eq!((g.error_code, g.authorized_operations), (0, expected), "v{version} include {include}");
    }
    node.service.stop();
}

/// An IncrementalAlterConfigs resource: (name, operation, value) on `group`'s configs,
/// or on a resource of type `kind`.
fn alter_resource(
    kind: i8,
    name: &str,
    configs: &[(&str, i8, Option<&str>)],
) -> kafka_protocol::messages::incremental_alter_configs_request::AlterConfigsResource {
    use kafka_protocol::messages::incremental_alter_configs_request::{
        AlterConfigsResource, AlterableConfig,
    };
    let configs = configs
        .iter()
        .map(|(n, op, v)| {
            AlterableConfig::default()
                .with_name(StrBytes::from_string((*n).to_owned()))
                .with_config_operation(*op)
                .with_value(v.map(|v| StrBytes::from_string(v.to_owned())))
        })
        .collect();
    AlterConfigsResource::default()
        .with_resource_type(kind)
        .with_resource_name(StrBytes::from_string(name.to_owned()))
        .with_configs(configs)
}

fn alter(
    node: &Node,
    resources: Vec<kafka_protocol::messages::incremental_alter_configs_request::AlterConfigsResource>,
) -> Vec<(i16, Option<String>)> {
    use kafka_protocol::messages::{IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse};
    let req = IncrementalAlterConfigsRequest::default().with_resources(resources);
    let resp: IncrementalAlterConfigsResponse = call(node, ApiKey::IncrementalAlterConfigs, 1, &req);
    resp.responses.iter().map(|r| (r.error_code, r.error_message.as_ref().map(|m| m.to_string()))).collect()
}

/// DescribeConfigs v4 of GROUP resources `groups`, every config: per resource, its
/// name, error and (name, value, source, type) of each config.
#[allow(clippy::type_complexity)]
fn describe_configs(node: &Node, groups: &[&str]) -> Vec<(String, i16, Vec<(String, String, i8, i8)>)> {
    use kafka_protocol::messages::describe_configs_request::DescribeConfigsResource;
    use kafka_protocol::messages::{DescribeConfigsRequest, DescribeConfigsResponse};
    let resources = groups
        .iter()
        .map(|g| {
            DescribeConfigsResource::default()
                .with_resource_type(32)
                .with_resource_name(StrBytes::from_string((*g).to_owned()))
                .with_configuration_keys(None)
        })
        .collect();
    let req = DescribeConfigsRequest::default().with_resources(resources).with_include_documentation(true);
    let resp: DescribeConfigsResponse = call(node, ApiKey::DescribeConfigs, 4, &req);
    resp.results
        .iter()
        .map(|r| {
            let configs = r
                .configs
                .iter()
                .map(|c| {
                    let value = c.value.as_ref().map(|v| v.to_string()).unwrap_or_default();
                    (c.name.to_string(), value, c.config_source, c.config_type)
                })
                .collect();
            (r.resource_name.to_string(), r.error_code, configs)
        })
        .collect()
}

/// IncrementalAlterConfigs (key 44) then DescribeConfigs (key 32) of a GROUP resource
/// through the frame path: the set value is described with source GROUP_CONFIG (8),
/// the others with the broker's value; a DELETE puts the broker's back.
#[test]
fn group_configs_are_altered_and_described_on_the_wire() {
    let node = node_with(Arc::new(group_coordinator::AllowAll));
    let set = alter_resource(32, "g", &[("consumer.heartbeat.interval.ms", 0, Some("6000"))]);
    assert_eq!(alter(&node, vec![set]), [(0, None)]);
    let described = describe_configs(&node, &["g"]);
    let (name, error, configs) = &described[0];
    assert_eq!((name.as_str(), *error), ("g", 0));
    let find = |n: &str| configs.iter().find(|c| c.0 == n).cloned().expect("described");
    // INT is type 3; GROUP_CONFIG source 8, DEFAULT_CONFIG 5.
    assert_eq!(
        find("consumer.heartbeat.interval.ms"),
        ("consumer.heartbeat.interval.ms".into(), "6000".into(), 8, 3)
    );
    assert_eq!(
        find("consumer.session.timeout.ms"),
        ("consumer.session.timeout.ms".into(), "45000".into(), 5, 3)
    );
    assert_eq!(configs.len(), group_coordinator::group_config_names().count());

    let delete = alter_resource(32, "g", &[("consumer.heartbeat.interval.ms", 1, None)]);
    assert_eq!(alter(&node, vec![delete]), [(0, None)]);
    let described = describe_configs(&node, &["g"]);
    assert_eq!(described[0].2.iter().find(|c| c.0 == "consumer.heartbeat.interval.ms").map(|c| c.2), Some(5));
    node.service.stop();
}

/// What IncrementalAlterConfigs refuses, resource by resource, with Kafka's codes and
/// words: a value out of the broker's bounds or an unknown name INVALID_CONFIG (40);
/// a resource named twice, a config named twice, a missing value, an empty group
/// name or a resource that is not a group INVALID_REQUEST (42). Nothing is changed.
#[test]
fn invalid_group_configs_are_refused_on_the_wire() {
    let node = node_with(Arc::new(group_coordinator::AllowAll));
    let hb = "consumer.heartbeat.interval.ms";
    let cases: Vec<(Vec<_>, Vec<(i16, &str)>)> = vec![
        (
            vec![alter_resource(32, "g", &[(hb, 0, Some("1"))])],
            vec![(40, "consumer.heartbeat.interval.ms must be in the range 5000 to 15000 inclusive.")],
        ),
        (
            vec![alter_resource(32, "g", &[("no.such", 0, Some("1"))])],
            vec![(40, "Unknown group config name: no.such")],
        ),
        (
            vec![
                alter_resource(32, "g", &[(hb, 0, Some("6000"))]),
                alter_resource(32, "g", &[(hb, 0, Some("7000"))]),
            ],
            vec![
                (42, "Each resource must appear at most once."),
                (42, "Each resource must appear at most once."),
            ],
        ),
        (
            vec![alter_resource(32, "g", &[(hb, 0, Some("6000")), (hb, 1, None)])],
            vec![(42, "Error due to duplicate config keys")],
        ),
        (
            vec![alter_resource(32, "g", &[(hb, 0, None)])],
            vec![(42, "Null value not supported for : consumer.heartbeat.interval.ms")],
        ),
        (
            vec![alter_resource(32, "", &[(hb, 0, Some("6000"))])],
            vec![(42, "Default group resources are not allowed.")],
        ),
        (
            vec![alter_resource(2, "t1", &[("retention.ms", 0, Some("1"))])],
            vec![(42, crate::configs::NOT_A_GROUP)],
        ),
    ];
    for (resources, expected) in cases {
        let got = alter(&node, resources);
        let got: Vec<(i16, String)> = got.into_iter().map(|(c, m)| (c, m.unwrap_or_default())).collect();
        let expected: Vec<(i16, String)> = expected.into_iter().map(|(c, m)| (c, m.to_owned())).collect();
        assert_eq!(got, expected);
    }
    assert!(node.service.coordinator().group_configs("g").is_empty(), "nothing changed");
    node.service.stop();
}

/// ALTER_CONFIGS and DESCRIBE_CONFIGS on the group (`ControllerApis`, `ConfigHelper`):
/// without them GROUP_AUTHORIZATION_FAILED (30), and a denied description comes after
/// the others, as Kafka lists them.
#[test]
fn group_configs_need_their_acls_on_the_wire() {
    use group_coordinator::AclOperation::{AlterConfigs, DescribeConfigs};

    let node = node_with(Deny::on_groups(vec![AlterConfigs, DescribeConfigs]));
    let set = alter_resource(32, "g", &[("consumer.heartbeat.interval.ms", 0, Some("6000"))]);
    assert_eq!(alter(&node, vec![set]), [(30, Some("Group authorization failed.".to_owned()))]);
    let described = describe_configs(&node, &["g"]);
    assert_eq!((described[0].1, described[0].2.len()), (30, 0));
    node.service.stop();

    // DESCRIBE_CONFIGS alone: described, not altered.
    let node = node_with(Deny::on_groups(vec![AlterConfigs]));
    let set = alter_resource(32, "g", &[("consumer.heartbeat.interval.ms", 0, Some("6000"))]);
    assert_eq!(alter(&node, vec![set])[0].0, 30);
    assert_eq!(describe_configs(&node, &["g"])[0].1, 0);
    node.service.stop();
}

/// A durable node (`--data-dir`) keeps its groups' configs: after a restart on the
/// same directory DescribeConfigs shows them, and the coordinator runs with them.
#[test]
fn group_configs_survive_a_restart_of_a_durable_node() {
    let dir = std::env::temp_dir().join(format!("group-configs-restart-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let config = ServerConfig { storage: StorageMode::Sled(dir.clone()), ..ServerConfig::default() };
    let open = || {
        let service = CoordinatorService::open(&config).expect("durable coordinator");
        crate::test_samples::test_node(service, Arc::new(group_coordinator::AllowAll), 10)
    };
    let node = open();
    let set = alter_resource(32, "g", &[("consumer.session.timeout.ms", 0, Some("50000"))]);
    assert_eq!(alter(&node, vec![set]), [(0, None)]);
    node.service.stop();
    drop(node);

    let node = open();
    let described = describe_configs(&node, &["g"]);
    let session = described[0].2.iter().find(|c| c.0 == "consumer.session.timeout.ms").cloned();
    assert_eq!(session.map(|c| (c.1, c.2)), Some(("50000".to_owned(), 8)));
    node.service.stop();
    drop(node);
    let _ = std::fs::remove_dir_all(&dir);
}

/// ListConfigResources (key 74, KIP-1142) as `KafkaApis.handleListConfigResources`:
/// the groups with configs; a type the version does not know UNSUPPORTED_VERSION (35);
/// v0 (ListClientMetricsResources) lists client-metrics subscriptions only (none here);
/// without DESCRIBE_CONFIGS on the cluster CLUSTER_AUTHORIZATION_FAILED (31).
#[test]
fn list_config_resources_lists_the_configured_groups() {
    use kafka_protocol::messages::{ListConfigResourcesRequest, ListConfigResourcesResponse};

    let node = node_with(Arc::new(group_coordinator::AllowAll));
    for group in ["h", "g"] {
        let set = alter_resource(32, group, &[("consumer.heartbeat.interval.ms", 0, Some("6000"))]);
        assert_eq!(alter(&node, vec![set]), [(0, None)]);
    }
    let list = |node: &Node, version: i16, types: Vec<i8>| {
        let req = ListConfigResourcesRequest::default().with_resource_types(types);
        let resp: ListConfigResourcesResponse = call(node, ApiKey::ListConfigResources, version, &req);
        let names: Vec<(String, i8)> =
            resp.config_resources.iter().map(|r| (r.resource_name.to_string(), r.resource_type)).collect();
        (resp.error_code, names)
    };
    let groups = vec![("g".to_owned(), 32), ("h".to_owned(), 32)];
    assert_eq!(list(&node, 1, Vec::new()), (0, groups.clone()));
    assert_eq!(list(&node, 1, vec![32]), (0, groups));
    assert_eq!(list(&node, 1, vec![2, 4]), (0, Vec::new()));
    assert_eq!(list(&node, 1, vec![1]), (35, Vec::new()));
    assert_eq!(list(&node, 0, Vec::new()), (0, Vec::new()));
    node.service.stop();

    let node = node_with(Deny::anywhere(vec![group_coordinator::AclOperation::ClusterAction]));
    assert_eq!(list(&node, 1, Vec::new()).0, 0, "CLUSTER_ACTION is not what it asks");
    node.service.stop();
    let node = node_with(Deny::on_cluster(vec![group_coordinator::AclOperation::DescribeConfigs]));
    assert_eq!(list(&node, 1, Vec::new()), (31, Vec::new()));
    node.service.stop();
}

/// Metadata's KIP-430 fields (`KafkaApis.handleTopicMetadataRequest`): from v8 each
/// described topic's authorized operations when asked (every topic operation:
/// READ 3, WRITE 4, CREATE 5, DELETE 6, ALTER 7, DESCRIBE 8, DESCRIBE_CONFIGS 10,
/// ALTER_CONFIGS 11), and at v8-v10 the cluster's (CREATE 5, ALTER 7, DESCRIBE 8,
/// CLUSTER_ACTION 9, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11, IDEMPOTENT_WRITE 12),
/// 0 without DESCRIBE on the cluster; `i32::MIN` otherwise.
#[test]
fn metadata_answers_authorized_operations() {
    use kafka_protocol::messages::metadata_request::MetadataRequestTopic;
    use kafka_protocol::messages::{MetadataRequest, MetadataResponse};

    let topic_bits = [3, 4, 5, 6, 7, 8, 10, 11].iter().fold(0, |b, c| b | 1 << c);
    let cluster_bits = [5, 7, 8, 9, 10, 11, 12].iter().fold(0, |b, c| b | 1 << c);
    let ask = |node: &Node, version: i16, include: bool| {
        let topic = MetadataRequestTopic::default().with_name(Some(StrBytes::from_static_str("t1").into()));
        let mut req = MetadataRequest::default()
            .with_topics(Some(vec![topic]))
            .with_include_topic_authorized_operations(include);
        if (8..=10).contains(&version) {
            req = req.with_include_cluster_authorized_operations(include);
        }
        let resp: MetadataResponse = call(node, ApiKey::Metadata, version, &req);
        (resp.topics[0].topic_authorized_operations, resp.cluster_authorized_operations)
    };
    let node = node_with(Arc::new(group_coordinator::AllowAll));
    assert_eq!(ask(&node, 10, true), (topic_bits, cluster_bits));
    assert_eq!(ask(&node, 12, true), (topic_bits, i32::MIN));
    assert_eq!(ask(&node, 10, false), (i32::MIN, i32::MIN));
    node.service.stop();
    let node = node_with(Deny::on_cluster(vec![group_coordinator::AclOperation::Describe]));
    assert_eq!(ask(&node, 9, true), (topic_bits, 0));
    node.service.stop();
}

/// A node with `topics` (two partitions each) and the ACLs `acls`, which the node and
/// its coordinator share, as `server.rs` builds them.
fn offsets_node(topics: &[&str], acls: &str) -> Node {
    let dir = std::env::temp_dir().join(format!(
        "offsets-by-id-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("acls");
    std::fs::write(&file, acls).expect("write");
    let mut config = ServerConfig { storage: StorageMode::Memory, ..ServerConfig::default() };
    config.topics =
        topics.iter().map(|&name| crate::TopicSpec { name: name.into(), partitions: 2 }).collect();
    config.security.acl_file = Some(file);
    let service = CoordinatorService::open(&config).expect("memory coordinator");
    let acl = service.acl_authorizer().cloned().expect("the ACL file");
    let node = crate::test_samples::test_node(service, acl, 10);
    node.topics.set(&config.topics);
    let _ = std::fs::remove_dir_all(&dir);
    node
}

/// A node with topic foo whose ACLs let the anonymous caller read group g and topic
/// foo, and nothing else.
fn node_with_foo() -> Node {
    offsets_node(&["foo"], "allow User:ANONYMOUS READ Group:g\nallow User:ANONYMOUS READ Topic:foo\n")
}

/// `req` sent to `node` as `api` at `version`, and its answer.
fn offsets_call<Q: Encodable, R: Decodable>(node: &Node, api: ApiKey, version: i16, req: &Q) -> R {
    let mut body = BytesMut::new();
    req.encode(&mut body, version).expect("encodes");
    let reply = node.handle(frame(api, version, 1, &body), &mut session()).expect("answered");
    let mut out = body_of(reply).freeze();
    ResponseHeader::decode(&mut out, api.response_header_version(version)).expect("header");
    let resp = R::decode(&mut out, version).expect("decodes");
    assert!(out.is_empty(), "{api:?} v{version}: all of the answer read");
    resp
}

/// A v10 commit by id of `topics` (id, partition) for `group` sent to `node`, and its
/// answer's (id, partition, error code) in answer order.
fn commit_by_id(node: &Node, group: &str, topics: &[(uuid::Uuid, i32)]) -> Vec<(uuid::Uuid, i32, i16)> {
    let answer: crate::wire::offset_codec::OffsetCommitResponse =
        offsets_call(node, ApiKey::OffsetCommit, 10, &commit_request_by_id(group, topics));
    answer
        .topics
        .iter()
        .flat_map(|t| t.partitions.iter().map(|p| (t.topic_id, p.0.partition_index, p.0.error_code)))
        .collect()
}

/// A v10 commit by id, as a Kafka 4.2 client sends it.
fn commit_request_by_id(
    group: &str,
    topics: &[(uuid::Uuid, i32)],
) -> crate::wire::offset_codec::OffsetCommitRequest {
    use crate::wire::offset_codec as codec;
    use kafka_protocol::messages::offset_commit_request::OffsetCommitRequestPartition;
    let topic = |&(topic_id, partition): &(uuid::Uuid, i32)| codec::OffsetCommitRequestTopic {
        topic_id,
        partitions: vec![codec::Pinned(
            OffsetCommitRequestPartition::default()
                .with_partition_index(partition)
                .with_committed_offset(40 + i64::from(partition))
                .with_committed_metadata(Some(StrBytes::from_static_str("md"))),
        )],
        ..Default::default()
    };
    codec::OffsetCommitRequest {
        group_id: StrBytes::from_string(group.to_owned()),
        generation_id_or_member_epoch: -1,
        member_id: StrBytes::default(),
        group_instance_id: None,
        topics: topics.iter().map(topic).collect(),
    }
}

/// OffsetCommit v10 by topic id through the frame path: the node's topic ids (those
/// Metadata gives) are named for the coordinator, so the offsets committed by id are
/// those fetched by name at v9 and by id at v10; an unknown id is UNKNOWN_TOPIC_ID
/// (`KafkaApis.handleOffsetCommitRequest`), first in the answer, and the rest commits.
#[test]
fn offsets_committed_by_id_are_fetched_by_name_and_by_id() {
    use crate::wire::offset_codec as codec;
    use kafka_protocol::messages::{OffsetFetchRequest, OffsetFetchResponse, offset_fetch_request as f};

    let node = node_with_foo();
    let foo = crate::topics::topic_id_for("foo");
    let stranger = uuid::Uuid::from_u128(77);
    let rows = commit_by_id(&node, "g", &[(foo, 0), (stranger, 3), (foo, 1)]);
    assert_eq!(rows, [(stranger, 3, 100), (foo, 0, 0), (foo, 1, 0)]);

    // v9, by name.
    let topic = f::OffsetFetchRequestTopics::default()
        .with_name(StrBytes::from_static_str("foo").into())
        .with_partition_indexes(vec![0, 1]);
    let group = f::OffsetFetchRequestGroup::default()
        .with_group_id(StrBytes::from_static_str("g").into())
        .with_topics(Some(vec![topic]));
    let by_name = OffsetFetchRequest::default().with_groups(vec![group]);
    let answer: OffsetFetchResponse = offsets_call(&node, ApiKey::OffsetFetch, 9, &by_name);
    let rows: Vec<_> = answer.groups[0]
        .topics
        .iter()
        .flat_map(|t| {
            t.partitions.iter().map(|p| (t.name.0.to_string(), p.partition_index, p.committed_offset))
        })
        .collect();
    assert_eq!(rows, [("foo".to_owned(), 0, 40), ("foo".to_owned(), 1, 41)]);

    // v10, by id: the same offsets, and the stranger's partition UNKNOWN_TOPIC_ID after them.
    let asked = |topic_id, partition_indexes| codec::OffsetFetchRequestTopics {
        topic_id,
        partition_indexes,
        ..Default::default()
    };
    let group = codec::OffsetFetchRequestGroup {
        group_id: StrBytes::from_static_str("g"),
        member_id: None,
        member_epoch: -1,
        topics: Some(vec![asked(stranger, vec![3]), asked(foo, vec![0, 1])]),
    };
    let all = codec::OffsetFetchRequestGroup { topics: None, ..group.clone() };
    let by_id = codec::OffsetFetchRequest { groups: vec![group, all], require_stable: false };
    let answer: codec::OffsetFetchResponse = offsets_call(&node, ApiKey::OffsetFetch, 10, &by_id);
    let rows = |g: &codec::OffsetFetchResponseGroup| -> Vec<_> {
        g.topics
            .iter()
            .flat_map(|t| {
                t.partitions
                    .iter()
                    .map(|p| (t.topic_id, p.0.partition_index, p.0.committed_offset, p.0.error_code))
            })
            .collect()
    };
    assert_eq!(rows(&answer.groups[0]), [(foo, 0, 40, 0), (foo, 1, 41, 0), (stranger, 3, -1, 100)]);
    assert_eq!(rows(&answer.groups[1]), [(foo, 0, 40, 0), (foo, 1, 41, 0)]);
}

/// Kafka checks READ on the group before it looks at a single topic id: a group the
/// caller may not read is GROUP_AUTHORIZATION_FAILED on every partition, unknown ids
/// included; its fetch is the group error alone.
#[test]
fn a_denied_group_is_refused_before_the_topic_ids() {
    use crate::wire::offset_codec as codec;

    let node = node_with_foo();
    let foo = crate::topics::topic_id_for("foo");
    let stranger = uuid::Uuid::from_u128(77);
    for topics in [vec![(stranger, 0), (foo, 1)], vec![(stranger, 0)], vec![(foo, 1)]] {
        let want: Vec<_> = topics.iter().map(|&(id, p)| (id, p, 30)).collect();
        assert_eq!(commit_by_id(&node, "denied", &topics), want);
    }
    // Only the unknown id: Kafka does not ask its coordinator, nor does the node.
    assert_eq!(commit_by_id(&node, "g", &[(stranger, 0)]), [(stranger, 0, 100)]);
    assert!(node.service.coordinator().get_group("g").is_none(), "no empty commit made the group");

    // A fetch from the denied group: the group error, no topic (`OffsetFetchResponse.groupError`).
    let asked = |topic_id| codec::OffsetFetchRequestTopics {
        topic_id,
        partition_indexes: vec![0],
        ..Default::default()
    };
    let group = codec::OffsetFetchRequestGroup {
        group_id: StrBytes::from_static_str("denied"),
        member_id: None,
        member_epoch: -1,
        topics: Some(vec![asked(stranger), asked(foo)]),
    };
    let fetch = codec::OffsetFetchRequest { groups: vec![group], require_stable: false };
    let answer: codec::OffsetFetchResponse = offsets_call(&node, ApiKey::OffsetFetch, 10, &fetch);
    assert_eq!(answer.groups[0].error_code, 30);
    assert!(answer.groups[0].topics.is_empty(), "{answer:?}");
}

/// A v10 body cut short anywhere is refused by the walk (or the codec), never read
/// past its end: the node answers an error, not a panic.
#[test]
fn a_truncated_v10_offset_body_is_refused() {
    let node = node_with_foo();
    for api in [ApiKey::OffsetCommit, ApiKey::OffsetFetch] {
        let body = sample(api, 10);
        assert!(node.handle(frame(api, 10, 1, &body), &mut session()).is_ok(), "{api:?} whole");
        for cut in 0..body.len() {
            let refused = node.handle(frame(api, 10, 1, &body[..cut]), &mut session());
            assert!(
                matches!(refused, Err(RequestError::Schema { version: 10, .. })),
                "{api:?} cut at {cut}: {:?}",
                refused.map(|_| ())
            );
        }
    }
}

/// `KafkaApisTest.testHandleOffsetCommitRequestTopicsAndPartitionsValidation` at v9
/// and v10: foo has two partitions (foo-2 is UNKNOWN_TOPIC_OR_PARTITION), bar commits,
/// zar does not exist: UNKNOWN_TOPIC_OR_PARTITION by name, UNKNOWN_TOPIC_ID by id.
/// Kafka lists the refused first (foo-2 opens foo's entry, then zar, then bar); the
/// runtime here appends the refusals it makes to their topic's entry, and the node
/// puts unknown ids first: the same answers, in another order.
#[rstest::rstest]
#[case::by_name(9, 3)]
#[case::by_id(10, 100)]
fn a_commit_of_unknown_topics_and_partitions(#[case] version: i16, #[case] zar_code: i16) {
    use kafka_protocol::messages::offset_commit_request::{
        OffsetCommitRequestPartition, OffsetCommitRequestTopic,
    };
    use kafka_protocol::messages::{OffsetCommitRequest, OffsetCommitResponse};

    let acls = "allow User:ANONYMOUS READ Group:group\n\
                allow User:ANONYMOUS READ Topic:foo\n\
                allow User:ANONYMOUS READ Topic:bar\n\
                allow User:ANONYMOUS READ Topic:zar\n";
    let node = offsets_node(&["foo", "bar"], acls);
    let asked = [
        ("foo", vec![(0, 10), (1, 20), (2, 30)]),
        ("bar", vec![(0, 40), (1, 50)]),
        ("zar", vec![(0, 60), (1, 70)]),
    ];
    let id = |name: &str| crate::topics::topic_id_for(name);
    let mut got: Vec<(String, i32, i16)> = if version >= 10 {
        let request = crate::wire::offset_codec::OffsetCommitRequest {
            group_id: StrBytes::from_static_str("group"),
            generation_id_or_member_epoch: -1,
            member_id: StrBytes::from_static_str("member"),
            group_instance_id: None,
            topics: asked
                .iter()
                .map(|(name, partitions)| crate::wire::offset_codec::OffsetCommitRequestTopic {
                    topic_id: id(name),
                    partitions: partitions
                        .iter()
                        .map(|&(p, offset)| {
                            crate::wire::offset_codec::Pinned(
                                OffsetCommitRequestPartition::default()
                                    .with_partition_index(p)
                                    .with_committed_offset(offset),
                            )
                        })
                        .collect(),
                    ..Default::default()
                })
                .collect(),
        };
        let answer: crate::wire::offset_codec::OffsetCommitResponse =
            offsets_call(&node, ApiKey::OffsetCommit, version, &request);
        let name =
            |topic_id| asked.iter().map(|(n, _)| *n).find(|&n| id(n) == topic_id).expect("an asked id");
        answer
            .topics
            .iter()
            .flat_map(|t| {
                t.partitions
                    .iter()
                    .map(move |p| (name(t.topic_id).to_owned(), p.0.partition_index, p.0.error_code))
            })
            .collect()
    } else {
        let request = OffsetCommitRequest::default()
            .with_group_id(StrBytes::from_static_str("group").into())
            .with_member_id(StrBytes::from_static_str("member"))
            .with_topics(
                asked
                    .iter()
                    .map(|(name, partitions)| {
                        OffsetCommitRequestTopic::default()
                            .with_name(StrBytes::from_static_str(name).into())
                            .with_partitions(
                                partitions
                                    .iter()
                                    .map(|&(p, offset)| {
                                        OffsetCommitRequestPartition::default()
                                            .with_partition_index(p)
                                            .with_committed_offset(offset)
                                    })
                                    .collect(),
                            )
                    })
                    .collect(),
            );
        let answer: OffsetCommitResponse = offsets_call(&node, ApiKey::OffsetCommit, version, &request);
        answer
            .topics
            .iter()
            .flat_map(|t| {
                t.partitions.iter().map(|p| (t.name.0.to_string(), p.partition_index, p.error_code))
            })
            .collect()
    };
    got.sort();
    let mut want: Vec<(String, i32, i16)> = [
        ("foo", 2, 3),
        ("foo", 0, 0),
        ("foo", 1, 0),
        ("zar", 0, zar_code),
        ("zar", 1, zar_code),
        ("bar", 0, 0),
        ("bar", 1, 0),
    ]
    .iter()
    .map(|&(t, p, code)| (t.to_owned(), p, code))
    .collect();
    want.sort();
    assert_eq!(got, want);
}
