//! `FileGroupConfigStore`: a durable node's per-group configs (IncrementalAlterConfigs
//! of GROUP resources), kept as one JSON file in its data directory
//! (`<data-dir>/group-configs.json`, a map of group id to config name to value).
//!
//! Kafka keeps these as `ConfigRecord`s in its metadata log; the coordinator partitions'
//! record codec has no such record, so they sit beside it until it does. Every change
//! rewrites the file whole (they are few and small): written to a temporary file,
//! synced, renamed over the old one and the directory synced, so a crash leaves the
//! old file or the new one, never a torn one.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use group_coordinator::{GroupConfigProps, GroupConfigStore, GroupConfigStoreError};

/// Every group's configs, kept in a file (see the module docs).
#[derive(Debug)]
pub struct FileGroupConfigStore {
    path: PathBuf,
    groups: Mutex<BTreeMap<String, GroupConfigProps>>,
}

impl FileGroupConfigStore {
    /// The store in `path`: what it holds, or nothing when there is no file yet.
    pub fn open(path: impl Into<PathBuf>) -> Result<FileGroupConfigStore, GroupConfigStoreError> {
        let path = path.into();
        let groups = match fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map_err(|e| GroupConfigStoreError::Corrupt(format!("{}: {e}", path.display())))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
            Err(e) => return Err(e.into()),
        };
        Ok(FileGroupConfigStore { path, groups: Mutex::new(groups) })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn write(&self, groups: &BTreeMap<String, GroupConfigProps>) -> Result<(), GroupConfigStoreError> {
        let bytes = serde_json::to_vec_pretty(groups)
            .map_err(|e| GroupConfigStoreError::Corrupt(format!("cannot encode the group configs: {e}")))?;
        let tmp = self.path.with_extension("json.tmp");
        let mut file = fs::File::create(&tmp)?;
        file.write_all(&bytes)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, &self.path)?;
        // The rename is durable once the directory is.
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::File::open(dir)?.sync_all()?;
        }
        Ok(())
    }
}

impl GroupConfigStore for FileGroupConfigStore {
    fn load(&self) -> Result<BTreeMap<String, GroupConfigProps>, GroupConfigStoreError> {
        Ok(self.groups.lock().unwrap_or_else(PoisonError::into_inner).clone())
    }

    fn store(&self, group_id: &str, configs: &GroupConfigProps) -> Result<(), GroupConfigStoreError> {
        let mut groups = self.groups.lock().unwrap_or_else(PoisonError::into_inner);
        let mut next = groups.clone();
        if configs.is_empty() {
            next.remove(group_id);
        } else {
            next.insert(group_id.to_owned(), configs.clone());
        }
        // Memory changes only once the file has.
        self.write(&next)?;
        *groups = next;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("group-config-file-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).expect("temp dir");
        dir
    }

    #[test]
    fn what_is_stored_is_read_back_by_the_next_store() {
        let dir = dir("round-trip");
        let path = dir.join("group-configs.json");
        let store = FileGroupConfigStore::open(&path).expect("opens without a file");
        assert!(store.load().expect("loads").is_empty());
        let configs: GroupConfigProps =
            [("consumer.session.timeout.ms".to_owned(), "50000".to_owned())].into();
        store.store("g", &configs).expect("stores");
        store.store("h", &configs).expect("stores");
        store.store("h", &GroupConfigProps::new()).expect("removes");
        let again = FileGroupConfigStore::open(&path).expect("reopens");
        assert_eq!(again.load().expect("loads"), BTreeMap::from([("g".to_owned(), configs)]));
        assert!(!path.with_extension("json.tmp").exists(), "no temporary file left");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_file_that_is_not_the_stores_is_corrupt() {
        let dir = dir("corrupt");
        let path = dir.join("group-configs.json");
        fs::write(&path, b"{not json").expect("writes");
        let error = FileGroupConfigStore::open(&path).expect_err("refused");
        assert!(matches!(error, GroupConfigStoreError::Corrupt(_)), "{error:?}");
        let _ = fs::remove_dir_all(&dir);
    }
}
