//! Transactional offsets over the wire, on sled: a producer's TxnOffsetCommit
//! stays pending (invisible to a plain OffsetFetch, UNSTABLE_OFFSET_COMMIT to a
//! `require_stable` one) across a restart, until a transaction coordinator's
//! WriteTxnMarkers commits or aborts it; the committed offset then survives a
//! restart too. The marker's partitions outside `__consumer_offsets`, or past its
//! partition count, are UNKNOWN_TOPIC_OR_PARTITION.

use group_server::{GroupServer, ServerConfig};
use kafka_protocol::messages::offset_fetch_request::OffsetFetchRequestTopic;
use kafka_protocol::messages::txn_offset_commit_request::{
    TxnOffsetCommitRequestPartition, TxnOffsetCommitRequestTopic,
};
use kafka_protocol::messages::write_txn_markers_request::{WritableTxnMarker, WritableTxnMarkerTopic};
use kafka_protocol::messages::*;

use crate::client::{Conn, s};

const UNKNOWN_TOPIC_OR_PARTITION: i16 = 3;
const INVALID_GROUP_ID: i16 = 24;
const UNSTABLE_OFFSET_COMMIT: i16 = 88;

/// A temporary data directory, removed when dropped.
struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn start(dir: &TempDir) -> GroupServer {
    let dir = dir.0.to_str().expect("a UTF-8 path");
    let args = [
        "--listen",
        "127.0.0.1:0",
        "--data-dir",
        dir,
        "--topic",
        "t1:3",
        "--initial-rebalance-delay-ms",
        "0",
    ];
    GroupServer::start(&ServerConfig::from_args(args).expect("config")).expect("server starts")
}

fn txn_commit(group: &str, producer: i64, offset: i64) -> TxnOffsetCommitRequest {
    TxnOffsetCommitRequest::default()
        .with_transactional_id(s("tx").into())
        .with_group_id(s(group).into())
        .with_producer_id(ProducerId(producer))
        .with_producer_epoch(0)
        .with_generation_id(-1)
        .with_topics(vec![TxnOffsetCommitRequestTopic::default().with_name(s("t1").into()).with_partitions(
            vec![
            TxnOffsetCommitRequestPartition::default().with_partition_index(0).with_committed_offset(offset),
        ],
        )])
}

/// One marker for `producer` on every partition of `__consumer_offsets` (the
/// transaction coordinator writes to the partitions the producer's groups live
/// in; every one is as good in a test), one past them, and one of another topic.
fn markers(producer: i64, commit: bool) -> WriteTxnMarkersRequest {
    let offsets = WritableTxnMarkerTopic::default()
        .with_name(s("__consumer_offsets").into())
        .with_partition_indexes((0..51).collect());
    let other = WritableTxnMarkerTopic::default().with_name(s("t1").into()).with_partition_indexes(vec![0]);
    WriteTxnMarkersRequest::default().with_markers(vec![
        WritableTxnMarker::default()
            .with_producer_id(ProducerId(producer))
            .with_producer_epoch(0)
            .with_transaction_result(commit)
            .with_coordinator_epoch(1)
            .with_topics(vec![offsets, other]),
    ])
}

/// t1-0 of group `g` as OffsetFetch v7 answers it: (offset, error).
fn fetch(c: &mut Conn, stable: bool) -> (i64, i16) {
    let topics =
        vec![OffsetFetchRequestTopic::default().with_name(s("t1").into()).with_partition_indexes(vec![0])];
    let req = OffsetFetchRequest::default()
        .with_group_id(s("g").into())
        .with_topics(Some(topics))
        .with_require_stable(stable);
    let r: OffsetFetchResponse = c.call(ApiKey::OffsetFetch, 7, &req);
    assert_eq!(r.error_code, 0);
    let p = &r.topics[0].partitions[0];
    (p.committed_offset, p.error_code)
}

/// A one-marker WriteTxnMarkers at v2 (KIP-1228), which `kafka-protocol` cannot
/// write: v1's bytes with the marker's TransactionVersion before its tagged fields
/// and the request's (the last two bytes, both empty).
struct V2(WriteTxnMarkersRequest, i8);

impl kafka_protocol::protocol::Encodable for V2 {
    fn encode<B: kafka_protocol::protocol::buf::ByteBufMut>(
        &self,
        buf: &mut B,
        _: i16,
    ) -> anyhow::Result<()> {
        assert_eq!(self.0.markers.len(), 1, "one marker: its tags are the next to last byte");
        let mut v1 = bytes::BytesMut::new();
        self.0.encode(&mut v1, 1)?;
        let at = v1.len() - 2;
        buf.put_slice(&v1[..at]);
        buf.put_slice(&self.1.to_be_bytes());
        buf.put_slice(&v1[at..]);
        Ok(())
    }

    fn compute_size(&self, _: i16) -> anyhow::Result<usize> {
        Ok(self.0.compute_size(1)? + 1)
    }
}

fn write_markers(c: &mut Conn, producer: i64, commit: bool, version: i16) {
    let request = markers(producer, commit);
    let sent = match version {
        1 => c.send(ApiKey::WriteTxnMarkers, 1, &request),
        _ => c.send(ApiKey::WriteTxnMarkers, version, &V2(request, 2)),
    };
    let (got, mut body) = c.recv(ApiKey::WriteTxnMarkers, version);
    assert_eq!(got, sent, "correlation id");
    // v2 answers in v1's layout.
    let r = <WriteTxnMarkersResponse as kafka_protocol::protocol::Decodable>::decode(&mut body, 1)
        .expect("response decodes");
    assert_eq!(r.markers.len(), 1);
    let m = &r.markers[0];
    assert_eq!(m.producer_id, ProducerId(producer));
    let offsets = &m.topics[0];
    assert_eq!(offsets.name.as_str(), "__consumer_offsets");
    for p in &offsets.partitions {
        let expected = if p.partition_index < 50 { 0 } else { UNKNOWN_TOPIC_OR_PARTITION };
        assert_eq!(p.error_code, expected, "__consumer_offsets-{}", p.partition_index);
    }
    assert_eq!(offsets.partitions.len(), 51);
    assert_eq!(
        m.topics[1].partitions[0].error_code, UNKNOWN_TOPIC_OR_PARTITION,
        "not a partition of this node"
    );
}

#[test]
fn transactional_offsets_stay_pending_across_a_restart_until_their_marker() {
    let dir = TempDir(std::env::temp_dir().join(format!("group-server-it-txn-{}", std::process::id())));
    let mut server = start(&dir);
    let mut c = Conn::open(server.local_addr());
    for version in [0, 3, 5] {
        let r: TxnOffsetCommitResponse = c.call(ApiKey::TxnOffsetCommit, version, &txn_commit("", 7, 1));
        assert_eq!(r.topics[0].partitions[0].error_code, INVALID_GROUP_ID, "v{version}");
    }
    let r: TxnOffsetCommitResponse = c.call(ApiKey::TxnOffsetCommit, 5, &txn_commit("g", 7, 42));
    assert_eq!(r.topics[0].partitions[0].error_code, 0);
    assert_eq!(fetch(&mut c, false), (-1, 0), "pending: invisible");
    assert_eq!(fetch(&mut c, true), (-1, UNSTABLE_OFFSET_COMMIT));

    drop(c);
    server.stop();
    drop(server);
    let mut server = start(&dir);
    let mut c = Conn::open(server.local_addr());
    assert_eq!(fetch(&mut c, true), (-1, UNSTABLE_OFFSET_COMMIT), "still pending after a restart");
    write_markers(&mut c, 7, true, 2);
    assert_eq!(fetch(&mut c, true), (42, 0), "committed by the marker");

    // An aborted transaction leaves the committed offset alone.
    let r: TxnOffsetCommitResponse = c.call(ApiKey::TxnOffsetCommit, 3, &txn_commit("g", 8, 50));
    assert_eq!(r.topics[0].partitions[0].error_code, 0);
    assert_eq!(fetch(&mut c, false), (42, 0));
    write_markers(&mut c, 8, false, 1);
    assert_eq!(fetch(&mut c, true), (42, 0));

    drop(c);
    server.stop();
    drop(server);
    let server = start(&dir);
    let mut c = Conn::open(server.local_addr());
    assert_eq!(fetch(&mut c, true), (42, 0), "the committed offset survives a restart");
}
