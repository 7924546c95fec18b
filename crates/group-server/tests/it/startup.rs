//! Starting the binary: failures say what is wrong in one line, and leave nothing behind.

use std::net::TcpListener;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::binary::{Node, Stderr, group_server, temp_dir};

/// A port in use, the Kafka listener's or the metrics endpoint's, fails the start
/// before storage is opened: no data directory is left behind.
#[rstest::rstest]
#[case::kafka_listener("--listen", "another process listens there")]
#[case::metrics_endpoint("--metrics-listen", "")]
fn a_port_in_use_fails_before_creating_the_data_directory(#[case] flag: &str, #[case] hint: &str) {
    let taken = TcpListener::bind("127.0.0.1:0").expect("a port");
    let port = taken.local_addr().expect("addr").port();
    let dir = temp_dir(&format!("port-in-use{flag}"));
    let mut command = group_server();
    if flag != "--listen" {
        command.args(["--listen", "127.0.0.1:0"]);
    }
    let out = command
        .args([flag, &format!("127.0.0.1:{port}")])
        .arg("--data-dir")
        .arg(&dir)
        .stdin(Stdio::null())
        .output()
        .expect("runs");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("127.0.0.1:{port}")), "stderr: {stderr}");
    assert!(stderr.contains(hint), "stderr: {stderr}");
    assert!(!dir.exists(), "the data directory was created");
}

#[test]
fn a_data_directory_held_by_another_server_is_reported_at_once() {
    let dir = temp_dir("held");
    let first = Node::spawn(
        group_server().args(["--listen", "127.0.0.1:0"]).arg("--data-dir").arg(&dir),
        Stderr::Null,
    );
    let started = Instant::now();
    let out = group_server()
        .args(["--listen", "127.0.0.1:0"])
        .arg("--data-dir")
        .arg(&dir)
        .stdin(Stdio::null())
        .output()
        .expect("runs");
    let took = started.elapsed();
    drop(first);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().filter(|l| l.contains("in use by another group-server")).collect();
    assert_eq!(lines.len(), 1, "stderr: {stderr}");
    // Not a timing assertion on the machine's speed: the store's own lock wait is 2 s,
    // and the server must not wait for it.
    assert!(took < Duration::from_secs(2), "took {took:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// SIGHUP never stops a node: without an ACL file there is nothing to reread, and the
/// node keeps serving (the signal's default action used to end it at once).
#[test]
fn sighup_without_an_acl_file_is_not_fatal() {
    use crate::client::Conn;
    use kafka_protocol::messages::{ApiKey, ApiVersionsRequest, ApiVersionsResponse};
    let mut server = crate::memory::Process::start(&[]);
    for _ in 0..3 {
        server.node.signal("HUP");
    }
    let mut c = Conn::open(server.kafka);
    let versions: ApiVersionsResponse = c.call(ApiKey::ApiVersions, 3, &ApiVersionsRequest::default());
    assert_eq!(versions.error_code, 0);
    assert!(server.node.running(), "the node exited on SIGHUP");
}

/// A human log on a file or pipe: no colour codes, the data directory absolute even
/// when given relative, an unsupported API logged as such, and no blank line.
#[test]
fn a_human_log_to_a_pipe_is_plain_and_says_what_happened() {
    let work = temp_dir("log-nits");
    std::fs::create_dir_all(&work).expect("work dir");
    let mut node = Node::spawn(
        group_server()
            .current_dir(&work)
            .args(["--listen", "127.0.0.1:0", "--data-dir", "data", "--exit-on-stdin-close"])
            .env("RUST_LOG", "info"),
        Stderr::Keep,
    );
    // API key 0x7f00: no such API.
    let mut c = crate::client::Conn::open(node.kafka);
    c.send_raw(&[0x7f, 0, 0, 0, 0, 0, 0, 1, 0, 0]);
    assert!(c.is_closed());
    node.close_stdin();
    let (status, logs) = node.exit();
    assert!(status.success(), "{status}");
    assert!(!logs.contains('\u{1b}'), "colour codes in a piped log:\n{logs}");
    assert!(!logs.lines().any(|l| l.trim().is_empty()), "a blank line:\n{logs}");
    let absolute = work.join("data");
    assert!(logs.contains(&format!("storage: sled in {}", absolute.display())), "{logs}");
    assert!(logs.contains("unsupported request"), "{logs}");
    assert!(!logs.contains("malformed request"), "{logs}");
    let _ = std::fs::remove_dir_all(&work);
}
