//! `OffsetCache`: a group's committed offsets, by topic then partition.
//!
//! Nested rather than keyed by `TopicPartition`: a commit finds its topic once and
//! then inserts by partition number, instead of comparing topic names at every step
//! of every insert, and a topic's partitions are a vector by partition number
//! (`PartitionOffsets`). Iteration order is the same as a map keyed by
//! `TopicPartition`.

use std::collections::BTreeMap;
use std::sync::Arc;

use group_offsets::PartitionOffsets;
use group_types::{OffsetAndMetadata, TopicPartition};

/// Committed offsets of one group.
#[derive(Debug, Clone, Default)]
pub(crate) struct OffsetCache {
    topics: BTreeMap<Arc<str>, PartitionOffsets>,
}

impl OffsetCache {
    /// Stores `offset` for `tp`, returning the offset it replaces.
    pub(crate) fn insert(
        &mut self,
        tp: TopicPartition,
        offset: OffsetAndMetadata,
    ) -> Option<OffsetAndMetadata> {
        match self.topics.get_mut(&*tp.topic) {
            Some(partitions) => partitions.insert(tp.partition, offset),
            None => self.topics.entry(tp.topic).or_default().insert(tp.partition, offset),
        }
    }

    /// The offsets of `topic`, an empty map if it has none yet: a commit of many
    /// partitions of one topic finds the topic once. A caller that may store none
    /// calls [`Self::drop_if_empty`] after (the cache holds no topic without
    /// offsets).
    pub(crate) fn topic_mut(&mut self, topic: &Arc<str>) -> &mut PartitionOffsets {
        self.topics.entry(topic.clone()).or_default()
    }

    /// The offsets of `topic`, if any of its partitions has one here: unlike
    /// [`Self::topic_mut`], no name to clone (and drop) when the topic is known.
    pub(crate) fn known_topic_mut(&mut self, topic: &str) -> Option<&mut PartitionOffsets> {
        self.topics.get_mut(topic)
    }

    /// The shared name of `topic`, if any of its partitions has an offset here.
    pub(crate) fn topic(&self, topic: &str) -> Option<&Arc<str>> {
        self.topics.get_key_value(topic).map(|(name, _)| name)
    }

    /// Removes `topic` if it holds no offset.
    pub(crate) fn drop_if_empty(&mut self, topic: &str) {
        if self.topics.get(topic).is_some_and(PartitionOffsets::is_empty) {
            self.topics.remove(topic);
        }
    }

    /// How many partitions hold an offset.
    pub(crate) fn len(&self) -> usize {
        self.topics.values().map(PartitionOffsets::len).sum()
    }

    /// The offset of one partition.
    pub(crate) fn get(&self, tp: &TopicPartition) -> Option<&OffsetAndMetadata> {
        self.get_partition(&tp.topic, tp.partition)
    }

    /// The offset of one partition, without building a `TopicPartition`.
    pub(crate) fn get_partition(&self, topic: &str, partition: i32) -> Option<&OffsetAndMetadata> {
        self.topics.get(topic)?.get(partition)
    }

    pub(crate) fn contains_key(&self, tp: &TopicPartition) -> bool {
        self.get(tp).is_some()
    }

    /// Removes one partition's offset (and the topic once it has none left).
    pub(crate) fn remove(&mut self, tp: &TopicPartition) -> Option<OffsetAndMetadata> {
        let partitions = self.topics.get_mut(&*tp.topic)?;
        let removed = partitions.remove(tp.partition);
        if partitions.is_empty() {
            self.topics.remove(&*tp.topic);
        }
        removed
    }

    /// Every offset, ordered by topic then partition.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (TopicPartition, &OffsetAndMetadata)> {
        self.topics.iter().flat_map(|(topic, partitions)| {
            partitions
                .iter()
                .map(|(partition, offset)| (TopicPartition { topic: topic.clone(), partition }, offset))
        })
    }

    /// Every partition with an offset, ordered.
    pub(crate) fn keys(&self) -> impl Iterator<Item = TopicPartition> + '_ {
        self.iter().map(|(tp, _)| tp)
    }
}

impl<'a> IntoIterator for &'a OffsetCache {
    type Item = (TopicPartition, &'a OffsetAndMetadata);
    type IntoIter = Box<dyn Iterator<Item = (TopicPartition, &'a OffsetAndMetadata)> + 'a>;

    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

#[cfg(test)]
mod tests {
    use group_types::CommitMetadata;

    use super::*;

    fn offset(n: i64) -> OffsetAndMetadata {
        OffsetAndMetadata {
            offset: n,
            leader_epoch: None,
            metadata: CommitMetadata::empty(),
            commit_time: 0,
            expire_time: None,
        }
    }

    #[test]
    fn orders_by_topic_then_partition_and_drops_empty_topics() {
        let mut cache = OffsetCache::default();
        cache.insert(TopicPartition::new("b", 1), offset(1));
        cache.insert(TopicPartition::new("a", 2), offset(2));
        cache.insert(TopicPartition::new("a", 0), offset(3));
        assert_eq!(cache.insert(TopicPartition::new("a", 2), offset(4)).map(|o| o.offset), Some(2));
        let all: Vec<(String, i32, i64)> =
            cache.iter().map(|(tp, o)| (tp.topic.to_string(), tp.partition, o.offset)).collect();
        assert_eq!(all, vec![("a".into(), 0, 3), ("a".into(), 2, 4), ("b".into(), 1, 1)]);
        assert_eq!(cache.get_partition("a", 2).map(|o| o.offset), Some(4));
        assert_eq!(cache.remove(&TopicPartition::new("b", 1)).map(|o| o.offset), Some(1));
        assert!(!cache.contains_key(&TopicPartition::new("b", 1)));
        cache.remove(&TopicPartition::new("a", 0));
        cache.remove(&TopicPartition::new("a", 2));
        assert_eq!(cache.len(), 0);
    }

    #[test]
    fn a_topic_found_for_a_commit_that_stored_nothing_is_dropped() {
        let mut cache = OffsetCache::default();
        let topic: Arc<str> = Arc::from("t");
        cache.topic_mut(&topic).insert(0, offset(1));
        cache.drop_if_empty(&topic);
        assert_eq!(cache.get_partition("t", 0).map(|o| o.offset), Some(1), "a topic with offsets stays");
        let unused: Arc<str> = Arc::from("u");
        assert!(cache.topic_mut(&unused).is_empty());
        cache.drop_if_empty(&unused);
        assert!(cache.topic("u").is_none());
        assert!(cache.known_topic_mut("u").is_none());
        assert!(cache.topic("t").is_some_and(|name| Arc::ptr_eq(name, &topic)), "the cache's own name");
        assert_eq!(cache.known_topic_mut("t").and_then(|p| p.get(0)).map(|o| o.offset), Some(1));
        assert_eq!(cache.len(), 1);
    }
}
