//! Kafka's `UniformAssignor` (§5.4, §5.5): the default server assignor.
//!
//! The subscription type picks the builder, as in Kafka: homogeneous groups
//! get `UniformHomogeneousAssignmentBuilder`'s quotas, heterogeneous groups
//! `UniformHeterogeneousAssignmentBuilder`'s fill-then-balance.

use super::index::{self, Subscriptions};
use super::{
    GroupSpec, ServerAssignError, ServerAssignor, SubscribedTopicDescriber, SubscriptionType,
    TargetAssignment, uniform_heterogeneous, uniform_homogeneous,
};

/// Kafka's default server assignor (`"uniform"`): balance first, then
/// stickiness.
///
/// - **Homogeneous** groups: every member gets `P / N` partitions and
///   `P mod N` members one more, so counts differ by at most one. Members are
///   walked in spec order; each keeps its current target partitions up to its
///   quota. An extra slot goes to a member that already fills it (KAFKA-18688),
///   so an assignment that is already balanced never moves. The remaining
///   partitions go, in topic-id and partition order, to the members still
///   below quota, in spec order.
/// - **Heterogeneous** groups: members keep their current partitions of topics
///   they still subscribe to; free partitions go topic by topic to the least
///   loaded subscriber (ties to the lowest spec index); then up to 16 rounds
///   move a topic's highest-numbered partitions from its most to its least
///   loaded subscribers. With overlapping subscriptions the result can be
///   "almost balanced", as Kafka's.
///
/// Either way, only topics the describer knows count, members without
/// subscriptions get nothing, and current partitions of topics no longer
/// subscribed or gone (or beyond the partition count) are dropped. A group
/// labelled homogeneous whose members' lists differ is assigned as
/// heterogeneous. Lists shared by address (an interned subscription) are
/// recognised as equal at no cost; otherwise each is compared with the first.
///
/// Kafka iterates hash maps where this walks the spec's member order and
/// topic-id order, so individual choices differ from Kafka's; counts,
/// stickiness and determinism are the contract.
#[derive(Debug, Clone, Copy, Default)]
pub struct UniformAssignor;

const NAME: &str = "uniform";

impl ServerAssignor for UniformAssignor {
    fn name(&self) -> &str {
        NAME
    }

    fn assign(
        &self,
        group: &GroupSpec<'_>,
        topics: &dyn SubscribedTopicDescriber,
    ) -> Result<TargetAssignment, ServerAssignError> {
        let members = &group.members[..];
        if members.is_empty() {
            return Ok(TargetAssignment::default());
        }
        if group.subscription_type == SubscriptionType::Homogeneous && index::same_subscriptions(members) {
            let covered = index::topics_of(members[0].subscribed_topics, topics, NAME)?;
            return uniform_homogeneous::assign(members, &covered, NAME);
        }
        let subs = Subscriptions::new(members, topics, NAME)?;
        Ok(uniform_heterogeneous::assign(members, &subs))
    }
}
