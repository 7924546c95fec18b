//! The command line.

use std::net::SocketAddr;
use std::path::PathBuf;

use group_server::{ConfigError, ServerConfig, StorageMode, TopicSpec};
use rstest::rstest;

#[test]
fn defaults_listen_on_9092_with_sled_in_data() {
    let c = ServerConfig::from_args(Vec::<String>::new()).expect("defaults");
    assert_eq!(c.listen, SocketAddr::from(([127, 0, 0, 1], 9092)));
    assert_eq!(c.storage, StorageMode::Sled(PathBuf::from("./data")));
    assert!(c.topics.is_empty());
}

#[test]
fn every_flag_is_read() {
    let c = ServerConfig::from_args([
        "--listen=0.0.0.0:1234",
        "--topic",
        "orders:3",
        "--topic",
        "payments.v1:12",
        "--memory",
        "--initial-rebalance-delay-ms",
        "0",
        "--min-session-timeout-ms",
        "1000",
        "--max-frame-bytes",
        "4096",
        "--node-id",
        "7",
        "-v",
    ])
    .expect("parses");
    assert_eq!(c.listen, SocketAddr::from(([0, 0, 0, 0], 1234)));
    assert_eq!(
        c.topics,
        [
            TopicSpec { name: "orders".into(), partitions: 3 },
            TopicSpec { name: "payments.v1".into(), partitions: 12 }
        ]
    );
    assert_eq!(c.storage, StorageMode::Memory);
    assert_eq!((c.coordinator.initial_rebalance_delay_ms, c.coordinator.min_session_timeout_ms), (0, 1000));
    assert_eq!((c.limits.max_frame_bytes, c.node_id, c.verbose), (4096, 7, true));
}

#[rstest]
#[case::no_partitions(&["--topic", "orders"])]
#[case::zero_partitions(&["--topic", "orders:0"])]
#[case::bad_name(&["--topic", "a b:3"])]
#[case::missing_value(&["--listen"])]
#[case::bad_address(&["--listen", "nowhere"])]
#[case::unknown(&["--frobnicate"])]
#[case::memory_and_dir(&["--memory", "--data-dir", "x"])]
#[case::tiny_frames(&["--max-frame-bytes", "10"])]
fn bad_command_lines_are_typed_errors(#[case] args: &[&str]) {
    let err = ServerConfig::from_args(args.iter().copied()).expect_err("refused");
    assert_ne!(err, ConfigError::Help);
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
