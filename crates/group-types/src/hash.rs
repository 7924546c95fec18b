//! The workspace's hashing policy, one copy of it: which hasher a map uses
//! depends on who chooses its keys.
//!
//! - [`ClientMap`] / [`ClientSet`]: keys a client chooses (group ids, member
//!   and instance ids, protocol and topic names, anything built from them).
//!   foldhash seeded at random once per process, and per map: nobody outside
//!   the process can precompute ids that collide, so a client cannot turn a
//!   group map into a list (a hash-flooding attack) with ids it invents.
//! - [`FastMap`] / [`FastSet`]: keys only this process makes (request and
//!   write sequence numbers, indices): FxHash, the cheapest hash for words.
//!
//! Both are several times cheaper than the standard library's SipHash on the
//! short keys of a heartbeat, which is why neither map is `std`'s default.

use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher;
use std::sync::LazyLock;

/// The hasher state of maps keyed by what clients choose: seeded at random.
pub type ClientState = foldhash::fast::RandomState;

/// A map keyed by what clients choose (group, member, instance ids, names).
pub type ClientMap<K, V> = HashMap<K, V, ClientState>;

/// A set of what clients choose.
pub type ClientSet<K> = HashSet<K, ClientState>;

/// The hasher state of maps keyed by what only this process makes.
pub type FastState = rustc_hash::FxBuildHasher;

/// A map keyed by what only this process makes (sequence numbers, indices).
pub type FastMap<K, V> = HashMap<K, V, FastState>;

/// A set of what only this process makes.
pub type FastSet<K> = HashSet<K, FastState>;

/// One seeded state for the whole process, so that a key always picks the same
/// shard while the process runs, and nobody outside it can tell which.
static SHARDING: LazyLock<ClientState> = LazyLock::new(ClientState::default);

/// The shard (of `shards`, at least one) a client-chosen key lives in: stable
/// for the life of the process, unpredictable outside it.
///
/// Not Kafka's coordinator partition of a group, which is a fixed function of
/// the id (`CoordinatorPartition::of` in group-offsets): this only spreads work.
pub fn shard_index(key: &str, shards: usize) -> usize {
    let hash = SHARDING.hash_one(key);
    // A 64-bit hash modulo a small count: its low bits are as good as its high ones.
    (hash % shards.max(1) as u64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_keeps_its_shard_and_keys_spread_over_all_shards() {
        let shards = 16;
        let used: ClientSet<usize> = (0..1_000).map(|i| shard_index(&format!("group-{i}"), shards)).collect();
        assert_eq!(used.len(), shards);
        assert_eq!(shard_index("orders", shards), shard_index("orders", shards));
        assert_eq!(shard_index("orders", 0), 0);
    }

    #[test]
    fn two_client_maps_hash_the_same_key_differently() {
        // The per-map seed: what one map's layout reveals says nothing of another's.
        let (a, b) = (ClientState::default(), ClientState::default());
        let differ = (0..8).any(|i| a.hash_one(format!("member-{i}")) != b.hash_one(format!("member-{i}")));
        assert!(differ);
    }

    #[test]
    fn maps_work_as_maps() {
        let mut client: ClientMap<String, u32> = ClientMap::default();
        client.insert("g".to_owned(), 1);
        let mut fast: FastMap<u64, u32> = FastMap::default();
        fast.insert(7, 2);
        assert_eq!((client.get("g"), fast.get(&7)), (Some(&1), Some(&2)));
    }
}
