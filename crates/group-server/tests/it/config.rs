//! The command line and the `--config` file.

use std::ffi::OsStr;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use group_server::{ClusterSettings, ConfigError, ConnectionLimits, ServerConfig, StorageMode, TopicSpec};
use proptest::prelude::*;
use rstest::rstest;

fn parse(args: &[&str]) -> Result<ServerConfig, ConfigError> {
    ServerConfig::from_args(args.iter().copied())
}

/// Writes a configuration file of its own for each call (tests run in parallel).
fn file(text: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("group-server-config-{}-{n}.properties", std::process::id()));
    std::fs::write(&path, text).expect("writes the test's configuration file");
    path
}

/// `parse` with a `--config` file of `text` before the other arguments.
fn parse_with_file(text: &str, args: &[&str]) -> Result<ServerConfig, ConfigError> {
    let path = file(text);
    let name = path.to_str().expect("a UTF-8 temporary path");
    let parsed = ServerConfig::from_args(["--config", name].into_iter().chain(args.iter().copied()));
    let _ = std::fs::remove_file(&path);
    parsed
}

/// The variant of an error, and of the error inside it for a file's line.
fn kind(error: &ConfigError) -> String {
    match error {
        ConfigError::Help(_) => "Help".into(),
        ConfigError::Version(_) => "Version".into(),
        ConfigError::UnknownArgument { .. } => "UnknownArgument".into(),
        ConfigError::MissingValue(_) => "MissingValue".into(),
        ConfigError::Usage(_) => "Usage".into(),
        ConfigError::BadTopic(_) => "BadTopic".into(),
        ConfigError::DuplicateTopic(_) => "DuplicateTopic".into(),
        ConfigError::BadValue { .. } => "BadValue".into(),
        ConfigError::Conflict { .. } => "Conflict".into(),
        ConfigError::Unresolved { .. } => "Unresolved".into(),
        ConfigError::WildcardWithoutAdvertise { .. } => "WildcardWithoutAdvertise".into(),
        ConfigError::ReadFile { .. } => "ReadFile".into(),
        ConfigError::UnknownProperty { .. } => "UnknownProperty".into(),
        ConfigError::DuplicateProperty { .. } => "DuplicateProperty".into(),
        ConfigError::InFile { line, error, .. } => format!("InFile:{line}:{}", kind(error)),
        _ => "other".into(),
    }
}

#[test]
fn defaults_listen_on_9092_with_sled_in_data() {
    let c = parse(&[]).expect("defaults");
    assert_eq!(c, ServerConfig::default());
    assert_eq!(c.listen, SocketAddr::from(([127, 0, 0, 1], 9092)));
    assert_eq!(c.advertise, None);
    assert_eq!(c.storage, StorageMode::Sled(PathBuf::from("./data")));
    assert!(c.topics.is_empty());
    assert_eq!((c.node_id, c.partitions), (0, 50));
    assert_eq!(c.limits, ConnectionLimits::default());
    assert_eq!(c.limits.connections_max_idle, Duration::from_millis(600_000));
    assert_eq!(c.limits.request_read_timeout, Duration::from_millis(30_000));
    assert_eq!(c.limits.max_frame_bytes, 1 << 20);
    assert!(c.warnings.is_empty() && !c.verbose && !c.exit_on_stdin_close && c.request_log.is_none());
}

#[rstest]
#[case::ipv4("127.0.0.1:0", "127.0.0.1:0")]
#[case::ipv6("[::1]:9092", "[::1]:9092")]
#[case::host_name_prefers_ipv4("localhost:9093", "127.0.0.1:9093")]
#[case::plaintext_prefix("PLAINTEXT://127.0.0.1:9094", "127.0.0.1:9094")]
#[case::spaces_trimmed(" 127.0.0.1:1 ", "127.0.0.1:1")]
fn listen_addresses(#[case] value: &str, #[case] expected: &str) {
    let expected: SocketAddr = expected.parse().expect("an address");
    assert_eq!(parse(&["--listen", value]).expect("parses").listen, expected);
    let text = format!("listeners={}\n", value.trim());
    let text = if text.contains("://") { text } else { text.replace('=', "=PLAINTEXT://") };
    assert_eq!(parse_with_file(&text, &[]).expect("parses").listen, expected);
}

#[rstest]
#[case::ssl(&["--listen", "SSL://127.0.0.1:9093", "--tls-cert", "c.pem", "--tls-key", "k.pem"])]
#[case::sasl_plaintext(&["--listen", "SASL_PLAINTEXT://127.0.0.1:9093", "--sasl-mechanisms", "PLAIN", "--sasl-users", "u"])]
#[case::sasl_ssl(&[
    "--listen", "sasl_ssl://127.0.0.1:9093", "--advertise", "SASL_SSL://h:9093", "--tls-cert", "c.pem",
    "--tls-key", "k.pem", "--sasl-mechanisms", "SCRAM-SHA-512", "--sasl-users", "u",
])]
#[case::bare_address_with_security(&["--listen", "127.0.0.1:9093", "--tls-cert", "c.pem", "--tls-key", "k.pem"])]
fn secured_listener_schemes_match_the_security_settings(#[case] args: &[&str]) {
    let c = parse(args).expect("parses");
    assert_eq!(c.listen.port(), 9093);
    assert!(c.security.tls.is_some() || c.security.sasl.is_some());
}

#[rstest]
#[case::name("broker1.example.com:9092", ("broker1.example.com", 9092))]
#[case::ipv4("192.0.2.7:1", ("192.0.2.7", 1))]
#[case::ipv6_without_brackets("[2001:db8::1]:9092", ("2001:db8::1", 9092))]
#[case::plaintext_prefix("plaintext://h:65535", ("h", 65535))]
fn advertised_addresses(#[case] value: &str, #[case] expected: (&str, u16)) {
    let expected = Some((expected.0.to_owned(), expected.1));
    let c = parse(&["--listen", "0.0.0.0:0", "--advertise", value]).expect("parses");
    assert_eq!(c.advertise, expected);
    let c = parse_with_file(&format!("listeners=PLAINTEXT://:0\nadvertised.listeners={value}\n"), &[])
        .expect("parses");
    assert_eq!((c.listen, c.advertise), (SocketAddr::from(([0, 0, 0, 0], 0)), expected));
}

#[rstest]
#[case::no_partitions(&["--topic", "orders"], "BadTopic", "expected NAME:PARTITIONS")]
#[case::zero_partitions(&["--topic", "orders:0"], "BadTopic", "1 to 100000 partitions")]
#[case::bad_name(&["--topic", "a b:3"], "BadTopic", "letters, digits")]
#[case::duplicate_topic(&["--topic", "orders:3", "--topic", "orders:1"], "DuplicateTopic", "each topic once")]
#[case::missing_value(&["--listen"], "MissingValue", "--listen needs a value")]
#[case::missing_value_before_a_flag(&["--node-id", "--memory"], "MissingValue", "--node-id needs a value")]
#[case::bad_address(&["--listen", "nowhere"], "BadValue", "e.g. 127.0.0.1:9092")]
#[case::bad_port(&["--listen", "127.0.0.1:65536"], "BadValue", "HOST:PORT")]
#[case::bare_ipv6(&["--listen", "::1:9092"], "BadValue", "[::1]:9092")]
#[case::unresolved(&["--listen", "no-such-host.invalid:9092"], "Unresolved", "IP address or a host name")]
#[case::ssl_without_tls(&["--listen", "SSL://127.0.0.1:9093"], "BadValue", "the listener is PLAINTEXT")]
#[case::unknown_scheme(&["--listen", "TLS://127.0.0.1:9093"], "BadValue", "SASL_SSL:// and HOST:PORT")]
#[case::plaintext_with_tls(
    &["--listen", "PLAINTEXT://127.0.0.1:9093", "--tls-cert", "c.pem", "--tls-key", "k.pem"],
    "BadValue",
    "the listener is SSL (--tls-cert is set and --sasl-mechanisms is not)"
)]
#[case::sasl_ssl_without_sasl(
    &["--listen", "SASL_SSL://127.0.0.1:9093", "--tls-cert", "c.pem", "--tls-key", "k.pem"],
    "BadValue",
    "the listener is SSL"
)]
#[case::ssl_with_sasl(
    &["--listen", "SSL://127.0.0.1:9093", "--sasl-mechanisms", "PLAIN", "--sasl-users", "u"],
    "BadValue",
    "the listener is SASL_PLAINTEXT"
)]
#[case::two_listeners(&["--listen", "127.0.0.1:1,127.0.0.1:2"], "BadValue", "one listener")]
#[case::wildcard_v4(&["--listen", "0.0.0.0:9092"], "WildcardWithoutAdvertise", "add --advertise HOST:PORT")]
#[case::wildcard_v6(&["--listen", "[::]:9092"], "WildcardWithoutAdvertise", "add --advertise")]
#[case::empty_host_is_a_wildcard(&["--listen", ":9092"], "WildcardWithoutAdvertise", "add --advertise")]
#[case::advertise_wildcard(&["--advertise", "0.0.0.0:9092"], "BadValue", "no client can connect to")]
#[case::advertise_port_zero(&["--advertise", "h:0"], "BadValue", "a port from 1 to 65535")]
#[case::advertise_no_port(&["--advertise", "h"], "BadValue", "HOST:PORT clients can connect to")]
#[case::advertise_empty_host(&["--advertise", ":9092"], "BadValue", "HOST:PORT clients can connect to")]
#[case::unknown(&["--frobnicate"], "UnknownArgument", "try --help")]
#[case::misspelt(&["--lisen", "x"], "UnknownArgument", "did you mean --listen?")]
#[case::stray_value(&["orders:3"], "UnknownArgument", "\"orders:3\"")]
#[case::given_twice(&["--node-id", "1", "--node-id", "2"], "Usage", "cannot be used multiple times")]
#[case::memory_and_dir(
    &["--memory", "--data-dir", "x"],
    "Conflict",
    "either in memory or in a data directory"
)]
#[case::empty_dir(&["--data-dir="], "BadValue", "expected a path")]
#[case::empty_request_log(&["--request-log", ""], "BadValue", "expected a path")]
#[case::not_a_number(&["--group-max-size", "lots"], "BadValue", "expected an integer from 1 to 2147483647")]
#[case::tiny_frames(&["--max-frame-bytes", "10"], "BadValue", "from 64 to 2147483647")]
#[case::huge_frames(&["--max-frame-bytes", "2147483648"], "BadValue", "from 64 to 2147483647")]
#[case::negative_node_id(&["--node-id", "-1"], "BadValue", "from 0 to 2147483647")]
#[case::negative_delay(&["--initial-rebalance-delay-ms", "-1"], "BadValue", "from 0 to 2147483647")]
#[case::negative_min_session(&["--min-session-timeout-ms=-5"], "BadValue", "from 0 to 2147483647")]
#[case::negative_max_session(&["--max-session-timeout-ms", "-5"], "BadValue", "from 0 to 2147483647")]
#[case::min_above_max(
    &["--min-session-timeout-ms", "10000", "--max-session-timeout-ms", "5000"],
    "Conflict",
    "no larger than the maximum"
)]
#[case::min_above_default_max(
    &["--min-session-timeout-ms", "1800001"],
    "Conflict",
    "group.max.session.timeout.ms=1800000"
)]
#[case::empty_group(&["--group-max-size", "0"], "BadValue", "from 1 to 2147483647")]
#[case::no_retention(&["--offsets-retention-minutes", "0"], "BadValue", "from 1 to 2147483647")]
#[case::retention_overflow(
    &["--offsets-retention-minutes", "2147483648"],
    "BadValue",
    "from 1 to 2147483647"
)]
#[case::no_check_interval(
    &["--offsets-retention-check-interval-ms", "0"],
    "BadValue",
    "from 1 to 31536000000"
)]
#[case::negative_metadata(&["--offset-metadata-max-bytes", "-1"], "BadValue", "from 0 to 2147483647")]
#[case::no_partitions_at_all(&["--offsets-topic-num-partitions", "0"], "BadValue", "from 1 to 100000")]
#[case::too_many_partitions(&["--offsets-topic-num-partitions", "100001"], "BadValue", "from 1 to 100000")]
#[case::no_connections(&["--max-connections", "0"], "BadValue", "from 1 to 2147483647")]
#[case::no_connections_per_ip(&["--max-connections-per-ip", "0"], "BadValue", "from 1 to 2147483647")]
#[case::nothing_in_flight(
    &["--max-in-flight-requests-per-connection", "0"],
    "BadValue",
    "from 1 to 2147483647"
)]
#[case::no_idle_time(&["--connections-max-idle-ms", "0"], "BadValue", "from 1 to 31536000000 (a year)")]
#[case::no_read_time(&["--request-read-timeout-ms", "-1"], "BadValue", "from 1 to 31536000000 (a year)")]
#[case::missing_file(
    &["--config", "/nonexistent/group-server.properties"],
    "ReadFile",
    "/nonexistent/group-server.properties"
)]
fn bad_command_lines_are_typed_errors(
    #[case] args: &[&str],
    #[case] expected_kind: &str,
    #[case] says: &str,
) {
    let err = parse(args).expect_err("refused");
    assert_eq!(kind(&err), expected_kind, "{err}");
    assert!(err.to_string().contains(says), "{err:?} does not say {says:?}: {err}");
}

#[test]
fn an_unreadable_file_keeps_its_io_error_as_the_source() {
    let err = parse(&["--config", "/nonexistent/group-server.properties"]).expect_err("refused");
    let ConfigError::ReadFile { path, reason } = &err else { panic!("{err:?}") };
    assert_eq!(path, &PathBuf::from("/nonexistent/group-server.properties"));
    assert_eq!(reason.get_ref().kind(), std::io::ErrorKind::NotFound);
    let source = std::error::Error::source(&err).expect("a source");
    assert_eq!(source.to_string(), reason.get_ref().to_string());
    assert!(err.to_string().ends_with(&format!(": {}", reason.get_ref())), "{err}");
}

#[test]
fn a_bad_value_names_the_flag_the_value_and_what_is_expected() {
    let err = parse(&["--group-max-size", "0"]).expect_err("refused");
    assert_eq!(
        err,
        ConfigError::BadValue {
            setting: "--group-max-size".into(),
            value: "0".into(),
            expected: "an integer from 1 to 2147483647".into(),
        }
    );
    assert_eq!(
        err.to_string(),
        "bad value \"0\" for --group-max-size: expected an integer from 1 to 2147483647"
    );
}

#[rstest]
#[case::unknown_property(
    "node.id=1\n# comment\n\ngrup.max.size=3\n",
    "UnknownProperty",
    "4: unknown property \"grup.max.size\" (did you mean group.max.size?)"
)]
#[case::unknown_without_suggestion(
    "frobnicate = yes",
    "UnknownProperty",
    "1: unknown property \"frobnicate\""
)]
#[case::flag_name_as_property("group-max-size=3", "UnknownProperty", "did you mean group.max.size?")]
#[case::bad_value(
    "\n\ngroup.max.size=0",
    "InFile:3:BadValue",
    "3: bad value \"0\" for group.max.size: expected an integer from 1"
)]
#[case::given_twice("group.max.size=1\ngroup.max.size=2", "InFile:2:DuplicateProperty", "first on line 1")]
#[case::broker_id_disagrees("broker.id=1\nnode.id=2", "Conflict", "one setting")]
#[case::wildcard_listener(
    "listeners=PLAINTEXT://:9092",
    "InFile:1:WildcardWithoutAdvertise",
    "advertised.listeners=PLAINTEXT://HOST:PORT"
)]
#[case::ssl_listener("listeners=SSL://127.0.0.1:9093", "InFile:1:BadValue", "the listener is PLAINTEXT")]
#[case::controller_listener(
    "listeners=PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093",
    "InFile:1:BadValue",
    "one listener"
)]
#[case::listener_without_port(
    "listeners=PLAINTEXT://127.0.0.1",
    "InFile:1:BadValue",
    "for listeners: expected HOST:PORT"
)]
#[case::memory_and_dir("memory=true\ndata.dir=/tmp/x", "Conflict", "memory=true (")]
#[case::memory_not_boolean("memory=yes", "InFile:1:BadValue", "true or false")]
#[case::duplicate_topic(
    "topics=orders:3,payments:1,orders:2",
    "InFile:1:DuplicateTopic",
    "\"orders\" is given twice"
)]
#[case::bad_topic("\ntopics=orders", "InFile:2:BadTopic", "expected NAME:PARTITIONS")]
#[case::min_above_max_in_file(
    "group.min.session.timeout.ms=9000\ngroup.max.session.timeout.ms=8000",
    "Conflict",
    "group.min.session.timeout.ms=9000 ("
)]
fn bad_files_are_typed_errors_with_their_line(
    #[case] text: &str,
    #[case] expected_kind: &str,
    #[case] says: &str,
) {
    let err = parse_with_file(text, &[]).expect_err("refused");
    assert_eq!(kind(&err), expected_kind, "{err}");
    assert!(err.to_string().contains(says), "{err:?} does not say {says:?}: {err}");
}

const FULL_FILE: &str = "\
# A coordinator node.
! Both comment styles.

listeners = PLAINTEXT://0.0.0.0:0
advertised.listeners = PLAINTEXT://node3.example.com:9092
broker.id = 3
topics = orders:3, payments.v1:12
data.dir = /var/lib/group-server
request.log = requests.jsonl
group.initial.rebalance.delay.ms = 0
group.min.session.timeout.ms = 1000
group.max.session.timeout.ms = 60000
group.max.size = 100
offsets.retention.minutes = 1440
offsets.retention.check.interval.ms = 30000
offset.metadata.max.bytes = 0
offsets.topic.num.partitions = 12
max.connections = 1000
max.connections.per.ip = 50
max.in.flight.requests.per.connection = 16
connections.max.idle.ms = 120000
request.read.timeout.ms = 5000
socket.request.max.bytes = 65536
queued.max.request.bytes = 1048576
queued.max.response.bytes.per.connection = 65536
queued.max.response.bytes = 16777216
";

/// `FULL_FILE` as flags (both `--flag value` and `--flag=value`), and the flags no
/// property sets.
const EVERY_FLAG: &[&str] = &[
    "--listen=0.0.0.0:0",
    "--advertise",
    "node3.example.com:9092",
    "--node-id=3",
    "--topic",
    "orders:3",
    "--topic",
    "payments.v1:12",
    "--data-dir=/var/lib/group-server",
    "--request-log=requests.jsonl",
    "--initial-rebalance-delay-ms=0",
    "--min-session-timeout-ms=1000",
    "--max-session-timeout-ms=60000",
    "--group-max-size=100",
    "--offsets-retention-minutes=1440",
    "--offsets-retention-check-interval-ms=30000",
    "--offset-metadata-max-bytes=0",
    "--offsets-topic-num-partitions=12",
    "--max-connections=1000",
    "--max-connections-per-ip=50",
    "--max-in-flight-requests-per-connection=16",
    "--connections-max-idle-ms=120000",
    "--request-read-timeout-ms=5000",
    "--max-frame-bytes=65536",
    "--queued-max-request-bytes=1048576",
    "--queued-max-response-bytes-per-connection=65536",
    "--queued-max-response-bytes=16777216",
    "--exit-on-stdin-close",
    "-v",
];

/// Every setting is read, from the command line as from a file.
#[rstest]
#[case::flags(Some(EVERY_FLAG))]
#[case::file(None)]
fn every_setting_is_read(#[case] flags: Option<&[&str]>) {
    let c = match flags {
        Some(flags) => parse(flags),
        None => parse_with_file(FULL_FILE, &[]),
    }
    .expect("parses");
    assert_eq!(c.listen, SocketAddr::from(([0, 0, 0, 0], 0)));
    assert_eq!(c.advertise, Some(("node3.example.com".to_owned(), 9092)));
    assert_eq!(c.node_id, 3);
    assert_eq!(
        c.topics,
        [
            TopicSpec { name: "orders".into(), partitions: 3 },
            TopicSpec { name: "payments.v1".into(), partitions: 12 }
        ]
    );
    assert_eq!(c.storage, StorageMode::Sled(PathBuf::from("/var/lib/group-server")));
    assert_eq!(c.request_log, Some(PathBuf::from("requests.jsonl")));
    let co = &c.coordinator;
    assert_eq!(
        (
            co.initial_rebalance_delay_ms,
            co.min_session_timeout_ms,
            co.max_session_timeout_ms,
            co.group_max_size
        ),
        (0, 1000, 60_000, 100)
    );
    assert_eq!(
        (co.offset_retention_ms, co.offsets_retention_check_interval_ms, co.offset_metadata_max_bytes),
        (1440 * 60_000, 30_000, 0)
    );
    assert_eq!(c.partitions, 12);
    let expected_limits = ConnectionLimits {
        max_connections: 1000,
        max_connections_per_ip: 50,
        max_in_flight_per_connection: 16,
        connections_max_idle: Duration::from_millis(120_000),
        request_read_timeout: Duration::from_millis(5000),
        max_frame_bytes: 65536,
        queued_max_request_bytes: 1 << 20,
        queued_max_response_bytes_per_connection: 65536,
        queued_max_response_bytes: 16 << 20,
    };
    assert_eq!(c.limits, expected_limits);
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    assert_eq!((c.verbose, c.exit_on_stdin_close), (flags.is_some(), flags.is_some()));
}

#[test]
fn flags_override_the_file_whatever_their_order() {
    let text = "group.max.size=9\nnode.id=4\nlisteners=PLAINTEXT://127.0.0.1:1\n";
    for args in [["--group-max-size", "5", "--config", ""], ["--config", "", "--group-max-size", "5"]] {
        let path = file(text);
        let path = path.to_str().expect("a UTF-8 temporary path");
        let args = args.map(|a| if a.is_empty() { path } else { a });
        let c = ServerConfig::from_args(args).expect("parses");
        // The flag wins; what only the file sets stays.
        assert_eq!((c.coordinator.group_max_size, c.node_id), (5, 4));
        assert_eq!(c.listen, SocketAddr::from(([127, 0, 0, 1], 1)));
    }
}

#[test]
fn a_flag_replaces_the_files_topics_and_storage_as_a_whole() {
    let text = "topics=orders:3,payments:1\ndata.dir=/var/lib/x\n";
    let c = parse_with_file(text, &["--topic", "audit:2", "--memory"]).expect("parses");
    assert_eq!(c.topics, [TopicSpec { name: "audit".into(), partitions: 2 }]);
    assert_eq!(c.storage, StorageMode::Memory);
    let c = parse_with_file("memory=true\n", &["--data-dir", "d"]).expect("parses");
    assert_eq!(c.storage, StorageMode::Sled(PathBuf::from("d")));
    let c = parse_with_file("memory=false\n", &[]).expect("parses");
    assert_eq!(c.storage, StorageMode::Sled(PathBuf::from("./data")));
    let c = parse_with_file("memory=TRUE\n", &[]).expect("parses");
    assert_eq!(c.storage, StorageMode::Memory);
}

#[test]
fn a_flag_fixes_an_inconsistent_file() {
    let text = "group.min.session.timeout.ms=9000\ngroup.max.session.timeout.ms=8000\n";
    let c = parse_with_file(text, &["--max-session-timeout-ms", "10000"]).expect("parses");
    assert_eq!((c.coordinator.min_session_timeout_ms, c.coordinator.max_session_timeout_ms), (9000, 10_000));
    let c = parse_with_file("listeners=PLAINTEXT://:9092\n", &["--advertise", "h:9092"]).expect("parses");
    assert_eq!(c.advertise, Some(("h".to_owned(), 9092)));
}

#[test]
fn listed_kafka_properties_are_ignored_with_a_warning() {
    let c =
        parse_with_file("num.network.threads=3\nlog.dirs=/tmp/kraft-combined-logs\ngroup.max.size=7\n", &[])
            .expect("accepted");
    assert_eq!(c.coordinator.group_max_size, 7);
    assert_eq!(c.warnings.len(), 2, "{:?}", c.warnings);
    assert!(c.warnings[0].contains(":1: num.network.threads is ignored"), "{:?}", c.warnings);
    assert!(c.warnings[1].contains(":2: log.dirs is ignored") && c.warnings[1].contains("data.dir"));
}

#[test]
fn an_error_names_the_file_and_line() {
    let path = file("\n\nmax.connections=0\n");
    let err = ServerConfig::from_args([OsStr::new("--config"), path.as_os_str()]).expect_err("refused");
    assert_eq!(
        err.to_string(),
        format!(
            "{}:3: bad value \"0\" for max.connections: expected an integer from 1 to 2147483647",
            path.display()
        )
    );
}

/// Every Kafka property the binary knows, with the default `--help` must show for it.
const KAFKA_PROPERTIES: &[(&str, &str, &str)] = &[
    ("--listen", "listeners", "127.0.0.1:9092"),
    ("--advertise", "advertised.listeners", "the listen address"),
    ("--node-id", "node.id", "0"),
    ("--initial-rebalance-delay-ms", "group.initial.rebalance.delay.ms", "3000"),
    ("--min-session-timeout-ms", "group.min.session.timeout.ms", "6000"),
    ("--max-session-timeout-ms", "group.max.session.timeout.ms", "1800000"),
    ("--group-max-size", "group.max.size", "2147483647"),
    ("--offsets-retention-minutes", "offsets.retention.minutes", "10080"),
    ("--offsets-retention-check-interval-ms", "offsets.retention.check.interval.ms", "600000"),
    ("--offset-metadata-max-bytes", "offset.metadata.max.bytes", "4096"),
    ("--offsets-topic-num-partitions", "offsets.topic.num.partitions", "50"),
    ("--max-connections", "max.connections", "2147483647"),
    ("--max-connections-per-ip", "max.connections.per.ip", "2147483647"),
    ("--connections-max-idle-ms", "connections.max.idle.ms", "600000"),
    ("--max-frame-bytes", "socket.request.max.bytes", "1048576"),
    ("--queued-max-request-bytes", "queued.max.request.bytes", "67108864"),
    ("--rebalance-protocols", "group.coordinator.rebalance.protocols", "classic,consumer,share"),
    ("--consumer-session-timeout-ms", "group.consumer.session.timeout.ms", "45000"),
    ("--consumer-min-session-timeout-ms", "group.consumer.min.session.timeout.ms", "45000"),
    ("--consumer-max-session-timeout-ms", "group.consumer.max.session.timeout.ms", "60000"),
    ("--consumer-heartbeat-interval-ms", "group.consumer.heartbeat.interval.ms", "5000"),
    ("--consumer-min-heartbeat-interval-ms", "group.consumer.min.heartbeat.interval.ms", "5000"),
    ("--consumer-max-heartbeat-interval-ms", "group.consumer.max.heartbeat.interval.ms", "15000"),
    ("--consumer-group-max-size", "group.consumer.max.size", "2147483647"),
    ("--consumer-migration-policy", "group.consumer.migration.policy", "bidirectional"),
    ("--consumer-assignors", "group.consumer.assignors", "uniform,range"),
    ("--consumer-regex-refresh-interval-ms", "group.consumer.regex.refresh.interval.ms", "600000"),
    ("--consumer-assignment-interval-ms", "group.consumer.assignment.interval.ms", "0"),
    ("--consumer-min-assignment-interval-ms", "group.consumer.min.assignment.interval.ms", "0"),
    ("--consumer-max-assignment-interval-ms", "group.consumer.max.assignment.interval.ms", "15000"),
    ("--share-assignment-interval-ms", "group.share.assignment.interval.ms", "0"),
    ("--share-min-assignment-interval-ms", "group.share.min.assignment.interval.ms", "0"),
    ("--share-max-assignment-interval-ms", "group.share.max.assignment.interval.ms", "15000"),
];

/// The settings Kafka has no name for, under ours.
const OUR_PROPERTIES: &[(&str, &str, Option<&str>)] = &[
    ("--topic", "topics", None),
    ("--data-dir", "data.dir", Some("./data")),
    ("--memory", "memory", None),
    ("--request-log", "request.log", None),
    ("--max-in-flight-requests-per-connection", "max.in.flight.requests.per.connection", Some("128")),
    ("--request-read-timeout-ms", "request.read.timeout.ms", Some("30000")),
    (
        "--queued-max-response-bytes-per-connection",
        "queued.max.response.bytes.per.connection",
        Some("1048576"),
    ),
    ("--queued-max-response-bytes", "queued.max.response.bytes", Some("268435456")),
    ("--group-max-groups", "group.max.groups", Some("2147483647")),
];

/// The help of one flag: its line and the next (clap puts the help under the flag).
fn help_of(help: &str, flag: &str) -> String {
    let lines: Vec<&str> = help.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.trim_start().starts_with('-') && l.split([' ', ',']).any(|word| word == flag))
        .unwrap_or_else(|| panic!("{flag} missing from --help:\n{help}"));
    lines[at..(at + 2).min(lines.len())].join(" ")
}

#[test]
fn help_lists_every_property_with_its_default() {
    let Err(ConfigError::Help(help)) = parse(&["--help"]) else { panic!("--help is not Help") };
    assert_eq!(parse(&["-h"]), Err(ConfigError::Help(help.clone())));
    assert_eq!(ServerConfig::usage(), help);
    for (flag, property, default) in KAFKA_PROPERTIES {
        let line = help_of(&help, flag);
        assert!(line.contains(&format!("[Kafka: {property}]")), "{line}");
        assert!(line.contains(&format!("[default: {default}]")), "{line}");
    }
    for (flag, property, default) in OUR_PROPERTIES {
        let line = help_of(&help, flag);
        assert!(line.contains(&format!("[property: {property}]")), "{line}");
        if let Some(default) = default {
            assert!(line.contains(&format!("[default: {default}]")), "{line}");
        }
    }
    for flag in ["--config", "--exit-on-stdin-close", "--verbose", "--version"] {
        help_of(&help, flag);
    }
    assert!(help.contains("broker.id"));
}

#[test]
fn version_is_not_an_error_to_the_user() {
    let expected = format!("group-server {}\n", env!("CARGO_PKG_VERSION"));
    assert_eq!(parse(&["--version"]), Err(ConfigError::Version(expected.clone())));
    assert_eq!(parse(&["-V"]), Err(ConfigError::Version(expected)));
}

/// An integer setting: its flag, its property, its range, and where it lands.
type Numeric = (&'static str, &'static str, i64, i64, fn(&ServerConfig) -> i64);

const MS_YEAR: i64 = 31_536_000_000;

const NUMERIC: &[Numeric] = &[
    ("--node-id", "node.id", 0, i32::MAX as i64, |c| c.node_id.into()),
    ("--initial-rebalance-delay-ms", "group.initial.rebalance.delay.ms", 0, i32::MAX as i64, |c| {
        c.coordinator.initial_rebalance_delay_ms.into()
    }),
    // The minimum runs up to the default maximum, and the maximum down to the default
    // minimum, so that they do not conflict.
    ("--min-session-timeout-ms", "group.min.session.timeout.ms", 0, 1_800_000, |c| {
        c.coordinator.min_session_timeout_ms.into()
    }),
    ("--max-session-timeout-ms", "group.max.session.timeout.ms", 6000, i32::MAX as i64, |c| {
        c.coordinator.max_session_timeout_ms.into()
    }),
    ("--group-max-size", "group.max.size", 1, i32::MAX as i64, |c| c.coordinator.group_max_size.into()),
    ("--offsets-retention-minutes", "offsets.retention.minutes", 1, i32::MAX as i64, |c| {
        c.coordinator.offset_retention_ms / 60_000
    }),
    ("--offsets-retention-check-interval-ms", "offsets.retention.check.interval.ms", 1, MS_YEAR, |c| {
        c.coordinator.offsets_retention_check_interval_ms
    }),
    ("--offset-metadata-max-bytes", "offset.metadata.max.bytes", 0, i32::MAX as i64, |c| {
        c.coordinator.offset_metadata_max_bytes as i64
    }),
    ("--offsets-topic-num-partitions", "offsets.topic.num.partitions", 1, 100_000, |c| c.partitions.into()),
    ("--max-connections", "max.connections", 1, i32::MAX as i64, |c| c.limits.max_connections as i64),
    ("--max-connections-per-ip", "max.connections.per.ip", 1, i32::MAX as i64, |c| {
        c.limits.max_connections_per_ip as i64
    }),
    (
        "--max-in-flight-requests-per-connection",
        "max.in.flight.requests.per.connection",
        1,
        i32::MAX as i64,
        |c| c.limits.max_in_flight_per_connection as i64,
    ),
    ("--connections-max-idle-ms", "connections.max.idle.ms", 1, MS_YEAR, |c| {
        c.limits.connections_max_idle.as_millis() as i64
    }),
    ("--request-read-timeout-ms", "request.read.timeout.ms", 1, MS_YEAR, |c| {
        c.limits.request_read_timeout.as_millis() as i64
    }),
    ("--max-frame-bytes", "socket.request.max.bytes", 64, i32::MAX as i64, |c| {
        c.limits.max_frame_bytes as i64
    }),
    ("--queued-max-request-bytes", "queued.max.request.bytes", 64, i32::MAX as i64, |c| {
        c.limits.queued_max_request_bytes as i64
    }),
    (
        "--queued-max-response-bytes-per-connection",
        "queued.max.response.bytes.per.connection",
        1,
        i32::MAX as i64,
        |c| c.limits.queued_max_response_bytes_per_connection as i64,
    ),
    ("--queued-max-response-bytes", "queued.max.response.bytes", 1, i32::MAX as i64, |c| {
        c.limits.queued_max_response_bytes as i64
    }),
];

fn numeric_value() -> impl Strategy<Value = (usize, i64)> {
    (0..NUMERIC.len()).prop_flat_map(|i| {
        let (_, _, min, max, _) = NUMERIC[i];
        // The bounds themselves half of the time: off-by-one errors live there.
        (Just(i), prop_oneof![Just(min), Just(max), min..=max])
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// A value in range comes out as it went in, through a flag (both syntaxes) and through
    /// the file; one step outside the range is refused both ways.
    #[test]
    fn values_in_range_round_trip((i, value) in numeric_value(), inline in any::<bool>()) {
        let (flag, property, min, max, get) = NUMERIC[i];
        let c = if inline {
            ServerConfig::from_args([format!("{flag}={value}")])
        } else {
            ServerConfig::from_args([flag.to_owned(), value.to_string()])
        };
        prop_assert_eq!(c.map(|c| get(&c)), Ok(value));
        let c = parse_with_file(&format!("{property}={value}\n"), &[]);
        prop_assert_eq!(c.map(|c| get(&c)), Ok(value));
        let outside = if inline { min - 1 } else { max + 1 };
        // The session timeouts' ranges above are narrowed to avoid a conflict, not by the parser.
        if !flag.contains("session") {
            let err = ServerConfig::from_args([format!("{flag}={outside}")]).expect_err("out of range");
            prop_assert_eq!(kind(&err), "BadValue");
        }
    }

    #[test]
    fn ports_round_trip(port in 0u16..) {
        let c = parse(&["--listen", &format!("127.0.0.1:{port}")]).expect("parses");
        prop_assert_eq!(c.listen.port(), port);
        let advertised = parse_with_file(&format!("advertised.listeners=PLAINTEXT://h:{port}\n"), &[]);
        if port == 0 {
            prop_assert_eq!(advertised.map_err(|e| kind(&e)), Err("InFile:1:BadValue".to_owned()));
        } else {
            prop_assert_eq!(advertised.map(|c| c.advertise), Ok(Some(("h".to_owned(), port))));
        }
    }
}

#[test]
fn topic_ids_are_stable_non_zero_and_distinct() {
    let a = TopicSpec { name: "orders".into(), partitions: 3 };
    assert_eq!(a.topic_id(), group_server::topic_id_for("orders"));
    assert_ne!(a.topic_id(), uuid::Uuid::nil());
    assert_ne!(a.topic_id(), group_server::topic_id_for("orders2"));
    // Pinned: a change would make restarted servers disagree with clients' cached ids.
    assert_eq!(a.topic_id().to_string(), "00125d92-50be-4b4c-ad71-b8f7dd1dc4ab");
}

#[rstest]
#[case::defaults(
    &["--cluster", "--etcd", "http://127.0.0.1:2379"],
    &["http://127.0.0.1:2379"],
    "/group-coordinator",
    3
)]
#[case::every_setting(
    &["--cluster", "--etcd", " http://a:2379, http://b:2379 ,", "--cluster-prefix", "/prod/groups/", "--lease-ttl-secs", "5"],
    &["http://a:2379", "http://b:2379"],
    "/prod/groups",
    5
)]
fn cluster_nodes_keep_offsets_in_etcd(
    #[case] args: &[&str],
    #[case] endpoints: &[&str],
    #[case] prefix: &str,
    #[case] ttl: i64,
) {
    let c = parse(args).expect("parses");
    // A cluster node serves share groups too (their share state lives with them).
    assert!(c.coordinator.share.enabled && c.coordinator.consumer.enabled);
    let StorageMode::Cluster(settings) = c.storage else { panic!("not a cluster node: {:?}", c.storage) };
    assert_eq!(settings.endpoints, endpoints);
    assert_eq!(settings.prefix, prefix);
    assert_eq!(settings.lease_ttl_secs, ttl);
}

#[test]
fn cluster_settings_are_read_from_a_file() {
    let text = "cluster = true\netcd.endpoints = http://e1:2379,http://e2:2379\ncluster.prefix = /c1\ncluster.lease.ttl.secs = 4\netcd.transactions.in.flight = 2\n";
    let c = parse_with_file(text, &[]).expect("parses");
    let expected = ClusterSettings {
        endpoints: vec!["http://e1:2379".into(), "http://e2:2379".into()],
        prefix: "/c1".into(),
        lease_ttl_secs: 4,
        transactions_in_flight: Some(2),
    };
    assert_eq!(c.storage, StorageMode::Cluster(expected));
}

#[rstest]
#[case::no_etcd(&["--cluster"], "--etcd as well")]
#[case::etcd_alone(&["--etcd", "http://a:2379"], "--cluster as well")]
#[case::prefix_alone(&["--cluster-prefix", "/x"], "--cluster as well")]
#[case::with_memory(&["--cluster", "--etcd", "http://a:2379", "--memory"], "not locally")]
#[case::with_data_dir(&["--cluster", "--etcd", "http://a:2379", "--data-dir", "d"], "not locally")]
#[case::empty_endpoints(&["--cluster", "--etcd", " , "], "etcd client URLs")]
#[case::empty_prefix(&["--cluster", "--etcd", "http://a:2379", "--cluster-prefix", "/"], "non-empty key prefix")]
#[case::no_lease(&["--cluster", "--etcd", "http://a:2379", "--lease-ttl-secs", "0"], "from 1 to 3600")]
fn bad_cluster_settings_are_refused(#[case] args: &[&str], #[case] says: &str) {
    let err = parse(args).expect_err("refused");
    assert!(err.to_string().contains(says), "{err:?} does not say {says:?}: {err}");
}

/// The KIP-848 settings: Kafka's `GroupCoordinatorConfig` bounds, each value at least 1,
/// a session timeout and a heartbeat interval within their min and max, the interval
/// below the session timeout; a conflict names the default it runs into.
#[rstest]
#[case::short_session_needs_a_lower_min(
    &["--consumer-session-timeout-ms", "6000"],
    "the default group.consumer.min.session.timeout.ms=45000 conflicts with --consumer-session-timeout-ms 6000"
)]
#[case::session_above_max(
    &["--consumer-session-timeout-ms", "70000"],
    "--consumer-session-timeout-ms 70000 conflicts with the default group.consumer.max.session.timeout.ms=60000"
)]
#[case::min_above_max(
    &["--consumer-min-session-timeout-ms", "61000"],
    "--consumer-min-session-timeout-ms 61000 conflicts with the default group.consumer.max.session.timeout.ms=60000"
)]
#[case::fast_heartbeat_needs_a_lower_min(
    &["--consumer-heartbeat-interval-ms", "500"],
    "the default group.consumer.min.heartbeat.interval.ms=5000 conflicts with --consumer-heartbeat-interval-ms 500"
)]
#[case::interval_not_below_session(
    &["--consumer-min-session-timeout-ms", "1000", "--consumer-session-timeout-ms", "5000"],
    "the default group.consumer.heartbeat.interval.ms=5000 conflicts with --consumer-session-timeout-ms 5000"
)]
#[case::zero(&["--consumer-min-heartbeat-interval-ms", "0"], "expected an integer from 1 to 2147483647")]
#[case::classic_is_required(&["--rebalance-protocols", "consumer"], "with classic")]
#[case::streams_unsupported(&["--rebalance-protocols", "classic,streams"], "classic, consumer and share")]
#[case::bad_policy(&["--consumer-migration-policy", "sideways"], "disabled, upgrade, downgrade or bidirectional")]
#[case::unknown_assignor(&["--consumer-assignors", "uniform,sticky"], "uniform and range, each once")]
#[case::duplicate_assignor(&["--consumer-assignors", "range,range"], "uniform and range, each once")]
#[case::no_assignor(&["--consumer-assignors", " , "], "uniform and range, each once")]
#[case::regex_refresh_too_often(&["--consumer-regex-refresh-interval-ms", "9999"], "from 10000")]
#[case::assignment_interval_over_its_max(
    &["--consumer-assignment-interval-ms", "20000"],
    "a consumer assignment interval no larger than its maximum"
)]
#[case::share_assignment_interval_under_its_min(
    &["--share-min-assignment-interval-ms", "1000"],
    "a share assignment interval no smaller than its minimum"
)]
fn consumer_group_settings_keep_kafka_s_bounds(#[case] args: &[&str], #[case] message: &str) {
    let err = parse(args).expect_err("refused");
    assert!(err.to_string().contains(message), "{err}");
}

#[test]
fn consumer_group_settings_are_read() {
    let c = parse(&[
        "--rebalance-protocols",
        "CLASSIC, consumer",
        "--consumer-min-session-timeout-ms",
        "1000",
        "--consumer-session-timeout-ms",
        "6000",
        "--consumer-max-session-timeout-ms",
        "9000",
        "--consumer-min-heartbeat-interval-ms",
        "100",
        "--consumer-heartbeat-interval-ms",
        "500",
        "--consumer-max-heartbeat-interval-ms",
        "1000",
        "--consumer-group-max-size",
        "3",
        "--consumer-migration-policy",
        "Upgrade",
        "--consumer-assignors",
        "range, uniform",
        "--consumer-regex-refresh-interval-ms",
        "20000",
    ])
    .expect("parses");
    assert_eq!(c.coordinator.consumer.assignors, ["range", "uniform"]);
    assert_eq!(c.coordinator.consumer.regex_refresh_interval_ms, 20_000);
    let cg = &c.coordinator.consumer;
    assert!(cg.enabled);
    assert_eq!(
        (cg.min_session_timeout_ms, cg.session_timeout_ms, cg.max_session_timeout_ms),
        (1000, 6000, 9000)
    );
    assert_eq!(
        (cg.min_heartbeat_interval_ms, cg.heartbeat_interval_ms, cg.max_heartbeat_interval_ms),
        (100, 500, 1000)
    );
    assert_eq!((cg.max_size, cg.migration_policy), (3, group_coordinator::MigrationPolicy::Upgrade));
    let off = parse(&["--rebalance-protocols", "classic"]).expect("parses");
    assert!(!off.coordinator.consumer.enabled && !off.coordinator.share.enabled);
    let share = parse(&["--rebalance-protocols", "classic,share"]).expect("parses");
    assert!(!share.coordinator.consumer.enabled && share.coordinator.share.enabled);
    let path =
        file("group.consumer.session.timeout.ms=50000\ngroup.coordinator.rebalance.protocols=classic\n");
    let from_file = parse(&["--config", path.to_str().expect("UTF-8")]).expect("parses");
    assert_eq!(from_file.coordinator.consumer.session_timeout_ms, 50_000);
    assert!(!from_file.coordinator.consumer.enabled);
}

/// KIP-1263's node-wide intervals reach the coordinator's group-config bounds, where a
/// group without its own `consumer.assignment.interval.ms` takes them.
#[test]
fn assignment_intervals_reach_the_coordinator() {
    let config = parse(&[
        "--consumer-assignment-interval-ms",
        "1000",
        "--share-max-assignment-interval-ms",
        "30000",
        "--share-assignment-interval-ms",
        "20000",
    ])
    .expect("parses");
    let bounds = &config.coordinator.group_config_bounds;
    assert_eq!(bounds.consumer_assignment_interval_ms.default, 1_000);
    assert_eq!(
        (bounds.share_assignment_interval_ms.default, bounds.share_assignment_interval_ms.max),
        (20_000, 30_000)
    );
}
