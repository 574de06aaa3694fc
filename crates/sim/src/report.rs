//! The `--report DIR` HTML report: one self-contained `index.html` (inline CSS and SVG, no
//! script, nothing fetched) showing a run's summary and its metrics over time.
//!
//! Sans-IO like the rest of the crate: [`render_report`] returns file names and contents and the
//! CLI writes them. The input is plain data ([`ReportInput`]) so the metrics code fills it
//! without this module knowing how the run was measured.

mod svg;
#[cfg(test)]
mod tests;

use std::fmt::Write;

use svg::{esc, fmt_sig, Fmt, Frame, Line};

/// Everything the report shows. Every vector may be empty; the matching chart then says
/// "no data".
#[derive(Clone, Debug, Default)]
pub struct ReportInput {
    /// Page heading and `<title>`, e.g. `"weft sim: preset meituan, scale 0.05"`.
    pub title: String,
    /// Summary rows `(label, value)` shown as a two-column table, in this order.
    pub summary: Vec<(String, String)>,
    /// Cluster-wide series sampled over virtual time.
    pub series: TimeSeries,
    /// Per-queue usage against fair share (a handful: one small chart each), sampled at the
    /// instants of `series.t_ms`.
    pub queues: Vec<QueueSeries>,
    /// Per app: virtual ms from submission to its first container.
    pub wait_ms: Vec<u64>,
    /// Per finished app: virtual ms from submission to completion.
    pub completion_ms: Vec<u64>,
    /// Scheduler CPU time by phase, `(phase name, seconds)`, shown in this order.
    pub phase_seconds: Vec<(String, f64)>,
}

/// Cluster-wide samples. `t_ms` gives the sample instants; the other sampled vectors are read
/// index by index against it (extra entries beyond the shorter of the two are ignored).
#[derive(Clone, Debug, Default)]
pub struct TimeSeries {
    /// Virtual time of each sample, in ms, ascending.
    pub t_ms: Vec<u64>,
    /// Cluster usage at each sample as a fraction 0..=1 (dominant share of the cluster used).
    pub cluster_usage: Vec<f64>,
    /// Containers asked for and not yet allocated, at each sample.
    pub pending_containers: Vec<u64>,
    /// Allocations per second of scheduler CPU time within the window ending at each sample.
    /// A non-finite value (a window with no CPU time) is left out of the chart.
    pub cps: Vec<f64>,
    /// validSchedule for each virtual minute, minute 0 first (seed 003's definition: usage
    /// above 90% or no valid pending demand).
    pub valid_schedule_per_min: Vec<bool>,
}

/// One queue's usage against its instantaneous fair share, both as fractions of the cluster
/// (dominant share), sampled at the instants of [`TimeSeries::t_ms`].
#[derive(Clone, Debug, Default)]
pub struct QueueSeries {
    /// The queue's full path, e.g. `root.eng.etl`.
    pub name: String,
    /// Usage at each sample, as a fraction of the cluster.
    pub usage: Vec<f64>,
    /// Instantaneous fair share at each sample, as a fraction of the cluster.
    pub fair_share: Vec<f64>,
}

/// Chart widths: a wide chart spans the page's content (1180 px less padding), two small
/// ones share a row; on narrower windows they shrink (`max-width: 100%`).
const WIDE: f64 = 1140.0;
const SMALL_W: f64 = 560.0;
const SMALL_H: f64 = 210.0;
const BLUE: &str = "#2563eb";
const ORANGE: &str = "#d97706";
const PURPLE: &str = "#7c3aed";
const GREY: &str = "#6b7280";
const TEAL: &str = "#0d9488";

const STYLE: &str = "\
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;color:#111827;margin:24px auto;max-width:1180px;padding:0 16px}\
h1{font-size:22px;margin:0 0 12px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #e5e7eb;padding-bottom:4px}\
table.summary{border-collapse:collapse}table.summary th,table.summary td{padding:3px 14px 3px 0;text-align:left;border-bottom:1px solid #f3f4f6;vertical-align:top}\
table.summary th{font-weight:600;color:#374151;white-space:nowrap}table.summary td{font-variant-numeric:tabular-nums}\
table.summary td{white-space:nowrap}table.summary td.meaning{color:#4b5563;font-size:12.5px;font-variant-numeric:normal;white-space:normal}\
.row{display:flex;flex-wrap:wrap;gap:12px 20px}figure{margin:0}figcaption{color:#4b5563;font-size:12.5px;margin-top:2px}\
svg{max-width:100%;height:auto;display:block}svg text{font:11px system-ui,sans-serif;fill:#374151}\
svg .ct{font-size:12.5px;font-weight:600;fill:#111827}svg .yt{text-anchor:end}svg .xt,svg .xl,svg .yl,svg .nd{text-anchor:middle}\
svg .nd{fill:#9ca3af;font-size:13px}svg .bl{text-anchor:end}svg .grid line{stroke:#eef0f3}svg line.tick{stroke:#9ca3af}\
svg .frame{fill:none;stroke:#d1d5db}footer{margin-top:32px;color:#9ca3af;font-size:12px}";

/// Renders the report: `[("index.html", contents)]`.
pub fn render_report(input: &ReportInput) -> Vec<(String, String)> {
    let mut html = String::with_capacity(64 * 1024);
    let title = esc(&input.title);
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{title}</h1>\n"
    );
    summary_section(&mut html, &input.summary);
    time_sections(&mut html, &input.series);
    queue_section(&mut html, &input.series.t_ms, &input.queues);
    latency_section(&mut html, &input.wait_ms, &input.completion_ms);
    phase_section(&mut html, &input.phase_seconds);
    html.push_str("<footer>Generated by weft-sim. Times are virtual except the scheduler's CPU time.</footer>\n</body>\n</html>\n");
    vec![("index.html".to_string(), html)]
}

/// One line saying what a summary figure means, for the figures whose name does not say it
/// (matched on the start of the row's label).
fn explanation(label: &str) -> Option<&'static str> {
    const MEANINGS: [(&str, &str); 8] = [
        ("CPS", "Containers allocated per second of scheduler CPU time (not of virtual time)."),
        ("time to 90% usage", "Virtual time until the cluster's dominant-resource usage first reached 90%."),
        ("time to 99% usage", "The same for 99%."),
        ("validSchedulePerMin", "Share of virtual minutes that were valid: usage at or above 90%, or no valid demand left waiting (the list: each minute, 1 valid, 0 not)."),
        ("fairness gap", "How far a queue's usage fell short of min(fair share, demand), relative to its share, once the cluster reached 90%: the worst sample of any queue / the mean over queues and samples (0 = never short)."),
        ("app wait", "Time from an app's submission to its first container (50th / 99th percentile)."),
        ("drift", "Mismatches the scheduler's self-check found between its running totals and orders and a recomputation from scratch; must be 0."),
        ("reservations", "Nodes reserved for an app whose ask did not fit yet (the Fair Scheduler's reservations)."),
    ];
    MEANINGS
        .iter()
        .find(|(key, _)| label.trim_start().starts_with(key))
        .map(|(_, meaning)| *meaning)
}

fn summary_section(html: &mut String, rows: &[(String, String)]) {
    html.push_str("<section>\n<h2>Summary</h2>\n<table class=\"summary\"><tbody>\n");
    for (label, value) in rows {
        let _ = writeln!(
            html,
            "<tr><th>{}</th><td>{}</td><td class=\"meaning\">{}</td></tr>",
            esc(label),
            esc(value),
            esc(explanation(label).unwrap_or(""))
        );
    }
    html.push_str("</tbody></table>\n</section>\n");
}

/// Pairs sample times (in seconds) with values, up to the shorter of the two.
fn timed<T: Copy>(t_ms: &[u64], values: &[T], f: impl Fn(T) -> f64) -> Vec<(f64, f64)> {
    t_ms.iter()
        .zip(values)
        .map(|(t, v)| (*t as f64 / 1000.0, f(*v)))
        .collect()
}

fn figure(html: &mut String, svg: &str, caption: &str) {
    html.push_str("<figure>");
    html.push_str(svg);
    if !caption.is_empty() {
        let _ = write!(html, "<figcaption>{}</figcaption>", esc(caption));
    }
    html.push_str("</figure>\n");
}

fn time_sections(html: &mut String, s: &TimeSeries) {
    const TIME: &str = "virtual time (s)";
    html.push_str("<section>\n<h2>Cluster usage and pending demand</h2>\n<div class=\"row\">\n");
    let usage = timed(&s.t_ms, &s.cluster_usage, |v| v);
    let chart = svg::line_chart(
        &Frame {
            title: "Cluster usage",
            x_label: TIME,
            y_label: "dominant share used",
            width: WIDE,
            height: 240.0,
            y_fmt: Fmt::Percent,
        },
        &[
            Line {
                label: "usage",
                color: BLUE,
                dashed: false,
                points: usage.clone(),
            },
            Line {
                label: "90%",
                color: GREY,
                dashed: true,
                points: threshold(&usage, 0.9),
            },
        ],
        (0.0, 1.0),
    );
    figure(html, &chart, &usage_caption(&usage));
    let pending = timed(&s.t_ms, &s.pending_containers, |v| v as f64);
    let chart = svg::line_chart(
        &Frame {
            title: "Pending containers",
            x_label: TIME,
            y_label: "containers",
            width: WIDE,
            height: 240.0,
            y_fmt: Fmt::Num,
        },
        &[Line {
            label: "pending",
            color: ORANGE,
            dashed: false,
            points: pending,
        }],
        (0.0, 0.0),
    );
    figure(html, &chart, "");
    html.push_str("</div>\n</section>\n");

    html.push_str("<section>\n<h2>Scheduler throughput</h2>\n");
    let cps = timed(&s.t_ms, &s.cps, |v| v);
    let chart = svg::line_chart(
        &Frame {
            title: "Allocations per second of scheduler CPU time (CPS)",
            x_label: TIME,
            y_label: "allocations / CPU s",
            width: WIDE,
            height: 240.0,
            y_fmt: Fmt::Num,
        },
        &[Line {
            label: "CPS",
            color: PURPLE,
            dashed: false,
            points: cps,
        }],
        (0.0, 0.0),
    );
    figure(
        html,
        &chart,
        "Each point covers the sampling window ending at its time; windows without scheduler time are left out.",
    );
    html.push_str("</section>\n");

    html.push_str("<section>\n<h2>validSchedule per minute</h2>\n");
    let flags = &s.valid_schedule_per_min;
    let chart = svg::strip(
        "validSchedule per minute",
        flags,
        60,
        "minute",
        ("valid", "not valid"),
    );
    let valid = flags.iter().filter(|v| **v).count();
    let caption = if flags.is_empty() {
        String::new()
    } else {
        format!(
            "{valid} of {} minutes valid ({:.1}%; green valid, red not). A minute is valid when usage is above 90% or no valid demand is pending. Rows hold 60 minutes; the label is the row's first minute.",
            flags.len(),
            valid as f64 * 100.0 / flags.len() as f64
        )
    };
    figure(html, &chart, &caption);
    html.push_str("</section>\n");
}

/// A horizontal line at `level` across the time span of `points` (none without points).
fn threshold(points: &[(f64, f64)], level: f64) -> Vec<(f64, f64)> {
    match (points.first(), points.last()) {
        (Some(first), Some(last)) => vec![(first.0, level), (last.0, level)],
        _ => Vec::new(),
    }
}

/// When usage first reached 90% and 99%, from the samples.
fn usage_caption(usage: &[(f64, f64)]) -> String {
    let first = |level: f64| {
        usage
            .iter()
            .find(|(_, u)| *u >= level)
            .map_or("never".to_string(), |(t, _)| format!("{} s", fmt_sig(*t)))
    };
    if usage.is_empty() {
        return String::new();
    }
    format!(
        "First sample at or above 90%: {}; at or above 99%: {}.",
        first(0.9),
        first(0.99)
    )
}

fn queue_section(html: &mut String, t_ms: &[u64], queues: &[QueueSeries]) {
    html.push_str("<section>\n<h2>Queues: usage against fair share</h2>\n<div class=\"row\">\n");
    if queues.is_empty() {
        html.push_str("<p>No queue series.</p>\n");
    }
    for q in queues {
        let title = format!("Queue {}", q.name);
        let usage = timed(t_ms, &q.usage, |v| v);
        let gap = usage
            .iter()
            .zip(timed(t_ms, &q.fair_share, |v| v))
            .map(|((_, u), (_, f))| (u - f).abs())
            .filter(|g| g.is_finite())
            .fold(None, |m: Option<f64>, g| Some(m.map_or(g, |m| m.max(g))));
        let chart = svg::line_chart(
            &Frame {
                title: &title,
                x_label: "virtual time (s)",
                y_label: "share of cluster",
                width: SMALL_W,
                height: SMALL_H,
                y_fmt: Fmt::Percent,
            },
            &[
                Line {
                    label: "usage",
                    color: BLUE,
                    dashed: false,
                    points: usage,
                },
                Line {
                    label: "fair share",
                    color: GREY,
                    dashed: true,
                    points: timed(t_ms, &q.fair_share, |v| v),
                },
            ],
            (0.0, 0.0),
        );
        let caption = gap.map_or(String::new(), |g| {
            format!(
                "Largest |usage - fair share| at a sample: {:.2} percentage points of the cluster.",
                g * 100.0
            )
        });
        figure(html, &chart, &caption);
    }
    html.push_str("</div>\n</section>\n");
}

/// `n`, p50, p90, p99 and max of a sample in ms, shown in seconds.
fn percentiles_caption(ms: &[u64]) -> String {
    if ms.is_empty() {
        return String::new();
    }
    let mut sorted = ms.to_vec();
    sorted.sort_unstable();
    // Nearest rank: the smallest value with at least q of the sample at or below it.
    let pct = |q: f64| {
        let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
        fmt_sig(sorted[rank - 1] as f64 / 1000.0)
    };
    format!(
        "{} apps; p50 {} s, p90 {} s, p99 {} s, max {} s.",
        sorted.len(),
        pct(0.5),
        pct(0.9),
        pct(0.99),
        pct(1.0)
    )
}

fn latency_section(html: &mut String, wait_ms: &[u64], completion_ms: &[u64]) {
    html.push_str("<section>\n<h2>Wait and completion times</h2>\n<div class=\"row\">\n");
    let secs = |ms: &[u64]| ms.iter().map(|v| *v as f64 / 1000.0).collect::<Vec<f64>>();
    for (title, ms, color) in [
        ("Wait from submission to first container", wait_ms, TEAL),
        ("Time from submission to completion", completion_ms, BLUE),
    ] {
        let chart = svg::histogram(
            &Frame {
                title,
                x_label: "seconds",
                y_label: "apps",
                width: SMALL_W + 10.0,
                height: 230.0,
                y_fmt: Fmt::Num,
            },
            &secs(ms),
            24,
            color,
        );
        figure(html, &chart, &percentiles_caption(ms));
    }
    let cdf = svg::line_chart(
        &Frame {
            title: "Wait and completion times, cumulative",
            x_label: "seconds",
            y_label: "apps at or below",
            width: SMALL_W + 10.0,
            height: 230.0,
            y_fmt: Fmt::Percent,
        },
        &[
            Line {
                label: "wait",
                color: TEAL,
                dashed: false,
                points: cdf_points(wait_ms),
            },
            Line {
                label: "completion",
                color: BLUE,
                dashed: false,
                points: cdf_points(completion_ms),
            },
        ],
        (0.0, 1.0),
    );
    figure(html, &cdf, "");
    html.push_str("</div>\n</section>\n");
}

/// The empirical CDF of a sample in ms as steps `(seconds, fraction at or below)`.
fn cdf_points(ms: &[u64]) -> Vec<(f64, f64)> {
    let mut sorted = ms.to_vec();
    sorted.sort_unstable();
    let n = sorted.len() as f64;
    let mut points = Vec::with_capacity(sorted.len() + 1);
    if let Some(first) = sorted.first() {
        points.push((*first as f64 / 1000.0, 0.0));
    }
    for (i, v) in sorted.iter().enumerate() {
        // Only the last of equal values: the CDF jumps there.
        if sorted.get(i + 1) != Some(v) {
            points.push((*v as f64 / 1000.0, (i + 1) as f64 / n));
        }
    }
    points
}

fn phase_section(html: &mut String, phases: &[(String, f64)]) {
    html.push_str("<section>\n<h2>Scheduler time by phase</h2>\n");
    let chart = svg::hbars("Scheduler CPU time by phase", phases, "s", WIDE, PURPLE);
    figure(html, &chart, "");
    html.push_str("</section>\n");
}
