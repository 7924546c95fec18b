//! `PartitionOffsets`: one topic's committed offsets, by partition number.
//!
//! A topic's partitions are numbered `0..n`, and a consumer group commits most
//! or all of them, so the offsets are a vector indexed by partition: a commit
//! replaces an offset in place instead of walking a tree (a `BTreeMap` insert
//! was the costliest step of a 100-partition commit). Partition numbers come
//! from clients, though, and a client may name any `i32`; the vector grows only
//! while at least half its slots would hold an offset (plus a little slack), and
//! a topic whose offsets are removed until a quarter of its slots are filled
//! gives them up: memory stays within a few times what the offsets need. A
//! partition that would break that turns the topic into an ordered map, which
//! turns back once half its range is filled (a topic committed in a client's
//! hash-map order the first time). Either way the offsets iterate in partition
//! order.

use std::collections::BTreeMap;

use group_types::OffsetAndMetadata;

/// Slots a dense topic may hold beyond twice its offsets: a topic's first few
/// partitions never need the map, whatever order they are committed in.
const SLACK: usize = 64;

/// One topic's offsets by partition number, in partition order.
///
/// ```
/// use group_offsets::PartitionOffsets;
/// use group_types::OffsetAndMetadata;
///
/// let mut offsets = PartitionOffsets::default();
/// offsets.insert(2, OffsetAndMetadata::new(20, 0));
/// offsets.insert(0, OffsetAndMetadata::new(5, 0));
/// assert_eq!(offsets.insert(2, OffsetAndMetadata::new(21, 0)).map(|o| o.offset), Some(20));
/// let order: Vec<(i32, i64)> = offsets.iter().map(|(p, o)| (p, o.offset)).collect();
/// assert_eq!(order, [(0, 5), (2, 21)]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionOffsets {
    repr: Repr,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Repr {
    /// `slots[p]` is partition `p`'s offset; `len` counts the filled slots.
    Dense { slots: Vec<Option<OffsetAndMetadata>>, len: usize },
    /// Partition numbers too sparse (or negative) for a vector.
    Sparse(BTreeMap<i32, OffsetAndMetadata>),
}

impl Default for PartitionOffsets {
    fn default() -> PartitionOffsets {
        PartitionOffsets { repr: Repr::Dense { slots: Vec::new(), len: 0 } }
    }
}

impl PartitionOffsets {
    /// Stores `offset` for `partition`, returning the offset it replaces.
    #[inline]
    pub fn insert(&mut self, partition: i32, offset: OffsetAndMetadata) -> Option<OffsetAndMetadata> {
        // A commit of a partition already known, the common case, inlined into the
        // caller's loop: a call per partition costs a fifth of the work.
        if let Repr::Dense { slots, len } = &mut self.repr
            && let Some(slot) = usize::try_from(partition).ok().and_then(|p| slots.get_mut(p))
        {
            let previous = slot.replace(offset);
            if previous.is_none() {
                *len += 1;
            }
            return previous;
        }
        self.insert_growing(partition, offset)
    }

    /// [`insert`](Self::insert) of a partition past the dense slots, or into the map.
    fn insert_growing(&mut self, partition: i32, offset: OffsetAndMetadata) -> Option<OffsetAndMetadata> {
        match &mut self.repr {
            Repr::Dense { slots, len } => {
                match usize::try_from(partition) {
                    // Past the end, close enough that the slots stay at least half full.
                    Ok(p) if p < 2 * (*len + 1) + SLACK => {
                        slots.resize_with(p + 1, || None);
                        slots[p] = Some(offset);
                        *len += 1;
                        None
                    }
                    _ => {
                        let mut map = sparse(std::mem::take(slots));
                        map.insert(partition, offset);
                        self.repr = Repr::Sparse(map);
                        None
                    }
                }
            }
            Repr::Sparse(map) => {
                let previous = map.insert(partition, offset);
                // A topic committed out of order (a client's hash-map order) starts
                // sparse and becomes dense once half its range is filled.
                let range = map.first_key_value().zip(map.last_key_value());
                if let Some(((&low, _), (&high, _))) = range
                    && low >= 0
                    && (high as usize) < 2 * map.len() + SLACK
                {
                    let mut slots = Vec::with_capacity(high as usize + 1);
                    for (p, offset) in std::mem::take(map) {
                        slots.resize_with(p as usize, || None);
                        slots.push(Some(offset));
                    }
                    let len = slots.len() - slots.iter().filter(|o| o.is_none()).count();
                    self.repr = Repr::Dense { slots, len };
                }
                previous
            }
        }
    }

    /// The offset of `partition`.
    pub fn get(&self, partition: i32) -> Option<&OffsetAndMetadata> {
        match &self.repr {
            Repr::Dense { slots, .. } => slots.get(usize::try_from(partition).ok()?)?.as_ref(),
            Repr::Sparse(map) => map.get(&partition),
        }
    }

    /// Removes the offset of `partition`, returning it.
    pub fn remove(&mut self, partition: i32) -> Option<OffsetAndMetadata> {
        match &mut self.repr {
            Repr::Dense { slots, len } => {
                let removed = slots.get_mut(usize::try_from(partition).ok()?)?.take()?;
                *len -= 1;
                while slots.last().is_some_and(Option::is_none) {
                    slots.pop();
                }
                if slots.len() > 4 * (*len + 1) + SLACK {
                    self.repr = Repr::Sparse(sparse(std::mem::take(slots)));
                }
                Some(removed)
            }
            Repr::Sparse(map) => map.remove(&partition),
        }
    }

    /// How many partitions hold an offset.
    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Dense { len, .. } => *len,
            Repr::Sparse(map) => map.len(),
        }
    }

    /// True when no partition holds an offset.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every `(partition, offset)`, in partition order.
    pub fn iter(&self) -> impl Iterator<Item = (i32, &OffsetAndMetadata)> + '_ {
        let (dense, sparse) = match &self.repr {
            Repr::Dense { slots, .. } => (Some(slots), None),
            Repr::Sparse(map) => (None, Some(map)),
        };
        let dense = dense
            .into_iter()
            .flat_map(|slots| slots.iter().enumerate().filter_map(|(p, o)| Some((p as i32, o.as_ref()?))));
        dense.chain(sparse.into_iter().flat_map(|map| map.iter().map(|(p, o)| (*p, o))))
    }
}

/// Every `(partition, offset)`, in partition order, taken over.
impl IntoIterator for PartitionOffsets {
    type Item = (i32, OffsetAndMetadata);
    type IntoIter = std::vec::IntoIter<(i32, OffsetAndMetadata)>;

    fn into_iter(self) -> Self::IntoIter {
        let entries: Vec<(i32, OffsetAndMetadata)> = match self.repr {
            Repr::Dense { slots, .. } => {
                slots.into_iter().enumerate().filter_map(|(p, o)| Some((p as i32, o?))).collect()
            }
            Repr::Sparse(map) => map.into_iter().collect(),
        };
        entries.into_iter()
    }
}

/// Dense slots as a map. Slot numbers fit in `i32`: only a non-negative `i32`
/// partition ever made a slot.
fn sparse(slots: Vec<Option<OffsetAndMetadata>>) -> BTreeMap<i32, OffsetAndMetadata> {
    slots.into_iter().enumerate().filter_map(|(p, o)| Some((p as i32, o?))).collect()
}

impl FromIterator<(i32, OffsetAndMetadata)> for PartitionOffsets {
    fn from_iter<I: IntoIterator<Item = (i32, OffsetAndMetadata)>>(iter: I) -> PartitionOffsets {
        let mut offsets = PartitionOffsets::default();
        for (partition, offset) in iter {
            offsets.insert(partition, offset);
        }
        offsets
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn offset(n: i64) -> OffsetAndMetadata {
        OffsetAndMetadata::new(n, 0)
    }

    fn is_dense(offsets: &PartitionOffsets) -> bool {
        matches!(offsets.repr, Repr::Dense { .. })
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert(i32, i64),
        Remove(i32),
    }

    fn op() -> impl Strategy<Value = Op> {
        // Mostly a topic's own partitions, sometimes far or negative ones.
        let partition = prop_oneof![8 => 0..200i32, 1 => any::<i32>(), 1 => -5..0i32];
        prop_oneof![
            3 => (partition.clone(), any::<i64>()).prop_map(|(p, o)| Op::Insert(p, o)),
            1 => partition.prop_map(Op::Remove),
        ]
    }

    proptest! {
        #[test]
        fn behaves_as_an_ordered_map(ops in proptest::collection::vec(op(), 0..300)) {
            let mut offsets = PartitionOffsets::default();
            let mut model = BTreeMap::new();
            for op in ops {
                match op {
                    Op::Insert(p, o) => prop_assert_eq!(
                        offsets.insert(p, offset(o)).map(|x| x.offset),
                        model.insert(p, o),
                    ),
                    Op::Remove(p) => prop_assert_eq!(offsets.remove(p).map(|x| x.offset), model.remove(&p)),
                }
                prop_assert_eq!(offsets.len(), model.len());
                if let Repr::Dense { slots, len } = &offsets.repr {
                    // Memory stays within a few times what the offsets need.
                    prop_assert!(slots.len() <= 4 * (len + 1) + SLACK);
                }
            }
            let all: Vec<(i32, i64)> = offsets.iter().map(|(p, o)| (p, o.offset)).collect();
            let expected: Vec<(i32, i64)> = model.iter().map(|(p, o)| (*p, *o)).collect();
            prop_assert_eq!(all, expected);
            for p in [-1, 0, 1, 150, i32::MAX] {
                prop_assert_eq!(offsets.get(p).map(|o| o.offset), model.get(&p).copied());
            }
        }
    }

    #[test]
    fn a_topic_committed_in_any_order_ends_dense() {
        let offsets: PartitionOffsets = (0..1_000).rev().map(|p| (p, offset(i64::from(p)))).collect();
        assert!(is_dense(&offsets));
        let mut scattered = PartitionOffsets::default();
        for p in (0..1_000).map(|k| (k * 7_919) % 1_000) {
            scattered.insert(p, offset(i64::from(p)));
        }
        assert!(is_dense(&scattered));
        assert_eq!(scattered.iter().map(|(p, _)| p).collect::<Vec<_>>(), (0..1_000).collect::<Vec<_>>());
        assert_eq!(offsets.len(), 1_000);
        assert_eq!(offsets.get(999).map(|o| o.offset), Some(999));
    }

    #[test]
    fn a_far_or_negative_partition_turns_the_topic_into_a_map() {
        let mut far = PartitionOffsets::default();
        far.insert(0, offset(1));
        far.insert(1_000_000, offset(2));
        assert!(!is_dense(&far), "a million empty slots for two offsets");
        assert_eq!(far.iter().map(|(p, _)| p).collect::<Vec<_>>(), [0, 1_000_000]);
        let mut negative = PartitionOffsets::default();
        negative.insert(-1, offset(1));
        assert!(!is_dense(&negative));
        assert_eq!(negative.get(-1).map(|o| o.offset), Some(1));
    }
}
