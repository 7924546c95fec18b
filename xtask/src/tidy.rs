//! Tidy checks: every Rust file (in crates/, xtask/ and the fuzz targets in
//! fuzz/) opens with a `//!` line, and delivered code holds no `todo!`, `dbg!`
//! or `unimplemented!`; and the invariants of `docs/ARCHITECTURE.md` that a
//! grep can check (`layers.rs`).

use std::fs;
use std::path::{Path, PathBuf};

/// Runs every tidy check over the workspace's Rust files.
pub(crate) fn run(root: &Path) -> Result<(), String> {
    let mut files = Vec::new();
    for dir in ["crates", "xtask", "fuzz"] {
        collect_rust_files(&root.join(dir), &mut files);
    }
    let mut problems = crate::layers::check(root, &files)?;
    for file in &files {
        let text = fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
        problems.extend(check_file(&text).into_iter().map(|p| format!("{}: {p}", file.display())));
    }
    if problems.is_empty() {
        eprintln!("tidy: {} files clean", files.len());
        Ok(())
    } else {
        Err(format!("tidy found {} problem(s):\n  {}", problems.len(), problems.join("\n  ")))
    }
}

fn collect_rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n == "target") {
                continue;
            }
            collect_rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out.sort();
}

// Built by concatenation so this file does not trip its own check.
fn forbidden_macros() -> [String; 3] {
    ["todo", "dbg", "unimplemented"].map(|m| format!("{m}!("))
}

/// The problems of one file's text.
fn check_file(text: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if !text.trim_start().starts_with("//!") {
        problems.push("does not open with a `//!` doc line".to_owned());
    }
    let forbidden = forbidden_macros();
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        for mac in &forbidden {
            if code.contains(mac.as_str()) {
                problems.push(format!("line {}: `{}` in delivered code", n + 1, mac.trim_end_matches('(')));
            }
        }
        if line.ends_with(' ') || line.ends_with('\t') {
            problems.push(format!("line {}: trailing whitespace", n + 1));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::check_file;

    #[test]
    fn accepts_a_documented_file() {
        assert!(check_file("//! Does a thing.\nfn main() {}\n").is_empty());
    }

    #[test]
    fn rejects_a_missing_module_doc() {
        assert_eq!(check_file("fn main() {}\n").len(), 1);
    }

    #[test]
    fn rejects_forbidden_macros() {
        let text = format!("//! Doc.\nfn f() {{ {}!() }}\n", "todo");
        let problems = check_file(&text);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("line 2"));
    }

    #[test]
    fn rejects_trailing_whitespace() {
        assert_eq!(check_file("//! Doc. \n").len(), 1);
    }
}
