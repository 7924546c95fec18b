//! Integration tests of `group-coordinator`: oracle replay, request tables, §8
//! scenarios and the threaded runtime.

mod assignment;
mod assignment_batching;
mod assignment_epochs;
mod authorization;
mod authorized_operations;
mod classic_timers;
mod consumer_scenarios;
mod group_configs;
mod invariants;
mod late_writes;
mod non_blocking;
mod observability;
mod oracle;
mod oracle_common;
mod oracle_kip848;
mod oracle_share;
mod oracle_txn;
mod ownership;
mod regex_refresh;
mod runtime;
mod scenarios;
mod share_runtime;
mod share_state;
mod support;
mod tables;
mod topic_metadata;
