//! A classic group from its record, and what a load arms for it
//! (`GroupMetadataManager.replay(GroupMetadataKey, GroupMetadataValue)` and the
//! classic half of `GroupMetadataManager.onLoaded`).
//!
//! A classic handler changes its group in memory and writes the group's record
//! without replaying it, as Kafka's classic handlers do (their
//! `CoordinatorResult` is built with `replayRecords` false): the record holds
//! only what survives a restart, not the parked requests, timers and pending
//! members the live group also holds. Replaying it is how the group loads.

use std::sync::Arc;

use group_offsets::GroupMetadataRecord;
use group_types::GroupState;

use crate::core::Engine;
use crate::core::classic::member_payload::MemberPayload;
use crate::core::classic::{Group, Member};
use crate::core::events::RebalanceReason;

impl Group {
    /// The group `record` describes: Stable with its members when it has any,
    /// Empty otherwise; `now` stands in for a missing state timestamp.
    pub(crate) fn from_record(record: GroupMetadataRecord, now: i64) -> Group {
        let mut g = Group::new(Arc::from(record.group_id.as_str()), record.state_timestamp_ms.unwrap_or(now));
        g.generation = record.generation_id;
        g.protocol_type = record.protocol_type.filter(|t| !t.is_empty());
        g.protocol_name = record.protocol_name;
        let protocol = g.protocol_name.clone().unwrap_or_default();
        g.reserve_members(record.members.len());
        for m in record.members {
            // Records written before v1 carry no rebalance timeout: Kafka's
            // `GroupMetadataManager.replay` takes the session timeout then.
            let rebalance_timeout_ms =
                if m.rebalance_timeout_ms > 0 { m.rebalance_timeout_ms } else { m.session_timeout_ms };
            let payload = MemberPayload::new(&m.assignment, [(protocol.as_str(), &m.subscription[..])]);
            let member = Member::new(
                Arc::from(m.member_id.as_str()),
                m.group_instance_id.as_deref(),
                &m.client_id,
                &m.client_host,
                rebalance_timeout_ms,
                m.session_timeout_ms,
                payload,
            );
            g.add(member, None);
        }
        g.leader = match record.leader_id {
            Some(leader) if g.has_member(&leader) => g.member(&leader).map(|m| m.id.clone()),
            _ => g.members().first().map(|m| m.id.clone()),
        };
        if g.len() > 0 {
            g.state = GroupState::Stable;
            g.previous_state = GroupState::Stable;
        }
        g.subscribed_topics = g.compute_subscribed_topics();
        g
    }
}

impl Engine {
    /// Arms what a loaded classic group needs: every member's session, and a
    /// rebalance when it holds more members than `group.max.size` allows now
    /// (the setting may have shrunk since it was written).
    pub(crate) fn classic_group_loaded(&mut self, g: &mut Group) {
        for i in 0..g.len() {
            let timeout = g.at(i).session_timeout_ms;
            self.arm_session(g, i, timeout);
        }
        let max = usize::try_from(self.config.group_max_size).unwrap_or(usize::MAX);
        if g.len() > max {
            let reason = RebalanceReason::LoadedOverCapacity {
                group_id: g.id.clone(),
                members: g.len(),
                max: self.config.group_max_size,
            };
            self.prepare_rebalance(g, reason);
        }
    }
}
