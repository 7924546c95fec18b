//! Integration tests of group-server: the wire over TCP, robustness against hostile frames,
//! the command line, metrics and logs, and the end-to-end scenarios with real Kafka clients.

mod acl;
mod binary;
mod certs;
mod client;
#[cfg(feature = "cluster")]
mod cluster;
mod config;
mod consumer_protocol;
mod e2e;
mod e2e_consumer_protocol;
mod e2e_group_configs;
mod e2e_security;
mod e2e_share;
mod group_ids;
mod limits;
mod memory;
mod metrics;
mod robustness;
mod security;
mod shutdown;
mod startup;
mod txn;
mod wire;
