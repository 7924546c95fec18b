//! The binary stops gracefully on SIGTERM: what was acknowledged is there after a
//! restart; a second signal exits at once.

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::{Duration, Instant};

use kafka_protocol::messages::*;
use kafka_protocol::protocol::Decodable;

use crate::client::{Conn, join, s};

/// A `group-server` process on an ephemeral port over sled in `dir`.
struct Server {
    child: Child,
    addr: SocketAddr,
    stderr: std::thread::JoinHandle<String>,
}

impl Server {
    fn start(dir: &Path) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_group-server"))
            .args(["--listen", "127.0.0.1:0", "--topic", "t1:3", "--initial-rebalance-delay-ms", "0"])
            .arg("--data-dir")
            .arg(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("group-server starts");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        stdout.read_line(&mut line).expect("the listening line");
        let addr = line.trim().rsplit(' ').next().and_then(|a| a.parse().ok()).expect("an address");
        let mut stderr = child.stderr.take().expect("stderr");
        let stderr = std::thread::spawn(move || {
            let mut out = String::new();
            let _ = stderr.read_to_string(&mut out);
            out
        });
        Server { child, addr, stderr }
    }

    fn signal(&self, name: &str) {
        let status = Command::new("kill").arg(format!("-{name}")).arg(self.child.id().to_string()).status();
        assert!(status.is_ok_and(|s| s.success()), "kill -{name}");
    }

    /// Waits for the process to exit (bounded: a hung server fails the test).
    fn exit(mut self) -> (ExitStatus, String) {
        let started = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                break status;
            }
            if started.elapsed() > Duration::from_secs(30) {
                let _ = self.child.kill();
                panic!("group-server did not exit within 30 s of the signal");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        (status, self.stderr.join().unwrap_or_default())
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("group-server-it-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
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
    let server = Server::start(&dir);
    let acked = Arc::new(AtomicI64::new(-1));
    let refused = Arc::new(AtomicBool::new(false));
    let committer = {
        let (addr, acked, refused) = (server.addr, acked.clone(), refused.clone());
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

    let server = Server::start(&dir);
    let offset = fetched(server.addr, 0);
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
    let server = Server::start(&dir);
    let mut m = Conn::open(server.addr);
    let joined: JoinGroupResponse = m.call(ApiKey::JoinGroup, 3, &join("j", ""));
    assert_eq!(joined.error_code, 0);
    let mut n = Conn::open(server.addr);
    n.send(ApiKey::JoinGroup, 3, &join("j", ""));
    // N's JoinGroup waits for M, who never rejoins.
    let mut watcher = Conn::open(server.addr);
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
