//! Bad servers give typed errors, never a hang or a panic.

use std::net::TcpListener;
use std::path::Path;

use group_loadgen::{LoadgenError, Options, ServerProcess, Storage, Target, run, scenarios};

use crate::tiny;

/// A port nothing listens on (bound, then released).
fn dead_target() -> Target {
    let addr = TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port");
    Target::new(addr, None)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_connection_is_a_connect_error() {
    let err = scenarios::heartbeat(&dead_target(), &tiny()).await.expect_err("nothing listens");
    assert!(matches!(err, LoadgenError::Connect { .. }), "{err:?}");
    let err = scenarios::idle(&dead_target(), &tiny()).await.expect_err("nothing listens");
    assert!(matches!(err, LoadgenError::Connect { .. }), "{err:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_hangs_up_is_a_closed_error() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let target = Target::new(listener.local_addr().expect("addr"), None);
    let hang_up = tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            drop(stream);
        }
    });
    let err = scenarios::commit_distinct(&target, &tiny()).await.expect_err("no answers");
    assert!(matches!(err, LoadgenError::Closed | LoadgenError::Io { .. }), "{err:?}");
    hang_up.abort();
}

#[test]
fn a_missing_or_failing_server_binary_is_a_typed_error() {
    let log = std::env::temp_dir().join(format!("group-loadgen-spawn-{}.log", std::process::id()));
    let err = ServerProcess::spawn(Path::new("/nonexistent/group-server"), &Storage::Memory, 1, &log)
        .expect_err("no such binary");
    assert!(matches!(err, LoadgenError::Spawn { .. }), "{err:?}");
    // `false` exits at once without printing the listening line.
    let err = ServerProcess::spawn(Path::new("false"), &Storage::Memory, 1, &log).expect_err("exits");
    assert!(matches!(err, LoadgenError::ServerStartup(_)), "{err:?}");
    let _ = std::fs::remove_file(&log);
}

#[test]
fn a_run_against_nothing_reports_failed_rows() {
    let target = dead_target();
    let line = format!("--connect {} --scenarios heartbeat,rebalance", target.addr);
    let mut options = Options::from_args(line.split_whitespace()).expect("options");
    options.settings = tiny();
    let reports = run(&options).expect("the run itself completes");
    assert_eq!(reports.len(), 2);
    assert!(reports.iter().all(|r| r.is_failure() && r.errors == 1), "{reports:?}");
}
