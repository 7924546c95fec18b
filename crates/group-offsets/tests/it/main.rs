//! Integration tests of group-offsets, one binary.

/// Many threads, many groups.
mod concurrency;
/// The conformance suite against every storage here, and against broken ones.
mod conformance;
/// The consumer-record bugs of the conformance suite's broken engines.
mod consumer_bugs;
/// The offset manager.
mod manager;
/// `MemoryMetadataStore`'s hooks: held appends, faults, partition counts.
mod memory_store;
/// The metadata size limit.
mod metadata_limit;
/// Random operation sequences against models.
mod model;
/// `PersistentOffsetStorage` over a store that fails, fences and holds on demand.
mod persistent;
/// KIP-211 retention, one table per rule.
mod retention;
