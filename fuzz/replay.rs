//! The kept crash inputs and seeds of every fuzz target, as files: shared by the
//! crates' stable replay tests (`fuzzing::tests` in each), which include this file
//! with `#[path]`. Test-only, so that no library crate reads files for fuzzing.

use std::path::{Path, PathBuf};

/// Every file of `dir` but its README, sorted; none when it does not exist: the kept
/// crash inputs or the seeds of a target.
pub(crate) fn inputs(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.file_name().is_some_and(|n| n != "README.md"))
        .collect();
    files.sort();
    files.into_iter().map(|p| (p.clone(), std::fs::read(&p).expect("a readable input"))).collect()
}

/// Asserts that `dir` holds exactly `seeds` (by name), rewriting them first when
/// `GROUP_FUZZ_WRITE_SEEDS` is set: the committed seeds stay what the code makes.
pub(crate) fn check_seeds(dir: &Path, seeds: Vec<(String, Vec<u8>)>) {
    let write = std::env::var_os("GROUP_FUZZ_WRITE_SEEDS").is_some();
    for (name, bytes) in seeds {
        let path = dir.join(&name);
        if write {
            std::fs::create_dir_all(dir).expect("seed dir");
            std::fs::write(&path, &bytes).expect("seed written");
        }
        let committed = std::fs::read(&path).unwrap_or_default();
        assert_eq!(committed, bytes, "{} is stale: rerun with GROUP_FUZZ_WRITE_SEEDS=1", path.display());
    }
}
