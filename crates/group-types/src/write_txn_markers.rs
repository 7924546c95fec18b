//! WriteTxnMarkers (API key 27) as a group coordinator serves it: a
//! transaction coordinator ends a producer's transaction on partitions of
//! `__consumer_offsets`, whose pending transactional offsets then commit or
//! abort (`GroupCoordinator.completeTransaction` per partition).

use serde::{Deserialize, Serialize};

use crate::{ErrorCode, TopicEntries};

/// The internal topic whose partitions are the group coordinator's.
pub const GROUP_METADATA_TOPIC_NAME: &str = "__consumer_offsets";

/// How a transaction ended (Kafka's `TransactionResult`; `true` on the wire is COMMIT).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TransactionResult {
    /// The transaction committed: its offsets become visible.
    Commit,
    /// The transaction aborted: its offsets are dropped.
    Abort,
}

impl TransactionResult {
    /// The wire's `TransactionResult` boolean (`true` = COMMIT).
    pub fn from_wire(commit: bool) -> TransactionResult {
        if commit { TransactionResult::Commit } else { TransactionResult::Abort }
    }

    /// Kafka's name (`COMMIT`, `ABORT`).
    pub fn name(self) -> &'static str {
        match self {
            TransactionResult::Commit => "COMMIT",
            TransactionResult::Abort => "ABORT",
        }
    }
}

/// One marker: the end of one producer's transaction on some partitions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TxnMarker {
    /// The producer whose transaction ended.
    pub producer_id: i64,
    /// Its epoch (not checked by the group coordinator, as Kafka's shard does not).
    pub producer_epoch: i16,
    /// How the transaction ended.
    pub result: TransactionResult,
    /// The transaction coordinator's epoch.
    pub coordinator_epoch: i32,
    /// v2+: the transaction version (0/1 legacy, 2 = KIP-890 part 2).
    pub transaction_version: i8,
    /// The partitions, per topic; the group coordinator's are those of
    /// [`GROUP_METADATA_TOPIC_NAME`].
    pub topics: Vec<TopicEntries<()>>,
}

/// A WriteTxnMarkers request.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct WriteTxnMarkersRequest {
    /// The markers, in request order.
    pub markers: Vec<TxnMarker>,
}

impl WriteTxnMarkersRequest {
    /// One marker for `producer_id` on coordinator partitions `partitions`.
    pub fn one(producer_id: i64, result: TransactionResult, partitions: &[i32]) -> WriteTxnMarkersRequest {
        let topic = TopicEntries {
            topic: GROUP_METADATA_TOPIC_NAME.to_owned(),
            partitions: partitions.iter().map(|p| (*p, ())).collect(),
        };
        WriteTxnMarkersRequest {
            markers: vec![TxnMarker {
                producer_id,
                producer_epoch: 0,
                result,
                coordinator_epoch: 0,
                transaction_version: 0,
                topics: vec![topic],
            }],
        }
    }
}

/// One marker's outcome: per topic and partition, its error.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TxnMarkerResult {
    /// The marker's producer.
    pub producer_id: i64,
    /// Each partition's outcome, per topic, in request order.
    pub topics: Vec<TopicEntries<ErrorCode>>,
}

/// A WriteTxnMarkers response: one result per marker, in request order.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct WriteTxnMarkersResponse {
    /// The markers' outcomes.
    pub markers: Vec<TxnMarkerResult>,
}

impl WriteTxnMarkersResponse {
    /// Every partition of `request` answered `error_code`.
    pub fn uniform(request: &WriteTxnMarkersRequest, error_code: ErrorCode) -> WriteTxnMarkersResponse {
        let markers = request
            .markers
            .iter()
            .map(|m| TxnMarkerResult {
                producer_id: m.producer_id,
                topics: m
                    .topics
                    .iter()
                    .map(|t| TopicEntries {
                        topic: t.topic.clone(),
                        partitions: t.partitions.iter().map(|(p, ())| (*p, error_code)).collect(),
                    })
                    .collect(),
            })
            .collect();
        WriteTxnMarkersResponse { markers }
    }

    /// Sets every partition's outcome to `error_code`.
    pub fn set_all(&mut self, error_code: ErrorCode) {
        for topic in self.markers.iter_mut().flat_map(|m| &mut m.topics) {
            topic.partitions.iter_mut().for_each(|(_, code)| *code = error_code);
        }
    }

    /// Every outcome with its producer, topic and partition, in response order.
    pub fn iter(&self) -> impl Iterator<Item = (i64, &str, i32, ErrorCode)> {
        self.markers.iter().flat_map(|m| {
            m.topics.iter().flat_map(move |t| {
                t.partitions.iter().map(move |&(p, code)| (m.producer_id, t.topic.as_str(), p, code))
            })
        })
    }
}
