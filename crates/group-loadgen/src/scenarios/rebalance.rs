//! Rebalance time of one group: every member rejoins with its id at once,
//! the leader syncs an assignment, the followers sync; the time from the
//! first JoinGroup sent to the last SyncGroup answer received.
//!
//! The row also splits each round into its join phase (to the last JoinGroup
//! answer) and its sync phase, says how long the generator itself took to send
//! the round's JoinGroups (the join cannot end before the last one arrives), and gives the time the group took to form from
//! nothing (every member new: MEMBER_ID_REQUIRED, the join, the sync), a
//! different workload that is sometimes also called "a rebalance".
//!
//! Each round's subscription carries new user data. As in Kafka, a follower
//! that rejoins a Stable group with unchanged metadata is simply handed the
//! current generation back (only the leader's rejoin rebalances), and the
//! rebalance would then wait its whole timeout for followers that never come.

use super::{prefix, record_server_stats};
use crate::drive::Tally;
use crate::group::{connect_all, form_group, rebalance_round};
use crate::latency::nanos;
use crate::{LoadgenError, Meter, Percentiles, ScenarioReport, Settings, Target, requests};

fn format_ms(d: std::time::Duration) -> String {
    format!("{:.2}ms", d.as_secs_f64() * 1e3)
}

/// `rebalance`: `settings.rebalances` rebalances of a group of
/// `settings.rebalance_members` members. A round counts as an error if any
/// member got an error code or the members did not all land in the next
/// generation; the metrics say which generation they ended in.
pub async fn rebalance(target: &Target, settings: &Settings) -> Result<ScenarioReport, LoadgenError> {
    let n = settings.rebalance_members;
    let group = prefix(settings, "rebalance");
    let conns = connect_all(target.addr, n).await?;
    let forming = std::time::Instant::now();
    let mut members = form_group(group, conns).await?;
    let formation = forming.elapsed();
    let generation_before = members.first().map_or(-1, |m| m.generation);
    let mut expected = generation_before;
    let mut tally = Tally::default();
    let (mut spreads, mut joins, mut syncs) = (Vec::new(), Vec::new(), Vec::new());
    let mut first_problem = None;
    let meter = Meter::start(target.pid, &target.etcd_pids);
    for k in 0..settings.rebalances {
        let subscription = requests::subscription_for_round(u32::try_from(k).unwrap_or(u32::MAX))?;
        let (back, round) = rebalance_round(members, &subscription).await?;
        members = back;
        tally.latencies_ns.push(nanos(round.last_answer.saturating_duration_since(round.first_sent)));
        spreads.push(nanos(round.last_sent.saturating_duration_since(round.first_sent)));
        joins.push(nanos(round.last_join.saturating_duration_since(round.first_sent)));
        syncs.push(nanos(round.last_answer.saturating_duration_since(round.last_join)));
        tally.answered_in_window += 1;
        expected += 1;
        let problem = round.problem(n).or_else(|| {
            let got = round.generations.first().copied();
            (got != Some(expected)).then(|| format!("generation {got:?}, expected {expected}"))
        });
        if let Some(problem) = problem {
            // One kind for all failed rounds: the details name members.
            tally.errors.add("rebalance round incomplete".to_owned(), 1);
            first_problem = first_problem.or(Some(problem));
        }
        if let Some(&g) = round.generations.first() {
            expected = g;
        }
    }
    let usage = meter.read();
    let generation_after = members.first().map_or(-1, |m| m.generation);
    let in_last = members.iter().filter(|m| m.generation == generation_after).count();
    let mut report = ScenarioReport::measured("rebalance", "rebalances", tally, usage);
    report.note(format!(
        "{n} members, {} rebalances: generation {generation_before} to {generation_after}, \
         {in_last} members in the last",
        settings.rebalances
    ));
    if let Some(problem) = first_problem {
        report.note(format!("first incomplete round: {problem}"));
    }
    let phases = [("send_spread", &mut spreads), ("join_phase", &mut joins), ("sync_phase", &mut syncs)];
    for (name, samples) in phases {
        if let Some(p) = Percentiles::from_nanos(samples) {
            report.metric(&format!("{name}_p50_ms"), p.p50.as_secs_f64() * 1e3);
            report.metric(&format!("{name}_p99_ms"), p.p99.as_secs_f64() * 1e3);
            report.note(format!("{name} p50 {} p99 {}", format_ms(p.p50), format_ms(p.p99)));
        }
    }
    // Forming includes the settling heartbeats, polled every 10 ms.
    report.metric("formation_ms", formation.as_secs_f64() * 1e3);
    report.note(format!("formed from nothing in {}", format_ms(formation)));
    report.metric("generation_before", f64::from(generation_before));
    report.metric("generation_after", f64::from(generation_after));
    report.metric("members_in_last_generation", in_last as f64);
    record_server_stats(&mut report, target, "server");
    Ok(report)
}
