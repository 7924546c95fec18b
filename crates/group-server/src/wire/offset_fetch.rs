//! OffsetFetch (key 9) on the wire: one group before v8, several from v8, each asked
//! of the coordinator on its own and answered in request order. v10 names topics by id
//! (`super::offset_codec`): they are named from the node's topics before the
//! coordinator, which keys offsets by name, and the answer is by id again.

use std::collections::BTreeMap;

use group_types as gt;
use kafka_protocol::messages as kp;
use kafka_protocol::protocol::StrBytes;

use super::offset_codec::{self as codec, ByTopicId};
use super::schema::Ty::{Arr, ArrI32, Bool, I32, Str, Uuid};
use super::schema::{ALL, Layout, Struct, f, plain};
use super::{WireApi, id, opt_id, s, sb, unavailable, wire_id};
use crate::node::{Ctx, Node, Reply, RequestError};
use crate::topics::Topics;

/// UNKNOWN_TOPIC_ID (not a group error code).
const UNKNOWN_TOPIC_ID: i16 = 100;

/// One group of an OffsetFetch: `None` topics means every committed partition.
pub(super) struct FetchGroup {
    pub(super) request: gt::OffsetFetchRequest,
    /// The requested partitions in request order, to answer in that order.
    pub(super) order: Option<Vec<(String, Vec<i32>)>>,
}

pub(super) fn offset_fetch_groups(req: &kp::OffsetFetchRequest, version: i16) -> Vec<FetchGroup> {
    let build = |group_id: gt::GroupId, topics: Option<Vec<(String, Vec<i32>)>>, member_id, member_epoch| {
        let map = topics.as_ref().map(|t| {
            let mut map: BTreeMap<String, Vec<i32>> = BTreeMap::new();
            for (name, parts) in t {
                map.entry(name.clone()).or_default().extend(parts);
            }
            map
        });
        FetchGroup {
            request: gt::OffsetFetchRequest {
                group_id,
                topics: map,
                require_stable: req.require_stable,
                member_id,
                member_epoch,
            },
            order: topics,
        }
    };
    if version >= 8 {
        req.groups
            .iter()
            .map(|g| {
                let topics = g
                    .topics
                    .as_ref()
                    .map(|t| t.iter().map(|t| (s(&t.name.0), t.partition_indexes.clone())).collect());
                let epoch = (version >= 9).then_some(g.member_epoch);
                build(id(&g.group_id.0), topics, opt_id(&g.member_id), epoch)
            })
            .collect()
    } else {
        let topics = req
            .topics
            .as_ref()
            .map(|t| t.iter().map(|t| (s(&t.name.0), t.partition_indexes.clone())).collect());
        vec![build(id(&req.group_id.0), topics, None, None)]
    }
}

/// The partitions to answer for one group: the requested ones in order, or every committed one.
fn fetch_rows(
    group: &FetchGroup,
    resp: &gt::OffsetFetchResponse,
) -> Vec<(String, Vec<(i32, gt::OffsetFetchData)>)> {
    match &group.order {
        Some(order) => order
            .iter()
            .map(|(topic, parts)| {
                let rows = parts
                    .iter()
                    .map(|&p| (p, resp.get(topic, p).cloned().unwrap_or_else(gt::OffsetFetchData::missing)))
                    .collect();
                (topic.clone(), rows)
            })
            .collect(),
        None => resp
            .offsets
            .iter()
            .map(|(topic, parts)| (topic.clone(), parts.iter().map(|(&p, d)| (p, d.clone())).collect()))
            .collect(),
    }
}

pub(super) fn offset_fetch_response(
    groups: &[FetchGroup],
    responses: Vec<gt::OffsetFetchResponse>,
    version: i16,
) -> kp::OffsetFetchResponse {
    use kp::offset_fetch_response as r;
    let leader_epoch = |d: &gt::OffsetFetchData| if version >= 5 { d.leader_epoch.unwrap_or(-1) } else { -1 };
    if version >= 8 {
        let out = groups
            .iter()
            .zip(responses)
            .map(|(group, resp)| {
                let topics = fetch_rows(group, &resp)
                    .into_iter()
                    .map(|(topic, rows)| {
                        r::OffsetFetchResponseTopics::default().with_name(sb(topic).into()).with_partitions(
                            rows.into_iter()
                                .map(|(p, d)| {
                                    r::OffsetFetchResponsePartitions::default()
                                        .with_partition_index(p)
                                        .with_committed_offset(d.offset)
                                        .with_committed_leader_epoch(leader_epoch(&d))
                                        .with_metadata(Some(wire_id(d.metadata)))
                                        .with_error_code(d.error_code.code())
                                })
                                .collect(),
                        )
                    })
                    .collect();
                r::OffsetFetchResponseGroup::default()
                    .with_group_id(sb(group.request.group_id.clone()).into())
                    .with_topics(topics)
                    .with_error_code(resp.error_code.code())
            })
            .collect();
        return kp::OffsetFetchResponse::default().with_groups(out);
    }
    let (group, resp) = match (groups.first(), responses.into_iter().next()) {
        (Some(g), Some(r)) => (g, r),
        _ => return kp::OffsetFetchResponse::default(),
    };
    let topics = fetch_rows(group, &resp)
        .into_iter()
        .map(|(topic, rows)| {
            r::OffsetFetchResponseTopic::default().with_name(sb(topic).into()).with_partitions(
                rows.into_iter()
                    .map(|(p, d)| {
                        // v0-1 have no group-level error: it is repeated on every partition.
                        let code = if version < 2 && !resp.error_code.is_ok() {
                            resp.error_code
                        } else {
                            d.error_code
                        };
                        r::OffsetFetchResponsePartition::default()
                            .with_partition_index(p)
                            .with_committed_offset(d.offset)
                            .with_committed_leader_epoch(leader_epoch(&d))
                            .with_metadata(Some(wire_id(d.metadata)))
                            .with_error_code(code.code())
                    })
                    .collect(),
            )
        })
        .collect();
    kp::OffsetFetchResponse::default().with_topics(topics).with_error_code(if version >= 2 {
        resp.error_code.code()
    } else {
        0
    })
}

/// A v10 fetch with the topics this node knows named, in request order: what the
/// coordinator is asked (`KafkaApis.fetchOffsetsForGroup` names each id from its
/// metadata cache first). A group of unknown ids only asks for no topic, not all.
pub(super) fn named_fetch(wire: &codec::OffsetFetchRequest, topics: &Topics) -> kp::OffsetFetchRequest {
    use kp::offset_fetch_request::{OffsetFetchRequestGroup, OffsetFetchRequestTopics};
    let groups = wire
        .groups
        .iter()
        .map(|g| {
            let named = g.topics.as_ref().map(|asked| {
                asked
                    .iter()
                    .filter_map(|t| {
                        let name = topics.name_of(&t.topic_id)?;
                        Some(
                            OffsetFetchRequestTopics::default()
                                .with_name(sb(name).into())
                                .with_partition_indexes(t.partition_indexes.clone()),
                        )
                    })
                    .collect()
            });
            OffsetFetchRequestGroup::default()
                .with_group_id(g.group_id.clone().into())
                .with_member_id(g.member_id.clone())
                .with_member_epoch(g.member_epoch)
                .with_topics(named)
        })
        .collect();
    kp::OffsetFetchRequest::default().with_groups(groups).with_require_stable(wire.require_stable)
}

/// An asked topic whose id this node does not know: every partition
/// `UNKNOWN_TOPIC_ID` with no offset (`KafkaApis.fetchOffsetsForGroup`'s
/// `buildErrorResponse`: no leader epoch, empty metadata).
fn unknown_topic(asked: &codec::OffsetFetchRequestTopics) -> codec::OffsetFetchResponseTopics {
    use kp::offset_fetch_response::OffsetFetchResponsePartitions;
    let partition = |&p: &i32| {
        codec::Pinned(
            OffsetFetchResponsePartitions::default()
                .with_partition_index(p)
                .with_committed_offset(-1)
                .with_committed_leader_epoch(-1)
                .with_metadata(Some(StrBytes::default()))
                .with_error_code(UNKNOWN_TOPIC_ID),
        )
    };
    codec::OffsetFetchResponseTopics {
        topic_id: asked.topic_id,
        partitions: asked.partition_indexes.iter().map(partition).collect(),
        ..Default::default()
    }
}

/// A v10 fetch's answer as Kafka gives it (`KafkaApis.fetchOffsetsForGroup`,
/// `fetchAllOffsetsForGroup`): each group's answer by name (`answer`) by id, a topic
/// without an id left out (Kafka cannot write it); then each asked topic whose id this
/// node does not know, in request order ([`unknown_topic`]). A group error stands
/// alone, without topics (`OffsetFetchResponse.groupError` from v2; v8 and v9 here
/// still list the asked partitions beside it).
pub(super) fn fetch_answer_by_id(
    wire: &codec::OffsetFetchRequest,
    topics: &Topics,
    answer: kp::OffsetFetchResponse,
) -> codec::OffsetFetchResponse {
    let groups = wire
        .groups
        .iter()
        .zip(answer.groups)
        .map(|(asked, group)| {
            let mut out = Vec::new();
            if group.error_code == 0 {
                out.extend(group.topics.into_iter().filter_map(|topic| {
                    let (_, topic_id) = topics.get(topic.name.0.as_str())?;
                    Some(codec::OffsetFetchResponseTopics {
                        topic_id,
                        partitions: topic.partitions.into_iter().map(codec::Pinned).collect(),
                        ..Default::default()
                    })
                }));
                let unknown = asked.topics.iter().flatten().filter(|t| topics.name_of(&t.topic_id).is_none());
                out.extend(unknown.map(unknown_topic));
            }
            codec::OffsetFetchResponseGroup {
                group_id: group.group_id.0,
                topics: out,
                error_code: group.error_code,
            }
        })
        .collect();
    codec::OffsetFetchResponse { throttle_time_ms: 0, groups }
}

impl WireApi for gt::OffsetFetchRequest {
    type Wire = ByTopicId<kp::OffsetFetchRequest, codec::OffsetFetchRequest>;
    const SCHEMA: Layout = Layout::new(1, 10, 6, &BODY);

    /// One coordinator request per group of the wire request (v8+ names several).
    fn serve(node: &Node, ctx: &Ctx<'_>, wire: Self::Wire) -> Result<Reply, RequestError> {
        let (groups, by_id) = match wire {
            ByTopicId::ByName(wire) => (offset_fetch_groups(&wire, ctx.version), None),
            ByTopicId::ById(wire) => {
                let topics = node.topics.get();
                let named = named_fetch(&wire, &topics);
                (offset_fetch_groups(&named, ctx.version), Some((wire, topics)))
            }
        };
        node.record(|| ctx.line(""));
        let pending = groups.iter().map(|g| node.submit(ctx, g.request.clone())).collect();
        Ok(ctx.later_all(pending, move |answers, v| {
            let responses = answers
                .into_iter()
                .map(|r| {
                    r.unwrap_or_else(|e| gt::OffsetFetchResponse {
                        error_code: unavailable(&e),
                        ..Default::default()
                    })
                })
                .collect();
            let answer = offset_fetch_response(&groups, responses, v);
            match by_id {
                None => ByTopicId::ByName(answer),
                Some((wire, topics)) => ByTopicId::ById(fetch_answer_by_id(&wire, &topics, answer)),
            }
        }))
    }

    #[cfg(test)]
    fn sample(v: i16) -> bytes::Bytes {
        use crate::test_samples::{enc, s};
        use kp::offset_fetch_request::*;
        if v >= 8 {
            let t = OffsetFetchRequestTopics::default()
                .with_name(s("t1").into())
                .with_partition_indexes(vec![0, 1, 2]);
            let g =
                OffsetFetchRequestGroup::default().with_group_id(s("g").into()).with_topics(Some(vec![t]));
            let g = if v >= 9 { g.with_member_id(Some(s("m"))).with_member_epoch(5) } else { g };
            if v >= codec::TOPIC_ID_VERSION {
                let t = codec::OffsetFetchRequestTopics {
                    topic_id: crate::topics::topic_id_for("t1"),
                    partition_indexes: vec![0, 1, 2],
                    ..Default::default()
                };
                let group = |id: &str, topics| codec::OffsetFetchRequestGroup {
                    group_id: s(id),
                    member_id: g.member_id.clone(),
                    member_epoch: g.member_epoch,
                    topics,
                };
                let groups = vec![group("g", Some(vec![t])), group("h", None)];
                return enc(&codec::OffsetFetchRequest { groups, require_stable: true }, v);
            }
            let all = OffsetFetchRequestGroup::default().with_group_id(s("h").into()).with_topics(None);
            enc(&kp::OffsetFetchRequest::default().with_groups(vec![g, all]).with_require_stable(true), v)
        } else {
            let t = OffsetFetchRequestTopic::default()
                .with_name(s("t1").into())
                .with_partition_indexes(vec![0, 1, 2]);
            let r = kp::OffsetFetchRequest::default()
                .with_group_id(s("g").into())
                .with_topics(Some(vec![t.clone(), t]));
            let r = if v >= 7 { r.with_require_stable(true) } else { r };
            enc(&r, v)
        }
    }
}

// The request field by field as `kafka-protocol` (from v10 `offset_codec`) decodes it, for the walk
// (`super::schema`).
static TOPIC: Struct = plain(&[f(Str, 0, 7), f(ArrI32, 0, 7)]);
static GROUP_TOPIC: Struct = plain(&[f(Str, 8, 9), f(Uuid, 10, ALL), f(ArrI32, 8, ALL)]);
static GROUP: Struct = plain(&[f(Str, 8, ALL), f(Str, 9, ALL), f(I32, 9, ALL), f(Arr(&GROUP_TOPIC), 8, ALL)]);
static BODY: Struct = plain(&[f(Str, 0, 7), f(Arr(&TOPIC), 0, 7), f(Arr(&GROUP), 8, ALL), f(Bool, 7, ALL)]);
