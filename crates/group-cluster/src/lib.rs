//! Coordinator partition ownership over etcd.
