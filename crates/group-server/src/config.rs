//! `ServerConfig` and the command line that builds it.

use std::net::SocketAddr;
use std::path::PathBuf;

use group_coordinator::CoordinatorConfig;

use crate::{ConnectionLimits, TopicSpec};

/// A bad command line or configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// `--topic` was not `NAME:PARTITIONS` with a legal name and 1..=100000 partitions.
    #[error("bad --topic {0:?}: expected NAME:PARTITIONS, e.g. orders:3")]
    BadTopic(String),
    /// A flag's value did not parse.
    #[error("bad value {value:?} for {flag}")]
    BadValue {
        /// The flag.
        flag: String,
        /// Its value.
        value: String,
    },
    /// A flag that needs a value came last.
    #[error("{0} needs a value")]
    MissingValue(String),
    /// An unknown flag or argument.
    #[error("unknown argument {0:?} (try --help)")]
    UnknownArgument(String),
    /// `--help` was asked for: the caller prints [`USAGE`].
    #[error("help requested")]
    Help,
}

/// Where committed offsets and group records live.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StorageMode {
    /// Durable, in a sled database in this directory.
    Sled(PathBuf),
    /// In memory: lost when the process exits.
    Memory,
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
    /// Log one line per connection to stderr (malformed requests are always logged).
    pub verbose: bool,
    /// Append a JSON line per served request to this file (for tests and debugging).
    pub request_log: Option<PathBuf>,
    /// The binary exits when its standard input closes: a test harness that dies cannot
    /// leave the server running.
    pub exit_on_stdin_close: bool,
}

impl Default for ServerConfig {
    fn default() -> ServerConfig {
        ServerConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], 9092)),
            advertise: None,
            topics: Vec::new(),
            storage: StorageMode::Sled(PathBuf::from("./data")),
            node_id: 0,
            coordinator: CoordinatorConfig::default(),
            limits: ConnectionLimits::default(),
            verbose: false,
            request_log: None,
            exit_on_stdin_close: false,
        }
    }
}

/// The `--help` text of the `group-server` binary.
pub const USAGE: &str = "\
group-server: a Kafka consumer group coordinator node (not a broker: it stores no records)

USAGE: group-server [OPTIONS]

OPTIONS:
  --listen ADDR                     address to listen on [default: 127.0.0.1:9092]
  --topic NAME:PARTITIONS           a topic to answer Metadata/ListOffsets/Fetch for (repeatable)
  --data-dir PATH                   sled storage directory [default: ./data]
  --memory                          keep offsets in memory only (no --data-dir)
  --initial-rebalance-delay-ms MS   group.initial.rebalance.delay.ms [default: 3000]
  --min-session-timeout-ms MS       group.min.session.timeout.ms [default: 6000]
  --max-session-timeout-ms MS       group.max.session.timeout.ms [default: 1800000]
  --max-frame-bytes N               largest request accepted [default: 1048576]
  --node-id N                       node id shown to clients [default: 0]
  --request-log PATH                append a JSON line per request to PATH
  --exit-on-stdin-close             exit when standard input closes (for test harnesses)
  -v, --verbose                     log connections to stderr
  -h, --help                        print this help
";

impl ServerConfig {
    /// Parses command-line arguments (without the program name).
    pub fn from_args<I, S>(args: I) -> Result<ServerConfig, ConfigError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut config = ServerConfig::default();
        let mut data_dir = None;
        let mut memory = false;
        let mut args = args.into_iter().map(Into::into);
        while let Some(arg) = args.next() {
            let (flag, inline) = match arg.split_once('=') {
                Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
                _ => (arg.clone(), None),
            };
            let mut value =
                || inline.clone().or_else(|| args.next()).ok_or(ConfigError::MissingValue(flag.clone()));
            match flag.as_str() {
                "--listen" => config.listen = parse(&flag, value()?)?,
                "--topic" => config.topics.push(value()?.parse()?),
                "--data-dir" => data_dir = Some(PathBuf::from(value()?)),
                "--memory" => memory = true,
                "--initial-rebalance-delay-ms" => {
                    config.coordinator.initial_rebalance_delay_ms = parse(&flag, value()?)?
                }
                "--min-session-timeout-ms" => {
                    config.coordinator.min_session_timeout_ms = parse(&flag, value()?)?
                }
                "--max-session-timeout-ms" => {
                    config.coordinator.max_session_timeout_ms = parse(&flag, value()?)?
                }
                "--max-frame-bytes" => config.limits.max_frame_bytes = parse(&flag, value()?)?,
                "--node-id" => config.node_id = parse(&flag, value()?)?,
                "--request-log" => config.request_log = Some(PathBuf::from(value()?)),
                "--exit-on-stdin-close" => config.exit_on_stdin_close = true,
                "-v" | "--verbose" => config.verbose = true,
                "-h" | "--help" => return Err(ConfigError::Help),
                _ => return Err(ConfigError::UnknownArgument(arg)),
            }
        }
        config.storage = match (memory, data_dir) {
            (true, Some(_)) => {
                return Err(ConfigError::BadValue {
                    flag: "--memory".into(),
                    value: "with --data-dir".into(),
                });
            }
            (true, None) => StorageMode::Memory,
            (false, Some(dir)) => StorageMode::Sled(dir),
            (false, None) => config.storage,
        };
        if config.limits.max_frame_bytes < 64 {
            return Err(ConfigError::BadValue {
                flag: "--max-frame-bytes".into(),
                value: config.limits.max_frame_bytes.to_string(),
            });
        }
        Ok(config)
    }
}

fn parse<T: std::str::FromStr>(flag: &str, value: String) -> Result<T, ConfigError> {
    value.parse().map_err(|_| ConfigError::BadValue { flag: flag.to_owned(), value })
}
