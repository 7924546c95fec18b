//! Integration tests of `group-types`, one binary: error codes, message
//! defaults, the consumer-protocol golden bytes and its properties.

mod error_codes;
mod golden;
mod messages;
mod properties;
