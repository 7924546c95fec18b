//! From the values given to a [`ServerConfig`]: each one parsed and range-checked, related
//! ones checked together, every error naming the setting as the user wrote it and what it
//! expects.
//!
//! Ranges follow Kafka's `KafkaConfig` and `GroupCoordinatorConfig` where they define one
//! (`group.max.size` at least 1, `offsets.retention.minutes` at least 1, ...), and are
//! narrower where this node cannot honour Kafka's: a connection limit of 0 would refuse
//! every client (Kafka needs per-listener overrides to make sense of it), and millisecond
//! settings Kafka types as `long` stop at a year, so that deadline arithmetic cannot
//! overflow.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

use group_storage_sled::SledOptions;

use super::settings::{Key, Layer, Origin, Raw};
use crate::{
    ClusterSettings, ConfigError, SaslConfig, SaslMechanism, SecurityConfig, ServerConfig, StorageMode,
    TlsConfig, TopicSpec,
};

const INT_MAX: i64 = i32::MAX as i64;

/// The longest duration a `long` millisecond setting may have: a year.
const MAX_LONG_MS: i64 = 365 * 24 * 3_600_000;

const LISTEN_EXPECTED: &str = "HOST:PORT with an IP address or a host name, e.g. 127.0.0.1:9092, \
                               [::1]:9092 or localhost:9092 (port 0 picks a free port)";

const ADVERTISE_EXPECTED: &str =
    "HOST:PORT clients can connect to, e.g. broker1.example.com:9092 or 192.0.2.7:9092";

/// Builds the configuration the layer describes, from [`ServerConfig::default`] for what
/// it does not set.
pub(super) fn resolve(layer: &Layer) -> Result<ServerConfig, ConfigError> {
    let mut c = ServerConfig::default();
    if let Some(raw) = layer.get(Key::Listen) {
        c.listen = listen(raw)?;
    }
    c.advertise = layer.get(Key::Advertise).map(advertise).transpose()?;
    if c.listen.ip().is_unspecified() && c.advertise.is_none() {
        // Clients would be told to connect to 0.0.0.0, which reaches no remote host.
        let setting = layer.get(Key::Listen).map_or("--listen", |raw| raw.name.as_str()).to_owned();
        let error = ConfigError::WildcardWithoutAdvertise { setting, listen: c.listen };
        return Err(layer.get(Key::Listen).map_or(error.clone(), |raw| raw.locate(error)));
    }
    c.topics = topics(layer)?;
    c.storage = storage(layer)?.unwrap_or(c.storage);
    c.node_id = int(layer, Key::NodeId, 0, INT_MAX)?.unwrap_or(c.node_id);
    c.request_log = layer.get(Key::RequestLog).map(path).transpose()?.or(c.request_log);

    let co = &mut c.coordinator;
    co.initial_rebalance_delay_ms =
        int(layer, Key::InitialRebalanceDelayMs, 0, INT_MAX)?.unwrap_or(co.initial_rebalance_delay_ms);
    co.min_session_timeout_ms =
        int(layer, Key::MinSessionTimeoutMs, 0, INT_MAX)?.unwrap_or(co.min_session_timeout_ms);
    co.max_session_timeout_ms =
        int(layer, Key::MaxSessionTimeoutMs, 0, INT_MAX)?.unwrap_or(co.max_session_timeout_ms);
    if co.min_session_timeout_ms > co.max_session_timeout_ms {
        return Err(ConfigError::Conflict {
            first: label(layer, Key::MinSessionTimeoutMs, co.min_session_timeout_ms),
            second: label(layer, Key::MaxSessionTimeoutMs, co.max_session_timeout_ms),
            expected: "a minimum session timeout no larger than the maximum (otherwise every \
                       JoinGroup is refused with INVALID_SESSION_TIMEOUT)"
                .into(),
        });
    }
    co.group_max_size = int(layer, Key::GroupMaxSize, 1, INT_MAX)?.unwrap_or(co.group_max_size);
    consumer(layer, &mut co.consumer)?;
    if let Some(minutes) = int::<i64>(layer, Key::OffsetsRetentionMinutes, 1, INT_MAX)? {
        co.offset_retention_ms = minutes * 60_000;
    }
    co.offsets_retention_check_interval_ms =
        int(layer, Key::OffsetsRetentionCheckIntervalMs, 1, MAX_LONG_MS)?
            .unwrap_or(co.offsets_retention_check_interval_ms);
    co.offset_metadata_max_bytes =
        int(layer, Key::OffsetMetadataMaxBytes, 0, INT_MAX)?.unwrap_or(co.offset_metadata_max_bytes);
    c.partitions = int(layer, Key::OffsetsTopicNumPartitions, 1, i64::from(SledOptions::MAX_PARTITIONS))?
        .unwrap_or(c.partitions);

    let limits = &mut c.limits;
    limits.max_connections = int(layer, Key::MaxConnections, 1, INT_MAX)?.unwrap_or(limits.max_connections);
    limits.max_connections_per_ip =
        int(layer, Key::MaxConnectionsPerIp, 1, INT_MAX)?.unwrap_or(limits.max_connections_per_ip);
    limits.max_in_flight_per_connection = int(layer, Key::MaxInFlightRequestsPerConnection, 1, INT_MAX)?
        .unwrap_or(limits.max_in_flight_per_connection);
    if let Some(ms) = int(layer, Key::ConnectionsMaxIdleMs, 1, MAX_LONG_MS)? {
        limits.connections_max_idle = Duration::from_millis(ms);
    }
    if let Some(ms) = int(layer, Key::RequestReadTimeoutMs, 1, MAX_LONG_MS)? {
        limits.request_read_timeout = Duration::from_millis(ms);
    }
    // 64 bytes hold any request header; smaller frames would refuse every request.
    limits.max_frame_bytes = int(layer, Key::MaxFrameBytes, 64, INT_MAX)?.unwrap_or(limits.max_frame_bytes);

    c.security = security(layer)?;
    check_schemes(layer, &c.security)?;
    c.metrics_listen = layer.get(Key::MetricsListen).map(listen).transpose()?;
    if let Some(raw) = layer.get(Key::LogFormat) {
        c.log_format = raw.value.trim().parse().map_err(|()| raw.bad("human or json"))?;
    }
    Ok(c)
}

/// The KIP-848 settings (`group.coordinator.rebalance.protocols`, `group.consumer.*`), with
/// Kafka's `GroupCoordinatorConfig` checks: every value at least 1, each session timeout
/// and heartbeat interval within its min and max, the interval below the session timeout.
fn consumer(layer: &Layer, cg: &mut group_coordinator::ConsumerGroupConfig) -> Result<(), ConfigError> {
    if let Some(raw) = layer.get(Key::RebalanceProtocols) {
        cg.enabled = rebalance_protocols(raw)?;
    }
    let pairs = [
        (Key::ConsumerSessionTimeoutMs, &mut cg.session_timeout_ms),
        (Key::ConsumerMinSessionTimeoutMs, &mut cg.min_session_timeout_ms),
        (Key::ConsumerMaxSessionTimeoutMs, &mut cg.max_session_timeout_ms),
        (Key::ConsumerHeartbeatIntervalMs, &mut cg.heartbeat_interval_ms),
        (Key::ConsumerMinHeartbeatIntervalMs, &mut cg.min_heartbeat_interval_ms),
        (Key::ConsumerMaxHeartbeatIntervalMs, &mut cg.max_heartbeat_interval_ms),
        (Key::ConsumerGroupMaxSize, &mut cg.max_size),
    ];
    for (key, value) in pairs {
        *value = int(layer, key, 1, INT_MAX)?.unwrap_or(*value);
    }
    if let Some(raw) = layer.get(Key::ConsumerMigrationPolicy) {
        cg.migration_policy =
            raw.value.trim().parse().map_err(|_| raw.bad("disabled, upgrade, downgrade or bidirectional"))?;
    }
    if let Some(raw) = layer.get(Key::ConsumerAssignors) {
        cg.assignors = assignors(raw)?;
    }
    cg.regex_refresh_interval_ms = int(layer, Key::ConsumerRegexRefreshIntervalMs, 10_000, MAX_LONG_MS)?
        .unwrap_or(cg.regex_refresh_interval_ms);
    // Each pair must be in order (`low` <= `high`), as Kafka requires.
    let ordered = [
        (
            Key::ConsumerMinSessionTimeoutMs,
            cg.min_session_timeout_ms,
            Key::ConsumerMaxSessionTimeoutMs,
            cg.max_session_timeout_ms,
            "a minimum consumer session timeout no larger than the maximum",
        ),
        (
            Key::ConsumerMinSessionTimeoutMs,
            cg.min_session_timeout_ms,
            Key::ConsumerSessionTimeoutMs,
            cg.session_timeout_ms,
            "a consumer session timeout no smaller than its minimum",
        ),
        (
            Key::ConsumerSessionTimeoutMs,
            cg.session_timeout_ms,
            Key::ConsumerMaxSessionTimeoutMs,
            cg.max_session_timeout_ms,
            "a consumer session timeout no larger than its maximum",
        ),
        (
            Key::ConsumerMinHeartbeatIntervalMs,
            cg.min_heartbeat_interval_ms,
            Key::ConsumerMaxHeartbeatIntervalMs,
            cg.max_heartbeat_interval_ms,
            "a minimum consumer heartbeat interval no larger than the maximum",
        ),
        (
            Key::ConsumerMinHeartbeatIntervalMs,
            cg.min_heartbeat_interval_ms,
            Key::ConsumerHeartbeatIntervalMs,
            cg.heartbeat_interval_ms,
            "a consumer heartbeat interval no smaller than its minimum",
        ),
        (
            Key::ConsumerHeartbeatIntervalMs,
            cg.heartbeat_interval_ms,
            Key::ConsumerMaxHeartbeatIntervalMs,
            cg.max_heartbeat_interval_ms,
            "a consumer heartbeat interval no larger than its maximum",
        ),
    ];
    for (low_key, low, high_key, high, expected) in ordered {
        if low > high {
            return Err(conflict(layer, (low_key, low), (high_key, high), expected));
        }
    }
    if cg.heartbeat_interval_ms >= cg.session_timeout_ms {
        return Err(conflict(
            layer,
            (Key::ConsumerHeartbeatIntervalMs, cg.heartbeat_interval_ms),
            (Key::ConsumerSessionTimeoutMs, cg.session_timeout_ms),
            "a consumer heartbeat interval below the session timeout",
        ));
    }
    // The core's own checks, which the ones above imply.
    cg.validate().map_err(|e| ConfigError::Conflict {
        first: "the consumer group settings".into(),
        second: "each other".into(),
        expected: e.0,
    })
}

/// `group.coordinator.rebalance.protocols`: whether `consumer` is among them.
fn rebalance_protocols(raw: &Raw) -> Result<bool, ConfigError> {
    let expected = "a comma-separated list of classic and consumer, with classic (Kafka does not \
                    support disabling the classic protocol)";
    let mut classic = false;
    let mut consumer = false;
    for name in raw.value.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        match name.to_ascii_lowercase().as_str() {
            "classic" => classic = true,
            "consumer" => consumer = true,
            _ => return Err(raw.bad(expected)),
        }
    }
    if !classic {
        return Err(raw.bad(expected));
    }
    Ok(consumer)
}

/// `group.consumer.assignors`: the built-in server assignors by short name, at least
/// one, none twice (Kafka 4.2 refuses duplicates). Kafka also takes class names of
/// custom assignors; this node has only the built-ins.
fn assignors(raw: &Raw) -> Result<Vec<String>, ConfigError> {
    let expected = "a comma-separated list of uniform and range, each once";
    let mut names: Vec<String> = Vec::new();
    for name in raw.value.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        if group_assignors::server::server_assignor(name).is_none() || names.iter().any(|n| n == name) {
            return Err(raw.bad(expected));
        }
        names.push(name.to_owned());
    }
    if names.is_empty() {
        return Err(raw.bad(expected));
    }
    Ok(names)
}

/// Two settings out of order, each named as given or as its default.
fn conflict(layer: &Layer, first: (Key, i32), second: (Key, i32), expected: &str) -> ConfigError {
    ConfigError::Conflict {
        first: label(layer, first.0, first.1),
        second: label(layer, second.0, second.1),
        expected: expected.to_owned(),
    }
}

/// TLS, SASL and ACLs, each checked for the settings it needs.
fn security(layer: &Layer) -> Result<SecurityConfig, ConfigError> {
    let mut security = SecurityConfig::default();
    let given = |key| layer.get(key).map(path).transpose();
    security.tls = match (given(Key::TlsCert)?, given(Key::TlsKeyFile)?) {
        (Some(cert), Some(key)) => Some(TlsConfig { cert, key, client_ca: given(Key::TlsClientCa)? }),
        (None, None) => None,
        (cert, _) => {
            let (have, missing) = if cert.is_some() {
                (Key::TlsCert, Key::TlsKeyFile)
            } else {
                (Key::TlsKeyFile, Key::TlsCert)
            };
            return Err(needs(layer, have, missing, "a certificate and its private key, both PEM files"));
        }
    };
    if security.tls.is_none() && layer.get(Key::TlsClientCa).is_some() {
        return Err(needs(
            layer,
            Key::TlsClientCa,
            Key::TlsCert,
            "client certificates are asked for over TLS only",
        ));
    }
    let mechanisms = layer.get(Key::SaslMechanisms).map(mechanisms).transpose()?;
    security.sasl = match (mechanisms, given(Key::SaslUsers)?) {
        (Some(mechanisms), Some(users)) => Some(SaslConfig { mechanisms, users }),
        (None, None) => None,
        (Some(_), None) => {
            return Err(needs(
                layer,
                Key::SaslMechanisms,
                Key::SaslUsers,
                "the users clients authenticate as",
            ));
        }
        (None, Some(_)) => {
            return Err(needs(
                layer,
                Key::SaslUsers,
                Key::SaslMechanisms,
                "the mechanisms clients authenticate with",
            ));
        }
    };
    if let Some(ms) = int(layer, Key::FailedAuthenticationDelayMs, 0, INT_MAX)? {
        security.failed_authentication_delay = Duration::from_millis(ms);
    }
    security.acl_file = given(Key::AclFile)?;
    if let Some(raw) = layer.get(Key::SuperUsers) {
        security.super_users = super_users(raw)?;
    }
    Ok(security)
}

/// The error for a setting given without one it needs.
fn needs(layer: &Layer, have: Key, missing: Key, why: &str) -> ConfigError {
    let first = layer.get(have).map_or_else(|| have.setting().flag.to_owned(), Raw::label);
    ConfigError::Conflict {
        first,
        second: format!("no {}", missing.setting().flag),
        expected: format!("{} as well: {why}", missing.setting().flag),
    }
}

fn mechanisms(raw: &Raw) -> Result<Vec<SaslMechanism>, ConfigError> {
    let expected = "a comma-separated list of PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512";
    let mut list = Vec::new();
    for name in raw.value.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let mechanism: SaslMechanism = name.parse().map_err(|()| raw.bad(expected))?;
        if !list.contains(&mechanism) {
            list.push(mechanism);
        }
    }
    if list.is_empty() {
        return Err(raw.bad(expected));
    }
    Ok(list)
}

/// Kafka's `super.users`: `User:a;User:b`, each a principal type and a name.
fn super_users(raw: &Raw) -> Result<Vec<String>, ConfigError> {
    let mut users = Vec::new();
    for principal in raw.value.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        match principal.split_once(':') {
            Some((kind, name)) if !kind.is_empty() && !name.is_empty() => users.push(principal.to_owned()),
            _ => return Err(raw.bad("semicolon-separated principals such as User:admin;User:ops")),
        }
    }
    Ok(users)
}

/// An integer setting within `min..=max`, if it is given.
fn int<T: TryFrom<i64>>(layer: &Layer, key: Key, min: i64, max: i64) -> Result<Option<T>, ConfigError> {
    let Some(raw) = layer.get(key) else { return Ok(None) };
    let expected = || {
        let note = if max == MAX_LONG_MS { " (a year)" } else { "" };
        raw.bad(format!("an integer from {min} to {max}{note}"))
    };
    let n: i64 = raw.value.trim().parse().map_err(|_| expected())?;
    if !(min..=max).contains(&n) {
        return Err(expected());
    }
    T::try_from(n).map(Some).map_err(|_| expected())
}

/// How a conflict names a setting: as given, or as its default when it was not.
fn label(layer: &Layer, key: Key, value: impl std::fmt::Display) -> String {
    match layer.get(key) {
        Some(raw) => raw.label(),
        None => format!("the default {}={value}", key.setting().property),
    }
}

fn listen(raw: &Raw) -> Result<SocketAddr, ConfigError> {
    let text = endpoint(raw)?;
    if let Ok(addr) = text.parse::<SocketAddr>() {
        return Ok(addr);
    }
    let (host, port) = split_host_port(text).ok_or_else(|| raw.bad(LISTEN_EXPECTED))?;
    let port: u16 = port.parse().map_err(|_| raw.bad(LISTEN_EXPECTED))?;
    if host.is_empty() {
        // Kafka binds every interface for a listener without a host.
        return Ok(SocketAddr::from(([0, 0, 0, 0], port)));
    }
    let unresolved = |reason: String| {
        raw.locate(ConfigError::Unresolved { setting: raw.name.clone(), value: raw.value.clone(), reason })
    };
    let addrs: Vec<SocketAddr> =
        (host, port).to_socket_addrs().map_err(|e| unresolved(e.to_string()))?.collect();
    // IPv4 first, as Java's InetAddress resolves a name by default.
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or(addrs.first())
        .copied()
        .ok_or_else(|| unresolved("no address".into()))
}

fn advertise(raw: &Raw) -> Result<(String, u16), ConfigError> {
    let text = endpoint(raw)?;
    let (host, port) = split_host_port(text).ok_or_else(|| raw.bad(ADVERTISE_EXPECTED))?;
    if host.is_empty() || host.chars().any(|c| c.is_whitespace() || c == '/') {
        return Err(raw.bad(ADVERTISE_EXPECTED));
    }
    if host.parse::<IpAddr>().is_ok_and(|ip| ip.is_unspecified()) {
        // KafkaConfig refuses the wildcard in advertised.listeners for the same reason.
        return Err(raw.bad(format!(
            "{ADVERTISE_EXPECTED}: {host} is a wildcard, an address no client can connect to"
        )));
    }
    match port.parse::<u16>() {
        Ok(port) if port != 0 => Ok((host.to_owned(), port)),
        _ => Err(raw.bad(format!("{ADVERTISE_EXPECTED}, with a port from 1 to 65535"))),
    }
}

/// The `HOST:PORT` of a listener, without the `PLAINTEXT://` (or `SSL://`,
/// `SASL_PLAINTEXT://`, `SASL_SSL://`) a file's `listeners` carries (accepted on the
/// command line too); [`check_schemes`] checks the scheme against the security settings.
fn endpoint(raw: &Raw) -> Result<&str, ConfigError> {
    let text = raw.value.trim();
    if text.contains(',') {
        return Err(raw.bad("a single HOST:PORT: this node has one listener"));
    }
    match text.split_once("://") {
        None => Ok(text),
        Some((scheme, rest)) if PROTOCOLS.iter().any(|p| scheme.eq_ignore_ascii_case(p)) => Ok(rest),
        Some(_) => {
            Err(raw.bad("HOST:PORT, or PLAINTEXT://, SSL://, SASL_PLAINTEXT:// or SASL_SSL:// and HOST:PORT"))
        }
    }
}

/// Kafka's listener security protocols.
const PROTOCOLS: [&str; 4] = ["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"];

/// The security protocol the settings make of the listener, as Kafka names it.
fn protocol(security: &SecurityConfig) -> &'static str {
    match (security.tls.is_some(), security.sasl.is_some()) {
        (false, false) => "PLAINTEXT",
        (true, false) => "SSL",
        (false, true) => "SASL_PLAINTEXT",
        (true, true) => "SASL_SSL",
    }
}

/// A scheme on `listeners` or `advertised.listeners` must be the protocol the TLS and
/// SASL settings give the listener: a client configured from it would otherwise speak
/// the wrong protocol.
fn check_schemes(layer: &Layer, security: &SecurityConfig) -> Result<(), ConfigError> {
    let protocol = protocol(security);
    for key in [Key::Listen, Key::Advertise] {
        let Some(raw) = layer.get(key) else { continue };
        let Some((scheme, _)) = raw.value.trim().split_once("://") else { continue };
        if !scheme.eq_ignore_ascii_case(protocol) {
            let why = match protocol {
                "PLAINTEXT" => "no --tls-cert and no --sasl-mechanisms are set".to_owned(),
                "SSL" => "--tls-cert is set and --sasl-mechanisms is not".to_owned(),
                "SASL_PLAINTEXT" => "--sasl-mechanisms is set and --tls-cert is not".to_owned(),
                _ => "--tls-cert and --sasl-mechanisms are both set".to_owned(),
            };
            return Err(
                raw.bad(format!("{protocol}://HOST:PORT or HOST:PORT: the listener is {protocol} ({why})"))
            );
        }
    }
    Ok(())
}

/// `host:port`, `[v6]:port` or `:port` split, brackets removed; `None` for anything else.
fn split_host_port(text: &str) -> Option<(&str, &str)> {
    if let Some(rest) = text.strip_prefix('[') {
        let (host, port) = rest.split_once("]:")?;
        return Some((host, port));
    }
    let (host, port) = text.rsplit_once(':')?;
    // An IPv6 address needs its brackets: which colon starts the port is otherwise a guess.
    (!host.contains(':')).then_some((host, port))
}

fn topics(layer: &Layer) -> Result<Vec<TopicSpec>, ConfigError> {
    let mut specs: Vec<TopicSpec> = Vec::new();
    for raw in layer.topics() {
        let spec: TopicSpec = raw.value.trim().parse().map_err(|e| raw.locate(e))?;
        if specs.iter().any(|s| s.name == spec.name) {
            return Err(raw.locate(ConfigError::DuplicateTopic(spec.name)));
        }
        specs.push(spec);
    }
    Ok(specs)
}

/// The storage the layer chooses, if it chooses one.
fn storage(layer: &Layer) -> Result<Option<StorageMode>, ConfigError> {
    let memory = layer.get(Key::Memory).map(|raw| boolean(raw).map(|on| (raw, on))).transpose()?;
    let dir = layer.get(Key::DataDir).map(|raw| path(raw).map(|dir| (raw, dir))).transpose()?;
    if let Some(cluster) = cluster(layer)? {
        let local = memory.filter(|(_, on)| *on).map(|(raw, _)| raw).or(dir.map(|(raw, _)| raw));
        if let (Some(local), Some(switch)) = (local, layer.get(Key::Cluster)) {
            return Err(ConfigError::Conflict {
                first: switch.label(),
                second: local.label(),
                expected: "one of the two: a cluster node keeps offsets in etcd, not locally".into(),
            });
        }
        return Ok(Some(StorageMode::Cluster(cluster)));
    }
    match (memory, dir) {
        (Some((memory, true)), Some((dir, _))) => Err(ConfigError::Conflict {
            first: memory.label(),
            second: dir.label(),
            expected: "one of the two: offsets are kept either in memory or in a data directory".into(),
        }),
        (Some((_, true)), None) => Ok(Some(StorageMode::Memory)),
        (_, Some((_, dir))) => Ok(Some(StorageMode::Sled(dir))),
        (Some((_, false)), None) | (None, None) => Ok(None),
    }
}

/// `--cluster` with its etcd endpoints, key prefix and lease TTL; `None` without
/// `--cluster` (the cluster settings alone are refused: they would do nothing).
fn cluster(layer: &Layer) -> Result<Option<ClusterSettings>, ConfigError> {
    let on = layer.get(Key::Cluster).map(boolean).transpose()?.unwrap_or(false);
    if !on {
        for key in [Key::Etcd, Key::ClusterPrefix, Key::LeaseTtlSecs] {
            if layer.get(key).is_some() {
                return Err(needs(layer, key, Key::Cluster, "a node that runs as part of a cluster"));
            }
        }
        return Ok(None);
    }
    let Some(raw) = layer.get(Key::Etcd) else {
        return Err(needs(layer, Key::Cluster, Key::Etcd, "the etcd cluster the nodes share"));
    };
    let endpoints: Vec<String> =
        raw.value.split(',').map(str::trim).filter(|e| !e.is_empty()).map(str::to_owned).collect();
    if endpoints.is_empty() || endpoints.iter().any(|e| e.contains(char::is_whitespace)) {
        return Err(raw.bad("comma-separated etcd client URLs, e.g. http://127.0.0.1:2379"));
    }
    let mut settings = ClusterSettings::new(endpoints);
    if let Some(raw) = layer.get(Key::ClusterPrefix) {
        let prefix = raw.value.trim().trim_end_matches('/');
        if prefix.is_empty() {
            return Err(raw.bad("a non-empty key prefix, e.g. /group-coordinator"));
        }
        settings.prefix = prefix.to_owned();
    }
    settings.lease_ttl_secs = int(layer, Key::LeaseTtlSecs, 1, 3_600)?.unwrap_or(settings.lease_ttl_secs);
    Ok(Some(settings))
}

fn boolean(raw: &Raw) -> Result<bool, ConfigError> {
    if raw.origin == Origin::Switch {
        return Ok(true);
    }
    match raw.value.trim() {
        v if v.eq_ignore_ascii_case("true") => Ok(true),
        v if v.eq_ignore_ascii_case("false") => Ok(false),
        _ => Err(raw.bad("true or false")),
    }
}

fn path(raw: &Raw) -> Result<PathBuf, ConfigError> {
    match raw.value.trim() {
        "" => Err(raw.bad("a path")),
        path => Ok(PathBuf::from(path)),
    }
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    #[rstest]
    #[case::v4("127.0.0.1:9092", Some(("127.0.0.1", "9092")))]
    #[case::name("localhost:1", Some(("localhost", "1")))]
    #[case::v6("[::1]:9092", Some(("::1", "9092")))]
    #[case::no_host(":9092", Some(("", "9092")))]
    #[case::bare_v6("::1:9092", None)]
    #[case::no_port("localhost", None)]
    #[case::unclosed("[::1:9092", None)]
    fn host_and_port_split(#[case] text: &str, #[case] expected: Option<(&str, &str)>) {
        assert_eq!(split_host_port(text), expected);
    }

    fn layer(key: Key, value: &str) -> Layer {
        let mut layer = Layer::default();
        layer.set(key, Raw { value: value.into(), name: key.setting().flag.into(), origin: Origin::Flag });
        layer
    }

    #[test]
    fn an_unset_setting_in_a_conflict_is_named_as_its_default() {
        let err = resolve(&layer(Key::MaxSessionTimeoutMs, "5000")).expect_err("conflict");
        let ConfigError::Conflict { first, second, .. } = err else { panic!("{err:?}") };
        assert_eq!(
            (first.as_str(), second.as_str()),
            ("the default group.min.session.timeout.ms=6000", "--max-session-timeout-ms 5000")
        );
    }

    #[test]
    fn long_millisecond_settings_stop_at_a_year() {
        assert!(resolve(&layer(Key::ConnectionsMaxIdleMs, &MAX_LONG_MS.to_string())).is_ok());
        let err =
            resolve(&layer(Key::ConnectionsMaxIdleMs, &(MAX_LONG_MS + 1).to_string())).expect_err("long");
        assert!(err.to_string().ends_with("expected an integer from 1 to 31536000000 (a year)"), "{err}");
    }
}
