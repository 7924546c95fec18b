//! `StorageError` (why a storage call failed) and `OffsetError` (why the offset
//! manager refused or failed a call).

use std::error::Error;
use std::sync::Arc;
use std::{fmt, io};

use group_types::{ErrorCode, TopicPartition};

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
        /// The engine's own error, when one caused it.
        #[source]
        source: Option<EngineCause>,
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
    /// The store's directory is locked by another process (or another handle in
    /// this one): a second server on the same data directory.
    #[error("storage locked: {message}")]
    Locked {
        /// What the engine said.
        message: String,
        /// The engine's own error, when one caused it.
        #[source]
        source: Option<EngineCause>,
    },
    /// The store is closed or not yet open.
    #[error("storage unavailable: {message}")]
    Unavailable {
        /// Why.
        message: String,
        /// The engine's own error (or the storage error underneath), when one
        /// caused it.
        #[source]
        source: Option<EngineCause>,
    },
    /// The engine refused the write with a Kafka append error: what a replicated
    /// engine reports when, say, too few replicas acknowledged it
    /// (`NOT_ENOUGH_REPLICAS`) or the batch was too large (`MESSAGE_TOO_LARGE`).
    /// The coordinator maps it as Kafka maps a failed append (`kafka-semantics.md` §6.7).
    #[error("append refused with {code}: {message}")]
    Append {
        /// The Kafka error the append failed with.
        code: ErrorCode,
        /// The engine's own words.
        message: String,
    },
    /// The append carried an owner epoch lower than one the partition already
    /// accepted: another node owns the partition now, and this one must stop
    /// acting as its coordinator.
    #[error(
        "append to coordinator partition {partition} fenced: epoch {epoch} is below the current {current}"
    )]
    Fenced {
        /// The coordinator partition.
        partition: u32,
        /// The epoch the append carried.
        epoch: u64,
        /// The highest epoch the partition accepted.
        current: u64,
    },
    /// The caller passed something the store cannot hold.
    #[error("invalid input: {message}")]
    InvalidInput {
        /// What is wrong.
        message: String,
    },
}

impl StorageError {
    /// An I/O failure with a message and no underlying error.
    pub fn io(message: impl Into<String>) -> StorageError {
        StorageError::Io { message: message.into(), source: None }
    }

    /// An I/O failure caused by the engine's error `source`: the message says
    /// `what` failed, then what `source` says.
    pub fn io_from(what: impl fmt::Display, source: impl Error + Send + Sync + 'static) -> StorageError {
        StorageError::Io { message: format!("{what}: {source}"), source: Some(EngineCause::new(source)) }
    }

    /// The store is unavailable, for the reason `message`, with no underlying
    /// error.
    pub fn unavailable(message: impl Into<String>) -> StorageError {
        StorageError::Unavailable { message: message.into(), source: None }
    }

    /// The store is unavailable because of `source`: the message says `what`
    /// could not be done, then what `source` says.
    pub fn unavailable_from(
        what: impl fmt::Display,
        source: impl Error + Send + Sync + 'static,
    ) -> StorageError {
        StorageError::Unavailable {
            message: format!("{what}: {source}"),
            source: Some(EngineCause::new(source)),
        }
    }

    /// The Kafka append error this failure is, before the coordinator maps it
    /// for clients (`kafka-semantics.md` §6.7): the engine's own code for
    /// [`Append`](Self::Append), `NOT_LEADER_OR_FOLLOWER` for a fenced owner,
    /// and what Kafka reports for a broken log directory, `KAFKA_STORAGE_ERROR`,
    /// for anything else.
    pub fn append_error_code(&self) -> ErrorCode {
        match self {
            StorageError::Append { code, .. } => *code,
            StorageError::Fenced { .. } => ErrorCode::NotLeaderOrFollower,
            _ => ErrorCode::KafkaStorageError,
        }
    }
}

/// Why the offset manager refused an offset or could not store it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OffsetError {
    /// The commit's metadata is longer than `offset.metadata.max.bytes`, counted
    /// in UTF-16 code units as Java's `String.length()` does (`kafka-semantics.md` §6.2).
    #[error("metadata for {partition} is {length} UTF-16 code units long, over the limit of {max}")]
    MetadataTooLarge {
        /// The partition whose commit was refused; the others of the request are unaffected.
        partition: TopicPartition,
        /// The metadata's length in UTF-16 code units.
        length: usize,
        /// The configured `offset.metadata.max.bytes`.
        max: usize,
    },
    /// An offset outside the range the caller allows.
    #[error("offset {offset} is outside [{min}, {max}]")]
    OutOfRange {
        /// The offset checked.
        offset: i64,
        /// The smallest offset allowed.
        min: i64,
        /// The largest offset allowed.
        max: i64,
    },
    /// The caller's range is empty: its minimum is above its maximum.
    #[error("empty offset range: min {min} is above max {max}")]
    InvalidRange {
        /// The range's minimum.
        min: i64,
        /// The range's maximum.
        max: i64,
    },
    /// Storage failed; nothing of the call was stored.
    #[error(transparent)]
    Storage(#[from] StorageError),
}

impl OffsetError {
    /// The Kafka code for a per-partition answer: `OFFSET_METADATA_TOO_LARGE` for
    /// oversized metadata, `UNKNOWN_SERVER_ERROR` otherwise (Kafka's group APIs have
    /// no code for an offset range, and a coordinator maps storage failures by
    /// their own rules, `kafka-semantics.md` §6.7, so it should match
    /// [`OffsetError::Storage`] before asking for this code).
    pub fn error_code(&self) -> ErrorCode {
        match self {
            OffsetError::MetadataTooLarge { .. } => ErrorCode::OffsetMetadataTooLarge,
            _ => ErrorCode::UnknownServerError,
        }
    }
}

/// An error kept as the source of an error that is `Clone` and `Eq`: shared, so
/// that the error stays `Clone`, and compared by message, so that it stays `Eq`.
/// Used as [`EngineCause`] and [`IoCause`].
#[derive(Debug)]
pub struct Shared<E: ?Sized>(Arc<E>);

/// A storage engine's own error (sled's, etcd's, an I/O error) kept as the
/// source of a [`StorageError`].
pub type EngineCause = Shared<dyn Error + Send + Sync + 'static>;

/// An I/O error kept as the source of an error (this crate's, the coordinator's,
/// the server's configuration errors).
pub type IoCause = Shared<io::Error>;

impl EngineCause {
    /// Keeps `error` as a cause.
    pub fn new(error: impl Error + Send + Sync + 'static) -> EngineCause {
        Shared(Arc::new(error))
    }
}

impl From<io::Error> for IoCause {
    fn from(error: io::Error) -> IoCause {
        Shared(Arc::new(error))
    }
}

impl<E: ?Sized> Shared<E> {
    /// The error itself.
    pub fn get_ref(&self) -> &E {
        &self.0
    }
}

impl<E: ?Sized> Clone for Shared<E> {
    fn clone(&self) -> Self {
        Shared(Arc::clone(&self.0))
    }
}

impl<E: fmt::Display + ?Sized> fmt::Display for Shared<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl<E: Error + ?Sized> Error for Shared<E> {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        // The kept error is this one (its message is this one's): what it
        // wraps, if anything, comes next.
        self.0.source()
    }
}

impl<E: fmt::Display + ?Sized> PartialEq for Shared<E> {
    fn eq(&self, other: &Shared<E>) -> bool {
        self.0.to_string() == other.0.to_string()
    }
}

impl<E: fmt::Display + ?Sized> Eq for Shared<E> {}
