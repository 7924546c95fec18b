//! The cluster half of a run: `--etcd` runs commit-distinct on sled and then
//! on a spawned `group-server --cluster` node over a fresh etcd member, and
//! leaves no etcd process behind. Skipped (with a printed reason) only when no
//! etcd binary is found: `$GROUP_ETCD_BIN`, else `<workspace>/target/tools/bin/etcd`
//! (where `xtask/tools/cluster-tools.sh target/tools` unpacks it), as the
//! workspace's other etcd tests look for it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use group_loadgen::{ETCD_CPU_S, ETCD_DB_BYTES, EtcdCluster, Options, render_table, run};

use crate::check;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The etcd binary, or `None` after printing why the test is skipped.
fn etcd_binary() -> Option<PathBuf> {
    let found = match std::env::var_os("GROUP_ETCD_BIN") {
        Some(bin) => Some(PathBuf::from(bin)).filter(|p| p.is_file()),
        None => Some(workspace_root().join("target/tools/bin/etcd")).filter(|p| p.is_file()),
    };
    if found.is_none() {
        eprintln!(
            "skipped: no etcd binary (set GROUP_ETCD_BIN or run xtask/tools/cluster-tools.sh target/tools)"
        );
    }
    found
}

/// The `group-server` binary beside this test's (`target/<profile>/`), built
/// with the cluster feature. `cargo xtask ci` builds the whole workspace with
/// `--features group-server/cluster`, so it is there already; run alone
/// (`cargo test -p group-loadgen`), this builds it (needs `protoc`: `$PROTOC`,
/// else the one `cluster-tools.sh` unpacked beside etcd).
fn cluster_server() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's own path");
    // target/<profile>/deps/it-HASH
    let profile_dir = exe.parent().and_then(Path::parent).expect("target/<profile>/deps").to_owned();
    let server = profile_dir.join("group-server");
    if has_cluster_mode(&server) {
        return server;
    }
    let target_dir = profile_dir.parent().expect("target/<profile>");
    let mut cargo = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cargo
        .current_dir(workspace_root())
        .args(["build", "-p", "group-server", "--features", "cluster", "--bin", "group-server"])
        .arg("--target-dir")
        .arg(target_dir);
    if profile_dir.file_name().is_some_and(|n| n == "release") {
        cargo.arg("--release");
    }
    let protoc = workspace_root().join("target/tools/bin/protoc");
    if std::env::var_os("PROTOC").is_none() && protoc.is_file() {
        cargo.env("PROTOC", protoc);
    }
    let status = cargo.status().expect("cargo runs");
    assert!(status.success(), "building group-server with --features cluster: {status}");
    assert!(has_cluster_mode(&server), "{} has no --cluster after the build", server.display());
    server
}

fn has_cluster_mode(server: &Path) -> bool {
    Command::new(server)
        .arg("--help")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).contains("--cluster"))
}

/// Whether process `pid` is gone (or a zombie nobody reaped yet).
fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

/// Processes whose command line names `dir` (the etcd members of a run under it).
fn processes_under(dir: &Path) -> Vec<String> {
    let needle = dir.to_string_lossy().into_owned();
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().bytes().all(|b| b.is_ascii_digit()))
        .filter_map(|e| {
            let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            let pid: u32 = e.file_name().to_string_lossy().parse().ok()?;
            (cmdline.contains(&needle) && !gone(pid)).then_some(cmdline)
        })
        .collect()
}

fn work_dir(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!("group-loadgen-{tag}-{}", std::process::id()))
}

#[test]
fn commit_distinct_runs_on_sled_and_on_a_cluster_node() {
    let Some(etcd) = etcd_binary() else { return };
    let server = cluster_server();
    let dir = work_dir("cluster-run");
    let line = format!(
        "--server {} --etcd {} --etcd-members 1 --scenarios commit-distinct --duration 1 --committers 4 \
         --work-dir {} --threads 2",
        server.display(),
        etcd.display(),
        dir.display()
    );
    let options = Options::from_args(line.split_whitespace()).expect("options");
    let reports = run(&options).expect("the run completes");
    let table = render_table(&reports);
    assert_eq!(reports.len(), 2, "{table}");
    let (sled, cluster) = (&reports[0], &reports[1]);
    assert_eq!((sled.storage, cluster.storage), (Some("sled"), Some("cluster")), "{table}");
    check(sled);
    check(cluster);
    assert!(cluster.metrics[ETCD_CPU_S] >= 0.0, "{:?}", cluster.metrics);
    assert!(cluster.metrics[ETCD_DB_BYTES] > 0.0, "{:?}", cluster.metrics);
    assert!(!sled.metrics.contains_key(ETCD_CPU_S), "{:?}", sled.metrics);
    assert!(cluster.vs_sled(&reports).is_some_and(|share| share > 0.0), "{table}");
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[2].contains(" sled ") && lines[3].contains(" cluster "), "{table}");
    assert!(processes_under(&dir).is_empty(), "left running: {:?}", processes_under(&dir));
    assert!(!dir.join("commit-distinct-cluster/etcd/e0").exists(), "the etcd data is removed");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn etcd_members_die_with_the_cluster_and_with_the_thread_that_started_them() {
    let Some(etcd) = etcd_binary() else { return };
    let dir = work_dir("etcd-members");
    let cluster = EtcdCluster::start(&etcd, 2, &dir.join("dropped")).expect("etcd starts");
    let pids = cluster.pids();
    assert_eq!(pids.len(), 2);
    assert!(cluster.db_bytes() > 0);
    drop(cluster);
    assert!(pids.iter().all(|&pid| gone(pid)), "dropping stops every member");
    assert!(!dir.join("dropped/e0").exists(), "and removes its data");

    // A generator killed outright runs no Drop: the members go with the thread
    // that started them (a parent-death signal), when `setpriv` is there to set it.
    if !Path::new("/usr/bin/setpriv").is_file() && !Path::new("/bin/setpriv").is_file() {
        eprintln!("no setpriv: only Drop stops etcd members");
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    let forgotten = dir.join("forgotten");
    let pids = std::thread::spawn(move || {
        let cluster = EtcdCluster::start(&etcd, 1, &forgotten).expect("etcd starts");
        let pids = cluster.pids();
        std::mem::forget(cluster);
        pids
    })
    .join()
    .expect("the thread ends");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !pids.iter().all(|&pid| gone(pid)) {
        if Instant::now() >= deadline {
            // Not left running by a failed test.
            let _ = Command::new("kill").arg("-9").args(pids.iter().map(u32::to_string)).status();
            panic!("etcd {pids:?} outlived the thread that started it");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = std::fs::remove_dir_all(&dir);
}
