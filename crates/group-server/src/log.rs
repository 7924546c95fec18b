//! The server's log lines, as `tracing` events (target `group_server`): the binary
//! prints them on stderr; an embedding program routes them with its own subscriber.

//!
//! Macros rather than functions taking a `String`: `tracing` formats a line only
//! when a subscriber wants it, so a server embedded without one formats none.

/// Something an operator wants to see (a connection opened, the server started).
macro_rules! log {
    ($($arg:tt)+) => { tracing::info!(target: "group_server", $($arg)+) };
}

/// A client or request refused, a limit hit, a failure survived.
macro_rules! warning {
    ($($arg:tt)+) => { tracing::warn!(target: "group_server", $($arg)+) };
}

pub(crate) use {log, warning};
