//! Loading a coordinator partition: every stored record replayed, for every
//! kind of group (a group's offsets together, so that the group is looked up
//! once), then what Kafka arms once a partition is loaded
//! (`GroupCoordinatorShard.replay`, then `GroupMetadataManager.onLoaded`).
//!
//! [`CoordinatorCore::replay`] is the one place a record enters the core's
//! state at load. A consumer group changes by the same replay while serving
//! (`ConsumerGroup::replay`); a classic group's handlers write its record
//! without replaying it, as Kafka's do (`core/classic/load.rs`); offsets
//! change as their records say, with an undo entry (`core/offsets/`).

use std::sync::Arc;

use group_offsets::{ModernGroupRecord, Record, StoredGroups, record_type};
use group_types::TopicPartition;

use crate::core::classic::Group;
use crate::core::consumer::ConsumerGroup;
use crate::core::share::ShareGroup;
use crate::core::{CoordinatorCore, Effects, GroupKind};

impl CoordinatorCore {
    /// Restores what storage holds into a core that holds nothing yet
    /// (coordinator start, or a partition's load): groups with members come
    /// back Stable with every member's session armed, the others Empty;
    /// offsets without a group record become simple groups; consumer groups
    /// come back as their records left them, sessions armed.
    pub fn load(&mut self, now_ms: i64, stored: StoredGroups) -> Effects {
        self.begin(now_ms);
        self.arm_expiration();
        let StoredGroups { groups, offsets, mut consumer, txn_offsets } = stored;
        // A store keeps the last record of each key, not their order: this is
        // an order their log could have had (group records, then each consumer
        // group's records as its writes order them, then offsets).
        consumer.sort_by(|a, b| a.group_id().cmp(b.group_id()).then(replay_rank(a).cmp(&replay_rank(b))));
        for record in groups {
            self.replay(Record::Group(Box::new(record)));
        }
        for record in consumer {
            self.replay(Record::Modern(record));
        }
        for group in offsets {
            let partitions = group.offsets.into_iter().flat_map(|(topic, partitions)| {
                let topic: Arc<str> = Arc::from(topic);
                partitions.into_iter().map(move |(p, offset)| (TopicPartition::new(topic.clone(), p), offset))
            });
            self.replay_offsets(Arc::from(group.group_id), partitions);
        }
        for record in txn_offsets {
            self.replay(Record::TxnOffset(Box::new(record)));
        }
        self.on_loaded();
        self.finish()
    }

    /// Applies one stored record, as Kafka's `GroupCoordinatorShard.replay`
    /// dispatches it: a group record makes its classic group anew, an offset
    /// its partition's commit (creating a simple group when the id has no
    /// group, `OffsetMetadataManager.replay`), a consumer-group record its
    /// change. A tombstone removes what its key held. Nothing is undone or
    /// armed here: a load has no write in flight, and [`Self::on_loaded`]
    /// arms what the loaded groups need.
    pub(crate) fn replay(&mut self, record: Record) {
        match record {
            Record::Group(record) => {
                let g = Group::from_record(*record, self.engine.now);
                self.groups.insert(g.id.clone(), GroupKind::Classic(g));
            }
            Record::GroupTombstone { group_id } => {
                // The classic record's key only: a consumer group under the id
                // has keys of its own, as the store's fold keeps them apart.
                // Offsets the group still has keep a simple group, as a load
                // of the folded store makes of them.
                if matches!(self.groups.get(&group_id), Some(GroupKind::Classic(_))) {
                    let has_offsets = self.offsets.get(&group_id).is_some_and(|o| !o.is_empty())
                        || self.transactions.group_has_pending(&group_id);
                    if has_offsets {
                        let g = Group::new(group_id.clone(), self.engine.now);
                        self.groups.insert(group_id, GroupKind::Classic(g));
                    } else {
                        self.groups.remove(&group_id);
                    }
                }
            }
            Record::Offset { group_id, partition, offset } => {
                self.replay_offsets(group_id, std::iter::once((partition, offset)))
            }
            Record::OffsetTombstone { group_id, partition } => self.offsets.set(&group_id, partition, None),
            // A pending transactional offset; a group with only these is a simple
            // group too (`OffsetMetadataManager.replay` creates it either way).
            Record::TxnOffset(record) => {
                self.ensure_simple_group(&record.group_id);
                self.transactions.load(*record);
            }
            Record::TxnOffsetTombstone { group_id, producer_id, partition } => {
                if let Some(mut offsets) = self.transactions.get(&group_id, producer_id).cloned() {
                    offsets.remove(&partition);
                    self.transactions.set(&group_id, producer_id, Some(offsets));
                }
            }
            Record::Modern(record @ ModernGroupRecord::ShareState { .. }) => self.load_share_state(&record),
            Record::Modern(record) if is_share_record(&record) => {
                let id = record.group_id().clone();
                if matches!(record, ModernGroupRecord::ShareGroupMetadata { value: None, .. }) {
                    if self.groups.get(&id).and_then(GroupKind::share).is_some() {
                        self.groups.remove(&id);
                    }
                    return;
                }
                // A share group's record replaces whatever else the id held.
                if self.groups.get(&id).and_then(GroupKind::share).is_none() {
                    self.groups.insert(id.clone(), GroupKind::Share(Box::new(ShareGroup::new())));
                }
                let now = self.engine.now;
                if let Some(g) = self.groups.get_mut(&id).and_then(GroupKind::share_mut) {
                    g.replay(&record, now, None);
                }
            }
            Record::Modern(record) => {
                let id = record.group_id().clone();
                if matches!(record, ModernGroupRecord::GroupMetadata { value: None, .. }) {
                    if self.consumer_group_ref(&id).is_some() {
                        self.groups.remove(&id);
                    }
                    return;
                }
                // A consumer group's record replaces whatever else the id held
                // (its offsets, beside it, stay).
                if self.consumer_group_ref(&id).is_none() {
                    let cg = Box::new(ConsumerGroup::new(id.clone(), self.engine.now));
                    self.groups.insert(id.clone(), GroupKind::Consumer(cg));
                }
                if let Some(cg) = self.consumer_group_mut(&id) {
                    cg.replay(&record, None);
                }
            }
            // A kind of record added to the store's codec before the core learnt
            // it: the codec decoded it, so it is well formed; skipping it loses
            // only what this core could not serve anyway.
            other => tracing::error!(
                target: "group_coordinator",
                record = ?other,
                "a stored record of a kind this coordinator does not replay was skipped"
            ),
        }
    }

    /// Offset records of one group, replayed in order as [`Self::replay`]
    /// replays each, with the group looked up once rather than per partition
    /// (a load replays a group's offsets together).
    fn replay_offsets(
        &mut self,
        group_id: Arc<str>,
        offsets: impl IntoIterator<Item = (TopicPartition, group_types::OffsetAndMetadata)>,
    ) {
        self.ensure_simple_group(&group_id);
        let cache = self.offsets.entry(&group_id);
        for (partition, offset) in offsets {
            cache.insert(partition, offset);
        }
    }

    /// Makes a simple (empty classic) group of `group_id` if no group has the id.
    fn ensure_simple_group(&mut self, group_id: &Arc<str>) {
        if !self.groups.contains_key(group_id) {
            let g = Group::new(group_id.clone(), self.engine.now);
            self.groups.insert(group_id.clone(), GroupKind::Classic(g));
        }
    }

    /// Arms what every loaded group needs (`GroupMetadataManager.onLoaded`),
    /// group by group in id order so that a load's effects do not depend on
    /// the map's order.
    fn on_loaded(&mut self) {
        let mut ids: Vec<Arc<str>> = self.groups.keys().cloned().collect();
        ids.sort_unstable();
        for id in ids {
            match self.groups.get_mut(&id) {
                Some(GroupKind::Classic(g)) => self.engine.classic_group_loaded(g),
                Some(GroupKind::Consumer(_)) => self.consumer_group_loaded(&id),
                _ => {}
            }
        }
    }
}

/// True for the records of a share group (KIP-932's record types 10 to 15).
fn is_share_record(record: &ModernGroupRecord) -> bool {
    (record_type::SHARE_MEMBER_METADATA..=record_type::SHARE_STATE_PARTITION_METADATA)
        .contains(&record.record_type())
}

/// Where a modern group's record falls among its group's writes: the group's
/// epoch and members first, then targets, then where each member stands.
fn replay_rank(record: &ModernGroupRecord) -> u8 {
    match record {
        ModernGroupRecord::GroupMetadata { .. } | ModernGroupRecord::ShareGroupMetadata { .. } => 0,
        ModernGroupRecord::MemberMetadata { .. } | ModernGroupRecord::ShareMemberMetadata { .. } => 1,
        ModernGroupRecord::RegularExpression { .. }
        | ModernGroupRecord::ShareStatePartitionMetadata { .. } => 2,
        ModernGroupRecord::TargetAssignmentMember { .. }
        | ModernGroupRecord::ShareTargetAssignmentMember { .. } => 3,
        ModernGroupRecord::TargetAssignmentMetadata { .. }
        | ModernGroupRecord::ShareTargetAssignmentMetadata { .. } => 4,
        ModernGroupRecord::CurrentMemberAssignment { .. }
        | ModernGroupRecord::ShareCurrentMemberAssignment { .. } => 5,
        // Share state belongs to no group's state machine: any place will do.
        ModernGroupRecord::ShareState { .. } => 6,
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use group_offsets::{ConsumerGroupMetadataValue, GroupMetadataRecord, MemberMetadataRecord, fold};
    use group_types::{GroupState, OffsetAndMetadata};
    use proptest::prelude::*;
    use rstest::rstest;

    use super::*;
    use crate::config::CoordinatorConfig;
    use crate::core::TimerOp;
    use crate::core::types::TimerKey;
    use crate::snapshot::GroupMetadata;

    fn member(id: &str, rebalance_timeout_ms: i32) -> MemberMetadataRecord {
        MemberMetadataRecord {
            member_id: id.into(),
            client_id: "client".to_owned(),
            client_host: "/10.0.0.1".to_owned(),
            rebalance_timeout_ms,
            session_timeout_ms: 10_000,
            subscription: Bytes::from_static(&[0, 1]),
            assignment: Bytes::from(id.as_bytes().to_vec()),
            ..MemberMetadataRecord::default()
        }
    }

    fn group(id: &str, generation: i32, leader: Option<&str>, members: Vec<MemberMetadataRecord>) -> Record {
        Record::Group(Box::new(GroupMetadataRecord {
            group_id: id.into(),
            protocol_type: Some("consumer".into()),
            generation_id: generation,
            protocol_name: members.first().map(|_| "range".into()),
            leader_id: leader.map(Into::into),
            state_timestamp_ms: Some(7),
            members,
        }))
    }

    fn offset(id: &str, partition: i32, at: i64) -> Record {
        Record::Offset {
            group_id: Arc::from(id),
            partition: TopicPartition::new("t", partition),
            offset: OffsetAndMetadata::new(at, 0),
        }
    }

    fn tombstone(id: &str) -> Record {
        Record::GroupTombstone { group_id: Arc::from(id) }
    }

    fn consumer_epoch(id: &str, epoch: i32, value: bool) -> Record {
        Record::Modern(ModernGroupRecord::GroupMetadata {
            group_id: Arc::from(id),
            value: value.then_some(ConsumerGroupMetadataValue { epoch, metadata_hash: 0 }),
        })
    }

    /// A fresh core that replayed `records` in order, then armed what a load
    /// arms.
    fn replayed(records: Vec<Record>) -> CoordinatorCore {
        let mut core = CoordinatorCore::new(CoordinatorConfig::default());
        core.begin(100);
        for record in records {
            core.replay(record);
        }
        core.on_loaded();
        let _ = core.finish();
        core
    }

    /// One row per rule of Kafka's `GroupMetadataManager.replay` and
    /// `OffsetMetadataManager.replay` (as `GroupMetadataManagerTest` and
    /// `OffsetMetadataManagerTest` check them): what group `g` is after `records`.
    #[rstest]
    #[case::members_make_it_stable(
        vec![group("g", 3, Some("b"), vec![member("a", 5_000), member("b", 5_000)])],
        Some((GroupState::Stable, 3, Some("b"), 2, 0)))]
    #[case::no_members_make_it_empty(vec![group("g", 4, None, vec![])], Some((GroupState::Empty, 4, None, 0, 0)))]
    #[case::a_leader_that_is_not_a_member_is_replaced_by_the_first(
        vec![group("g", 1, Some("gone"), vec![member("a", 5_000), member("b", 5_000)])],
        Some((GroupState::Stable, 1, Some("a"), 2, 0)))]
    #[case::a_later_record_replaces_the_group(
        vec![group("g", 1, Some("a"), vec![member("a", 5_000)]), group("g", 2, None, vec![])],
        Some((GroupState::Empty, 2, None, 0, 0)))]
    #[case::offsets_without_a_record_make_a_simple_group(
        vec![offset("g", 0, 5), offset("g", 1, 6)],
        Some((GroupState::Empty, 0, None, 0, 2)))]
    #[case::a_tombstone_removes_the_group(vec![group("g", 1, Some("a"), vec![member("a", 5_000)]), tombstone("g")], None)]
    #[case::a_tombstone_leaves_a_simple_group_while_offsets_remain(
        vec![offset("g", 0, 5), group("g", 1, Some("a"), vec![member("a", 5_000)]), tombstone("g")],
        Some((GroupState::Empty, 0, None, 0, 1)))]
    #[case::an_offset_tombstone_removes_only_its_partition(
        vec![offset("g", 0, 5), offset("g", 1, 6), Record::OffsetTombstone { group_id: Arc::from("g"), partition: TopicPartition::new("t", 0) }],
        Some((GroupState::Empty, 0, None, 0, 1)))]
    fn replaying_a_classic_group(
        #[case] records: Vec<Record>,
        #[case] expected: Option<(GroupState, i32, Option<&str>, usize, usize)>,
    ) {
        let core = replayed(records);
        let got = core
            .group("g")
            .map(|g| (g.state, g.generation_id, g.leader_id.clone(), g.members.len(), g.offsets.len()));
        let expected = expected.map(|(s, generation, leader, members, offsets)| {
            (s, generation, leader.map(str::to_owned), members, offsets)
        });
        assert_eq!(got, expected);
    }

    #[test]
    fn a_member_without_a_rebalance_timeout_takes_its_session_timeout() {
        let core = replayed(vec![group("g", 1, Some("a"), vec![member("a", 0), member("b", 9_000)])]);
        let g = core.group("g").expect("loaded");
        let timeouts: Vec<i32> = g.members.iter().map(|m| m.rebalance_timeout_ms).collect();
        assert_eq!(timeouts, vec![10_000, 9_000]);
    }

    #[test]
    fn a_consumer_group_record_replaces_a_classic_group_and_its_tombstone_removes_it() {
        let mut core = replayed(vec![group("g", 1, Some("a"), vec![member("a", 5_000)]), offset("g", 0, 5)]);
        core.begin(100);
        core.replay(consumer_epoch("g", 4, true));
        assert!(core.consumer_group_ref("g").is_some_and(|cg| cg.modern.group_epoch == 4));
        assert_eq!(core.group("g").map(|g| g.offsets.len()), Some(1), "its offsets stay beside it");
        // The classic record's tombstone is not the consumer group's.
        core.replay(tombstone("g"));
        assert!(core.consumer_group_ref("g").is_some());
        core.replay(consumer_epoch("g", 4, false));
        assert!(core.group("g").is_none());
    }

    #[test]
    fn a_load_arms_every_classic_session_and_rebalances_a_group_over_the_size_cap() {
        let config = CoordinatorConfig { group_max_size: 2, ..CoordinatorConfig::default() };
        let mut core = CoordinatorCore::new(config);
        let stored = StoredGroups {
            groups: vec![
                GroupMetadataRecord::clone(
                    match &group(
                        "big",
                        1,
                        Some("a"),
                        vec![member("a", 5_000), member("b", 5_000), member("c", 5_000)],
                    ) {
                        Record::Group(r) => r,
                        _ => unreachable!(),
                    },
                ),
                GroupMetadataRecord::clone(match &group("small", 1, Some("a"), vec![member("a", 5_000)]) {
                    Record::Group(r) => r,
                    _ => unreachable!(),
                }),
            ],
            ..StoredGroups::default()
        };
        let fx = core.load(1_000, stored);
        let sessions: Vec<(String, String, i64)> = fx
            .timers
            .iter()
            .filter_map(|t| match t {
                TimerOp::Arm { key: TimerKey::Session(g, m), deadline_ms } => {
                    Some((g.to_string(), m.to_string(), *deadline_ms))
                }
                _ => None,
            })
            .collect();
        assert_eq!(sessions.len(), 4, "one session per member: {sessions:?}");
        assert!(sessions.iter().all(|(_, _, at)| *at == 11_000));
        assert_eq!(core.group("big").map(|g| g.state), Some(GroupState::PreparingRebalance));
        assert_eq!(core.group("small").map(|g| g.state), Some(GroupState::Stable));
    }

    /// Group records, offsets and their tombstones over a few ids.
    fn classic_record() -> impl Strategy<Value = Record> {
        let id = prop_oneof![Just("a"), Just("b"), Just("c")];
        (id, 0..4u8, 0..3i32, 0..100i64, 0..3usize).prop_map(|(id, kind, n, at, members)| match kind {
            0 => {
                let members: Vec<_> = (0..members).map(|i| member(&format!("m{i}"), 5_000)).collect();
                group(id, n, Some("m1"), members)
            }
            1 => tombstone(id),
            2 => offset(id, n, at),
            _ => Record::OffsetTombstone { group_id: Arc::from(id), partition: TopicPartition::new("t", n) },
        })
    }

    /// What a group keeps that a reader can see: a group with nothing in it
    /// (an empty simple group a tombstone left, which a load of the folded
    /// store never makes) is as good as none.
    fn visible(core: &CoordinatorCore) -> Vec<GroupMetadata> {
        core.groups()
            .into_iter()
            .filter(|g| {
                g.generation_id > 0
                    || !g.members.is_empty()
                    || !g.offsets.is_empty()
                    || g.protocol_type.is_some()
            })
            .collect()
    }

    proptest! {
        /// Loading the store's fold of a log and replaying the log itself,
        /// record by record, leave the same groups and offsets: the load is
        /// the replay, whatever the store kept of the log.
        #[test]
        fn loading_the_fold_of_a_log_is_replaying_the_log(log in proptest::collection::vec(classic_record(), 0..24)) {
            let mut loaded = CoordinatorCore::new(CoordinatorConfig::default());
            let _ = loaded.load(100, fold(log.clone()));
            let replayed = replayed(log);
            prop_assert_eq!(visible(&loaded), visible(&replayed));
        }
    }
}
