//! The share-state RPCs (the table's `share_partitions` rows) as
//! `ShareCoordinatorService` serves them: CLUSTER_ACTION on the cluster, the
//! service's own checks, then one part per coordinator partition holding some
//! of the request's share partitions (a key `group:topicId:partition` routes by
//! `ShareCoordinatorService.partitionFor`, over this coordinator's partition
//! count), each run by that partition's core, the answers merged per topic.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

use group_share_coordinator::{ShardCall, Split, merge_answers};
use group_types::{ErrorCode, ShareStateRequest, ShareStateResponse, ShareStateTopic};

use super::{Caller, Inner, Pending, ResponseKind};
use crate::core::share_coordinator::{StatePartition, refused};
use crate::{AclOperation, CoordinatorError, GroupApi, RequestContext, Resource};

/// Which coordinator partition hosts a share partition's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ShareStateRouting {
    /// Kafka's: the partition its key `group:topicId:partition` hashes to
    /// (`ShareCoordinatorService.partitionFor`), so that a group's share state is
    /// spread over the partitions, as over `__share_group_state`'s in Kafka.
    #[default]
    ByKey,
    /// Its group's own partition: every share partition of a group lives where the
    /// group does, so the group coordinator reaches its share state without leaving
    /// the node (what a cluster whose nodes cannot call each other needs; it gives up
    /// spreading one group's share-state writes over several partitions).
    WithGroup,
}

/// A request of the hosted share coordinator: split by share partition key.
pub(crate) trait SharePartitions: GroupApi {
    /// Splits the request and answers it from its parts', as `context`.
    fn answer_as(self, inner: &Inner, context: &RequestContext) -> Pending<Self::Response>;

    /// [`answer_as`](Self::answer_as) the caller.
    fn answer(self, caller: &Caller<'_>) -> Pending<Self::Response> {
        self.answer_as(&caller.coordinator.inner, caller.context)
    }
}

impl<P> SharePartitions for ShareStateRequest<P>
where
    P: StatePartition + Send + 'static,
    P::Answer: Send + 'static,
    ShareStateRequest<P>: GroupApi<Response = ShareStateResponse<P::Answer, P>>,
    ShareStateResponse<P::Answer, P>: ResponseKind,
{
    fn answer_as(self, inner: &Inner, context: &RequestContext) -> Pending<Self::Response> {
        if inner.stopped.load(Ordering::Acquire) {
            return Pending::ready(Err(CoordinatorError::Stopped));
        }
        // `KafkaApis` answers a denied inter-broker RPC with the code on every partition.
        if !inner.allowed(context, AclOperation::ClusterAction, Resource::Cluster, true) {
            let response = P::respond(refused(&self, ErrorCode::ClusterAuthorizationFailed));
            return Pending::ready(Ok(response));
        }
        let partitions = i32::try_from(inner.partitions).unwrap_or(i32::MAX);
        let mut calls = match P::split(&self, partitions) {
            Split::Answered(response) => return Pending::ready(Ok(P::respond(response))),
            Split::Calls(calls) => calls,
        };
        if inner.share_routing == ShareStateRouting::WithGroup {
            let group = i32::try_from(inner.shard_of(self.group_id.as_str())).unwrap_or(0);
            calls.iter_mut().for_each(|call| call.coordinator_partition = group);
        }
        let parts = by_partition(&self, calls)
            .into_iter()
            .map(|(shard, part)| inner.submit_as(context, shard, part.into()))
            .collect();
        Pending::combined(
            parts,
            Box::new(move |outcomes| {
                let mut answers = Vec::new();
                for outcome in outcomes {
                    let part = Pending::<ShareStateResponse<P::Answer, P>>::decode(outcome)?;
                    for topic in part.results {
                        answers.extend(topic.partitions.into_iter().map(|p| (topic.topic_id, p)));
                    }
                }
                Ok(P::respond(ShareStateResponse::new(merge_answers(answers))))
            }),
        )
    }
}

/// The calls of one request grouped into one request per coordinator partition,
/// each keeping the request's version and group and its calls' order.
fn by_partition<P: Clone>(
    request: &ShareStateRequest<P>,
    calls: Vec<ShardCall<P>>,
) -> BTreeMap<usize, ShareStateRequest<P>> {
    let mut parts: BTreeMap<usize, ShareStateRequest<P>> = BTreeMap::new();
    for call in calls {
        let shard = usize::try_from(call.coordinator_partition).unwrap_or(0);
        let part = parts.entry(shard).or_insert_with(|| ShareStateRequest {
            api_version: request.api_version,
            group_id: request.group_id.clone(),
            topics: Vec::new(),
        });
        match part.topics.iter_mut().find(|t| t.topic_id == call.key.topic_id) {
            Some(topic) => topic.partitions.push(call.data),
            None => part.topics.push(ShareStateTopic::new(call.key.topic_id, [call.data])),
        }
    }
    parts
}
