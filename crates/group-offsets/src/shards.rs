//! Hashing and padding shared by the memory store (topic and partition maps,
//! one lock per coordinator partition) and the read cache (sharded by group id).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

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

/// A map keyed by topics or partition numbers, hashed with [`WordHasher`].
pub(crate) type WordMap<K, V> = HashMap<K, V, BuildHasherDefault<WordHasher>>;

/// One shard's lock on cache lines of its own: without the padding, threads
/// working on neighbouring shards (or coordinator partitions) would bounce a
/// shared line between cores.
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct Padded<T>(pub(crate) T);

/// A few nanoseconds for a typical group id; it only picks a shard (colliding
/// ids could only crowd one shard; the map inside keeps SipHash).
pub(crate) fn shard_index(group_id: &str, shards: usize) -> usize {
    let mut hash = WordHasher::default();
    hash.write(group_id.as_bytes());
    (hash.finish() as usize) % shards
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_index_spreads_group_ids() {
        let used: std::collections::HashSet<usize> =
            (0..1000).map(|i| shard_index(&format!("group-{i}"), 64)).collect();
        assert_eq!(used.len(), 64, "1000 group ids should touch every shard");
    }

    #[test]
    fn the_length_keeps_trailing_nuls_apart() {
        let hash = |bytes: &[u8]| {
            let mut h = WordHasher::default();
            h.write(bytes);
            h.finish()
        };
        assert_ne!(hash(b"a"), hash(b"a\0"));
        assert_ne!(hash(b""), hash(b"\0"));
    }
}
