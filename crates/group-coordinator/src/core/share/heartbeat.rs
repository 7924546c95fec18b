//! ShareGroupHeartbeat (`GroupMetadataManager.shareGroupHeartbeat`,
//! `shareGroupLeave`, `shareGroupFenceMember`) and the session deadline of a
//! share member. A heartbeat's records are built against the group as it is,
//! then replayed into it (logging how to undo each change), so the group changes
//! only by replay; a new group is created only once it has records.
//!
//! Share members move to their target at once (no revocation step), and only
//! initialized share partitions are assigned: a heartbeat whose members
//! subscribe to partitions the share coordinator has no state for yet writes
//! them as initializing and asks for their initialization
//! ([`CoordinatorCore::take_share_state_initializations`], released with the
//! heartbeat's answer once its records are durable).

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use group_assignors::server::{GroupSpec, MemberSpec, MemberTarget, ShareGroupSpec, SubscriptionType};
use group_offsets::{
    ConsumerGroupMetadataValue, ModernGroupRecord, Record, ShareMemberMetadataValue,
    TargetAssignmentMetadataValue,
};
use group_types::{
    ConsumerMemberState, ErrorCode, InitializeShareGroupStateRequest, InitializeStatePartition,
    ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse, ShareStateTopic, TopicId,
};

use super::group::{InitTopic, ShareChange, ShareGroup, ShareMember, ShareState};
use crate::MetadataImage;
use crate::core::modern::assignment::{self, Assignment, Held};
use crate::core::modern::{can_compute_next_target_assignment, metadata_hash};
use crate::core::{CoordinatorCore, GroupKind, PendingWrite, RequestId, Response, TimerKey, TimerOp, Undo};

/// A refusal: the error and its message.
type Refusal = (ErrorCode, Option<String>);

fn refuse(code: ErrorCode, message: String) -> Refusal {
    (code, Some(message))
}

/// `GroupCoordinatorService.throwIfShareGroupHeartbeatRequestIsInvalid`: the
/// checks made before the group's partition is looked for, in Kafka's order.
/// Blank is Java's `String.trim().isEmpty()`.
pub(crate) fn validate_share_heartbeat(r: &ShareGroupHeartbeatRequest) -> Result<(), Refusal> {
    let blank = crate::core::modern::java_blank;
    if blank(r.member_id.as_str()) {
        return Err(refuse(ErrorCode::InvalidRequest, "MemberId can't be empty.".into()));
    }
    if blank(r.group_id.as_str()) {
        return Err(refuse(ErrorCode::InvalidRequest, "GroupId can't be empty.".into()));
    }
    if r.rack_id.as_deref().is_some_and(blank) {
        return Err(refuse(ErrorCode::InvalidRequest, "RackId can't be empty.".into()));
    }
    if r.member_epoch == 0 {
        if r.subscribed_topic_names.as_ref().is_none_or(Vec::is_empty) {
            return Err(refuse(
                ErrorCode::InvalidRequest,
                "SubscribedTopicNames must be set in first request.".into(),
            ));
        }
    } else if r.member_epoch < -1 {
        return Err(refuse(ErrorCode::InvalidRequest, "MemberEpoch is invalid.".into()));
    }
    Ok(())
}

/// What one heartbeat does, before any of it is applied.
struct Outcome {
    records: Vec<ModernGroupRecord>,
    response: ShareGroupHeartbeatResponse,
    timer: TimerOp,
    initialize: Option<InitializeShareGroupStateRequest>,
    /// Whether the group's metadata was hashed again (its refresh is done).
    refreshed: bool,
}

impl CoordinatorCore {
    /// Serves one ShareGroupHeartbeat.
    pub(crate) fn share_group_heartbeat(&mut self, rid: RequestId, req: &ShareGroupHeartbeatRequest) {
        if !self.engine.config.share.enabled {
            let response = ShareGroupHeartbeatResponse::error(ErrorCode::UnsupportedVersion, None);
            self.engine.respond(rid, Response::ShareGroupHeartbeat(response));
            return;
        }
        if let Err((code, message)) = validate_share_heartbeat(req) {
            let response = ShareGroupHeartbeatResponse::error(code, message);
            self.engine.respond(rid, Response::ShareGroupHeartbeat(response));
            return;
        }
        if self.share_keep_alive(rid, req) {
            return;
        }
        let outcome = match req.member_epoch {
            -1 => self.share_leave(req),
            _ => self.share_heartbeat(req),
        };
        match outcome {
            Err((code, message)) => {
                let response = ShareGroupHeartbeatResponse::error(code, message);
                self.engine.respond(rid, Response::ShareGroupHeartbeat(response));
            }
            Ok(outcome) => self.apply_share_outcome(req.group_id.as_str(), Some(rid), outcome),
        }
    }

    /// A settled member's heartbeat that changes nothing, answered in place: one
    /// group lookup, one member lookup, nothing copied or written, its session
    /// deadline moved without a timer (the full path answers the same).
    fn share_keep_alive(&mut self, rid: RequestId, r: &ShareGroupHeartbeatRequest) -> bool {
        if r.member_epoch <= 0 || r.rack_id.is_some() || r.subscribed_topic_names.is_some() {
            return false;
        }
        let session = self.share_session_timeout_ms(r.group_id.as_str());
        let interval = self.share_heartbeat_interval_ms(r.group_id.as_str());
        let deadline = self.engine.now + i64::from(session);
        let version = self.engine.image.version();
        let Some((key, GroupKind::Share(g))) = self.groups.get_key_value(r.group_id.as_str()) else {
            return false;
        };
        let settled_group = !g.refresh_needed
            && g.modern.group_epoch == g.modern.assignment_epoch
            && g.initialized_at(version)
            && !g.initialized_assignment_pending(initialized_assignment_pending);
        if !settled_group {
            return false;
        }
        let key = key.clone();
        let assignment_epoch = g.modern.assignment_epoch;
        let Some(GroupKind::Share(g)) = self.groups.get_mut(&*key) else { return false };
        let Some(m) = g.modern.members.get_mut(r.member_id.as_str()) else { return false };
        let settled = m.member_epoch == r.member_epoch
            && m.is_stable_at(assignment_epoch)
            && m.client_id == r.client_id
            && m.client_host == r.client_host;
        if !settled {
            return false;
        }
        let queued = m.session_deadline.is_some_and(|d| d <= deadline);
        m.session_deadline = Some(deadline);
        if !queued {
            self.engine.arm(TimerKey::ShareSession(key, m.id.clone()), deadline);
        }
        let answer = ShareGroupHeartbeatResponse {
            member_id: Some(r.member_id.clone()),
            member_epoch: m.member_epoch,
            heartbeat_interval_ms: interval,
            ..ShareGroupHeartbeatResponse::default()
        };
        self.engine.respond(rid, Response::ShareGroupHeartbeat(answer));
        true
    }

    /// The share group `id`, `None` when there is none; a group of another kind
    /// is `not_share`'s error (`getOrMaybeCreateShareGroup`).
    fn share_group_or(
        &self,
        id: &str,
        missing: impl FnOnce() -> Refusal,
    ) -> Result<Option<&ShareGroup>, Refusal> {
        match self.groups.get(id) {
            Some(GroupKind::Share(g)) => Ok(Some(g)),
            Some(_) => Err(refuse(ErrorCode::GroupIdNotFound, format!("Group {id} is not a share group."))),
            None => Err(missing()),
        }
    }

    /// `shareGroupLeave`: the member's three keys go and the group epoch is bumped.
    fn share_leave(&self, req: &ShareGroupHeartbeatRequest) -> Result<Outcome, Refusal> {
        let gid = req.group_id.as_str();
        let g = self
            .share_group_or(gid, || refuse(ErrorCode::GroupIdNotFound, format!("Group {gid} not found.")))?
            .expect("share_group_or answers an existing group or an error");
        let member_id = req.member_id.as_str();
        if !g.modern.members.contains_key(member_id) {
            return Err(refuse(
                ErrorCode::UnknownMemberId,
                format!("Member {member_id} is not a member of group {gid}."),
            ));
        }
        let records = self.fence_records(gid, g, &Arc::from(member_id));
        let response = ShareGroupHeartbeatResponse {
            member_id: Some(req.member_id.clone()),
            member_epoch: -1,
            ..ShareGroupHeartbeatResponse::default()
        };
        let timer = TimerOp::Cancel { key: TimerKey::ShareSession(Arc::from(gid), Arc::from(member_id)) };
        Ok(Outcome { records, response, timer, initialize: None, refreshed: false })
    }

    /// `shareGroupFenceMember`'s records: the member's tombstones, then the
    /// group epoch bumped with the hash of what the others subscribe to.
    fn fence_records(&self, gid: &str, g: &ShareGroup, member: &Arc<str>) -> Vec<ModernGroupRecord> {
        let group_id: Arc<str> = Arc::from(gid);
        let names = g.subscribed_names(Some(member), None);
        let hash = metadata_hash(&names.keys().map(String::as_str).collect(), &self.engine.image);
        vec![
            ModernGroupRecord::ShareCurrentMemberAssignment {
                group_id: group_id.clone(),
                member_id: member.clone(),
                value: None,
            },
            ModernGroupRecord::ShareTargetAssignmentMember {
                group_id: group_id.clone(),
                member_id: member.clone(),
                value: None,
            },
            ModernGroupRecord::ShareMemberMetadata {
                group_id: group_id.clone(),
                member_id: member.clone(),
                value: None,
            },
            ModernGroupRecord::ShareGroupMetadata {
                group_id,
                value: Some(ConsumerGroupMetadataValue {
                    epoch: g.modern.group_epoch + 1,
                    metadata_hash: hash,
                }),
            },
        ]
    }

    /// A join or a heartbeat (`shareGroupHeartbeat`, steps as Kafka numbers them).
    fn share_heartbeat(&self, req: &ShareGroupHeartbeatRequest) -> Result<Outcome, Refusal> {
        let gid = req.group_id.as_str();
        let epoch = req.member_epoch;
        let empty;
        // One lookup finds the group and the key it is held under (no id copied).
        let (group_id, g) = match self.groups.get_key_value(gid) {
            Some((key, GroupKind::Share(g))) => (key.clone(), &**g),
            Some(_) => {
                return Err(refuse(ErrorCode::GroupIdNotFound, format!("Group {gid} is not a share group.")));
            }
            None if epoch == 0 => {
                empty = ShareGroup::new();
                (Arc::from(gid), &empty)
            }
            None => return Err(refuse(ErrorCode::GroupIdNotFound, format!("Share group {gid} not found."))),
        };
        let config = &self.engine.config.share;
        let known = g.modern.members.get(req.member_id.as_str());
        if g.modern.members.len() >= config.max_size as usize && known.is_none() {
            return Err(refuse(
                ErrorCode::GroupMaxSizeReached,
                format!("The share group has reached its maximum capacity of {} members.", config.max_size),
            ));
        }
        let fresh;
        let member = match known {
            Some(m) => m,
            None if epoch == 0 => {
                fresh = ShareMember::new(Arc::from(req.member_id.as_str()));
                &fresh
            }
            None => {
                return Err(refuse(
                    ErrorCode::UnknownMemberId,
                    format!("Member {} is not a member of group {gid}.", req.member_id),
                ));
            }
        };
        check_epoch(member, epoch)?;
        let member_id = member.id.clone();

        // 1. The member as this heartbeat leaves it: copied only if something changes.
        let mut updated = Cow::Borrowed(member);
        if let Some(rack) = req.rack_id.as_deref().filter(|r| member.rack_id.as_deref() != Some(*r)) {
            updated.to_mut().rack_id = Some(rack.to_owned());
        }
        if let Some(topics) = &req.subscribed_topic_names {
            let mut topics = topics.clone();
            topics.sort_unstable();
            topics.dedup();
            if topics != member.subscribed_topic_names {
                updated.to_mut().subscribed_topic_names = topics;
            }
        }
        if member.client_id != req.client_id {
            updated.to_mut().client_id.clone_from(&req.client_id);
        }
        if member.client_host != req.client_host {
            updated.to_mut().client_host.clone_from(&req.client_host);
        }
        let mut records = Vec::new();
        let mut bump = false;
        if known.is_none() || matches!(updated, Cow::Owned(_)) {
            records.push(ModernGroupRecord::ShareMemberMetadata {
                group_id: group_id.clone(),
                member_id: member_id.clone(),
                value: Some(Box::new(ShareMemberMetadataValue {
                    rack_id: updated.rack_id.clone(),
                    client_id: updated.client_id.clone(),
                    client_host: updated.client_host.clone(),
                    subscribed_topic_names: updated.subscribed_topic_names.clone(),
                })),
            });
            bump = updated.subscribed_topic_names != member.subscribed_topic_names;
        }
        // Unassigned initialized partitions ask for a new target only when none is
        // pending already: a delayed one would otherwise bump the epoch at every
        // heartbeat (KAFKA-20291's fix). Kafka 4.3 applies it whatever the
        // interval; without batching we keep 4.2.1's extra bump after a leave,
        // which the share oracle records (docs/KAFKA-DIFFERENCES.md, K10).
        let interval = self.share_assignment_interval_ms(gid);
        if interval == 0 || g.modern.assignment_epoch >= g.modern.group_epoch {
            bump = bump || g.initialized_assignment_pending(initialized_assignment_pending);
        }
        let image = &self.engine.image;
        let mut group_epoch = g.modern.group_epoch;
        let mut names = Cow::Borrowed(g.subscribed());
        let mut subscription_type = subscription_type(&names, g.modern.members.len());
        let refreshed = bump || g.refresh_needed;
        if refreshed {
            names = Cow::Owned(g.subscribed_names(Some(&member_id), Some(&updated)));
            let hash = metadata_hash(&names.keys().map(String::as_str).collect(), image);
            let members = g.modern.members.len() + usize::from(known.is_none());
            subscription_type = self::subscription_type(&names, members);
            bump = bump || hash != g.modern.metadata_hash;
            if bump {
                group_epoch += 1;
                records.push(ModernGroupRecord::ShareGroupMetadata {
                    group_id: group_id.clone(),
                    value: Some(ConsumerGroupMetadataValue { epoch: group_epoch, metadata_hash: hash }),
                });
            }
        }

        // 2. The target assignment, when the group epoch moved past it and the
        // last one is not too recent (KIP-1263): else the last one, at its epoch.
        let can_compute =
            can_compute_next_target_assignment(g.modern.assignment_timestamp_ms, interval, self.engine.now);
        let (target_epoch, target) = if group_epoch > g.modern.assignment_epoch && can_compute {
            let target = self.share_target_assignment(
                g,
                &group_id,
                group_epoch,
                &updated,
                subscription_type,
                &mut records,
            )?;
            (group_epoch, Some(target))
        } else {
            (g.modern.assignment_epoch, None)
        };

        // 3. The member moves to its target at once (`ShareGroupAssignmentBuilder`).
        if bump || !updated.is_stable_at(target_epoch) {
            // A settled member's keep-alive never reads its target.
            let target: &Assignment = target.as_ref().unwrap_or_else(|| g.modern.target(&member_id));
            let subscribed = topic_ids(&updated.subscribed_topic_names, image);
            let filtered = filter(target, &subscribed);
            if target_epoch != updated.member_epoch {
                let u = updated.to_mut();
                u.state = ConsumerMemberState::Stable;
                u.assigned = Held::from(filtered);
                u.previous_member_epoch = u.member_epoch;
                u.member_epoch = target_epoch;
            } else if bump {
                updated.to_mut().assigned = Held::from(filtered);
            }
            // The metadata above does not touch these: comparing with the member
            // as it was tells whether its assignment record changes.
            if updated.member_epoch != member.member_epoch
                || updated.previous_member_epoch != member.previous_member_epoch
                || updated.state != member.state
                || *updated.assigned != *member.assigned
            {
                records.push(ModernGroupRecord::ShareCurrentMemberAssignment {
                    group_id: group_id.clone(),
                    member_id: member_id.clone(),
                    value: Some(group_offsets::ShareMemberAssignmentValue {
                        member_epoch: updated.member_epoch,
                        previous_member_epoch: updated.previous_member_epoch,
                        state: updated.state,
                        assigned: assignment::to_wire(&updated.assigned),
                    }),
                });
            }
        }

        let session = self.share_session_timeout_ms(gid);
        let timer = TimerOp::Arm {
            key: TimerKey::ShareSession(group_id.clone(), member_id.clone()),
            deadline_ms: self.engine.now + i64::from(session),
        };
        let full = req.subscribed_topic_names.is_some();
        let changed = *updated.assigned != *member.assigned;
        let response = ShareGroupHeartbeatResponse {
            member_id: Some(req.member_id.clone()),
            member_epoch: updated.member_epoch,
            heartbeat_interval_ms: self.share_heartbeat_interval_ms(gid),
            assignment: (epoch == 0 || full || changed).then(|| assignment::to_wire(&updated.assigned)),
            ..ShareGroupHeartbeatResponse::default()
        };
        let initialize = self.maybe_initialize(g, &group_id, group_epoch, &names, &mut records);
        Ok(Outcome { records, response, timer, initialize, refreshed })
    }

    /// `updateTargetAssignment` for a share group: the share assignor over
    /// every member (`updated` in its new form), only initialized partitions
    /// assignable; writes the targets that changed and the new assignment epoch.
    fn share_target_assignment(
        &self,
        g: &ShareGroup,
        group_id: &Arc<str>,
        group_epoch: i32,
        updated: &ShareMember,
        subscription_type: SubscriptionType,
        records: &mut Vec<ModernGroupRecord>,
    ) -> Result<Assignment, Refusal> {
        let image = &self.engine.image;
        let name = &self.engine.config.share.assignor;
        let Some(assignor) = group_assignors::server::share_assignor(name) else {
            return Err((ErrorCode::UnknownServerError, None));
        };
        let mut members: Vec<&ShareMember> =
            g.modern.members.values().filter(|m| m.id != updated.id).chain([updated]).collect();
        members.sort_by(|a, b| a.id.cmp(&b.id));
        // Members with the same subscription share one resolved list: it is resolved
        // once, and the assignor recognises equal subscriptions by the list's address.
        let mut lists: Vec<Vec<TopicId>> = Vec::new();
        let mut known: BTreeMap<&[String], usize> = BTreeMap::new();
        let at: Vec<usize> = members
            .iter()
            .map(|m| {
                *known.entry(&m.subscribed_topic_names).or_insert_with(|| {
                    lists.push(topic_ids(&m.subscribed_topic_names, image));
                    lists.len() - 1
                })
            })
            .collect();
        let subscribed: Vec<&Vec<TopicId>> = at.iter().map(|&i| &lists[i]).collect();
        let empty = MemberTarget::default();
        // Members are in id order, as targets are kept: one walk finds them all.
        let currents: Vec<Option<&Held>> =
            g.modern.targets.get_ascending(members.iter().map(|m| &*m.id)).collect();
        let spec = GroupSpec {
            members: members
                .iter()
                .zip(subscribed)
                .zip(&currents)
                .map(|((m, topics), current)| MemberSpec {
                    member_id: &m.id,
                    instance_id: None,
                    rack_id: m.rack_id.as_deref(),
                    subscribed_topics: topics,
                    current: current.map_or(&empty, |t| &**t),
                })
                .collect(),
            subscription_type,
        };
        let state = g.share_state.as_deref();
        let assignable = |t: TopicId, p: i32| state.is_some_and(|s| s.is_initialized(t, p));
        let result = assignor.assign(&ShareGroupSpec { group: &spec, assignable: &assignable }, &**image);
        let targets = match result {
            Ok(targets) if targets.members.len() == members.len() => targets,
            Ok(_) | Err(_) => {
                if let Err(error) = &result {
                    tracing::warn!(target: "group_coordinator", group = %group_id, %error, "share assignor failed");
                }
                return Err((ErrorCode::UnknownServerError, None));
            }
        };
        let mut mine = Assignment::default();
        for ((m, target), current) in members.iter().zip(targets.members).zip(currents) {
            let target = assignment::from_sorted(target.topics);
            if current.map(|t| &**t) != Some(&target) {
                records.push(ModernGroupRecord::ShareTargetAssignmentMember {
                    group_id: group_id.clone(),
                    member_id: m.id.clone(),
                    value: Some(assignment::to_wire(&target)),
                });
            }
            if m.id == updated.id {
                mine = target;
            }
        }
        records.push(ModernGroupRecord::ShareTargetAssignmentMetadata {
            group_id: group_id.clone(),
            // KIP-1263: when this target was computed, which the next waits on.
            value: Some(TargetAssignmentMetadataValue::new(group_epoch, self.engine.now)),
        });
        Ok(mine)
    }

    /// `maybeCreateInitializeShareGroupStateRequest`: the subscribed partitions
    /// with no share state yet (and initializing ones asked too long ago) are
    /// written as initializing, and their initialization is asked for.
    fn maybe_initialize(
        &self,
        g: &ShareGroup,
        group_id: &Arc<str>,
        group_epoch: i32,
        names: &BTreeMap<String, usize>,
        records: &mut Vec<ModernGroupRecord>,
    ) -> Option<InitializeShareGroupStateRequest> {
        let image = &self.engine.image;
        if names.is_empty() || image.is_empty() {
            return None;
        }
        // The group's own subscriptions, already found wholly initialized at this image.
        let own = std::ptr::eq(names, g.subscribed());
        if own && g.initialized_at(image.version()) {
            return None;
        }
        let mut whole = true;
        let now = self.engine.now;
        let retry = self.engine.config.share.initialize_retry_interval_ms;
        let state = g.share_state.as_deref();
        let mut changes: BTreeMap<TopicId, InitTopic> = BTreeMap::new();
        for name in names.keys() {
            let Some(topic) = image.topic(name) else { continue };
            // Every partition initialized: the common case, decided without a copy.
            if state
                .and_then(|s| s.initialized.get(&topic.id))
                .is_some_and(|t| t.partitions.len() >= topic.partitions as usize)
            {
                continue;
            }
            whole = false;
            let mut already: BTreeSet<i32> = BTreeSet::new();
            if let Some(s) = state {
                if let Some(t) = s.initialized.get(&topic.id) {
                    already.extend(&t.partitions);
                }
                if let Some(t) = s.initializing.get(&topic.id).filter(|t| now - t.timestamp_ms < retry) {
                    already.extend(&t.partitions);
                }
            }
            if already.len() < topic.partitions as usize {
                let partitions = (0..topic.partitions as i32).filter(|p| !already.contains(p)).collect();
                changes.insert(topic.id, InitTopic { name: name.clone(), partitions, timestamp_ms: now });
            }
        }
        if changes.is_empty() {
            if own && whole {
                g.set_initialized_at(image.version());
            }
            return None;
        }
        let next = match state {
            None => ShareState { initializing: changes.clone(), ..ShareState::default() },
            Some(s) => {
                let mut next = s.clone();
                for (id, t) in &changes {
                    let entry = next.initializing.entry(*id).or_insert_with(|| t.clone());
                    entry.partitions.extend(&t.partitions);
                    entry.name.clone_from(&t.name);
                    entry.timestamp_ms = t.timestamp_ms;
                    next.deleting.remove(id);
                }
                next
            }
        };
        records.push(ModernGroupRecord::ShareStatePartitionMetadata {
            group_id: group_id.clone(),
            value: Some(Box::new(next.value())),
        });
        let topics = changes
            .iter()
            .map(|(id, t)| {
                ShareStateTopic::new(
                    *id,
                    t.partitions.iter().map(|&partition| InitializeStatePartition {
                        partition,
                        state_epoch: group_epoch,
                        start_offset: -1,
                    }),
                )
            })
            .collect();
        Some(InitializeShareGroupStateRequest {
            group_id: group_id.as_ref().into(),
            topics,
            ..Default::default()
        })
    }

    /// Applies a heartbeat's (or a deadline's) outcome: its records replayed
    /// into the group, logged for undo, written; its answer released when they
    /// are durable.
    fn apply_share_outcome(&mut self, gid: &str, rid: Option<RequestId>, outcome: Outcome) {
        let Outcome { records, response, timer, initialize, refreshed } = outcome;
        let armed = match &timer {
            TimerOp::Arm { key: TimerKey::ShareSession(_, member), deadline_ms } => {
                Some((member.clone(), *deadline_ms))
            }
            _ => None,
        };
        self.engine.fx.timers.push(timer);
        let answer = rid.map(|rid| (rid, Response::ShareGroupHeartbeat(response)));
        let now = self.engine.now;
        if records.is_empty() {
            if let Some(g) = self.groups.get_mut(gid).and_then(GroupKind::share_mut) {
                if refreshed {
                    g.refresh_needed = false;
                }
                if let Some((member, deadline)) = &armed
                    && let Some(m) = g.modern.members.get_mut(member)
                {
                    m.session_deadline = Some(*deadline);
                }
            }
            if let Some((rid, response)) = answer {
                self.engine.respond(rid, response);
            }
            return;
        }
        let group_id: Arc<str> = match self.groups.get_key_value(gid) {
            Some((key, _)) => key.clone(),
            None => Arc::from(gid),
        };
        match self.groups.get_mut(gid).and_then(GroupKind::share_mut) {
            Some(g) => {
                let mut changes = vec![ShareChange::Refresh(g.refresh_needed)];
                g.refresh_needed &= !refreshed;
                for r in &records {
                    g.replay(r, now, Some(&mut changes));
                }
                if let Some((member, deadline)) = &armed
                    && let Some(m) = g.modern.members.get_mut(member)
                {
                    m.session_deadline = Some(*deadline);
                }
                self.engine.timeline.push(Undo::Share { group: group_id.clone(), changes });
            }
            None => {
                let mut g = ShareGroup::new();
                g.refresh_needed = false;
                for r in &records {
                    g.replay(r, now, None);
                }
                if let Some((member, deadline)) = &armed
                    && let Some(m) = g.modern.members.get_mut(member)
                {
                    m.session_deadline = Some(*deadline);
                }
                self.put_group(group_id.clone(), GroupKind::Share(Box::new(g)));
            }
        }
        let pending = PendingWrite::ShareHeartbeat {
            answer: answer.map(|(request, response)| (request, Box::new(response))),
            initialize: initialize.map(Box::new),
        };
        self.write_group_records(&group_id, records.into_iter().map(Record::Modern).collect(), pending);
    }

    /// A share member's session deadline passed: it is fenced (Kafka's
    /// `shareGroupFenceMemberOperation`, "the member session expired"). A
    /// deadline whose group or member is gone does nothing.
    pub(crate) fn fire_share_session(&mut self, group: &str, member: &Arc<str>) {
        let Some(g) = self.groups.get(group).and_then(GroupKind::share) else { return };
        let Some(m) = g.modern.members.get(member) else { return };
        // A keep-alive moved the deadline without re-arming: queued again at it.
        if let Some(later) = m.session_deadline.filter(|&d| d > self.engine.now) {
            self.engine.arm(TimerKey::ShareSession(Arc::from(group), member.clone()), later);
            return;
        }
        let records = self.fence_records(group, g, member);
        tracing::info!(target: "group_coordinator", group, member = %member, "share member fenced: the member session expired");
        let timer = TimerOp::Cancel { key: TimerKey::ShareSession(Arc::from(group), member.clone()) };
        let outcome = Outcome {
            records,
            response: ShareGroupHeartbeatResponse::default(),
            timer,
            initialize: None,
            refreshed: false,
        };
        self.apply_share_outcome(group, None, outcome);
    }

    fn share_session_timeout_ms(&self, group: &str) -> i32 {
        let broker = self.engine.config.share.session_timeout_ms;
        let configs = &self.engine.group_configs;
        // Hashing the id costs more than the rest of a keep-alive: skipped when no group has overrides.
        if configs.is_empty() {
            return broker;
        }
        configs.get(group).and_then(|o| o.share_session_timeout_ms).unwrap_or(broker)
    }

    /// `shareGroupAssignmentIntervalMs`: the least time between two target
    /// assignments of share group `group`, its own config else the node's.
    fn share_assignment_interval_ms(&self, group: &str) -> i32 {
        let node = self.engine.config.group_config_bounds.share_assignment_interval_ms.default;
        let configs = &self.engine.group_configs;
        if configs.is_empty() {
            return node;
        }
        configs.get(group).and_then(|o| o.share_assignment_interval_ms).unwrap_or(node)
    }

    fn share_heartbeat_interval_ms(&self, group: &str) -> i32 {
        let broker = self.engine.config.share.heartbeat_interval_ms;
        let configs = &self.engine.group_configs;
        if configs.is_empty() {
            return broker;
        }
        configs.get(group).and_then(|o| o.share_heartbeat_interval_ms).unwrap_or(broker)
    }
}

/// `throwIfShareGroupMemberEpochIsInvalid`: epoch 0 rejoins; the member's
/// previous epoch is accepted (its answer may have been lost); any other is fenced.
fn check_epoch(member: &ShareMember, epoch: i32) -> Result<(), Refusal> {
    if epoch == 0 || epoch == member.member_epoch {
        return Ok(());
    }
    if epoch > member.member_epoch {
        return Err(refuse(
            ErrorCode::FencedMemberEpoch,
            format!(
                "The share group member has a greater member epoch ({epoch}) than the one known by the group \
                 coordinator ({}). The member must abandon all its partitions and rejoin.",
                member.member_epoch
            ),
        ));
    }
    if epoch != member.previous_member_epoch {
        return Err(refuse(
            ErrorCode::FencedMemberEpoch,
            format!(
                "The share group member has a smaller member epoch ({epoch}) than the one known by the group \
                 coordinator ({}), and it does not match the previous member epoch ({}). The member must \
                 abandon all its partitions and rejoin.",
                member.member_epoch, member.previous_member_epoch
            ),
        ));
    }
    Ok(())
}

/// `initializedAssignmentPending`: members subscribe to a topic whose
/// initialized partitions are not exactly what the targets hold.
fn initialized_assignment_pending(g: &ShareGroup) -> bool {
    if g.modern.members.is_empty() {
        return false;
    }
    let Some(state) = g.share_state.as_deref().filter(|s| !s.initialized.is_empty()) else { return false };
    let names = g.subscribed();
    if names.is_empty() {
        return false;
    }
    let mut assigned: BTreeMap<TopicId, BTreeSet<i32>> = BTreeMap::new();
    for id in g.modern.targets.keys() {
        for (t, p) in assignment::iter(g.modern.target(id)) {
            assigned.entry(t).or_default().insert(p);
        }
    }
    state
        .initialized
        .iter()
        .any(|(id, t)| names.contains_key(&t.name) && assigned.get(id) != Some(&t.partitions))
}

/// `ModernGroup.subscriptionType`.
fn subscription_type(names: &BTreeMap<String, usize>, members: usize) -> SubscriptionType {
    if names.values().all(|&n| n == members) {
        SubscriptionType::Homogeneous
    } else {
        SubscriptionType::Heterogeneous
    }
}

/// The ids of the existing topics among `names`, ascending.
fn topic_ids(names: &[String], image: &MetadataImage) -> Vec<TopicId> {
    let mut ids: Vec<TopicId> = names.iter().filter_map(|n| image.topic(n).map(|t| t.id)).collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// `target` without the topics not in `subscribed` (`filterAssignedPartitions`).
fn filter(target: &Assignment, subscribed: &[TopicId]) -> Assignment {
    Assignment { topics: target.topics.iter().filter(|(t, _)| subscribed.contains(t)).cloned().collect() }
}
