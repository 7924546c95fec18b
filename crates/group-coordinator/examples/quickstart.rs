//! Quickstart: three consumers in threads form one group, get assignments computed on
//! the server, heartbeat, one leaves, the others rebalance, then commit and fetch
//! their offsets. Prints a timeline of generations, leaders and assignments.
//!
//! Run with `cargo run -p group-coordinator --example quickstart`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use group_coordinator::{CoordinatorConfig, CoordinatorError, GroupCoordinator};
use group_offsets::{MemoryMetadataStore, MetadataStore};
use group_types::{
    ErrorCode, HeartbeatRequest, JoinGroupRequest, LeaveGroupRequest, MemberAssignment, MemberAssignmentData,
    OffsetCommitData, OffsetCommitRequest, OffsetFetchRequest, ProtocolMetadata, Subscription,
    SyncGroupRequest, TopicPartition,
};

const GROUP: &str = "quickstart";
const TOPIC: &str = "orders";
const PARTITIONS: i32 = 6;

/// The one place that decides where offsets and group metadata live.
/// (A durable deployment passes `group_storage_sled::SledMetadataStore` instead.)
fn storage() -> Arc<dyn MetadataStore> {
    Arc::new(MemoryMetadataStore::new())
}

struct Timeline(Instant);

impl Timeline {
    fn log(&self, who: &str, what: impl AsRef<str>) {
        println!("[{:>5} ms] {who:<10} {}", self.0.elapsed().as_millis(), what.as_ref());
    }
}

fn short(id: &str) -> &str {
    &id[..id.len().min(17)]
}

/// One consumer: join, sync, heartbeat until told to rebalance; `leave_after` heartbeats
/// into its first generation it leaves instead.
fn consumer(
    c: Arc<GroupCoordinator>,
    t: Arc<Timeline>,
    name: &'static str,
    leave_after: Option<u32>,
) -> Result<(), CoordinatorError> {
    let subscription =
        Subscription { topics: vec![TOPIC.into()], ..Subscription::default() }.encode().expect("encodes");
    let mut member_id = String::new();
    loop {
        let request = JoinGroupRequest {
            group_id: GROUP.into(),
            member_id: (member_id.clone()).into(),
            client_id: name.into(),
            client_host: "/127.0.0.1".into(),
            protocols: vec![ProtocolMetadata::new("range", subscription.clone())],
            session_timeout_ms: 3_000,
            rebalance_timeout_ms: 3_000,
            ..JoinGroupRequest::default()
        };
        let joined = c.handle_join_group(request)?;
        if joined.error_code == ErrorCode::MemberIdRequired {
            member_id = joined.member_id.to_string();
            t.log(name, format!("got member id {}", short(&member_id)));
            continue;
        }
        if joined.error_code != ErrorCode::None {
            t.log(name, format!("join failed: {}", joined.error_code));
            return Ok(());
        }
        let generation = joined.generation_id;
        let leader = joined.is_leader();
        let mut assignments = Vec::new();
        if leader {
            let partitions: Vec<TopicPartition> =
                (0..PARTITIONS).map(|p| TopicPartition::new(TOPIC, p)).collect();
            let plan = c.perform_assignment(GROUP, &partitions)?;
            t.log(
                name,
                format!(
                    "leads generation {generation}: {} members, assigning with range",
                    joined.members.len()
                ),
            );
            for (member, parts) in plan {
                let bytes = MemberAssignment::from_partitions(parts.iter()).encode().expect("encodes");
                assignments.push(MemberAssignmentData::new(member, bytes));
            }
        }
        let synced = c.handle_sync_group(SyncGroupRequest {
            group_id: GROUP.into(),
            generation_id: generation,
            member_id: (member_id.clone()).into(),
            assignments,
            ..SyncGroupRequest::default()
        })?;
        if synced.error_code != ErrorCode::None {
            t.log(name, format!("sync answered {}, rejoining", synced.error_code));
            continue;
        }
        let mine =
            MemberAssignment::decode(&synced.assignment).map(|a| a.topic_partitions()).unwrap_or_default();
        let list: Vec<String> = mine.iter().map(ToString::to_string).collect();
        t.log(
            name,
            format!(
                "generation {generation}{}: assigned [{}]",
                if leader { " (leader)" } else { "" },
                list.join(", ")
            ),
        );
        if generation >= 2 {
            let mut commit = OffsetCommitRequest {
                group_id: GROUP.into(),
                generation_id: generation,
                member_id: (member_id.clone()).into(),
                ..OffsetCommitRequest::default()
            };
            for tp in &mine {
                commit = commit.with_offset(
                    TOPIC,
                    tp.partition,
                    OffsetCommitData::new(100 + i64::from(tp.partition)),
                );
            }
            let committed = c.handle_offset_commit(commit)?;
            let ok = committed.iter().all(|(_, _, e)| e.is_ok());
            let mut fetch = OffsetFetchRequest::all(GROUP);
            for tp in &mine {
                fetch = fetch.with_partition(TOPIC, tp.partition);
            }
            let fetched = c.handle_offset_fetch(fetch)?;
            let read: Vec<String> = mine
                .iter()
                .map(|tp| format!("{}={}", tp, fetched.get(TOPIC, tp.partition).map_or(-1, |d| d.offset)))
                .collect();
            t.log(name, format!("committed (ok: {ok}) and fetched back: {}", read.join(", ")));
            return Ok(());
        }
        let mut beats = 0;
        loop {
            std::thread::sleep(Duration::from_millis(100));
            if leave_after == Some(beats) {
                c.handle_leave_group(LeaveGroupRequest::single(GROUP, member_id.clone()))?;
                t.log(name, "leaves the group");
                return Ok(());
            }
            let hb = c.handle_heartbeat(HeartbeatRequest {
                group_id: GROUP.into(),
                generation_id: generation,
                member_id: (member_id.clone()).into(),
                group_instance_id: None,
            })?;
            beats += 1;
            if hb.error_code != ErrorCode::None {
                t.log(name, format!("heartbeat: {}, rejoining", hb.error_code));
                break;
            }
        }
    }
}

fn main() -> Result<(), CoordinatorError> {
    let config = CoordinatorConfig {
        initial_rebalance_delay_ms: 300,
        min_session_timeout_ms: 1_000,
        heartbeat_check_interval_ms: 50,
        ..CoordinatorConfig::default()
    };
    let coordinator = Arc::new(GroupCoordinator::new(storage(), config)?);
    let timeline = Arc::new(Timeline(Instant::now()));
    timeline.log("main", format!("group {GROUP:?}, topic {TOPIC:?} with {PARTITIONS} partitions"));
    let threads: Vec<_> = [("alice", None), ("bob", None), ("carol", Some(3))]
        .into_iter()
        .map(|(name, leave_after)| {
            let c = Arc::clone(&coordinator);
            let t = Arc::clone(&timeline);
            std::thread::spawn(move || consumer(c, t, name, leave_after))
        })
        .collect();
    for handle in threads {
        handle.join().expect("consumer thread")?;
    }
    if let Some(group) = coordinator.get_group(GROUP) {
        timeline.log(
            "main",
            format!(
                "final: {} generation {}, leader {}, {} members",
                group.state,
                group.generation_id,
                group.leader_id.as_deref().map_or("-", short),
                group.members.len()
            ),
        );
    }
    for p in 0..PARTITIONS {
        let offset = coordinator.get_committed_offset(GROUP, TOPIC, p)?;
        timeline.log("main", format!("committed {TOPIC}-{p}: {offset}"));
    }
    coordinator.stop();
    Ok(())
}
