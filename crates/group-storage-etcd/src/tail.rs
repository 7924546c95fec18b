//! The log entries a partition's task committed since its last snapshot, kept
//! in memory so that the next snapshot folds them from here instead of
//! reading them back from etcd. Reading them back was a range read per 22
//! entries, on every member's read path, and cost a cluster node about a
//! quarter of its commit rate (`docs/SCALING.md`).
//!
//! The tail holds every entry after `known_from`, in order, with no gap, or it
//! starts again: an entry whose sequence number does not follow the last one
//! (another writer's entries came between, a void or revocation settled an
//! earlier append, the state was read again) means the task no longer knows
//! what lies before it. A snapshot uses the tail only when the snapshot it
//! folds into covers `known_from`; otherwise it reads the log as before.

/// At most this many bytes of entries per partition: past it the tail starts
/// again after the last entry, and the next snapshot reads the log.
const LIMIT_BYTES: usize = 1024 * 1024;

/// One committed entry's records, encoded.
#[derive(Debug, Clone)]
pub(crate) struct TailEntry {
    pub(crate) seq: u64,
    pub(crate) format: u8,
    pub(crate) bytes: Vec<u8>,
}

/// Every entry after `known_from`, as committed.
#[derive(Debug, Default)]
pub(crate) struct Tail {
    /// `None`: nothing is known yet.
    known_from: Option<u64>,
    entries: Vec<TailEntry>,
    bytes: usize,
}

/// What a snapshot may fold from memory: every entry after `known_from`
/// through the snapshot's last one.
#[derive(Debug)]
pub(crate) struct KnownEntries {
    pub(crate) known_from: u64,
    pub(crate) entries: Vec<TailEntry>,
}

impl KnownEntries {
    /// The entries after `covered`, if these hold all of them (`covered` is
    /// at least `known_from`).
    pub(crate) fn after(self, covered: u64) -> Option<Vec<TailEntry>> {
        (covered >= self.known_from).then(|| self.entries.into_iter().filter(|e| e.seq > covered).collect())
    }
}

impl Tail {
    /// Entry `seq` committed with these records.
    pub(crate) fn committed(&mut self, seq: u64, format: u8, bytes: Vec<u8>) {
        let follows = self.known_from.is_some_and(|from| from + self.entries.len() as u64 + 1 == seq);
        if !follows {
            self.restart_after(seq - 1);
        }
        if self.bytes + bytes.len() > LIMIT_BYTES {
            self.restart_after(seq);
            return;
        }
        self.bytes += bytes.len();
        self.entries.push(TailEntry { seq, format, bytes });
    }

    /// A snapshot covering entries through `covered` switched in: they are
    /// no longer needed.
    pub(crate) fn snapshotted(&mut self, covered: u64) {
        let Some(from) = self.known_from else { return };
        if covered <= from {
            return;
        }
        let gone = self.entries.iter().take_while(|e| e.seq <= covered).count();
        self.bytes -= self.entries.drain(..gone).map(|e| e.bytes.len()).sum::<usize>();
        // Past the last entry known, the next one must follow `covered`.
        self.known_from = Some(covered);
    }

    /// A copy of what is known through `through`, for a snapshot of it.
    pub(crate) fn through(&self, through: u64) -> Option<KnownEntries> {
        let known_from = self.known_from?;
        let last = known_from + self.entries.len() as u64;
        (last >= through).then(|| KnownEntries {
            known_from,
            entries: self.entries.iter().take_while(|e| e.seq <= through).cloned().collect(),
        })
    }

    fn restart_after(&mut self, seq: u64) {
        self.known_from = Some(seq);
        self.entries.clear();
        self.bytes = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seqs(known: Option<Vec<TailEntry>>) -> Option<Vec<u64>> {
        known.map(|entries| entries.iter().map(|e| e.seq).collect())
    }

    #[test]
    fn a_snapshot_gets_what_follows_the_one_it_folds_into() {
        let mut tail = Tail::default();
        assert!(tail.through(3).is_none(), "nothing known yet");
        for seq in 4..=9 {
            tail.committed(seq, 1, vec![seq as u8]);
        }
        // Entries 4..=9 are known; what came before 4 is not.
        assert_eq!(seqs(tail.through(7).and_then(|k| k.after(3))), Some(vec![4, 5, 6, 7]));
        assert_eq!(seqs(tail.through(7).and_then(|k| k.after(5))), Some(vec![6, 7]));
        assert_eq!(seqs(tail.through(7).and_then(|k| k.after(2))), None, "entry 3 is unknown");
        assert!(tail.through(10).is_none(), "entry 10 is not committed");
        tail.snapshotted(6);
        assert_eq!(seqs(tail.through(9).and_then(|k| k.after(6))), Some(vec![7, 8, 9]));
        assert_eq!(tail.bytes, 3);
    }

    #[test]
    fn a_gap_starts_the_tail_again() {
        let mut tail = Tail::default();
        tail.committed(1, 1, vec![1]);
        tail.committed(2, 1, vec![2]);
        // Entry 3 was another writer's, or a void.
        tail.committed(4, 1, vec![4]);
        assert_eq!(seqs(tail.through(4).and_then(|k| k.after(0))), None);
        assert_eq!(seqs(tail.through(4).and_then(|k| k.after(3))), Some(vec![4]));
        assert_eq!(tail.bytes, 1);
    }

    #[test]
    fn past_its_limit_the_tail_starts_after_the_last_entry() {
        let mut tail = Tail::default();
        tail.committed(1, 1, vec![0; LIMIT_BYTES - 10]);
        tail.committed(2, 1, vec![0; 20]);
        assert_eq!(seqs(tail.through(2).and_then(|k| k.after(1))), None, "entry 2 was not kept");
        assert_eq!(seqs(tail.through(2).and_then(|k| k.after(2))), Some(vec![]));
        tail.committed(3, 1, vec![3]);
        assert_eq!(seqs(tail.through(3).and_then(|k| k.after(2))), Some(vec![3]));
        assert_eq!(tail.bytes, 1);
    }
}
