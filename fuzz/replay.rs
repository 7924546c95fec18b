//! The kept crash inputs and seeds of every fuzz target, as files: shared by the
//! crates' stable replay tests (`fuzzing::tests` in each), which include this file
//! with `#[path]`. Test-only, so that no library crate reads files for fuzzing.

use std::path::{Path, PathBuf};

/// One fuzz target's files: its kept crash inputs (the crate's
/// `tests/fuzz-regressions/<name>`) and its seeds (`fuzz/seeds/<name>`).
pub(crate) struct Target {
    regressions: PathBuf,
    seeds: PathBuf,
}

impl Target {
    /// The target `name` of the crate whose manifest directory is `crate_dir` (a crate
    /// directly under `crates/`).
    pub(crate) fn new(crate_dir: &str, name: &str) -> Target {
        let crate_dir = Path::new(crate_dir);
        Target {
            regressions: crate_dir.join("tests/fuzz-regressions").join(name),
            seeds: crate_dir.join("../../fuzz/seeds").join(name),
        }
    }

    /// Runs `check` on every kept crash input and seed (of which there must be at least
    /// `seeds`) and, with `prefixes`, on every prefix of each: a torn input is the
    /// commonest corruption, and the fuzzer's commonest mutation.
    pub(crate) fn replay(&self, seeds: usize, prefixes: bool, check: impl Fn(&[u8])) {
        let files: Vec<_> = inputs(&self.regressions).into_iter().chain(inputs(&self.seeds)).collect();
        assert!(files.len() >= seeds, "seeds missing from {}", self.seeds.display());
        for (path, bytes) in files {
            // A panic names the input through the test's output; say which one first.
            eprintln!("replaying {}", path.display());
            check(&bytes);
            if prefixes {
                (0..bytes.len()).for_each(|n| check(&bytes[..n]));
            }
        }
    }

    /// Asserts that the committed seeds are exactly `seeds` (by name), rewriting them
    /// first when `GROUP_FUZZ_WRITE_SEEDS` is set: they stay what the code makes.
    pub(crate) fn check_seeds(&self, seeds: Vec<(String, Vec<u8>)>) {
        let write = std::env::var_os("GROUP_FUZZ_WRITE_SEEDS").is_some();
        for (name, bytes) in seeds {
            let path = self.seeds.join(&name);
            if write {
                std::fs::create_dir_all(&self.seeds).expect("seed dir");
                std::fs::write(&path, &bytes).expect("seed written");
            }
            let committed = std::fs::read(&path).unwrap_or_default();
            assert_eq!(committed, bytes, "{} is stale: rerun with GROUP_FUZZ_WRITE_SEEDS=1", path.display());
        }
    }
}

/// Every file of `dir` but its README, sorted; none when it does not exist.
fn inputs(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.file_name().is_some_and(|n| n != "README.md"))
        .collect();
    files.sort();
    files.into_iter().map(|p| (p.clone(), std::fs::read(&p).expect("a readable input"))).collect()
}
