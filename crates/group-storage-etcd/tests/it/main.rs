//! Integration tests of `group-storage-etcd` against real etcd processes:
//! the conformance suite, fencing by epoch and by owner key, oversized
//! batches, snapshots against the memory store (KIP-848 consumer-group
//! records among them), and a 3-member cluster losing and regaining its
//! quorum, and bad bytes in etcd.

mod common;
mod conformance;
mod consumer;
mod corruption;
mod fencing;
mod quorum;
mod snapshots;
