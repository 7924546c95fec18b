//! The request APIs that name one group, listed once. Each row becomes a method
//! returning a [`Pending`] and its blocking twin, on [`Caller`] (authorized for
//! the caller's context) and on [`GroupCoordinator`] (as
//! [`RequestContext::ANONYMOUS`](crate::RequestContext::ANONYMOUS)): adding an API
//! is one row here, not four hand-written methods.

use group_types::{
    ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse, HeartbeatRequest, HeartbeatResponse,
    JoinGroupRequest, JoinGroupResponse, LeaveGroupRequest, LeaveGroupResponse, OffsetCommitRequest,
    OffsetCommitResponse, OffsetDeleteRequest, OffsetDeleteResponse, OffsetFetchRequest, OffsetFetchResponse,
    SyncGroupRequest, SyncGroupResponse,
};

use super::{Caller, GroupCoordinator, Pending};
use crate::{CoordinatorError, Request};

macro_rules! group_requests {
    ($(
        $pending:ident, $blocking:ident: $req:ident => $resp:ident;
        $what:literal; acl $acl:literal; blocking $waits:literal;
    )*) => {
        impl Caller<'_> {$(
            #[doc = concat!($what, "\n\nAuthorized as ", $acl, ".")]
            pub fn $pending(&self, request: $req) -> Pending<$resp> {
                let inner = &self.coordinator.inner;
                let shard = inner.shard_of(&request.group_id);
                inner.pending_as(self.context, shard, Request::from(request))
            }

            #[doc = concat!("[`", stringify!($pending), "`](Self::", stringify!($pending), "), blocking ", $waits, ".")]
            pub fn $blocking(&self, request: $req) -> Result<$resp, CoordinatorError> {
                self.$pending(request).wait()
            }
        )*}

        impl GroupCoordinator {$(
            #[doc = $what]
            pub fn $pending(&self, request: $req) -> Pending<$resp> {
                self.anonymous().$pending(request)
            }

            #[doc = concat!("[`", stringify!($pending), "`](Self::", stringify!($pending), "), blocking ", $waits, ".")]
            pub fn $blocking(&self, request: $req) -> Result<$resp, CoordinatorError> {
                self.anonymous().$pending(request).wait()
            }
        )*}
    };
}

group_requests! {
    join_group, handle_join_group: JoinGroupRequest => JoinGroupResponse;
        "JoinGroup; the answer comes when the join barrier closes.";
        acl "READ on the group"; blocking "until answered";
    sync_group, handle_sync_group: SyncGroupRequest => SyncGroupResponse;
        "SyncGroup; a follower's answer comes with the leader's assignment.";
        acl "READ on the group"; blocking "until answered";
    heartbeat, handle_heartbeat: HeartbeatRequest => HeartbeatResponse;
        "Heartbeat.";
        acl "READ on the group"; blocking "until answered";
    leave_group, handle_leave_group: LeaveGroupRequest => LeaveGroupResponse;
        "LeaveGroup.";
        acl "READ on the group"; blocking "until answered";
    offset_commit, handle_offset_commit: OffsetCommitRequest => OffsetCommitResponse;
        "OffsetCommit (answered as v9+; see [`Request::OffsetCommit`]).";
        acl "READ on the group and on each topic"; blocking "until the offsets are in storage";
    offset_fetch, handle_offset_fetch: OffsetFetchRequest => OffsetFetchResponse;
        "OffsetFetch.";
        acl "DESCRIBE on the group and on each topic"; blocking "until answered";
    offset_delete, handle_offset_delete: OffsetDeleteRequest => OffsetDeleteResponse;
        "OffsetDelete.";
        acl "DELETE on the group and READ on each topic"; blocking "until the deletion is in storage";
    consumer_group_heartbeat, handle_consumer_group_heartbeat:
        ConsumerGroupHeartbeatRequest => ConsumerGroupHeartbeatResponse;
        "ConsumerGroupHeartbeat (KIP-848); the answer comes once its records are durable.";
        acl "READ on the group and DESCRIBE on each subscribed topic name"; blocking "until answered";
}
