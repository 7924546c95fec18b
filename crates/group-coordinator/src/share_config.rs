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
    fn settings_are_checked_as_kafka_checks_them(#[case] config: ShareGroupConfig, #[case] ok: bool) {
        assert_eq!(config.validate().is_ok(), ok, "{config:?}");
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
