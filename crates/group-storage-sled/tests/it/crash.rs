//! The crash test: `sled-crash-committer` appends from several threads and
//! prints every acknowledged append; we SIGKILL it at random moments, reopen
//! the store and check that every acknowledged append is there (offsets,
//! group records and owner epochs), that nothing went backwards, that
//! multi-record appends were atomic and that every value is intact.
//!
//! Kill moments are random: after a random number of acknowledgements (the
//! child keeps committing while we read them), or right after spawning, while
//! the store is still recovering from the previous kill. Every trial reuses
//! one directory, so each run recovers from the previous crash. Set
//! `SLED_CRASH_SEED` to replay a failing seed.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, SystemTime};

use group_offsets::{CoordinatorPartition, MetadataStore};
use group_storage_sled::SledMetadataStore;

use crate::common::ScratchDir;

const TRIALS: usize = 24;
const THREADS: usize = 4;
/// A trial whose child acknowledges nothing for this long fails (bounds the test).
const STALL_LIMIT: Duration = Duration::from_secs(20);

/// (group, topic, partition) -> offset.
type Offsets = BTreeMap<(String, String, i32), i64>;

/// xorshift64*: enough randomness for kill moments, replayable from a seed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

/// What one run of the child acknowledged.
#[derive(Debug, Default)]
struct Acks {
    offsets: Offsets,
    generation: i32,
    /// Coordinator partition -> the highest acknowledged epoch.
    epochs: BTreeMap<u32, u64>,
    lines: usize,
}

impl Acks {
    fn record(&mut self, line: &str) {
        let fields: Vec<&str> = line.split(' ').collect();
        match fields.as_slice() {
            ["ready"] => {}
            ["E", partition, epoch] => {
                let acked = self.epochs.entry(partition.parse().expect("partition")).or_default();
                *acked = (*acked).max(epoch.parse().expect("epoch"));
            }
            ["O", group, topic, partition, offset] => {
                let key = (group.to_string(), topic.to_string(), partition.parse().expect("partition"));
                let offset: i64 = offset.parse().expect("offset");
                let acked = self.offsets.entry(key).or_default();
                *acked = (*acked).max(offset);
                self.lines += 1;
            }
            ["G", _, generation] => {
                self.generation = self.generation.max(generation.parse().expect("generation"));
                self.lines += 1;
            }
            _ => panic!("unexpected line from the child: {line:?}"),
        }
    }
}

/// Runs the child until it has acknowledged `kill_after` writes (or not at
/// all when `None`), SIGKILLs it and returns everything it acknowledged.
fn run_and_kill(db: &std::path::Path, kill_after: Option<usize>) -> Acks {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sled-crash-committer"))
        .arg(db)
        .arg(THREADS.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the crash committer");
    let stdout = child.stdout.take().expect("piped stdout");
    let (tx, rx) = mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match reader.read_until(b'\n', &mut buf) {
                // A line cut short by the kill was never fully printed: not an ack.
                Ok(0) | Err(_) => return,
                Ok(_) if buf.last() != Some(&b'\n') => return,
                Ok(_) => {
                    let line = String::from_utf8_lossy(&buf[..buf.len() - 1]).into_owned();
                    if tx.send(line).is_err() {
                        return;
                    }
                }
            }
        }
    });

    let mut acks = Acks::default();
    if let Some(kill_after) = kill_after {
        while acks.lines < kill_after {
            match rx.recv_timeout(STALL_LIMIT) {
                Ok(line) => acks.record(&line),
                Err(_) => {
                    let _ = child.kill();
                    let output = child.wait_with_output().expect("wait for the child");
                    panic!(
                        "the child stalled or died after {} acks: {}",
                        acks.lines,
                        String::from_utf8_lossy(&output.stderr)
                    );
                }
            }
        }
    }
    child.kill().expect("SIGKILL the child");
    child.wait().expect("reap the child");
    // Lines the child printed before dying are acknowledgements too.
    reader.join().expect("reader thread");
    for line in rx.try_iter() {
        acks.record(&line);
    }
    acks
}

#[test]
fn acknowledged_commits_survive_sigkill() {
    let seed = std::env::var("SLED_CRASH_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64) | 1
    });
    let mut rng = Rng(seed);
    let dir = ScratchDir::new("crash");
    let mut acked = Offsets::new();
    let mut acked_generation = 0;
    let mut acked_epochs = BTreeMap::<u32, u64>::new();
    let mut seen = Offsets::new();
    let mut total_acks = 0;

    for trial in 0..TRIALS {
        let kill_after = match rng.below(8) {
            0 => None,
            _ => Some(1 + rng.below(120) as usize),
        };
        let acks = run_and_kill(&dir.db(), kill_after);
        total_acks += acks.lines;
        for (key, offset) in acks.offsets {
            let best = acked.entry(key).or_default();
            *best = (*best).max(offset);
        }
        acked_generation = acked_generation.max(acks.generation);
        for (partition, epoch) in acks.epochs {
            let best = acked_epochs.entry(partition).or_default();
            *best = (*best).max(epoch);
        }

        let context = format!("seed {seed}, trial {trial}, kill after {kill_after:?}");
        let store = SledMetadataStore::open(dir.db()).unwrap_or_else(|e| panic!("{context}: reopen: {e}"));
        let loaded = store.load_all().unwrap_or_else(|e| panic!("{context}: load_all: {e}"));
        let mut now = Offsets::new();
        for group in &loaded.offsets {
            for (topic, partitions) in &group.offsets {
                for (partition, value) in partitions {
                    assert_eq!(
                        value.metadata,
                        format!("{topic}/{partition}@{}", value.offset),
                        "{context}: torn value"
                    );
                    assert_eq!(value.commit_time, value.offset, "{context}: torn value");
                    now.insert((group.group_id.clone(), topic.clone(), *partition), value.offset);
                }
                // Partitions 0 and 1 are only ever committed together.
                if topic == "meta" {
                    continue;
                }
                assert_eq!(
                    partitions.get(&0).map(|v| v.offset),
                    partitions.get(&1).map(|v| v.offset),
                    "{context}: a multi-partition commit was torn in {}/{topic}",
                    group.group_id
                );
            }
        }
        for (key, offset) in &acked {
            let stored = now.get(key).copied();
            assert!(stored >= Some(*offset), "{context}: acknowledged {key:?} at {offset}, found {stored:?}");
        }
        for (key, offset) in &seen {
            let stored = now.get(key).copied();
            assert!(stored >= Some(*offset), "{context}: {key:?} went back from {offset} to {stored:?}");
        }
        let generation =
            loaded.groups.iter().find(|g| g.group_id == "crash-meta").map_or(0, |g| g.generation_id);
        assert!(
            generation >= acked_generation,
            "{context}: generation {acked_generation} acknowledged, {generation} found"
        );
        // The group record and its offset are one append.
        let meta_offset = now.get(&("crash-meta".to_owned(), "meta".to_owned(), 0)).copied().unwrap_or(0);
        assert_eq!(
            meta_offset,
            i64::from(generation),
            "{context}: a group record and offset append was torn"
        );
        for (partition, epoch) in &acked_epochs {
            let stored = store.owner_epoch(CoordinatorPartition(*partition)).expect("owner_epoch").0;
            assert!(
                stored >= *epoch,
                "{context}: epoch {epoch} of partition {partition} acknowledged, {stored} found"
            );
        }
        seen = now;
    }
    assert!(total_acks >= TRIALS, "seed {seed}: only {total_acks} acknowledgements in {TRIALS} trials");
    assert!(!acked.is_empty());
    assert!(!acked_epochs.is_empty());
}
