//! `LoadgenError`: everything that can stop a scenario or the whole run.
//!
//! Kafka error codes in answers are not errors here: a scenario counts them
//! and reports them. These are failures of the run itself.

use std::net::SocketAddr;
use std::path::PathBuf;

/// A failure of the load generator or of the server it drives.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LoadgenError {
    /// A command-line flag's value did not parse or is out of range.
    #[error("bad value {value:?} for {flag}: {reason}")]
    BadValue {
        /// The flag.
        flag: String,
        /// Its value.
        value: String,
        /// What was expected.
        reason: String,
    },
    /// A flag that needs a value came last.
    #[error("{0} needs a value")]
    MissingValue(String),
    /// An unknown flag or argument.
    #[error("unknown argument {0:?} (try --help)")]
    UnknownArgument(String),
    /// Neither `--server` nor `--connect` was given, or both were.
    #[error("give either --server PATH (spawn the server) or --connect ADDR [--server-pid PID]")]
    NoServer,
    /// `--help` was asked for: the caller prints [`crate::USAGE`].
    #[error("help requested")]
    Help,
    /// The server binary could not be started.
    #[error("cannot start the server {path:?}: {reason}")]
    Spawn {
        /// The binary.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The server started but never said where it listens.
    #[error("the server did not start: {0}")]
    ServerStartup(String),
    /// An etcd member could not be started, or the cluster did not answer in time.
    #[error("etcd did not start: {0}")]
    EtcdStartup(String),
    /// A TCP connection to the server failed.
    #[error("cannot connect to {addr}: {reason}")]
    Connect {
        /// The server's address.
        addr: SocketAddr,
        /// Why (refused, timed out, too many open files...).
        reason: String,
    },
    /// The server closed a connection.
    #[error("the server closed the connection")]
    Closed,
    /// Reading or writing a socket or a file failed.
    #[error("{what}: {reason}")]
    Io {
        /// What was being done.
        what: String,
        /// The I/O error.
        reason: String,
    },
    /// A frame could not be encoded or decoded, or answers came out of order.
    #[error("protocol error: {0}")]
    Protocol(String),
    /// A request got no answer in time.
    #[error("no answer within {0}")]
    Timeout(String),
    /// A group could not be formed (set-up, not measurement).
    #[error("group {group}: {reason}")]
    Group {
        /// The group id.
        group: String,
        /// What went wrong.
        reason: String,
    },
    /// The async runtime could not be built, or a task died.
    #[error("runtime: {0}")]
    Runtime(String),
}

impl LoadgenError {
    pub(crate) fn io(what: &str, e: &std::io::Error) -> LoadgenError {
        LoadgenError::Io { what: what.to_owned(), reason: e.to_string() }
    }

    /// A short name for counting errors of one kind together (no addresses,
    /// no ids): the key of [`crate::ScenarioReport::error_kinds`].
    pub fn kind(&self) -> String {
        match self {
            LoadgenError::Connect { reason, .. } => format!("connect: {reason}"),
            LoadgenError::Closed => "connection closed by the server".to_owned(),
            LoadgenError::Io { reason, .. } => format!("i/o: {reason}"),
            LoadgenError::Protocol(_) => "protocol error".to_owned(),
            LoadgenError::Timeout(_) => "no answer in time".to_owned(),
            LoadgenError::Group { .. } => "group set-up failed".to_owned(),
            other => other.to_string(),
        }
    }
}
