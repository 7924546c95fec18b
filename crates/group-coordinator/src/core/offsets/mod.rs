//! Committed offsets, beside the groups (Kafka's `OffsetMetadataManager`): one
//! [`OffsetStore`] per coordinator partition holds every group's offsets,
//! whatever the group's kind, and the handlers of OffsetCommit, OffsetFetch,
//! OffsetDelete and the retention job (`apis.rs`) work on it. A group's kind
//! only validates a commit or a fetch and says which topics it subscribes to.

mod apis;
pub(crate) mod cache;
pub(crate) mod transactions;
mod txn_apis;
#[cfg(test)]
mod txn_tests;

use std::hash::BuildHasher;
use std::sync::Arc;

use group_types::hash::ClientState;
use group_types::{OffsetAndMetadata, TopicPartition};
use hashbrown::hash_table::HashTable;

pub(crate) use self::apis::metadata_too_large;
pub(crate) use self::cache::OffsetCache;

/// Who commits, as a group's kind checks it (`Group.validateOffsetCommit`'s
/// arguments): an OffsetCommit's or a TxnOffsetCommit's member fields.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Committer<'a> {
    pub(crate) member_id: &'a str,
    pub(crate) instance_id: Option<&'a str>,
    /// The generation (classic) or member epoch (consumer); -1 for none.
    pub(crate) generation: i32,
    pub(crate) api_version: i16,
    /// A TxnOffsetCommit: member fields optional, the group's state not enforced.
    pub(crate) transactional: bool,
    /// The partitions committed: a consumer group checks an older member
    /// epoch against each one's assignment epoch (KIP-1251).
    pub(crate) offsets: &'a [group_types::TopicEntries<group_types::OffsetCommitData>],
}

impl<'a> Committer<'a> {
    pub(crate) fn plain(req: &'a group_types::OffsetCommitRequest) -> Committer<'a> {
        Committer {
            member_id: &req.member_id,
            instance_id: req.group_instance_id.as_deref(),
            generation: req.generation_id,
            api_version: req.api_version,
            transactional: false,
            offsets: &req.offsets,
        }
    }

    pub(crate) fn transactional(req: &'a group_types::TxnOffsetCommitRequest) -> Committer<'a> {
        Committer {
            member_id: &req.member_id,
            instance_id: req.group_instance_id.as_deref(),
            generation: req.generation_id,
            api_version: req.api_version,
            transactional: true,
            offsets: &req.offsets,
        }
    }
}

/// Every group's committed offsets in one coordinator partition.
///
/// A table rather than a map keyed by `Arc<str>`: a commit finds its group's
/// offsets by the name it already holds, and only a group's first commit
/// clones the `Arc` into the store (a map's `entry` takes its key by value, so
/// every commit would clone the name and drop the clone again).
#[derive(Debug, Default)]
pub(crate) struct OffsetStore {
    groups: HashTable<(Arc<str>, OffsetCache)>,
    state: ClientState,
}

impl OffsetStore {
    /// The offsets of group `id`, `None` when it has none.
    pub(crate) fn get(&self, id: &str) -> Option<&OffsetCache> {
        if self.groups.is_empty() {
            return None;
        }
        self.groups.find(self.state.hash_one(id), |(g, _)| **g == *id).map(|(_, o)| o)
    }

    /// The offsets of group `id`, created empty if it has none. Inlined: it is
    /// on every commit's path.
    #[inline]
    pub(crate) fn entry(&mut self, id: &Arc<str>) -> &mut OffsetCache {
        let state = &self.state;
        let hash = state.hash_one(&**id);
        // The store's key is usually the group's own `Arc` (the first commit
        // cloned it): the pointer decides without comparing the names. A group
        // with offsets already, the common case, is found as by `get_mut`; only
        // a miss makes room for an insert.
        let same = |(g, _): &(Arc<str>, OffsetCache)| Arc::ptr_eq(g, id) || **g == **id;
        match self.groups.find_entry(hash, same) {
            Ok(slot) => &mut slot.into_mut().1,
            Err(absent) => {
                let table = absent.into_table();
                let slot = table
                    .insert_unique(hash, (id.clone(), OffsetCache::default()), |(g, _)| state.hash_one(&**g));
                &mut slot.into_mut().1
            }
        }
    }

    /// The offsets of group `id`, if it has any, to change.
    pub(crate) fn get_mut(&mut self, id: &str) -> Option<&mut OffsetCache> {
        if self.groups.is_empty() {
            return None;
        }
        self.groups.find_mut(self.state.hash_one(id), |(g, _)| **g == *id).map(|(_, o)| o)
    }

    /// Takes every offset of group `id` out.
    pub(crate) fn remove(&mut self, id: &str) -> Option<OffsetCache> {
        if self.groups.is_empty() {
            return None;
        }
        let slot = self.groups.find_entry(self.state.hash_one(id), |(g, _)| **g == *id).ok()?;
        Some(slot.remove().0.1)
    }

    /// Puts back `offsets` as group `id`'s (an undo).
    pub(crate) fn restore(&mut self, id: Arc<str>, offsets: Option<OffsetCache>) {
        match offsets {
            Some(offsets) => *self.entry(&id) = offsets,
            None => {
                self.remove(&id);
            }
        }
    }

    /// Sets (`Some`) or removes (`None`) one partition's offset, without undo.
    pub(crate) fn set(&mut self, id: &Arc<str>, tp: TopicPartition, offset: Option<OffsetAndMetadata>) {
        match offset {
            Some(offset) => {
                self.entry(id).insert(tp, offset);
            }
            None => {
                if let Some(cache) = self.get_mut(id) {
                    cache.remove(&tp);
                }
            }
        }
    }
}

/// One topic's changed partitions, each with its offset before the change, in
/// the order of the changes. The first is held inline: a 1-partition commit
/// allocates nothing for its undo.
#[derive(Debug, Default)]
pub(crate) struct OffsetChanges {
    first: Option<(i32, Option<OffsetAndMetadata>)>,
    rest: Vec<(i32, Option<OffsetAndMetadata>)>,
}

impl OffsetChanges {
    /// Room for `n` changes.
    pub(crate) fn with_capacity(n: usize) -> OffsetChanges {
        OffsetChanges { first: None, rest: Vec::with_capacity(n.saturating_sub(1)) }
    }

    /// `partition` changed from `prev`.
    pub(crate) fn push(&mut self, partition: i32, prev: Option<OffsetAndMetadata>) {
        match self.first {
            None => self.first = Some((partition, prev)),
            Some(_) => self.rest.push((partition, prev)),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.first.is_none()
    }

    /// The changes, oldest first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &(i32, Option<OffsetAndMetadata>)> {
        self.first.iter().chain(&self.rest)
    }

    /// The changes, newest first: the order to undo them in.
    pub(crate) fn into_newest_first(self) -> impl Iterator<Item = (i32, Option<OffsetAndMetadata>)> {
        self.rest.into_iter().rev().chain(self.first)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_come_back_oldest_first_and_are_undone_newest_first() {
        let mut c = OffsetChanges::with_capacity(3);
        assert!(c.is_empty());
        for (p, o) in [(0, None), (1, Some(10)), (0, Some(20))] {
            c.push(p, o.map(|o| OffsetAndMetadata::new(o, 0)));
        }
        let oldest: Vec<(i32, Option<i64>)> =
            c.iter().map(|(p, o)| (*p, o.as_ref().map(|o| o.offset))).collect();
        assert_eq!(oldest, [(0, None), (1, Some(10)), (0, Some(20))]);
        let newest: Vec<(i32, Option<i64>)> =
            c.into_newest_first().map(|(p, o)| (p, o.map(|o| o.offset))).collect();
        assert_eq!(newest, [(0, Some(20)), (1, Some(10)), (0, None)]);
    }

    #[test]
    fn a_group_is_found_by_its_name_whichever_arc_names_it() {
        let mut store = OffsetStore::default();
        let own: Arc<str> = Arc::from("g");
        let other: Arc<str> = Arc::from("g");
        store.entry(&own).insert(TopicPartition::new("t", 0), OffsetAndMetadata::new(1, 0));
        store.entry(&other).insert(TopicPartition::new("t", 1), OffsetAndMetadata::new(2, 0));
        assert_eq!(store.get("g").map(OffsetCache::len), Some(2), "one group, whichever Arc names it");
        assert!(store.get("h").is_none());
        // Enough groups for the table to grow (rehashing every key) several times.
        for i in 0..200_i64 {
            let id: Arc<str> = Arc::from(format!("g{i}"));
            store.entry(&id).insert(TopicPartition::new("t", 0), OffsetAndMetadata::new(i, 0));
        }
        for i in 0..200_i64 {
            let offset = store.get(&format!("g{i}")).and_then(|o| o.get_partition("t", 0)).map(|o| o.offset);
            assert_eq!(offset, Some(i));
        }
        assert_eq!(store.get("g").map(OffsetCache::len), Some(2));
        assert_eq!(store.remove("g").map(|o| o.len()), Some(2));
        assert!(store.get_mut("g").is_none());
        assert!(store.remove("g").is_none());
    }

    #[test]
    fn a_group_s_offsets_are_set_removed_and_restored_whole() {
        let mut store = OffsetStore::default();
        let g: Arc<str> = Arc::from("g");
        let tp = TopicPartition::new("t", 0);
        store.set(&g, tp.clone(), Some(OffsetAndMetadata::new(5, 0)));
        assert_eq!(store.get("g").map_or(0, OffsetCache::len), 1);
        let taken = store.remove("g");
        assert_eq!(store.get("g").map_or(0, OffsetCache::len), 0);
        store.restore(g.clone(), taken);
        assert_eq!(store.get("g").and_then(|o| o.get(&tp)).map(|o| o.offset), Some(5));
        store.set(&g, tp.clone(), None);
        assert_eq!(store.get("g").map_or(0, OffsetCache::len), 0);
    }
}
