//! One Kafka client connection: length-prefixed frames over a tokio TCP stream,
//! requests encoded with `kafka-protocol`'s client side, and pre-encoded
//! requests that are re-sent with only their correlation id patched.

use std::net::SocketAddr;
use std::time::Duration;

use bytes::BytesMut;
use kafka_protocol::messages::{
    ApiKey, ApiVersionsResponse, HeartbeatResponse, JoinGroupResponse, OffsetCommitResponse, RequestHeader,
    ResponseHeader, SyncGroupResponse,
};
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

use crate::LoadgenError;

/// The `client_id` every request carries.
const CLIENT_ID: &str = "group-loadgen";

/// Where the correlation id sits in a frame: after the 4-byte length, the
/// api key and the api version (the same in every request header version).
const CORRELATION_OFFSET: usize = 8;

/// No group API answer is anywhere near this; a bigger length means the
/// stream is out of step, and reading on would allocate garbage.
const MAX_RESPONSE_BYTES: usize = 64 << 20;

/// How long a TCP connect may take before it counts as refused.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// A request encoded once, header included, ready to be written again and
/// again; [`FrameWriter::send`] patches only its correlation id.
#[derive(Debug, Clone)]
pub struct PreparedRequest {
    api: ApiKey,
    version: i16,
    frame: Vec<u8>,
}

impl PreparedRequest {
    /// Encodes `request` at `version` behind the request header version that
    /// `api` and `version` call for.
    pub fn new<T: Encodable>(
        api: ApiKey,
        version: i16,
        request: &T,
    ) -> Result<PreparedRequest, LoadgenError> {
        let mut frame = vec![0u8; 4];
        RequestHeader::default()
            .with_request_api_key(api as i16)
            .with_request_api_version(version)
            .with_correlation_id(0)
            .with_client_id(Some(StrBytes::from_static_str(CLIENT_ID)))
            .encode(&mut frame, api.request_header_version(version))
            .map_err(|e| LoadgenError::Protocol(format!("encoding a {api:?} v{version} header: {e}")))?;
        request
            .encode(&mut frame, version)
            .map_err(|e| LoadgenError::Protocol(format!("encoding a {api:?} v{version} request: {e}")))?;
        let len = i32::try_from(frame.len() - 4)
            .map_err(|_| LoadgenError::Protocol(format!("a {api:?} request of {} bytes", frame.len())))?;
        frame[..4].copy_from_slice(&len.to_be_bytes());
        Ok(PreparedRequest { api, version, frame })
    }

    /// The API this request calls.
    pub fn api(&self) -> ApiKey {
        self.api
    }

    /// The version it is encoded at.
    pub fn version(&self) -> i16 {
        self.version
    }

    /// The whole frame, length prefix included.
    pub fn frame(&self) -> &[u8] {
        &self.frame
    }

    fn set_correlation_id(&mut self, id: i32) {
        self.frame[CORRELATION_OFFSET..CORRELATION_OFFSET + 4].copy_from_slice(&id.to_be_bytes());
    }

    /// The error code an answer body carries: its top-level one, or for
    /// OffsetCommit the first non-zero partition error (0 when all are 0).
    pub fn error_code(&self, mut body: &[u8]) -> Result<i16, LoadgenError> {
        let (api, v) = (self.api, self.version);
        let code = match api {
            ApiKey::Heartbeat => {
                HeartbeatResponse::decode(&mut body, v).map_err(decoding(api, v))?.error_code
            }
            ApiKey::JoinGroup => {
                JoinGroupResponse::decode(&mut body, v).map_err(decoding(api, v))?.error_code
            }
            ApiKey::SyncGroup => {
                SyncGroupResponse::decode(&mut body, v).map_err(decoding(api, v))?.error_code
            }
            ApiKey::ApiVersions => {
                ApiVersionsResponse::decode(&mut body, v).map_err(decoding(api, v))?.error_code
            }
            ApiKey::OffsetCommit => OffsetCommitResponse::decode(&mut body, v)
                .map_err(decoding(api, v))?
                .topics
                .iter()
                .flat_map(|t| &t.partitions)
                .map(|p| p.error_code)
                .find(|&c| c != 0)
                .unwrap_or(0),
            other => return Err(LoadgenError::Protocol(format!("no error-code reader for {other:?}"))),
        };
        Ok(code)
    }
}

/// `kafka-protocol` reports its errors as `anyhow::Error`; taking them through
/// `Display` keeps `anyhow` out of this crate's dependencies.
fn decoding<E: std::fmt::Display>(api: ApiKey, version: i16) -> impl Fn(E) -> LoadgenError {
    move |e| LoadgenError::Protocol(format!("decoding a {api:?} v{version} answer: {e}"))
}

/// The reading half of a [`Connection`].
#[derive(Debug)]
pub struct FrameReader {
    stream: BufReader<OwnedReadHalf>,
    buf: BytesMut,
}

/// The writing half of a [`Connection`]: it numbers the requests it sends.
#[derive(Debug)]
pub struct FrameWriter {
    stream: OwnedWriteHalf,
    next_correlation_id: i32,
}

/// What one answer said, as far as a load generator cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Answer {
    /// The correlation id of the request it answers.
    pub correlation_id: i32,
    /// Its error code (see [`PreparedRequest::error_code`]).
    pub error_code: i16,
}

/// A client connection to the server under test.
#[derive(Debug)]
pub struct Connection {
    reader: FrameReader,
    writer: FrameWriter,
}

impl Connection {
    /// Connects to `addr` (with Nagle's algorithm off: requests are small and
    /// latency is what is measured).
    pub async fn connect(addr: SocketAddr) -> Result<Connection, LoadgenError> {
        let connect_error = |reason: String| LoadgenError::Connect { addr, reason };
        let stream = tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(addr))
            .await
            .map_err(|_| connect_error(format!("no connection within {CONNECT_TIMEOUT:?}")))?
            .map_err(|e| connect_error(e.to_string()))?;
        stream.set_nodelay(true).map_err(|e| connect_error(e.to_string()))?;
        let (read, write) = stream.into_split();
        Ok(Connection::from_parts(
            FrameReader { stream: BufReader::new(read), buf: BytesMut::new() },
            FrameWriter { stream: write, next_correlation_id: 1 },
        ))
    }

    /// Splits the connection so that one task can write while another reads.
    pub fn into_parts(self) -> (FrameReader, FrameWriter) {
        (self.reader, self.writer)
    }

    /// Puts the halves of [`Connection::into_parts`] back together.
    pub fn from_parts(reader: FrameReader, writer: FrameWriter) -> Connection {
        Connection { reader, writer }
    }

    /// Sends a prepared request; returns the correlation id it went with.
    pub async fn send(&mut self, request: &mut PreparedRequest) -> Result<i32, LoadgenError> {
        self.writer.send(request).await
    }

    /// Reads the next answer, which must be to a request like `request`.
    pub async fn recv(&mut self, request: &PreparedRequest) -> Result<Answer, LoadgenError> {
        self.reader.recv(request).await
    }

    /// One request and its decoded answer, for set-up steps (not measured).
    pub async fn call<Req: Encodable, Resp: Decodable>(
        &mut self,
        api: ApiKey,
        version: i16,
        request: &Req,
    ) -> Result<Resp, LoadgenError> {
        let mut prepared = PreparedRequest::new(api, version, request)?;
        let sent = self.writer.send(&mut prepared).await?;
        let (got, mut body) = self.reader.recv_frame(&prepared).await?;
        if got != sent {
            return Err(LoadgenError::Protocol(format!("{api:?}: correlation id {got}, expected {sent}")));
        }
        Resp::decode(&mut body, version).map_err(decoding(api, version))
    }

    /// True if the server has closed this connection (or reset it), judged
    /// without sending anything: an idle connection is never written to.
    pub fn closed_by_peer(&self) -> bool {
        let mut byte = [0u8; 1];
        match self.reader.stream.get_ref().try_read(&mut byte) {
            Ok(0) => true,
            Ok(_) => false,
            Err(e) => e.kind() != std::io::ErrorKind::WouldBlock,
        }
    }
}

impl FrameWriter {
    /// The correlation id the next request will carry.
    pub fn next_correlation_id(&self) -> i32 {
        self.next_correlation_id
    }

    /// Patches the next correlation id into `request` and writes it.
    pub async fn send(&mut self, request: &mut PreparedRequest) -> Result<i32, LoadgenError> {
        let id = self.next_correlation_id;
        self.next_correlation_id = id.wrapping_add(1);
        request.set_correlation_id(id);
        self.stream
            .write_all(request.frame())
            .await
            .map_err(|e| LoadgenError::io("writing a request", &e))?;
        Ok(id)
    }
}

impl FrameReader {
    /// Reads one answer to a request like `request` and takes its error code.
    pub async fn recv(&mut self, request: &PreparedRequest) -> Result<Answer, LoadgenError> {
        let (correlation_id, body) = self.recv_frame(request).await?;
        Ok(Answer { correlation_id, error_code: request.error_code(body)? })
    }

    /// One frame: the correlation id of its header and the body behind it.
    async fn recv_frame(&mut self, request: &PreparedRequest) -> Result<(i32, &[u8]), LoadgenError> {
        let len = match self.stream.read_i32().await {
            Ok(len) => len,
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Err(LoadgenError::Closed),
            Err(e) => return Err(LoadgenError::io("reading an answer", &e)),
        };
        let len = usize::try_from(len)
            .ok()
            .filter(|&l| l <= MAX_RESPONSE_BYTES)
            .ok_or_else(|| LoadgenError::Protocol(format!("an answer frame of length {len}")))?;
        self.buf.resize(len, 0);
        self.stream.read_exact(&mut self.buf[..]).await.map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => LoadgenError::Closed,
            _ => LoadgenError::io("reading an answer", &e),
        })?;
        let mut body = &self.buf[..];
        let header_version = request.api.response_header_version(request.version);
        let header = ResponseHeader::decode(&mut body, header_version)
            .map_err(|e| LoadgenError::Protocol(format!("decoding an answer header: {e}")))?;
        Ok((header.correlation_id, body))
    }
}
