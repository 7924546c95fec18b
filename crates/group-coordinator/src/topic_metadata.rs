//! Topic metadata: the hook through which an embedding broker says which
//! topic-partitions exist, so that offsets are only kept for those.
//!
//! Kafka's request layer (`KafkaApis.handleOffsetCommitRequest`,
//! `KafkaApis.handleOffsetDeleteRequest`) answers `UNKNOWN_TOPIC_OR_PARTITION`
//! for every partition its metadata cache does not hold, after the topic ACL
//! check, and hands only the rest to its group coordinator. The runtime does the
//! same with a [`TopicMetadata`] (set with
//! [`GroupCoordinatorBuilder::topic_metadata`](crate::GroupCoordinatorBuilder::topic_metadata)).
//! OffsetFetch is not checked, as in Kafka from OffsetFetch v1 on: a partition
//! without a committed offset, known or not, reads offset -1 with `NONE`.

use std::fmt;

/// Whether a topic-partition exists in the cluster the coordinator serves: the
/// hook an embedding broker implements over its metadata cache.
///
/// Consulted by [`GroupCoordinator`](crate::GroupCoordinator) for every partition
/// of an OffsetCommit or OffsetDelete whose topic the
/// [`Authorizer`](crate::Authorizer) allowed; a partition it does not know is
/// answered `UNKNOWN_TOPIC_OR_PARTITION` and never reaches a group. It is called
/// on the request path, once per partition, and should answer from memory.
pub trait TopicMetadata: Send + Sync + fmt::Debug {
    /// True when partition `partition` of topic `topic` exists.
    fn contains(&self, topic: &str, partition: i32) -> bool;
}

/// Knows every topic-partition: the default, for embeddings without metadata
/// (every commit is kept, as before the hook existed).
#[derive(Debug, Clone, Copy, Default)]
pub struct AllTopicsExist;

impl TopicMetadata for AllTopicsExist {
    fn contains(&self, _: &str, _: i32) -> bool {
        true
    }
}
