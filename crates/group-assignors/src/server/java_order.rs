//! The order in which Java iterates a `HashMap` or `HashSet`, for Kafka's
//! share assignor (`SimpleAssignor`), whose choices follow that order: which
//! member is "first", which partition a full member gives up, which
//! partition the next free member gets.
//!
//! A Java hash table iterates its buckets in index order (`spread(hash) &
//! (capacity - 1)`) and each bucket's chain in order; a resize splits chains
//! without reordering them. `put` (and `HashSet.add`) appends a new key to
//! its chain and doubles the table after the size passes three quarters of
//! it, or when the chain reaches 9 keys in a table of fewer than 64 buckets
//! (`treeifyBin`). `computeIfAbsent` puts a new key at the head of its chain,
//! doubles the table before inserting when the size is already past three
//! quarters, and grows a small table when the chain reaches 8. So for keys
//! inserted once each the order is a stable sort by bucket at the final
//! capacity of the insertion order ([`Insert::Put`]) or of its reverse
//! ([`Insert::Compute`]). A long chain in a table of 64 buckets or more
//! becomes a red-black tree bin, whose order is not emulated here (the keys
//! keep their chain order); with the hashes Kafka's keys have, that takes
//! many keys colliding in one bucket.
//!
//! The hash codes are Java's: `String.hashCode` over UTF-16 code units,
//! `Uuid.hashCode`, `Integer.hashCode`, and the record hash of
//! `TopicIdPartition` (`31 * topicId.hashCode() + partition`).

use group_types::TopicId;

/// Java's `HashMap.TREEIFY_THRESHOLD` plus one: the chain length at which a
/// small table grows instead of making a tree bin.
const LONG_CHAIN: u32 = 9;

/// Tables at least this big make tree bins (`MIN_TREEIFY_CAPACITY`).
const MIN_TREEIFY_CAPACITY: usize = 64;

/// Java's largest table (`MAXIMUM_CAPACITY`).
const MAX_CAPACITY: usize = 1 << 30;

/// `String.hashCode`.
pub(super) fn string_hash(s: &str) -> i32 {
    s.encode_utf16().fold(0i32, |h, unit| h.wrapping_mul(31).wrapping_add(i32::from(unit)))
}

/// `Uuid.hashCode`: the two halves xor-ed, then the two words of that.
pub(super) fn uuid_hash(id: TopicId) -> i32 {
    let v = id.as_u128();
    let x = ((v >> 64) as u64) ^ (v as u64);
    ((x >> 32) as u32 ^ x as u32) as i32
}

/// `TopicIdPartition.hashCode` (a record: `31 * topic + partition`).
pub(super) fn topic_partition_hash(topic_hash: i32, partition: i32) -> i32 {
    topic_hash.wrapping_mul(31).wrapping_add(partition)
}

/// `HashMap.hash`: the high half folded into the low half.
pub(super) fn spread(hash: i32) -> u32 {
    let h = hash as u32;
    h ^ (h >> 16)
}

/// `HashMap.tableSizeFor`: the power of two at or above `cap`.
fn table_size_for(cap: usize) -> usize {
    cap.max(1).next_power_of_two().min(MAX_CAPACITY)
}

/// The first table of `new HashMap<>()` / `new HashSet<>()`.
pub(super) const DEFAULT: usize = 16;

/// The first table of `AssignorHelpers.newHashMap(n)` / `newHashSet(n)`:
/// `new HashMap<>((int) ((n + 1) / 0.75f + 1))`.
pub(super) fn presized(n: usize) -> usize {
    let wanted = ((n as f32 + 1.0) / 0.75f32 + 1.0) as usize;
    table_size_for(wanted)
}

/// The first table of `new HashSet<>(collection)` (Java 19 and later:
/// `HashMap.newHashMap(max(size, 12))`, which is `ceil(n / 0.75)` buckets).
pub(super) fn copied(n: usize) -> usize {
    let n = n.max(12) as f64;
    table_size_for((n / 0.75).ceil() as usize)
}

/// How keys enter a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Insert {
    /// `put` / `HashSet.add`: at the chain's tail, growing after.
    Put,
    /// `computeIfAbsent`: at the chain's head, growing before.
    Compute,
}

/// The capacity of a table that started with `initial` buckets after the keys
/// with spread hashes `hashes` were inserted, in order, once each.
pub(super) fn capacity(initial: usize, hashes: &[u32], how: Insert) -> usize {
    let mut cap = initial.max(1);
    let long = match how {
        Insert::Put => LONG_CHAIN,
        Insert::Compute => LONG_CHAIN - 1,
    };
    // Without that many keys no chain can force a resize; only the size can.
    if hashes.len() < long as usize {
        let size = match how {
            Insert::Put => hashes.len(),
            // The last insert does not grow the table.
            Insert::Compute => hashes.len().saturating_sub(1),
        };
        while size > cap * 3 / 4 && cap < MAX_CAPACITY {
            cap *= 2;
        }
        return cap;
    }
    let mut chains = vec![0u32; cap];
    for (size, &h) in hashes.iter().enumerate() {
        if how == Insert::Compute && size > cap * 3 / 4 && cap < MAX_CAPACITY {
            cap *= 2;
            recount(&mut chains, cap, &hashes[..size]);
        }
        let b = h as usize & (cap - 1);
        chains[b] += 1;
        if chains[b] >= long && cap < MIN_TREEIFY_CAPACITY {
            cap *= 2;
            recount(&mut chains, cap, &hashes[..=size]);
        }
        if how == Insert::Put && size + 1 > cap * 3 / 4 && cap < MAX_CAPACITY {
            cap *= 2;
            recount(&mut chains, cap, &hashes[..=size]);
        }
    }
    cap
}

/// The capacity of a table filled by `computeIfAbsent` calls for the keys
/// with spread hashes `hashes` (new keys, in order), when `trailing_hit`
/// says a call for a key already there came after the last new one: every
/// call, hit or not, first grows a table whose size is past three quarters.
pub(super) fn computed_capacity(initial: usize, hashes: &[u32], trailing_hit: bool) -> usize {
    let cap = capacity(initial, hashes, Insert::Compute);
    if trailing_hit && hashes.len() > cap * 3 / 4 && cap < MAX_CAPACITY { cap * 2 } else { cap }
}

fn recount(chains: &mut Vec<u32>, cap: usize, hashes: &[u32]) {
    chains.clear();
    chains.resize(cap, 0);
    for &h in hashes {
        chains[h as usize & (cap - 1)] += 1;
    }
}

/// Sorts `items` (in insertion order, each with its spread hash) into the
/// order Java iterates them in a table of `cap` buckets.
pub(super) fn iteration_order<T>(items: &mut [T], cap: usize, how: Insert, hash: impl Fn(&T) -> u32) {
    let mask = cap as u32 - 1;
    if how == Insert::Compute {
        // Heads first: within a bucket, the last inserted leads.
        items.reverse();
    }
    items.sort_by_key(|item| hash(item) & mask);
}

/// `items` (in insertion order) as Java iterates them in a table that started
/// with `initial` buckets.
pub(super) fn ordered<T>(items: &mut [T], initial: usize, how: Insert, hash: impl Fn(&T) -> u32) {
    if items.len() < 2 {
        return;
    }
    let hashes: Vec<u32> = items.iter().map(&hash).collect();
    let cap = capacity(initial, &hashes, how);
    iteration_order(items, cap, how, hash);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_javas() {
        // "A".hashCode() == 65, "m1".hashCode() == 3428, "".hashCode() == 0.
        assert_eq!(string_hash("A"), 65);
        assert_eq!(string_hash("m1"), 3428);
        assert_eq!(string_hash(""), 0);
        // "polygenelubricants".hashCode() == Integer.MIN_VALUE.
        assert_eq!(string_hash("polygenelubricants"), i32::MIN);
        // new Uuid(1L, 2L).hashCode() == 3; new Uuid(1L << 32, 0).hashCode() == 1.
        assert_eq!(uuid_hash(TopicId::from_u128((1 << 64) | 2)), 3);
        assert_eq!(uuid_hash(TopicId::from_u128(1 << 96)), 1);
        assert_eq!(spread(0x0001_0000), 0x0001_0001);
    }

    #[test]
    fn capacities_are_javas() {
        assert_eq!(presized(0), 2);
        assert_eq!(presized(2), 8);
        assert_eq!(presized(12), 32);
        assert_eq!(copied(3), 16);
        assert_eq!(copied(13), 32);
        assert_eq!(capacity(DEFAULT, &[0; 0], Insert::Put), 16);
        let thirteen: Vec<u32> = (0..13).collect();
        assert_eq!(capacity(DEFAULT, &thirteen, Insert::Put), 32);
        // computeIfAbsent grows before inserting: 13 keys still fit 16 buckets.
        assert_eq!(capacity(DEFAULT, &thirteen, Insert::Compute), 16);
        assert_eq!(capacity(DEFAULT, &(0..14).collect::<Vec<u32>>(), Insert::Compute), 32);
        // A later call for a key already there grows it all the same.
        assert_eq!(computed_capacity(DEFAULT, &thirteen, true), 32);
        assert_eq!(computed_capacity(DEFAULT, &thirteen, false), 16);
        // A chain of 9 doubles a small table once per key that lengthens it.
        let same: Vec<u32> = (0..9).map(|i| i * 64).collect();
        assert_eq!(capacity(DEFAULT, &same, Insert::Put), 32);
        let same: Vec<u32> = (0..11).map(|i| i * 64).collect();
        assert_eq!(capacity(DEFAULT, &same, Insert::Put), 64);
        let same: Vec<u32> = (0..8).map(|i| i * 64).collect();
        assert_eq!(capacity(DEFAULT, &same, Insert::Compute), 32);
    }

    #[test]
    fn order_is_by_bucket_then_insertion() {
        let mut keys = [17u32, 3, 1, 20];
        ordered(&mut keys, DEFAULT, Insert::Put, |&k| k);
        assert_eq!(keys, [17, 1, 3, 20]);
        let mut keys = [17u32, 3, 1, 20];
        ordered(&mut keys, DEFAULT, Insert::Compute, |&k| k);
        assert_eq!(keys, [1, 17, 3, 20]);
    }
}
