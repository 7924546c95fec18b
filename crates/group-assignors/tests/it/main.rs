//! Integration tests of group-assignors: the conformance vectors, invariants
//! over random inputs, errors and the registry.

mod check;
mod errors;
mod props;
mod registry;
mod scenarios;
mod server_check;
mod server_props;
mod server_range;
mod server_simple;
mod server_simple_java;
mod server_simple_oracle;
mod server_simple_props;
mod server_uniform;
mod sticky_vectors;
mod vectors;
