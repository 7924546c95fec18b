//! The undo log of one coordinator partition: per change, how to undo it, kept
//! until the write that carries the change commits.
//!
//! The core applies a change at once and remembers how to undo it; the writes of a
//! coordinator partition complete in the order they were issued, so the state at
//! the start of the oldest outstanding write is the last committed state. A failed
//! write reverts to the state at its start, which also voids every later write
//! (their changes were made on top of it), exactly as Kafka's `SnapshotRegistry`
//! reverts its `TimelineHashMap`s to the last committed offset
//! (`CoordinatorRuntime.failCurrentBatch`). Reads that Kafka answers from committed
//! state (OffsetFetch, DescribeGroups, ListGroups) look through the uncommitted
//! part of the log instead of at the live values.
//!
//! Only what records carry is undone this way. The rest of a classic group
//! (members, parked requests, timers) lives outside the timeline, as in Kafka's
//! `ClassicGroup`; its reactions to a failed write are Kafka's own (§2.2, §2.1.2).
//!
//! The log knows nothing of what its entries undo: an entry only names its group
//! ([`Entry`]). The core's `undo.rs` says what an entry holds, how it is applied
//! and how committed state is read through the log.

use std::collections::VecDeque;
use std::hash::BuildHasher;
use std::sync::Arc;

use group_types::hash::ClientState;
use hashbrown::hash_table::{Entry as Slot, HashTable};

use crate::core::types::WriteId;

/// One undo entry, as the log sees it: the group whose change it undoes.
pub(crate) trait Entry {
    /// The group whose change this entry undoes.
    fn group_id(&self) -> &Arc<str>;
}

/// The undo log of one coordinator partition and its outstanding writes.
#[derive(Debug)]
pub(crate) struct Timeline<E> {
    /// Undo entries, oldest first; `log[0]` has the absolute index `base`.
    log: VecDeque<E>,
    base: u64,
    /// Writes issued and not yet completed, in issue order, each with the absolute
    /// index of the log at the start of the step that issued it.
    outstanding: VecDeque<(WriteId, u64)>,
    /// Where the current step's changes begin.
    step_start: u64,
    /// Per group, its runs of adjacent entries in the log: a group absent here has
    /// no change in the log, and its live state is its committed state. Runs, not
    /// entries, so that a commit of many partitions of one group looks its group up
    /// once instead of once per partition, on the way in and on the way out.
    /// Kept only once the log grows past [`SCANNED_ENTRIES`]: a shorter log (one
    /// commit in flight, the common case) is scanned instead, and a commit then
    /// hashes no group name at all.
    dirty: DirtyGroups,
    /// True while `dirty` is kept (the log grew past [`SCANNED_ENTRIES`] since it
    /// was last empty).
    indexed: bool,
}

/// The longest log whose groups are found by scanning it rather than by `dirty`.
const SCANNED_ENTRIES: usize = if cfg!(test) { 2 } else { 8 };

/// Groups with changes in the log, each with its count of runs: a table that
/// hashes a group's name once per update and keeps the log's own `Arc` of it.
#[derive(Debug, Default)]
struct DirtyGroups {
    table: HashTable<(Arc<str>, u32)>,
    state: ClientState,
}

impl DirtyGroups {
    /// One more run of `id`.
    fn add(&mut self, id: &Arc<str>) {
        let state = &self.state;
        let hash = state.hash_one(&**id);
        match self.table.entry(hash, |(g, _)| **g == **id, |(g, _)| state.hash_one(&**g)) {
            Slot::Occupied(mut runs) => runs.get_mut().1 += 1,
            Slot::Vacant(slot) => {
                slot.insert((id.clone(), 1));
            }
        }
    }

    /// One run of `id` fewer.
    fn remove(&mut self, id: &str) {
        let hash = self.state.hash_one(id);
        if let Ok(mut runs) = self.table.find_entry(hash, |(g, _)| **g == *id) {
            runs.get_mut().1 -= 1;
            if runs.get().1 == 0 {
                runs.remove();
            }
        }
    }

    fn contains(&self, id: &str) -> bool {
        !self.table.is_empty() && self.table.find(self.state.hash_one(id), |(g, _)| **g == *id).is_some()
    }
}

/// Whether two entries belong to one group (one run). Entries of a group share
/// its `Arc`, so the pointer nearly always decides; names are compared only for
/// entries of different groups, or of a group removed and created again.
fn same_group<E: Entry>(a: &E, b: &E) -> bool {
    let (a, b) = (a.group_id(), b.group_id());
    Arc::ptr_eq(a, b) || a == b
}

/// Positions, from `from` on, of the entries of `log` that begin a run (their
/// group differs from the entry before).
fn run_starts<E: Entry>(log: &VecDeque<E>, from: usize) -> impl Iterator<Item = usize> + '_ {
    (from..log.len()).filter(move |&i| i == 0 || !same_group(&log[i - 1], &log[i]))
}

impl<E> Default for Timeline<E> {
    fn default() -> Self {
        Timeline {
            log: VecDeque::new(),
            base: 0,
            outstanding: VecDeque::new(),
            step_start: 0,
            dirty: DirtyGroups::default(),
            indexed: false,
        }
    }
}

impl<E: Entry> Timeline<E> {
    fn end(&self) -> u64 {
        self.base + self.log.len() as u64
    }

    /// Marks the start of a step (a request, a timer, a completion's reactions).
    pub(crate) fn begin_step(&mut self) {
        self.step_start = self.end();
    }

    /// Ends a step: with no write outstanding, every change is committed.
    pub(crate) fn end_step(&mut self) {
        if self.outstanding.is_empty() && !self.log.is_empty() {
            self.forget_all();
        }
    }

    /// Every change in the log is committed.
    fn forget_all(&mut self) {
        self.base = self.end();
        self.log.clear();
        self.unindex();
    }

    /// The log emptied: short logs are scanned again.
    fn unindex(&mut self) {
        if self.indexed {
            self.dirty.table.clear();
            self.indexed = false;
        }
    }

    /// Records how to undo a change.
    pub(crate) fn push(&mut self, undo: E) {
        if self.indexed {
            let continues_run = self.log.back().is_some_and(|last| same_group(last, &undo));
            if !continues_run {
                self.dirty.add(undo.group_id());
            }
        } else if self.log.len() >= SCANNED_ENTRIES {
            // Too long to scan from now on: count the runs so far, then this one.
            self.indexed = true;
            for i in run_starts(&self.log, 0) {
                self.dirty.add(self.log[i].group_id());
            }
            if self.log.back().is_none_or(|last| !same_group(last, &undo)) {
                self.dirty.add(undo.group_id());
            }
        }
        self.log.push_back(undo);
    }

    /// A write issued by the current step.
    pub(crate) fn issued(&mut self, id: WriteId) {
        self.outstanding.push_back((id, self.step_start));
    }

    /// True while `id` was issued and neither completed nor voided.
    pub(crate) fn is_outstanding(&self, id: WriteId) -> bool {
        self.outstanding.iter().any(|(w, _)| *w == id)
    }

    /// The write issued last and not yet completed, if any: an answer that must
    /// follow every write in flight waits for it.
    pub(crate) fn last_outstanding(&self) -> Option<WriteId> {
        self.outstanding.back().map(|(w, _)| *w)
    }

    /// True when any write is outstanding.
    pub(crate) fn has_outstanding(&self) -> bool {
        !self.outstanding.is_empty()
    }

    /// `id` committed: changes before the next outstanding write are final.
    pub(crate) fn committed(&mut self, id: WriteId) {
        let Some(at) = self.outstanding.iter().position(|(w, _)| *w == id) else { return };
        if self.outstanding.len() == 1 {
            // The only write in flight, the common case: the whole log is final,
            // and forgetting it at once spares hashing each run's group again.
            self.outstanding.clear();
            self.forget_all();
            return;
        }
        self.outstanding.remove(at);
        let boundary = self.outstanding.front().map_or(self.end(), |(_, start)| *start);
        while self.base < boundary {
            let Some(undo) = self.log.pop_front() else { break };
            self.base += 1;
            if self.log.front().is_none_or(|next| !same_group(next, &undo)) {
                self.forget(undo.group_id());
            }
        }
        if self.log.is_empty() {
            self.unindex();
        }
    }

    /// `id` failed: removes it and every later outstanding write, and returns them
    /// (in issue order) with the undo entries to apply, newest first. `None` when
    /// `id` is not outstanding (already voided by an earlier failure).
    pub(crate) fn fail(&mut self, id: WriteId) -> Option<(Vec<WriteId>, Vec<E>)> {
        let at = self.outstanding.iter().position(|(w, _)| *w == id)?;
        let start = self.outstanding[at].1;
        let voided: Vec<WriteId> = self.outstanding.drain(at..).map(|(w, _)| w).collect();
        let keep = usize::try_from(start.saturating_sub(self.base)).unwrap_or(usize::MAX).min(self.log.len());
        // A run that began before `keep` goes on in the log; every run that
        // begins in the undone part leaves with it.
        let ended: Vec<Arc<str>> =
            run_starts(&self.log, keep).map(|i| self.log[i].group_id().clone()).collect();
        let mut undone: Vec<E> = self.log.drain(keep..).collect();
        undone.reverse();
        for id in &ended {
            self.forget(id);
        }
        if self.log.is_empty() {
            self.unindex();
        }
        Some((voided, undone))
    }

    /// One run of `id` left the log.
    fn forget(&mut self, id: &Arc<str>) {
        if self.indexed {
            self.dirty.remove(id);
        }
    }

    /// True when `group` has a change in the log that may not be committed.
    pub(crate) fn is_dirty(&self, group: &str) -> bool {
        if self.indexed {
            self.dirty.contains(group)
        } else {
            self.log.iter().any(|undo| **undo.group_id() == *group)
        }
    }

    /// Groups with a change in the log (some may exist only in committed state),
    /// each once.
    pub(crate) fn dirty_groups(&self) -> Vec<&Arc<str>> {
        if self.indexed {
            return self.dirty.table.iter().map(|(g, _)| g).collect();
        }
        let mut groups: Vec<&Arc<str>> = Vec::new();
        for undo in &self.log {
            let id = undo.group_id();
            if !groups.iter().any(|g| **g == *id) {
                groups.push(id);
            }
        }
        groups
    }

    /// The uncommitted entries, oldest first.
    pub(crate) fn uncommitted(&self) -> impl Iterator<Item = &E> {
        let start = self.outstanding.front().map_or(self.end(), |(_, start)| *start);
        let skip = usize::try_from(start.saturating_sub(self.base)).unwrap_or(usize::MAX);
        self.log.iter().skip(skip)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A change to one group, as the log sees it.
    struct Change(Arc<str>);

    impl Entry for Change {
        fn group_id(&self) -> &Arc<str> {
            &self.0
        }
    }

    proptest::proptest! {
        /// Whatever pushes, commits and failures interleave, a group is dirty
        /// exactly while one of its entries is in the log (the run counts never
        /// drift).
        #[test]
        fn a_group_is_dirty_exactly_while_the_log_holds_its_entries(
            ops in proptest::collection::vec((0u8..4, 0usize..3), 1..80),
        ) {
            let groups = ["a", "b", "c"];
            let shared: Vec<Arc<str>> = groups.iter().map(|g| Arc::from(*g)).collect();
            let mut t = Timeline::default();
            let mut next = 0;
            let mut issued = Vec::new();
            t.begin_step();
            for (op, k) in ops {
                match op {
                    // The group's shared name, or a fresh `Arc` of it (a group created again).
                    0 => t.push(Change(if next % 2 == 0 { shared[k].clone() } else { Arc::from(groups[k]) })),
                    1 => {
                        next += 1;
                        t.issued(WriteId(next));
                        issued.push(WriteId(next));
                        t.end_step();
                        t.begin_step();
                    }
                    2 if !issued.is_empty() => {
                        let id = issued.remove(k % issued.len());
                        t.committed(id);
                    }
                    3 if !issued.is_empty() => {
                        let id = issued[k % issued.len()];
                        if let Some((voided, _)) = t.fail(id) {
                            issued.retain(|w| !voided.contains(w));
                        }
                    }
                    _ => {
                        t.end_step();
                        t.begin_step();
                    }
                }
                for g in groups {
                    let in_log = t.log.iter().any(|u| &**u.group_id() == g);
                    proptest::prop_assert_eq!(t.is_dirty(g), in_log, "group {}", g);
                }
                proptest::prop_assert!(t.dirty.table.iter().all(|(_, runs)| *runs > 0));
            }
        }
    }
}
