//! The load generator against an in-process `group-server`: every scenario at
//! tiny sizes, the whole run with its outputs, and the failure paths; its
//! command line; and a run over etcd with a spawned cluster node.

mod cluster;
mod failures;
mod options;
mod run;
mod scenarios;

use std::time::Duration;

use group_loadgen::{ScenarioReport, Settings, Target};
use group_server::{GroupServer, ServerConfig};

/// A server on an ephemeral port, memory storage, no initial rebalance delay.
pub(crate) fn server() -> (GroupServer, Target) {
    let config = ServerConfig::from_args([
        "--listen",
        "127.0.0.1:0",
        "--memory",
        "--initial-rebalance-delay-ms",
        "0",
        "--topic",
        "bench:64",
    ])
    .expect("config");
    let server = GroupServer::start(&config).expect("server starts");
    // The server runs in this process, so its CPU is the test's.
    let target = Target::new(server.local_addr(), Some(std::process::id()));
    (server, target)
}

/// Every scenario, shrunk to a few members and a fraction of a second.
pub(crate) fn tiny() -> Settings {
    Settings {
        duration: Duration::from_millis(300),
        idle_connections: 50,
        idle_active_members: 3,
        members: 20,
        groups: 4,
        pipeline_depth: 4,
        paced_interval: Duration::from_millis(20),
        sweep_rates: vec![200.0, 400.0],
        distinct_committers: 8,
        one_group_committers: 8,
        under_commits_members: 6,
        under_commits_groups: 2,
        under_commits_committers: 4,
        rebalance_members: 8,
        rebalances: 3,
        ..Settings::default()
    }
}

/// What every measured row must show: answers, no errors, ordered percentiles.
pub(crate) fn check(report: &ScenarioReport) {
    assert!(!report.is_failure(), "{report:?}");
    assert!(report.answered > 0, "nothing answered: {report:?}");
    assert_eq!(report.errors, 0, "errors: {:?}", report.error_kinds);
    let p = report.latency.expect("latencies");
    assert!(p.p50 <= p.p99 && p.p99 <= p.p999, "{p:?}");
    assert!(p.samples as u64 >= report.answered, "{p:?} for {} answers", report.answered);
    assert!(report.rate > 0.0);
    assert!(report.server_cpu_s.is_some(), "the pid is known");
}
