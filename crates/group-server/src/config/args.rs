//! The command line, parsed by clap into raw values; `validate` checks them, so that a
//! value is judged the same way whether it came from a flag or from a file.

use std::ffi::OsString;

use clap::Parser;
use clap::error::{ContextKind, ContextValue, ErrorKind};

use super::ConfigError;
use super::settings::{Key, Layer, Origin, Raw, describe};

const ABOUT: &str =
    "group-server: a Kafka consumer group coordinator node (not a broker: it stores no records)";

const AFTER_HELP: &str = "\
Every setting can also be given in a --config file of Java properties, under the name in
brackets (Kafka's broker property where Kafka has one); flags override the file, whatever
their order. -v and --exit-on-stdin-close are flags only. For example:

  listeners=PLAINTEXT://0.0.0.0:9092
  advertised.listeners=PLAINTEXT://node1.example.com:9092
  node.id=1
  topics=orders:3,payments:1
  data.dir=/var/lib/group-server
  group.initial.rebalance.delay.ms=0

SASL users are kept in the --sasl-users file, salted: `group-server users add --file PATH
--user NAME` reads the password from standard input (see `group-server users --help`).";

/// The flags. Values stay strings here: numbers and addresses are parsed by `validate`,
/// whose errors say what is expected, for a file's values as for these.
#[derive(Debug, Parser)]
#[command(name = "group-server", version, about = ABOUT, after_help = AFTER_HELP)]
pub(super) struct Args {
    /// Read settings from this Java-properties file (Kafka's property names); flags
    /// override it.
    #[arg(long, value_name = "FILE")]
    pub(super) config: Option<String>,
    #[arg(long, value_name = "HOST:PORT", help = describe(Key::Listen))]
    listen: Option<String>,
    #[arg(long, value_name = "HOST:PORT", help = describe(Key::Advertise))]
    advertise: Option<String>,
    #[arg(long = "topic", value_name = "NAME:PARTITIONS", help = describe(Key::Topics))]
    topics: Vec<String>,
    #[arg(long, value_name = "PATH", help = describe(Key::DataDir))]
    data_dir: Option<String>,
    #[arg(long, help = describe(Key::Memory))]
    memory: bool,
    #[arg(long, value_name = "N", allow_negative_numbers = true, help = describe(Key::NodeId))]
    node_id: Option<String>,
    #[arg(long, value_name = "PATH", help = describe(Key::RequestLog))]
    request_log: Option<String>,
    #[arg(long, value_name = "MS", allow_negative_numbers = true,
          help = describe(Key::InitialRebalanceDelayMs))]
    initial_rebalance_delay_ms: Option<String>,
    #[arg(long, value_name = "MS", allow_negative_numbers = true,
          help = describe(Key::MinSessionTimeoutMs))]
    min_session_timeout_ms: Option<String>,
    #[arg(long, value_name = "MS", allow_negative_numbers = true,
          help = describe(Key::MaxSessionTimeoutMs))]
    max_session_timeout_ms: Option<String>,
    #[arg(long, value_name = "N", allow_negative_numbers = true, help = describe(Key::GroupMaxSize))]
    group_max_size: Option<String>,
    #[arg(long, value_name = "LIST", help = describe(Key::RebalanceProtocols))]
    rebalance_protocols: Option<String>,
    #[arg(long, value_name = "MS", allow_negative_numbers = true,
          help = describe(Key::ConsumerSessionTimeoutMs))]
    consumer_session_timeout_ms: Option<String>,
    #[arg(long, value_name = "MS", allow_negative_numbers = true,
          help = describe(Key::ConsumerMinSessionTimeoutMs))]
    consumer_min_session_timeout_ms: Option<String>,
    #[arg(long, value_name = "MS", allow_negative_numbers = true,
          help = describe(Key::ConsumerMaxSessionTimeoutMs))]
    consumer_max_session_timeout_ms: Option<String>,
    #[arg(long, value_name = "MS", allow_negative_numbers = true,
          help = describe(Key::ConsumerHeartbeatIntervalMs))]
    consumer_heartbeat_interval_ms: Option<String>,
    #[arg(long, value_name = "MS", allow_negative_numbers = true,
          help = describe(Key::ConsumerMinHeartbeatIntervalMs))]
    consumer_min_heartbeat_interval_ms: Option<String>,
    #[arg(long, value_name = "MS", allow_negative_numbers = true,
          help = describe(Key::ConsumerMaxHeartbeatIntervalMs))]
    consumer_max_heartbeat_interval_ms: Option<String>,
    #[arg(long, value_name = "N", allow_negative_numbers = true,
          help = describe(Key::ConsumerGroupMaxSize))]
    consumer_group_max_size: Option<String>,
    #[arg(long, value_name = "POLICY", help = describe(Key::ConsumerMigrationPolicy))]
    consumer_migration_policy: Option<String>,
    #[arg(long, value_name = "NAMES", help = describe(Key::ConsumerAssignors))]
    consumer_assignors: Option<String>,
    #[arg(long, value_name = "MS", allow_negative_numbers = true,
          help = describe(Key::ConsumerRegexRefreshIntervalMs))]
    consumer_regex_refresh_interval_ms: Option<String>,
    #[arg(long, value_name = "MINUTES", allow_negative_numbers = true,
          help = describe(Key::OffsetsRetentionMinutes))]
    offsets_retention_minutes: Option<String>,
    #[arg(long, value_name = "MS", allow_negative_numbers = true,
          help = describe(Key::OffsetsRetentionCheckIntervalMs))]
    offsets_retention_check_interval_ms: Option<String>,
    #[arg(long, value_name = "N", allow_negative_numbers = true,
          help = describe(Key::OffsetMetadataMaxBytes))]
    offset_metadata_max_bytes: Option<String>,
    #[arg(long, value_name = "N", allow_negative_numbers = true,
          help = describe(Key::OffsetsTopicNumPartitions))]
    offsets_topic_num_partitions: Option<String>,
    #[arg(long, value_name = "N", allow_negative_numbers = true, help = describe(Key::MaxConnections))]
    max_connections: Option<String>,
    #[arg(long, value_name = "N", allow_negative_numbers = true,
          help = describe(Key::MaxConnectionsPerIp))]
    max_connections_per_ip: Option<String>,
    #[arg(long, value_name = "N", allow_negative_numbers = true,
          help = describe(Key::MaxInFlightRequestsPerConnection))]
    max_in_flight_requests_per_connection: Option<String>,
    #[arg(long, value_name = "MS", allow_negative_numbers = true,
          help = describe(Key::ConnectionsMaxIdleMs))]
    connections_max_idle_ms: Option<String>,
    #[arg(long, value_name = "MS", allow_negative_numbers = true,
          help = describe(Key::RequestReadTimeoutMs))]
    request_read_timeout_ms: Option<String>,
    #[arg(long, value_name = "N", allow_negative_numbers = true, help = describe(Key::MaxFrameBytes))]
    max_frame_bytes: Option<String>,
    #[arg(long, value_name = "PATH", help = describe(Key::TlsCert))]
    tls_cert: Option<String>,
    #[arg(long, value_name = "PATH", help = describe(Key::TlsKeyFile))]
    tls_key: Option<String>,
    #[arg(long, value_name = "PATH", help = describe(Key::TlsClientCa))]
    tls_client_ca: Option<String>,
    #[arg(long, value_name = "LIST", help = describe(Key::SaslMechanisms))]
    sasl_mechanisms: Option<String>,
    #[arg(long, value_name = "PATH", help = describe(Key::SaslUsers))]
    sasl_users: Option<String>,
    #[arg(long, value_name = "MS", allow_negative_numbers = true,
          help = describe(Key::FailedAuthenticationDelayMs))]
    failed_authentication_delay_ms: Option<String>,
    #[arg(long, value_name = "PATH", help = describe(Key::AclFile))]
    acl_file: Option<String>,
    #[arg(long, value_name = "LIST", help = describe(Key::SuperUsers))]
    super_users: Option<String>,
    #[arg(long, value_name = "HOST:PORT", help = describe(Key::MetricsListen))]
    metrics_listen: Option<String>,
    #[arg(long, value_name = "FORMAT", help = describe(Key::LogFormat))]
    log_format: Option<String>,
    #[arg(long, help = describe(Key::Cluster))]
    cluster: bool,
    #[arg(long, value_name = "ENDPOINTS", help = describe(Key::Etcd))]
    etcd: Option<String>,
    #[arg(long, value_name = "PREFIX", help = describe(Key::ClusterPrefix))]
    cluster_prefix: Option<String>,
    #[arg(long, value_name = "SECS", allow_negative_numbers = true, help = describe(Key::LeaseTtlSecs))]
    lease_ttl_secs: Option<String>,
    /// Exit when standard input closes, so that a test harness that dies cannot leave the
    /// server running.
    #[arg(long)]
    pub(super) exit_on_stdin_close: bool,
    /// Log one line per connection to stderr.
    #[arg(short, long)]
    pub(super) verbose: bool,
}

impl Args {
    /// Parses arguments without the program name.
    pub(super) fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Args, ConfigError> {
        let argv = std::iter::once(OsString::from("group-server")).chain(args);
        Args::try_parse_from(argv).map_err(from_clap)
    }

    /// The settings the flags give; those not given are absent, so that a file's value
    /// for them stands.
    pub(super) fn layer(&self) -> Layer {
        let mut layer = Layer::default();
        let valued = [
            (Key::Listen, &self.listen),
            (Key::Advertise, &self.advertise),
            (Key::DataDir, &self.data_dir),
            (Key::NodeId, &self.node_id),
            (Key::RequestLog, &self.request_log),
            (Key::InitialRebalanceDelayMs, &self.initial_rebalance_delay_ms),
            (Key::MinSessionTimeoutMs, &self.min_session_timeout_ms),
            (Key::MaxSessionTimeoutMs, &self.max_session_timeout_ms),
            (Key::GroupMaxSize, &self.group_max_size),
            (Key::RebalanceProtocols, &self.rebalance_protocols),
            (Key::ConsumerSessionTimeoutMs, &self.consumer_session_timeout_ms),
            (Key::ConsumerMinSessionTimeoutMs, &self.consumer_min_session_timeout_ms),
            (Key::ConsumerMaxSessionTimeoutMs, &self.consumer_max_session_timeout_ms),
            (Key::ConsumerHeartbeatIntervalMs, &self.consumer_heartbeat_interval_ms),
            (Key::ConsumerMinHeartbeatIntervalMs, &self.consumer_min_heartbeat_interval_ms),
            (Key::ConsumerMaxHeartbeatIntervalMs, &self.consumer_max_heartbeat_interval_ms),
            (Key::ConsumerGroupMaxSize, &self.consumer_group_max_size),
            (Key::ConsumerMigrationPolicy, &self.consumer_migration_policy),
            (Key::ConsumerAssignors, &self.consumer_assignors),
            (Key::ConsumerRegexRefreshIntervalMs, &self.consumer_regex_refresh_interval_ms),
            (Key::OffsetsRetentionMinutes, &self.offsets_retention_minutes),
            (Key::OffsetsRetentionCheckIntervalMs, &self.offsets_retention_check_interval_ms),
            (Key::OffsetMetadataMaxBytes, &self.offset_metadata_max_bytes),
            (Key::OffsetsTopicNumPartitions, &self.offsets_topic_num_partitions),
            (Key::MaxConnections, &self.max_connections),
            (Key::MaxConnectionsPerIp, &self.max_connections_per_ip),
            (Key::MaxInFlightRequestsPerConnection, &self.max_in_flight_requests_per_connection),
            (Key::ConnectionsMaxIdleMs, &self.connections_max_idle_ms),
            (Key::RequestReadTimeoutMs, &self.request_read_timeout_ms),
            (Key::MaxFrameBytes, &self.max_frame_bytes),
            (Key::TlsCert, &self.tls_cert),
            (Key::TlsKeyFile, &self.tls_key),
            (Key::TlsClientCa, &self.tls_client_ca),
            (Key::SaslMechanisms, &self.sasl_mechanisms),
            (Key::SaslUsers, &self.sasl_users),
            (Key::FailedAuthenticationDelayMs, &self.failed_authentication_delay_ms),
            (Key::AclFile, &self.acl_file),
            (Key::SuperUsers, &self.super_users),
            (Key::MetricsListen, &self.metrics_listen),
            (Key::LogFormat, &self.log_format),
            (Key::Etcd, &self.etcd),
            (Key::ClusterPrefix, &self.cluster_prefix),
            (Key::LeaseTtlSecs, &self.lease_ttl_secs),
        ];
        for (key, value) in valued {
            if let Some(value) = value {
                layer.set(key, flag(key, value));
            }
        }
        for (on, key) in [(self.memory, Key::Memory), (self.cluster, Key::Cluster)] {
            if on {
                let name = key.setting().flag.to_owned();
                layer.set(key, Raw { value: "true".into(), name, origin: Origin::Switch });
            }
        }
        for topic in &self.topics {
            layer.push_topic(flag(Key::Topics, topic));
        }
        layer
    }
}

fn flag(key: Key, value: &str) -> Raw {
    Raw { value: value.to_owned(), name: key.setting().flag.to_owned(), origin: Origin::Flag }
}

/// Turns clap's outcome into a `ConfigError`: help and version become texts to print,
/// usage errors keep clap's wording on one line.
fn from_clap(error: clap::Error) -> ConfigError {
    let context = |kind| match error.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        _ => None,
    };
    match error.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            ConfigError::Help(with_newline(error.render().to_string()))
        }
        ErrorKind::DisplayVersion => ConfigError::Version(with_newline(error.render().to_string())),
        ErrorKind::UnknownArgument => match context(ContextKind::InvalidArg) {
            Some(argument) => {
                ConfigError::UnknownArgument { argument, suggestion: context(ContextKind::SuggestedArg) }
            }
            None => ConfigError::Usage(one_line(&error.render().to_string())),
        },
        // clap reports a value that is missing as an empty invalid one.
        ErrorKind::InvalidValue if context(ContextKind::InvalidValue).as_deref() == Some("") => {
            match context(ContextKind::InvalidArg) {
                Some(arg) => ConfigError::MissingValue(flag_name(&arg)),
                None => ConfigError::Usage(one_line(&error.render().to_string())),
            }
        }
        _ => ConfigError::Usage(one_line(&error.render().to_string())),
    }
}

fn with_newline(mut text: String) -> String {
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// `--listen <HOST:PORT>` → `--listen`.
fn flag_name(arg: &str) -> String {
    arg.split_once(' ').map_or(arg, |(flag, _)| flag).to_owned()
}

/// clap's message without its `error: ` prefix and usage block, tips kept.
fn one_line(rendered: &str) -> String {
    let mut lines = rendered.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("bad command line");
    let mut message = first.strip_prefix("error: ").unwrap_or(first).to_owned();
    for tip in lines.filter(|l| l.starts_with("tip:")) {
        message.push_str("; ");
        message.push_str(tip);
    }
    message
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;
    use crate::config::settings::SETTINGS;

    #[test]
    fn every_setting_has_its_flag() {
        let command = Args::command();
        for setting in SETTINGS {
            let long = setting.flag.trim_start_matches('-');
            assert!(
                command.get_arguments().any(|a| a.get_long() == Some(long)),
                "no flag {} for {:?}",
                setting.flag,
                setting.key
            );
        }
        command.debug_assert();
    }

    #[test]
    fn usage_errors_fit_on_one_line_with_their_tip() {
        let rendered = "error: unexpected argument '--lisen' found\n\n  tip: a similar argument exists: \
                        '--listen'\n\nUsage: group-server [OPTIONS]\n\nFor more information, try '--help'.\n";
        assert_eq!(
            one_line(rendered),
            "unexpected argument '--lisen' found; tip: a similar argument exists: '--listen'"
        );
        assert_eq!(flag_name("--listen <HOST:PORT>"), "--listen");
    }

    #[test]
    fn unset_flags_are_absent_from_the_layer() {
        let args = Args::parse(["--memory", "--topic", "a:1"].map(OsString::from)).expect("parses");
        let layer = args.layer();
        assert_eq!(layer.get(Key::Listen), None);
        assert_eq!(layer.get(Key::Memory).map(|r| r.origin.clone()), Some(Origin::Switch));
        assert_eq!(layer.topics().len(), 1);
    }
}
