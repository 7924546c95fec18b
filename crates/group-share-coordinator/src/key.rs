//! Share partition keys (Kafka's `SharePartitionKey`) and their routing to a
//! partition of `__share_group_state` (`ShareCoordinatorService.partitionFor`).

use std::fmt;

use group_types::{GroupId, TopicId};

use crate::KeyError;

/// A share partition: one partition of one topic as consumed by one share group.
/// The share coordinator keeps state per key, and its records are keyed by it.
///
/// ```
/// use group_share_coordinator::SharePartitionKey;
///
/// let key: SharePartitionKey = "g1:LCa0a2j_xo_5m0U8HTBBNA:3".parse()?;
/// assert_eq!(key.partition, 3);
/// assert_eq!(key.to_string(), "g1:LCa0a2j_xo_5m0U8HTBBNA:3");
/// assert!(key.coordinator_partition(50) < 50);
/// # Ok::<(), group_share_coordinator::KeyError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SharePartitionKey {
    /// The share group.
    pub group_id: GroupId,
    /// The topic.
    pub topic_id: TopicId,
    /// The partition index.
    pub partition: i32,
}

impl SharePartitionKey {
    /// The key of partition `partition` of topic `topic_id` in group `group_id`.
    pub fn new(group_id: impl Into<GroupId>, topic_id: TopicId, partition: i32) -> SharePartitionKey {
        SharePartitionKey { group_id: group_id.into(), topic_id, partition }
    }

    /// The partition of `__share_group_state` (of `partitions`, at least 1) that
    /// holds this key, as Kafka's `ShareCoordinatorService.partitionFor` computes
    /// it: `Utils.abs(coordinatorKey.hashCode()) % partitions` over the string
    /// `group:topicId:partition`, so that a client's FindCoordinator with key type 2
    /// lands where Kafka's would.
    pub fn coordinator_partition(&self, partitions: i32) -> i32 {
        java_abs(java_string_hash(&self.to_string())) % partitions.max(1)
    }
}

/// Java's `String.hashCode`: over UTF-16 code units.
fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16().fold(0i32, |h, unit| h.wrapping_mul(31).wrapping_add(i32::from(unit)))
}

/// Kafka's `Utils.abs`: `Math.abs`, except that `i32::MIN` maps to 0.
fn java_abs(n: i32) -> i32 {
    if n == i32::MIN { 0 } else { n.abs() }
}

/// `group:topicId:partition`, Kafka's `SharePartitionKey.asCoordinatorKey`.
impl fmt::Display for SharePartitionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.group_id, self.topic_id, self.partition)
    }
}

/// Parses `group:topicId:partition` from the right, as Kafka's
/// `SharePartitionKey.getInstance(String)` does: the group id may hold colons, may
/// not be blank.
impl std::str::FromStr for SharePartitionKey {
    type Err = KeyError;

    fn from_str(key: &str) -> Result<SharePartitionKey, KeyError> {
        if key.is_empty() {
            return Err(KeyError::Empty);
        }
        // Java's `split(":")` drops trailing empty strings, so "g:t:" has two tokens.
        let mut tokens: Vec<&str> = key.split(':').collect();
        while tokens.last() == Some(&"") {
            tokens.pop();
        }
        let [group @ .., topic, partition] = tokens.as_slice() else {
            return Err(KeyError::Format(key.to_owned()));
        };
        if group.is_empty() {
            return Err(KeyError::Format(key.to_owned()));
        }
        let group_id = group.join(":");
        if group_id.trim_matches(|c: char| c <= ' ').is_empty() {
            return Err(KeyError::BlankGroupId);
        }
        let topic_id = topic.parse().map_err(|_| KeyError::TopicId((*topic).to_owned()))?;
        let partition = partition.parse().map_err(|_| KeyError::Partition((*partition).to_owned()))?;
        Ok(SharePartitionKey { group_id: group_id.into(), topic_id, partition })
    }
}
