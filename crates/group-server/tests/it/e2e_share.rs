//! KIP-932 share groups end to end: confluent-kafka 2.16.1's `ShareConsumer`
//! (librdkafka 2.16.0) against the `group-server` binary, driven by `e2e/share.py` in
//! the virtual environment `e2e/venv.sh` keeps (shared with the other real-client
//! tests): three share consumers on a 2-partition topic all join and hold partitions,
//! one leaves and the others still cover both, and the group survives a kill -9 of the
//! server, each step checked through ShareGroupDescribe.

use std::process::Command;

#[test]
fn share_consumers_join_leave_and_survive_a_restart() {
    let _turn = crate::e2e::real_clients_turn();
    let clients = crate::e2e::clients();
    let run_dir = clients.work.join("share");
    let _ = std::fs::remove_dir_all(&run_dir);
    let mut command = Command::new(&clients.python);
    command.arg(clients.scripts.join("share.py")).arg("run").arg("--server").arg(&clients.binary);
    command.arg("--workdir").arg(&run_dir);
    crate::e2e::run_scenarios(command, "share: 1/1 scenarios passed");
}
