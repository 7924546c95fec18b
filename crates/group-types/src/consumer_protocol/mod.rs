//! The consumer protocol: the bytes Kafka consumers put inside JoinGroup
//! metadata ([`Subscription`]) and SyncGroup assignments ([`MemberAssignment`]).
//!
//! Both are Kafka's `ConsumerProtocolSubscription` / `ConsumerProtocolAssignment`
//! schemas behind a leading big-endian `i16` version, non-flexible: `i16`-length
//! strings, `i32`-count arrays and `i32`-length bytes, with -1 for null. Encoding
//! writes exactly what Kafka's clients write for that version; decoding a version
//! above 3 reads the version-3 fields and ignores the rest, as Kafka does.
//!
//! Decoding never panics and never allocates more than the input justifies: every
//! length and array count is checked against the bytes that remain before anything
//! is reserved.

mod assignment;
mod error;
mod reader;
mod subscription;
mod writer;

pub use assignment::MemberAssignment;
pub use error::CodecError;
pub use subscription::Subscription;

use serde::{Deserialize, Serialize};

use crate::TopicPartition;

/// The newest consumer-protocol version this codec writes.
pub const CONSUMER_PROTOCOL_LATEST_VERSION: i16 = 3;

/// The partitions of one topic, as both schemas carry them.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TopicPartitions {
    /// The topic.
    pub topic: String,
    /// Its partitions, in wire order.
    pub partitions: Vec<i32>,
}

impl TopicPartitions {
    /// Partitions of one topic.
    pub fn new(topic: impl Into<String>, partitions: impl Into<Vec<i32>>) -> TopicPartitions {
        TopicPartitions { topic: topic.into(), partitions: partitions.into() }
    }
}

/// Flattens per-topic lists into [`TopicPartition`]s, sharing one `Arc<str>` per topic.
pub fn flatten(groups: &[TopicPartitions]) -> Vec<TopicPartition> {
    let mut out = Vec::with_capacity(groups.iter().map(|g| g.partitions.len()).sum());
    for group in groups {
        let topic: std::sync::Arc<str> = group.topic.as_str().into();
        out.extend(group.partitions.iter().map(|&p| TopicPartition { topic: topic.clone(), partition: p }));
    }
    out
}

/// Groups partitions by topic, topics in order of first appearance, partitions in input order.
pub fn group_by_topic<'a>(partitions: impl IntoIterator<Item = &'a TopicPartition>) -> Vec<TopicPartitions> {
    let mut out: Vec<TopicPartitions> = Vec::new();
    let mut index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for tp in partitions {
        let slot = *index.entry(&tp.topic).or_insert_with(|| {
            out.push(TopicPartitions::new(&*tp.topic, Vec::new()));
            out.len() - 1
        });
        out[slot].partitions.push(tp.partition);
    }
    out
}

fn check_version(version: i16) -> Result<(), CodecError> {
    if (0..=CONSUMER_PROTOCOL_LATEST_VERSION).contains(&version) {
        Ok(())
    } else {
        Err(CodecError::UnsupportedVersion { version })
    }
}

/// The version to decode a body with: negative is an error, above 3 reads as 3.
fn decode_version(version: i16) -> Result<i16, CodecError> {
    if version < 0 {
        return Err(CodecError::UnsupportedVersion { version });
    }
    Ok(version.min(CONSUMER_PROTOCOL_LATEST_VERSION))
}
