//! OffsetFetch (key 9) on the wire: one group before v8, several from v8, each asked
//! of the coordinator on its own and answered in request order.

use std::collections::BTreeMap;

use group_types as gt;
use kafka_protocol::messages as kp;

use super::schema::Ty::{Arr, ArrI32, Bool, I32, Str};
use super::schema::{ALL, Message, Struct, f, plain};
use super::{WireApi, id, opt_id, s, sb, unavailable, wire_id};
use crate::node::{Ctx, Node, Reply, RequestError};

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

impl WireApi for gt::OffsetFetchRequest {
    type Wire = kp::OffsetFetchRequest;
    const SCHEMA: Message = Message::new(1, 9, 6, &BODY);

    /// One coordinator request per group of the wire request (v8+ names several).
    fn serve(node: &Node, ctx: &Ctx<'_>, wire: Self::Wire) -> Result<Reply, RequestError> {
        let groups = offset_fetch_groups(&wire, ctx.version);
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
            offset_fetch_response(&groups, responses, v)
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

// The request field by field as `kafka-protocol` decodes it, for the walk (`super::schema`).
static TOPIC: Struct = plain(&[f(Str, 0, 7), f(ArrI32, 0, 7)]);
static GROUP_TOPIC: Struct = plain(&[f(Str, 8, ALL), f(ArrI32, 8, ALL)]);
static GROUP: Struct = plain(&[f(Str, 8, ALL), f(Str, 9, ALL), f(I32, 9, ALL), f(Arr(&GROUP_TOPIC), 8, ALL)]);
static BODY: Struct = plain(&[f(Str, 0, 7), f(Arr(&TOPIC), 0, 7), f(Arr(&GROUP), 8, ALL), f(Bool, 7, ALL)]);
