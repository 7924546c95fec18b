//! What a load arms for a consumer group (the consumer half of Kafka's
//! `GroupMetadataManager.onLoaded`): a session per member, a revocation
//! deadline per member still revoking. Timers are not stored. The records
//! themselves are replayed by `CoordinatorCore::replay` (`core/load.rs`).

use std::sync::Arc;

use group_types::ConsumerMemberState;

use crate::core::{CoordinatorCore, TimerKey};

impl CoordinatorCore {
    /// Arms the timers of loaded consumer group `id`, and has its subscribed
    /// topics checked again at its next heartbeat (the image may have changed
    /// while it was not loaded).
    pub(crate) fn consumer_group_loaded(&mut self, id: &Arc<str>) {
        let now = self.engine.now;
        let session = i64::from(self.consumer_session_timeout(id));
        let Some(cg) = self.consumer_group_mut(id) else { return };
        cg.refresh_needed = true;
        let mut arm = Vec::new();
        for m in cg.modern.members.values_mut() {
            let deadline = now + session;
            m.session_deadline = Some(deadline);
            arm.push((TimerKey::ConsumerSession(id.clone(), m.id.clone()), deadline));
            if m.state == ConsumerMemberState::UnrevokedPartitions && !m.is_classic() {
                let deadline = now + i64::from(m.meta.rebalance_timeout_ms);
                m.rebalance_timer = Some(Box::new((m.member_epoch, deadline)));
                arm.push((TimerKey::ConsumerRebalance(id.clone(), m.id.clone()), deadline));
            }
        }
        for (key, deadline) in arm {
            self.engine.arm(key, deadline);
        }
    }
}
