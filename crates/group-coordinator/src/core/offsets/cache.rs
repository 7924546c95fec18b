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
    topics: BTreeMap<Arc<str>, TopicOffsets>,
}

/// One topic's offsets, with the topic's shared name: a commit's one search by
/// the request's name finds both the offsets and the `Arc` its records share.
#[derive(Debug, Clone)]
struct TopicOffsets {
    name: Arc<str>,
    partitions: PartitionOffsets,
}

impl OffsetCache {
    /// Stores `offset` for `tp`, returning the offset it replaces.
    pub(crate) fn insert(
        &mut self,
        tp: TopicPartition,
        offset: OffsetAndMetadata,
    ) -> Option<OffsetAndMetadata> {
        match self.topics.get_mut(&*tp.topic) {
            Some(topic) => topic.partitions.insert(tp.partition, offset),
            None => self.topic_mut(&tp.topic).insert(tp.partition, offset),
        }
    }

    /// The offsets of `topic`, an empty map if it has none yet: a commit of many
    /// partitions of one topic finds the topic once. A caller that may store none
    /// calls [`Self::drop_if_empty`] after (the cache holds no topic without
    /// offsets).
    pub(crate) fn topic_mut(&mut self, topic: &Arc<str>) -> &mut PartitionOffsets {
        let entry = self.topics.entry(topic.clone());
        &mut entry
            .or_insert_with(|| TopicOffsets { name: topic.clone(), partitions: PartitionOffsets::default() })
            .partitions
    }

    /// The shared name and the offsets of `topic`, if any of its partitions has
    /// an offset here: one search, and no name cloned to find them.
    pub(crate) fn known_topic_mut(&mut self, topic: &str) -> Option<(&Arc<str>, &mut PartitionOffsets)> {
        self.topics.get_mut(topic).map(|t| (&t.name, &mut t.partitions))
    }

    /// Removes `topic` if it holds no offset.
    pub(crate) fn drop_if_empty(&mut self, topic: &str) {
        if self.topics.get(topic).is_some_and(|t| t.partitions.is_empty()) {
            self.topics.remove(topic);
        }
    }

    /// How many partitions hold an offset.
    pub(crate) fn len(&self) -> usize {
        self.topics.values().map(|t| t.partitions.len()).sum()
    }

    /// True when no partition holds an offset.
    pub(crate) fn is_empty(&self) -> bool {
        self.topics.values().all(|t| t.partitions.is_empty())
    }

    /// The offset of one partition.
    pub(crate) fn get(&self, tp: &TopicPartition) -> Option<&OffsetAndMetadata> {
        self.get_partition(&tp.topic, tp.partition)
    }

    /// The offset of one partition, without building a `TopicPartition`.
    pub(crate) fn get_partition(&self, topic: &str, partition: i32) -> Option<&OffsetAndMetadata> {
        self.topics.get(topic)?.partitions.get(partition)
    }

    pub(crate) fn contains_key(&self, tp: &TopicPartition) -> bool {
        self.get(tp).is_some()
    }

    /// Removes one partition's offset (and the topic once it has none left).
    pub(crate) fn remove(&mut self, tp: &TopicPartition) -> Option<OffsetAndMetadata> {
        let topic = self.topics.get_mut(&*tp.topic)?;
        let removed = topic.partitions.remove(tp.partition);
        if topic.partitions.is_empty() {
            self.topics.remove(&*tp.topic);
        }
        removed
    }

    /// Every offset, ordered by topic then partition.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (TopicPartition, &OffsetAndMetadata)> {
        self.topics.values().flat_map(|TopicOffsets { name, partitions }| {
            partitions
                .iter()
                .map(|(partition, offset)| (TopicPartition { topic: name.clone(), partition }, offset))
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
        assert!(cache.known_topic_mut("u").is_none());
        let (name, partitions) = cache.known_topic_mut("t").expect("t has an offset");
        assert!(Arc::ptr_eq(name, &topic), "found with its shared name");
        assert_eq!(partitions.get(0).map(|o| o.offset), Some(1));
        assert_eq!(cache.len(), 1);
    }
}
