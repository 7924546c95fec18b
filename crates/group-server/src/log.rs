//! The server's log lines, as `tracing` events (target `group_server`): the binary
//! prints them on stderr; an embedding program routes them with its own subscriber.

/// Something an operator wants to see (a connection opened, the server started).
pub(crate) fn log(message: &str) {
    tracing::info!(target: "group_server", "{message}");
}

/// A client or request refused, a limit hit, a failure survived.
pub(crate) fn warn(message: &str) {
    tracing::warn!(target: "group_server", "{message}");
}
