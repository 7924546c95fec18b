//! The metadata image: the topics of the cluster as KIP-848 consumer groups see
//! them (id, name, partitions, replica racks), versioned like Kafka's
//! `MetadataImage`.
//!
//! Consumer groups subscribe by name and are assigned by id; the image maps one
//! to the other and gives the assignors partition counts. An embedding broker
//! hands a new image to [`CoordinatorCore::update_metadata_image`](crate::CoordinatorCore::update_metadata_image)
//! (or [`GroupCoordinator::update_metadata_image`](crate::GroupCoordinator::update_metadata_image))
//! whenever topics change; groups subscribed to a topic that was created,
//! deleted or changed refresh at their next heartbeat (`onNewMetadataImage`).

use std::hash::Hasher;
use std::sync::Arc;

use group_types::TopicId;
use group_types::hash::FastMap;

/// One topic of the image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicImage {
    /// Its id.
    pub id: TopicId,
    /// Its name.
    pub name: Arc<str>,
    /// Its partition count.
    pub partitions: u32,
    /// Per partition, the racks of its replicas (sorted); empty when racks are unknown.
    pub racks: Vec<Vec<Arc<str>>>,
}

impl TopicImage {
    /// A topic without rack information.
    pub fn new(id: TopicId, name: impl Into<Arc<str>>, partitions: u32) -> TopicImage {
        TopicImage { id, name: name.into(), partitions, racks: Vec::new() }
    }

    /// A change detector over id, name, partition count and replica racks
    /// (`Utils.computeTopicHash`; only equality matters, §9.4).
    pub fn hash(&self) -> u64 {
        let mut h = rustc_hash::FxHasher::default();
        h.write_u8(0);
        h.write(&self.id.0);
        h.write(self.name.as_bytes());
        h.write_u8(0xff);
        h.write_u32(self.partitions);
        for (p, racks) in self.racks.iter().enumerate() {
            h.write_usize(p);
            for rack in racks {
                h.write_usize(rack.len());
                h.write(rack.as_bytes());
            }
        }
        h.finish()
    }

    /// The same topic apart from racks: what makes groups refresh.
    fn same_shape(&self, other: &TopicImage) -> bool {
        self.id == other.id && self.name == other.name && self.partitions == other.partitions
    }
}

/// The topics of the cluster at one version.
#[derive(Debug, Clone, Default)]
pub struct MetadataImage {
    version: i64,
    by_name: FastMap<Arc<str>, Named>,
    by_id: FastMap<TopicId, Arc<TopicImage>>,
}

/// A topic found by name, with its hash: computed once per image, as Kafka
/// caches it per topic, not at every group refresh (over racks, a hash reads
/// every partition).
#[derive(Debug, Clone)]
struct Named {
    topic: Arc<TopicImage>,
    hash: u64,
}

impl MetadataImage {
    /// An image of `topics` at `version` (later images have higher versions).
    pub fn new(version: i64, topics: impl IntoIterator<Item = TopicImage>) -> MetadataImage {
        let mut image = MetadataImage { version, ..MetadataImage::default() };
        for topic in topics {
            let topic = Arc::new(topic);
            let hash = topic.hash();
            image.by_name.insert(topic.name.clone(), Named { topic: topic.clone(), hash });
            image.by_id.insert(topic.id, topic);
        }
        image
    }

    /// The image's version.
    pub fn version(&self) -> i64 {
        self.version
    }

    /// The topic named `name`.
    pub fn topic(&self, name: &str) -> Option<&Arc<TopicImage>> {
        self.by_name.get(name).map(|named| &named.topic)
    }

    /// The hash of the topic named `name` ([`TopicImage::hash`]), computed when
    /// the image was made.
    pub fn topic_hash(&self, name: &str) -> Option<u64> {
        self.by_name.get(name).map(|named| named.hash)
    }

    /// The topic with id `id`.
    pub fn topic_by_id(&self, id: TopicId) -> Option<&Arc<TopicImage>> {
        self.by_id.get(&id)
    }

    /// Every topic, in no particular order.
    pub fn topics(&self) -> impl Iterator<Item = &Arc<TopicImage>> {
        self.by_name.values().map(|named| &named.topic)
    }

    /// How many topics the image holds.
    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    /// True when the image holds no topic.
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// The ids of `old`'s topics this image no longer has (deleted topics).
    pub fn deleted_since(&self, old: &MetadataImage) -> Vec<TopicId> {
        old.topics().filter(|t| self.topic_by_id(t.id).is_none()).map(|t| t.id).collect()
    }

    /// Names of topics created, deleted or changed (partitions, id) from `old` to
    /// this image. Rack changes alone are not listed: in Kafka a broker
    /// registration is not a topic delta, so no group refreshes for it
    /// (`oracle-kip848` finding 1).
    pub fn changed_since(&self, old: &MetadataImage) -> (Vec<Arc<str>>, bool) {
        let mut changed = Vec::new();
        let mut created = false;
        for (name, Named { topic, .. }) in &self.by_name {
            match old.by_name.get(name) {
                Some(before) if before.topic.same_shape(topic) => {}
                Some(_) => changed.push(name.clone()),
                None => {
                    created = true;
                    changed.push(name.clone());
                }
            }
        }
        for name in old.by_name.keys() {
            if !self.by_name.contains_key(name) {
                changed.push(name.clone());
            }
        }
        (changed, created)
    }
}

/// An image tells the server assignors how many partitions a topic has.
impl group_assignors::server::SubscribedTopicDescriber for MetadataImage {
    fn partition_count(&self, topic: TopicId) -> Option<u32> {
        self.topic_by_id(topic).map(|t| t.partitions)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_kept_by_name_is_the_topics_own() {
        let mut racked = TopicImage::new(TopicId::from_u128(2), "racked", 2);
        racked.racks = vec![vec![Arc::from("r1")], vec![Arc::from("r1"), Arc::from("r2")]];
        let image = MetadataImage::new(1, [TopicImage::new(TopicId::from_u128(1), "plain", 3), racked]);
        for name in ["plain", "racked"] {
            let topic = image.topic(name).expect("in the image");
            assert_eq!(image.topic_hash(name), Some(topic.hash()), "{name}");
        }
        assert_ne!(image.topic_hash("plain"), image.topic_hash("racked"));
        assert_eq!(image.topic_hash("absent"), None);
    }
}
