//! The value format of the partitions tree.
//!
//! A group record, an offset or a consumer-group record is stored as the
//! shared record codec of `group-offsets` writes a record's value
//! (`group_offsets::codec::encode_value`: its format version, 2, then the
//! record's fields after its key), since the key already names its group and
//! topic partition, or its record type and sub-key. Values written before
//! the shared codec carry version 1 and are read by [`legacy`]; nothing
//! writes them any more.
//!
//! An owner epoch is a version byte of its own ([`EPOCH_FORMAT_V1`]), then
//! the epoch as a `u64` big-endian: nine bytes, hand-encoded.

use std::sync::Arc;

use group_offsets::codec as records;
use group_offsets::{GroupMetadataRecord, ModernGroupRecord, OwnerEpoch, Record};
use group_types::OffsetAndMetadata;

use crate::keys::ConsumerKey;

pub(crate) mod legacy;

/// The format version of owner epoch values written today.
pub(crate) const EPOCH_FORMAT_V1: u8 = 1;

/// Why a stored value could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DecodeError {
    /// Not a value of the shared record codec.
    #[error(transparent)]
    Record(#[from] records::DecodeError),
    /// Not a legacy (version 1) value.
    #[error(transparent)]
    Legacy(#[from] legacy::DecodeError),
    /// A legacy group record stored under another group's key.
    #[error("the record names group {0:?}")]
    OtherGroup(String),
    /// An epoch value of the wrong length.
    #[error("an epoch is 8 bytes, found {0}")]
    EpochLength(usize),
    /// An epoch value of an unknown version.
    #[error("unknown format version {0}")]
    EpochVersion(u8),
}

impl DecodeError {
    /// The version byte found, when the value names a format this build does not know.
    pub(crate) fn unknown_version(&self) -> Option<u8> {
        match self {
            DecodeError::Record(records::DecodeError::UnknownVersion(v))
            | DecodeError::Legacy(legacy::DecodeError::UnknownVersion(v))
            | DecodeError::EpochVersion(v) => Some(*v),
            _ => None,
        }
    }
}

/// True for a value of the legacy format (version 1).
fn is_legacy(bytes: &[u8]) -> bool {
    bytes.first() == Some(&legacy::OFFSET_FORMAT_V1)
}

/// The value of a record, `None` for a tombstone (its key is removed).
pub(crate) fn encode_value(record: &Record) -> Option<Vec<u8>> {
    records::encode_value(record)
}

/// Decodes an offset value.
pub(crate) fn decode_offset(bytes: &[u8]) -> Result<OffsetAndMetadata, DecodeError> {
    if is_legacy(bytes) {
        return Ok(legacy::decode_offset(bytes)?);
    }
    Ok(records::decode_offset_value(bytes)?)
}

/// Decodes the group record stored under the key of `group_id`.
pub(crate) fn decode_group(group_id: &str, bytes: &[u8]) -> Result<GroupMetadataRecord, DecodeError> {
    if !is_legacy(bytes) {
        return Ok(records::decode_group_value(group_id, bytes)?);
    }
    // A legacy value repeats its group id: it must be its key's.
    let record = legacy::decode_group(bytes)?;
    if record.group_id != group_id {
        return Err(DecodeError::OtherGroup(record.group_id.to_string()));
    }
    Ok(record)
}

/// Decodes the consumer-group record stored under `key`, its group id
/// `group_id` (the key's, shared).
pub(crate) fn decode_consumer(
    key: &ConsumerKey<'_>,
    group_id: Arc<str>,
    bytes: &[u8],
) -> Result<ModernGroupRecord, DecodeError> {
    let ConsumerKey { record_type, sub_key, .. } = *key;
    if is_legacy(bytes) {
        return Ok(legacy::decode_consumer(record_type, group_id, sub_key, bytes)?);
    }
    Ok(records::decode_modern_value(record_type, group_id, sub_key, bytes)?)
}

/// Encodes a partition's owner epoch.
pub(crate) fn encode_epoch(epoch: OwnerEpoch) -> [u8; 9] {
    let mut out = [0u8; 9];
    out[0] = EPOCH_FORMAT_V1;
    out[1..].copy_from_slice(&epoch.0.to_be_bytes());
    out
}

/// Decodes a partition's owner epoch.
pub(crate) fn decode_epoch(bytes: &[u8]) -> Result<OwnerEpoch, DecodeError> {
    match bytes.split_first() {
        Some((&EPOCH_FORMAT_V1, body)) => {
            let body: [u8; 8] = body.try_into().map_err(|_| DecodeError::EpochLength(body.len()))?;
            Ok(OwnerEpoch(u64::from_be_bytes(body)))
        }
        Some((&version, _)) => Err(DecodeError::EpochVersion(version)),
        None => Err(DecodeError::EpochLength(0)),
    }
}

/// `error` and its sources, as one line: what a `StorageError` keeps of it.
pub(crate) fn describe(error: &dyn std::error::Error) -> String {
    let mut out = error.to_string();
    let mut source = error.source();
    while let Some(e) = source {
        let text = e.to_string();
        // Variants that print their source already (`{0}`) add nothing.
        if !out.ends_with(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = e.source();
    }
    out
}

#[cfg(test)]
mod tests;
