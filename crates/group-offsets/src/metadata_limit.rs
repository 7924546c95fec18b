//! The offset metadata size limit (`offset.metadata.max.bytes`, `kafka-semantics.md` §6.2).

use group_types::TopicPartition;

use crate::OffsetError;

/// Kafka's default `offset.metadata.max.bytes`.
pub const DEFAULT_OFFSET_METADATA_MAX_BYTES: usize = 4096;

/// The length Kafka compares with `offset.metadata.max.bytes`: Java's
/// `String.length()`, in UTF-16 code units, not bytes. A character outside the
/// Basic Multilingual Plane (an emoji) counts 2; `é` counts 1 though it takes
/// 2 bytes in UTF-8.
///
/// ```
/// use group_offsets::metadata_length;
/// assert_eq!(metadata_length("abc"), 3);
/// assert_eq!(metadata_length("é"), 1);
/// assert_eq!(metadata_length("🦀"), 2);
/// ```
pub fn metadata_length(metadata: &str) -> usize {
    metadata.encode_utf16().count()
}

/// Checks one partition's metadata against the limit: `Ok` when it fits,
/// [`OffsetError::MetadataTooLarge`] naming that partition when it does not.
/// Only that partition fails; the rest of its request is still committed.
///
/// ```
/// use group_offsets::{DEFAULT_OFFSET_METADATA_MAX_BYTES, OffsetError, validate_metadata};
/// use group_types::{ErrorCode, TopicPartition};
///
/// let tp = TopicPartition::new("orders", 0);
/// assert!(validate_metadata(&tp, &"x".repeat(4096), DEFAULT_OFFSET_METADATA_MAX_BYTES).is_ok());
/// let err = validate_metadata(&tp, &"x".repeat(4097), DEFAULT_OFFSET_METADATA_MAX_BYTES).unwrap_err();
/// assert_eq!(err.error_code(), ErrorCode::OffsetMetadataTooLarge);
/// ```
pub fn validate_metadata(partition: &TopicPartition, metadata: &str, max: usize) -> Result<(), OffsetError> {
    // Every UTF-16 code unit takes at least one UTF-8 byte, so a string that fits
    // in bytes fits in code units; only longer ones need counting.
    if metadata.len() <= max {
        return Ok(());
    }
    let length = metadata_length(metadata);
    if length <= max {
        Ok(())
    } else {
        Err(OffsetError::MetadataTooLarge { partition: partition.clone(), length, max })
    }
}
