//! The integration tests, one binary: Kafka's `SharePartitionTest` cases as script
//! tables by area, and property tests against a per-offset model.

mod aborted;
mod acknowledge;
mod acquire;
mod initialize;
mod lock;
mod props;
mod script;
mod start_offset;
mod write_failure;
