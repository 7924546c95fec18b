//! OffsetCommit, OffsetFetch, OffsetDelete and the retention job
//! (`kafka-semantics.md` §2.5, §2.6, §2.10, §6).

use std::collections::BTreeMap;
use std::sync::Arc;

use group_types::{
    CommitMetadata, ErrorCode, GroupState, OffsetAndMetadata, OffsetCommitData, OffsetCommitRequest,
    OffsetCommitResponse, OffsetDeleteRequest, OffsetDeleteResponse, OffsetFetchData, OffsetFetchRequest,
    OffsetFetchResponse, TopicEntries, TopicPartition,
};

use group_offsets::{RetentionGroup, metadata_length};

use crate::core::{
    CoordinatorCore, Group, OffsetChanges, PendingWrite, Record, RequestId, Response, TimerKey, consumer,
    validate_member_at,
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
        validate_member_at(g, &req.member_id, req.group_instance_id.as_deref(), position)?;
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
        // Only a simple consumer (no generation) asks whether the group exists: a
        // member's commit, the common case, looks its group up once.
        if req.generation_id < 0 && !self.groups.contains_key(req.group_id.as_str()) {
            // A simple consumer's first commit creates its group (reverted with the
            // commit if that fails).
            self.create_group(&req.group_id);
        }
        let eng = &mut self.engine;
        let g = match self.groups.get_mut(req.group_id.as_str()) {
            Some(g) => g,
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
        let validation = match g.consumer.as_deref() {
            Some(cg) => consumer::validate_offset_commit(cg, &req),
            None => validate_commit(g, &req, position),
        };
        if let Err(code) = validation {
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
        let count = req.partition_count();
        let mut records = Vec::with_capacity(count);
        // Mapped in place: a topic's answer has the size of its request entry, so
        // the answer's list reuses the request's allocation instead of its own.
        let commit_topic = |TopicEntries { topic, partitions }: TopicEntries<OffsetCommitData>| {
            // The group's own cache usually knows the topic already.
            let topic_arc = match g.offsets.topic(&topic) {
                Some(known) => known.clone(),
                None => eng.topic(&topic),
            };
            let mut codes = Vec::with_capacity(partitions.len());
            let mut prev = OffsetChanges::with_capacity(partitions.len());
            let topic_offsets = g.offsets.topic_mut(&topic_arc);
            for (partition, data) in partitions {
                let too_large =
                    data.metadata.as_ref().is_some_and(|m| m.len() > max && metadata_length(m) > max);
                if too_large {
                    codes.push((partition, ErrorCode::OffsetMetadataTooLarge));
                    continue;
                }
                codes.push((partition, ErrorCode::None));
                // The request's metadata is a slice of its frame, which the cache
                // must not keep alive: one detached copy (none when empty) that the
                // record shares.
                let metadata =
                    data.metadata.as_ref().map_or_else(CommitMetadata::empty, CommitMetadata::detach);
                let offset = OffsetAndMetadata {
                    offset: data.offset,
                    leader_epoch: data.leader_epoch.filter(|e| *e >= 0),
                    metadata,
                    commit_time: data.commit_timestamp.filter(|t| *t != -1).unwrap_or(now),
                    expire_time,
                };
                records.push(Record::Offset {
                    group_id: g.id.clone(),
                    partition: TopicPartition { topic: topic_arc.clone(), partition },
                    offset: offset.clone(),
                });
                // Applied at once, as Kafka's timeline does; readers see it once committed.
                prev.push(partition, topic_offsets.insert(partition, offset));
            }
            if prev.is_empty() {
                // A topic whose every partition was refused keeps no empty entry.
                g.offsets.drop_if_empty(&topic_arc);
            }
            eng.offsets_changed(&g.id, &topic_arc, prev);
            TopicEntries { topic, partitions: codes }
        };
        let response = OffsetCommitResponse { errors: req.offsets.into_iter().map(commit_topic).collect() };
        if records.is_empty() {
            eng.respond(rid, Response::OffsetCommit(response));
            return;
        }
        eng.write(records, PendingWrite::Commit { request: rid, response });
    }

    /// Answers from committed state: an offset whose write is in flight is not
    /// shown until it commits (Kafka reads at the last committed offset).
    pub(crate) fn offset_fetch(&mut self, rid: RequestId, req: OffsetFetchRequest) {
        let view = self.committed_view(req.group_id.as_str()).filter(|(g, _)| !g.is(GroupState::Dead));
        if let Some((g, _)) = &view
            && let Some(cg) = self.engine.timeline.committed_consumer(&req.group_id, g)
            && let Err(error_code) = consumer::validate_offset_fetch(cg, &req)
        {
            let response = OffsetFetchResponse { error_code, ..OffsetFetchResponse::default() };
            self.engine.respond(rid, Response::OffsetFetch(response));
            return;
        }
        let mut response = OffsetFetchResponse::default();
        let lookup = |topic: &str, partition: i32| -> Option<&OffsetAndMetadata> {
            let (g, overrides) = view.as_ref()?;
            match overrides.iter().find(|(tp, _)| &*tp.topic == topic && tp.partition == partition) {
                Some((_, value)) => value.as_ref(),
                None => g.offsets.get_partition(topic, partition),
            }
        };
        match &req.topics {
            Some(topics) => {
                for (topic, partitions) in topics {
                    let out = response.offsets.entry(topic.clone()).or_default();
                    for &partition in partitions {
                        let data = lookup(topic, partition).map_or_else(OffsetFetchData::missing, fetch_data);
                        out.insert(partition, data);
                    }
                }
            }
            None => {
                if let Some((g, overrides)) = &view {
                    let mut all: BTreeMap<TopicPartition, &OffsetAndMetadata> = g.offsets.iter().collect();
                    for (tp, value) in overrides {
                        match value {
                            Some(offset) => {
                                all.insert(tp.clone(), offset);
                            }
                            None => {
                                all.remove(tp);
                            }
                        }
                    }
                    for (tp, offset) in all {
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
        let consumer = g.consumer.as_deref();
        let empty = g.is(GroupState::Empty) && consumer.is_none_or(|cg| cg.members.is_empty());
        if !empty && consumer.is_none() && g.protocol_type.as_deref() != Some("consumer") {
            eng.respond(rid, top(ErrorCode::NonEmptyGroup));
            return;
        }
        let mut response = OffsetDeleteResponse::default();
        let mut partitions: Vec<TopicPartition> = Vec::new();
        let mut records = Vec::new();
        for (topic, list) in &req.topics {
            // A consumer group refuses subscribed topics in any state (§7.4).
            let subscribed = match consumer {
                Some(cg) => consumer::subscribes_to(cg, topic),
                None => !empty && g.subscribed_topics.as_ref().is_none_or(|t| t.contains(topic)),
            };
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
        let Some(g) = self.groups.get_mut(req.group_id.as_str()) else { return };
        for tp in &partitions {
            eng.remove_offset(g, tp);
        }
        eng.write(records, PendingWrite::OffsetDelete { request: rid, response });
    }

    /// §6.5: the periodic retention job over every group, with Kafka's rule from
    /// `group_offsets` (one copy). A partition with a commit in flight is left
    /// alone (Kafka's `pendingOffsetCommits`), and so is the group holding it.
    pub(crate) fn fire_expiration(&mut self) {
        let now = self.engine.now;
        let retention = self.engine.config.offset_retention_ms;
        let deadline = now + self.engine.config.offsets_retention_check_interval_ms;
        self.engine.arm(TimerKey::OffsetExpiration, deadline);
        let mut ids: Vec<Arc<str>> = self.groups.keys().cloned().collect();
        ids.sort();
        let mut removals = Vec::new();
        let mut records = Vec::new();
        for id in ids {
            let pending = self.engine.timeline.pending_partitions(&id);
            let Some(g) = self.groups.get_mut(&id) else { continue };
            // A consumer group's offsets expire from their commit time once the
            // group no longer subscribes to their topic (`offsetExpirationCondition`).
            let consumer_topics = g.consumer.as_deref().map(consumer::subscribed_topic_names);
            let consumer_members = g.consumer.as_deref().map(|cg| cg.members.len());
            let state = match consumer_members {
                Some(n) if n > 0 => GroupState::Stable,
                _ => g.state,
            };
            let mut retention_group = RetentionGroup::new(state, Some(g.state_ts)).with_pending(&pending);
            if let Some(protocol_type) = g.protocol_type.as_deref() {
                retention_group = retention_group.with_protocol_type(protocol_type);
            }
            if consumer_topics.is_some() {
                retention_group = retention_group.with_protocol_type("consumer");
            }
            if let Some(topics) = consumer_topics.as_ref().or(g.subscribed_topics.as_ref()) {
                retention_group = retention_group.with_subscribed_topics(topics);
            }
            let rule = retention_group.expiration_rule();
            let mut expired = Vec::new();
            for (tp, offset) in g.offsets.iter() {
                if retention_group.offset_expired(rule, &tp.topic, tp.partition, offset, now, retention) {
                    expired.push(tp);
                }
            }
            let all_expired = expired.len() == g.offsets.len();
            let delete_group = all_expired
                && pending.is_empty()
                && g.is(GroupState::Empty)
                && g.len() == 0
                && consumer_members.unwrap_or(0) == 0
                && g.barrier.is_none();
            if expired.is_empty() && !delete_group {
                continue;
            }
            for tp in &expired {
                records.push(Record::OffsetTombstone { group_id: id.clone(), partition: tp.clone() });
                self.engine.remove_offset(g, tp);
            }
            if delete_group {
                match g.consumer.as_deref() {
                    Some(cg) => records.extend(consumer::deletion_records(&id, cg)),
                    None => records.push(Record::GroupTombstone { group_id: id.clone() }),
                }
                self.remove_group(&id);
            }
            removals.push((id, expired.len(), delete_group));
        }
        if !records.is_empty() {
            self.engine.write(records, PendingWrite::Expiration { removals });
        }
    }
}
