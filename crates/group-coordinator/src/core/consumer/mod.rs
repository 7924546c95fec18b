//! KIP-848's consumer protocol beside the classic one: ConsumerGroupHeartbeat,
//! ConsumerGroupDescribe, server-side target assignment and incremental
//! reconciliation (`kip848-semantics.md`).
//!
//! A consumer group lives in the classic [`Group`] that holds its offsets, as
//! `Group::consumer`. Its handlers are Kafka's: each produces records, the records
//! change the group through [`ConsumerGroup::replay`] (so loading is replaying),
//! and the answer is released once the records are durable. A failed write, or
//! an error found after records were produced (an assignor failure), puts the
//! group back as it was before the request: a copy taken before its first record
//! (`Undo::Consumer` in the timeline for writes that fail later).

mod assignment;
mod classic;
mod classic_apis;
mod describe;
mod group;
mod heartbeat;
mod load;
mod migration;
mod reconcile;
mod regex;
mod target;
mod timers;
mod topics;
mod validate;

use std::sync::Arc;

use group_offsets::{ConsumerGroupRecord, Record};

pub(crate) use self::classic_apis::{
    deletion_records, described_as_classic, listed, subscribes_to, validate_offset_commit,
    validate_offset_fetch,
};
pub(crate) use self::group::ConsumerGroup;
pub(crate) use self::validate::validate_heartbeat;
use crate::core::{CoordinatorCore, PendingWrite, RequestId, Response, TimerKey, TimerOp, Undo};

/// Where the group a request works on comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    /// A consumer group that exists.
    Existing,
    /// A group that does not exist yet.
    New,
    /// An empty classic group the consumer group replaces, offsets kept (§8.1).
    ReplacesClassic,
}

/// One request's work on a consumer group: the group as it changes, the records
/// that change it, a copy of it from before the first record, and the timers to
/// arm if the request succeeds.
#[derive(Debug)]
pub(crate) struct Work {
    group_id: Arc<str>,
    cg: Box<ConsumerGroup>,
    origin: Origin,
    before: Option<Box<ConsumerGroup>>,
    records: Vec<ConsumerGroupRecord>,
    /// Classic records that come first (the tombstone of a replaced classic group).
    prefix: Vec<Record>,
    timers: Vec<TimerOp>,
    /// Set when the request turns the group back into a classic one (§8.4):
    /// the members that left.
    downgrade: Option<Vec<Arc<str>>>,
    /// The deadline this work runs for, armed again if its write fails.
    retry: Option<TimerKey>,
}

/// How long a deadline whose write failed waits before it fires again (Kafka's
/// coordinator timer retries failed operations after a backoff).
pub(crate) const TIMER_RETRY_BACKOFF_MS: i64 = 500;

/// What a work's write releases once durable: a request's answer, or nothing
/// (a deadline's work is retried if the write fails).
fn pending_for(answer: Option<(RequestId, Response)>, retry: Option<TimerKey>) -> PendingWrite {
    match (answer, retry) {
        (Some((request, response)), _) => PendingWrite::Respond { request, response: Box::new(response) },
        (None, Some(key)) => PendingWrite::RetryTimer { key },
        (None, None) => PendingWrite::Logged,
    }
}

impl Work {
    /// Emits one record: applies it to the group and keeps it for the write.
    fn emit(&mut self, record: ConsumerGroupRecord) {
        if self.before.is_none() && self.origin == Origin::Existing {
            self.before = Some(self.cg.clone());
        }
        self.cg.replay(&record);
        self.records.push(record);
    }

    fn arm(&mut self, key: TimerKey, deadline_ms: i64) {
        self.timers.push(TimerOp::Arm { key, deadline_ms });
    }

    fn cancel(&mut self, key: TimerKey) {
        self.timers.push(TimerOp::Cancel { key });
    }
}

impl CoordinatorCore {
    /// Takes consumer group `id` out of its classic shell for a request to work on.
    /// `None` when `id` is not a consumer group.
    fn take_consumer(&mut self, id: &str) -> Option<Work> {
        let g = self.groups.get_mut(id)?;
        let cg = g.consumer.take()?;
        Some(Work {
            group_id: g.id.clone(),
            cg,
            origin: Origin::Existing,
            before: None,
            records: Vec::new(),
            prefix: Vec::new(),
            timers: Vec::new(),
            downgrade: None,
            retry: None,
        })
    }

    fn new_work(&self, id: &str, origin: Origin) -> Work {
        Work {
            group_id: Arc::from(id),
            cg: Box::new(ConsumerGroup::new()),
            origin,
            before: None,
            records: Vec::new(),
            prefix: Vec::new(),
            timers: Vec::new(),
            downgrade: None,
            retry: None,
        }
    }

    /// The request failed: nothing it did stays.
    fn abandon(&mut self, work: Work) {
        if work.origin != Origin::Existing {
            return;
        }
        let cg = work.before.unwrap_or(work.cg);
        if let Some(g) = self.groups.get_mut(&*work.group_id) {
            g.consumer = Some(cg);
        }
    }

    /// The request succeeded: the group goes back (or in), its records are written,
    /// and `response` (if any) is released once they are durable.
    fn commit_work(&mut self, mut work: Work, answer: Option<(RequestId, Response)>) {
        if let Some(left) = work.downgrade.take() {
            self.finish_downgrade(work, &left, answer);
            return;
        }
        let Work { group_id, cg, origin, before, records, prefix, timers, retry, .. } = work;
        for op in timers {
            self.engine.fx.timers.push(op);
        }
        let deleted =
            records.iter().any(|r| matches!(r, ConsumerGroupRecord::GroupMetadata { value: None, .. }));
        match origin {
            Origin::Existing => {
                if let Some(before) = before {
                    self.engine.timeline.push(Undo::Consumer { group: group_id.clone(), prev: before });
                }
                if let Some(g) = self.groups.get_mut(&*group_id) {
                    g.consumer = (!deleted).then_some(cg);
                }
            }
            Origin::New if records.is_empty() => {}
            Origin::New => {
                let g = self.create_group(&group_id);
                g.consumer = Some(cg);
            }
            Origin::ReplacesClassic => {
                let offsets = self.groups.get(&*group_id).map(|g| g.offsets.clone()).unwrap_or_default();
                self.remove_group(&group_id);
                let g = self.create_group(&group_id);
                g.offsets = offsets;
                g.consumer = Some(cg);
            }
        }
        if records.is_empty() && prefix.is_empty() {
            if let Some((request, response)) = answer {
                self.engine.respond(request, response);
            }
            return;
        }
        let mut all = prefix;
        all.extend(records.into_iter().map(Record::Consumer));
        let pending = pending_for(answer, retry);
        match self.groups.get_mut(&*group_id) {
            Some(g) => {
                self.engine.write_group(g, all, pending);
            }
            None => {
                self.engine.write(all, pending);
            }
        }
    }

    /// The live consumer group `id`, if it is one.
    pub(crate) fn consumer_group_ref(&self, id: &str) -> Option<&ConsumerGroup> {
        self.groups.get(id).and_then(|g| g.consumer.as_deref())
    }
}

/// Every topic name some member of `cg` subscribes to.
pub(crate) fn subscribed_topic_names(cg: &ConsumerGroup) -> std::collections::BTreeSet<String> {
    topics::group_names(cg.members.values(), cg).into_iter().map(str::to_owned).collect()
}
