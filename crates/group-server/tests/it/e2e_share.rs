//! KIP-932 share groups end to end: confluent-kafka 2.16.1's `ShareConsumer`
//! (librdkafka 2.16.0) against the `group-server` binary, driven by `e2e/share.py` in
//! the virtual environment `e2e/venv.sh` keeps (shared with the other real-client
//! tests): three share consumers on a 2-partition topic all join and hold partitions,
//! one leaves and the others still cover both, and the group survives a kill -9 of the
//! server, each step checked through ShareGroupDescribe.

use std::path::{Path, PathBuf};
use std::process::Command;

#[test]
fn share_consumers_join_leave_and_survive_a_restart() {
    let _turn = crate::e2e::real_clients_turn();
    let binary = PathBuf::from(env!("CARGO_BIN_EXE_group-server"));
    // <target>/<profile>/group-server: the work directory lives in <target>.
    let target = binary.parent().and_then(Path::parent).expect("binary in a target dir").to_path_buf();
    let work = target.join("group-server-e2e");
    let e2e = Path::new(env!("CARGO_MANIFEST_DIR")).join("e2e");
    let venv = Command::new("bash").arg(e2e.join("venv.sh")).arg(&work).output().expect("venv.sh runs");
    assert!(venv.status.success(), "venv.sh failed: {}", String::from_utf8_lossy(&venv.stderr));
    let python = String::from_utf8(venv.stdout).expect("UTF-8").trim().to_owned();
    let run_dir = work.join("share");
    let _ = std::fs::remove_dir_all(&run_dir);
    let mut command = Command::new(&python);
    command.arg(e2e.join("share.py")).arg("run").arg("--server").arg(&binary).arg("--workdir").arg(&run_dir);
    crate::e2e::run_scenarios(command, "share: 1/1 scenarios passed");
}
