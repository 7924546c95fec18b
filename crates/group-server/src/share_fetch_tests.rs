//! ShareFetch and ShareAcknowledge frames through `Node::handle`: the long poll, the
//! checks in Kafka's order (`KafkaApisTest.testHandleShareFetch*`,
//! `testHandleShareAcknowledge*`, `testValidateAcknowledgementBatches*` cases), and the
//! acknowledgement errors of records never acquired.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use group_coordinator::{
    AclOperation, Authorizer, CoordinatorConfig, GroupCoordinator, Principal, RequestContext, Resource,
    SharePersister,
};
use group_types::ErrorCode;
use kafka_protocol::messages::{self as kp, ApiKey, RequestHeader, ResponseHeader};
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use rstest::rstest;
use uuid::Uuid;

use crate::node::{Node, Reply};
use crate::session::Session;
use crate::wire::share_codec::{self as codec, Pinned};
use crate::{CoordinatorService, TopicSpec};

const MEMBER: &str = "member-1";

/// Denies READ on the group or topic named `denied`; allows everything else.
#[derive(Debug)]
struct Deny(&'static str);

impl Authorizer for Deny {
    fn authorize(&self, _: &RequestContext, operation: AclOperation, resource: Resource<'_>) -> bool {
        let name = match resource {
            Resource::Group(name) | Resource::Topic(name) => name,
            _ => "",
        };
        !(operation == AclOperation::Read && name == self.0)
    }
}

/// A share coordinator that is never asked anything here (share groups need one to
/// be on; no ShareGroupHeartbeat is sent).
#[derive(Debug)]
struct NoPersister;

impl SharePersister for NoPersister {
    fn initialize(&self, _: group_types::InitializeShareGroupStateRequest) {}
    fn delete_state(&self, _: group_types::DeleteShareGroupStateRequest) {}
    fn read_summary(&self, _: group_types::ReadShareGroupStateSummaryRequest) {}
}

fn node_with(share_enabled: bool, max_sessions: usize, denied: &'static str) -> Node {
    let mut config = CoordinatorConfig::default();
    config.share.enabled = share_enabled;
    let store = Arc::new(group_offsets::MemoryMetadataStore::new());
    let mut builder = GroupCoordinator::builder(store, config);
    if share_enabled {
        builder = builder.share_persister(Arc::new(NoPersister));
    }
    let service = CoordinatorService::new(builder.open().expect("memory coordinator"));
    crate::test_samples::test_node(service, Arc::new(Deny(denied)), max_sessions)
}

fn node() -> Node {
    node_with(true, 10, "")
}

fn session(port: u16) -> Session {
    Session::new(([127, 0, 0, 1], port).into(), Principal::ANONYMOUS)
}

fn t1() -> Uuid {
    TopicSpec { name: "t1".into(), partitions: 3 }.topic_id()
}

const UNKNOWN: Uuid = Uuid::from_u128(7);

/// A request frame (length prefix stripped) at v1.
fn frame<R: Encodable>(api: ApiKey, req: &R) -> Bytes {
    frame_at(api, req, 1)
}

/// A request frame (length prefix stripped) at `version`.
fn frame_at<R: Encodable>(api: ApiKey, req: &R, version: i16) -> Bytes {
    let mut out = BytesMut::new();
    RequestHeader::default()
        .with_request_api_key(api as i16)
        .with_request_api_version(version)
        .with_correlation_id(5)
        .with_client_id(Some(StrBytes::from_static_str("test")))
        .encode(&mut out, api.request_header_version(version))
        .expect("header encodes");
    req.encode(&mut out, version).expect("request encodes");
    out.freeze()
}

/// The reply's hold (`None`: sent at once) and its decoded v1 response.
fn answer<R: Decodable>(api: ApiKey, reply: Reply) -> (Option<Instant>, R) {
    answer_at(api, reply, 1)
}

/// The reply's hold (`None`: sent at once) and its response decoded at `version`.
fn answer_at<R: Decodable>(api: ApiKey, reply: Reply, version: i16) -> (Option<Instant>, R) {
    let (hold, frame) = match reply {
        Reply::Now(frame) => (None, frame),
        Reply::NotBefore(at, frame) => (Some(at), frame),
        Reply::Later(_) | Reply::Nothing => panic!("a share request is answered by the node itself"),
    };
    let mut body = frame.freeze().split_off(4);
    let header = ResponseHeader::decode(&mut body, api.response_header_version(version)).expect("header");
    assert_eq!(header.correlation_id, 5);
    let response = R::decode(&mut body, version).expect("response decodes");
    assert!(body.is_empty(), "the response has {} bytes more than its v{version}", body.len());
    (hold, response)
}

type Batch = (i64, i64, &'static [i8]);

fn batches_of(batches: &[Batch]) -> Vec<kp::share_fetch_request::AcknowledgementBatch> {
    batches
        .iter()
        .map(|&(first, last, types)| {
            kp::share_fetch_request::AcknowledgementBatch::default()
                .with_first_offset(first)
                .with_last_offset(last)
                .with_acknowledge_types(types.to_vec())
        })
        .collect()
}

/// A ShareFetch of `partitions` of `topic`, held up to 500 ms for at least a byte.
fn fetch_req(epoch: i32, topic: Uuid, partitions: &[i32]) -> kp::ShareFetchRequest {
    use kp::share_fetch_request as r;
    let partitions: Vec<r::FetchPartition> =
        partitions.iter().map(|&p| r::FetchPartition::default().with_partition_index(p)).collect();
    kp::ShareFetchRequest::default()
        .with_group_id(Some(StrBytes::from_static_str("g").into()))
        .with_member_id(Some(StrBytes::from_static_str(MEMBER)))
        .with_share_session_epoch(epoch)
        .with_max_wait_ms(500)
        .with_min_bytes(1)
        .with_max_bytes(1 << 20)
        .with_max_records(500)
        .with_batch_size(500)
        .with_topics(if partitions.is_empty() {
            Vec::new()
        } else {
            vec![r::FetchTopic::default().with_topic_id(topic).with_partitions(partitions)]
        })
}

/// [`fetch_req`] of one partition that carries `batches`.
fn fetch_ack_req(epoch: i32, topic: Uuid, partition: i32, batches: &[Batch]) -> kp::ShareFetchRequest {
    let mut req = fetch_req(epoch, topic, &[partition]);
    req.topics[0].partitions[0].acknowledgement_batches = batches_of(batches);
    req
}

fn ack_req(epoch: i32, topic: Uuid, partition: i32, batches: &[Batch]) -> kp::ShareAcknowledgeRequest {
    use kp::share_acknowledge_request as r;
    let batches = batches
        .iter()
        .map(|&(first, last, types)| {
            r::AcknowledgementBatch::default()
                .with_first_offset(first)
                .with_last_offset(last)
                .with_acknowledge_types(types.to_vec())
        })
        .collect();
    let partition = r::AcknowledgePartition::default()
        .with_partition_index(partition)
        .with_acknowledgement_batches(batches);
    kp::ShareAcknowledgeRequest::default()
        .with_group_id(Some(StrBytes::from_static_str("g").into()))
        .with_member_id(Some(StrBytes::from_static_str(MEMBER)))
        .with_share_session_epoch(epoch)
        .with_topics(vec![
            r::AcknowledgeTopic::default().with_topic_id(topic).with_partitions(vec![partition]),
        ])
}

fn share_fetch(
    node: &Node,
    s: &mut Session,
    req: &kp::ShareFetchRequest,
) -> (Option<Instant>, kp::ShareFetchResponse) {
    let reply = node.handle(frame(ApiKey::ShareFetch, req), s).expect("answered");
    answer(ApiKey::ShareFetch, reply)
}

fn share_ack(
    node: &Node,
    s: &mut Session,
    req: &kp::ShareAcknowledgeRequest,
) -> kp::ShareAcknowledgeResponse {
    let reply = node.handle(frame(ApiKey::ShareAcknowledge, req), s).expect("answered");
    let (hold, resp) = answer(ApiKey::ShareAcknowledge, reply);
    assert_eq!(hold, None, "ShareAcknowledge is answered at once");
    resp
}

/// Every (topic, partition, error) of a fetch response, in order.
fn fetched(resp: &kp::ShareFetchResponse) -> Vec<(Uuid, i32, i16, i16)> {
    resp.responses
        .iter()
        .flat_map(|t| {
            t.partitions
                .iter()
                .map(|p| (t.topic_id, p.partition_index, p.error_code, p.acknowledge_error_code))
        })
        .collect()
}

/// An opening fetch over two empty partitions is held for its `max_wait_ms`, and
/// answers both with no records and nothing acquired.
#[test]
fn a_fetch_over_empty_partitions_long_polls() {
    let node = node();
    let before = Instant::now();
    let (hold, resp) = share_fetch(&node, &mut session(1), &fetch_req(0, t1(), &[0, 1]));
    let at = hold.expect("held");
    assert!(at >= before + Duration::from_millis(500) && at <= Instant::now() + Duration::from_millis(500));
    assert_eq!(resp.error_code, 0);
    assert_eq!(resp.acquisition_lock_timeout_ms, 30_000);
    assert_eq!(fetched(&resp), [(t1(), 0, 0, 0), (t1(), 1, 0, 0)]);
    for p in resp.responses.iter().flat_map(|t| &t.partitions) {
        assert_eq!(p.records.as_deref(), Some(&[][..]));
        assert!(p.acquired_records.is_empty());
    }
}

/// `DelayedShareFetch`: nothing to wait for answers at once (no partition fetched, min
/// bytes 0, the final fetch); a wait of 0 is no wait, and a long one is capped as
/// Fetch's.
#[rstest]
#[case::only_unknown_topics(fetch_req(0, UNKNOWN, &[0]), None)]
#[case::no_partitions(fetch_req(0, t1(), &[]), None)]
#[case::min_bytes_zero(fetch_req(0, t1(), &[0]).with_min_bytes(0), None)]
#[case::max_wait_zero(fetch_req(0, t1(), &[0]).with_max_wait_ms(0), Some(0))]
#[case::max_wait_capped(fetch_req(0, t1(), &[0]).with_max_wait_ms(i32::MAX), Some(30_000))]
fn when_a_fetch_is_answered(#[case] req: kp::ShareFetchRequest, #[case] hold_ms: Option<u64>) {
    let before = Instant::now();
    let (hold, resp) = share_fetch(&node(), &mut session(1), &req);
    assert_eq!(resp.error_code, 0);
    match (hold, hold_ms) {
        (None, None) => {}
        (Some(at), Some(ms)) => {
            assert!(at >= before + Duration::from_millis(ms));
            assert!(at <= Instant::now() + Duration::from_millis(ms));
        }
        other => panic!("held {other:?}"),
    }
}

/// The top-level refusals, in Kafka's order: share groups off, no group id, READ on the
/// group, the member id; then the session's.
#[rstest]
#[case::share_groups_off(node_with(false, 10, ""), fetch_req(0, t1(), &[0]), ErrorCode::UnsupportedVersion)]
#[case::null_group(node(), fetch_req(0, t1(), &[0]).with_group_id(None), ErrorCode::InvalidRequest)]
#[case::group_denied(node_with(true, 10, "g"), fetch_req(0, t1(), &[0]), ErrorCode::GroupAuthorizationFailed)]
#[case::group_denied_before_the_member_id(
    node_with(true, 10, "g"),
    fetch_req(0, t1(), &[]).with_member_id(None),
    ErrorCode::GroupAuthorizationFailed
)]
#[case::null_member(node(), fetch_req(0, t1(), &[]).with_member_id(None), ErrorCode::InvalidRequest)]
#[case::empty_member(node(), fetch_req(0, t1(), &[]).with_member_id(Some(StrBytes::from_static_str(""))), ErrorCode::InvalidRequest)]
#[case::member_over_36(
    node(),
    fetch_req(0, t1(), &[]).with_member_id(Some(StrBytes::from_static_str("0123456789012345678901234567890123456"))),
    ErrorCode::InvalidRequest
)]
#[case::no_session(node(), fetch_req(1, t1(), &[0]), ErrorCode::ShareSessionNotFound)]
#[case::no_session_to_close(node(), fetch_req(-1, t1(), &[]), ErrorCode::ShareSessionNotFound)]
#[case::acknowledging_on_open(node(), fetch_ack_req(0, t1(), 0, &[(0, 0, &[1])]), ErrorCode::InvalidRequest)]
fn share_fetch_refusals(#[case] node: Node, #[case] req: kp::ShareFetchRequest, #[case] error: ErrorCode) {
    let (hold, resp) = share_fetch(&node, &mut session(1), &req);
    assert_eq!(ErrorCode::from_code(resp.error_code), error);
    assert!(resp.responses.is_empty());
    assert_eq!(resp.acquisition_lock_timeout_ms, 0);
    assert_eq!(hold, None);
}

/// READ on each topic: a denied topic's partitions are TOPIC_AUTHORIZATION_FAILED, an
/// unknown id's UNKNOWN_TOPIC_ID, a missing partition UNKNOWN_TOPIC_OR_PARTITION.
#[test]
fn partition_errors() {
    let denying = node_with(true, 10, "t1");
    let mut req = fetch_req(0, t1(), &[0]);
    let extra = fetch_req(0, UNKNOWN, &[0]).topics;
    req.topics.extend(extra);
    let (hold, resp) = share_fetch(&denying, &mut session(1), &req);
    assert_eq!(hold, None, "nothing was fetched");
    assert_eq!(fetched(&resp), [(t1(), 0, 29, 0), (UNKNOWN, 0, 100, 0)]);
    let (_, resp) = share_fetch(&node(), &mut session(1), &fetch_req(0, t1(), &[0, 9]));
    assert_eq!(fetched(&resp), [(t1(), 0, 0, 0), (t1(), 9, 3, 0)]);
}

/// A full cache is answered SHARE_SESSION_LIMIT_REACHED after the request's wait.
#[test]
fn a_full_cache_answers_after_the_wait() {
    let node = node_with(true, 1, "");
    share_fetch(&node, &mut session(1), &fetch_req(0, t1(), &[0]));
    let other = fetch_req(0, t1(), &[0]).with_member_id(Some(StrBytes::from_static_str("member-2")));
    let before = Instant::now();
    let (hold, resp) = share_fetch(&node, &mut session(2), &other);
    assert_eq!(ErrorCode::from_code(resp.error_code), ErrorCode::ShareSessionLimitReached);
    assert!(hold.expect("held") >= before + Duration::from_millis(500));
}

/// The session over the wire: epochs advance on both APIs, a subsequent fetch answers
/// only what changed, ShareAcknowledge -1 closes the session.
#[test]
fn a_session_over_the_wire() {
    let node = node();
    let mut s = session(1);
    let (_, resp) = share_fetch(&node, &mut s, &fetch_req(0, t1(), &[0]));
    assert_eq!(fetched(&resp), [(t1(), 0, 0, 0)]);
    // Epoch 1 adds partition 1: only it is answered.
    let (hold, resp) = share_fetch(&node, &mut s, &fetch_req(1, t1(), &[1]));
    assert!(hold.is_some());
    assert_eq!(fetched(&resp), [(t1(), 1, 0, 0)]);
    let (_, resp) = share_fetch(&node, &mut s, &fetch_req(1, t1(), &[]));
    assert_eq!(ErrorCode::from_code(resp.error_code), ErrorCode::InvalidShareSessionEpoch);
    assert_eq!(share_ack(&node, &mut s, &ack_req(2, t1(), 0, &[])).error_code, 0);
    let (_, resp) = share_fetch(&node, &mut s, &fetch_req(3, t1(), &[]));
    assert_eq!((resp.error_code, fetched(&resp)), (0, vec![]));
    assert_eq!(share_ack(&node, &mut s, &ack_req(-1, t1(), 0, &[])).error_code, 0);
    let (_, resp) = share_fetch(&node, &mut s, &fetch_req(4, t1(), &[]));
    assert_eq!(ErrorCode::from_code(resp.error_code), ErrorCode::ShareSessionNotFound);
}

/// A final ShareFetch fetches nothing, answers its acknowledgements, and closes the
/// session; a closed connection's session is gone too.
#[test]
fn the_final_fetch_and_a_closed_connection_end_the_session() {
    let node = node();
    let mut s = session(1);
    share_fetch(&node, &mut s, &fetch_req(0, t1(), &[0]));
    let (hold, resp) = share_fetch(&node, &mut s, &fetch_ack_req(-1, t1(), 0, &[(0, 4, &[1])]));
    assert_eq!(hold, None);
    assert_eq!(fetched(&resp), [(t1(), 0, 0, 121)]);
    assert_eq!(share_ack(&node, &mut s, &ack_req(1, t1(), 0, &[])).error_code, 122);

    share_fetch(&node, &mut s, &fetch_req(0, t1(), &[0]));
    node.share_sessions.lock().expect("not poisoned").connection_closed(s.peer);
    assert_eq!(share_ack(&node, &mut s, &ack_req(1, t1(), 0, &[])).error_code, 122);
}

/// A ShareFetch's piggybacked acknowledgements are answered in `acknowledge_error_code`,
/// beside the partition's fetch (a partition only acknowledged is added).
#[test]
fn piggybacked_acknowledgements() {
    let node = node();
    let mut s = session(1);
    share_fetch(&node, &mut s, &fetch_req(0, t1(), &[0, 1]));
    let (hold, resp) = share_fetch(&node, &mut s, &fetch_ack_req(1, t1(), 1, &[(0, 0, &[1])]));
    assert!(hold.is_some(), "acknowledging does not cut the fetch's wait short");
    assert_eq!(fetched(&resp), [(t1(), 1, 0, 121)]);
    let message = resp.responses[0].partitions[0].acknowledge_error_message.as_deref();
    assert_eq!(
        message,
        Some("Batch record not found. The request batch offsets are not found in the cache.")
    );
}

/// ShareAcknowledge's checks and `validateAcknowledgementBatches`, after a session
/// opened on partitions 0 and 1 of `t1`.
#[rstest]
#[case::never_acquired(t1(), 0, vec![(0, 9, &[1][..])], ErrorCode::InvalidRecordState)]
#[case::per_offset_types(t1(), 1, vec![(3, 5, &[1, 0, 3][..])], ErrorCode::InvalidRecordState)]
#[case::no_batches(t1(), 0, vec![], ErrorCode::None)]
#[case::below_the_start_offset(t1(), 0, vec![(-1, -1, &[1][..])], ErrorCode::None)]
#[case::unknown_topic_id(UNKNOWN, 0, vec![(0, 0, &[1][..])], ErrorCode::UnknownTopicId)]
#[case::unknown_partition(t1(), 7, vec![(0, 0, &[1][..])], ErrorCode::UnknownTopicOrPartition)]
#[case::not_in_the_session(t1(), 2, vec![(0, 0, &[1][..])], ErrorCode::UnknownTopicOrPartition)]
#[case::first_after_last(t1(), 0, vec![(5, 4, &[1][..])], ErrorCode::InvalidRequest)]
#[case::overlapping(t1(), 0, vec![(0, 5, &[1][..]), (4, 8, &[1][..])], ErrorCode::InvalidRequest)]
#[case::unordered(t1(), 0, vec![(6, 8, &[1][..]), (0, 5, &[1][..])], ErrorCode::InvalidRequest)]
#[case::touching_is_not_overlapping(t1(), 0, vec![(0, 5, &[1][..]), (5, 8, &[1][..])], ErrorCode::InvalidRecordState)]
#[case::no_types(t1(), 0, vec![(0, 5, &[][..])], ErrorCode::InvalidRequest)]
#[case::types_not_one_per_offset(t1(), 0, vec![(0, 5, &[1, 2][..])], ErrorCode::InvalidRequest)]
#[case::type_out_of_range(t1(), 0, vec![(0, 0, &[4][..])], ErrorCode::InvalidRequest)]
#[case::negative_type(t1(), 0, vec![(0, 0, &[-1][..])], ErrorCode::InvalidRequest)]
fn acknowledgement_errors(
    #[case] topic: Uuid,
    #[case] partition: i32,
    #[case] batches: Vec<Batch>,
    #[case] error: ErrorCode,
) {
    let node = node();
    let mut s = session(1);
    share_fetch(&node, &mut s, &fetch_req(0, t1(), &[0, 1]));
    let resp = share_ack(&node, &mut s, &ack_req(1, topic, partition, &batches));
    assert_eq!(resp.error_code, 0);
    let parts: Vec<(Uuid, i32, i16)> = resp
        .responses
        .iter()
        .flat_map(|t| t.partitions.iter().map(|p| (t.topic_id, p.partition_index, p.error_code)))
        .collect();
    assert_eq!(parts, [(topic, partition, error.code())]);
}

/// ShareAcknowledge's top-level refusals: the same checks as ShareFetch, then
/// `acknowledgeSessionUpdate`'s.
#[rstest]
#[case::share_groups_off(node_with(false, 10, ""), 1, ErrorCode::UnsupportedVersion)]
#[case::group_denied(node_with(true, 10, "g"), 1, ErrorCode::GroupAuthorizationFailed)]
#[case::initial_epoch(node(), 0, ErrorCode::InvalidShareSessionEpoch)]
#[case::no_session(node(), 1, ErrorCode::ShareSessionNotFound)]
#[case::no_session_to_close(node(), -1, ErrorCode::ShareSessionNotFound)]
fn share_acknowledge_refusals(#[case] node: Node, #[case] epoch: i32, #[case] error: ErrorCode) {
    let resp = share_ack(&node, &mut session(1), &ack_req(epoch, t1(), 0, &[(0, 0, &[1])]));
    assert_eq!(ErrorCode::from_code(resp.error_code), error);
    assert!(resp.responses.is_empty());
}

/// READ on the topic is checked for acknowledgements too.
#[test]
fn acknowledging_a_denied_topic() {
    let node = node_with(true, 10, "t1");
    let mut s = session(1);
    share_fetch(&node, &mut s, &fetch_req(0, t1(), &[0]));
    let resp = share_ack(&node, &mut s, &ack_req(1, t1(), 0, &[(0, 0, &[1])]));
    assert_eq!(resp.responses[0].partitions[0].error_code, ErrorCode::TopicAuthorizationFailed.code());
}

/// A share partition is the group's, not the member's (`SharePartitionManager`'s
/// partition cache): another member's fetch makes an acknowledgement
/// INVALID_RECORD_STATE; a ShareFetch's acknowledgements run before its own fetch; the
/// group's last session takes its share partitions with it.
#[test]
fn share_partitions_belong_to_the_group() {
    let node = node();
    let (mut one, mut two) = (session(1), session(2));
    let as_two = |req: kp::ShareFetchRequest| req.with_member_id(Some(StrBytes::from_static_str("member-2")));
    share_fetch(&node, &mut one, &fetch_req(0, t1(), &[0]));
    share_fetch(&node, &mut two, &as_two(fetch_req(0, t1(), &[1])));
    let ack =
        ack_req(1, t1(), 0, &[(0, 0, &[1])]).with_member_id(Some(StrBytes::from_static_str("member-2")));
    assert_eq!(share_ack(&node, &mut two, &ack).responses[0].partitions[0].error_code, 121);
    // Partition 2 joins member-2's session in the request that acknowledges it.
    let (_, resp) = share_fetch(&node, &mut two, &as_two(fetch_ack_req(2, t1(), 2, &[(0, 0, &[1])])));
    assert_eq!(fetched(&resp), [(t1(), 2, 0, 3)]);
    let (_, resp) = share_fetch(&node, &mut two, &as_two(fetch_ack_req(3, t1(), 2, &[(0, 0, &[1])])));
    assert_eq!(fetched(&resp), [(t1(), 2, 0, 121)]);

    share_fetch(&node, &mut one, &fetch_req(-1, t1(), &[]));
    share_fetch(&node, &mut two, &as_two(fetch_req(-1, t1(), &[])));
    share_fetch(&node, &mut one, &fetch_req(0, UNKNOWN, &[0]));
    let resp = share_ack(&node, &mut one, &ack_req(1, t1(), 0, &[(0, 0, &[1])]));
    assert_eq!(resp.responses[0].partitions[0].error_code, 3);
}

/// The acquisition lock a fetch announces is the group's `share.record.lock.duration.ms`:
/// the broker's `group.share.record.lock.duration.ms`, or the group's own setting.
#[test]
fn a_fetch_announces_the_groups_record_lock_duration() {
    let node = node();
    let lock = |node: &Node| {
        let (_, resp) = share_fetch(node, &mut session(9), &fetch_req(0, t1(), &[0]));
        resp.acquisition_lock_timeout_ms
    };
    assert_eq!(lock(&node), 30_000, "the broker's default");
    let overrides = group_coordinator::GroupConfigOverrides {
        share_record_lock_duration_ms: Some(20_000),
        ..Default::default()
    };
    node.service.coordinator().set_group_config("g", overrides).expect("within the broker's bounds");
    assert_eq!(lock(&node), 20_000, "the group's own");
}

/// `req` as a v2 ShareFetch that renews (`IsRenewAck`) or not.
fn fetch_v2(req: kp::ShareFetchRequest, is_renew_ack: bool) -> codec::ShareFetchRequest {
    codec::ShareFetchRequest {
        group_id: req.group_id.map(|g| g.0),
        member_id: req.member_id,
        share_session_epoch: req.share_session_epoch,
        max_wait_ms: req.max_wait_ms,
        min_bytes: req.min_bytes,
        max_bytes: req.max_bytes,
        max_records: req.max_records,
        batch_size: req.batch_size,
        share_acquire_mode: 0,
        is_renew_ack,
        topics: req.topics.into_iter().map(Pinned).collect(),
        forgotten_topics_data: req.forgotten_topics_data.into_iter().map(Pinned).collect(),
    }
}

/// A renewing v2 fetch: everything it would fetch set to 0, as KIP-1222 asks.
fn renewing(req: kp::ShareFetchRequest) -> codec::ShareFetchRequest {
    let req = req.with_max_wait_ms(0).with_min_bytes(0).with_max_bytes(0).with_max_records(0);
    fetch_v2(req, true)
}

fn share_fetch_v2(
    node: &Node,
    s: &mut Session,
    req: &codec::ShareFetchRequest,
) -> (Option<Instant>, kp::ShareFetchResponse) {
    let reply = node.handle(frame_at(ApiKey::ShareFetch, req, 2), s).expect("answered");
    // v2's answer has v1's layout.
    let (hold, resp): (_, codec::ShareFetchResponse) = answer_at(ApiKey::ShareFetch, reply, 2);
    (hold, resp.0)
}

/// KIP-1222: a renewing v2 ShareFetch must ask to fetch nothing; whatever it sets is
/// named in `KafkaApis.handleShareFetchRequest`'s words.
#[rstest]
#[case::all_set(fetch_v2(fetch_req(0, t1(), &[0]), true), Some("maxBytes must be set to 0, minBytes must be set to 0, maxRecords must be set to 0, maxWaitMs must be set to 0, if isRenewAck is true."))]
#[case::only_the_wait(fetch_v2(fetch_req(0, t1(), &[0]).with_max_bytes(0).with_min_bytes(0).with_max_records(0), true), Some("maxWaitMs must be set to 0, if isRenewAck is true."))]
#[case::all_zero(renewing(fetch_req(0, t1(), &[0])), None)]
#[case::not_renewing(fetch_v2(fetch_req(0, t1(), &[0]), false), None)]
#[case::unknown_acquire_mode(codec::ShareFetchRequest { share_acquire_mode: 2, ..fetch_v2(fetch_req(0, t1(), &[0]), false) }, Some("Unknown share acquire mode id: 2"))]
fn a_renewing_fetch_asks_for_nothing(#[case] req: codec::ShareFetchRequest, #[case] refusal: Option<&str>) {
    let (_, resp) = share_fetch_v2(&node(), &mut session(1), &req);
    match refusal {
        Some(message) => {
            assert_eq!(resp.error_code, ErrorCode::InvalidRequest.code());
            assert_eq!(resp.error_message.as_deref(), Some(message));
            assert!(resp.responses.is_empty());
        }
        None => assert_eq!(resp.error_code, 0, "{:?}", resp.error_message),
    }
}

/// A renewing fetch renews and fetches nothing (`KafkaApis`: "we must forego the record
/// fetching"): only its acknowledgements are answered, at once. Over this node's empty
/// partitions a renewal names records never acquired.
#[test]
fn a_renewing_fetch_only_acknowledges() {
    let node = node();
    let mut s = session(1);
    share_fetch(&node, &mut s, &fetch_req(0, t1(), &[0, 1]));
    let (hold, resp) = share_fetch_v2(&node, &mut s, &renewing(fetch_ack_req(1, t1(), 1, &[(0, 0, &[4])])));
    assert_eq!(hold, None, "nothing fetched, nothing to wait for");
    assert_eq!(fetched(&resp), [(t1(), 1, 0, ErrorCode::InvalidRecordState.code())]);
    // The session went on: the next fetch, not renewing, fetches its partitions again
    // and waits for records.
    let (hold, resp) = share_fetch_v2(&node, &mut s, &fetch_v2(fetch_req(2, t1(), &[0, 1]), false));
    assert_eq!(resp.error_code, 0);
    assert!(hold.is_some());
}

/// `validateAcknowledgementBatches`: RENEW (4) is a type of v2 only, and only with
/// `IsRenewAck`.
#[rstest]
#[case::v1(1, false, ErrorCode::InvalidRequest)]
#[case::v2_without_is_renew_ack(2, false, ErrorCode::InvalidRequest)]
#[case::v2_renewing(2, true, ErrorCode::InvalidRecordState)]
fn renew_acknowledgements(#[case] version: i16, #[case] is_renew_ack: bool, #[case] error: ErrorCode) {
    let node = node();
    let mut s = session(1);
    share_fetch(&node, &mut s, &fetch_req(0, t1(), &[0]));
    let kp_ack = ack_req(1, t1(), 0, &[(0, 0, &[4])]);
    let ack = codec::ShareAcknowledgeRequest {
        group_id: kp_ack.group_id.map(|g| g.0),
        member_id: kp_ack.member_id,
        share_session_epoch: kp_ack.share_session_epoch,
        is_renew_ack,
        topics: kp_ack.topics.into_iter().map(Pinned).collect(),
    };
    let reply = node.handle(frame_at(ApiKey::ShareAcknowledge, &ack, version), &mut s).expect("answered");
    let (_, resp): (_, codec::ShareAcknowledgeResponse) = answer_at(ApiKey::ShareAcknowledge, reply, version);
    assert_eq!(resp.error_code, 0);
    assert_eq!(resp.responses[0].0.partitions[0].error_code, error.code());
    let lock = if version >= 2 { 30_000 } else { 0 };
    assert_eq!(resp.acquisition_lock_timeout_ms, lock, "v2 announces the group's lock duration");
}
