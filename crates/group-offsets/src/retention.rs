//! KIP-211 offset retention as data in, data out (`kafka-semantics.md` §6.5).
//!
//! Kafka's rule, per group, decides first *whether* a group's offsets may
//! expire and from *which base time*, then compares each eligible offset with
//! `now`. Nothing here reads a clock or touches storage: the coordinator's
//! cleanup passes what it knows and deletes what comes back.

use std::collections::{BTreeSet, HashSet};
use std::hash::BuildHasher;
use std::sync::Arc;

use group_types::{GroupState, OffsetAndMetadata, PartitionMap, TopicPartition};

/// Kafka's default `offsets.retention.minutes` (7 days), in milliseconds.
pub const DEFAULT_OFFSETS_RETENTION_MS: i64 = 7 * 24 * 60 * 60 * 1000;

/// `offsets.retention.minutes` in milliseconds, computed in 64 bits so that
/// `i32::MAX` minutes does not overflow.
///
/// ```
/// use group_offsets::retention_ms_from_minutes;
/// assert_eq!(retention_ms_from_minutes(10_080), 604_800_000);
/// assert_eq!(retention_ms_from_minutes(i32::MAX), 128_849_018_820_000);
/// ```
pub const fn retention_ms_from_minutes(minutes: i32) -> i64 {
    minutes as i64 * 60_000
}

/// The protocol type of consumer groups, the only type whose subscriptions
/// are known (`kafka-semantics.md` §6.6).
pub const CONSUMER_PROTOCOL_TYPE: &str = "consumer";

/// A set of topic names, as a coordinator may keep a group's subscriptions.
pub trait TopicSet {
    /// True when `topic` is in the set.
    fn contains_topic(&self, topic: &str) -> bool;
}

impl TopicSet for BTreeSet<String> {
    fn contains_topic(&self, topic: &str) -> bool {
        self.contains(topic)
    }
}

impl TopicSet for BTreeSet<Arc<str>> {
    fn contains_topic(&self, topic: &str) -> bool {
        self.contains(topic)
    }
}

impl<H: BuildHasher> TopicSet for HashSet<String, H> {
    fn contains_topic(&self, topic: &str) -> bool {
        self.contains(topic)
    }
}

impl<H: BuildHasher> TopicSet for HashSet<Arc<str>, H> {
    fn contains_topic(&self, topic: &str) -> bool {
        self.contains(topic)
    }
}

impl TopicSet for [String] {
    fn contains_topic(&self, topic: &str) -> bool {
        self.iter().any(|t| t == topic)
    }
}

impl TopicSet for Vec<String> {
    fn contains_topic(&self, topic: &str) -> bool {
        self.as_slice().contains_topic(topic)
    }
}

/// What retention needs to know about a group.
#[derive(Clone, Copy)]
pub struct RetentionGroup<'a> {
    /// The group's state.
    pub state: GroupState,
    /// When the group entered that state (ms); `None` for groups loaded from
    /// records that predate state timestamps.
    pub state_timestamp_ms: Option<i64>,
    /// The group's protocol type: `None` for a simple group that only ever stored offsets.
    pub protocol_type: Option<&'a str>,
    /// The topics a consumer group's members subscribe to; `None` when unknown
    /// (not a consumer group, or metadata that did not decode), which prevents
    /// expiry in a Stable group.
    pub subscribed_topics: Option<&'a dyn TopicSet>,
    /// Partitions with a commit in flight: never expired in this pass.
    pub pending: &'a [TopicPartition],
}

impl std::fmt::Debug for RetentionGroup<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RetentionGroup")
            .field("state", &self.state)
            .field("state_timestamp_ms", &self.state_timestamp_ms)
            .field("protocol_type", &self.protocol_type)
            .field("subscribed_topics", &self.subscribed_topics.map(|_| ".."))
            .field("pending", &self.pending)
            .finish()
    }
}

impl<'a> RetentionGroup<'a> {
    /// A group in `state` since `state_timestamp_ms`, with no protocol type, no
    /// known subscriptions and nothing pending; set the other fields as needed.
    pub fn new(state: GroupState, state_timestamp_ms: Option<i64>) -> RetentionGroup<'a> {
        RetentionGroup {
            state,
            state_timestamp_ms,
            protocol_type: None,
            subscribed_topics: None,
            pending: &[],
        }
    }

    /// The same group with a protocol type.
    pub fn with_protocol_type(self, protocol_type: &'a str) -> RetentionGroup<'a> {
        RetentionGroup { protocol_type: Some(protocol_type), ..self }
    }

    /// The same group with known subscriptions.
    pub fn with_subscribed_topics(self, topics: &'a dyn TopicSet) -> RetentionGroup<'a> {
        RetentionGroup { subscribed_topics: Some(topics), ..self }
    }

    /// The same group with commits in flight on `pending`.
    pub fn with_pending(self, pending: &'a [TopicPartition]) -> RetentionGroup<'a> {
        RetentionGroup { pending, ..self }
    }

    /// Whether one offset of the group has expired at `now_ms` under `rule` (its
    /// [`expiration_rule`](Self::expiration_rule)): the test [`expired_offsets`]
    /// applies to each partition, for callers that keep offsets in their own shape.
    /// A pending partition (a commit in flight) never expires.
    pub fn offset_expired(
        &self,
        rule: ExpirationRule,
        topic: &str,
        partition: i32,
        offset: &OffsetAndMetadata,
        now_ms: i64,
        retention_ms: i64,
    ) -> bool {
        if rule == ExpirationRule::Never
            || (rule == ExpirationRule::UnsubscribedSinceCommit
                && self.subscribed_topics.is_none_or(|topics| topics.contains_topic(topic)))
            || self.pending.iter().any(|p| p.partition == partition && p.topic() == topic)
        {
            return false;
        }
        let base_ms = match rule {
            ExpirationRule::AllSinceStateChange => self.state_timestamp_ms.unwrap_or(offset.commit_time),
            _ => offset.commit_time,
        };
        is_expired(offset, base_ms, now_ms, retention_ms)
    }

    /// Which of the group's offsets may expire at all, and from which base time.
    pub fn expiration_rule(&self) -> ExpirationRule {
        match self.protocol_type {
            // Kafka's J coordinator (`ClassicGroup.offsetExpirationCondition`):
            // a group that has used group management...
            Some(protocol_type) => match self.state {
                // ...expires everything together once Empty, from the time it emptied.
                GroupState::Empty => ExpirationRule::AllSinceStateChange,
                // ...and, while Stable with known subscriptions, only what nobody subscribes to.
                GroupState::Stable
                    if protocol_type == CONSUMER_PROTOCOL_TYPE && self.subscribed_topics.is_some() =>
                {
                    ExpirationRule::UnsubscribedSinceCommit
                }
                // An active group never loses offsets.
                _ => ExpirationRule::Never,
            },
            // A simple group: each offset by its own commit time.
            None => ExpirationRule::AllSinceCommit,
        }
    }
}

/// How a group's offsets expire (the rows of `kafka-semantics.md` §6.5's table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExpirationRule {
    /// Every offset, `retention` after the group's state timestamp (each
    /// offset's commit time when there is none): an Empty group that used group management.
    AllSinceStateChange,
    /// Offsets of topics no member subscribes to, `retention` after their
    /// commit: a Stable consumer group with known subscriptions.
    UnsubscribedSinceCommit,
    /// Every offset, `retention` after its commit: a simple group.
    AllSinceCommit,
    /// None: an active group, or one whose subscriptions are unknown.
    Never,
}

/// Whether one offset has expired, given the base time its rule picked: an
/// explicit expire timestamp (v2-4 commits) replaces the retention arithmetic.
fn is_expired(offset: &OffsetAndMetadata, base_ms: i64, now_ms: i64, retention_ms: i64) -> bool {
    match offset.expire_time {
        Some(expire_ms) => now_ms >= expire_ms,
        // Saturating: a corrupt or far-future base must not wrap around into "expired".
        None => now_ms.saturating_sub(base_ms) >= retention_ms,
    }
}

/// The partitions whose offsets have expired at `now_ms`, in topic then partition order.
///
/// ```
/// use group_offsets::{RetentionGroup, expired_offsets};
/// use group_types::{GroupState, OffsetAndMetadata, PartitionMap, TopicPartition};
///
/// let mut offsets = PartitionMap::new();
/// offsets.entry("orders".to_string()).or_default().insert(0, OffsetAndMetadata::new(5, 1_000));
///
/// // A consumer group that became Empty at t=50_000: its offsets go together,
/// // `retention` after that, whatever their commit times.
/// let group = RetentionGroup::new(GroupState::Empty, Some(50_000)).with_protocol_type("consumer");
/// assert!(expired_offsets(&group, &offsets, 59_999, 10_000).is_empty());
/// assert_eq!(expired_offsets(&group, &offsets, 60_000, 10_000), [TopicPartition::new("orders", 0)]);
/// ```
pub fn expired_offsets(
    group: &RetentionGroup<'_>,
    offsets: &PartitionMap<OffsetAndMetadata>,
    now_ms: i64,
    retention_ms: i64,
) -> Vec<TopicPartition> {
    let rule = group.expiration_rule();
    if rule == ExpirationRule::Never {
        return Vec::new();
    }
    let mut expired = Vec::new();
    for (topic, partitions) in offsets {
        if rule == ExpirationRule::UnsubscribedSinceCommit
            && group.subscribed_topics.is_none_or(|topics| topics.contains_topic(topic))
        {
            continue;
        }
        let mut shared_topic: Option<Arc<str>> = None;
        for (partition, offset) in partitions {
            if group.offset_expired(rule, topic, *partition, offset, now_ms, retention_ms) {
                let topic = shared_topic.get_or_insert_with(|| Arc::from(topic.as_str()));
                expired.push(TopicPartition::new(Arc::clone(topic), *partition));
            }
        }
    }
    expired
}
