//! Migration between classic and consumer groups (§8): an empty group of one
//! kind is replaced by the other on its first request of the other protocol
//! (offsets kept, whatever the policy); a non-empty classic group is upgraded
//! when a consumer-protocol member joins it, and a consumer group whose last
//! consumer-protocol member goes is turned back into a classic group, as
//! `group.consumer.migration.policy` allows.

use std::sync::Arc;

use group_offsets::{
    AssignmentEpochs, ClassicMemberMetadata, ConsumerGroupMetadataValue, ConsumerMemberMetadataValue,
    CurrentMemberAssignmentValue, ModernGroupRecord, Record, TargetAssignmentMetadataValue,
};
use group_types::{ConsumerMemberState, ErrorCode, GroupState, MemberAssignment, Subscription};

use crate::core::classic::member_payload::MemberPayload;
use crate::core::consumer::{Origin, Work, deletion_records, pending_for, to_ids, to_names};
use crate::core::events::RebalanceReason;
use crate::core::modern::assignment;
use crate::core::{CoordinatorCore, Group, GroupKind, Member, PendingWrite, TimerKey};

type Refusal = (ErrorCode, Option<String>);

impl CoordinatorCore {
    /// A ConsumerGroupHeartbeat join to a non-empty classic group (§8.2,
    /// `validateOnlineUpgrade`, `ConsumerGroup.fromClassicGroup`): the classic
    /// members become classic-protocol members of a consumer group at epoch =
    /// generation, each keeping its assignment as its target.
    pub(crate) fn upgrade_classic_group(&mut self, group_id: &str) -> Result<Work, Refusal> {
        let refused = |why: &str| {
            Err((
                ErrorCode::GroupIdNotFound,
                Some(format!("Cannot upgrade classic group {group_id} to consumer group because {why}")),
            ))
        };
        let not_consumer =
            || Err((ErrorCode::GroupIdNotFound, Some(format!("Group {group_id} is not a consumer group."))));
        let config = &self.engine.config.consumer;
        if !config.migration_policy.allows_upgrade() {
            return refused("online upgrade is disabled.");
        }
        let image = self.engine.image.clone();
        let Some(g) = self.groups.get(group_id).and_then(GroupKind::classic) else { return not_consumer() };
        if g.protocol_type.as_deref() != Some("consumer") {
            return not_consumer();
        }
        let max = usize::try_from(config.max_size).unwrap_or(usize::MAX);
        if g.len() > max {
            return refused(&format!("its size exceeds the consumer group maximum size {max}."));
        }
        let protocol = g.protocol_name.clone().unwrap_or_default();
        let mut converted = Vec::with_capacity(g.len());
        for m in g.members() {
            let Ok(subscription) = Subscription::decode(m.metadata(&protocol)) else {
                return refused("the subscription of a member cannot be parsed.");
            };
            let assignment = if m.payload.assignment().is_empty() {
                MemberAssignment::default()
            } else {
                match MemberAssignment::decode(m.payload.assignment()) {
                    Ok(a) => a,
                    Err(_) => return refused("the assignment of a member cannot be parsed."),
                }
            };
            if assignment.user_data.as_ref().is_some_and(|u| !u.is_empty()) {
                return refused(
                    "an unsupported custom assignor is in use. Please refer to the documentation or switch to a default assignor before re-attempting the upgrade.",
                );
            }
            let mut names = subscription.topics.clone();
            names.sort();
            names.dedup();
            let meta = ConsumerMemberMetadataValue {
                instance_id: m.instance().map(str::to_owned),
                rack_id: subscription.rack_id.clone().filter(|r| !r.is_empty()),
                client_id: m.client_id().to_owned(),
                client_host: m.client_host().to_owned(),
                subscribed_topic_names: names,
                subscribed_topic_regex: None,
                rebalance_timeout_ms: m.rebalance_timeout_ms,
                server_assignor: None,
                classic: Some(ClassicMemberMetadata {
                    session_timeout_ms: m.session_timeout_ms,
                    supported_protocols: m.payload.to_metadata(),
                }),
            };
            converted.push((
                m.id.clone(),
                meta,
                to_ids(&assignment.partitions, &image),
                m.session_timeout_ms,
            ));
        }
        let generation = g.generation;
        // Parked JoinGroups and SyncGroups of the classic group are told to rejoin.
        self.answer_parked(group_id, ErrorCode::RebalanceInProgress);
        let mut work = self.new_work(group_id, Origin::ReplacesClassic);
        work.prefix.push(Record::GroupTombstone { group_id: work.group_id.clone() });
        let id = work.group_id.clone();
        for (member, meta, _, _) in &converted {
            work.emit(ModernGroupRecord::MemberMetadata {
                group_id: id.clone(),
                member_id: member.clone(),
                value: Some(Box::new(meta.clone())),
            });
        }
        let hash = crate::core::consumer::subscription_hash(&work.cg, &image);
        work.emit(ModernGroupRecord::GroupMetadata {
            group_id: id.clone(),
            value: Some(ConsumerGroupMetadataValue { epoch: generation, metadata_hash: hash }),
        });
        for (member, _, assigned, _) in &converted {
            work.emit(ModernGroupRecord::TargetAssignmentMember {
                group_id: id.clone(),
                member_id: member.clone(),
                value: Some(assignment::to_wire(assigned)),
            });
        }
        work.emit(ModernGroupRecord::TargetAssignmentMetadata {
            group_id: id.clone(),
            value: Some(TargetAssignmentMetadataValue::new(generation, 0)),
        });
        let now = self.engine.now;
        for (member, _, assigned, session) in &converted {
            work.emit(ModernGroupRecord::CurrentMemberAssignment {
                group_id: id.clone(),
                member_id: member.clone(),
                value: Some(CurrentMemberAssignmentValue {
                    member_epoch: generation,
                    previous_member_epoch: generation,
                    state: ConsumerMemberState::Stable,
                    assigned: assignment::to_wire(assigned),
                    pending_revocation: Vec::new(),
                    // `ConsumerGroup.fromClassicGroup`: what a classic member
                    // owns was assigned at the classic generation (KIP-1251).
                    assigned_epochs: AssignmentEpochs::same_over(generation, assigned.len()),
                    pending_revocation_epochs: AssignmentEpochs::default(),
                }),
            });
            let deadline = now + i64::from(*session);
            if let Some(m) = work.member_mut(member) {
                m.session_deadline = Some(deadline);
            }
            work.arm(TimerKey::ConsumerSession(id.clone(), member.clone()), deadline);
        }
        work.set_refresh_needed(false);
        Ok(work)
    }

    /// Fences `ids` (§2.5), or, when only classic-protocol members would remain
    /// and the policy and `group.max.size` allow it, turns the group back into a
    /// classic one and starts a rebalance there (§8.4, `convertToClassicGroup`).
    pub(crate) fn fence_or_downgrade(&mut self, work: &mut Work, ids: &[Arc<str>]) {
        // Counted, not listed: a leave from a large group of consumer-protocol
        // members stops at the first of them that stays.
        let members = &work.cg.modern.members;
        let leaving =
            ids.iter().enumerate().filter(|(i, id)| members.contains_key(id) && !ids[..*i].contains(id));
        let remaining = members.len() - leaving.count();
        let max = usize::try_from(self.engine.config.group_max_size).unwrap_or(usize::MAX);
        let downgrade = remaining > 0
            && !members.values_any_order().any(|m| !m.is_classic() && !ids.contains(&m.id))
            && remaining <= max
            && self.engine.config.consumer.migration_policy.allows_downgrade()
            && work.origin == Origin::Existing;
        if !downgrade {
            self.fence_members(work, ids);
            return;
        }
        for id in work.cg.modern.members.keys().cloned().collect::<Vec<_>>() {
            work.cancel(TimerKey::ConsumerSession(work.group_id.clone(), id.clone()));
            work.cancel(TimerKey::ConsumerRebalance(work.group_id.clone(), id.clone()));
            work.cancel(TimerKey::ConsumerClassicJoin(work.group_id.clone(), id.clone()));
            work.cancel(TimerKey::ConsumerClassicSync(work.group_id.clone(), id));
        }
        work.downgrade = Some(ids.to_vec());
    }

    /// Builds the classic group of a downgrade (`ClassicGroup.fromConsumerGroup`),
    /// once the consumer group's tombstones are issued: generation = group epoch,
    /// each remaining member with its JoinGroup protocols and what it owns as its
    /// assignment; then a rebalance, since a member left.
    pub(crate) fn finish_downgrade(
        &mut self,
        work: Work,
        left: &[Arc<str>],
        answer: Option<(crate::core::RequestId, crate::core::Response)>,
    ) {
        let image = self.engine.image.clone();
        let group_id = work.group_id.clone();
        for op in &work.timers {
            self.engine.fx.timers.push(op.clone());
        }
        // The consumer group goes back first, as it was before this request, so
        // that its removal below remembers exactly that (a failed write restores it).
        let mut work = work;
        work.rewind();
        let now = self.engine.now;
        self.put_consumer_group(group_id.clone(), work.cg);
        let Some(GroupKind::Consumer(cg)) = self.groups.get(&*group_id) else { return };
        let mut records = deletion_records(&group_id, cg);
        let mut g = Group::new(group_id.clone(), now);
        g.generation = cg.modern.group_epoch;
        let replacement = work.replacement.as_deref();
        for stored in cg.modern.members.values().filter(|m| !left.contains(&m.id)) {
            // A replaced member's place goes to the member replacing it, with what
            // the replaced one may own (`ClassicGroup.fromConsumerGroup`).
            let m = match replacement {
                Some(r) if r.replaced == stored.id => &r.joining,
                _ => stored,
            };
            let Some(classic) = m.meta.classic() else { continue };
            let version = classic
                .supported_protocols
                .first()
                .and_then(|p| Subscription::decode(&p.metadata).ok())
                .map_or(0, |s| s.version);
            // Deliberately not Kafka's choice (the member's target): what the member
            // may still own. A rebalance starts at once, so no member syncs against
            // it; but should a consumer member join before the classic members
            // rejoin, the upgrade turns these assignments back into owned partitions,
            // and only what they truly may own keeps those from being handed to
            // another member while they still consume them.
            let owned = assignment::union(&stored.assigned, &stored.pending_revocation);
            let target = MemberAssignment { version, partitions: to_names(&owned, &image), user_data: None };
            let payload = MemberPayload::joining(&classic.supported_protocols)
                .with_assignment(&target.encode().unwrap_or_default());
            let member = Member::new(
                m.id.clone(),
                m.meta.instance_id(),
                &m.meta.client_id,
                &m.meta.client_host,
                m.meta.rebalance_timeout_ms,
                classic.session_timeout_ms,
                payload,
            );
            g.add(member, None);
        }
        g.protocol_type = Some(group_types::ProtocolType::from_static("consumer"));
        g.protocol_name = g.select_protocol();
        g.state = GroupState::Stable;
        g.previous_state = GroupState::Stable;
        g.subscribed_topics = g.compute_subscribed_topics();
        records.push(Record::Group(Box::new(g.record(None))));
        self.remove_group(&group_id);
        let mut g2 = g;
        let sessions: Vec<(usize, i32)> = (0..g2.len()).map(|i| (i, g2.at(i).session_timeout_ms)).collect();
        for (i, timeout) in sessions {
            self.engine.arm_session(&mut g2, i, timeout);
        }
        self.put_group(group_id.clone(), GroupKind::Classic(g2));
        let Some(g) = self.groups.get_mut(&*group_id).and_then(GroupKind::classic_mut) else { return };
        self.engine.write_group(g, records, pending_for(answer, work.retry));
        if work.replacement.as_ref().is_none_or(|r| r.rebalance) {
            let reason = RebalanceReason::Downgraded { members: left.to_vec() };
            self.engine.prepare_rebalance(g, reason);
        }
    }

    /// Answers every JoinGroup and SyncGroup parked in classic group `group_id`
    /// with `error`, as a conversion that replaces the group must.
    fn answer_parked(&mut self, group_id: &str, error: ErrorCode) {
        let Some(g) = self.groups.get_mut(group_id).and_then(GroupKind::classic_mut) else { return };
        for i in 0..g.len() {
            if let Some(join) = g.set_awaiting_join(i, None) {
                let id = g.at(i).id.to_string();
                self.engine
                    .respond(join, crate::core::Response::JoinGroup(crate::core::join_error(error, id)));
            }
            if let Some(sync) = g.at_mut(i).take_awaiting_sync() {
                let response = group_types::SyncGroupResponse::error(error);
                self.engine.respond(sync, crate::core::Response::SyncGroup(response));
            }
        }
    }

    /// An empty consumer group a classic JoinGroup finds is deleted, offsets kept,
    /// and the join proceeds on a new classic group (§8.1).
    pub(crate) fn replace_empty_consumer_group(&mut self, group_id: &str) {
        let Some((id, GroupKind::Consumer(cg))) = self.groups.get_key_value(group_id) else { return };
        let records = deletion_records(id, cg);
        // The consumer group goes; its offsets, beside it, stay.
        self.remove_group(group_id);
        self.create_group(group_id);
        let Some(g) = self.groups.get_mut(group_id).and_then(GroupKind::classic_mut) else { return };
        self.engine.write_group(g, records, PendingWrite::Logged);
    }
}
