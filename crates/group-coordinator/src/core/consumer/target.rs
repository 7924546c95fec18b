//! The group's subscription metadata (step 10) and its target assignment
//! (step 11, `TargetAssignmentBuilder`).

use std::sync::Arc;

use group_assignors::server::{GroupSpec, MemberSpec, MemberTarget};
use group_offsets::{ModernGroupRecord, TargetAssignmentMetadataValue};
use group_types::hash::ClientMap;
use group_types::{ErrorCode, TopicId};

use super::{ConsumerMember, Work, topics};
use crate::core::CoordinatorCore;
use crate::core::modern::{assignment, can_compute_next_target_assignment};

type Refusal = (ErrorCode, Option<String>);

impl CoordinatorCore {
    /// `updateSubscriptionMetadata`: the subscription type and the metadata hash
    /// of the group's members as they are now. Returns whether the hash differs
    /// from the group's, and the new hash.
    pub(crate) fn refresh_subscription(&mut self, work: &mut Work) -> (bool, u64) {
        let image = self.engine.image.clone();
        let names = topics::group_names(&work.cg);
        let hash = topics::metadata_hash(&names, &image);
        work.set_refresh_needed(false);
        (hash != work.cg.modern.metadata_hash, hash)
    }

    /// `updateTargetAssignment`: runs the group's assignor over every member and
    /// writes the targets that changed and the new assignment epoch. An assignor
    /// failure is `UNKNOWN_SERVER_ERROR` and nothing of the request is written.
    pub(crate) fn update_target_assignment(
        &mut self,
        work: &mut Work,
        replaced: Option<&str>,
    ) -> Result<(), Refusal> {
        let image = self.engine.image.clone();
        let configured = &self.engine.config.consumer.assignors;
        let name = topics::preferred_assignor(work.cg.modern.members.values_any_order(), configured)
            .unwrap_or_else(|| configured[0].clone());
        let Some(assignor) = self.server_assignor(&name) else {
            return Err((ErrorCode::UnknownServerError, None));
        };
        // Members with the same subscription share one resolved list: the
        // assignors recognise equal subscriptions by the list's address.
        let mut lists: Vec<Vec<TopicId>> = Vec::new();
        let mut known: ClientMap<(&[String], Option<&str>), usize> = ClientMap::default();
        let mut chosen: Vec<(&ConsumerMember, usize)> = Vec::with_capacity(work.cg.modern.members.len());
        for m in work.cg.modern.members.values().filter(|m| replaced != Some(&*m.id)) {
            let key = (&*m.meta.subscribed_topic_names, m.regex());
            let at = *known.entry(key).or_insert_with(|| {
                lists.push(topics::subscribed_ids(m, &work.cg, &image));
                lists.len() - 1
            });
            chosen.push((m, at));
        }
        let ids: Vec<(Arc<str>, usize)> = chosen.iter().map(|(m, at)| (m.id.clone(), *at)).collect();
        let empty = MemberTarget::default();
        // Members are listed in id order, as targets are kept: one walk finds them all.
        let currents = work.cg.modern.targets.get_ascending(chosen.iter().map(|(m, _)| &*m.id));
        let spec = GroupSpec {
            members: chosen
                .iter()
                .zip(currents)
                .map(|((m, list), current)| {
                    let subscribed = &lists[*list];
                    MemberSpec {
                        member_id: &m.id,
                        instance_id: m.meta.instance_id(),
                        rack_id: m.meta.rack_id(),
                        subscribed_topics: subscribed,
                        current: current.map_or(&empty, |t| &**t),
                    }
                })
                .collect(),
            // The members' subscriptions as they are now: Kafka passes the type from
            // before this heartbeat's member update when it does not bump, which can
            // hand a member with an unresolved regex partitions it will never own
            // (oracle-kip848 finding 3).
            subscription_type: work.cg.subscription_type(),
        };
        let result = assignor.assign(&spec, &*image);
        let targets = match result {
            Ok(targets) if targets.members.len() == spec.members.len() => targets,
            Ok(_) | Err(_) => {
                if let Err(error) = &result {
                    tracing::warn!(target: "group_coordinator", group = %work.group_id, %error, "server assignor failed");
                }
                return Err((ErrorCode::UnknownServerError, None));
            }
        };
        drop(spec);
        let group_id = work.group_id.clone();
        let currents = work.cg.modern.targets.get_ascending(ids.iter().map(|(id, _)| &**id));
        let changed: Vec<(&Arc<str>, Vec<_>)> = ids
            .iter()
            .zip(targets.members)
            .zip(currents)
            .filter_map(|(((id, _), target), current)| {
                let target = assignment::from_sorted(target.topics);
                (current.map(|t| &**t) != Some(&target)).then(|| (id, assignment::to_wire(&target)))
            })
            .collect();
        for (id, value) in changed {
            work.emit(ModernGroupRecord::TargetAssignmentMember {
                group_id: group_id.clone(),
                member_id: id.clone(),
                value: Some(value),
            });
        }
        let epoch = work.cg.modern.group_epoch;
        // KIP-1263: when this target was computed, which the next waits on.
        let value = Some(TargetAssignmentMetadataValue::new(epoch, self.engine.now));
        work.emit(ModernGroupRecord::TargetAssignmentMetadata { group_id, value });
        Ok(())
    }

    /// `consumerGroupAssignmentIntervalMs`: the least time between two target
    /// assignments of consumer group `group`, its own config else the node's.
    pub(crate) fn consumer_assignment_interval(&self, group: &str) -> i32 {
        let node = self.engine.config.group_config_bounds.consumer_assignment_interval_ms.default;
        match self.engine.group_configs.is_empty() {
            true => node,
            false => self
                .engine
                .group_configs
                .get(group)
                .and_then(|o| o.consumer_assignment_interval_ms)
                .unwrap_or(node),
        }
    }

    /// Whether step 11 may compute a new target assignment for the group now
    /// (KIP-1263's batching: `canComputeNextTargetAssignment`). When it may not,
    /// members reconcile towards the last target, at its epoch, and a later
    /// heartbeat computes the next one; no timer is armed for it, as in Kafka.
    pub(crate) fn may_compute_target(&self, work: &Work) -> bool {
        can_compute_next_target_assignment(
            work.cg.modern.assignment_timestamp_ms,
            self.consumer_assignment_interval(&work.group_id),
            self.engine.now,
        )
    }
}
