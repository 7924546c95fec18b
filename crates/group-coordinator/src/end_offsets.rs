//! Partition end offsets: the hook through which an embedding broker says where
//! each partition's log ends, so that DescribeShareGroupOffsets can answer a
//! share partition's lag (KIP-1226).
//!
//! Kafka's `GroupCoordinatorService` asks its `PartitionMetadataClient`
//! (`NetworkPartitionMetadataClient`: a ListOffsets of the latest offset to
//! each partition's leader) in `computeShareGroupLagAndBuildResponse`, for the
//! partitions of the share coordinator's summary whose lag can be computed
//! (`shouldComputeSharePartitionLag`), and answers
//! `lag = end offset - start offset - delivery complete count`. The runtime
//! does the same with a [`PartitionEndOffsets`] (set with
//! [`GroupCoordinatorBuilder::partition_end_offsets`](crate::GroupCoordinatorBuilder::partition_end_offsets));
//! without one the lag stays -1, as Kafka answers where it cannot compute it.

use std::fmt;
use std::sync::Arc;

use group_types::{ErrorCode, TopicId};

/// One partition whose end offset is asked: Kafka's `TopicPartition`, with the
/// topic's id beside its name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EndOffsetQuery {
    /// The topic's id in the coordinator's metadata image.
    pub topic_id: TopicId,
    /// The topic's name in the coordinator's metadata image.
    pub topic_name: Arc<str>,
    /// The partition index.
    pub partition: i32,
}

/// Where each partition's log ends: the hook an embedding broker implements over
/// its replica manager or by asking the partitions' leaders (Kafka's
/// `PartitionMetadataClient.listLatestOffsets`).
///
/// Consulted by [`GroupCoordinator`](crate::GroupCoordinator) when the share
/// coordinator answers a DescribeShareGroupOffsets' summary read
/// ([`GroupCoordinator::share_group_state_summary_read`](crate::GroupCoordinator::share_group_state_summary_read)),
/// once per summary, for the partitions whose lag can be computed (no error, a
/// start offset and a delivery complete count other than -1). It is called on
/// the thread that reports the summary (the [`SharePersister`](crate::SharePersister)'s,
/// or the runtime's `group-coordinator-share-persister` thread for the hosted
/// share coordinator), with no partition lock held, and the
/// DescribeShareGroupOffsets waits for it: it should answer from memory, and
/// must not block for long (no network round trip it cannot bound).
pub trait PartitionEndOffsets: Send + Sync + fmt::Debug {
    /// For each of `partitions`, in the same order, the latest offset of its log
    /// (the offset the next record written will get, so that an empty log
    /// answers its start), or the error Kafka's ListOffsets would answer for it
    /// (`UNKNOWN_TOPIC_OR_PARTITION`, `NOT_LEADER_OR_FOLLOWER`, ...). That
    /// partition of the description carries the error with its default message;
    /// a partition left without an answer (a shorter list) carries
    /// `UNKNOWN_SERVER_ERROR`.
    fn latest_offsets(&self, partitions: &[EndOffsetQuery]) -> Vec<Result<i64, ErrorCode>>;
}
