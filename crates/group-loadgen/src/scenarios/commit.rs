//! Simple-consumer commits (OffsetCommit v8, generation -1, no member id:
//! they need no join), one in flight per committer, spread over many groups
//! or all on one.

use kafka_protocol::messages::ApiKey;

use super::{metered_closed_loop, prefix, record_server_stats};
use crate::client::PreparedRequest;
use crate::drive::Stream;
use crate::group::connect_all;
use crate::requests::{self, OFFSET_COMMIT_VERSION};
use crate::{LoadgenError, ScenarioReport, Settings, Target};

/// `n` committers; on groups `{prefix}-{i}` (partition 0 each), or all on
/// the group `{prefix}` with partition `i` each.
pub(crate) async fn commit_streams(
    target: &Target,
    prefix: &str,
    n: usize,
    one_group: bool,
) -> Result<Vec<Stream>, LoadgenError> {
    connect_all(target.addr, n)
        .await?
        .into_iter()
        .enumerate()
        .map(|(i, conn)| {
            let (group, partition) =
                if one_group { (prefix.to_owned(), i) } else { (format!("{prefix}-{i}"), 0) };
            let commit = requests::simple_commit(&group, i32::try_from(partition).unwrap_or(i32::MAX), 1);
            let request = PreparedRequest::new(ApiKey::OffsetCommit, OFFSET_COMMIT_VERSION, &commit)?;
            Ok(Stream { conn, request })
        })
        .collect()
}

/// `commit-distinct`: `settings.distinct_committers` committers, each on its own group.
pub async fn commit_distinct(target: &Target, settings: &Settings) -> Result<ScenarioReport, LoadgenError> {
    commits(target, settings, "commit-distinct", settings.distinct_committers, false).await
}

/// `commit-one-group`: `settings.one_group_committers` committers on one
/// group, each its own partition.
pub async fn commit_one_group(target: &Target, settings: &Settings) -> Result<ScenarioReport, LoadgenError> {
    commits(target, settings, "commit-one-group", settings.one_group_committers, true).await
}

async fn commits(
    target: &Target,
    settings: &Settings,
    name: &str,
    n: usize,
    one_group: bool,
) -> Result<ScenarioReport, LoadgenError> {
    let streams = commit_streams(target, &prefix(settings, name), n, one_group).await?;
    let (_, tally, usage) = metered_closed_loop(streams, 1, settings.duration, target).await;
    let mut report = ScenarioReport::measured(name, "commits", tally, usage);
    report.note(if one_group {
        format!("{n} committers on one group, a partition each, 1 in flight each")
    } else {
        format!("{n} committers, a group each, 1 in flight each")
    });
    record_server_stats(&mut report, target, "server");
    Ok(report)
}
