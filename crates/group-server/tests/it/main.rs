//! Integration tests of group-server: the wire over TCP, robustness against hostile frames,
//! the command line, and the end-to-end scenarios with real Kafka clients.

mod certs;
mod client;
mod config;
mod e2e;
mod e2e_security;
mod limits;
mod robustness;
mod security;
mod shutdown;
mod startup;
mod wire;
