//! The crate's errors: bad settings and unparsable share partition keys. Protocol
//! outcomes (fencing, unknown partitions) are error codes in responses, not these.

/// A setting that cannot be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// No share coordinator setting has this name.
    #[error("`{0}` is not a share coordinator setting")]
    UnknownSetting(String),
    /// The value is outside the setting's bounds.
    #[error("{name} must be between [{min}, {max}], not {value}")]
    OutOfBounds {
        /// The setting.
        name: &'static str,
        /// The refused value.
        value: i64,
        /// The smallest accepted value.
        min: i64,
        /// The largest accepted value.
        max: i64,
    },
}

/// A string that is not a share coordinator key (`group:topicId:partition`, Kafka's
/// `SharePartitionKey.getInstance(String)`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// The key is empty.
    #[error("Share partition key cannot be empty")]
    Empty,
    /// Fewer than three `:`-separated parts.
    #[error("Invalid key format: expected - groupId:topicId:partition, found - {0}")]
    Format(String),
    /// The group id is blank.
    #[error("GroupId must not be empty")]
    BlankGroupId,
    /// The topic id is not a Kafka `Uuid`.
    #[error("Invalid topic ID: {0}")]
    TopicId(String),
    /// The partition is not an `i32`.
    #[error("Invalid partition: {0}")]
    Partition(String),
}
