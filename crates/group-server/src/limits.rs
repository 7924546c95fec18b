//! `ConnectionLimits`: what one client, or all of them, may hold of the server.
//!
//! Each limit has Kafka's broker setting name where Kafka has one; a limit that is hit
//! refuses or closes only the offending connection, with a log line.

use std::time::Duration;

/// The limits the front end enforces on connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// `max.connections`: connections open at once; one more is closed on accept.
    /// Kafka's default is unlimited (`Int.MaxValue`).
    pub max_connections: usize,
    /// `max.connections.per.ip`: connections open at once from one client address.
    /// Kafka's default is unlimited.
    pub max_connections_per_ip: usize,
    /// Requests read from one connection whose responses are not written yet; the
    /// connection is not read further until one is written (Kafka mutes a channel
    /// the same way, with one request in flight). Memory is bounded by the byte
    /// budgets below whatever this count; it only bounds the coordinator's work
    /// queued per connection (DECISIONS.md "Request and reply memory budgets").
    pub max_in_flight_per_connection: usize,
    /// `queued.max.request.bytes`: request bytes all connections together may hold
    /// before they are handled. A request longer than one read chunk (4 KiB) reserves
    /// its announced length here when its header arrives, and its connection is not
    /// read until the reservation is granted; its buffer still grows only with the
    /// bytes that arrive. Kafka's default is unlimited. A request longer than the
    /// whole budget waits for all of it (Kafka refuses such a configuration; here a
    /// larger `max_frame_bytes` alone keeps working).
    pub queued_max_request_bytes: usize,
    /// Reply bytes one connection may have encoded and not yet written: above it the
    /// connection is not read until its client reads (Kafka mutes a channel while a
    /// response is in flight). One reply may be larger; nothing more is read after it.
    pub queued_max_response_bytes_per_connection: usize,
    /// Reply bytes all connections together may hold encoded and unwritten: above it,
    /// every connection with a reply of its own queued stops being read until that
    /// reply is written.
    pub queued_max_response_bytes: usize,
    /// `connections.max.idle.ms`: a connection with no request in flight and nothing
    /// read for this long is closed (Kafka's default 10 minutes).
    pub connections_max_idle: Duration,
    /// A request whose bytes have started to arrive must arrive whole within this
    /// time, or its connection is closed (a client trickling bytes ties up a buffer).
    pub request_read_timeout: Duration,
    /// `socket.request.max.bytes`: the largest request frame; a bigger one closes
    /// its connection. 1 MiB here (Kafka's 100 MiB serves Produce, which this node
    /// refuses).
    pub max_frame_bytes: usize,
}

impl Default for ConnectionLimits {
    fn default() -> ConnectionLimits {
        ConnectionLimits {
            max_connections: i32::MAX as usize,
            max_connections_per_ip: i32::MAX as usize,
            max_in_flight_per_connection: 128,
            queued_max_request_bytes: 64 << 20,
            queued_max_response_bytes_per_connection: 1 << 20,
            queued_max_response_bytes: 256 << 20,
            connections_max_idle: Duration::from_secs(600),
            request_read_timeout: Duration::from_secs(30),
            max_frame_bytes: 1 << 20,
        }
    }
}
