//! Authorization and topic metadata on the request path: every request is checked
//! against the [`Authorizer`] before it reaches a group's core, as Kafka's
//! `KafkaApis` checks it before calling its group coordinator. A request denied on
//! its group is answered `GROUP_AUTHORIZATION_FAILED` without touching the core;
//! partitions of denied topics are answered `TOPIC_AUTHORIZATION_FAILED`, and (for
//! OffsetCommit and OffsetDelete) partitions the [`TopicMetadata`] does not know
//! `UNKNOWN_TOPIC_OR_PARTITION`, and removed from the request before the core sees
//! it. The core's answer to what is left is completed with them when it comes,
//! without a thread waiting for it ([`Pending`] merges the two).
//!
//! [`Authorizer`]: crate::Authorizer
//! [`TopicMetadata`]: crate::TopicMetadata

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

use group_types::{
    AlteredShareOffsetsTopic, ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse,
    DeleteGroupsRequest, DeleteGroupsResponse, DeletedShareOffsetsTopic, DescribeGroupsRequest,
    DescribeGroupsResponse, DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsResponse,
    DescribedConsumerGroup, DescribedShareGroup, DescribedShareOffset, DescribedShareOffsetsTopic, ErrorCode,
    GroupId, ListGroupsRequest, ListGroupsResponse, OffsetCommitData, OffsetCommitResponse, OffsetFetchData,
    PartitionMap, ShareGroupDescribeRequest, ShareGroupDescribeResponse, SharePartitionOutcome, TopicEntries,
};

use super::{GroupCoordinator, Inner, PartitionState, Pending, ResponseKind, lock};
use crate::{
    AclOperation, Authorizer, CoordinatorError, GroupApi, Request, RequestContext, Resource, Response,
};

/// Topics and their partitions, as a request names them.
type Partitions = Vec<(String, Vec<i32>)>;

/// The partitions of one topic in an offset request, whatever each carries.
trait TopicPartitions {
    fn ids(&self) -> Vec<i32>;
    fn for_each_id(&self, f: impl FnMut(i32));
    fn retain_ids(&mut self, keep: impl FnMut(i32) -> bool);
}

impl<T> TopicPartitions for Vec<(i32, T)> {
    fn ids(&self) -> Vec<i32> {
        self.iter().map(|(p, _)| *p).collect()
    }

    fn for_each_id(&self, mut f: impl FnMut(i32)) {
        self.iter().for_each(|(p, _)| f(*p));
    }

    fn retain_ids(&mut self, mut keep: impl FnMut(i32) -> bool) {
        self.retain(|(p, _)| keep(*p));
    }
}

impl TopicPartitions for Vec<i32> {
    fn ids(&self) -> Vec<i32> {
        self.clone()
    }

    fn for_each_id(&self, mut f: impl FnMut(i32)) {
        self.iter().for_each(|p| f(*p));
    }

    fn retain_ids(&mut self, mut keep: impl FnMut(i32) -> bool) {
        self.retain(|p| keep(*p));
    }
}

/// What authorization decided for one request.
enum Admission {
    /// Answered without reaching the core.
    Answered(Response),
    /// Goes to the core (possibly trimmed); the answer is completed by the fix-up.
    Admitted(Request, Fixup),
}

/// How to complete the core's answer to an admitted request.
enum Fixup {
    /// Nothing was trimmed.
    Nothing,
    /// OffsetCommit partitions answered without the core: denied topics, unknown
    /// partitions.
    Commit(Vec<TopicEntries<ErrorCode>>),
    /// TxnOffsetCommit partitions answered without the core, as for a commit.
    TxnCommit(Vec<TopicEntries<ErrorCode>>),
    /// OffsetFetch partitions of denied topics.
    Fetch(Partitions),
    /// OffsetFetch of every offset: topics the caller may not describe are left out.
    FetchAll,
    /// OffsetDelete partitions answered without the core, as for a commit.
    OffsetDelete(PartitionMap<ErrorCode>),
    /// DeleteShareGroupOffsets topics the caller may not read.
    DeleteShareOffsets(Vec<String>),
    /// DescribeShareGroupOffsets topics the caller may not describe, with their partitions.
    DescribeShareOffsets(Partitions),
    /// DescribeShareGroupOffsets of every topic: those the caller may not describe are left out.
    DescribeShareOffsetsAll,
    /// AlterShareGroupOffsets topics answered without the core: denied or unknown.
    AlterShareOffsets(Vec<AlteredShareOffsetsTopic>),
}

fn resource_name(resource: Resource<'_>) -> &str {
    match resource {
        Resource::Group(name) | Resource::Topic(name) | Resource::TransactionalId(name) => name,
        Resource::Cluster => "kafka-cluster",
    }
}

impl Inner {
    /// Asks the authorizer; a denial is counted and reported when `audited`.
    pub(super) fn allowed(
        &self,
        context: &RequestContext,
        operation: AclOperation,
        resource: Resource<'_>,
        audited: bool,
    ) -> bool {
        let ok = self.authorizer.authorize(context, operation, resource);
        if !ok && audited {
            self.runtime_counters.authorization_failed(operation.name(), resource_name(resource));
        }
        ok
    }

    /// Removes from `topics` those `context` may not `operation`, returning them.
    fn deny_topics<V: TopicPartitions>(
        &self,
        context: &RequestContext,
        operation: AclOperation,
        topics: &mut BTreeMap<String, V>,
    ) -> Partitions {
        // Each topic is asked once, and only what is denied is taken out: a
        // retain pass over the nested maps costs more than the checks when (as
        // nearly always) every topic passes.
        let refused: Vec<String> = topics
            .keys()
            .filter(|topic| !self.allowed(context, operation, Resource::Topic(topic), true))
            .cloned()
            .collect();
        refused.into_iter().filter_map(|topic| topics.remove(&topic).map(|p| (topic, p.ids()))).collect()
    }

    /// Kafka's per-partition checks of an offset write (`KafkaApis.handleOffsetCommitRequest`,
    /// `KafkaApis.handleOffsetDeleteRequest`), in its order: READ on the topic, else
    /// `TOPIC_AUTHORIZATION_FAILED`; then the partition in the metadata, else
    /// `UNKNOWN_TOPIC_OR_PARTITION`. Removes what fails from `partitions` and
    /// returns it with its error, in request order; `None` when all pass, which is
    /// nearly always, so that case asks each partition once and changes nothing.
    fn check_offset_write<V: TopicPartitions>(
        &self,
        context: &RequestContext,
        topic: &str,
        partitions: &mut V,
    ) -> Option<Vec<(i32, ErrorCode)>> {
        if !self.allowed(context, AclOperation::Read, Resource::Topic(topic), true) {
            let denied = partitions.ids();
            partitions.retain_ids(|_| false);
            return Some(denied.into_iter().map(|p| (p, ErrorCode::TopicAuthorizationFailed)).collect());
        }
        let mut missing = Vec::new();
        partitions.for_each_id(|p| {
            if !self.topics.contains(topic, p) {
                missing.push((p, ErrorCode::UnknownTopicOrPartition));
            }
        });
        if missing.is_empty() {
            return None;
        }
        self.runtime_counters.unknown_partitions(missing.len() as u64);
        // Each partition is looked up in the metadata once, so the trim asks the
        // missing list instead.
        let mut unknown: Vec<i32> = missing.iter().map(|&(p, _)| p).collect();
        unknown.sort_unstable();
        partitions.retain_ids(|p| unknown.binary_search(&p).is_err());
        Some(missing)
    }

    /// [`Self::check_offset_write`] over an OffsetCommit: topics left without
    /// partitions are removed.
    fn trim_offset_commit(
        &self,
        context: &RequestContext,
        topics: &mut Vec<TopicEntries<OffsetCommitData>>,
    ) -> Vec<TopicEntries<ErrorCode>> {
        let mut rejected = Vec::new();
        for entry in topics.iter_mut() {
            if let Some(partitions) = self.check_offset_write(context, &entry.topic, &mut entry.partitions) {
                rejected.push(TopicEntries { topic: entry.topic.clone(), partitions });
            }
        }
        if !rejected.is_empty() {
            topics.retain(|entry| !entry.partitions.is_empty());
        }
        rejected
    }

    /// [`Self::check_offset_write`] over an OffsetDelete, as for a commit.
    fn trim_offset_delete(
        &self,
        context: &RequestContext,
        topics: &mut BTreeMap<String, Vec<i32>>,
    ) -> PartitionMap<ErrorCode> {
        let mut rejected = PartitionMap::new();
        for (topic, partitions) in topics.iter_mut() {
            if let Some(errors) = self.check_offset_write(context, topic, partitions) {
                rejected.insert(topic.clone(), errors.into_iter().collect());
            }
        }
        if !rejected.is_empty() {
            topics.retain(|_, partitions| !partitions.is_empty());
        }
        rejected
    }

    fn admit(&self, context: &RequestContext, mut request: Request) -> Admission {
        // A request that names several groups reaches this split, one group each.
        let Some((operation, group)) = request.group_acl() else {
            return Admission::Admitted(request, Fixup::Nothing);
        };
        // `KafkaApis.handleTxnOffsetCommitRequest` asks WRITE on the transactional
        // id before the group.
        if let Request::TxnOffsetCommit(r) = &request
            && !self.allowed(
                context,
                AclOperation::Write,
                Resource::TransactionalId(&r.transactional_id),
                true,
            )
        {
            return Admission::Answered(request.refused(ErrorCode::TransactionalIdAuthorizationFailed));
        }
        if !self.allowed(context, operation, Resource::Group(group), true) {
            return Admission::Answered(request.refused(ErrorCode::GroupAuthorizationFailed));
        }
        // KAFKA-18813: a subscription to a topic the caller may not describe
        // fails the whole heartbeat (§2.1 step 3).
        let subscribed = match &request {
            Request::ConsumerGroupHeartbeat(r) => r.subscribed_topic_names.as_deref(),
            // `KafkaApis.handleShareGroupHeartbeat` checks the same.
            Request::ShareGroupHeartbeat(r) => r.subscribed_topic_names.as_deref(),
            _ => None,
        };
        if subscribed.is_some_and(|names| {
            names.iter().any(|t| !self.allowed(context, AclOperation::Describe, Resource::Topic(t), true))
        }) {
            return Admission::Answered(request.refused(ErrorCode::TopicAuthorizationFailed));
        }
        let fixup = match &mut request {
            Request::OffsetCommit(r) => {
                let rejected = self.trim_offset_commit(context, &mut r.offsets);
                if rejected.is_empty() {
                    Fixup::Nothing
                } else if r.offsets.is_empty() {
                    // Kafka does not call its coordinator when no partition is left.
                    return Admission::Answered(Fixup::Commit(rejected).apply_to(
                        &*self.authorizer,
                        context,
                        Response::OffsetCommit(OffsetCommitResponse::default()),
                    ));
                } else {
                    Fixup::Commit(rejected)
                }
            }
            // `KafkaApis.handleTxnOffsetCommitRequest`: each topic as for a commit.
            Request::TxnOffsetCommit(r) => {
                let rejected = self.trim_offset_commit(context, &mut r.offsets);
                if rejected.is_empty() {
                    Fixup::Nothing
                } else if r.offsets.is_empty() {
                    return Admission::Answered(Fixup::TxnCommit(rejected).apply_to(
                        &*self.authorizer,
                        context,
                        Response::TxnOffsetCommit(Default::default()),
                    ));
                } else {
                    Fixup::TxnCommit(rejected)
                }
            }
            Request::OffsetFetch(r) => match &mut r.topics {
                None => Fixup::FetchAll,
                Some(topics) => {
                    let denied = self.deny_topics(context, AclOperation::Describe, topics);
                    if denied.is_empty() { Fixup::Nothing } else { Fixup::Fetch(denied) }
                }
            },
            Request::OffsetDelete(r) => {
                // Kafka calls its coordinator even with nothing left: the group's own
                // errors (GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP) still come first.
                let rejected = self.trim_offset_delete(context, &mut r.topics);
                if rejected.is_empty() { Fixup::Nothing } else { Fixup::OffsetDelete(rejected) }
            }
            // `KafkaApis.handleDescribeShareGroupOffsetsRequest`: DESCRIBE on each named
            // topic; a description of every topic is filtered once answered.
            Request::DescribeShareGroupOffsets(r) => match r.groups.first_mut().map(|g| &mut g.topics) {
                Some(None) => Fixup::DescribeShareOffsetsAll,
                Some(Some(topics)) => {
                    let mut denied = Vec::new();
                    topics.retain(|t| {
                        let ok = self.allowed(
                            context,
                            AclOperation::Describe,
                            Resource::Topic(&t.topic_name),
                            true,
                        );
                        if !ok {
                            denied.push((t.topic_name.clone(), t.partitions.clone()));
                        }
                        ok
                    });
                    if denied.is_empty() { Fixup::Nothing } else { Fixup::DescribeShareOffsets(denied) }
                }
                None => Fixup::Nothing,
            },
            Request::AlterShareGroupOffsets(r) => {
                // `KafkaApis.handleAlterShareGroupOffsetsRequest`: READ on each topic, then
                // the topic in the metadata; the coordinator is called with what is left.
                let mut rejected = Vec::new();
                // Named by the id the metadata has for them (Kafka's `topicNamesToIds`).
                let image = super::lock(&self.image).clone();
                r.topics.retain(|t| {
                    let code =
                        if !self.allowed(context, AclOperation::Read, Resource::Topic(&t.topic_name), true) {
                            ErrorCode::TopicAuthorizationFailed
                        } else if !self.topics.contains(&t.topic_name, 0) {
                            ErrorCode::UnknownTopicOrPartition
                        } else {
                            return true;
                        };
                    let message = match code {
                        ErrorCode::TopicAuthorizationFailed => TOPIC_AUTHORIZATION_FAILED,
                        _ => group_share_coordinator::default_error_message(code),
                    };
                    let partitions = t.partitions.iter().map(|p| SharePartitionOutcome {
                        partition_index: p.partition_index,
                        error_code: code,
                        error_message: Some(message.to_owned()),
                    });
                    rejected.push(AlteredShareOffsetsTopic {
                        topic_name: t.topic_name.clone(),
                        topic_id: image.topic(&t.topic_name).map_or(group_types::TopicId::ZERO, |i| i.id),
                        partitions: partitions.collect(),
                    });
                    false
                });
                if rejected.is_empty() { Fixup::Nothing } else { Fixup::AlterShareOffsets(rejected) }
            }
            Request::DeleteShareGroupOffsets(r) => {
                // `KafkaApis.handleDeleteShareGroupOffsetsRequest`: READ on each topic; the
                // coordinator is called with what is left, even nothing.
                let mut denied = Vec::new();
                r.topic_names.retain(|t| {
                    let ok = self.allowed(context, AclOperation::Read, Resource::Topic(t), true);
                    if !ok {
                        denied.push(t.clone());
                    }
                    ok
                });
                if denied.is_empty() { Fixup::Nothing } else { Fixup::DeleteShareOffsets(denied) }
            }
            _ => Fixup::Nothing,
        };
        Admission::Admitted(request, fixup)
    }

    /// [`Inner::submit`] as `context`: authorized and trimmed first, the core's
    /// answer completed with what was decided without it. Never blocks: a trimmed
    /// request whose answer waits for a write gets a [`Pending`] that merges the
    /// two once the write completes.
    pub(super) fn submit_as(
        &self,
        context: &RequestContext,
        shard: usize,
        request: Request,
    ) -> Pending<Response> {
        if self.stopped.load(Ordering::Acquire) {
            return Pending::ready(Err(CoordinatorError::Stopped));
        }
        let (request, fixup) = match self.admit(context, request) {
            Admission::Answered(response) => return Pending::ready(Ok(response)),
            Admission::Admitted(request, fixup) => (request, fixup),
        };
        // Kafka resolves a regex over the topics the triggering member may describe
        // (`filterTopicDescribeAuthorizedTopics`); asked only when one resolves.
        let visible =
            |topic: &str| self.allowed(context, AclOperation::Describe, Resource::Topic(topic), false);
        match (self.submit(shard, request, &visible), fixup) {
            (Ok(outcome), Fixup::Nothing) => Pending::ready(outcome),
            (Err(slot), Fixup::Nothing) => Pending::waiting(slot),
            (Ok(outcome), fixup) => {
                Pending::ready(outcome.map(|r| fixup.apply_to(&*self.authorizer, context, r)))
            }
            (Err(slot), fixup) => {
                // Only offset and admin requests are trimmed, and they are rare
                // enough to own what their fix-up needs until the answer comes.
                let authorizer = self.authorizer.clone();
                let context = context.clone();
                Pending::waiting(slot)
                    .map(move |outcome| outcome.map(|r| fixup.apply_to(&*authorizer, &context, r)))
            }
        }
    }

    pub(super) fn pending_as<T: ResponseKind>(
        &self,
        context: &RequestContext,
        shard: usize,
        request: Request,
    ) -> Pending<T> {
        self.submit_as(context, shard, request).cast()
    }
}

impl Fixup {
    fn apply_to(self, authorizer: &dyn Authorizer, context: &RequestContext, response: Response) -> Response {
        match (self, response) {
            (Fixup::Commit(rejected), Response::OffsetCommit(mut r)) => {
                for entry in rejected {
                    for (partition, code) in entry.partitions {
                        r.push(&entry.topic, partition, code);
                    }
                }
                Response::OffsetCommit(r)
            }
            (Fixup::TxnCommit(rejected), Response::TxnOffsetCommit(mut r)) => {
                for entry in rejected {
                    match r.errors.iter_mut().rev().find(|t| t.topic == entry.topic) {
                        Some(topic) => topic.partitions.extend(entry.partitions),
                        None => r.errors.push(entry),
                    }
                }
                Response::TxnOffsetCommit(r)
            }
            (Fixup::Fetch(denied), Response::OffsetFetch(mut r)) if r.error_code == ErrorCode::None => {
                for (topic, partitions) in denied {
                    let out = r.offsets.entry(topic).or_default();
                    for p in partitions {
                        out.insert(p, OffsetFetchData::error(ErrorCode::TopicAuthorizationFailed));
                    }
                }
                Response::OffsetFetch(r)
            }
            (Fixup::FetchAll, Response::OffsetFetch(mut r)) => {
                // Kafka: clients are not shown offsets of topics they may not describe.
                r.offsets.retain(|topic, _| {
                    authorizer.authorize(context, AclOperation::Describe, Resource::Topic(topic))
                });
                Response::OffsetFetch(r)
            }
            // A group-level error answers alone, as Kafka's `OffsetDeleteResponse.Builder.merge`.
            (Fixup::OffsetDelete(rejected), Response::OffsetDelete(mut r))
                if r.error_code == ErrorCode::None =>
            {
                for (topic, partitions) in rejected {
                    r.partitions.entry(topic).or_default().extend(partitions);
                }
                Response::OffsetDelete(r)
            }
            // Denied topics first, then the coordinator's; a group-level error answers alone.
            (Fixup::DeleteShareOffsets(denied), Response::DeleteShareGroupOffsets(mut r))
                if r.error_code == ErrorCode::None =>
            {
                let code = ErrorCode::TopicAuthorizationFailed;
                let mut topics: Vec<_> = denied
                    .into_iter()
                    .map(|topic_name| DeletedShareOffsetsTopic {
                        topic_name,
                        topic_id: group_types::TopicId::ZERO,
                        error_code: code,
                        error_message: Some(TOPIC_AUTHORIZATION_FAILED.to_owned()),
                    })
                    .collect();
                topics.append(&mut r.responses);
                r.responses = topics;
                Response::DeleteShareGroupOffsets(r)
            }
            // Denied topics after the coordinator's; a group-level error answers alone.
            (Fixup::DescribeShareOffsets(denied), Response::DescribeShareGroupOffsets(mut r)) => {
                if let Some(g) = r.groups.first_mut().filter(|g| g.error_code == ErrorCode::None) {
                    for (topic_name, partitions) in denied {
                        let partitions = partitions.into_iter().map(|partition_index| DescribedShareOffset {
                            partition_index,
                            start_offset: -1,
                            leader_epoch: 0,
                            lag: -1,
                            error_code: ErrorCode::TopicAuthorizationFailed,
                            error_message: Some(TOPIC_AUTHORIZATION_FAILED.to_owned()),
                        });
                        g.topics.push(DescribedShareOffsetsTopic {
                            topic_name,
                            topic_id: group_types::TopicId::ZERO,
                            partitions: partitions.collect(),
                        });
                    }
                }
                Response::DescribeShareGroupOffsets(r)
            }
            (Fixup::DescribeShareOffsetsAll, Response::DescribeShareGroupOffsets(mut r)) => {
                for g in &mut r.groups {
                    g.topics.retain(|t| {
                        authorizer.authorize(context, AclOperation::Describe, Resource::Topic(&t.topic_name))
                    });
                }
                Response::DescribeShareGroupOffsets(r)
            }
            // `AlterShareGroupOffsetsResponse.Builder`: the rejected topics, then the
            // coordinator's merged in; a group-level error answers alone.
            (Fixup::AlterShareOffsets(mut rejected), Response::AlterShareGroupOffsets(mut r))
                if r.error_code == ErrorCode::None =>
            {
                rejected.append(&mut r.responses);
                r.responses = rejected;
                Response::AlterShareGroupOffsets(r)
            }
            (_, response) => response,
        }
    }
}

/// `Errors.TOPIC_AUTHORIZATION_FAILED`'s message.
const TOPIC_AUTHORIZATION_FAILED: &str = "Topic authorization failed.";

/// A described modern group, as `KafkaApis` checks it after the coordinator.
trait Described {
    fn failed(&self) -> bool;
    fn group(&self) -> &str;
    /// The names of the topics its members hold (or are to hold).
    fn held_topics(&self) -> impl Iterator<Item = &str>;
    /// The group answered `TOPIC_AUTHORIZATION_FAILED`, with no members.
    fn deny_topics(&mut self);
    fn set_authorized_operations(&mut self, bits: i32);
}

impl Described for DescribedConsumerGroup {
    fn failed(&self) -> bool {
        self.error_code != ErrorCode::None
    }

    fn group(&self) -> &str {
        &self.group_id
    }

    fn held_topics(&self) -> impl Iterator<Item = &str> {
        self.members
            .iter()
            .flat_map(|m| m.assignment.iter().chain(&m.target_assignment))
            .map(|t| &*t.topic_name)
    }

    fn deny_topics(&mut self) {
        *self =
            DescribedConsumerGroup::error(self.group_id.clone(), ErrorCode::TopicAuthorizationFailed, None);
    }

    fn set_authorized_operations(&mut self, bits: i32) {
        self.authorized_operations = bits;
    }
}

impl Described for DescribedShareGroup {
    fn failed(&self) -> bool {
        self.error_code != ErrorCode::None
    }

    fn group(&self) -> &str {
        &self.group_id
    }

    fn held_topics(&self) -> impl Iterator<Item = &str> {
        self.members.iter().flat_map(|m| &m.assignment).map(|t| &*t.topic_name)
    }

    /// `KafkaApis.handleShareGroupDescribe` says why.
    fn deny_topics(&mut self) {
        let message = "The group has described topic(s) that the client is not authorized to describe.";
        *self = DescribedShareGroup::error(
            self.group_id.clone(),
            ErrorCode::TopicAuthorizationFailed,
            Some(message.to_owned()),
        );
    }

    fn set_authorized_operations(&mut self, bits: i32) {
        self.authorized_operations = bits;
    }
}

/// `KafkaApis.handleConsumerGroupDescribe`'s and `handleShareGroupDescribe`'s checks
/// after the coordinator: a group whose members hold a topic the caller may not
/// describe is `TOPIC_AUTHORIZATION_FAILED` with no members; otherwise its
/// authorized operations, when asked for.
fn authorize_described(
    authorizer: &dyn crate::Authorizer,
    context: &RequestContext,
    g: &mut impl Described,
    include: bool,
) {
    if g.failed() {
        return;
    }
    let denied =
        g.held_topics().any(|t| !authorizer.authorize(context, AclOperation::Describe, Resource::Topic(t)));
    if denied {
        g.deny_topics();
        return;
    }
    if include {
        g.set_authorized_operations(crate::authorized_operations(
            authorizer,
            context,
            Resource::Group(g.group()),
        ));
    }
}

/// The coordinator as seen by one caller: every request is authorized for its
/// [`RequestContext`] (from [`GroupCoordinator::caller`]). The same methods as
/// [`GroupCoordinator`]'s, which act as [`RequestContext::ANONYMOUS`].
#[derive(Debug, Clone, Copy)]
pub struct Caller<'a> {
    pub(super) coordinator: &'a GroupCoordinator,
    pub(super) context: &'a RequestContext,
}

impl GroupCoordinator {
    /// The coordinator as seen by the caller `context` describes: its requests are
    /// checked by the [`Authorizer`](crate::Authorizer) for `context.principal`.
    ///
    /// A network front end keeps one [`RequestContext`] per authenticated connection.
    pub fn caller<'a>(&'a self, context: &'a RequestContext) -> Caller<'a> {
        Caller { coordinator: self, context }
    }
}

impl Caller<'_> {
    /// The caller's context.
    pub fn context(&self) -> &RequestContext {
        self.context
    }

    /// The coordinator partition of `group_id`.
    pub(crate) fn shard_of(&self, group_id: &str) -> usize {
        self.coordinator.inner.shard_of(group_id)
    }

    /// Hands `request` (of one group, in partition `shard`) to its core as this caller.
    pub(crate) fn submit_to<T: ResponseKind>(&self, shard: usize, request: Request) -> Pending<T> {
        self.coordinator.inner.pending_as(self.context, shard, request)
    }

    /// Each part (of one group) in its group's partition, at once; the answer is
    /// `merge`d from theirs, in order, once all have come.
    fn fan_out<R: EachGroup>(
        &self,
        parts: Vec<R>,
        merge: impl FnOnce(Vec<R::Response>) -> R::Response + Send + Sync + 'static,
    ) -> Pending<R::Response> {
        let inner = &self.coordinator.inner;
        let parts = parts
            .into_iter()
            .map(|part| {
                let shard = inner.shard_of(part.group());
                inner.submit_as(self.context, shard, part.into())
            })
            .collect();
        Pending::combined(
            parts,
            Box::new(move |outcomes| {
                let answers = outcomes
                    .into_iter()
                    .map(Pending::<R::Response>::decode)
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(merge(answers).into_response())
            }),
        )
    }

    /// ListGroups over every partition this node serves (the table's
    /// `all_partitions`): answered at once, from each partition's committed state.
    pub(crate) fn list_all(&self, request: &ListGroupsRequest) -> Pending<ListGroupsResponse> {
        let inner = &self.coordinator.inner;
        if inner.stopped.load(Ordering::Acquire) {
            return Pending::ready(Err(CoordinatorError::Stopped));
        }
        // Only the partitions this node owns are listed; one still loading makes the
        // answer COORDINATOR_LOAD_IN_PROGRESS at the top, with the loaded groups still
        // listed (`kafka-semantics.md` §2.7).
        let mut groups = Vec::new();
        let mut loading = false;
        // A node whose serving lease ran out lists nothing (see `ServingLease`).
        let serving = inner.lease.as_ref().is_none_or(|lease| lease.holds());
        for shard in inner.shards.iter().filter(|_| serving) {
            let shard = lock(shard);
            match shard.state {
                PartitionState::Owned(_) => groups.extend(shard.core.listed_groups(request)),
                PartitionState::Loading => loading = true,
                PartitionState::Unowned => {}
            }
        }
        if !inner.allowed(self.context, AclOperation::Describe, Resource::Cluster, false) {
            groups.retain(|g| {
                inner.allowed(self.context, AclOperation::Describe, Resource::Group(&g.group_id), false)
            });
        }
        groups.sort_by(|a, b| a.group_id.cmp(&b.group_id));
        let error_code = if loading { ErrorCode::CoordinatorLoadInProgress } else { ErrorCode::None };
        Pending::ready(Ok(Response::ListGroups(ListGroupsResponse { error_code, groups })))
    }
}

/// A request that names several groups (the table's `each_group`): split into
/// one request per group, each asked in its group's coordinator partition, the
/// answers merged.
pub(crate) trait EachGroup: GroupApi {
    /// The groups asked.
    fn group_ids(&self) -> &[GroupId];

    /// The group of a part (its only one).
    fn group(&self) -> &str {
        self.group_ids().first().map_or("", GroupId::as_str)
    }

    /// Splits the request and answers it from its parts'.
    fn answer(self, caller: &Caller<'_>) -> Pending<Self::Response>;
}

impl EachGroup for DescribeGroupsRequest {
    fn group_ids(&self) -> &[GroupId] {
        &self.group_ids
    }

    /// Every group asked, in request order; from v3, when asked, each group described
    /// without error carries the caller's authorized operations on it
    /// (`KafkaApis.handleDescribeGroupsRequest`, KIP-430).
    fn answer(self, caller: &Caller<'_>) -> Pending<DescribeGroupsResponse> {
        let (version, include) = (self.api_version, self.include_authorized_operations);
        let parts = self
            .group_ids
            .into_iter()
            .map(|id| DescribeGroupsRequest {
                group_ids: vec![id],
                api_version: version,
                include_authorized_operations: include,
            })
            .collect();
        let authorizer = caller.coordinator.inner.authorizer.clone();
        let context = caller.context.clone();
        caller.fan_out(parts, move |answers: Vec<DescribeGroupsResponse>| {
            let mut groups: Vec<_> = answers.into_iter().flat_map(|a| a.groups).collect();
            if include && version >= 3 {
                for g in groups.iter_mut().filter(|g| g.error_code == ErrorCode::None) {
                    g.authorized_operations =
                        crate::authorized_operations(&*authorizer, &context, Resource::Group(&g.group_id));
                }
            }
            DescribeGroupsResponse { groups }
        })
    }
}

impl EachGroup for DeleteGroupsRequest {
    fn group_ids(&self) -> &[GroupId] {
        &self.group_ids
    }

    /// One result per distinct group, in request order.
    fn answer(self, caller: &Caller<'_>) -> Pending<DeleteGroupsResponse> {
        let mut distinct: Vec<GroupId> = Vec::with_capacity(self.group_ids.len());
        for id in self.group_ids {
            if !distinct.contains(&id) {
                distinct.push(id);
            }
        }
        let parts = distinct.into_iter().map(|id| DeleteGroupsRequest { group_ids: vec![id] }).collect();
        caller.fan_out(parts, |answers: Vec<DeleteGroupsResponse>| DeleteGroupsResponse {
            results: answers.into_iter().flat_map(|a| a.results).collect(),
        })
    }
}

impl EachGroup for ConsumerGroupDescribeRequest {
    fn group_ids(&self) -> &[GroupId] {
        &self.group_ids
    }

    /// An empty group id is answered first, as Kafka does; then each group's
    /// answer passes `KafkaApis`'s checks after the coordinator.
    fn answer(self, caller: &Caller<'_>) -> Pending<ConsumerGroupDescribeResponse> {
        let (version, include) = (self.api_version, self.include_authorized_operations);
        let mut ids = self.group_ids;
        // Stable: empty ids first, the rest in request order.
        ids.sort_by_key(|id| !id.is_empty());
        let parts = ids
            .into_iter()
            .map(|id| ConsumerGroupDescribeRequest {
                api_version: version,
                group_ids: vec![id],
                include_authorized_operations: include,
            })
            .collect();
        let authorizer = caller.coordinator.inner.authorizer.clone();
        let context = caller.context.clone();
        caller.fan_out(parts, move |answers: Vec<ConsumerGroupDescribeResponse>| {
            let mut groups: Vec<_> = answers.into_iter().flat_map(|a| a.groups).collect();
            for g in &mut groups {
                authorize_described(&*authorizer, &context, g, include);
            }
            ConsumerGroupDescribeResponse { groups }
        })
    }
}

impl EachGroup for DescribeShareGroupOffsetsRequest {
    /// Its groups carry their own topics: the split is by `groups`.
    fn group_ids(&self) -> &[GroupId] {
        &[]
    }

    fn group(&self) -> &str {
        self.groups.first().map_or("", |g| g.group_id.as_str())
    }

    /// In request order, as `KafkaApis` joins its per-group futures.
    fn answer(self, caller: &Caller<'_>) -> Pending<DescribeShareGroupOffsetsResponse> {
        let version = self.api_version;
        let parts = self
            .groups
            .into_iter()
            .map(|g| DescribeShareGroupOffsetsRequest { api_version: version, groups: vec![g] })
            .collect();
        caller.fan_out(parts, move |answers: Vec<DescribeShareGroupOffsetsResponse>| {
            DescribeShareGroupOffsetsResponse { groups: answers.into_iter().flat_map(|a| a.groups).collect() }
        })
    }
}

impl EachGroup for ShareGroupDescribeRequest {
    fn group_ids(&self) -> &[GroupId] {
        &self.group_ids
    }

    /// An empty group id is answered first, as Kafka does, the rest in request order;
    /// then each group's answer passes `KafkaApis`'s checks after the coordinator.
    fn answer(self, caller: &Caller<'_>) -> Pending<ShareGroupDescribeResponse> {
        let include = self.include_authorized_operations;
        let mut ids = self.group_ids;
        ids.sort_by_key(|id| !id.is_empty());
        let parts = ids
            .into_iter()
            .map(|id| ShareGroupDescribeRequest {
                group_ids: vec![id],
                include_authorized_operations: include,
            })
            .collect();
        let authorizer = caller.coordinator.inner.authorizer.clone();
        let context = caller.context.clone();
        caller.fan_out(parts, move |answers: Vec<ShareGroupDescribeResponse>| {
            let mut groups: Vec<_> = answers.into_iter().flat_map(|a| a.groups).collect();
            for g in &mut groups {
                authorize_described(&*authorizer, &context, g, include);
            }
            ShareGroupDescribeResponse { groups }
        })
    }
}
