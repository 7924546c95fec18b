//! Hardening tests of `group-coordinator`: restart from storage, a deterministic
//! simulation over many seeds, the oracle replayed through the threaded runtime, and a
//! multi-threaded stress run, and the restart repeated on disk with sled.

mod liveness;
mod oracle_runtime;
mod restart;
mod restart_sled;
mod simulation;
mod stress;
mod support;
