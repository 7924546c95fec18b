//! The server under test: a [`Target`] to drive, either a `group-server`
//! process the generator spawns ([`ServerProcess`]) or one already running.
//! Also the generator's own open-file limit, which bounds its connections.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::LoadgenError;

/// Where the server under test listens, and its pid if known (for `/proc`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Its address.
    pub addr: SocketAddr,
    /// Its process id.
    pub pid: Option<u32>,
    /// The etcd members a cluster node stores in, whose CPU the scenarios
    /// report beside the server's (empty for a node on memory or sled).
    pub etcd_pids: Vec<u32>,
}

impl Target {
    /// A server at `addr` with process id `pid`, storing in no etcd.
    pub fn new(addr: SocketAddr, pid: Option<u32>) -> Target {
        Target { addr, pid, etcd_pids: Vec::new() }
    }
}

/// How a spawned server stores offsets.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Storage {
    /// `--memory`.
    Memory,
    /// `--data-dir DIR`, a fresh sled directory.
    Sled(PathBuf),
    /// `--cluster --etcd ENDPOINTS --node-id 1`: one cluster node over a
    /// fresh etcd cluster, owning every coordinator partition.
    Cluster {
        /// The etcd members' client URLs.
        endpoints: Vec<String>,
    },
}

impl Storage {
    /// Its name in the report: `memory`, `sled` or `cluster`.
    pub fn name(&self) -> &'static str {
        match self {
            Storage::Memory => "memory",
            Storage::Sled(_) => "sled",
            Storage::Cluster { .. } => "cluster",
        }
    }
}

/// Coordinator partitions a spawned server has (`--offsets-topic-num-partitions`,
/// Kafka's default): named, so that the generator knows which groups reach
/// every partition when it waits for a cluster node to serve them all.
pub const COORDINATOR_PARTITIONS: u32 = 50;

/// The line `group-server` prints once it listens.
const LISTENING: &str = "group-server listening on ";

/// How long a spawned server may take to print [`LISTENING`].
const STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a server whose stdin closed may take to exit before it is killed.
const EXIT_TIMEOUT: Duration = Duration::from_secs(5);

/// A `group-server` process the generator started, stopped when dropped.
#[derive(Debug)]
pub struct ServerProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    target: Target,
    log: PathBuf,
}

impl ServerProcess {
    /// Starts `binary` on an ephemeral loopback port with no initial
    /// rebalance delay, the topic `bench` with `partitions` partitions,
    /// [`COORDINATOR_PARTITIONS`] coordinator partitions, and `storage`; its
    /// stderr goes to `log`. Returns once it listens (a cluster node may not
    /// own its partitions yet: see [`crate::wait_serving`]).
    ///
    /// The server exits by itself when this process dies: its stdin is a
    /// pipe from here and it runs with `--exit-on-stdin-close`.
    pub fn spawn(
        binary: &Path,
        storage: &Storage,
        partitions: usize,
        log: &Path,
    ) -> Result<ServerProcess, LoadgenError> {
        let spawn_error = |reason: String| LoadgenError::Spawn { path: binary.to_owned(), reason };
        let stderr =
            std::fs::File::create(log).map_err(|e| spawn_error(format!("{}: {e}", log.display())))?;
        let mut cmd = Command::new(binary);
        cmd.args(["--listen", "127.0.0.1:0", "--exit-on-stdin-close", "--initial-rebalance-delay-ms", "0"])
            .arg("--topic")
            .arg(format!("{}:{partitions}", crate::requests::TOPIC))
            .arg("--offsets-topic-num-partitions")
            .arg(COORDINATOR_PARTITIONS.to_string());
        match storage {
            Storage::Memory => cmd.arg("--memory"),
            Storage::Sled(dir) => cmd.arg("--data-dir").arg(dir),
            Storage::Cluster { endpoints } => {
                cmd.args(["--cluster", "--node-id", "1", "--etcd"]).arg(endpoints.join(","))
            }
        };
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .map_err(|e| spawn_error(e.to_string()))?;
        let stdin = child.stdin.take();
        let Some(stdout) = child.stdout.take() else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(spawn_error("no stdout pipe".to_owned()));
        };
        let (tx, rx) = mpsc::channel();
        // Reads on after the line so that the server never blocks on a full pipe.
        std::thread::spawn(move || {
            let mut sent = false;
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if !sent && let Some(addr) = line.strip_prefix(LISTENING) {
                    sent = tx.send(addr.trim().to_owned()).is_ok();
                }
            }
        });
        let mut server = ServerProcess {
            target: Target::new(SocketAddr::from(([127, 0, 0, 1], 0)), Some(child.id())),
            child,
            stdin,
            log: log.to_owned(),
        };
        let addr = match rx.recv_timeout(STARTUP_TIMEOUT) {
            Ok(addr) => addr,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                server.stop();
                return Err(LoadgenError::ServerStartup(format!(
                    "no {LISTENING:?} line within {STARTUP_TIMEOUT:?}{}",
                    server.log_tail()
                )));
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                let status = server.wait_exit(EXIT_TIMEOUT);
                server.stop();
                return Err(LoadgenError::ServerStartup(format!("it {status}{}", server.log_tail())));
            }
        };
        server.target.addr = addr
            .parse()
            .map_err(|_| LoadgenError::ServerStartup(format!("it printed an unreadable address {addr:?}")))?;
        Ok(server)
    }

    /// Where to drive it.
    pub fn target(&self) -> Target {
        self.target.clone()
    }

    /// Its stderr log.
    pub fn log(&self) -> &Path {
        &self.log
    }

    /// `Some("exited with ...")` if it is no longer running.
    pub fn exited(&mut self) -> Option<String> {
        match self.child.try_wait() {
            Ok(Some(status)) => Some(format!("exited with {status}")),
            Ok(None) => None,
            Err(e) => Some(format!("cannot be waited for: {e}")),
        }
    }

    /// Waits up to `timeout` for it to exit; says how it ended.
    fn wait_exit(&mut self, timeout: Duration) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(how) = self.exited() {
                return how;
            }
            if Instant::now() >= deadline {
                return "did not exit".to_owned();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The last lines of its stderr, for error messages.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let tail = &lines[lines.len().saturating_sub(5)..];
        if tail.is_empty() { String::new() } else { format!("; its stderr ends: {}", tail.join(" | ")) }
    }

    /// Closes its stdin (it exits by itself), and kills it if it does not.
    pub fn stop(&mut self) {
        drop(self.stdin.take());
        if self.exited().is_none() && self.wait_exit(EXIT_TIMEOUT) == "did not exit" {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Raises this process's open-file soft limit towards `wanted` (at most to
/// the hard limit); returns the soft limit now in force.
///
/// A spawned server inherits the raised limit.
pub fn raise_nofile_limit(wanted: u64) -> Result<u64, LoadgenError> {
    rlimit::increase_nofile_limit(wanted).map_err(|e| LoadgenError::io("raising RLIMIT_NOFILE", &e))
}

/// The open-file hard limit, if it can be read.
pub fn nofile_hard_limit() -> Option<u64> {
    rlimit::Resource::NOFILE.get().ok().map(|(_, hard)| hard)
}
