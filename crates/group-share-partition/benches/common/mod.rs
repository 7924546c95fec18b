//! What the benches share: an initialized, empty share partition.

use group_share_partition::{ReadShareGroupStateResult, SharePartition, SharePartitionConfig};
use group_types::{GroupId, TopicId};

/// An active partition at start offset 0 with nothing cached.
pub(crate) fn initialized(config: SharePartitionConfig) -> SharePartition {
    let topic = TopicId::from_u128(1);
    let mut sp =
        SharePartition::new(GroupId::from_static("bench"), topic, 0, 0, config).expect("valid config");
    sp.begin_initialize().expect("empty partition");
    let read = ReadShareGroupStateResult {
        topic_id: topic,
        partition: 0,
        error_code: 0,
        state_epoch: 1,
        start_offset: 0,
        state_batches: Vec::new(),
    };
    sp.complete_initialize(Ok(read), None).expect("read");
    sp
}
