//! The security settings of a [`ServerConfig`](crate::ServerConfig): TLS, SASL and
//! ACLs, and how log lines are written.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

/// How the listener secures its connections and authorizes requests: Kafka's
/// listener security protocol is PLAINTEXT with neither `tls` nor `sasl`, SSL with
/// `tls` only, SASL_PLAINTEXT with `sasl` only, SASL_SSL with both.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SecurityConfig {
    /// TLS on the listener.
    pub tls: Option<TlsConfig>,
    /// SASL authentication of every connection.
    pub sasl: Option<SaslConfig>,
    /// The ACL file requests are authorized against; everything is allowed without one.
    pub acl_file: Option<PathBuf>,
    /// Principals (`User:admin`) allowed everything, Kafka's `super.users`.
    pub super_users: Vec<String>,
    /// How long a failed authentication is answered late (Kafka's
    /// `connection.failed.authentication.delay.ms`, default 100 ms).
    pub failed_authentication_delay: Duration,
}

impl Default for SecurityConfig {
    fn default() -> SecurityConfig {
        SecurityConfig {
            tls: None,
            sasl: None,
            acl_file: None,
            super_users: Vec::new(),
            failed_authentication_delay: Duration::from_millis(100),
        }
    }
}

/// The listener's certificate, key and optional client authorities, as PEM files.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TlsConfig {
    /// The certificate chain, leaf first.
    pub cert: PathBuf,
    /// The private key of the leaf.
    pub key: PathBuf,
    /// When set, every client must present a certificate chaining to one of these.
    pub client_ca: Option<PathBuf>,
}

impl TlsConfig {
    /// A listener with `cert` and `key` and no client certificates.
    pub fn new(cert: impl Into<PathBuf>, key: impl Into<PathBuf>) -> TlsConfig {
        TlsConfig { cert: cert.into(), key: key.into(), client_ca: None }
    }
}

/// SASL on the listener: the mechanisms offered and the users' credentials file.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SaslConfig {
    /// Offered in this order in the SaslHandshake answer.
    pub mechanisms: Vec<SaslMechanism>,
    /// The credentials file (`group-server users add` writes it).
    pub users: PathBuf,
}

impl SaslConfig {
    /// `mechanisms` for the users of the credentials file `users`.
    pub fn new(mechanisms: Vec<SaslMechanism>, users: impl Into<PathBuf>) -> SaslConfig {
        SaslConfig { mechanisms, users: users.into() }
    }
}

/// A SASL mechanism this node offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SaslMechanism {
    /// RFC 4616: the password itself, over the (TLS) connection.
    Plain,
    /// RFC 5802/7677 with SHA-256.
    ScramSha256,
    /// RFC 5802 with SHA-512.
    ScramSha512,
}

impl SaslMechanism {
    /// Every mechanism, in the order Kafka lists them.
    pub const ALL: [SaslMechanism; 3] =
        [SaslMechanism::Plain, SaslMechanism::ScramSha256, SaslMechanism::ScramSha512];

    /// The name clients ask for.
    pub fn name(self) -> &'static str {
        match self {
            SaslMechanism::Plain => "PLAIN",
            SaslMechanism::ScramSha256 => "SCRAM-SHA-256",
            SaslMechanism::ScramSha512 => "SCRAM-SHA-512",
        }
    }
}

impl FromStr for SaslMechanism {
    type Err = ();

    /// Kafka's names, case-sensitive as Kafka's are.
    fn from_str(name: &str) -> Result<SaslMechanism, ()> {
        SaslMechanism::ALL.into_iter().find(|m| m.name() == name).ok_or(())
    }
}

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum LogFormat {
    /// tracing-subscriber's human format.
    #[default]
    Human,
    /// One JSON object a line.
    Json,
}

impl fmt::Display for LogFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LogFormat::Human => "human",
            LogFormat::Json => "json",
        })
    }
}

impl FromStr for LogFormat {
    type Err = ();

    fn from_str(name: &str) -> Result<LogFormat, ()> {
        match name {
            n if n.eq_ignore_ascii_case("human") => Ok(LogFormat::Human),
            n if n.eq_ignore_ascii_case("json") => Ok(LogFormat::Json),
            _ => Err(()),
        }
    }
}
