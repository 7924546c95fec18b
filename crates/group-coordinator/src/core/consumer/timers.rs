//! The deadlines of consumer-protocol members (§4.2): the session, and the
//! revocation deadline of a member that must give partitions back; classic
//! members have their session and, instead of the revocation deadline, a
//! JoinGroup and a SyncGroup deadline (`consumer/classic.rs`). Each fences the
//! member when it fires; a timer whose group or member is gone, or whose member
//! moved on, does nothing (`consumerGroupFenceMemberOperation`).

use std::sync::Arc;

use crate::core::{CoordinatorCore, TimerKey};

impl CoordinatorCore {
    /// A member's session timer: fences the member when its deadline has
    /// passed, and queues the timer again at the deadline when a keep-alive
    /// moved it later without re-arming (`consumer_keep_alive`).
    pub(crate) fn fire_consumer_session(&mut self, group: &str, member: &Arc<str>) {
        let now = self.engine.now;
        let deadline = self
            .consumer_group_ref(group)
            .and_then(|cg| cg.modern.members.get(member))
            .and_then(|m| m.session_deadline);
        match deadline {
            Some(d) if d <= now => self.fence_by_timer(
                group,
                member,
                TimerKey::ConsumerSession(Arc::from(group), member.clone()),
            ),
            Some(later) => {
                self.engine.arm(TimerKey::ConsumerSession(Arc::from(group), member.clone()), later)
            }
            None => {}
        }
    }

    pub(crate) fn fire_consumer_rebalance(&mut self, group: &str, member: &Arc<str>) {
        let due = self
            .consumer_group_ref(group)
            .and_then(|cg| cg.modern.members.get(member))
            .is_some_and(|m| m.rebalance_timer.as_deref().is_some_and(|(epoch, _)| *epoch == m.member_epoch));
        if due {
            self.fence_by_timer(group, member, TimerKey::ConsumerRebalance(Arc::from(group), member.clone()));
        }
    }

    pub(crate) fn fence_by_timer(&mut self, group: &str, member: &Arc<str>, key: TimerKey) {
        let Some(mut work) = self.take_consumer(group) else { return };
        work.removal = match key {
            TimerKey::ConsumerRebalance(..) => "revocation timeout",
            TimerKey::ConsumerClassicJoin(..) => {
                "classic member failed to rejoin within its rebalance timeout"
            }
            TimerKey::ConsumerClassicSync(..) => "classic member failed to sync within its rebalance timeout",
            _ => "session expired",
        };
        work.retry = Some(key);
        self.fence_or_downgrade(&mut work, std::slice::from_ref(member));
        self.commit_work(work, None);
    }
}

impl crate::core::Engine {
    /// Arms again the deadlines of a consumer group a revert brings back: the
    /// reverted request may have cancelled them (a leave whose write failed).
    pub(crate) fn rearm_consumer_group(&mut self, group: &Arc<str>, cg: &super::ConsumerGroup) {
        for m in cg.modern.members.values() {
            if let Some(deadline) = m.session_deadline {
                self.arm(TimerKey::ConsumerSession(group.clone(), m.id.clone()), deadline);
            }
            if let Some(&(_, deadline)) = m.rebalance_timer.as_deref() {
                self.arm(TimerKey::ConsumerRebalance(group.clone(), m.id.clone()), deadline);
            }
            for which in [super::ClassicDeadline::Join, super::ClassicDeadline::Sync] {
                if let Some(deadline) = m.classic_deadline(which) {
                    self.arm(super::classic::deadline_key(which, group, &m.id), deadline);
                }
            }
        }
    }
}
