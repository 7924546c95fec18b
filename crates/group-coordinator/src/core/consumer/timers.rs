//! The deadlines of consumer-protocol members (§4.2): the session, and the
//! revocation deadline of a member that must give partitions back. Both fence the
//! member when they fire; a timer whose group or member is gone, or whose member
//! moved on, does nothing (`consumerGroupFenceMemberOperation`).

use std::sync::Arc;

use crate::core::CoordinatorCore;

impl CoordinatorCore {
    pub(crate) fn fire_consumer_session(&mut self, group: &str, member: &Arc<str>) {
        let now = self.engine.now;
        let due = self
            .consumer_group_ref(group)
            .and_then(|cg| cg.members.get(member))
            .is_some_and(|m| m.session_deadline.is_some_and(|d| d <= now));
        if due {
            self.fence_by_timer(group, member);
        }
    }

    pub(crate) fn fire_consumer_rebalance(&mut self, group: &str, member: &Arc<str>) {
        let due = self
            .consumer_group_ref(group)
            .and_then(|cg| cg.members.get(member))
            .is_some_and(|m| m.rebalance_timer_epoch == Some(m.member_epoch));
        if due {
            self.fence_by_timer(group, member);
        }
    }

    fn fence_by_timer(&mut self, group: &str, member: &Arc<str>) {
        let Some(mut work) = self.take_consumer(group) else { return };
        self.fence_or_downgrade(&mut work, std::slice::from_ref(member));
        self.commit_work(work, None);
    }
}
