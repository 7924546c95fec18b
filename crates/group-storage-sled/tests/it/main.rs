//! Integration tests of `group-storage-sled`: the store's contract, its
//! errors on damaged data, and the crash test.

mod common;
mod conformance;
mod contract;
mod corruption;
mod crash;
