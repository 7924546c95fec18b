//! `TopicPartition`: one partition of one topic, cheap to clone at scale.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// One partition of one topic, ordered by topic then partition.
///
/// The topic is an `Arc<str>`: assignors clone a `TopicPartition` once per
/// assigned partition, up to a million times per call, and a reference-count
/// bump costs a fraction of a `String` copy.
///
/// ```
/// use group_types::TopicPartition;
/// let tp = TopicPartition::new("orders", 3);
/// assert_eq!(tp.to_string(), "orders-3");
/// assert!(TopicPartition::new("orders", 2) < tp);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TopicPartition {
    /// The topic name.
    pub topic: Arc<str>,
    /// The partition index within the topic.
    pub partition: i32,
}

impl TopicPartition {
    /// A partition of `topic`. Pass an existing `Arc<str>` to share the name.
    pub fn new(topic: impl Into<Arc<str>>, partition: i32) -> TopicPartition {
        TopicPartition { topic: topic.into(), partition }
    }

    /// The topic name.
    pub fn topic(&self) -> &str {
        &self.topic
    }
}

impl fmt::Display for TopicPartition {
    /// Kafka's `topic-partition` form.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.topic, self.partition)
    }
}
