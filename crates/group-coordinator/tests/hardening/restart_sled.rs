//! The restart test on disk: a coordinator over `group-storage-sled` with a
//! Stable group and committed offsets is stopped and dropped, and a new one
//! opened on the same directory brings the group and its offsets back.

use std::path::PathBuf;
use std::sync::Arc;

use group_coordinator::{GroupCoordinator, ManualClock};
use group_storage_sled::SledMetadataStore;
use group_types::{ErrorCode, GroupState};

use crate::restart::{SESSION_MS, commit_owned, config, durable, fetched, form_group, hb};

/// A directory of its own under the system's temporary directory, removed on drop.
struct DataDir(PathBuf);

impl DataDir {
    fn new(name: &str) -> DataDir {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
        let dir =
            std::env::temp_dir().join(format!("group-coordinator-{name}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        DataDir(dir)
    }
}

impl Drop for DataDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn open(dir: &DataDir, clock: &Arc<ManualClock>) -> GroupCoordinator {
    let store = SledMetadataStore::open(&dir.0).expect("the sled store opens");
    GroupCoordinator::with_clock(Arc::new(store), config(), clock.clone()).expect("the coordinator opens")
}

#[test]
fn a_stable_group_and_its_offsets_survive_a_restart_on_sled() {
    let dir = DataDir::new("sled-restart");
    let clock = Arc::new(ManualClock::new(1_000));
    let first = open(&dir, &clock);
    let clients = form_group(&first, &clock, "g", &[None, Some("static-1")]);
    let mut committed = std::collections::BTreeMap::new();
    for (i, cl) in clients.iter().enumerate() {
        committed.extend(commit_owned(&first, "g", cl, 1_000 * (i as i64 + 1)));
    }
    let before = first.get_group("g").unwrap();
    first.stop();
    drop(first);

    let clock = Arc::new(ManualClock::new(50_000));
    let second = open(&dir, &clock);
    let after = second.get_group("g").expect("the group is loaded from disk");
    assert_eq!(after.state, GroupState::Stable);
    assert_eq!(durable(&after), durable(&before));
    assert_eq!(fetched(&second, "g"), committed, "every acknowledged commit is on disk");
    // Members that keep heartbeating carry on in the loaded generation.
    for cl in &clients {
        assert_eq!(hb(&second, cl), ErrorCode::None, "{} heartbeats after the restart", cl.id);
    }
    clock.advance(i64::from(SESSION_MS) - 1);
    for cl in &clients {
        assert_eq!(hb(&second, cl), ErrorCode::None);
    }
    assert_eq!(second.get_group("g").unwrap().generation_id, before.generation_id, "no rebalance");
    second.stop();
}
