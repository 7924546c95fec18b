//! Where each member of a classic group sits in the group's member list, found
//! by member id.
//!
//! A map from id to position would keep a second pointer to every id beside the
//! member's own (24 bytes an entry, plus the table's slack); this table keeps
//! only the position and hashes the id the member itself holds, so a 100-member
//! group spends about 6 bytes a member on it. Ids are chosen by clients, so the
//! hash is seeded ([`ClientState`]).

use std::hash::BuildHasher;

use group_types::hash::ClientState;
use hashbrown::HashTable;

use crate::core::classic::Member;

/// Positions in a member list, by the members' ids.
#[derive(Debug, Clone, Default)]
pub(crate) struct MemberIndex {
    table: HashTable<u32>,
    state: ClientState,
}

impl MemberIndex {
    fn hash(&self, id: &str) -> u64 {
        self.state.hash_one(id)
    }

    /// The position of the member `id` in `members`.
    pub(crate) fn get(&self, members: &[Member], id: &str) -> Option<usize> {
        self.table.find(self.hash(id), |&p| *members[p as usize].id == *id).map(|&p| p as usize)
    }

    /// Room for `n` more members.
    pub(crate) fn reserve(&mut self, members: &[Member], n: usize) {
        let state = &self.state;
        self.table.reserve(n, |&p| state.hash_one(&*members[p as usize].id));
    }

    /// Records that `members[position]` (already in the list) is there.
    pub(crate) fn insert(&mut self, members: &[Member], position: usize) {
        let state = &self.state;
        let hash = state.hash_one(&*members[position].id);
        // Positions fit in u32: a group holds at most `group.max.size` members.
        self.table.insert_unique(hash, position as u32, |&p| state.hash_one(&*members[p as usize].id));
    }

    /// Forgets the member `id` (still in `members`); returns where it was.
    pub(crate) fn remove(&mut self, members: &[Member], id: &str) -> Option<usize> {
        let entry = self.table.find_entry(self.hash(id), |&p| *members[p as usize].id == *id).ok()?;
        let (position, _) = entry.remove();
        Some(position as usize)
    }

    /// The member at `position` left the list and those after it moved up one.
    pub(crate) fn close_gap(&mut self, position: usize) {
        for p in self.table.iter_mut() {
            if *p as usize > position {
                *p -= 1;
            }
        }
    }
}
