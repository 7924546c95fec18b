//! Coordinator partitions loaded and unloaded by an ownership manager: every API
//! answered by its partition's state, a second node taking a partition over (the
//! first one fenced), and unloads racing appends in flight.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use group_coordinator::{
    AclOperation, Authorizer, CoordinatorError, GroupCoordinator, ManualClock, PartitionState,
    RequestContext, Resource, ServingLease,
};
use group_offsets::{
    AppendCompletion, CoordinatorPartition, LoadedPartition, MemoryMetadataStore, MetadataStore, OwnerEpoch,
    Record, StorageError,
};
use group_types::{
    DeleteGroupsRequest, DescribeGroupsRequest, ErrorCode, ListGroupsRequest, OffsetDeleteRequest,
    OffsetFetchRequest,
};
use rstest::rstest;

use crate::support::{commit, heartbeat, join, leave, sync, test_config, until_held};

const SOON: Duration = Duration::from_secs(10);
const PARTITIONS: u32 = 50;

fn partition(group: &str) -> CoordinatorPartition {
    CoordinatorPartition::of(group, PARTITIONS)
}

/// A group id of another partition than `group`'s.
fn other_group(group: &str) -> String {
    (0..).map(|i| format!("other-{i}")).find(|g| partition(g) != partition(group)).unwrap()
}

/// Holds every `load` until the test opens the gate, and counts the loads waiting.
#[derive(Debug, Default)]
struct Gate {
    closed: Mutex<bool>,
    opened: Condvar,
    waiting: AtomicUsize,
}

#[derive(Debug, Clone)]
struct GatedLoads {
    store: MemoryMetadataStore,
    gate: Arc<Gate>,
}

impl GatedLoads {
    fn new(store: MemoryMetadataStore) -> GatedLoads {
        GatedLoads { store, gate: Arc::default() }
    }

    fn close(&self) {
        *self.gate.closed.lock().unwrap() = true;
    }

    fn open(&self) {
        *self.gate.closed.lock().unwrap() = false;
        self.gate.opened.notify_all();
    }

    fn until_waiting(&self, n: usize) {
        let deadline = std::time::Instant::now() + SOON;
        while self.gate.waiting.load(Ordering::SeqCst) < n {
            assert!(std::time::Instant::now() < deadline, "a load reached the store");
            std::thread::yield_now();
        }
    }
}

impl MetadataStore for GatedLoads {
    fn partition_count(&self) -> u32 {
        self.store.partition_count()
    }

    fn append(
        &self,
        partition: CoordinatorPartition,
        epoch: OwnerEpoch,
        records: Vec<Record>,
        completion: AppendCompletion,
    ) {
        self.store.append(partition, epoch, records, completion);
    }

    fn load(&self, partition: CoordinatorPartition) -> Result<LoadedPartition, StorageError> {
        let mut closed = self.gate.closed.lock().unwrap();
        if *closed {
            self.gate.waiting.fetch_add(1, Ordering::SeqCst);
            while *closed {
                closed = self.gate.opened.wait(closed).unwrap();
            }
            self.gate.waiting.fetch_sub(1, Ordering::SeqCst);
        }
        drop(closed);
        self.store.load(partition)
    }

    fn owner_epoch(&self, partition: CoordinatorPartition) -> Result<OwnerEpoch, StorageError> {
        self.store.owner_epoch(partition)
    }
}

/// Loads `p` at `epoch` on a thread of its own (for a store whose loads wait).
fn load_on_a_thread(
    c: &Arc<GroupCoordinator>,
    p: CoordinatorPartition,
    epoch: u64,
) -> std::thread::JoinHandle<Result<(), CoordinatorError>> {
    let c = Arc::clone(c);
    std::thread::spawn(move || c.load_partition(p, OwnerEpoch(epoch)))
}

/// The partitions a coordinator reported lost, with their epochs.
type Lost = Arc<Mutex<Vec<(CoordinatorPartition, OwnerEpoch)>>>;

/// A managed coordinator over `store` on `clock`, and what it reports lost.
fn managed_telling_losses(store: &MemoryMetadataStore, clock: Arc<ManualClock>) -> (GroupCoordinator, Lost) {
    let lost = Lost::default();
    let reported = Arc::clone(&lost);
    let c = GroupCoordinator::builder(Arc::new(store.clone()), test_config())
        .clock(clock)
        .managed_ownership()
        .on_partition_lost(Arc::new(move |p, e| reported.lock().unwrap().push((p, e))))
        .open()
        .unwrap();
    (c, lost)
}

fn managed(store: impl MetadataStore + 'static) -> GroupCoordinator {
    GroupCoordinator::builder(Arc::new(store), test_config())
        .clock(Arc::new(ManualClock::new(1_000)))
        .managed_ownership()
        .open()
        .unwrap()
}

#[derive(Debug, Clone, Copy)]
enum Api {
    Join,
    JoinV5,
    Sync,
    Heartbeat,
    Leave,
    Commit,
    Fetch,
    OffsetDelete,
    Describe,
    List,
    Delete,
}

/// Every error code of `api`'s answer about group `g` (top-level, per group or per
/// partition, as the API carries them).
fn ask(c: &GroupCoordinator, api: Api) -> Vec<ErrorCode> {
    match api {
        Api::Join => vec![c.handle_join_group(join("g", "m")).unwrap().error_code],
        Api::JoinV5 => {
            let r = c.handle_join_group(group_types::JoinGroupRequest { api_version: 5, ..join("g", "m") });
            vec![r.unwrap().error_code]
        }
        Api::Sync => vec![c.handle_sync_group(sync("g", "m", 1, &[])).unwrap().error_code],
        Api::Heartbeat => vec![c.handle_heartbeat(heartbeat("g", "m", 1)).unwrap().error_code],
        Api::Leave => vec![c.handle_leave_group(leave("g", "m")).unwrap().error_code],
        Api::Commit => {
            let r = c.handle_offset_commit(commit("g", "", -1, 7)).unwrap();
            r.iter().map(|(_, _, code)| code).collect()
        }
        Api::Fetch => {
            let request = OffsetFetchRequest {
                group_id: "g".into(),
                topics: None,
                require_stable: false,
                member_id: None,
                member_epoch: None,
            };
            vec![c.handle_offset_fetch(request).unwrap().error_code]
        }
        Api::OffsetDelete => {
            let request =
                OffsetDeleteRequest { group_id: "g".into(), topics: [("t".into(), vec![0])].into() };
            vec![c.handle_offset_delete(request).unwrap().error_code]
        }
        Api::Describe => {
            let r = c
                .handle_describe_groups(DescribeGroupsRequest {
                    group_ids: vec!["g".into()],
                    ..Default::default()
                })
                .unwrap();
            r.groups.iter().map(|g| g.error_code).collect()
        }
        Api::List => vec![c.handle_list_groups(ListGroupsRequest::default()).unwrap().error_code],
        Api::Delete => {
            let r = c.handle_delete_groups(DeleteGroupsRequest { group_ids: vec!["g".into()] }).unwrap();
            r.results.iter().map(|g| g.error_code).collect()
        }
    }
}

#[rstest]
#[case::join(Api::Join, ErrorCode::CoordinatorLoadInProgress)]
#[case::join_v5(Api::JoinV5, ErrorCode::CoordinatorLoadInProgress)]
#[case::sync(Api::Sync, ErrorCode::CoordinatorLoadInProgress)]
// GroupCoordinatorService.heartbeat answers a loading partition NONE, blindly.
#[case::heartbeat(Api::Heartbeat, ErrorCode::None)]
#[case::leave(Api::Leave, ErrorCode::CoordinatorLoadInProgress)]
#[case::commit(Api::Commit, ErrorCode::CoordinatorLoadInProgress)]
#[case::fetch(Api::Fetch, ErrorCode::CoordinatorLoadInProgress)]
#[case::offset_delete(Api::OffsetDelete, ErrorCode::CoordinatorLoadInProgress)]
#[case::describe(Api::Describe, ErrorCode::CoordinatorLoadInProgress)]
#[case::list(Api::List, ErrorCode::CoordinatorLoadInProgress)]
#[case::delete(Api::Delete, ErrorCode::CoordinatorLoadInProgress)]
fn every_api_is_answered_by_its_partitions_state(#[case] api: Api, #[case] loading: ErrorCode) {
    let store = GatedLoads::new(MemoryMetadataStore::new());
    let c = Arc::new(managed(store.clone()));
    let p = partition("g");

    // Unowned: NOT_COORDINATOR, except ListGroups, which lists nothing.
    assert_eq!(c.partition_state(p), PartitionState::Unowned);
    let unowned = if matches!(api, Api::List) { ErrorCode::None } else { ErrorCode::NotCoordinator };
    assert_eq!(ask(&c, api), vec![unowned], "{api:?} unowned");

    // Loading: the store's load is held until the gate opens.
    store.close();
    let loader = load_on_a_thread(&c, p, 1);
    store.until_waiting(1);
    assert_eq!(c.partition_state(p), PartitionState::Loading);
    assert_eq!(ask(&c, api), vec![loading], "{api:?} loading");
    store.open();
    loader.join().unwrap().unwrap();
    assert_eq!(c.partition_state(p), PartitionState::Owned(OwnerEpoch(1)));
    assert_eq!(c.owned_partitions(), vec![(p, OwnerEpoch(1))]);

    // Owned: what a coordinator that owns every partition answers.
    let plain = GroupCoordinator::with_clock(
        Arc::new(MemoryMetadataStore::new()),
        test_config(),
        Arc::new(ManualClock::new(1_000)),
    )
    .unwrap();
    let owned = ask(&c, api);
    assert_eq!(owned, ask(&plain, api), "{api:?} owned");
    assert!(
        !owned.contains(&ErrorCode::NotCoordinator) && !owned.contains(&ErrorCode::CoordinatorLoadInProgress)
    );

    // Unloaded again: NOT_COORDINATOR again.
    c.unload_partition(p);
    assert_eq!(ask(&c, api), vec![unowned], "{api:?} unloaded");
}

#[rstest]
#[case::v5_echoes_the_member(5, "m", Some(String::new()))]
#[case::v7_protocol_name_null(7, "m", None)]
#[case::new_member(9, "", None)]
fn a_join_to_an_unowned_partition_is_answered_as_the_coordinator_service_answers_it(
    #[case] api_version: i16,
    #[case] member_id: &str,
    #[case] protocol_name: Option<String>,
) {
    let c = managed(MemoryMetadataStore::new());
    let r =
        c.handle_join_group(group_types::JoinGroupRequest { api_version, ..join("g", member_id) }).unwrap();
    assert_eq!(r.error_code, ErrorCode::NotCoordinator);
    assert_eq!(r.member_id, member_id, "GroupCoordinatorService.joinGroup echoes the member id");
    assert_eq!(r.generation_id, -1);
    assert_eq!(r.protocol_name.as_deref(), protocol_name.as_deref());
    assert_eq!(r.leader_id, "");
    assert!(r.members.is_empty());
}

#[test]
fn an_empty_group_id_is_invalid_before_the_partition_is_looked_at() {
    let c = managed(MemoryMetadataStore::new());
    assert_eq!(c.partition_state(partition("")), PartitionState::Unowned);
    assert_eq!(c.handle_join_group(join("", "")).unwrap().error_code, ErrorCode::InvalidGroupId);
    assert_eq!(c.handle_heartbeat(heartbeat("", "m", 1)).unwrap().error_code, ErrorCode::InvalidGroupId);
    // OffsetCommit allows "" as a group id: the partition decides.
    let r = c.handle_offset_commit(commit("", "", -1, 1)).unwrap();
    assert_eq!(r.error_for("t", 0), Some(ErrorCode::NotCoordinator));
}

#[derive(Debug)]
struct DenyGroups;

impl Authorizer for DenyGroups {
    fn authorize(&self, _: &RequestContext, _: AclOperation, resource: Resource<'_>) -> bool {
        !matches!(resource, Resource::Group(_))
    }
}

#[test]
fn acls_are_checked_before_ownership_as_kafka_apis_does() {
    let c = GroupCoordinator::builder(Arc::new(MemoryMetadataStore::new()), test_config())
        .clock(Arc::new(ManualClock::new(1_000)))
        .authorizer(Arc::new(DenyGroups))
        .managed_ownership()
        .open()
        .unwrap();
    let r = c.handle_join_group(join("g", "m")).unwrap();
    assert_eq!(r.error_code, ErrorCode::GroupAuthorizationFailed);
    assert_eq!(r.member_id, "", "JoinGroupRequest.getErrorResponse");
    let r = c.handle_offset_commit(commit("g", "", -1, 1)).unwrap();
    assert_eq!(r.error_for("t", 0), Some(ErrorCode::GroupAuthorizationFailed));
}

#[test]
fn describe_and_delete_answer_each_group_by_its_own_partition() {
    let c = managed(MemoryMetadataStore::new());
    let other = other_group("g");
    c.load_partition(partition(&other), OwnerEpoch(1)).unwrap();
    let r = c
        .handle_describe_groups(DescribeGroupsRequest {
            group_ids: vec!["g".into(), other.clone().into()],
            ..Default::default()
        })
        .unwrap();
    let codes: Vec<_> = r.groups.iter().map(|g| (g.group_id.as_str(), g.error_code)).collect();
    assert_eq!(codes, vec![("g", ErrorCode::NotCoordinator), (other.as_str(), ErrorCode::None)]);
    assert_eq!(r.groups[0].group_state, "");
    let r = c
        .handle_delete_groups(DeleteGroupsRequest { group_ids: vec!["g".into(), other.clone().into()] })
        .unwrap();
    let codes: Vec<_> = r.results.iter().map(|g| (g.group_id.as_str(), g.error_code)).collect();
    assert_eq!(codes, vec![("g", ErrorCode::NotCoordinator), (other.as_str(), ErrorCode::GroupIdNotFound)]);
}

#[test]
fn list_groups_lists_only_owned_partitions() {
    let store = MemoryMetadataStore::new();
    let plain = GroupCoordinator::new(Arc::new(store.clone()), test_config()).unwrap();
    let other = other_group("g");
    for g in ["g", other.as_str()] {
        assert_eq!(
            plain.handle_offset_commit(commit(g, "", -1, 1)).unwrap().error_for("t", 0),
            Some(ErrorCode::None)
        );
    }
    drop(plain);
    let c = managed(store);
    c.load_partition(partition(&other), OwnerEpoch(5)).unwrap();
    let listed = c.handle_list_groups(ListGroupsRequest::default()).unwrap();
    let ids: Vec<_> = listed.groups.iter().map(|g| g.group_id.clone()).collect();
    assert_eq!(ids, vec![other]);
}

#[test]
fn a_node_taking_a_partition_over_serves_what_the_previous_owner_wrote_and_fences_it() {
    let store = MemoryMetadataStore::new();
    let (a, lost) = managed_telling_losses(&store, Arc::new(ManualClock::new(1_000)));
    let b = managed(store.clone());
    let p = partition("g");
    a.load_partition(p, OwnerEpoch(1)).unwrap();
    assert_eq!(
        a.handle_offset_commit(commit("g", "", -1, 10)).unwrap().error_for("t", 0),
        Some(ErrorCode::None)
    );

    b.load_partition(p, OwnerEpoch(2)).unwrap();
    assert_eq!(b.get_committed_offset("g", "t", 0).unwrap(), 10, "B serves what A committed");
    assert_eq!(
        a.load_partition(p, OwnerEpoch(1)),
        Err(CoordinatorError::LoadFailed {
            partition: p,
            epoch: OwnerEpoch(1),
            source: StorageError::Fenced { partition: p.0, epoch: 1, current: 2 },
        }),
        "A cannot take it back at its old epoch"
    );
    assert_eq!(a.partition_state(p), PartitionState::Unowned);
    assert!(lost.lock().unwrap().is_empty(), "a refused load is no loss");
}

#[test]
fn a_fenced_append_unloads_the_partition_and_tells_the_listener() {
    let store = MemoryMetadataStore::new();
    let clock = Arc::new(ManualClock::new(1_000));
    let (a, lost) = managed_telling_losses(&store, clock.clone());
    let b = managed(store.clone());
    let p = partition("g");
    a.load_partition(p, OwnerEpoch(1)).unwrap();
    // A Stable group in A, which B resumes.
    let first = a.handle_join_group(join("g", "")).unwrap();
    let parked = a.join_group(join("g", &first.member_id));
    clock.advance(100);
    let joined = parked.wait().unwrap();
    a.handle_sync_group(sync("g", &joined.member_id, joined.generation_id, &[(&joined.member_id, "x")]))
        .unwrap();
    assert_eq!(
        a.handle_offset_commit(commit("g", &joined.member_id, joined.generation_id, 10))
            .unwrap()
            .error_for("t", 0),
        Some(ErrorCode::None)
    );

    b.load_partition(p, OwnerEpoch(2)).unwrap();
    assert_eq!(b.get_committed_offset("g", "t", 0).unwrap(), 10);
    assert_eq!(b.get_group("g").map(|g| g.members.len()), Some(1), "B resumed A's group");

    let fenced = a.handle_offset_commit(commit("g", &joined.member_id, joined.generation_id, 11)).unwrap();
    assert_eq!(fenced.error_for("t", 0), Some(ErrorCode::NotCoordinator));
    assert_eq!(a.partition_state(p), PartitionState::Unowned);
    assert_eq!(*lost.lock().unwrap(), vec![(p, OwnerEpoch(1))]);
    assert_eq!(a.get_group("g"), None, "A's core was freed");
    assert_eq!(
        a.handle_heartbeat(heartbeat("g", &joined.member_id, 1)).unwrap().error_code,
        ErrorCode::NotCoordinator
    );
    assert!(a.wait_for_writes(SOON));
    assert_eq!(b.get_committed_offset("g", "t", 0).unwrap(), 10);
    let reloaded = store.fetch_group_offset("g", "t", 0).unwrap().map(|o| o.offset);
    assert_eq!(reloaded, Some(10), "the fenced commit changed nothing");
}

#[rstest]
#[case::late_success(None, Some(5))]
#[case::late_failure(Some(StorageError::io("disk full")), None)]
fn an_unload_answers_what_waits_at_once_and_ignores_the_late_completion(
    #[case] late: Option<StorageError>,
    #[case] durable: Option<i64>,
) {
    let store = MemoryMetadataStore::new();
    let c = managed(store.clone());
    let other = other_group("g");
    let (p, q) = (partition("g"), partition(&other));
    c.load_partition(p, OwnerEpoch(1)).unwrap();
    c.load_partition(q, OwnerEpoch(1)).unwrap();
    store.hold_appends(true);
    let in_flight = c.offset_commit(commit("g", "", -1, 5));
    until_held(&store, 1);
    let queued = c.offset_commit(commit("g", "", -1, 6));
    let elsewhere = c.offset_commit(commit(&other, "", -1, 9));
    until_held(&store, 2);
    // A v3 join parks for the initial rebalance delay.
    let parked = c.join_group(group_types::JoinGroupRequest { api_version: 3, ..join("g", "") });

    c.unload_partition(p);
    for answer in [in_flight, queued] {
        let mut answer = answer;
        let r = answer.wait_timeout(Duration::ZERO).expect("answered by the unload").unwrap();
        assert_eq!(r.error_for("t", 0), Some(ErrorCode::NotCoordinator));
    }
    let r = parked.wait().unwrap();
    assert_eq!(r.error_code, ErrorCode::NotCoordinator);
    assert_eq!(c.waiting_requests(), 1, "only the other partition's commit waits");

    // Completions out of order across partitions: the other partition's first.
    assert!(store.release_held(Some(q), None));
    assert_eq!(elsewhere.wait().unwrap().error_for("t", 0), Some(ErrorCode::None));
    assert!(c.wait_for_writes(SOON), "the unloaded partition's writes left the gauge");
    assert!(store.release_held(Some(p), late));
    store.hold_appends(false);
    assert_eq!(c.partition_state(p), PartitionState::Unowned, "the late completion changed nothing");

    c.load_partition(p, OwnerEpoch(2)).unwrap();
    assert_eq!(c.get_committed_offset("g", "t", 0).unwrap(), durable.unwrap_or(-1), "only what was durable");
    assert_eq!(
        c.handle_offset_commit(commit("g", "", -1, 7)).unwrap().error_for("t", 0),
        Some(ErrorCode::None)
    );
    assert_eq!(c.get_committed_offset("g", "t", 0).unwrap(), 7);
    assert!(c.wait_for_writes(SOON));
}

#[test]
fn an_unload_during_a_load_wins() {
    let store = GatedLoads::new(MemoryMetadataStore::new());
    let c = Arc::new(managed(store.clone()));
    let p = partition("g");
    store.close();
    let loader = load_on_a_thread(&c, p, 1);
    store.until_waiting(1);
    c.unload_partition(p);
    store.open();
    assert_eq!(
        loader.join().unwrap(),
        Err(CoordinatorError::LoadSuperseded { partition: p, epoch: OwnerEpoch(1) })
    );
    assert_eq!(c.partition_state(p), PartitionState::Unowned);
}

#[test]
fn a_later_load_during_a_load_wins() {
    let store = GatedLoads::new(MemoryMetadataStore::new());
    let c = Arc::new(managed(store.clone()));
    let p = partition("g");
    store.close();
    let first = load_on_a_thread(&c, p, 1);
    store.until_waiting(1);
    let second = load_on_a_thread(&c, p, 2);
    store.until_waiting(2);
    store.open();
    assert!(matches!(first.join().unwrap(), Err(CoordinatorError::LoadSuperseded { .. })));
    second.join().unwrap().unwrap();
    assert_eq!(c.partition_state(p), PartitionState::Owned(OwnerEpoch(2)));
}

#[test]
fn stop_works_with_partitions_in_every_state() {
    let store = GatedLoads::new(MemoryMetadataStore::new());
    let c = Arc::new(managed(store.clone()));
    let other = other_group("g");
    c.load_partition(partition(&other), OwnerEpoch(1)).unwrap();
    let parked = c.join_group(group_types::JoinGroupRequest { api_version: 3, ..join(&other, "") });
    store.close();
    let loader = load_on_a_thread(&c, partition("g"), 1);
    store.until_waiting(1);
    c.stop();
    store.open();
    assert_eq!(loader.join().unwrap(), Err(CoordinatorError::Stopped));
    assert_eq!(parked.wait().map(|r| r.error_code), Err(CoordinatorError::Stopped));
    assert_eq!(c.load_partition(partition("g"), OwnerEpoch(2)), Err(CoordinatorError::Stopped));
}

#[test]
fn without_managed_ownership_every_partition_is_owned_at_open() {
    let c = GroupCoordinator::new(Arc::new(MemoryMetadataStore::new()), test_config()).unwrap();
    assert_eq!(c.partition_count(), PARTITIONS);
    let owned = c.owned_partitions();
    assert_eq!(owned.len(), PARTITIONS as usize);
    assert!(owned.iter().all(|(_, e)| *e == OwnerEpoch(1)));
}

#[rstest]
#[case::join(Api::Join)]
#[case::sync(Api::Sync)]
#[case::heartbeat(Api::Heartbeat)]
#[case::leave(Api::Leave)]
#[case::commit(Api::Commit)]
#[case::fetch(Api::Fetch)]
#[case::offset_delete(Api::OffsetDelete)]
#[case::describe(Api::Describe)]
#[case::delete(Api::Delete)]
fn nothing_is_served_while_the_serving_lease_does_not_hold(#[case] api: Api) {
    let serving = Arc::new(ServingLease::new());
    let c = GroupCoordinator::builder(Arc::new(MemoryMetadataStore::new()), test_config())
        .clock(Arc::new(ManualClock::new(1_000)))
        .managed_ownership()
        .serving_lease(serving.clone())
        .open()
        .unwrap();
    c.load_partition(partition("g"), OwnerEpoch(1)).unwrap();
    assert_eq!(
        c.handle_offset_commit(commit("g", "", -1, 7)).unwrap().error_for("t", 0).unwrap(),
        ErrorCode::NotCoordinator
    );
    serving.extend(std::time::Instant::now(), Duration::from_secs(3600));
    let owned = ask(&c, api);
    assert!(
        owned.iter().all(|&e| e != ErrorCode::NotCoordinator),
        "{api:?} served while the lease holds: {owned:?}"
    );
    // The lease runs out (a process paused past it): refused at once, though the
    // partition is still loaded, until the manager renews or unloads.
    serving.revoke();
    assert!(ask(&c, api).iter().all(|&e| e == ErrorCode::NotCoordinator), "{api:?} answered without a lease");
    assert_eq!(c.partition_state(partition("g")), PartitionState::Owned(OwnerEpoch(1)));
    serving.extend(std::time::Instant::now(), Duration::from_secs(3600));
    assert_eq!(ask(&c, api), owned, "{api:?} served again once renewed");
}

#[test]
fn list_groups_lists_nothing_while_the_serving_lease_does_not_hold() {
    let serving = Arc::new(ServingLease::new());
    let c = GroupCoordinator::builder(Arc::new(MemoryMetadataStore::new()), test_config())
        .clock(Arc::new(ManualClock::new(1_000)))
        .managed_ownership()
        .serving_lease(serving.clone())
        .open()
        .unwrap();
    c.load_partition(partition("g"), OwnerEpoch(1)).unwrap();
    serving.extend(std::time::Instant::now(), Duration::from_secs(3600));
    assert_eq!(
        c.handle_offset_commit(commit("g", "", -1, 7)).unwrap().error_for("t", 0).unwrap(),
        ErrorCode::None
    );
    let listed =
        |c: &GroupCoordinator| c.handle_list_groups(ListGroupsRequest::default()).unwrap().groups.len();
    assert_eq!(listed(&c), 1);
    serving.revoke();
    assert_eq!(listed(&c), 0);
}
