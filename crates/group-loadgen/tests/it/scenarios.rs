//! Each scenario at tiny sizes: answered, no errors, percentiles in order.

use group_loadgen::{Scenario, scenarios};

use crate::{check, server, tiny};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_opens_every_connection_and_keeps_heartbeating() {
    let (_server, target) = server();
    let report = scenarios::idle(&target, &tiny()).await.expect("idle runs");
    check(&report);
    assert_eq!(report.metrics["idle_connections"], 50.0, "{:?}", report.notes);
    assert_eq!(report.metrics["idle_closed_by_server"], 0.0);
    assert!(report.metrics["with_idle_fds"] >= report.metrics["before_fds"] + 50.0, "{:?}", report.metrics);
    assert!(report.metrics["before_p50_us"] <= report.metrics["before_p99_us"]);
}

/// The scenarios with nothing to check beyond [`check`]: closed-loop heartbeats, one
/// and several in flight, and commits to distinct groups and to one.
#[rstest::rstest]
#[case::heartbeat(Scenario::Heartbeat)]
#[case::pipelined(Scenario::Pipelined)]
#[case::commits_on_distinct_groups(Scenario::CommitDistinct)]
#[case::commits_on_one_group(Scenario::CommitOneGroup)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closed_loop_scenarios(#[case] scenario: Scenario) {
    let (_server, target) = server();
    let rows = scenarios::run_scenario(scenario, &target, &tiny()).await.expect("runs");
    assert_eq!(rows.len(), 1);
    check(&rows[0]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paced_open_loop_offers_what_it_says() {
    let (_server, target) = server();
    let report = scenarios::paced(&target, &tiny()).await.expect("runs");
    check(&report);
    // 20 members every 20 ms.
    assert_eq!(report.offered_rate.map(f64::round), Some(1000.0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sweep_gives_a_row_per_rate_until_it_stops() {
    let (_server, target) = server();
    let rows = scenarios::sweep(&target, &tiny()).await.expect("runs");
    assert!(!rows.is_empty());
    for (row, rate) in rows.iter().zip([200.0, 400.0]) {
        check(row);
        assert_eq!(row.offered_rate.map(f64::round), Some(rate), "{}", row.scenario);
    }
    // A sweep stops only when the achieved rate fell short.
    if rows.len() < 2 {
        assert!(rows[0].notes.iter().any(|n| n.contains("stops")), "{:?}", rows[0].notes);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeats_under_commits_count_both() {
    let (_server, target) = server();
    let report = scenarios::heartbeat_under_commits(&target, &tiny()).await.expect("runs");
    check(&report);
    assert!(report.metrics["commit_rate_per_s"] > 0.0, "{:?}", report.metrics);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rebalance_ends_with_every_member_in_the_new_generation() {
    let (_server, target) = server();
    let settings = tiny();
    let report = scenarios::rebalance(&target, &settings).await.expect("runs");
    check(&report);
    assert_eq!(report.answered, 3);
    let m = &report.metrics;
    assert_eq!(m["generation_after"], m["generation_before"] + 3.0, "{m:?}");
    assert_eq!(m["members_in_last_generation"], 8.0);
    // The phases split each round: neither is longer than the slowest round.
    let p99_ms = report.latency.expect("latencies").p99.as_secs_f64() * 1e3;
    for phase in ["join_phase_p99_ms", "sync_phase_p99_ms"] {
        assert!(m[phase] > 0.0 && m[phase] <= p99_ms, "{phase}: {m:?}");
    }
    assert!(m["send_spread_p99_ms"] <= m["join_phase_p99_ms"], "the join ends after the last send: {m:?}");
    assert!(m["formation_ms"] > 0.0, "{m:?}");
}
