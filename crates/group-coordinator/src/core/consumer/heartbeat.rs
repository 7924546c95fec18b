//! ConsumerGroupHeartbeat (`GroupMetadataManager.consumerGroupHeartbeat`, §2.4)
//! and leaving (`consumerGroupLeave`, §2.5).

use std::sync::Arc;

use group_offsets::{ConsumerGroupMetadataValue, ConsumerMemberMetadataValue, ModernGroupRecord, Record};
use group_types::{
    ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse, ConsumerMemberState, ErrorCode,
    JOIN_GROUP_MEMBER_EPOCH, LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH, MemberId,
};

use super::epochs;
use super::group::{ConsumerGroup, ConsumerMember};
use super::meta::MemberMeta;
use super::reconcile::{self, Inputs, Reconciled};
use super::regex::RegexChange;
use super::{Origin, Work, topics, validate};
use crate::core::modern::assignment::{self, Assignment};
use crate::core::{CoordinatorCore, GroupKind, RequestId, Response, TimerKey};

type Refusal = (ErrorCode, Option<String>);

fn refuse(code: ErrorCode, message: impl Into<String>) -> Refusal {
    (code, Some(message.into()))
}

impl CoordinatorCore {
    /// ConsumerGroupHeartbeat: validation (§2.2), then a leave or a regular heartbeat.
    pub(crate) fn consumer_group_heartbeat(
        &mut self,
        rid: RequestId,
        r: &ConsumerGroupHeartbeatRequest,
        visible: &dyn Fn(&str) -> bool,
    ) {
        let answer = |code, message| {
            Response::ConsumerGroupHeartbeat(ConsumerGroupHeartbeatResponse::error(code, message))
        };
        if !self.engine.config.consumer.enabled {
            self.engine.respond(rid, answer(ErrorCode::UnsupportedVersion, None));
            return;
        }
        if let Err((code, message)) = validate::validate_heartbeat(r, &self.engine.config.consumer.assignors)
        {
            self.engine.respond(rid, answer(code, Some(message)));
            return;
        }
        let result = if r.member_epoch == LEAVE_GROUP_MEMBER_EPOCH
            || r.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH
        {
            self.consumer_leave(rid, r)
        } else {
            self.consumer_regular_heartbeat(rid, r, visible)
        };
        if let Err((code, message)) = result {
            self.engine.respond(rid, answer(code, message));
        }
    }

    /// Step 1: the consumer group the heartbeat works on (`getOrMaybeCreateConsumerGroup`).
    fn heartbeat_group(&mut self, group_id: &str, epoch: i32) -> Result<Work, Refusal> {
        if let Some(work) = self.take_consumer(group_id) {
            return Ok(work);
        }
        match self.groups.get(group_id) {
            None if epoch == JOIN_GROUP_MEMBER_EPOCH => Ok(self.new_work(group_id, Origin::New)),
            None => Err(refuse(ErrorCode::GroupIdNotFound, format!("Consumer group {group_id} not found."))),
            Some(g) if g.share().is_some() => {
                Err(refuse(ErrorCode::GroupIdNotFound, format!("Group {group_id} is not a consumer group.")))
            }
            Some(g) if epoch == JOIN_GROUP_MEMBER_EPOCH && !g.has_members() => {
                // Offline migration: an empty classic group is replaced, its
                // offsets kept (§8.1), whatever the migration policy says.
                let mut work = self.new_work(group_id, Origin::ReplacesClassic);
                work.prefix.push(Record::GroupTombstone { group_id: work.group_id.clone() });
                Ok(work)
            }
            Some(_) if epoch == JOIN_GROUP_MEMBER_EPOCH => self.upgrade_classic_group(group_id),
            Some(_) => {
                Err(refuse(ErrorCode::GroupIdNotFound, format!("Group {group_id} is not a consumer group.")))
            }
        }
    }

    /// The session timeout of members of `group` (its override, else the broker's).
    pub(crate) fn consumer_session_timeout(&self, group: &str) -> i32 {
        self.consumer_timeouts(group).0
    }

    /// The heartbeat interval of members of `group`.
    pub(crate) fn consumer_heartbeat_interval(&self, group: &str) -> i32 {
        self.consumer_timeouts(group).1
    }

    /// The session timeout and heartbeat interval of members of `group`, with
    /// one look at the overrides (none, mostly).
    fn consumer_timeouts(&self, group: &str) -> (i32, i32) {
        let consumer = &self.engine.config.consumer;
        let overrides = match self.engine.group_configs.is_empty() {
            true => None,
            false => self.engine.group_configs.get(group),
        };
        (
            overrides.and_then(|c| c.session_timeout_ms).unwrap_or(consumer.session_timeout_ms),
            overrides.and_then(|c| c.heartbeat_interval_ms).unwrap_or(consumer.heartbeat_interval_ms),
        )
    }

    /// The common heartbeat, answered in place: a member Stable at the group's
    /// epoch that sends nothing new. Steps 2-14 would write nothing and change
    /// nothing for it but its session, so the group is looked up once, the
    /// member once, and nothing is taken out, copied or logged. Anything else
    /// (a field sent, a client id changed, a refresh or a regex pending, a group
    /// epoch ahead) takes the full path: false.
    ///
    /// The session timer is armed lazily, as a classic member's is: while one is
    /// queued at or before the new deadline, only the deadline moves, and
    /// [`fire_consumer_session`](Self::fire_consumer_session) queues it again
    /// when it finds the deadline later.
    fn consumer_keep_alive(&mut self, rid: RequestId, r: &ConsumerGroupHeartbeatRequest) -> bool {
        let sends_nothing = r.member_epoch > 0
            && r.instance_id.is_none()
            && r.rack_id.is_none()
            && r.rebalance_timeout_ms == -1
            && r.subscribed_topic_names.is_none()
            && r.subscribed_topic_regex.is_none()
            && r.server_assignor.is_none();
        if !sends_nothing {
            return false;
        }
        let (session, interval) = self.consumer_timeouts(&r.group_id);
        let deadline = self.engine.now + i64::from(session);
        let Some(GroupKind::Consumer(cg)) = self.groups.get_mut(r.group_id.as_str()) else { return false };
        if cg.refresh_needed
            || cg.regex_subscribers > 0
            || cg.regex_refresh_due
            || cg.modern.group_epoch != cg.modern.assignment_epoch
        {
            return false;
        }
        let assignment_epoch = cg.modern.assignment_epoch;
        let Some(m) = cg.modern.members.get_mut(r.member_id.as_str()) else { return false };
        let settled = m.member_epoch == r.member_epoch
            && m.member_epoch == assignment_epoch
            && m.state == ConsumerMemberState::Stable
            && !m.is_classic()
            && *m.meta.client_id == *r.client_id
            && *m.meta.client_host == *r.client_host;
        if !settled {
            return false;
        }
        let queued = m.session_deadline.is_some_and(|d| d <= deadline);
        m.session_deadline = Some(deadline);
        if !queued {
            let key = TimerKey::ConsumerSession(cg.id.clone(), m.id.clone());
            self.engine.arm(key, deadline);
        }
        let answer = ConsumerGroupHeartbeatResponse {
            error_code: ErrorCode::None,
            error_message: None,
            member_id: Some(r.member_id.clone()),
            member_epoch: m.member_epoch,
            heartbeat_interval_ms: interval,
            assignment: None,
        };
        self.engine.respond(rid, Response::ConsumerGroupHeartbeat(answer));
        true
    }

    fn consumer_regular_heartbeat(
        &mut self,
        rid: RequestId,
        r: &ConsumerGroupHeartbeatRequest,
        visible: &dyn Fn(&str) -> bool,
    ) -> Result<(), Refusal> {
        if self.consumer_keep_alive(rid, r) {
            return Ok(());
        }
        let mut work = self.heartbeat_group(&r.group_id, r.member_epoch)?;
        match self.regular_heartbeat_in(&mut work, r) {
            Ok(response) => {
                let group_id = work.group_id.clone();
                self.commit_work(work, Some((rid, Response::ConsumerGroupHeartbeat(response))));
                self.maybe_resolve_regexes(&group_id, visible);
                Ok(())
            }
            Err(refusal) => {
                let (group_id, task) = (work.group_id.clone(), work.regex_task.take());
                self.abandon(work);
                if let Some(sources) = task {
                    self.resolve_regexes_of_failed_request(&group_id, sources, visible);
                }
                Err(refusal)
            }
        }
    }

    /// Steps 2 to 14 on `work`'s group.
    fn regular_heartbeat_in(
        &mut self,
        work: &mut Work,
        r: &ConsumerGroupHeartbeatRequest,
    ) -> Result<ConsumerGroupHeartbeatResponse, Refusal> {
        let group_id = work.group_id.clone();
        let now = self.engine.now;
        let max = self.engine.config.consumer.max_size;
        // Step 2: size, before a static replacement is considered.
        let members = work.cg.modern.members.len();
        if members >= usize::try_from(max).unwrap_or(usize::MAX)
            && (r.member_id.is_empty() || !work.cg.modern.members.contains_key(r.member_id.as_str()))
        {
            return Err(refuse(
                ErrorCode::GroupMaxSizeReached,
                format!("The consumer group has reached its maximum capacity of {max} members."),
            ));
        }
        // Step 3: v0 members may let the coordinator choose their id.
        let member_id: Arc<str> = if r.member_id.is_empty() {
            Arc::from(self.engine.ids.generate_uuid())
        } else {
            // A known member's id is shared from the group; only a new member's
            // is copied out of the request frame, which state must not pin.
            work.cg
                .modern
                .members
                .get(r.member_id.as_str())
                .map_or_else(|| Arc::from(r.member_id.as_str()), |m| m.id.clone())
        };
        // Step 4: the member, new, existing or replacing a static one.
        let (stored, replaced) = self.heartbeat_member(work, r, &member_id)?;
        let owned = r.topic_partitions.as_deref().map(assignment::from_wire);
        let is_new = replaced.is_none() && !work.cg.modern.members.contains_key(&member_id);
        if replaced.is_none() && !is_new {
            check_epoch(&stored, r.member_epoch, owned.as_ref())?;
        }
        // Step 6: the updated member.
        let mut updated = stored.clone();
        updated.id = member_id.clone();
        let mut meta = stored.meta.to_value();
        // Compared first: a member that resends its instance id costs no copy.
        if let Some(v) = &r.instance_id
            && meta.instance_id.as_deref() != Some(v.as_str())
        {
            meta.instance_id = Some(v.as_str().to_owned());
        }
        if let Some(v) = &r.rack_id {
            meta.rack_id = Some(v.clone());
        }
        if r.rebalance_timeout_ms != -1 {
            meta.rebalance_timeout_ms = r.rebalance_timeout_ms;
        }
        if let Some(v) = &r.server_assignor {
            meta.server_assignor = Some(v.clone());
        }
        if let Some(names) = &r.subscribed_topic_names {
            let mut names = names.clone();
            names.sort();
            names.dedup();
            meta.subscribed_topic_names = names;
        }
        if let Some(regex) = &r.subscribed_topic_regex {
            meta.subscribed_topic_regex = Some(regex.clone()).filter(|r| !r.is_empty());
        }
        meta.client_id.clone_from(&r.client_id);
        meta.client_host.clone_from(&r.client_host);
        meta.classic = None;
        updated.meta = MemberMeta::new(&meta, &stored.meta, &work.cg.last_meta);
        let before_assigned = stored.assigned.clone();
        self.apply_member_update(work, &stored, &updated, is_new, replaced.as_deref(), owned.as_ref())?;
        // Step 13: the session.
        let deadline = now + i64::from(self.consumer_session_timeout(&group_id));
        if let Some(m) = work.member_mut(&member_id) {
            m.session_deadline = Some(deadline);
        }
        work.arm(TimerKey::ConsumerSession(group_id.clone(), member_id.clone()), deadline);
        // Step 14: the answer.
        let member = work.cg.modern.members.get(&member_id).cloned().unwrap_or(updated);
        let full = r.rebalance_timeout_ms != -1
            && (r.subscribed_topic_names.is_some() || r.subscribed_topic_regex.is_some())
            && r.topic_partitions.is_some();
        let send_assignment =
            r.member_epoch == JOIN_GROUP_MEMBER_EPOCH || full || member.assigned != before_assigned;
        Ok(ConsumerGroupHeartbeatResponse {
            error_code: ErrorCode::None,
            error_message: None,
            // The request's id is the member's (step 3): shared, not copied; only
            // an id the coordinator chose is.
            member_id: Some(if r.member_id.is_empty() {
                MemberId::from(&*member_id)
            } else {
                r.member_id.clone()
            }),
            member_epoch: member.member_epoch,
            heartbeat_interval_ms: self.consumer_heartbeat_interval(&group_id),
            assignment: send_assignment.then(|| assignment::to_wire(&member.assigned)),
        })
    }

    /// Steps 7 to 12 for `updated`, the member `stored` as a heartbeat (or a
    /// classic member's JoinGroup) changed it: its metadata record, regexes, the
    /// group epoch, the target assignment and its reconciliation.
    pub(crate) fn apply_member_update(
        &mut self,
        work: &mut Work,
        stored: &ConsumerMember,
        updated: &ConsumerMember,
        is_new: bool,
        replaced: Option<&str>,
        owned: Option<&Assignment>,
    ) -> Result<(), Refusal> {
        let group_id = work.group_id.clone();
        let member_id = updated.id.clone();
        let names_changed = updated.meta.subscribed_topic_names != stored.meta.subscribed_topic_names;
        let regex_changed = updated.regex() != stored.regex();
        // Step 7: the member's metadata record.
        if is_new || updated.meta != stored.meta {
            let value = Box::new(normalized(updated.meta.to_value()));
            work.emit(ModernGroupRecord::MemberMetadata {
                group_id: group_id.clone(),
                member_id: member_id.clone(),
                value: Some(value),
            });
        }
        // Step 8: regex bookkeeping.
        let regex_change = self.update_regexes(work, stored, updated)?;
        // Step 9: whether the group epoch moves.
        let mut bump = work.cg.modern.group_epoch == 0
            || names_changed
            || regex_change == RegexChange::UpdatedAndResolved;
        // Step 10: the metadata refresh, which may bump too.
        let mut hash = work.cg.modern.metadata_hash;
        if bump || work.cg.refresh_needed {
            let (changed, new_hash) = self.refresh_subscription(work);
            bump = bump || changed;
            hash = new_hash;
        }
        if bump {
            let epoch = work.cg.modern.group_epoch + 1;
            work.emit(ModernGroupRecord::GroupMetadata {
                group_id: group_id.clone(),
                value: Some(ConsumerGroupMetadataValue { epoch, metadata_hash: hash }),
            });
        }
        // Step 11: the target assignment, unless the last one is too recent
        // (KIP-1263): then the member reconciles towards the last one.
        if work.cg.modern.group_epoch > work.cg.modern.assignment_epoch && self.may_compute_target(work) {
            self.update_target_assignment(work, replaced)?;
        }
        // Step 12: reconciliation, worked out on the member in place (no copy
        // of it or of its target), then written.
        let member = work.cg.modern.members.get(&member_id).unwrap_or(updated);
        let subscription_changed = names_changed || regex_changed;
        let skip = member.state == ConsumerMemberState::Stable
            && member.member_epoch == work.cg.modern.assignment_epoch
            && !subscription_changed;
        if !skip {
            let is_classic = member.is_classic();
            if let Some(next) = self.reconciled(&work.cg, member, owned, subscription_changed)? {
                self.write_reconciled(work, &member_id, is_classic, next);
            }
        }
        Ok(())
    }

    /// Step 4: the stored member the heartbeat is about (a fresh one for a join),
    /// and, for a static member replacing another, the id it replaced.
    fn heartbeat_member(
        &mut self,
        work: &mut Work,
        r: &ConsumerGroupHeartbeatRequest,
        member_id: &Arc<str>,
    ) -> Result<(ConsumerMember, Option<Arc<str>>), Refusal> {
        let group_id = work.group_id.clone();
        let join = r.member_epoch == JOIN_GROUP_MEMBER_EPOCH;
        let Some(instance) = &r.instance_id else {
            return match work.cg.modern.members.get(member_id) {
                Some(m) => Ok((m.clone(), None)),
                None if join => Ok((ConsumerMember::new(member_id.clone()), None)),
                None => Err(refuse(
                    ErrorCode::UnknownMemberId,
                    format!("Member {member_id} is not a member of group {group_id}."),
                )),
            };
        };
        let holder = work.cg.modern.static_members.get(instance.as_str()).cloned();
        match holder {
            None if join => Ok((
                work.cg
                    .modern
                    .members
                    .get(member_id)
                    .cloned()
                    .unwrap_or_else(|| ConsumerMember::new(member_id.clone())),
                None,
            )),
            None => Err(refuse(ErrorCode::UnknownMemberId, format!("Instance id {instance} is unknown."))),
            Some(holder) if join => {
                let old = work
                    .cg
                    .modern
                    .members
                    .get(&holder)
                    .cloned()
                    .unwrap_or_else(|| ConsumerMember::new(holder.clone()));
                let either_classic = old.is_classic();
                if !either_classic && old.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH {
                    return Err(refuse(
                        ErrorCode::UnreleasedInstanceId,
                        format!(
                            "Static member {member_id} with instance id {instance} cannot join the group because the instance id is owned by {holder} member."
                        ),
                    ));
                }
                self.replace_static_member(work, &old, member_id);
                let new = work
                    .cg
                    .modern
                    .members
                    .get(member_id)
                    .cloned()
                    .unwrap_or_else(|| ConsumerMember::new(member_id.clone()));
                Ok((new, Some(holder)))
            }
            Some(holder) if holder != *member_id => Err(refuse(
                ErrorCode::FencedInstanceId,
                format!(
                    "Static member {member_id} with instance id {instance} was fenced by member {holder}."
                ),
            )),
            Some(holder) => match work.cg.modern.members.get(&holder) {
                Some(m) => Ok((m.clone(), None)),
                None => {
                    Err(refuse(ErrorCode::UnknownMemberId, format!("Instance id {instance} is unknown.")))
                }
            },
        }
    }

    /// `replaceMember`: the new member id takes the old one's subscriptions,
    /// target and assignment, at epoch 0.
    pub(crate) fn replace_static_member(&mut self, work: &mut Work, old: &ConsumerMember, new_id: &Arc<str>) {
        let group_id = work.group_id.clone();
        let target = work.cg.target(&old.id).clone();
        // The old member's timers stay armed (`replaceMember`): if the write fails
        // it is back, and otherwise they find it gone and do nothing.
        work.emit(ModernGroupRecord::CurrentMemberAssignment {
            group_id: group_id.clone(),
            member_id: old.id.clone(),
            value: None,
        });
        work.emit(ModernGroupRecord::TargetAssignmentMember {
            group_id: group_id.clone(),
            member_id: old.id.clone(),
            value: None,
        });
        work.emit(ModernGroupRecord::MemberMetadata {
            group_id: group_id.clone(),
            member_id: old.id.clone(),
            value: None,
        });
        work.emit(ModernGroupRecord::MemberMetadata {
            group_id: group_id.clone(),
            member_id: new_id.clone(),
            value: Some(Box::new(normalized(old.meta.to_value()))),
        });
        work.emit(ModernGroupRecord::TargetAssignmentMember {
            group_id: group_id.clone(),
            member_id: new_id.clone(),
            value: Some(assignment::to_wire(&target)),
        });
        let mut value = old.assignment_value();
        value.member_epoch = 0;
        value.previous_member_epoch = 0;
        work.emit(ModernGroupRecord::CurrentMemberAssignment {
            group_id,
            member_id: new_id.clone(),
            value: Some(value),
        });
    }

    /// Step 12: where `member` of `cg` moves (`CurrentAssignmentBuilder.build`),
    /// or `None` when nothing changes.
    fn reconciled(
        &self,
        cg: &ConsumerGroup,
        member: &ConsumerMember,
        owned: Option<&Assignment>,
        subscription_changed: bool,
    ) -> Result<Option<Reconciled>, Refusal> {
        let ids = topics::subscribed_ids(member, cg, &self.engine.image);
        let subscribed = |t| ids.binary_search(&t).is_ok();
        let inputs = Inputs {
            group: cg,
            target_epoch: cg.modern.assignment_epoch,
            target: cg.target(&member.id),
            owned,
            subscription_changed,
            subscribed: &subscribed,
        };
        let next = reconcile::reconcile(member, &inputs).map_err(|code| (code, None))?;
        Ok((!next.same_as(member)).then_some(next))
    }

    /// Step 12's write: member `member_id`'s new assignment, arming or
    /// cancelling its revocation timer.
    fn write_reconciled(
        &mut self,
        work: &mut Work,
        member_id: &Arc<str>,
        is_classic: bool,
        next: Reconciled,
    ) {
        let group_id = work.group_id.clone();
        let value = next.value();
        work.emit(ModernGroupRecord::CurrentMemberAssignment {
            group_id: group_id.clone(),
            member_id: member_id.clone(),
            value: Some(value),
        });
        let key = TimerKey::ConsumerRebalance(group_id, member_id.clone());
        if let Some(m) = work.member_mut(member_id) {
            if next.state == ConsumerMemberState::UnrevokedPartitions && !is_classic {
                let deadline = self.engine.now + i64::from(m.meta.rebalance_timeout_ms);
                m.rebalance_timer = Some(Box::new((next.member_epoch, deadline)));
                work.arm(key, deadline);
            } else if m.rebalance_timer.take().is_some() {
                work.cancel(key);
            }
        }
    }

    /// `cancelTimers`: every deadline of a member that goes.
    fn cancel_member_timers(&mut self, work: &mut Work, member: &Arc<str>) {
        work.cancel(TimerKey::ConsumerSession(work.group_id.clone(), member.clone()));
        work.cancel(TimerKey::ConsumerRebalance(work.group_id.clone(), member.clone()));
        work.cancel(TimerKey::ConsumerClassicJoin(work.group_id.clone(), member.clone()));
        work.cancel(TimerKey::ConsumerClassicSync(work.group_id.clone(), member.clone()));
    }

    /// Epochs -1 and -2 (§2.5).
    fn consumer_leave(&mut self, rid: RequestId, r: &ConsumerGroupHeartbeatRequest) -> Result<(), Refusal> {
        let group_id = r.group_id.as_str();
        let Some(mut work) = self.take_consumer(group_id) else {
            let message = if self.groups.contains_key(group_id) {
                format!("Group {group_id} is not a consumer group.")
            } else {
                format!("Group {group_id} not found.")
            };
            return Err(refuse(ErrorCode::GroupIdNotFound, message));
        };
        let found = match &r.instance_id {
            None => match work.cg.modern.members.get(r.member_id.as_str()) {
                Some(m) => Ok(m.id.clone()),
                None => Err(refuse(
                    ErrorCode::UnknownMemberId,
                    format!("Member {} is not a member of group {group_id}.", r.member_id),
                )),
            },
            Some(instance) => match work.cg.modern.static_members.get(instance.as_str()) {
                None => {
                    Err(refuse(ErrorCode::UnknownMemberId, format!("Instance id {instance} is unknown.")))
                }
                Some(holder) if **holder != *r.member_id => Err(refuse(
                    ErrorCode::FencedInstanceId,
                    format!(
                        "Static member {} with instance id {instance} was fenced by member {holder}.",
                        r.member_id
                    ),
                )),
                Some(holder) => Ok(holder.clone()),
            },
        };
        let member_id = match found {
            Ok(id) => id,
            Err(refusal) => {
                self.abandon(work);
                return Err(refusal);
            }
        };
        // Both branches above found the request's own id (a static member's
        // holder is fenced unless it is the sender), so the answer shares it.
        let response = ConsumerGroupHeartbeatResponse {
            member_id: Some(r.member_id.clone()),
            member_epoch: r.member_epoch,
            ..ConsumerGroupHeartbeatResponse::default()
        };
        if r.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH {
            // A temporary leave keeps the partitions reserved for the replacement:
            // no bump, and the session keeps running from the last heartbeat.
            if let Some(m) = work.cg.modern.members.get(&member_id).cloned() {
                let mut value = m.assignment_value();
                // Only the epoch changes (the previous epoch stays).
                value.member_epoch = LEAVE_GROUP_STATIC_MEMBER_EPOCH;
                let mut record = ModernGroupRecord::CurrentMemberAssignment {
                    group_id: work.group_id.clone(),
                    member_id: member_id.clone(),
                    value: Some(value),
                };
                epochs::reset_for_static_leave(&mut record);
                work.emit(record);
            }
        } else {
            work.removal = "left";
            self.fence_or_downgrade(&mut work, &[member_id]);
        }
        self.commit_work(work, Some((rid, Response::ConsumerGroupHeartbeat(response))));
        Ok(())
    }

    /// Removes members (§2.5 "Fencing"): their tombstones, regex tombstones for
    /// regexes they were the last to use, and always a bump.
    pub(crate) fn fence_members(&mut self, work: &mut Work, ids: &[Arc<str>]) {
        let group_id = work.group_id.clone();
        let mut regexes: Vec<Arc<str>> = Vec::new();
        for id in ids {
            self.cancel_member_timers(work, id);
            if let Some(regex) = work.cg.modern.members.get(id).and_then(|m| m.regex())
                && !regexes.iter().any(|r| **r == *regex)
            {
                regexes.push(Arc::from(regex));
            }
            work.emit(ModernGroupRecord::CurrentMemberAssignment {
                group_id: group_id.clone(),
                member_id: id.clone(),
                value: None,
            });
            work.emit(ModernGroupRecord::TargetAssignmentMember {
                group_id: group_id.clone(),
                member_id: id.clone(),
                value: None,
            });
            work.emit(ModernGroupRecord::MemberMetadata {
                group_id: group_id.clone(),
                member_id: id.clone(),
                value: None,
            });
        }
        // `maybeDeleteResolvedRegularExpressions`: the regexes nobody left uses.
        for regex in regexes {
            if !work.cg.modern.members.values_any_order().any(|m| m.regex() == Some(&*regex)) {
                work.emit(ModernGroupRecord::RegularExpression {
                    group_id: group_id.clone(),
                    regex,
                    value: None,
                });
            }
        }
        let (_, hash) = self.refresh_subscription(work);
        let epoch = work.cg.modern.group_epoch + 1;
        work.emit(ModernGroupRecord::GroupMetadata {
            group_id,
            value: Some(ConsumerGroupMetadataValue { epoch, metadata_hash: hash }),
        });
    }
}

/// The record form of a member's metadata: names sorted, no regex as `None`.
fn normalized(mut meta: ConsumerMemberMetadataValue) -> ConsumerMemberMetadataValue {
    meta.subscribed_topic_names.sort();
    meta.subscribed_topic_names.dedup();
    meta.subscribed_topic_regex = meta.subscribed_topic_regex.filter(|r| !r.is_empty());
    meta
}

/// Step 5 (`throwIfConsumerGroupMemberEpochIsInvalid`, 4.2).
fn check_epoch(stored: &ConsumerMember, epoch: i32, owned: Option<&Assignment>) -> Result<(), Refusal> {
    if epoch == JOIN_GROUP_MEMBER_EPOCH {
        return Ok(());
    }
    let m = stored.member_epoch;
    if epoch > m {
        return Err(refuse(
            ErrorCode::FencedMemberEpoch,
            format!(
                "The consumer group member has a greater member epoch ({epoch}) than the one known by the group coordinator ({m}). The member must abandon all its partitions and rejoin."
            ),
        ));
    }
    if epoch < m {
        let lost_response = epoch == stored.previous_member_epoch
            && owned.is_some_and(|o| {
                assignment::iter(o).all(|(t, p)| assignment::contains(&stored.assigned, t, p))
            });
        if !lost_response {
            return Err(refuse(
                ErrorCode::FencedMemberEpoch,
                format!(
                    "The consumer group member has a smaller member epoch ({epoch}) than the one known by the group coordinator ({m}). The member must abandon all its partitions and rejoin."
                ),
            ));
        }
    }
    Ok(())
}
