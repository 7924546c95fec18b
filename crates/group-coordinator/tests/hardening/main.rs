//! Hardening tests of `group-coordinator`: restart from storage, a deterministic
//! simulation over many seeds (with writes that complete late), one scenario per
//! former undo path with a request interleaved before a failing write, the oracle
//! replayed through the threaded runtime, a multi-threaded stress run, and the
//! restart repeated on disk with sled.

mod consumer_restart;
mod consumer_sim;
mod disk_full;
mod interleaving;
mod liveness;
mod oracle_runtime;
mod ownership_sim;
mod restart;
mod restart_sled;
mod share_sim;
mod simulation;
mod stress;
mod support;
mod txn_sim;
