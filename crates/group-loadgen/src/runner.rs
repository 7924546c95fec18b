//! A whole run, as the binary does it: each scenario against its own freshly
//! spawned server (a durable one also against a cluster node over a fresh
//! etcd cluster, with `--etcd`), or all against one running server; then the
//! outputs.

use std::path::Path;

use crate::etcd::{EtcdCluster, SERVING_TIMEOUT, wait_serving};
use crate::report::ETCD_DB_BYTES;
use crate::report::{format_latency, thousands};
use crate::scenarios::{mib, run_scenario};
use crate::server::{ServerProcess, Storage, Target, raise_nofile_limit};
use crate::{
    ClusterSpec, LoadgenError, Options, Scenario, ScenarioReport, ServerSpec, render_json, report_svg,
};

/// Descriptors beyond the largest scenario's connections (see `idle`).
const FD_HEADROOM: u64 = 1024;

/// Runs every scenario of `options` in turn and returns their rows.
///
/// A scenario that cannot run (its server does not start, connections are
/// refused, a group does not form) gives a [`ScenarioReport::failed`] row and
/// the run goes on; `Err` only if the runtime cannot be built.
pub fn run(options: &Options) -> Result<Vec<ScenarioReport>, LoadgenError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(options.threads)
        .enable_all()
        .build()
        .map_err(|e| LoadgenError::Runtime(e.to_string()))?;
    let s = &options.settings;
    let largest = [s.idle_connections + s.idle_active_members, s.members, s.distinct_committers]
        .into_iter()
        .max()
        .unwrap_or(0);
    // Before any server is spawned: it inherits the raised limit.
    if let Err(e) = raise_nofile_limit(largest as u64 + FD_HEADROOM) {
        eprintln!("group-loadgen: {e}");
    }
    let mut reports = Vec::new();
    for &scenario in &options.scenarios {
        eprintln!("group-loadgen: running {} ...", scenario.name());
        let rows = match &options.server {
            ServerSpec::Spawn(binary) => {
                let mut rows = run_spawned(&runtime, binary, scenario, options);
                if let Some(cluster) = options.cluster.as_ref().filter(|_| scenario.durable()) {
                    rows.extend(run_on_cluster(&runtime, binary, cluster, scenario, options));
                }
                rows
            }
            ServerSpec::Connect { addr, pid } => {
                let target = Target::new(*addr, *pid);
                runtime
                    .block_on(run_scenario(scenario, &target, &options.settings))
                    .unwrap_or_else(|e| vec![ScenarioReport::failed(scenario.name(), &e)])
            }
        };
        for row in &rows {
            eprintln!("group-loadgen:   {}", summary(row));
        }
        reports.extend(rows);
    }
    Ok(reports)
}

/// A fresh, empty directory `name` under the work directory.
fn fresh_dir(options: &Options, name: &str) -> Result<std::path::PathBuf, LoadgenError> {
    let dir = options.work_dir.join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)
        .map_err(|e| LoadgenError::io(&format!("creating {}", dir.display()), &e))?;
    Ok(dir)
}

fn run_spawned(
    runtime: &tokio::runtime::Runtime,
    binary: &Path,
    scenario: Scenario,
    options: &Options,
) -> Vec<ScenarioReport> {
    let name = scenario.name();
    let dir = match fresh_dir(options, name) {
        Ok(dir) => dir,
        Err(e) => return vec![ScenarioReport::failed(name, &e)],
    };
    let storage = if scenario.durable() { Storage::Sled(dir.join("data")) } else { Storage::Memory };
    let mut rows = match ServerProcess::spawn(
        binary,
        &storage,
        options.settings.topic_partitions(),
        &dir.join("server.log"),
    ) {
        Ok(server) => measure(runtime, server, scenario, options, &[]),
        Err(e) => vec![ScenarioReport::failed(name, &e)],
    };
    for row in &mut rows {
        row.storage = Some(storage.name());
    }
    rows
}

/// `scenario` against `group-server --cluster` (node 1 of 1) over a fresh etcd
/// cluster of `cluster.members`, under `<work dir>/<scenario>-cluster`; the
/// members are stopped and their data removed afterwards, whatever happened.
fn run_on_cluster(
    runtime: &tokio::runtime::Runtime,
    binary: &Path,
    cluster: &ClusterSpec,
    scenario: Scenario,
    options: &Options,
) -> Vec<ScenarioReport> {
    let name = scenario.name();
    let started = fresh_dir(options, &format!("{name}-cluster")).and_then(|dir| {
        let etcd = EtcdCluster::start(&cluster.etcd, cluster.members, &dir.join("etcd"))?;
        let storage = Storage::Cluster { endpoints: etcd.endpoints() };
        let server = ServerProcess::spawn(
            binary,
            &storage,
            options.settings.topic_partitions(),
            &dir.join("server.log"),
        )?;
        // Until it owns its partitions a node answers NOT_COORDINATOR: those would be counted as errors.
        if let Err(e) = runtime.block_on(wait_serving(server.target().addr, SERVING_TIMEOUT)) {
            return Err(LoadgenError::ServerStartup(format!("{e}{}", server.log_tail())));
        }
        Ok((etcd, server))
    });
    let mut rows = match started {
        Ok((mut etcd, server)) => {
            let mut rows = measure(runtime, server, scenario, options, &etcd.pids());
            let db = etcd.db_bytes();
            etcd.stop();
            for row in rows.iter_mut().filter(|r| !r.is_failure()) {
                row.metric(ETCD_DB_BYTES, db as f64);
                let members = if cluster.members == 1 {
                    "1 etcd member".to_owned()
                } else {
                    format!("{} etcd members", cluster.members)
                };
                row.note(format!("{members}, etcd db {}", mib(db)));
            }
            rows
        }
        Err(e) => vec![ScenarioReport::failed(name, &e)],
    };
    for row in &mut rows {
        row.storage = Some("cluster");
    }
    rows
}

/// Runs `scenario` against a spawned `server` (storing in the etcd members
/// `etcd_pids`, if any) and stops it; a server that died on the way is noted
/// on every row.
fn measure(
    runtime: &tokio::runtime::Runtime,
    mut server: ServerProcess,
    scenario: Scenario,
    options: &Options,
    etcd_pids: &[u32],
) -> Vec<ScenarioReport> {
    let target = Target { etcd_pids: etcd_pids.to_vec(), ..server.target() };
    let mut rows = runtime
        .block_on(run_scenario(scenario, &target, &options.settings))
        .unwrap_or_else(|e| vec![ScenarioReport::failed(scenario.name(), &e)]);
    if let Some(died) = server.exited().map(|how| format!("the server {how}{}", server.log_tail())) {
        for row in &mut rows {
            row.note(died.clone());
        }
    }
    server.stop();
    rows
}

/// One line per row for the progress log on stderr.
fn summary(r: &ScenarioReport) -> String {
    let p99 = r.latency.map_or("-".to_owned(), |p| format_latency(p.p99));
    if r.is_failure() {
        format!("{}: {}", r.scenario, r.notes.join("; "))
    } else {
        let storage = r.storage.map_or(String::new(), |s| format!(" ({s})"));
        format!("{}{storage}: {} {}/s, p99 {p99}, {} errors", r.scenario, thousands(r.rate), r.unit, r.errors)
    }
}

/// Writes the JSON report and the sweep's SVG plot where `options` says,
/// creating their directories.
pub fn write_outputs(options: &Options, reports: &[ScenarioReport]) -> Result<(), LoadgenError> {
    let server = match &options.server {
        ServerSpec::Spawn(binary) => format!("spawned {}", binary.display()),
        ServerSpec::Connect { addr, pid } => match pid {
            Some(pid) => format!("{addr} (pid {pid})"),
            None => addr.to_string(),
        },
    };
    write(&options.json, &render_json(&server, reports))?;
    write(&options.svg, &report_svg(&server, reports))
}

fn write(path: &Path, text: &str) -> Result<(), LoadgenError> {
    let what = format!("writing {}", path.display());
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| LoadgenError::io(&what, &e))?;
    }
    std::fs::write(path, text).map_err(|e| LoadgenError::io(&what, &e))
}
