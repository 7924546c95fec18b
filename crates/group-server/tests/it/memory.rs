//! The binary's memory under hostile clients, read from the process (`VmRSS`): what a
//! request header announces costs nothing until the bytes arrive, and replies a client
//! does not read stop its connection from being read.
//!
//! The bounds are the targets with room for a noisy shared machine; the real
//! figures are printed (`--nocapture`) and reported in the change's note.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use bytes::Bytes;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use prometheus_parse::{Scrape, Value};

use crate::binary::{Node, Stderr, group_server};
use crate::client::{Conn, s};

const MIB: u64 = 1 << 20;

/// The `group-server` binary, on ephemeral ports, its metrics on, in memory unless
/// `args` give a `--data-dir`.
pub(crate) struct Process {
    pub(crate) node: Node,
    pub(crate) kafka: SocketAddr,
    pub(crate) metrics: SocketAddr,
}

impl Process {
    pub(crate) fn start(args: &[&str]) -> Process {
        let storage: &[&str] = if args.contains(&"--data-dir") { &[] } else { &["--memory"] };
        let mut node = Node::spawn(
            group_server()
                .args(["--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0"])
                .args(storage)
                .args(["--topic", "t1:3", "--exit-on-stdin-close"])
                .args(args)
                .env("RUST_LOG", "warn"),
            Stderr::Null,
        );
        let metrics = node.address("group-server metrics on ");
        Process { kafka: node.kafka, node, metrics }
    }

    /// The resident set, in bytes.
    pub(crate) fn rss(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.node.id())).expect("status");
        let kib: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS");
        kib * 1024
    }

    /// The highest resident set seen over `period` (an allocation may land just after a
    /// counter moved).
    fn peak_rss(&self, period: Duration) -> u64 {
        let end = Instant::now() + period;
        let mut peak = self.rss();
        while Instant::now() < end {
            std::thread::sleep(Duration::from_millis(20));
            peak = peak.max(self.rss());
        }
        peak
    }

    /// The value of a sample of `/metrics`, 0 when the node has no such series.
    pub(crate) fn metric(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        let body = scrape(self.metrics);
        let scrape = Scrape::parse(body.lines().map(|l| Ok(l.to_owned()))).expect("the text format");
        scrape
            .samples
            .iter()
            .find(|s| s.metric == name && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
            .map_or(0.0, |s| match s.value {
                Value::Counter(v) | Value::Gauge(v) | Value::Untyped(v) => v,
                _ => 0.0,
            })
    }

    /// Polls `/metrics` until `done` holds, or `within` has passed (a guard: the
    /// memory assertion that follows says what went wrong).
    fn until(&self, within: Duration, done: impl Fn(&Process) -> bool) -> bool {
        let end = Instant::now() + within;
        loop {
            if done(self) {
                return true;
            }
            if Instant::now() > end {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The body of `GET /metrics` at `addr`.
pub(crate) fn scrape(addr: SocketAddr) -> String {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
    stream.write_all(b"GET /metrics HTTP/1.1\r\n\r\n").expect("write");
    let mut raw = String::new();
    stream.read_to_string(&mut raw).expect("read");
    raw.split_once("\r\n\r\n").map_or_else(String::new, |(_, body)| body.to_owned())
}

/// 500 connections that each send only a header announcing a 1 MiB request cost
/// what arrived (4 bytes and a read chunk each), not 1 MiB each: the server's
/// resident set stays within 100 MiB of idle (it grew by 572 MiB when each header
/// reserved its frame).
#[test]
fn headers_announcing_large_requests_cost_only_what_arrives() {
    let server = Process::start(&[]);
    let mut c = Conn::open(server.kafka);
    let _: ApiVersionsResponse = c.call(ApiKey::ApiVersions, 3, &ApiVersionsRequest::default());
    let idle = server.rss();
    let announced = (1u32 << 20).to_be_bytes();
    let conns: Vec<TcpStream> = (0..500)
        .map(|_| {
            let mut s = TcpStream::connect(server.kafka).expect("connect");
            s.write_all(&announced).expect("write");
            s
        })
        .collect();
    // Every header read: each holds a reservation or waits for one.
    let all_read = server.until(Duration::from_secs(20), |p| {
        let reserved = p.metric("group_server_request_bytes_reserved", &[]) / (1u64 << 20) as f64;
        let waited = p.metric("group_server_reads_paused_total", &[("reason", "request_budget")]);
        p.metric("group_server_connections_open", &[]) >= 501.0 && reserved + waited >= 500.0
    });
    let peak = server.peak_rss(Duration::from_millis(500));
    let grew = peak.saturating_sub(idle);
    println!(
        "500 header-only connections: RSS {} MiB idle, {} MiB with them (+{} MiB); all headers read: {all_read}",
        idle / MIB,
        peak / MIB,
        grew / MIB
    );
    assert!(grew <= 100 * MIB, "the server grew by {} MiB", grew / MIB);
    // Other clients are still served.
    let _: ApiVersionsResponse = c.call(ApiKey::ApiVersions, 3, &ApiVersionsRequest::default());
    drop(conns);
}

/// A classic member's JoinGroup whose subscription carries `metadata_bytes` of user data.
fn big_join(group: &str, metadata_bytes: usize) -> JoinGroupRequest {
    use kafka_protocol::messages::join_group_request::JoinGroupRequestProtocol;
    let metadata = vec![7u8; metadata_bytes];
    JoinGroupRequest::default()
        .with_group_id(s(group).into())
        .with_session_timeout_ms(120_000)
        .with_rebalance_timeout_ms(120_000)
        .with_member_id(StrBytes::default())
        .with_protocol_type(s("consumer"))
        .with_protocols(vec![
            JoinGroupRequestProtocol::default().with_name(s("range")).with_metadata(Bytes::from(metadata)),
        ])
}

/// A Stable group of `members` members whose metadata is `metadata_bytes` each: they
/// all join within the first rebalance's delay, then the leader syncs.
fn big_group(addr: SocketAddr, group: &str, members: usize, metadata_bytes: usize) {
    let joined: Vec<(Conn, JoinGroupResponse)> = std::thread::scope(|scope| {
        let joins: Vec<_> = (0..members)
            .map(|_| {
                scope.spawn(move || {
                    let mut c = Conn::open(addr);
                    let r: JoinGroupResponse = c.call(ApiKey::JoinGroup, 3, &big_join(group, metadata_bytes));
                    (c, r)
                })
            })
            .collect();
        joins.into_iter().map(|j| j.join().expect("a member joins")).collect()
    });
    let (mut leader, first) =
        joined.into_iter().find(|(_, r)| r.leader == r.member_id).expect("a leader among the members");
    assert_eq!(first.error_code, 0);
    assert_eq!(first.members.len(), members, "every member joined the first generation");
    let sync = SyncGroupRequest::default()
        .with_group_id(s(group).into())
        .with_generation_id(first.generation_id)
        .with_member_id(first.member_id.clone());
    let synced: SyncGroupResponse = leader.call(ApiKey::SyncGroup, 3, &sync);
    assert_eq!(synced.error_code, 0);
}

/// One connection pipelines 32 DescribeGroups of a group whose 50 members carry 1 MB
/// of metadata each (a 50 MB answer each) and reads none: the server stops reading it
/// after the first answer, and stays within 512 MiB (it took 2.3 GiB when it read and
/// answered all 32).
#[test]
fn unread_large_replies_stop_their_connection_from_being_read() {
    let server = Process::start(&["--initial-rebalance-delay-ms", "3000"]);
    big_group(server.kafka, "big", 50, 1_000_000);
    let before = server.rss();
    let mut hostile = Conn::open(server.kafka);
    let describe = DescribeGroupsRequest::default().with_groups(vec![s("big").into()]);
    for _ in 0..32 {
        hostile.send(ApiKey::DescribeGroups, 5, &describe);
    }
    let settled = server.until(Duration::from_secs(20), |p| {
        p.metric("group_server_reads_paused_total", &[("reason", "responses")]) >= 1.0
            || p.metric("group_server_requests_total", &[("api", "DescribeGroups")]) >= 32.0
    });
    let peak = server.peak_rss(Duration::from_millis(1000));
    let read = server.metric("group_server_requests_total", &[("api", "DescribeGroups")]);
    println!(
        "32 unread 50 MB DescribeGroups: RSS {} MiB with the group, {} MiB with them; {read} read; settled: {settled}",
        before / MIB,
        peak / MIB
    );
    assert!(peak <= 512 * MIB, "the server holds {} MiB", peak / MIB);
    assert!(read < 32.0, "all {read} requests were read while no reply was taken");
    // Another client is served meanwhile, and the stalled one once it reads.
    let mut other = Conn::open(server.kafka);
    let _: ApiVersionsResponse = other.call(ApiKey::ApiVersions, 3, &ApiVersionsRequest::default());
    for _ in 0..32 {
        let frame = hostile.recv_frame().expect("a DescribeGroups answer");
        assert!(frame.len() > 50_000_000, "an answer of {} bytes", frame.len());
    }
}
