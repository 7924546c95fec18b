//! WriteTxnMarkers split by coordinator partition (the table's
//! `coordinator_partitions`): each partition of `__consumer_offsets` the
//! request names is one part, asked of its partition's core; the answers are
//! merged back in request order. A broker's transaction coordinator calls
//! [`GroupCoordinator::write_txn_markers`](crate::GroupCoordinator::write_txn_markers)
//! as Kafka's `KafkaApis.handleWriteTxnMarkersRequest` calls
//! `GroupCoordinator.completeTransaction` for each such partition.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

use group_types::{
    ErrorCode, GROUP_METADATA_TOPIC_NAME, TopicEntries, TxnMarker, WriteTxnMarkersRequest,
    WriteTxnMarkersResponse,
};

use super::{Caller, Pending, ResponseKind};
use crate::{AclOperation, CoordinatorError, Resource};

/// Where one partition of a part sits in the request: marker, topic, partition.
type Position = (usize, usize, usize);

impl Caller<'_> {
    /// Splits `request` by coordinator partition and answers it from the parts.
    /// CLUSTER_ACTION on the cluster is asked first (`KafkaApis`: an inter-broker
    /// RPC); a partition of another topic, or past the partition count, is
    /// `UNKNOWN_TOPIC_OR_PARTITION`, as Kafka answers a partition it does not host.
    pub(crate) fn markers_by_partition(
        &self,
        request: WriteTxnMarkersRequest,
    ) -> Pending<WriteTxnMarkersResponse> {
        let inner = &self.coordinator.inner;
        if inner.stopped.load(Ordering::Acquire) {
            return Pending::ready(Err(CoordinatorError::Stopped));
        }
        if !inner.allowed(self.context, AclOperation::ClusterAction, Resource::Cluster, true) {
            let response = WriteTxnMarkersResponse::uniform(&request, ErrorCode::ClusterAuthorizationFailed);
            return Pending::ready(Ok(response.into_response()));
        }
        let mut answer = WriteTxnMarkersResponse::uniform(&request, ErrorCode::UnknownTopicOrPartition);
        let mut parts: BTreeMap<usize, (WriteTxnMarkersRequest, Vec<Position>)> = BTreeMap::new();
        for (m, marker) in request.markers.iter().enumerate() {
            for (t, topic) in marker.topics.iter().enumerate() {
                if topic.topic != GROUP_METADATA_TOPIC_NAME {
                    continue;
                }
                for (k, &(partition, ())) in topic.partitions.iter().enumerate() {
                    let Some(shard) = usize::try_from(partition).ok().filter(|p| *p < inner.shards.len())
                    else {
                        continue;
                    };
                    let (part, positions) = parts.entry(shard).or_default();
                    if positions.last().is_none_or(|(last, _, _)| *last != m) {
                        part.markers.push(TxnMarker {
                            topics: vec![TopicEntries::new(GROUP_METADATA_TOPIC_NAME)],
                            ..marker.clone()
                        });
                    }
                    if let Some(entry) = part.markers.last_mut().and_then(|p| p.topics.first_mut()) {
                        entry.partitions.push((partition, ()));
                    }
                    positions.push((m, t, k));
                }
            }
        }
        let mut placed = Vec::with_capacity(parts.len());
        let mut asks = Vec::with_capacity(parts.len());
        for (shard, (part, positions)) in parts {
            asks.push(inner.submit_as(self.context, shard, part.into()));
            placed.push(positions);
        }
        Pending::combined(
            asks,
            Box::new(move |outcomes| {
                for (outcome, positions) in outcomes.into_iter().zip(placed) {
                    let part = Pending::<WriteTxnMarkersResponse>::decode(outcome)?;
                    let codes = part.iter().map(|(_, _, _, code)| code);
                    for ((m, t, k), code) in positions.into_iter().zip(codes) {
                        answer.markers[m].topics[t].partitions[k].1 = code;
                    }
                }
                Ok(answer.into_response())
            }),
        )
    }
}
