//! Loading consumer groups: replaying what storage holds, then arming what
//! Kafka's `GroupMetadataManager.onLoaded` arms (a session per member, a
//! revocation deadline per member still revoking). Timers are not stored.

use std::sync::Arc;

use group_offsets::ConsumerGroupRecord;
use group_types::ConsumerMemberState;

use crate::core::{CoordinatorCore, TimerKey};

/// Replay order within a group: the group's epoch and members first, then
/// targets, then where each member stands.
fn rank(record: &ConsumerGroupRecord) -> u8 {
    match record {
        ConsumerGroupRecord::GroupMetadata { .. } => 0,
        ConsumerGroupRecord::MemberMetadata { .. } => 1,
        ConsumerGroupRecord::RegularExpression { .. } => 2,
        ConsumerGroupRecord::TargetAssignmentMember { .. } => 3,
        ConsumerGroupRecord::TargetAssignmentMetadata { .. } => 4,
        ConsumerGroupRecord::CurrentMemberAssignment { .. } => 5,
    }
}

impl CoordinatorCore {
    pub(crate) fn load_consumer_groups(&mut self, mut records: Vec<ConsumerGroupRecord>) {
        records.sort_by(|a, b| a.group_id().cmp(b.group_id()).then(rank(a).cmp(&rank(b))));
        let now = self.engine.now;
        let mut loaded: Vec<Arc<str>> = Vec::new();
        for record in records.into_iter().filter(|r| !r.is_tombstone()) {
            let id = record.group_id().clone();
            // A consumer group replaces whatever classic record this id had
            // (its offsets, beside it, stay).
            let Some((cg, new)) = self.loaded_consumer_group(&id) else { continue };
            cg.replay(&record, None);
            if new {
                loaded.push(id);
            }
        }
        for id in loaded {
            let session = i64::from(self.consumer_session_timeout(&id));
            let Some(cg) = self.consumer_group_mut(&id) else { continue };
            cg.refresh_needed = true;
            let mut arm = Vec::new();
            for m in cg.modern.members.values_mut() {
                let deadline = now + session;
                m.session_deadline = Some(deadline);
                arm.push((TimerKey::ConsumerSession(id.clone(), m.id.clone()), deadline));
                if m.state == ConsumerMemberState::UnrevokedPartitions && !m.is_classic() {
                    m.rebalance_timer_epoch = Some(m.member_epoch);
                    let deadline = now + i64::from(m.meta.rebalance_timeout_ms);
                    m.rebalance_deadline = Some(deadline);
                    arm.push((TimerKey::ConsumerRebalance(id.clone(), m.id.clone()), deadline));
                }
            }
            for (key, deadline) in arm {
                self.engine.arm(key, deadline);
            }
        }
    }
}
