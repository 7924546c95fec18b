//! Kafka's consumer-group partition assignors: Range and RoundRobin exactly as
//! Kafka's Java classes assign (KIP-881 rack-aware Range included), and Sticky
//! and CooperativeSticky with strong balance, generation-checked stickiness
//! and a safe incremental hand-over, all fast at a million partitions.
//!
//! # Brief overview
//!
//! - [`PartitionAssignor`]: the trait; [`assign`](PartitionAssignor::assign)
//!   takes the members' [`MemberSubscription`](group_types::MemberSubscription)s
//!   and the partitions that exist, and returns a [`GroupAssignment`] with every
//!   member (members that get nothing map to an empty list).
//!   [`assign_with_racks`](PartitionAssignor::assign_with_racks) adds each
//!   partition's replica racks ([`ReplicaRacks`]); assignors without rack
//!   awareness inherit a default that ignores them.
//! - [`RangeAssignor`] (`"range"`), [`RoundRobinAssignor`] (`"roundrobin"`),
//!   [`StickyAssignor`] (`"sticky"`, with
//!   [`assign_with_previous`](StickyAssignor::assign_with_previous)) and
//!   [`CooperativeStickyAssignor`] (`"cooperative-sticky"`).
//! - [`get_assignor`] and [`register_assignor`]: a process-wide registry by
//!   protocol name, holding the built-ins and user assignors.
//! - [`StickyAssignorUserData`]: the eager sticky assignor's user-data codec.
//! - [`AssignError`]: every way the input can be refused.
//! - [`server`]: the coordinator's assignors, which compute targets from topic
//!   ids: KIP-848's `uniform` and `range`, and for share groups (KIP-932)
//!   Kafka's [`SimpleAssignor`] (`"simple"`, behind the [`ShareAssignor`]
//!   trait, by name from [`share_assignor`]), re-exported here.
//!
//! # Input rules
//!
//! Member and topic order is byte-wise string order, which equals Java's
//! UTF-16 `compareTo` except when comparing supplementary-plane characters
//! with U+E000..U+FFFF. Subscribed topics missing from the metadata are
//! skipped; partitions of unsubscribed topics stay unassigned; zero members
//! give an empty map. Partition numbers need not be contiguous.
//!
//! # Rack awareness (KIP-881)
//!
//! Pass replica racks with [`assign_with_racks`](PartitionAssignor::assign_with_racks)
//! (one [`ReplicaRacks`] per partition, parallel to the partition slice) and
//! member racks in `MemberSubscription::rack_id`. Range follows Kafka's Java
//! class exactly (per-topic decision, co-partitioned topics first). Sticky and
//! CooperativeSticky switch rack mode on for the whole group when some member
//! has a rack, member racks meet replica racks and not every partition has the
//! same racks; then a partition owned on the wrong rack is not kept up front:
//! with identical subscriptions it goes to a member on a replica's rack that
//! still has room under its quota (else back to its owner); with heterogeneous
//! subscriptions the rack breaks ties among the least loaded subscribers.
//! Balance always wins. RoundRobin ignores racks, as in Kafka.
//!
//! # Performance
//!
//! Topics are indexed once and sorted; partitions get dense integer indices;
//! members with equal subscriptions share one subscription class. Give members
//! with the same subscription one shared list
//! ([`MemberSubscription::with_shared_topics`](group_types::MemberSubscription::with_shared_topics),
//! as a server interning subscriptions holds them): they are then grouped by
//! the list's address in O(1) per member, as Kafka's broker-side assignors use
//! pre-indexed subscriptions, so a thousand members of ten thousand topics cost
//! no more than one. Lists that are not shared are compared by content
//! (addresses of the names first), each distinct list is resolved to topic ids
//! once, in one merge-like pass when it is in name order. The inner loops work
//! on integer arrays; the output is written member by member, each entry
//! cloning the input's `Arc<str>` topic name. A million partitions over 2,000
//! members take tens of milliseconds.
//!
//! # Errors
//!
//! [`AssignError::DuplicateMember`], [`AssignError::DuplicatePartition`],
//! [`AssignError::NegativePartition`], [`AssignError::TooManyPartitions`],
//! [`AssignError::RackListLengthMismatch`] for bad input;
//! [`AssignError::InvalidUserData`] from [`StickyAssignorUserData::decode`];
//! [`AssignError::InvalidAssignorName`] and
//! [`AssignError::AssignorAlreadyRegistered`] from [`register_assignor`].
//!
//! # Who should depend on this crate
//!
//! The group coordinator (server-side assignment) and anything acting as a
//! group leader. It depends only on `group-types`; it does no I/O and keeps no
//! state besides the registry.
//!
//! # Example
//!
//! ```
//! use group_assignors::get_assignor;
//! use group_types::{MemberSubscription, TopicPartition};
//!
//! let members = [MemberSubscription::new("c1", ["orders"]), MemberSubscription::new("c2", ["orders"])];
//! let partitions: Vec<_> = (0..4).map(|p| TopicPartition::new("orders", p)).collect();
//! let assignor = get_assignor("cooperative-sticky").expect("built in");
//! let out = assignor.assign(&members, &partitions)?;
//! assert_eq!(out["c1"].len() + out["c2"].len(), 4);
//! assert_eq!(out["c1"].len(), 2);
//! # Ok::<(), group_assignors::AssignError>(())
//! ```

mod assignor;
mod cluster;
mod cooperative;
mod error;
mod range;
mod registry;
mod round_robin;
pub mod server;
mod sticky;
mod sticky_engine;
mod sticky_user_data;

pub(crate) use crate::assignor::check_rack_len;
pub use crate::assignor::{GroupAssignment, PartitionAssignor, ReplicaRacks};
pub use crate::cooperative::CooperativeStickyAssignor;
pub use crate::error::AssignError;
pub use crate::range::RangeAssignor;
pub use crate::registry::{get_assignor, register_assignor};
pub use crate::round_robin::RoundRobinAssignor;
pub use crate::server::{
    AllAssignable, AssignablePartitions, ShareAssignor, ShareGroupSpec, SimpleAssignor, share_assignor,
};
pub use crate::sticky::StickyAssignor;
pub use crate::sticky_user_data::StickyAssignorUserData;
