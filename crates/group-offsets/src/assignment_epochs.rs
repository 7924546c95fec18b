//! KIP-1251's assignment epochs: the epoch at which each partition of a
//! consumer-group member's assignment was assigned to it (Kafka 4.3's
//! `ConsumerGroupCurrentMemberAssignmentValue.TopicPartitions.AssignmentEpochs`).
//! An offset commit carrying an older member epoch is accepted for a
//! partition assigned at or before that epoch (`ConsumerGroup.createAssignmentEpochValidator`).
//!
//! Kafka keeps one epoch per partition. Nearly every partition of a member is
//! assigned in one reconciliation, so the epochs are kept as runs over the
//! assignment's order (topics ascending, then partitions ascending): one run,
//! [`AssignmentEpochs::Same`], takes no allocation.

use serde::{Deserialize, Serialize};

/// The epochs of one assignment's partitions, in the assignment's order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum AssignmentEpochs {
    /// Every partition at this epoch (also what an empty assignment holds).
    Same(i32),
    /// At least two runs, each of partitions at one epoch; their lengths add
    /// up to the assignment's partition count.
    Runs(Box<[EpochRun]>),
}

/// Consecutive partitions (in the assignment's order) assigned at one epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct EpochRun {
    /// How many partitions.
    pub len: u32,
    /// Their assignment epoch.
    pub epoch: i32,
}

impl Default for AssignmentEpochs {
    /// Epoch 0: what Kafka gives the partitions of a static member that left
    /// (`ConsumerGroupMember.Builder.resetAssignedPartitionsEpochsToZero`).
    fn default() -> AssignmentEpochs {
        AssignmentEpochs::Same(0)
    }
}

impl AssignmentEpochs {
    /// The epochs of a record that has none (written before KIP-1251): every
    /// partition at the member epoch, never below 0 (a static member that left
    /// has epoch -2), as `Utils.assignmentFromTopicPartitions` defaults them.
    pub fn defaulted(member_epoch: i32) -> AssignmentEpochs {
        AssignmentEpochs::Same(member_epoch.max(0))
    }

    /// `count` partitions all at `epoch`: `Same(0)` when there are none, so
    /// that equal epochs always compare equal.
    pub fn same_over(epoch: i32, count: usize) -> AssignmentEpochs {
        AssignmentEpochs::Same(if count == 0 { 0 } else { epoch })
    }

    /// The epochs given one by one, in the assignment's order. Empty gives
    /// `Same(0)`, so that equal epochs always compare equal.
    pub fn from_epochs(epochs: impl IntoIterator<Item = i32>) -> AssignmentEpochs {
        let mut runs: Vec<EpochRun> = Vec::new();
        for epoch in epochs {
            match runs.last_mut() {
                Some(run) if run.epoch == epoch && run.len < u32::MAX => run.len += 1,
                _ => runs.push(EpochRun { len: 1, epoch }),
            }
        }
        AssignmentEpochs::from_runs(runs)
    }

    /// Runs as read or built; adjacent runs at one epoch merge, empty runs drop.
    pub fn from_runs(runs: Vec<EpochRun>) -> AssignmentEpochs {
        let mut merged: Vec<EpochRun> = Vec::with_capacity(runs.len());
        for run in runs.into_iter().filter(|r| r.len > 0) {
            match merged.last_mut() {
                Some(last) if last.epoch == run.epoch && last.len.checked_add(run.len).is_some() => {
                    last.len += run.len;
                }
                _ => merged.push(run),
            }
        }
        match merged.as_slice() {
            [] => AssignmentEpochs::Same(0),
            [one] => AssignmentEpochs::Same(one.epoch),
            _ => AssignmentEpochs::Runs(merged.into_boxed_slice()),
        }
    }

    /// The epoch of the partition at `index` in the assignment's order; `None`
    /// past the runs' end.
    pub fn get(&self, index: usize) -> Option<i32> {
        match self {
            AssignmentEpochs::Same(epoch) => Some(*epoch),
            AssignmentEpochs::Runs(runs) => {
                let mut start = 0usize;
                for run in runs.iter() {
                    let end = start + run.len as usize;
                    if index < end {
                        return Some(run.epoch);
                    }
                    start = end;
                }
                None
            }
        }
    }

    /// True when these epochs fit an assignment of `count` partitions.
    pub fn fits(&self, count: usize) -> bool {
        match self {
            AssignmentEpochs::Same(_) => true,
            AssignmentEpochs::Runs(runs) => runs.iter().map(|r| r.len as usize).sum::<usize>() == count,
        }
    }

    /// The epochs of `count` partitions, one by one.
    pub fn iter(&self, count: usize) -> impl Iterator<Item = i32> + '_ {
        (0..count).map(move |i| self.get(i).unwrap_or(0))
    }

    /// The runs (one for [`AssignmentEpochs::Same`] over `count` partitions,
    /// none when `count` is 0).
    pub fn runs(&self, count: usize) -> Vec<EpochRun> {
        match self {
            AssignmentEpochs::Same(_) if count == 0 => Vec::new(),
            AssignmentEpochs::Same(epoch) => {
                vec![EpochRun { len: u32::try_from(count).unwrap_or(u32::MAX), epoch: *epoch }]
            }
            AssignmentEpochs::Runs(runs) => runs.to_vec(),
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Built from single epochs, the runs give back each epoch at its
        /// index, fit exactly that many partitions, and compare equal to any
        /// other way of building the same epochs.
        #[test]
        fn runs_give_back_every_epoch(epochs in proptest::collection::vec(0..3i32, 0..40)) {
            let built = AssignmentEpochs::from_epochs(epochs.iter().copied());
            for (i, e) in epochs.iter().enumerate() {
                prop_assert_eq!(built.get(i), Some(*e));
            }
            prop_assert!(built.fits(epochs.len()));
            prop_assert_eq!(built.iter(epochs.len()).collect::<Vec<_>>(), epochs.clone());
            let again = AssignmentEpochs::from_runs(built.runs(epochs.len()));
            prop_assert_eq!(&again, &built);
            let distinct = epochs.windows(2).filter(|w| w[0] != w[1]).count() + 1;
            prop_assert_eq!(matches!(built, AssignmentEpochs::Same(_)), epochs.is_empty() || distinct == 1);
        }
    }

    #[test]
    fn a_record_without_epochs_defaults_to_its_member_epoch_never_below_zero() {
        assert_eq!(AssignmentEpochs::defaulted(7), AssignmentEpochs::Same(7));
        assert_eq!(AssignmentEpochs::defaulted(-2), AssignmentEpochs::Same(0));
        assert_eq!(AssignmentEpochs::from_epochs([]), AssignmentEpochs::default());
    }

    #[test]
    fn runs_that_do_not_cover_the_assignment_do_not_fit() {
        let runs =
            AssignmentEpochs::from_runs(vec![EpochRun { len: 2, epoch: 3 }, EpochRun { len: 1, epoch: 5 }]);
        assert!(runs.fits(3));
        assert!(!runs.fits(4));
        assert_eq!(runs.get(3), None);
    }
}
