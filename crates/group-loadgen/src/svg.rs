//! The sweep's plot, as hand-written SVG: heartbeat latency (p50, p99, p99.9)
//! against offered load, both axes logarithmic.

use std::fmt::Write as _;

use crate::ScenarioReport;

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

/// The plot of `points` as an SVG document; an empty sweep gives the axes and
/// a remark instead of lines.
pub fn sweep_svg(title: &str, points: &[SweepPoint]) -> String {
    let x_axis = LogAxis::covering(points.iter().map(|p| p.offered), (3, 6));
    let y_axis = LogAxis::covering(points.iter().flat_map(|p| [p.p50_ms, p.p99_ms, p.p999_ms]), (-2, 2));
    let x = |v: f64| LEFT + x_axis.fraction(v) * PLOT_W;
    let y = |v: f64| TOP + (1.0 - y_axis.fraction(v)) * PLOT_H;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{HEIGHT}\" \
         font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{}\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">{}</text>\n",
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
        let ye = y(10f64.powi(e));
        let _ = writeln!(
            s,
            "<line x1=\"{LEFT}\" y1=\"{ye:.1}\" x2=\"{}\" y2=\"{ye:.1}\" stroke=\"#ddd\"/>\
             <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{} ms</text>",
            LEFT + PLOT_W,
            LEFT - 6.0,
            ye + 4.0,
            tick_label(e, "")
        );
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
    s.push_str("</svg>\n");
    s
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

    proptest! {
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
