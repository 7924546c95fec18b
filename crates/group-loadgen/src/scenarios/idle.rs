//! What idle connections cost the server: memory, threads and descriptors,
//! and the heartbeat latency of one active group before and with them.

use std::time::Duration;

use tokio::time::Instant;

use super::heartbeat::heartbeat_streams;
use super::{metered_closed_loop, mib};
use crate::drive::Errors;
use crate::group::open_connections;
use crate::report::{format_latency, thousands};
use crate::server::{nofile_hard_limit, raise_nofile_limit};
use crate::{LoadgenError, Percentiles, ProcessStats, ScenarioReport, Settings, Target};

/// Opening the idle connections stops after this long: well inside the
/// active members' session timeout, which no heartbeat renews meanwhile.
const OPENING_DEADLINE: Duration = Duration::from_secs(60);

/// Descriptors kept free beyond the idle and active connections: the
/// runtime, stdio, `/proc` reads.
const FD_RESERVE: u64 = 256;

/// `idle`: one active group of `settings.idle_active_members` heartbeats
/// (closed loop) for a window; then `settings.idle_connections` connections
/// are opened, each sends one ApiVersions and then nothing; then the active
/// group heartbeats for another window. The row is the second window's; the
/// first window's latencies and the server's RSS, threads and fds before and
/// with the idle connections are in the notes and metrics.
///
/// The generator raises its own open-file limit for the connections; if the
/// hard limit is lower, fewer connections are opened and the notes say so.
pub async fn idle(target: &Target, settings: &Settings) -> Result<ScenarioReport, LoadgenError> {
    let asked = settings.idle_connections;
    let active = settings.idle_active_members;
    let (n, scaled) = connections_within_limit(asked, active)?;
    if let Some(why) = &scaled {
        eprintln!("group-loadgen: idle: {why}");
    }
    let streams = heartbeat_streams(target, "idle", active, 1, settings).await?;
    let stats_before = target.pid.and_then(|pid| ProcessStats::read(pid).ok());
    let (streams, mut before, _) = metered_closed_loop(streams, 1, settings.duration, target).await;
    let before_rate = before.answered_in_window as f64 / settings.duration.as_secs_f64();
    let before_latency = Percentiles::from_nanos(&mut before.latencies_ns);

    let opening = Instant::now();
    let mut idle = Vec::with_capacity(n);
    let mut connect_errors = Errors::default();
    for conn in open_connections(target.addr, n, true, Some(opening + OPENING_DEADLINE)).await {
        match conn {
            Ok(conn) => idle.push(conn),
            Err(e) => connect_errors.add(format!("idle connection: {}", e.kind()), 1),
        }
    }
    let open_time = opening.elapsed();
    let stats_with = target.pid.and_then(|pid| ProcessStats::read(pid).ok());

    let (_, tally, usage) = metered_closed_loop(streams, 1, settings.duration, target).await;
    let closed = idle.iter().filter(|c| c.closed_by_peer()).count();
    let mut report = ScenarioReport::measured("idle", "hb", tally, usage);
    report.errors += before.errors.total();
    for (kind, count) in before.errors.0 {
        *report.error_kinds.entry(format!("before: {kind}")).or_insert(0) += count;
    }
    report.errors += connect_errors.total();
    report.error_kinds.extend(connect_errors.0);
    if closed > 0 {
        report.errors += closed as u64;
        report.error_kinds.insert("idle connection closed by the server".to_owned(), closed as u64);
    }

    report.note(format!(
        "{} idle connections open (of {asked} asked) in {:.1}s, {active} active members",
        idle.len(),
        open_time.as_secs_f64()
    ));
    if let Some(why) = scaled {
        report.note(why);
    }
    if let (Some(a), Some(b)) = (stats_before, stats_with) {
        let per_conn = (b.rss_bytes as f64 - a.rss_bytes as f64) / idle.len().max(1) as f64 / 1024.0;
        report.note(format!(
            "server RSS {} -> {} ({per_conn:.1} KiB per idle connection), threads {} -> {}, fds {} -> {}",
            mib(a.rss_bytes),
            mib(b.rss_bytes),
            a.threads,
            b.threads,
            a.fds,
            b.fds
        ));
        for (label, s) in [("before", a), ("with_idle", b)] {
            report.metric(&format!("{label}_rss_bytes"), s.rss_bytes as f64);
            report.metric(&format!("{label}_threads"), s.threads as f64);
            report.metric(&format!("{label}_fds"), s.fds as f64);
        }
    }
    if let Some(p) = before_latency {
        report.note(format!(
            "heartbeats before the idle connections: {}/s, p50 {} p99 {}",
            thousands(before_rate),
            format_latency(p.p50),
            format_latency(p.p99)
        ));
        report.metric("before_p50_us", p.p50.as_secs_f64() * 1e6);
        report.metric("before_p99_us", p.p99.as_secs_f64() * 1e6);
    }
    report.metric("before_rate_per_s", before_rate);
    report.metric("idle_connections", idle.len() as f64);
    report.metric("idle_connections_asked", asked as f64);
    report.metric("idle_closed_by_server", closed as f64);
    report.metric("idle_open_s", open_time.as_secs_f64());
    Ok(report)
}

/// How many idle connections the open-file limit allows (after raising it as
/// far as the hard limit lets), and why fewer than `asked`, if so.
fn connections_within_limit(asked: usize, active: usize) -> Result<(usize, Option<String>), LoadgenError> {
    let wanted = (asked + active) as u64 + FD_RESERVE;
    let soft = raise_nofile_limit(wanted)?;
    let open = ProcessStats::read(std::process::id()).map_or(64, |s| s.fds);
    let room = soft.saturating_sub(open + active as u64 + FD_RESERVE);
    let n = asked.min(usize::try_from(room).unwrap_or(usize::MAX));
    let scaled = (n < asked).then(|| {
        let hard = nofile_hard_limit().map_or("unknown".to_owned(), |h| h.to_string());
        format!("scaled down from {asked} to {n} connections: RLIMIT_NOFILE is {soft} (hard limit {hard})")
    });
    Ok((n, scaled))
}
