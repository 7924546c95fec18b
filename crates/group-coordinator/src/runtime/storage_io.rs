//! Persisting a core's records through `OffsetStorage`.

use group_offsets::{OffsetStorage, StorageError};
use group_types::ErrorCode;

use crate::Record;

/// Writes the records in order: consecutive offsets of one group as one atomic
/// `store_offsets`, consecutive tombstones of one group as one `delete_partitions`.
/// The write owns its records, so they are handed to storage, never copied.
/// A storage failure becomes the append error the core maps (§6.7): the engine's own
/// Kafka code for [`StorageError::Append`], otherwise what Kafka reports for a broken
/// log directory, `KAFKA_STORAGE_ERROR`.
pub(crate) fn persist(storage: &dyn OffsetStorage, records: Vec<Record>) -> Result<(), ErrorCode> {
    let fail = |e: StorageError| match e {
        StorageError::Append { code, .. } => code,
        _ => ErrorCode::KafkaStorageError,
    };
    let mut records = records.into_iter().peekable();
    while let Some(record) = records.next() {
        match record {
            Record::Group(record) => storage.store_group(record).map_err(fail)?,
            Record::GroupTombstone { group_id } => storage.delete_group(&group_id).map_err(fail)?,
            Record::Offset { group_id, partition, offset } => {
                let mut batch = vec![(partition, offset)];
                while let Some(Record::Offset { partition, offset, .. }) = records
                    .next_if(|next| matches!(next, Record::Offset { group_id: g, .. } if *g == group_id))
                {
                    batch.push((partition, offset));
                }
                storage.store_offsets(&group_id, &batch).map_err(fail)?;
            }
            Record::OffsetTombstone { group_id, partition } => {
                let mut batch = vec![partition];
                while let Some(Record::OffsetTombstone { partition, .. }) = records.next_if(
                    |next| matches!(next, Record::OffsetTombstone { group_id: g, .. } if *g == group_id),
                ) {
                    batch.push(partition);
                }
                storage.delete_partitions(&group_id, &batch).map_err(fail)?;
            }
        }
    }
    Ok(())
}
