//! The binary stops gracefully on SIGTERM: what was acknowledged is there after a
//! restart; a second signal exits at once.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::Duration;

use kafka_protocol::messages::*;
use kafka_protocol::protocol::Decodable;

use crate::binary::{Node, Stderr, group_server, temp_dir};
use crate::client::{Conn, join, s};

/// A `group-server` process on an ephemeral port over sled in `dir`, its log kept.
fn start(dir: &Path) -> Node {
    let mut command = group_server();
    command.args(["--listen", "127.0.0.1:0", "--topic", "t1:3", "--initial-rebalance-delay-ms", "0"]);
    Node::spawn(command.arg("--data-dir").arg(dir), Stderr::Keep)
}

fn commit(partition: i32, offset: i64) -> OffsetCommitRequest {
    let p = offset_commit_request::OffsetCommitRequestPartition::default()
        .with_partition_index(partition)
        .with_committed_offset(offset);
    let t = offset_commit_request::OffsetCommitRequestTopic::default()
        .with_name(s("t1").into())
        .with_partitions(vec![p]);
    OffsetCommitRequest::default()
        .with_group_id(s("g").into())
        .with_generation_id_or_member_epoch(-1)
        .with_topics(vec![t])
}

fn fetched(addr: SocketAddr, partition: i32) -> i64 {
    let mut c = Conn::open(addr);
    let topic = offset_fetch_request::OffsetFetchRequestTopic::default()
        .with_name(s("t1").into())
        .with_partition_indexes(vec![partition]);
    let req = OffsetFetchRequest::default().with_group_id(s("g").into()).with_topics(Some(vec![topic]));
    let resp: OffsetFetchResponse = c.call(ApiKey::OffsetFetch, 7, &req);
    resp.topics[0].partitions[0].committed_offset
}

#[test]
fn sigterm_stops_gracefully_and_loses_no_acknowledged_commit() {
    let dir = temp_dir("sigterm");
    let server = start(&dir);
    let acked = Arc::new(AtomicI64::new(-1));
    let refused = Arc::new(AtomicBool::new(false));
    let committer = {
        let (addr, acked, refused) = (server.kafka, acked.clone(), refused.clone());
        std::thread::spawn(move || {
            let mut c = Conn::open(addr);
            for offset in 0.. {
                c.send(ApiKey::OffsetCommit, 8, &commit(0, offset));
                let Some(frame) = c.recv_frame() else { return };
                let mut body = bytes::Bytes::from(frame);
                let _ = ResponseHeader::decode(&mut body, ApiKey::OffsetCommit.response_header_version(8));
                let resp = OffsetCommitResponse::decode(&mut body, 8).expect("commit response");
                match resp.topics[0].partitions[0].error_code {
                    0 => acked.store(offset, Ordering::SeqCst),
                    _ => {
                        refused.store(true, Ordering::SeqCst);
                        return;
                    }
                }
            }
        })
    };
    while acked.load(Ordering::SeqCst) < 50 {
        std::thread::sleep(Duration::from_millis(5));
    }
    // Commits are in flight while the signal lands.
    server.signal("TERM");
    let (status, log) = server.exit();
    let _ = committer.join();
    assert!(status.success(), "exit status {status}; log:\n{log}");
    assert!(log.contains("SIGTERM: stopping"), "log:\n{log}");
    let last = acked.load(Ordering::SeqCst);

    let server = start(&dir);
    let offset = fetched(server.kafka, 0);
    assert!(offset >= last, "acknowledged {last}, read back {offset}");
    server.signal("TERM");
    assert!(server.exit().0.success());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A parked JoinGroup keeps a graceful stop waiting for seconds; a second signal
/// meanwhile exits at once, with a failure status.
#[test]
fn a_second_signal_exits_at_once() {
    let dir = temp_dir("second-signal");
    let server = start(&dir);
    let mut m = Conn::open(server.kafka);
    let joined: JoinGroupResponse = m.call(ApiKey::JoinGroup, 3, &join("j", ""));
    assert_eq!(joined.error_code, 0);
    let mut n = Conn::open(server.kafka);
    n.send(ApiKey::JoinGroup, 3, &join("j", ""));
    // N's JoinGroup waits for M, who never rejoins.
    let mut watcher = Conn::open(server.kafka);
    let parked = (0..1000).any(|_| {
        let req = DescribeGroupsRequest::default().with_groups(vec![s("j").into()]);
        let resp: DescribeGroupsResponse = watcher.call(ApiKey::DescribeGroups, 5, &req);
        resp.groups[0].group_state.as_str() == "PreparingRebalance"
    });
    assert!(parked, "N's JoinGroup never reached the coordinator");
    server.signal("TERM");
    std::thread::sleep(Duration::from_millis(300));
    server.signal("INT");
    let (status, log) = server.exit();
    assert_eq!(status.code(), Some(1), "log:\n{log}");
    assert!(log.contains("again: exiting at once"), "log:\n{log}");
    let _ = std::fs::remove_dir_all(&dir);
}
