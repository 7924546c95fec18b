//! Property: any sequence of requests and timer firings leaves every group coherent
//! (leader is a member, static ids map to members, no id both pending and member),
//! and never panics.

use group_coordinator::Request;
use group_types::{ErrorCode, GroupState, HeartbeatRequest, ProtocolMetadata};
use proptest::prelude::*;

use crate::support::{Sim, commit, heartbeat, join, leave, subscription, sync, test_config};

#[derive(Debug, Clone)]
enum Op {
    JoinNew { static_instance: Option<u8>, roundrobin: bool },
    Rejoin(usize),
    Sync(usize, bool),
    Heartbeat(usize),
    Leave(usize),
    Commit(usize),
    Advance(u16),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (proptest::option::of(0u8..3), any::<bool>())
            .prop_map(|(static_instance, roundrobin)| Op::JoinNew { static_instance, roundrobin }),
        (0usize..8).prop_map(Op::Rejoin),
        (0usize..8, any::<bool>()).prop_map(|(m, stale)| Op::Sync(m, stale)),
        (0usize..8).prop_map(Op::Heartbeat),
        (0usize..8).prop_map(Op::Leave),
        (0usize..8).prop_map(Op::Commit),
        (1u16..700).prop_map(Op::Advance),
    ]
}

fn check(sim: &Sim) -> Result<(), TestCaseError> {
    let Some(g) = sim.core.group("g") else { return Ok(()) };
    if let Some(leader) = &g.leader_id {
        prop_assert!(g.member(leader).is_some(), "leader {leader} is not a member");
    }
    prop_assert_eq!(g.leader_id.is_none(), g.members.is_empty());
    for m in &g.members {
        prop_assert!(!g.pending_members.contains(&m.member_id));
    }
    if g.state == GroupState::Empty {
        prop_assert!(g.members.is_empty());
    }
    if matches!(g.state, GroupState::CompletingRebalance | GroupState::Stable) {
        prop_assert!(g.protocol_name.is_some());
        prop_assert!(g.members.iter().all(|m| !m.awaiting_join));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    #[test]
    fn random_conversations_keep_groups_coherent(ops in proptest::collection::vec(op(), 1..60)) {
        let mut sim = Sim::new(test_config());
        let mut ids: Vec<(String, Option<String>, i32)> = Vec::new();
        for op in ops {
            match op {
                Op::JoinNew { static_instance, roundrobin } => {
                    let mut r = join("g", "");
                    r.group_instance_id = static_instance.map(|i| format!("i{i}").into());
                    if roundrobin {
                        r.protocols.push(ProtocolMetadata::new("roundrobin", subscription(&["t"])));
                    }
                    let rid = sim.send(Request::JoinGroup(r.clone()));
                    if let Some(a) = sim.join_answer(rid) {
                        if a.error_code == ErrorCode::MemberIdRequired {
                            r.member_id = a.member_id.clone();
                            sim.send(Request::JoinGroup(r.clone()));
                        }
                        if !a.member_id.is_empty() {
                            ids.push((a.member_id.to_string(), r.group_instance_id.as_deref().map(str::to_owned), a.generation_id));
                        }
                    } else if let Some(g) = sim.core.group("g")
                        && let Some(m) = g.members.last()
                    {
                        ids.push((m.member_id.clone(), m.group_instance_id.clone(), g.generation_id));
                    }
                }
                Op::Rejoin(i) => if let Some((id, instance, _)) = ids.get(i % ids.len().max(1)).cloned() {
                    let mut r = join("g", &id);
                    r.group_instance_id = instance.map(Into::into);
                    sim.send(Request::JoinGroup(r));
                },
                Op::Sync(i, stale) => if let Some((id, _, _)) = ids.get(i % ids.len().max(1)).cloned() {
                    let generation = sim.core.group("g").map_or(0, |g| g.generation_id) - i32::from(stale);
                    sim.send(Request::SyncGroup(sync("g", &id, generation, &[(&id, "x")])));
                },
                Op::Heartbeat(i) => if let Some((id, instance, _)) = ids.get(i % ids.len().max(1)).cloned() {
                    let generation = sim.core.group("g").map_or(0, |g| g.generation_id);
                    sim.send(Request::Heartbeat(HeartbeatRequest { group_instance_id: instance.map(Into::into), ..heartbeat("g", &id, generation) }));
                },
                Op::Leave(i) => if let Some((id, _, _)) = ids.get(i % ids.len().max(1)).cloned() {
                    sim.send(Request::LeaveGroup(leave("g", &id)));
                },
                Op::Commit(i) => if let Some((id, _, _)) = ids.get(i % ids.len().max(1)).cloned() {
                    let generation = sim.core.group("g").map_or(-1, |g| g.generation_id);
                    sim.send(Request::OffsetCommit(commit("g", &id, generation, 1)));
                },
                Op::Advance(ms) => {
                    let at = sim.now + i64::from(ms);
                    sim.advance_to(at);
                }
            }
            check(&sim)?;
        }
        // Everyone eventually times out: the group ends Empty with nothing parked.
        let end = sim.now + 700_000;
        sim.advance_to(end);
        if let Some(g) = sim.core.group("g") {
            prop_assert_eq!(g.state, GroupState::Empty);
        }
    }
}
