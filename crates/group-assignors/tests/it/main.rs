//! Integration tests of group-assignors: the conformance vectors, invariants
//! over random inputs, errors and the registry.

mod check;
mod errors;
mod props;
mod registry;
mod scenarios;
mod sticky_vectors;
mod vectors;
