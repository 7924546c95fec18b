//! The benchmark scenarios, one function each, and what they share: group
//! naming and the metered windows the drivers run in.

mod commit;
mod heartbeat;
mod idle;
mod mixed;
mod rebalance;

use std::time::Duration;

pub use self::commit::{commit_distinct, commit_one_group};
pub use self::heartbeat::{heartbeat, paced, pipelined, sweep};
pub use self::idle::idle;
pub use self::mixed::heartbeat_under_commits;
pub use self::rebalance::rebalance;

use crate::drive::{self, Stream, Tally, Window};
use crate::{CpuUsage, LoadgenError, Scenario, ScenarioReport, Settings, Target};

/// Runs one scenario; `sweep` gives a row per offered rate, the others one row.
pub async fn run_scenario(
    scenario: Scenario,
    target: &Target,
    settings: &Settings,
) -> Result<Vec<ScenarioReport>, LoadgenError> {
    let one = |r: ScenarioReport| vec![r];
    Ok(match scenario {
        Scenario::Idle => one(idle(target, settings).await?),
        Scenario::Heartbeat => one(heartbeat(target, settings).await?),
        Scenario::Pipelined => one(pipelined(target, settings).await?),
        Scenario::Paced => one(paced(target, settings).await?),
        Scenario::Sweep => sweep(target, settings).await?,
        Scenario::CommitDistinct => one(commit_distinct(target, settings).await?),
        Scenario::CommitOneGroup => one(commit_one_group(target, settings).await?),
        Scenario::HeartbeatUnderCommits => one(heartbeat_under_commits(target, settings).await?),
        Scenario::Rebalance => one(rebalance(target, settings).await?),
    })
}

/// The group-id prefix of a scenario in this run.
fn prefix(settings: &Settings, scenario: &str) -> String {
    format!("{}-{scenario}", settings.run_id)
}

/// A closed loop over one metered window of `duration`.
async fn metered_closed_loop(
    streams: Vec<Stream>,
    depth: usize,
    duration: Duration,
    target: &Target,
) -> (Vec<Stream>, Tally, CpuUsage) {
    let window = Window::starting_soon(duration);
    let meter = tokio::spawn(window.meter(target.pid, target.etcd_pids.clone()));
    let (streams, tally) = drive::closed_loop(streams, depth, window).await;
    (streams, tally, joined_meter(meter, duration).await)
}

/// An open loop (one request per stream every `interval`) over one metered window.
async fn metered_open_loop(
    streams: Vec<Stream>,
    interval: Duration,
    duration: Duration,
    target: &Target,
) -> (Vec<Stream>, Tally, CpuUsage) {
    let window = Window::starting_soon(duration);
    let meter = tokio::spawn(window.meter(target.pid, target.etcd_pids.clone()));
    let (streams, tally) = drive::open_loop(streams, interval, window).await;
    (streams, tally, joined_meter(meter, duration).await)
}

/// The meter's reading; if its task died, the window's length and no CPU.
async fn joined_meter(meter: tokio::task::JoinHandle<CpuUsage>, duration: Duration) -> CpuUsage {
    meter.await.unwrap_or(CpuUsage { elapsed: duration, server_s: None, etcd_s: None, generator_s: 0.0 })
}

/// Server memory, threads and fds into `report`'s metrics under `{label}_...`
/// (nothing if there is no pid or `/proc` cannot be read).
fn record_server_stats(
    report: &mut ScenarioReport,
    target: &Target,
    label: &str,
) -> Option<crate::ProcessStats> {
    let stats = crate::ProcessStats::read(target.pid?).ok()?;
    report.metric(&format!("{label}_rss_bytes"), stats.rss_bytes as f64);
    report.metric(&format!("{label}_threads"), stats.threads as f64);
    report.metric(&format!("{label}_fds"), stats.fds as f64);
    Some(stats)
}

/// `12.3 MiB`.
pub(crate) fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}
