//! The workspace's automation, in the cargo-xtask style: `cargo xtask ci` runs
//! every check and test, `cargo xtask bench` the criterion benchmarks,
//! `cargo xtask bench wire` the wire benchmark of `group-server`,
//! `cargo xtask release` checks that the workspace could be published, and
//! `cargo xtask fuzz` runs a fuzz target (nightly and cargo-fuzz; never part of `ci`).

mod fuzz;
mod layers;
mod release;
mod tidy;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  ci        format, lints, tests, doc tests, docs, bench build and tidy checks
  bench     run the criterion benchmarks (extra arguments go to `cargo bench`)
  bench wire [--no-cluster] [ARGS]
            build group-server (with its cluster feature) and group-loadgen in
            release and run the wire benchmark against target/release/group-server;
            the durable scenarios run on sled and again on a cluster node over 3
            etcd members ($GROUP_ETCD_BIN, else the etcd of cluster-tools.sh);
            --no-cluster: sled only, no protoc or etcd needed (ARGS go to
            group-loadgen, e.g. --duration 3 --scenarios heartbeat,sweep)
  release   check crate versions agree and that `cargo package --workspace` succeeds
  fuzz <TARGET> [--runs N] [--time SECS] [-- LIBFUZZER_ARGS]
            run a fuzz target of fuzz/ (frame, consumer_protocol, sled_record)
            with `cargo +nightly fuzz run`; needs nightly and cargo-fuzz
  tidy      only the tidy checks

`ci` first unpacks Debian's protoc and etcd under target/tools (xtask/tools/cluster-tools.sh)
and builds with the cluster feature of group-server.";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("bench") if args.get(1).is_some_and(|a| a == "wire") => bench_wire(&args[2..]),
        Some("bench") => bench(&args[1..]),
        Some("release") => release::run(&root()),
        Some("fuzz") => fuzz::run(&root(), &args[1..]),
        Some("tidy") => tidy::run(&root()),
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("\nxtask: FAILED: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The workspace root: xtask lives one level below it.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask sits inside the workspace").to_path_buf()
}

/// Where `xtask/tools/cluster-tools.sh` put `protoc` and `etcd`, once [`cluster_tools`] ran.
static TOOLS: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// The features `ci` builds and tests with: everything, the cluster mode of
/// `group-server` included.
const FEATURES: [&str; 2] = ["--features", "group-server/cluster"];

fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(root());
    if let Some(bin) = TOOLS.get() {
        cmd.env("PROTOC", bin.join("protoc")).env("GROUP_ETCD_BIN", bin.join("etcd"));
    }
    cmd
}

/// Unpacks Debian's `protoc` (for etcd-client's build) and `etcd` (for the cluster
/// tests) under `target/tools`, once; later runs find them there.
fn cluster_tools() -> Result<(), String> {
    let script = root().join("xtask/tools/cluster-tools.sh");
    eprintln!("\n==> cluster tools (protoc, etcd) under target/tools");
    let out = Command::new("bash")
        .arg(&script)
        .arg(target_dir().join("tools"))
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("cluster-tools.sh: could not start: {e}"))?;
    if !out.status.success() {
        return Err(format!("cluster-tools.sh failed ({})", out.status));
    }
    let bin = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    let _ = TOOLS.set(bin);
    Ok(())
}

/// Runs one step, stopping the whole run at the first failure.
fn step(name: &str, mut cmd: Command) -> Result<(), String> {
    eprintln!("\n==> {name}");
    let started = std::time::Instant::now();
    let status = cmd.status().map_err(|e| format!("{name}: could not start: {e}"))?;
    eprintln!("==> {name}: {} in {:.1?}", if status.success() { "ok" } else { "FAILED" }, started.elapsed());
    if status.success() { Ok(()) } else { Err(format!("{name} ({status})")) }
}

fn has_nextest() -> bool {
    cargo()
        .args(["nextest", "--version"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn ci() -> Result<(), String> {
    let started = std::time::Instant::now();
    cluster_tools()?;
    step("tidy", {
        let mut c = cargo();
        c.args(["xtask", "tidy"]);
        c
    })?;
    step("cargo fmt --check", {
        let mut c = cargo();
        c.args(["fmt", "--all", "--", "--check"]);
        c
    })?;
    step("cargo clippy", {
        let mut c = cargo();
        c.args(["clippy", "--workspace"]).args(FEATURES).args(["--all-targets", "--", "-D", "warnings"]);
        c
    })?;
    // The README's main job builds group-server alone, without the features the rest of
    // the workspace turns on in its dependencies (kafka-protocol's `client`, for one):
    // it must build so too.
    step("cargo check -p group-server (alone)", {
        let mut c = cargo();
        c.args(["check", "-p", "group-server", "--bins"]);
        c
    })?;
    if has_nextest() {
        step("cargo nextest run", {
            let mut c = cargo();
            c.args(["nextest", "run", "--workspace"]).args(FEATURES).args(["--no-fail-fast"]);
            c
        })?;
        step("doc tests", {
            let mut c = cargo();
            c.args(["test", "--workspace"]).args(FEATURES).args(["--doc"]);
            c
        })?;
    } else {
        step("cargo test (unit, integration and doc tests)", {
            let mut c = cargo();
            c.args(["test", "--workspace"]).args(FEATURES);
            c
        })?;
    }
    step("cargo doc", {
        let mut c = cargo();
        c.args(["doc", "--workspace"]).args(FEATURES).args(["--no-deps"]).env("RUSTDOCFLAGS", "-D warnings");
        c
    })?;
    // The benches compile and link, in the dev profile: over what the tests built,
    // a minute instead of a release build of the workspace (seven on two cores).
    // `cargo xtask bench` builds and runs them optimised.
    step("cargo bench --no-run --profile dev", {
        let mut c = cargo();
        c.args(["bench", "--workspace"]).args(FEATURES).args(["--no-run", "--profile", "dev"]);
        c
    })?;
    eprintln!("\nxtask ci: all checks passed in {:.0?}", started.elapsed());
    Ok(())
}

fn bench(extra: &[String]) -> Result<(), String> {
    step("cargo bench", {
        let mut c = cargo();
        c.args(["bench", "--workspace"]);
        if !extra.is_empty() {
            c.arg("--").args(extra);
        }
        c
    })?;
    // Criterion leaves its medians under target/criterion; this prints the
    // scenario x assignor table and writes target/assignor-bench.svg.
    step("assignor bench report", {
        let mut c = cargo();
        c.args(["run", "--release", "-q", "-p", "group-assignors", "--example", "bench_report"]);
        c
    })
}

/// Where cargo puts its builds: `$CARGO_TARGET_DIR`, else `target/` at the root.
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root().join("target"), PathBuf::from)
}

fn bench_wire(args: &[String]) -> Result<(), String> {
    let cluster = !args.iter().any(|a| a == "--no-cluster");
    let extra: Vec<&String> = args.iter().filter(|a| *a != "--no-cluster").collect();
    // The cluster node needs etcd-client, whose build needs protoc: both come
    // from cluster-tools.sh, as for `ci`.
    let etcd = if cluster {
        cluster_tools()?;
        let tools_etcd = TOOLS.get().map(|bin| bin.join("etcd"));
        Some(std::env::var_os("GROUP_ETCD_BIN").map(PathBuf::from).or(tools_etcd).ok_or("no etcd binary")?)
    } else {
        None
    };
    step("cargo build --release (group-server, group-loadgen)", {
        let mut c = cargo();
        c.args(["build", "--release", "-p", "group-server", "-p", "group-loadgen", "--bins"]);
        if cluster {
            c.args(FEATURES);
        }
        c
    })?;
    // The generator spawns a fresh server per scenario (and etcd members for the
    // cluster rows), prints the table and writes wire-bench.json and
    // wire-bench.svg; later flags in `extra` win.
    let target = target_dir();
    let release = target.join("release");
    step("wire benchmark", {
        let mut c = Command::new(release.join("group-loadgen"));
        c.current_dir(root())
            .arg("--server")
            .arg(release.join("group-server"))
            .arg("--work-dir")
            .arg(target.join("wire-bench"))
            .arg("--json")
            .arg(target.join("wire-bench.json"))
            .arg("--svg")
            .arg(target.join("wire-bench.svg"));
        if let Some(etcd) = etcd {
            c.arg("--etcd").arg(etcd);
        }
        c.args(extra);
        c
    })
}
