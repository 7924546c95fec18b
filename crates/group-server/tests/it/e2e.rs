//! End-to-end scenarios with real Kafka clients: kafka-python 3.0.12 and confluent-kafka
//! 2.16.1 (librdkafka 2.16.0), driven by `e2e/run.sh` against the `group-server` binary.
//!
//! The script keeps a virtual environment under the target directory, so only the first
//! run downloads the clients from PyPI.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// Held by each real-client test while it runs: two at once starve each other on a
/// 2-core machine (nextest runs them in one test group, see .config/nextest.toml).
static REAL_CLIENTS: Mutex<()> = Mutex::new(());

/// One real-client test at a time within this process.
pub(crate) fn real_clients_turn() -> MutexGuard<'static, ()> {
    REAL_CLIENTS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The real-client tests' setting: the server binary, the work directory in its
/// target directory, the scripts' directory, and the python of the virtual
/// environment `e2e/venv.sh` keeps there (created on the first call).
pub(crate) struct Clients {
    pub(crate) binary: PathBuf,
    pub(crate) work: PathBuf,
    pub(crate) scripts: PathBuf,
    pub(crate) python: String,
}

pub(crate) fn clients() -> Clients {
    let binary = PathBuf::from(env!("CARGO_BIN_EXE_group-server"));
    // <target>/<profile>/group-server: the work directory lives in <target>.
    let target = binary.parent().and_then(Path::parent).expect("binary in a target dir").to_path_buf();
    let work = target.join("group-server-e2e");
    let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("e2e");
    let venv = Command::new("bash").arg(scripts.join("venv.sh")).arg(&work).output().expect("venv.sh runs");
    assert!(venv.status.success(), "venv.sh failed: {}", String::from_utf8_lossy(&venv.stderr));
    let python = String::from_utf8(venv.stdout).expect("UTF-8").trim().to_owned();
    Clients { binary, work, scripts, python }
}

/// Generous: the first run also creates the virtual environment and installs the clients.
const LIMIT: Duration = Duration::from_secs(600);

#[test]
fn real_kafka_clients_pass_the_scenarios() {
    let _turn = real_clients_turn();
    let binary = PathBuf::from(env!("CARGO_BIN_EXE_group-server"));
    // <target>/<profile>/group-server: the work directory lives in <target>.
    let target = binary.parent().and_then(Path::parent).expect("binary in a target dir").to_path_buf();
    let work = target.join("group-server-e2e");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("e2e").join("run.sh");
    let mut command = Command::new("bash");
    command.arg(&script).arg(&binary).arg(&work);
    run_scenarios(command, "e2e: 10/10 scenarios passed");
}

/// Runs a scenario script to its end (killing it by its own pid past [`LIMIT`]; it
/// kills its client processes the same way), prints what it wrote, and asserts that
/// it succeeded with `summary` in its output.
pub(crate) fn run_scenarios(mut command: Command, summary: &str) {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("{command:?} does not start: {e}"));
    let stdout = child.stdout.take().expect("piped stdout");
    let reader = std::thread::spawn(move || std::io::read_to_string(stdout).unwrap_or_default());
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(status);
        }
        if started.elapsed() > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let output = reader.join().unwrap_or_default();
    println!("{output}");
    let status = status.unwrap_or_else(|| panic!("the scenarios exceeded {LIMIT:?}:\n{output}"));
    assert!(status.success(), "the scenarios failed ({status}):\n{output}");
    assert!(output.contains(summary), "unexpected summary (expected {summary:?}):\n{output}");
}
