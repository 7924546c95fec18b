//! Helper for the crash test (`tests/it/crash.rs`): appends to a
//! `SledMetadataStore` from several threads and prints every acknowledged
//! append, until the test kills it with SIGKILL.
//!
//! Usage: `sled-crash-committer <db dir> <threads>`. It continues from what the
//! store already holds, so successive runs on one directory keep moving
//! forward. Each run is a new owner: it appends with the epoch after the one
//! each partition holds. Output lines (each printed only after the append's
//! completion said `Ok`):
//!
//! - `ready` once the store is open;
//! - `E <partition> <epoch>` once an append with the run's epoch was acknowledged;
//! - `O <group> <topic> <partition> <offset>` for an acknowledged offset;
//! - `G <group> <generation>` for an acknowledged group record.
//!
//! Each thread owns one group and one topic. Iteration `n` appends offset `n`
//! of partitions 0 and 1 in one append, then offset `n` of partition 2 alone;
//! every fifth iteration thread 0 also appends the record of group
//! `crash-meta` with generation `g` together with offset `g` of that group's
//! topic `meta`, in one append. Every stored value's metadata is
//! `<topic>/<partition>@<offset>` and its commit time is the offset, so the
//! test can spot torn or mixed-up values.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use group_offsets::{CoordinatorPartition, GroupMetadataRecord, MetadataStore, OwnerEpoch, Record};
use group_storage_sled::SledMetadataStore;
use group_types::{OffsetAndMetadata, TopicPartition};

/// The group whose record thread 0 rewrites with growing generations.
const META_GROUP: &str = "crash-meta";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let (Some(dir), Some(threads)) = (args.get(1), args.get(2).and_then(|t| t.parse::<usize>().ok())) else {
        eprintln!("usage: sled-crash-committer <db dir> <threads>");
        return ExitCode::from(2);
    };
    match run(dir, threads) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("sled-crash-committer: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(dir: &str, threads: usize) -> Result<(), Box<dyn std::error::Error>> {
    let store = Arc::new(SledMetadataStore::open(dir)?);
    let loaded = store.load_all()?;
    let generation = loaded.groups.iter().find(|g| g.group_id == META_GROUP).map_or(0, |r| r.generation_id);
    // This run's epoch for every partition it writes: one past what it holds.
    let mut epochs = BTreeMap::new();
    for group in (0..threads).map(group_of).chain([META_GROUP.to_owned()]) {
        let p = store.partition_of(&group);
        if let std::collections::btree_map::Entry::Vacant(e) = epochs.entry(p) {
            e.insert(store.owner_epoch(p)?.next());
        }
    }
    println!("ready");

    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let store = store.clone();
            let group = group_of(t);
            let topic = format!("t{t}");
            let start = loaded
                .offsets
                .iter()
                .filter(|g| g.group_id == group)
                .flat_map(|g| (0..3).filter_map(|p| g.get(&topic, p).map(|o| o.offset)).collect::<Vec<_>>())
                .max()
                .unwrap_or(0);
            let meta = (t == 0).then(|| (generation, epochs[&store.partition_of(META_GROUP)]));
            let epoch = epochs[&store.partition_of(&group)];
            std::thread::spawn(move || commit_forever(&store, &group, &topic, start, epoch, meta))
        })
        .collect();
    for handle in handles {
        handle.join().map_err(|_| "a committer thread panicked")??;
    }
    Ok(())
}

/// Why a committer thread stopped.
#[derive(Debug, thiserror::Error)]
enum CommitterError {
    /// The store refused or failed an append.
    #[error("append failed: {0}")]
    Append(#[from] group_offsets::StorageError),
    /// Stdout, where acknowledgements go, failed (the test stopped reading).
    #[error("cannot report an acknowledgement: {0}")]
    Report(#[from] std::io::Error),
}

fn group_of(thread: usize) -> String {
    format!("crash-g{thread}")
}

fn value(topic: &str, partition: i32, offset: i64) -> OffsetAndMetadata {
    OffsetAndMetadata {
        offset,
        leader_epoch: Some(1),
        metadata: format!("{topic}/{partition}@{offset}").into(),
        commit_time: offset,
        expire_time: None,
    }
}

fn offset_record(group: &Arc<str>, topic: &str, partition: i32, offset: i64) -> Record {
    Record::Offset {
        group_id: group.clone(),
        partition: TopicPartition::new(topic, partition),
        offset: value(topic, partition, offset),
    }
}

fn append(
    store: &SledMetadataStore,
    partition: CoordinatorPartition,
    epoch: OwnerEpoch,
    records: Vec<Record>,
    out: &mut impl Write,
    announced: &mut bool,
) -> Result<(), CommitterError> {
    store.append_blocking(partition, epoch, records)?;
    if !*announced {
        *announced = true;
        writeln!(out, "E {} {}", partition.0, epoch.0)?;
    }
    Ok(())
}

fn commit_forever(
    store: &SledMetadataStore,
    group: &str,
    topic: &str,
    start: i64,
    epoch: OwnerEpoch,
    mut meta: Option<(i32, OwnerEpoch)>,
) -> Result<(), CommitterError> {
    let mut out = std::io::stdout();
    let id: Arc<str> = Arc::from(group);
    let meta_id: Arc<str> = Arc::from(META_GROUP);
    let partition = store.partition_of(group);
    let (mut announced, mut meta_announced) = (false, false);
    for n in start + 1.. {
        let pair = vec![offset_record(&id, topic, 0, n), offset_record(&id, topic, 1, n)];
        append(store, partition, epoch, pair, &mut out, &mut announced)?;
        writeln!(out, "O {group} {topic} 0 {n}\nO {group} {topic} 1 {n}")?;

        append(store, partition, epoch, vec![offset_record(&id, topic, 2, n)], &mut out, &mut announced)?;
        writeln!(out, "O {group} {topic} 2 {n}")?;

        if let Some((generation, meta_epoch)) = meta.as_mut().filter(|_| n % 5 == 0) {
            *generation += 1;
            let record = GroupMetadataRecord {
                group_id: META_GROUP.into(),
                protocol_type: Some("consumer".into()),
                generation_id: *generation,
                ..GroupMetadataRecord::default()
            };
            let records = vec![
                Record::Group(Box::new(record)),
                offset_record(&meta_id, "meta", 0, i64::from(*generation)),
            ];
            let p = store.partition_of(META_GROUP);
            append(store, p, *meta_epoch, records, &mut out, &mut meta_announced)?;
            writeln!(out, "G {META_GROUP} {generation}")?;
        }
    }
    Ok(())
}
