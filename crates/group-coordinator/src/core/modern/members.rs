//! [`Members`]: a modern group's members, found by hashing their id and listed
//! in id order.
//!
//! A heartbeat finds its member once; in a `BTreeMap` of a thousand members
//! keyed by 30-byte ids that is some twenty string comparisons, most of a
//! settled member's keep-alive (`consumer_keep_alive`). Here a hash of the id
//! finds the member's slot instead. The order the `BTreeMap` gave (the order
//! the assignors, describe answers, classic JoinGroup answers and records see
//! members in) is kept by a second, ordered index of the same slots, so every
//! listing is as it was.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use group_types::hash::ClientMap;

/// Members by id: one hash lookup to find one, every listing in id order.
#[derive(Clone)]
pub(crate) struct Members<M> {
    /// The members; `None` where one left (its slot is reused).
    slots: Vec<Option<M>>,
    /// Slots left free, reused before the vector grows.
    free: Vec<u32>,
    /// Each member's slot, by id. Keyed with the client-safe hasher: member ids
    /// are the clients' to choose (KIP-1082).
    by_id: ClientMap<Arc<str>, u32>,
    /// Each member's slot, in id order.
    order: BTreeMap<Arc<str>, u32>,
}

impl<M> Default for Members<M> {
    fn default() -> Self {
        Members { slots: Vec::new(), free: Vec::new(), by_id: ClientMap::default(), order: BTreeMap::new() }
    }
}

impl<M> Members<M> {
    /// How many members there are.
    pub(crate) fn len(&self) -> usize {
        self.order.len()
    }

    /// True when there are none.
    pub(crate) fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// True when `id` is a member.
    pub(crate) fn contains_key(&self, id: &str) -> bool {
        self.by_id.contains_key(id)
    }

    /// Member `id`.
    pub(crate) fn get(&self, id: &str) -> Option<&M> {
        let slot = *self.by_id.get(id)?;
        self.slots[slot as usize].as_ref()
    }

    /// Member `id`, to change.
    pub(crate) fn get_mut(&mut self, id: &str) -> Option<&mut M> {
        let slot = *self.by_id.get(id)?;
        self.slots[slot as usize].as_mut()
    }

    /// Member `id`, made by `make` first if there is none.
    pub(crate) fn get_or_insert_with(&mut self, id: &Arc<str>, make: impl FnOnce() -> M) -> &mut M {
        let slot = match self.by_id.get(&**id) {
            Some(slot) => *slot,
            None => self.claim(id.clone()),
        };
        self.slots[slot as usize].get_or_insert_with(make)
    }

    /// Sets member `id`, returning the one it replaces.
    pub(crate) fn insert(&mut self, id: Arc<str>, member: M) -> Option<M> {
        match self.by_id.get(&*id) {
            Some(slot) => self.slots[*slot as usize].replace(member),
            None => {
                let slot = self.claim(id);
                self.slots[slot as usize] = Some(member);
                None
            }
        }
    }

    /// Takes member `id` out.
    pub(crate) fn remove(&mut self, id: &str) -> Option<M> {
        let slot = self.by_id.remove(id)?;
        self.order.remove(id);
        self.free.push(slot);
        self.slots[slot as usize].take()
    }

    /// The ids, in order.
    pub(crate) fn keys(&self) -> impl Iterator<Item = &Arc<str>> + Clone + '_ {
        self.order.keys()
    }

    /// The members, in id order.
    pub(crate) fn values(&self) -> impl Iterator<Item = &M> + Clone + '_ {
        self.order.values().filter_map(|slot| self.slots[*slot as usize].as_ref())
    }

    /// The members in no particular order (their slots'), for what does not
    /// depend on order (counts, sets, `any`): a scan of one vector, not a walk
    /// of the ordered index.
    pub(crate) fn values_any_order(&self) -> impl Iterator<Item = &M> + Clone + '_ {
        self.slots.iter().filter_map(Option::as_ref)
    }

    /// The members with their ids, in id order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&Arc<str>, &M)> + Clone + '_ {
        self.order.iter().filter_map(|(id, slot)| Some((id, self.slots[*slot as usize].as_ref()?)))
    }

    /// The members, to change, in no particular order (their slots').
    pub(crate) fn values_mut(&mut self) -> impl Iterator<Item = &mut M> + '_ {
        self.slots.iter_mut().filter_map(Option::as_mut)
    }

    /// A slot for `id`, empty until the caller fills it: a free one if any.
    fn claim(&mut self, id: Arc<str>) -> u32 {
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                // A group holds far fewer members than u32::MAX (group.consumer.max.size).
                let slot = u32::try_from(self.slots.len()).unwrap_or(u32::MAX);
                self.slots.push(None);
                slot
            }
        };
        self.by_id.insert(id.clone(), slot);
        self.order.insert(id, slot);
        slot
    }
}

impl<M: PartialEq> PartialEq for Members<M> {
    /// Equal when they hold the same members under the same ids, wherever
    /// their slots are.
    fn eq(&self, other: &Members<M>) -> bool {
        self.len() == other.len() && self.iter().zip(other.iter()).all(|(a, b)| a == b)
    }
}

impl<M: fmt::Debug> fmt::Debug for Members<M> {
    /// As a map in id order: slots and free lists are not what a member is.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Whatever the inserts and removals, members are found and listed as
        /// a `BTreeMap` finds and lists them.
        #[test]
        fn finds_and_lists_as_an_ordered_map(ops in proptest::collection::vec((0..3u8, 0..12u8, 0..1_000u16), 0..200)) {
            let mut members: Members<u16> = Members::default();
            let mut model: BTreeMap<Arc<str>, u16> = BTreeMap::new();
            for (op, id, value) in ops {
                let id: Arc<str> = Arc::from(format!("member-{id}"));
                match op {
                    0 => prop_assert_eq!(members.insert(id.clone(), value), model.insert(id, value)),
                    1 => prop_assert_eq!(members.remove(&id), model.remove(&id)),
                    _ => {
                        *members.get_or_insert_with(&id, || value) += 1;
                        *model.entry(id.clone()).or_insert(value) += 1;
                    }
                }
                prop_assert_eq!(members.len(), model.len());
                let listed: Vec<(Arc<str>, u16)> = members.iter().map(|(k, v)| (k.clone(), *v)).collect();
                let expected: Vec<(Arc<str>, u16)> = model.iter().map(|(k, v)| (k.clone(), *v)).collect();
                prop_assert_eq!(listed, expected);
                for (k, v) in &model {
                    prop_assert_eq!(members.get(k), Some(v));
                }
            }
            prop_assert!(members.slots.len() <= 12, "slots are reused: {}", members.slots.len());
        }
    }
}
