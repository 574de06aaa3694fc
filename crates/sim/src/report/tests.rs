use super::svg::{self, downsample, fmt_value, Axis, Fmt};
use super::*;

fn synthetic(n: usize) -> ReportInput {
    let t_ms: Vec<u64> = (0..n as u64).map(|i| i * 1000).collect();
    let ramp = |i: usize| (i as f64 / 20.0).min(0.97);
    ReportInput {
        title: "run <preset> & co".to_string(),
        summary: vec![
            ("cps".to_string(), "1234567".to_string()),
            ("drift".to_string(), "0".to_string()),
            ("queues".to_string(), "<2000>".to_string()),
        ],
        series: TimeSeries {
            t_ms: t_ms.clone(),
            cluster_usage: (0..n).map(ramp).collect(),
            pending_containers: (0..n as u64).map(|i| 5_000_000 - i * 10).collect(),
            cps: (0..n).map(|i| 1.0e6 + i as f64).collect(),
            valid_schedule_per_min: vec![false, true, true, true],
        },
        queues: vec![
            QueueSeries {
                name: "root.a<b&c>".to_string(),
                usage: (0..n).map(|i| ramp(i) / 2.0).collect(),
                fair_share: vec![0.5; n],
            },
            QueueSeries {
                name: "root.other".to_string(),
                usage: vec![0.1; n],
                fair_share: vec![0.1; n],
            },
        ],
        wait_ms: vec![0, 0, 10, 250, 900, 4000],
        completion_ms: vec![40_000, 41_000, 80_000],
        phase_seconds: vec![
            ("pre-checks".to_string(), 0.5),
            ("matching".to_string(), 2.0),
        ],
    }
}

fn html_of(input: &ReportInput) -> String {
    let files = render_report(input);
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].0, "index.html");
    files[0].1.clone()
}

/// Every numeric attribute of every SVG element parses as a finite number.
fn assert_finite_coordinates(html: &str) {
    assert!(!html.contains("NaN"), "NaN in output");
    assert!(!html.contains("inf"), "inf in output");
    for attr in [
        " x=\"",
        " y=\"",
        " x1=\"",
        " y1=\"",
        " x2=\"",
        " y2=\"",
        " cx=\"",
        " cy=\"",
        " width=\"",
        " height=\"",
        " d=\"",
        " viewBox=\"",
    ] {
        for piece in html.split(attr).skip(1) {
            let value = &piece[..piece.find('"').unwrap()];
            for tok in value.split([' ', 'M', 'L']).filter(|t| !t.is_empty()) {
                let v: f64 = tok
                    .parse()
                    .unwrap_or_else(|_| panic!("{attr}{value}: {tok:?} is not a number"));
                assert!(v.is_finite(), "{attr}{value}");
            }
        }
    }
}

fn assert_balanced(html: &str) {
    let opens = html.matches("<svg ").count();
    assert_eq!(opens, html.matches("</svg>").count());
    assert!(opens > 0);
    for tag in ["section", "figure", "table", "div", "html", "body"] {
        assert_eq!(
            html.matches(&format!("<{tag}")).count(),
            html.matches(&format!("</{tag}>")).count(),
            "<{tag}>"
        );
    }
    assert!(html.starts_with("<!DOCTYPE html>"));
    // Self-contained: nothing to fetch, nothing to run.
    assert!(!html.contains("<script"));
    assert!(!html.contains("src="));
    assert!(!html.contains("href="));
}

#[test]
fn full_report_has_every_chart_and_the_summary() {
    let html = html_of(&synthetic(120));
    assert_balanced(&html);
    assert_finite_coordinates(&html);
    for title in [
        "Cluster usage",
        "Pending containers",
        "Allocations per second of scheduler CPU time (CPS)",
        "validSchedule per minute",
        "Queue root.other",
        "Wait from submission to first container",
        "Time from submission to completion",
        "Wait and completion times, cumulative",
        "Scheduler CPU time by phase",
    ] {
        assert!(html.contains(title), "missing {title}");
    }
    assert!(html.contains("<tr><th>cps</th><td>1234567</td><td class=\"meaning\"></td></tr>"));
    assert!(
        html.contains("<tr><th>queues</th><td>&lt;2000&gt;</td><td class=\"meaning\"></td></tr>")
    );
    assert!(html.contains("<title>run &lt;preset&gt; &amp; co</title>"));
    // usage, pending, cps, strip, 2 queues, 2 histograms, the CDF, phases.
    assert_eq!(html.matches("<svg ").count(), 10);
    // Strip: one cell per minute, coloured by verdict.
    assert_eq!(html.matches("fill=\"#dc2626\"").count(), 1);
    assert_eq!(html.matches("fill=\"#16a34a\"").count(), 3);
    assert!(html.contains("3 of 4 minutes valid (75.0%;"));
    // Usage passes 0.9 at sample 18 (t = 18 s); never 0.99.
    assert!(html.contains("at or above 90%: 18 s; at or above 99%: never"));
    // Percentiles, nearest rank over 6 waits: p50 = 10 ms, max = 4 s.
    assert!(html.contains("6 apps; p50 0.01 s"), "{html}");
    assert!(html.contains("max 4 s."));
    // Phase shares: 0.5 of 2.5 s and 2 of 2.5 s.
    assert!(html.contains("0.5 s (20.0%)"));
    assert!(html.contains("2 s (80.0%)"));
}

#[test]
fn queue_names_are_escaped_everywhere() {
    let html = html_of(&synthetic(10));
    assert!(html.contains("Queue root.a&lt;b&amp;c&gt;"));
    assert!(!html.contains("a<b"));
    assert!(!html.contains("&c>"));
}

#[test]
fn empty_input_renders_placeholders() {
    let html = html_of(&ReportInput::default());
    assert_balanced(&html);
    assert_finite_coordinates(&html);
    // usage, pending, cps, strip, 2 histograms, the CDF, phases.
    assert_eq!(html.matches("no data").count(), 8);
    assert!(html.contains("No queue series."));
}

#[test]
fn degenerate_series_never_write_non_finite_coordinates() {
    let mut input = synthetic(1);
    input.series.cps = vec![f64::INFINITY];
    input.queues[0].usage = vec![f64::NAN];
    input.wait_ms = vec![7; 5];
    input.completion_ms = vec![0];
    input.phase_seconds = vec![("zero".to_string(), 0.0), ("nan".to_string(), f64::NAN)];
    let html = html_of(&input);
    assert_balanced(&html);
    assert_finite_coordinates(&html);

    // Constant, mismatched lengths, huge values, all at once.
    let mut input = synthetic(50);
    input.series.cluster_usage = vec![0.0; 50];
    input.series.pending_containers = vec![u64::MAX; 10];
    input.series.cps = vec![f64::MAX; 50];
    input.queues[0].fair_share = vec![f64::NEG_INFINITY; 3];
    let html = html_of(&input);
    assert_balanced(&html);
    assert_finite_coordinates(&html);
}

#[test]
fn long_series_are_downsampled_in_the_page() {
    let n = 200_000;
    let html = html_of(&synthetic(n));
    assert_finite_coordinates(&html);
    for path in html.split("<path d=\"").skip(1) {
        let d = &path[..path.find('"').unwrap()];
        assert!(d.matches('L').count() < svg::MAX_LINE_POINTS, "{}", d.len());
    }
    // Seven long lines of at most 1000 points: the page stays well under a megabyte.
    assert!(html.len() < 1_000_000, "{}", html.len());
}

#[test]
fn cdf_steps_at_each_distinct_value() {
    assert_eq!(
        super::cdf_points(&[3000, 1000, 1000, 2000]),
        vec![(1.0, 0.0), (1.0, 0.5), (2.0, 0.75), (3.0, 1.0)]
    );
    assert!(super::cdf_points(&[]).is_empty());
}

#[test]
fn downsample_keeps_ends_and_extremes() {
    let points: Vec<(f64, f64)> = (0..10_000)
        .map(|i| {
            let y = match i {
                4321 => 99.0,
                777 => -5.0,
                _ => (i % 7) as f64,
            };
            (i as f64, y)
        })
        .collect();
    let out = downsample(&points, 1000);
    assert!(out.len() <= 1000 && out.len() > 900, "{}", out.len());
    assert_eq!(out[0], points[0]);
    assert_eq!(*out.last().unwrap(), points[9_999]);
    assert!(out.contains(&(4321.0, 99.0)));
    assert!(out.contains(&(777.0, -5.0)));
    // Order is preserved.
    assert!(out.windows(2).all(|w| w[0].0 < w[1].0));
    // Short lines are untouched.
    assert_eq!(downsample(&points[..10], 1000), points[..10].to_vec());
    assert!(downsample(&[], 1000).is_empty());
}

#[test]
fn axes_use_round_ticks() {
    let a = Axis::nice(0.0, 97.0, 5);
    assert_eq!((a.lo, a.hi, a.step), (0.0, 100.0, 20.0));
    assert_eq!(a.ticks(), vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
    let a = Axis::nice(3.0, 3.0, 4);
    assert!(a.lo < 3.0 && a.hi > 3.0);
    let a = Axis::nice(0.0, 0.0, 4);
    assert_eq!((a.lo, a.hi), (0.0, 1.0));
    let a = Axis::nice(f64::NAN, 1.0, 4);
    assert!(a.lo.is_finite() && a.hi > a.lo);
    let a = Axis::nice(0.0, f64::MAX, 4);
    assert!(a.hi.is_finite() && a.ticks().len() <= 101);
    let a = Axis::nice(0.0, 0.97, 4);
    assert_eq!(a.step, 0.2);
    assert_eq!(fmt_value(0.4, a.step, Fmt::Percent), "40%");
    assert_eq!(fmt_value(1_500_000.0, 500_000.0, Fmt::Num), "1.5M");
    assert_eq!(fmt_value(20_000.0, 5_000.0, Fmt::Num), "20k");
    assert_eq!(fmt_value(0.25, 0.05, Fmt::Num), "0.25");
    assert_eq!(fmt_value(-0.0, 0.5, Fmt::Num), "0");
    assert_eq!(fmt_value(-0.01, 0.5, Fmt::Num), "0");
    assert_eq!(fmt_value(0.0, 0.2, Fmt::Percent), "0%");
}

#[test]
fn histogram_counts_land_in_their_bins() {
    let frame = svg::Frame {
        title: "h",
        x_label: "s",
        y_label: "n",
        width: 300.0,
        height: 200.0,
        y_fmt: Fmt::Num,
    };
    // 0..100 in 24 target bins: 20 bins of 5; 0 and 1 share the first, 99 is in the last.
    let out = svg::histogram(&frame, &[0.0, 1.0, 50.0, 99.0], 24, "#000");
    assert!(out.contains("<title>0–5: 2</title>"), "{out}");
    assert!(out.contains("<title>50–55: 1</title>"));
    assert!(out.contains("<title>95–100: 1</title>"));
    assert_eq!(out.matches("<rect x=").count(), 3);
}

#[test]
fn one_axis_shares_one_unit_suffix() {
    let frame = svg::Frame {
        title: "cps",
        x_label: "s",
        y_label: "n",
        width: 400.0,
        height: 200.0,
        y_fmt: Fmt::Num,
    };
    let line = svg::Line {
        label: "cps",
        color: "#000",
        dashed: false,
        points: vec![(0.0, 0.0), (1.0, 1.4e6)],
    };
    let out = svg::line_chart(&frame, &[line], (0.0, 0.0));
    for tick in [">0<", ">0.5M<", ">1.0M<", ">1.5M<"] {
        assert!(out.contains(tick), "{tick} in {out}");
    }
    assert!(!out.contains(">500k<"));
}

#[test]
fn long_titles_keep_their_end_visible_and_whole_in_the_tooltip() {
    let mut input = synthetic(5);
    let name = format!("root.{}leaf_queue_z", "deep.".repeat(30));
    input.queues[0].name = name.clone();
    let html = html_of(&input);
    assert!(html.contains(&format!("<title>Queue {name}</title>")));
    let visible = html
        .split("<text class=\"ct\" x=\"8\" y=\"16\">")
        .map(|t| &t[..t.find('<').unwrap()])
        .find(|t| t.contains("leaf_queue_z"))
        .unwrap();
    assert!(
        visible.starts_with('…') && visible.ends_with("deep.leaf_queue_z"),
        "{visible}"
    );
    // Cut to the chart's width (a small chart is half the page wide).
    assert!(visible.chars().count() < name.chars().count().min(100));
}

#[test]
fn significant_digits_drop_trailing_zeros() {
    assert_eq!(svg::fmt_sig(18.0), "18");
    assert_eq!(svg::fmt_sig(0.0125), "0.0125");
    assert_eq!(svg::fmt_sig(2.5), "2.5");
    assert_eq!(svg::fmt_sig(1_234_567.0), "1.23M");
    assert_eq!(svg::fmt_sig(40_000.0), "40k");
    assert_eq!(svg::fmt_sig(f64::NAN), "n/a");
}

#[test]
fn bar_labels_get_room_for_their_whole_text() {
    let long = "heartbeat (matching apps and requests to the node)";
    let chart = svg::hbars(
        "Scheduler CPU time by phase",
        &[(long.to_string(), 2.0), ("node join".to_string(), 1.0)],
        "s",
        1140.0,
        "#000",
    );
    // The labels end (text-anchor: end) at x; the longest must start at or right of 0.
    let x: f64 = chart
        .split("class=\"bl\" x=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .and_then(|v| v.parse().ok())
        .expect("a bar label");
    let needed = long.chars().count() as f64 * svg::LABEL_CHAR_W;
    assert!(x >= needed, "label ends at {x}, needs {needed}: {chart}");
}

#[test]
fn the_summary_explains_the_figures_people_ask_about() {
    let mut input = synthetic(10);
    input.summary.extend([
        (
            "validSchedulePerMin (all / after the first minute)".to_string(),
            "0.5 / 0.6".to_string(),
        ),
        (
            "fairness gap (worst / mean)".to_string(),
            "0.1 / 0.01".to_string(),
        ),
    ]);
    let html = html_of(&input);
    for (label, words) in [
        (
            "validSchedulePerMin",
            "Share of virtual minutes that were valid",
        ),
        ("fairness gap", "fell short of min(fair share, demand)"),
        ("drift", "must be 0"),
    ] {
        let row = html
            .lines()
            .find(|l| l.starts_with(&format!("<tr><th>{label}")))
            .unwrap_or_else(|| panic!("no {label} row"));
        assert!(row.contains(words), "{row}");
    }
    // Charts use the page's width.
    assert!(
        html.contains("viewBox=\"0 0 1140 "),
        "a wide chart spans the page"
    );
}
