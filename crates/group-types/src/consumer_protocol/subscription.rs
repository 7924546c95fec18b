//! `ConsumerProtocolSubscription`: what a consumer puts in its JoinGroup metadata.

use serde::{Deserialize, Serialize};

use super::reader::Reader;
use super::writer::Writer;
use super::{CodecError, TopicPartitions, check_version, decode_version};

/// A consumer's subscription, versions 0 to 3.
///
/// | version | adds |
/// |---|---|
/// | 0 | `topics`, `user_data` |
/// | 1 | `owned_partitions` (cooperative rebalancing) |
/// | 2 | `generation_id` (default -1) |
/// | 3 | `rack_id` (KIP-881, nullable) |
///
/// Fields a version lacks are left out when encoding, and take their defaults
/// when decoding.
///
/// ```
/// use group_types::Subscription;
/// let sub = Subscription { version: 0, topics: vec!["t1".into()], ..Subscription::default() };
/// let bytes = sub.encode()?;
/// assert_eq!(bytes, [0, 0, 0, 0, 0, 1, 0, 2, b't', b'1', 0xff, 0xff, 0xff, 0xff]);
/// assert_eq!(Subscription::decode(&bytes)?, sub);
/// # Ok::<(), group_types::CodecError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subscription {
    /// The schema version (the leading `i16`).
    pub version: i16,
    /// The subscribed topics.
    pub topics: Vec<String>,
    /// Assignor-specific data; `None` is null on the wire, distinct from empty.
    pub user_data: Option<Vec<u8>>,
    /// v1+: the partitions the member owns.
    pub owned_partitions: Vec<TopicPartitions>,
    /// v2+: the generation the owned partitions belong to; -1 when unknown.
    pub generation_id: i32,
    /// v3+: the member's rack.
    pub rack_id: Option<String>,
}

impl Default for Subscription {
    fn default() -> Subscription {
        Subscription {
            version: 0,
            topics: Vec::new(),
            user_data: None,
            owned_partitions: Vec::new(),
            generation_id: -1,
            rack_id: None,
        }
    }
}

// Smallest encodings, used to bound array counts: an empty string, and a topic
// with an empty partition list.
const MIN_STRING: usize = 2;
const MIN_TOPIC_PARTITIONS: usize = 2 + 4;

impl Subscription {
    /// Decodes a subscription, leading version included.
    pub fn decode(bytes: &[u8]) -> Result<Subscription, CodecError> {
        let mut r = Reader::new(bytes);
        let version = decode_version(r.i16("version")?)?;
        let topics = r.array("topics", MIN_STRING, |r| r.string("topic"))?;
        let user_data = r.nullable_bytes("user_data")?;
        let mut sub = Subscription { version, topics, user_data, ..Subscription::default() };
        if version >= 1 {
            sub.owned_partitions =
                r.array("owned_partitions", MIN_TOPIC_PARTITIONS, read_topic_partitions)?;
        }
        if version >= 2 {
            sub.generation_id = r.i32("generation_id")?;
        }
        if version >= 3 {
            sub.rack_id = r.nullable_string("rack_id")?;
        }
        Ok(sub)
    }

    /// Decodes only the version and topic list (the v0 prefix every version
    /// shares), as Kafka does to learn a group's subscribed topics.
    pub fn decode_topics(bytes: &[u8]) -> Result<Vec<String>, CodecError> {
        let mut r = Reader::new(bytes);
        decode_version(r.i16("version")?)?;
        r.array("topics", MIN_STRING, |r| r.string("topic"))
    }

    /// Encodes the subscription at its `version`, which must be 0 to 3.
    pub fn encode(&self) -> Result<Vec<u8>, CodecError> {
        let mut out = Vec::new();
        self.encode_into(&mut out)?;
        Ok(out)
    }

    /// Appends the encoding to `out`; on error `out` may hold a partial write.
    pub fn encode_into(&self, out: &mut Vec<u8>) -> Result<(), CodecError> {
        check_version(self.version)?;
        let mut w = Writer::new(out);
        w.i16(self.version);
        w.array_len("topics", self.topics.len())?;
        for topic in &self.topics {
            w.string("topic", topic)?;
        }
        w.nullable_bytes("user_data", self.user_data.as_deref())?;
        if self.version >= 1 {
            write_topic_partitions_array(&mut w, "owned_partitions", &self.owned_partitions)?;
        }
        if self.version >= 2 {
            w.i32(self.generation_id);
        }
        if self.version >= 3 {
            w.nullable_string("rack_id", self.rack_id.as_deref())?;
        }
        Ok(())
    }
}

pub(super) fn read_topic_partitions(r: &mut Reader<'_>) -> Result<TopicPartitions, CodecError> {
    let topic = r.string("topic")?;
    let partitions = r.array("partitions", 4, |r| r.i32("partition"))?;
    Ok(TopicPartitions { topic, partitions })
}

pub(super) fn write_topic_partitions_array(
    w: &mut Writer<'_>,
    field: &'static str,
    groups: &[TopicPartitions],
) -> Result<(), CodecError> {
    w.array_len(field, groups.len())?;
    for group in groups {
        w.string("topic", &group.topic)?;
        w.array_len("partitions", group.partitions.len())?;
        for &p in &group.partitions {
            w.i32(p);
        }
    }
    Ok(())
}

pub(super) const MIN_TOPIC_PARTITIONS_SIZE: usize = MIN_TOPIC_PARTITIONS;
