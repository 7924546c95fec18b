//! Transactional offsets in the core, as Kafka 4.2's `OffsetMetadataManager`
//! answers them (`OffsetMetadataManagerTest`'s transactional cases:
//! `testGenericGroupTransactionalOffsetCommit*`,
//! `testConsumerGroupTransactionalOffsetCommit*`, `testReplayTransactionEndMarker*`,
//! `testFetchOffsetsWithPendingTransactionalOffsets`, `testDeleteOffsetsWithPending*`,
//! `testCleanupExpiredOffsetsWithPendingTransactionalOffsets`), and a model of
//! Kafka's record-offset rule that every sequence of commits and markers must
//! follow, through a reload of what the core wrote too.

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use group_offsets::{GroupMetadataRecord, MemberMetadataRecord, Record, fold};
use group_types::{
    ConsumerGroupHeartbeatRequest, DeleteGroupsRequest, ErrorCode, GroupId, GroupInstanceId, MemberId,
    OffsetCommitData, OffsetCommitRequest, OffsetDeleteRequest, OffsetFetchRequest, TopicId,
    TransactionResult, TxnOffsetCommitRequest, WriteTxnMarkersRequest,
};
use proptest::prelude::*;
use rstest::rstest;

use crate::config::CoordinatorConfig;
use crate::core::{CoordinatorCore, Effects, Request, RequestId, Response, Write};
use crate::{MetadataImage, TopicImage};

/// A core, the records it wrote, and the writes it holds back.
struct Sim {
    core: CoordinatorCore,
    next: u64,
    now: i64,
    written: Vec<Record>,
    /// Writes not completed yet (when `hold` is set).
    held: Vec<Write>,
    hold: bool,
}

impl Sim {
    fn new() -> Sim {
        let mut core = CoordinatorCore::new(CoordinatorConfig::default());
        let image = MetadataImage::new(1, [TopicImage::new(TopicId::from_u128(1), "foo", 3)]);
        core.update_metadata_image(Arc::new(image));
        Sim { core, next: 0, now: 1_000, written: Vec::new(), held: Vec::new(), hold: false }
    }

    /// A core that loaded `records`.
    fn loaded(records: Vec<Record>) -> Sim {
        let mut sim = Sim::new();
        let _ = sim.core.load(sim.now, fold(records));
        sim
    }

    fn effects(&mut self, fx: Effects, out: &mut Vec<(RequestId, Response)>) {
        out.extend(fx.responses);
        for write in fx.writes {
            if self.hold {
                self.held.push(write);
                continue;
            }
            if !self.core.is_write_outstanding(write.id) {
                continue;
            }
            self.written.extend(write.records.iter().cloned());
            let fx = self.core.complete_write(self.now, write.id, Ok(()));
            self.effects(fx, out);
        }
    }

    /// Completes (or fails) every held write, oldest first.
    fn release(&mut self, result: Result<(), ErrorCode>) -> Vec<(RequestId, Response)> {
        self.hold = false;
        let mut out = Vec::new();
        for write in std::mem::take(&mut self.held) {
            if !self.core.is_write_outstanding(write.id) {
                continue;
            }
            if result.is_ok() {
                self.written.extend(write.records.iter().cloned());
            }
            let fx = self.core.complete_write(self.now, write.id, result);
            self.effects(fx, &mut out);
        }
        out
    }

    fn ask(&mut self, request: impl Into<Request>) -> Option<Response> {
        self.next += 1;
        let rid = RequestId(self.next);
        let fx = self.core.handle(self.now, rid, request.into());
        let mut out = Vec::new();
        self.effects(fx, &mut out);
        out.into_iter().find(|(id, _)| *id == rid).map(|(_, r)| r)
    }

    fn txn(&mut self, c: Txn<'_>) -> ErrorCode {
        let req = TxnOffsetCommitRequest {
            transactional_id: "tx".to_owned(),
            group_id: GroupId::from(c.group),
            producer_id: c.producer,
            producer_epoch: 0,
            generation_id: c.generation,
            member_id: MemberId::from(c.member),
            group_instance_id: c.instance.map(GroupInstanceId::from),
            api_version: c.version,
            ..Default::default()
        }
        .with_offset(c.topic, c.partition, OffsetCommitData::new(c.offset));
        match self.ask(req) {
            Some(Response::TxnOffsetCommit(r)) => {
                r.error_for(c.topic, c.partition).unwrap_or(ErrorCode::None)
            }
            other => panic!("TxnOffsetCommit answered {other:?}"),
        }
    }

    fn end(&mut self, producer: i64, result: TransactionResult) -> Option<Response> {
        self.ask(WriteTxnMarkersRequest::one(producer, result, &[0]))
    }

    fn plain(&mut self, group: &str, partition: i32, offset: i64) -> ErrorCode {
        let req = OffsetCommitRequest { group_id: GroupId::from(group), ..Default::default() }.with_offset(
            "foo",
            partition,
            OffsetCommitData::new(offset),
        );
        match self.ask(req) {
            Some(Response::OffsetCommit(r)) => r.error_for("foo", partition).unwrap_or(ErrorCode::None),
            other => panic!("OffsetCommit answered {other:?}"),
        }
    }

    /// OffsetFetch of `partitions` of foo (every partition when `None`).
    fn fetch(
        &mut self,
        group: &str,
        partitions: Option<&[i32]>,
        stable: bool,
    ) -> BTreeMap<i32, (i64, ErrorCode)> {
        let mut req = OffsetFetchRequest::all(group);
        req.require_stable = stable;
        if let Some(partitions) = partitions {
            req.topics = Some(BTreeMap::from([("foo".to_owned(), partitions.to_vec())]));
        }
        match self.ask(req) {
            Some(Response::OffsetFetch(r)) => r
                .offsets
                .get("foo")
                .map(|p| p.iter().map(|(p, d)| (*p, (d.offset, d.error_code))).collect())
                .unwrap_or_default(),
            other => panic!("OffsetFetch answered {other:?}"),
        }
    }

    fn committed(&self, group: &str, partition: i32) -> Option<i64> {
        self.core.committed_offset(group, "foo", partition).map(|o| o.offset)
    }

    /// Producer -> partition -> offset of group `group`'s pending offsets.
    fn pending(&self, group: &str) -> BTreeMap<i64, BTreeMap<i32, i64>> {
        let mut out: BTreeMap<i64, BTreeMap<i32, i64>> = BTreeMap::new();
        for (producer, tp, offset) in self.core.pending_transactional_offsets(group) {
            out.entry(producer).or_default().insert(tp.partition, offset.offset);
        }
        out
    }
}

/// One TxnOffsetCommit of one partition.
#[derive(Clone, Copy)]
struct Txn<'a> {
    group: &'a str,
    producer: i64,
    member: &'a str,
    generation: i32,
    instance: Option<&'a str>,
    version: i16,
    topic: &'a str,
    partition: i32,
    offset: i64,
}

fn txn(group: &str) -> Txn<'_> {
    Txn {
        group,
        producer: 1000,
        member: "",
        generation: -1,
        instance: None,
        version: 5,
        topic: "foo",
        partition: 0,
        offset: 10,
    }
}

/// A Stable classic group `g` at generation 1: dynamic member `c1` and static
/// member `c2` (instance `i1`).
fn classic_group() -> Sim {
    let member = |id: &str, instance: Option<&str>| MemberMetadataRecord {
        member_id: MemberId::from(id),
        group_instance_id: instance.map(GroupInstanceId::from),
        client_id: "c".to_owned(),
        client_host: "h".to_owned(),
        rebalance_timeout_ms: 300_000,
        session_timeout_ms: 45_000,
        subscription: Bytes::new(),
        assignment: Bytes::new(),
    };
    let record = GroupMetadataRecord {
        group_id: GroupId::from("g"),
        protocol_type: Some("consumer".into()),
        generation_id: 1,
        protocol_name: Some("range".into()),
        leader_id: Some(MemberId::from("c1")),
        state_timestamp_ms: Some(0),
        members: vec![member("c1", None), member("c2", Some("i1"))],
    };
    Sim::loaded(vec![Record::Group(Box::new(record))])
}

/// `ClassicGroup.validateOffsetCommit` with `isTransactional` (oracle-txn 05, 06).
#[rstest]
#[case::member_and_generation("c1", 1, None, ErrorCode::None)]
#[case::newer_generation("c1", 2, None, ErrorCode::IllegalGeneration)]
#[case::older_generation("c1", 0, None, ErrorCode::IllegalGeneration)]
#[case::unknown_member("nobody", 1, None, ErrorCode::UnknownMemberId)]
#[case::empty_member_with_generation("", 1, None, ErrorCode::UnknownMemberId)]
#[case::pre_kip_447_producer("", -1, None, ErrorCode::None)]
#[case::static_member("c2", 1, Some("i1"), ErrorCode::None)]
#[case::fenced_instance("other", 1, Some("i1"), ErrorCode::FencedInstanceId)]
#[case::unknown_instance("c2", 1, Some("i9"), ErrorCode::UnknownMemberId)]
#[case::instance_without_generation("c2", -1, Some("i1"), ErrorCode::IllegalGeneration)]
fn a_classic_group_checks_the_committer_only_when_named(
    #[case] member: &str,
    #[case] generation: i32,
    #[case] instance: Option<&str>,
    #[case] expected: ErrorCode,
) {
    let mut sim = classic_group();
    let code = sim.txn(Txn { member, generation, instance, ..txn("g") });
    assert_eq!(code, expected);
    let pending = sim.pending("g");
    assert_eq!(pending.is_empty(), expected != ErrorCode::None, "{pending:?}");
}

#[test]
fn a_plain_commit_without_a_member_is_refused_where_a_transactional_one_is_not() {
    let mut sim = classic_group();
    assert_eq!(sim.plain("g", 0, 5), ErrorCode::UnknownMemberId);
    assert_eq!(sim.txn(txn("g")), ErrorCode::None);
}

/// A consumer group `g` whose member `m1` is at epoch 1.
fn consumer_group() -> Sim {
    let mut sim = Sim::new();
    let join = ConsumerGroupHeartbeatRequest {
        group_id: GroupId::from("g"),
        member_id: MemberId::from("m1"),
        member_epoch: 0,
        rebalance_timeout_ms: 60_000,
        subscribed_topic_names: Some(vec!["foo".to_owned()]),
        topic_partitions: Some(Vec::new()),
        ..Default::default()
    };
    match sim.ask(Request::from(join)) {
        Some(Response::ConsumerGroupHeartbeat(r)) => {
            assert_eq!((r.error_code, r.member_epoch), (ErrorCode::None, 1))
        }
        other => panic!("{other:?}"),
    }
    sim
}

/// `ConsumerGroup.validateOffsetCommit` with `isTransactional` (oracle-txn 08):
/// the generation is the member epoch, exactly; a wrong one is
/// ILLEGAL_GENERATION before TxnOffsetCommit v6.
#[rstest]
#[case::member_epoch("m1", 1, 5, ErrorCode::None)]
#[case::older_epoch("m1", 0, 5, ErrorCode::IllegalGeneration)]
#[case::newer_epoch("m1", 2, 5, ErrorCode::IllegalGeneration)]
#[case::unknown_member("nobody", 1, 5, ErrorCode::UnknownMemberId)]
#[case::empty_member_with_epoch("", 1, 5, ErrorCode::UnknownMemberId)]
#[case::no_member_fields("", -1, 5, ErrorCode::None)]
#[case::v0_carries_none("", -1, 0, ErrorCode::None)]
fn a_consumer_group_checks_the_member_epoch(
    #[case] member: &str,
    #[case] generation: i32,
    #[case] version: i16,
    #[case] expected: ErrorCode,
) {
    let mut sim = consumer_group();
    assert_eq!(sim.txn(Txn { member, generation, version, ..txn("g") }), expected);
}

#[rstest]
#[case::simple_producer(-1, "", ErrorCode::None, true)]
#[case::member_of_a_missing_group(-1, "m", ErrorCode::None, true)]
#[case::generation_of_a_missing_group(1, "m", ErrorCode::IllegalGeneration, false)]
fn a_missing_group_is_made_only_for_a_producer_without_generation(
    #[case] generation: i32,
    #[case] member: &str,
    #[case] expected: ErrorCode,
    #[case] exists: bool,
) {
    let mut sim = Sim::new();
    assert_eq!(sim.txn(Txn { member, generation, ..txn("new") }), expected);
    assert_eq!(sim.core.group("new").is_some(), exists);
}

#[test]
fn an_empty_group_id_and_a_share_group_are_refused() {
    let mut sim = Sim::new();
    assert_eq!(sim.txn(txn("")), ErrorCode::InvalidGroupId);
    assert!(sim.core.group("").is_none());
}

#[test]
fn metadata_too_large_refuses_only_its_partition() {
    let mut sim = Sim::new();
    let big = "x".repeat(4097);
    let req = TxnOffsetCommitRequest { group_id: GroupId::from("g"), producer_id: 1, ..Default::default() }
        .with_offset(
            "foo",
            0,
            OffsetCommitData { metadata: Some(big.as_str().into()), ..OffsetCommitData::new(1) },
        )
        .with_offset("foo", 1, OffsetCommitData { metadata: None, ..OffsetCommitData::new(2) });
    let Some(Response::TxnOffsetCommit(r)) = sim.ask(req) else { panic!() };
    assert_eq!(r.error_for("foo", 0), Some(ErrorCode::OffsetMetadataTooLarge));
    assert_eq!(r.error_for("foo", 1), Some(ErrorCode::None));
    assert_eq!(sim.pending("g"), BTreeMap::from([(1, BTreeMap::from([(1, 2)]))]));
}

/// oracle-txn 01, 02, 11: pending offsets are invisible until COMMIT; a
/// `require_stable` fetch answers UNSTABLE_OFFSET_COMMIT for a named pending
/// partition, and a fetch of all lists committed partitions only.
#[test]
fn pending_offsets_show_only_as_unstable_until_their_marker() {
    let mut sim = Sim::new();
    assert_eq!(sim.txn(txn("g")), ErrorCode::None);
    assert_eq!(sim.committed("g", 0), None);
    assert_eq!(
        sim.fetch("g", Some(&[0, 1]), false),
        BTreeMap::from([(0, (-1, ErrorCode::None)), (1, (-1, ErrorCode::None))])
    );
    let unstable = (-1, ErrorCode::UnstableOffsetCommit);
    assert_eq!(
        sim.fetch("g", Some(&[0, 1]), true),
        BTreeMap::from([(0, unstable), (1, (-1, ErrorCode::None))])
    );
    assert!(sim.fetch("g", None, true).is_empty(), "a fetch of all lists committed partitions only");
    assert_eq!(sim.plain("g", 0, 5), ErrorCode::None);
    assert_eq!(sim.fetch("g", None, true), BTreeMap::from([(0, unstable)]));
    assert_eq!(sim.fetch("g", None, false), BTreeMap::from([(0, (5, ErrorCode::None))]));
    sim.end(1000, TransactionResult::Abort);
    assert_eq!(sim.fetch("g", None, true), BTreeMap::from([(0, (5, ErrorCode::None))]));
    assert!(sim.pending("g").is_empty());
}

/// One step of a transactional history on foo-0 and foo-1 of group `g`.
#[derive(Debug, Clone, Copy)]
enum Op {
    /// A TxnOffsetCommit of producer, partition, offset.
    Txn(i64, i32, i64),
    /// A plain OffsetCommit of partition, offset.
    Plain(i32, i64),
    /// The producer's marker: COMMIT (true) or ABORT.
    End(i64, bool),
    /// OffsetDelete of a partition.
    Delete(i32),
}

/// Kafka's rule, by log offset: a pending offset replaces the committed one at
/// COMMIT only if its record is newer; a tombstone drops committed and pending.
#[derive(Debug, Default)]
struct Model {
    log: u64,
    committed: BTreeMap<i32, (i64, u64)>,
    pending: BTreeMap<i64, BTreeMap<i32, (i64, u64)>>,
}

impl Model {
    fn apply(&mut self, op: Op) {
        self.log += 1;
        match op {
            Op::Txn(p, partition, offset) => {
                self.pending.entry(p).or_default().insert(partition, (offset, self.log));
            }
            Op::Plain(partition, offset) => {
                self.committed.insert(partition, (offset, self.log));
            }
            Op::End(p, commit) => {
                for (partition, (offset, at)) in self.pending.remove(&p).unwrap_or_default() {
                    if commit && self.committed.get(&partition).is_none_or(|(_, c)| *c < at) {
                        self.committed.insert(partition, (offset, at));
                    }
                }
            }
            Op::Delete(partition) => {
                self.committed.remove(&partition);
                for offsets in self.pending.values_mut() {
                    offsets.remove(&partition);
                }
                self.pending.retain(|_, o| !o.is_empty());
            }
        }
    }

    fn pending(&self) -> BTreeMap<i64, BTreeMap<i32, i64>> {
        self.pending.iter().map(|(p, o)| (*p, o.iter().map(|(k, (v, _))| (*k, *v)).collect())).collect()
    }
}

impl Sim {
    fn run(&mut self, op: Op) {
        match op {
            Op::Txn(producer, partition, offset) => {
                assert_eq!(self.txn(Txn { producer, partition, offset, ..txn("g") }), ErrorCode::None);
            }
            Op::Plain(partition, offset) => assert_eq!(self.plain("g", partition, offset), ErrorCode::None),
            Op::End(producer, commit) => {
                let result = if commit { TransactionResult::Commit } else { TransactionResult::Abort };
                let Some(Response::WriteTxnMarkers(r)) = self.end(producer, result) else { panic!() };
                assert!(r.iter().all(|(_, _, _, code)| code == ErrorCode::None), "{r:?}");
            }
            // A group that does not exist yet has nothing to delete (GROUP_ID_NOT_FOUND).
            Op::Delete(_) if self.core.group("g").is_none() => {}
            Op::Delete(partition) => {
                let req = OffsetDeleteRequest {
                    group_id: "g".to_owned(),
                    topics: BTreeMap::from([("foo".to_owned(), vec![partition])]),
                };
                let Some(Response::OffsetDelete(r)) = self.ask(req) else { panic!() };
                assert_eq!(r.error_code, ErrorCode::None);
            }
        }
    }

    fn committed_all(&self) -> BTreeMap<i32, i64> {
        (0..2).filter_map(|p| self.committed("g", p).map(|o| (p, o))).collect()
    }
}

/// oracle-txn 12 to 15: which offset a COMMIT leaves committed.
#[rstest]
#[case::later_pending_of_another_producer_wins(
    &[Op::Txn(1, 0, 10), Op::Txn(2, 0, 20), Op::End(2, true), Op::End(1, true)], &[(0, 20)])]
#[case::earlier_pending_commits_then_the_later_one(
    &[Op::Txn(1, 0, 10), Op::Txn(2, 0, 20), Op::End(1, true), Op::End(2, true)], &[(0, 20)])]
#[case::plain_commit_after_pending_wins(&[Op::Txn(1, 0, 10), Op::Plain(0, 5), Op::End(1, true)], &[(0, 5)])]
#[case::pending_after_plain_commit_wins(&[Op::Plain(0, 5), Op::Txn(1, 0, 10), Op::End(1, true)], &[(0, 10)])]
#[case::rewrite_in_one_transaction(&[Op::Txn(1, 0, 10), Op::Txn(1, 0, 12), Op::End(1, true)], &[(0, 12)])]
#[case::stray_and_second_markers(&[Op::End(1, true), Op::Txn(1, 0, 10), Op::End(1, true), Op::End(1, true)], &[(0, 10)])]
#[case::abort_drops(&[Op::Plain(1, 6), Op::Txn(1, 0, 10), Op::Txn(1, 1, 11), Op::End(1, false)], &[(1, 6)])]
#[case::tombstone_drops_pending(&[Op::Txn(1, 0, 10), Op::Txn(1, 1, 11), Op::Delete(0), Op::End(1, true)], &[(1, 11)])]
fn a_commit_keeps_the_newest_record(#[case] ops: &[Op], #[case] expected: &[(i32, i64)]) {
    let mut sim = Sim::new();
    for op in ops {
        sim.run(*op);
    }
    assert_eq!(sim.committed_all(), expected.iter().copied().collect::<BTreeMap<_, _>>());
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (1..4_i64, 0..2_i32, 0..100_i64).prop_map(|(p, t, o)| Op::Txn(p, t, o)),
        2 => (0..2_i32, 0..100_i64).prop_map(|(t, o)| Op::Plain(t, o)),
        3 => (1..4_i64, any::<bool>()).prop_map(|(p, c)| Op::End(p, c)),
        1 => (0..2_i32).prop_map(Op::Delete),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// After any history, the core agrees with Kafka's log-offset rule, and so
    /// does a core that loaded what it wrote (at every cut of the history),
    /// through the COMMIT of every producer still open.
    #[test]
    fn every_history_follows_the_record_offset_rule_through_a_reload(
        ops in proptest::collection::vec(op(), 1..24),
        cut in any::<proptest::sample::Index>(),
    ) {
        let mut sim = Sim::new();
        let mut model = Model::default();
        let cut = cut.index(ops.len());
        let mut reloaded = None;
        for (i, op) in ops.iter().enumerate() {
            sim.run(*op);
            model.apply(*op);
            prop_assert_eq!(sim.pending("g"), model.pending(), "pending after {:?}", &ops[..=i]);
            let committed: BTreeMap<i32, i64> = model.committed.iter().map(|(p, (o, _))| (*p, *o)).collect();
            prop_assert_eq!(sim.committed_all(), committed, "committed after {:?}", &ops[..=i]);
            if i == cut {
                reloaded = Some((Sim::loaded(sim.written.clone()), i));
            }
        }
        let (mut reloaded, at) = reloaded.expect("the cut is a step");
        for op in &ops[at + 1..] {
            reloaded.run(*op);
        }
        for producer in 1..4 {
            sim.run(Op::End(producer, true));
            reloaded.run(Op::End(producer, true));
            model.apply(Op::End(producer, true));
        }
        let committed: BTreeMap<i32, i64> = model.committed.iter().map(|(p, (o, _))| (*p, *o)).collect();
        prop_assert_eq!(sim.committed_all(), committed.clone());
        prop_assert_eq!(reloaded.committed_all(), committed, "reloaded at step {}", at);
    }
}

/// A failed TxnOffsetCommit write leaves nothing pending and no simple group;
/// a failed marker write leaves the transaction open and nothing committed.
#[test]
fn failed_writes_revert_commits_and_markers() {
    let mut sim = Sim::new();
    sim.hold = true;
    assert!(
        sim.ask(
            TxnOffsetCommitRequest { group_id: GroupId::from("g"), producer_id: 7, ..Default::default() }
                .with_offset("foo", 0, OffsetCommitData::new(3))
        )
        .is_none(),
        "answered once written"
    );
    assert_eq!(sim.pending("g").len(), 1, "applied at once");
    let answers = sim.release(Err(ErrorCode::NotCoordinator));
    let Some((_, Response::TxnOffsetCommit(r))) = answers.first() else { panic!("{answers:?}") };
    assert_eq!(r.error_for("foo", 0), Some(ErrorCode::NotCoordinator));
    assert!(sim.pending("g").is_empty());
    assert!(sim.core.group("g").is_none(), "the simple group it made is gone too");

    assert_eq!(sim.txn(Txn { producer: 7, offset: 3, ..txn("g") }), ErrorCode::None);
    sim.hold = true;
    assert!(sim.end(7, TransactionResult::Commit).is_none());
    assert_eq!(sim.committed("g", 0), None, "a read sees committed state only");
    assert!(
        sim.fetch("g", Some(&[0]), true)[&0].1 == ErrorCode::UnstableOffsetCommit,
        "still open when read"
    );
    let answers = sim.release(Err(ErrorCode::NotCoordinator));
    let Some((_, Response::WriteTxnMarkers(r))) = answers.first() else { panic!("{answers:?}") };
    assert!(r.iter().all(|(_, _, _, code)| code == ErrorCode::NotCoordinator));
    assert_eq!(sim.pending("g"), BTreeMap::from([(7, BTreeMap::from([(0, 3)]))]));
    assert_eq!(sim.committed("g", 0), None);
    sim.end(7, TransactionResult::Commit);
    assert_eq!(sim.committed("g", 0), Some(3));
}

/// oracle-txn 17, 18: DeleteGroups drops pending offsets with the group; a
/// consumer group with a member is NON_EMPTY_GROUP.
#[test]
fn deleting_a_group_drops_its_pending_offsets() {
    let mut sim = Sim::new();
    sim.txn(txn("g"));
    sim.txn(Txn { partition: 1, ..txn("g") });
    let Some(Response::DeleteGroups(r)) =
        sim.ask(DeleteGroupsRequest { group_ids: vec![GroupId::from("g")] })
    else {
        panic!()
    };
    assert_eq!(r.results[0].error_code, ErrorCode::None);
    assert!(sim.pending("g").is_empty());
    let tombstones = sim.written.iter().filter(|r| matches!(r, Record::OffsetTombstone { .. })).count();
    assert_eq!(tombstones, 2, "one offset tombstone per pending-only partition, as Kafka writes");
    sim.end(1000, TransactionResult::Commit);
    assert!(sim.core.group("g").is_none(), "a later COMMIT neither materializes nor recreates");
    let mut sim = consumer_group();
    sim.txn(txn("g"));
    let Some(Response::DeleteGroups(r)) =
        sim.ask(DeleteGroupsRequest { group_ids: vec![GroupId::from("g")] })
    else {
        panic!()
    };
    assert_eq!(r.results[0].error_code, ErrorCode::NonEmptyGroup);
    assert_eq!(sim.pending("g").len(), 1);
}

/// oracle-txn 19, 21: an offset an open transaction may replace does not
/// expire, nor does a group with an open transaction.
#[test]
fn expiration_waits_for_open_transactions() {
    let config = CoordinatorConfig {
        offset_retention_ms: 60_000,
        offsets_retention_check_interval_ms: 30_000,
        ..CoordinatorConfig::default()
    };
    let mut sim = Sim::new();
    sim.core = CoordinatorCore::new(config);
    let _ = sim.core.load(0, fold([]));
    sim.now = 0;
    sim.plain("g", 0, 1);
    sim.plain("g", 1, 2);
    sim.txn(Txn { producer: 1, ..txn("g") });
    sim.txn(Txn { producer: 1, ..txn("only") });
    sim.now = 60_000;
    let fx = sim.core.fire_timer(sim.now, &crate::core::TimerKey::OffsetExpiration);
    sim.effects(fx, &mut Vec::new());
    assert_eq!(sim.committed("g", 0), Some(1), "pending on foo-0: kept");
    assert_eq!(sim.committed("g", 1), None, "expired");
    assert!(sim.core.group("only").is_some(), "a group with only pending offsets stays");
    sim.end(1, TransactionResult::Abort);
    sim.now = 90_000;
    let fx = sim.core.fire_timer(sim.now, &crate::core::TimerKey::OffsetExpiration);
    sim.effects(fx, &mut Vec::new());
    assert_eq!(sim.committed("g", 0), None);
    assert!(sim.core.group("g").is_none() && sim.core.group("only").is_none());
}

/// oracle-txn 20: a deleted topic's committed and pending offsets go; other
/// topics' pending offsets stay.
#[test]
fn a_deleted_topic_drops_committed_and_pending_offsets() {
    let mut sim = Sim::new();
    sim.plain("g", 0, 1);
    sim.txn(txn("g"));
    sim.txn(Txn { topic: "bar", ..txn("g") });
    let fx = sim.core.offsets_topics_deleted(sim.now, &["foo"]);
    sim.effects(fx, &mut Vec::new());
    let tombstones = sim.written.iter().filter(|r| matches!(r, Record::OffsetTombstone { .. })).count();
    assert_eq!(tombstones, 2, "one for the committed offset, one for the pending one, as Kafka writes");
    sim.end(1000, TransactionResult::Commit);
    assert_eq!(sim.committed("g", 0), None);
    assert_eq!(sim.core.committed_offset("g", "bar", 0).map(|o| o.offset), Some(10));
}

/// Kafka's shard ignores the producer epoch of commits and markers (the broker's
/// producer-state checks fence old epochs before the coordinator; oracle-txn 15):
/// a marker at another epoch ends the producer's transaction all the same.
#[test]
fn the_producer_epoch_is_not_checked() {
    let mut sim = Sim::new();
    let req = TxnOffsetCommitRequest {
        group_id: GroupId::from("g"),
        producer_id: 3,
        producer_epoch: 5,
        ..Default::default()
    }
    .with_offset("foo", 0, OffsetCommitData::new(4));
    let Some(Response::TxnOffsetCommit(r)) = sim.ask(req) else { panic!() };
    assert_eq!(r.error_for("foo", 0), Some(ErrorCode::None));
    let mut marker = WriteTxnMarkersRequest::one(3, TransactionResult::Commit, &[0]);
    marker.markers[0].producer_epoch = 0;
    sim.ask(marker);
    assert_eq!(sim.committed("g", 0), Some(4));
}
