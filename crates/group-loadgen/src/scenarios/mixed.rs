//! Heartbeat latency while committers keep the storage busy: do durable
//! commits on some groups delay the heartbeats of others?

use super::commit::commit_streams;
use super::heartbeat::heartbeat_streams;
use super::{joined_meter, prefix, record_server_stats};
use crate::drive::{self, Window};
use crate::report::{format_latency, thousands};
use crate::{LoadgenError, Percentiles, ScenarioReport, Settings, Target};

/// `heartbeat-under-commits`: `settings.under_commits_members` members in
/// `settings.under_commits_groups` groups heartbeat (closed loop, one in
/// flight) while `settings.under_commits_committers` committers commit, each
/// to its own group, over the same window. The row is the heartbeats'; the
/// commits' figures are in the notes and metrics.
pub async fn heartbeat_under_commits(
    target: &Target,
    settings: &Settings,
) -> Result<ScenarioReport, LoadgenError> {
    let name = "heartbeat-under-commits";
    let members = settings.under_commits_members;
    let heartbeats =
        heartbeat_streams(target, name, members, settings.under_commits_groups, settings).await?;
    let committers = settings.under_commits_committers;
    let commits =
        commit_streams(target, &format!("{}-commits", prefix(settings, name)), committers, false).await?;

    let window = Window::starting_soon(settings.duration);
    let meter = tokio::spawn(window.meter(target.pid, target.etcd_pids.clone()));
    let commit_driver = tokio::spawn(drive::closed_loop(commits, 1, window));
    let (_, hb_tally) = drive::closed_loop(heartbeats, 1, window).await;
    let commit_tally = commit_driver.await.map(|(_, t)| t);
    let usage = joined_meter(meter, settings.duration).await;

    let mut report = ScenarioReport::measured(name, "hb", hb_tally, usage);
    report.note(format!(
        "{members} members in {} groups, 1 in flight each",
        settings.under_commits_groups.min(members)
    ));
    match commit_tally {
        Ok(mut commit_tally) => {
            let secs = usage.elapsed.as_secs_f64().max(f64::MIN_POSITIVE);
            let commit_rate = commit_tally.answered_in_window as f64 / secs;
            let latency = Percentiles::from_nanos(&mut commit_tally.latencies_ns);
            report.metric("commit_rate_per_s", commit_rate);
            let mut note = format!("meanwhile {committers} committers: {} commits/s", thousands(commit_rate));
            if let Some(p) = latency {
                report.metric("commit_p50_us", p.p50.as_secs_f64() * 1e6);
                report.metric("commit_p99_us", p.p99.as_secs_f64() * 1e6);
                note.push_str(&format!(", p50 {} p99 {}", format_latency(p.p50), format_latency(p.p99)));
            }
            report.note(note);
            report.note("server CPU covers the commits too");
            for (kind, n) in commit_tally.errors.0 {
                *report.error_kinds.entry(format!("commit: {kind}")).or_insert(0) += n;
                report.errors += n;
            }
        }
        Err(e) => {
            report.errors += 1;
            report.error_kinds.insert(format!("commit driver failed: {e}"), 1);
        }
    }
    record_server_stats(&mut report, target, "server");
    Ok(report)
}
