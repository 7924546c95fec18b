//! The etcd cluster a spawned cluster node stores in: [`EtcdCluster`] starts
//! fresh members on free loopback ports under a work directory, waits until
//! each answers, says how much CPU and disk they use, and stops and removes
//! them (when dropped too). [`wait_serving`] waits until the cluster node
//! over them owns every coordinator partition.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use kafka_protocol::messages::{ApiKey, OffsetCommitRequest, OffsetCommitResponse};

use crate::requests::{self, OFFSET_COMMIT_VERSION};
use crate::server::COORDINATOR_PARTITIONS;
use crate::{Connection, LoadgenError};

/// How long the members may take to elect a leader and answer.
pub const ETCD_START_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a cluster node may take, after it listens, to own and serve
/// every coordinator partition.
pub const SERVING_TIMEOUT: Duration = Duration::from_secs(60);

/// A running etcd cluster of local processes, started for one scenario.
/// Dropping it kills every member (by its own pid) and removes their data.
///
/// Each member runs under `setpriv --pdeathsig KILL` when `setpriv` is on
/// `PATH`: the kernel kills it when the thread that started it dies, so a
/// generator killed with SIGKILL (which runs no `Drop`) leaves no etcd behind.
#[derive(Debug)]
pub struct EtcdCluster {
    members: Vec<Member>,
    dir: PathBuf,
}

#[derive(Debug)]
struct Member {
    name: String,
    client_port: u16,
    data: PathBuf,
    log: PathBuf,
    child: Option<Child>,
}

impl EtcdCluster {
    /// Starts `members` (at least 1) processes of `binary` as one new cluster,
    /// with data and logs under `dir`, fast elections (50 ms heartbeats, 500 ms
    /// election timeout, as the workspace's etcd tests run them), and waits
    /// until every member reports itself healthy, at most [`ETCD_START_TIMEOUT`].
    pub fn start(binary: &Path, members: usize, dir: &Path) -> Result<EtcdCluster, LoadgenError> {
        let n = members.max(1);
        std::fs::create_dir_all(dir)
            .map_err(|e| LoadgenError::io(&format!("creating {}", dir.display()), &e))?;
        // Held until every port is chosen, so that no two are the same.
        let listeners = (0..2 * n)
            .map(|_| TcpListener::bind("127.0.0.1:0"))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| LoadgenError::io("finding a free loopback port", &e))?;
        let ports = listeners
            .iter()
            .map(|l| l.local_addr().map(|a| a.port()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| LoadgenError::io("finding a free loopback port", &e))?;
        drop(listeners);
        let url = |port: u16| format!("http://127.0.0.1:{port}");
        let names: Vec<String> = (0..n).map(|i| format!("e{i}")).collect();
        let initial_cluster: Vec<String> =
            names.iter().zip(ports.chunks(2)).map(|(name, p)| format!("{name}={}", url(p[1]))).collect();
        let initial_cluster = initial_cluster.join(",");
        let mut cluster = EtcdCluster { members: Vec::with_capacity(n), dir: dir.to_owned() };
        let pdeathsig = on_path("setpriv");
        for (name, p) in names.into_iter().zip(ports.chunks(2)) {
            let (client, peer) = (url(p[0]), url(p[1]));
            let data = dir.join(&name);
            let log = dir.join(format!("{name}.log"));
            let spawn_error = |reason: String| LoadgenError::Spawn { path: binary.to_owned(), reason };
            let out =
                std::fs::File::create(&log).map_err(|e| spawn_error(format!("{}: {e}", log.display())))?;
            let err = out.try_clone().map_err(|e| spawn_error(format!("{}: {e}", log.display())))?;
            let mut cmd = match &pdeathsig {
                Some(setpriv) => {
                    let mut c = Command::new(setpriv);
                    c.args(["--pdeathsig", "KILL", "--"]).arg(binary);
                    c
                }
                None => Command::new(binary),
            };
            cmd.arg("--name")
                .arg(&name)
                .arg("--data-dir")
                .arg(&data)
                .args(["--listen-client-urls", &client, "--advertise-client-urls", &client])
                .args(["--listen-peer-urls", &peer, "--initial-advertise-peer-urls", &peer])
                .args(["--initial-cluster", &initial_cluster, "--initial-cluster-state", "new"])
                .args(["--initial-cluster-token", "group-loadgen"])
                .args(["--heartbeat-interval", "50", "--election-timeout", "500"])
                .args(["--logger", "zap", "--log-outputs", "stderr", "--log-level", "warn"])
                .stdin(Stdio::null())
                .stdout(out)
                .stderr(err);
            // Pushed before the next spawn can fail, so that `Drop` stops it.
            let child = cmd.spawn().map_err(|e| spawn_error(e.to_string()))?;
            cluster.members.push(Member { name, client_port: p[0], data, log, child: Some(child) });
        }
        cluster.wait_healthy(ETCD_START_TIMEOUT)?;
        Ok(cluster)
    }

    /// The members' client URLs, for `group-server --etcd`.
    pub fn endpoints(&self) -> Vec<String> {
        self.members.iter().map(|m| format!("http://127.0.0.1:{}", m.client_port)).collect()
    }

    /// The members' process ids (those still running).
    pub fn pids(&self) -> Vec<u32> {
        self.members.iter().filter_map(|m| m.child.as_ref().map(Child::id)).collect()
    }

    /// The members' database files (`member/snap/db`) together, in bytes:
    /// what the cluster's keys and their history take on disk.
    pub fn db_bytes(&self) -> u64 {
        self.members
            .iter()
            .filter_map(|m| std::fs::metadata(m.data.join("member/snap/db")).ok())
            .map(|meta| meta.len())
            .sum()
    }

    /// Kills every member, waits for each to exit, and removes their data
    /// directories (the logs stay beside them, for a failed run's post-mortem).
    pub fn stop(&mut self) {
        for m in &mut self.members {
            if let Some(mut child) = m.child.take() {
                let _ = child.kill();
                let _ = child.wait();
            }
            let _ = std::fs::remove_dir_all(&m.data);
        }
    }

    /// The directory of the members' data and logs.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn wait_healthy(&mut self, timeout: Duration) -> Result<(), LoadgenError> {
        let deadline = Instant::now() + timeout;
        for m in &mut self.members {
            loop {
                if let Some(child) = m.child.as_mut()
                    && let Ok(Some(status)) = child.try_wait()
                {
                    return Err(LoadgenError::EtcdStartup(format!(
                        "member {} exited with {status}{}",
                        m.name,
                        log_tail(&m.log)
                    )));
                }
                if healthy(m.client_port) {
                    break;
                }
                if Instant::now() >= deadline {
                    return Err(LoadgenError::EtcdStartup(format!(
                        "member {} not healthy within {timeout:?}{}",
                        m.name,
                        log_tail(&m.log)
                    )));
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        Ok(())
    }
}

impl Drop for EtcdCluster {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Whether the member on `port` answers `/health` with a leader elected.
fn healthy(port: u16) -> bool {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_millis(200)) else {
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

/// The last lines of a member's log, for error messages.
fn log_tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let tail = &lines[lines.len().saturating_sub(3)..];
    if tail.is_empty() { String::new() } else { format!("; its log ends: {}", tail.join(" | ")) }
}

/// `name` in a directory of `PATH`, if there.
fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?).map(|dir| dir.join(name)).find(|p| p.is_file())
}

/// The coordinator partition of `group_id` among `partitions`, as the server
/// routes it (Kafka's `GroupCoordinatorService.partitionFor`:
/// `Utils.abs(groupId.hashCode()) % partitions`, Java's `String.hashCode` over
/// UTF-16 code units, `Utils.abs` masking the sign bit). The generator
/// depends on no workspace crate, so it computes this itself.
pub fn coordinator_partition(group_id: &str, partitions: u32) -> u32 {
    let hash = group_id.encode_utf16().fold(0i32, |h, unit| h.wrapping_mul(31).wrapping_add(i32::from(unit)));
    (hash & 0x7fff_ffff) as u32 % partitions.max(1)
}

/// One group id per coordinator partition (`group-loadgen-ready-N`, the
/// first N that lands there), in partition order.
pub(crate) fn probe_groups(partitions: u32) -> Vec<String> {
    let mut probes: Vec<Option<String>> = vec![None; partitions as usize];
    let mut missing = probes.len();
    let mut i = 0u64;
    while missing > 0 {
        let group = format!("group-loadgen-ready-{i}");
        let slot = &mut probes[coordinator_partition(&group, partitions) as usize];
        if slot.is_none() {
            *slot = Some(group);
            missing -= 1;
        }
        i += 1;
    }
    probes.into_iter().flatten().collect()
}

/// Waits until the server at `addr` acknowledges a commit on every one of its
/// [`COORDINATOR_PARTITIONS`], at most `timeout`.
///
/// A cluster node prints its listening line before it owns its partitions,
/// and FindCoordinator may name it for a partition before it has loaded it;
/// an acknowledged commit shows the partition is owned, loaded and writable.
/// The probe groups are left behind: a few keys beside the benchmark's.
pub async fn wait_serving(addr: SocketAddr, timeout: Duration) -> Result<(), LoadgenError> {
    let deadline = tokio::time::Instant::now() + timeout;
    let mut pending = probe_groups(COORDINATOR_PARTITIONS);
    let mut last = String::from("no answer yet");
    while !pending.is_empty() {
        match commit_each(addr, &mut pending).await {
            Ok(Some(code)) => last = crate::drive::code_name(code),
            Ok(None) => {}
            Err(e) => last = e.to_string(),
        }
        if pending.is_empty() {
            break;
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(LoadgenError::ServerStartup(format!(
                "the cluster node did not serve {} of its {COORDINATOR_PARTITIONS} coordinator partitions \
                 within {timeout:?} (last: {last})",
                pending.len()
            )));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(())
}

/// Commits once to each group of `pending` and removes those acknowledged;
/// returns the last error code seen. On a failed connection the groups not
/// yet acknowledged stay pending.
async fn commit_each(addr: SocketAddr, pending: &mut Vec<String>) -> Result<Option<i16>, LoadgenError> {
    let mut conn = Connection::connect(addr).await?;
    let mut last = None;
    let mut i = 0;
    while i < pending.len() {
        let request: OffsetCommitRequest = requests::simple_commit(&pending[i], 0, 0);
        let answer: OffsetCommitResponse =
            conn.call(ApiKey::OffsetCommit, OFFSET_COMMIT_VERSION, &request).await?;
        match answer.topics.iter().flat_map(|t| &t.partitions).map(|p| p.error_code).find(|&c| c != 0) {
            Some(code) => {
                last = Some(code);
                i += 1;
            }
            None => {
                pending.swap_remove(i);
            }
        }
    }
    Ok(last)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn routes_groups_as_the_server_does(group in "\\PC{0,24}", partitions in 1u32..200) {
            let server = group_offsets::CoordinatorPartition::of(&group, partitions);
            prop_assert_eq!(coordinator_partition(&group, partitions), server.0);
        }
    }

    #[test]
    fn java_string_hash_codes() {
        // "group".hashCode() == 98629247 in Java; "" hashes to 0.
        assert_eq!(coordinator_partition("group", 50), 98_629_247 % 50);
        assert_eq!(coordinator_partition("", 50), 0);
        assert_eq!(coordinator_partition("anything", 1), 0);
        assert_eq!(coordinator_partition("anything", 0), 0);
    }

    #[test]
    fn a_probe_group_for_every_partition() {
        let probes = probe_groups(50);
        assert_eq!(probes.len(), 50);
        for (p, group) in probes.iter().enumerate() {
            assert_eq!(coordinator_partition(group, 50) as usize, p, "{group}");
        }
    }
}
