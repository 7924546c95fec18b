//! Each connection limit cuts off (or holds back) only the offending connection, while
//! another connection carries on.
//!
//! The limits are set to fractions of a second so that the tests are quick; each test
//! waits for the server to act (a read that ends when the server closes, bounded by
//! the client's 30 s guard), never asserts how long it took.

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use group_server::GroupServer;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::Decodable;

use crate::client::{Conn, join, s, server_with, simple_commit};

fn serves(addr: SocketAddr) {
    let mut c = Conn::open(addr);
    let resp: ApiVersionsResponse = c.call(ApiKey::ApiVersions, 3, &ApiVersionsRequest::default());
    assert_eq!(resp.error_code, 0);
}

fn api_versions(c: &mut Conn) {
    let resp: ApiVersionsResponse = c.call(ApiKey::ApiVersions, 3, &ApiVersionsRequest::default());
    assert_eq!(resp.error_code, 0);
}

#[test]
fn max_connections_refuses_the_one_too_many() {
    let server = server_with(|c| c.limits.max_connections = 2);
    let mut a = Conn::open(server.local_addr());
    let mut b = Conn::open(server.local_addr());
    // Served, so admitted: both count.
    api_versions(&mut a);
    api_versions(&mut b);
    let mut c = Conn::open(server.local_addr());
    assert!(c.is_closed(), "a third connection is closed on accept");
    api_versions(&mut a);
    // Once one closes, a new one is admitted.
    drop(b);
    let admitted = (0..100).any(|_| {
        let mut d = Conn::open(server.local_addr());
        d.send(ApiKey::ApiVersions, 3, &ApiVersionsRequest::default());
        let answered = d.recv_frame().is_some();
        if !answered {
            std::thread::sleep(Duration::from_millis(20));
        }
        answered
    });
    assert!(admitted, "the freed slot was never given to a new connection");
}

/// A socket from `source` (any 127.0.0.0/8 address works on Linux loopback).
fn connect_from(source: [u8; 4], to: SocketAddr) -> TcpStream {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_io().build().expect("runtime");
    let stream = runtime.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().expect("socket");
        socket.bind(SocketAddr::from((source, 0))).expect("bind the source address");
        socket.connect(to).await.expect("connect")
    });
    let stream = stream.into_std().expect("std stream");
    stream.set_nonblocking(false).expect("blocking");
    stream
}

#[test]
fn max_connections_per_ip_refuses_only_that_address() {
    let server = server_with(|c| c.limits.max_connections_per_ip = 1);
    let addr = server.local_addr();
    let mut first = Conn::on(connect_from([127, 0, 0, 1], addr));
    api_versions(&mut first);
    let mut second = Conn::on(connect_from([127, 0, 0, 1], addr));
    assert!(second.is_closed(), "a second connection from 127.0.0.1 is refused");
    let mut other = Conn::on(connect_from([127, 0, 0, 2], addr));
    api_versions(&mut other);
    api_versions(&mut first);
}

fn state_of(c: &mut Conn, group: &str) -> String {
    let req = DescribeGroupsRequest::default().with_groups(vec![s(group).into()]);
    let resp: DescribeGroupsResponse = c.call(ApiKey::DescribeGroups, 5, &req);
    resp.groups[0].group_state.as_str().to_owned()
}

/// With one request in flight allowed, a connection whose JoinGroup is parked is not
/// read further: its next JoinGroup (of another group) reaches the coordinator only
/// once the first is answered. With two allowed it is read at once.
#[rstest::rstest]
#[case::one_in_flight(1, "Dead")]
#[case::two_in_flight(2, "CompletingRebalance")]
fn max_in_flight_holds_back_the_connection_not_the_others(#[case] limit: usize, #[case] second_group: &str) {
    let server: GroupServer = server_with(|c| c.limits.max_in_flight_per_connection = limit);
    let addr = server.local_addr();
    // A Stable member M of group g (JoinGroup v3: no member-id round trip).
    let mut m = Conn::open(addr);
    let joined: JoinGroupResponse = m.call(ApiKey::JoinGroup, 3, &join("g", ""));
    assert_eq!(joined.error_code, 0);
    let m_id = joined.member_id.clone();
    let sync = SyncGroupRequest::default()
        .with_group_id(s("g").into())
        .with_generation_id(joined.generation_id)
        .with_member_id(m_id.clone());
    let synced: SyncGroupResponse = m.call(ApiKey::SyncGroup, 3, &sync);
    assert_eq!(synced.error_code, 0);

    // N joins g (parked until M rejoins), then asks to join a new group h.
    let mut n = Conn::open(addr);
    let parked = n.send(ApiKey::JoinGroup, 3, &join("g", ""));
    let behind = n.send(ApiKey::JoinGroup, 3, &join("h", ""));
    let mut watcher = Conn::open(addr);
    let rebalancing = (0..1000).any(|_| state_of(&mut watcher, "g") == "PreparingRebalance");
    assert!(rebalancing, "N's JoinGroup never reached the coordinator");
    // A negative cannot be awaited: give the server ample time to read h's JoinGroup
    // if the limit let it.
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(state_of(&mut watcher, "h"), second_group);
    serves(addr);

    // M rejoins: N's JoinGroup is answered, and h's is read and answered after it.
    let rejoin: JoinGroupResponse = m.call(ApiKey::JoinGroup, 3, &join("g", m_id.as_str()));
    assert_eq!(rejoin.error_code, 0);
    let (cid, _) = n.recv(ApiKey::JoinGroup, 3);
    assert_eq!(cid, parked);
    let (cid, mut body) = n.recv(ApiKey::JoinGroup, 3);
    assert_eq!(cid, behind);
    let h = JoinGroupResponse::decode(&mut body, 3).expect("join response");
    assert_eq!((h.error_code, h.generation_id), (0, 1));
}

#[test]
fn an_idle_connection_is_closed_and_a_busy_one_is_not() {
    let server = server_with(|c| c.limits.connections_max_idle = Duration::from_millis(300));
    let addr = server.local_addr();
    let mut idle = Conn::open(addr);
    api_versions(&mut idle);
    let mut busy = Conn::open(addr);
    // Busy for three idle periods: each request resets its clock.
    for _ in 0..18 {
        api_versions(&mut busy);
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(idle.is_closed(), "the idle connection is closed");
    api_versions(&mut busy);
}

#[test]
fn a_trickling_request_is_cut_off() {
    let server = server_with(|c| c.limits.request_read_timeout = Duration::from_millis(300));
    let addr = server.local_addr();
    let mut slow = TcpStream::connect(addr).expect("connect");
    slow.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
    // Three bytes of a length prefix, then nothing.
    slow.write_all(&[0, 0, 0]).expect("write");
    let mut bystander = Conn::open(addr);
    api_versions(&mut bystander);
    let mut slow = Conn::on(slow);
    assert!(slow.is_closed(), "the trickling connection is closed");
    api_versions(&mut bystander);
}

/// `group.max.groups`: a request that would create one group too many is refused
/// GROUP_MAX_SIZE_REACHED (a JoinGroup, a simple consumer's commit), counted, while
/// the groups there are keep being served; a deleted group makes room.
#[test]
fn group_max_groups_refuses_the_group_too_many() {
    const GROUP_MAX_SIZE_REACHED: i16 = 81;
    let server = server_with(|c| {
        c.coordinator.max_groups = 2;
        c.metrics_listen = Some("127.0.0.1:0".parse().expect("address"));
    });
    let mut c = Conn::open(server.local_addr());
    let joined: JoinGroupResponse = c.call(ApiKey::JoinGroup, 3, &join("a", ""));
    assert_eq!(joined.error_code, 0);
    let committed: OffsetCommitResponse = c.call(ApiKey::OffsetCommit, 2, &simple_commit("b", 1));
    assert_eq!(committed.topics[0].partitions[0].error_code, 0);
    let refused: JoinGroupResponse = c.call(ApiKey::JoinGroup, 3, &join("c", ""));
    assert_eq!(refused.error_code, GROUP_MAX_SIZE_REACHED);
    let refused: OffsetCommitResponse = c.call(ApiKey::OffsetCommit, 2, &simple_commit("d", 1));
    assert_eq!(refused.topics[0].partitions[0].error_code, GROUP_MAX_SIZE_REACHED);
    // The groups there are still served.
    let again: OffsetCommitResponse = c.call(ApiKey::OffsetCommit, 2, &simple_commit("b", 1));
    assert_eq!(again.topics[0].partitions[0].error_code, 0);
    let metrics = crate::memory::scrape(server.metrics_addr().expect("metrics"));
    assert!(metrics.contains("kafka_group_groups_refused_total 2\n"), "{metrics}");
    // Deleting one makes room for another.
    let deleted: DeleteGroupsResponse = c.call(
        ApiKey::DeleteGroups,
        2,
        &DeleteGroupsRequest::default().with_groups_names(vec![s("b").into()]),
    );
    assert_eq!(deleted.results[0].error_code, 0);
    let joined: JoinGroupResponse = c.call(ApiKey::JoinGroup, 3, &join("c", ""));
    assert_eq!(joined.error_code, 0);
}
