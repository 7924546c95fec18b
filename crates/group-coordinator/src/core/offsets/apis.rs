//! OffsetCommit, OffsetFetch, OffsetDelete and the retention job
//! (`kafka-semantics.md` §2.5, §2.6, §2.10, §6).

use std::collections::BTreeMap;
use std::sync::Arc;

use group_types::{
    CommitMetadata, ErrorCode, OffsetAndMetadata, OffsetCommitData, OffsetCommitRequest,
    OffsetCommitResponse, OffsetDeleteRequest, OffsetDeleteResponse, OffsetFetchData, OffsetFetchRequest,
    OffsetFetchResponse, TopicEntries, TopicPartition,
};

use group_offsets::metadata_length;

use crate::core::{CoordinatorCore, OffsetChanges, PendingWrite, Record, RequestId, Response, TimerKey};

/// One partition's commit as the store keeps it, or OFFSET_METADATA_TOO_LARGE
/// (`OffsetMetadataManager.isMetadataInvalid`, counted in UTF-16 as Kafka does).
/// The request's metadata is a slice of its frame, which the cache must not keep
/// alive: one detached copy (none when empty) that the record shares.
#[inline]
/// True when `data`'s metadata is over `max` bytes: its partition is
/// answered `OFFSET_METADATA_TOO_LARGE`, before any other check of it.
pub(crate) fn metadata_too_large(data: &OffsetCommitData, max: usize) -> bool {
    data.metadata.as_ref().is_some_and(|m| m.len() > max && metadata_length(m) > max)
}

pub(super) fn stored_offset(
    data: &OffsetCommitData,
    commit_time: i64,
    expire_time: Option<i64>,
    max: usize,
) -> Result<OffsetAndMetadata, ErrorCode> {
    if metadata_too_large(data, max) {
        return Err(ErrorCode::OffsetMetadataTooLarge);
    }
    Ok(OffsetAndMetadata {
        offset: data.offset,
        leader_epoch: data.leader_epoch.filter(|e| *e >= 0),
        metadata: data.metadata.as_ref().map_or_else(CommitMetadata::empty, CommitMetadata::detach),
        commit_time,
        expire_time,
    })
}

fn fetch_data(offset: &OffsetAndMetadata) -> OffsetFetchData {
    OffsetFetchData {
        offset: offset.offset,
        leader_epoch: offset.leader_epoch,
        metadata: offset.metadata.clone(),
        error_code: ErrorCode::None,
    }
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
        let kind = match self.groups.get_mut(req.group_id.as_str()) {
            Some(kind) => kind,
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
        // The group's kind validates the commit; the offsets go to the store.
        if let Err(code) = kind.validate_offset_commit(&req, eng) {
            eng.respond(rid, Response::OffsetCommit(OffsetCommitResponse::uniform(&req, code)));
            return;
        }
        // A classic group names itself; another kind is named by its key. Either
        // name is borrowed, not cloned: the records and the undo share it.
        let group_id = match kind.id() {
            Some(id) => id,
            None => match self.groups.get_key_value(req.group_id.as_str()) {
                Some((id, _)) => id,
                None => return,
            },
        };
        let offsets = self.offsets.entry(group_id);
        let now = eng.now;
        let expire_time = (req.retention_time_ms != -1).then(|| now + req.retention_time_ms);
        let max = eng.config.offset_metadata_max_bytes;
        let count = req.partition_count();
        let mut records = Vec::with_capacity(count);
        // Mapped in place: a topic's answer has the size of its request entry, so
        // the answer's list reuses the request's allocation instead of its own.
        let commit_topic = |TopicEntries { topic, partitions }: TopicEntries<OffsetCommitData>| {
            // The group's own cache usually knows the topic already: one search
            // finds its offsets and the name its records share.
            let (topic_arc, topic_offsets) = match offsets.known_topic_mut(&topic) {
                Some((name, partitions)) => (name.clone(), partitions),
                None => {
                    let name = eng.topic(&topic);
                    let partitions = offsets.topic_mut(&name);
                    (name, partitions)
                }
            };
            let mut codes = Vec::with_capacity(partitions.len());
            let mut prev = OffsetChanges::with_capacity(partitions.len());
            for (partition, data) in partitions {
                let commit_time = data.commit_timestamp.filter(|t| *t != -1).unwrap_or(now);
                let offset = match stored_offset(&data, commit_time, expire_time, max) {
                    Ok(offset) => offset,
                    Err(code) => {
                        codes.push((partition, code));
                        continue;
                    }
                };
                codes.push((partition, ErrorCode::None));
                records.push(Record::Offset {
                    group_id: group_id.clone(),
                    partition: TopicPartition { topic: topic_arc.clone(), partition },
                    offset: offset.clone(),
                });
                // Applied at once, as Kafka's timeline does; readers see it once committed.
                prev.push(partition, topic_offsets.insert(partition, offset));
            }
            if prev.is_empty() {
                // A topic whose every partition was refused keeps no empty entry.
                offsets.drop_if_empty(&topic_arc);
            }
            eng.offsets_changed(group_id, &topic_arc, prev);
            TopicEntries { topic, partitions: codes }
        };
        let response = OffsetCommitResponse { errors: req.offsets.into_iter().map(commit_topic).collect() };
        // Pending transactional offsets of the committed partitions are older now.
        if !records.is_empty()
            && !self.transactions.is_empty()
            && self.transactions.group_has_pending(group_id)
        {
            let group_id = group_id.clone();
            let committed: Vec<TopicPartition> = records
                .iter()
                .filter_map(|r| match r {
                    Record::Offset { partition, .. } => Some(partition.clone()),
                    _ => None,
                })
                .collect();
            for tp in &committed {
                self.supersede_by_commit(&group_id, tp, &mut records);
            }
            self.engine.write(records, PendingWrite::Commit { request: rid, response });
            return;
        }
        let eng = &mut self.engine;
        if records.is_empty() {
            eng.respond(rid, Response::OffsetCommit(response));
            return;
        }
        eng.write(records, PendingWrite::Commit { request: rid, response });
    }

    /// Answers from committed state: an offset whose write is in flight is not
    /// shown until it commits (Kafka reads at the last committed offset).
    pub(crate) fn offset_fetch(&mut self, rid: RequestId, req: OffsetFetchRequest) {
        let view = self.committed_view(req.group_id.as_str()).filter(|g| !g.is_dead());
        let found = match view.as_ref().map(|g| g.validate_offset_fetch(&req)) {
            Some(Ok(())) => true,
            // `OffsetMetadataManager.fetchOffsets` and `fetchAllOffsets` catch the
            // GroupIdNotFoundException of a group that keeps no offsets (a share
            // group): it reads as a missing one, with no error.
            Some(Err(ErrorCode::GroupIdNotFound)) | None => false,
            Some(Err(error_code)) => {
                let response = OffsetFetchResponse { error_code, ..OffsetFetchResponse::default() };
                self.engine.respond(rid, Response::OffsetFetch(response));
                return;
            }
        };
        let committed = found.then(|| self.committed_offsets(req.group_id.as_str()));
        // `require_stable`: a partition any producer's open transaction wrote is
        // UNSTABLE_OFFSET_COMMIT (`OffsetMetadataManager.fetchOffsets`).
        // Committed state: a transaction its marker ended in a write still in
        // flight is still open here.
        let unstable = match req.require_stable && found {
            true => self.committed_txn_partitions(req.group_id.as_str()),
            false => Default::default(),
        };
        let unstable_data = || OffsetFetchData::error(ErrorCode::UnstableOffsetCommit);
        let is_unstable = |topic: &str, partition: i32| {
            unstable.iter().any(|tp| tp.partition == partition && &*tp.topic == topic)
        };
        let mut response = OffsetFetchResponse::default();
        let lookup = |topic: &str, partition: i32| -> Option<&OffsetAndMetadata> {
            let (base, overrides) = committed.as_ref()?;
            match overrides.iter().find(|(tp, _)| &*tp.topic == topic && tp.partition == partition) {
                Some((_, value)) => value.as_ref(),
                None => base.as_ref()?.get_partition(topic, partition),
            }
        };
        match &req.topics {
            Some(topics) => {
                for (topic, partitions) in topics {
                    let out = response.offsets.entry(topic.clone()).or_default();
                    for &partition in partitions {
                        let data = if is_unstable(topic, partition) {
                            unstable_data()
                        } else {
                            lookup(topic, partition).map_or_else(OffsetFetchData::missing, fetch_data)
                        };
                        out.insert(partition, data);
                    }
                }
            }
            None => {
                if let Some((base, overrides)) = &committed {
                    let mut all: BTreeMap<TopicPartition, &OffsetAndMetadata> =
                        base.iter().flat_map(|o| o.iter()).collect();
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
                    // Only committed partitions are listed: one with nothing but a
                    // pending offset is left out, as Kafka's walk of its committed store does.
                    for (tp, offset) in all {
                        let data = if is_unstable(&tp.topic, tp.partition) {
                            unstable_data()
                        } else {
                            fetch_data(offset)
                        };
                        response
                            .offsets
                            .entry(str::to_owned(&tp.topic))
                            .or_default()
                            .insert(tp.partition, data);
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
        let Some((group_id, kind)) = self
            .groups
            .get_key_value(req.group_id.as_str())
            .filter(|(_, g)| !g.is_dead() && g.share().is_none())
        else {
            // A share group keeps no offsets (`ShareGroup.validateOffsetDelete`).
            eng.respond(rid, top(ErrorCode::GroupIdNotFound));
            return;
        };
        if kind.refuses_offset_delete() {
            eng.respond(rid, top(ErrorCode::NonEmptyGroup));
            return;
        }
        let held = self.offsets.get(group_id);
        let mut response = OffsetDeleteResponse::default();
        let mut partitions: Vec<TopicPartition> = Vec::new();
        let mut records = Vec::new();
        for (topic, list) in &req.topics {
            // A consumer group refuses subscribed topics in any state (§7.4).
            let subscribed = kind.subscribes_to(topic);
            let out = response.partitions.entry(topic.clone()).or_default();
            for &partition in list {
                if subscribed {
                    out.insert(partition, ErrorCode::GroupSubscribedToTopic);
                    continue;
                }
                out.insert(partition, ErrorCode::None);
                let tp = TopicPartition::new(topic.as_str(), partition);
                // A partition with only a pending transactional offset gets its
                // tombstone too: it drops the pending offsets
                // (`OffsetMetadataManager.deleteOffsets`).
                let pending = || self.transactions.has_pending(group_id, topic, partition);
                if held.is_some_and(|o| o.contains_key(&tp)) || pending() {
                    records
                        .push(Record::OffsetTombstone { group_id: group_id.clone(), partition: tp.clone() });
                    partitions.push(tp);
                }
            }
        }
        // Nothing to delete may be owed to a write still in flight (another
        // delete, a marker): Kafka answers a write with no records once the
        // writes before it commit, and an empty write orders this answer so.
        if records.is_empty() && eng.pending_writes.is_empty() {
            eng.respond(rid, Response::OffsetDelete(response));
            return;
        }
        let group_id = group_id.clone();
        for tp in &partitions {
            eng.remove_offset(&mut self.offsets, &group_id, tp);
        }
        if self.transactions.group_has_pending(&group_id) {
            for tp in &partitions {
                self.drop_pending(&group_id, tp, &mut records);
            }
        }
        self.engine.write(records, PendingWrite::OffsetDelete { request: rid, response });
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
            let pending = self.pending_partitions(&id);
            let Some(kind) = self.groups.get(&id) else { continue };
            let consumer_topics = kind.consumer_topics();
            let Some(retention_group) = kind.retention(&pending, consumer_topics.as_ref()) else { continue };
            let rule = retention_group.expiration_rule();
            let mut expired = Vec::new();
            let held = self.offsets.get(&id);
            for (tp, offset) in held.iter().flat_map(|o| o.iter()) {
                // An offset an open transaction may still replace stays
                // (`OffsetMetadataManager.cleanupExpiredOffsets`).
                if self.transactions.has_pending(&id, &tp.topic, tp.partition) {
                    continue;
                }
                if retention_group.offset_expired(rule, &tp.topic, tp.partition, offset, now, retention) {
                    expired.push(tp);
                }
            }
            let all_expired = expired.len() == held.map_or(0, |o| o.len());
            let delete_group = all_expired
                && pending.is_empty()
                && !self.transactions.group_has_pending(&id)
                && kind.is_empty()
                && !kind.has_members()
                && kind.barrier().is_none();
            if expired.is_empty() && !delete_group {
                continue;
            }
            for tp in &expired {
                records.push(Record::OffsetTombstone { group_id: id.clone(), partition: tp.clone() });
            }
            if delete_group {
                records.extend(kind.deletion_records(&id));
            }
            for tp in &expired {
                self.engine.remove_offset(&mut self.offsets, &id, tp);
            }
            if delete_group {
                self.remove_group(&id);
                self.remove_offsets(&id);
            }
            removals.push((id, expired.len(), delete_group));
        }
        if !records.is_empty() {
            self.engine.write(records, PendingWrite::Expiration { removals });
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use group_offsets::{ConsumerGroupMetadataValue, ModernGroupRecord, fold};
    use group_types::{ErrorCode, OffsetFetchData, OffsetFetchRequest};
    use rstest::rstest;

    use crate::config::CoordinatorConfig;
    use crate::core::{CoordinatorCore, Record, Request, RequestId, Response};

    /// OffsetFetch of a share group (Kafka's `ShareGroup.validateOffsetFetch`
    /// throws GroupIdNotFoundException, which `OffsetMetadataManager.fetchOffsets`
    /// and `fetchAllOffsets` catch): no error, as for a missing group (the
    /// transactional-offset oracle's script 10).
    #[rstest]
    #[case::all_offsets(OffsetFetchRequest::all("sg"), &[])]
    #[case::named(OffsetFetchRequest::all("sg").with_partition("foo", 0), &[("foo", 0)])]
    #[case::named_stable(
        OffsetFetchRequest { require_stable: true, ..OffsetFetchRequest::all("sg").with_partition("foo", 1) },
        &[("foo", 1)]
    )]
    fn a_share_group_fetches_as_a_missing_group(
        #[case] request: OffsetFetchRequest,
        #[case] partitions: &[(&str, i32)],
    ) {
        let mut core = CoordinatorCore::new(CoordinatorConfig::default());
        let share = ModernGroupRecord::ShareGroupMetadata {
            group_id: Arc::from("sg"),
            value: Some(ConsumerGroupMetadataValue { epoch: 1, metadata_hash: 0 }),
        };
        let _ = core.load(0, fold(vec![Record::Modern(share)]));
        assert!(core.share_group("sg").is_some());
        let fx = core.handle(10, RequestId(1), Request::OffsetFetch(request));
        let Some((_, Response::OffsetFetch(response))) = fx.responses.into_iter().next() else {
            panic!("an OffsetFetch answer")
        };
        assert_eq!(response.error_code, ErrorCode::None);
        let got: Vec<(&str, i32, &OffsetFetchData)> = response
            .offsets
            .iter()
            .flat_map(|(t, p)| p.iter().map(move |(p, d)| (t.as_str(), *p, d)))
            .collect();
        let missing = OffsetFetchData::missing();
        let want: Vec<(&str, i32, &OffsetFetchData)> =
            partitions.iter().map(|&(t, p)| (t, p, &missing)).collect();
        assert_eq!(got, want);
    }
}
