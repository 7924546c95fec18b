//! From the values given to a [`ServerConfig`]: each one parsed and range-checked by its
//! declaration (`settings`), then the settings that relate to each other checked together
//! and assembled, every error naming the settings as the user wrote them and what they
//! expect.

use super::layer::{Layer, Raw};
use super::settings::Key;
use super::value::Draft;
use crate::{ConfigError, SaslConfig, SecurityConfig, ServerConfig, StorageMode, TlsConfig};

/// Builds the configuration the layer describes, from [`ServerConfig::default`] for what
/// it does not set.
pub(super) fn resolve(layer: &Layer) -> Result<ServerConfig, ConfigError> {
    let mut draft = fill(layer)?;
    let c = &draft.config;
    if c.listen.ip().is_unspecified() && c.advertise.is_none() {
        // Clients would be told to connect to 0.0.0.0, which reaches no remote host.
        let setting = layer.get(Key::Listen).map_or("--listen", |raw| raw.name.as_str()).to_owned();
        let error = ConfigError::WildcardWithoutAdvertise { setting, listen: c.listen };
        return Err(layer.get(Key::Listen).map_or(error.clone(), |raw| raw.locate(error)));
    }
    storage(layer, &mut draft)?;
    for &(low, high, expected) in ORDERED {
        if int(&mut draft, low) > int(&mut draft, high) {
            return Err(conflict(layer, &mut draft, low, high, expected));
        }
    }
    let (interval, session) = (Key::ConsumerHeartbeatIntervalMs, Key::ConsumerSessionTimeoutMs);
    if int(&mut draft, interval) >= int(&mut draft, session) {
        let expected = "a consumer heartbeat interval below the session timeout";
        return Err(conflict(layer, &mut draft, interval, session, expected));
    }
    // The core's own checks of the KIP-848 settings, which the ones above imply.
    draft.config.coordinator.consumer.validate().map_err(|e| ConfigError::Conflict {
        first: "the consumer group settings".into(),
        second: "each other".into(),
        expected: e.0,
    })?;
    let protocols = draft.parts.protocols;
    draft.config.coordinator.consumer.enabled = protocols.consumer;
    draft.config.coordinator.share.enabled = protocols.share;
    // The core's checks of the share-group settings.
    draft.config.coordinator.share.validate().map_err(|e| ConfigError::Conflict {
        first: "the share group settings".into(),
        second: "each other".into(),
        expected: e.0,
    })?;
    security(layer, &mut draft)?;
    check_schemes(layer, &draft.config.security)?;
    Ok(draft.config)
}

/// Every value of the layer parsed, checked and stored by its setting's declaration, in
/// the order of the declarations.
pub(super) fn fill(layer: &Layer) -> Result<Draft, ConfigError> {
    let mut draft = Draft::default();
    for (key, raw) in layer.iter() {
        key.setting().value.apply(raw, &mut draft)?;
    }
    Ok(draft)
}

/// The storage `--memory`, `--data-dir` and `--cluster` choose, one of them at most.
fn storage(layer: &Layer, draft: &mut Draft) -> Result<(), ConfigError> {
    let parts = &draft.parts;
    if !parts.cluster {
        // The cluster settings alone are refused: they would do nothing.
        for key in [Key::Etcd, Key::ClusterPrefix, Key::LeaseTtlSecs, Key::EtcdTransactionsInFlight] {
            if layer.get(key).is_some() {
                return Err(needs(layer, key, Key::Cluster, "a node that runs as part of a cluster"));
            }
        }
    } else if layer.get(Key::Etcd).is_none() {
        return Err(needs(layer, Key::Cluster, Key::Etcd, "the etcd cluster the nodes share"));
    }
    let memory = layer.get(Key::Memory).filter(|_| parts.memory);
    let dir = layer.get(Key::DataDir);
    if parts.cluster {
        if let (Some(switch), Some(local)) = (layer.get(Key::Cluster), memory.or(dir)) {
            return Err(ConfigError::Conflict {
                first: switch.label(),
                second: local.label(),
                expected: "one of the two: a cluster node keeps offsets in etcd, not locally".into(),
            });
        }
        draft.config.storage = StorageMode::Cluster(parts.etcd.clone());
        return Ok(());
    }
    match (memory, dir) {
        (Some(memory), Some(dir)) => Err(ConfigError::Conflict {
            first: memory.label(),
            second: dir.label(),
            expected: "one of the two: offsets are kept either in memory or in a data directory".into(),
        }),
        (Some(_), None) => {
            draft.config.storage = StorageMode::Memory;
            Ok(())
        }
        // A data directory is already in place, given or by default.
        (None, _) => Ok(()),
    }
}

/// Integer settings whose values must be in order (`low` <= `high`), as Kafka's
/// `GroupCoordinatorConfig` requires, with what a conflict expects.
const ORDERED: &[(Key, Key, &str)] = &[
    (
        Key::ConsumerMinAssignmentIntervalMs,
        Key::ConsumerAssignmentIntervalMs,
        "a consumer assignment interval no smaller than its minimum",
    ),
    (
        Key::ConsumerAssignmentIntervalMs,
        Key::ConsumerMaxAssignmentIntervalMs,
        "a consumer assignment interval no larger than its maximum",
    ),
    (
        Key::ShareMinAssignmentIntervalMs,
        Key::ShareAssignmentIntervalMs,
        "a share assignment interval no smaller than its minimum",
    ),
    (
        Key::ShareAssignmentIntervalMs,
        Key::ShareMaxAssignmentIntervalMs,
        "a share assignment interval no larger than its maximum",
    ),
    (
        Key::MinSessionTimeoutMs,
        Key::MaxSessionTimeoutMs,
        "a minimum session timeout no larger than the maximum (otherwise every JoinGroup is refused \
         with INVALID_SESSION_TIMEOUT)",
    ),
    (
        Key::ConsumerMinSessionTimeoutMs,
        Key::ConsumerMaxSessionTimeoutMs,
        "a minimum consumer session timeout no larger than the maximum",
    ),
    (
        Key::ConsumerMinSessionTimeoutMs,
        Key::ConsumerSessionTimeoutMs,
        "a consumer session timeout no smaller than its minimum",
    ),
    (
        Key::ConsumerSessionTimeoutMs,
        Key::ConsumerMaxSessionTimeoutMs,
        "a consumer session timeout no larger than its maximum",
    ),
    (
        Key::ConsumerMinHeartbeatIntervalMs,
        Key::ConsumerMaxHeartbeatIntervalMs,
        "a minimum consumer heartbeat interval no larger than the maximum",
    ),
    (
        Key::ConsumerMinHeartbeatIntervalMs,
        Key::ConsumerHeartbeatIntervalMs,
        "a consumer heartbeat interval no smaller than its minimum",
    ),
    (
        Key::ConsumerHeartbeatIntervalMs,
        Key::ConsumerMaxHeartbeatIntervalMs,
        "a consumer heartbeat interval no larger than its maximum",
    ),
];

/// The value of the integer setting `key` in `draft`.
fn int(draft: &mut Draft, key: Key) -> Option<i64> {
    key.setting().value.int(draft)
}

/// Two settings out of order, each named as given or as its value.
fn conflict(layer: &Layer, draft: &mut Draft, first: Key, second: Key, expected: &str) -> ConfigError {
    ConfigError::Conflict {
        first: label(layer, draft, first),
        second: label(layer, draft, second),
        expected: expected.to_owned(),
    }
}

/// How a conflict names a setting: as given, or as its default when it was not.
fn label(layer: &Layer, draft: &mut Draft, key: Key) -> String {
    match layer.get(key) {
        Some(raw) => raw.label(),
        None => {
            let value = key.setting().value.show(draft).unwrap_or_default();
            format!("the default {}={value}", key.setting().property.name())
        }
    }
}

/// TLS and SASL, each checked for the settings it needs.
fn security(layer: &Layer, draft: &mut Draft) -> Result<(), ConfigError> {
    let parts = &draft.parts;
    let security = &mut draft.config.security;
    security.tls = match (&parts.tls_cert, &parts.tls_key) {
        (Some(cert), Some(key)) => {
            Some(TlsConfig { cert: cert.clone(), key: key.clone(), client_ca: parts.tls_client_ca.clone() })
        }
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
    if security.tls.is_none() && parts.tls_client_ca.is_some() {
        return Err(needs(
            layer,
            Key::TlsClientCa,
            Key::TlsCert,
            "client certificates are asked for over TLS only",
        ));
    }
    security.sasl = match (&parts.sasl_mechanisms, &parts.sasl_users) {
        (Some(mechanisms), Some(users)) => {
            Some(SaslConfig { mechanisms: mechanisms.clone(), users: users.clone() })
        }
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
    Ok(())
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
                "PLAINTEXT" => "no --tls-cert and no --sasl-mechanisms are set",
                "SSL" => "--tls-cert is set and --sasl-mechanisms is not",
                "SASL_PLAINTEXT" => "--sasl-mechanisms is set and --tls-cert is not",
                _ => "--tls-cert and --sasl-mechanisms are both set",
            };
            return Err(
                raw.bad(format!("{protocol}://HOST:PORT or HOST:PORT: the listener is {protocol} ({why})"))
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::layer::Origin;
    use crate::config::value::MAX_LONG_MS;

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
