//! `MemoryGroups`: the in-memory engine under both memory storages, sharded by group id.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use group_types::{GroupOffsets, OffsetAndMetadata, TopicPartition};

use crate::{GroupMetadataRecord, StoredGroups};

/// Number of shards. A power of two well above the core count, so that two busy
/// groups rarely share a lock, yet small enough that `load_all` stays cheap.
const SHARDS: usize = 64;

/// A word-at-a-time multiplicative hash (FxHash's rounds), for keys a client
/// cannot choose freely: topic names (topics must exist on the broker) and
/// partition numbers, and for picking a shard. Several times cheaper than the
/// standard SipHash on short keys. Group ids, which any client can invent, keep
/// SipHash inside each shard, so nobody can flood one map with colliding ids.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct WordHasher(u64);

impl WordHasher {
    const K: u64 = 0xf135_7aea_2e62_a9c5;

    fn add(&mut self, word: u64) {
        self.0 = (self.0 ^ word).wrapping_mul(WordHasher::K);
    }
}

impl Hasher for WordHasher {
    fn finish(&self) -> u64 {
        // A multiply only carries differences upwards, and hashbrown indexes by
        // the low bits: fold the high half down (as MurmurHash3's finaliser does).
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^ (h >> 33)
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        let mut word = [0u8; 8];
        word[..rest.len()].copy_from_slice(rest);
        // The length keeps "a" and "a\0" apart (as does `str`'s own 0xff suffix).
        self.add(u64::from_le_bytes(word) ^ ((bytes.len() as u64) << 56));
    }

    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    fn write_i32(&mut self, n: i32) {
        self.add(u64::from(n as u32));
    }
}

type WordMap<K, V> = HashMap<K, V, BuildHasherDefault<WordHasher>>;

/// One topic's offsets by partition.
type Partitions = WordMap<i32, OffsetAndMetadata>;

/// What memory holds for one group.
#[derive(Debug, Default)]
struct GroupData {
    /// Offsets by topic then partition. Keyed by `Arc<str>` so a lookup by `&str`
    /// needs no allocation and every partition of a topic shares one name.
    offsets: WordMap<Arc<str>, Partitions>,
    record: Option<GroupMetadataRecord>,
}

impl GroupData {
    fn is_empty(&self) -> bool {
        self.offsets.is_empty() && self.record.is_none()
    }

    fn insert(&mut self, topic: &Arc<str>, partition: i32, offset: OffsetAndMetadata) {
        match self.offsets.get_mut(&**topic) {
            Some(partitions) => {
                partitions.insert(partition, offset);
            }
            None => {
                self.offsets.entry(Arc::clone(topic)).or_default().insert(partition, offset);
            }
        }
    }

    fn group_offsets(&self, group_id: &str) -> GroupOffsets {
        let mut out = GroupOffsets::new(group_id);
        for (topic, partitions) in &self.offsets {
            let entry = out.offsets.entry(topic.to_string()).or_default();
            entry.extend(partitions.iter().map(|(p, o)| (*p, o.clone())));
        }
        out
    }
}

type Shard = HashMap<String, GroupData>;

/// One shard's lock on cache lines of its own: without the padding, threads
/// working on neighbouring shards would bounce a shared line between cores.
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct Padded<T>(pub(crate) T);

/// Groups sharded by a hash of their id: operations on groups in different
/// shards never contend, and a multi-partition store holds one shard's write
/// lock, which makes it atomic for every reader.
#[derive(Debug)]
pub(crate) struct MemoryGroups {
    shards: Box<[Padded<RwLock<Shard>>]>,
}

impl Default for MemoryGroups {
    fn default() -> MemoryGroups {
        MemoryGroups { shards: (0..SHARDS).map(|_| Padded(RwLock::new(Shard::new()))).collect() }
    }
}

/// A few nanoseconds for a typical group id; it only picks a shard (colliding
/// ids could only crowd one shard; the map inside keeps SipHash).
pub(crate) fn shard_index(group_id: &str, shards: usize) -> usize {
    let mut hash = WordHasher::default();
    hash.write(group_id.as_bytes());
    (hash.finish() as usize) % shards
}

impl MemoryGroups {
    // Nothing done under these locks panics (allocation failure aborts), so a
    // poisoned lock, if one ever occurs, still guards whole groups: keep going.
    fn read(&self, group_id: &str) -> RwLockReadGuard<'_, Shard> {
        self.shards[shard_index(group_id, SHARDS)].0.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self, group_id: &str) -> RwLockWriteGuard<'_, Shard> {
        self.shards[shard_index(group_id, SHARDS)].0.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds to a group, creating it if needed (one lookup when it exists,
    /// which is the common case: a consumer group commits again and again).
    fn add_to_group(&self, group_id: &str, f: impl FnOnce(&mut GroupData)) {
        let mut shard = self.write(group_id);
        match shard.get_mut(group_id) {
            Some(group) => f(group),
            None => f(shard.entry(group_id.to_owned()).or_default()),
        }
    }

    /// Removes from a group, forgetting it once it holds nothing.
    fn remove_from_group(&self, group_id: &str, f: impl FnOnce(&mut GroupData)) {
        let mut shard = self.write(group_id);
        if let Some(group) = shard.get_mut(group_id) {
            f(group);
            if group.is_empty() {
                shard.remove(group_id);
            }
        }
    }

    pub(crate) fn store_one(
        &self,
        group_id: &str,
        topic: &Arc<str>,
        partition: i32,
        offset: OffsetAndMetadata,
    ) {
        self.add_to_group(group_id, |g| g.insert(topic, partition, offset));
    }

    pub(crate) fn store_str(&self, group_id: &str, topic: &str, partition: i32, offset: OffsetAndMetadata) {
        self.add_to_group(group_id, |g| match g.offsets.get_mut(topic) {
            Some(partitions) => {
                partitions.insert(partition, offset);
            }
            None => {
                g.offsets.entry(Arc::from(topic)).or_default().insert(partition, offset);
            }
        });
    }

    pub(crate) fn store_many(&self, group_id: &str, offsets: &[(TopicPartition, OffsetAndMetadata)]) {
        if offsets.is_empty() {
            return;
        }
        self.add_to_group(group_id, |g| {
            for (tp, offset) in offsets {
                g.insert(&tp.topic, tp.partition, offset.clone());
            }
        });
    }

    pub(crate) fn fetch(&self, group_id: &str, topic: &str, partition: i32) -> Option<OffsetAndMetadata> {
        self.read(group_id).get(group_id)?.offsets.get(topic)?.get(&partition).cloned()
    }

    pub(crate) fn fetch_all(&self, group_id: &str) -> GroupOffsets {
        match self.read(group_id).get(group_id) {
            Some(group) => group.group_offsets(group_id),
            None => GroupOffsets::new(group_id),
        }
    }

    pub(crate) fn delete_all(&self, group_id: &str) {
        self.remove_from_group(group_id, |g| g.offsets.clear());
    }

    pub(crate) fn delete_partitions(&self, group_id: &str, partitions: &[TopicPartition]) {
        self.remove_from_group(group_id, |group| {
            for tp in partitions {
                if let Some(by_partition) = group.offsets.get_mut(tp.topic()) {
                    by_partition.remove(&tp.partition);
                    if by_partition.is_empty() {
                        group.offsets.remove(tp.topic());
                    }
                }
            }
        });
    }

    pub(crate) fn store_record(&self, record: &GroupMetadataRecord) {
        self.add_to_group(&record.group_id, |g| g.record = Some(record.clone()));
    }

    /// Stores a record the caller gives away, without copying its members.
    pub(crate) fn store_owned_record(&self, record: GroupMetadataRecord) {
        let mut shard = self.write(&record.group_id);
        match shard.get_mut(record.group_id.as_str()) {
            Some(group) => group.record = Some(record),
            None => {
                let id = record.group_id.clone();
                shard.entry(id).or_default().record = Some(record);
            }
        }
    }

    pub(crate) fn fetch_record(&self, group_id: &str) -> Option<GroupMetadataRecord> {
        self.read(group_id).get(group_id)?.record.clone()
    }

    pub(crate) fn delete_record(&self, group_id: &str) {
        self.remove_from_group(group_id, |g| g.record = None);
    }

    /// Everything, one shard at a time: a consistent view of each group, not a
    /// snapshot of the whole store (start-up loads run before any traffic).
    pub(crate) fn load_all(&self) -> StoredGroups {
        let mut out = StoredGroups::default();
        for shard in self.shards.iter() {
            let shard = shard.0.read().unwrap_or_else(PoisonError::into_inner);
            for (group_id, group) in shard.iter() {
                if let Some(record) = &group.record {
                    out.groups.push(record.clone());
                }
                if !group.offsets.is_empty() {
                    out.offsets.push(group.group_offsets(group_id));
                }
            }
        }
        out.groups.sort_by(|a, b| a.group_id.cmp(&b.group_id));
        out.offsets.sort_by(|a, b| a.group_id.cmp(&b.group_id));
        out
    }

    /// Number of stored offsets, over every group.
    pub(crate) fn offset_count(&self) -> usize {
        self.shards
            .iter()
            .map(|shard| {
                let shard = shard.0.read().unwrap_or_else(PoisonError::into_inner);
                shard.values().flat_map(|g| g.offsets.values()).map(Partitions::len).sum::<usize>()
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_index_spreads_group_ids() {
        let used: std::collections::HashSet<usize> =
            (0..1000).map(|i| shard_index(&format!("group-{i}"), SHARDS)).collect();
        assert_eq!(used.len(), SHARDS, "1000 group ids should touch every shard");
    }

    #[test]
    fn emptied_groups_are_forgotten() {
        let groups = MemoryGroups::default();
        groups.store_str("g", "t", 0, OffsetAndMetadata::new(1, 0));
        groups.delete_partitions("g", &[TopicPartition::new("t", 0)]);
        assert!(groups.read("g").get("g").is_none());
    }
}
