//! Consumer groups across a restart, through the threaded runtime: a group with
//! two members mid-reconciliation and committed offsets is stopped, and a new
//! coordinator on the same store (memory, then sled on disk) brings back its
//! epochs, members, targets, assignments and offsets; the members carry on with
//! their epochs, and silent ones expire after a session.

use std::path::PathBuf;
use std::sync::Arc;

use group_coordinator::{CoordinatorConfig, GroupCoordinator, ManualClock, MetadataImage, TopicImage};
use group_offsets::{MemoryMetadataStore, MetadataStore};
use group_storage_sled::SledMetadataStore;
use group_types::{
    ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse, ConsumerGroupState, ConsumerMemberState,
    ErrorCode, OffsetCommitData, OffsetCommitRequest, OffsetFetchRequest, TopicId, TopicIdPartitions,
};

const FOO: TopicId = TopicId::from_u128(0xf00);

fn open(store: Arc<dyn MetadataStore>, clock: &Arc<ManualClock>) -> GroupCoordinator {
    GroupCoordinator::builder(store, CoordinatorConfig::default())
        .clock(clock.clone())
        .metadata_image(MetadataImage::new(1, [TopicImage::new(FOO, "foo", 6)]))
        .open()
        .expect("the coordinator opens")
}

fn beat(
    c: &GroupCoordinator,
    member: &str,
    epoch: i32,
    owned: Option<Vec<TopicIdPartitions>>,
) -> ConsumerGroupHeartbeatResponse {
    let join = epoch == 0;
    let r = ConsumerGroupHeartbeatRequest {
        group_id: "g".into(),
        member_id: member.into(),
        member_epoch: epoch,
        rebalance_timeout_ms: if join { 60_000 } else { -1 },
        subscribed_topic_names: join.then(|| vec!["foo".to_owned()]),
        topic_partitions: if join { Some(Vec::new()) } else { owned },
        client_id: "consumer".into(),
        client_host: "/127.0.0.1".into(),
        ..ConsumerGroupHeartbeatRequest::default()
    };
    let answer = c.handle_consumer_group_heartbeat(r).expect("answered");
    assert_eq!(answer.error_code, ErrorCode::None, "{member} at {epoch}: {answer:?}");
    answer
}

/// m1 alone, then m2 joins: m1 is left revoking (UNREVOKED) and m2 waiting
/// (UNRELEASED); m1 commits at its epoch.
fn form(c: &GroupCoordinator) {
    beat(c, "m1", 0, None);
    beat(c, "m2", 0, None);
    let m1 = beat(c, "m1", 1, None);
    assert_eq!(m1.member_epoch, 1);
    let mut commit = OffsetCommitRequest {
        group_id: "g".into(),
        generation_id: 1,
        member_id: "m1".into(),
        api_version: 9,
        ..OffsetCommitRequest::default()
    };
    commit = commit.with_offset("foo", 0, OffsetCommitData::new(42));
    let r = c.handle_offset_commit(commit).expect("committed");
    assert_eq!(r.error_for("foo", 0), Some(ErrorCode::None));
}

fn check_restart(store: Arc<dyn MetadataStore>, reopen: impl Fn() -> Arc<dyn MetadataStore>) {
    let clock = Arc::new(ManualClock::new(1_000));
    let first = open(store, &clock);
    form(&first);
    let before = first.get_consumer_group("g").expect("a consumer group");
    first.stop();
    drop(first);

    let clock = Arc::new(ManualClock::new(5_000));
    let second = open(reopen(), &clock);
    let after = second.get_consumer_group("g").expect("the consumer group is loaded");
    assert_eq!((after.group_epoch, after.assignment_epoch), (before.group_epoch, before.assignment_epoch));
    assert_eq!(after.state, ConsumerGroupState::Reconciling);
    let strip = |g: &group_coordinator::ConsumerGroupSnapshot| {
        g.members
            .iter()
            .map(|m| {
                (
                    m.member_id.clone(),
                    m.member_epoch,
                    m.state,
                    m.assigned.clone(),
                    m.pending_revocation.clone(),
                    m.target.clone(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(&after), strip(&before), "members, epochs and assignments come back");
    let m1 = after.members.iter().find(|m| m.member_id == "m1").unwrap();
    assert_eq!(m1.state, ConsumerMemberState::UnrevokedPartitions);
    let fetch = OffsetFetchRequest {
        member_id: Some("m1".into()),
        member_epoch: Some(1),
        ..OffsetFetchRequest::all("g")
    };
    let offsets = second.handle_offset_fetch(fetch).expect("fetched");
    assert_eq!(offsets.offsets["foo"][&0].offset, 42, "the acknowledged commit is back");
    // m1 acknowledges its revocation at the epoch it had; m2 then gets the rest.
    let kept = m1.assigned.clone();
    let m1 = beat(&second, "m1", 1, Some(kept));
    assert_eq!(m1.member_epoch, 2);
    let m2 = beat(&second, "m2", 2, None);
    assert_eq!(m2.assignment.map(|a| a.iter().map(|t| t.partitions.len()).sum::<usize>()), Some(3));
    // Sessions were armed at load: a member that stays silent expires.
    clock.advance(30_000);
    beat(&second, "m1", 2, None);
    clock.advance(20_000);
    let g = second.get_consumer_group("g").expect("group");
    assert_eq!(g.members.iter().map(|m| m.member_id.as_str()).collect::<Vec<_>>(), ["m1"], "m2 expired");
    second.stop();
}

#[test]
fn a_consumer_group_mid_reconciliation_survives_a_restart_in_memory() {
    let store = Arc::new(MemoryMetadataStore::new());
    let again = store.clone();
    check_restart(store, move || again.clone());
}

#[test]
fn a_consumer_group_mid_reconciliation_survives_a_restart_on_sled() {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let dir: PathBuf = std::env::temp_dir().join(format!("consumer-restart-{}-{nanos}", std::process::id()));
    let first: Arc<dyn MetadataStore> = Arc::new(SledMetadataStore::open(&dir).expect("sled opens"));
    let path = dir.clone();
    let slot = std::sync::Mutex::new(Some(first.clone()));
    check_restart(first, move || {
        // The first store must be closed before the directory is opened again.
        drop(slot.lock().unwrap().take());
        Arc::new(SledMetadataStore::open(&path).expect("sled reopens"))
    });
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn perform_assignment_of_a_consumer_group_is_its_server_side_target() {
    let clock = Arc::new(ManualClock::new(1_000));
    let c = open(Arc::new(MemoryMetadataStore::new()), &clock);
    form(&c);
    let view = c.perform_assignment("g", &[]).expect("a view");
    let counts: Vec<(String, usize)> = view.iter().map(|(m, ps)| (m.clone(), ps.len())).collect();
    assert_eq!(counts, [("m1".to_owned(), 3), ("m2".to_owned(), 3)]);
    let only = [group_types::TopicPartition::new("foo", 0)];
    let narrowed = c.perform_assignment("g", &only).expect("a view");
    assert_eq!(narrowed.values().map(Vec::len).sum::<usize>(), 1);
    c.stop();
}
