//! Server-side assignors of KIP-848's consumer protocol (`kip848-semantics.md` §5):
//! the coordinator computes every member's target assignment from topic ids and
//! partition indices, with no per-partition strings.
//!
//! - [`ServerAssignor`]: the trait. [`assign`](ServerAssignor::assign) takes a
//!   [`GroupSpec`] (each member's subscribed topic ids and current target) and a
//!   [`SubscribedTopicDescriber`] (partition counts), and returns a
//!   [`TargetAssignment`] indexed like the spec's members.
//! - [`UniformAssignor`] (`"uniform"`, Kafka's default) and
//!   [`ServerRangeAssignor`] (`"range"`).
//! - [`server_assignor`]: the built-ins by name.
//! - Share groups (KIP-932) have their own trait, [`ShareAssignor`], with
//!   [`ShareGroupSpec`] (a [`GroupSpec`] plus the [`AssignablePartitions`])
//!   and Kafka's [`SimpleAssignor`] (`"simple"`), found by name with
//!   [`share_assignor`]; `share.rs` says why it is a sibling trait.
//!
//! # Performance
//!
//! Topics are numbered once in id order and partitions get dense indices, so
//! the assignors work on integer arrays (an owner per partition, a load per
//! member) and hash nothing; each target is written once, with exact
//! capacities. Give members with the same subscription one shared
//! `subscribed_topics` slice (an interned subscription): equal addresses are
//! recognised in O(1), where separate lists are compared element by element
//! (the uniform assignor compares every member's list with the first's to
//! confirm a homogeneous group). With `uniform`, a homogeneous million
//! partitions over 2,000 members take a few milliseconds, and one member
//! joining or leaving a group of 100 members over 10,000 partitions tens of
//! microseconds (`benches/server.rs`).

mod index;
mod java_order;
mod range;
mod share;
mod simple;
mod simple_heterogeneous;
mod simple_homogeneous;
mod uniform;
mod uniform_heterogeneous;
mod uniform_homogeneous;

use std::fmt;

use group_types::TopicId;

pub use self::range::ServerRangeAssignor;
pub use self::share::{AllAssignable, AssignablePartitions, ShareAssignor, ShareGroupSpec};
pub use self::simple::SimpleAssignor;
pub use self::uniform::UniformAssignor;

/// How members subscribe (`ConsumerGroup.subscriptionType`, §5.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SubscriptionType {
    /// Every member subscribes to the same topics.
    #[default]
    Homogeneous,
    /// Subscriptions differ.
    Heterogeneous,
}

impl SubscriptionType {
    /// Kafka's name (`HOMOGENEOUS`, `HETEROGENEOUS`).
    pub const fn as_str(self) -> &'static str {
        match self {
            SubscriptionType::Homogeneous => "HOMOGENEOUS",
            SubscriptionType::Heterogeneous => "HETEROGENEOUS",
        }
    }
}

/// One member's partitions: per topic id (ascending), partition indices (ascending).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct MemberTarget {
    /// Topics in ascending id order, each with its partitions ascending; no empty lists.
    pub topics: Vec<(TopicId, Vec<i32>)>,
}

impl MemberTarget {
    /// How many partitions the member holds.
    pub fn len(&self) -> usize {
        self.topics.iter().map(|(_, p)| p.len()).sum()
    }

    /// True when the member holds nothing.
    pub fn is_empty(&self) -> bool {
        self.topics.iter().all(|(_, p)| p.is_empty())
    }

    /// The partitions of `topic`, empty when none.
    pub fn partitions(&self, topic: TopicId) -> &[i32] {
        match self.topics.binary_search_by(|(t, _)| t.cmp(&topic)) {
            Ok(i) => &self.topics[i].1,
            Err(_) => &[],
        }
    }
}

/// What an assignor knows of one member.
#[derive(Debug, Clone, Copy)]
pub struct MemberSpec<'a> {
    /// The member id.
    pub member_id: &'a str,
    /// Its static instance id.
    pub instance_id: Option<&'a str>,
    /// Its rack (unused by the built-ins, as in Kafka 4.x).
    pub rack_id: Option<&'a str>,
    /// The ids of the existing topics it subscribes to (names and resolved
    /// regexes together), ascending, no duplicates.
    pub subscribed_topics: &'a [TopicId],
    /// Its current target assignment (not what the client owns).
    pub current: &'a MemberTarget,
}

/// The group as an assignor sees it (`GroupSpecImpl`).
#[derive(Debug, Clone, Default)]
pub struct GroupSpec<'a> {
    /// The members, in the coordinator's order.
    pub members: Vec<MemberSpec<'a>>,
    /// Whether all members subscribe alike.
    pub subscription_type: SubscriptionType,
}

/// Partition counts of the subscribed topics (`SubscribedTopicDescriber`).
pub trait SubscribedTopicDescriber {
    /// How many partitions `topic` has; `None` when it does not exist.
    fn partition_count(&self, topic: TopicId) -> Option<u32>;
}

impl<F: Fn(TopicId) -> Option<u32>> SubscribedTopicDescriber for F {
    fn partition_count(&self, topic: TopicId) -> Option<u32> {
        self(topic)
    }
}

/// Every member's new target, indexed like [`GroupSpec::members`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TargetAssignment {
    /// One target per member of the spec, in the same order.
    pub members: Vec<MemberTarget>,
}

/// An assignor could not compute a target (`PartitionAssignorException`); the
/// coordinator answers the triggering heartbeat `UNKNOWN_SERVER_ERROR`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("server assignor {assignor} failed: {message}")]
pub struct ServerAssignError {
    /// The assignor's name.
    pub assignor: String,
    /// What went wrong.
    pub message: String,
}

/// A server-side assignor (`ConsumerGroupPartitionAssignor`).
pub trait ServerAssignor: Send + Sync + fmt::Debug {
    /// The name members ask for in `ServerAssignor` (`uniform`, `range`).
    fn name(&self) -> &str;

    /// Every member's target. Members may subscribe to nothing; topics the
    /// describer does not know are skipped.
    fn assign(
        &self,
        group: &GroupSpec<'_>,
        topics: &dyn SubscribedTopicDescriber,
    ) -> Result<TargetAssignment, ServerAssignError>;
}

/// The built-in server assignor named `name` (`uniform` or `range`).
pub fn server_assignor(name: &str) -> Option<&'static dyn ServerAssignor> {
    match name {
        "uniform" => Some(&UniformAssignor),
        "range" => Some(&ServerRangeAssignor),
        _ => None,
    }
}

/// The built-in share-group assignor named `name` (`simple`, Kafka's only
/// one and the default of `group.share.assignors`).
pub fn share_assignor(name: &str) -> Option<&'static dyn ShareAssignor> {
    match name {
        simple::NAME => Some(&SimpleAssignor),
        _ => None,
    }
}
