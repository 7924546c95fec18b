//! KIP-848's consumer protocol end to end: confluent-kafka 2.16.1 (librdkafka 2.16.0)
//! with `group.protocol=consumer` against the `group-server` binary, driven by
//! `e2e/consumer_protocol.py` in the virtual environment `e2e/venv.sh` keeps (shared
//! with the other real-client tests).
//!
//! The script runs the scenarios it is given in parallel, against one server in memory
//! (short consumer session and heartbeat timers) and one on sled for the restart.

use std::process::Command;

/// Runs `scenarios` of the script, expecting every one to pass.
fn run(name: &str, scenarios: &[&str]) {
    let _turn = crate::e2e::real_clients_turn();
    let crate::e2e::Clients { binary, work, scripts: e2e, python } = crate::e2e::clients();
    let run_dir = work.join(format!("consumer-protocol-{name}"));
    let _ = std::fs::remove_dir_all(&run_dir);
    let mut command = Command::new(&python);
    command
        .arg(e2e.join("consumer_protocol.py"))
        .arg("run")
        .arg("--server")
        .arg(&binary)
        .arg("--workdir")
        .arg(&run_dir)
        .arg("--only")
        .arg(scenarios.join(","));
    let n = scenarios.len();
    crate::e2e::run_scenarios(command, &format!("consumer-protocol: {n}/{n} scenarios passed"));
}

/// One member consumes and is described; three join one by one (a kept partition is
/// never revoked, no partition has two owners); a member killed expires after the
/// session timeout; a member closing leaves at once; a static member restarting within
/// its session gets its partitions back; `^foo.*` picks up a topic CreateTopics makes
/// later; commits at the member epoch are read back by a later member, which resumes
/// from them; ListGroups v5 lists and filters the consumer type; a classic kafka-python
/// group is upgraded by a consumer-protocol member and downgraded when it leaves; a sled
/// server killed and restarted under running members keeps the group and the offsets;
/// three members joining one by one move no more partitions than balance needs; three
/// members of a Stable group are counted in `/metrics` as a consumer group with three
/// members, their joins, epoch bumps and a leave counted and logged.
#[test]
fn librdkafka_consumer_groups_pass_the_scenarios() {
    run(
        "main",
        &[
            "single",
            "three_join",
            "kill",
            "leave",
            "static",
            "regex",
            "commits",
            "list_groups",
            "migration",
            "restart",
            "sticky",
            "metrics",
        ],
    );
}
