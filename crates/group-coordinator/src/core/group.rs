//! The in-memory model of one classic group and its members (`kafka-semantics.md` §0).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use group_offsets::{GroupMetadataRecord, MemberMetadataRecord};
use group_types::{GroupState, JoinGroupMember, ProtocolMetadata, Subscription};

use crate::core::member_index::MemberIndex;
use crate::core::offset_cache::OffsetCache;
use crate::core::types::{Deadline, RequestId, WriteId};
use group_types::hash::ClientMap;

/// One protocol a member supports: its name is shared by every member that
/// names it (the group counts them), its metadata is the member's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MemberProtocol {
    pub(crate) name: Arc<str>,
    pub(crate) metadata: Box<[u8]>,
}

impl MemberProtocol {
    /// As the protocol's types have it.
    pub(crate) fn to_metadata(&self) -> ProtocolMetadata {
        ProtocolMetadata::new(&*self.name, self.metadata.to_vec())
    }
}

/// One member of a classic group.
#[derive(Debug, Clone)]
pub(crate) struct Member {
    pub(crate) id: Arc<str>,
    pub(crate) instance: Option<Box<str>>,
    // Exactly sized: a group holds one of each per member. The protocol type is
    // the group's (a member with another one is refused).
    pub(crate) client_id: Box<str>,
    pub(crate) client_host: Box<str>,
    pub(crate) rebalance_timeout_ms: i32,
    pub(crate) session_timeout_ms: i32,
    pub(crate) protocols: Box<[MemberProtocol]>,
    pub(crate) assignment: Box<[u8]>,
    pub(crate) awaiting_join: Option<RequestId>,
    pub(crate) awaiting_sync: Option<RequestId>,
    pub(crate) is_new: bool,
    pub(crate) pending_sync: bool,
    pub(crate) session_deadline: Deadline,
    /// When the session timer queued for this member fires (`Engine::arm_session`):
    /// at or before `session_deadline`; `None` when none is queued.
    pub(crate) session_armed: Deadline,
}

impl Member {
    pub(crate) fn metadata(&self, protocol: &str) -> &[u8] {
        self.protocols.iter().find(|p| &*p.name == protocol).map_or(&[][..], |p| &p.metadata[..])
    }

    pub(crate) fn matches(&self, protocols: &[ProtocolMetadata]) -> bool {
        self.protocols.len() == protocols.len()
            && self
                .protocols
                .iter()
                .zip(protocols)
                .all(|(a, b)| *a.name == *b.name && *a.metadata == *b.metadata)
    }

    fn vote<'a>(&'a self, candidates: &BTreeSet<&str>) -> Option<&'a str> {
        self.protocols.iter().map(|p| &*p.name).find(|name| candidates.contains(name))
    }
}

/// The join timer's two shapes: the initial-delay window (§3.4) or the rebalance timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JoinTimer {
    Initial { delay_ms: i32, remaining_ms: i32 },
    Rebalance,
}

/// One classic group.
#[derive(Debug, Clone)]
pub(crate) struct Group {
    pub(crate) id: Arc<str>,
    pub(crate) state: GroupState,
    pub(crate) previous_state: GroupState,
    pub(crate) state_ts: i64,
    pub(crate) generation: i32,
    pub(crate) protocol_type: Option<String>,
    pub(crate) protocol_name: Option<String>,
    pub(crate) leader: Option<Arc<str>>,
    members: Vec<Member>,
    index: MemberIndex,
    pub(crate) static_members: ClientMap<Box<str>, Arc<str>>,
    pub(crate) pending_join: BTreeMap<Arc<str>, i64>,
    num_awaiting_join: usize,
    num_pending_sync: usize,
    protocol_counts: ClientMap<Arc<str>, usize>,
    /// Ids replaced (static replacement) while they still owed a SyncGroup: Kafka keeps
    /// them in its pending-sync set, so the sync timer still sees them as missing.
    pub(crate) stale_pending_sync: Vec<Arc<str>>,
    pub(crate) new_member_added: bool,
    pub(crate) subscribed_topics: Option<BTreeSet<String>>,
    pub(crate) join_timer: Option<(i64, JoinTimer)>,
    pub(crate) sync_timer: Option<(i64, i32)>,
    pub(crate) offsets: OffsetCache,
    /// The outstanding write of this group's metadata, if any: answers about the
    /// group are held until it commits (they could reveal what it wrote).
    pub(crate) barrier: Option<WriteId>,
    /// Set when the group is a KIP-848 consumer group (`consumer/`): this shell
    /// then only holds its offsets and barrier.
    pub(crate) consumer: Option<Box<crate::core::consumer::ConsumerGroup>>,
}

impl Group {
    pub(crate) fn new(id: Arc<str>, now: i64) -> Group {
        Group {
            id,
            state: GroupState::Empty,
            previous_state: GroupState::Empty,
            state_ts: now,
            generation: 0,
            protocol_type: None,
            protocol_name: None,
            leader: None,
            members: Vec::new(),
            index: MemberIndex::default(),
            static_members: ClientMap::default(),
            pending_join: BTreeMap::new(),
            num_awaiting_join: 0,
            num_pending_sync: 0,
            protocol_counts: ClientMap::default(),
            stale_pending_sync: Vec::new(),
            new_member_added: false,
            subscribed_topics: None,
            join_timer: None,
            sync_timer: None,
            offsets: OffsetCache::default(),
            barrier: None,
            consumer: None,
        }
    }

    pub(crate) fn transition(&mut self, to: GroupState, now: i64) {
        self.previous_state = self.state;
        self.state = to;
        self.state_ts = now;
        if to == GroupState::Stable {
            // Members join one by one and the list doubles as it grows: once the
            // group settles, give back what it will not use (memory per member).
            self.members.shrink_to_fit();
        }
    }

    pub(crate) fn is(&self, state: GroupState) -> bool {
        self.state == state
    }

    pub(crate) fn members(&self) -> &[Member] {
        &self.members
    }

    pub(crate) fn len(&self) -> usize {
        self.members.len()
    }

    pub(crate) fn position(&self, id: &str) -> Option<usize> {
        self.index.get(&self.members, id)
    }

    pub(crate) fn member(&self, id: &str) -> Option<&Member> {
        self.position(id).map(|i| &self.members[i])
    }

    pub(crate) fn at(&self, i: usize) -> &Member {
        &self.members[i]
    }

    pub(crate) fn at_mut(&mut self, i: usize) -> &mut Member {
        &mut self.members[i]
    }

    pub(crate) fn has_member(&self, id: &str) -> bool {
        self.position(id).is_some()
    }

    pub(crate) fn is_leader(&self, id: &str) -> bool {
        self.leader.as_deref() == Some(id)
    }

    pub(crate) fn static_member_id(&self, instance: &str) -> Option<&Arc<str>> {
        self.static_members.get(instance)
    }

    /// Room for `n` more members, exactly (a load knows how many come).
    pub(crate) fn reserve_members(&mut self, n: usize) {
        self.members.reserve_exact(n);
        self.index.reserve(&self.members, n);
    }

    /// Adds a member that parks `join` (§2.1.3 `group.add`).
    pub(crate) fn add(&mut self, mut member: Member, join: Option<RequestId>) {
        if let Some(instance) = &member.instance {
            self.static_members.insert(instance.clone(), member.id.clone());
        }
        self.count_protocols(&member.protocols, true);
        member.awaiting_join = join;
        if join.is_some() {
            self.num_awaiting_join += 1;
        }
        if member.pending_sync {
            self.num_pending_sync += 1;
        }
        self.pending_join.remove(&member.id);
        if self.leader.is_none() {
            self.leader = Some(member.id.clone());
        }
        self.members.push(member);
        self.index.insert(&self.members, self.members.len() - 1);
    }

    /// Removes a member (`ClassicGroup.remove`): its parked requests are returned to the
    /// caller unanswered; a new leader is the first remaining member.
    pub(crate) fn remove(&mut self, id: &str) -> Option<Member> {
        self.pending_join.remove(id);
        let i = self.index.remove(&self.members, id)?;
        let member = self.members.remove(i);
        self.index.close_gap(i);
        self.count_protocols(&member.protocols, false);
        if member.awaiting_join.is_some() {
            self.num_awaiting_join -= 1;
        }
        if member.pending_sync {
            self.num_pending_sync -= 1;
        }
        if let Some(instance) = &member.instance
            && self.static_members.get(&**instance).is_some_and(|m| **m == *member.id)
        {
            self.static_members.remove(&**instance);
        }
        if self.is_leader(id) {
            self.leader = self.members.first().map(|m| m.id.clone());
        }
        Some(member)
    }

    /// Renames a member in place (static replacement), keeping everything it holds.
    pub(crate) fn rename(&mut self, old: &str, new: Arc<str>) {
        let Some(i) = self.index.remove(&self.members, old) else { return };
        if self.members[i].pending_sync {
            self.members[i].pending_sync = false;
            self.num_pending_sync -= 1;
            self.stale_pending_sync.push(Arc::from(old));
        }
        self.members[i].id = new.clone();
        self.index.insert(&self.members, i);
        let member = &mut self.members[i];
        // The timer queued under the old id is not this id's.
        member.session_armed = Deadline::NONE;
        if let Some(instance) = &member.instance {
            self.static_members.insert(instance.clone(), new.clone());
        }
        if self.leader.as_deref() == Some(old) {
            self.leader = Some(new);
        }
    }

    fn count_protocols(&mut self, protocols: &[MemberProtocol], add: bool) {
        for p in protocols {
            if add {
                match self.protocol_counts.get_mut(&*p.name) {
                    Some(count) => *count += 1,
                    None => {
                        self.protocol_counts.insert(p.name.clone(), 1);
                    }
                }
            } else if let Some(count) = self.protocol_counts.get_mut(&*p.name) {
                *count -= 1;
                if *count == 0 {
                    self.protocol_counts.remove(&*p.name);
                }
            }
        }
    }

    /// `protocols` as a member keeps them: each name the one the group already
    /// holds (member `reuse`'s, when it names the same ones in the same order,
    /// as a rejoin usually does), so a hundred members naming `range` hold one.
    pub(crate) fn member_protocols(
        &self,
        protocols: Vec<ProtocolMetadata>,
        reuse: Option<usize>,
    ) -> Box<[MemberProtocol]> {
        let old = reuse.map_or(&[][..], |i| &self.members[i].protocols[..]);
        protocols
            .into_iter()
            .enumerate()
            .map(|(k, p)| {
                let name = match old.get(k) {
                    Some(o) if *o.name == *p.name => o.name.clone(),
                    _ => match self.protocol_counts.get_key_value(p.name.as_str()) {
                        Some((known, _)) => known.clone(),
                        None => Arc::from(p.name),
                    },
                };
                MemberProtocol { name, metadata: p.metadata.into() }
            })
            .collect()
    }

    /// A rejoining member's protocols (`updateMember`). A rejoin usually names
    /// the same protocols in the same order: then only their metadata is
    /// replaced, in place.
    pub(crate) fn rejoin_protocols(&mut self, i: usize, protocols: Vec<ProtocolMetadata>) {
        let held = &mut self.members[i].protocols;
        if held.len() == protocols.len() && held.iter().zip(&protocols).all(|(a, b)| *a.name == *b.name) {
            for (a, b) in held.iter_mut().zip(protocols) {
                a.metadata = b.metadata.into();
            }
            return;
        }
        let protocols = self.member_protocols(protocols, Some(i));
        self.update_protocols(i, protocols);
    }

    /// Replaces a member's protocols (`updateMember`).
    pub(crate) fn update_protocols(&mut self, i: usize, protocols: Box<[MemberProtocol]>) {
        let old = std::mem::replace(&mut self.members[i].protocols, protocols);
        let new = &self.members[i].protocols;
        // A rejoin usually names the same protocols (only metadata changes): the
        // per-name counts stay as they are.
        let same_names = old.len() == new.len() && old.iter().zip(new).all(|(a, b)| a.name == b.name);
        if !same_names {
            let new = std::mem::take(&mut self.members[i].protocols);
            self.count_protocols(&old, false);
            self.count_protocols(&new, true);
            self.members[i].protocols = new;
        }
    }

    /// Parks (or clears) a member's JoinGroup; returns the request it replaces.
    pub(crate) fn set_awaiting_join(&mut self, i: usize, join: Option<RequestId>) -> Option<RequestId> {
        let old = std::mem::replace(&mut self.members[i].awaiting_join, join);
        match (old.is_some(), join.is_some()) {
            (false, true) => self.num_awaiting_join += 1,
            (true, false) => self.num_awaiting_join -= 1,
            _ => {}
        }
        old
    }

    pub(crate) fn set_pending_sync(&mut self, i: usize, pending: bool) {
        let old = std::mem::replace(&mut self.members[i].pending_sync, pending);
        match (old, pending) {
            (false, true) => self.num_pending_sync += 1,
            (true, false) => self.num_pending_sync -= 1,
            _ => {}
        }
    }

    pub(crate) fn clear_pending_sync(&mut self) {
        for m in &mut self.members {
            m.pending_sync = false;
        }
        self.num_pending_sync = 0;
        self.stale_pending_sync.clear();
    }

    pub(crate) fn has_received_all_syncs(&self) -> bool {
        self.num_pending_sync == 0 && self.stale_pending_sync.is_empty()
    }

    pub(crate) fn num_awaiting_join(&self) -> usize {
        self.num_awaiting_join
    }

    pub(crate) fn all_members_joined(&self) -> bool {
        self.members.len() == self.num_awaiting_join && self.pending_join.is_empty()
    }

    /// §2.1.1: the protocol support check.
    pub(crate) fn supports_protocols(&self, protocol_type: &str, protocols: &[ProtocolMetadata]) -> bool {
        if self.is(GroupState::Empty) {
            !protocol_type.is_empty() && !protocols.is_empty()
        } else {
            self.protocol_type.as_deref() == Some(protocol_type)
                && protocols.iter().any(|p| {
                    self.protocol_counts.get(p.name.as_str()).copied().unwrap_or(0) == self.members.len()
                })
        }
    }

    /// §4: every member votes for its first commonly supported protocol.
    pub(crate) fn select_protocol(&self) -> Option<String> {
        let n = self.members.len();
        let candidates: BTreeSet<&str> =
            self.protocol_counts.iter().filter(|(_, c)| **c == n).map(|(name, _)| &**name).collect();
        let mut votes: Vec<(&str, usize)> = Vec::new();
        for m in &self.members {
            if let Some(name) = m.vote(&candidates) {
                match votes.iter_mut().find(|(v, _)| *v == name) {
                    Some((_, count)) => *count += 1,
                    None => votes.push((name, 1)),
                }
            }
        }
        // Ties: Kafka keeps the first maximum in java.util.HashMap iteration order,
        // which for a handful of names is the order of their hash buckets.
        let capacity = java_hash_map_capacity(votes.len());
        let mut best: Option<(&str, usize, usize)> = None;
        for (name, count) in &votes {
            let bucket = java_bucket(name, capacity);
            let better = match best {
                None => true,
                Some((_, best_count, best_bucket)) => {
                    *count > best_count || (*count == best_count && bucket < best_bucket)
                }
            };
            if better {
                best = Some((name, *count, bucket));
            }
        }
        best.map(|(name, _, _)| name.to_owned())
    }

    /// At join completion: the current leader if it rejoined, else the first rejoined member.
    pub(crate) fn maybe_elect_joined_leader(&mut self) -> bool {
        let Some(leader) = self.leader.clone() else { return false };
        if self.member(&leader).is_some_and(|m| m.awaiting_join.is_some()) {
            return true;
        }
        match self.members.iter().find(|m| m.awaiting_join.is_some()) {
            Some(m) => {
                self.leader = Some(m.id.clone());
                true
            }
            None => false,
        }
    }

    /// Largest rebalance timeout over the members (evaluated when a timer is armed).
    pub(crate) fn rebalance_timeout_ms(&self) -> i32 {
        self.members.iter().map(|m| m.rebalance_timeout_ms).max().unwrap_or(0)
    }

    /// The leader's member list: every member's metadata for the selected protocol.
    pub(crate) fn join_members(&self) -> Vec<JoinGroupMember> {
        let protocol = self.protocol_name.as_deref().unwrap_or("");
        self.members
            .iter()
            .map(|m| JoinGroupMember {
                member_id: str::to_owned(&m.id),
                group_instance_id: m.instance.as_deref().map(str::to_owned),
                metadata: m.metadata(protocol).to_vec(),
            })
            .collect()
    }

    /// §6.6: the union of the decoded subscriptions, `None` when unknown.
    pub(crate) fn compute_subscribed_topics(&self) -> Option<BTreeSet<String>> {
        if self.protocol_type.as_deref() != Some("consumer") {
            return None;
        }
        if self.members.is_empty() {
            return Some(BTreeSet::new());
        }
        let protocol = self.protocol_name.as_deref()?;
        let mut topics = BTreeSet::new();
        for m in &self.members {
            topics.extend(Subscription::decode_topics(m.metadata(protocol)).ok()?);
        }
        Some(topics)
    }

    /// The persisted form: members with their metadata for the selected protocol and
    /// the given (or current) assignments.
    /// `assignments`, when given, is indexed like the members.
    pub(crate) fn record(&self, assignments: Option<&[Vec<u8>]>) -> GroupMetadataRecord {
        let protocol = self.protocol_name.as_deref().unwrap_or("");
        GroupMetadataRecord {
            group_id: str::to_owned(&self.id),
            protocol_type: self.protocol_type.clone(),
            generation_id: self.generation,
            protocol_name: self.protocol_name.clone(),
            leader_id: self.leader.as_deref().map(str::to_owned),
            state_timestamp_ms: Some(self.state_ts),
            members: self
                .members
                .iter()
                .enumerate()
                .map(|(i, m)| MemberMetadataRecord {
                    member_id: str::to_owned(&m.id),
                    group_instance_id: m.instance.as_deref().map(str::to_owned),
                    client_id: m.client_id.to_string(),
                    client_host: m.client_host.to_string(),
                    rebalance_timeout_ms: m.rebalance_timeout_ms,
                    session_timeout_ms: m.session_timeout_ms,
                    subscription: m.metadata(protocol).to_vec(),
                    assignment: match assignments {
                        Some(list) => list.get(i).cloned().unwrap_or_default(),
                        None => m.assignment.to_vec(),
                    },
                })
                .collect(),
        }
    }

    /// The record J writes when a JoinGroup creates a group and nothing else (§10 #11).
    pub(crate) fn empty_record(&self) -> GroupMetadataRecord {
        GroupMetadataRecord {
            group_id: str::to_owned(&self.id),
            protocol_type: None,
            generation_id: self.generation,
            protocol_name: None,
            leader_id: None,
            state_timestamp_ms: Some(self.state_ts),
            members: Vec::new(),
        }
    }
}

fn java_hash_code(s: &str) -> i32 {
    s.encode_utf16().fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

fn java_hash_map_capacity(entries: usize) -> usize {
    let mut capacity = 16;
    while entries * 4 > capacity * 3 {
        capacity *= 2;
    }
    capacity
}

fn java_bucket(s: &str, capacity: usize) -> usize {
    let h = java_hash_code(s) as u32;
    ((h ^ (h >> 16)) as usize) & (capacity - 1)
}
