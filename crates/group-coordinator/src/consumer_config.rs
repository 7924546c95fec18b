//! `ConsumerGroupConfig`: the broker settings of KIP-848 consumer groups
//! (`group.consumer.*`, `kip848-semantics.md` §4.1).

use std::fmt;
use std::str::FromStr;

/// `group.consumer.migration.policy`: which online conversions between classic and
/// consumer groups are allowed (§8.1). Empty groups convert whatever it says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MigrationPolicy {
    /// Neither way.
    Disabled,
    /// Classic to consumer only.
    Upgrade,
    /// Consumer to classic only.
    Downgrade,
    /// Both ways (Kafka 4's default).
    #[default]
    Bidirectional,
}

impl MigrationPolicy {
    /// True when a non-empty classic group may become a consumer group.
    pub fn allows_upgrade(self) -> bool {
        matches!(self, MigrationPolicy::Upgrade | MigrationPolicy::Bidirectional)
    }

    /// True when a consumer group whose members all use the classic protocol may
    /// become a classic group.
    pub fn allows_downgrade(self) -> bool {
        matches!(self, MigrationPolicy::Downgrade | MigrationPolicy::Bidirectional)
    }
}

/// A migration policy name that is not one of Kafka's four.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a migration policy (disabled, upgrade, downgrade, bidirectional)")]
pub struct BadMigrationPolicy(pub String);

impl FromStr for MigrationPolicy {
    type Err = BadMigrationPolicy;

    /// Case-insensitive, as `ConsumerGroupMigrationPolicy.parse`.
    fn from_str(s: &str) -> Result<MigrationPolicy, BadMigrationPolicy> {
        match s.to_ascii_lowercase().as_str() {
            "disabled" => Ok(MigrationPolicy::Disabled),
            "upgrade" => Ok(MigrationPolicy::Upgrade),
            "downgrade" => Ok(MigrationPolicy::Downgrade),
            "bidirectional" => Ok(MigrationPolicy::Bidirectional),
            _ => Err(BadMigrationPolicy(s.to_owned())),
        }
    }
}

impl fmt::Display for MigrationPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MigrationPolicy::Disabled => "disabled",
            MigrationPolicy::Upgrade => "upgrade",
            MigrationPolicy::Downgrade => "downgrade",
            MigrationPolicy::Bidirectional => "bidirectional",
        })
    }
}

/// Settings of consumer-protocol groups. [`Default`] gives Kafka 4.2's broker defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumerGroupConfig {
    /// `group.coordinator.rebalance.protocols` contains `consumer`: when false,
    /// ConsumerGroupHeartbeat and ConsumerGroupDescribe are `UNSUPPORTED_VERSION`.
    pub enabled: bool,
    /// `group.consumer.session.timeout.ms`.
    pub session_timeout_ms: i32,
    /// `group.consumer.min.session.timeout.ms`.
    pub min_session_timeout_ms: i32,
    /// `group.consumer.max.session.timeout.ms`.
    pub max_session_timeout_ms: i32,
    /// `group.consumer.heartbeat.interval.ms`.
    pub heartbeat_interval_ms: i32,
    /// `group.consumer.min.heartbeat.interval.ms`.
    pub min_heartbeat_interval_ms: i32,
    /// `group.consumer.max.heartbeat.interval.ms`.
    pub max_heartbeat_interval_ms: i32,
    /// `group.consumer.max.size`.
    pub max_size: i32,
    /// `group.consumer.assignors`: server assignor names; the first is the default.
    pub assignors: Vec<String>,
    /// `group.consumer.migration.policy`.
    pub migration_policy: MigrationPolicy,
    /// `group.consumer.regex.refresh.interval.ms`: how old a regex resolution may get.
    pub regex_refresh_interval_ms: i64,
}

impl Default for ConsumerGroupConfig {
    fn default() -> ConsumerGroupConfig {
        ConsumerGroupConfig {
            enabled: true,
            session_timeout_ms: 45_000,
            min_session_timeout_ms: 45_000,
            max_session_timeout_ms: 60_000,
            heartbeat_interval_ms: 5_000,
            min_heartbeat_interval_ms: 5_000,
            max_heartbeat_interval_ms: 15_000,
            max_size: i32::MAX,
            assignors: vec!["uniform".to_owned(), "range".to_owned()],
            migration_policy: MigrationPolicy::Bidirectional,
            regex_refresh_interval_ms: 600_000,
        }
    }
}

/// A consumer-group setting out of Kafka's bounds (`GroupCoordinatorConfig`'s checks).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid consumer group setting: {0}")]
pub struct BadConsumerGroupConfig(pub String);

impl ConsumerGroupConfig {
    /// Checks Kafka's constraints between the settings.
    pub fn validate(&self) -> Result<(), BadConsumerGroupConfig> {
        let bad = |m: String| Err(BadConsumerGroupConfig(m));
        if self.min_session_timeout_ms < 1 || self.max_session_timeout_ms < self.min_session_timeout_ms {
            return bad("group.consumer.min.session.timeout.ms must be >= 1 and <= the max".into());
        }
        if !(self.min_session_timeout_ms..=self.max_session_timeout_ms).contains(&self.session_timeout_ms) {
            return bad("group.consumer.session.timeout.ms must be between its min and max".into());
        }
        if self.min_heartbeat_interval_ms < 1
            || self.max_heartbeat_interval_ms < self.min_heartbeat_interval_ms
        {
            return bad("group.consumer.min.heartbeat.interval.ms must be >= 1 and <= the max".into());
        }
        if !(self.min_heartbeat_interval_ms..=self.max_heartbeat_interval_ms)
            .contains(&self.heartbeat_interval_ms)
        {
            return bad("group.consumer.heartbeat.interval.ms must be between its min and max".into());
        }
        if self.heartbeat_interval_ms >= self.session_timeout_ms {
            return bad("group.consumer.heartbeat.interval.ms must be below the session timeout".into());
        }
        if self.max_size < 1 {
            return bad("group.consumer.max.size must be >= 1".into());
        }
        if self.assignors.is_empty() {
            return bad("group.consumer.assignors must name at least one assignor".into());
        }
        for (i, name) in self.assignors.iter().enumerate() {
            if self.assignors[..i].contains(name) {
                return bad(format!("group.consumer.assignors names `{name}` twice"));
            }
        }
        if self.regex_refresh_interval_ms < 10_000 {
            return bad("group.consumer.regex.refresh.interval.ms must be >= 10000".into());
        }
        Ok(())
    }
}

/// Per-group overrides (`GroupConfig`, set as IncrementalAlterConfigs on a GROUP
/// resource would): effective from the group's next heartbeat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GroupConfigOverrides {
    /// `consumer.session.timeout.ms`.
    pub session_timeout_ms: Option<i32>,
    /// `consumer.heartbeat.interval.ms`.
    pub heartbeat_interval_ms: Option<i32>,
    /// `share.session.timeout.ms`.
    pub share_session_timeout_ms: Option<i32>,
    /// `share.heartbeat.interval.ms`.
    pub share_heartbeat_interval_ms: Option<i32>,
    /// `share.record.lock.duration.ms`.
    pub share_record_lock_duration_ms: Option<i32>,
    /// `share.delivery.count.limit`.
    pub share_delivery_count_limit: Option<i32>,
    /// `share.partition.max.record.locks`.
    pub share_partition_max_record_locks: Option<i32>,
    /// `share.auto.offset.reset`.
    pub share_auto_offset_reset: Option<crate::ShareAutoOffsetReset>,
    /// `share.isolation.level`.
    pub share_isolation_level: Option<crate::ShareIsolationLevel>,
    /// `consumer.assignment.interval.ms` (KIP-1263): the least time between two
    /// target assignments of the consumer group.
    pub consumer_assignment_interval_ms: Option<i32>,
    /// `share.assignment.interval.ms` (KIP-1263): the same for the share group.
    pub share_assignment_interval_ms: Option<i32>,
}

impl GroupConfigOverrides {
    /// Checks the share-group overrides against the broker's `group.share.*`
    /// bounds, and session > interval (`GroupConfig.validate`).
    pub fn validate_share(&self, broker: &crate::ShareGroupConfig) -> Result<(), BadConsumerGroupConfig> {
        check_overrides(
            "share",
            self.share_session_timeout_ms.unwrap_or(broker.session_timeout_ms),
            (broker.min_session_timeout_ms, broker.max_session_timeout_ms),
            self.share_heartbeat_interval_ms.unwrap_or(broker.heartbeat_interval_ms),
            (broker.min_heartbeat_interval_ms, broker.max_heartbeat_interval_ms),
        )?;
        for (name, value, min, max) in [
            (
                "share.record.lock.duration.ms",
                self.share_record_lock_duration_ms,
                broker.min_record_lock_duration_ms,
                broker.max_record_lock_duration_ms,
            ),
            (
                "share.delivery.count.limit",
                self.share_delivery_count_limit,
                broker.min_delivery_count_limit,
                broker.max_delivery_count_limit,
            ),
            (
                "share.partition.max.record.locks",
                self.share_partition_max_record_locks,
                broker.min_partition_max_record_locks,
                broker.max_partition_max_record_locks,
            ),
        ] {
            if let Some(v) = value.filter(|v| !(min..=max).contains(v)) {
                return Err(BadConsumerGroupConfig(format!("{name} {v} is outside [{min}, {max}]")));
            }
        }
        Ok(())
    }

    /// Checks the assignment intervals against the broker's
    /// `group.<kind>.{min,max}.assignment.interval.ms`.
    pub fn validate_intervals(
        &self,
        broker: &crate::GroupConfigBounds,
    ) -> Result<(), BadConsumerGroupConfig> {
        for (name, value, bounds) in [
            (
                "consumer.assignment.interval.ms",
                self.consumer_assignment_interval_ms,
                broker.consumer_assignment_interval_ms,
            ),
            (
                "share.assignment.interval.ms",
                self.share_assignment_interval_ms,
                broker.share_assignment_interval_ms,
            ),
        ] {
            if let Some(v) = value.filter(|v| !(bounds.min..=bounds.max).contains(v)) {
                let (min, max) = (bounds.min, bounds.max);
                return Err(BadConsumerGroupConfig(format!("{name} {v} is outside [{min}, {max}]")));
            }
        }
        Ok(())
    }

    /// Checks the overrides against the broker's bounds, and session > interval.
    pub fn validate(&self, broker: &ConsumerGroupConfig) -> Result<(), BadConsumerGroupConfig> {
        check_overrides(
            "consumer",
            self.session_timeout_ms.unwrap_or(broker.session_timeout_ms),
            (broker.min_session_timeout_ms, broker.max_session_timeout_ms),
            self.heartbeat_interval_ms.unwrap_or(broker.heartbeat_interval_ms),
            (broker.min_heartbeat_interval_ms, broker.max_heartbeat_interval_ms),
        )
    }
}

/// A kind's session and interval (its `kind.session.timeout.ms` and
/// `kind.heartbeat.interval.ms` group settings) within the broker's bounds, the
/// interval below the session (`GroupConfig.validate`).
fn check_overrides(
    kind: &str,
    session: i32,
    (min_session, max_session): (i32, i32),
    interval: i32,
    (min_interval, max_interval): (i32, i32),
) -> Result<(), BadConsumerGroupConfig> {
    let bad = |m: String| Err(BadConsumerGroupConfig(m));
    if !(min_session..=max_session).contains(&session) {
        return bad(format!("{kind}.session.timeout.ms {session} is outside [{min_session}, {max_session}]"));
    }
    if !(min_interval..=max_interval).contains(&interval) {
        return bad(format!(
            "{kind}.heartbeat.interval.ms {interval} is outside [{min_interval}, {max_interval}]"
        ));
    }
    if interval >= session {
        return bad(format!(
            "{kind}.heartbeat.interval.ms {interval} must be below {kind}.session.timeout.ms {session}"
        ));
    }
    Ok(())
}
