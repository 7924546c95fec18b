//! Real etcd clusters for tests (feature `testing`): [`EtcdCluster`] spawns
//! etcd processes on free loopback ports, kills and restarts members, and
//! removes everything when dropped; [`unique_prefix`] gives each test its own
//! key prefix, so one cluster can serve many tests.
//!
//! The etcd binary is `$GROUP_ETCD_BIN` (set by `cargo xtask ci`), else
//! `<workspace>/target/tools/bin/etcd` (unpacked by
//! `xtask/tools/cluster-tools.sh target/tools`), else `etcd` on `PATH`.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long [`EtcdCluster::start`] and [`EtcdCluster::restart`] wait for
/// the cluster to elect a leader and answer.
pub const START_TIMEOUT: Duration = Duration::from_secs(20);

static UNIQUE: AtomicU64 = AtomicU64::new(0);

/// Why the test harness could not start or restart etcd.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HarnessError {
    /// No etcd binary was found where the harness looks.
    #[error(
        "no etcd binary: set GROUP_ETCD_BIN, or run `cargo xtask ci` or `xtask/tools/cluster-tools.sh target/tools` \
         (which unpacks it to {}), or put etcd on PATH",
        tools.display()
    )]
    NoBinary {
        /// Where `cluster-tools.sh` unpacks it.
        tools: PathBuf,
    },
    /// `GROUP_ETCD_BIN` names something that is not a file.
    #[error("GROUP_ETCD_BIN is {}, which is not a file", .0.display())]
    NotAFile(PathBuf),
    /// A file, directory, port or process could not be set up.
    #[error("{what}: {source}")]
    Io {
        /// What the harness was doing.
        what: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A member exited while starting.
    #[error("etcd member {member} exited with {status} at start; see {}", log.display())]
    Exited {
        /// The member's index.
        member: usize,
        /// How it exited.
        status: ExitStatus,
        /// Its log file.
        log: PathBuf,
    },
    /// A member did not report itself healthy in time.
    #[error("etcd member {member} did not become healthy within {timeout:?}")]
    Unhealthy {
        /// The member's index.
        member: usize,
        /// How long the harness waited.
        timeout: Duration,
    },
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> HarnessError {
    let what = what.into();
    move |source| HarnessError::Io { what, source }
}

/// A key prefix no other test (of this process or another) uses:
/// `/test/{tag}/{pid}-{n}-{nanos}`.
pub fn unique_prefix(tag: &str) -> String {
    format!("/test/{tag}/{}", unique())
}

fn unique() -> String {
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().subsec_nanos();
    format!("{}-{}-{nanos}", std::process::id(), UNIQUE.fetch_add(1, Ordering::Relaxed))
}

/// A running etcd cluster of local processes. Dropping it kills every
/// member (by its own pid) and removes the data directories.
///
/// ```no_run
/// use group_storage_etcd::testing::EtcdCluster;
///
/// let mut cluster = EtcdCluster::start(3)?;
/// let endpoints = cluster.endpoints();
/// cluster.kill(0);     // SIGKILL: the other two keep a quorum
/// cluster.restart(0)?; // same data directory: it rejoins
/// # Ok::<(), group_storage_etcd::testing::HarnessError>(())
/// ```
#[derive(Debug)]
pub struct EtcdCluster {
    members: Vec<Member>,
    dir: PathBuf,
    binary: PathBuf,
    initial_cluster: String,
    token: String,
}

#[derive(Debug)]
struct Member {
    name: String,
    client_port: u16,
    peer_port: u16,
    child: Option<Child>,
}

impl EtcdCluster {
    /// Starts `members` etcd processes (at least 1) as one cluster, with
    /// fast elections (50 ms heartbeats, 500 ms election timeout), data under
    /// `<workspace>/target/etcd-test/<unique>`, and waits until every member
    /// answers, at most [`START_TIMEOUT`].
    pub fn start(members: usize) -> Result<EtcdCluster, HarnessError> {
        let binary = etcd_binary()?;
        let dir = target_dir().join("etcd-test").join(unique());
        std::fs::create_dir_all(&dir).map_err(io(format!("cannot create {}", dir.display())))?;
        // Ports held until all are chosen, so no two members get the same one.
        let listeners: Vec<TcpListener> = (0..members.max(1) * 2)
            .map(|_| TcpListener::bind("127.0.0.1:0"))
            .collect::<Result<_, _>>()
            .map_err(io("no free loopback port"))?;
        let ports: Vec<u16> = listeners
            .iter()
            .map(|l| l.local_addr().map(|a| a.port()))
            .collect::<Result<_, _>>()
            .map_err(io("no address of a loopback port"))?;
        drop(listeners);
        let members: Vec<Member> = (0..members.max(1))
            .map(|i| Member {
                name: format!("m{i}"),
                client_port: ports[2 * i],
                peer_port: ports[2 * i + 1],
                child: None,
            })
            .collect();
        let initial_cluster = members
            .iter()
            .map(|m| format!("{}=http://127.0.0.1:{}", m.name, m.peer_port))
            .collect::<Vec<_>>()
            .join(",");
        let token = format!("group-storage-etcd-{}", unique());
        let mut cluster = EtcdCluster { members, dir, binary, initial_cluster, token };
        for i in 0..cluster.members.len() {
            cluster.spawn(i)?;
        }
        for i in 0..cluster.members.len() {
            cluster.wait_healthy(i)?;
        }
        Ok(cluster)
    }

    /// The client URLs of every member (killed ones included), for
    /// [`EtcdConfig::new`](crate::EtcdConfig::new).
    pub fn endpoints(&self) -> Vec<String> {
        self.members.iter().map(|m| format!("http://127.0.0.1:{}", m.client_port)).collect()
    }

    /// The process ids of the members running now, for reading their CPU use.
    pub fn pids(&self) -> Vec<u32> {
        self.members.iter().filter_map(|m| m.child.as_ref().map(Child::id)).collect()
    }

    /// Kills member `i` with SIGKILL and waits for it to exit (a no-op for a
    /// member already down).
    pub fn kill(&mut self, i: usize) {
        if let Some(mut child) = self.members.get_mut(i).and_then(|m| m.child.take()) {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts member `i` again on its data directory (it rejoins the
    /// cluster) and waits until it answers.
    pub fn restart(&mut self, i: usize) -> Result<(), HarnessError> {
        self.kill(i);
        self.spawn(i)?;
        self.wait_healthy(i)
    }

    /// Kills every member and removes the data directories (what `drop` does).
    pub fn stop_all(&mut self) {
        for i in 0..self.members.len() {
            self.kill(i);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }

    fn spawn(&mut self, i: usize) -> Result<(), HarnessError> {
        let m = &self.members[i];
        let data = self.dir.join(&m.name);
        let client = format!("http://127.0.0.1:{}", m.client_port);
        let peer = format!("http://127.0.0.1:{}", m.peer_port);
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join(format!("{}.log", m.name)))
            .map_err(io(format!("cannot create the log of {}", m.name)))?;
        let log2 = log.try_clone().map_err(io(format!("cannot share the log of {}", m.name)))?;
        let child = Command::new(&self.binary)
            .arg("--name")
            .arg(&m.name)
            .arg("--data-dir")
            .arg(&data)
            .args(["--listen-client-urls", &client, "--advertise-client-urls", &client])
            .args(["--listen-peer-urls", &peer, "--initial-advertise-peer-urls", &peer])
            .args(["--initial-cluster", &self.initial_cluster, "--initial-cluster-token", &self.token])
            // Ignored on a restart: the data directory knows the cluster.
            .args(["--initial-cluster-state", "new"])
            .args(["--heartbeat-interval", "50", "--election-timeout", "500"])
            .args(["--logger", "zap", "--log-level", "warn"])
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log2)
            .spawn()
            .map_err(io(format!("cannot run {}", self.binary.display())))?;
        self.members[i].child = Some(child);
        Ok(())
    }

    /// Polls the member's `/health` (true once the cluster has a leader).
    fn wait_healthy(&mut self, i: usize) -> Result<(), HarnessError> {
        let deadline = Instant::now() + START_TIMEOUT;
        let port = self.members[i].client_port;
        loop {
            if let Some(child) = self.members[i].child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                return Err(HarnessError::Exited {
                    member: i,
                    status,
                    log: self.dir.join(format!("m{i}.log")),
                });
            }
            if healthy(port) {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(HarnessError::Unhealthy { member: i, timeout: START_TIMEOUT });
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for EtcdCluster {
    fn drop(&mut self) {
        self.stop_all();
    }
}

fn healthy(port: u16) -> bool {
    let Ok(mut stream) =
        TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), Duration::from_millis(200))
    else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
    if stream.write_all(b"GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").is_err() {
        return false;
    }
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.contains("\"health\":\"true\"")
}

/// The workspace's target directory: `CARGO_TARGET_DIR` when set, else
/// `<workspace>/target`.
fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => workspace_root().join("target"),
    }
}

fn workspace_root() -> PathBuf {
    // This crate is `<workspace>/crates/group-storage-etcd`.
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn etcd_binary() -> Result<PathBuf, HarnessError> {
    if let Some(bin) = std::env::var_os("GROUP_ETCD_BIN") {
        let bin = PathBuf::from(bin);
        return if bin.is_file() { Ok(bin) } else { Err(HarnessError::NotAFile(bin)) };
    }
    let tools = workspace_root().join("target/tools/bin/etcd");
    if tools.is_file() {
        return Ok(tools);
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join("etcd");
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
    }
    Err(HarnessError::NoBinary { tools })
}
