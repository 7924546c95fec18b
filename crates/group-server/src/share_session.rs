//! Share sessions (KIP-932): what a broker remembers between one member's ShareFetch
//! and ShareAcknowledge requests, keyed by (group id, member id), with Kafka's epoch
//! rules (`SharePartitionManager.newContext` and `acknowledgeSessionUpdate`), its bound
//! (`group.share.max.share.sessions`) and its cleanup when a connection closes
//! (`ShareSessionCache`'s `ConnectionDisconnectListener`).
//!
//! Sans-I/O and clock-free: Kafka's share sessions do not expire with time, only when
//! the member closes them (epoch -1), opens a new one (epoch 0) or its connection closes.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;

use group_types::ErrorCode;
use uuid::Uuid;

/// The epoch that opens a session (`ShareRequestMetadata.INITIAL_EPOCH`).
pub(crate) const INITIAL_EPOCH: i32 = 0;

/// The epoch that closes one (`ShareRequestMetadata.FINAL_EPOCH`).
pub(crate) const FINAL_EPOCH: i32 = -1;

/// Kafka's default of `group.share.max.share.sessions` (`ShareGroupConfig`).
pub(crate) const DEFAULT_MAX_SHARE_SESSIONS: usize = 2000;

/// The epoch after `prev` (`ShareRequestMetadata.nextEpoch`): the final epoch stays
/// final, and the epoch wraps to 1, never to the initial 0.
pub(crate) const fn next_epoch(prev: i32) -> i32 {
    if prev < 0 {
        FINAL_EPOCH
    } else if prev == i32::MAX {
        1
    } else {
        prev + 1
    }
}

/// One partition of a topic, by the topic's id (Kafka's `TopicIdPartition`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct TopicIdPartition {
    /// The topic's id.
    pub(crate) topic_id: Uuid,
    /// The partition index.
    pub(crate) partition: i32,
}

/// A partition a request names, with its topic's name when the id is known.
pub(crate) type Named = (TopicIdPartition, Option<String>);

/// Why a share session request is refused: the top-level error of the response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum ShareSessionError {
    /// No session for the (group, member) pair.
    #[error("no such share session")]
    NotFound,
    /// The epoch is not the session's next one (or 0 on a ShareAcknowledge).
    #[error("expected epoch {expected}, got {got}")]
    InvalidEpoch {
        /// The session's next epoch (0 when there is none to expect).
        expected: i32,
        /// The request's.
        got: i32,
    },
    /// The cache holds `group.share.max.share.sessions` sessions.
    #[error("the limit of share sessions has been reached")]
    LimitReached,
    /// An opening ShareFetch carried acknowledgements: nothing was acquired yet.
    #[error("acknowledge data present in the initial fetch request")]
    AcknowledgeOnInitialEpoch,
}

impl ShareSessionError {
    /// The error code Kafka answers with.
    pub(crate) const fn code(self) -> ErrorCode {
        match self {
            ShareSessionError::NotFound => ErrorCode::ShareSessionNotFound,
            ShareSessionError::InvalidEpoch { .. } => ErrorCode::InvalidShareSessionEpoch,
            ShareSessionError::LimitReached => ErrorCode::ShareSessionLimitReached,
            ShareSessionError::AcknowledgeOnInitialEpoch => ErrorCode::InvalidRequest,
        }
    }
}

/// What one ShareFetch fetches (Kafka's `ShareFetchContext` kinds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FetchContext {
    /// Epoch 0, a new session: the request's partitions, every one answered
    /// (`ShareSessionContext`, not subsequent).
    Full(Vec<Named>),
    /// A later epoch: every partition of the session, answered only where
    /// [`ShareSessionCache::select`] says (`ShareSessionContext`, subsequent).
    Subsequent(Vec<Named>),
    /// Epoch -1: nothing is fetched; the session closes once answered (`FinalContext`).
    Final,
}

/// What a ShareFetch brings to its session step.
#[derive(Debug)]
pub(crate) struct SessionFetch<'a> {
    /// The request's share session epoch.
    pub(crate) epoch: i32,
    /// The partitions it fetches, with their topics' names where known.
    pub(crate) fetch: Vec<Named>,
    /// The partitions it forgets.
    pub(crate) forget: &'a [TopicIdPartition],
    /// Whether it carries acknowledgements.
    pub(crate) acknowledges: bool,
    /// The connection it came on.
    pub(crate) connection: SocketAddr,
}

/// A partition of a session (Kafka's `CachedSharePartition`).
#[derive(Debug, Clone)]
struct Cached {
    tp: TopicIdPartition,
    /// The topic's name when the partition was added; `None`: the id was unknown.
    topic: Option<String>,
    /// The next response must carry it (added later, or answered an error last time).
    requires_update: bool,
}

#[derive(Debug)]
struct ShareSession {
    /// The epoch the member's next request must carry.
    epoch: i32,
    /// In the order they were added.
    partitions: Vec<Cached>,
    /// The connection that opened it.
    connection: SocketAddr,
}

impl ShareSession {
    /// `ShareSession.update`: new partitions join (to be answered next), forgotten ones leave.
    fn update(&mut self, fetch: &[Named], forget: &[TopicIdPartition]) {
        for (tp, topic) in fetch {
            if !self.partitions.iter().any(|c| c.tp == *tp) {
                self.partitions.push(Cached { tp: *tp, topic: topic.clone(), requires_update: true });
            }
        }
        self.partitions.retain(|c| !forget.contains(&c.tp));
    }

    fn named(&self) -> Vec<Named> {
        self.partitions.iter().map(|c| (c.tp, c.topic.clone())).collect()
    }
}

/// The (group id, member id) a session belongs to.
type Key = (String, String);

/// The share sessions of one node (Kafka's `ShareSessionCache`).
#[derive(Debug)]
pub(crate) struct ShareSessionCache {
    max_sessions: usize,
    sessions: HashMap<Key, ShareSession>,
    /// The session each connection opened last, and whether that session has been
    /// removed since (stale: the connection closing must not remove a newer session
    /// of the same key opened elsewhere, as `SessionKeyAndState` guards).
    by_connection: HashMap<SocketAddr, (Key, bool)>,
    /// Per group, the partitions a fetch of the group has reached: where Kafka holds a
    /// `SharePartition` (`SharePartitionCache`), which an acknowledgement needs.
    share_partitions: HashMap<String, HashSet<TopicIdPartition>>,
}

impl ShareSessionCache {
    /// A cache of at most `max_sessions` sessions (`group.share.max.share.sessions`).
    pub(crate) fn new(max_sessions: usize) -> ShareSessionCache {
        ShareSessionCache {
            max_sessions,
            sessions: HashMap::new(),
            by_connection: HashMap::new(),
            share_partitions: HashMap::new(),
        }
    }

    /// How many sessions there are.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.sessions.len()
    }

    /// The epoch the session of (`group`, `member`) expects next, if there is one.
    #[cfg(test)]
    pub(crate) fn epoch(&self, group: &str, member: &str) -> Option<i32> {
        self.sessions.get(&key(group, member)).map(|s| s.epoch)
    }

    /// The partitions of the session of (`group`, `member`), in order.
    #[cfg(test)]
    pub(crate) fn partitions(&self, group: &str, member: &str) -> Vec<TopicIdPartition> {
        self.sessions
            .get(&key(group, member))
            .map(|s| s.partitions.iter().map(|c| c.tp).collect())
            .unwrap_or_default()
    }

    /// A ShareFetch's session step (`SharePartitionManager.newContext`): epoch 0 opens
    /// (replacing the key's session), -1 finds the session to close, any other epoch
    /// must be the session's next, which then advances, adding `fetch` and removing
    /// `forget`.
    pub(crate) fn new_context(
        &mut self,
        group: &str,
        member: &str,
        request: SessionFetch<'_>,
    ) -> Result<FetchContext, ShareSessionError> {
        let SessionFetch { epoch, fetch, forget, acknowledges, connection } = request;
        let key = key(group, member);
        match epoch {
            FINAL_EPOCH => {
                if !self.sessions.contains_key(&key) {
                    return Err(ShareSessionError::NotFound);
                }
                Ok(FetchContext::Final)
            }
            INITIAL_EPOCH => {
                if acknowledges {
                    return Err(ShareSessionError::AcknowledgeOnInitialEpoch);
                }
                self.remove(&key);
                if self.sessions.len() >= self.max_sessions {
                    return Err(ShareSessionError::LimitReached);
                }
                // Partitions named twice are cached once (Kafka's collection refuses the
                // second), but the request is answered as it was asked.
                let mut partitions: Vec<Cached> = Vec::with_capacity(fetch.len());
                for (tp, topic) in &fetch {
                    if !partitions.iter().any(|c| c.tp == *tp) {
                        partitions.push(Cached { tp: *tp, topic: topic.clone(), requires_update: false });
                    }
                }
                let session = ShareSession { epoch: next_epoch(INITIAL_EPOCH), partitions, connection };
                self.sessions.insert(key.clone(), session);
                self.by_connection.insert(connection, (key, false));
                Ok(FetchContext::Full(fetch))
            }
            _ => {
                let session = self.sessions.get_mut(&key).ok_or(ShareSessionError::NotFound)?;
                if session.epoch != epoch {
                    return Err(ShareSessionError::InvalidEpoch { expected: session.epoch, got: epoch });
                }
                session.update(&fetch, forget);
                session.epoch = next_epoch(session.epoch);
                Ok(FetchContext::Subsequent(session.named()))
            }
        }
    }

    /// A ShareAcknowledge's session step (`SharePartitionManager.acknowledgeSessionUpdate`):
    /// epoch 0 is never valid, -1 leaves the session as it is (it closes once
    /// answered), any other epoch must be the session's next, which then advances.
    pub(crate) fn acknowledge(
        &mut self,
        group: &str,
        member: &str,
        epoch: i32,
    ) -> Result<(), ShareSessionError> {
        if epoch == INITIAL_EPOCH {
            return Err(ShareSessionError::InvalidEpoch { expected: 0, got: epoch });
        }
        let session = self.sessions.get_mut(&key(group, member)).ok_or(ShareSessionError::NotFound)?;
        if epoch == FINAL_EPOCH {
            return Ok(());
        }
        if session.epoch != epoch {
            return Err(ShareSessionError::InvalidEpoch { expected: session.epoch, got: epoch });
        }
        session.epoch = next_epoch(session.epoch);
        Ok(())
    }

    /// Closes the session of (`group`, `member`) after its final request was answered
    /// (`SharePartitionManager.releaseSession`); false when there was none. The last
    /// session of a group takes the group's share partitions with it (Kafka waits for a
    /// connection to close to notice the group is empty; here the bound comes sooner).
    pub(crate) fn release(&mut self, group: &str, member: &str) -> bool {
        let key = key(group, member);
        let removed = self.remove(&key);
        self.forget_group_if_empty(&key.0);
        removed
    }

    /// A fetch of `group` reached `partitions`: the group now has share partitions
    /// there (`SharePartitionManager.fetchMessages` creates them).
    pub(crate) fn fetched(&mut self, group: &str, partitions: impl IntoIterator<Item = TopicIdPartition>) {
        let mut partitions = partitions.into_iter().peekable();
        if partitions.peek().is_some() {
            self.share_partitions.entry(group.to_owned()).or_default().extend(partitions);
        }
    }

    /// Whether a fetch of `group` has reached `partition` (an acknowledgement of a
    /// partition without a share partition is UNKNOWN_TOPIC_OR_PARTITION).
    pub(crate) fn has_share_partition(&self, group: &str, partition: &TopicIdPartition) -> bool {
        self.share_partitions.get(group).is_some_and(|p| p.contains(partition))
    }

    /// `ShareSessionCache.checkAndNotifyListenersOnGroupEmpty` and
    /// `SharePartitionManager`'s `onGroupEmpty`: no session left, no share partitions.
    fn forget_group_if_empty(&mut self, group: &str) {
        if !self.sessions.keys().any(|(g, _)| g == group) {
            self.share_partitions.remove(group);
        }
    }

    /// Which of a subsequent fetch's partitions the response carries, given each one's
    /// error (`CachedSharePartition.maybeUpdateResponseData`; no partition has records
    /// here): those with an error, and those flagged since the last response (added,
    /// or erroneous last time, so that a cleared error is seen). The flags are updated.
    pub(crate) fn select(
        &mut self,
        group: &str,
        member: &str,
        answered: &[(TopicIdPartition, ErrorCode)],
    ) -> Vec<bool> {
        let Some(session) = self.sessions.get_mut(&key(group, member)) else {
            return vec![true; answered.len()];
        };
        answered
            .iter()
            .map(|(tp, error)| match session.partitions.iter_mut().find(|c| c.tp == *tp) {
                Some(cached) => {
                    let must = cached.requires_update || !error.is_ok();
                    cached.requires_update = !error.is_ok();
                    must
                }
                None => true,
            })
            .collect()
    }

    /// The connection closed: the session it opened last goes, unless that one was
    /// closed or replaced already (`ShareSessionCache.ClientConnectionDisconnectListener`).
    pub(crate) fn connection_closed(&mut self, connection: SocketAddr) {
        if let Some((key, stale)) = self.by_connection.remove(&connection) {
            if !stale {
                self.remove(&key);
            }
            self.forget_group_if_empty(&key.0);
        }
    }

    fn remove(&mut self, key: &Key) -> bool {
        let Some(session) = self.sessions.remove(key) else {
            return false;
        };
        if let Some(entry) = self.by_connection.get_mut(&session.connection) {
            entry.1 = true;
        }
        true
    }
}

fn key(group: &str, member: &str) -> Key {
    (group.to_owned(), member.to_owned())
}

#[cfg(test)]
#[path = "share_session_tests.rs"]
mod tests;
