//! Renders the assignor benchmark results as one table and one plot.
//!
//! Run after `cargo bench -p group-assignors --bench assignors`:
//!
//! ```text
//! cargo run --release -p group-assignors --example bench_report [TARGET_DIR]
//! ```
//!
//! It reads criterion's `TARGET_DIR/criterion/<scenario>/<assignor>/new/estimates.json`
//! (default `TARGET_DIR`: `$CARGO_TARGET_DIR`, else the workspace's `target/`),
//! prints a markdown table of medians (scenario x assignor, with the targets of
//! `benchmarks.md`), and writes `TARGET_DIR/assignor-bench.json` (the medians)
//! and `TARGET_DIR/assignor-bench.svg` (median time against partition count,
//! log-log, one line per assignor). Missing results show as `-`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const ASSIGNORS: [&str; 4] = ["range", "roundrobin", "sticky", "cooperative-sticky"];
const COLORS: [&str; 4] = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"];

/// Scenario id, partition count, targets in ms (range/roundrobin, sticky).
const SCENARIOS: [(&str, f64, f64, f64); 6] = [
    ("S1", 1e3, 0.05, 0.05),
    ("S2", 1e4, 0.3, 0.5),
    ("S3", 1e6, 50.0, 100.0),
    ("S4", 1e4, 0.3, 0.5),
    ("S5", 1e4, 5.0, 5.0),
    ("S6", 1e5, 4.0, 4.0),
];

fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::args().nth(1) {
        return dir.into();
    }
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return dir.into();
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target")
}

/// The median of one benchmark in milliseconds, if it ran.
fn median_ms(dir: &Path, scenario: &str, assignor: &str) -> Option<f64> {
    let path = dir.join("criterion").join(scenario).join(assignor).join("new/estimates.json");
    let text = std::fs::read_to_string(path).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v["median"]["point_estimate"].as_f64().map(|ns| ns / 1e6)
}

fn fmt_ms(v: Option<f64>) -> String {
    match v {
        Some(ms) if ms < 1.0 => format!("{ms:.3}"),
        Some(ms) => format!("{ms:.1}"),
        None => "-".to_owned(),
    }
}

fn main() -> std::io::Result<()> {
    let dir = target_dir();
    let medians: Vec<Vec<Option<f64>>> =
        SCENARIOS.iter().map(|(s, ..)| ASSIGNORS.iter().map(|a| median_ms(&dir, s, a)).collect()).collect();

    let mut table = String::from("| scenario | partitions |");
    for a in ASSIGNORS {
        let _ = write!(table, " {a} (ms) |");
    }
    table.push_str(" target rr/range, sticky (ms) |\n|---|---|---|---|---|---|---|\n");
    for ((s, parts, t_plain, t_sticky), row) in SCENARIOS.iter().zip(&medians) {
        let _ = write!(table, "| {s} | {parts:.0} |");
        for (a, m) in ASSIGNORS.iter().zip(row) {
            let target = if a.contains("sticky") { *t_sticky } else { *t_plain };
            let mark = match m {
                Some(ms) if *ms > target => " (miss)",
                _ => "",
            };
            let _ = write!(table, " {}{mark} |", fmt_ms(*m));
        }
        let _ = writeln!(table, " {t_plain}, {t_sticky} |");
    }
    println!("{table}");

    let mut json = String::from("{");
    for (i, ((s, ..), row)) in SCENARIOS.iter().zip(&medians).enumerate() {
        let cells: Vec<String> = ASSIGNORS
            .iter()
            .zip(row)
            .map(|(a, m)| format!("\"{a}\": {}", m.map_or("null".to_owned(), |v| format!("{v}"))))
            .collect();
        let _ = write!(json, "{}\"{s}\": {{{}}}", if i == 0 { "" } else { ", " }, cells.join(", "));
    }
    json.push_str("}\n");
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("assignor-bench.json"), json)?;
    std::fs::write(dir.join("assignor-bench.svg"), svg(&medians))?;
    println!("wrote {0}/assignor-bench.json and {0}/assignor-bench.svg", dir.display());
    Ok(())
}

/// Log-log plot: x = partitions (1e3..1e6), y = median ms (1e-3..1e3).
fn svg(medians: &[Vec<Option<f64>>]) -> String {
    let (w, h, left, top, pw, ph) = (720.0, 480.0, 70.0, 30.0, 520.0, 380.0);
    let x = |p: f64| left + (p.log10() - 3.0) / 3.0 * pw;
    let y = |ms: f64| top + (3.0 - ms.max(1e-3).log10()) / 6.0 * ph;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{}\" y=\"18\" text-anchor=\"middle\">group-assignors: median time vs partitions (log-log)</text>\n",
        left + pw / 2.0
    );
    for e in 3..=6 {
        let xe = x(10f64.powi(e));
        let _ = writeln!(
            s,
            "<line x1=\"{xe}\" y1=\"{top}\" x2=\"{xe}\" y2=\"{}\" stroke=\"#ddd\"/><text x=\"{xe}\" y=\"{}\" text-anchor=\"middle\">1e{e}</text>",
            top + ph,
            top + ph + 16.0
        );
    }
    for e in -3..=3 {
        let ye = y(10f64.powi(e));
        let _ = writeln!(
            s,
            "<line x1=\"{left}\" y1=\"{ye}\" x2=\"{}\" y2=\"{ye}\" stroke=\"#ddd\"/><text x=\"{}\" y=\"{}\" text-anchor=\"end\">1e{e} ms</text>",
            left + pw,
            left - 6.0,
            ye + 4.0
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">partitions (S1, S2, S6, S3 joined; S4 square, S5 triangle)</text>",
        left + pw / 2.0,
        h - 12.0
    );
    for (k, (a, color)) in ASSIGNORS.iter().zip(COLORS).enumerate() {
        let line: Vec<String> = [0usize, 1, 5, 2]
            .iter()
            .filter_map(|&i| medians[i][k].map(|ms| format!("{:.1},{:.1}", x(SCENARIOS[i].1), y(ms))))
            .collect();
        let _ = writeln!(
            s,
            "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\" points=\"{}\"/>",
            line.join(" ")
        );
        for &i in &[0usize, 1, 5, 2] {
            if let Some(ms) = medians[i][k] {
                let _ = writeln!(
                    s,
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{color}\"/>",
                    x(SCENARIOS[i].1),
                    y(ms)
                );
            }
        }
        if let Some(ms) = medians[3][k] {
            let (cx, cy) = (x(SCENARIOS[3].1) + 6.0 + k as f64 * 3.0, y(ms));
            let _ = writeln!(
                s,
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"6\" height=\"6\" fill=\"{color}\"/>",
                cx - 3.0,
                cy - 3.0
            );
        }
        if let Some(ms) = medians[4][k] {
            let (cx, cy) = (x(SCENARIOS[4].1) - 6.0 - k as f64 * 3.0, y(ms));
            let _ = writeln!(
                s,
                "<polygon points=\"{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}\" fill=\"{color}\"/>",
                cx,
                cy - 4.0,
                cx - 4.0,
                cy + 3.0,
                cx + 4.0,
                cy + 3.0
            );
        }
        let ly = top + 10.0 + k as f64 * 18.0;
        let _ = writeln!(
            s,
            "<line x1=\"{}\" y1=\"{ly}\" x2=\"{}\" y2=\"{ly}\" stroke=\"{color}\" stroke-width=\"3\"/><text x=\"{}\" y=\"{}\">{a}</text>",
            left + pw + 10.0,
            left + pw + 30.0,
            left + pw + 34.0,
            ly + 4.0
        );
    }
    s.push_str("</svg>\n");
    s
}
