//! Every setting of the server, each declared once: its flag, its property (Kafka's broker
//! property where Kafka has one), its help line, and the value it takes (kind, bounds and
//! the field it fills, whose initial value is the default).
//!
//! The flag parser (`args`), the configuration file reader (`file`), `--help`, the bounds
//! checks (`value`) and the reference list ([`reference`]) all read this table; the checks
//! that relate several settings to each other are in `validate`.

use std::fmt::Write as _;

use group_storage_sled::SledOptions;

use self::Property::{Kafka, Ours};
use super::value::{
    Draft, Int, MAX_LONG_MS, Parsed, Shape, Switch, Topics, Value, advertise, assignors, endpoints, listen,
    mechanisms, optional_listen, parse_as, path, prefix, rebalance_protocols, some_path, super_users,
};
use crate::StorageMode;

/// Java's `Integer.MAX_VALUE`, the upper bound of Kafka's `int` settings.
const INT_MAX: i64 = i32::MAX as i64;

/// One setting of the server (the process-only switches `-v` and `--exit-on-stdin-close`
/// are not settings: a configuration file does not carry them).
#[derive(Debug)]
pub(super) struct Setting {
    /// The long flag, dashes included.
    pub(super) flag: &'static str,
    /// The name in a configuration file.
    pub(super) property: Property,
    /// What the setting does, as `--help` says it.
    about: &'static str,
    /// The value it takes and where the value goes.
    pub(super) value: &'static dyn Value,
}

/// The name of a setting in a configuration file.
#[derive(Debug, Clone, Copy)]
pub(super) enum Property {
    /// Kafka's own broker property.
    Kafka(&'static str),
    /// Kafka has no name for the setting; the name is ours.
    Ours(&'static str),
}

impl Property {
    /// The name as a file writes it.
    pub(super) fn name(self) -> &'static str {
        match self {
            Kafka(name) | Ours(name) => name,
        }
    }
}

/// Declares [`Key`], one variant per setting, and [`SETTINGS`] in the same order, so that
/// the code that relates settings to each other can name them.
macro_rules! settings {
    ($($key:ident: $setting:expr,)*) => {
        /// A setting, by name; [`Key::setting`] has its declaration.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
        pub(super) enum Key {
            $($key,)*
        }

        /// Every setting, in the order of [`Key`] (`--help` lists them in this order).
        pub(super) const SETTINGS: &[Setting] = &[$($setting,)*];

        impl Key {
            /// Every key, in order.
            pub(super) const ALL: &[Key] = &[$(Key::$key,)*];
        }
    };
}

settings! {
    Listen: Setting {
        flag: "--listen",
        property: Kafka("listeners"),
        about: "Address to listen on; a host name is resolved, port 0 picks a free port",
        value: &Parsed::new("HOST:PORT", |d| &mut d.config.listen, listen).shown(),
    },
    Advertise: Setting {
        flag: "--advertise",
        property: Kafka("advertised.listeners"),
        about: "Address clients are told to connect to; needed when --listen is a wildcard (0.0.0.0 or ::)",
        value: &Parsed::new("HOST:PORT", |d| &mut d.config.advertise, advertise)
            .shown_as(|_| Some("the listen address".to_owned())),
    },
    Topics: Setting {
        flag: "--topic",
        property: Ours("topics"),
        about: "A topic Metadata, ListOffsets and Fetch answer for, with empty partitions; repeatable",
        value: &Topics,
    },
    DataDir: Setting {
        flag: "--data-dir",
        property: Ours("data.dir"),
        about: "Directory of the durable sled storage",
        value: &Parsed::new("PATH", |d| &mut d.config.storage, |raw| some_path(raw).map(StorageMode::Sled))
            .shown_as(|storage| match storage {
                StorageMode::Sled(dir) => Some(dir.display().to_string()),
                StorageMode::Memory | StorageMode::Cluster(_) => None,
            }),
    },
    Memory: Setting {
        flag: "--memory",
        property: Ours("memory"),
        about: "Keep offsets and groups in memory only, lost on exit; not with --data-dir",
        value: &Switch { field: |d| &mut d.parts.memory },
    },
    NodeId: Setting {
        flag: "--node-id",
        property: Kafka("node.id"),
        about: "This node's id in Metadata and FindCoordinator answers (broker.id in a file too)",
        value: &Int::new("N", 0, INT_MAX, |d| &mut d.config.node_id),
    },
    RequestLog: Setting {
        flag: "--request-log",
        property: Ours("request.log"),
        about: "Append a JSON line per served request to this file",
        value: &path(|d| &mut d.config.request_log),
    },
    InitialRebalanceDelayMs: Setting {
        flag: "--initial-rebalance-delay-ms",
        property: Kafka("group.initial.rebalance.delay.ms"),
        about: "How long the first rebalance of a new group waits for more members; 0 disables it",
        value: &Int::new("MS", 0, INT_MAX, |d| &mut d.config.coordinator.initial_rebalance_delay_ms),
    },
    MinSessionTimeoutMs: Setting {
        flag: "--min-session-timeout-ms",
        property: Kafka("group.min.session.timeout.ms"),
        about: "Smallest session timeout a member may ask for",
        value: &Int::new("MS", 0, INT_MAX, |d| &mut d.config.coordinator.min_session_timeout_ms),
    },
    MaxSessionTimeoutMs: Setting {
        flag: "--max-session-timeout-ms",
        property: Kafka("group.max.session.timeout.ms"),
        about: "Largest session timeout a member may ask for",
        value: &Int::new("MS", 0, INT_MAX, |d| &mut d.config.coordinator.max_session_timeout_ms),
    },
    GroupMaxSize: Setting {
        flag: "--group-max-size",
        property: Kafka("group.max.size"),
        about: "Most members a classic group accepts",
        value: &Int::new("N", 1, INT_MAX, |d| &mut d.config.coordinator.group_max_size),
    },
    GroupMaxGroups: Setting {
        flag: "--group-max-groups",
        property: Ours("group.max.groups"),
        about: "Most groups of every kind this node holds; a request that would create one more is \
                answered GROUP_MAX_SIZE_REACHED and counted (kafka_group_groups_refused)",
        value: &Int::new("N", 1, INT_MAX, |d| &mut d.config.coordinator.max_groups),
    },
    RebalanceProtocols: Setting {
        flag: "--rebalance-protocols",
        property: Kafka("group.coordinator.rebalance.protocols"),
        about: "Group protocols served, comma-separated: classic (required), consumer (KIP-848: \
                ConsumerGroupHeartbeat and ConsumerGroupDescribe) and share (KIP-932 share groups); \
                the APIs of one left out are answered UNSUPPORTED_VERSION",
        value: &Parsed::new("LIST", |d| &mut d.parts.protocols, rebalance_protocols)
            .shown_as(|protocols| Some(protocols.names())),
    },
    // The KIP-848 settings keep Kafka's `GroupCoordinatorConfig` bounds: each at least 1
    // (the checks that relate them to each other are in `validate`).
    ConsumerSessionTimeoutMs: Setting {
        flag: "--consumer-session-timeout-ms",
        property: Kafka("group.consumer.session.timeout.ms"),
        about: "How long a consumer-protocol member may go without a heartbeat before it is \
                removed; between its min and max",
        value: &Int::new("MS", 1, INT_MAX, |d| &mut d.config.coordinator.consumer.session_timeout_ms),
    },
    ConsumerMinSessionTimeoutMs: Setting {
        flag: "--consumer-min-session-timeout-ms",
        property: Kafka("group.consumer.min.session.timeout.ms"),
        about: "Smallest consumer-protocol session timeout",
        value: &Int::new("MS", 1, INT_MAX, |d| &mut d.config.coordinator.consumer.min_session_timeout_ms),
    },
    ConsumerMaxSessionTimeoutMs: Setting {
        flag: "--consumer-max-session-timeout-ms",
        property: Kafka("group.consumer.max.session.timeout.ms"),
        about: "Largest consumer-protocol session timeout",
        value: &Int::new("MS", 1, INT_MAX, |d| &mut d.config.coordinator.consumer.max_session_timeout_ms),
    },
    ConsumerHeartbeatIntervalMs: Setting {
        flag: "--consumer-heartbeat-interval-ms",
        property: Kafka("group.consumer.heartbeat.interval.ms"),
        about: "How often consumer-protocol members are told to heartbeat; between its min and \
                max, below the session timeout",
        value: &Int::new("MS", 1, INT_MAX, |d| &mut d.config.coordinator.consumer.heartbeat_interval_ms),
    },
    ConsumerMinHeartbeatIntervalMs: Setting {
        flag: "--consumer-min-heartbeat-interval-ms",
        property: Kafka("group.consumer.min.heartbeat.interval.ms"),
        about: "Smallest consumer-protocol heartbeat interval",
        value: &Int::new("MS", 1, INT_MAX, |d| &mut d.config.coordinator.consumer.min_heartbeat_interval_ms),
    },
    ConsumerMaxHeartbeatIntervalMs: Setting {
        flag: "--consumer-max-heartbeat-interval-ms",
        property: Kafka("group.consumer.max.heartbeat.interval.ms"),
        about: "Largest consumer-protocol heartbeat interval",
        value: &Int::new("MS", 1, INT_MAX, |d| &mut d.config.coordinator.consumer.max_heartbeat_interval_ms),
    },
    ConsumerGroupMaxSize: Setting {
        flag: "--consumer-group-max-size",
        property: Kafka("group.consumer.max.size"),
        about: "Most members a consumer-protocol group accepts",
        value: &Int::new("N", 1, INT_MAX, |d| &mut d.config.coordinator.consumer.max_size),
    },
    ConsumerMigrationPolicy: Setting {
        flag: "--consumer-migration-policy",
        property: Kafka("group.consumer.migration.policy"),
        about: "Which non-empty groups convert between the classic and consumer protocols: \
                disabled, upgrade, downgrade or bidirectional",
        value: &Parsed::new("POLICY", |d| &mut d.config.coordinator.consumer.migration_policy, |raw| {
            parse_as(raw, "disabled, upgrade, downgrade or bidirectional")
        })
        .shown(),
    },
    ConsumerAssignors: Setting {
        flag: "--consumer-assignors",
        property: Kafka("group.consumer.assignors"),
        about: "Server-side assignors consumer-protocol members may ask for, comma-separated \
                (uniform, range); the first is the default",
        value: &Parsed::new("NAMES", |d| &mut d.config.coordinator.consumer.assignors, assignors)
            .shown_as(|names| Some(names.join(","))),
    },
    ConsumerRegexRefreshIntervalMs: Setting {
        flag: "--consumer-regex-refresh-interval-ms",
        property: Kafka("group.consumer.regex.refresh.interval.ms"),
        about: "How old a regex subscription's resolution may get before it is resolved again \
                (at least 10000)",
        value: &Int::new("MS", 10_000, MAX_LONG_MS, |d| {
            &mut d.config.coordinator.consumer.regex_refresh_interval_ms
        }),
    },
    // KIP-1263 (Kafka 4.3): the interval between target assignments of a group, and the
    // bounds of a group's own `consumer.assignment.interval.ms`; 0 (the default here)
    // computes a new target at once, as Kafka 4.2 did.
    ConsumerAssignmentIntervalMs: Setting {
        flag: "--consumer-assignment-interval-ms",
        property: Kafka("group.consumer.assignment.interval.ms"),
        about: "How long a consumer-protocol group waits after a target assignment before it \
                computes the next (KIP-1263; 0: at once); between its min and max",
        value: &Int::new("MS", 0, INT_MAX, |d| {
            &mut d.config.coordinator.group_config_bounds.consumer_assignment_interval_ms.default
        }),
    },
    ConsumerMinAssignmentIntervalMs: Setting {
        flag: "--consumer-min-assignment-interval-ms",
        property: Kafka("group.consumer.min.assignment.interval.ms"),
        about: "Smallest consumer-protocol assignment interval",
        value: &Int::new("MS", 0, INT_MAX, |d| {
            &mut d.config.coordinator.group_config_bounds.consumer_assignment_interval_ms.min
        }),
    },
    ConsumerMaxAssignmentIntervalMs: Setting {
        flag: "--consumer-max-assignment-interval-ms",
        property: Kafka("group.consumer.max.assignment.interval.ms"),
        about: "Largest consumer-protocol assignment interval",
        value: &Int::new("MS", 0, INT_MAX, |d| {
            &mut d.config.coordinator.group_config_bounds.consumer_assignment_interval_ms.max
        }),
    },
    ShareAssignmentIntervalMs: Setting {
        flag: "--share-assignment-interval-ms",
        property: Kafka("group.share.assignment.interval.ms"),
        about: "How long a share group waits after a target assignment before it computes the \
                next (KIP-1263; 0: at once); between its min and max",
        value: &Int::new("MS", 0, INT_MAX, |d| {
            &mut d.config.coordinator.group_config_bounds.share_assignment_interval_ms.default
        }),
    },
    ShareMinAssignmentIntervalMs: Setting {
        flag: "--share-min-assignment-interval-ms",
        property: Kafka("group.share.min.assignment.interval.ms"),
        about: "Smallest share assignment interval",
        value: &Int::new("MS", 0, INT_MAX, |d| {
            &mut d.config.coordinator.group_config_bounds.share_assignment_interval_ms.min
        }),
    },
    ShareMaxAssignmentIntervalMs: Setting {
        flag: "--share-max-assignment-interval-ms",
        property: Kafka("group.share.max.assignment.interval.ms"),
        about: "Largest share assignment interval",
        value: &Int::new("MS", 0, INT_MAX, |d| {
            &mut d.config.coordinator.group_config_bounds.share_assignment_interval_ms.max
        }),
    },
    ShareSessionTimeoutMs: Setting {
        flag: "--share-session-timeout-ms",
        property: Kafka("group.share.session.timeout.ms"),
        about: "How long a share member may go without a heartbeat before it is removed; \
                between its min and max",
        value: &Int::new("MS", 1, INT_MAX, |d| &mut d.config.coordinator.share.session_timeout_ms),
    },
    ShareMinSessionTimeoutMs: Setting {
        flag: "--share-min-session-timeout-ms",
        property: Kafka("group.share.min.session.timeout.ms"),
        about: "Smallest share session timeout",
        value: &Int::new("MS", 1, INT_MAX, |d| &mut d.config.coordinator.share.min_session_timeout_ms),
    },
    ShareMaxSessionTimeoutMs: Setting {
        flag: "--share-max-session-timeout-ms",
        property: Kafka("group.share.max.session.timeout.ms"),
        about: "Largest share session timeout",
        value: &Int::new("MS", 1, INT_MAX, |d| &mut d.config.coordinator.share.max_session_timeout_ms),
    },
    ShareHeartbeatIntervalMs: Setting {
        flag: "--share-heartbeat-interval-ms",
        property: Kafka("group.share.heartbeat.interval.ms"),
        about: "How often share members are told to heartbeat; between its min and max, below \
                the session timeout",
        value: &Int::new("MS", 1, INT_MAX, |d| &mut d.config.coordinator.share.heartbeat_interval_ms),
    },
    ShareMinHeartbeatIntervalMs: Setting {
        flag: "--share-min-heartbeat-interval-ms",
        property: Kafka("group.share.min.heartbeat.interval.ms"),
        about: "Smallest share heartbeat interval",
        value: &Int::new("MS", 1, INT_MAX, |d| &mut d.config.coordinator.share.min_heartbeat_interval_ms),
    },
    ShareMaxHeartbeatIntervalMs: Setting {
        flag: "--share-max-heartbeat-interval-ms",
        property: Kafka("group.share.max.heartbeat.interval.ms"),
        about: "Largest share heartbeat interval",
        value: &Int::new("MS", 1, INT_MAX, |d| &mut d.config.coordinator.share.max_heartbeat_interval_ms),
    },
    ShareGroupMaxSize: Setting {
        flag: "--share-group-max-size",
        property: Kafka("group.share.max.size"),
        about: "Most members a share group accepts (at most 1000)",
        value: &Int::new("N", 1, 1000, |d| &mut d.config.coordinator.share.max_size),
    },
    ShareInitializeRetryIntervalMs: Setting {
        flag: "--share-initialize-retry-interval-ms",
        property: Kafka("group.share.initialize.retry.interval.ms"),
        about: "How long a share partition's initialization may stay unanswered before a \
                heartbeat asks for it again",
        value: &Int::new("MS", 1, INT_MAX, |d| &mut d.config.coordinator.share.initialize_retry_interval_ms),
    },
    ShareRecordLockDurationMs: Setting {
        flag: "--share-record-lock-duration-ms",
        property: Kafka("group.share.record.lock.duration.ms"),
        about: "How long a record acquired by a share consumer stays locked to it; between its min and max",
        value: &Int::new("MS", 1_000, 3_600_000, |d| &mut d.config.coordinator.share.record_lock_duration_ms),
    },
    ShareMinRecordLockDurationMs: Setting {
        flag: "--share-min-record-lock-duration-ms",
        property: Kafka("group.share.min.record.lock.duration.ms"),
        about: "Shortest record lock a share group may set (share.record.lock.duration.ms)",
        value: &Int::new("MS", 1_000, 30_000, |d| &mut d.config.coordinator.share.min_record_lock_duration_ms),
    },
    ShareMaxRecordLockDurationMs: Setting {
        flag: "--share-max-record-lock-duration-ms",
        property: Kafka("group.share.max.record.lock.duration.ms"),
        about: "Longest record lock a share group may set",
        value: &Int::new("MS", 30_000, 3_600_000, |d| &mut d.config.coordinator.share.max_record_lock_duration_ms),
    },
    ShareDeliveryCountLimit: Setting {
        flag: "--share-delivery-count-limit",
        property: Kafka("group.share.delivery.count.limit"),
        about: "Deliveries of a record to share consumers before it is archived; between its min and max",
        value: &Int::new("N", 2, 10, |d| &mut d.config.coordinator.share.delivery_count_limit),
    },
    ShareMinDeliveryCountLimit: Setting {
        flag: "--share-min-delivery-count-limit",
        property: Kafka("group.share.min.delivery.count.limit"),
        about: "Smallest delivery count limit a share group may set",
        value: &Int::new("N", 2, 5, |d| &mut d.config.coordinator.share.min_delivery_count_limit),
    },
    ShareMaxDeliveryCountLimit: Setting {
        flag: "--share-max-delivery-count-limit",
        property: Kafka("group.share.max.delivery.count.limit"),
        about: "Largest delivery count limit a share group may set",
        value: &Int::new("N", 5, 25, |d| &mut d.config.coordinator.share.max_delivery_count_limit),
    },
    SharePartitionMaxRecordLocks: Setting {
        flag: "--share-partition-max-record-locks",
        property: Kafka("group.share.partition.max.record.locks"),
        about: "Records a share partition holds acquired at most; between its min and max",
        value: &Int::new("N", 100, 10_000, |d| &mut d.config.coordinator.share.partition_max_record_locks),
    },
    ShareMinPartitionMaxRecordLocks: Setting {
        flag: "--share-min-partition-max-record-locks",
        property: Kafka("group.share.min.partition.max.record.locks"),
        about: "Smallest in-flight record limit a share group may set",
        value: &Int::new("N", 100, 2_000, |d| &mut d.config.coordinator.share.min_partition_max_record_locks),
    },
    ShareMaxPartitionMaxRecordLocks: Setting {
        flag: "--share-max-partition-max-record-locks",
        property: Kafka("group.share.max.partition.max.record.locks"),
        about: "Largest in-flight record limit a share group may set",
        value: &Int::new("N", 2_000, 10_000, |d| &mut d.config.coordinator.share.max_partition_max_record_locks),
    },
    ShareMaxShareSessions: Setting {
        flag: "--share-max-share-sessions",
        property: Kafka("group.share.max.share.sessions"),
        about: "Most share sessions (ShareFetch) the node holds",
        value: &Int::new("N", 1, INT_MAX, |d| &mut d.config.max_share_sessions),
    },
    OffsetsRetentionMinutes: Setting {
        flag: "--offsets-retention-minutes",
        property: Kafka("offsets.retention.minutes"),
        about: "How long the committed offsets of a group are kept once it is empty (KIP-211)",
        // Kept in milliseconds, as the coordinator counts.
        value: &Int::new("MINUTES", 1, INT_MAX, |d| &mut d.config.coordinator.offset_retention_ms)
            .scaled(60_000),
    },
    OffsetsRetentionCheckIntervalMs: Setting {
        flag: "--offsets-retention-check-interval-ms",
        property: Kafka("offsets.retention.check.interval.ms"),
        about: "Period of the job that removes expired offsets",
        value: &Int::new("MS", 1, MAX_LONG_MS, |d| {
            &mut d.config.coordinator.offsets_retention_check_interval_ms
        }),
    },
    OffsetMetadataMaxBytes: Setting {
        flag: "--offset-metadata-max-bytes",
        property: Kafka("offset.metadata.max.bytes"),
        about: "Longest metadata string an offset commit may carry (in UTF-16 units, as Java counts)",
        value: &Int::new("N", 0, INT_MAX, |d| &mut d.config.coordinator.offset_metadata_max_bytes),
    },
    OffsetsTopicNumPartitions: Setting {
        flag: "--offsets-topic-num-partitions",
        property: Kafka("offsets.topic.num.partitions"),
        about: "Coordinator partitions the groups are spread over; must not change for an \
                existing data directory",
        value: &Int::new("N", 1, SledOptions::MAX_PARTITIONS as i64, |d| &mut d.config.partitions),
    },
    // Connection limits of 0 would refuse every client (Kafka needs per-listener
    // overrides to make sense of them), so they start at 1.
    MaxConnections: Setting {
        flag: "--max-connections",
        property: Kafka("max.connections"),
        about: "Connections open at once; one more is closed on accept",
        value: &Int::new("N", 1, INT_MAX, |d| &mut d.config.limits.max_connections),
    },
    MaxConnectionsPerIp: Setting {
        flag: "--max-connections-per-ip",
        property: Kafka("max.connections.per.ip"),
        about: "Connections open at once from one client address",
        value: &Int::new("N", 1, INT_MAX, |d| &mut d.config.limits.max_connections_per_ip),
    },
    MaxInFlightRequestsPerConnection: Setting {
        flag: "--max-in-flight-requests-per-connection",
        property: Ours("max.in.flight.requests.per.connection"),
        about: "Requests read from one connection whose responses are not written yet; the \
                connection is not read further until one is",
        value: &Int::new("N", 1, INT_MAX, |d| &mut d.config.limits.max_in_flight_per_connection),
    },
    ConnectionsMaxIdleMs: Setting {
        flag: "--connections-max-idle-ms",
        property: Kafka("connections.max.idle.ms"),
        about: "A connection with nothing in flight and nothing read for this long is closed",
        value: &Int::new("MS", 1, MAX_LONG_MS, |d| &mut d.config.limits.connections_max_idle),
    },
    RequestReadTimeoutMs: Setting {
        flag: "--request-read-timeout-ms",
        property: Ours("request.read.timeout.ms"),
        about: "A request that has begun to arrive must arrive whole within this time, or its \
                connection is closed",
        value: &Int::new("MS", 1, MAX_LONG_MS, |d| &mut d.config.limits.request_read_timeout),
    },
    MaxFrameBytes: Setting {
        flag: "--max-frame-bytes",
        property: Kafka("socket.request.max.bytes"),
        about: "Largest request frame; a bigger one closes its connection",
        // 64 bytes hold any request header; smaller frames would refuse every request.
        value: &Int::new("N", 64, INT_MAX, |d| &mut d.config.limits.max_frame_bytes),
    },
    QueuedMaxRequestBytes: Setting {
        flag: "--queued-max-request-bytes",
        property: Kafka("queued.max.request.bytes"),
        about: "Request bytes all connections together may hold before they are handled; a \
                request over 4 KiB reserves its announced length and its connection is not read \
                until it fits (a request longer than the budget waits for all of it)",
        value: &Int::new("BYTES", 64, INT_MAX, |d| &mut d.config.limits.queued_max_request_bytes),
    },
    QueuedMaxResponseBytesPerConnection: Setting {
        flag: "--queued-max-response-bytes-per-connection",
        property: Ours("queued.max.response.bytes.per.connection"),
        about: "Reply bytes one connection may have unwritten; above it the connection is not \
                read until its client reads",
        value: &Int::new("BYTES", 1, INT_MAX, |d| &mut d.config.limits.queued_max_response_bytes_per_connection),
    },
    QueuedMaxResponseBytes: Setting {
        flag: "--queued-max-response-bytes",
        property: Ours("queued.max.response.bytes"),
        about: "Reply bytes all connections together may have unwritten; above it no connection \
                with a reply of its own unwritten is read",
        value: &Int::new("BYTES", 1, INT_MAX, |d| &mut d.config.limits.queued_max_response_bytes),
    },
    TlsCert: Setting {
        flag: "--tls-cert",
        property: Ours("tls.cert.file"),
        about: "PEM certificate chain of the listener: clients connect with TLS 1.2 or 1.3 (SSL, or \
                SASL_SSL with --sasl-mechanisms); needs --tls-key",
        value: &path(|d| &mut d.parts.tls_cert),
    },
    TlsKeyFile: Setting {
        flag: "--tls-key",
        property: Ours("tls.key.file"),
        about: "PEM private key of --tls-cert",
        value: &path(|d| &mut d.parts.tls_key),
    },
    TlsClientCa: Setting {
        flag: "--tls-client-ca",
        property: Ours("tls.client.ca.file"),
        about: "PEM certificates of the authorities client certificates must chain to: every \
                client must present one (ssl.client.auth=required), and without SASL it \
                authenticates as User:<certificate subject>",
        value: &path(|d| &mut d.parts.tls_client_ca),
    },
    SaslMechanisms: Setting {
        flag: "--sasl-mechanisms",
        property: Kafka("sasl.enabled.mechanisms"),
        about: "SASL mechanisms every client must authenticate with, comma-separated: PLAIN, \
                SCRAM-SHA-256, SCRAM-SHA-512; needs --sasl-users. Re-authentication (KIP-368) is \
                not supported",
        value: &Parsed::new("LIST", |d| &mut d.parts.sasl_mechanisms, mechanisms),
    },
    SaslUsers: Setting {
        flag: "--sasl-users",
        property: Ours("sasl.users.file"),
        about: "Credentials file of the SASL users (salted, never plaintext), made by \
                `group-server users add`",
        value: &path(|d| &mut d.parts.sasl_users),
    },
    FailedAuthenticationDelayMs: Setting {
        flag: "--failed-authentication-delay-ms",
        property: Kafka("connection.failed.authentication.delay.ms"),
        about: "How long the answer to a failed authentication is held before the connection closes",
        value: &Int::new("MS", 0, INT_MAX, |d| &mut d.config.security.failed_authentication_delay),
    },
    AclFile: Setting {
        flag: "--acl-file",
        property: Ours("acl.file"),
        about: "Kafka-style ACL file every request is authorized against, reloaded on SIGHUP; \
                without it everything is allowed",
        value: &path(|d| &mut d.config.security.acl_file),
    },
    SuperUsers: Setting {
        flag: "--super-users",
        property: Kafka("super.users"),
        about: "Principals allowed everything whatever the ACLs say, semicolon-separated, e.g. \
                User:admin;User:ops",
        value: &Parsed::new("LIST", |d| &mut d.config.security.super_users, super_users),
    },
    MetricsListen: Setting {
        flag: "--metrics-listen",
        property: Ours("metrics.listen"),
        about: "Address of the HTTP endpoint serving Prometheus metrics on /metrics",
        value: &Parsed::new("HOST:PORT", |d| &mut d.config.metrics_listen, optional_listen),
    },
    LogFormat: Setting {
        flag: "--log-format",
        property: Ours("log.format"),
        about: "Log lines on stderr as human text or JSON (one object a line); the level comes \
                from RUST_LOG",
        value: &Parsed::new("FORMAT", |d| &mut d.config.log_format, |raw| parse_as(raw, "human or json"))
            .shown(),
    },
    Cluster: Setting {
        flag: "--cluster",
        property: Ours("cluster"),
        about: "Run as one node of a cluster over etcd (needs --etcd, a unique --node-id and an \
                --advertise clients reach): groups are spread over the live nodes and a dead \
                node's move to the others; not with --memory or --data-dir",
        value: &Switch { field: |d| &mut d.parts.cluster },
    },
    Etcd: Setting {
        flag: "--etcd",
        property: Ours("etcd.endpoints"),
        about: "The etcd cluster's client endpoints, comma-separated, e.g. \
                http://10.0.0.1:2379,http://10.0.0.2:2379",
        value: &Parsed::new("ENDPOINTS", |d| &mut d.parts.etcd.endpoints, endpoints),
    },
    ClusterPrefix: Setting {
        flag: "--cluster-prefix",
        property: Ours("cluster.prefix"),
        about: "The etcd key prefix of this cluster's keys (several clusters can share an etcd)",
        value: &Parsed::new("PREFIX", |d| &mut d.parts.etcd.prefix, prefix).shown(),
    },
    LeaseTtlSecs: Setting {
        flag: "--lease-ttl-secs",
        property: Ours("cluster.lease.ttl.secs"),
        about: "Seconds a node that stops renewing its etcd lease (killed, paused, cut off) keeps \
                its groups before other nodes take them over",
        value: &Int::new("SECS", 1, 3_600, |d| &mut d.parts.etcd.lease_ttl_secs),
    },
    EtcdTransactionsInFlight: Setting {
        flag: "--etcd-transactions-in-flight",
        property: Ours("etcd.transactions.in.flight"),
        about: "Transactions of offset and group writes in flight to etcd at once; the writes of \
                every partition waiting meanwhile go together in the next one (fewer gathers more \
                writes per transaction, so etcd does less work per write); unset, the etcd store \
                chooses (see docs/SCALING.md)",
        value: &Int::new("N", 1, 64, |d| &mut d.parts.etcd.transactions_in_flight),
    },
}

/// Properties that name a setting under another name.
pub(super) const ALIASES: &[(&str, Key)] = &[("broker.id", Key::NodeId)];

impl Key {
    /// The declaration of this setting.
    pub(super) fn setting(self) -> &'static Setting {
        &SETTINGS[self as usize]
    }
}

impl Setting {
    /// The flag without its dashes, which is also its clap id.
    pub(super) fn long(&self) -> &'static str {
        self.flag.trim_start_matches('-')
    }

    /// The default as `--help` shows it; `None` for settings that are off or empty by
    /// default. It is read from the field the setting fills, so it cannot drift from the
    /// code.
    pub(super) fn default_text(&self) -> Option<String> {
        self.value.show(&mut Draft::default())
    }

    /// The help line: what the setting does, its property and its default.
    pub(super) fn help(&self) -> String {
        let kind = match self.property {
            Kafka(_) => "Kafka",
            Ours(_) => "property",
        };
        let mut help = format!("{} [{kind}: {}]", self.about, self.property.name());
        if let Some(default) = self.default_text() {
            let _ = write!(help, " [default: {default}]");
        }
        help
    }
}

/// The reference list of every setting, as a Markdown table (for the README and the
/// operator's documentation): flag, property, default, accepted integers and what it does.
pub(super) fn reference() -> String {
    let mut out =
        String::from("| Flag | Property | Default | Range | What it sets |\n|---|---|---|---|---|\n");
    for setting in SETTINGS {
        let flag = match setting.value.shape() {
            Shape::Switch => setting.flag.to_owned(),
            Shape::One(name) | Shape::Repeated(name) => format!("{} {name}", setting.flag),
        };
        let property = match setting.property {
            Kafka(name) => format!("`{name}` (Kafka)"),
            Ours(name) => format!("`{name}`"),
        };
        let default = setting.default_text().map_or_else(String::new, |d| format!("`{d}`"));
        let range = setting.value.bounds().map_or_else(String::new, |(min, max)| format!("{min} to {max}"));
        let _ = writeln!(out, "| `{flag}` | {property} | {default} | {range} | {} |", setting.about);
    }
    for (alias, key) in ALIASES {
        let _ = writeln!(
            out,
            "\n`{alias}` is read as `{}` in a configuration file.",
            key.setting().property.name()
        );
    }
    out
}

#[cfg(test)]
#[path = "settings_tests.rs"]
mod tests;
