//! The failed-login delay on the runtime's clock, paused: the tests check when the
//! answer comes by the clock the delay is taken on, and never wait for it.

use std::sync::Arc;
use std::time::Duration;

use bytes::{Buf, Bytes, BytesMut};
use kafka_protocol::messages::{
    ApiKey, RequestHeader, ResponseHeader, SaslAuthenticateRequest, SaslAuthenticateResponse,
    SaslHandshakeRequest,
};
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio::sync::watch;
use tokio::time::Instant;

use super::{Security, sasl};
use crate::SaslMechanism;
use crate::connection::Stop;
use crate::sasl::{SaslSettings, Users};

const DELAY: Duration = Duration::from_secs(3);

/// A PLAIN listener with no users: every login fails.
fn security() -> Security {
    let sasl = SaslSettings { mechanisms: vec![SaslMechanism::Plain], users: Users::default() };
    Security { tls: None, client_auth: false, sasl: Some(Arc::new(sasl)), failed_delay: DELAY }
}

/// The server's half of a connection, authenticating on its own task.
fn serve(mut stream: DuplexStream) -> tokio::task::JoinHandle<Result<(), Stop>> {
    tokio::spawn(async move {
        let node = crate::test_samples::test_node(
            crate::CoordinatorService::open(&crate::ServerConfig {
                storage: crate::StorageMode::Memory,
                ..crate::ServerConfig::default()
            })
            .expect("memory coordinator"),
            Arc::new(group_coordinator::AllowAll),
            crate::share_session::DEFAULT_MAX_SHARE_SESSIONS,
        );
        let (_stop, shutdown) = watch::channel(false);
        let limits = crate::ConnectionLimits::default();
        let peer = "127.0.0.1:9".parse().expect("address");
        sasl(&node, &mut stream, peer, &limits, &security(), shutdown, false).await.map(|_| ())
    })
}

/// A length-prefixed request frame.
fn request<T: Encodable>(api: ApiKey, version: i16, body: &T) -> Vec<u8> {
    let mut frame = BytesMut::new();
    RequestHeader::default()
        .with_request_api_key(api as i16)
        .with_request_api_version(version)
        .with_correlation_id(1)
        .with_client_id(Some(StrBytes::from_static_str("test")))
        .encode(&mut frame, api.request_header_version(version))
        .expect("header encodes");
    body.encode(&mut frame, version).expect("body encodes");
    [&(frame.len() as u32).to_be_bytes()[..], &frame].concat()
}

/// One length-prefixed frame, or `None` at the end of the stream.
async fn frame(stream: &mut DuplexStream) -> Option<Bytes> {
    let mut len = [0; 4];
    stream.read_exact(&mut len).await.ok()?;
    let mut body = vec![0; u32::from_be_bytes(len) as usize];
    stream.read_exact(&mut body).await.ok()?;
    Some(Bytes::from(body))
}

/// The PLAIN token of `mallory`, whom no users file knows.
fn unknown_user() -> Bytes {
    Bytes::from_static(b"\0mallory\0secret")
}

#[tokio::test(start_paused = true)]
async fn a_failed_login_is_answered_after_the_delay_then_closed() {
    let (mut client, server) = tokio::io::duplex(1 << 16);
    let served = serve(server);
    let handshake = SaslHandshakeRequest::default().with_mechanism(StrBytes::from_static_str("PLAIN"));
    client.write_all(&request(ApiKey::SaslHandshake, 1, &handshake)).await.expect("sent");
    frame(&mut client).await.expect("the handshake is answered");

    let login = SaslAuthenticateRequest::default().with_auth_bytes(unknown_user());
    client.write_all(&request(ApiKey::SaslAuthenticate, 2, &login)).await.expect("sent");
    let sent = Instant::now();
    let early = tokio::time::timeout(DELAY - Duration::from_millis(1), frame(&mut client)).await;
    assert!(early.is_err(), "answered before the delay: {early:?}");
    let mut answer = frame(&mut client).await.expect("the login is answered");
    assert!(sent.elapsed() >= DELAY, "answered after {:?}", sent.elapsed());
    ResponseHeader::decode(&mut answer, ApiKey::SaslAuthenticate.response_header_version(2)).expect("header");
    let answer = SaslAuthenticateResponse::decode(&mut answer, 2).expect("body");
    assert_eq!(answer.error_code, 58, "SASL_AUTHENTICATION_FAILED");
    assert!(matches!(served.await.expect("no panic"), Err(Stop::Done)));
}

#[tokio::test(start_paused = true)]
async fn a_failed_raw_login_is_closed_after_the_delay() {
    let (mut client, server) = tokio::io::duplex(1 << 16);
    let served = serve(server);
    let handshake = SaslHandshakeRequest::default().with_mechanism(StrBytes::from_static_str("PLAIN"));
    client.write_all(&request(ApiKey::SaslHandshake, 0, &handshake)).await.expect("sent");
    frame(&mut client).await.expect("the handshake is answered");

    // After a v0 handshake the token comes raw, length-prefixed, without a header.
    let token = unknown_user();
    client.write_all(&[&(token.len() as u32).to_be_bytes()[..], token.chunk()].concat()).await.expect("sent");
    let sent = Instant::now();
    let result = served.await.expect("no panic");
    assert!(sent.elapsed() >= DELAY, "closed after {:?}", sent.elapsed());
    assert!(matches!(result, Err(Stop::Done)));
    assert_eq!(frame(&mut client).await, None, "a raw exchange can only close");
}

/// A client that connects and never says hello is given up at `request.read.timeout`,
/// by the runtime's clock.
#[tokio::test(start_paused = true)]
async fn a_stalled_tls_handshake_is_given_up_at_the_read_timeout() {
    let key = rcgen::KeyPair::generate().expect("key");
    let cert = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
        .expect("params")
        .self_signed(&key)
        .expect("certificate");
    let dir = std::env::temp_dir().join(format!("gs-tls-timeout-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory");
    let (cert_path, key_path) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&cert_path, cert.pem()).expect("certificate written");
    std::fs::write(&key_path, key.serialize_pem()).expect("key written");
    let acceptor = crate::tls::acceptor(&crate::TlsConfig::new(&cert_path, &key_path)).expect("an acceptor");
    std::fs::remove_dir_all(&dir).expect("removed");

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bound");
    let _stalled =
        tokio::net::TcpStream::connect(listener.local_addr().expect("address")).await.expect("connected");
    let (stream, peer) = listener.accept().await.expect("accepted");
    let limits =
        crate::ConnectionLimits { request_read_timeout: Duration::from_secs(30), ..Default::default() };
    let (_stop, shutdown) = watch::channel(false);
    let started = Instant::now();
    let result = super::tls(&acceptor, stream, peer, &limits, &security(), shutdown, false).await;
    assert!(started.elapsed() >= limits.request_read_timeout, "given up after {:?}", started.elapsed());
    match result {
        Err(Stop::Refused(why)) => assert_eq!(why, "TLS handshake not done within 30000 ms"),
        other => panic!("not refused: {:?}", other.map(|(_, principal)| principal)),
    }
}
