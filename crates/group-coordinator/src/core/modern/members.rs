//! [`Members`]: a modern group's members, found by hashing their id and listed
//! in id order.
//!
//! A heartbeat finds its member once; in a `BTreeMap` of a thousand members
//! keyed by 30-byte ids that is some twenty string comparisons, most of a
//! settled member's keep-alive (`consumer_keep_alive`). Here a hash of the id
//! finds the member's slot instead. The order the `BTreeMap` gave (the order
//! the assignors, describe answers, classic JoinGroup answers and records see
//! members in) is kept as the slots sorted by id, so every listing is as it was.
//!
//! Neither index holds an id: both hold slot numbers and read the id the
//! member keeps ([`Keyed`]), as the classic group's `MemberIndex` does. A map
//! and a tree keyed by a pointer to every id cost some 75 bytes a member; the
//! two lists of slot numbers, about 12. A join or a leave moves the ordered
//! list's tail (4 bytes a member), which is less than the tree's rebalancing.

use std::fmt;
use std::hash::BuildHasher;
use std::sync::Arc;

use group_types::hash::ClientState;
use hashbrown::HashTable;

/// What [`Members`] reads of a member: the id it is kept under, which does
/// not change while it is a member.
pub(crate) trait Keyed {
    /// The member's id.
    fn id(&self) -> &Arc<str>;
}

/// Members by id: one hash lookup to find one, every listing in id order.
#[derive(Clone)]
pub(crate) struct Members<M> {
    /// The members; `None` where one left (its slot is reused).
    slots: Vec<Option<M>>,
    /// Slots left free, reused before the vector grows.
    free: Vec<u32>,
    /// Each member's slot, by the hash of its id. Seeded: member ids are the
    /// clients' to choose (KIP-1082).
    by_id: HashTable<u32>,
    state: ClientState,
    /// The members' slots, in id order.
    order: Vec<u32>,
}

impl<M> Default for Members<M> {
    fn default() -> Self {
        Members {
            slots: Vec::new(),
            free: Vec::new(),
            by_id: HashTable::new(),
            state: ClientState::default(),
            order: Vec::new(),
        }
    }
}

impl<M: Keyed> Members<M> {
    /// How many members there are.
    pub(crate) fn len(&self) -> usize {
        self.order.len()
    }

    /// True when there are none.
    pub(crate) fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// True when `id` is a member.
    #[inline]
    pub(crate) fn contains_key(&self, id: &str) -> bool {
        self.slot(id).is_some()
    }

    /// Member `id`.
    #[inline]
    pub(crate) fn get(&self, id: &str) -> Option<&M> {
        let slot = self.slot(id)?;
        self.slots[slot as usize].as_ref()
    }

    /// Member `id`, to change (not its id).
    #[inline]
    pub(crate) fn get_mut(&mut self, id: &str) -> Option<&mut M> {
        let slot = self.slot(id)?;
        self.slots[slot as usize].as_mut()
    }

    /// Member `id`, made by `make` first if there is none; `make` gives it
    /// that id.
    pub(crate) fn get_or_insert_with(&mut self, id: &Arc<str>, make: impl FnOnce() -> M) -> &mut M {
        let slot = match self.slot(id) {
            Some(slot) => slot,
            None => self.claim(make()),
        };
        let Some(member) = self.slots[slot as usize].as_mut() else {
            unreachable!("an indexed slot holds a member")
        };
        member
    }

    /// Sets member `id` (`member`'s own id), returning the one it replaces.
    pub(crate) fn insert(&mut self, id: Arc<str>, member: M) -> Option<M> {
        debug_assert_eq!(id, *member.id(), "kept under its own id");
        match self.slot(&id) {
            Some(slot) => self.slots[slot as usize].replace(member),
            None => {
                self.claim(member);
                None
            }
        }
    }

    /// Takes member `id` out.
    pub(crate) fn remove(&mut self, id: &str) -> Option<M> {
        let Members { slots, by_id, state, order, free } = self;
        let found = by_id.find_entry(state.hash_one(id), |&s| is(slots, s, id)).ok()?;
        let (slot, _) = found.remove();
        if let Ok(at) = order.binary_search_by(|&s| id_of(slots, s).cmp(id)) {
            order.remove(at);
        }
        free.push(slot);
        slots[slot as usize].take()
    }

    /// The ids, in order.
    pub(crate) fn keys(&self) -> impl Iterator<Item = &Arc<str>> + Clone + '_ {
        self.values().map(Keyed::id)
    }

    /// The members, in id order.
    pub(crate) fn values(&self) -> impl Iterator<Item = &M> + Clone + '_ {
        self.order.iter().filter_map(|slot| self.slots[*slot as usize].as_ref())
    }

    /// The members in no particular order (their slots'), for what does not
    /// depend on order (counts, sets, `any`): a scan of one vector, not a walk
    /// of the ordered index.
    pub(crate) fn values_any_order(&self) -> impl Iterator<Item = &M> + Clone + '_ {
        self.slots.iter().filter_map(Option::as_ref)
    }

    /// The members with their ids, in id order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&Arc<str>, &M)> + Clone + '_ {
        self.values().map(|m| (m.id(), m))
    }

    /// The members, to change (not their ids), in no particular order (their
    /// slots').
    pub(crate) fn values_mut(&mut self) -> impl Iterator<Item = &mut M> + '_ {
        self.slots.iter_mut().filter_map(Option::as_mut)
    }

    /// The slot of member `id`.
    #[inline]
    fn slot(&self, id: &str) -> Option<u32> {
        self.by_id.find(self.state.hash_one(id), |&s| is(&self.slots, s, id)).copied()
    }

    /// Puts `member` (not yet a member) in a slot, a free one if any, and
    /// indexes it.
    fn claim(&mut self, member: M) -> u32 {
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                // A group holds far fewer members than u32::MAX (group.consumer.max.size).
                let slot = u32::try_from(self.slots.len()).unwrap_or(u32::MAX);
                self.slots.push(None);
                slot
            }
        };
        let Members { slots, by_id, state, order, .. } = self;
        let hash = state.hash_one(&**member.id());
        let at = order.binary_search_by(|&s| id_of(slots, s).cmp(&**member.id())).unwrap_or_else(|at| at);
        slots[slot as usize] = Some(member);
        order.insert(at, slot);
        by_id.insert_unique(hash, slot, |&s| state.hash_one(id_of(slots, s)));
        slot
    }
}

/// The id of the member in `slot` (`""` for an empty slot, which no index
/// holds).
#[inline]
fn id_of<M: Keyed>(slots: &[Option<M>], slot: u32) -> &str {
    slots[slot as usize].as_ref().map_or("", |m| m.id())
}

/// True when `slot` holds member `id`.
#[inline]
fn is<M: Keyed>(slots: &[Option<M>], slot: u32, id: &str) -> bool {
    slots[slot as usize].as_ref().is_some_and(|m| **m.id() == *id)
}

impl<M: Keyed + PartialEq> PartialEq for Members<M> {
    /// Equal when they hold the same members under the same ids, wherever
    /// their slots are.
    fn eq(&self, other: &Members<M>) -> bool {
        self.len() == other.len() && self.iter().zip(other.iter()).all(|(a, b)| a == b)
    }
}

impl<M: fmt::Debug> fmt::Debug for Members<M> {
    /// As a list in id order (each member shows its id): slots and free
    /// lists are not what a member is.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.order.iter().filter_map(|s| self.slots[*s as usize].as_ref())).finish()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;

    /// A member that is its id and a number.
    #[derive(Debug, Clone, PartialEq)]
    struct Member(Arc<str>, u16);

    impl Keyed for Member {
        fn id(&self) -> &Arc<str> {
            &self.0
        }
    }

    proptest! {
        /// Whatever the inserts and removals, members are found and listed as
        /// a `BTreeMap` finds and lists them.
        #[test]
        fn finds_and_lists_as_an_ordered_map(ops in proptest::collection::vec((0..3u8, 0..40u8, any::<u16>()), 0..300)) {
            let mut members: Members<Member> = Members::default();
            let mut model: BTreeMap<Arc<str>, u16> = BTreeMap::new();
            for (op, id, value) in ops {
                let id: Arc<str> = Arc::from(format!("member-{id}"));
                match op {
                    0 => prop_assert_eq!(
                        members.insert(id.clone(), Member(id.clone(), value)).map(|m| m.1),
                        model.insert(id, value)
                    ),
                    1 => prop_assert_eq!(members.remove(&id).map(|m| m.1), model.remove(&id)),
                    _ => {
                        let m = members.get_or_insert_with(&id, || Member(id.clone(), value));
                        m.1 = m.1.wrapping_add(1);
                        let v = model.entry(id.clone()).or_insert(value);
                        *v = v.wrapping_add(1);
                    }
                }
                prop_assert_eq!(members.len(), model.len());
                let listed: Vec<(Arc<str>, u16)> = members.iter().map(|(k, v)| (k.clone(), v.1)).collect();
                let expected: Vec<(Arc<str>, u16)> = model.iter().map(|(k, v)| (k.clone(), *v)).collect();
                prop_assert_eq!(listed, expected);
                for n in 0..40u8 {
                    let id = format!("member-{n}");
                    prop_assert_eq!(members.get(&id).map(|m| m.1), model.get(id.as_str()).copied());
                    prop_assert_eq!(members.contains_key(&id), model.contains_key(id.as_str()));
                }
                let mut any_order: Vec<u16> = members.values_any_order().map(|m| m.1).collect();
                any_order.sort_unstable();
                let mut values: Vec<u16> = model.values().copied().collect();
                values.sort_unstable();
                prop_assert_eq!(any_order, values);
            }
            prop_assert!(members.slots.len() <= 40, "slots are reused: {}", members.slots.len());
        }
    }
}
