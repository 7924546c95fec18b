//! A minimal Kafka client over a blocking socket, built on `kafka-protocol`'s client side.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use group_server::{GroupServer, ServerConfig};
use kafka_protocol::messages::{ApiKey, RequestHeader, ResponseHeader};
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};

/// The flags of the tests' usual node: an ephemeral port, memory storage, topic t1 with
/// 3 partitions, no initial delay.
pub(crate) const IN_MEMORY: [&str; 7] =
    ["--listen", "127.0.0.1:0", "--memory", "--topic", "t1:3", "--initial-rebalance-delay-ms", "0"];

/// A server started with [`IN_MEMORY`].
pub(crate) fn server() -> GroupServer {
    server_with(|_| {})
}

/// A server like [`server`], with the configuration adjusted by `adjust` first.
pub(crate) fn server_with(adjust: impl FnOnce(&mut ServerConfig)) -> GroupServer {
    let mut config = ServerConfig::from_args(IN_MEMORY).expect("config");
    adjust(&mut config);
    GroupServer::start(&config).expect("server starts")
}

/// A byte stream a client speaks over: a socket, or TLS over one.
pub(crate) trait Stream: Read + Write + Send {}

impl<T: Read + Write + Send> Stream for T {}

pub(crate) struct Conn {
    stream: Box<dyn Stream>,
    next: i32,
}

impl Conn {
    pub(crate) fn open(addr: SocketAddr) -> Conn {
        Conn::on(TcpStream::connect(addr).expect("connect"))
    }

    /// A client on a connected socket (one bound to a chosen source address).
    pub(crate) fn on(stream: TcpStream) -> Conn {
        // A guard against a hung test, not a timing assertion.
        stream.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
        Conn::wrap(Box::new(stream))
    }

    /// A client over any stream (TLS); its read guard is the caller's.
    pub(crate) fn wrap(stream: Box<dyn Stream>) -> Conn {
        Conn { stream, next: 1 }
    }

    /// Sends a request; returns its correlation id.
    pub(crate) fn send<T: Encodable>(&mut self, api: ApiKey, version: i16, request: &T) -> i32 {
        let correlation_id = self.next;
        self.next += 1;
        let mut body = BytesMut::new();
        RequestHeader::default()
            .with_request_api_key(api as i16)
            .with_request_api_version(version)
            .with_correlation_id(correlation_id)
            .with_client_id(Some(StrBytes::from_static_str("it")))
            .encode(&mut body, api.request_header_version(version))
            .expect("header");
        request.encode(&mut body, version).expect("request encodes");
        self.send_raw(&body);
        correlation_id
    }

    /// Writes bytes as they are, without a length prefix.
    pub(crate) fn write_raw(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).expect("write");
    }

    pub(crate) fn send_raw(&mut self, frame: &[u8]) {
        let len = i32::try_from(frame.len()).expect("small frame");
        let mut out = len.to_be_bytes().to_vec();
        out.extend_from_slice(frame);
        self.stream.write_all(&out).expect("write");
    }

    /// Reads one response frame: (correlation id, body after the header).
    pub(crate) fn recv(&mut self, api: ApiKey, version: i16) -> (i32, Bytes) {
        let frame = self.recv_frame().expect("a response");
        let mut frame = Bytes::from(frame);
        let header =
            ResponseHeader::decode(&mut frame, api.response_header_version(version)).expect("header");
        (header.correlation_id, frame)
    }

    pub(crate) fn recv_frame(&mut self) -> Option<Vec<u8>> {
        let mut len = [0u8; 4];
        self.stream.read_exact(&mut len).ok()?;
        let mut frame = vec![0u8; usize::try_from(i32::from_be_bytes(len)).ok()?];
        self.stream.read_exact(&mut frame).ok()?;
        Some(frame)
    }

    pub(crate) fn call<T: Encodable, R: Decodable>(&mut self, api: ApiKey, version: i16, request: &T) -> R {
        let sent = self.send(api, version, request);
        let (got, mut body) = self.recv(api, version);
        assert_eq!(got, sent, "correlation id");
        R::decode(&mut body, version).expect("response decodes")
    }

    /// True when the server closed the connection (end of stream or reset); false when
    /// a frame came instead. Panics when nothing at all came within the read guard, so
    /// that a server that never closes fails the test rather than passing it slowly.
    pub(crate) fn is_closed(&mut self) -> bool {
        let mut len = [0u8; 4];
        match self.stream.read(&mut len[..1]) {
            Ok(0) => true,
            Ok(_) => false,
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                panic!("the connection was neither closed nor answered within the read guard")
            }
            Err(_) => true,
        }
    }
}

/// A consumer's JoinGroup for `group` (range, subscribed to t1), 10 s timeouts.
pub(crate) fn join(group: &str, member: &str) -> kafka_protocol::messages::JoinGroupRequest {
    use kafka_protocol::messages::{JoinGroupRequest, join_group_request::JoinGroupRequestProtocol};
    let protocol = JoinGroupRequestProtocol::default()
        .with_name(s("range"))
        .with_metadata(Bytes::from_static(&[0, 0, 0, 0, 0, 1, 0, 2, b't', b'1', 0xff, 0xff, 0xff, 0xff]));
    JoinGroupRequest::default()
        .with_group_id(s(group).into())
        .with_session_timeout_ms(10_000)
        .with_rebalance_timeout_ms(10_000)
        .with_member_id(s(member))
        .with_protocol_type(s("consumer"))
        .with_protocols(vec![protocol])
}

pub(crate) fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_owned())
}

/// A Produce of one record to partition 0 of `topic`, acknowledged by all replicas.
pub(crate) fn produce_one_record(topic: &str) -> kafka_protocol::messages::ProduceRequest {
    use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
    let records = PartitionProduceData::default().with_index(0).with_records(Some(Bytes::from_static(b"x")));
    let data = TopicProduceData::default().with_name(s(topic).into()).with_partition_data(vec![records]);
    kafka_protocol::messages::ProduceRequest::default().with_acks(-1).with_topic_data(vec![data])
}

/// A simple consumer's commit (no member, generation -1) of `offset` for t1-0
/// of `group`.
pub(crate) fn simple_commit(group: &str, offset: i64) -> kafka_protocol::messages::OffsetCommitRequest {
    use kafka_protocol::messages::offset_commit_request::{
        OffsetCommitRequestPartition, OffsetCommitRequestTopic,
    };
    kafka_protocol::messages::OffsetCommitRequest::default()
        .with_group_id(s(group).into())
        .with_generation_id_or_member_epoch(-1)
        .with_topics(vec![
            OffsetCommitRequestTopic::default()
                .with_name(s("t1").into())
                .with_partitions(vec![OffsetCommitRequestPartition::default().with_committed_offset(offset)]),
        ])
}
