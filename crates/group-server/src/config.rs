//! `ServerConfig`, and the command line and configuration file that build it.
//!
//! Each setting is declared once, in `settings`: its flag, its property (Kafka's broker
//! property where Kafka has one), its help, its bounds and the field it fills. The flag
//! parser (`args`), the file reader (`file`), `--help` and the bounds checks (`value`) read
//! that table, so a value means the same and fails the same wherever it is given;
//! `validate` checks the settings that relate to each other.

mod args;
mod file;
mod layer;
mod security;
mod settings;
mod validate;
mod value;

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use group_coordinator::CoordinatorConfig;

pub use self::security::{LogFormat, SaslConfig, SaslMechanism, SecurityConfig, TlsConfig};
use crate::{ConnectionLimits, TopicSpec};
pub use group_offsets::IoCause;

/// A bad command line or configuration file, or a request for help or the version.
///
/// A value's error names the setting as the user wrote it (`--group-max-size` on the
/// command line, `group.max.size` in a file) and says what is expected; an error about a
/// line of the configuration file comes wrapped in [`ConfigError::InFile`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// `-h` or `--help`: not a failure. The caller prints the text to standard output and
    /// exits successfully.
    #[error("{0}")]
    Help(String),
    /// `-V` or `--version`: not a failure either; the text is `group-server <version>`.
    #[error("{0}")]
    Version(String),
    /// An argument that is no flag of the binary.
    #[error("unknown argument {argument:?}{}; try --help", did_you_mean(suggestion))]
    UnknownArgument {
        /// The argument as given.
        argument: String,
        /// The flag it is closest to, if one is close.
        suggestion: Option<String>,
    },
    /// A flag that needs a value was given none.
    #[error("{0} needs a value (try --help)")]
    MissingValue(String),
    /// Any other misuse of the command line (a flag given twice, a stray value, a value
    /// that is not UTF-8), in clap's words.
    #[error("{0}")]
    Usage(String),
    /// A topic that is not `NAME:PARTITIONS` with a legal name and 1..=100000 partitions.
    #[error(
        "bad topic {0:?}: expected NAME:PARTITIONS with a name of 1 to 249 letters, digits, '.', '_' \
         or '-' and 1 to 100000 partitions, e.g. orders:3"
    )]
    BadTopic(String),
    /// The same topic given twice.
    #[error("topic {0:?} is given twice: expected each topic once, with its number of partitions")]
    DuplicateTopic(String),
    /// A value that does not parse, or is out of range.
    #[error("bad value {value:?} for {setting}: expected {expected}")]
    BadValue {
        /// The flag or property, as given.
        setting: String,
        /// Its value.
        value: String,
        /// What it must be.
        expected: String,
    },
    /// Two settings that cannot hold together.
    #[error("{first} conflicts with {second}: expected {expected}")]
    Conflict {
        /// The first setting with its value (and where a file gave it).
        first: String,
        /// The second.
        second: String,
        /// What would make them agree.
        expected: String,
    },
    /// A listen address whose host name does not resolve.
    #[error(
        "cannot resolve {value:?} for {setting}: {reason}; expected HOST:PORT with an IP address \
         or a host name this machine resolves, e.g. 127.0.0.1:9092"
    )]
    Unresolved {
        /// The flag or property.
        setting: String,
        /// Its value.
        value: String,
        /// The resolver's answer.
        #[source]
        reason: IoCause,
    },
    /// A wildcard listen address (0.0.0.0 or ::) with no advertised address: clients would
    /// be told to connect to the wildcard, which reaches no remote host.
    #[error(
        "{setting} {listen} listens on every interface, an address clients cannot connect to: add \
         --advertise HOST:PORT (advertised.listeners=PLAINTEXT://HOST:PORT in a --config file) with \
         the address clients should use"
    )]
    WildcardWithoutAdvertise {
        /// The flag or property that set the address.
        setting: String,
        /// The address.
        listen: SocketAddr,
    },
    /// The configuration file cannot be read.
    #[error("cannot read the configuration file {}: {reason}", path.display())]
    ReadFile {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        reason: IoCause,
    },
    /// A property of the configuration file that this node does not know: a misspelt name
    /// must not fall back to a default unnoticed.
    #[error("{}:{line}: unknown property {property:?}{}", path.display(), did_you_mean(suggestion))]
    UnknownProperty {
        /// The file.
        path: PathBuf,
        /// The line, counted from 1.
        line: usize,
        /// The property as written.
        property: String,
        /// The known property it is closest to, if one is close.
        suggestion: Option<String>,
    },
    /// A property the configuration file gives twice (found in [`ConfigError::InFile`],
    /// on the second line).
    #[error("{property} is given again (first on line {first_line}): expected each property once")]
    DuplicateProperty {
        /// The property.
        property: String,
        /// The line that gave it first.
        first_line: usize,
    },
    /// An error in one line of the configuration file.
    #[error("{}:{line}: {error}", path.display())]
    InFile {
        /// The file.
        path: PathBuf,
        /// The line, counted from 1 (the first of a continued line).
        line: usize,
        /// What is wrong with it.
        error: Box<ConfigError>,
    },
}

fn did_you_mean(suggestion: &Option<String>) -> String {
    suggestion.as_ref().map(|s| format!(" (did you mean {s}?)")).unwrap_or_default()
}

/// Where committed offsets and group records live.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StorageMode {
    /// Durable, in a sled database in this directory.
    Sled(PathBuf),
    /// In memory: lost when the process exits.
    Memory,
    /// In etcd, as one node of a cluster (`--cluster`).
    Cluster(ClusterSettings),
}

/// How a cluster node reaches etcd (`--cluster --etcd ...`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterSettings {
    /// The etcd client endpoints.
    pub endpoints: Vec<String>,
    /// The prefix of every key of this cluster.
    pub prefix: String,
    /// The etcd lease's time to live, in seconds: how long a dead node's groups wait
    /// before another node takes them over.
    pub lease_ttl_secs: i64,
    /// Transactions of appends in flight to etcd at once; `None` leaves it to the
    /// etcd store (`group_storage_etcd::EtcdConfig::transactions_in_flight`).
    pub transactions_in_flight: Option<usize>,
}

impl ClusterSettings {
    /// The key prefix when none is given.
    pub const DEFAULT_PREFIX: &'static str = "/group-coordinator";
    /// The lease TTL when none is given.
    pub const DEFAULT_LEASE_TTL_SECS: i64 = 3;

    /// Settings for these endpoints, with the default prefix and lease.
    pub fn new(endpoints: Vec<String>) -> ClusterSettings {
        ClusterSettings {
            endpoints,
            prefix: Self::DEFAULT_PREFIX.to_owned(),
            lease_ttl_secs: Self::DEFAULT_LEASE_TTL_SECS,
            transactions_in_flight: None,
        }
    }
}

/// Everything the server needs to start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// The address to listen on; port 0 picks a free one (see `GroupServer::local_addr`).
    pub listen: SocketAddr,
    /// `advertised.listeners`: the `host:port` Metadata and FindCoordinator tell clients;
    /// `None` tells them the listen address (which must then not be a wildcard).
    pub advertise: Option<(String, u16)>,
    /// The topics Metadata, ListOffsets and Fetch know (every partition is empty).
    pub topics: Vec<TopicSpec>,
    /// Where offsets are stored.
    pub storage: StorageMode,
    /// This node's id in Metadata and FindCoordinator answers.
    pub node_id: i32,
    /// The coordinator's settings (Kafka's `group.*` and `offsets.*` broker settings).
    pub coordinator: CoordinatorConfig,
    /// Connection limits, the frame size limit among them.
    pub limits: ConnectionLimits,
    /// `offsets.topic.num.partitions`: the number of coordinator partitions the storage is
    /// opened with, groups spread over them by a hash of their id (default 50). It must not
    /// change for an existing data directory: the groups stored there would be looked for
    /// in the wrong partitions, so the sled storage refuses to open with another number.
    pub partitions: u32,
    /// Log one line per connection to stderr (malformed requests are always logged).
    pub verbose: bool,
    /// Append a JSON line per served request to this file (for tests and debugging).
    pub request_log: Option<PathBuf>,
    /// The binary exits when its standard input closes: a test harness that dies cannot
    /// leave the server running.
    pub exit_on_stdin_close: bool,
    /// What the configuration file set that this node knowingly ignores (Kafka broker
    /// properties such as `log.dirs`), one message each, for the caller to show: parsing
    /// prints nothing itself.
    pub warnings: Vec<String>,
    /// TLS, SASL and ACLs of the listener; all off by default.
    pub security: SecurityConfig,
    /// Where Prometheus scrapes `/metrics`; none by default.
    pub metrics_listen: Option<SocketAddr>,
    /// How log lines on stderr are written.
    pub log_format: LogFormat,
    /// `group.share.max.share.sessions`: the share sessions (ShareFetch) this node holds
    /// at most; one more is refused with SHARE_SESSION_LIMIT_REACHED (default 2000).
    pub max_share_sessions: usize,
}

impl Default for ServerConfig {
    fn default() -> ServerConfig {
        ServerConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], 9092)),
            advertise: None,
            topics: Vec::new(),
            storage: StorageMode::Sled(PathBuf::from("./data")),
            node_id: 0,
            // The server serves share groups by default (`group.coordinator.rebalance.protocols`).
            coordinator: CoordinatorConfig {
                share: group_coordinator::ShareGroupConfig { enabled: true, ..Default::default() },
                ..CoordinatorConfig::default()
            },
            limits: ConnectionLimits::default(),
            partitions: group_offsets::DEFAULT_COORDINATOR_PARTITIONS,
            verbose: false,
            request_log: None,
            exit_on_stdin_close: false,
            warnings: Vec::new(),
            security: SecurityConfig::default(),
            metrics_listen: None,
            log_format: LogFormat::Human,
            max_share_sessions: crate::share_session::DEFAULT_MAX_SHARE_SESSIONS,
        }
    }
}

impl ServerConfig {
    /// Parses command-line arguments (without the program name), reading the `--config`
    /// file they name, if any.
    ///
    /// Flags override the file's properties whatever their order; `--topic` replaces the
    /// file's whole `topics` list, and `--memory` or `--data-dir` the file's storage choice.
    /// `--help` and `--version` come back as [`ConfigError::Help`] and
    /// [`ConfigError::Version`], whose text the caller prints.
    ///
    /// ```
    /// use group_server::{ConfigError, ServerConfig};
    ///
    /// let config = ServerConfig::from_args(["--listen=0.0.0.0:9092", "--advertise", "node1.example:9092"])?;
    /// assert_eq!(config.advertise, Some(("node1.example".to_owned(), 9092)));
    /// assert!(matches!(
    ///     ServerConfig::from_args(["--group-max-size", "0"]),
    ///     Err(ConfigError::BadValue { .. })
    /// ));
    /// # Ok::<(), ConfigError>(())
    /// ```
    pub fn from_args<I, S>(args: I) -> Result<ServerConfig, ConfigError>
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        let args = args::Args::parse(args.into_iter().map(Into::into))?;
        let parsed = match &args.config {
            Some(path) => file::read(Path::new(path))?,
            None => file::Parsed::default(),
        };
        let layer = parsed.layer.overridden_by(args.layer);
        let mut config = validate::resolve(&layer)?;
        config.verbose = args.verbose;
        config.exit_on_stdin_close = args.exit_on_stdin_close;
        config.warnings = parsed.warnings;
        Ok(config)
    }

    /// The `--help` text of the `group-server` binary: every flag, with its property
    /// name (Kafka's where Kafka has one) and its default.
    pub fn usage() -> String {
        match ServerConfig::from_args(["--help"]) {
            Err(ConfigError::Help(text)) => text,
            _ => String::new(),
        }
    }

    /// Every setting as a Markdown table: its flag, its property (marked when it is
    /// Kafka's), its default, the integers it accepts and what it sets. It comes from the
    /// same declarations as `--help` and the parsers, for documentation to quote.
    ///
    /// ```
    /// let reference = group_server::ServerConfig::settings_reference();
    /// assert!(reference.contains(
    ///     "| `--group-max-size N` | `group.max.size` (Kafka) | `2147483647` | 1 to 2147483647 |"
    /// ));
    /// ```
    pub fn settings_reference() -> String {
        settings::reference()
    }
}
