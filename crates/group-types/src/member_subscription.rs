//! What an assignor knows of one member.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::TopicPartition;

/// One member as a partition assignor sees it: who it is, what it subscribes
/// to, and what it owned before (decoded from its [`Subscription`](crate::Subscription)).
///
/// ```
/// use group_types::{MemberSubscription, TopicPartition};
/// let m = MemberSubscription::new("member-1", ["orders"])
///     .with_owned_partitions([TopicPartition::new("orders", 0)], 3)
///     .with_rack("rack-a");
/// assert_eq!(m.generation_id, Some(3));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MemberSubscription {
    /// The member id.
    pub member_id: String,
    /// The static instance id; static members sort first (by instance id) in Range and RoundRobin.
    pub group_instance_id: Option<String>,
    /// The topics the member subscribes to, in the order the member listed them.
    ///
    /// A shared slice rather than a `Vec`: members with the same subscription
    /// (the usual case: a whole group subscribing to one topic list) can hold
    /// one list, built once by whoever decodes the subscriptions. Assignors then
    /// recognise identical subscriptions by pointer in O(1) per member, as
    /// Kafka's broker-side assignors do with their pre-indexed subscriptions,
    /// instead of scanning members x topics names. Lists that are not shared
    /// are still compared by content, so sharing is an optimisation only.
    /// See [`with_shared_topics`](Self::with_shared_topics).
    pub topics: Arc<[Arc<str>]>,
    /// The partitions the member says it owned (subscription v1+).
    pub owned_partitions: Vec<TopicPartition>,
    /// The generation of `owned_partitions` (subscription v2+); `None` when not sent.
    pub generation_id: Option<i32>,
    /// The member's rack (subscription v3+, KIP-881).
    pub rack_id: Option<String>,
    /// The member's user data (sticky v0 encodes its previous assignment here).
    pub user_data: Option<Vec<u8>>,
}

impl MemberSubscription {
    /// A member subscribed to `topics`, owning nothing.
    pub fn new<T: Into<Arc<str>>>(
        member_id: impl Into<String>,
        topics: impl IntoIterator<Item = T>,
    ) -> MemberSubscription {
        MemberSubscription {
            member_id: member_id.into(),
            topics: topics.into_iter().map(Into::into).collect(),
            ..MemberSubscription::default()
        }
    }

    /// Replaces the subscribed topics with `topics`, sharing the list rather
    /// than copying it. Give every member with the same subscription a clone
    /// of one `Arc` (e.g. by interning decoded subscriptions): an assignor
    /// then groups those members by pointer without looking at their topics,
    /// which for a thousand members of ten thousand topics is the difference
    /// between a few microseconds and scanning ten million names.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use group_types::MemberSubscription;
    ///
    /// let topics: Arc<[Arc<str>]> = ["orders", "payments"].into_iter().map(Arc::from).collect();
    /// let a = MemberSubscription::new("a", None::<&str>).with_shared_topics(Arc::clone(&topics));
    /// let b = MemberSubscription::new("b", None::<&str>).with_shared_topics(topics);
    /// assert!(Arc::ptr_eq(&a.topics, &b.topics));
    /// assert_eq!(a.topics, MemberSubscription::new("c", ["orders", "payments"]).topics);
    /// ```
    pub fn with_shared_topics(mut self, topics: Arc<[Arc<str>]>) -> MemberSubscription {
        self.topics = topics;
        self
    }

    /// Sets the static instance id.
    pub fn with_instance_id(mut self, instance_id: impl Into<String>) -> MemberSubscription {
        self.group_instance_id = Some(instance_id.into());
        self
    }

    /// Sets the partitions owned in `generation_id`.
    pub fn with_owned_partitions(
        mut self,
        owned: impl IntoIterator<Item = TopicPartition>,
        generation_id: i32,
    ) -> MemberSubscription {
        self.owned_partitions = owned.into_iter().collect();
        self.generation_id = Some(generation_id);
        self
    }

    /// Sets the rack.
    pub fn with_rack(mut self, rack_id: impl Into<String>) -> MemberSubscription {
        self.rack_id = Some(rack_id.into());
        self
    }
}
