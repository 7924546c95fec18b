//! Classic-protocol members inside a consumer group (§8.3): a kafka-python or
//! Java classic consumer keeps working through JoinGroup, SyncGroup and Heartbeat
//! while its group is a consumer group. Its JoinGroup drives the same member
//! update as a heartbeat (steps 6-12, `classicGroupJoinToConsumerGroup`), with its
//! owned partitions from its subscription; SyncGroup hands it its current
//! assignment; Heartbeat tells it to rejoin while it has something to reconcile.

use std::sync::Arc;

use bytes::Bytes;
use group_offsets::{ClassicMemberMetadata, ConsumerMemberMetadataValue};
use group_types::{
    ConsumerMemberState, ErrorCode, HeartbeatRequest, HeartbeatResponse, JoinGroupRequest, JoinGroupResponse,
    MemberAssignment, MemberId, ProtocolMetadata, ProtocolType, Subscription, SyncGroupRequest,
    SyncGroupResponse, TopicIdPartitions, TopicPartitions,
};

use super::Work;
use super::group::{ClassicDeadline, ConsumerGroup, ConsumerMember};
use super::meta::MemberMeta;
use crate::MetadataImage;
use crate::core::modern::assignment::{self, Assignment};
use crate::core::{CoordinatorCore, RequestId, Response, TimerKey};

/// Names to ids; topics missing from the image are dropped (`Utils.toTopicPartitions`).
pub(crate) fn to_ids(parts: &[TopicPartitions], image: &MetadataImage) -> Assignment {
    let wire: Vec<TopicIdPartitions> = parts
        .iter()
        .filter_map(|t| {
            image.topic(&t.topic).map(|i| TopicIdPartitions::new(i.id, t.partitions.iter().copied()))
        })
        .collect();
    assignment::from_wire(&wire)
}

/// Ids to names, for a consumer-protocol assignment.
pub(crate) fn to_names(a: &Assignment, image: &MetadataImage) -> Vec<TopicPartitions> {
    let mut out: Vec<TopicPartitions> = a
        .topics
        .iter()
        .filter_map(|(id, ps)| {
            image.topic_by_id(*id).map(|t| TopicPartitions::new(t.name.to_string(), ps.clone()))
        })
        .collect();
    out.sort_by(|a, b| a.topic.cmp(&b.topic));
    out
}

/// A classic member's JoinGroup answer in a consumer group: its generation is
/// its member epoch, its protocol its first, and no member list.
fn joined(member_id: &str, generation: i32, req: &JoinGroupRequest) -> JoinGroupResponse {
    JoinGroupResponse {
        error_code: ErrorCode::None,
        generation_id: generation,
        protocol_type: Some(ProtocolType::from_static("consumer")),
        protocol_name: Some(req.protocols[0].name.clone()),
        leader_id: MemberId::empty(),
        skip_assignment: false,
        member_id: MemberId::from(member_id),
        members: Vec::new(),
    }
}

/// The consumer-protocol version of the member's subscription metadata.
fn protocol_version(member: &ConsumerMember) -> i16 {
    let classic = member.meta.classic();
    let first = classic.and_then(|c| c.supported_protocols.first());
    first.and_then(|p| Subscription::decode(&p.metadata).ok()).map_or(0, |s| s.version)
}

/// `ConsumerGroup.waitingOnUnreleasedPartition`: some partition of its target it
/// does not hold yet is still owned by another member.
fn waiting_on_unreleased(cg: &ConsumerGroup, member: &ConsumerMember) -> bool {
    assignment::iter(cg.target(&member.id))
        .any(|(t, p)| !assignment::contains(&member.assigned, t, p) && !cg.is_free_for(t, p, member))
}

impl CoordinatorCore {
    /// JoinGroup to a consumer group from a classic-protocol client.
    pub(crate) fn consumer_group_classic_join(
        &mut self,
        rid: RequestId,
        req: JoinGroupRequest,
        visible: &dyn Fn(&str) -> bool,
    ) {
        let error =
            |code, member: &str| Response::JoinGroup(crate::core::join_error(code, member.to_owned()));
        let Some(mut work) = self.take_consumer(&req.group_id) else { return };
        match self.classic_join_in(&mut work, &req) {
            Ok(response) => {
                let group_id = work.group_id.clone();
                self.commit_work(work, Some((rid, Response::JoinGroup(response))));
                // As after a heartbeat: Kafka's join schedules the regex refresh too.
                self.maybe_resolve_regexes(&group_id, visible);
            }
            Err((code, member_id)) => {
                let (group_id, task) = (work.group_id.clone(), work.regex_task.take());
                self.abandon(work);
                self.engine.respond(rid, error(code, &member_id));
                if let Some(sources) = task {
                    self.resolve_regexes_of_failed_request(&group_id, sources, visible);
                }
            }
        }
    }

    fn classic_join_in(
        &mut self,
        work: &mut Work,
        req: &JoinGroupRequest,
    ) -> Result<JoinGroupResponse, (ErrorCode, String)> {
        let group_id = work.group_id.clone();
        let refuse = |code| Err((code, req.member_id.to_string()));
        let max = usize::try_from(self.engine.config.consumer.max_size).unwrap_or(usize::MAX);
        let known = !req.member_id.is_empty() && work.cg.modern.members.contains_key(req.member_id.as_str());
        if work.cg.modern.members.len() >= max && !known {
            return refuse(ErrorCode::GroupMaxSizeReached);
        }
        // Every classic member must share one protocol with the newcomer.
        let names: Vec<&str> = req.protocols.iter().map(|p| p.name.as_str()).collect();
        let shared = work
            .cg
            .modern
            .members
            .values()
            .filter_map(|m| m.meta.classic())
            .all(|c| c.supported_protocols.iter().any(|p| names.contains(&p.name.as_str())));
        if req.protocol_type != "consumer" || req.protocols.is_empty() || !shared {
            return refuse(ErrorCode::InconsistentGroupProtocol);
        }
        if req.member_id.is_empty() && req.group_instance_id.is_none() && req.api_version >= 4 {
            // KIP-394; ids of classic members in consumer groups are bare UUIDs.
            return Err((ErrorCode::MemberIdRequired, self.engine.ids.generate_uuid()));
        }
        let member_id: Arc<str> = if req.member_id.is_empty() {
            Arc::from(self.engine.ids.generate_uuid())
        } else {
            Arc::from(req.member_id.as_str())
        };
        let mut replaced = None;
        let mut downgrade = false;
        let stored = match req
            .group_instance_id
            .as_deref()
            .and_then(|i| work.cg.modern.static_members.get(i).cloned())
        {
            Some(holder) if holder != member_id => {
                if !req.member_id.is_empty() {
                    return refuse(ErrorCode::FencedInstanceId);
                }
                let old = work
                    .cg
                    .modern
                    .members
                    .get(&holder)
                    .cloned()
                    .unwrap_or_else(|| ConsumerMember::new(holder.clone()));
                downgrade = self.downgrades_with_replaced(&work.cg, &holder);
                self.replace_static_member(work, &old, &member_id);
                replaced = Some(holder);
                work.cg
                    .modern
                    .members
                    .get(&member_id)
                    .cloned()
                    .unwrap_or_else(|| ConsumerMember::new(member_id.clone()))
            }
            // An id handed out with MEMBER_ID_REQUIRED is not remembered: an
            // id not in the group joins as a new member.
            _ => work
                .cg
                .modern
                .members
                .get(&member_id)
                .cloned()
                .unwrap_or_else(|| ConsumerMember::new(member_id.clone())),
        };
        let is_new = replaced.is_none() && !work.cg.modern.members.contains_key(&member_id);
        let image = self.engine.image.clone();
        let subscription = Subscription::decode(&req.protocols[0].metadata).unwrap_or_default();
        let owned = to_ids(&subscription.owned_partitions, &image);
        let mut updated = stored.clone();
        updated.id = member_id.clone();
        let mut topics = subscription.topics.clone();
        topics.sort();
        topics.dedup();
        let meta = ConsumerMemberMetadataValue {
            instance_id: req.group_instance_id.as_deref().map(str::to_owned),
            rack_id: subscription.rack_id.clone().filter(|r| !r.is_empty()),
            client_id: req.client_id.clone(),
            client_host: req.client_host.clone(),
            subscribed_topic_names: topics,
            // KAFKA-19720: classic members never have a regex.
            subscribed_topic_regex: None,
            rebalance_timeout_ms: req.rebalance_timeout_ms,
            server_assignor: stored.meta.server_assignor().map(str::to_owned),
            classic: Some(ClassicMemberMetadata {
                session_timeout_ms: req.session_timeout_ms,
                supported_protocols: req.protocols.iter().map(ProtocolMetadata::detach).collect(),
            }),
        };
        updated.meta = MemberMeta::new(&meta, &stored.meta, &work.cg.last_meta);
        let assignment_epoch = work.cg.modern.assignment_epoch;
        self.apply_member_update(work, &stored, &updated, is_new, replaced.as_deref(), Some(&owned))
            .map_err(|(code, _)| (code, req.member_id.to_string()))?;
        if let (true, Some(replaced)) = (downgrade, replaced) {
            // `convertToClassicGroup` with the joining member in the replaced one's
            // place: a rebalance only if the target assignment was stale, in which
            // case Kafka does not reconcile the member (its generation stays 0).
            let rebalance = work.cg.modern.group_epoch > assignment_epoch;
            let joining = work.cg.modern.members.get(&member_id).cloned().unwrap_or_else(|| updated.clone());
            let generation = if rebalance { 0 } else { joining.member_epoch };
            work.cancel(deadline_key(ClassicDeadline::Join, &group_id, &member_id));
            work.downgrade = Some(Vec::new());
            work.replacement = Some(Box::new(super::Replacement { replaced, joining, rebalance }));
            return Ok(joined(&member_id, generation, req));
        }
        // Once written, the rejoin deadline is over and the SyncGroup one starts,
        // a rebalance timeout out; the session restarts with the request's timeout.
        // Set on the member, so that a failed write brings back what they replace.
        let now = self.engine.now;
        let session = now + i64::from(req.session_timeout_ms);
        let sync = now + i64::from(req.rebalance_timeout_ms);
        if let Some(m) = work.member_mut(&member_id) {
            m.session_deadline = Some(session);
            m.set_classic_deadline(ClassicDeadline::Join, None);
            m.set_classic_deadline(ClassicDeadline::Sync, Some(sync));
        }
        work.arm(TimerKey::ConsumerSession(group_id.clone(), member_id.clone()), session);
        work.cancel(deadline_key(ClassicDeadline::Join, &group_id, &member_id));
        work.arm(deadline_key(ClassicDeadline::Sync, &group_id, &member_id), sync);
        let epoch = work.cg.modern.members.get(&member_id).map_or(0, |m| m.member_epoch);
        Ok(joined(&member_id, epoch, req))
    }

    /// `validateOnlineDowngradeWithReplacedMember`: a classic member replacing
    /// `replaced` by its instance id turns the group classic when every other
    /// member is classic, the policy allows it and the group fits a classic group.
    fn downgrades_with_replaced(&self, cg: &ConsumerGroup, replaced: &str) -> bool {
        let max = usize::try_from(self.engine.config.group_max_size).unwrap_or(usize::MAX);
        cg.modern.members.values_any_order().all(|m| m.is_classic() || *m.id == *replaced)
            && self.engine.config.consumer.migration_policy.allows_downgrade()
            && cg.modern.members.len() <= max
    }

    /// The member a classic SyncGroup or Heartbeat names, checked (§8.3).
    fn classic_member<'a>(
        cg: &'a ConsumerGroup,
        member_id: &str,
        instance: Option<&str>,
        generation: i32,
    ) -> Result<&'a ConsumerMember, ErrorCode> {
        let member =
            cg.modern.members.get(member_id).filter(|m| m.is_classic()).ok_or(ErrorCode::UnknownMemberId)?;
        if let Some(instance) = instance
            && cg.modern.static_members.get(instance).is_some_and(|holder| **holder != *member_id)
        {
            return Err(ErrorCode::FencedInstanceId);
        }
        if generation != member.member_epoch {
            return Err(ErrorCode::IllegalGeneration);
        }
        Ok(member)
    }

    /// SyncGroup of a classic member of a consumer group: its current assignment,
    /// in its consumer-protocol version; what a "leader" sends is ignored.
    pub(crate) fn consumer_group_classic_sync(&mut self, rid: RequestId, req: &SyncGroupRequest) {
        let answer = self.classic_sync_answer(req);
        self.engine.respond(rid, Response::SyncGroup(answer));
    }

    fn classic_sync_answer(&mut self, req: &SyncGroupRequest) -> SyncGroupResponse {
        let now = self.engine.now;
        let group_id: Arc<str> = Arc::from(req.group_id.as_str());
        let image = self.engine.image.clone();
        let Some(cg) = self.consumer_group_ref(&req.group_id) else {
            return SyncGroupResponse::error(ErrorCode::UnknownMemberId);
        };
        let member = match Self::classic_member(
            cg,
            &req.member_id,
            req.group_instance_id.as_deref(),
            req.generation_id,
        ) {
            Ok(m) => m,
            Err(code) => return SyncGroupResponse::error(code),
        };
        let protocol =
            member.meta.classic().and_then(|c| c.supported_protocols.first()).map(|p| p.name.clone());
        let type_ok = req.protocol_type.as_deref().is_none_or(|t| t == "consumer");
        let name_ok = req.protocol_name.is_none() || req.protocol_name == protocol;
        if !type_ok || !name_ok {
            return SyncGroupResponse::error(ErrorCode::InconsistentGroupProtocol);
        }
        // `throwIfRebalanceInProgress`: a newer target assignment than the member's
        // epoch (Kafka 4.3 compares the assignment epoch, KAFKA-20272), unless the
        // member already rejoined and is revoking.
        let rebalancing = cg.modern.assignment_epoch > member.member_epoch
            && member.state != ConsumerMemberState::UnrevokedPartitions;
        let assignment = MemberAssignment {
            version: protocol_version(member),
            partitions: to_names(&member.assigned, &image),
            user_data: None,
        };
        let (id, timeout, rebalance_timeout) = (
            member.id.clone(),
            member.meta.classic().map_or(0, |c| c.session_timeout_ms),
            member.meta.rebalance_timeout_ms,
        );
        if rebalancing {
            // Refused before anything else: the SyncGroup deadline and the
            // session stay as they are, and the rejoin deadline is added.
            self.arm_classic_join_if_absent(&group_id, &id, now + i64::from(rebalance_timeout));
            return SyncGroupResponse::error(ErrorCode::RebalanceInProgress);
        }
        self.set_classic_deadline(&group_id, &id, ClassicDeadline::Sync, None);
        self.rearm_classic_session(&group_id, &id, now + i64::from(timeout));
        SyncGroupResponse {
            error_code: ErrorCode::None,
            protocol_type: Some(ProtocolType::from_static("consumer")),
            protocol_name: protocol,
            assignment: assignment.encode().map(Bytes::from).unwrap_or_default(),
        }
    }

    /// Heartbeat of a classic member of a consumer group.
    pub(crate) fn consumer_group_classic_heartbeat(&mut self, rid: RequestId, req: &HeartbeatRequest) {
        let error_code = self.classic_heartbeat_code(req);
        self.engine.respond(rid, Response::Heartbeat(HeartbeatResponse { error_code }));
    }

    fn classic_heartbeat_code(&mut self, req: &HeartbeatRequest) -> ErrorCode {
        let now = self.engine.now;
        let group_id: Arc<str> = Arc::from(req.group_id.as_str());
        let Some(cg) = self.consumer_group_ref(&req.group_id) else { return ErrorCode::UnknownMemberId };
        let member = match Self::classic_member(
            cg,
            &req.member_id,
            req.group_instance_id.as_deref(),
            req.generation_id,
        ) {
            Ok(m) => m,
            Err(code) => return code,
        };
        let rejoin = cg.modern.assignment_epoch > member.member_epoch
            || member.state == ConsumerMemberState::UnrevokedPartitions
            || (member.state == ConsumerMemberState::UnreleasedPartitions
                && !waiting_on_unreleased(cg, member));
        let (id, timeout, rebalance_timeout) = (
            member.id.clone(),
            member.meta.classic().map_or(0, |c| c.session_timeout_ms),
            member.meta.rebalance_timeout_ms,
        );
        self.rearm_classic_session(&group_id, &id, now + i64::from(timeout));
        if rejoin {
            self.arm_classic_join_if_absent(&group_id, &id, now + i64::from(rebalance_timeout));
            return ErrorCode::RebalanceInProgress;
        }
        ErrorCode::None
    }

    fn rearm_classic_session(&mut self, group_id: &Arc<str>, member: &Arc<str>, deadline: i64) {
        if let Some(m) = self.consumer_group_mut(group_id).and_then(|cg| cg.modern.members.get_mut(member)) {
            m.session_deadline = Some(deadline);
        }
        self.engine.arm(TimerKey::ConsumerSession(group_id.clone(), member.clone()), deadline);
    }

    /// `scheduleConsumerGroupJoinTimeoutIfAbsent`: a member told to rejoin again
    /// keeps the deadline it was given the first time.
    fn arm_classic_join_if_absent(&mut self, group_id: &Arc<str>, member: &Arc<str>, deadline: i64) {
        let armed = self
            .consumer_group_ref(group_id)
            .and_then(|cg| cg.modern.members.get(member))
            .is_some_and(|m| m.classic_deadline(ClassicDeadline::Join).is_some());
        if !armed {
            self.set_classic_deadline(group_id, member, ClassicDeadline::Join, Some(deadline));
        }
    }

    /// Arms (`Some`) or cancels (`None`) a classic member's `which` deadline,
    /// outside any write.
    fn set_classic_deadline(
        &mut self,
        group_id: &Arc<str>,
        member: &Arc<str>,
        which: ClassicDeadline,
        at: Option<i64>,
    ) {
        if let Some(m) = self.consumer_group_mut(group_id).and_then(|cg| cg.modern.members.get_mut(member)) {
            m.set_classic_deadline(which, at);
        }
        let key = deadline_key(which, group_id, member);
        match at {
            Some(deadline) => self.engine.arm(key, deadline),
            None => self.engine.cancel(key),
        }
    }

    /// A classic member's join or sync deadline fired: it is fenced
    /// (`consumerGroupFenceMemberOperation`) if the deadline is still its own
    /// and due. One cancelled, or replaced by a reverted write, does nothing.
    pub(crate) fn fire_consumer_classic_deadline(
        &mut self,
        which: ClassicDeadline,
        group: &str,
        member: &Arc<str>,
    ) {
        let now = self.engine.now;
        let armed = self
            .consumer_group_ref(group)
            .and_then(|cg| cg.modern.members.get(member))
            .and_then(|m| m.classic_deadline(which));
        let group_id: Arc<str> = Arc::from(group);
        match armed {
            Some(due) if due <= now => {
                let key = deadline_key(which, &group_id, member);
                self.fence_by_timer(group, member, key);
            }
            Some(later) => self.engine.arm(deadline_key(which, &group_id, member), later),
            None => {}
        }
    }
}

/// The timer of a classic member's `which` deadline.
pub(crate) fn deadline_key(which: ClassicDeadline, group: &Arc<str>, member: &Arc<str>) -> TimerKey {
    match which {
        ClassicDeadline::Join => TimerKey::ConsumerClassicJoin(group.clone(), member.clone()),
        ClassicDeadline::Sync => TimerKey::ConsumerClassicSync(group.clone(), member.clone()),
    }
}
