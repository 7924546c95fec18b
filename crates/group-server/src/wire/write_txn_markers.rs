//! WriteTxnMarkers (key 27) on the wire: a transaction coordinator's markers for
//! partitions of `__consumer_offsets`. As `KafkaApis.handleWriteTxnMarkersRequest`
//! answers, a coordinator that is not ready (not the coordinator, loading, not
//! available) is NOT_LEADER_OR_FOLLOWER to the transaction coordinator, which
//! then retries; partitions of other topics are UNKNOWN_TOPIC_OR_PARTITION (this
//! node hosts no data partitions). v2 (KIP-1228) adds each marker's transaction
//! version, which the group coordinator passes on and does not check (as it does not
//! check the producer epoch: `docs/KAFKA-DIFFERENCES.md` T3).

use group_types as gt;
use gt::ErrorCode;
use kafka_protocol::messages as kp;

use super::schema::Ty::{Arr, ArrI32, Bool, I8, I16, I32, I64, Str};
use super::schema::{ALL, Layout, Struct, always, f, plain};
use super::share_codec::{self as codec, SameAfter};
use super::{WireApi, s, sb, unavailable};
use crate::node::{Ctx, Node, Reply, RequestError};

fn request(req: &codec::WriteTxnMarkersRequest) -> gt::WriteTxnMarkersRequest {
    let markers = req
        .markers
        .iter()
        .map(|m| gt::TxnMarker {
            producer_id: m.producer_id,
            producer_epoch: m.producer_epoch,
            result: gt::TransactionResult::from_wire(m.transaction_result),
            coordinator_epoch: m.coordinator_epoch,
            transaction_version: m.transaction_version,
            topics: m
                .topics
                .iter()
                .map(|codec::Pinned(t)| gt::TopicEntries {
                    topic: s(&t.name.0),
                    partitions: t.partition_indexes.iter().map(|p| (*p, ())).collect(),
                })
                .collect(),
        })
        .collect();
    gt::WriteTxnMarkersRequest { markers }
}

/// The code the transaction coordinator sees (`KafkaApis.handleWriteTxnMarkersRequest`).
fn for_transaction_coordinator(code: ErrorCode) -> ErrorCode {
    match code {
        ErrorCode::CoordinatorNotAvailable
        | ErrorCode::CoordinatorLoadInProgress
        | ErrorCode::NotCoordinator => ErrorCode::NotLeaderOrFollower,
        code => code,
    }
}

fn response(resp: gt::WriteTxnMarkersResponse) -> codec::WriteTxnMarkersResponse {
    use kp::write_txn_markers_response as r;
    let markers = resp
        .markers
        .into_iter()
        .map(|m| {
            let topics = m
                .topics
                .into_iter()
                .map(|t| {
                    let partitions = t
                        .partitions
                        .into_iter()
                        .map(|(p, code)| {
                            r::WritableTxnMarkerPartitionResult::default()
                                .with_partition_index(p)
                                .with_error_code(for_transaction_coordinator(code).code())
                        })
                        .collect();
                    r::WritableTxnMarkerTopicResult::default()
                        .with_name(kp::TopicName(sb(t.topic)))
                        .with_partitions(partitions)
                })
                .collect();
            r::WritableTxnMarkerResult::default()
                .with_producer_id(kp::ProducerId(m.producer_id))
                .with_topics(topics)
        })
        .collect();
    SameAfter(kp::WriteTxnMarkersResponse::default().with_markers(markers))
}

impl WireApi for gt::WriteTxnMarkersRequest {
    type Wire = codec::WriteTxnMarkersRequest;
    const SCHEMA: Layout = Layout::new(1, 2, 1, &BODY);

    fn serve(node: &Node, ctx: &Ctx<'_>, wire: Self::Wire) -> Result<Reply, RequestError> {
        let req = request(&wire);
        node.record(|| ctx.line(&format!(",\"markers\":{}", req.markers.len())));
        let failed = gt::WriteTxnMarkersResponse::uniform(&req, ErrorCode::None);
        Ok(ctx.later(node.submit(ctx, req), move |r, _| match r {
            Ok(resp) => response(resp),
            Err(e) => {
                let mut failed = failed;
                failed.set_all(unavailable(&e));
                response(failed)
            }
        }))
    }

    #[cfg(test)]
    fn sample(v: i16) -> bytes::Bytes {
        use crate::test_samples::{enc, s};
        use kp::write_txn_markers_request::WritableTxnMarkerTopic;
        let t = |n: &str| {
            codec::Pinned(
                WritableTxnMarkerTopic::default().with_name(s(n).into()).with_partition_indexes(vec![0, 1]),
            )
        };
        let m = |commit| codec::WritableTxnMarker {
            producer_id: 7,
            producer_epoch: 1,
            transaction_result: commit,
            topics: vec![t("__consumer_offsets"), t("t2")],
            coordinator_epoch: 3,
            transaction_version: 2,
        };
        enc(&codec::WriteTxnMarkersRequest { markers: vec![m(true), m(false)] }, v)
    }
}

// The request field by field as `kafka-protocol` decodes it, for the walk (`super::schema`).
static TOPIC: Struct = plain(&[always(Str), always(ArrI32)]);
static MARKER: Struct =
    plain(&[always(I64), always(I16), always(Bool), always(Arr(&TOPIC)), always(I32), f(I8, 2, ALL)]);
static BODY: Struct = plain(&[always(Arr(&MARKER))]);
