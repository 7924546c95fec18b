//! Group configs and KIP-430 authorized operations with real admin clients:
//! confluent-kafka 2.16.1 and kafka-python 3.0.12 against the `group-server` binary,
//! driven by `e2e/group_configs.py` in the virtual environment `e2e/venv.sh` keeps
//! (shared with the other real-client tests): IncrementalAlterConfigs and
//! DescribeConfigs of a GROUP resource, a refusal out of bounds, the configs kept
//! across a kill -9, and DescribeGroups' authorized operations.

use std::process::Command;

#[test]
fn real_admin_clients_alter_and_describe_group_configs() {
    let _turn = crate::e2e::real_clients_turn();
    let clients = crate::e2e::clients();
    let run_dir = clients.work.join("group-configs");
    let _ = std::fs::remove_dir_all(&run_dir);
    let mut command = Command::new(&clients.python);
    command.arg(clients.scripts.join("group_configs.py")).arg("run").arg("--server").arg(&clients.binary);
    command.arg("--workdir").arg(&run_dir);
    crate::e2e::run_scenarios(command, "group-configs: 1/1 scenarios passed");
}
