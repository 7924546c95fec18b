//! The hand-written share codec against `kafka-protocol` where both know a version
//! (same bytes both ways), against Kafka's JSON layouts for the versions only it knows
//! (golden bytes, field by field), and against bodies that end early or lie.

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages as kp;
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use proptest::prelude::*;
use rstest::rstest;

use super::*;

/// `message` written at `version`, its size as computed checked.
pub(in crate::wire) fn enc<T: Encodable>(message: &T, version: i16) -> Vec<u8> {
    let mut out = BytesMut::new();
    message.encode(&mut out, version).expect("encodes");
    assert_eq!(message.compute_size(version).expect("sizes"), out.len(), "size agrees at v{version}");
    out.to_vec()
}

/// `bytes` read at `version`, every one of them.
pub(in crate::wire) fn dec<T: Decodable>(bytes: &[u8], version: i16) -> T {
    let mut buf = Bytes::copy_from_slice(bytes);
    let decoded = T::decode(&mut buf, version).expect("decodes");
    assert!(buf.is_empty(), "{} bytes left over at v{version}", buf.len());
    decoded
}

fn s(value: &str) -> StrBytes {
    StrBytes::from_string(value.to_owned())
}

fn fetch_topic() -> kp::share_fetch_request::FetchTopic {
    use kp::share_fetch_request as w;
    let batch = w::AcknowledgementBatch::default()
        .with_first_offset(5)
        .with_last_offset(6)
        .with_acknowledge_types(vec![1, 2]);
    let partition =
        w::FetchPartition::default().with_partition_index(3).with_acknowledgement_batches(vec![batch]);
    w::FetchTopic::default().with_topic_id(uuid::Uuid::from_u128(9)).with_partitions(vec![partition])
}

fn share_fetch() -> ShareFetchRequest {
    ShareFetchRequest {
        group_id: Some(s("g")),
        member_id: Some(s("m")),
        share_session_epoch: 2,
        max_wait_ms: 500,
        min_bytes: 1,
        max_bytes: 1 << 20,
        max_records: 50,
        batch_size: 10,
        share_acquire_mode: 1,
        is_renew_ack: true,
        topics: vec![Pinned(fetch_topic())],
        forgotten_topics_data: vec![Pinned(
            kp::share_fetch_request::ForgottenTopic::default()
                .with_topic_id(uuid::Uuid::from_u128(8))
                .with_partitions(vec![0, 1]),
        )],
    }
}

fn as_kp_fetch(r: &ShareFetchRequest) -> kp::ShareFetchRequest {
    kp::ShareFetchRequest::default()
        .with_group_id(r.group_id.clone().map(Into::into))
        .with_member_id(r.member_id.clone())
        .with_share_session_epoch(r.share_session_epoch)
        .with_max_wait_ms(r.max_wait_ms)
        .with_min_bytes(r.min_bytes)
        .with_max_bytes(r.max_bytes)
        .with_max_records(r.max_records)
        .with_batch_size(r.batch_size)
        .with_topics(r.topics.iter().map(|t| t.0.clone()).collect())
        .with_forgotten_topics_data(r.forgotten_topics_data.iter().map(|t| t.0.clone()).collect())
}

fn share_acknowledge() -> ShareAcknowledgeRequest {
    use kp::share_acknowledge_request as w;
    let batch = w::AcknowledgementBatch::default()
        .with_first_offset(0)
        .with_last_offset(9)
        .with_acknowledge_types(vec![4]);
    let partition =
        w::AcknowledgePartition::default().with_partition_index(1).with_acknowledgement_batches(vec![batch]);
    let topic = w::AcknowledgeTopic::default()
        .with_topic_id(uuid::Uuid::from_u128(3))
        .with_partitions(vec![partition]);
    ShareAcknowledgeRequest {
        group_id: Some(s("g")),
        member_id: Some(s("m")),
        share_session_epoch: 4,
        is_renew_ack: true,
        topics: vec![Pinned(topic)],
    }
}

fn acknowledge_response() -> ShareAcknowledgeResponse {
    use kp::share_acknowledge_response as w;
    let partition = w::PartitionData::default().with_partition_index(1).with_error_code(86);
    let topic = w::ShareAcknowledgeTopicResponse::default()
        .with_topic_id(uuid::Uuid::from_u128(3))
        .with_partitions(vec![partition]);
    ShareAcknowledgeResponse {
        throttle_time_ms: 0,
        error_code: 0,
        error_message: None,
        acquisition_lock_timeout_ms: 30_000,
        responses: vec![Pinned(topic)],
        node_endpoints: Vec::new(),
    }
}

fn write_state() -> WriteShareGroupStateRequest {
    let batch = kp::write_share_group_state_request::StateBatch::default()
        .with_first_offset(10)
        .with_last_offset(12)
        .with_delivery_state(2)
        .with_delivery_count(1);
    let partition = WriteStatePartition {
        partition: 0,
        state_epoch: 1,
        leader_epoch: 2,
        start_offset: 10,
        delivery_complete_count: 3,
        state_batches: vec![Pinned(batch)],
    };
    WriteShareGroupStateRequest {
        group_id: s("g"),
        topics: vec![WriteStateData { topic_id: uuid::Uuid::from_u128(1), partitions: vec![partition] }],
    }
}

fn summary() -> ReadShareGroupStateSummaryResponse {
    let partition = ReadStateSummaryPartition {
        partition: 0,
        error_code: 0,
        error_message: None,
        state_epoch: 1,
        leader_epoch: 2,
        start_offset: 10,
        delivery_complete_count: 3,
    };
    ReadShareGroupStateSummaryResponse {
        results: vec![ReadStateSummaryResult {
            topic_id: uuid::Uuid::from_u128(1),
            partitions: vec![partition],
        }],
    }
}

fn offsets() -> DescribeShareGroupOffsetsResponse {
    let partition = DescribeShareGroupOffsetsPartition {
        partition_index: 0,
        start_offset: 10,
        leader_epoch: 2,
        lag: 7,
        error_code: 0,
        error_message: None,
    };
    let topic = DescribeShareGroupOffsetsTopic {
        topic_name: s("t"),
        topic_id: uuid::Uuid::from_u128(1),
        partitions: vec![partition],
    };
    DescribeShareGroupOffsetsResponse {
        throttle_time_ms: 0,
        groups: vec![DescribeShareGroupOffsetsGroup {
            group_id: s("g"),
            topics: vec![topic],
            error_code: 0,
            error_message: None,
        }],
    }
}

/// Where `kafka-protocol` knows the version, both write the same bytes and each reads
/// the other's.
/// One COMMIT marker for partition 0 of topic "t", transaction version 2.
fn txn_markers() -> WriteTxnMarkersRequest {
    let topic = kp::write_txn_markers_request::WritableTxnMarkerTopic::default()
        .with_name(s("t").into())
        .with_partition_indexes(vec![0]);
    let marker = WritableTxnMarker {
        producer_id: 7,
        producer_epoch: 1,
        transaction_result: true,
        topics: vec![Pinned(topic)],
        coordinator_epoch: 3,
        transaction_version: 2,
    };
    WriteTxnMarkersRequest { markers: vec![marker] }
}

#[test]
fn the_versions_the_crate_knows_are_its_bytes() {
    let markers = WriteTxnMarkersRequest {
        markers: txn_markers()
            .markers
            .into_iter()
            .map(|m| WritableTxnMarker { transaction_version: 0, ..m })
            .collect(),
    };
    let kp_markers = {
        let m = &markers.markers[0];
        let marker = kp::write_txn_markers_request::WritableTxnMarker::default()
            .with_producer_id(kp::ProducerId(m.producer_id))
            .with_producer_epoch(m.producer_epoch)
            .with_transaction_result(m.transaction_result)
            .with_topics(m.topics.iter().map(|t| t.0.clone()).collect())
            .with_coordinator_epoch(m.coordinator_epoch);
        kp::WriteTxnMarkersRequest::default().with_markers(vec![marker])
    };
    assert_eq!(enc(&markers, 1), enc(&kp_markers, 1));
    assert_eq!(dec::<WriteTxnMarkersRequest>(&enc(&kp_markers, 1), 1), markers, "v1 reads version 0");

    let ours = share_fetch();
    let v1 = ShareFetchRequest { share_acquire_mode: 0, is_renew_ack: false, ..ours };
    assert_eq!(enc(&v1, 1), enc(&as_kp_fetch(&v1), 1));
    assert_eq!(dec::<ShareFetchRequest>(&enc(&as_kp_fetch(&v1), 1), 1), v1);

    let ack = ShareAcknowledgeRequest { is_renew_ack: false, ..share_acknowledge() };
    let kp_ack = kp::ShareAcknowledgeRequest::default()
        .with_group_id(Some(s("g").into()))
        .with_member_id(Some(s("m")))
        .with_share_session_epoch(4)
        .with_topics(ack.topics.iter().map(|t| t.0.clone()).collect());
    assert_eq!(enc(&ack, 1), enc(&kp_ack, 1));

    let resp = acknowledge_response();
    let kp_resp = kp::ShareAcknowledgeResponse::default()
        .with_responses(resp.responses.iter().map(|t| t.0.clone()).collect());
    assert_eq!(enc(&resp, 1), enc(&kp_resp, 1), "v1 has no lock timeout");

    let write = write_state();
    let kp_write = {
        use kp::write_share_group_state_request as w;
        let p = &write.topics[0].partitions[0];
        let partition = w::PartitionData::default()
            .with_partition(p.partition)
            .with_state_epoch(p.state_epoch)
            .with_leader_epoch(p.leader_epoch)
            .with_start_offset(p.start_offset)
            .with_state_batches(p.state_batches.iter().map(|b| b.0.clone()).collect());
        let topic = w::WriteStateData::default()
            .with_topic_id(write.topics[0].topic_id)
            .with_partitions(vec![partition]);
        kp::WriteShareGroupStateRequest::default().with_group_id(s("g")).with_topics(vec![topic])
    };
    assert_eq!(enc(&write, 0), enc(&kp_write, 0));
    let read: WriteShareGroupStateRequest = dec(&enc(&kp_write, 0), 0);
    assert_eq!(read.topics[0].partitions[0].delivery_complete_count, -1, "v0 reads the count as unknown");

    let kp_summary = {
        use kp::read_share_group_state_summary_response as w;
        let partition = w::PartitionResult::default()
            .with_partition(0)
            .with_state_epoch(1)
            .with_leader_epoch(2)
            .with_start_offset(10);
        let topic = w::ReadStateSummaryResult::default()
            .with_topic_id(uuid::Uuid::from_u128(1))
            .with_partitions(vec![partition]);
        kp::ReadShareGroupStateSummaryResponse::default().with_results(vec![topic])
    };
    assert_eq!(enc(&summary(), 0), enc(&kp_summary, 0));

    let kp_offsets = {
        use kp::describe_share_group_offsets_response as w;
        let partition = w::DescribeShareGroupOffsetsResponsePartition::default()
            .with_partition_index(0)
            .with_start_offset(10)
            .with_leader_epoch(2);
        let topic = w::DescribeShareGroupOffsetsResponseTopic::default()
            .with_topic_name(s("t").into())
            .with_topic_id(uuid::Uuid::from_u128(1))
            .with_partitions(vec![partition]);
        let group = w::DescribeShareGroupOffsetsResponseGroup::default()
            .with_group_id(s("g").into())
            .with_topics(vec![topic]);
        kp::DescribeShareGroupOffsetsResponse::default().with_groups(vec![group])
    };
    assert_eq!(enc(&offsets(), 0), enc(&kp_offsets, 0));
}

/// What a newer version adds, byte by byte where Kafka's JSON schema puts it: the older
/// version's bytes with the new field's inserted.
#[rstest]
#[case::share_fetch_v2(
    enc(&share_fetch(), 2),
    enc(&ShareFetchRequest { share_acquire_mode: 0, is_renew_ack: false, ..share_fetch() }, 1),
    // group "g" (2), member "m" (2), six int32s: then the acquire mode and the flag.
    2 + 2 + 6 * 4,
    vec![1, 1],
)]
#[case::share_acknowledge_v2(
    enc(&share_acknowledge(), 2),
    enc(&ShareAcknowledgeRequest { is_renew_ack: false, ..share_acknowledge() }, 1),
    // group, member, epoch: then IsRenewAck.
    2 + 2 + 4,
    vec![1],
)]
#[case::share_acknowledge_response_v2(
    enc(&acknowledge_response(), 2),
    enc(&acknowledge_response(), 1),
    // throttle, error code, null message: then AcquisitionLockTimeoutMs.
    4 + 2 + 1,
    30_000i32.to_be_bytes().to_vec(),
)]
#[case::write_share_group_state_v1(
    enc(&write_state(), 1),
    enc(&write_state(), 0),
    // group "g" (2), one topic (1), its id (16), one partition (1), then partition,
    // state epoch, leader epoch, start offset: then DeliveryCompleteCount.
    2 + 1 + 16 + 1 + 4 + 4 + 4 + 8,
    3i32.to_be_bytes().to_vec(),
)]
#[case::read_share_group_state_summary_v1(
    enc(&summary(), 1),
    enc(&summary(), 0),
    // one result (1), its id (16), one partition (1), partition, error code, null
    // message, state epoch, leader epoch, start offset: then DeliveryCompleteCount.
    1 + 16 + 1 + 4 + 2 + 1 + 4 + 4 + 8,
    3i32.to_be_bytes().to_vec(),
)]
#[case::describe_share_group_offsets_v1(
    enc(&offsets(), 1),
    enc(&offsets(), 0),
    // throttle, one group, "g", one topic, "t", its id, one partition, then partition
    // index, start offset, leader epoch: then Lag.
    4 + 1 + 2 + 1 + 2 + 16 + 1 + 4 + 8 + 4,
    7i64.to_be_bytes().to_vec(),
)]
#[case::write_txn_markers_v2(
    enc(&txn_markers(), 2),
    enc(&WriteTxnMarkersRequest {
        markers: txn_markers().markers.into_iter().map(|m| WritableTxnMarker { transaction_version: 0, ..m }).collect(),
    }, 1),
    // one marker (1), producer id, epoch, result, one topic (1), "t" (2), one partition
    // (1 + 4), the topic's tags (1), coordinator epoch: then TransactionVersion.
    1 + 8 + 2 + 1 + 1 + 2 + 1 + 4 + 1 + 4,
    vec![2],
)]
fn newer_versions_add_their_field_where_kafka_puts_it(
    #[case] newer: Vec<u8>,
    #[case] older: Vec<u8>,
    #[case] at: usize,
    #[case] field: Vec<u8>,
) {
    let mut expected = older;
    expected.splice(at..at, field);
    assert_eq!(newer, expected);
}

/// Every declared version reads back what it wrote; a field a version lacks reads as
/// its default.
#[test]
fn each_version_reads_what_it_writes() {
    fn round<T: Encodable + Decodable + PartialEq + std::fmt::Debug + Clone>(
        message: &T,
        version: i16,
        expected: T,
    ) {
        assert_eq!(dec::<T>(&enc(message, version), version), expected, "v{version}");
    }
    let fetch = share_fetch();
    round(&fetch, 2, fetch.clone());
    round(&fetch, 1, ShareFetchRequest { share_acquire_mode: 0, is_renew_ack: false, ..fetch.clone() });
    let ack = share_acknowledge();
    round(&ack, 2, ack.clone());
    round(&ack, 1, ShareAcknowledgeRequest { is_renew_ack: false, ..ack.clone() });
    let write = write_state();
    round(&write, 1, write.clone());
    let mut unknown = write.clone();
    unknown.topics[0].partitions[0].delivery_complete_count = -1;
    round(&write, 0, unknown);
    let mut lagless = offsets();
    lagless.groups[0].topics[0].partitions[0].lag = -1;
    round(&offsets(), 1, offsets());
    round(&offsets(), 0, lagless);
    round(&summary(), 1, summary());
}

#[rstest]
#[case::share_fetch_v0(ShareFetchRequest::default().put(&mut Vec::new(), 0).map(|_| ()))]
#[case::share_fetch_v3(ShareFetchRequest::default().put(&mut Vec::new(), 3).map(|_| ()))]
#[case::write_v2(WriteShareGroupStateRequest::get(&mut Bytes::from_static(&[0; 64]), 2).map(|_| ()))]
fn versions_it_does_not_declare_are_refused(#[case] outcome: anyhow::Result<()>) {
    let error = outcome.expect_err("refused");
    assert!(error.to_string().contains("is not one of"), "{error}");
}

#[test]
fn a_null_where_kafka_allows_none_is_refused() {
    // WriteShareGroupState's group id is not nullable: a 0 length is null.
    let error =
        WriteShareGroupStateRequest::get(&mut Bytes::from_static(&[0, 1, 0]), 1).expect_err("refused");
    assert!(error.to_string().contains("null string"), "{error}");
}

proptest! {
    /// A body cut anywhere is refused, never read past its end or panicking.
    #[test]
    fn a_truncated_body_is_refused(cut in 0usize..200, version in 1i16..=2) {
        let bytes = enc(&share_fetch(), version);
        let cut = cut % bytes.len();
        let mut buf = Bytes::copy_from_slice(&bytes[..cut]);
        prop_assert!(ShareFetchRequest::decode(&mut buf, version).is_err());
    }

    /// Any bytes at all: an answer or an error, never a panic or an allocation beyond
    /// the body (every count this module reads is checked against the bytes left; the
    /// crate's own parts of the other messages rely on the walk, `super::schema`).
    #[test]
    fn any_body_is_answered(body in proptest::collection::vec(any::<u8>(), 0..256), version in 0i16..=1) {
        if let Ok(request) = WriteShareGroupStateRequest::decode(&mut Bytes::from(body), version) {
            let again: WriteShareGroupStateRequest = dec(&enc(&request, version), version);
            prop_assert_eq!(again, request);
        }
    }
}
