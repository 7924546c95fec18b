//! The kinds of value a setting takes ([`Int`], [`Switch`], [`Parsed`], [`Topics`]), each
//! parsing its text, checking it, and storing it in the field the setting fills; and the
//! parsers of the values that are not plain integers.
//!
//! Ranges follow Kafka's `KafkaConfig` and `GroupCoordinatorConfig` where they define one
//! (`group.max.size` at least 1, `offsets.retention.minutes` at least 1, ...), and are
//! narrower where this node cannot honour Kafka's: millisecond settings Kafka types as
//! `long` stop at a year, so that deadline arithmetic cannot overflow.

use std::fmt;
use std::io;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use super::layer::{Origin, Raw};
use crate::{ClusterSettings, ConfigError, SaslMechanism, ServerConfig, TopicSpec};

/// The longest duration a `long` millisecond setting may have: a year.
pub(super) const MAX_LONG_MS: i64 = 365 * 24 * 3_600_000;

/// The configuration as the settings fill it, before the checks that relate settings to
/// each other (`validate`) assemble it.
#[derive(Debug, Default)]
pub(super) struct Draft {
    /// Every field a setting fills directly.
    pub(super) config: ServerConfig,
    /// The settings that make up a larger choice (storage, TLS, SASL) only together.
    pub(super) parts: Parts,
}

/// Values that become part of [`ServerConfig`] only once the settings that go with them
/// are known: `--tls-cert` is TLS only with `--tls-key`, `--etcd` is storage only with
/// `--cluster`.
#[derive(Debug)]
pub(super) struct Parts {
    /// The group protocols served besides classic.
    pub(super) protocols: Protocols,
    pub(super) memory: bool,
    pub(super) cluster: bool,
    /// The etcd endpoints, key prefix and lease, with their defaults.
    pub(super) etcd: ClusterSettings,
    pub(super) tls_cert: Option<PathBuf>,
    pub(super) tls_key: Option<PathBuf>,
    pub(super) tls_client_ca: Option<PathBuf>,
    pub(super) sasl_mechanisms: Option<Vec<SaslMechanism>>,
    pub(super) sasl_users: Option<PathBuf>,
}

impl Default for Parts {
    fn default() -> Parts {
        Parts {
            // Kafka 4.2 serves all three.
            protocols: Protocols { consumer: true, share: true },
            memory: false,
            cluster: false,
            etcd: ClusterSettings::new(Vec::new()),
            tls_cert: None,
            tls_key: None,
            tls_client_ca: None,
            sasl_mechanisms: None,
            sasl_users: None,
        }
    }
}

/// How a flag takes its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    /// No value: the flag alone turns the setting on (`true` or `false` in a file).
    Switch,
    /// One value, named so in `--help`.
    One(&'static str),
    /// Any number of values: the flag repeats, and a file gives them comma-separated.
    Repeated(&'static str),
}

/// A kind of value: how its text is parsed and checked, and where it is stored.
pub(super) trait Value: fmt::Debug {
    /// How the flag takes its value.
    fn shape(&self) -> Shape;

    /// Parses `raw`, checks it and stores it in its field of `draft`; an error names the
    /// setting as `raw` gives it.
    fn apply(&self, raw: &Raw, draft: &mut Draft) -> Result<(), ConfigError>;

    /// The field's value in `draft` as `--help` shows a default; `None` for a setting that
    /// is off or empty by default.
    fn show(&self, _: &mut Draft) -> Option<String> {
        None
    }

    /// The integers accepted, inclusive, for an integer setting.
    fn bounds(&self) -> Option<(i64, i64)> {
        None
    }

    /// The field's value in `draft`, for an integer setting.
    fn int(&self, _: &mut Draft) -> Option<i64> {
        None
    }
}

/// An integer from `min` to `max`, stored in a field of type `T` (a [`Duration`] counts
/// milliseconds).
#[derive(Debug)]
pub(super) struct Int<T: 'static> {
    /// How `--help` names the value (`MS`, `N`).
    name: &'static str,
    min: i64,
    max: i64,
    /// The field holds the value times this (minutes stored as milliseconds).
    scale: i64,
    field: fn(&mut Draft) -> &mut T,
}

impl<T> Int<T> {
    /// An integer from `min` to `max`, stored as is in `field`.
    pub(super) const fn new(
        name: &'static str,
        min: i64,
        max: i64,
        field: fn(&mut Draft) -> &mut T,
    ) -> Int<T> {
        Int { name, min, max, scale: 1, field }
    }

    /// The same, stored multiplied by `scale`.
    pub(super) const fn scaled(self, scale: i64) -> Int<T> {
        Int { scale, ..self }
    }
}

/// A field an integer setting fills.
pub(super) trait Integer: Sized + fmt::Debug {
    /// `n` as this type, if it fits.
    fn from_i64(n: i64) -> Option<Self>;
    /// This value as an `i64`, if it fits.
    fn to_i64(&self) -> Option<i64>;
}

macro_rules! integer {
    ($($t:ty),*) => {$(
        impl Integer for $t {
            fn from_i64(n: i64) -> Option<$t> {
                <$t>::try_from(n).ok()
            }
            fn to_i64(&self) -> Option<i64> {
                i64::try_from(*self).ok()
            }
        }
    )*};
}

integer!(i32, i64, u32, usize);

/// A setting whose absence leaves the choice to the layer below (the etcd store's
/// own default, say), so that default is written once, where it applies.
impl<T: Integer> Integer for Option<T> {
    fn from_i64(n: i64) -> Option<Option<T>> {
        T::from_i64(n).map(Some)
    }
    fn to_i64(&self) -> Option<i64> {
        self.as_ref().and_then(T::to_i64)
    }
}

impl Integer for Duration {
    fn from_i64(ms: i64) -> Option<Duration> {
        u64::try_from(ms).ok().map(Duration::from_millis)
    }
    fn to_i64(&self) -> Option<i64> {
        i64::try_from(self.as_millis()).ok()
    }
}

impl<T: Integer> Value for Int<T> {
    fn shape(&self) -> Shape {
        Shape::One(self.name)
    }

    fn apply(&self, raw: &Raw, draft: &mut Draft) -> Result<(), ConfigError> {
        let expected = || {
            let note = if self.max == MAX_LONG_MS { " (a year)" } else { "" };
            raw.bad(format!("an integer from {} to {}{note}", self.min, self.max))
        };
        let n: i64 = raw.value.trim().parse().map_err(|_| expected())?;
        if !(self.min..=self.max).contains(&n) {
            return Err(expected());
        }
        *(self.field)(draft) = n.checked_mul(self.scale).and_then(T::from_i64).ok_or_else(expected)?;
        Ok(())
    }

    fn show(&self, draft: &mut Draft) -> Option<String> {
        self.int(draft).map(|n| n.to_string())
    }

    fn bounds(&self) -> Option<(i64, i64)> {
        Some((self.min, self.max))
    }

    fn int(&self, draft: &mut Draft) -> Option<i64> {
        (self.field)(draft).to_i64().map(|n| n / self.scale)
    }
}

/// A setting that is on or off: a flag without a value, `true` or `false` in a file.
#[derive(Debug)]
pub(super) struct Switch {
    pub(super) field: fn(&mut Draft) -> &mut bool,
}

impl Value for Switch {
    fn shape(&self) -> Shape {
        Shape::Switch
    }

    fn apply(&self, raw: &Raw, draft: &mut Draft) -> Result<(), ConfigError> {
        let on = match raw.value.trim() {
            _ if raw.origin == Origin::Switch => true,
            v if v.eq_ignore_ascii_case("true") => true,
            v if v.eq_ignore_ascii_case("false") => false,
            _ => return Err(raw.bad("true or false")),
        };
        *(self.field)(draft) = on;
        Ok(())
    }
}

/// Any other value: `parse` makes it from the text, `show` shows the default.
#[derive(Debug)]
pub(super) struct Parsed<T: 'static> {
    /// How `--help` names the value (`PATH`, `HOST:PORT`).
    name: &'static str,
    field: fn(&mut Draft) -> &mut T,
    parse: fn(&Raw) -> Result<T, ConfigError>,
    show: fn(&T) -> Option<String>,
}

impl<T> Parsed<T> {
    /// A value `parse` makes, stored in `field`, which is off or empty by default.
    pub(super) const fn new(
        name: &'static str,
        field: fn(&mut Draft) -> &mut T,
        parse: fn(&Raw) -> Result<T, ConfigError>,
    ) -> Parsed<T> {
        Parsed { name, field, parse, show: hidden }
    }

    /// The same, with a default `--help` shows with `show`.
    pub(super) const fn shown_as(self, show: fn(&T) -> Option<String>) -> Parsed<T> {
        Parsed { show, ..self }
    }
}

impl<T: fmt::Display> Parsed<T> {
    /// The same, with a default `--help` shows as it displays.
    pub(super) const fn shown(self) -> Parsed<T> {
        self.shown_as(shown)
    }
}

/// A path, which a setting has none of by default.
pub(super) const fn path(field: fn(&mut Draft) -> &mut Option<PathBuf>) -> Parsed<Option<PathBuf>> {
    Parsed::new("PATH", field, optional_path)
}

impl<T: fmt::Debug> Value for Parsed<T> {
    fn shape(&self) -> Shape {
        Shape::One(self.name)
    }

    fn apply(&self, raw: &Raw, draft: &mut Draft) -> Result<(), ConfigError> {
        *(self.field)(draft) = (self.parse)(raw)?;
        Ok(())
    }

    fn show(&self, draft: &mut Draft) -> Option<String> {
        (self.show)((self.field)(draft))
    }
}

/// The topics, each `NAME:PARTITIONS` once.
#[derive(Debug)]
pub(super) struct Topics;

impl Value for Topics {
    fn shape(&self) -> Shape {
        Shape::Repeated("NAME:PARTITIONS")
    }

    fn apply(&self, raw: &Raw, draft: &mut Draft) -> Result<(), ConfigError> {
        let spec: TopicSpec = raw.value.trim().parse().map_err(|e| raw.locate(e))?;
        let topics = &mut draft.config.topics;
        if topics.iter().any(|s| s.name == spec.name) {
            return Err(raw.locate(ConfigError::DuplicateTopic(spec.name)));
        }
        topics.push(spec);
        Ok(())
    }
}

/// Shows a default as it displays.
fn shown<T: fmt::Display>(value: &T) -> Option<String> {
    Some(value.to_string())
}

/// Shows no default: the setting is off or empty unless given.
fn hidden<T>(_: &T) -> Option<String> {
    None
}

/// A value of a type that parses itself, `expected` saying what it must be otherwise.
pub(super) fn parse_as<T: FromStr>(raw: &Raw, expected: &str) -> Result<T, ConfigError> {
    raw.value.trim().parse().map_err(|_| raw.bad(expected))
}

/// A path, which must not be empty.
pub(super) fn some_path(raw: &Raw) -> Result<PathBuf, ConfigError> {
    match raw.value.trim() {
        "" => Err(raw.bad("a path")),
        path => Ok(PathBuf::from(path)),
    }
}

/// A path for a setting that has none by default.
fn optional_path(raw: &Raw) -> Result<Option<PathBuf>, ConfigError> {
    some_path(raw).map(Some)
}

const LISTEN_EXPECTED: &str = "HOST:PORT with an IP address or a host name, e.g. 127.0.0.1:9092, \
                               [::1]:9092 or localhost:9092 (port 0 picks a free port)";

const ADVERTISE_EXPECTED: &str =
    "HOST:PORT clients can connect to, e.g. broker1.example.com:9092 or 192.0.2.7:9092";

/// An address to listen on, its host name resolved.
pub(super) fn listen(raw: &Raw) -> Result<SocketAddr, ConfigError> {
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
    let unresolved = |reason: io::Error| {
        let reason = reason.into();
        raw.locate(ConfigError::Unresolved { setting: raw.name.clone(), value: raw.value.clone(), reason })
    };
    let addrs: Vec<SocketAddr> = (host, port).to_socket_addrs().map_err(unresolved)?.collect();
    // IPv4 first, as Java's InetAddress resolves a name by default.
    addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or(addrs.first())
        .copied()
        .ok_or_else(|| unresolved(io::Error::new(io::ErrorKind::NotFound, "no address")))
}

/// An address to listen on for a setting that has none by default.
pub(super) fn optional_listen(raw: &Raw) -> Result<Option<SocketAddr>, ConfigError> {
    listen(raw).map(Some)
}

/// `advertised.listeners`: a host clients can reach, and a port.
pub(super) fn advertise(raw: &Raw) -> Result<Option<(String, u16)>, ConfigError> {
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
        Ok(port) if port != 0 => Ok(Some((host.to_owned(), port))),
        _ => Err(raw.bad(format!("{ADVERTISE_EXPECTED}, with a port from 1 to 65535"))),
    }
}

/// Kafka's listener security protocols.
const PROTOCOLS: [&str; 4] = ["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"];

/// The `HOST:PORT` of a listener, without the `PLAINTEXT://` (or `SSL://`,
/// `SASL_PLAINTEXT://`, `SASL_SSL://`) a file's `listeners` carries (accepted on the
/// command line too); `validate` checks the scheme against the security settings.
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

/// `group.coordinator.rebalance.protocols`: whether `consumer` is among them.
pub(super) fn rebalance_protocols(raw: &Raw) -> Result<Protocols, ConfigError> {
    let expected = "a comma-separated list of classic, consumer and share, with classic (Kafka does \
                    not support disabling the classic protocol)";
    let mut classic = false;
    let mut protocols = Protocols { consumer: false, share: false };
    for name in raw.value.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        match name.to_ascii_lowercase().as_str() {
            "classic" => classic = true,
            "consumer" => protocols.consumer = true,
            "share" => protocols.share = true,
            _ => return Err(raw.bad(expected)),
        }
    }
    if !classic {
        return Err(raw.bad(expected));
    }
    Ok(protocols)
}

/// The group protocols served besides classic (`group.coordinator.rebalance.protocols`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Protocols {
    /// KIP-848's consumer protocol.
    pub(super) consumer: bool,
    /// KIP-932's share groups (a cluster node serves none: see `validate`).
    pub(super) share: bool,
}

impl Protocols {
    /// The list as the setting takes it.
    pub(super) fn names(self) -> String {
        let mut names = vec!["classic"];
        names.extend(self.consumer.then_some("consumer"));
        names.extend(self.share.then_some("share"));
        names.join(",")
    }
}

/// `group.consumer.assignors`: the built-in server assignors by short name, at least
/// one, none twice (Kafka 4.2 refuses duplicates). Kafka also takes class names of
/// custom assignors; this node has only the built-ins.
pub(super) fn assignors(raw: &Raw) -> Result<Vec<String>, ConfigError> {
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

/// `sasl.enabled.mechanisms`: at least one, each once.
pub(super) fn mechanisms(raw: &Raw) -> Result<Option<Vec<SaslMechanism>>, ConfigError> {
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
    Ok(Some(list))
}

/// Kafka's `super.users`: `User:a;User:b`, each a principal type and a name.
pub(super) fn super_users(raw: &Raw) -> Result<Vec<String>, ConfigError> {
    let mut users = Vec::new();
    for principal in raw.value.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        match principal.split_once(':') {
            Some((kind, name)) if !kind.is_empty() && !name.is_empty() => users.push(principal.to_owned()),
            _ => return Err(raw.bad("semicolon-separated principals such as User:admin;User:ops")),
        }
    }
    Ok(users)
}

/// The etcd client endpoints, comma-separated, at least one.
pub(super) fn endpoints(raw: &Raw) -> Result<Vec<String>, ConfigError> {
    let endpoints: Vec<String> =
        raw.value.split(',').map(str::trim).filter(|e| !e.is_empty()).map(str::to_owned).collect();
    if endpoints.is_empty() || endpoints.iter().any(|e| e.contains(char::is_whitespace)) {
        return Err(raw.bad("comma-separated etcd client URLs, e.g. http://127.0.0.1:2379"));
    }
    Ok(endpoints)
}

/// The etcd key prefix, without a trailing slash.
pub(super) fn prefix(raw: &Raw) -> Result<String, ConfigError> {
    match raw.value.trim().trim_end_matches('/') {
        "" => Err(raw.bad("a non-empty key prefix, e.g. /group-coordinator")),
        prefix => Ok(prefix.to_owned()),
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

    #[test]
    fn durations_count_milliseconds() {
        assert_eq!(Duration::from_i64(1500), Some(Duration::from_millis(1500)));
        assert_eq!(Duration::from_i64(-1), None);
        assert_eq!(Duration::from_millis(1500).to_i64(), Some(1500));
        assert_eq!(i32::from_i64(i64::from(i32::MAX) + 1), None);
    }
}
