//! Heartbeat throughput and latency of many Stable members: closed loop with
//! one or several heartbeats in flight per member, open loop at a fixed
//! interval, and the open loop swept over rising offered rates.

use std::time::Duration;

use super::{metered_closed_loop, metered_open_loop, prefix, record_server_stats};
use crate::drive::{Stream, Tally};
use crate::group::{Member, form_groups};
use crate::report::{format_latency, short_rate, thousands};
use crate::{LoadgenError, Percentiles, ScenarioReport, Settings, Target};

/// `settings.members` members in `settings.groups` groups, formed, each with
/// its heartbeat encoded.
pub(crate) async fn heartbeat_streams(
    target: &Target,
    name: &str,
    members: usize,
    groups: usize,
    settings: &Settings,
) -> Result<Vec<Stream>, LoadgenError> {
    form_groups(target.addr, &prefix(settings, name), members, groups)
        .await?
        .into_iter()
        .map(Member::into_heartbeat_stream)
        .collect()
}

/// `heartbeat`: every member keeps one heartbeat in flight (closed loop).
pub async fn heartbeat(target: &Target, settings: &Settings) -> Result<ScenarioReport, LoadgenError> {
    closed(target, settings, "heartbeat", 1).await
}

/// `pipelined`: every member keeps `settings.pipeline_depth` heartbeats in flight.
pub async fn pipelined(target: &Target, settings: &Settings) -> Result<ScenarioReport, LoadgenError> {
    closed(target, settings, "pipelined", settings.pipeline_depth).await
}

async fn closed(
    target: &Target,
    settings: &Settings,
    name: &str,
    depth: usize,
) -> Result<ScenarioReport, LoadgenError> {
    let streams = heartbeat_streams(target, name, settings.members, settings.groups, settings).await?;
    let n = streams.len();
    let (_, tally, usage) = metered_closed_loop(streams, depth, settings.duration, target).await;
    let mut report = ScenarioReport::measured(name, "hb", tally, usage);
    report.note(format!("{n} members in {} groups, {depth} in flight each", settings.groups.min(n)));
    record_server_stats(&mut report, target, "server");
    Ok(report)
}

/// `paced`: every member heartbeats every `settings.paced_interval` whatever
/// the answers do (open loop); latency counts from the scheduled send time.
pub async fn paced(target: &Target, settings: &Settings) -> Result<ScenarioReport, LoadgenError> {
    let streams = heartbeat_streams(target, "paced", settings.members, settings.groups, settings).await?;
    let n = streams.len();
    let interval = settings.paced_interval;
    let (_, tally, usage) = metered_open_loop(streams, interval, settings.duration, target).await;
    let mut report = open_report("paced".to_owned(), n, interval, tally, usage);
    record_server_stats(&mut report, target, "server");
    Ok(report)
}

/// `sweep`: the paced load at each of `settings.sweep_rates` in turn, over one
/// set of members, until the achieved rate falls below
/// `settings.sweep_stop_ratio` of the offered one; a row per rate.
pub async fn sweep(target: &Target, settings: &Settings) -> Result<Vec<ScenarioReport>, LoadgenError> {
    let mut streams = heartbeat_streams(target, "sweep", settings.members, settings.groups, settings).await?;
    let mut rows = Vec::new();
    for &rate in &settings.sweep_rates {
        if streams.is_empty() {
            break;
        }
        let n = streams.len();
        let interval = Duration::from_secs_f64(n as f64 / rate);
        let (back, tally, usage) = metered_open_loop(streams, interval, settings.duration, target).await;
        streams = back;
        let mut report = open_report(format!("sweep {}/s", short_rate(rate)), n, interval, tally, usage);
        let ratio = report.rate / report.offered_rate.unwrap_or(rate);
        let stop = ratio < settings.sweep_stop_ratio;
        if stop {
            report.note(format!("achieved {:.0}% of offered: the sweep stops here", ratio * 100.0));
        }
        rows.push(report);
        if stop {
            break;
        }
    }
    Ok(rows)
}

/// The row of an open loop of `n` streams, one request each `interval`.
fn open_report(
    name: String,
    n: usize,
    interval: Duration,
    mut tally: Tally,
    usage: crate::CpuUsage,
) -> ScenarioReport {
    let lag = Percentiles::from_nanos(&mut tally.send_lag_ns);
    let offered = n as f64 / interval.as_secs_f64();
    let mut report = ScenarioReport::measured(name, "hb", tally, usage);
    report.offered_rate = Some(offered);
    report.note(format!("offered {}/s: {n} members every {}", thousands(offered), format_latency(interval)));
    if let Some(lag) = lag {
        // Sends are late by the timer's rounding, which the latency leaves
        // out, or by back-pressure, which it includes.
        report.note(format!("send lag p99 {}", format_latency(lag.p99)));
        report.metric("send_lag_p99_us", lag.p99.as_secs_f64() * 1e6);
    }
    report
}
