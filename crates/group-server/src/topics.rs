//! The topics this node answers Metadata, ListOffsets and Fetch for: empty partitions
//! with stable topic ids. They are the `--topic`s at start, plus those CreateTopics adds
//! while the node runs (kept in memory only). They are also the coordinator's
//! `TopicMetadata` and its `PartitionEndOffsets` (every log here is empty).

use std::collections::BTreeMap;
use std::str::FromStr;
use std::sync::{Arc, PoisonError, RwLock};

use uuid::Uuid;

use crate::ConfigError;

/// A topic given on the command line as `NAME:PARTITIONS`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicSpec {
    /// The topic name.
    pub name: String,
    /// Its number of partitions (at least 1).
    pub partitions: i32,
}

impl TopicSpec {
    /// The topic's id: derived from its name alone, so that it is non-zero and the same
    /// across restarts (librdkafka fetches by id from Fetch v13 on and falls back to old
    /// versions when Metadata shows a zero id).
    pub fn topic_id(&self) -> Uuid {
        topic_id_for(&self.name)
    }
}

/// The most partitions a topic may have here.
pub(crate) const MAX_PARTITIONS: i32 = 100_000;

/// Kafka's topic name rule (`Topic.validate`): 1 to 249 of letters, digits, `.`, `_`
/// and `-`, and neither `.` nor `..`.
pub(crate) fn legal_topic_name(name: &str) -> bool {
    let legal = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    !name.is_empty() && name.len() <= 249 && name.chars().all(legal) && name != "." && name != ".."
}

impl FromStr for TopicSpec {
    type Err = ConfigError;

    fn from_str(s: &str) -> Result<TopicSpec, ConfigError> {
        let bad = || ConfigError::BadTopic(s.to_owned());
        let (name, partitions) = s.rsplit_once(':').ok_or_else(bad)?;
        let partitions: i32 = partitions.parse().map_err(|_| bad())?;
        if !legal_topic_name(name) || !(1..=MAX_PARTITIONS).contains(&partitions) {
            return Err(bad());
        }
        Ok(TopicSpec { name: name.to_owned(), partitions })
    }
}

/// A stable, non-zero, version-4-shaped UUID from a topic name (two FNV-1a passes).
pub fn topic_id_for(name: &str) -> Uuid {
    let fnv =
        |seed: u64| name.bytes().fold(seed, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3));
    let value = (u128::from(fnv(0xcbf2_9ce4_8422_2325)) << 64) | u128::from(fnv(0x6c62_272e_07bb_0142));
    let mut bytes = value.to_be_bytes();
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    Uuid::from_bytes(bytes)
}

/// The configured topics, by name and by id.
#[derive(Debug, Clone, Default)]
pub(crate) struct Topics {
    by_name: BTreeMap<String, (i32, Uuid)>,
    by_id: BTreeMap<Uuid, String>,
}

impl Topics {
    pub(crate) fn new(specs: &[TopicSpec]) -> Topics {
        let mut topics = Topics::default();
        for spec in specs {
            topics.by_name.insert(spec.name.clone(), (spec.partitions, spec.topic_id()));
            topics.by_id.insert(spec.topic_id(), spec.name.clone());
        }
        topics
    }

    /// Partition count and id of a topic.
    pub(crate) fn get(&self, name: &str) -> Option<(i32, Uuid)> {
        self.by_name.get(name).copied()
    }

    pub(crate) fn name_of(&self, id: &Uuid) -> Option<&str> {
        self.by_id.get(id).map(String::as_str)
    }

    pub(crate) fn has_partition(&self, name: &str, partition: i32) -> bool {
        self.get(name).is_some_and(|(n, _)| (0..n).contains(&partition))
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, i32, Uuid)> {
        self.by_name.iter().map(|(name, &(n, id))| (name.as_str(), n, id))
    }

    /// Every topic as a spec, by name.
    pub(crate) fn specs(&self) -> Vec<TopicSpec> {
        self.iter().map(|(name, partitions, _)| TopicSpec { name: name.to_owned(), partitions }).collect()
    }

    /// The metadata image of these topics at `version`: what KIP-848 consumer groups
    /// subscribe to by name and are assigned by id.
    pub(crate) fn image(&self, version: i64) -> group_coordinator::MetadataImage {
        group_coordinator::MetadataImage::new(
            version,
            self.iter().map(|(name, partitions, id)| {
                let partitions = u32::try_from(partitions).unwrap_or(0);
                group_coordinator::TopicImage::new(group_types::TopicId(id.into_bytes()), name, partitions)
            }),
        )
    }
}

/// The topics of a running node: read by every request that names a topic, replaced
/// whole (copy on write) when CreateTopics adds one.
#[derive(Debug, Default)]
pub(crate) struct SharedTopics {
    current: RwLock<Arc<Topics>>,
}

impl SharedTopics {
    pub(crate) fn new(specs: &[TopicSpec]) -> SharedTopics {
        SharedTopics { current: RwLock::new(Arc::new(Topics::new(specs))) }
    }

    /// The topics now.
    pub(crate) fn get(&self) -> Arc<Topics> {
        Arc::clone(&self.current.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Replaces the topics with `specs`.
    pub(crate) fn set(&self, specs: &[TopicSpec]) {
        *self.current.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(Topics::new(specs));
    }

    /// Adds `spec` unless a topic has its name; the topics after, if it was added.
    pub(crate) fn add(&self, spec: TopicSpec) -> Option<Arc<Topics>> {
        let mut current = self.current.write().unwrap_or_else(PoisonError::into_inner);
        if current.get(&spec.name).is_some() {
            return None;
        }
        let mut specs = current.specs();
        specs.push(spec);
        *current = Arc::new(Topics::new(&specs));
        Some(Arc::clone(&current))
    }
}

impl group_coordinator::TopicMetadata for SharedTopics {
    fn contains(&self, topic: &str, partition: i32) -> bool {
        self.current.read().unwrap_or_else(PoisonError::into_inner).has_partition(topic, partition)
    }
}

/// The node stores no records: a partition it has ends at offset 0, as ListOffsets
/// answers it, and one it does not have is `UNKNOWN_TOPIC_OR_PARTITION` (what
/// Kafka's ListOffsets answers for it). So a share partition's lag here is
/// `0 - start offset - delivery complete count`: 0 for a group altered to start at 0.
impl group_coordinator::PartitionEndOffsets for SharedTopics {
    fn latest_offsets(
        &self,
        partitions: &[group_coordinator::EndOffsetQuery],
    ) -> Vec<Result<i64, group_types::ErrorCode>> {
        let topics = self.get();
        partitions
            .iter()
            .map(|q| {
                if topics.has_partition(&q.topic_name, q.partition) {
                    Ok(0)
                } else {
                    Err(group_types::ErrorCode::UnknownTopicOrPartition)
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use group_coordinator::{EndOffsetQuery, PartitionEndOffsets};
    use group_types::ErrorCode;

    use super::{SharedTopics, TopicSpec};

    /// A known partition's log is empty (end offset 0); an unknown topic, or a
    /// partition beyond its topic's count, is `UNKNOWN_TOPIC_OR_PARTITION`.
    #[test]
    fn end_offsets_are_zero_for_known_partitions() {
        let topics = SharedTopics::new(&[TopicSpec { name: "foo".into(), partitions: 2 }]);
        let query = |name: &str, partition| EndOffsetQuery {
            topic_id: group_types::TopicId(super::topic_id_for(name).into_bytes()),
            topic_name: name.into(),
            partition,
        };
        let got = topics.latest_offsets(&[query("foo", 1), query("foo", 2), query("bar", 0)]);
        assert_eq!(
            got,
            [Ok(0), Err(ErrorCode::UnknownTopicOrPartition), Err(ErrorCode::UnknownTopicOrPartition)]
        );
    }
}
