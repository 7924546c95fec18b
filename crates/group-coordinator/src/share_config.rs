//! Settings of KIP-932 share groups (`group.share.*`), with Kafka 4.2's broker
//! defaults and bounds (`ShareGroupConfig`, `GroupCoordinatorConfig`).

use crate::BadConsumerGroupConfig;

/// Settings of share groups. [`Default`] gives Kafka 4.2's broker defaults, except
/// that share groups are off until the node serves the share coordinator too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareGroupConfig {
    /// `group.share.enable`: when false, ShareGroupHeartbeat is `UNSUPPORTED_VERSION`.
    pub enabled: bool,
    /// `group.share.session.timeout.ms`.
    pub session_timeout_ms: i32,
    /// `group.share.min.session.timeout.ms`.
    pub min_session_timeout_ms: i32,
    /// `group.share.max.session.timeout.ms`.
    pub max_session_timeout_ms: i32,
    /// `group.share.heartbeat.interval.ms`.
    pub heartbeat_interval_ms: i32,
    /// `group.share.min.heartbeat.interval.ms`.
    pub min_heartbeat_interval_ms: i32,
    /// `group.share.max.heartbeat.interval.ms`.
    pub max_heartbeat_interval_ms: i32,
    /// `group.share.max.size`: members per share group.
    pub max_size: i32,
    /// `group.share.assignors`: the share assignor (Kafka allows exactly one).
    pub assignor: String,
    /// `group.share.initialize.retry.interval.ms`: how long an initializing
    /// share partition waits before it is asked for again (Kafka uses the larger
    /// of this and `offsets.commit.timeout.ms`).
    pub initialize_retry_interval_ms: i64,
    /// `group.share.record.lock.duration.ms`: how long an acquired record stays
    /// locked to its consumer.
    pub record_lock_duration_ms: i32,
    /// `group.share.min.record.lock.duration.ms`: the least a group may set.
    pub min_record_lock_duration_ms: i32,
    /// `group.share.max.record.lock.duration.ms`: the most a group may set.
    pub max_record_lock_duration_ms: i32,
    /// `group.share.delivery.count.limit`: deliveries of a record before it is archived.
    pub delivery_count_limit: i32,
    /// `group.share.min.delivery.count.limit`.
    pub min_delivery_count_limit: i32,
    /// `group.share.max.delivery.count.limit`.
    pub max_delivery_count_limit: i32,
    /// `group.share.partition.max.record.locks`: records a share partition holds in
    /// flight at most.
    pub partition_max_record_locks: i32,
    /// `group.share.min.partition.max.record.locks`.
    pub min_partition_max_record_locks: i32,
    /// `group.share.max.partition.max.record.locks`.
    pub max_partition_max_record_locks: i32,
}

impl Default for ShareGroupConfig {
    fn default() -> ShareGroupConfig {
        ShareGroupConfig {
            enabled: false,
            session_timeout_ms: 45_000,
            min_session_timeout_ms: 45_000,
            max_session_timeout_ms: 60_000,
            heartbeat_interval_ms: 5_000,
            min_heartbeat_interval_ms: 5_000,
            max_heartbeat_interval_ms: 15_000,
            max_size: 200,
            assignor: "simple".to_owned(),
            initialize_retry_interval_ms: 30_000,
            record_lock_duration_ms: 30_000,
            min_record_lock_duration_ms: 15_000,
            max_record_lock_duration_ms: 60_000,
            delivery_count_limit: 5,
            min_delivery_count_limit: 2,
            max_delivery_count_limit: 10,
            partition_max_record_locks: 2_000,
            min_partition_max_record_locks: 100,
            max_partition_max_record_locks: 4_000,
        }
    }
}

/// Where a share partition starts when its state is first initialized
/// (`share.auto.offset.reset`, Kafka's `ShareGroupAutoOffsetResetStrategy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ShareAutoOffsetReset {
    /// The partition's earliest offset.
    Earliest,
    /// The partition's end (Kafka's default).
    #[default]
    Latest,
    /// The first offset written at most this long (ms) ago (`by_duration:PnDTnHnMn.nS`).
    ByDuration(i64),
}

impl std::str::FromStr for ShareAutoOffsetReset {
    type Err = crate::BadConsumerGroupConfig;

    /// `earliest`, `latest` or `by_duration:<ISO-8601 duration>`, case-insensitive, as
    /// Kafka's validator takes them (a duration is days, hours, minutes and seconds,
    /// never negative).
    fn from_str(value: &str) -> Result<ShareAutoOffsetReset, Self::Err> {
        let bad = || {
            crate::BadConsumerGroupConfig(format!(
                "share.auto.offset.reset {value:?} is not earliest, latest or by_duration:<ISO-8601 duration>"
            ))
        };
        let lower = value.trim().to_ascii_lowercase();
        match lower.as_str() {
            "earliest" => Ok(ShareAutoOffsetReset::Earliest),
            "latest" => Ok(ShareAutoOffsetReset::Latest),
            _ => {
                let duration = lower.strip_prefix("by_duration:").ok_or_else(bad)?;
                iso_duration_ms(duration).map(ShareAutoOffsetReset::ByDuration).ok_or_else(bad)
            }
        }
    }
}

/// Java's `Duration.parse` of `PnDTnHnMn.nS` (lower-cased), in milliseconds; `None`
/// for anything else, or a negative duration (Kafka refuses those).
fn iso_duration_ms(text: &str) -> Option<i64> {
    let rest = text.strip_prefix('p')?;
    let (days, time) = match rest.split_once('t') {
        Some((days, time)) => (days, Some(time)),
        None => (rest, None),
    };
    let mut ms: i64 = 0;
    let mut seen = false;
    if !days.is_empty() {
        ms = days.strip_suffix('d')?.parse::<i64>().ok()?.checked_mul(86_400_000)?;
        seen = true;
    }
    if let Some(mut time) = time {
        if time.is_empty() {
            return None;
        }
        for (unit, scale) in [('h', 3_600_000.0), ('m', 60_000.0), ('s', 1_000.0)] {
            if let Some((n, after)) = time.split_once(unit) {
                let n: f64 = n.parse().ok()?;
                ms = ms.checked_add((n * scale) as i64)?;
                time = after;
                seen = true;
            }
        }
        if !time.is_empty() {
            return None;
        }
    }
    (seen && ms >= 0).then_some(ms)
}

/// How a share group reads records written in transactions (`share.isolation.level`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ShareIsolationLevel {
    /// Every record (Kafka's default).
    #[default]
    ReadUncommitted,
    /// Only committed transactions' records.
    ReadCommitted,
}

impl std::str::FromStr for ShareIsolationLevel {
    type Err = crate::BadConsumerGroupConfig;

    fn from_str(value: &str) -> Result<ShareIsolationLevel, Self::Err> {
        match value {
            "read_uncommitted" => Ok(ShareIsolationLevel::ReadUncommitted),
            "read_committed" => Ok(ShareIsolationLevel::ReadCommitted),
            _ => Err(crate::BadConsumerGroupConfig(format!(
                "share.isolation.level {value:?} is not read_committed or read_uncommitted"
            ))),
        }
    }
}

/// What one share group runs with: the broker's `group.share.*` defaults with the
/// group's own `share.*` settings over them. A broker's fetch path reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShareGroupSettings {
    /// `share.record.lock.duration.ms`.
    pub record_lock_duration_ms: i32,
    /// `share.delivery.count.limit`.
    pub delivery_count_limit: i32,
    /// `share.partition.max.record.locks`.
    pub partition_max_record_locks: i32,
    /// `share.auto.offset.reset`.
    pub auto_offset_reset: ShareAutoOffsetReset,
    /// `share.isolation.level`.
    pub isolation_level: ShareIsolationLevel,
}

impl ShareGroupSettings {
    /// `broker`'s defaults with `overrides` over them.
    pub fn of(
        broker: &ShareGroupConfig,
        overrides: Option<&crate::GroupConfigOverrides>,
    ) -> ShareGroupSettings {
        let o = overrides.copied().unwrap_or_default();
        ShareGroupSettings {
            record_lock_duration_ms: o
                .share_record_lock_duration_ms
                .unwrap_or(broker.record_lock_duration_ms),
            delivery_count_limit: o.share_delivery_count_limit.unwrap_or(broker.delivery_count_limit),
            partition_max_record_locks: o
                .share_partition_max_record_locks
                .unwrap_or(broker.partition_max_record_locks),
            auto_offset_reset: o.share_auto_offset_reset.unwrap_or_default(),
            isolation_level: o.share_isolation_level.unwrap_or_default(),
        }
    }
}

impl ShareGroupConfig {
    /// Checks Kafka's constraints between the settings.
    pub fn validate(&self) -> Result<(), BadConsumerGroupConfig> {
        let bad = |m: &str| Err(BadConsumerGroupConfig(m.to_owned()));
        if self.min_session_timeout_ms < 1 || self.max_session_timeout_ms < self.min_session_timeout_ms {
            return bad("group.share.min.session.timeout.ms must be >= 1 and <= the max");
        }
        if !(self.min_session_timeout_ms..=self.max_session_timeout_ms).contains(&self.session_timeout_ms) {
            return bad("group.share.session.timeout.ms must be between its min and max");
        }
        if self.min_heartbeat_interval_ms < 1
            || self.max_heartbeat_interval_ms < self.min_heartbeat_interval_ms
        {
            return bad("group.share.min.heartbeat.interval.ms must be >= 1 and <= the max");
        }
        if !(self.min_heartbeat_interval_ms..=self.max_heartbeat_interval_ms)
            .contains(&self.heartbeat_interval_ms)
        {
            return bad("group.share.heartbeat.interval.ms must be between its min and max");
        }
        if self.heartbeat_interval_ms >= self.session_timeout_ms {
            return bad("group.share.heartbeat.interval.ms must be below the session timeout");
        }
        if !(1..=1000).contains(&self.max_size) {
            return bad("group.share.max.size must be between 1 and 1000");
        }
        if group_assignors::server::share_assignor(&self.assignor).is_none() {
            return bad("group.share.assignors must name a share assignor (simple)");
        }
        if self.initialize_retry_interval_ms < 1 {
            return bad("group.share.initialize.retry.interval.ms must be >= 1");
        }
        // `ShareGroupConfig`'s requirements: each default within its own bounds.
        let within = |v: i32, min: i32, max: i32| min <= v && v <= max;
        if !within(
            self.record_lock_duration_ms,
            self.min_record_lock_duration_ms,
            self.max_record_lock_duration_ms,
        ) {
            return bad("group.share.record.lock.duration.ms must be between its min and max");
        }
        if !within(self.delivery_count_limit, self.min_delivery_count_limit, self.max_delivery_count_limit) {
            return bad("group.share.delivery.count.limit must be between its min and max");
        }
        if !within(
            self.partition_max_record_locks,
            self.min_partition_max_record_locks,
            self.max_partition_max_record_locks,
        ) {
            return bad("group.share.partition.max.record.locks must be between its min and max");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    #[rstest]
    #[case::defaults(ShareGroupConfig::default(), true)]
    #[case::session_below_min(ShareGroupConfig { session_timeout_ms: 44_999, ..Default::default() }, false)]
    #[case::interval_above_max(ShareGroupConfig { heartbeat_interval_ms: 15_001, ..Default::default() }, false)]
    #[case::too_many_members(ShareGroupConfig { max_size: 1001, ..Default::default() }, false)]
    #[case::unknown_assignor(ShareGroupConfig { assignor: "uniform".into(), ..Default::default() }, false)]
    #[case::lock_above_max(ShareGroupConfig { record_lock_duration_ms: 60_001, ..Default::default() }, false)]
    #[case::count_below_min(ShareGroupConfig { delivery_count_limit: 1, ..Default::default() }, false)]
    #[case::locks_above_max(ShareGroupConfig { partition_max_record_locks: 4_001, ..Default::default() }, false)]
    fn settings_are_checked_as_kafka_checks_them(#[case] config: ShareGroupConfig, #[case] ok: bool) {
        assert_eq!(config.validate().is_ok(), ok, "{config:?}");
    }

    /// `share.auto.offset.reset` as Kafka's validator takes it.
    #[rstest]
    #[case::earliest("earliest", Some(ShareAutoOffsetReset::Earliest))]
    #[case::latest_any_case("LATEST", Some(ShareAutoOffsetReset::Latest))]
    #[case::a_day("by_duration:P1D", Some(ShareAutoOffsetReset::ByDuration(86_400_000)))]
    #[case::hours_minutes_seconds(
        "by_duration:PT1H30M1.5S",
        Some(ShareAutoOffsetReset::ByDuration(5_401_500))
    )]
    #[case::zero("by_duration:PT0S", Some(ShareAutoOffsetReset::ByDuration(0)))]
    #[case::negative("by_duration:PT-1S", None)]
    #[case::no_time_after_t("by_duration:P1DT", None)]
    #[case::not_a_duration("by_duration:yesterday", None)]
    #[case::unknown("none", None)]
    fn auto_offset_reset_is_parsed_as_kafka_parses_it(
        #[case] value: &str,
        #[case] expected: Option<ShareAutoOffsetReset>,
    ) {
        assert_eq!(value.parse::<ShareAutoOffsetReset>().ok(), expected, "{value}");
    }

    /// A group's settings over the broker's, each within the broker's bounds.
    #[rstest]
    #[case::none(crate::GroupConfigOverrides::default(), Ok(30_000))]
    #[case::lock_within(
        crate::GroupConfigOverrides { share_record_lock_duration_ms: Some(20_000), ..Default::default() },
        Ok(20_000)
    )]
    #[case::lock_below_min(
        crate::GroupConfigOverrides { share_record_lock_duration_ms: Some(14_999), ..Default::default() },
        Err("share.record.lock.duration.ms 14999 is outside [15000, 60000]")
    )]
    #[case::count_above_max(
        crate::GroupConfigOverrides { share_delivery_count_limit: Some(11), ..Default::default() },
        Err("share.delivery.count.limit 11 is outside [2, 10]")
    )]
    #[case::locks_below_min(
        crate::GroupConfigOverrides { share_partition_max_record_locks: Some(99), ..Default::default() },
        Err("share.partition.max.record.locks 99 is outside [100, 4000]")
    )]
    fn group_settings_sit_within_the_broker_bounds(
        #[case] overrides: crate::GroupConfigOverrides,
        #[case] expected: Result<i32, &str>,
    ) {
        let broker = ShareGroupConfig::default();
        let got = overrides
            .validate_share(&broker)
            .map(|()| ShareGroupSettings::of(&broker, Some(&overrides)).record_lock_duration_ms)
            .map_err(|e| e.0);
        assert_eq!(got.as_ref().map_err(String::as_str), expected.as_ref().map_err(|e| *e));
    }

    /// A group's `share.session.timeout.ms` / `share.heartbeat.interval.ms` within the
    /// broker's bounds, the interval below the session (`GroupConfig.validate`).
    #[rstest]
    #[case::none(None, None, None)]
    #[case::within(Some(50_000), Some(10_000), None)]
    #[case::session_too_short(
        Some(1_000),
        None,
        Some("share.session.timeout.ms 1000 is outside [45000, 60000]")
    )]
    #[case::interval_too_long(
        None,
        Some(20_000),
        Some("share.heartbeat.interval.ms 20000 is outside [5000, 15000]")
    )]
    fn group_overrides_are_checked(
        #[case] session: Option<i32>,
        #[case] interval: Option<i32>,
        #[case] error: Option<&str>,
    ) {
        let overrides = crate::GroupConfigOverrides {
            share_session_timeout_ms: session,
            share_heartbeat_interval_ms: interval,
            ..Default::default()
        };
        let got = overrides.validate_share(&ShareGroupConfig::default()).err().map(|e| e.0);
        assert_eq!(got.as_deref(), error);
    }
}
