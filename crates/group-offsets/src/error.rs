//! `StorageError`: why a storage call failed.

/// A failure of offset or group-metadata storage.
///
/// Protocol outcomes (unknown member, stale generation) are never storage errors;
/// these are failures of the storage itself, which the coordinator maps to Kafka
/// codes (`kafka-semantics.md` §6.7).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StorageError {
    /// The underlying medium failed (disk, network, engine).
    #[error("storage I/O failed: {message}")]
    Io {
        /// What failed, with the engine's own message.
        message: String,
    },
    /// A stored value could not be decoded.
    #[error("corrupt value for group {group_id:?} at {key}: {reason}")]
    Corrupt {
        /// The group the value belongs to.
        group_id: String,
        /// The key, in human-readable form.
        key: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A stored value carries a format version this build cannot read.
    #[error("unknown format version {version} for group {group_id:?} at {key}")]
    UnknownFormatVersion {
        /// The group the value belongs to.
        group_id: String,
        /// The key, in human-readable form.
        key: String,
        /// The version byte found.
        version: u8,
    },
    /// The store is closed or not yet open.
    #[error("storage unavailable: {message}")]
    Unavailable {
        /// Why.
        message: String,
    },
    /// The caller passed something the store cannot hold.
    #[error("invalid input: {message}")]
    InvalidInput {
        /// What is wrong.
        message: String,
    },
}

impl StorageError {
    /// An I/O failure with a message.
    pub fn io(message: impl Into<String>) -> StorageError {
        StorageError::Io { message: message.into() }
    }
}
