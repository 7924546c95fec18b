//! A whole run, as the binary does it: each scenario against its own freshly
//! spawned server (or all against one running server), then the outputs.

use std::path::Path;

use crate::report::{format_latency, thousands};
use crate::scenarios::run_scenario;
use crate::server::{ServerProcess, Storage, Target, raise_nofile_limit};
use crate::{
    LoadgenError, Options, Scenario, ScenarioReport, ServerSpec, SweepPoint, render_json, sweep_svg,
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
            ServerSpec::Spawn(binary) => run_spawned(&runtime, binary, scenario, options),
            ServerSpec::Connect { addr, pid } => {
                let target = Target { addr: *addr, pid: *pid };
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

fn run_spawned(
    runtime: &tokio::runtime::Runtime,
    binary: &Path,
    scenario: Scenario,
    options: &Options,
) -> Vec<ScenarioReport> {
    let name = scenario.name();
    let dir = options.work_dir.join(name);
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(e) = std::fs::create_dir_all(&dir) {
        return vec![ScenarioReport::failed(
            name,
            &LoadgenError::io(&format!("creating {}", dir.display()), &e),
        )];
    }
    let storage = if scenario.durable() { Storage::Sled(dir.join("data")) } else { Storage::Memory };
    let partitions = options.settings.topic_partitions();
    let mut server = match ServerProcess::spawn(binary, &storage, partitions, &dir.join("server.log")) {
        Ok(server) => server,
        Err(e) => return vec![ScenarioReport::failed(name, &e)],
    };
    let target = server.target();
    let mut rows = runtime
        .block_on(run_scenario(scenario, &target, &options.settings))
        .unwrap_or_else(|e| vec![ScenarioReport::failed(name, &e)]);
    let died = server.exited().map(|how| format!("the server {how}{}", server.log_tail()));
    for row in &mut rows {
        row.note(match storage {
            Storage::Sled(_) => "sled storage",
            _ => "memory storage",
        });
        if let Some(died) = &died {
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
        format!("{}: {} {}/s, p99 {p99}, {} errors", r.scenario, thousands(r.rate), r.unit, r.errors)
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
    let title = format!("group-server heartbeats: latency vs offered load ({server})");
    write(&options.svg, &sweep_svg(&title, &SweepPoint::from_reports(reports)))
}

fn write(path: &Path, text: &str) -> Result<(), LoadgenError> {
    let what = format!("writing {}", path.display());
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| LoadgenError::io(&what, &e))?;
    }
    std::fs::write(path, text).map_err(|e| LoadgenError::io(&what, &e))
}
