//! `CoordinatorConfig`: the broker settings of the classic group coordinator.

/// The longest group id the coordinator accepts, in bytes: what every version of
/// every API it serves can carry back (a non-flexible `STRING` has an `int16`
/// length, and ListGroups v0-v2 lists every group id in one) and every store can
/// key. A longer id is `INVALID_GROUP_ID` before any partition sees it: it is
/// never written, so never a storage failure, whichever store is behind.
pub const MAX_GROUP_ID_BYTES: usize = i16::MAX as usize;

/// Broker settings of the coordinator. [`Default`] gives Kafka's broker defaults
/// (`kafka-semantics.md` §9).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoordinatorConfig {
    /// The rebalance timeout a client of this crate sends when it has no opinion (the
    /// Java consumer's `max.poll.interval.ms`, 300 000 ms). The coordinator itself always
    /// uses the timeout each JoinGroup carries.
    pub default_rebalance_timeout_ms: i32,
    /// The session timeout a client of this crate sends when it has no opinion (the Java
    /// consumer's `session.timeout.ms`, 45 000 ms).
    pub default_session_timeout_ms: i32,
    /// The longest the runtime's timer thread sleeps without re-checking its deadlines.
    /// Deadlines themselves are exact; this only bounds the cost of a lost wake-up.
    pub heartbeat_check_interval_ms: i64,
    /// `group.min.session.timeout.ms`: a smaller session is `INVALID_SESSION_TIMEOUT`.
    pub min_session_timeout_ms: i32,
    /// `group.max.session.timeout.ms`: a larger session is `INVALID_SESSION_TIMEOUT`.
    pub max_session_timeout_ms: i32,
    /// `offsets.retention.minutes` in milliseconds (KIP-211 retention).
    pub offset_retention_ms: i64,
    /// `group.initial.rebalance.delay.ms`: the rolling window of a group's first rebalance.
    pub initial_rebalance_delay_ms: i32,
    /// `group.max.size`: the largest number of members a classic group accepts.
    pub group_max_size: i32,
    /// `group.max.groups`: the most groups, of every kind, this coordinator holds
    /// over all its partitions; a request that would create one more is answered
    /// `GROUP_MAX_SIZE_REACHED` (as Kafka answers `group.share.max.groups`).
    /// Unlimited by default (`i32::MAX`), as Kafka does not bound groups.
    pub max_groups: usize,
    /// `offset.metadata.max.bytes`, compared with the metadata's UTF-16 length as Java does.
    pub offset_metadata_max_bytes: usize,
    /// `offsets.retention.check.interval.ms`: the period of the offset expiration job.
    pub offsets_retention_check_interval_ms: i64,
    /// How long a new member may wait in its first JoinGroup (Kafka hard-codes 300 000 ms).
    pub new_member_join_timeout_ms: i32,
    /// Seed of the core's member-id generator, so that a run of the core can be
    /// reproduced exactly. `GroupCoordinator` mixes in per-instance randomness, so
    /// ids never repeat across restarts.
    pub member_id_seed: u64,
    /// KIP-848 consumer groups (`group.consumer.*`).
    pub consumer: crate::ConsumerGroupConfig,
    /// KIP-932 share groups (`group.share.*`).
    pub share: crate::ShareGroupConfig,
    /// The share coordinator each coordinator partition hosts (`share.coordinator.*`).
    pub share_coordinator: group_share_coordinator::ShareCoordinatorConfig,
    /// The broker bounds of the per-group configs that have no setting above
    /// (assignment intervals, `streams.*`).
    pub group_config_bounds: crate::GroupConfigBounds,
}

impl Default for CoordinatorConfig {
    fn default() -> CoordinatorConfig {
        CoordinatorConfig {
            default_rebalance_timeout_ms: 300_000,
            default_session_timeout_ms: 45_000,
            heartbeat_check_interval_ms: 1_000,
            min_session_timeout_ms: 6_000,
            max_session_timeout_ms: 1_800_000,
            offset_retention_ms: 10_080 * 60_000,
            initial_rebalance_delay_ms: 3_000,
            group_max_size: i32::MAX,
            max_groups: i32::MAX as usize,
            offset_metadata_max_bytes: 4_096,
            offsets_retention_check_interval_ms: 600_000,
            new_member_join_timeout_ms: 300_000,
            member_id_seed: 0x5eed_c0de_1234_5678,
            consumer: crate::ConsumerGroupConfig::default(),
            share: crate::ShareGroupConfig::default(),
            share_coordinator: group_share_coordinator::ShareCoordinatorConfig::default(),
            group_config_bounds: crate::GroupConfigBounds::default(),
        }
    }
}
