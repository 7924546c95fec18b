//! Hardening tests of `group-coordinator`: restart from storage, a deterministic
//! simulation over many seeds, the oracle replayed through the threaded runtime, and a
//! multi-threaded stress run.

mod liveness;
mod restart;
mod simulation;
mod support;
