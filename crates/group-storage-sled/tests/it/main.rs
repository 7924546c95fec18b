//! Integration tests of `group-storage-sled`: the store's contract and the
//! conformance suite, owner epochs, group commit, layouts and the migration
//! from v1, consumer-group records on disk, recovery from storage failures
//! (injected, and a full disk), errors on damaged data, the crash test, and
//! a fixture store written by an earlier build.

mod common;
mod conformance;
mod consumer;
mod contract;
mod corruption;
mod crash;
mod disk_full;
mod epochs;
mod fixture;
mod fixture_records;
mod intents;
mod layout;
mod pipeline;
mod recovery;
mod tmpfs;
