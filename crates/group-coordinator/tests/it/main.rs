//! Integration tests of `group-coordinator`: oracle replay, request tables, §8
//! scenarios and the threaded runtime.

mod oracle;
mod runtime;
mod support;
