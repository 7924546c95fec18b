//! Observability from outside: `--metrics-listen` scraped over plain HTTP and read
//! back with a Prometheus text-format parser, and `--log-format json` read back
//! line by line from the binary's stderr.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use bytes::Bytes;
use group_server::GroupServer;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use prometheus_parse::{Scrape, Value};

use crate::binary::{Node, Stderr, group_server};
use crate::client::{Conn, IN_MEMORY, join, s, server_with};

/// A server like `client::server`, with metrics on an ephemeral port.
fn metered() -> (GroupServer, SocketAddr) {
    let server = server_with(|c| c.metrics_listen = Some("127.0.0.1:0".parse().expect("address")));
    let addr = server.metrics_addr().expect("a metrics address");
    assert_ne!(addr.port(), 0);
    (server, addr)
}

/// Sends `request` as it is and reads the whole response (the endpoint closes).
fn http(addr: SocketAddr, request: &[u8]) -> (u16, String, String) {
    let mut stream = TcpStream::connect(addr).expect("connect");
    // A guard against a hung test, not a timing assertion.
    stream.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
    stream.write_all(request).expect("write");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read");
    let raw = String::from_utf8(raw).expect("utf-8");
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let status = head.split(' ').nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    (status, head.to_owned(), body.to_owned())
}

/// What a scrape of `/metrics` returns, parsed.
struct Metrics(Scrape);

impl Metrics {
    fn scrape(addr: SocketAddr) -> Metrics {
        let (status, head, body) = http(addr, b"GET /metrics HTTP/1.1\r\nHost: test\r\n\r\n");
        assert_eq!(status, 200, "{head}");
        assert!(head.contains("Content-Type: text/plain; version=0.0.4"), "{head}");
        let lines = body.lines().map(|l| Ok(l.to_owned()));
        Metrics(Scrape::parse(lines).expect("the Prometheus text format"))
    }

    /// A scrape taken once the reply to the `n`th request of `api` was counted.
    /// The server counts a reply's latency and bytes after writing it, so the
    /// client may read the reply before it is counted: poll, with a deadline.
    fn after_replies(addr: SocketAddr, api: &str, n: f64) -> Metrics {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let scrape = Metrics::scrape(addr);
            let counted = scrape.histogram_count("group_server_request_duration_seconds", &[("api", api)]);
            if counted >= n {
                return scrape;
            }
            // A guard against a hung test, not a timing assertion.
            assert!(Instant::now() < deadline, "{counted} of {n} {api} replies counted");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// The value of the sample `name` whose labels include `labels`; panics if none.
    fn get(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        let sample = self
            .0
            .samples
            .iter()
            .find(|s| s.metric == name && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
            .unwrap_or_else(|| panic!("no sample {name} {labels:?}"));
        match sample.value {
            Value::Counter(v) | Value::Gauge(v) | Value::Untyped(v) => v,
            _ => panic!("{name} is a histogram or summary"),
        }
    }

    fn requests(&self, api: &str) -> f64 {
        self.get("group_server_requests_total", &[("api", api)])
    }

    /// The `+Inf` bucket of a histogram: everything it counted.
    fn histogram_count(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        let sample = self
            .0
            .samples
            .iter()
            .find(|s| s.metric == name && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
            .unwrap_or_else(|| panic!("no histogram {name} {labels:?}"));
        let Value::Histogram(buckets) = &sample.value else { panic!("{name} is not a histogram") };
        buckets.iter().find(|b| b.less_than.is_infinite()).map_or(0.0, |b| b.count)
    }
}

/// Joins `group` as its only member and syncs: generation 1, Stable. Returns the member id.
fn form_group(c: &mut Conn, group: &str) -> StrBytes {
    let first: JoinGroupResponse = c.call(ApiKey::JoinGroup, 5, &join(group, ""));
    assert_eq!(first.error_code, 79, "MEMBER_ID_REQUIRED");
    let joined: JoinGroupResponse = c.call(ApiKey::JoinGroup, 5, &join(group, first.member_id.as_str()));
    assert_eq!((joined.error_code, joined.generation_id), (0, 1));
    let member = joined.member_id;
    let assignment = sync_group_request::SyncGroupRequestAssignment::default()
        .with_member_id(member.clone())
        .with_assignment(Bytes::from_static(&[0, 0, 0, 0, 0, 0, 0, 0, 0, 0]));
    let sync = SyncGroupRequest::default()
        .with_group_id(s(group).into())
        .with_generation_id(1)
        .with_member_id(member.clone())
        .with_assignments(vec![assignment]);
    let synced: SyncGroupResponse = c.call(ApiKey::SyncGroup, 3, &sync);
    assert_eq!(synced.error_code, 0);
    member
}

#[test]
fn scrapes_follow_groups_requests_connections_and_commits() {
    let (server, addr) = metered();
    let before = Metrics::scrape(addr);
    assert_eq!(before.get("kafka_group_rebalances_started_total", &[]), 0.0);
    assert_eq!(before.get("kafka_group_groups", &[("state", "Stable"), ("type", "classic")]), 0.0);
    assert_eq!(before.get("kafka_group_members", &[("type", "classic")]), 0.0);
    assert_eq!(before.requests("JoinGroup"), 0.0);
    assert_eq!(before.get("group_server_connections_open", &[]), 0.0);
    // Only a cluster node has etcd transactions to count (`e2e/cluster.py` checks those).
    assert!(
        !before.0.samples.iter().any(|s| s.metric.starts_with("group_server_etcd_")),
        "a node on its own exports etcd series"
    );
    // Every family says what it is.
    for name in
        ["group_server_requests_total", "kafka_group_groups", "kafka_group_storage_append_duration_seconds"]
    {
        assert!(before.0.docs.get(name).is_some_and(|d| !d.is_empty()), "no HELP for {name}");
    }

    let mut c = Conn::open(server.local_addr());
    let member = form_group(&mut c, "g");
    let hb = HeartbeatRequest::default()
        .with_group_id(s("g").into())
        .with_generation_id(1)
        .with_member_id(member.clone());
    for _ in 0..3 {
        let r: HeartbeatResponse = c.call(ApiKey::Heartbeat, 3, &hb);
        assert_eq!(r.error_code, 0);
    }
    let formed = Metrics::after_replies(addr, "Heartbeat", 3.0);
    assert_eq!(formed.get("kafka_group_rebalances_started_total", &[]), 1.0);
    assert_eq!(formed.get("kafka_group_rebalances_completed_total", &[]), 1.0);
    assert_eq!(formed.get("kafka_group_groups", &[("state", "Stable"), ("type", "classic")]), 1.0);
    assert_eq!(formed.get("kafka_group_groups", &[("state", "Empty"), ("type", "classic")]), 0.0);
    assert_eq!(formed.get("kafka_group_members", &[("type", "classic")]), 1.0);
    assert_eq!(formed.requests("JoinGroup"), 2.0);
    assert_eq!(formed.requests("SyncGroup"), 1.0);
    assert_eq!(formed.requests("Heartbeat"), 3.0);
    assert_eq!(formed.histogram_count("group_server_request_duration_seconds", &[("api", "Heartbeat")]), 3.0);
    assert_eq!(formed.get("group_server_connections_open", &[]), 1.0);
    assert_eq!(formed.get("group_server_connections_accepted_total", &[]), 1.0);
    let bytes_in = formed.get("group_server_received_bytes_total", &[]);
    let bytes_out = formed.get("group_server_sent_bytes_total", &[]);
    assert!(bytes_in > 0.0 && bytes_out > 0.0, "in {bytes_in}, out {bytes_out}");
    // The group's creation and its assignment were written.
    assert!(formed.histogram_count("kafka_group_storage_append_duration_seconds", &[]) >= 1.0);

    let partition = |i| {
        offset_commit_request::OffsetCommitRequestPartition::default()
            .with_partition_index(i)
            .with_committed_offset(5)
    };
    let commit = OffsetCommitRequest::default()
        .with_group_id(s("g").into())
        .with_generation_id_or_member_epoch(1)
        .with_member_id(member)
        .with_topics(vec![
            offset_commit_request::OffsetCommitRequestTopic::default()
                .with_name(s("t1").into())
                .with_partitions(vec![partition(0), partition(1)]),
        ]);
    let r: OffsetCommitResponse = c.call(ApiKey::OffsetCommit, 8, &commit);
    assert!(r.topics[0].partitions.iter().all(|p| p.error_code == 0));
    let committed = Metrics::after_replies(addr, "OffsetCommit", 1.0);
    assert_eq!(committed.get("kafka_group_offset_commits_total", &[]), 1.0);
    assert_eq!(committed.get("kafka_group_offset_commit_partitions_total", &[]), 2.0);
    assert!(committed.get("group_server_received_bytes_total", &[]) > bytes_in);
    assert!(committed.get("group_server_sent_bytes_total", &[]) > bytes_out);

    drop(c);
    // The connection's task ends once it sees the close: poll, with a deadline.
    let deadline = Instant::now() + Duration::from_secs(10);
    while Metrics::scrape(addr).get("group_server_connections_open", &[]) != 0.0 {
        assert!(Instant::now() < deadline, "the closed connection is still counted as open");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn only_get_metrics_is_served() {
    let (_server, addr) = metered();
    let (status, _, body) = http(addr, b"GET /other HTTP/1.1\r\n\r\n");
    assert_eq!(status, 404, "{body}");
    let (status, head, _) = http(addr, b"POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
    assert_eq!(status, 405);
    assert!(head.contains("Allow: GET, HEAD"), "{head}");
    let (status, head, body) = http(addr, b"HEAD /metrics HTTP/1.1\r\n\r\n");
    assert_eq!((status, body.as_str()), (200, ""), "{head}");
}

#[test]
fn garbage_and_oversized_requests_leave_the_endpoint_serving() {
    let (server, addr) = metered();
    let (status, _, _) = http(addr, b"\x00\x00\x00\x08garbage\r\n\r\n");
    assert_eq!(status, 400);
    // Exactly the limit, so that the endpoint reads it all and closes cleanly.
    let (status, _, _) = http(addr, &[b'A'; 8 * 1024]);
    assert_eq!(status, 431);
    // A scraper that connects and leaves without a word.
    drop(TcpStream::connect(addr).expect("connect"));
    // A Kafka frame sent to the metrics port, and HTTP sent to the Kafka port.
    let (status, _, _) = http(addr, b"\x00\x00\x00\x0a\x00\x12\x00\x00\x00\x00\x00\x01\x00\x00\n\n");
    assert_eq!(status, 400);
    let mut kafka = Conn::open(server.local_addr());
    kafka.write_raw(b"GET /metrics HTTP/1.1\r\n\r\n");
    assert!(kafka.is_closed());
    let after = Metrics::scrape(addr);
    assert!(after.get("group_server_connections_accepted_total", &[]) >= 1.0);
}

#[test]
fn a_silent_scraper_blocks_neither_scrapes_nor_clients() {
    let (server, addr) = metered();
    // Connections that never send their request hold a slot each until the read
    // timeout, not a thread: the other scrapes and the Kafka side go on.
    let idle: Vec<TcpStream> = (0..4).map(|_| TcpStream::connect(addr).expect("connect")).collect();
    let mut partial = TcpStream::connect(addr).expect("connect");
    partial.write_all(b"GET /metr").expect("write");
    let m = Metrics::scrape(addr);
    assert_eq!(m.requests("ApiVersions"), 0.0);
    let mut c = Conn::open(server.local_addr());
    let _: ApiVersionsResponse = c.call(ApiKey::ApiVersions, 3, &ApiVersionsRequest::default());
    assert_eq!(Metrics::scrape(addr).requests("ApiVersions"), 1.0);
    drop((idle, partial));
}

/// A KIP-848 group is counted as what it is: a consumer group in its own state with
/// its members (it was counted as a classic Empty group with no members), and its
/// joins, epoch bumps and leaves are counted.
#[test]
fn consumer_groups_are_counted_by_type_state_and_members() {
    let (server, addr) = metered();
    let mut c = Conn::open(server.local_addr());
    let join = ConsumerGroupHeartbeatRequest::default()
        .with_group_id(s("cg").into())
        .with_member_id(s("m-1"))
        .with_member_epoch(0)
        .with_rebalance_timeout_ms(10_000)
        .with_subscribed_topic_names(Some(vec![s("t1").into()]))
        .with_topic_partitions(Some(vec![]));
    let joined: ConsumerGroupHeartbeatResponse = c.call(ApiKey::ConsumerGroupHeartbeat, 1, &join);
    assert_eq!((joined.error_code, joined.member_epoch), (0, 1));
    let m = Metrics::scrape(addr);
    assert_eq!(m.get("kafka_group_groups", &[("state", "Stable"), ("type", "consumer")]), 1.0);
    assert_eq!(m.get("kafka_group_groups", &[("state", "Empty"), ("type", "classic")]), 0.0);
    assert_eq!(m.get("kafka_group_members", &[("type", "consumer")]), 1.0);
    assert_eq!(m.get("kafka_group_members", &[("type", "classic")]), 0.0);
    assert_eq!(m.get("kafka_group_consumer_members_joined_total", &[]), 1.0);
    assert_eq!(m.get("kafka_group_consumer_rebalances_total", &[]), 1.0);
    let leave = ConsumerGroupHeartbeatRequest::default()
        .with_group_id(s("cg").into())
        .with_member_id(s("m-1"))
        .with_member_epoch(-1);
    let left: ConsumerGroupHeartbeatResponse = c.call(ApiKey::ConsumerGroupHeartbeat, 1, &leave);
    assert_eq!(left.error_code, 0);
    let m = Metrics::scrape(addr);
    assert_eq!(m.get("kafka_group_groups", &[("state", "Empty"), ("type", "consumer")]), 1.0);
    assert_eq!(m.get("kafka_group_members", &[("type", "consumer")]), 0.0);
    assert_eq!(m.get("kafka_group_consumer_members_removed_total", &[]), 1.0);
}

/// More silent connections than scraper slots cannot keep a scraper out: a new
/// connection evicts the oldest one still waiting for its request, and the
/// eviction is counted (they used to hold every slot for 5 s, and the scrape was
/// closed unanswered).
#[test]
fn silent_connections_cannot_starve_a_scraper() {
    let (_server, addr) = metered();
    let silent: Vec<TcpStream> = (0..20).map(|_| TcpStream::connect(addr).expect("connect")).collect();
    let m = Metrics::scrape(addr);
    assert!(
        m.get("group_server_metrics_connections_dropped_total", &[("outcome", "evicted")]) >= 1.0,
        "no silent connection was evicted"
    );
    // Every scrape after it is answered too, the silent connections still open.
    for _ in 0..3 {
        Metrics::scrape(addr);
    }
    drop(silent);
}

#[test]
fn no_metrics_listener_without_the_setting() {
    let server = server_with(|_| {});
    assert_eq!(server.metrics_addr(), None);
}

/// `--log-format json`: every stderr line is a JSON object, the coordinator's
/// rebalance events among them.
#[test]
fn json_logs_carry_the_coordinator_events() {
    let mut node = Node::spawn(
        group_server()
            .args(IN_MEMORY)
            .args(["--log-format", "json", "--exit-on-stdin-close"])
            .env("RUST_LOG", "info"),
        Stderr::Keep,
    );
    form_group(&mut Conn::open(node.kafka), "json-group");
    // Closing stdin stops the server; its log is complete once it exits.
    node.close_stdin();
    let (status, logs) = node.exit();
    assert!(status.success(), "{status}");
    let events: Vec<serde_json::Value> = logs
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l:?}\n{logs}")))
        .collect();
    let message = |e: &serde_json::Value| e["fields"]["message"].as_str().unwrap_or("").to_owned();
    let rebalance = events
        .iter()
        .find(|e| message(e) == "rebalance completed" && e["fields"]["group_id"] == "json-group")
        .unwrap_or_else(|| panic!("no rebalance event in\n{logs}"));
    assert_eq!(rebalance["target"], "group_coordinator");
    assert_eq!(rebalance["level"], "INFO");
    assert_eq!(rebalance["fields"]["generation_id"], 1);
    // The server's own lines (the crate's `log` helpers) are JSON too.
    assert!(
        events.iter().any(|e| e["target"] == "group_server" && message(e).starts_with("loaded")),
        "{logs}"
    );
    assert!(events.iter().any(|e| message(e) == "stopped"), "{logs}");
}
