//! The share coordinator's settings (Kafka's `ShareCoordinatorConfig`): one table
//! row per setting with Kafka's property name, default and bounds, from which
//! [`ShareCoordinatorConfig::set`] and the defaults follow.

use crate::ConfigError;

/// One setting: Kafka's property name, its default and its inclusive bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setting {
    /// Kafka's property name.
    pub name: &'static str,
    /// The default.
    pub default: i64,
    /// The smallest accepted value.
    pub min: i64,
    /// The largest accepted value.
    pub max: i64,
    /// What it does (Kafka's documentation string, shortened).
    pub doc: &'static str,
}

macro_rules! settings {
    ($($(#[$meta:meta])* $field:ident: $ty:ty = $name:literal, $default:expr, $min:expr, $max:expr, $doc:literal;)*) => {
        /// The share coordinator's settings, by Kafka's property names
        /// (`ShareCoordinatorConfig`); [`ShareCoordinatorConfig::SETTINGS`] lists
        /// their defaults and bounds.
        ///
        /// ```
        /// use group_share_coordinator::ShareCoordinatorConfig;
        ///
        /// let mut config = ShareCoordinatorConfig::default();
        /// assert_eq!(config.snapshot_update_records_per_snapshot, 500);
        /// config.set("share.coordinator.snapshot.update.records.per.snapshot", 2)?;
        /// assert_eq!(config.snapshot_update_records_per_snapshot, 2);
        /// assert!(config.set("share.coordinator.snapshot.update.records.per.snapshot", 501).is_err());
        /// # Ok::<(), group_share_coordinator::ConfigError>(())
        /// ```
        #[derive(Debug, Clone, PartialEq, Eq)]
        #[non_exhaustive]
        pub struct ShareCoordinatorConfig {
            $($(#[$meta])* pub $field: $ty,)*
        }

        impl ShareCoordinatorConfig {
            /// Kafka's `shareCoordinatorAppendLingerMs`: `None` for -1, the adaptive
            /// linger.
            pub fn append_linger(&self) -> Option<i32> {
                (self.append_linger_ms != -1).then_some(self.append_linger_ms)
            }

            /// Every setting, in Kafka's definition order.
            pub const SETTINGS: &'static [Setting] = &[
                $(Setting { name: $name, default: $default as i64, min: $min as i64, max: $max as i64, doc: $doc },)*
            ];

            /// Sets the setting Kafka names `name` to `value`, checked against its bounds.
            pub fn set(&mut self, name: &str, value: i64) -> Result<(), ConfigError> {
                $(
                    if name == $name {
                        if value < ($min as i64) || value > ($max as i64) {
                            return Err(ConfigError::OutOfBounds {
                                name: $name,
                                value,
                                min: $min as i64,
                                max: $max as i64,
                            });
                        }
                        // In bounds, so the narrowing cannot fail.
                        self.$field = <$ty>::try_from(value).unwrap_or(self.$field);
                        return Ok(());
                    }
                )*
                Err(ConfigError::UnknownSetting(name.to_owned()))
            }
        }

        impl Default for ShareCoordinatorConfig {
            fn default() -> ShareCoordinatorConfig {
                ShareCoordinatorConfig { $($field: $default,)* }
            }
        }
    };
}

settings! {
    /// `share.coordinator.state.topic.num.partitions` (50, at least 1): the number of
    /// partitions of `__share_group_state`, over which share partitions are routed.
    state_topic_num_partitions: i32 = "share.coordinator.state.topic.num.partitions", 50, 1, i32::MAX,
        "The number of partitions for the share-group state topic (should not change after deployment).";
    /// `share.coordinator.state.topic.replication.factor` (3, at least 1).
    state_topic_replication_factor: i16 = "share.coordinator.state.topic.replication.factor", 3, 1, i16::MAX,
        "Replication factor for the share-group state topic.";
    /// `share.coordinator.state.topic.min.isr` (2, at least 1).
    state_topic_min_isr: i16 = "share.coordinator.state.topic.min.isr", 2, 1, i16::MAX,
        "Overridden min.insync.replicas for the share-group state topic.";
    /// `share.coordinator.state.topic.segment.bytes` (100 MiB, at least 1).
    state_topic_segment_bytes: i32 = "share.coordinator.state.topic.segment.bytes", 100 * 1024 * 1024, 1, i32::MAX,
        "The log segment size for the share-group state topic.";
    /// `share.coordinator.threads` (1, at least 1).
    num_threads: i32 = "share.coordinator.threads", 1, 1, i32::MAX,
        "The number of threads used by the share coordinator.";
    /// `share.coordinator.snapshot.update.records.per.snapshot` (500, 0 to 500): how
    /// many ShareUpdate records a share partition gets between two ShareSnapshots;
    /// 0 makes every write a snapshot.
    snapshot_update_records_per_snapshot: i32 = "share.coordinator.snapshot.update.records.per.snapshot", 500, 0, 500,
        "The number of update records the share coordinator writes between snapshot records.";
    /// `share.coordinator.load.buffer.size` (5 MiB, at least 1).
    load_buffer_size: i32 = "share.coordinator.load.buffer.size", 5 * 1024 * 1024, 1, i32::MAX,
        "Batch size for reading from the share-group state topic when loading state.";
    /// `share.coordinator.append.linger.ms` (-1 = adaptive, at least -1).
    append_linger_ms: i32 = "share.coordinator.append.linger.ms", -1, -1, i32::MAX,
        "How long the share coordinator waits for writes to accumulate before flushing them; -1 adapts.";
    /// `share.coordinator.write.timeout.ms` (5000, at least 1).
    write_timeout_ms: i32 = "share.coordinator.write.timeout.ms", 5000, 1, i32::MAX,
        "How long the share coordinator waits for all replicas of the share-group state topic to receive a write.";
    /// `share.coordinator.state.topic.prune.interval.ms` (5 minutes, at least 1;
    /// internal): how often the runtime prunes `__share_group_state` below the
    /// last redundant offset.
    state_topic_prune_interval_ms: i32 = "share.coordinator.state.topic.prune.interval.ms", 5 * 60 * 1000, 1, i32::MAX,
        "How long the share coordinator waits between pruning eligible records in the share-group state topic.";
    /// `share.coordinator.cold.partition.snapshot.interval.ms` (5 minutes, at least
    /// 1; internal): how often the runtime runs `snapshot_cold_partitions`, and how
    /// old a share partition's last snapshot must be for it to be rewritten.
    cold_partition_snapshot_interval_ms: i32 = "share.coordinator.cold.partition.snapshot.interval.ms", 5 * 60 * 1000, 1, i32::MAX,
        "How long the share coordinator waits between force snapshotting share partitions which are not being updated.";
}
