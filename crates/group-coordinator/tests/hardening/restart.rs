//! Restart: a coordinator dropped in the middle of a Stable group, and a new one opened
//! on the same `MetadataStore`, brings back every group and its offsets
//! (`kafka-semantics.md` §1 "Load", §6.8).

use std::collections::BTreeMap;
use std::sync::Arc;

use group_coordinator::{CoordinatorConfig, CoordinatorError, GroupCoordinator, GroupMetadata, ManualClock};
use group_offsets::{MemoryMetadataStore, StorageError};
use group_types::{ErrorCode, GroupState, OffsetFetchRequest, TopicPartition};

use crate::support::{
    commit, decode_assignment, encode_plan, fast_config, heartbeat, join, must, round_robin, settle, sync,
    topic_set,
};

pub(crate) const SESSION_MS: i32 = 3_000;
const REBALANCE_MS: i32 = 5_000;

fn open(store: &MemoryMetadataStore, clock: &Arc<ManualClock>) -> GroupCoordinator {
    // A clone shares the store's data: what a restarted process would read back.
    GroupCoordinator::with_clock(Arc::new(store.clone()), config(), clock.clone())
        .expect("the coordinator opens")
}

pub(crate) fn config() -> CoordinatorConfig {
    fast_config(50)
}

/// A member as its client sees it.
#[derive(Debug, Clone)]
pub(crate) struct Client {
    pub(crate) id: String,
    pub(crate) instance: Option<String>,
    pub(crate) generation: i32,
}

/// Forms a Stable group of `instances.len()` members (static where an instance is
/// given): two-step joins, the initial delay, the leader's round-robin assignment and
/// every follower's sync.
pub(crate) fn form_group(
    c: &GroupCoordinator,
    clock: &ManualClock,
    group: &str,
    instances: &[Option<&str>],
) -> Vec<Client> {
    let mut ids = Vec::new();
    for instance in instances {
        let id = match instance {
            Some(_) => String::new(),
            None => {
                let first = must(c.join_group(join(group, "", None, SESSION_MS, REBALANCE_MS)), "first join");
                assert_eq!(first.error_code, ErrorCode::MemberIdRequired);
                first.member_id.to_string()
            }
        };
        ids.push(id);
    }
    let pending: Vec<_> = ids
        .iter()
        .zip(instances)
        .map(|(id, instance)| c.join_group(join(group, id, *instance, SESSION_MS, REBALANCE_MS)))
        .collect();
    // Step through the initial-delay windows until the barrier closes, each step's
    // writes (the group's creation) completed before time moves on.
    for _ in 0..REBALANCE_MS / 10 {
        settle(c);
        if pending.iter().all(|p| p.is_ready()) {
            break;
        }
        clock.advance(10);
    }
    let answers: Vec<_> = pending.into_iter().map(|p| must(p, "join")).collect();
    let generation = answers[0].generation_id;
    let mut clients = Vec::new();
    let mut leader = None;
    for (answer, instance) in answers.iter().zip(instances) {
        assert_eq!(answer.error_code, ErrorCode::None, "{answer:?}");
        assert_eq!(answer.generation_id, generation);
        if answer.leader_id == answer.member_id {
            leader = Some(answer.members.iter().map(|m| m.member_id.to_string()).collect::<Vec<_>>());
        }
        clients.push(Client {
            id: answer.member_id.to_string(),
            instance: instance.map(str::to_owned),
            generation,
        });
    }
    let members = leader.expect("one member leads");
    let plan = encode_plan(&round_robin(&members));
    let syncs: Vec<_> = clients
        .iter()
        .zip(&answers)
        .map(|(cl, answer)| {
            let assignments = if answer.leader_id == cl.id { plan.clone() } else { Vec::new() };
            c.sync_group(sync(group, &cl.id, cl.instance.as_deref(), generation, assignments))
        })
        .collect();
    for s in syncs {
        assert_eq!(must(s, "sync").error_code, ErrorCode::None);
    }
    assert_eq!(c.get_group(group).map(|g| g.state), Some(GroupState::Stable));
    clients
}

/// Commits one offset per partition the member owns; returns what was acknowledged.
pub(crate) fn commit_owned(
    c: &GroupCoordinator,
    group: &str,
    cl: &Client,
    base: i64,
) -> Vec<(TopicPartition, i64)> {
    let g = c.get_group(group).unwrap();
    let owned = decode_assignment(&g.member(&cl.id).unwrap().assignment).unwrap();
    let offsets: Vec<(TopicPartition, i64)> =
        owned.into_iter().enumerate().map(|(i, tp)| (tp, base + i as i64)).collect();
    let response = must(
        c.offset_commit(commit(group, &cl.id, cl.instance.as_deref(), cl.generation, &offsets)),
        "commit",
    );
    for (tp, _) in &offsets {
        assert_eq!(response.error_for(&tp.topic, tp.partition), Some(ErrorCode::None), "{response:?}");
    }
    offsets
}

pub(crate) fn fetched(c: &GroupCoordinator, group: &str) -> BTreeMap<TopicPartition, i64> {
    let response = must(c.offset_fetch(OffsetFetchRequest::all(group)), "fetch");
    assert_eq!(response.error_code, ErrorCode::None);
    let mut out = BTreeMap::new();
    for (topic, partitions) in response.offsets {
        for (p, d) in partitions {
            assert_eq!(d.error_code, ErrorCode::None);
            out.insert(TopicPartition::new(topic.as_str(), p), d.offset);
        }
    }
    out
}

/// What must survive a restart: everything but timers and parked requests.
pub(crate) fn durable(g: &GroupMetadata) -> String {
    let mut members: Vec<String> = g
        .members
        .iter()
        .map(|m| {
            format!(
                "{} {:?} {} {} s{} r{} {:?} {:?}",
                m.member_id,
                m.group_instance_id,
                m.client_id,
                m.client_host,
                m.session_timeout_ms,
                m.rebalance_timeout_ms,
                m.subscription,
                m.assignment
            )
        })
        .collect();
    members.sort();
    format!(
        "{:?} gen {} type {:?} protocol {:?} leader {:?} members {members:?}",
        g.state, g.generation_id, g.protocol_type, g.protocol_name, g.leader_id
    )
}

pub(crate) fn hb(c: &GroupCoordinator, cl: &Client) -> ErrorCode {
    must(c.heartbeat(heartbeat("g", &cl.id, cl.instance.as_deref(), cl.generation)), "heartbeat").error_code
}

#[test]
fn a_stable_group_comes_back_and_only_silent_members_expire() {
    let store = MemoryMetadataStore::new();
    let clock = Arc::new(ManualClock::new(1_000));
    let first = open(&store, &clock);
    let clients = form_group(&first, &clock, "g", &[None, None, None]);
    let mut committed = BTreeMap::new();
    for (i, cl) in clients.iter().enumerate() {
        committed.extend(commit_owned(&first, "g", cl, 100 * (i as i64 + 1)));
    }
    assert_eq!(committed.len(), topic_set().len(), "every partition is owned and committed");
    let before = first.get_group("g").unwrap();
    first.stop();
    drop(first);

    let clock = Arc::new(ManualClock::new(10_000));
    let second = open(&store, &clock);
    let after = second.get_group("g").expect("the group is loaded");
    assert_eq!(durable(&after), durable(&before));
    assert_eq!(after.state, GroupState::Stable);
    for m in &after.members {
        assert_eq!(
            m.session_deadline_ms,
            Some(10_000 + i64::from(SESSION_MS)),
            "{} armed at load",
            m.member_id
        );
    }
    assert_eq!(fetched(&second, "g"), committed);

    // A and B keep heartbeating on the loaded generation; C is silent.
    let (a, b, silent) = (&clients[0], &clients[1], &clients[2]);
    for t in [11_000, 12_000, 12_999] {
        clock.advance(t - clock_now(&clock));
        assert_eq!(hb(&second, a), ErrorCode::None, "A at {t}");
        assert_eq!(hb(&second, b), ErrorCode::None, "B at {t}");
        let g = second.get_group("g").unwrap();
        assert_eq!(
            (g.state, g.generation_id, g.members.len()),
            (GroupState::Stable, before.generation_id, 3)
        );
    }
    // C's deadline is its session timeout after the load.
    clock.advance(10_000 + i64::from(SESSION_MS) - clock_now(&clock));
    let g = second.get_group("g").unwrap();
    assert_eq!(g.state, GroupState::PreparingRebalance);
    assert!(g.member(&silent.id).is_none(), "C expired at its session deadline");
    assert_eq!(hb(&second, a), ErrorCode::RebalanceInProgress);

    // The survivors rejoin; the next generation forms without C.
    let ja = second.join_group(join("g", &a.id, None, SESSION_MS, REBALANCE_MS));
    let jb = second.join_group(join("g", &b.id, None, SESSION_MS, REBALANCE_MS));
    let (ja, jb) = (must(ja, "A rejoins"), must(jb, "B rejoins"));
    assert_eq!(ja.generation_id, before.generation_id + 1);
    assert_eq!(jb.generation_id, ja.generation_id);
    let leader = if ja.leader_id == a.id { &ja } else { &jb };
    let mut members: Vec<String> = leader.members.iter().map(|m| m.member_id.to_string()).collect();
    members.sort();
    let mut expected = vec![a.id.clone(), b.id.clone()];
    expected.sort();
    assert_eq!(members, expected);
    assert_eq!(fetched(&second, "g"), committed, "offsets survive the rebalance");
}

fn clock_now(clock: &ManualClock) -> i64 {
    use group_coordinator::Clock;
    clock.now_ms()
}

#[test]
fn static_members_come_back_and_a_restarted_instance_keeps_its_assignment() {
    let store = MemoryMetadataStore::new();
    let clock = Arc::new(ManualClock::new(0));
    let first = open(&store, &clock);
    let clients = form_group(&first, &clock, "g", &[Some("ia"), Some("ib")]);
    let before = first.get_group("g").unwrap();
    drop(first);

    let clock = Arc::new(ManualClock::new(5_000));
    let second = open(&store, &clock);
    let after = second.get_group("g").unwrap();
    assert_eq!(durable(&after), durable(&before));
    let b_before = before.members.iter().find(|m| m.group_instance_id.as_deref() == Some("ib")).unwrap();
    // B's process restarted too: same instance, empty member id.
    let rejoined =
        must(second.join_group(join("g", "", Some("ib"), SESSION_MS, REBALANCE_MS)), "static rejoin");
    assert_eq!(rejoined.error_code, ErrorCode::None);
    assert_eq!(rejoined.generation_id, before.generation_id, "no rebalance");
    assert_ne!(rejoined.member_id, b_before.member_id, "a new member id");
    let g = second.get_group("g").unwrap();
    assert_eq!(g.state, GroupState::Stable);
    assert_eq!(g.member(&rejoined.member_id).unwrap().assignment, b_before.assignment);
    let a = &clients[0];
    assert_eq!(hb(&second, a), ErrorCode::None);
    let synced = must(
        second.sync_group(sync("g", &rejoined.member_id, Some("ib"), rejoined.generation_id, Vec::new())),
        "sync after the static rejoin",
    );
    assert_eq!(synced.error_code, ErrorCode::None);
    assert_eq!(synced.assignment, b_before.assignment);
}

#[test]
fn a_group_with_only_offsets_comes_back_empty_with_its_offsets() {
    let store = MemoryMetadataStore::new();
    let clock = Arc::new(ManualClock::new(0));
    let first = open(&store, &clock);
    let offsets = vec![(TopicPartition::new("t0", 0), 7), (TopicPartition::new("t1", 2), 9)];
    let response = must(first.offset_commit(commit("simple", "", None, -1, &offsets)), "simple commit");
    assert!(response.iter().all(|(_, _, e)| e == ErrorCode::None), "{response:?}");
    drop(first);
    let second = open(&store, &Arc::new(ManualClock::new(1)));
    let g = second.get_group("simple").expect("loaded");
    assert_eq!(g.state, GroupState::Empty);
    assert!(g.members.is_empty());
    assert_eq!(fetched(&second, "simple"), offsets.into_iter().collect());
}

#[test]
fn a_group_dropped_mid_rebalance_comes_back_as_its_last_persisted_generation() {
    let store = MemoryMetadataStore::new();
    let clock = Arc::new(ManualClock::new(0));
    let first = open(&store, &clock);
    let clients = form_group(&first, &clock, "g", &[None, None]);
    let before = first.get_group("g").unwrap();
    // The leader rejoins: PreparingRebalance, nothing new persisted yet.
    let leader = clients.iter().find(|cl| before.is_leader(&cl.id)).unwrap();
    let mut parked = first.join_group(join("g", &leader.id, None, SESSION_MS, REBALANCE_MS));
    assert_eq!(first.get_group("g").unwrap().state, GroupState::PreparingRebalance);
    first.stop();
    assert!(matches!(parked.wait_timeout(crate::support::DEADLOCK), Some(Err(CoordinatorError::Stopped))));
    drop(first);
    let second = open(&store, &Arc::new(ManualClock::new(100)));
    assert_eq!(durable(&second.get_group("g").unwrap()), durable(&before));
}

#[test]
fn a_store_that_cannot_be_read_fails_the_start() {
    let store = MemoryMetadataStore::new();
    let clock = Arc::new(ManualClock::new(0));
    drop(open(&store, &clock));
    store.fail_reads(Some(StorageError::unavailable("disk gone")));
    let opened = GroupCoordinator::with_clock(Arc::new(store.clone()), config(), clock);
    assert!(matches!(opened, Err(CoordinatorError::Storage(_))), "{opened:?}");
}
