//! Helper for the crash test (`tests/it/crash.rs`): commits offsets to a
//! `SledMetadataStore` from several threads and prints every acknowledged
//! write, until the test kills it with SIGKILL.
//!
//! Usage: `sled-crash-committer <db dir> <threads>`. It continues from what the
//! store already holds, so successive runs on one directory keep moving
//! forward. Output lines (each printed only after the store returned `Ok`):
//!
//! - `ready` once the store is open;
//! - `O <group> <topic> <partition> <offset>` for an acknowledged offset;
//! - `G <group> <generation>` for an acknowledged group record.
//!
//! Each thread owns one topic. Iteration `n` commits offset `n` to partitions
//! 0 and 1 in one atomic call, then offset `n` to partition 2 alone; every
//! stored value's metadata is `<topic>/<partition>@<offset>` and its commit
//! time is the offset, so the test can spot torn or mixed-up values.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use group_offsets::{GroupMetadataRecord, MetadataStore};
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
    let generation = store.fetch_group_metadata(META_GROUP)?.map_or(0, |r| r.generation_id);
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
            let meta = (t == 0).then_some(generation);
            std::thread::spawn(move || commit_forever(&store, &group, &topic, start, meta))
        })
        .collect();
    for handle in handles {
        handle.join().map_err(|_| "a committer thread panicked")??;
    }
    Ok(())
}

fn group_of(thread: usize) -> String {
    format!("crash-g{}", thread % 2)
}

fn value(topic: &str, partition: i32, offset: i64) -> OffsetAndMetadata {
    OffsetAndMetadata {
        offset,
        leader_epoch: Some(1),
        metadata: format!("{topic}/{partition}@{offset}"),
        commit_time: offset,
        expire_time: None,
    }
}

fn commit_forever(
    store: &SledMetadataStore,
    group: &str,
    topic: &str,
    start: i64,
    mut generation: Option<i32>,
) -> Result<(), String> {
    let tp = |p: i32| TopicPartition { topic: topic.into(), partition: p };
    let mut out = std::io::stdout();
    for n in start + 1.. {
        let pair = [(tp(0), value(topic, 0, n)), (tp(1), value(topic, 1, n))];
        store.store_group_offsets(group, &pair).map_err(|e| e.to_string())?;
        writeln!(out, "O {group} {topic} 0 {n}\nO {group} {topic} 1 {n}").map_err(|e| e.to_string())?;

        store.store_group_offset(group, topic, 2, &value(topic, 2, n)).map_err(|e| e.to_string())?;
        writeln!(out, "O {group} {topic} 2 {n}").map_err(|e| e.to_string())?;

        if let Some(generation) = generation.as_mut().filter(|_| n % 5 == 0) {
            *generation += 1;
            let record = GroupMetadataRecord {
                group_id: META_GROUP.to_owned(),
                protocol_type: Some("consumer".to_owned()),
                generation_id: *generation,
                ..GroupMetadataRecord::default()
            };
            store.store_group_metadata(&record).map_err(|e| e.to_string())?;
            writeln!(out, "G {META_GROUP} {generation}").map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}
