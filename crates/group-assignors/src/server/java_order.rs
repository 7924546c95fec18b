//! The order in which Java iterates a `HashMap` or `HashSet`, for Kafka's
//! share assignor (`SimpleAssignor`), whose choices follow that order: which
//! member is "first", which partition a full member gives up, which
//! partition the next free member gets.
//!
//! [`Table`] follows what `java.util.HashMap` does with its buckets, so its
//! iteration order is Java's: buckets in index order (`spread(hash) &
//! (capacity - 1)`), each bucket's chain in order. `put` (and `HashSet.add`)
//! appends a new key to its chain and doubles the table after the size
//! passes three quarters of it; `computeIfAbsent` puts a new key at the head
//! of its chain and doubles the table before any call, hit or not, that
//! finds it past three quarters. A resize splits chains without reordering
//! them. A chain that grows long (9 keys by `put`, 8 by `computeIfAbsent`)
//! doubles a table of fewer than 64 buckets, and in a larger one becomes a
//! red-black tree bin (`HashMap.TreeNode`: `treeify`, `putTreeVal`,
//! `balanceInsertion`, `moveRootToFront`, `split`), which reorders the chain;
//! Kafka's partition sets reach that as soon as a member holds every 64th
//! partition of a topic. Keys of equal hash in a tree bin compare by
//! `compareTo`; keys that are not `Comparable` (`TopicIdPartition`) are
//! ordered by identity hash in Java, taken here as equal (as with
//! `-XX:hashCode=2`). Removing keys is not emulated: the assignor only
//! removes while iterating, which keeps the others' order.
//!
//! The hash codes are Java's: `String.hashCode` over UTF-16 code units,
//! `Uuid.hashCode`, `Integer.hashCode`, and the record hash of
//! `TopicIdPartition` (`31 * topicId.hashCode() + partition`).

use group_types::TopicId;

/// Java's `HashMap.TREEIFY_THRESHOLD` plus one: the chain length `put`
/// reaches when it makes a tree bin (or grows a small table).
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

/// "No node".
const NIL: u32 = u32::MAX;

/// Chains this short become plain again when a resize splits a tree bin
/// (`UNTREEIFY_THRESHOLD`).
const UNTREEIFY: u32 = 6;

#[derive(Debug, Clone)]
struct Node {
    hash: i32,
    key: u32,
    ord: Ord,
    next: u32,
    prev: u32,
    parent: u32,
    left: u32,
    right: u32,
    red: bool,
    tree: bool,
}

/// How a key compares with another of the same hash in a tree bin
/// (`compareTo`): `None` for keys that are not `Comparable`
/// (`TopicIdPartition`), which Java then orders by identity hash, taken here
/// as "not greater" (as when every identity hash is the same).
pub(super) type Ord = Option<(i64, i64)>;

/// An `Integer` key's order.
pub(super) fn int_ord(v: i32) -> Ord {
    Some((i64::from(v), 0))
}

/// A `Uuid` key's order (`Uuid.compareTo`: the halves as signed longs).
pub(super) fn uuid_ord(t: TopicId) -> Ord {
    let v = t.as_u128();
    Some(((v >> 64) as u64 as i64, v as u64 as i64))
}

/// A Java `HashMap` reduced to its shape: which keys sit in which bucket in
/// which order, red-black tree bins included (`HashMap.TreeNode`), so that
/// its iteration order is Java's even when many keys share a bucket. Keys are
/// the caller's numbers, each with its spread hash and its [`Ord`].
#[derive(Debug)]
pub(super) struct Table {
    tab: Vec<u32>,
    nodes: Vec<Node>,
    size: usize,
    threshold: usize,
    initial: usize,
}

impl Table {
    /// An empty table whose first allocation has `initial` buckets.
    pub(super) fn new(initial: usize) -> Table {
        Table { tab: Vec::new(), nodes: Vec::new(), size: 0, threshold: 0, initial: initial.max(1) }
    }

    /// The keys `0..hashes.len()`, each `put` once in order into a table of
    /// `initial` buckets, in Java's iteration order.
    pub(super) fn put_all(initial: usize, hashes: &[u32], ord: impl Fn(u32) -> Ord) -> Vec<u32> {
        if hashes.len() < 2 {
            return (0..hashes.len() as u32).collect();
        }
        if hashes.len() < LONG_CHAIN as usize {
            // No chain can grow long: only the size grows the table, and the
            // order is the insertion order sorted by bucket.
            let mut cap = initial.max(1);
            while hashes.len() > cap * 3 / 4 {
                cap *= 2;
            }
            let mut keys: Vec<u32> = (0..hashes.len() as u32).collect();
            keys.sort_by_key(|&k| hashes[k as usize] as usize & (cap - 1));
            return keys;
        }
        let mut table = Table::new(initial);
        for (k, &h) in hashes.iter().enumerate() {
            table.put(k as u32, h, ord(k as u32));
        }
        table.keys()
    }

    /// The keys in Java's iteration order.
    pub(super) fn keys(&self) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.size);
        for &head in &self.tab {
            let mut e = head;
            while e != NIL {
                out.push(self.nodes[e as usize].key);
                e = self.nodes[e as usize].next;
            }
        }
        out
    }

    fn new_node(&mut self, hash: i32, key: u32, ord: Ord, next: u32) -> u32 {
        self.nodes.push(Node {
            hash,
            key,
            ord,
            next,
            prev: NIL,
            parent: NIL,
            left: NIL,
            right: NIL,
            red: false,
            tree: false,
        });
        self.nodes.len() as u32 - 1
    }

    fn index(&self, hash: i32) -> usize {
        hash as u32 as usize & (self.tab.len() - 1)
    }

    /// `put` of a key not in the table (`putVal`): at its chain's tail.
    pub(super) fn put(&mut self, key: u32, hash: u32, ord: Ord) {
        let hash = hash as i32;
        if self.tab.is_empty() {
            self.resize();
        }
        let i = self.index(hash);
        let first = self.tab[i];
        if first == NIL {
            self.tab[i] = self.new_node(hash, key, ord, NIL);
        } else if self.nodes[first as usize].tree {
            self.put_tree_val(first, hash, key, ord);
        } else {
            let mut p = first;
            let mut bin_count = 0;
            loop {
                let e = self.nodes[p as usize].next;
                if e == NIL {
                    let x = self.new_node(hash, key, ord, NIL);
                    self.nodes[p as usize].next = x;
                    if bin_count >= LONG_CHAIN - 2 {
                        self.treeify_bin(hash);
                    }
                    break;
                }
                p = e;
                bin_count += 1;
            }
        }
        self.size += 1;
        if self.size > self.threshold {
            self.resize();
        }
    }

    /// A `computeIfAbsent` call for `key`, new or (`fresh` false) already
    /// there: the table grows first if it is past its threshold, and a new
    /// key goes to its chain's head.
    pub(super) fn compute(&mut self, key: u32, hash: u32, ord: Ord, fresh: bool) {
        let hash = hash as i32;
        if self.size > self.threshold || self.tab.is_empty() {
            self.resize();
        }
        if !fresh {
            return;
        }
        let i = self.index(hash);
        let first = self.tab[i];
        if first != NIL && self.nodes[first as usize].tree {
            self.put_tree_val(first, hash, key, ord);
        } else {
            let mut bin_count = 0;
            let mut e = first;
            while e != NIL {
                bin_count += 1;
                e = self.nodes[e as usize].next;
            }
            self.tab[i] = self.new_node(hash, key, ord, first);
            if bin_count >= LONG_CHAIN - 2 {
                self.treeify_bin(hash);
            }
        }
        self.size += 1;
    }

    fn resize(&mut self) {
        let old_cap = self.tab.len();
        if old_cap >= MAX_CAPACITY {
            self.threshold = usize::MAX;
            return;
        }
        let new_cap = if old_cap == 0 { self.initial } else { old_cap * 2 };
        self.threshold = new_cap * 3 / 4;
        let old = std::mem::replace(&mut self.tab, vec![NIL; new_cap]);
        for (j, &e) in old.iter().enumerate() {
            if e == NIL {
                continue;
            }
            if self.nodes[e as usize].next == NIL {
                let at = self.index(self.nodes[e as usize].hash);
                self.tab[at] = e;
            } else if self.nodes[e as usize].tree {
                self.split(e, j, old_cap);
            } else {
                let (lo, hi) = self.split_chain(e, old_cap);
                self.tab[j] = lo.0;
                self.tab[j + old_cap] = hi.0;
            }
        }
    }

    /// The chain from `e` split by `bit`, order kept: ((head, tail, count) lo, hi).
    fn split_chain(&mut self, mut e: u32, bit: usize) -> ((u32, u32, u32), (u32, u32, u32)) {
        let (mut lo, mut hi) = ((NIL, NIL, 0), (NIL, NIL, 0));
        while e != NIL {
            let next = self.nodes[e as usize].next;
            self.nodes[e as usize].next = NIL;
            let side = if self.nodes[e as usize].hash as u32 as usize & bit == 0 { &mut lo } else { &mut hi };
            self.nodes[e as usize].prev = side.1;
            if side.1 == NIL {
                side.0 = e;
            } else {
                self.nodes[side.1 as usize].next = e;
            }
            side.1 = e;
            side.2 += 1;
            e = next;
        }
        (lo, hi)
    }

    /// `TreeNode.split`.
    fn split(&mut self, b: u32, index: usize, bit: usize) {
        let (lo, hi) = self.split_chain(b, bit);
        if lo.0 != NIL {
            if lo.2 <= UNTREEIFY {
                self.untreeify(lo.0);
                self.tab[index] = lo.0;
            } else {
                self.tab[index] = lo.0;
                if hi.0 != NIL {
                    self.treeify(lo.0);
                }
            }
        }
        if hi.0 != NIL {
            if hi.2 <= UNTREEIFY {
                self.untreeify(hi.0);
                self.tab[index + bit] = hi.0;
            } else {
                self.tab[index + bit] = hi.0;
                if lo.0 != NIL {
                    self.treeify(hi.0);
                }
            }
        }
    }

    fn untreeify(&mut self, mut e: u32) {
        while e != NIL {
            let n = &mut self.nodes[e as usize];
            n.tree = false;
            n.parent = NIL;
            n.left = NIL;
            n.right = NIL;
            n.prev = NIL;
            e = n.next;
        }
    }

    fn treeify_bin(&mut self, hash: i32) {
        if self.tab.len() < MIN_TREEIFY_CAPACITY {
            self.resize();
            return;
        }
        let i = self.index(hash);
        let hd = self.tab[i];
        let mut e = hd;
        let mut prev = NIL;
        while e != NIL {
            let n = &mut self.nodes[e as usize];
            n.tree = true;
            n.prev = prev;
            prev = e;
            e = n.next;
        }
        if hd != NIL {
            self.treeify(hd);
        }
    }

    /// Which side of `p` key `(hash, key)` goes (`dir` in Java): by hash,
    /// then `compareTo`, then the tie break.
    fn dir(&self, hash: i32, ord: Ord, p: u32) -> i32 {
        let ph = self.nodes[p as usize].hash;
        if ph > hash {
            -1
        } else if ph < hash {
            1
        } else {
            match (ord, self.nodes[p as usize].ord) {
                (Some(a), Some(b)) if a > b => 1,
                _ => -1,
            }
        }
    }

    /// `TreeNode.treeify` from list head `hd`.
    fn treeify(&mut self, hd: u32) {
        let mut root = NIL;
        let mut x = hd;
        while x != NIL {
            let next = self.nodes[x as usize].next;
            self.nodes[x as usize].left = NIL;
            self.nodes[x as usize].right = NIL;
            if root == NIL {
                self.nodes[x as usize].parent = NIL;
                self.nodes[x as usize].red = false;
                root = x;
            } else {
                let (h, o) = (self.nodes[x as usize].hash, self.nodes[x as usize].ord);
                let mut p = root;
                loop {
                    let dir = self.dir(h, o, p);
                    let xp = p;
                    p = if dir <= 0 { self.nodes[p as usize].left } else { self.nodes[p as usize].right };
                    if p == NIL {
                        self.nodes[x as usize].parent = xp;
                        if dir <= 0 {
                            self.nodes[xp as usize].left = x;
                        } else {
                            self.nodes[xp as usize].right = x;
                        }
                        root = self.balance_insertion(root, x);
                        break;
                    }
                }
            }
            x = next;
        }
        self.move_root_to_front(root);
    }

    /// `TreeNode.putTreeVal` of a new key into the tree bin headed by `first`.
    fn put_tree_val(&mut self, first: u32, hash: i32, key: u32, ord: Ord) {
        let mut root = first;
        while self.nodes[root as usize].parent != NIL {
            root = self.nodes[root as usize].parent;
        }
        let mut p = root;
        loop {
            let dir = self.dir(hash, ord, p);
            let xp = p;
            p = if dir <= 0 { self.nodes[p as usize].left } else { self.nodes[p as usize].right };
            if p == NIL {
                let xpn = self.nodes[xp as usize].next;
                let x = self.new_node(hash, key, ord, xpn);
                self.nodes[x as usize].tree = true;
                if dir <= 0 {
                    self.nodes[xp as usize].left = x;
                } else {
                    self.nodes[xp as usize].right = x;
                }
                self.nodes[xp as usize].next = x;
                self.nodes[x as usize].parent = xp;
                self.nodes[x as usize].prev = xp;
                if xpn != NIL {
                    self.nodes[xpn as usize].prev = x;
                }
                let root = self.balance_insertion(root, x);
                self.move_root_to_front(root);
                return;
            }
        }
    }

    fn move_root_to_front(&mut self, root: u32) {
        if root == NIL || self.tab.is_empty() {
            return;
        }
        let index = self.index(self.nodes[root as usize].hash);
        let first = self.tab[index];
        if root != first {
            self.tab[index] = root;
            let rp = self.nodes[root as usize].prev;
            let rn = self.nodes[root as usize].next;
            if rn != NIL {
                self.nodes[rn as usize].prev = rp;
            }
            if rp != NIL {
                self.nodes[rp as usize].next = rn;
            }
            if first != NIL {
                self.nodes[first as usize].prev = root;
            }
            self.nodes[root as usize].next = first;
            self.nodes[root as usize].prev = NIL;
        }
    }

    fn rotate_left(&mut self, mut root: u32, p: u32) -> u32 {
        let r = self.nodes[p as usize].right;
        if p != NIL && r != NIL {
            let rl = self.nodes[r as usize].left;
            self.nodes[p as usize].right = rl;
            if rl != NIL {
                self.nodes[rl as usize].parent = p;
            }
            let pp = self.nodes[p as usize].parent;
            self.nodes[r as usize].parent = pp;
            if pp == NIL {
                root = r;
                self.nodes[r as usize].red = false;
            } else if self.nodes[pp as usize].left == p {
                self.nodes[pp as usize].left = r;
            } else {
                self.nodes[pp as usize].right = r;
            }
            self.nodes[r as usize].left = p;
            self.nodes[p as usize].parent = r;
        }
        root
    }

    fn rotate_right(&mut self, mut root: u32, p: u32) -> u32 {
        let l = self.nodes[p as usize].left;
        if p != NIL && l != NIL {
            let lr = self.nodes[l as usize].right;
            self.nodes[p as usize].left = lr;
            if lr != NIL {
                self.nodes[lr as usize].parent = p;
            }
            let pp = self.nodes[p as usize].parent;
            self.nodes[l as usize].parent = pp;
            if pp == NIL {
                root = l;
                self.nodes[l as usize].red = false;
            } else if self.nodes[pp as usize].right == p {
                self.nodes[pp as usize].right = l;
            } else {
                self.nodes[pp as usize].left = l;
            }
            self.nodes[l as usize].right = p;
            self.nodes[p as usize].parent = l;
        }
        root
    }

    /// `TreeNode.balanceInsertion`.
    fn balance_insertion(&mut self, mut root: u32, mut x: u32) -> u32 {
        self.nodes[x as usize].red = true;
        loop {
            let mut xp = self.nodes[x as usize].parent;
            if xp == NIL {
                self.nodes[x as usize].red = false;
                return x;
            }
            let mut xpp = self.nodes[xp as usize].parent;
            if !self.nodes[xp as usize].red || xpp == NIL {
                return root;
            }
            let xppl = self.nodes[xpp as usize].left;
            if xp == xppl {
                let xppr = self.nodes[xpp as usize].right;
                if xppr != NIL && self.nodes[xppr as usize].red {
                    self.nodes[xppr as usize].red = false;
                    self.nodes[xp as usize].red = false;
                    self.nodes[xpp as usize].red = true;
                    x = xpp;
                } else {
                    if x == self.nodes[xp as usize].right {
                        x = xp;
                        root = self.rotate_left(root, x);
                        xp = self.nodes[x as usize].parent;
                        xpp = if xp == NIL { NIL } else { self.nodes[xp as usize].parent };
                    }
                    if xp != NIL {
                        self.nodes[xp as usize].red = false;
                        if xpp != NIL {
                            self.nodes[xpp as usize].red = true;
                            root = self.rotate_right(root, xpp);
                        }
                    }
                }
            } else if xppl != NIL && self.nodes[xppl as usize].red {
                self.nodes[xppl as usize].red = false;
                self.nodes[xp as usize].red = false;
                self.nodes[xpp as usize].red = true;
                x = xpp;
            } else {
                if x == self.nodes[xp as usize].left {
                    x = xp;
                    root = self.rotate_right(root, x);
                    xp = self.nodes[x as usize].parent;
                    xpp = if xp == NIL { NIL } else { self.nodes[xp as usize].parent };
                }
                if xp != NIL {
                    self.nodes[xp as usize].red = false;
                    if xpp != NIL {
                        self.nodes[xpp as usize].red = true;
                        root = self.rotate_left(root, xpp);
                    }
                }
            }
        }
    }
}

/// `String.compareTo`: UTF-16 code units.
pub(super) fn string_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
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
    fn presizes_are_javas() {
        assert_eq!(presized(0), 2);
        assert_eq!(presized(2), 8);
        assert_eq!(presized(12), 32);
        assert_eq!(copied(3), 16);
        assert_eq!(copied(13), 32);
    }

    fn order(initial: usize, keys: &[i32], compute: bool) -> Vec<i32> {
        let mut t = Table::new(initial);
        for (i, &k) in keys.iter().enumerate() {
            if compute {
                t.compute(i as u32, spread(k), int_ord(k), true);
            } else {
                t.put(i as u32, spread(k), int_ord(k));
            }
        }
        t.keys().into_iter().map(|i| keys[i as usize]).collect()
    }

    #[test]
    fn put_order_is_by_bucket_then_insertion() {
        // new HashSet<>(): 17 and 1 share bucket 1; 17 came first.
        assert_eq!(order(DEFAULT, &[17, 3, 1, 20], false), [17, 1, 3, 20]);
        // Thirteen keys grow the table to 32 after the thirteenth put.
        let keys: Vec<i32> = (0..13).rev().map(|k| k * 16 % 33).collect();
        let mut sorted = keys.clone();
        sorted.sort_by_key(|&k| (k & 31, 0));
        assert_eq!(order(DEFAULT, &keys, false), sorted);
    }

    #[test]
    fn compute_puts_new_keys_first_and_grows_before() {
        // computeIfAbsent: 1 goes before 17 in bucket 1.
        assert_eq!(order(DEFAULT, &[17, 3, 1, 20], true), [1, 17, 3, 20]);
        // Thirteen keys still sit in 16 buckets: 16 and 0 share bucket 0.
        let keys: Vec<i32> = (0..12).chain([16]).collect();
        assert_eq!(order(DEFAULT, &keys, true)[..2], [16, 0]);
    }

    #[test]
    fn long_chains_grow_small_tables_then_make_tree_bins() {
        // Nine multiples of 64 in a table of 16: two doublings (chains of
        // 9 and 10), then a tree bin at 64 buckets whose root (the 4th key,
        // 192, after balancing) moves to the front.
        let keys: Vec<i32> = (0..11).map(|k| k * 64).collect();
        let got = order(DEFAULT, &keys, false);
        assert_eq!(got.len(), 11);
        assert_ne!(got, keys, "a tree bin reorders its chain: {got:?}");
        let mut sorted = got.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, keys);
    }
}
