//! Deleting a share group (`GroupCoordinatorService.deleteGroups` for share
//! groups): first `sharePartitionDeleteRequests`, which writes every partition
//! the group has share state for as deleting and asks the share coordinator to
//! delete that state (`shareGroupBuildPartitionDeleteRequest`); once every such
//! answer is in, the ordinary deletion runs for the groups whose state went,
//! and a group whose state could not be deleted is answered with the error.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use group_offsets::{ModernGroupRecord, Record};
use group_types::{
    DeleteGroupsRequest, DeleteShareGroupStateRequest, DeleteStatePartition, ErrorCode, GroupId,
    ShareStateTopic, TopicId,
};

use super::group::ShareState;
use crate::core::{CoordinatorCore, Effects, GroupKind, PendingWrite, RequestId, Undo};

/// A DeleteGroups request waiting for the share coordinator.
#[derive(Debug)]
pub(crate) struct ParkedDelete {
    pub(crate) request: RequestId,
    pub(crate) groups: Vec<GroupId>,
    /// Share groups whose state deletion is not answered yet.
    pub(crate) waiting: Vec<Arc<str>>,
    /// Share groups whose state could not be deleted, with the error.
    pub(crate) failed: Vec<(GroupId, ErrorCode)>,
}

impl CoordinatorCore {
    /// The share pre-step of a DeleteGroups: for every empty share group with share
    /// state, its state record with every partition deleting, and the deletion asked
    /// of the share coordinator. Returns the groups it waits for.
    pub(crate) fn share_delete_pre_step(&mut self, req: &DeleteGroupsRequest) -> Vec<Arc<str>> {
        // Without share groups served there is no share coordinator to ask: a share
        // group loaded from an older store is deleted as any other group.
        if !self.engine.config.share.enabled {
            return Vec::new();
        }
        let now = self.engine.now;
        let image = self.engine.image.clone();
        let mut waiting = Vec::new();
        let mut seen = BTreeSet::new();
        for id in &req.group_ids {
            if !seen.insert(id.as_str()) {
                continue;
            }
            let Some((key, GroupKind::Share(g))) = self.groups.get_key_value(id.as_str()) else { continue };
            let Some(state) = g.share_state.as_deref().filter(|_| g.modern.members.is_empty()) else {
                continue;
            };
            let key = key.clone();
            // Initialized and initializing partitions, and earlier deletions that did
            // not finish (their topic's partitions, retried: deletion is idempotent).
            let mut candidates: BTreeMap<TopicId, (String, BTreeSet<i32>)> = BTreeMap::new();
            for (t, init) in state.initialized.iter().chain(&state.initializing) {
                let entry = candidates.entry(*t).or_insert_with(|| (init.name.clone(), BTreeSet::new()));
                entry.1.extend(&init.partitions);
            }
            for t in state.deleting.keys() {
                if let Some(topic) = image.topic_by_id(*t) {
                    let entry =
                        candidates.entry(*t).or_insert_with(|| (topic.name.to_string(), BTreeSet::new()));
                    entry.1.extend(0..topic.partitions as i32);
                }
            }
            let next = ShareState {
                deleting: candidates.iter().map(|(t, (name, _))| (*t, name.clone())).collect(),
                ..ShareState::default()
            };
            let record = ModernGroupRecord::ShareStatePartitionMetadata {
                group_id: key.clone(),
                value: Some(Box::new(next.value())),
            };
            let Some(g) = self.groups.get_mut(&key).and_then(GroupKind::share_mut) else { continue };
            let mut changes = Vec::new();
            g.replay(&record, now, Some(&mut changes));
            self.engine.timeline.push(Undo::Share { group: key.clone(), changes });
            let pending = PendingWrite::ShareHeartbeat { answer: None, initialize: None };
            self.write_group_records(&key, vec![Record::Modern(record)], pending);
            if candidates.is_empty() {
                continue;
            }
            let asked: BTreeSet<TopicId> = candidates.keys().copied().collect();
            let topics = candidates
                .into_iter()
                .map(|(t, (_, partitions))| {
                    ShareStateTopic::new(
                        t,
                        partitions.into_iter().map(|partition| DeleteStatePartition { partition }),
                    )
                })
                .collect();
            let seq = self.engine.next_share_deletion();
            self.engine.share_group_deletion_asks.push((key.clone(), asked, seq));
            self.engine.share_state_deletions.push(DeleteShareGroupStateRequest {
                group_id: key.as_ref().into(),
                topics,
                ..Default::default()
            });
            waiting.push(key);
        }
        waiting
    }

    /// The share coordinator answered the deletion of share group `group_id`'s
    /// state: `Ok` when it went. Once every group a DeleteGroups waits for is
    /// answered, the deletion runs (Kafka's `deleteGroups`, after the persister).
    pub fn share_group_state_deleted(
        &mut self,
        now_ms: i64,
        group_id: &str,
        result: Result<(), ErrorCode>,
    ) -> Effects {
        // The oldest deletion of this group a DeleteGroups asked is answered.
        let asks = &mut self.engine.share_group_deletion_asks;
        if let Some(at) = asks.iter().position(|(g, _, _)| &**g == group_id) {
            asks.remove(at);
        }
        self.share_step(now_ms, |core| {
            let mut ready = Vec::new();
            for parked in &mut core.engine.share_deletes {
                if let Some(at) = parked.waiting.iter().position(|g| &**g == group_id) {
                    parked.waiting.remove(at);
                    if let Err(code) = result {
                        parked.failed.push((GroupId::from(group_id), code));
                    }
                }
            }
            let mut i = 0;
            while i < core.engine.share_deletes.len() {
                if core.engine.share_deletes[i].waiting.is_empty() {
                    ready.push(core.engine.share_deletes.remove(i));
                } else {
                    i += 1;
                }
            }
            for parked in ready {
                core.delete_groups_now(parked.request, &parked.groups, parked.failed);
            }
        })
    }

    /// The share-state deletions share groups need, to ask of the share
    /// coordinator (`persister.deleteState`), handed out once.
    pub fn take_share_state_deletions(&mut self) -> Vec<DeleteShareGroupStateRequest> {
        std::mem::take(&mut self.engine.share_state_deletions)
    }

    /// True when deletions wait to be taken.
    pub fn has_share_state_deletions(&self) -> bool {
        !self.engine.share_state_deletions.is_empty()
    }
}
