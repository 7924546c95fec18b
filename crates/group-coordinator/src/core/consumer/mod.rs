//! KIP-848's consumer protocol beside the classic one: ConsumerGroupHeartbeat,
//! ConsumerGroupDescribe, server-side target assignment and incremental
//! reconciliation (`kip848-semantics.md`).
//!
//! A consumer group is one kind of group (`GroupKind::Consumer`), a peer of
//! the classic kind; its offsets live beside it in the partition's offsets
//! store, as every group's do. Its handlers are Kafka's: each produces records, the records
//! change the group through [`ConsumerGroup::replay`] (so loading is replaying),
//! and the answer is released once the records are durable. A failed write, or
//! an error found after records were produced (an assignor failure), puts the
//! group back as it was before the request's first record: each record's replay
//! logs how to undo what it changed ([`Change`]), and a failure undoes those
//! changes, newest first (`Undo::Consumer` in the timeline for writes that fail
//! later). No request copies the group.

mod classic;
mod classic_apis;
mod describe;
mod epochs;
mod group;
mod heartbeat;
mod load;
mod meta;
mod re2j;
#[cfg(test)]
mod re2j_tests;
mod reconcile;
mod regex;
mod target;
mod timers;
mod topics;
mod validate;

use std::sync::Arc;

use group_offsets::{ModernGroupRecord, Record};

pub(crate) use self::classic::{to_ids, to_names};
pub(crate) use self::classic_apis::{
    deletion_records, described_as_classic, listed, subscribes_to, validate_offset_commit,
    validate_offset_fetch,
};
pub(crate) use self::group::{Change, ClassicDeadline, ConsumerGroup, ConsumerMember};
pub(crate) use self::regex::ResolvedRegexes;
pub(crate) use self::validate::validate_heartbeat;
use crate::core::{CoordinatorCore, PendingWrite, RequestId, Response, TimerKey, TimerOp};

/// Where the group a request works on comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// A consumer group that exists.
    Existing,
    /// A group that does not exist yet.
    New,
    /// An empty classic group the consumer group replaces, offsets kept (§8.1).
    ReplacesClassic,
}

/// One request's work on a consumer group: the group as it changes, the records
/// that change it, how to undo what they changed, and the timers to arm if the
/// request succeeds.
#[derive(Debug)]
pub(crate) struct Work {
    pub(crate) group_id: Arc<str>,
    pub(crate) cg: Box<ConsumerGroup>,
    pub(crate) origin: Origin,
    /// How to undo what the records changed, oldest first (kept for a group
    /// that existed before the request; a new one is removed whole).
    pub(crate) changes: Vec<Change>,
    records: Vec<ModernGroupRecord>,
    /// Classic records that come first (the tombstone of a replaced classic group).
    pub(crate) prefix: Vec<Record>,
    pub(crate) timers: Vec<TimerOp>,
    /// Set when the request turns the group back into a classic one (§8.4):
    /// the members that left.
    pub(crate) downgrade: Option<Vec<Arc<str>>>,
    /// The deadline this work runs for, armed again if its write fails.
    pub(crate) retry: Option<TimerKey>,
    /// What the records change, as the runtime logs and counts it; reported
    /// only when the work is committed.
    events: Vec<crate::GroupEvent>,
    /// Why the members this work removes go (its logged reason).
    pub(crate) removal: &'static str,
    /// The regexes step 8 asked to resolve after this request (Kafka's executor
    /// task, scheduled then): resolved even if the request fails later.
    pub(crate) regex_task: Option<Vec<String>>,
    /// The regex resolution this work applies, applied again if its write is
    /// voided (`regex_resolution_voided`).
    pub(crate) resolved: Option<Box<ResolvedRegexes>>,
    /// With `downgrade`: a classic member replacing the last consumer-protocol
    /// member by its instance id (`validateOnlineDowngradeWithReplacedMember`).
    pub(crate) replacement: Option<Box<Replacement>>,
}

/// A downgrade by static replacement: who is replaced, by whom, and whether the
/// classic group rebalances at once (its target assignment was stale).
#[derive(Debug)]
pub(crate) struct Replacement {
    pub(crate) replaced: Arc<str>,
    pub(crate) joining: ConsumerMember,
    pub(crate) rebalance: bool,
}

/// How long a deadline whose write failed waits before it fires again (Kafka's
/// coordinator timer retries failed operations after a backoff).
pub(crate) const TIMER_RETRY_BACKOFF_MS: i64 = 500;

/// What a work's write releases once durable: a request's answer, or nothing
/// (a deadline's work is retried if the write fails).
pub(crate) fn pending_for(answer: Option<(RequestId, Response)>, retry: Option<TimerKey>) -> PendingWrite {
    match (answer, retry) {
        (Some((request, response)), _) => PendingWrite::Respond { request, response: Box::new(response) },
        (None, Some(key)) => PendingWrite::RetryTimer { key },
        (None, None) => PendingWrite::Logged,
    }
}

impl Work {
    /// Work on `cg` that has changed nothing yet.
    fn on(cg: Box<ConsumerGroup>, origin: Origin) -> Work {
        Work {
            group_id: cg.id.clone(),
            cg,
            origin,
            changes: Vec::new(),
            records: Vec::new(),
            prefix: Vec::new(),
            timers: Vec::new(),
            downgrade: None,
            retry: None,
            events: Vec::new(),
            removal: "removed",
            regex_task: None,
            resolved: None,
            replacement: None,
        }
    }

    /// Emits one record: applies it to the group and keeps it for the write.
    pub(crate) fn emit(&mut self, record: ModernGroupRecord) {
        if let Some(event) = self.event_of(&record) {
            self.events.push(event);
        }
        let undo = (self.origin == Origin::Existing).then_some(&mut self.changes);
        self.cg.replay(&record, undo);
        self.records.push(record);
    }

    /// What `record` changes, as an event (read before it is applied: a member's
    /// metadata record makes a join only if the member is not there yet).
    fn event_of(&self, record: &ModernGroupRecord) -> Option<crate::GroupEvent> {
        use crate::GroupEvent as E;
        let group_id = self.group_id.clone();
        let known = |member: &Arc<str>| self.cg.modern.members.contains_key(member);
        Some(match record {
            ModernGroupRecord::MemberMetadata { member_id, value: Some(_), .. } if !known(member_id) => {
                E::ConsumerMemberJoined { group_id, member_id: member_id.clone() }
            }
            ModernGroupRecord::MemberMetadata { member_id, value: None, .. } if known(member_id) => {
                E::ConsumerMemberRemoved { group_id, member_id: member_id.clone(), reason: self.removal }
            }
            ModernGroupRecord::GroupMetadata { value: Some(v), .. }
                if v.epoch != self.cg.modern.group_epoch =>
            {
                E::ConsumerGroupEpochBumped { group_id, epoch: v.epoch }
            }
            ModernGroupRecord::TargetAssignmentMetadata { value: Some(epoch), .. } => {
                E::ConsumerTargetAssignment { group_id, epoch: epoch.assignment_epoch }
            }
            ModernGroupRecord::CurrentMemberAssignment { member_id, value: Some(v), .. } => {
                let count = |t: &[group_types::TopicIdPartitions]| t.iter().map(|t| t.partitions.len()).sum();
                E::ConsumerMemberAssignment {
                    group_id,
                    member_id: member_id.clone(),
                    member_epoch: v.member_epoch,
                    previous_member_epoch: v.previous_member_epoch,
                    state: v.state,
                    assigned: count(&v.assigned),
                    pending_revocation: count(&v.pending_revocation),
                }
            }
            _ => return None,
        })
    }

    /// Member `id`, to change what records do not carry (its deadlines).
    /// Such changes are logged from the request's first record on: a failure
    /// reverts them with the records' (before it, nothing is written and
    /// nothing is reverted).
    pub(crate) fn member_mut(&mut self, id: &Arc<str>) -> Option<&mut ConsumerMember> {
        let undo = (self.origin == Origin::Existing && !self.records.is_empty()).then_some(&mut self.changes);
        self.cg.member_mut(undo, id)
    }

    /// Sets whether the group's metadata must be refreshed at its next heartbeat.
    pub(crate) fn set_refresh_needed(&mut self, refresh_needed: bool) {
        let due = self.cg.regex_refresh_due;
        let undo = (self.origin == Origin::Existing && !self.records.is_empty()).then_some(&mut self.changes);
        self.cg.set_flags(undo, refresh_needed, due)
    }

    /// Sets whether the group's regexes are resolved after this request's write.
    pub(crate) fn set_regex_refresh_due(&mut self, regex_refresh_due: bool) {
        let refresh = self.cg.refresh_needed;
        let undo = (self.origin == Origin::Existing && !self.records.is_empty()).then_some(&mut self.changes);
        self.cg.set_flags(undo, refresh, regex_refresh_due)
    }

    /// Undoes every logged change: the group is as it was before the first record.
    pub(crate) fn rewind(&mut self) {
        self.cg.undo(std::mem::take(&mut self.changes));
    }

    pub(crate) fn arm(&mut self, key: TimerKey, deadline_ms: i64) {
        self.timers.push(TimerOp::Arm { key, deadline_ms });
    }

    pub(crate) fn cancel(&mut self, key: TimerKey) {
        self.timers.push(TimerOp::Cancel { key });
    }
}

impl CoordinatorCore {
    /// Takes consumer group `id` out of the groups for a request to work on
    /// (`commit_work` or `abandon` puts it back). `None` when `id` is not a
    /// consumer group.
    fn take_consumer(&mut self, id: &str) -> Option<Work> {
        let cg = self.take_consumer_group(id)?;
        Some(Work::on(cg, Origin::Existing))
    }

    pub(crate) fn new_work(&self, id: &str, origin: Origin) -> Work {
        Work::on(Box::new(ConsumerGroup::new(Arc::from(id), self.engine.now)), origin)
    }

    /// The request failed: nothing it did stays.
    fn abandon(&mut self, work: Work) {
        if work.origin != Origin::Existing {
            return;
        }
        let mut work = work;
        work.rewind();
        self.put_consumer_group(work.group_id, work.cg);
    }

    /// The request succeeded: the group goes back (or in), its records are written,
    /// and `response` (if any) is released once they are durable.
    fn commit_work(&mut self, mut work: Work, answer: Option<(RequestId, Response)>) {
        self.engine.fx.events.append(&mut work.events);
        if let Some(left) = work.downgrade.take() {
            self.finish_downgrade(work, &left, answer);
            return;
        }
        let Work { group_id, cg, origin, changes, records, prefix, timers, retry, resolved, .. } = work;
        for op in timers {
            self.engine.fx.timers.push(op);
        }
        match origin {
            Origin::Existing => {
                self.consumer_changed(&group_id, changes);
                self.put_consumer_group(group_id.clone(), cg);
            }
            Origin::New if records.is_empty() => {}
            Origin::New => self.create_consumer_group(group_id.clone(), cg),
            Origin::ReplacesClassic => {
                // The classic group goes (its timers with it); its offsets stay.
                self.remove_group(&group_id);
                self.create_consumer_group(group_id.clone(), cg);
            }
        }
        if records.is_empty() && prefix.is_empty() {
            if let Some((request, response)) = answer {
                self.engine.respond(request, response);
            }
            return;
        }
        let mut all = prefix;
        all.extend(records.into_iter().map(Record::Modern));
        let pending = match resolved {
            Some(resolved) => PendingWrite::RegexResolution { group: group_id.clone(), resolved },
            None => pending_for(answer, retry),
        };
        self.write_group_records(&group_id, all, pending);
    }
}

/// Every topic name some member of `cg` subscribes to.
pub(crate) fn subscribed_topic_names(cg: &ConsumerGroup) -> std::collections::BTreeSet<String> {
    topics::group_names(cg).into_iter().map(str::to_owned).collect()
}

/// The metadata hash of the topics `cg`'s members subscribe to.
pub(crate) fn subscription_hash(cg: &ConsumerGroup, image: &crate::MetadataImage) -> u64 {
    let names = topics::group_names(cg);
    topics::metadata_hash(&names, image)
}
