//! `Session`: what one connection knows about its caller, handed to the node with
//! every request: the principal it authenticated as, its address and client id, as
//! the coordinator's [`RequestContext`] that every group request is authorized for.

use std::net::SocketAddr;

use group_coordinator::{Principal, RequestContext};

/// One connection's caller.
#[derive(Debug, Clone)]
pub(crate) struct Session {
    /// The principal, the client host (`/1.2.3.4`, as Kafka reports it) and the
    /// client id of the latest request; group requests run as this caller.
    pub(crate) context: RequestContext,
    /// The client's address (for log lines).
    pub(crate) peer: SocketAddr,
}

impl Session {
    /// A connection from `peer` acting as `principal`.
    pub(crate) fn new(peer: SocketAddr, principal: Principal) -> Session {
        let mut context = RequestContext::new(principal);
        context.client_host = format!("/{}", peer.ip());
        Session { context, peer }
    }

    /// Records the client id a request carries; clients send the same one on every
    /// request of a connection, so this allocates once per connection.
    pub(crate) fn set_client_id(&mut self, client_id: &str) {
        if self.context.client_id != client_id {
            client_id.clone_into(&mut self.context.client_id);
        }
    }
}
