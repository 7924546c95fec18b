//! `ScenarioReport`, one row of results, and the two ways rows are written
//! out: a plain-text table (a cluster row right under the sled row of its
//! scenario, with its rate as a share of sled's) and a JSON document.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use crate::drive::Tally;
use crate::{CpuUsage, LoadgenError, Percentiles};

/// What one scenario (or one rate of the sweep) measured.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioReport {
    /// The scenario, e.g. `heartbeat` or `sweep 10k/s`.
    pub scenario: String,
    /// What the spawned server stored in (`memory`, `sled`, `cluster`: see
    /// [`crate::Storage::name`]); `None` for a server the generator did not spawn.
    pub storage: Option<&'static str>,
    /// What `rate` counts: `hb`, `commits`, `rebalances`.
    pub unit: &'static str,
    /// Answers per second inside the measurement window.
    pub rate: f64,
    /// The offered rate per second of an open-loop scenario.
    pub offered_rate: Option<f64>,
    /// Answers inside the window.
    pub answered: u64,
    /// Latency percentiles (from the scheduled send time for open loops).
    pub latency: Option<Percentiles>,
    /// Non-zero error codes, failed connections and unanswered requests.
    pub errors: u64,
    /// `errors` by kind.
    pub error_kinds: BTreeMap<String, u64>,
    /// The measurement window's length.
    pub window: Duration,
    /// Server CPU seconds (user + system) in the window, if its pid is known.
    pub server_cpu_s: Option<f64>,
    /// The generator's own CPU seconds in the window.
    pub generator_cpu_s: f64,
    /// Further figures by name (server RSS, threads, fds, ...), also in the JSON.
    pub metrics: BTreeMap<String, f64>,
    /// Free-text remarks for the table's last column.
    pub notes: Vec<String>,
}

impl ScenarioReport {
    /// A report of a driver's tally over a metered window.
    pub(crate) fn measured(
        scenario: impl Into<String>,
        unit: &'static str,
        tally: Tally,
        usage: CpuUsage,
    ) -> Self {
        let Tally { answered_in_window, mut latencies_ns, errors, .. } = tally;
        let secs = usage.elapsed.as_secs_f64();
        let mut metrics = BTreeMap::new();
        if let Some(etcd) = usage.etcd_s {
            metrics.insert(ETCD_CPU_S.to_owned(), etcd);
        }
        ScenarioReport {
            scenario: scenario.into(),
            storage: None,
            unit,
            rate: if secs > 0.0 { answered_in_window as f64 / secs } else { 0.0 },
            offered_rate: None,
            answered: answered_in_window,
            latency: Percentiles::from_nanos(&mut latencies_ns),
            errors: errors.total(),
            error_kinds: errors.0,
            window: usage.elapsed,
            server_cpu_s: usage.server_s,
            generator_cpu_s: usage.generator_s,
            metrics,
            notes: Vec::new(),
        }
    }

    /// The row of a scenario that could not run at all.
    pub fn failed(scenario: impl Into<String>, error: &LoadgenError) -> ScenarioReport {
        ScenarioReport {
            scenario: scenario.into(),
            storage: None,
            unit: "",
            rate: 0.0,
            offered_rate: None,
            answered: 0,
            latency: None,
            errors: 1,
            error_kinds: BTreeMap::from([(error.kind(), 1)]),
            window: Duration::ZERO,
            server_cpu_s: None,
            generator_cpu_s: 0.0,
            metrics: BTreeMap::new(),
            notes: vec![format!("FAILED: {error}")],
        }
    }

    /// Whether the scenario could not run (see [`ScenarioReport::failed`]).
    pub fn is_failure(&self) -> bool {
        self.notes.first().is_some_and(|n| n.starts_with("FAILED"))
    }

    /// Answers per server CPU-second: how much work a core of the server does.
    pub fn rate_per_server_cpu_s(&self) -> Option<f64> {
        self.server_cpu_s.filter(|&cpu| cpu > 0.0).map(|cpu| self.answered as f64 / cpu)
    }

    /// This cluster row's rate as a share of the sled row's of the same
    /// scenario among `reports` (`None` for other rows, or without a sled row
    /// that ran).
    pub fn vs_sled(&self, reports: &[ScenarioReport]) -> Option<f64> {
        if self.storage != Some("cluster") || self.is_failure() {
            return None;
        }
        let sled = reports.iter().find(|r| r.is_sled_of(&self.scenario))?;
        (sled.rate > 0.0).then(|| self.rate / sled.rate)
    }

    fn is_sled_of(&self, scenario: &str) -> bool {
        self.storage == Some("sled") && self.scenario == scenario && !self.is_failure()
    }

    pub(crate) fn note(&mut self, note: impl Into<String>) {
        self.notes.push(note.into());
    }

    pub(crate) fn metric(&mut self, name: &str, value: f64) {
        self.metrics.insert(name.to_owned(), value);
    }
}

/// `1234567.8` as `1,234,568`.
pub(crate) fn thousands(v: f64) -> String {
    if !v.is_finite() {
        return "-".to_owned();
    }
    let digits = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if v < 0.0 && digits != "0" { format!("-{out}") } else { out }
}

/// A latency as `85us`, `1.25ms` or `2.10s`.
pub fn format_latency(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us < 1_000.0 {
        format!("{us:.0}us")
    } else if us < 1e6 {
        format!("{:.2}ms", us / 1e3)
    } else {
        format!("{:.2}s", us / 1e6)
    }
}

/// `5000` as `5k`, `12500` as `12.5k`.
pub(crate) fn short_rate(rate: f64) -> String {
    if rate >= 1_000.0 {
        let k = rate / 1_000.0;
        if (k - k.round()).abs() < 1e-9 { format!("{k:.0}k") } else { format!("{k:.1}k") }
    } else {
        format!("{rate:.0}")
    }
}

/// The metric of the etcd members' CPU seconds in the window, summed.
pub const ETCD_CPU_S: &str = "etcd_cpu_s";

/// The metric of the etcd members' database files at the end, summed.
pub const ETCD_DB_BYTES: &str = "etcd_db_bytes";

const HEADERS: [&str; 13] = [
    "scenario",
    "storage",
    "rate",
    "vs sled",
    "p50",
    "p99",
    "p99.9",
    "errors",
    "srv CPU s",
    "etcd CPU s",
    "per srv CPU-s",
    "gen CPU s",
    "notes",
];

/// The columns that hold text, aligned left (numbers align right).
const TEXT_COLUMNS: [usize; 3] = [0, 1, HEADERS.len() - 1];

/// `reports` in table order: as they come, except that a cluster row goes
/// right under the sled row of its scenario.
fn table_order(reports: &[ScenarioReport]) -> Vec<&ScenarioReport> {
    let mut ordered = Vec::with_capacity(reports.len());
    for r in reports {
        let under_sled = r.storage == Some("cluster") && reports.iter().any(|s| s.is_sled_of(&r.scenario));
        if under_sled {
            continue;
        }
        ordered.push(r);
        if r.is_sled_of(&r.scenario) {
            ordered
                .extend(reports.iter().filter(|c| c.storage == Some("cluster") && c.scenario == r.scenario));
        }
    }
    ordered
}

/// `0.076` as `7.6%`, `0.52` as `52%`.
fn percent(share: f64) -> String {
    let p = share * 100.0;
    if p < 10.0 { format!("{p:.1}%") } else { format!("{p:.0}%") }
}

/// The reports as a plain-text table, one row per report, columns aligned;
/// a cluster row comes right under the sled row of its scenario.
pub fn render_table(reports: &[ScenarioReport]) -> String {
    let rows: Vec<[String; 13]> = table_order(reports)
        .into_iter()
        .map(|r| {
            let lat = |f: fn(&Percentiles) -> Duration| {
                r.latency.as_ref().map_or("-".to_owned(), |p| format_latency(f(p)))
            };
            let mut notes = r.notes.clone();
            if r.errors > 0 && !r.is_failure() {
                let kinds: Vec<String> = r.error_kinds.iter().map(|(k, n)| format!("{k}: {n}")).collect();
                notes.push(format!("errors: {}", kinds.join(", ")));
            }
            let seconds = |c: Option<f64>| c.map_or("-".to_owned(), |c| format!("{c:.2}"));
            [
                r.scenario.clone(),
                r.storage.unwrap_or("-").to_owned(),
                if r.unit.is_empty() {
                    "-".to_owned()
                } else {
                    format!("{} {}/s", thousands(r.rate), r.unit)
                },
                r.vs_sled(reports).map_or("-".to_owned(), percent),
                lat(|p| p.p50),
                lat(|p| p.p99),
                lat(|p| p.p999),
                r.errors.to_string(),
                seconds(r.server_cpu_s),
                seconds(r.metrics.get(ETCD_CPU_S).copied()),
                r.rate_per_server_cpu_s().map_or("-".to_owned(), thousands),
                format!("{:.2}", r.generator_cpu_s),
                notes.join("; "),
            ]
            // A row is one line, whatever an error message or a server log holds.
            .map(|cell| cell.chars().map(|c| if c.is_control() { ' ' } else { c }).collect())
        })
        .collect();
    let mut widths = HEADERS.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: &[String]| {
        let mut l = String::new();
        for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
            let last = i + 1 == cells.len();
            let pad = w.saturating_sub(cell.chars().count());
            if TEXT_COLUMNS.contains(&i) {
                l.push_str(cell);
                if !last {
                    l.push_str(&" ".repeat(pad));
                }
            } else {
                l.push_str(&" ".repeat(pad));
                l.push_str(cell);
            }
            if !last {
                l.push_str("  ");
            }
        }
        out.push_str(l.trim_end());
        out.push('\n');
    };
    line(&HEADERS.map(str::to_owned));
    line(&widths.map(|w| "-".repeat(w)));
    for row in &rows {
        line(row);
    }
    out
}

/// A JSON string literal.
fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A JSON number, or `null` for what JSON cannot hold.
fn json_number(v: f64) -> String {
    if v.is_finite() { format!("{v}") } else { "null".to_owned() }
}

fn json_option(v: Option<f64>) -> String {
    v.map_or("null".to_owned(), json_number)
}

/// The reports as a JSON document: `{"generator", "server", "scenarios": [...]}`
/// with one object per report; latencies in microseconds.
pub fn render_json(server: &str, reports: &[ScenarioReport]) -> String {
    let mut out = String::from("{\n");
    let _ = writeln!(
        out,
        "  \"generator\": {},",
        json_string(concat!("group-loadgen ", env!("CARGO_PKG_VERSION")))
    );
    let _ = writeln!(out, "  \"server\": {},", json_string(server));
    out.push_str("  \"scenarios\": [");
    for (i, r) in reports.iter().enumerate() {
        let us = |f: fn(&Percentiles) -> Duration| {
            json_option(r.latency.as_ref().map(|p| f(p).as_secs_f64() * 1e6))
        };
        let kinds: Vec<String> =
            r.error_kinds.iter().map(|(k, n)| format!("{}: {n}", json_string(k))).collect();
        let metrics: Vec<String> =
            r.metrics.iter().map(|(k, v)| format!("{}: {}", json_string(k), json_number(*v))).collect();
        let notes: Vec<String> = r.notes.iter().map(|n| json_string(n)).collect();
        let fields = [
            format!("\"scenario\": {}", json_string(&r.scenario)),
            format!("\"storage\": {}", r.storage.map_or("null".to_owned(), json_string)),
            format!("\"unit\": {}", json_string(r.unit)),
            format!("\"rate_per_s\": {}", json_number(r.rate)),
            format!("\"vs_sled\": {}", json_option(r.vs_sled(reports))),
            format!("\"offered_per_s\": {}", json_option(r.offered_rate)),
            format!("\"answered\": {}", r.answered),
            format!("\"samples\": {}", r.latency.as_ref().map_or(0, |p| p.samples)),
            format!("\"p50_us\": {}", us(|p| p.p50)),
            format!("\"p99_us\": {}", us(|p| p.p99)),
            format!("\"p999_us\": {}", us(|p| p.p999)),
            format!("\"errors\": {}", r.errors),
            format!("\"error_kinds\": {{{}}}", kinds.join(", ")),
            format!("\"window_s\": {}", json_number(r.window.as_secs_f64())),
            format!("\"server_cpu_s\": {}", json_option(r.server_cpu_s)),
            format!("\"rate_per_server_cpu_s\": {}", json_option(r.rate_per_server_cpu_s())),
            format!("\"generator_cpu_s\": {}", json_number(r.generator_cpu_s)),
            format!("\"metrics\": {{{}}}", metrics.join(", ")),
            format!("\"notes\": [{}]", notes.join(", ")),
            format!("\"failed\": {}", r.is_failure()),
        ];
        let _ = write!(out, "{}\n    {{{}}}", if i == 0 { "" } else { "," }, fields.join(", "));
    }
    out.push_str(if reports.is_empty() { "]\n}\n" } else { "\n  ]\n}\n" });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> ScenarioReport {
        let mut r = ScenarioReport {
            scenario: "heartbeat".to_owned(),
            storage: None,
            unit: "hb",
            rate: 12_345.6,
            offered_rate: None,
            answered: 123_456,
            latency: Some(Percentiles {
                p50: Duration::from_micros(85),
                p99: Duration::from_micros(1_250),
                p999: Duration::from_millis(2_100),
                samples: 123_456,
            }),
            errors: 2,
            error_kinds: BTreeMap::from([("REBALANCE_IN_PROGRESS (27)".to_owned(), 2)]),
            window: Duration::from_secs(10),
            server_cpu_s: Some(4.0),
            generator_cpu_s: 3.5,
            metrics: BTreeMap::new(),
            notes: vec!["a \"quoted\"\nnote".to_owned()],
        };
        r.metric("server_rss_bytes", 1e6);
        r
    }

    #[test]
    fn formats_numbers_and_latencies() {
        assert_eq!(thousands(1_234_567.8), "1,234,568");
        assert_eq!(thousands(999.0), "999");
        assert_eq!(thousands(0.2), "0");
        assert_eq!(thousands(-1234.0), "-1,234");
        assert_eq!(thousands(f64::NAN), "-");
        assert_eq!(format_latency(Duration::from_micros(85)), "85us");
        assert_eq!(format_latency(Duration::from_micros(1_250)), "1.25ms");
        assert_eq!(format_latency(Duration::from_millis(2_100)), "2.10s");
        assert_eq!(short_rate(5_000.0), "5k");
        assert_eq!(short_rate(12_500.0), "12.5k");
        assert_eq!(short_rate(500.0), "500");
    }

    #[test]
    fn the_table_has_a_header_and_a_row_per_report() {
        let failed = ScenarioReport::failed("idle", &LoadgenError::Closed);
        let table = render_table(&[sample(), failed]);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 4, "{table}");
        assert!(lines[0].starts_with("scenario"));
        assert!(lines[2].contains("12,346 hb/s") && lines[2].contains("85us") && lines[2].contains("30,864"));
        assert!(lines[2].contains("errors: REBALANCE_IN_PROGRESS (27): 2"));
        assert!(lines[3].contains("FAILED: the server closed the connection"));
    }

    fn on(storage: &'static str, scenario: &str, rate: f64) -> ScenarioReport {
        ScenarioReport { scenario: scenario.to_owned(), storage: Some(storage), rate, ..sample() }
    }

    #[test]
    fn a_cluster_row_sits_under_its_sled_row_with_its_share() {
        let mut cluster = on("cluster", "commit-distinct", 3_300.0);
        cluster.metric(ETCD_CPU_S, 7.25);
        // Out of order on purpose: the table puts the cluster row under the sled one.
        let reports = [
            cluster,
            on("memory", "heartbeat", 1.0),
            on("sled", "commit-distinct", 44_000.0),
            on("cluster", "commit-one-group", 10.0),
        ];
        assert_eq!(reports[0].vs_sled(&reports), Some(0.075));
        assert_eq!(reports[2].vs_sled(&reports), None, "a sled row has no share");
        assert_eq!(reports[3].vs_sled(&reports), None, "no sled row to compare with");
        let table = render_table(&reports);
        let lines: Vec<&str> = table.lines().collect();
        assert!(
            lines[0].starts_with("scenario ")
                && lines[0].contains(" storage ")
                && lines[0].contains("vs sled")
        );
        assert!(lines[2].starts_with("heartbeat ") && lines[2].contains(" memory "), "{table}");
        assert!(lines[3].contains(" sled ") && lines[3].contains("44,000 hb/s"), "{table}");
        assert!(lines[4].contains(" cluster ") && lines[4].contains("7.5%"), "{table}");
        assert!(lines[4].contains("7.25"), "etcd CPU: {table}");
        assert!(lines[5].starts_with("commit-one-group"), "{table}");
        let failed_sled =
            ScenarioReport { storage: Some("sled"), ..ScenarioReport::failed("x", &LoadgenError::Closed) };
        let c = on("cluster", "x", 5.0);
        assert_eq!(c.vs_sled(&[failed_sled, c.clone()]), None, "a failed sled row is no baseline");
    }

    #[test]
    fn percentages() {
        assert_eq!(percent(0.075), "7.5%");
        assert_eq!(percent(0.52), "52%");
        assert_eq!(percent(1.5), "150%");
    }

    #[test]
    fn json_has_storage_and_share() {
        let reports = [on("sled", "c", 100.0), on("cluster", "c", 25.0)];
        let json = render_json("s", &reports);
        assert!(json.contains("\"storage\": \"sled\""), "{json}");
        assert!(json.contains("\"vs_sled\": 0.25"), "{json}");
        assert!(render_json("s", &[sample()]).contains("\"storage\": null"));
    }

    #[test]
    fn json_escapes_and_nulls() {
        let json =
            render_json("spawned \"x\"", &[sample(), ScenarioReport::failed("idle", &LoadgenError::Closed)]);
        assert!(json.contains("\"p50_us\": 85"), "{json}");
        assert!(json.contains("a \\\"quoted\\\"\\nnote"));
        assert!(json.contains("\"server_cpu_s\": null"));
        assert!(json.contains("\"failed\": true"));
        assert_eq!(json_string("\u{1}"), "\"\\u0001\"");
        assert_eq!(render_json("s", &[]).matches('[').count(), 1);
    }
}
