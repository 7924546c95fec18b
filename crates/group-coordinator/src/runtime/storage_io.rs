//! Persisting a core's records through `OffsetStorage`.

use group_offsets::OffsetStorage;
use group_types::{ErrorCode, OffsetAndMetadata, TopicPartition};

use crate::Record;

/// Writes the records in order: consecutive offsets of one group as one atomic
/// `store_offsets`, consecutive tombstones of one group as one `delete_partitions`.
/// A storage failure is reported as Kafka reports a failed append on a broken log
/// directory, `KAFKA_STORAGE_ERROR`.
pub(crate) fn persist(storage: &dyn OffsetStorage, records: &[Record]) -> Result<(), ErrorCode> {
    let fail = |_| ErrorCode::KafkaStorageError;
    let mut i = 0;
    while i < records.len() {
        match &records[i] {
            Record::Group(record) => {
                storage.store_group(record).map_err(fail)?;
                i += 1;
            }
            Record::GroupTombstone { group_id } => {
                storage.delete_group(group_id).map_err(fail)?;
                i += 1;
            }
            Record::Offset { group_id, .. } => {
                let mut batch: Vec<(TopicPartition, OffsetAndMetadata)> = Vec::new();
                while let Some(Record::Offset { group_id: g, partition, offset }) = records.get(i) {
                    if g != group_id {
                        break;
                    }
                    batch.push((partition.clone(), offset.clone()));
                    i += 1;
                }
                storage.store_offsets(group_id, &batch).map_err(fail)?;
            }
            Record::OffsetTombstone { group_id, .. } => {
                let mut batch: Vec<TopicPartition> = Vec::new();
                while let Some(Record::OffsetTombstone { group_id: g, partition }) = records.get(i) {
                    if g != group_id {
                        break;
                    }
                    batch.push(partition.clone());
                    i += 1;
                }
                storage.delete_partitions(group_id, &batch).map_err(fail)?;
            }
        }
    }
    Ok(())
}
