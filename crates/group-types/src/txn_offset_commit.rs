//! TxnOffsetCommit (API key 28): a transactional producer's offsets, pending
//! until its transaction coordinator's marker commits or aborts them (KIP-98,
//! KIP-447, KIP-890; the markers are `write_txn_markers.rs`).

use serde::{Deserialize, Serialize};

use crate::offset_commit::{entry_of, error_for, iter_errors, set_all_errors, uniform_errors};
use crate::{ErrorCode, GroupId, GroupInstanceId, MemberId, OffsetCommitData, TopicEntries};

/// A TxnOffsetCommit request, with every field of versions 0 to 5.
///
/// Fields a version lacks take Kafka's defaults: before v2 no leader epoch,
/// before v3 no member id (`""`), generation (-1) or instance id (`None`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TxnOffsetCommitRequest {
    /// The producer's transactional id (checked by the broker's ACLs, not by the
    /// coordinator).
    pub transactional_id: String,
    /// The group.
    pub group_id: GroupId,
    /// The producer whose transaction the offsets join.
    pub producer_id: i64,
    /// The producer's epoch (the coordinator ignores it, as Kafka's shard does).
    pub producer_epoch: i16,
    /// v3+: the member's generation (classic group) or member epoch (consumer
    /// group); -1 (the default) when the producer is not a member.
    pub generation_id: i32,
    /// v3+: the member's id; `""` (the default) when the producer is not a member.
    pub member_id: MemberId,
    /// v3+: the member's static instance id.
    pub group_instance_id: Option<GroupInstanceId>,
    /// The offsets, per topic and partition, in request order (`commit_timestamp`
    /// is not part of this API and is ignored).
    pub offsets: Vec<TopicEntries<OffsetCommitData>>,
    /// The request's API version.
    pub api_version: i16,
}

impl Default for TxnOffsetCommitRequest {
    fn default() -> TxnOffsetCommitRequest {
        TxnOffsetCommitRequest {
            transactional_id: String::new(),
            group_id: GroupId::empty(),
            producer_id: -1,
            producer_epoch: -1,
            generation_id: -1,
            member_id: MemberId::empty(),
            group_instance_id: None,
            offsets: Vec::new(),
            api_version: TxnOffsetCommitRequest::LATEST_VERSION,
        }
    }
}

impl TxnOffsetCommitRequest {
    /// The newest TxnOffsetCommit version served, the one [`Default`] uses.
    pub const LATEST_VERSION: i16 = 5;

    /// Adds one partition's commit to its topic's entry (builder style).
    pub fn with_offset(
        mut self,
        topic: impl AsRef<str>,
        partition: i32,
        data: OffsetCommitData,
    ) -> TxnOffsetCommitRequest {
        entry_of(&mut self.offsets, topic.as_ref()).partitions.push((partition, data));
        self
    }

    /// The number of partitions in the request.
    pub fn partition_count(&self) -> usize {
        self.offsets.iter().map(|t| t.partitions.len()).sum()
    }
}

/// A TxnOffsetCommit response: only per-partition errors, as on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TxnOffsetCommitResponse {
    /// The outcome of every requested partition, in request order.
    pub errors: Vec<TopicEntries<ErrorCode>>,
}

impl TxnOffsetCommitResponse {
    /// Every partition of `request` with the same error
    /// (`TxnOffsetCommitRequest.getErrorResponse`).
    pub fn uniform(request: &TxnOffsetCommitRequest, error_code: ErrorCode) -> TxnOffsetCommitResponse {
        TxnOffsetCommitResponse { errors: uniform_errors(&request.offsets, error_code) }
    }

    /// The outcome of one partition, if it was in the request (the last one, if
    /// it was named twice).
    pub fn error_for(&self, topic: &str, partition: i32) -> Option<ErrorCode> {
        error_for(&self.errors, topic, partition)
    }

    /// Every outcome with its topic and partition, in response order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, i32, ErrorCode)> {
        iter_errors(&self.errors)
    }

    /// Sets every outcome to `error_code`: how a failed write answers every partition.
    pub fn set_all(&mut self, error_code: ErrorCode) {
        set_all_errors(&mut self.errors, error_code);
    }
}

#[cfg(feature = "kafka-protocol")]
mod wire {
    //! TxnOffsetCommit (key 28) on the wire: a transactional producer's offsets,
    //! answered per partition in request order.

    use kafka_protocol::messages as kp;

    use crate as gt;
    use crate::wire::layout::Ty::{Arr, I16, I32, I64, Str};
    use crate::wire::layout::{ALL, Layout, Struct, always, f, plain};
    use crate::wire::{Header, WireRequest, id, opt_id, s, sb};

    impl WireRequest for gt::TxnOffsetCommitRequest {
        type Wire = kp::TxnOffsetCommitRequest;
        type Response = gt::TxnOffsetCommitResponse;
        type WireResponse = kp::TxnOffsetCommitResponse;
        const LAYOUT: Layout = Layout::new(0, 5, 3, &BODY);

        #[inline]
        fn from_wire(req: &kp::TxnOffsetCommitRequest, header: &Header<'_>) -> Self {
            let version = header.version;
            let offsets = req
                .topics
                .iter()
                .map(|topic| gt::TopicEntries {
                    topic: s(&topic.name.0),
                    partitions: topic
                        .partitions
                        .iter()
                        .map(|p| {
                            let data = gt::OffsetCommitData {
                                offset: p.committed_offset,
                                leader_epoch: (p.committed_leader_epoch >= 0)
                                    .then_some(p.committed_leader_epoch),
                                metadata: opt_id(&p.committed_metadata),
                                commit_timestamp: None,
                            };
                            (p.partition_index, data)
                        })
                        .collect(),
                })
                .collect();
            gt::TxnOffsetCommitRequest {
                transactional_id: s(&req.transactional_id.0),
                group_id: id(&req.group_id.0),
                producer_id: req.producer_id.0,
                producer_epoch: req.producer_epoch,
                generation_id: req.generation_id,
                member_id: id(&req.member_id),
                group_instance_id: opt_id(&req.group_instance_id),
                offsets,
                api_version: version,
            }
        }

        #[inline]
        fn to_wire(answer: gt::TxnOffsetCommitResponse, _: i16) -> kp::TxnOffsetCommitResponse {
            response(answer.errors)
        }

        fn sample(v: i16) -> kp::TxnOffsetCommitRequest {
            use kp::txn_offset_commit_request::*;
            let p = |i| {
                let p = TxnOffsetCommitRequestPartition::default()
                    .with_partition_index(i)
                    .with_committed_offset(42)
                    .with_committed_metadata(Some(sb("md")));
                if v >= 2 { p.with_committed_leader_epoch(3) } else { p }
            };
            let t = |n: &str| {
                TxnOffsetCommitRequestTopic::default()
                    .with_name(sb(n).into())
                    .with_partitions(vec![p(0), p(1)])
            };
            let r = kp::TxnOffsetCommitRequest::default()
                .with_transactional_id(sb("tx").into())
                .with_group_id(sb("g").into())
                .with_producer_id(kp::ProducerId(7))
                .with_producer_epoch(1)
                .with_topics(vec![t("t1"), t("t2")]);
            if v >= 3 {
                r.with_member_id(sb("m")).with_generation_id(2).with_group_instance_id(Some(sb("i")))
            } else {
                r
            }
        }
    }

    fn response(errors: Vec<gt::TopicEntries<gt::ErrorCode>>) -> kp::TxnOffsetCommitResponse {
        use kp::txn_offset_commit_response as r;
        let topics = errors
            .into_iter()
            .map(|topic| {
                let partitions = topic
                    .partitions
                    .into_iter()
                    .map(|(partition, code)| {
                        r::TxnOffsetCommitResponsePartition::default()
                            .with_partition_index(partition)
                            .with_error_code(code.code())
                    })
                    .collect();
                r::TxnOffsetCommitResponseTopic::default()
                    .with_name(kp::TopicName(sb(topic.topic)))
                    .with_partitions(partitions)
            })
            .collect();
        kp::TxnOffsetCommitResponse::default().with_topics(topics)
    }

    // The request field by field as `kafka-protocol` decodes it, for the walk (`crate::wire::layout`).
    static PARTITION: Struct = plain(&[always(I32), always(I64), f(I32, 2, ALL), always(Str)]);
    static TOPIC: Struct = plain(&[always(Str), always(Arr(&PARTITION))]);
    static BODY: Struct = plain(&[
        always(Str),
        always(Str),
        always(I64),
        always(I16),
        f(I32, 3, ALL),
        f(Str, 3, ALL),
        f(Str, 3, ALL),
        always(Arr(&TOPIC)),
    ]);
}
