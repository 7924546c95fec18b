//! The layering invariants of `docs/ARCHITECTURE.md` that a grep can check:
//! no async runtime or etcd client below the server and store crates, no library
//! crate that starts a tokio runtime, no `Result<_, String>` across modules, no
//! decision taken by searching an error's text, and a `group-types` that does no
//! I/O. Each reads only the code before a file's first
//! `#[cfg(test)]` (tests may do anything) and skips `*_tests.rs`, `tests/`,
//! `benches/`, `examples/` and `bin/`.

use std::fs;
use std::path::{Path, PathBuf};

/// The crates under the server and store crates: pure or sans-I/O, with no async
/// runtime, storage engine or etcd client among their `[dependencies]`.
const LOWER_CRATES: [&str; 6] = [
    "group-types",
    "group-assignors",
    "group-offsets",
    "group-share-coordinator",
    "group-share-partition",
    "group-coordinator",
];

/// What the lower crates may not depend on (dev-dependencies may).
const LOWER_FORBIDDEN_DEPS: [&str; 4] = ["tokio", "etcd-client", "sled", "kafka-protocol"];

/// What a lower crate may still name as an optional dependency, behind a feature a
/// front end turns on: the wire codec, which is pure code (group-types' `wire`), so
/// that a broker embedding the coordinator without it never compiles it.
const OPTIONAL_ALLOWED: [&str; 1] = ["kafka-protocol"];

/// Calls that start a tokio runtime.
const RUNTIME_STARTS: [&str; 3] = ["new_multi_thread()", "new_current_thread()", "Runtime::new("];

/// The one place a runtime is started: the node, `group-server`, which builds the
/// one runtime its binary runs on (`GroupServer::runtime`); every other crate takes
/// its caller's.
const RUNTIME_OWNERS: [&str; 2] = ["crates/group-server/src/main.rs", "crates/group-server/src/server.rs"];

/// How code searches a message's text: a decision taken that way breaks the
/// day the message is reworded (a variant, a kind or a probe decides instead).
const TEXT_MATCHES: [&str; 2] = ["to_string().contains(", "to_string().starts_with("];

/// What a pure crate's code may not name.
const IMPURE: [&str; 7] =
    ["std::fs", "std::net", "std::thread", "std::process", "SystemTime", "Instant::now", "tokio"];

/// Every layering problem of the workspace, one line each.
pub(crate) fn check(root: &Path, files: &[PathBuf]) -> Result<Vec<String>, String> {
    let mut problems = Vec::new();
    for krate in LOWER_CRATES {
        let manifest = root.join("crates").join(krate).join("Cargo.toml");
        let text = fs::read_to_string(&manifest).map_err(|e| format!("{}: {e}", manifest.display()))?;
        for dep in forbidden_dependencies(&text) {
            problems.push(format!("{}: `{dep}` in [dependencies] of a lower crate", manifest.display()));
        }
    }
    for file in files {
        let relative = file.strip_prefix(root).unwrap_or(file).to_string_lossy().replace('\\', "/");
        if !is_library_code(&relative) {
            continue;
        }
        let text = fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
        let code = before_tests(&text);
        let owns_runtime =
            RUNTIME_OWNERS.contains(&relative.as_str()) || relative.starts_with("crates/group-loadgen/");
        for (n, line) in code.lines().enumerate() {
            let line = line.split("//").next().unwrap_or("");
            if !owns_runtime && RUNTIME_STARTS.iter().any(|call| line.contains(call)) {
                problems.push(format!("{relative}: line {}: a library starts a tokio runtime", n + 1));
            }
            if returns_string_error(line) {
                problems.push(format!("{relative}: line {}: `Result<_, String>` across modules", n + 1));
            }
            if decides_by_text(line) {
                problems.push(format!("{relative}: line {}: a decision by an error's text", n + 1));
            }
            let impure = IMPURE.iter().find(|name| line.contains(*name));
            if let Some(name) = impure.filter(|_| relative.starts_with("crates/group-types/")) {
                problems.push(format!("{relative}: line {}: group-types names `{name}`", n + 1));
            }
        }
    }
    Ok(problems)
}

/// True when `line` searches a message's text ([`TEXT_MATCHES`]).
fn decides_by_text(line: &str) -> bool {
    TEXT_MATCHES.iter().any(|call| line.contains(call))
}

/// The names of forbidden crates in a manifest's `[dependencies]` table.
fn forbidden_dependencies(manifest: &str) -> Vec<&'static str> {
    let mut in_dependencies = false;
    let mut found = Vec::new();
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_dependencies = line == "[dependencies]";
            continue;
        }
        if !in_dependencies {
            continue;
        }
        let name = line.split(['=', '.', ' ']).next().unwrap_or("");
        let optional = line.contains("optional = true") && OPTIONAL_ALLOWED.contains(&name);
        if let Some(dep) = LOWER_FORBIDDEN_DEPS.iter().find(|d| **d == name && !optional) {
            found.push(*dep);
        }
    }
    found
}

/// Library source: a crate's `src/`, but not its tests, binaries or test helpers.
fn is_library_code(relative: &str) -> bool {
    relative.starts_with("crates/")
        && relative.contains("/src/")
        && !relative.contains("/src/bin/")
        && !relative.ends_with("_tests.rs")
}

/// The text before the first `#[cfg(test)]`.
fn before_tests(text: &str) -> &str {
    text.find("#[cfg(test)]").map_or(text, |at| &text[..at])
}

/// Whether a line declares a function that other modules can call and that
/// returns `Result<_, String>`.
fn returns_string_error(line: &str) -> bool {
    let visible = ["pub fn ", "pub(crate) fn ", "pub(super) fn ", "pub async fn ", "pub(crate) async fn "];
    if !visible.iter().any(|v| line.contains(v)) {
        return false;
    }
    line.split_once("-> Result<").is_some_and(|(_, ret)| ret.contains(", String>"))
}

#[cfg(test)]
mod tests {
    use super::{
        before_tests, decides_by_text, forbidden_dependencies, is_library_code, returns_string_error,
    };

    #[test]
    fn finds_a_runtime_dependency_only_in_dependencies() {
        let manifest =
            "[dependencies]\ntokio.workspace = true\nbytes = \"1\"\n\n[dev-dependencies]\nsled = \"0.34\"\n";
        assert_eq!(forbidden_dependencies(manifest), ["tokio"]);
        assert!(forbidden_dependencies("[dev-dependencies]\ntokio = \"1\"\n").is_empty());
    }

    #[test]
    fn allows_only_the_wire_codec_as_an_optional_dependency() {
        let manifest = "[dependencies]\nkafka-protocol = { workspace = true, optional = true }\n\
                        tokio = { workspace = true, optional = true }\n";
        assert_eq!(forbidden_dependencies(manifest), ["tokio"]);
        assert_eq!(
            forbidden_dependencies("[dependencies]\nkafka-protocol.workspace = true\n"),
            ["kafka-protocol"]
        );
    }

    #[test]
    fn finds_string_errors_on_visible_functions_only() {
        assert!(returns_string_error("pub(crate) fn parse(x: &str) -> Result<u8, String> {"));
        assert!(returns_string_error("    pub fn start() -> Result<Vec<(u8, u8)>, String> {"));
        assert!(!returns_string_error("fn parse(x: &str) -> Result<u8, String> {"));
        assert!(!returns_string_error("pub fn parse(x: &str) -> Result<u8, ParseError> {"));
    }

    #[test]
    fn finds_decisions_by_an_errors_text() {
        assert!(decides_by_text(r#"Err(e) if e.to_string().contains("compacted") => {"#));
        assert!(decides_by_text(r#"if error.to_string().starts_with("lock") {"#));
        assert!(!decides_by_text(r#"Err(e) if is_compacted(&e) => {"#));
    }

    #[test]
    fn reads_library_code_before_its_tests() {
        assert_eq!(before_tests("//! a\nfn f() {}\n#[cfg(test)]\nmod tests {}\n"), "//! a\nfn f() {}\n");
        assert!(is_library_code("crates/group-types/src/ids.rs"));
        assert!(!is_library_code("crates/group-types/tests/it/main.rs"));
        assert!(!is_library_code("crates/group-server/src/node_tests.rs"));
        assert!(!is_library_code("crates/group-storage-sled/src/bin/crash.rs"));
    }
}
