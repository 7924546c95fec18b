//! The conformance suite: what every [`MetadataStore`] and [`OffsetStorage`]
//! must do, as checks any implementation can run against itself.
//!
//! Enabled by the `conformance` feature, for a storage engine's own tests:
//!
//! ```toml
//! [dev-dependencies]
//! group-offsets = { workspace = true, features = ["conformance"] }
//! ```
//!
//! ```
//! # #[cfg(feature = "conformance")] {
//! use group_offsets::MemoryMetadataStore;
//! use group_offsets::conformance;
//!
//! conformance::metadata_store_suite(MemoryMetadataStore::new);
//! // A durable engine also proves that reopening keeps everything:
//! conformance::metadata_store_restart_suite(MemoryMetadataStore::new, |store| store.clone());
//! # }
//! ```
//!
//! [`metadata_store_suite`] checks the record contract of
//! [`MetadataStore`]: byte-exact round trips, later records replacing earlier
//! ones, tombstones, atomic appends (a fenced batch leaves nothing visible),
//! order within a partition (many appends in flight, completed in call
//! order), loads scoped to their partition, epoch fencing, concurrent
//! appends, and the provided per-offset methods; and for KIP-848
//! consumer-group records, keyed by (record type, group, member id or regex):
//! field-for-field round trips of every kind, the last record of a key
//! winning, tombstones removing (a group whose keys are all removed leaves
//! nothing), keys of groups, members and regexes that prefix each other or
//! hold NUL bytes never mixing, and independence from the group's offsets
//! and classic record. It then runs every
//! [`OffsetStorage`] check over
//! [`PersistentOffsetStorage`] on the store,
//! so an engine also proves the offsets-only interface built on it.
//! [`metadata_store_restart_suite`] writes a fixture, has the store reopened,
//! and expects every acknowledged record and epoch back.
//!
//! Every check gets a fresh store from the factory, and the suite runs every
//! check before failing, so one run reports each broken rule by name:
//! `2 of 33 MetadataStore conformance checks failed: [tombstones_remove] ...`.
//! The checks are also listed in [`METADATA_STORE_CHECKS`] and
//! [`OFFSET_STORAGE_CHECKS`] for engines that want one test per rule.
//!
//! The suite writes a few thousand small records (a durable engine that
//! flushes on every append should still finish in seconds), spawns a handful
//! of threads for the concurrency checks, and waits at most
//! [`COMPLETION_TIMEOUT`] for any one append to complete, so an engine that
//! never completes fails instead of hanging.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use group_types::{GroupOffsets, OffsetAndMetadata, TopicPartition};

use crate::{
    AppendCompletion, CoordinatorPartition, GroupMetadataRecord, LoadedPartition, MemberMetadataRecord,
    MetadataStore, ModernGroupRecord, OffsetStorage, OwnerEpoch, PersistentOffsetStorage, Record,
    StorageError, StoredGroups, TxnOffsetRecord,
};

mod consumer;
mod consumer_samples;
#[doc(hidden)]
pub use consumer_samples::{awkward_records, consumer_tombstones, pinned_records};
mod offsets;
mod records;
mod txn;

/// Joins the writers of a concurrency check, then tells its reader they are done
/// and joins it; re-raises the first panic of any of them (its failed assertion).
fn join_writers_then_reader(
    writers: Vec<std::thread::ScopedJoinHandle<'_, ()>>,
    done: &std::sync::atomic::AtomicBool,
    reader: std::thread::ScopedJoinHandle<'_, ()>,
) {
    let mut first_panic = None;
    for writer in writers {
        if let Err(panic) = writer.join() {
            first_panic.get_or_insert(panic);
        }
    }
    done.store(true, std::sync::atomic::Ordering::Release);
    if let Err(panic) = reader.join() {
        first_panic.get_or_insert(panic);
    }
    if let Some(panic) = first_panic {
        std::panic::resume_unwind(panic);
    }
}

/// One named check of a [`MetadataStore`].
pub type MetadataStoreCheck = (&'static str, fn(&dyn MetadataStore));

/// One named check of an [`OffsetStorage`].
pub type OffsetStorageCheck = (&'static str, fn(&dyn OffsetStorage));

/// How long a check waits for one append to complete before failing.
pub const COMPLETION_TIMEOUT: Duration = Duration::from_secs(60);

/// Every [`MetadataStore`] check of the record contract, by name.
pub const METADATA_STORE_CHECKS: &[MetadataStoreCheck] = &[
    ("fresh_store_is_empty", records::fresh_store_is_empty),
    ("append_and_load_round_trip_exactly", records::append_and_load_round_trip_exactly),
    ("later_records_replace_earlier", records::later_records_replace_earlier),
    ("tombstones_remove", records::tombstones_remove),
    ("group_records_and_offsets_are_independent", records::group_records_and_offsets_are_independent),
    ("keys_that_prefix_each_other_stay_apart", records::keys_that_prefix_each_other_stay_apart),
    ("a_refused_append_applies_nothing", records::a_refused_append_applies_nothing),
    ("appends_of_a_partition_apply_in_call_order", records::appends_of_a_partition_apply_in_call_order),
    ("loads_are_scoped_to_their_partition", records::loads_are_scoped_to_their_partition),
    ("epochs_fence_and_rise", records::epochs_fence_and_rise),
    ("concurrent_appends_lose_nothing", records::concurrent_appends_lose_nothing),
    ("seed_methods_agree_with_records", records::seed_methods_agree_with_records),
    ("many_groups", records::many_groups),
    ("load_all_is_every_partition", records::load_all_is_every_partition),
    ("modern_records_round_trip_exactly", consumer::modern_records_round_trip_exactly),
    ("later_modern_records_replace_earlier", consumer::later_modern_records_replace_earlier),
    ("consumer_tombstones_remove", consumer::consumer_tombstones_remove),
    ("consumer_keys_stay_apart", consumer::consumer_keys_stay_apart),
    (
        "modern_records_leave_offsets_and_group_records_alone",
        consumer::modern_records_leave_offsets_and_group_records_alone,
    ),
    ("txn_offsets_round_trip_replace_and_remove", txn::txn_offsets_round_trip_replace_and_remove),
    ("txn_offsets_stay_apart_from_other_keys", txn::txn_offsets_stay_apart_from_other_keys),
];

/// Every [`OffsetStorage`] check, by name.
pub const OFFSET_STORAGE_CHECKS: &[OffsetStorageCheck] = &[
    ("fresh_store_is_empty", |s| offsets::fresh_store_is_empty(&offsets::Storage(s))),
    ("store_and_fetch_one", |s| offsets::store_and_fetch_one(&offsets::Storage(s))),
    ("overwrite", |s| offsets::overwrite(&offsets::Storage(s))),
    ("fetch_all_by_topic_and_partition", |s| offsets::fetch_all_by_topic_and_partition(&offsets::Storage(s))),
    ("multi_partition_store", |s| offsets::multi_partition_store(&offsets::Storage(s))),
    ("delete_group_offsets", |s| offsets::delete_group_offsets(&offsets::Storage(s))),
    ("delete_partitions", |s| offsets::delete_partitions(&offsets::Storage(s))),
    ("keys_that_prefix_each_other_stay_apart", |s| {
        offsets::keys_that_prefix_each_other_stay_apart(&offsets::Storage(s))
    }),
    ("values_round_trip_exactly", |s| offsets::values_round_trip_exactly(&offsets::Storage(s))),
    ("group_records", |s| offsets::group_records(&offsets::Storage(s))),
    ("records_and_offsets_are_independent", |s| {
        offsets::records_and_offsets_are_independent(&offsets::Storage(s))
    }),
    ("load_all_returns_everything", |s| offsets::load_all_returns_everything(&offsets::Storage(s))),
    ("many_groups", |s| offsets::many_groups(&offsets::Storage(s))),
    ("concurrent_groups_lose_nothing", |s| offsets::concurrent_groups_lose_nothing(&offsets::Storage(s))),
];

/// Runs every [`MetadataStore`] check, each on a fresh store from `make`,
/// then every [`OffsetStorage`] check over
/// [`PersistentOffsetStorage::new`] of a fresh store (reported as
/// `offset_storage/<check>`), and panics naming every check that failed.
pub fn metadata_store_suite<S: MetadataStore>(make: impl Fn() -> S) {
    let mut failures = run_all(METADATA_STORE_CHECKS, "", |check| {
        let store = make();
        check(&store);
    });
    failures.extend(run_all(OFFSET_STORAGE_CHECKS, "offset_storage/", |check| {
        let storage = PersistentOffsetStorage::new(make());
        check(&storage);
    }));
    report("MetadataStore", METADATA_STORE_CHECKS.len() + OFFSET_STORAGE_CHECKS.len(), failures);
}

/// Runs every [`OffsetStorage`] check, each on a fresh storage from `make`, and
/// panics naming every check that failed.
pub fn offset_storage_suite<S: OffsetStorage>(make: impl Fn() -> S) {
    let failures = run_all(OFFSET_STORAGE_CHECKS, "", |check| {
        let storage = make();
        check(&storage);
    });
    report("OffsetStorage", OFFSET_STORAGE_CHECKS.len(), failures);
}

/// Checks the durability promise as far as a test can: appends a fixture to
/// several partitions (offsets, batches, tombstones, group records replaced
/// and removed, epochs raised, a fenced append refused), hands the store to
/// `reopen` (which must close it and open the same data again, e.g. drop a
/// sled database and reopen its directory), and expects every partition to
/// load exactly as acknowledged, epochs included, with nothing deleted come
/// back; then that the reopened store still fences stale epochs and takes
/// writes.
pub fn metadata_store_restart_suite<S: MetadataStore>(make: impl FnOnce() -> S, reopen: impl FnOnce(S) -> S) {
    let store = make();
    let model = records::write_restart_fixture(&store);
    let reopened = reopen(store);
    records::check_after_reopening(&reopened, model);
}

fn run_all<C: Copy>(checks: &[(&'static str, C)], prefix: &str, run: impl Fn(C)) -> Vec<String> {
    let mut failures = Vec::new();
    for (name, check) in checks {
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| run(*check))) {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_else(|| "(non-string panic)".to_owned());
            failures.push(format!("[{prefix}{name}] {message}"));
        }
    }
    failures
}

fn report(what: &str, total: usize, failures: Vec<String>) {
    assert!(
        failures.is_empty(),
        "{} of {total} {what} conformance checks failed:\n  {}",
        failures.len(),
        failures.join("\n  ")
    );
}

// ---------------------------------------------------------------------------
// Helpers shared by the checks

#[track_caller]
fn expect_ok<T>(result: Result<T, StorageError>, what: &str) -> T {
    match result {
        Ok(value) => value,
        Err(e) => panic!("{what} failed: {e}"),
    }
}

fn tp(topic: &str, partition: i32) -> TopicPartition {
    TopicPartition::new(topic, partition)
}

fn om(offset: i64, commit_time: i64) -> OffsetAndMetadata {
    OffsetAndMetadata::new(offset, commit_time)
}

fn full(
    offset: i64,
    epoch: Option<i32>,
    metadata: &str,
    commit_time: i64,
    expire: Option<i64>,
) -> OffsetAndMetadata {
    OffsetAndMetadata {
        offset,
        leader_epoch: epoch,
        metadata: metadata.into(),
        commit_time,
        expire_time: expire,
    }
}

fn group_offsets(group: &str, entries: &[(TopicPartition, OffsetAndMetadata)]) -> GroupOffsets {
    let mut out = GroupOffsets::new(group);
    for (tp, offset) in entries {
        out.offsets.entry(tp.topic().to_owned()).or_default().insert(tp.partition, offset.clone());
    }
    out
}

/// Sorted by group id (consumer records by their key), with empty offset sets
/// dropped, so two loads compare whatever order an engine returns them in.
fn normalise(mut stored: StoredGroups) -> StoredGroups {
    stored.groups.sort_by(|a, b| a.group_id.cmp(&b.group_id));
    stored.offsets.retain(|g| !g.is_empty());
    stored.offsets.sort_by(|a, b| a.group_id.cmp(&b.group_id));
    stored.consumer.sort_by_key(consumer_key);
    stored.txn_offsets.sort_by_key(txn_key);
    stored
}

/// A pending transactional offset's key: (group, producer, partition).
fn txn_key(record: &TxnOffsetRecord) -> (String, i64, TopicPartition) {
    (record.group_id.to_string(), record.producer_id, record.partition.clone())
}

/// A consumer record's key: (group, record type, sub-key).
fn consumer_key(record: &ModernGroupRecord) -> (String, i16, String) {
    (record.group_id().to_string(), record.record_type(), record.sub_key().to_owned())
}

#[track_caller]
fn assert_stored_eq(actual: StoredGroups, expected: StoredGroups, what: &str) {
    let ids = |s: &StoredGroups| s.groups.iter().map(|g| g.group_id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&actual), ids(&expected), "{what}: group record ids differ");
    assert_eq!(actual.groups, expected.groups, "{what}: group records differ");
    let ids = |s: &StoredGroups| s.offsets.iter().map(|g| g.group_id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&actual), ids(&expected), "{what}: the groups with offsets differ");
    assert_eq!(actual.offsets, expected.offsets, "{what}: offsets differ");
    let keys = |s: &StoredGroups| s.consumer.iter().map(consumer_key).collect::<Vec<_>>();
    assert_eq!(
        keys(&actual),
        keys(&expected),
        "{what}: the keys (group, record type, sub-key) of the live consumer records differ"
    );
    assert_eq!(actual.consumer, expected.consumer, "{what}: consumer records differ");
    let keys = |s: &StoredGroups| s.txn_offsets.iter().map(txn_key).collect::<Vec<_>>();
    assert_eq!(
        keys(&actual),
        keys(&expected),
        "{what}: the keys (group, producer, partition) of the pending transactional offsets differ"
    );
    assert_eq!(actual.txn_offsets, expected.txn_offsets, "{what}: pending transactional offsets differ");
}

/// A Stable classic group record with one member `m-1` whose assignment is
/// `assignment_len` bytes of 9: the record the storage engines' fixtures and
/// tests write (the etcd codec's fixture files hold it, so it must not change).
#[doc(hidden)]
pub fn one_member_group_record(
    group_id: &str,
    generation_id: i32,
    assignment_len: usize,
) -> GroupMetadataRecord {
    GroupMetadataRecord {
        group_id: group_id.into(),
        protocol_type: Some("consumer".into()),
        generation_id,
        protocol_name: Some("range".into()),
        leader_id: Some("m-1".into()),
        state_timestamp_ms: Some(1_700_000_000_000),
        members: vec![MemberMetadataRecord {
            member_id: "m-1".into(),
            group_instance_id: Some("i-1".into()),
            client_id: "client".to_owned(),
            client_host: "/10.0.0.1".to_owned(),
            rebalance_timeout_ms: 300_000,
            session_timeout_ms: 45_000,
            subscription: vec![0, 3, 1, 2].into(),
            assignment: vec![9; assignment_len].into(),
        }],
    }
}

/// Group `g`'s record replacing [`record`]`("g", 1)` with every field changed,
/// including Some -> None and Some("") kept distinct from None.
fn replaced_record() -> GroupMetadataRecord {
    GroupMetadataRecord {
        group_id: "g".into(),
        protocol_type: Some("".into()),
        generation_id: 2,
        protocol_name: None,
        leader_id: None,
        state_timestamp_ms: None,
        members: Vec::new(),
    }
}

/// Group `big`'s record: 100 members with awkward ids and long subscriptions and
/// assignments.
fn big_record() -> GroupMetadataRecord {
    GroupMetadataRecord {
        members: (0..100)
            .map(|i| MemberMetadataRecord {
                member_id: format!("member-{i}-\0-🦀").into(),
                subscription: (0..=255).collect(),
                assignment: vec![i as u8; 1000].into(),
                ..MemberMetadataRecord::default()
            })
            .collect(),
        ..record("big", i32::MAX)
    }
}

fn record(group: &str, generation: i32) -> GroupMetadataRecord {
    GroupMetadataRecord {
        group_id: group.into(),
        protocol_type: Some("consumer".into()),
        generation_id: generation,
        protocol_name: Some("range".into()),
        leader_id: Some(format!("{group}-leader").into()),
        state_timestamp_ms: Some(1_700_000_000_000 + i64::from(generation)),
        members: vec![
            MemberMetadataRecord {
                member_id: format!("{group}-leader").into(),
                group_instance_id: Some("instance-1".into()),
                client_id: "client".to_owned(),
                client_host: "/10.0.0.1".to_owned(),
                rebalance_timeout_ms: 300_000,
                session_timeout_ms: 45_000,
                subscription: vec![0, 1, 0, 0, 0, 1, 0, 6, b'o', b'r', b'd', b'e', b'r', b's'].into(),
                assignment: vec![0xff, 0x00, 0x80, 0x7f].into(),
            },
            MemberMetadataRecord {
                member_id: format!("{group}-follower").into(),
                group_instance_id: None,
                client_id: String::new(),
                client_host: String::new(),
                rebalance_timeout_ms: -1,
                session_timeout_ms: i32::MAX,
                subscription: Vec::new().into(),
                assignment: Vec::new().into(),
            },
        ],
    }
}

fn awkward_values() -> Vec<(TopicPartition, OffsetAndMetadata)> {
    let metadata = [
        String::new(),
        "\0".to_owned(),
        "nul\0in\0the\0middle\0".to_owned(),
        "unicode: ünïcödé 日本語 עברית 🦀👩‍👩‍👧 e\u{301}".to_owned(),
        "\u{FFFF}\u{10FFFF}\u{FEFF}\r\n\t\\\"'".to_owned(),
        "x".repeat(65_536),
        "{\"json\": [1, 2, 3]}".to_owned(),
    ];
    let mut out: Vec<_> = metadata
        .into_iter()
        .enumerate()
        .map(|(i, m)| (tp("meta", i as i32), full(i as i64, Some(i as i32), &m, 1_700_000_000_000, None)))
        .collect();
    out.extend([
        (tp("extreme", 0), full(i64::MAX, Some(i32::MAX), "", i64::MAX, Some(i64::MAX))),
        (tp("extreme", 1), full(i64::MIN, Some(i32::MIN), "", i64::MIN, Some(i64::MIN))),
        (tp("extreme", 2), full(-1, Some(-1), "", -1, Some(-1))),
        (tp("extreme", 3), full(0, Some(0), "", 0, Some(0))),
        (tp("extreme", 4), full(0, None, "", 0, None)),
        (tp("ünïcödé-topic\0", 5), full(5, None, "🦀", 5, None)),
    ]);
    out
}

/// Collects the completions of appends issued without waiting, in the order
/// they arrive.
struct Completions {
    tx: mpsc::Sender<(usize, Result<(), StorageError>)>,
    rx: mpsc::Receiver<(usize, Result<(), StorageError>)>,
}

impl Completions {
    fn new() -> Completions {
        let (tx, rx) = mpsc::channel();
        Completions { tx, rx }
    }

    /// A completion that reports `id`.
    fn completion(&self, id: usize) -> AppendCompletion {
        let tx = self.tx.clone();
        AppendCompletion::new(move |result| {
            // The receiver outlives every wait; a send after a failed check has nobody to tell.
            let _ = tx.send((id, result));
        })
    }

    /// The next `n` completions, in arrival order.
    #[track_caller]
    fn wait(&self, n: usize, what: &str) -> Vec<(usize, Result<(), StorageError>)> {
        (0..n)
            .map(|i| match self.rx.recv_timeout(COMPLETION_TIMEOUT) {
                Ok(done) => done,
                Err(_) => panic!("{what}: only {i} of {n} appends completed within {COMPLETION_TIMEOUT:?}"),
            })
            .collect()
    }
}

// ---------------------------------------------------------------------------
// A model of the record contract: plain maps, applied in call order.

/// One partition as the contract says it must load.
#[derive(Debug, Clone, Default)]
struct ModelPartition {
    epoch: u64,
    groups: BTreeMap<String, GroupMetadataRecord>,
    offsets: BTreeMap<(String, TopicPartition), OffsetAndMetadata>,
    /// Live consumer records by (group, record type, sub-key).
    consumer: BTreeMap<(String, i16, String), ModernGroupRecord>,
    /// Pending transactional offsets by (group, producer, partition).
    txn: BTreeMap<(String, i64, TopicPartition), TxnOffsetRecord>,
}

impl ModelPartition {
    /// The outcome the contract requires of an append, applied when `Ok`.
    fn apply(&mut self, epoch: OwnerEpoch, records: &[Record]) -> Outcome {
        if epoch.0 < self.epoch {
            return Outcome::Fenced { current: self.epoch };
        }
        self.epoch = epoch.0;
        for record in records {
            match record {
                Record::Group(r) => {
                    self.groups.insert(r.group_id.to_string(), (**r).clone());
                }
                Record::GroupTombstone { group_id } => {
                    self.groups.remove(&**group_id);
                }
                Record::Offset { group_id, partition, offset } => {
                    self.offsets.insert((group_id.to_string(), partition.clone()), offset.clone());
                }
                Record::OffsetTombstone { group_id, partition } => {
                    self.offsets.remove(&(group_id.to_string(), partition.clone()));
                }
                Record::Modern(r) if r.is_tombstone() => {
                    self.consumer.remove(&consumer_key(r));
                }
                Record::Modern(r) => {
                    self.consumer.insert(consumer_key(r), r.clone());
                }
                Record::TxnOffset(t) => {
                    self.txn.insert(txn_key(t), (**t).clone());
                }
                Record::TxnOffsetTombstone { group_id, producer_id, partition } => {
                    self.txn.remove(&(group_id.to_string(), *producer_id, partition.clone()));
                }
            }
        }
        Outcome::Ok
    }

    fn loaded(&self) -> LoadedPartition {
        let mut offsets: BTreeMap<&str, GroupOffsets> = BTreeMap::new();
        for ((group, tp), offset) in &self.offsets {
            offsets
                .entry(group)
                .or_insert_with(|| GroupOffsets::new(group.as_str()))
                .offsets
                .entry(tp.topic().to_owned())
                .or_default()
                .insert(tp.partition, offset.clone());
        }
        LoadedPartition {
            epoch: OwnerEpoch(self.epoch),
            groups: StoredGroups {
                groups: self.groups.values().cloned().collect(),
                offsets: offsets.into_values().collect(),
                consumer: self.consumer.values().cloned().collect(),
                txn_offsets: self.txn.values().cloned().collect(),
            },
        }
    }
}

/// What the contract requires an append to answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Ok,
    Fenced { current: u64 },
}

impl Outcome {
    #[track_caller]
    fn check(
        self,
        partition: CoordinatorPartition,
        epoch: OwnerEpoch,
        got: &Result<(), StorageError>,
        what: &str,
    ) {
        match (self, got) {
            (Outcome::Ok, Ok(())) => {}
            (Outcome::Ok, Err(e)) => {
                panic!("{what}: the append to {partition} at epoch {} failed: {e}", epoch.0)
            }
            (
                Outcome::Fenced { current },
                Err(StorageError::Fenced { partition: p, epoch: e, current: c }),
            ) if *p == partition.0 && *e == epoch.0 && *c == current => {}
            (Outcome::Fenced { current }, got) => panic!(
                "{what}: an append to {partition} at epoch {} below the accepted {current} must fail with \
                 StorageError::Fenced {{ partition: {}, epoch: {}, current: {current} }}, got {got:?}",
                epoch.0, partition.0, epoch.0
            ),
        }
    }
}

/// Every partition of a store, as the contract says it must load.
#[derive(Debug, Clone, Default)]
struct Model {
    partitions: BTreeMap<u32, ModelPartition>,
}

impl Model {
    fn partition(&mut self, p: CoordinatorPartition) -> &mut ModelPartition {
        self.partitions.entry(p.0).or_default()
    }

    /// Appends to the store, waiting, and checks the outcome the contract requires.
    #[track_caller]
    fn append(
        &mut self,
        store: &dyn MetadataStore,
        partition: CoordinatorPartition,
        epoch: OwnerEpoch,
        records: Vec<Record>,
        what: &str,
    ) {
        let expected = self.partition(partition).apply(epoch, &records);
        let got = store.append_blocking(partition, epoch, records);
        expected.check(partition, epoch, &got, what);
    }

    /// Checks that `partition` loads exactly as the model says.
    #[track_caller]
    fn check(&mut self, store: &dyn MetadataStore, partition: CoordinatorPartition, what: &str) {
        let expected = self.partition(partition).loaded();
        check_loaded(store, partition, expected, what);
    }

    /// Checks every partition of the store, and `load_all`.
    #[track_caller]
    fn check_all(&mut self, store: &dyn MetadataStore, what: &str) {
        let mut all = StoredGroups::default();
        for p in 0..store.partition_count() {
            let p = CoordinatorPartition(p);
            self.check(store, p, what);
            all.extend(self.partition(p).loaded().groups);
        }
        let loaded = normalise(expect_ok(store.load_all(), "load_all"));
        assert_stored_eq(loaded, normalise(all), &format!("load_all {what}"));
    }
}

#[track_caller]
fn check_loaded(
    store: &dyn MetadataStore,
    partition: CoordinatorPartition,
    expected: LoadedPartition,
    what: &str,
) {
    let loaded = expect_ok(store.load(partition), "load");
    assert_eq!(loaded.epoch, expected.epoch, "the epoch of {partition} {what}");
    assert_stored_eq(
        normalise(loaded.groups),
        normalise(expected.groups),
        &format!("load({partition}) {what}"),
    );
}

fn offset(group: &Arc<str>, tp: TopicPartition, offset: OffsetAndMetadata) -> Record {
    Record::Offset { group_id: Arc::clone(group), partition: tp, offset }
}

fn offset_tombstone(group: &Arc<str>, tp: TopicPartition) -> Record {
    Record::OffsetTombstone { group_id: Arc::clone(group), partition: tp }
}

fn group_tombstone(group: &str) -> Record {
    Record::GroupTombstone { group_id: Arc::from(group) }
}

/// Up to three distinct partitions of the store: the first, a middle one and the last.
fn some_partitions(store: &dyn MetadataStore) -> Vec<CoordinatorPartition> {
    let count = store.partition_count().max(1);
    let mut out: Vec<_> = [0, count / 2, count - 1].into_iter().map(CoordinatorPartition).collect();
    out.dedup();
    out
}
