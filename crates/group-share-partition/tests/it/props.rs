//! Property tests against a per-offset model: for any sequence of fetches,
//! acknowledgements (some of whose writes fail), releases, lock expiries and log
//! start offset moves, every cached offset's state, delivery count, holder and lock
//! deadline equal the model's; an offset is acquired only while available (so never
//! by two members at once, and never again once acknowledged or archived); the start
//! offset only passes terminal records; and the in-flight count stays within Kafka's
//! soft limit (the limit, plus the rest of the fetched batch that crossed it).
//!
//! The generated log interleaves producers' transactions, committed and aborted.
//! Read uncommitted, they are plain records; read committed, no offset of an
//! aborted transaction is ever acquired, and the fetched ones that were acquired are
//! archived as they stood (delivery count kept, no holder, no lock).

use std::collections::{BTreeMap, BTreeSet};

use group_share_partition::{
    AbortedTransaction, AcknowledgeType, AcknowledgementBatch, AcquireMode, AcquireRequest,
    ControlRecordType, FetchedBatch, IsolationLevel, PersisterFailure, ReadShareGroupStateResult,
    RecordState, SharePartition, SharePartitionConfig,
};
use group_types::{GroupId, MemberId, TopicId};
use proptest::prelude::*;

const LOCK_MS: i64 = 100;
const MAX_DELIVERY: i32 = 3;
const MAX_IN_FLIGHT: i32 = 30;

#[derive(Debug, Clone)]
enum Op {
    Acquire { member: u8, record_limit: bool, max_fetch: i32, batch_size: i32, batches: usize },
    Ack { member: u8, from: i64, len: i64, ack: u8, fail: bool },
    Release { member: u8 },
    Advance(i64),
    LogStart(i64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u8..3, any::<bool>(), 1i32..25, 1i32..12, 1usize..4).prop_map(
            |(member, record_limit, max_fetch, batch_size, batches)| Op::Acquire {
                member, record_limit, max_fetch, batch_size, batches
            }
        ),
        4 => (0u8..3, -3i64..40, 1i64..12, 1u8..=4, prop::bool::weighted(0.2))
            .prop_map(|(member, from, len, ack, fail)| Op::Ack { member, from, len, ack, fail }),
        1 => (0u8..3).prop_map(|member| Op::Release { member }),
        2 => (0i64..120).prop_map(Op::Advance),
        1 => (1i64..8).prop_map(Op::LogStart),
    ]
}

/// One offset as the model sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Rec {
    state: RecordState,
    count: i32,
    member: Option<u8>,
    deadline: Option<i64>,
}

fn member_id(m: u8) -> MemberId {
    MemberId::from(format!("member-{m}"))
}

/// One entry of the generated log: a batch of `len` records of `kind` (0 plain, 1
/// transactional data of `producer`, 2 its commit marker, 3 its abort marker; a marker
/// of a producer without an open transaction is plain data).
type Entry = (u8, u8, u8);

/// A log and its transactions: the record batches, every aborted transaction with its
/// abort marker's offset, and the offsets of aborted transactional data.
struct Log {
    batches: Vec<FetchedBatch>,
    aborted: Vec<(AbortedTransaction, i64)>,
    aborted_offsets: BTreeSet<i64>,
}

/// The log's record batches, by first offset, from `entries`; transactions still
/// open at the end are committed.
fn log_batches(entries: &[Entry]) -> Log {
    let mut next = 0;
    let mut batches = Vec::new();
    let mut aborted = Vec::new();
    let mut aborted_offsets = BTreeSet::new();
    // Per producer, the open transaction's first offset and data batches.
    let mut open: BTreeMap<i64, (i64, Vec<(i64, i64)>)> = BTreeMap::new();
    let marker = |next: &mut i64, producer: i64, ty: ControlRecordType, batches: &mut Vec<FetchedBatch>| {
        batches.push(FetchedBatch::control(*next, *next, producer, ty));
        *next += 1;
    };
    for (len, kind, producer) in entries {
        let len = i64::from(*len);
        let producer = i64::from(*producer);
        match (kind, open.contains_key(&producer)) {
            (1, _) => {
                batches.push(FetchedBatch::transactional(next, next + len - 1, producer));
                open.entry(producer).or_insert((next, Vec::new())).1.push((next, next + len - 1));
                next += len;
            }
            (2, true) => {
                open.remove(&producer);
                marker(&mut next, producer, ControlRecordType::Commit, &mut batches);
            }
            (3, true) => {
                let (first, data) = open.remove(&producer).unwrap_or_default();
                aborted.push((AbortedTransaction::new(producer, first), next));
                for (f, l) in data {
                    aborted_offsets.extend(f..=l);
                }
                marker(&mut next, producer, ControlRecordType::Abort, &mut batches);
            }
            _ => {
                batches.push(FetchedBatch::new(next, next + len - 1));
                next += len;
            }
        }
    }
    for producer in open.into_keys() {
        marker(&mut next, producer, ControlRecordType::Commit, &mut batches);
    }
    Log { batches, aborted, aborted_offsets }
}

/// The aborted transactions a fetch of `fetched` answers: those overlapping it (as
/// the log's transaction index gives them).
fn aborted_in(log: &Log, fetched: &[FetchedBatch]) -> Vec<AbortedTransaction> {
    let (Some(first), Some(last)) = (fetched.first(), fetched.last()) else { return Vec::new() };
    log.aborted
        .iter()
        .filter(|(t, marker)| *marker >= first.base_offset && t.first_offset <= last.last_offset)
        .map(|(t, _)| *t)
        .collect()
}

/// Releases a held record as a lock timeout or a release does.
fn release(r: &mut Rec, offset: i64, start: i64) {
    r.state = if offset < start || r.count >= MAX_DELIVERY {
        RecordState::Archived
    } else {
        RecordState::Available
    };
    r.member = None;
    r.deadline = None;
}

fn check(
    sp: &mut SharePartition,
    model: &BTreeMap<i64, Rec>,
    start: i64,
    longest_batch: i64,
) -> Result<(), String> {
    for (o, want) in model {
        match sp.record(*o) {
            None => {
                if *o >= sp.start_offset() || !want.state.is_terminal() {
                    return Err(format!("offset {o} dropped while {want:?}, start {}", sp.start_offset()));
                }
            }
            Some(have) => {
                let member = (!have.member_id.as_str().is_empty()).then(|| {
                    have.member_id.as_str().trim_start_matches("member-").parse::<u8>().unwrap_or(u8::MAX)
                });
                let have = Rec {
                    state: have.state,
                    count: have.delivery_count,
                    member,
                    deadline: have.lock_deadline_ms,
                };
                if have != *want {
                    return Err(format!("offset {o}: {have:?}, model {want:?}"));
                }
            }
        }
    }
    if sp.start_offset() < start {
        return Err(format!("start offset went back to {}", sp.start_offset()));
    }
    if sp.in_flight_record_count() > i64::from(MAX_IN_FLIGHT) + longest_batch - 1 {
        return Err(format!("{} records in flight", sp.in_flight_record_count()));
    }
    let first_available = model.iter().find(|(_, r)| r.state == RecordState::Available).map(|(o, _)| *o);
    if let Some(first) = first_available
        && sp.next_fetch_offset() != first
    {
        return Err(format!("next fetch offset {}, model's first available {first}", sp.next_fetch_offset()));
    }
    Ok(())
}

fn run(entries: &[Entry], committed: bool, ops: &[Op]) -> Result<(), String> {
    let config = SharePartitionConfig {
        max_in_flight_records: MAX_IN_FLIGHT,
        max_delivery_count: MAX_DELIVERY,
        record_lock_duration_ms: LOCK_MS,
    };
    let topic = TopicId::from_u128(9);
    let mut sp =
        SharePartition::new(GroupId::from_static("g"), topic, 0, 0, config).map_err(|e| e.to_string())?;
    sp.begin_initialize().map_err(|e| e.to_string())?;
    let read = ReadShareGroupStateResult {
        topic_id: topic,
        partition: 0,
        error_code: 0,
        state_epoch: 0,
        start_offset: 0,
        state_batches: vec![],
    };
    sp.complete_initialize(Ok(read), None).map_err(|e| e.to_string())?;
    let txns = log_batches(entries);
    let log = &txns.batches;
    let log_end = log.last().map_or(0, |b| b.last_offset + 1);
    let longest = log.iter().map(|b| b.last_offset - b.base_offset + 1).max().unwrap_or(1);
    let isolation = if committed { IsolationLevel::ReadCommitted } else { IsolationLevel::ReadUncommitted };
    let mut model: BTreeMap<i64, Rec> = BTreeMap::new();
    let mut start = 0;
    let mut now = 0;
    for (step, op) in ops.iter().enumerate() {
        let ctx = |e: String| format!("step {step} {op:?}: {e}");
        match op {
            Op::Acquire { member, record_limit, max_fetch, batch_size, batches } => {
                let fetch = sp.next_fetch_offset();
                let first = log.iter().position(|b| b.last_offset >= fetch);
                let fetched: &[FetchedBatch] = match first {
                    Some(i) => &log[i..(i + batches).min(log.len())],
                    None => &[],
                };
                let request = AcquireRequest {
                    mode: if *record_limit { AcquireMode::RecordLimit } else { AcquireMode::BatchOptimized },
                    batch_size: *batch_size,
                    max_fetch_records: *max_fetch,
                    fetch_offset: fetch,
                    batches: fetched,
                    isolation,
                    aborted_transactions: &aborted_in(&txns, fetched),
                };
                let got = sp.acquire(&member_id(*member), request, now).map_err(|e| ctx(e.to_string()))?;
                if committed {
                    // No offset of an aborted transaction is delivered; the fetched ones
                    // that were acquired, by anyone, are archived as they stood.
                    for o in got.records.iter().flat_map(|a| a.first_offset..=a.last_offset) {
                        if txns.aborted_offsets.contains(&o) {
                            return Err(ctx(format!("acquired offset {o} of an aborted transaction")));
                        }
                    }
                    let fetched_aborted = fetched
                        .iter()
                        .flat_map(|b| b.base_offset..=b.last_offset)
                        .filter(|o| txns.aborted_offsets.contains(o));
                    for o in fetched_aborted {
                        let before = model.get(&o).cloned();
                        let have = sp.record(o);
                        let archived = |count: i32| Rec {
                            state: RecordState::Archived,
                            count,
                            member: None,
                            deadline: None,
                        };
                        let have_rec = have.as_ref().map(|h| Rec {
                            state: h.state,
                            count: h.delivery_count,
                            member: None,
                            deadline: h.lock_deadline_ms,
                        });
                        let ok = match (&before, &have_rec) {
                            (Some(b), Some(h)) if b.state == RecordState::Acquired => *h == archived(b.count),
                            // Acquired by this fetch and archived, or not acquired.
                            (Some(b), Some(h)) if b.state == RecordState::Available => {
                                *h == archived(b.count + 1) || h.state == RecordState::Available
                            }
                            (Some(b), Some(h)) => h.state == b.state,
                            (Some(_), None) | (None, None) => true,
                            (None, Some(h)) => *h == archived(1) || h.state == RecordState::Available,
                        };
                        if !ok {
                            return Err(ctx(format!("aborted offset {o}: {have:?}, before {before:?}")));
                        }
                        if let Some(h) = have_rec
                            && h.state == RecordState::Archived
                        {
                            model.insert(o, h);
                        }
                    }
                }
                let mut counted = 0;
                for a in &got.records {
                    for o in a.first_offset..=a.last_offset {
                        counted += 1;
                        let r = model.entry(o).or_insert(Rec {
                            state: RecordState::Available,
                            count: 0,
                            member: None,
                            deadline: None,
                        });
                        if r.state != RecordState::Available || o < start {
                            return Err(ctx(format!("acquired offset {o} in {r:?}")));
                        }
                        r.state = RecordState::Acquired;
                        r.count += 1;
                        r.member = Some(*member);
                        r.deadline = Some(now + LOCK_MS);
                        if i32::from(a.delivery_count) != r.count {
                            return Err(ctx(format!(
                                "offset {o} delivered {} times, model {}",
                                a.delivery_count, r.count
                            )));
                        }
                    }
                }
                if counted != got.count {
                    return Err(ctx(format!("count {} for {counted} offsets", got.count)));
                }
                if *record_limit && got.count > *max_fetch {
                    return Err(ctx(format!("record limit {max_fetch}, acquired {}", got.count)));
                }
                // Offsets cached but not acquired (the rest of a record-limit batch) are available.
                let end = sp.end_offset();
                for o in start..=end.min(log_end - 1) {
                    if !model.contains_key(&o) && sp.record(o).is_some() {
                        model.insert(
                            o,
                            Rec { state: RecordState::Available, count: 0, member: None, deadline: None },
                        );
                    }
                }
            }
            Op::Ack { member, from, len, ack, fail } => {
                let (first, last) = (*from, *from + *len - 1);
                let batch = AcknowledgementBatch::per_offset(first, last, vec![*ack]);
                let outcome = sp.acknowledge(&member_id(*member), &[batch], now);
                // The model: every cached offset at or past the start offset is held by the member.
                let lo = first.max(start);
                let mut first_bad = None;
                for o in lo..=last {
                    let held = sp.record(o).is_some()
                        && model
                            .get(&o)
                            .is_some_and(|r| r.state == RecordState::Acquired && r.member == Some(*member));
                    if !held {
                        first_bad = Some(o);
                        break;
                    }
                }
                let uncached = (lo..=last).any(|o| sp.record(o).is_none());
                let renew = *ack == AcknowledgeType::Renew.id();
                match (outcome, first_bad) {
                    (Err(_), None) => return Err(ctx("refused an acknowledgement the model allows".into())),
                    (Ok(_), Some(o)) if lo <= last => {
                        return Err(ctx(format!("accepted although offset {o} is not held")));
                    }
                    (Err(_), Some(bad)) => {
                        // Renewals before the failing offset stay, as in Kafka.
                        if renew && !uncached {
                            for o in lo..bad {
                                if let Some(r) = model.get_mut(&o) {
                                    r.deadline = Some(now + LOCK_MS);
                                }
                            }
                        }
                    }
                    (Ok(write), _) => {
                        let failed = match write {
                            Some(w) => {
                                let result =
                                    if *fail { Err(PersisterFailure::ErrorCode(69)) } else { Ok(()) };
                                let done = sp.complete_write(w.id, result).map_err(|e| ctx(e.to_string()))?;
                                done.result.is_err()
                            }
                            None => false,
                        };
                        if !failed {
                            for o in lo..=last {
                                let Some(r) = model.get_mut(&o) else { continue };
                                match AcknowledgeType::from_id(*ack) {
                                    Some(AcknowledgeType::Accept) => {
                                        r.state = RecordState::Acknowledged;
                                        r.member = None;
                                        r.deadline = None;
                                    }
                                    Some(AcknowledgeType::Release) => release(r, o, start),
                                    Some(AcknowledgeType::Reject) => {
                                        r.state = RecordState::Archived;
                                        r.member = None;
                                        r.deadline = None;
                                    }
                                    _ => r.deadline = Some(now + LOCK_MS),
                                }
                            }
                        }
                    }
                }
            }
            Op::Release { member } => {
                if let Some(w) =
                    sp.release_acquired_records(&member_id(*member)).map_err(|e| ctx(e.to_string()))?
                {
                    sp.complete_write(w.id, Ok(())).map_err(|e| ctx(e.to_string()))?;
                }
                for (o, r) in model.iter_mut() {
                    if r.state == RecordState::Acquired && r.member == Some(*member) {
                        release(r, *o, start);
                    }
                }
            }
            Op::Advance(ms) => {
                now += ms;
                for w in sp.expire_locks(now) {
                    // Half the timeout writes fail: Kafka keeps their changes either way.
                    let result = if w.id.0 % 2 == 0 { Ok(()) } else { Err(PersisterFailure::NoAnswer) };
                    sp.complete_write(w.id, result).map_err(|e| ctx(e.to_string()))?;
                }
                for (o, r) in model.iter_mut() {
                    if r.state == RecordState::Acquired && r.deadline.is_some_and(|d| d <= now) {
                        release(r, *o, start);
                    }
                }
            }
            Op::LogStart(delta) => {
                let to = start + delta;
                sp.update_cache_and_offsets(to);
                for (_, r) in model.range_mut(start..to) {
                    if r.state == RecordState::Available {
                        r.state = RecordState::Archived;
                    }
                }
                start = to;
            }
        }
        // The start offset moves only past terminal records.
        let new_start = sp.start_offset();
        for o in start..new_start {
            if let Some(r) = model.get(&o)
                && !r.state.is_terminal()
            {
                return Err(ctx(format!("start offset {new_start} passed offset {o} in {r:?}")));
            }
        }
        start = start.max(new_start);
        model.retain(|o, _| sp.record(*o).is_some() || *o >= start);
        check(&mut sp, &model, start, longest).map_err(ctx)?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn share_partition_matches_the_per_offset_model(
        entries in prop::collection::vec((1u8..8, prop::sample::select(vec![0u8, 0, 1, 2, 3]), 1u8..4), 4..20),
        committed in any::<bool>(),
        ops in prop::collection::vec(op(), 1..60),
    ) {
        let outcome = run(&entries, committed, &ops);
        prop_assert!(outcome.is_ok(), "{}", outcome.err().unwrap_or_default());
    }
}
