//! Combining state batches (Kafka's `PersisterStateBatchCombiner`): the stored
//! batches of a share partition and newly written ones become one sorted list of
//! non-overlapping batches.
//!
//! The rules, per offset: batches below the start offset are dropped and a batch
//! straddling it is trimmed to start there; where batches overlap, the one with
//! the higher delivery count wins, then the one with the higher delivery state
//! (write order does not matter); contiguous or overlapping batches with equal
//! count and state are merged. The walk is Kafka's, step for step, so the output
//! is Kafka's also where Kafka leaves two contiguous equal batches unmerged (a
//! batch already emitted is not revisited).

use std::cmp::Ordering;
use std::collections::BTreeSet;

use group_types::StateBatch;

/// A batch in the order of Kafka's `PersisterStateBatch.compareTo`: first offset,
/// last offset, delivery count, delivery state.
type Ordered = (i64, i64, i16, i8);

fn ordered(b: StateBatch) -> Ordered {
    (b.first_offset, b.last_offset, b.delivery_count, b.delivery_state)
}

fn batch((first, last, count, state): Ordered) -> StateBatch {
    StateBatch::new(first, last, state, count)
}

/// Kafka's `compareBatchDeliveryInfo`: delivery count first, then delivery state.
fn delivery_info(b1: Ordered, b2: Ordered) -> Ordering {
    b1.2.cmp(&b2.2).then(b1.3.cmp(&b2.3))
}

/// Combines `so_far` (the stored batches) with `new_batches` under `start_offset`
/// (-1: nothing is pruned), as Kafka's `PersisterStateBatchCombiner.combineStateBatches`.
///
/// ```
/// use group_share_coordinator::combine_state_batches;
/// use group_types::StateBatch;
///
/// let stored = [StateBatch::new(100, 110, 0, 1)];
/// let written = [StateBatch::new(105, 108, 2, 1)];
/// assert_eq!(
///     combine_state_batches(&stored, &written, -1),
///     [StateBatch::new(100, 104, 0, 1), StateBatch::new(105, 108, 2, 1), StateBatch::new(109, 110, 0, 1)],
/// );
/// ```
pub fn combine_state_batches(
    so_far: &[StateBatch],
    new_batches: &[StateBatch],
    start_offset: i64,
) -> Vec<StateBatch> {
    let mut combined: Vec<StateBatch> = Vec::with_capacity(so_far.len() + new_batches.len());
    for &b in so_far.iter().chain(new_batches) {
        if start_offset == -1 || b.first_offset >= start_offset {
            combined.push(b);
        } else if b.last_offset >= start_offset {
            combined.push(StateBatch { first_offset: start_offset, ..b });
        }
    }
    // Kafka returns a list of fewer than two batches as it is (unsorted is moot).
    if combined.len() < 2 {
        return combined;
    }
    // Batches already in order with nothing to merge come out of Kafka's walk as
    // they are (no pair is ever found): the common case of a leader's write.
    let settled = combined.windows(2).all(|pair| {
        let (prev, next) = (ordered(pair[0]), ordered(pair[1]));
        let touching = prev.1.wrapping_add(1) == next.0 && delivery_info(prev, next) == Ordering::Equal;
        prev.1 < next.0 && !touching
    });
    if settled {
        return combined;
    }
    let mut sorted: BTreeSet<Ordered> = combined.iter().map(|&b| ordered(b)).collect();
    let mut out: Vec<StateBatch> = Vec::with_capacity(combined.len() * 3 / 2);
    while let Some((prev, candidate)) = next_pair(&mut sorted, &mut out) {
        sorted.remove(&prev);
        sorted.remove(&candidate);
        if delivery_info(candidate, prev) == Ordering::Equal {
            sorted.insert((prev.0, candidate.1.max(prev.1), prev.2, prev.3));
        } else {
            resolve_overlap(&mut sorted, prev, candidate);
        }
    }
    out.extend(sorted.into_iter().map(batch));
    out
}

/// Kafka's `getMergeCandidatePair`: the first two batches that overlap, or touch
/// with equal count and state. The batches before them can no longer change: they
/// move from `sorted` to `out`.
fn next_pair(sorted: &mut BTreeSet<Ordered>, out: &mut Vec<StateBatch>) -> Option<(Ordered, Ordered)> {
    let mut iter = sorted.iter().copied();
    let mut prev = iter.next()?;
    let mut done = Vec::new();
    let mut pair = None;
    for candidate in iter {
        let overlap = candidate.0 <= prev.1;
        let touching =
            prev.1.wrapping_add(1) == candidate.0 && delivery_info(prev, candidate) == Ordering::Equal;
        if overlap || touching {
            pair = Some((prev, candidate));
            break;
        }
        done.push(prev);
        prev = candidate;
    }
    for b in done {
        sorted.remove(&b);
        out.push(batch(b));
    }
    pair
}

/// Kafka's `handleDiffStateOverlap`: two overlapping batches with different count
/// or state (`prev` sorts first); the higher one keeps the common offsets.
fn resolve_overlap(sorted: &mut BTreeSet<Ordered>, prev: Ordered, candidate: Ordered) {
    let candidate_wins = delivery_info(candidate, prev) != Ordering::Less;
    let (first, last) = (prev.0, prev.1);
    // The part of `prev` before `candidate`, and the parts of either after the other.
    let prev_head = (first, candidate.0.wrapping_sub(1), prev.2, prev.3);
    let prev_tail = (candidate.1.wrapping_add(1), last, prev.2, prev.3);
    let candidate_tail = (last.wrapping_add(1), candidate.1, candidate.2, candidate.3);
    if candidate.0 == first {
        if candidate.1 == last || candidate_wins {
            // Equal ranges sort the higher count and state last, so `candidate` wins.
            sorted.insert(candidate);
        } else {
            sorted.insert(prev);
            sorted.insert(candidate_tail);
        }
    } else if candidate.1 < last {
        if candidate_wins {
            sorted.insert(prev_head);
            sorted.insert(candidate);
            sorted.insert(prev_tail);
        } else {
            sorted.insert(prev);
        }
    } else if candidate.1 == last {
        if candidate_wins {
            sorted.insert(prev_head);
            sorted.insert(candidate);
        } else {
            sorted.insert(prev);
        }
    } else if candidate_wins {
        sorted.insert(prev_head);
        sorted.insert(candidate);
    } else {
        sorted.insert(prev);
        sorted.insert(candidate_tail);
    }
}
