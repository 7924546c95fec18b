//! Offset storage for a Kafka-compatible group coordinator (work in progress:
//! the contracts are settled, the implementations are being written).

mod error;
mod records;
mod storage;

pub use crate::error::StorageError;
pub use crate::records::{GroupMetadataRecord, MemberMetadataRecord};
pub use crate::storage::{MetadataStore, OffsetStorage, StoredGroups};
