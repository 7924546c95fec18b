//! Real Kafka clients against a cluster of `group-server --cluster` nodes over etcd:
//! `e2e/cluster.py` starts a 3-member etcd cluster and three nodes itself (and a fourth
//! later), kills and pauses nodes and etcd members, and checks with kafka-python and
//! confluent-kafka that groups spread over the nodes, follow their partitions when a
//! node dies, is paused past its lease, or joins, survive the loss of one etcd member,
//! fail cleanly without an etcd quorum and recover after it, and that no acknowledged
//! commit is ever lost; and that a group config altered on one node is described by
//! every node, in force on the group's coordinator, and kept across a restart. The virtual environment is the one `e2e/venv.sh` keeps.
//!
//! etcd is `GROUP_ETCD_BIN` (set by `cargo xtask ci`), else `target/tools/bin/etcd`
//! in the workspace; without it the test fails, naming how to get it.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::certs::arg;

/// The etcd server binary, or a failure that says how to get one.
fn etcd_binary() -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let etcd = std::env::var_os("GROUP_ETCD_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace.join("target/tools/bin/etcd"));
    assert!(
        etcd.is_file(),
        "no etcd binary at {} (GROUP_ETCD_BIN, else <workspace>/target/tools/bin/etcd): run `cargo xtask ci`, \
         or `bash xtask/tools/cluster-tools.sh target/tools` in the workspace, to unpack it",
        etcd.display()
    );
    etcd
}

#[test]
fn real_kafka_clients_follow_groups_across_a_cluster() {
    let _turn = crate::e2e::real_clients_turn();
    let etcd = etcd_binary();
    let binary = PathBuf::from(env!("CARGO_BIN_EXE_group-server"));
    let target = binary.parent().and_then(Path::parent).expect("binary in a target dir").to_path_buf();
    let e2e = Path::new(env!("CARGO_MANIFEST_DIR")).join("e2e");
    let venv = Command::new("bash").arg(e2e.join("venv.sh")).arg(target.join("group-server-e2e")).output();
    let venv = venv.expect("venv.sh runs");
    assert!(venv.status.success(), "venv.sh failed: {}", String::from_utf8_lossy(&venv.stderr));
    let python = String::from_utf8(venv.stdout).expect("UTF-8").trim().to_owned();
    let work = target.join("group-server-e2e-cluster");
    let mut command = Command::new(&python);
    command.arg(e2e.join("cluster.py")).arg("run");
    command.args(["--server", arg(&binary), "--etcd", arg(&etcd), "--workdir", arg(&work)]);
    crate::e2e::run_scenarios(command, "cluster: 7/7 scenarios passed");
}
