//! The share coordinator's answer to an initialization a share group asked for
//! (`GroupMetadataManager.initializeShareGroupState` and
//! `uninitializeShareGroupState`, run by `GroupCoordinatorService` once the
//! persister answers): success moves the partitions from initializing to
//! initialized, so the next heartbeat assigns them; failure drops them from
//! initializing, so the next heartbeat asks again.

use std::collections::BTreeMap;
use std::sync::Arc;

use group_offsets::{ModernGroupRecord, Record};
use group_types::TopicId;

use super::group::{InitTopic, ShareState};
use crate::core::{CoordinatorCore, Effects, GroupKind, PendingWrite, Undo};

impl CoordinatorCore {
    /// The share partitions share groups need state for, to ask of the share
    /// coordinator (`persisterInitialize`): each released once the heartbeat that
    /// asked is durable, and handed out once. The answer goes back through
    /// [`share_group_state_initialized`](Self::share_group_state_initialized).
    pub fn take_share_state_initializations(&mut self) -> Vec<group_types::InitializeShareGroupStateRequest> {
        std::mem::take(&mut self.engine.share_state_initializations)
    }

    /// True when initializations wait to be taken.
    pub fn has_share_state_initializations(&self) -> bool {
        !self.engine.share_state_initializations.is_empty()
    }

    /// The share coordinator answered the initialization of `partitions` (per
    /// topic id) of share group `group_id`: `initialized` when it succeeded.
    /// Writes the group's new state record; nothing when there is nothing to
    /// change (the group is gone, or the partitions are not initializing).
    pub fn share_group_state_initialized(
        &mut self,
        now_ms: i64,
        group_id: &str,
        partitions: &[(TopicId, Vec<i32>)],
        initialized: bool,
    ) -> Effects {
        self.share_step(now_ms, |core| core.apply_share_initialization(group_id, partitions, initialized))
    }

    pub(crate) fn apply_share_initialization(
        &mut self,
        group_id: &str,
        partitions: &[(TopicId, Vec<i32>)],
        ok: bool,
    ) {
        let now = self.engine.now;
        let image = self.engine.image.clone();
        let Some(g) = self.groups.get_mut(group_id).and_then(GroupKind::share_mut) else { return };
        let current = g.share_state.as_deref().cloned();
        let next = match (ok, current) {
            (false, None) => return,
            (true, None) => {
                let mut next = ShareState::default();
                for (id, parts) in partitions {
                    let name = image.topic_by_id(*id).map_or_else(String::new, |t| t.name.to_string());
                    next.initialized.insert(
                        *id,
                        InitTopic { name, partitions: parts.iter().copied().collect(), timestamp_ms: now },
                    );
                }
                next
            }
            (true, Some(mut next)) => {
                for (id, parts) in partitions {
                    let name = next
                        .initializing
                        .get(id)
                        .map(|t| t.name.clone())
                        .or_else(|| image.topic_by_id(*id).map(|t| t.name.to_string()))
                        .unwrap_or_default();
                    let entry = next.initialized.entry(*id).or_insert_with(|| InitTopic {
                        name,
                        partitions: Default::default(),
                        timestamp_ms: now,
                    });
                    entry.partitions.extend(parts);
                    remove_partitions(&mut next.initializing, *id, parts);
                }
                next
            }
            (false, Some(mut next)) => {
                if next.initializing.is_empty() || partitions.is_empty() {
                    return;
                }
                for (id, parts) in partitions {
                    remove_partitions(&mut next.initializing, *id, parts);
                }
                next
            }
        };
        let group: Arc<str> = Arc::from(group_id);
        let record = ModernGroupRecord::ShareStatePartitionMetadata {
            group_id: group.clone(),
            value: Some(Box::new(next.value())),
        };
        let mut changes = Vec::new();
        g.replay(&record, now, Some(&mut changes));
        self.engine.timeline.push(Undo::Share { group: group.clone(), changes });
        let pending = PendingWrite::ShareHeartbeat { answer: None, initialize: None };
        self.write_group_records(&group, vec![Record::Modern(record)], pending);
    }
}

/// `parts` of topic `id` are no longer in `map` (the topic goes once it has none).
fn remove_partitions(map: &mut BTreeMap<TopicId, InitTopic>, id: TopicId, parts: &[i32]) {
    if let Some(t) = map.get_mut(&id) {
        for p in parts {
            t.partitions.remove(p);
        }
        if t.partitions.is_empty() {
            map.remove(&id);
        }
    }
}

impl CoordinatorCore {
    /// Topics `deleted` left the cluster (`GroupMetadataManager.maybeCleanupShareGroupState`,
    /// run before the image without them): every share group whose state names one
    /// writes its state again without them (the share coordinator drops their state
    /// on its own, from the same metadata). The caller then installs the new image.
    pub fn share_topics_deleted(&mut self, now_ms: i64, deleted: &[TopicId]) -> Effects {
        let mut out = Effects::default();
        if deleted.is_empty() {
            return out;
        }
        std::mem::swap(&mut self.engine.fx, &mut out);
        self.begin(now_ms);
        let mut ids: Vec<Arc<str>> = self
            .groups
            .iter()
            .filter_map(|(id, g)| {
                let state = g.share()?.share_state.as_deref()?;
                let names = |t: &TopicId| {
                    state.initializing.contains_key(t)
                        || state.initialized.contains_key(t)
                        || state.deleting.contains_key(t)
                };
                deleted.iter().any(names).then(|| id.clone())
            })
            .collect();
        // In id order, so that a step's records do not depend on the map's order.
        ids.sort_unstable();
        let now = self.engine.now;
        for id in ids {
            let Some(g) = self.groups.get_mut(&id).and_then(GroupKind::share_mut) else { continue };
            let Some(mut next) = g.share_state.as_deref().cloned() else { continue };
            for t in deleted {
                next.initializing.remove(t);
                next.initialized.remove(t);
                next.deleting.remove(t);
            }
            let record = ModernGroupRecord::ShareStatePartitionMetadata {
                group_id: id.clone(),
                value: Some(Box::new(next.value())),
            };
            let mut changes = Vec::new();
            g.replay(&record, now, Some(&mut changes));
            self.engine.timeline.push(Undo::Share { group: id.clone(), changes });
            let pending = PendingWrite::ShareHeartbeat { answer: None, initialize: None };
            self.write_group_records(&id, vec![Record::Modern(record)], pending);
        }
        self.end();
        std::mem::swap(&mut self.engine.fx, &mut out);
        out
    }
}
