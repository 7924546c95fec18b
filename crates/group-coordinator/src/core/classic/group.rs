//! The in-memory model of one classic group and its members (`kafka-semantics.md` §0,
//! Kafka's `ClassicGroup`). Its offsets are not here: see `core/offsets/`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use bytes::Bytes;
use group_offsets::{GroupMetadataRecord, MemberMetadataRecord};
use group_types::{
    GroupId, GroupInstanceId, GroupState, JoinGroupMember, MemberId, ProtocolMetadata, ProtocolName,
    ProtocolType, Subscription,
};

use crate::core::classic::member_index::MemberIndex;
use crate::core::classic::member_payload::MemberPayload;
use crate::core::types::{Deadline, RequestId, WriteId};
use group_types::hash::ClientMap;

/// One member of a classic group.
///
/// Packed because a Stable group holds one per member for as long as it lives
/// (`cargo bench -p group-coordinator --bench memory`): the client id, host and
/// instance id share one allocation, the assignment and protocols another
/// ([`MemberPayload`]), and the parked requests take no option tags.
#[derive(Debug, Clone)]
pub(crate) struct Member {
    pub(crate) id: Arc<str>,
    /// The client id, the client host, then the instance id (when `HAS_INSTANCE`).
    strings: Box<str>,
    pub(crate) payload: MemberPayload,
    pub(crate) session_deadline: Deadline,
    /// When the session timer queued for this member fires (`Engine::arm_session`):
    /// at or before `session_deadline`; `None` when none is queued.
    pub(crate) session_armed: Deadline,
    /// The parked JoinGroup's request id, when `JOIN_PARKED`.
    parked_join: u64,
    /// The parked SyncGroup's request id, when `SYNC_PARKED`.
    parked_sync: u64,
    pub(crate) rebalance_timeout_ms: i32,
    pub(crate) session_timeout_ms: i32,
    client_id_len: u32,
    host_len: u32,
    pub(crate) is_new: bool,
    pub(crate) pending_sync: bool,
    flags: u8,
}

const HAS_INSTANCE: u8 = 1;
const JOIN_PARKED: u8 = 2;
const SYNC_PARKED: u8 = 4;

impl Member {
    /// A member holding nothing parked, with no session timer.
    pub(crate) fn new(
        id: Arc<str>,
        instance: Option<&str>,
        client_id: &str,
        client_host: &str,
        rebalance_timeout_ms: i32,
        session_timeout_ms: i32,
        payload: MemberPayload,
    ) -> Member {
        let mut strings =
            String::with_capacity(client_id.len() + client_host.len() + instance.map_or(0, str::len));
        strings.push_str(client_id);
        strings.push_str(client_host);
        strings.push_str(instance.unwrap_or_default());
        Member {
            id,
            strings: strings.into_boxed_str(),
            payload,
            session_deadline: Deadline::NONE,
            session_armed: Deadline::NONE,
            parked_join: 0,
            parked_sync: 0,
            rebalance_timeout_ms,
            session_timeout_ms,
            // `strings` is their concatenation: neither can exceed what it holds.
            client_id_len: u32::try_from(client_id.len()).unwrap_or(u32::MAX),
            host_len: u32::try_from(client_host.len()).unwrap_or(u32::MAX),
            is_new: false,
            pending_sync: false,
            flags: if instance.is_some() { HAS_INSTANCE } else { 0 },
        }
    }

    fn split(&self) -> (&str, &str, &str) {
        let (client_id, rest) = self.strings.split_at(self.client_id_len as usize);
        let (host, instance) = rest.split_at(self.host_len as usize);
        (client_id, host, instance)
    }

    pub(crate) fn client_id(&self) -> &str {
        self.split().0
    }

    pub(crate) fn client_host(&self) -> &str {
        self.split().1
    }

    /// The member's `group.instance.id`, for a static member.
    pub(crate) fn instance(&self) -> Option<&str> {
        (self.flags & HAS_INSTANCE != 0).then(|| self.split().2)
    }

    /// The JoinGroup parked until the join barrier closes.
    pub(crate) fn awaiting_join(&self) -> Option<RequestId> {
        (self.flags & JOIN_PARKED != 0).then_some(RequestId(self.parked_join))
    }

    /// The SyncGroup parked until the leader's assignment comes.
    pub(crate) fn awaiting_sync(&self) -> Option<RequestId> {
        (self.flags & SYNC_PARKED != 0).then_some(RequestId(self.parked_sync))
    }

    /// Parks `join` (or clears it); returns the request it replaces. The group
    /// counts parked joins: [`Group::set_awaiting_join`] keeps that count.
    fn replace_awaiting_join(&mut self, join: Option<RequestId>) -> Option<RequestId> {
        let old = self.awaiting_join();
        match join {
            Some(RequestId(id)) => {
                self.parked_join = id;
                self.flags |= JOIN_PARKED;
            }
            None => self.flags &= !JOIN_PARKED,
        }
        old
    }

    /// Parks `sync`; returns the request it replaces.
    pub(crate) fn set_awaiting_sync(&mut self, sync: RequestId) -> Option<RequestId> {
        let old = self.awaiting_sync();
        self.parked_sync = sync.0;
        self.flags |= SYNC_PARKED;
        old
    }

    /// Unparks the SyncGroup, returning it.
    pub(crate) fn take_awaiting_sync(&mut self) -> Option<RequestId> {
        let old = self.awaiting_sync();
        self.flags &= !SYNC_PARKED;
        old
    }

    pub(crate) fn metadata(&self, protocol: &str) -> &[u8] {
        self.payload.metadata(protocol)
    }

    pub(crate) fn matches(&self, protocols: &[ProtocolMetadata]) -> bool {
        self.payload.matches(protocols)
    }

    fn vote<'a>(&'a self, candidates: &BTreeSet<&str>) -> Option<&'a str> {
        self.payload.protocols().map(|(name, _)| name).find(|name| candidates.contains(name))
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
    pub(crate) protocol_type: Option<ProtocolType>,
    pub(crate) protocol_name: Option<ProtocolName>,
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
    /// The outstanding write of this group's metadata, if any: answers about the
    /// group are held until it commits (they could reveal what it wrote).
    pub(crate) barrier: Option<WriteId>,
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
            barrier: None,
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

    /// [`position`](Self::position), trying `guess` first: a leader lists the
    /// members in the order their JoinGroup answer gave them, so the next one is
    /// usually where the last one was, plus one, and a compare saves a hash.
    pub(crate) fn position_from(&self, id: &str, guess: usize) -> Option<usize> {
        match self.members.get(guess) {
            Some(m) if *m.id == *id => Some(guess),
            _ => self.position(id),
        }
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
        if let Some(instance) = member.instance() {
            self.static_members.insert(Box::from(instance), member.id.clone());
        }
        self.count_protocols(&member.payload, true);
        member.replace_awaiting_join(join);
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
        self.count_protocols(&member.payload, false);
        if member.awaiting_join().is_some() {
            self.num_awaiting_join -= 1;
        }
        if member.pending_sync {
            self.num_pending_sync -= 1;
        }
        if let Some(instance) = member.instance()
            && self.static_members.get(instance).is_some_and(|m| **m == *member.id)
        {
            self.static_members.remove(instance);
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
        if let Some(instance) = member.instance() {
            self.static_members.insert(Box::from(instance), new.clone());
        }
        if self.leader.as_deref() == Some(old) {
            self.leader = Some(new);
        }
    }

    fn count_protocols(&mut self, payload: &MemberPayload, add: bool) {
        for (name, _) in payload.protocols() {
            if add {
                match self.protocol_counts.get_mut(name) {
                    Some(count) => *count += 1,
                    None => {
                        self.protocol_counts.insert(Arc::from(name), 1);
                    }
                }
            } else if let Some(count) = self.protocol_counts.get_mut(name) {
                *count -= 1;
                if *count == 0 {
                    self.protocol_counts.remove(name);
                }
            }
        }
    }

    /// A rejoining member's protocols (`updateMember`). A rejoin usually names
    /// the same protocols with the same metadata: then nothing changes.
    pub(crate) fn rejoin_protocols(&mut self, i: usize, protocols: &[ProtocolMetadata]) {
        let held = &self.members[i].payload;
        if !held.matches(protocols) {
            let payload = held.with_protocols(protocols);
            self.replace_payload(i, payload);
        }
    }

    /// Gives a member back the protocols `old` holds, keeping its assignment
    /// (the undo of [`rejoin_protocols`](Self::rejoin_protocols)).
    pub(crate) fn restore_protocols(&mut self, i: usize, old: &MemberPayload) {
        let payload = self.members[i].payload.with_protocols_of(old);
        self.replace_payload(i, payload);
    }

    fn replace_payload(&mut self, i: usize, payload: MemberPayload) {
        let old = std::mem::replace(&mut self.members[i].payload, payload);
        // A rejoin usually names the same protocols (only metadata changes): the
        // per-name counts stay as they are.
        if !old.same_names_as(&self.members[i].payload) {
            let new = std::mem::take(&mut self.members[i].payload);
            self.count_protocols(&old, false);
            self.count_protocols(&new, true);
            self.members[i].payload = new;
        }
    }

    /// Parks (or clears) a member's JoinGroup; returns the request it replaces.
    pub(crate) fn set_awaiting_join(&mut self, i: usize, join: Option<RequestId>) -> Option<RequestId> {
        let old = self.members[i].replace_awaiting_join(join);
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
    pub(crate) fn select_protocol(&self) -> Option<ProtocolName> {
        let n = self.members.len();
        if n == 0 {
            return None;
        }
        let mut supported_by_all =
            self.protocol_counts.iter().filter(|(_, c)| **c == n).map(|(name, _)| &**name);
        let first = supported_by_all.next()?;
        let Some(second) = supported_by_all.next() else {
            // The usual group: one protocol in common, so every member votes for it.
            return Some(ProtocolName::from(first));
        };
        let candidates: BTreeSet<&str> = [first, second].into_iter().chain(supported_by_all).collect();
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
        best.map(|(name, _, _)| ProtocolName::from(name))
    }

    /// At join completion: the current leader if it rejoined, else the first rejoined member.
    pub(crate) fn maybe_elect_joined_leader(&mut self) -> bool {
        let Some(leader) = self.leader.clone() else { return false };
        if self.member(&leader).is_some_and(|m| m.awaiting_join().is_some()) {
            return true;
        }
        match self.members.iter().find(|m| m.awaiting_join().is_some()) {
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
                member_id: MemberId::from(&*m.id),
                group_instance_id: m.instance().map(GroupInstanceId::from),
                metadata: Bytes::copy_from_slice(m.metadata(protocol)),
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
    pub(crate) fn record(&self, assignments: Option<&[Bytes]>) -> GroupMetadataRecord {
        let protocol = self.protocol_name.as_deref().unwrap_or("");
        GroupMetadataRecord {
            group_id: GroupId::from(&*self.id),
            protocol_type: self.protocol_type.clone(),
            generation_id: self.generation,
            protocol_name: self.protocol_name.clone(),
            leader_id: self.leader.as_deref().map(MemberId::from),
            state_timestamp_ms: Some(self.state_ts),
            members: self
                .members
                .iter()
                .enumerate()
                .map(|(i, m)| MemberMetadataRecord {
                    member_id: MemberId::from(&*m.id),
                    group_instance_id: m.instance().map(GroupInstanceId::from),
                    client_id: m.client_id().to_owned(),
                    client_host: m.client_host().to_owned(),
                    rebalance_timeout_ms: m.rebalance_timeout_ms,
                    session_timeout_ms: m.session_timeout_ms,
                    subscription: Bytes::copy_from_slice(m.metadata(protocol)),
                    // The leader's assignments are stored as its request carried them.
                    assignment: match assignments {
                        Some(list) => list.get(i).cloned().unwrap_or_default(),
                        None => Bytes::copy_from_slice(m.payload.assignment()),
                    },
                })
                .collect(),
        }
    }

    /// The record J writes when a JoinGroup creates a group and nothing else (§10 #11).
    pub(crate) fn empty_record(&self) -> GroupMetadataRecord {
        GroupMetadataRecord {
            group_id: GroupId::from(&*self.id),
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
