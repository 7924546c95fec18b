//! Padding shared by the memory store (one lock per coordinator partition) and
//! the read cache (sharded by group id); hashing is `group_types::hash`'s.

/// One shard's lock on cache lines of its own: without the padding, threads
/// working on neighbouring shards (or coordinator partitions) would bounce a
/// shared line between cores.
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct Padded<T>(pub(crate) T);
