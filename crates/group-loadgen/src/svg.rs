//! The run's plot, as hand-written SVG: the sweep's heartbeat latency (p50,
//! p99, p99.9) against offered load, both axes logarithmic; and below it, when
//! the durable scenarios ran on sled and on a cluster node, their rates side
//! by side with each one's p99.

use std::fmt::Write as _;

use crate::ScenarioReport;
use crate::report::short_rate;

/// One offered rate of the sweep.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SweepPoint {
    /// Offered heartbeats per second.
    pub offered: f64,
    /// Answered heartbeats per second.
    pub achieved: f64,
    /// Median latency, in milliseconds.
    pub p50_ms: f64,
    /// 99th percentile, in milliseconds.
    pub p99_ms: f64,
    /// 99.9th percentile, in milliseconds.
    pub p999_ms: f64,
}

impl SweepPoint {
    /// The points of the sweep's rows among `reports` (rows with an offered
    /// rate and latencies whose scenario starts with `sweep`), by offered rate.
    pub fn from_reports(reports: &[ScenarioReport]) -> Vec<SweepPoint> {
        let mut points: Vec<SweepPoint> = reports
            .iter()
            .filter(|r| r.scenario.starts_with("sweep"))
            .filter_map(|r| {
                let (offered, p) = (r.offered_rate?, r.latency?);
                let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
                Some(SweepPoint {
                    offered,
                    achieved: r.rate,
                    p50_ms: ms(p.p50),
                    p99_ms: ms(p.p99),
                    p999_ms: ms(p.p999),
                })
            })
            .collect();
        points.sort_by(|a, b| a.offered.total_cmp(&b.offered));
        points
    }
}

/// Plot area and margins, in pixels.
const WIDTH: f64 = 760.0;
const HEIGHT: f64 = 480.0;
const LEFT: f64 = 80.0;
const TOP: f64 = 40.0;
const PLOT_W: f64 = 520.0;
const PLOT_H: f64 = 370.0;

/// A log axis over whole decades covering `lo..=hi`.
#[derive(Debug, Clone, Copy)]
struct LogAxis {
    lo_exp: i32,
    hi_exp: i32,
}

impl LogAxis {
    fn covering(values: impl Iterator<Item = f64>, default: (i32, i32)) -> LogAxis {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in values.filter(|v| v.is_finite() && *v > 0.0) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if !lo.is_finite() {
            return LogAxis { lo_exp: default.0, hi_exp: default.1 };
        }
        let lo_exp = lo.log10().floor() as i32;
        let hi_exp = (hi.log10().ceil() as i32).max(lo_exp + 1);
        LogAxis { lo_exp, hi_exp }
    }

    /// Where `v` falls, from 0 (the low end) to 1; values off the axis are clamped.
    fn fraction(&self, v: f64) -> f64 {
        let span = f64::from(self.hi_exp - self.lo_exp);
        let e = if v > 0.0 && v.is_finite() { v.log10() } else { f64::from(self.lo_exp) };
        ((e - f64::from(self.lo_exp)) / span).clamp(0.0, 1.0)
    }
}

fn tick_label(exp: i32, unit: &str) -> String {
    match exp {
        -3..=-1 => format!("{}{unit}", 10f64.powi(exp)),
        0..=2 => format!("{}{unit}", 10i64.pow(exp.unsigned_abs())),
        3..=5 => format!("{}k{unit}", 10i64.pow(exp.unsigned_abs() - 3)),
        6..=8 => format!("{}M{unit}", 10i64.pow(exp.unsigned_abs() - 6)),
        _ => format!("1e{exp}{unit}"),
    }
}

/// The opening tag of a plot `height` pixels high, on a white background.
fn svg_open(height: f64) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" \
         font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    )
}

/// The plot of `points` as an SVG document; an empty sweep gives the axes and
/// a remark instead of lines.
pub fn sweep_svg(title: &str, points: &[SweepPoint]) -> String {
    format!("{}{}</svg>\n", svg_open(HEIGHT), sweep_panel(title, points))
}

/// The whole run's plot: the sweep of `reports` (see [`sweep_svg`]) and,
/// when some durable scenario ran on sled and on a cluster node, a second
/// panel below with their rates side by side (see [`StorageBar`]). `server`
/// names the server in the titles.
pub fn report_svg(server: &str, reports: &[ScenarioReport]) -> String {
    let sweep = sweep_panel(
        &format!("group-server heartbeats: latency vs offered load ({server})"),
        &SweepPoint::from_reports(reports),
    );
    let bars = StorageBar::from_reports(reports);
    if !bars.iter().any(|b| b.storage == "cluster") {
        return format!("{}{sweep}</svg>\n", svg_open(HEIGHT));
    }
    format!(
        "{}{sweep}<g transform=\"translate(0,{HEIGHT})\">\n{}</g>\n</svg>\n",
        svg_open(HEIGHT + STORAGE_H),
        storage_panel("durable scenarios: sled and cluster node side by side", &bars)
    )
}

/// The sweep's panel: its title, axes, lines and legend, in a `WIDTH` x `HEIGHT` box.
fn sweep_panel(title: &str, points: &[SweepPoint]) -> String {
    let x_axis = LogAxis::covering(points.iter().map(|p| p.offered), (3, 6));
    let y_axis = LogAxis::covering(points.iter().flat_map(|p| [p.p50_ms, p.p99_ms, p.p999_ms]), (-2, 2));
    let x = |v: f64| LEFT + x_axis.fraction(v) * PLOT_W;
    let y = |v: f64| TOP + (1.0 - y_axis.fraction(v)) * PLOT_H;
    let mut s = format!(
        "<text x=\"{}\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">{}</text>\n",
        LEFT + PLOT_W / 2.0,
        escape(title)
    );
    for e in x_axis.lo_exp..=x_axis.hi_exp {
        let xe = x(10f64.powi(e));
        let _ = writeln!(
            s,
            "<line x1=\"{xe:.1}\" y1=\"{TOP}\" x2=\"{xe:.1}\" y2=\"{}\" stroke=\"#ddd\"/>\
             <text x=\"{xe:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            TOP + PLOT_H,
            TOP + PLOT_H + 16.0,
            tick_label(e, "/s")
        );
    }
    for e in y_axis.lo_exp..=y_axis.hi_exp {
        grid_line(&mut s, y(10f64.powi(e)), &format!("{} ms", tick_label(e, "")));
    }
    let _ = writeln!(
        s,
        "<rect x=\"{LEFT}\" y=\"{TOP}\" width=\"{PLOT_W}\" height=\"{PLOT_H}\" fill=\"none\" stroke=\"#888\"/>\n\
         <text x=\"{}\" y=\"{}\" text-anchor=\"middle\">offered heartbeats per second (open loop, log)</text>\n\
         <text x=\"18\" y=\"{}\" text-anchor=\"middle\" transform=\"rotate(-90 18 {})\">latency from the scheduled send (log)</text>",
        LEFT + PLOT_W / 2.0,
        HEIGHT - 12.0,
        TOP + PLOT_H / 2.0,
        TOP + PLOT_H / 2.0
    );
    if points.is_empty() {
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#888\">no sweep results</text>",
            LEFT + PLOT_W / 2.0,
            TOP + PLOT_H / 2.0
        );
    }
    let series: [Series; 3] = [
        ("p50", "#1f77b4", "", |p| p.p50_ms),
        ("p99", "#d62728", "", |p| p.p99_ms),
        ("p99.9", "#ff7f0e", " stroke-dasharray=\"5,3\"", |p| p.p999_ms),
    ];
    for (k, (name, color, dash, value)) in series.iter().enumerate() {
        let line: Vec<String> =
            points.iter().map(|p| format!("{:.1},{:.1}", x(p.offered), y(value(p)))).collect();
        if !line.is_empty() {
            let _ = writeln!(
                s,
                "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"{dash} points=\"{}\"/>",
                line.join(" ")
            );
        }
        for p in points {
            let _ = writeln!(
                s,
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{color}\"><title>{name} {:.3} ms at {:.0}/s offered, {:.0}/s achieved</title></circle>",
                x(p.offered),
                y(value(p)),
                value(p),
                p.offered,
                p.achieved
            );
        }
        let ly = TOP + 10.0 + k as f64 * 18.0;
        let _ = writeln!(
            s,
            "<line x1=\"{}\" y1=\"{ly}\" x2=\"{}\" y2=\"{ly}\" stroke=\"{color}\" stroke-width=\"3\"{dash}/>\
             <text x=\"{}\" y=\"{}\">{name}</text>",
            LEFT + PLOT_W + 12.0,
            LEFT + PLOT_W + 34.0,
            LEFT + PLOT_W + 40.0,
            ly + 4.0
        );
    }
    s
}

/// One bar of the storage panel: a durable scenario's rate on one storage.
#[derive(Debug, Clone, PartialEq)]
pub struct StorageBar {
    /// The scenario, e.g. `commit-distinct`.
    pub scenario: String,
    /// `sled` or `cluster`.
    pub storage: &'static str,
    /// Answers per second.
    pub rate: f64,
    /// What the rate counts (`commits`, `hb`).
    pub unit: &'static str,
    /// 99th percentile latency, in milliseconds.
    pub p99_ms: Option<f64>,
}

impl StorageBar {
    /// The bars of the rows among `reports` that ran on sled or on a cluster
    /// node, grouped by scenario (in the order scenarios first appear), sled first.
    pub fn from_reports(reports: &[ScenarioReport]) -> Vec<StorageBar> {
        let mut scenarios: Vec<&str> = Vec::new();
        for r in reports {
            if !scenarios.contains(&r.scenario.as_str()) {
                scenarios.push(&r.scenario);
            }
        }
        let mut bars = Vec::new();
        for scenario in scenarios {
            for storage in ["sled", "cluster"] {
                bars.extend(
                    reports
                        .iter()
                        .filter(|r| r.scenario == scenario && r.storage == Some(storage) && !r.is_failure())
                        .map(|r| StorageBar {
                            scenario: r.scenario.clone(),
                            storage,
                            rate: r.rate,
                            unit: r.unit,
                            p99_ms: r.latency.map(|p| p.p99.as_secs_f64() * 1e3),
                        }),
                );
            }
        }
        bars
    }
}

/// Height of the storage panel, in pixels, and of its plot area.
const STORAGE_H: f64 = 380.0;
const BARS_H: f64 = 260.0;

/// A bar's colour by storage.
fn storage_color(storage: &str) -> &'static str {
    if storage == "cluster" { "#ff7f0e" } else { "#1f77b4" }
}

/// The smallest of 1, 2 and 5 times a power of ten that is at least `v`.
fn nice_step(v: f64) -> f64 {
    if !(v.is_finite() && v > 0.0) {
        return 1.0;
    }
    let decade = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 5.0, 10.0].into_iter().map(|m| m * decade).find(|&s| s >= v).unwrap_or(10.0 * decade)
}

/// The storage panel: per scenario a sled bar and a cluster bar (rate, linear
/// from zero), each labelled with its rate and its p99, the cluster one with
/// its share of sled's rate; in a `WIDTH` x `STORAGE_H` box.
fn storage_panel(title: &str, bars: &[StorageBar]) -> String {
    let mut scenarios: Vec<&str> = Vec::new();
    for b in bars {
        if !scenarios.contains(&b.scenario.as_str()) {
            scenarios.push(&b.scenario);
        }
    }
    let top_rate = bars.iter().map(|b| b.rate).filter(|r| r.is_finite()).fold(0.0, f64::max);
    let step = nice_step(top_rate / 5.0);
    // Headroom above the tallest bar for its two labels.
    let axis_max = (step * (top_rate * 1.15 / step).ceil()).max(step);
    let y = |rate: f64| TOP + BARS_H * (1.0 - (rate / axis_max).clamp(0.0, 1.0));
    let mut s = format!(
        "<text x=\"{}\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">{}</text>\n",
        LEFT + PLOT_W / 2.0,
        escape(title)
    );
    let ticks = (axis_max / step).round() as u32;
    for k in 0..=ticks {
        let rate = step * f64::from(k);
        grid_line(&mut s, y(rate), &format!("{}/s", short_rate(rate)));
    }
    let _ = writeln!(
        s,
        "<rect x=\"{LEFT}\" y=\"{TOP}\" width=\"{PLOT_W}\" height=\"{BARS_H}\" fill=\"none\" stroke=\"#888\"/>\n\
         <text x=\"18\" y=\"{}\" text-anchor=\"middle\" transform=\"rotate(-90 18 {})\">answers per second (closed loop)</text>",
        TOP + BARS_H / 2.0,
        TOP + BARS_H / 2.0
    );
    let group_w = PLOT_W / scenarios.len().max(1) as f64;
    let bar_w = (group_w * 0.3).min(90.0);
    for (g, scenario) in scenarios.iter().enumerate() {
        let center = LEFT + group_w * (g as f64 + 0.5);
        let sled_rate = bars.iter().find(|b| b.scenario == *scenario && b.storage == "sled").map(|b| b.rate);
        for b in bars.iter().filter(|b| b.scenario == *scenario) {
            let x = if b.storage == "sled" { center - bar_w - 3.0 } else { center + 3.0 };
            let (yb, color) = (y(b.rate), storage_color(b.storage));
            let p99 = b.p99_ms.map_or("-".to_owned(), |ms| format!("{ms:.2} ms"));
            let _ = writeln!(
                s,
                "<rect x=\"{x:.1}\" y=\"{yb:.1}\" width=\"{bar_w:.1}\" height=\"{:.1}\" fill=\"{color}\">\
                 <title>{} on {}: {:.0} {}/s, p99 {p99}</title></rect>\n\
                 <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}/s</text>\n\
                 <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#d62728\">p99 {p99}</text>",
                TOP + BARS_H - yb,
                escape(&b.scenario),
                b.storage,
                b.rate,
                b.unit,
                x + bar_w / 2.0,
                yb - 20.0,
                short_rate(b.rate),
                x + bar_w / 2.0,
                yb - 6.0,
            );
        }
        let share = bars
            .iter()
            .find(|b| b.scenario == *scenario && b.storage == "cluster")
            .zip(sled_rate.filter(|&r| r > 0.0))
            .map_or(String::new(), |(c, sled)| format!("cluster: {:.0}% of sled", 100.0 * c.rate / sled));
        let _ = writeln!(
            s,
            "<text x=\"{center:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>\
             <text x=\"{center:.1}\" y=\"{}\" text-anchor=\"middle\" fill=\"#555\">{share}</text>",
            TOP + BARS_H + 18.0,
            escape(scenario),
            TOP + BARS_H + 34.0
        );
    }
    for (k, storage) in ["sled", "cluster"].into_iter().enumerate() {
        let ly = TOP + 10.0 + k as f64 * 18.0;
        let _ = writeln!(
            s,
            "<rect x=\"{}\" y=\"{}\" width=\"16\" height=\"10\" fill=\"{}\"/>\
             <text x=\"{}\" y=\"{}\">{storage}</text>",
            LEFT + PLOT_W + 12.0,
            ly - 5.0,
            storage_color(storage),
            LEFT + PLOT_W + 34.0,
            ly + 4.0
        );
    }
    s
}

/// A horizontal grid line across the plot area at `y`, labelled left of the axis.
fn grid_line(s: &mut String, y: f64, label: &str) {
    let _ = writeln!(
        s,
        "<line x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{}\" y2=\"{y:.1}\" stroke=\"#ddd\"/>\
         <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{label}</text>",
        LEFT + PLOT_W,
        LEFT - 6.0,
        y + 4.0,
    );
}

/// A line of the plot: its name, colour, extra stroke attributes, and value.
type Series = (&'static str, &'static str, &'static str, fn(&SweepPoint) -> f64);

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn point(offered: f64, p50: f64, p99: f64) -> SweepPoint {
        SweepPoint { offered, achieved: offered, p50_ms: p50, p99_ms: p99, p999_ms: p99 * 2.0 }
    }

    /// Every number in the `points="..."` attributes of the polylines.
    fn polyline_coordinates(svg: &str) -> Vec<(f64, f64)> {
        svg.lines()
            .filter(|l| l.starts_with("<polyline"))
            .flat_map(|l| {
                let pts = l.split("points=\"").nth(1).and_then(|r| r.split('"').next()).unwrap_or("");
                pts.split(' ')
                    .filter_map(|xy| xy.split_once(','))
                    .map(|(a, b)| (a.parse().unwrap(), b.parse().unwrap()))
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    #[test]
    fn three_lines_of_as_many_points_as_rates() {
        let svg =
            sweep_svg("wire <sweep>", &[point(5e3, 0.1, 0.5), point(1e4, 0.2, 0.9), point(2e4, 3.0, 40.0)]);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        assert_eq!(svg.matches("<polyline").count(), 3);
        assert_eq!(polyline_coordinates(&svg).len(), 9);
        assert!(svg.contains("wire &lt;sweep&gt;"));
        assert!(svg.contains(">10k/s<"), "{svg}");
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
    }

    #[test]
    fn an_empty_sweep_still_draws_axes() {
        let svg = sweep_svg("t", &[]);
        assert_eq!(svg.matches("<polyline").count(), 0);
        assert!(svg.contains("no sweep results"));
    }

    #[test]
    fn higher_latency_is_drawn_higher_up() {
        let svg = sweep_svg("t", &[point(1e3, 0.1, 10.0)]);
        let coords = polyline_coordinates(&svg);
        assert!(coords[1].1 < coords[0].1, "p99 above p50: {coords:?}");
    }

    fn bar(scenario: &str, storage: &'static str, rate: f64) -> StorageBar {
        StorageBar { scenario: scenario.to_owned(), storage, rate, unit: "commits", p99_ms: Some(4.0) }
    }

    /// `(y, height)` of every bar of the storage panel.
    fn bar_rects(svg: &str) -> Vec<(f64, f64)> {
        let attr = |l: &str, name: &str| -> f64 {
            l.split(&format!(" {name}=\"")).nth(1).and_then(|r| r.split('"').next()).unwrap().parse().unwrap()
        };
        svg.lines()
            .filter(|l| l.starts_with("<rect") && l.contains("<title>"))
            .map(|l| (attr(l, "y"), attr(l, "height")))
            .collect()
    }

    #[test]
    fn the_storage_panel_has_two_bars_a_scenario_and_the_share() {
        let bars = [
            bar("commit-distinct", "sled", 40_000.0),
            bar("commit-distinct", "cluster", 10_000.0),
            bar("commit-one-group", "sled", 20_000.0),
            bar("commit-one-group", "cluster", 5_000.0),
        ];
        let panel = storage_panel("t", &bars);
        let rects = bar_rects(&panel);
        assert_eq!(rects.len(), 4, "{panel}");
        assert!(rects[0].1 > rects[1].1 && rects[0].1 == 2.0 * rects[2].1, "taller for more: {rects:?}");
        for (y, h) in &rects {
            assert!((y + h - (TOP + BARS_H)).abs() < 0.2, "bars stand on the axis: {rects:?}");
            assert!(*y >= TOP, "inside the plot: {rects:?}");
        }
        assert!(panel.contains("cluster: 25% of sled") && panel.contains("p99 4.00 ms"), "{panel}");
    }

    #[test]
    fn report_svg_adds_the_storage_panel_only_with_cluster_rows() {
        let row = |storage: &'static str, rate: f64| ScenarioReport {
            storage: Some(storage),
            rate,
            unit: "commits",
            ..ScenarioReport::failed("commit-distinct", &crate::LoadgenError::Closed)
        };
        let mut sled = row("sled", 100.0);
        sled.notes.clear();
        let mut cluster = row("cluster", 50.0);
        cluster.notes.clear();
        let without = report_svg("x", std::slice::from_ref(&sled));
        assert_eq!(bar_rects(&without).len(), 0);
        assert!(without.contains(&format!("height=\"{HEIGHT}\"")));
        let with = report_svg("x", &[sled, cluster]);
        assert_eq!(bar_rects(&with).len(), 2, "{with}");
        assert!(with.contains(&format!("height=\"{}\"", HEIGHT + STORAGE_H)) && with.ends_with("</svg>\n"));
        assert!(with.contains("no sweep results"), "the sweep panel stays");
    }

    #[test]
    fn nice_steps() {
        assert_eq!(nice_step(7.0), 10.0);
        assert_eq!(nice_step(8_400.0), 10_000.0);
        assert_eq!(nice_step(1_500.0), 2_000.0);
        assert_eq!(nice_step(0.0), 1.0);
    }

    proptest! {
        #[test]
        fn every_bar_stays_inside_the_panel(rates in proptest::collection::vec(0.0f64..1e7, 1..8)) {
            let bars: Vec<StorageBar> = rates
                .iter()
                .enumerate()
                .map(|(i, &r)| bar(&format!("s{}", i / 2), if i % 2 == 0 { "sled" } else { "cluster" }, r))
                .collect();
            let panel = storage_panel("p", &bars);
            prop_assert!(!panel.contains("NaN"));
            for (y, h) in bar_rects(&panel) {
                prop_assert!(y >= TOP - 0.1 && y + h <= TOP + BARS_H + 0.1, "y {} h {}", y, h);
                prop_assert!(h >= 0.0);
            }
        }

        #[test]
        fn every_point_lands_inside_the_plot(
            raw in proptest::collection::vec((1.0f64..1e7, 0.0f64..1e5, 0.0f64..1e5), 1..12)
        ) {
            let points: Vec<SweepPoint> = raw.iter().map(|&(o, a, b)| point(o, a.min(b), a.max(b))).collect();
            let svg = sweep_svg("p", &points);
            prop_assert!(!svg.contains("NaN"));
            for (x, y) in polyline_coordinates(&svg) {
                prop_assert!((LEFT - 0.1..=LEFT + PLOT_W + 0.1).contains(&x), "x {}", x);
                prop_assert!((TOP - 0.1..=TOP + PLOT_H + 0.1).contains(&y), "y {}", y);
            }
        }
    }
}
