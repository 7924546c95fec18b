//! Server-side assignment: `perform_assignment` runs the assignor of the group's
//! selected protocol over every member's decoded subscription.

use std::collections::HashMap;
use std::sync::Arc;

use group_assignors::{GroupAssignment, get_assignor};
use group_types::{MemberSubscription, Subscription, TopicPartition, flatten};

use crate::{CoordinatorError, GroupCoordinator, GroupMetadata};

/// Every member's subscription as an assignor sees it: topics, owned partitions,
/// generation, rack and user data, decoded from its metadata for the selected protocol.
pub(crate) fn member_subscriptions(
    group: &GroupMetadata,
) -> Result<Vec<MemberSubscription>, CoordinatorError> {
    // Members of one group usually subscribe to the same topics: handing the
    // assignor one shared list lets it recognise them by pointer, instead of
    // comparing members x topics names.
    let mut shared: HashMap<Vec<String>, Arc<[Arc<str>]>> = HashMap::new();
    group
        .members
        .iter()
        .map(|m| {
            let sub =
                Subscription::decode(&m.subscription).map_err(|e| CoordinatorError::InvalidSubscription {
                    group_id: group.group_id.clone(),
                    member_id: m.member_id.clone(),
                    reason: e.to_string(),
                })?;
            Ok(MemberSubscription {
                member_id: m.member_id.clone(),
                group_instance_id: m.group_instance_id.clone(),
                topics: match shared.get(&sub.topics) {
                    Some(topics) => topics.clone(),
                    None => {
                        let topics: Arc<[Arc<str>]> =
                            sub.topics.iter().map(|t| Arc::from(t.as_str())).collect();
                        shared.insert(sub.topics.clone(), topics.clone());
                        topics
                    }
                },
                owned_partitions: flatten(&sub.owned_partitions),
                generation_id: (sub.generation_id >= 0).then_some(sub.generation_id),
                rack_id: sub.rack_id.clone(),
                user_data: sub.user_data.clone(),
            })
        })
        .collect()
}

impl GroupCoordinator {
    /// Computes an assignment for `group_id` on the server: the assignor registered under
    /// the group's selected protocol (`range`, `roundrobin`, `sticky`,
    /// `cooperative-sticky`, ...) runs over every member's decoded subscription, owned
    /// partitions and generation included, so `sticky` stays sticky. A protocol naming no
    /// known assignor is an error, never a silent fallback.
    ///
    /// For a KIP-848 consumer group the coordinator computes assignments itself:
    /// this is then a view of the group's target assignment (what its server-side
    /// assignor, `uniform` or `range`, last computed), restricted to `partitions`
    /// when that is not empty.
    pub fn perform_assignment(
        &self,
        group_id: &str,
        partitions: &[TopicPartition],
    ) -> Result<GroupAssignment, CoordinatorError> {
        if self.is_stopped() {
            return Err(CoordinatorError::Stopped);
        }
        if let Some(consumer) = self.get_consumer_group(group_id) {
            return Ok(self.target_view(&consumer, partitions));
        }
        let group =
            self.get_group(group_id).ok_or_else(|| CoordinatorError::UnknownGroup(group_id.to_owned()))?;
        let protocol = group
            .protocol_name
            .clone()
            .ok_or_else(|| CoordinatorError::NoSelectedProtocol(group_id.to_owned()))?;
        let assignor = get_assignor(&protocol).ok_or_else(|| CoordinatorError::UnknownAssignor {
            group_id: group_id.to_owned(),
            protocol: protocol.clone(),
        })?;
        let members = member_subscriptions(&group)?;
        assignor
            .assign(&members, partitions)
            .map_err(|e| CoordinatorError::Assignment { protocol, reason: e.to_string() })
    }
}

impl GroupCoordinator {
    /// A consumer group's target assignment by topic name.
    fn target_view(
        &self,
        group: &crate::ConsumerGroupSnapshot,
        partitions: &[TopicPartition],
    ) -> GroupAssignment {
        let image = self.metadata_image();
        let wanted: std::collections::HashSet<&TopicPartition> = partitions.iter().collect();
        group
            .members
            .iter()
            .map(|m| {
                let mut out = Vec::new();
                for t in m.target.iter().flatten() {
                    let Some(topic) = image.topic_by_id(t.topic_id) else { continue };
                    for &p in &t.partitions {
                        let tp = TopicPartition { topic: topic.name.clone(), partition: p };
                        if wanted.is_empty() || wanted.contains(&tp) {
                            out.push(tp);
                        }
                    }
                }
                (m.member_id.clone(), out)
            })
            .collect()
    }
}
