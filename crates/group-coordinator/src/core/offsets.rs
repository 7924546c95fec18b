//! OffsetCommit, OffsetFetch, OffsetDelete and the retention job
//! (`kafka-semantics.md` §2.5, §2.6, §2.10, §6).

use std::collections::BTreeMap;
use std::sync::Arc;

use group_types::{
    ErrorCode, GroupState, OffsetAndMetadata, OffsetCommitRequest, OffsetCommitResponse, OffsetDeleteRequest,
    OffsetDeleteResponse, OffsetFetchData, OffsetFetchRequest, OffsetFetchResponse, TopicPartition,
};

use crate::core::{
    CoordinatorCore, Group, PendingWrite, Record, RequestId, Response, TimerKey, validate_member,
};

fn fetch_data(offset: &OffsetAndMetadata) -> OffsetFetchData {
    OffsetFetchData {
        offset: offset.offset,
        leader_epoch: offset.leader_epoch,
        metadata: offset.metadata.clone(),
        error_code: ErrorCode::None,
    }
}

/// `ClassicGroup.validateOffsetCommit` (§2.5 step 3-4).
/// `position` is where `req.member_id` sits in the group, if it is a member.
fn validate_commit(g: &Group, req: &OffsetCommitRequest, position: Option<usize>) -> Result<(), ErrorCode> {
    if g.is(GroupState::Dead) {
        return Err(ErrorCode::CoordinatorNotAvailable);
    }
    if req.generation_id < 0 && g.is(GroupState::Empty) {
        return Ok(());
    }
    if req.generation_id >= 0 || !req.member_id.is_empty() || req.group_instance_id.is_some() {
        match req.group_instance_id.as_deref() {
            None if position.is_none() => return Err(ErrorCode::UnknownMemberId),
            None => {}
            instance => validate_member(g, &req.member_id, instance)?,
        }
        if req.generation_id != g.generation {
            return Err(ErrorCode::IllegalGeneration);
        }
    } else if !g.is(GroupState::Empty) {
        return Err(ErrorCode::UnknownMemberId);
    }
    if g.is(GroupState::CompletingRebalance) {
        return Err(ErrorCode::RebalanceInProgress);
    }
    Ok(())
}

impl CoordinatorCore {
    pub(crate) fn offset_commit(&mut self, rid: RequestId, req: OffsetCommitRequest) {
        let eng = &mut self.engine;
        let mut created_group = false;
        let g = match self.groups.get_mut(req.group_id.as_str()) {
            Some(g) => g,
            None if req.generation_id < 0 => {
                created_group = true;
                let id: Arc<str> = Arc::from(req.group_id.as_str());
                self.groups.entry(id.clone()).or_insert_with(|| Group::new(id, eng.now))
            }
            None => {
                // Kafka's Java coordinator: v9+ learns the group is gone; older
                // clients only understand a stale generation (spec §10 #2).
                let code = if req.api_version >= 9 {
                    ErrorCode::GroupIdNotFound
                } else {
                    ErrorCode::IllegalGeneration
                };
                let response = OffsetCommitResponse::uniform(&req, code);
                eng.respond(rid, Response::OffsetCommit(response));
                return;
            }
        };
        // One lookup locates the member for validation and for its session.
        let position = if req.member_id.is_empty() { None } else { g.position(&req.member_id) };
        if let Err(code) = validate_commit(g, &req, position) {
            eng.respond(rid, Response::OffsetCommit(OffsetCommitResponse::uniform(&req, code)));
            return;
        }
        if matches!(g.state, GroupState::Stable | GroupState::PreparingRebalance)
            && let Some(i) = position
        {
            let timeout = g.at(i).session_timeout_ms;
            eng.arm_session(g, i, timeout);
        }
        let now = eng.now;
        let expire_time = (req.retention_time_ms != -1).then(|| now + req.retention_time_ms);
        let max = eng.config.offset_metadata_max_bytes;
        let mut response = OffsetCommitResponse::default();
        let count = req.partition_count();
        let mut offsets = Vec::with_capacity(count);
        let mut records = Vec::with_capacity(count);
        for (topic, partitions) in req.offsets {
            // The group's own cache usually knows the topic already.
            let topic_arc = match g.offsets.topic(&topic) {
                Some(known) => known.clone(),
                None => eng.topic(&topic),
            };
            // Partitions come in order: many are built into the response's map in one
            // sorted pass instead of one insert each.
            let bulk = partitions.len() > 8;
            let mut codes = Vec::with_capacity(if bulk { partitions.len() } else { 0 });
            let errors = response.errors.entry(topic).or_default();
            for (partition, data) in partitions {
                let too_large = data.metadata.as_ref().is_some_and(|m| m.encode_utf16().count() > max);
                let code = if too_large { ErrorCode::OffsetMetadataTooLarge } else { ErrorCode::None };
                if bulk {
                    codes.push((partition, code));
                } else {
                    errors.insert(partition, code);
                }
                if too_large {
                    continue;
                }
                let offset = OffsetAndMetadata {
                    offset: data.offset,
                    leader_epoch: data.leader_epoch.filter(|e| *e >= 0),
                    metadata: data.metadata.unwrap_or_default(),
                    commit_time: data.commit_timestamp.filter(|t| *t != -1).unwrap_or(now),
                    expire_time,
                };
                let tp = TopicPartition { topic: topic_arc.clone(), partition };
                records.push(Record::Offset {
                    group_id: g.id.clone(),
                    partition: tp.clone(),
                    offset: offset.clone(),
                });
                offsets.push((tp, offset));
            }
            if bulk {
                *errors = codes.into_iter().collect();
            }
        }
        if records.is_empty() {
            eng.respond(rid, Response::OffsetCommit(response));
            return;
        }
        let pending =
            PendingWrite::Commit { group: g.id.clone(), request: rid, created_group, offsets, response };
        eng.write(records, pending);
    }

    pub(crate) fn finish_commit(
        &mut self,
        group: Arc<str>,
        request: RequestId,
        created_group: bool,
        offsets: Vec<(TopicPartition, OffsetAndMetadata)>,
        mut response: OffsetCommitResponse,
        result: Result<(), ErrorCode>,
    ) {
        match result {
            Ok(()) => {
                if let Some(g) = self.groups.get_mut(&group) {
                    g.offsets.extend(offsets);
                }
            }
            Err(error) => {
                let mapped = crate::core::map_operation_error(error);
                for partitions in response.errors.values_mut() {
                    for code in partitions.values_mut() {
                        *code = mapped;
                    }
                }
                let remove = created_group
                    && self.groups.get(&group).is_some_and(|g| {
                        g.is(GroupState::Empty)
                            && g.len() == 0
                            && g.offsets.is_empty()
                            && g.pending_join.is_empty()
                    });
                if remove {
                    self.groups.remove(&group);
                }
            }
        }
        self.engine.respond(request, Response::OffsetCommit(response));
    }

    pub(crate) fn offset_fetch(&mut self, rid: RequestId, req: OffsetFetchRequest) {
        let g = self.groups.get(req.group_id.as_str()).filter(|g| !g.is(GroupState::Dead));
        let mut response = OffsetFetchResponse::default();
        match &req.topics {
            Some(topics) => {
                for (topic, partitions) in topics {
                    let out = response.offsets.entry(topic.clone()).or_default();
                    for &partition in partitions {
                        let data = g
                            .and_then(|g| g.offsets.get_partition(topic, partition))
                            .map_or_else(OffsetFetchData::missing, fetch_data);
                        out.insert(partition, data);
                    }
                }
            }
            None => {
                if let Some(g) = g {
                    for (tp, offset) in &g.offsets {
                        response
                            .offsets
                            .entry(str::to_owned(&tp.topic))
                            .or_default()
                            .insert(tp.partition, fetch_data(offset));
                    }
                }
            }
        }
        self.engine.respond(rid, Response::OffsetFetch(response));
    }

    pub(crate) fn offset_delete(&mut self, rid: RequestId, req: OffsetDeleteRequest) {
        let eng = &mut self.engine;
        let top = |error_code| {
            Response::OffsetDelete(OffsetDeleteResponse { error_code, partitions: BTreeMap::new() })
        };
        if req.group_id.is_empty() {
            eng.respond(rid, top(ErrorCode::InvalidGroupId));
            return;
        }
        let Some(g) = self.groups.get(req.group_id.as_str()).filter(|g| !g.is(GroupState::Dead)) else {
            eng.respond(rid, top(ErrorCode::GroupIdNotFound));
            return;
        };
        let empty = g.is(GroupState::Empty);
        if !empty && g.protocol_type.as_deref() != Some("consumer") {
            eng.respond(rid, top(ErrorCode::NonEmptyGroup));
            return;
        }
        let mut response = OffsetDeleteResponse::default();
        let mut partitions = Vec::new();
        let mut records = Vec::new();
        for (topic, list) in &req.topics {
            let subscribed = !empty && g.subscribed_topics.as_ref().is_none_or(|t| t.contains(topic));
            let out = response.partitions.entry(topic.clone()).or_default();
            for &partition in list {
                if subscribed {
                    out.insert(partition, ErrorCode::GroupSubscribedToTopic);
                    continue;
                }
                out.insert(partition, ErrorCode::None);
                let tp = TopicPartition::new(topic.as_str(), partition);
                if g.offsets.contains_key(&tp) {
                    records.push(Record::OffsetTombstone { group_id: g.id.clone(), partition: tp.clone() });
                    partitions.push(tp);
                }
            }
        }
        if records.is_empty() {
            eng.respond(rid, Response::OffsetDelete(response));
            return;
        }
        let pending = PendingWrite::OffsetDelete { group: g.id.clone(), request: rid, partitions, response };
        eng.write(records, pending);
    }

    pub(crate) fn finish_offset_delete(
        &mut self,
        group: Arc<str>,
        request: RequestId,
        partitions: Vec<TopicPartition>,
        mut response: OffsetDeleteResponse,
        result: Result<(), ErrorCode>,
    ) {
        match result {
            Ok(()) => {
                if let Some(g) = self.groups.get_mut(&group) {
                    for tp in &partitions {
                        g.offsets.remove(tp);
                    }
                }
            }
            Err(error) => {
                response = OffsetDeleteResponse {
                    error_code: crate::core::map_operation_error(error),
                    partitions: BTreeMap::new(),
                };
            }
        }
        self.engine.respond(request, Response::OffsetDelete(response));
    }

    /// §6.5: the periodic retention job over every group.
    pub(crate) fn fire_expiration(&mut self) {
        let now = self.engine.now;
        let retention = self.engine.config.offset_retention_ms;
        let deadline = now + self.engine.config.offsets_retention_check_interval_ms;
        self.engine.arm(TimerKey::OffsetExpiration, deadline);
        let mut ids: Vec<&Arc<str>> = self.groups.keys().collect();
        ids.sort();
        let mut removals = Vec::new();
        let mut records = Vec::new();
        for id in ids {
            let g = &self.groups[id];
            let mut expired = Vec::new();
            let all_expired = match expiration_base(g) {
                None => g.offsets.is_empty(),
                Some(base) => {
                    let mut all = true;
                    for (tp, offset) in &g.offsets {
                        let subscribed = g.subscribed_topics.as_ref().is_some_and(|t| t.contains(&*tp.topic));
                        let gone = !subscribed
                            && match offset.expire_time {
                                Some(expire) => now >= expire,
                                None => now - base.unwrap_or(offset.commit_time) >= retention,
                            };
                        if gone {
                            expired.push(tp.clone());
                        } else {
                            all = false;
                        }
                    }
                    all
                }
            };
            let delete_group = all_expired && g.is(GroupState::Empty) && g.len() == 0;
            for tp in &expired {
                records.push(Record::OffsetTombstone { group_id: id.clone(), partition: tp.clone() });
            }
            if delete_group {
                records.push(Record::GroupTombstone { group_id: id.clone() });
            }
            if !expired.is_empty() || delete_group {
                removals.push((id.clone(), expired, delete_group));
            }
        }
        if !records.is_empty() {
            self.engine.write(records, PendingWrite::Expiration { removals });
        }
    }

    pub(crate) fn finish_expiration(
        &mut self,
        removals: Vec<(Arc<str>, Vec<TopicPartition>, bool)>,
        result: Result<(), ErrorCode>,
    ) {
        if result.is_err() {
            return;
        }
        for (id, partitions, delete_group) in removals {
            let Some(g) = self.groups.get_mut(&id) else { continue };
            for tp in &partitions {
                g.offsets.remove(tp);
            }
            let remove = delete_group && g.is(GroupState::Empty) && g.len() == 0 && g.offsets.is_empty();
            self.engine.offsets_expired(&id, partitions.len(), remove);
            if remove {
                let pending: Vec<Arc<str>> = g.pending_join.keys().cloned().collect();
                for member in pending {
                    self.engine.cancel(TimerKey::Session(id.clone(), member));
                }
                self.groups.remove(&id);
            }
        }
    }
}

/// Which offsets of a group may expire, and from which base time (§6.5):
/// `None` = none; `Some(None)` = from each commit time; `Some(Some(t))` = from `t`.
fn expiration_base(g: &Group) -> Option<Option<i64>> {
    match &g.protocol_type {
        None => Some(None),
        Some(_) if g.is(GroupState::Empty) => Some(Some(g.state_ts)),
        Some(t) if t == "consumer" && g.is(GroupState::Stable) && g.subscribed_topics.is_some() => Some(None),
        Some(_) => None,
    }
}
