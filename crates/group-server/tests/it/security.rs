//! TLS and SASL on the wire: SSL with and without client certificates, SASL_PLAINTEXT
//! and SASL_SSL with PLAIN and SCRAM-SHA-512 (KIP-152 framing and raw v0 tokens), the
//! failed-authentication delay, what is refused before authentication, and the
//! principal group requests then run as (seen in the request log).

use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use bytes::Bytes;
use group_server::{GroupServer, ServerConfig, ServerError};
use hmac::{KeyInit, Mac};
use kafka_protocol::messages::{
    ApiKey, ApiVersionsRequest, ApiVersionsResponse, JoinGroupResponse, SaslAuthenticateRequest,
    SaslAuthenticateResponse, SaslHandshakeRequest, SaslHandshakeResponse,
};
use rstest::rstest;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use sha2::{Digest, Sha512};

use crate::certs::{CLIENT_PRINCIPAL, Certs, arg};
use crate::client::{Conn, IN_MEMORY, join, s};

const PASSWORD: &str = "alice-secret";

/// A test's files (certificates, users, request log), removed with it.
struct Setup {
    certs: Certs,
    users: PathBuf,
    log: PathBuf,
}

impl Setup {
    fn new(test: &str) -> Setup {
        let certs = Certs::new(test);
        let users = certs.path("users.txt");
        let add = ["add", "--file", arg(&users), "--user", "alice", "--iterations", "4096"];
        group_server::users_command(add, &mut format!("{PASSWORD}\n").as_bytes()).expect("users add");
        let log = certs.path("requests.jsonl");
        Setup { certs, users, log }
    }

    /// A server with the base test settings, the request log, and `extra` flags.
    fn server(&self, extra: &[&str]) -> GroupServer {
        GroupServer::start(&self.config(extra)).expect("server starts")
    }

    fn config(&self, extra: &[&str]) -> ServerConfig {
        let mut args = IN_MEMORY.to_vec();
        args.extend(["--request-log", arg(&self.log), "--failed-authentication-delay-ms", "300"]);
        args.extend_from_slice(extra);
        ServerConfig::from_args(args).expect("config")
    }

    fn tls_flags(&self) -> Vec<&str> {
        vec!["--tls-cert", arg(&self.certs.server_cert), "--tls-key", arg(&self.certs.server_key)]
    }

    fn sasl_flags(&self, mechanisms: &'static str) -> Vec<&str> {
        vec!["--sasl-mechanisms", mechanisms, "--sasl-users", arg(&self.users)]
    }

    /// A TLS client trusting the test CA, with the client certificate if asked.
    fn tls(&self, addr: SocketAddr, with_certificate: bool) -> Conn {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_file_iter(&self.certs.ca).expect("ca") {
            roots.add(cert.expect("ca cert")).expect("root");
        }
        let builder = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("versions")
            .with_root_certificates(roots);
        let config = if with_certificate {
            let chain: Vec<_> = CertificateDer::pem_file_iter(&self.certs.client_cert)
                .expect("client cert")
                .collect::<Result<_, _>>()
                .expect("client cert");
            let key = PrivateKeyDer::from_pem_file(&self.certs.client_key).expect("client key");
            builder.with_client_auth_cert(chain, key).expect("client auth")
        } else {
            builder.with_no_client_auth()
        };
        let tcp = TcpStream::connect(addr).expect("connect");
        tcp.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
        let name = ServerName::try_from("localhost").expect("name");
        let tls = rustls::ClientConnection::new(Arc::new(config), name).expect("client");
        Conn::wrap(Box::new(rustls::StreamOwned::new(tls, tcp)))
    }

    /// True when the request log holds no request at all.
    fn logged_nothing(&self) -> bool {
        std::fs::read_to_string(&self.log).unwrap_or_default().trim().is_empty()
    }

    /// The principal the request log shows for `api`, once it has a line for it.
    fn logged_principal(&self, api: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let text = std::fs::read_to_string(&self.log).unwrap_or_default();
            let needle = format!("\"api\":\"{api}\"");
            if let Some(line) = text.lines().find(|l| l.contains(&needle)) {
                let value: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
                return value["principal"].as_str().expect("a principal").to_owned();
            }
            assert!(Instant::now() < deadline, "no {api} line in the request log:\n{text}");
            std::thread::yield_now();
        }
    }
}

/// A consumer's JoinGroup round (MEMBER_ID_REQUIRED, then the join): the group works.
fn join_group(conn: &mut Conn) {
    let first: JoinGroupResponse = conn.call(ApiKey::JoinGroup, 5, &join("g", ""));
    assert_eq!(first.error_code, 79, "MEMBER_ID_REQUIRED");
    let joined: JoinGroupResponse = conn.call(ApiKey::JoinGroup, 5, &join("g", first.member_id.as_str()));
    assert_eq!((joined.error_code, joined.generation_id), (0, 1));
}

fn api_versions(conn: &mut Conn) -> ApiVersionsResponse {
    conn.call(ApiKey::ApiVersions, 3, &ApiVersionsRequest::default())
}

fn handshake(conn: &mut Conn, version: i16, mechanism: &str) -> SaslHandshakeResponse {
    conn.call(ApiKey::SaslHandshake, version, &SaslHandshakeRequest::default().with_mechanism(s(mechanism)))
}

fn authenticate(conn: &mut Conn, token: &[u8]) -> SaslAuthenticateResponse {
    let request = SaslAuthenticateRequest::default().with_auth_bytes(Bytes::copy_from_slice(token));
    conn.call(ApiKey::SaslAuthenticate, 2, &request)
}

/// How the SASL tokens travel.
#[derive(Debug, Clone, Copy)]
enum Framing {
    /// SaslHandshake v1, then SaslAuthenticate v2 (KIP-152).
    Kip152,
    /// SaslHandshake v0, then raw length-prefixed tokens.
    Raw,
}

/// One token exchange: the server's answer, or its error code and message.
fn exchange(conn: &mut Conn, framing: Framing, token: &[u8]) -> Result<Vec<u8>, (i16, Option<String>)> {
    match framing {
        Framing::Kip152 => {
            let resp = authenticate(conn, token);
            if resp.error_code == 0 {
                assert_eq!(resp.session_lifetime_ms, 0, "no re-authentication");
                Ok(resp.auth_bytes.to_vec())
            } else {
                Err((resp.error_code, resp.error_message.map(|m| m.as_str().to_owned())))
            }
        }
        Framing::Raw => {
            conn.send_raw(token);
            conn.recv_frame().ok_or((-1, None))
        }
    }
}

/// The client side of SCRAM-SHA-512 (RFC 5802), checking the server's signature.
fn scram_login(
    conn: &mut Conn,
    framing: Framing,
    user: &str,
    password: &str,
) -> Result<(), (i16, Option<String>)> {
    let client_nonce = "fyko+d2lbbFgONRv9qkxdawL";
    let bare = format!("n={user},r={client_nonce}");
    let server_first = exchange(conn, framing, format!("n,,{bare}").as_bytes())?;
    let server_first = String::from_utf8(server_first).expect("UTF-8");
    let mut nonce = "";
    let mut salt = Vec::new();
    let mut iterations = 0;
    for part in server_first.split(',') {
        match part.split_at(2) {
            ("r=", v) => nonce = v,
            ("s=", v) => salt = B64.decode(v).expect("salt"),
            ("i=", v) => iterations = v.parse().expect("iterations"),
            _ => {}
        }
    }
    assert!(nonce.starts_with(client_nonce) && nonce.len() > client_nonce.len(), "{server_first}");
    let mut salted = [0u8; 64];
    pbkdf2::pbkdf2_hmac::<Sha512>(password.as_bytes(), &salt, iterations, &mut salted);
    let hmac = |key: &[u8], data: &[u8]| {
        let mut mac = <hmac::Hmac<Sha512> as KeyInit>::new_from_slice(key).expect("any key length");
        mac.update(data);
        mac.finalize().into_bytes().to_vec()
    };
    let client_key = hmac(&salted, b"Client Key");
    let stored_key = Sha512::digest(&client_key);
    let without_proof = format!("c=biws,r={nonce}");
    let auth_message = format!("{bare},{server_first},{without_proof}");
    let signature = hmac(&stored_key, auth_message.as_bytes());
    let proof: Vec<u8> = client_key.iter().zip(&signature).map(|(k, s)| k ^ s).collect();
    let client_final = format!("{without_proof},p={}", B64.encode(proof));
    let server_final = exchange(conn, framing, client_final.as_bytes())?;
    let server_signature = hmac(&hmac(&salted, b"Server Key"), auth_message.as_bytes());
    assert_eq!(server_final, format!("v={}", B64.encode(server_signature)).into_bytes(), "server signature");
    Ok(())
}

/// Logs in with `mechanism` (PLAIN or SCRAM-SHA-512) after ApiVersions and the handshake.
fn login(
    conn: &mut Conn,
    framing: Framing,
    mechanism: &str,
    user: &str,
    password: &str,
) -> Result<(), (i16, Option<String>)> {
    assert_eq!(api_versions(conn).error_code, 0);
    let version = match framing {
        Framing::Kip152 => 1,
        Framing::Raw => 0,
    };
    let resp = handshake(conn, version, mechanism);
    assert_eq!(resp.error_code, 0, "handshake");
    match mechanism {
        "PLAIN" => exchange(conn, framing, format!("\0{user}\0{password}").as_bytes()).map(|token| {
            assert!(token.is_empty(), "PLAIN answers an empty token");
        }),
        _ => scram_login(conn, framing, user, password),
    }
}

/// Who a client over TLS is: anonymous, its certificate's subject when the server has
/// a client CA, or its SASL user, which wins over a certificate.
#[rstest]
#[case::anonymous("ssl-anonymous", false, None, "User:ANONYMOUS")]
#[case::client_certificate("ssl-client-cert", true, None, CLIENT_PRINCIPAL)]
#[case::sasl_ssl_plain("sasl-ssl-plain", false, Some("PLAIN"), "User:alice")]
#[case::sasl_ssl_scram("sasl-ssl-scram", false, Some("SCRAM-SHA-512"), "User:alice")]
#[case::sasl_over_a_client_certificate("sasl-ssl-client-cert", true, Some("PLAIN"), "User:alice")]
fn the_principal_over_tls(
    #[case] name: &str,
    #[case] client_cert: bool,
    #[case] sasl: Option<&str>,
    #[case] principal: &str,
) {
    let setup = Setup::new(name);
    let mut flags = setup.tls_flags();
    if client_cert {
        flags.extend(["--tls-client-ca", arg(&setup.certs.ca)]);
    }
    if sasl.is_some() {
        flags.extend(setup.sasl_flags("SCRAM-SHA-512,PLAIN"));
    }
    let server = setup.server(&flags);
    let mut conn = setup.tls(server.local_addr(), client_cert);
    if let Some(mechanism) = sasl {
        login(&mut conn, Framing::Kip152, mechanism, "alice", PASSWORD).expect("logs in");
    }
    assert_eq!(api_versions(&mut conn).error_code, 0);
    join_group(&mut conn);
    assert_eq!(setup.logged_principal("JoinGroup"), principal);
}

#[test]
fn ssl_with_a_client_ca_refuses_a_client_without_a_certificate() {
    let setup = Setup::new("ssl-no-client-cert");
    let mut flags = setup.tls_flags();
    flags.extend(["--tls-client-ca", arg(&setup.certs.ca)]);
    let server = setup.server(&flags);
    let mut conn = setup.tls(server.local_addr(), false);
    // TLS 1.3 finishes the client's side of the handshake before the server has judged
    // the (missing) certificate: the refusal shows on the first read.
    let mut frame = Vec::new();
    {
        use kafka_protocol::messages::RequestHeader;
        use kafka_protocol::protocol::Encodable;
        let mut body = bytes::BytesMut::new();
        RequestHeader::default()
            .with_request_api_key(ApiKey::ApiVersions as i16)
            .with_request_api_version(0)
            .with_correlation_id(1)
            .encode(&mut body, 1)
            .expect("header");
        frame.extend_from_slice(&u32::try_from(body.len()).expect("small").to_be_bytes());
        frame.extend_from_slice(&body);
    }
    let answered = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        conn.write_raw(&frame);
        conn.recv_frame()
    }));
    assert!(matches!(answered, Ok(None) | Err(_)), "a client without a certificate was answered");
    assert!(setup.logged_nothing());
}

#[rstest]
#[case::plain_kip152("PLAIN", Framing::Kip152)]
#[case::plain_raw_v0("PLAIN", Framing::Raw)]
#[case::scram_kip152("SCRAM-SHA-512", Framing::Kip152)]
#[case::scram_raw_v0("SCRAM-SHA-512", Framing::Raw)]
fn sasl_plaintext_logs_in_and_runs_requests_as_the_user(#[case] mechanism: &str, #[case] framing: Framing) {
    let setup = Setup::new(&format!("sasl-{mechanism}-{framing:?}"));
    let server = setup.server(&setup.sasl_flags("PLAIN,SCRAM-SHA-512"));
    let mut conn = Conn::open(server.local_addr());
    login(&mut conn, framing, mechanism, "alice", PASSWORD).expect("logs in");
    join_group(&mut conn);
    assert_eq!(setup.logged_principal("JoinGroup"), "User:alice");
    // A second exchange on an authenticated connection: KafkaApis' ILLEGAL_SASL_STATE.
    let again = authenticate(&mut conn, b"\0alice\0x");
    assert_eq!(again.error_code, 34);
    assert_eq!(handshake(&mut conn, 1, "PLAIN").error_code, 34);
}

const PLAIN_FAILED: &str = "Authentication failed: Invalid username or password";
const SCRAM_FAILED: &str = "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512";

#[rstest]
#[case::plain_wrong_password("PLAIN", "alice", "wrong", PLAIN_FAILED)]
#[case::plain_unknown_user("PLAIN", "mallory", PASSWORD, PLAIN_FAILED)]
#[case::scram_wrong_password("SCRAM-SHA-512", "alice", "wrong", SCRAM_FAILED)]
#[case::scram_unknown_user("SCRAM-SHA-512", "mallory", PASSWORD, SCRAM_FAILED)]
fn failed_logins_are_answered_then_closed(
    #[case] mechanism: &str,
    #[case] user: &str,
    #[case] password: &str,
    #[case] message: &str,
) {
    let setup = Setup::new(&format!("failed-{mechanism}-{user}-{password}"));
    let server = setup.server(&setup.sasl_flags("PLAIN,SCRAM-SHA-512"));
    let mut conn = Conn::open(server.local_addr());
    // When the answer comes (after the delay) is checked on the runtime's clock, in
    // `authenticate_tests`; here, what comes over a real socket.
    let err = login(&mut conn, Framing::Kip152, mechanism, user, password).expect_err("refused");
    assert_eq!(err, (58, Some(message.to_owned())), "SASL_AUTHENTICATION_FAILED");
    assert!(conn.is_closed(), "the connection stays open after a failed login");
}

#[test]
fn a_failed_raw_login_closes_the_connection() {
    let setup = Setup::new("failed-raw");
    let server = setup.server(&setup.sasl_flags("PLAIN"));
    let mut conn = Conn::open(server.local_addr());
    let err = login(&mut conn, Framing::Raw, "PLAIN", "alice", "wrong").expect_err("refused");
    assert_eq!(err, (-1, None), "a raw token exchange can only close");
}

#[rstest]
#[case::join_group(ApiKey::JoinGroup)]
#[case::metadata(ApiKey::Metadata)]
#[case::authenticate_before_handshake(ApiKey::SaslAuthenticate)]
fn requests_before_authentication_close_the_connection(#[case] api: ApiKey) {
    let setup = Setup::new(&format!("unauthenticated-{api:?}"));
    let server = setup.server(&setup.sasl_flags("PLAIN"));
    let mut conn = Conn::open(server.local_addr());
    assert_eq!(api_versions(&mut conn).error_code, 0);
    match api {
        ApiKey::JoinGroup => {
            conn.send(api, 5, &join("g", ""));
        }
        ApiKey::Metadata => {
            conn.send(api, 12, &kafka_protocol::messages::MetadataRequest::default());
        }
        _ => {
            conn.send(
                api,
                2,
                &SaslAuthenticateRequest::default().with_auth_bytes(Bytes::from_static(b"\0a\0b")),
            );
        }
    }
    assert!(conn.is_closed(), "{api:?} was answered before authentication");
    let log = std::fs::read_to_string(&setup.log).unwrap_or_default();
    assert!(!log.contains("JoinGroup"), "{log}");
}

#[test]
fn an_unsupported_mechanism_gets_the_enabled_list() {
    let setup = Setup::new("unsupported-mechanism");
    let server = setup.server(&setup.sasl_flags("SCRAM-SHA-512,PLAIN"));
    let mut conn = Conn::open(server.local_addr());
    let resp = handshake(&mut conn, 1, "SCRAM-SHA-256");
    assert_eq!(resp.error_code, 33, "UNSUPPORTED_SASL_MECHANISM");
    let offered: Vec<&str> = resp.mechanisms.iter().map(|m| m.as_str()).collect();
    assert_eq!(offered, ["SCRAM-SHA-512", "PLAIN"]);
    assert!(conn.is_closed());
}

#[test]
fn without_sasl_the_handshake_is_an_illegal_state() {
    let server = crate::client::server();
    let mut conn = Conn::open(server.local_addr());
    let resp = handshake(&mut conn, 1, "PLAIN");
    // KafkaApis.handleSaslHandshakeRequest on a PLAINTEXT listener.
    assert_eq!((resp.error_code, resp.mechanisms.len()), (34, 0));
    let resp = authenticate(&mut conn, b"\0a\0b");
    assert_eq!(resp.error_code, 34);
    // The connection goes on.
    assert_eq!(api_versions(&mut conn).error_code, 0);
}

#[test]
fn api_versions_advertises_the_sasl_apis() {
    let server = crate::client::server();
    let mut conn = Conn::open(server.local_addr());
    let keys: Vec<(i16, i16, i16)> =
        api_versions(&mut conn).api_keys.iter().map(|k| (k.api_key, k.min_version, k.max_version)).collect();
    assert!(keys.contains(&(17, 0, 1)), "SaslHandshake 0-1: {keys:?}");
    assert!(keys.contains(&(36, 0, 2)), "SaslAuthenticate 0-2: {keys:?}");
}

fn start_error(setup: &Setup, extra: &[&str]) -> ServerError {
    GroupServer::start(&setup.config(extra)).expect_err("does not start")
}

#[test]
fn bad_certificate_files_stop_the_server_at_startup() {
    let setup = Setup::new("bad-tls-files");
    let garbage = setup.certs.path("garbage.pem");
    std::fs::write(&garbage, "not a PEM file\n").expect("write");
    let missing = setup.certs.path("missing.pem");
    let cases: [(&Path, &Path, &str); 4] = [
        (&missing, &setup.certs.server_key, "cannot read certificates from"),
        (&garbage, &setup.certs.server_key, "no CERTIFICATE block"),
        (&setup.certs.server_cert, &garbage, "cannot read a private key from"),
        (&setup.certs.server_cert, &setup.certs.client_key, "do not make a TLS identity"),
    ];
    for (cert, key, expected) in cases {
        let err = start_error(&setup, &["--tls-cert", arg(cert), "--tls-key", arg(key)]);
        let ServerError::Tls(source) = &err else { panic!("{err:?}") };
        let message = source.to_string();
        assert!(message.contains(expected), "{message}");
    }
    let err = start_error(&setup, &[&setup.tls_flags()[..], &["--tls-client-ca", arg(&garbage)]].concat());
    assert!(matches!(&err, ServerError::Tls(m) if m.to_string().contains("garbage.pem")), "{err:?}");
}

#[test]
fn a_bad_users_file_stops_the_server_at_startup() {
    let setup = Setup::new("bad-users-file");
    std::fs::write(&setup.users, "# users\nalice SCRAM-SHA-512 4096\n").expect("write");
    let err = start_error(&setup, &setup.sasl_flags("PLAIN"));
    let message = err.to_string();
    assert!(matches!(err, ServerError::Users(_)), "{err:?}");
    assert!(message.contains("users.txt:2: expected 6 fields"), "{message}");
    std::fs::remove_file(&setup.users).expect("remove");
    let err = start_error(&setup, &setup.sasl_flags("PLAIN"));
    assert!(err.to_string().contains("cannot read the users file"), "{err}");
}

#[test]
fn a_stalled_tls_handshake_times_out_without_holding_up_other_clients() {
    let setup = Setup::new("tls-handshake-timeout");
    let mut flags = setup.tls_flags();
    flags.extend(["--request-read-timeout-ms", "500"]);
    let server = setup.server(&flags);
    // A client that connects and never says hello.
    let mut stalled = Conn::open(server.local_addr());
    // Meanwhile another client handshakes and is served: the handshake runs in the
    // connection's task, not in the accept loop.
    let mut other = setup.tls(server.local_addr(), false);
    assert_eq!(api_versions(&mut other).error_code, 0);
    // When it is given up (at the timeout) is checked on the runtime's clock, in
    // `authenticate_tests`.
    assert!(stalled.is_closed(), "a stalled handshake was never given up");
}

#[test]
fn a_large_frame_before_authentication_is_refused() {
    let setup = Setup::new("large-unauthenticated-frame");
    let server = setup.server(&setup.sasl_flags("PLAIN"));
    let mut conn = Conn::open(server.local_addr());
    // 600 KiB is within the frame limit (1 MiB) but over sasl.server.max.receive.size.
    conn.write_raw(&(600 * 1024u32).to_be_bytes());
    assert!(conn.is_closed(), "an unauthenticated client may send a 600 KiB frame");
}

#[test]
fn the_binary_manages_the_users_file() {
    let setup = Setup::new("binary-users");
    let binary = env!("CARGO_BIN_EXE_group-server");
    let file = setup.certs.path("binary-users.txt");
    let run = |args: &[&str], stdin: &str| {
        use std::io::Write;
        let mut child = std::process::Command::new(binary)
            .arg("users")
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("runs");
        // A command refused before it reads (a usage error) may have exited already: the
        // write then fails with a broken pipe, and the exit status says what happened.
        let _ = child.stdin.take().expect("stdin").write_all(stdin.as_bytes());
        child.wait_with_output().expect("ends")
    };
    let added = run(&["add", "--file", arg(&file), "--user", "bob", "--mechanism", "SCRAM-SHA-256"], "pw\n");
    assert!(added.status.success(), "{added:?}");
    let listed = run(&["list", "--file", arg(&file)], "");
    assert_eq!(String::from_utf8_lossy(&listed.stdout), "bob SCRAM-SHA-256\n");
    let no_password = run(&["add", "--file", arg(&file), "--user", "carol"], "");
    assert_eq!(no_password.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&no_password.stderr).contains("no password"), "{no_password:?}");
    let usage = run(&["add", "--user", "carol"], "pw\n");
    assert_eq!(usage.status.code(), Some(2), "{usage:?}");
    let help = run(&["--help"], "");
    assert!(help.status.success() && String::from_utf8_lossy(&help.stdout).contains("remove"), "{help:?}");
    let removed = run(&["remove", "--file", arg(&file), "--user", "bob"], "");
    assert!(removed.status.success(), "{removed:?}");
    assert_eq!(String::from_utf8_lossy(&run(&["list", "--file", arg(&file)], "").stdout), "");
}
