//! Hardening tests of `group-coordinator`: restart from storage, a deterministic
//! simulation over many seeds, the oracle replayed through the threaded runtime, and a
//! multi-threaded stress run.

mod liveness;
mod oracle_runtime;
mod restart;
mod simulation;
mod stress;
mod support;
