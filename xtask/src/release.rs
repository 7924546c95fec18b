//! `cargo xtask release`: the workspace's crates agree on their versions and
//! package cleanly: every crate builds from its own packaged sources (cargo
//! stages unpublished workspace crates in a local registry). Nothing is published.

use std::fs;
use std::path::Path;
use std::process::Command;

/// Checks versions, then runs `cargo package --workspace`.
pub(crate) fn run(root: &Path) -> Result<(), String> {
    let manifest = fs::read_to_string(root.join("Cargo.toml")).map_err(|e| e.to_string())?;
    let workspace_version = workspace_version(&manifest).ok_or("no [workspace.package] version")?;
    let mut problems = Vec::new();
    for (name, pinned) in internal_dependencies(&manifest) {
        if pinned != workspace_version {
            problems.push(format!(
                "[workspace.dependencies] {name} pins {pinned}, the workspace is {workspace_version}"
            ));
        }
    }
    let crates = root.join("crates");
    let entries = fs::read_dir(&crates).map_err(|e| format!("{}: {e}", crates.display()))?;
    for entry in entries.flatten() {
        let path = entry.path().join("Cargo.toml");
        let Ok(text) = fs::read_to_string(&path) else { continue };
        if !text.contains("version.workspace = true") {
            problems.push(format!("{}: does not take the workspace version", path.display()));
        }
    }
    if !problems.is_empty() {
        return Err(format!("version check failed:\n  {}", problems.join("\n  ")));
    }
    eprintln!("release: every crate is at {workspace_version}");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(root)
        // Neither is published (`publish = false`): nothing to package.
        .args(["package", "--workspace", "--allow-dirty", "--exclude", "xtask", "--exclude", "group-loadgen"])
        .status()
        .map_err(|e| e.to_string())?;
    if status.success() { Ok(()) } else { Err(format!("cargo package ({status})")) }
}

fn section<'a>(manifest: &'a str, header: &str) -> impl Iterator<Item = &'a str> {
    manifest
        .lines()
        .skip_while(move |l| l.trim() != header)
        .skip(1)
        .take_while(|l| !l.trim_start().starts_with('['))
}

fn workspace_version(manifest: &str) -> Option<String> {
    section(manifest, "[workspace.package]").find_map(|l| {
        l.trim()
            .strip_prefix("version")
            .map(|r| r.trim_start_matches([' ', '=']).trim_matches('"').to_owned())
    })
}

/// `(name, version)` of every `[workspace.dependencies]` entry with a `path`.
fn internal_dependencies(manifest: &str) -> Vec<(String, String)> {
    section(manifest, "[workspace.dependencies]")
        .filter(|l| l.contains("path ="))
        .filter_map(|l| {
            let name = l.split('=').next()?.trim().to_owned();
            let version = l.split("version").nth(1)?.split('"').nth(1)?.to_owned();
            Some((name, version))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MANIFEST: &str = r#"
[workspace.package]
version = "0.3.0"

[workspace.dependencies]
group-types = { path = "crates/group-types", version = "0.3.0" }
group-offsets = { path = "crates/group-offsets", version = "0.2.0" }
serde = "1"
"#;

    #[test]
    fn reads_the_workspace_version() {
        assert_eq!(workspace_version(MANIFEST).as_deref(), Some("0.3.0"));
    }

    #[test]
    fn finds_internal_dependency_pins() {
        let deps = internal_dependencies(MANIFEST);
        assert_eq!(deps, [("group-types".into(), "0.3.0".into()), ("group-offsets".into(), "0.2.0".into())]);
    }
}
