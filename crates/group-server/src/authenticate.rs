//! A connection's authentication, before it serves requests: the TLS handshake (with
//! the client certificate's principal) and the SASL exchange, as Kafka's
//! `SslTransportLayer` and `SaslServerAuthenticator` do them.
//!
//! Before SASL authentication only ApiVersions, SaslHandshake and SaslAuthenticate are
//! answered; anything else closes the connection with a log line. A v1 SaslHandshake
//! is followed by SaslAuthenticate requests (KIP-152); a v0 one by raw length-prefixed
//! SASL tokens without Kafka headers. A failed authentication is answered
//! SASL_AUTHENTICATION_FAILED `connection.failed.authentication.delay.ms` late, then the
//! connection is closed. Re-authentication (KIP-368) is not offered: a successful
//! SaslAuthenticate v1+ carries `session_lifetime_ms` 0.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use group_coordinator::Principal;
use kafka_protocol::messages::{self as kp, ApiKey};
use kafka_protocol::protocol::{StrBytes, decode_request_header_from_buffer};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

use crate::connection::Stop;
use crate::log::{log, warning};
use crate::node::{self, Node, Reply};
use crate::sasl::Users;
use crate::sasl::{Authenticator, SaslSettings, Step};
use crate::session::Session;
use crate::{ConnectionLimits, SecurityConfig, ServerError};

/// The largest frame read before authentication: Kafka's `sasl.server.max.receive.size`
/// default (`BrokerSecurityConfigs.DEFAULT_SASL_SERVER_MAX_RECEIVE_SIZE`), so that an
/// unauthenticated client cannot make the server buffer a full-size request.
const MAX_UNAUTHENTICATED_FRAME: usize = 512 * 1024;

/// How long a refused connection waits for the client to close it after the error.
const LINGER: Duration = Duration::from_secs(1);

/// SASL_AUTHENTICATION_FAILED.
const SASL_AUTHENTICATION_FAILED: i16 = 58;
/// UNSUPPORTED_SASL_MECHANISM.
const UNSUPPORTED_SASL_MECHANISM: i16 = 33;

/// How the listener secures its connections, built once at startup.
pub(crate) struct Security {
    /// TLS, when the listener is SSL or SASL_SSL.
    pub(crate) tls: Option<TlsAcceptor>,
    /// Client certificates are required (and give the principal without SASL).
    pub(crate) client_auth: bool,
    /// SASL, when the listener is SASL_PLAINTEXT or SASL_SSL.
    pub(crate) sasl: Option<Arc<SaslSettings>>,
    /// How late a failed authentication is answered.
    pub(crate) failed_delay: Duration,
}

impl std::fmt::Debug for Security {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Security")
            .field("tls", &self.tls.is_some())
            .field("client_auth", &self.client_auth)
            .field("sasl", &self.sasl.as_ref().map(|s| &s.mechanisms))
            .finish_non_exhaustive()
    }
}

impl Security {
    /// Reads what the settings name (certificates, key, users file), so that a bad
    /// file stops the server at startup with an error naming it.
    pub(crate) fn from_config(config: &SecurityConfig) -> Result<Security, ServerError> {
        let tls = config.tls.as_ref().map(crate::tls::acceptor).transpose()?;
        let client_auth = config.tls.as_ref().is_some_and(|t| t.client_ca.is_some());
        let sasl = match &config.sasl {
            Some(sasl) => {
                let users = Users::load(&sasl.users).map_err(ServerError::Users)?;
                if users.is_empty() {
                    warning!("the users file {} has no users: every login fails", sasl.users.display());
                }
                Some(Arc::new(SaslSettings { mechanisms: sasl.mechanisms.clone(), users }))
            }
            None => None,
        };
        Ok(Security { tls, client_auth, sasl, failed_delay: config.failed_authentication_delay })
    }
}

/// The TLS handshake, within `request.read.timeout`, and the principal of the client's
/// certificate (`User:ANONYMOUS` without one, as Kafka's `DefaultKafkaPrincipalBuilder`).
pub(crate) async fn tls(
    acceptor: &TlsAcceptor,
    stream: TcpStream,
    peer: SocketAddr,
    limits: &ConnectionLimits,
    security: &Security,
    mut shutdown: watch::Receiver<bool>,
    verbose: bool,
) -> Result<(TlsStream<TcpStream>, Principal), Stop> {
    let timeout = limits.request_read_timeout;
    let handshake = tokio::select! {
        biased;
        _ = shutdown.wait_for(|s| *s) => return Err(Stop::Done),
        handshake = tokio::time::timeout(timeout, acceptor.accept(stream)) => handshake,
    };
    let stream = match handshake {
        Ok(Ok(stream)) => stream,
        Ok(Err(e)) => return Err(Stop::Refused(format!("TLS handshake failed: {e}"))),
        Err(_) => {
            return Err(Stop::Refused(format!("TLS handshake not done within {} ms", timeout.as_millis())));
        }
    };
    let principal = if security.client_auth {
        let subject = stream
            .get_ref()
            .1
            .peer_certificates()
            .and_then(|chain| chain.first())
            .and_then(|leaf| crate::tls::certificate_principal(leaf));
        match subject {
            Some(name) => Principal::user(name),
            None => return Err(Stop::Refused("the client certificate's subject does not parse".into())),
        }
    } else {
        Principal::ANONYMOUS
    };
    if verbose {
        log!("{peer}: TLS handshake done, principal {principal}");
    }
    Ok((stream, principal))
}

/// Where the SASL exchange is.
enum Phase {
    /// Before SaslHandshake: ApiVersions or SaslHandshake.
    Start,
    /// After a v1 SaslHandshake: SaslAuthenticate requests carry the tokens.
    Framed(Authenticator),
    /// After a v0 SaslHandshake: the tokens come raw, length-prefixed.
    Raw(Authenticator),
}

/// Runs the SASL exchange on a connection; the authenticated session and whatever was
/// read past the last frame.
pub(crate) async fn sasl<S: AsyncRead + AsyncWrite + Unpin>(
    node: &Node,
    stream: &mut S,
    peer: SocketAddr,
    limits: &ConnectionLimits,
    security: &Security,
    mut shutdown: watch::Receiver<bool>,
    verbose: bool,
) -> Result<(Session, BytesMut), Stop> {
    let Some(settings) = &security.sasl else {
        return Ok((Session::new(peer, Principal::ANONYMOUS), BytesMut::new()));
    };
    let mut conn = Conn { stream, buf: BytesMut::new(), limits };
    let mut session = Session::new(peer, Principal::ANONYMOUS);
    let mut phase = Phase::Start;
    loop {
        let frame = tokio::select! {
            biased;
            _ = shutdown.wait_for(|s| *s) => return Err(Stop::Done),
            frame = conn.frame() => frame?,
        };
        let Some(frame) = frame else { return Err(Stop::Done) };
        if let Phase::Raw(auth) = &mut phase {
            // SaslServerAuthenticator.handleSaslToken without a Kafka header (v0).
            let mechanism = auth.mechanism();
            match auth.step(&frame) {
                Ok(Step::Continue(token)) => conn.write_token(&token).await?,
                Ok(Step::Done { user, token }) => {
                    conn.write_token(&token).await?;
                    let how = "raw tokens after SaslHandshake v0";
                    return Ok(done(session, user, mechanism, how, peer, verbose, conn.buf));
                }
                Err(failure) => {
                    fail(peer, mechanism.name(), &failure.user, &failure.reason, security.failed_delay).await;
                    // No response can carry an error without a header: Kafka closes.
                    return Err(Stop::Done);
                }
            }
            continue;
        }
        if frame.len() < 8 {
            return Err(Stop::Refused(format!(
                "frame of {} bytes is shorter than a request header",
                frame.len()
            )));
        }
        let api_key = i16::from_be_bytes([frame[0], frame[1]]);
        let version = i16::from_be_bytes([frame[2], frame[3]]);
        let api = ApiKey::try_from(api_key).ok();
        match (api, &mut phase) {
            (Some(ApiKey::ApiVersions), Phase::Start) => match node.handle(frame, &mut session) {
                Ok(Reply::Now(body)) => conn.write_frame(&body).await?,
                Ok(_) => return Err(Stop::Refused("ApiVersions did not answer at once".into())),
                Err(e) => return Err(Stop::Refused(format!("malformed request: {e}"))),
            },
            (Some(ApiKey::SaslHandshake), Phase::Start) => {
                let (correlation_id, req): (i32, kp::SaslHandshakeRequest) = decode(frame, api_key, version)?;
                let mechanism = req.mechanism.as_str();
                match Authenticator::new(settings, mechanism) {
                    Ok(auth) => {
                        let resp = kp::SaslHandshakeResponse::default()
                            .with_mechanisms(settings.mechanisms.iter().map(|m| sb(m.name())).collect());
                        conn.respond(correlation_id, ApiKey::SaslHandshake, version, &resp).await?;
                        phase = if version == 0 { Phase::Raw(auth) } else { Phase::Framed(auth) };
                    }
                    Err(offered) => {
                        // SaslServerAuthenticator.handleHandshakeRequest: answer, then close.
                        let resp = kp::SaslHandshakeResponse::default()
                            .with_error_code(UNSUPPORTED_SASL_MECHANISM)
                            .with_mechanisms(offered.into_iter().map(sb).collect());
                        conn.respond(correlation_id, ApiKey::SaslHandshake, version, &resp).await?;
                        conn.linger().await;
                        return Err(Stop::Refused(format!(
                            "unsupported SASL mechanism {mechanism:?} (enabled: {})",
                            mechanism_list(settings)
                        )));
                    }
                }
            }
            (Some(ApiKey::SaslAuthenticate), Phase::Framed(auth)) => {
                let (correlation_id, req): (i32, kp::SaslAuthenticateRequest) =
                    decode(frame, api_key, version)?;
                let mechanism = auth.mechanism();
                let reply = kp::SaslAuthenticateResponse::default();
                match auth.step(&req.auth_bytes) {
                    Ok(Step::Continue(token)) => {
                        let resp = reply.with_auth_bytes(Bytes::from(token));
                        conn.respond(correlation_id, ApiKey::SaslAuthenticate, version, &resp).await?;
                    }
                    Ok(Step::Done { user, token }) => {
                        // No re-authentication (KIP-368): a session lifetime of 0.
                        let resp = reply.with_auth_bytes(Bytes::from(token)).with_session_lifetime_ms(0);
                        conn.respond(correlation_id, ApiKey::SaslAuthenticate, version, &resp).await?;
                        let how = "SaslAuthenticate after SaslHandshake v1";
                        return Ok(done(session, user, mechanism, how, peer, verbose, conn.buf));
                    }
                    Err(failure) => {
                        fail(peer, mechanism.name(), &failure.user, &failure.reason, security.failed_delay)
                            .await;
                        let resp = reply
                            .with_error_code(SASL_AUTHENTICATION_FAILED)
                            .with_error_message(Some(sb(failure.message)));
                        conn.respond(correlation_id, ApiKey::SaslAuthenticate, version, &resp).await?;
                        conn.linger().await;
                        return Err(Stop::Done);
                    }
                }
            }
            _ => {
                let name = api.map_or_else(|| format!("api key {api_key}"), |a| format!("{a:?}"));
                let state = match phase {
                    Phase::Start => "before SASL authentication",
                    _ => "during the SASL exchange",
                };
                return Err(Stop::Refused(format!("{name} request {state} (the listener requires SASL)")));
            }
        }
    }
}

fn mechanism_list(settings: &SaslSettings) -> String {
    settings.mechanisms.iter().map(|m| m.name()).collect::<Vec<_>>().join(", ")
}

fn sb(value: impl Into<String>) -> StrBytes {
    StrBytes::from_string(value.into())
}

/// The session of an authenticated user.
fn done(
    mut session: Session,
    user: String,
    mechanism: crate::SaslMechanism,
    how: &str,
    peer: SocketAddr,
    verbose: bool,
    leftover: BytesMut,
) -> (Session, BytesMut) {
    if verbose {
        log!("{peer}: authenticated as User:{user} with {} ({how})", mechanism.name());
    }
    session.context.principal = Principal::user(user);
    (session, leftover)
}

/// Logs a failed authentication and waits `delay` before it is answered (Kafka's
/// `connection.failed.authentication.delay.ms`, which slows down password guessing).
async fn fail(peer: SocketAddr, mechanism: &str, user: &Option<String>, reason: &str, delay: Duration) {
    let user = user.as_deref().map_or_else(|| "an unnamed user".to_owned(), |u| format!("user {u:?}"));
    warning!("{peer}: failed authentication as {user} with {mechanism}: {reason}");
    tokio::time::sleep(delay).await;
}

/// A request header and body, schema-checked and decoded; its correlation id too.
fn decode<T: kafka_protocol::protocol::Decodable>(
    mut frame: Bytes,
    api_key: i16,
    version: i16,
) -> Result<(i32, T), Stop> {
    let refused = |e: String| Stop::Refused(format!("malformed request: {e}"));
    let (api, min, max) = node::SUPPORTED_APIS
        .iter()
        .copied()
        .find(|(k, _, _)| *k as i16 == api_key)
        .ok_or_else(|| refused(format!("api key {api_key}")))?;
    if version < min || version > max {
        return Err(refused(format!("{api:?} version {version} (advertised {min}-{max})")));
    }
    let header = decode_request_header_from_buffer(&mut frame).map_err(|e| refused(e.to_string()))?;
    let body = node::decode(&mut frame, api, version).map_err(|e| refused(e.to_string()))?;
    Ok((header.correlation_id, body))
}

/// The stream during authentication: one frame at a time, each answered before the
/// next is read (clients wait for every answer of the exchange).
struct Conn<'a, S> {
    stream: &'a mut S,
    buf: BytesMut,
    limits: &'a ConnectionLimits,
}

impl<S: AsyncRead + AsyncWrite + Unpin> Conn<'_, S> {
    /// The next frame; `None` at a clean end of stream. Waiting for one is bounded by
    /// `connections.max.idle.ms`, reading it once begun by `request.read.timeout`.
    async fn frame(&mut self) -> Result<Option<Bytes>, Stop> {
        let idle = self.limits.connections_max_idle;
        if self.buf.is_empty() {
            self.buf.reserve(512);
            match tokio::time::timeout(idle, self.stream.read_buf(&mut self.buf)).await {
                Ok(Ok(0)) => return Ok(None),
                Ok(Ok(_)) => {}
                Ok(Err(e)) => return Err(Stop::Io(e)),
                Err(_) => {
                    return Err(Stop::Refused(format!(
                        "idle for {} ms before authenticating (connections.max.idle.ms)",
                        idle.as_millis()
                    )));
                }
            }
        }
        let deadline = Instant::now() + self.limits.request_read_timeout;
        loop {
            if let Some(prefix) = self.buf.get(..4) {
                let len = i32::from_be_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]);
                let max = self.limits.max_frame_bytes.min(MAX_UNAUTHENTICATED_FRAME);
                let len = usize::try_from(len).ok().filter(|&l| l <= max).ok_or_else(|| {
                    Stop::Refused(format!(
                        "frame length {len} out of range before authentication (max {max})"
                    ))
                })?;
                if self.buf.len() >= 4 + len {
                    let mut frame = self.buf.split_to(4 + len);
                    let _ = frame.split_to(4);
                    return Ok(Some(frame.freeze()));
                }
                self.buf.reserve(4 + len - self.buf.len());
            } else {
                self.buf.reserve(64);
            }
            let read = tokio::time::timeout_at(deadline, self.stream.read_buf(&mut self.buf)).await;
            crate::connection::partial_read(read, self.buf.len(), self.limits)?;
        }
    }

    /// Waits (at most [`LINGER`]) for the client to close after a refusal, then ends
    /// the stream cleanly. Closing at once puts the error and the end of stream in one
    /// read on the client, and kafka-python then reports a lost connection rather than
    /// the error; whatever the client sends meanwhile is discarded.
    async fn linger(&mut self) {
        let mut sink = [0u8; 512];
        let _ = tokio::time::timeout(LINGER, async {
            while matches!(self.stream.read(&mut sink).await, Ok(n) if n > 0) {}
        })
        .await;
        let _ = self.stream.shutdown().await;
    }

    /// Writes one frame (length prefix included, as [`node::encode_frame`] makes
    /// them) and flushes it.
    async fn write_frame(&mut self, frame: &[u8]) -> Result<(), Stop> {
        self.stream.write_all(frame).await.map_err(Stop::Io)?;
        self.stream.flush().await.map_err(Stop::Io)
    }

    /// Writes a raw SASL token (v0: no Kafka header) as one length-prefixed frame.
    async fn write_token(&mut self, token: &[u8]) -> Result<(), Stop> {
        let len = u32::try_from(token.len()).unwrap_or(u32::MAX);
        let mut out = Vec::with_capacity(4 + token.len());
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(token);
        self.write_frame(&out).await
    }

    async fn respond<R: kafka_protocol::protocol::Encodable>(
        &mut self,
        correlation_id: i32,
        api: ApiKey,
        version: i16,
        response: &R,
    ) -> Result<(), Stop> {
        let body = node::encode_frame(correlation_id, api, version, response)
            .map_err(|e| Stop::Refused(e.to_string()))?;
        self.write_frame(&body).await
    }
}

#[cfg(test)]
#[path = "authenticate_tests.rs"]
mod tests;
