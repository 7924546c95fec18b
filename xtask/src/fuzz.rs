//! `cargo xtask fuzz <target> [--runs N] [--time SECS] [-- ARGS]`: runs one fuzz
//! target of `fuzz/` with `cargo +nightly fuzz run`.
//!
//! Fuzzing needs a nightly toolchain and cargo-fuzz, which `cargo xtask ci` never does:
//! CI replays the kept crash inputs and the seeds as ordinary stable tests. So this
//! checks for both first and says how to install what is missing.
//!
//! The run grows `fuzz/corpus/<target>/` (git-ignored) and also reads the committed
//! seeds in `fuzz/seeds/<target>/`; libFuzzer writes new inputs only to the first
//! directory, so the seeds stay as committed. A crash is written to
//! `fuzz/artifacts/<target>/`: fix it, then copy the input to the crate's
//! `tests/fuzz-regressions/<target>/` so the stable tests replay it.

use std::path::Path;
use std::process::{Command, Stdio};

/// The targets `fuzz/Cargo.toml` declares (a new `[[bin]]` there goes here too).
const TARGETS: &[&str] = &["frame", "consumer_protocol", "sled_record", "sasl"];

const USAGE: &str = "usage: cargo xtask fuzz <target> [--runs N] [--time SECS] [-- LIBFUZZER_ARGS]";

pub(crate) fn run(root: &Path, args: &[String]) -> Result<(), String> {
    let (ours, passthrough) = match args.iter().position(|a| a == "--") {
        Some(i) => (&args[..i], &args[i + 1..]),
        None => (args, &[][..]),
    };
    let mut target = None;
    let mut libfuzzer = Vec::new();
    let mut it = ours.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--runs" => libfuzzer.push(format!("-runs={}", number(it.next(), "--runs")?)),
            "--time" => libfuzzer.push(format!("-max_total_time={}", number(it.next(), "--time")?)),
            name if target.is_none() && !name.starts_with('-') => target = Some(name),
            other => return Err(format!("unexpected argument {other:?}\n{USAGE}")),
        }
    }
    let target = target.ok_or_else(|| format!("which target?\n{USAGE}\ntargets: {}", TARGETS.join(", ")))?;
    if !TARGETS.contains(&target) {
        return Err(format!("no fuzz target {target:?}; targets: {}", TARGETS.join(", ")));
    }
    check_tools()?;
    let corpus = root.join("fuzz/corpus").join(target);
    let seeds = root.join("fuzz/seeds").join(target);
    std::fs::create_dir_all(&corpus).map_err(|e| format!("{}: {e}", corpus.display()))?;
    let mut cmd = Command::new("cargo");
    cmd.current_dir(root).args(["+nightly", "fuzz", "run", target]).arg(&corpus);
    if seeds.is_dir() {
        cmd.arg(&seeds);
    }
    cmd.arg("--").arg("-print_final_stats=1").args(&libfuzzer).args(passthrough);
    // Not `cargo()`: that would inherit this stable cargo's `CARGO` and toolchain.
    cmd.env_remove("CARGO").env_remove("RUSTUP_TOOLCHAIN");
    crate::step(&format!("cargo +nightly fuzz run {target}"), cmd)
}

fn number(value: Option<&String>, flag: &str) -> Result<u64, String> {
    value.and_then(|v| v.parse().ok()).ok_or_else(|| format!("{flag} takes a number\n{USAGE}"))
}

/// Both tools, or a message saying how to install what is missing.
fn check_tools() -> Result<(), String> {
    let works = |args: &[&str]| {
        Command::new("cargo")
            .args(args)
            .env_remove("CARGO")
            .env_remove("RUSTUP_TOOLCHAIN")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !works(&["+nightly", "--version"]) {
        return Err("fuzzing needs a nightly toolchain: rustup toolchain install nightly".to_owned());
    }
    if !works(&["+nightly", "fuzz", "--version"]) {
        return Err("fuzzing needs cargo-fuzz: cargo install cargo-fuzz --locked".to_owned());
    }
    Ok(())
}
