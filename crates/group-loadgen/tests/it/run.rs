//! The whole run as the binary does it, against a running server: the table,
//! the JSON and the SVG.

use group_loadgen::{Options, render_table, run, write_outputs};

use crate::{server, tiny};

#[test]
fn a_run_writes_a_table_json_and_svg() {
    let (_server, target) = server();
    let dir = std::env::temp_dir().join(format!("group-loadgen-run-{}", std::process::id()));
    let (json, svg) = (dir.join("out.json"), dir.join("out.svg"));
    let line = format!(
        "--connect {} --server-pid {} --scenarios heartbeat,sweep --json {} --svg {} --threads 2",
        target.addr,
        std::process::id(),
        json.display(),
        svg.display()
    );
    let mut options = Options::from_args(line.split_whitespace()).expect("options");
    options.settings = tiny();
    let reports = run(&options).expect("runs");
    assert!(reports.len() >= 2, "{reports:?}");
    let table = render_table(&reports);
    assert_eq!(table.lines().count(), reports.len() + 2, "{table}");
    assert!(table.lines().nth(2).is_some_and(|l| l.starts_with("heartbeat ")), "{table}");

    write_outputs(&options, &reports).expect("outputs written");
    let parsed: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("json")).expect("valid JSON");
    let rows = parsed["scenarios"].as_array().expect("scenarios");
    assert_eq!(rows.len(), reports.len());
    assert_eq!(rows[0]["scenario"], "heartbeat");
    assert_eq!(rows[0]["errors"], 0);
    assert!(rows[0]["p50_us"].as_f64().expect("p50") <= rows[0]["p99_us"].as_f64().expect("p99"));
    assert!(rows[1]["offered_per_s"].as_f64().is_some());
    let plot = std::fs::read_to_string(&svg).expect("svg");
    assert!(plot.starts_with("<svg") && plot.contains("<polyline"), "{plot}");
    let _ = std::fs::remove_dir_all(&dir);
}
