//! ShareFetch (key 78) and ShareAcknowledge (key 79, KIP-932) over this node's empty
//! partitions: the share session steps and every check Kafka's broker makes, in its
//! order (`KafkaApis.handleShareFetchRequest`, `handleShareAcknowledgeRequest`,
//! `handleAcknowledgements`, `validateAcknowledgementBatches`), with nothing to acquire:
//! a fetch answers no records, and an acknowledgement names records never acquired.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::PoisonError;

use bytes::Bytes;
use group_coordinator::{AclOperation, RequestContext, Resource};
use group_types::ErrorCode;
use kafka_protocol::messages as kp;
use kafka_protocol::protocol::StrBytes;

use crate::node::Node;
use crate::share_session::{
    FINAL_EPOCH, FetchContext, Named, SessionFetch, ShareSessionCache, TopicIdPartition,
};
use crate::topics::Topics;
use crate::wire::share_codec::{self as codec, Pinned, SameAfter};

/// `AcknowledgeType.RENEW` (KIP-1222): v2's, and only with `IsRenewAck`. The types
/// below it are 0 gap, 1 accept, 2 release and 3 reject.
const RENEW: i8 = 4;

/// What `SharePartition.acknowledge` answers for offsets it holds no in-flight record of.
const NOT_ACQUIRED: &str = "Batch record not found. The request batch offsets are not found in the cache.";

/// `Errors.UNKNOWN_TOPIC_OR_PARTITION`'s message, which `SharePartitionManager.acknowledge`
/// answers for a partition it holds no share partition of.
const NO_SHARE_PARTITION: &str = "This server does not host this topic-partition.";

/// A handled share request: the response, how long it is held before it is sent (`None`:
/// at once), and the request log's fields.
pub(crate) struct ShareAnswer<R> {
    /// The response.
    pub(crate) response: R,
    /// Hold the response this many milliseconds (the caller caps it as Fetch's wait).
    pub(crate) hold_ms: Option<i32>,
    /// The request log line's extra fields, each starting with a comma.
    pub(crate) log: String,
}

/// The acknowledgement batches of one partition, as a request carries them.
struct Batch {
    first: i64,
    last: i64,
    types: Vec<i8>,
}

/// Each partition's acknowledgement batches, from the topics of a ShareFetch or a
/// ShareAcknowledge (the same fields in two generated types).
macro_rules! acknowledgements {
    ($topics:expr) => {
        $topics.iter().map(|Pinned(t)| t).flat_map(|t| {
            t.partitions.iter().map(move |p| {
                let batches = p.acknowledgement_batches.iter();
                let batches = batches.map(|b| Batch {
                    first: b.first_offset,
                    last: b.last_offset,
                    types: b.acknowledge_types.clone(),
                });
                (TopicIdPartition { topic_id: t.topic_id, partition: p.partition_index }, batches.collect())
            })
        })
    };
}

/// Kafka's `KafkaApis.isMemberIdValid`: present, not empty, at most 36 UTF-16 units
/// (a UUID's text).
fn valid_member_id(member: Option<&StrBytes>) -> Option<&str> {
    member.map(|m| m.as_str()).filter(|m| !m.is_empty() && m.encode_utf16().count() <= 36)
}

impl Node {
    /// The share session cache, its lock poisoned or not (a panicking holder leaves
    /// it consistent: every step either completes or changes nothing).
    fn share_sessions(&self) -> std::sync::MutexGuard<'_, ShareSessionCache> {
        self.share_sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether `caller` may read `topic`.
    fn may_read_topic(&self, caller: &RequestContext, topic: &str) -> bool {
        self.authorizer.authorize(caller, AclOperation::Read, Resource::Topic(topic))
    }

    /// The checks both share APIs start with, in Kafka's order: share groups on, a group
    /// id, READ on the group, a valid member id. `Err` is the top-level error.
    fn share_request_checks<'a>(
        &self,
        caller: &RequestContext,
        group: Option<&'a StrBytes>,
        member: Option<&'a StrBytes>,
    ) -> Result<(&'a str, &'a str), ErrorCode> {
        if !self.service.coordinator().config().share.enabled {
            return Err(ErrorCode::UnsupportedVersion);
        }
        let group = group.map(StrBytes::as_str).ok_or(ErrorCode::InvalidRequest)?;
        if !self.authorizer.authorize(caller, AclOperation::Read, Resource::Group(group)) {
            return Err(ErrorCode::GroupAuthorizationFailed);
        }
        let member = valid_member_id(member).ok_or(ErrorCode::InvalidRequest)?;
        Ok((group, member))
    }

    /// ShareFetch: the session step, the piggybacked acknowledgements, then the fetch
    /// of every valid partition, which finds nothing. It is held for `max_wait_ms`
    /// when some partition was fetched and `min_bytes` is positive (`DelayedShareFetch`
    /// waits for bytes that never come); at once otherwise, and on a top-level error.
    /// A v2 fetch that renews locks (`IsRenewAck`, KIP-1222) fetches nothing.
    pub(crate) fn share_fetch(
        &self,
        caller: &RequestContext,
        connection: SocketAddr,
        req: &codec::ShareFetchRequest,
        version: i16,
    ) -> ShareAnswer<codec::ShareFetchResponse> {
        let epoch = req.share_session_epoch;
        let mut log = format!(",\"epoch\":{epoch}");
        let (group, member) =
            match self.share_request_checks(caller, req.group_id.as_ref(), req.member_id.as_ref()) {
                Ok(ids) => ids,
                Err(error) => return fetch_refused(error, None, None, log),
            };
        let _ = write!(log, ",\"group\":{group:?},\"member\":{member:?}");
        if let Some(message) = invalid_v2_fetch(req) {
            return fetch_refused(ErrorCode::InvalidRequest, Some(message), None, log);
        }
        let renew = Renew { supported: version >= 2, is_renew_ack: req.is_renew_ack };
        let known = self.topics.get();
        let fetch: Vec<Named> = req
            .topics
            .iter()
            .map(|Pinned(t)| t)
            .flat_map(|t| {
                let name = known.name_of(&t.topic_id).map(str::to_owned);
                t.partitions.iter().map(move |p| {
                    (TopicIdPartition { topic_id: t.topic_id, partition: p.partition_index }, name.clone())
                })
            })
            .collect();
        let forget: Vec<TopicIdPartition> = req
            .forgotten_topics_data
            .iter()
            .map(|Pinned(t)| t)
            .flat_map(|t| {
                t.partitions.iter().map(|&partition| TopicIdPartition { topic_id: t.topic_id, partition })
            })
            .collect();
        let acknowledges =
            req.topics.iter().flat_map(|t| &t.0.partitions).any(|p| !p.acknowledgement_batches.is_empty());
        let mut sessions = self.share_sessions();
        let request = SessionFetch { epoch, fetch, forget: &forget, acknowledges, connection };
        let context = sessions.new_context(group, member, request);
        let context = match context {
            Ok(context) => context,
            // Kafka answers a full cache only after the request's wait
            // (`SharePartitionManager.createIdleShareFetchTimerTask`).
            Err(e @ crate::share_session::ShareSessionError::LimitReached) => {
                return fetch_refused(e.code(), None, Some(req.max_wait_ms), log);
            }
            Err(e) => return fetch_refused(e.code(), None, None, log),
        };

        // The acknowledgements first, as Kafka starts them before the fetch.
        let acknowledged = if acknowledges {
            let batches = acknowledgements!(req.topics);
            self.acknowledge(caller, &known, &sessions, group, batches, renew)
        } else {
            Vec::new()
        };

        let (valid, subsequent) = match context {
            // A renewing fetch skips the fetch, lest fetching outlast the renewed locks
            // (`KafkaApis.handleShareFetchRequest`).
            _ if renew.is_renew_ack && renew.supported => (Vec::new(), false),
            FetchContext::Full(partitions) => (partitions, false),
            FetchContext::Subsequent(partitions) => (partitions, true),
            FetchContext::Final => (Vec::new(), false),
        };
        let mut fetched = false;
        // A partition named twice is answered once (Kafka's response is a map).
        let mut seen = std::collections::HashSet::new();
        let mut answered: Vec<(TopicIdPartition, ErrorCode)> = valid
            .iter()
            .filter(|(tp, _)| seen.insert(*tp))
            .map(|(tp, name)| {
                // `ErroneousAndValidPartitionData`, then `handleFetchFromShareFetchRequest`.
                let error = match name.as_deref() {
                    None => ErrorCode::UnknownTopicId,
                    Some(name) if !self.may_read_topic(caller, name) => ErrorCode::TopicAuthorizationFailed,
                    Some(name) if !known.has_partition(name, tp.partition) => {
                        ErrorCode::UnknownTopicOrPartition
                    }
                    Some(_) => {
                        fetched = true;
                        ErrorCode::None
                    }
                };
                (*tp, error)
            })
            .collect();
        sessions.fetched(group, answered.iter().filter(|(_, e)| e.is_ok()).map(|(tp, _)| *tp));
        if subsequent {
            let keep = sessions.select(group, member, &answered);
            let mut keep = keep.into_iter();
            answered.retain(|_| keep.next().unwrap_or(true));
        }
        if epoch == FINAL_EPOCH {
            sessions.release(group, member);
        }
        drop(sessions);

        let mut topics: Vec<kp::share_fetch_response::ShareFetchableTopicResponse> = Vec::new();
        for (tp, error) in &answered {
            let part = kp::share_fetch_response::PartitionData::default()
                .with_partition_index(tp.partition)
                .with_error_code(error.code())
                .with_records(Some(Bytes::new()));
            topic_entry(&mut topics, tp.topic_id).partitions.push(part);
        }
        for (tp, error, message) in &acknowledged {
            let topic = topic_entry(&mut topics, tp.topic_id);
            let existing = topic.partitions.iter_mut().find(|p| p.partition_index == tp.partition);
            let part = match existing {
                Some(part) => part,
                None => {
                    topic.partitions.push(
                        kp::share_fetch_response::PartitionData::default()
                            .with_partition_index(tp.partition)
                            .with_records(Some(Bytes::new())),
                    );
                    let last = topic.partitions.len() - 1;
                    &mut topic.partitions[last]
                }
            };
            part.acknowledge_error_code = error.code();
            part.acknowledge_error_message = message.map(StrBytes::from_static_str);
        }
        let _ = write!(log, ",\"partitions\":{},\"acknowledged\":{}", answered.len(), acknowledged.len());
        // Min bytes 0 is met by nothing: `DelayedShareFetch.isMinBytesSatisfied`.
        let hold_ms = (fetched && req.min_bytes > 0).then_some(req.max_wait_ms);
        // What an acquisition lock of the group lasts (`share.record.lock.duration.ms`,
        // the group's or the broker's), though nothing is ever acquired here.
        let lock_ms = self.service.coordinator().share_group_settings(group).record_lock_duration_ms;
        let response = kp::ShareFetchResponse::default()
            .with_acquisition_lock_timeout_ms(lock_ms)
            .with_responses(topics);
        ShareAnswer { response: SameAfter(response), hold_ms, log }
    }

    /// ShareAcknowledge: the session step, then each partition's acknowledgements,
    /// answered at once.
    pub(crate) fn share_acknowledge(
        &self,
        caller: &RequestContext,
        req: &codec::ShareAcknowledgeRequest,
        version: i16,
    ) -> ShareAnswer<codec::ShareAcknowledgeResponse> {
        let epoch = req.share_session_epoch;
        let mut log = format!(",\"epoch\":{epoch}");
        let refused = |error: ErrorCode, log: String| ShareAnswer {
            response: codec::ShareAcknowledgeResponse { error_code: error.code(), ..Default::default() },
            hold_ms: None,
            log: format!("{log},\"error\":\"{}\"", error.name()),
        };
        let (group, member) =
            match self.share_request_checks(caller, req.group_id.as_ref(), req.member_id.as_ref()) {
                Ok(ids) => ids,
                Err(error) => return refused(error, log),
            };
        let _ = write!(log, ",\"group\":{group:?},\"member\":{member:?}");
        let mut sessions = self.share_sessions();
        if let Err(e) = sessions.acknowledge(group, member, epoch) {
            return refused(e.code(), log);
        }
        let known = self.topics.get();
        let batches = acknowledgements!(req.topics);
        let renew = Renew { supported: version >= 2, is_renew_ack: req.is_renew_ack };
        let acknowledged = self.acknowledge(caller, &known, &sessions, group, batches, renew);
        if epoch == FINAL_EPOCH {
            sessions.release(group, member);
        }
        drop(sessions);
        let mut topics: Vec<Pinned<kp::share_acknowledge_response::ShareAcknowledgeTopicResponse, 1>> =
            Vec::new();
        for (tp, error, message) in &acknowledged {
            let part = kp::share_acknowledge_response::PartitionData::default()
                .with_partition_index(tp.partition)
                .with_error_code(error.code())
                .with_error_message(message.map(StrBytes::from_static_str));
            match topics.iter_mut().find(|t| t.0.topic_id == tp.topic_id) {
                Some(topic) => topic.0.partitions.push(part),
                None => topics.push(Pinned(
                    kp::share_acknowledge_response::ShareAcknowledgeTopicResponse::default()
                        .with_topic_id(tp.topic_id)
                        .with_partitions(vec![part]),
                )),
            }
        }
        let _ = write!(log, ",\"acknowledged\":{}", acknowledged.len());
        // v2 tells the member how long its (renewed) locks last: the group's
        // `share.record.lock.duration.ms` (`KafkaApis.processShareAcknowledgeResponse`).
        let lock_ms = self.service.coordinator().share_group_settings(group).record_lock_duration_ms;
        let response = codec::ShareAcknowledgeResponse {
            acquisition_lock_timeout_ms: lock_ms,
            responses: topics,
            ..Default::default()
        };
        ShareAnswer { response, hold_ms: None, log }
    }

    /// Each partition's acknowledgements, answered as Kafka answers them: an unknown
    /// topic id (`getAcknowledgeBatchesFrom...`), malformed batches
    /// (`validateAcknowledgementBatches`), no READ on the topic, an unknown partition, no
    /// batches at all (`handleAcknowledgements`), a partition no fetch of the group has
    /// reached (`SharePartitionManager.acknowledge`: no share partition), and offsets never
    /// acquired (`SharePartition.acknowledge`). A partition named twice keeps its last
    /// batches, in its first place.
    fn acknowledge(
        &self,
        caller: &RequestContext,
        known: &Topics,
        sessions: &ShareSessionCache,
        group: &str,
        requested: impl Iterator<Item = (TopicIdPartition, Vec<Batch>)>,
        renew: Renew,
    ) -> Vec<(TopicIdPartition, ErrorCode, Option<&'static str>)> {
        let mut partitions: Vec<(TopicIdPartition, Vec<Batch>)> = Vec::new();
        for (tp, batches) in requested {
            match partitions.iter_mut().find(|(seen, _)| *seen == tp) {
                Some(entry) => entry.1 = batches,
                None => partitions.push((tp, batches)),
            }
        }
        partitions
            .into_iter()
            .map(|(tp, batches)| {
                let name = known.name_of(&tp.topic_id);
                let (error, message) = match name {
                    None => (ErrorCode::UnknownTopicId, None),
                    Some(_) if !valid_batches(&batches, renew) => (ErrorCode::InvalidRequest, None),
                    Some(name) if !self.may_read_topic(caller, name) => {
                        (ErrorCode::TopicAuthorizationFailed, None)
                    }
                    Some(name) if !known.has_partition(name, tp.partition) => {
                        (ErrorCode::UnknownTopicOrPartition, None)
                    }
                    Some(_) if batches.is_empty() => (ErrorCode::None, None),
                    Some(_) if !sessions.has_share_partition(group, &tp) => {
                        (ErrorCode::UnknownTopicOrPartition, Some(NO_SHARE_PARTITION))
                    }
                    // The share partition starts at 0, the end of its empty log: a batch
                    // wholly below it is archived already and skipped; any other names
                    // offsets never acquired.
                    Some(_) if batches.iter().all(|b| b.last < 0) => (ErrorCode::None, None),
                    Some(_) => (ErrorCode::InvalidRecordState, Some(NOT_ACQUIRED)),
                };
                (tp, error, message)
            })
            .collect()
    }
}

/// Whether a request may renew locks: v2 (`supportsRenewAcknowledgements`) and
/// `IsRenewAck` set.
#[derive(Debug, Clone, Copy)]
struct Renew {
    supported: bool,
    is_renew_ack: bool,
}

/// `KafkaApis.validateAcknowledgementBatches`: each batch in order and not overlapping
/// the previous, with one type for the whole batch or one per offset, each a type of
/// the version, and renewing only with `IsRenewAck`.
fn valid_batches(batches: &[Batch], renew: Renew) -> bool {
    let max_type = if renew.supported { RENEW } else { RENEW - 1 };
    let mut previous_last = -1;
    for b in batches {
        let per_offset = i64::try_from(b.types.len()).unwrap_or(i64::MAX);
        let ok = b.first <= b.last
            && b.first >= previous_last
            && !b.types.is_empty()
            && (b.types.len() == 1 || b.last.checked_sub(b.first) == Some(per_offset - 1))
            && b.types.iter().all(|&t| (0..=max_type).contains(&t))
            && (renew.is_renew_ack || !b.types.contains(&RENEW));
        if !ok {
            return false;
        }
        previous_last = b.last;
    }
    true
}

/// The response's entry for `topic_id`, added at the end when there is none.
fn topic_entry(
    topics: &mut Vec<kp::share_fetch_response::ShareFetchableTopicResponse>,
    topic_id: uuid::Uuid,
) -> &mut kp::share_fetch_response::ShareFetchableTopicResponse {
    let at = match topics.iter().position(|t| t.topic_id == topic_id) {
        Some(at) => at,
        None => {
            topics.push(
                kp::share_fetch_response::ShareFetchableTopicResponse::default().with_topic_id(topic_id),
            );
            topics.len() - 1
        }
    };
    &mut topics[at]
}

/// What makes a v2 ShareFetch invalid as a whole, in Kafka's words: a renewing fetch
/// must not ask to fetch (`KafkaApis.handleShareFetchRequest`, KIP-1222). An acquire
/// mode that is neither 0 (batch-optimized) nor 1 (record-limit) is refused here too;
/// Kafka's `ShareAcquireMode.forId` throws for it later, answered UNKNOWN_SERVER_ERROR.
fn invalid_v2_fetch(req: &codec::ShareFetchRequest) -> Option<String> {
    if !(0..=1).contains(&req.share_acquire_mode) {
        return Some(format!("Unknown share acquire mode id: {}", req.share_acquire_mode));
    }
    if !req.is_renew_ack {
        return None;
    }
    let fields = [
        ("maxBytes", req.max_bytes),
        ("minBytes", req.min_bytes),
        ("maxRecords", req.max_records),
        ("maxWaitMs", req.max_wait_ms),
    ];
    let mut message = String::new();
    for (name, value) in fields {
        if value != 0 {
            let _ = write!(message, "{name} must be set to 0, ");
        }
    }
    (!message.is_empty()).then(|| message + "if isRenewAck is true.")
}

/// A ShareFetch refused as a whole (`ShareFetchRequest.getErrorResponse`: the error and
/// its message, no partitions, no lock timeout).
fn fetch_refused(
    error: ErrorCode,
    message: Option<String>,
    hold_ms: Option<i32>,
    log: String,
) -> ShareAnswer<codec::ShareFetchResponse> {
    let response = kp::ShareFetchResponse::default()
        .with_error_code(error.code())
        .with_error_message(message.map(StrBytes::from_string));
    ShareAnswer {
        response: SameAfter(response),
        hold_ms,
        log: format!("{log},\"error\":\"{}\"", error.name()),
    }
}

#[cfg(test)]
#[path = "share_fetch_tests.rs"]
mod tests;
