//! Integration tests of `group-storage-etcd` against real etcd processes:
//! the conformance suite, fencing by epoch and by owner key, oversized
//! batches, snapshots against the memory store (KIP-848 consumer-group
//! records among them), a 3-member cluster losing and regaining its quorum,
//! bad bytes in etcd, and the store on its caller's runtime.

mod common;
mod conformance;
mod consumer;
mod corruption;
mod embedding;
mod fencing;
mod group_commit;
mod quorum;
mod snapshots;
