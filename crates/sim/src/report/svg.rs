//! Hand-rolled SVG charts for the HTML report: a line chart, a histogram, horizontal bars and a
//! strip of coloured cells, with "nice" axis ticks.
//!
//! Every number written into the SVG goes through [`Px`] or a tick formatter, and data points
//! that are not finite are dropped before scaling, so a coordinate is never `NaN` or `inf`
//! whatever the input holds. Every text goes through [`esc`].

use std::fmt::{self, Display, Write};

/// Escapes text for HTML and SVG (element content and double- or single-quoted attributes).
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A pixel coordinate: one decimal at most, and a non-finite value (which scaling should
/// never produce; this is the last guard) written as 0.
pub(crate) struct Px(pub(crate) f64);

impl Display for Px {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = if self.0.is_finite() {
            (self.0 * 10.0).round() / 10.0
        } else {
            0.0
        };
        if v.fract() == 0.0 && v.abs() < 1e15 {
            write!(f, "{}", v as i64)
        } else {
            write!(f, "{v:.1}")
        }
    }
}

/// How tick labels and values show a number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fmt {
    /// Plain number; large values get a k/M/G suffix.
    Num,
    /// A fraction shown as a percentage (0.5 -> "50%").
    Percent,
}

/// Decimals needed to tell ticks `step` apart.
fn decimals(step: f64) -> usize {
    if !(step.is_finite() && step > 0.0) || step >= 1.0 {
        return 0;
    }
    ((-step.log10() - 1e-9).ceil().max(0.0) as usize).min(6)
}

/// Formats `v` for an axis whose ticks are `step` apart (also used for single values, with a
/// step that sets the precision).
pub(crate) fn fmt_value(v: f64, step: f64, fmt: Fmt) -> String {
    fmt_scaled(v, step, v.abs().max(step.abs()), fmt)
}

/// Like [`fmt_value`], with the k/M/G suffix chosen from `mag` so all ticks of one axis share
/// a unit ("500k, 1.0M" would read as two scales).
fn fmt_scaled(v: f64, step: f64, mag: f64, fmt: Fmt) -> String {
    if !v.is_finite() {
        return "n/a".to_string();
    }
    match fmt {
        Fmt::Percent => {
            let d = decimals(step * 100.0);
            let s = format!("{:.*}%", d, v * 100.0);
            if v == 0.0 || s.trim_start_matches(['-', '0', '.']) == "%" {
                "0%".to_string()
            } else {
                s
            }
        }
        Fmt::Num => {
            if v == 0.0 {
                return "0".to_string();
            }
            let (div, suffix) = if mag >= 1e9 {
                (1e9, "G")
            } else if mag >= 1e6 {
                (1e6, "M")
            } else if mag >= 1e4 {
                (1e3, "k")
            } else {
                (1.0, "")
            };
            let s = format!("{:.*}{suffix}", decimals(step / div), v / div);
            // Rounded to nothing: "-0.0" would read as a bug.
            if s.trim_start_matches(['-', '0', '.']).len() == suffix.len() {
                "0".to_string()
            } else {
                s
            }
        }
    }
}

/// An axis range widened to round numbers, with its ticks.
#[derive(Clone, Debug)]
pub(crate) struct Axis {
    pub(crate) lo: f64,
    pub(crate) hi: f64,
    pub(crate) step: f64,
}

impl Axis {
    /// An axis covering `min..=max` with about `target` intervals at 1, 2 or 5 times a power of
    /// ten. A degenerate or non-finite range becomes a sensible non-empty one.
    pub(crate) fn nice(min: f64, max: f64, target: usize) -> Axis {
        let (mut lo, mut hi) = if min.is_finite() && max.is_finite() && min <= max {
            (min, max)
        } else {
            (0.0, 1.0)
        };
        if !(hi - lo).is_finite() {
            (lo, hi) = (0.0, 1.0);
        }
        if hi - lo <= f64::EPSILON * hi.abs().max(lo.abs()).max(1e-300) {
            // A constant series: give it room so its line sits inside the frame.
            if lo == 0.0 {
                hi = 1.0;
            } else {
                let pad = lo.abs() * 0.1;
                lo -= pad;
                hi += pad;
            }
        }
        let step = nice_step((hi - lo) / target.max(1) as f64);
        let lo_n = (lo / step).floor() * step;
        let hi_n = (hi / step).ceil() * step;
        if !(lo_n.is_finite() && hi_n.is_finite() && hi_n > lo_n) {
            return Axis {
                lo: 0.0,
                hi: 1.0,
                step: 0.2,
            };
        }
        Axis {
            lo: lo_n,
            hi: hi_n,
            step,
        }
    }

    /// The largest magnitude on the axis, which picks its labels' unit suffix.
    fn mag(&self) -> f64 {
        self.lo.abs().max(self.hi.abs())
    }

    /// The tick positions, lowest first (at most 100, whatever the range).
    pub(crate) fn ticks(&self) -> Vec<f64> {
        let n = ((self.hi - self.lo) / self.step).round();
        let n = if n.is_finite() {
            n.clamp(1.0, 100.0)
        } else {
            1.0
        } as usize;
        (0..=n).map(|i| self.lo + i as f64 * self.step).collect()
    }
}

/// The 1, 2 or 5 times a power of ten nearest to `raw` (Heckbert's rounding), so the number of
/// intervals lands near the target instead of always below it.
fn nice_step(raw: f64) -> f64 {
    if !(raw.is_finite() && raw > 0.0) {
        return 1.0;
    }
    let base = 10f64.powf(raw.log10().floor());
    let f = raw / base;
    let nf = if f < 1.5 {
        1.0
    } else if f < 3.0 {
        2.0
    } else if f < 7.0 {
        5.0
    } else {
        10.0
    };
    nf * base
}

/// Reduces a line to at most `max_points` points (at least 4) while keeping its shape: the
/// first and last points, and in each of equal-width index buckets between them the lowest and
/// the highest point, in order. Peaks and troughs (the global max and min among them) survive.
pub(crate) fn downsample(points: &[(f64, f64)], max_points: usize) -> Vec<(f64, f64)> {
    let max_points = max_points.max(4);
    if points.len() <= max_points {
        return points.to_vec();
    }
    let inner = &points[1..points.len() - 1];
    let buckets = (max_points - 2) / 2;
    let mut out = Vec::with_capacity(max_points);
    out.push(points[0]);
    for b in 0..buckets {
        let start = b * inner.len() / buckets;
        let end = (b + 1) * inner.len() / buckets;
        let chunk = &inner[start..end];
        if chunk.is_empty() {
            continue;
        }
        let (mut lo, mut hi) = (0, 0);
        for (i, p) in chunk.iter().enumerate() {
            if p.1 < chunk[lo].1 {
                lo = i;
            }
            if p.1 > chunk[hi].1 {
                hi = i;
            }
        }
        match lo.cmp(&hi) {
            std::cmp::Ordering::Less => out.extend([chunk[lo], chunk[hi]]),
            std::cmp::Ordering::Greater => out.extend([chunk[hi], chunk[lo]]),
            std::cmp::Ordering::Equal => out.push(chunk[lo]),
        }
    }
    out.push(points[points.len() - 1]);
    out
}

/// The most points one line is drawn with; keeps reports small whatever the run's length.
pub(crate) const MAX_LINE_POINTS: usize = 1000;

/// Chart size and labels shared by the framed charts.
#[derive(Clone, Debug)]
pub(crate) struct Frame<'a> {
    pub(crate) title: &'a str,
    pub(crate) x_label: &'a str,
    pub(crate) y_label: &'a str,
    pub(crate) width: f64,
    pub(crate) height: f64,
    pub(crate) y_fmt: Fmt,
}

/// One line of a line chart.
#[derive(Clone, Debug)]
pub(crate) struct Line<'a> {
    pub(crate) label: &'a str,
    pub(crate) color: &'static str,
    pub(crate) dashed: bool,
    pub(crate) points: Vec<(f64, f64)>,
}

const LEFT: f64 = 62.0;
const RIGHT: f64 = 14.0;
const TOP: f64 = 30.0;
const BOTTOM: f64 = 40.0;
/// Height of the legend row between the title and the plot.
const LEGEND_H: f64 = 14.0;

/// Data-to-pixel mapping of a framed chart.
struct Plot {
    x: Axis,
    y: Axis,
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
}

impl Plot {
    /// `extra_top` makes room for a legend under the title.
    fn new(frame: &Frame<'_>, x: Axis, y: Axis, extra_top: f64) -> Plot {
        Plot {
            x,
            y,
            left: LEFT,
            right: (frame.width - RIGHT).max(LEFT + 1.0),
            top: TOP + extra_top,
            bottom: (frame.height - BOTTOM).max(TOP + extra_top + 1.0),
        }
    }

    fn sx(&self, v: f64) -> f64 {
        self.left + (v - self.x.lo) / (self.x.hi - self.x.lo) * (self.right - self.left)
    }

    fn sy(&self, v: f64) -> f64 {
        self.bottom - (v - self.y.lo) / (self.y.hi - self.y.lo) * (self.bottom - self.top)
    }
}

fn open_svg(out: &mut String, width: f64, height: f64, title: &str) {
    let t = esc(title);
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" aria-label="{t}"><title>{t}</title>"#,
        w = Px(width),
        h = Px(height),
    );
    let _ = write!(
        out,
        r#"<text class="ct" x="8" y="16">{}</text>"#,
        esc(&fit(title, width - 16.0))
    );
}

/// `text` cut to about `width` pixels of title font. The end is kept (the leaf of a long queue
/// path says most); the full text stays in the chart's `<title>` tooltip.
fn fit(text: &str, width: f64) -> String {
    let max = ((width / 7.5).max(4.0)) as usize;
    let n = text.chars().count();
    if n <= max {
        return text.to_string();
    }
    let mut out = String::from("…");
    out.extend(text.chars().skip(n - (max - 1)));
    out
}

/// Draws grid lines, tick labels and axis labels.
fn draw_axes(out: &mut String, plot: &Plot, frame: &Frame<'_>) {
    out.push_str(r#"<g class="grid">"#);
    for t in plot.y.ticks() {
        let y = plot.sy(t);
        let _ = write!(
            out,
            r#"<line x1="{}" y1="{y}" x2="{}" y2="{y}"/>"#,
            Px(plot.left),
            Px(plot.right),
            y = Px(y)
        );
    }
    out.push_str("</g>");
    for t in plot.y.ticks() {
        let _ = write!(
            out,
            r#"<text class="yt" x="{}" y="{}">{}</text>"#,
            Px(plot.left - 5.0),
            Px(plot.sy(t) + 3.5),
            esc(&fmt_scaled(t, plot.y.step, plot.y.mag(), frame.y_fmt))
        );
    }
    for t in plot.x.ticks() {
        let x = Px(plot.sx(t));
        let _ = write!(
            out,
            r#"<line class="tick" x1="{x}" y1="{}" x2="{x}" y2="{}"/><text class="xt" x="{x}" y="{}">{}</text>"#,
            Px(plot.bottom),
            Px(plot.bottom + 4.0),
            Px(plot.bottom + 15.0),
            esc(&fmt_scaled(t, plot.x.step, plot.x.mag(), Fmt::Num))
        );
    }
    let _ = write!(
        out,
        r#"<rect class="frame" x="{}" y="{}" width="{}" height="{}"/>"#,
        Px(plot.left),
        Px(plot.top),
        Px(plot.right - plot.left),
        Px(plot.bottom - plot.top)
    );
    let _ = write!(
        out,
        r#"<text class="xl" x="{}" y="{}">{}</text>"#,
        Px((plot.left + plot.right) / 2.0),
        Px(frame.height - 6.0),
        esc(frame.x_label)
    );
    let _ = write!(
        out,
        r#"<text class="yl" transform="translate(12 {}) rotate(-90)">{}</text>"#,
        Px((plot.top + plot.bottom) / 2.0),
        esc(frame.y_label)
    );
}

fn no_data(out: &mut String, frame: &Frame<'_>) {
    let _ = write!(
        out,
        r#"<text class="nd" x="{}" y="{}">no data</text>"#,
        Px(frame.width / 2.0),
        Px(frame.height / 2.0)
    );
}

/// The finite range of `values`, if any.
fn finite_range(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values
        .filter(|v| v.is_finite())
        .fold(None, |acc, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })
}

/// A line chart. The y axis always includes `y_include` (e.g. `(0.0, 1.0)` for a share) and
/// zero; points with a non-finite coordinate are dropped.
pub(crate) fn line_chart(frame: &Frame<'_>, lines: &[Line<'_>], y_include: (f64, f64)) -> String {
    let mut out = String::new();
    open_svg(&mut out, frame.width, frame.height, frame.title);
    let lines: Vec<(&Line<'_>, Vec<(f64, f64)>)> = lines
        .iter()
        .map(|l| {
            let finite: Vec<(f64, f64)> = l
                .points
                .iter()
                .copied()
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .collect();
            (l, downsample(&finite, MAX_LINE_POINTS))
        })
        .collect();
    let all = || lines.iter().flat_map(|(_, p)| p.iter());
    let Some((x_lo, x_hi)) = finite_range(all().map(|p| p.0)) else {
        let plot = Plot::new(frame, Axis::nice(0.0, 1.0, 5), Axis::nice(0.0, 1.0, 4), 0.0);
        draw_axes(&mut out, &plot, frame);
        no_data(&mut out, frame);
        out.push_str("</svg>");
        return out;
    };
    let (y_lo, y_hi) = finite_range(all().map(|p| p.1)).unwrap_or((0.0, 0.0));
    let y_lo = y_lo.min(y_include.0).min(0.0);
    let y_hi = y_hi.max(y_include.1);
    let legend_room = if lines.len() > 1 { LEGEND_H } else { 0.0 };
    let plot = Plot::new(
        frame,
        Axis::nice(x_lo, x_hi, 6),
        Axis::nice(y_lo, y_hi, 4),
        legend_room,
    );
    draw_axes(&mut out, &plot, frame);
    for (line, points) in &lines {
        if points.is_empty() {
            continue;
        }
        let mut d = String::with_capacity(points.len() * 12);
        for (i, (x, y)) in points.iter().enumerate() {
            let _ = write!(
                d,
                "{}{} {}",
                if i == 0 { "M" } else { "L" },
                Px(plot.sx(*x)),
                Px(plot.sy(*y))
            );
        }
        if points.len() == 1 {
            // A single sample would be an invisible zero-length path; draw a dot too.
            let _ = write!(
                out,
                r#"<circle cx="{}" cy="{}" r="2.5" fill="{}"/>"#,
                Px(plot.sx(points[0].0)),
                Px(plot.sy(points[0].1)),
                line.color
            );
        }
        let _ = write!(
            out,
            r#"<path d="{d}" fill="none" stroke="{}" stroke-width="1.6"{}/>"#,
            line.color,
            if line.dashed {
                r#" stroke-dasharray="5 3""#
            } else {
                ""
            }
        );
    }
    legend(&mut out, frame, lines.iter().map(|(l, _)| *l));
    out.push_str("</svg>");
    out
}

/// Line swatches with labels along the top right, when there is more than one line.
fn legend<'a>(out: &mut String, frame: &Frame<'_>, lines: impl Iterator<Item = &'a Line<'a>>) {
    let lines: Vec<&Line<'_>> = lines.collect();
    if lines.len() < 2 {
        return;
    }
    // Right-aligned: approximate text width, since SVG cannot measure without script.
    let widths: Vec<f64> = lines
        .iter()
        .map(|l| 26.0 + 6.0 * l.label.chars().count() as f64 + 12.0)
        .collect();
    let mut x = frame.width - RIGHT - widths.iter().sum::<f64>();
    for (line, w) in lines.iter().zip(widths) {
        let _ = write!(
            out,
            r#"<line x1="{}" y1="31" x2="{}" y2="31" stroke="{}" stroke-width="2"{}/><text class="lg" x="{}" y="35">{}</text>"#,
            Px(x),
            Px(x + 20.0),
            line.color,
            if line.dashed {
                r#" stroke-dasharray="5 3""#
            } else {
                ""
            },
            Px(x + 24.0),
            esc(line.label)
        );
        x += w;
    }
}

/// A histogram of non-negative `values` in about `target_bins` bins of a round width.
pub(crate) fn histogram(
    frame: &Frame<'_>,
    values: &[f64],
    target_bins: usize,
    color: &str,
) -> String {
    let mut out = String::new();
    open_svg(&mut out, frame.width, frame.height, frame.title);
    let Some((lo, hi)) = finite_range(values.iter().copied()) else {
        let plot = Plot::new(frame, Axis::nice(0.0, 1.0, 5), Axis::nice(0.0, 1.0, 4), 0.0);
        draw_axes(&mut out, &plot, frame);
        no_data(&mut out, frame);
        out.push_str("</svg>");
        return out;
    };
    let bins_axis = Axis::nice(lo.min(0.0), hi, target_bins.max(1));
    let n = bins_axis.ticks().len().saturating_sub(1).max(1);
    let mut counts = vec![0u64; n];
    for v in values.iter().filter(|v| v.is_finite()) {
        let i = ((v - bins_axis.lo) / bins_axis.step).floor();
        let i = if i.is_finite() {
            i.max(0.0) as usize
        } else {
            0
        };
        counts[i.min(n - 1)] += 1;
    }
    let max_count = counts.iter().copied().max().unwrap_or(0) as f64;
    let x_axis = Axis::nice(bins_axis.lo, bins_axis.lo + n as f64 * bins_axis.step, 6);
    let plot = Plot::new(frame, x_axis, Axis::nice(0.0, max_count, 4), 0.0);
    draw_axes(&mut out, &plot, frame);
    for (i, c) in counts.iter().enumerate() {
        if *c == 0 {
            continue;
        }
        let x0 = plot.sx(bins_axis.lo + i as f64 * bins_axis.step);
        let x1 = plot.sx(bins_axis.lo + (i + 1) as f64 * bins_axis.step);
        let y = plot.sy(*c as f64);
        let _ = write!(
            out,
            r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{color}"><title>{}–{}: {c}</title></rect>"#,
            Px(x0 + 0.5),
            Px(y),
            Px((x1 - x0 - 1.0).max(0.5)),
            Px(plot.bottom - y),
            esc(&fmt_value(
                bins_axis.lo + i as f64 * bins_axis.step,
                bins_axis.step,
                Fmt::Num
            )),
            esc(&fmt_value(
                bins_axis.lo + (i + 1) as f64 * bins_axis.step,
                bins_axis.step,
                Fmt::Num
            )),
        );
    }
    out.push_str("</svg>");
    out
}

/// The width one character of a bar label takes, at most, in px (11 px system-ui).
pub(crate) const LABEL_CHAR_W: f64 = 6.5;

/// Horizontal bars, one per `(label, value)`, scaled to the largest, each labelled with its
/// value in `unit` and its share of the total; the label column fits the longest label.
pub(crate) fn hbars(
    title: &str,
    bars: &[(String, f64)],
    unit: &str,
    width: f64,
    color: &str,
) -> String {
    const ROW: f64 = 24.0;
    const VALUE_W: f64 = 150.0;
    // Room for the longest label at the 11 px label font (about 6.5 px a character, generous
    // so that no label is clipped at the left edge), at most half the chart.
    let longest = bars
        .iter()
        .map(|(l, _)| l.chars().count())
        .max()
        .unwrap_or(0);
    let label_w = (longest as f64 * LABEL_CHAR_W + 16.0).clamp(60.0, width / 2.0);
    let height = TOP + ROW * bars.len().max(1) as f64 + 10.0;
    let mut out = String::new();
    open_svg(&mut out, width, height, title);
    let clean = |v: f64| if v.is_finite() && v > 0.0 { v } else { 0.0 };
    let total: f64 = bars.iter().map(|(_, v)| clean(*v)).sum();
    let max = bars.iter().map(|(_, v)| clean(*v)).fold(0.0, f64::max);
    if bars.is_empty() {
        let _ = write!(
            out,
            r#"<text class="nd" x="{}" y="{}">no data</text>"#,
            Px(width / 2.0),
            Px(TOP + 14.0)
        );
    }
    let span = (width - label_w - VALUE_W).max(10.0);
    for (i, (label, v)) in bars.iter().enumerate() {
        let v = clean(*v);
        let y = TOP + i as f64 * ROW;
        let w = if max > 0.0 { v / max * span } else { 0.0 };
        let share = if total > 0.0 { v / total } else { 0.0 };
        let _ = write!(
            out,
            r#"<text class="bl" x="{}" y="{}">{}</text><rect x="{}" y="{}" width="{}" height="{}" fill="{color}"/><text class="bv" x="{}" y="{}">{} {} ({})</text>"#,
            Px(label_w - 8.0),
            Px(y + ROW / 2.0 + 4.0),
            esc(label),
            Px(label_w),
            Px(y + 3.0),
            Px(w),
            Px(ROW - 6.0),
            Px(label_w + w + 6.0),
            Px(y + ROW / 2.0 + 4.0),
            esc(&fmt_sig(v)),
            esc(unit),
            esc(&fmt_value(share, 0.001, Fmt::Percent)),
        );
    }
    out.push_str("</svg>");
    out
}

/// A value with at most three significant digits, trailing zeros dropped (large ones with a
/// k/M/G suffix).
pub(crate) fn fmt_sig(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".to_string();
    }
    if v == 0.0 {
        return "0".to_string();
    }
    let mag = v.abs();
    let step = if mag >= 1e4 {
        // fmt_value picks the suffix from the magnitude; 3 significant digits of it.
        10f64.powf(mag.log10().floor() - 2.0)
    } else {
        10f64.powf(mag.log10().floor() - 2.0).min(1.0)
    };
    let s = fmt_value(v, step, Fmt::Num);
    // "18.0" reads as false precision in a sentence; keep the suffix, drop trailing zeros.
    let digits_end = s.trim_end_matches(char::is_alphabetic).len();
    let (num, suffix) = s.split_at(digits_end);
    if num.contains('.') {
        format!(
            "{}{suffix}",
            num.trim_end_matches('0').trim_end_matches('.')
        )
    } else {
        s
    }
}

/// A strip of cells, one per flag, in rows of `per_row`: green for true, red for false. Each
/// cell's tooltip reads `"{cell_label} {index}: {yes|no}"`.
pub(crate) fn strip(
    title: &str,
    flags: &[bool],
    per_row: usize,
    cell_label: &str,
    (yes, no): (&str, &str),
) -> String {
    const CELL: f64 = 12.0;
    const GAP: f64 = 2.0;
    const LEFT_W: f64 = 44.0;
    let per_row = per_row.max(1);
    let rows = flags.len().div_ceil(per_row).max(1);
    let cols = flags.len().clamp(1, per_row);
    let width = (LEFT_W + cols as f64 * (CELL + GAP) + 8.0).max(300.0);
    let height = TOP + rows as f64 * (CELL + GAP) + 8.0;
    let mut out = String::new();
    open_svg(&mut out, width, height, title);
    if flags.is_empty() {
        let _ = write!(
            out,
            r#"<text class="nd" x="{}" y="{}">no data</text>"#,
            Px(width / 2.0),
            Px(TOP + 10.0)
        );
    }
    for r in 0..rows {
        if r * per_row < flags.len() {
            let _ = write!(
                out,
                r#"<text class="yt" x="{}" y="{}">{}</text>"#,
                Px(LEFT_W - 6.0),
                Px(TOP + r as f64 * (CELL + GAP) + CELL - 2.0),
                r * per_row
            );
        }
    }
    for (i, ok) in flags.iter().enumerate() {
        let (r, c) = (i / per_row, i % per_row);
        let _ = write!(
            out,
            r#"<rect x="{}" y="{}" width="{CELL}" height="{CELL}" fill="{}"><title>{} {i}: {}</title></rect>"#,
            Px(LEFT_W + c as f64 * (CELL + GAP)),
            Px(TOP + r as f64 * (CELL + GAP)),
            if *ok { "#16a34a" } else { "#dc2626" },
            esc(cell_label),
            if *ok { yes } else { no },
        );
    }
    out.push_str("</svg>");
    out
}
