//! The settings a command line or a configuration file may give: their flag, their
//! property name, their help line, and the values given for them before they are checked.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::ConfigError;
use crate::{ServerConfig, StorageMode};

/// One setting of the server (the process-only switches `-v` and `--exit-on-stdin-close`
/// are not settings: a configuration file does not carry them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Key {
    Listen,
    Advertise,
    Topics,
    DataDir,
    Memory,
    NodeId,
    RequestLog,
    InitialRebalanceDelayMs,
    MinSessionTimeoutMs,
    MaxSessionTimeoutMs,
    GroupMaxSize,
    RebalanceProtocols,
    ConsumerSessionTimeoutMs,
    ConsumerMinSessionTimeoutMs,
    ConsumerMaxSessionTimeoutMs,
    ConsumerHeartbeatIntervalMs,
    ConsumerMinHeartbeatIntervalMs,
    ConsumerMaxHeartbeatIntervalMs,
    ConsumerGroupMaxSize,
    ConsumerMigrationPolicy,
    ConsumerAssignors,
    ConsumerRegexRefreshIntervalMs,
    OffsetsRetentionMinutes,
    OffsetsRetentionCheckIntervalMs,
    OffsetMetadataMaxBytes,
    OffsetsTopicNumPartitions,
    MaxConnections,
    MaxConnectionsPerIp,
    MaxInFlightRequestsPerConnection,
    ConnectionsMaxIdleMs,
    RequestReadTimeoutMs,
    MaxFrameBytes,
    TlsCert,
    TlsKeyFile,
    TlsClientCa,
    SaslMechanisms,
    SaslUsers,
    FailedAuthenticationDelayMs,
    AclFile,
    SuperUsers,
    MetricsListen,
    LogFormat,
    Cluster,
    Etcd,
    ClusterPrefix,
    LeaseTtlSecs,
}

/// How a setting is named on the command line and in a configuration file.
#[derive(Debug)]
pub(super) struct Setting {
    pub(super) key: Key,
    /// The long flag, dashes included.
    pub(super) flag: &'static str,
    /// The property of a configuration file.
    pub(super) property: &'static str,
    /// Whether `property` is Kafka's own broker property; otherwise Kafka has no name for
    /// the setting and the name is ours.
    pub(super) kafka: bool,
    about: &'static str,
}

/// Every setting, in the order of [`Key`] (so that [`Key::setting`] can index it).
pub(super) const SETTINGS: &[Setting] = &[
    Setting {
        key: Key::Listen,
        flag: "--listen",
        property: "listeners",
        kafka: true,
        about: "Address to listen on; a host name is resolved, port 0 picks a free port",
    },
    Setting {
        key: Key::Advertise,
        flag: "--advertise",
        property: "advertised.listeners",
        kafka: true,
        about: "Address clients are told to connect to; needed when --listen is a wildcard (0.0.0.0 or ::)",
    },
    Setting {
        key: Key::Topics,
        flag: "--topic",
        property: "topics",
        kafka: false,
        about: "A topic Metadata, ListOffsets and Fetch answer for, with empty partitions; repeatable",
    },
    Setting {
        key: Key::DataDir,
        flag: "--data-dir",
        property: "data.dir",
        kafka: false,
        about: "Directory of the durable sled storage",
    },
    Setting {
        key: Key::Memory,
        flag: "--memory",
        property: "memory",
        kafka: false,
        about: "Keep offsets and groups in memory only, lost on exit; not with --data-dir",
    },
    Setting {
        key: Key::NodeId,
        flag: "--node-id",
        property: "node.id",
        kafka: true,
        about: "This node's id in Metadata and FindCoordinator answers (broker.id in a file too)",
    },
    Setting {
        key: Key::RequestLog,
        flag: "--request-log",
        property: "request.log",
        kafka: false,
        about: "Append a JSON line per served request to this file",
    },
    Setting {
        key: Key::InitialRebalanceDelayMs,
        flag: "--initial-rebalance-delay-ms",
        property: "group.initial.rebalance.delay.ms",
        kafka: true,
        about: "How long the first rebalance of a new group waits for more members; 0 disables it",
    },
    Setting {
        key: Key::MinSessionTimeoutMs,
        flag: "--min-session-timeout-ms",
        property: "group.min.session.timeout.ms",
        kafka: true,
        about: "Smallest session timeout a member may ask for",
    },
    Setting {
        key: Key::MaxSessionTimeoutMs,
        flag: "--max-session-timeout-ms",
        property: "group.max.session.timeout.ms",
        kafka: true,
        about: "Largest session timeout a member may ask for",
    },
    Setting {
        key: Key::GroupMaxSize,
        flag: "--group-max-size",
        property: "group.max.size",
        kafka: true,
        about: "Most members a classic group accepts",
    },
    Setting {
        key: Key::RebalanceProtocols,
        flag: "--rebalance-protocols",
        property: "group.coordinator.rebalance.protocols",
        kafka: true,
        about: "Group protocols served, comma-separated: classic (required) and consumer (KIP-848: \
                ConsumerGroupHeartbeat and ConsumerGroupDescribe; without it they are answered \
                UNSUPPORTED_VERSION)",
    },
    Setting {
        key: Key::ConsumerSessionTimeoutMs,
        flag: "--consumer-session-timeout-ms",
        property: "group.consumer.session.timeout.ms",
        kafka: true,
        about: "How long a consumer-protocol member may go without a heartbeat before it is \
                removed; between its min and max",
    },
    Setting {
        key: Key::ConsumerMinSessionTimeoutMs,
        flag: "--consumer-min-session-timeout-ms",
        property: "group.consumer.min.session.timeout.ms",
        kafka: true,
        about: "Smallest consumer-protocol session timeout",
    },
    Setting {
        key: Key::ConsumerMaxSessionTimeoutMs,
        flag: "--consumer-max-session-timeout-ms",
        property: "group.consumer.max.session.timeout.ms",
        kafka: true,
        about: "Largest consumer-protocol session timeout",
    },
    Setting {
        key: Key::ConsumerHeartbeatIntervalMs,
        flag: "--consumer-heartbeat-interval-ms",
        property: "group.consumer.heartbeat.interval.ms",
        kafka: true,
        about: "How often consumer-protocol members are told to heartbeat; between its min and \
                max, below the session timeout",
    },
    Setting {
        key: Key::ConsumerMinHeartbeatIntervalMs,
        flag: "--consumer-min-heartbeat-interval-ms",
        property: "group.consumer.min.heartbeat.interval.ms",
        kafka: true,
        about: "Smallest consumer-protocol heartbeat interval",
    },
    Setting {
        key: Key::ConsumerMaxHeartbeatIntervalMs,
        flag: "--consumer-max-heartbeat-interval-ms",
        property: "group.consumer.max.heartbeat.interval.ms",
        kafka: true,
        about: "Largest consumer-protocol heartbeat interval",
    },
    Setting {
        key: Key::ConsumerGroupMaxSize,
        flag: "--consumer-group-max-size",
        property: "group.consumer.max.size",
        kafka: true,
        about: "Most members a consumer-protocol group accepts",
    },
    Setting {
        key: Key::ConsumerMigrationPolicy,
        flag: "--consumer-migration-policy",
        property: "group.consumer.migration.policy",
        kafka: true,
        about: "Which non-empty groups convert between the classic and consumer protocols: \
                disabled, upgrade, downgrade or bidirectional",
    },
    Setting {
        key: Key::ConsumerAssignors,
        flag: "--consumer-assignors",
        property: "group.consumer.assignors",
        kafka: true,
        about: "Server-side assignors consumer-protocol members may ask for, comma-separated \
                (uniform, range); the first is the default",
    },
    Setting {
        key: Key::ConsumerRegexRefreshIntervalMs,
        flag: "--consumer-regex-refresh-interval-ms",
        property: "group.consumer.regex.refresh.interval.ms",
        kafka: true,
        about: "How old a regex subscription's resolution may get before it is resolved again \
                (at least 10000)",
    },
    Setting {
        key: Key::OffsetsRetentionMinutes,
        flag: "--offsets-retention-minutes",
        property: "offsets.retention.minutes",
        kafka: true,
        about: "How long the committed offsets of a group are kept once it is empty (KIP-211)",
    },
    Setting {
        key: Key::OffsetsRetentionCheckIntervalMs,
        flag: "--offsets-retention-check-interval-ms",
        property: "offsets.retention.check.interval.ms",
        kafka: true,
        about: "Period of the job that removes expired offsets",
    },
    Setting {
        key: Key::OffsetMetadataMaxBytes,
        flag: "--offset-metadata-max-bytes",
        property: "offset.metadata.max.bytes",
        kafka: true,
        about: "Longest metadata string an offset commit may carry (in UTF-16 units, as Java counts)",
    },
    Setting {
        key: Key::OffsetsTopicNumPartitions,
        flag: "--offsets-topic-num-partitions",
        property: "offsets.topic.num.partitions",
        kafka: true,
        about: "Coordinator partitions the groups are spread over; must not change for an \
                existing data directory",
    },
    Setting {
        key: Key::MaxConnections,
        flag: "--max-connections",
        property: "max.connections",
        kafka: true,
        about: "Connections open at once; one more is closed on accept",
    },
    Setting {
        key: Key::MaxConnectionsPerIp,
        flag: "--max-connections-per-ip",
        property: "max.connections.per.ip",
        kafka: true,
        about: "Connections open at once from one client address",
    },
    Setting {
        key: Key::MaxInFlightRequestsPerConnection,
        flag: "--max-in-flight-requests-per-connection",
        property: "max.in.flight.requests.per.connection",
        kafka: false,
        about: "Requests read from one connection whose responses are not written yet; the \
                connection is not read further until one is",
    },
    Setting {
        key: Key::ConnectionsMaxIdleMs,
        flag: "--connections-max-idle-ms",
        property: "connections.max.idle.ms",
        kafka: true,
        about: "A connection with nothing in flight and nothing read for this long is closed",
    },
    Setting {
        key: Key::RequestReadTimeoutMs,
        flag: "--request-read-timeout-ms",
        property: "request.read.timeout.ms",
        kafka: false,
        about: "A request that has begun to arrive must arrive whole within this time, or its \
                connection is closed",
    },
    Setting {
        key: Key::MaxFrameBytes,
        flag: "--max-frame-bytes",
        property: "socket.request.max.bytes",
        kafka: true,
        about: "Largest request frame; a bigger one closes its connection",
    },
    Setting {
        key: Key::TlsCert,
        flag: "--tls-cert",
        property: "tls.cert.file",
        kafka: false,
        about: "PEM certificate chain of the listener: clients connect with TLS 1.2 or 1.3 (SSL, or \
                SASL_SSL with --sasl-mechanisms); needs --tls-key",
    },
    Setting {
        key: Key::TlsKeyFile,
        flag: "--tls-key",
        property: "tls.key.file",
        kafka: false,
        about: "PEM private key of --tls-cert",
    },
    Setting {
        key: Key::TlsClientCa,
        flag: "--tls-client-ca",
        property: "tls.client.ca.file",
        kafka: false,
        about: "PEM certificates of the authorities client certificates must chain to: every \
                client must present one (ssl.client.auth=required), and without SASL it \
                authenticates as User:<certificate subject>",
    },
    Setting {
        key: Key::SaslMechanisms,
        flag: "--sasl-mechanisms",
        property: "sasl.enabled.mechanisms",
        kafka: true,
        about: "SASL mechanisms every client must authenticate with, comma-separated: PLAIN, \
                SCRAM-SHA-256, SCRAM-SHA-512; needs --sasl-users. Re-authentication (KIP-368) is \
                not supported",
    },
    Setting {
        key: Key::SaslUsers,
        flag: "--sasl-users",
        property: "sasl.users.file",
        kafka: false,
        about: "Credentials file of the SASL users (salted, never plaintext), made by \
                `group-server users add`",
    },
    Setting {
        key: Key::FailedAuthenticationDelayMs,
        flag: "--failed-authentication-delay-ms",
        property: "connection.failed.authentication.delay.ms",
        kafka: true,
        about: "How long the answer to a failed authentication is held before the connection closes",
    },
    Setting {
        key: Key::AclFile,
        flag: "--acl-file",
        property: "acl.file",
        kafka: false,
        about: "Kafka-style ACL file every request is authorized against, reloaded on SIGHUP; \
                without it everything is allowed",
    },
    Setting {
        key: Key::SuperUsers,
        flag: "--super-users",
        property: "super.users",
        kafka: true,
        about: "Principals allowed everything whatever the ACLs say, semicolon-separated, e.g. \
                User:admin;User:ops",
    },
    Setting {
        key: Key::MetricsListen,
        flag: "--metrics-listen",
        property: "metrics.listen",
        kafka: false,
        about: "Address of the HTTP endpoint serving Prometheus metrics on /metrics",
    },
    Setting {
        key: Key::LogFormat,
        flag: "--log-format",
        property: "log.format",
        kafka: false,
        about: "Log lines on stderr as human text or JSON (one object a line); the level comes \
                from RUST_LOG",
    },
    Setting {
        key: Key::Cluster,
        flag: "--cluster",
        property: "cluster",
        kafka: false,
        about: "Run as one node of a cluster over etcd (needs --etcd, a unique --node-id and an \
                --advertise clients reach): groups are spread over the live nodes and a dead \
                node's move to the others; not with --memory or --data-dir",
    },
    Setting {
        key: Key::Etcd,
        flag: "--etcd",
        property: "etcd.endpoints",
        kafka: false,
        about: "The etcd cluster's client endpoints, comma-separated, e.g. \
                http://10.0.0.1:2379,http://10.0.0.2:2379",
    },
    Setting {
        key: Key::ClusterPrefix,
        flag: "--cluster-prefix",
        property: "cluster.prefix",
        kafka: false,
        about: "The etcd key prefix of this cluster's keys (several clusters can share an etcd)",
    },
    Setting {
        key: Key::LeaseTtlSecs,
        flag: "--lease-ttl-secs",
        property: "cluster.lease.ttl.secs",
        kafka: false,
        about: "Seconds a node that stops renewing its etcd lease (killed, paused, cut off) keeps \
                its groups before other nodes take them over",
    },
];

/// Properties that name a setting under another name.
pub(super) const ALIASES: &[(&str, Key)] = &[("broker.id", Key::NodeId)];

impl Key {
    /// The names and help of this setting.
    pub(super) fn setting(self) -> &'static Setting {
        &SETTINGS[self as usize]
    }
}

/// The help line of a setting: what it does, its name in a configuration file, and its
/// default, all taken from the table and from [`ServerConfig::default`] so that `--help`
/// cannot drift from the code.
pub(super) fn describe(key: Key) -> String {
    let setting = key.setting();
    let name = if setting.kafka { "Kafka" } else { "property" };
    let mut help = format!("{} [{name}: {}]", setting.about, setting.property);
    if let Some(default) = default_text(key) {
        help.push_str(&format!(" [default: {default}]"));
    }
    help
}

/// The default of a setting as `--help` shows it; `None` for settings that are off or
/// empty by default.
pub(super) fn default_text(key: Key) -> Option<String> {
    let d = ServerConfig::default();
    let (co, limits) = (&d.coordinator, &d.limits);
    Some(match key {
        Key::Listen => d.listen.to_string(),
        Key::Advertise => "the listen address".to_owned(),
        Key::Topics
        | Key::Memory
        | Key::RequestLog
        | Key::TlsCert
        | Key::TlsKeyFile
        | Key::TlsClientCa
        | Key::SaslMechanisms
        | Key::SaslUsers
        | Key::AclFile
        | Key::SuperUsers
        | Key::MetricsListen
        | Key::Cluster
        | Key::Etcd => return None,
        Key::ClusterPrefix => crate::ClusterSettings::DEFAULT_PREFIX.to_owned(),
        Key::LeaseTtlSecs => crate::ClusterSettings::DEFAULT_LEASE_TTL_SECS.to_string(),
        Key::FailedAuthenticationDelayMs => d.security.failed_authentication_delay.as_millis().to_string(),
        Key::LogFormat => d.log_format.to_string(),
        Key::DataDir => match &d.storage {
            StorageMode::Sled(dir) => dir.display().to_string(),
            StorageMode::Memory | StorageMode::Cluster(_) => return None,
        },
        Key::NodeId => d.node_id.to_string(),
        Key::InitialRebalanceDelayMs => co.initial_rebalance_delay_ms.to_string(),
        Key::MinSessionTimeoutMs => co.min_session_timeout_ms.to_string(),
        Key::MaxSessionTimeoutMs => co.max_session_timeout_ms.to_string(),
        Key::GroupMaxSize => co.group_max_size.to_string(),
        Key::RebalanceProtocols => {
            if co.consumer.enabled { "classic,consumer" } else { "classic" }.to_owned()
        }
        Key::ConsumerSessionTimeoutMs => co.consumer.session_timeout_ms.to_string(),
        Key::ConsumerMinSessionTimeoutMs => co.consumer.min_session_timeout_ms.to_string(),
        Key::ConsumerMaxSessionTimeoutMs => co.consumer.max_session_timeout_ms.to_string(),
        Key::ConsumerHeartbeatIntervalMs => co.consumer.heartbeat_interval_ms.to_string(),
        Key::ConsumerMinHeartbeatIntervalMs => co.consumer.min_heartbeat_interval_ms.to_string(),
        Key::ConsumerMaxHeartbeatIntervalMs => co.consumer.max_heartbeat_interval_ms.to_string(),
        Key::ConsumerGroupMaxSize => co.consumer.max_size.to_string(),
        Key::ConsumerMigrationPolicy => co.consumer.migration_policy.to_string(),
        Key::ConsumerAssignors => co.consumer.assignors.join(","),
        Key::ConsumerRegexRefreshIntervalMs => co.consumer.regex_refresh_interval_ms.to_string(),
        Key::OffsetsRetentionMinutes => (co.offset_retention_ms / 60_000).to_string(),
        Key::OffsetsRetentionCheckIntervalMs => co.offsets_retention_check_interval_ms.to_string(),
        Key::OffsetMetadataMaxBytes => co.offset_metadata_max_bytes.to_string(),
        Key::OffsetsTopicNumPartitions => d.partitions.to_string(),
        Key::MaxConnections => limits.max_connections.to_string(),
        Key::MaxConnectionsPerIp => limits.max_connections_per_ip.to_string(),
        Key::MaxInFlightRequestsPerConnection => limits.max_in_flight_per_connection.to_string(),
        Key::ConnectionsMaxIdleMs => limits.connections_max_idle.as_millis().to_string(),
        Key::RequestReadTimeoutMs => limits.request_read_timeout.as_millis().to_string(),
        Key::MaxFrameBytes => limits.max_frame_bytes.to_string(),
    })
}

/// Where a value was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Origin {
    /// A flag with a value.
    Flag,
    /// A flag without a value, such as `--memory` (its value is `true`).
    Switch,
    /// A line of a configuration file.
    File { path: PathBuf, line: usize },
}

/// A value as given, before it is parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Raw {
    pub(super) value: String,
    /// The flag or property as the user wrote it (`broker.id` when the alias was used), so
    /// that an error names what the user can find in what they wrote.
    pub(super) name: String,
    pub(super) origin: Origin,
}

impl Raw {
    /// How an error message names this value, location included.
    pub(super) fn label(&self) -> String {
        match &self.origin {
            Origin::Flag => format!("{} {}", self.name, self.value),
            Origin::Switch => self.name.clone(),
            Origin::File { path, line } => {
                format!("{}={} ({}:{line})", self.name, self.value, path.display())
            }
        }
    }

    /// Places an error about this value where the user gave it.
    pub(super) fn locate(&self, error: ConfigError) -> ConfigError {
        match &self.origin {
            Origin::Flag | Origin::Switch => error,
            Origin::File { path, line } => {
                ConfigError::InFile { path: path.clone(), line: *line, error: Box::new(error) }
            }
        }
    }

    /// A [`ConfigError::BadValue`] for this value, placed where the user gave it.
    pub(super) fn bad(&self, expected: impl Into<String>) -> ConfigError {
        self.locate(ConfigError::BadValue {
            setting: self.name.clone(),
            value: self.value.clone(),
            expected: expected.into(),
        })
    }
}

/// The values one source (the command line, or the file) gives.
#[derive(Debug, Default)]
pub(super) struct Layer {
    values: BTreeMap<Key, Raw>,
    /// Kept apart: `--topic` repeats, and a file's `topics` lists several.
    topics: Vec<Raw>,
}

impl Layer {
    pub(super) fn get(&self, key: Key) -> Option<&Raw> {
        self.values.get(&key)
    }

    pub(super) fn set(&mut self, key: Key, raw: Raw) {
        self.values.insert(key, raw);
    }

    pub(super) fn push_topic(&mut self, raw: Raw) {
        self.topics.push(raw);
    }

    pub(super) fn topics(&self) -> &[Raw] {
        &self.topics
    }

    /// These values with `over`'s in place of their own, whatever order they came in.
    ///
    /// Topics are replaced as a whole list, not merged, so that the command line can say
    /// exactly which topics there are; likewise `--memory` and `--data-dir` replace both of
    /// the file's storage settings, since together they are one choice.
    pub(super) fn overridden_by(mut self, over: Layer) -> Layer {
        if !over.topics.is_empty() {
            self.topics = over.topics;
        }
        if over.values.contains_key(&Key::Memory) || over.values.contains_key(&Key::DataDir) {
            self.values.remove(&Key::Memory);
            self.values.remove(&Key::DataDir);
        }
        self.values.extend(over.values);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_in_key_order_with_distinct_names() {
        for (i, setting) in SETTINGS.iter().enumerate() {
            assert_eq!(setting.key as usize, i, "{setting:?} out of order");
            assert!(setting.flag.starts_with("--"));
        }
        for (i, a) in SETTINGS.iter().enumerate() {
            for b in &SETTINGS[i + 1..] {
                assert_ne!(a.flag, b.flag);
                assert_ne!(a.property, b.property);
            }
        }
        assert_eq!(Key::MaxFrameBytes.setting().key, Key::MaxFrameBytes);
    }

    #[test]
    fn help_lines_name_the_property_and_the_default() {
        assert_eq!(
            describe(Key::GroupMaxSize),
            "Most members a classic group accepts [Kafka: group.max.size] [default: 2147483647]"
        );
        assert!(describe(Key::DataDir).ends_with("[property: data.dir] [default: ./data]"));
        assert!(describe(Key::Memory).ends_with("[property: memory]"));
    }

    fn raw(value: &str, origin: Origin) -> Raw {
        Raw { value: value.into(), name: "x.y".into(), origin }
    }

    #[test]
    fn labels_and_errors_say_where_a_value_came_from() {
        let file = Origin::File { path: PathBuf::from("a.properties"), line: 3 };
        assert_eq!(raw("5", file.clone()).label(), "x.y=5 (a.properties:3)");
        assert_eq!(raw("5", Origin::Flag).label(), "x.y 5");
        assert_eq!(raw("true", Origin::Switch).label(), "x.y");
        let bad = ConfigError::BadValue { setting: "x.y".into(), value: "5".into(), expected: "6".into() };
        assert_eq!(raw("5", Origin::Flag).bad("6"), bad);
        assert_eq!(
            raw("5", file).bad("6"),
            ConfigError::InFile { path: PathBuf::from("a.properties"), line: 3, error: Box::new(bad) }
        );
    }

    #[test]
    fn the_command_line_overrides_the_file_whole_lists_and_storage_included() {
        let mut file = Layer::default();
        file.set(Key::NodeId, raw("1", Origin::Flag));
        file.set(Key::DataDir, raw("d", Origin::Flag));
        file.set(Key::GroupMaxSize, raw("9", Origin::Flag));
        file.push_topic(raw("a:1", Origin::Flag));
        file.push_topic(raw("b:1", Origin::Flag));
        let mut cli = Layer::default();
        cli.set(Key::NodeId, raw("2", Origin::Flag));
        cli.set(Key::Memory, raw("true", Origin::Switch));
        cli.push_topic(raw("c:1", Origin::Flag));
        let merged = file.overridden_by(cli);
        assert_eq!(merged.get(Key::NodeId).map(|r| r.value.as_str()), Some("2"));
        assert_eq!(merged.get(Key::GroupMaxSize).map(|r| r.value.as_str()), Some("9"));
        assert_eq!(merged.get(Key::DataDir), None);
        assert!(merged.get(Key::Memory).is_some());
        assert_eq!(merged.topics().iter().map(|r| r.value.as_str()).collect::<Vec<_>>(), ["c:1"]);
    }
}
