//! A preset run's timeline: one row per second (coarser for long runs) of what the bench sent
//! and received, and per scrape interval what the RM's driver spent its time on, read from
//! deltas of its `/metrics` counters. The per-minute rows hide when latency builds; these say
//! when, and what the RM was doing then.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::stats::{Sample, Timeline};

/// Rows kept at most: a longer run gets wider rows (a 2-hour run: 6-second rows).
pub(crate) const MAX_ROWS: u64 = 1200;
/// Driver intervals kept at most: more scrapes are merged into longer intervals.
pub(crate) const MAX_DRIVER_INTERVALS: usize = 600;
/// Kinds named in each driver interval (the ones that took longest).
const TOP_KINDS: usize = 6;
/// Rows the text summary lists.
const WORST_ROWS: usize = 8;
/// A row whose bench CPU reaches this many cores may have been limited by the bench.
const BENCH_BUSY_CORES: f64 = 0.9;
/// A row with more than this fraction of heartbeats sent late was limited by the bench.
const LATE_FRACTION: f64 = 0.01;

/// What the sampler reads each second while the run lasts.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Tick {
    /// When, ms since the bench's origin.
    pub(crate) at_ms: u64,
    /// Apps submitted so far.
    pub(crate) submitted: u64,
    /// Apps whose AM ended so far.
    pub(crate) ams_done: u64,
    /// Submissions in flight (REST calls not yet answered).
    pub(crate) submitting: u64,
    /// The RM's CPU seconds so far.
    pub(crate) rm_cpu: Option<f64>,
    /// The bench's CPU seconds so far.
    pub(crate) bench_cpu: Option<f64>,
    /// The RM's resident memory, bytes.
    pub(crate) rm_rss: Option<u64>,
}

/// The driver's counters as one `/metrics` scrape showed them.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct DriverCounters {
    /// Per kind: calls and seconds in the core.
    pub(crate) kinds: BTreeMap<String, (f64, f64)>,
    /// How long the last periodic update took, seconds.
    pub(crate) update_seconds: Option<f64>,
    /// Store transactions written.
    pub(crate) store_writes: f64,
    /// Seconds spent writing them.
    pub(crate) store_write_seconds: f64,
}

/// One scrape of the RM's `/metrics`.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Scrape {
    /// When it was sent, ms since the bench's origin.
    pub(crate) at_ms: u64,
    /// How long the RM took to answer, ms.
    pub(crate) took_ms: f64,
    /// The answer's size, bytes.
    pub(crate) bytes: usize,
    /// What it said.
    pub(crate) driver: DriverCounters,
}

/// A Prometheus sample line's value and its `kind` label (if any).
fn sample_line(line: &str) -> Option<(&str, Option<&str>, f64)> {
    let (name_labels, value) = line.rsplit_once(' ')?;
    let value: f64 = value.trim().parse().ok()?;
    match name_labels.split_once('{') {
        Some((name, labels)) => {
            let kind = labels
                .split(',')
                .find_map(|l| l.strip_prefix("kind=\""))
                .map(|k| k.trim_end_matches('}').trim_end_matches('"'));
            Some((name, kind, value))
        }
        None => Some((name_labels, None, value)),
    }
}

/// Reads the driver's families out of a `/metrics` exposition (other families are skipped).
pub(crate) fn parse_driver_counters(text: &str) -> DriverCounters {
    let mut c = DriverCounters::default();
    for line in text.lines() {
        if !line.starts_with("weft_s") {
            continue;
        }
        let Some((name, kind, value)) = sample_line(line) else {
            continue;
        };
        match (name, kind) {
            ("weft_scheduler_calls_total", Some(k)) => {
                c.kinds.entry(k.to_string()).or_default().0 = value;
            }
            ("weft_scheduler_call_seconds_total", Some(k)) => {
                c.kinds.entry(k.to_string()).or_default().1 = value;
            }
            ("weft_scheduler_update_duration_seconds", None) => c.update_seconds = Some(value),
            ("weft_store_writes_total", None) => c.store_writes = value,
            ("weft_store_write_seconds_total", None) => c.store_write_seconds = value,
            _ => {}
        }
    }
    c
}

/// The work a driver kind is part of.
fn group_of(kind: &str) -> &'static str {
    let k = kind.to_ascii_lowercase();
    // `node_update` is the scheduler's side of a heartbeat (the RM runs it per heartbeat).
    if k.contains("heartbeat") || k == "node_update" {
        "heartbeats"
    } else if k.contains("allocate") || k == "state.answer" {
        // `State.answer` was the Allocate stream's handler before stop 33 (an older RM's
        // `allocate_stream::State::answer`; now `allocate_stream.answer`).
        "allocates"
    } else if k.contains("finish") {
        "finishes"
    } else if k.contains("submit") || k.contains("new_application") {
        "submissions"
    } else if k.contains("register") {
        "registers"
    } else if matches!(k.as_str(), "tick" | "update" | "timeout" | "verify") {
        "ticks"
    } else {
        "other"
    }
}

/// Latency of the replies received in a row, ms.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Latency {
    /// Replies received.
    pub count: usize,
    /// Median.
    pub p50_ms: f64,
    /// 99th percentile.
    pub p99_ms: f64,
    /// Slowest.
    pub max_ms: f64,
}

fn latency(mut micros: Vec<u32>) -> Latency {
    if micros.is_empty() {
        return Latency::default();
    }
    micros.sort_unstable();
    let rank = |p: f64| {
        let i = ((p * micros.len() as f64).ceil() as usize).clamp(1, micros.len()) - 1;
        f64::from(micros[i]) / 1000.0
    };
    Latency {
        count: micros.len(),
        p50_ms: rank(0.50),
        p99_ms: rank(0.99),
        max_ms: f64::from(micros[micros.len() - 1]) / 1000.0,
    }
}

/// One row of the timeline (one second, or `row_seconds` in a long run).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SecondRow {
    /// Start, seconds since the first submission.
    pub at_s: u64,
    /// Seconds the row covers (the last one may be partial).
    pub seconds: f64,
    /// Heartbeats sent in the row.
    pub heartbeats_sent: u64,
    /// Heartbeat replies received in the row and their latency.
    pub heartbeat: Latency,
    /// Allocate calls sent in the row.
    pub allocates_sent: u64,
    /// Allocate replies received in the row and their latency.
    pub allocate: Latency,
    /// Containers the AMs received.
    pub allocated: u64,
    /// Container completions the simulated NMs reported.
    pub completed: u64,
    /// AM finish calls sent in the row.
    pub finishes_sent: u64,
    /// AM finish replies received in the row and their latency.
    pub finish: Latency,
    /// Apps submitted and not yet ended, at the row's end.
    pub apps_live: Option<u64>,
    /// Apps submitted in the row.
    pub apps_submitted: Option<u64>,
    /// Submissions in flight at the row's end.
    pub submitting: Option<u64>,
    /// Submissions (new-application and submit, one after the other) answered in the row and
    /// their latency.
    pub submission: Latency,
    /// Cluster usage at the last observation at or before the row's end.
    pub usage: Option<f64>,
    /// RM CPU, cores.
    pub rm_cores: Option<f64>,
    /// Bench CPU, cores.
    pub bench_cores: Option<f64>,
    /// RM resident memory at the row's end, MiB.
    pub rm_rss_mib: Option<f64>,
    /// Heartbeats the bench sent late (its runtime too busy), by due time.
    pub late_heartbeats: u64,
    /// The bench may have been the bottleneck in this row (near a core of CPU, or more than
    /// 1% of heartbeats sent late).
    pub bench_busy: bool,
}

/// One kind's share of a driver interval.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct KindShare {
    /// `module.function`, `tick`, `update` or `timeout`.
    pub kind: String,
    /// Calls in the interval.
    pub calls: u64,
    /// Fraction of the interval's wall time spent in the core for them.
    pub share: f64,
}

/// What the RM's driver spent an interval between two `/metrics` scrapes on: fractions of
/// the wall time (0.5: half of each second) in the scheduler core per group of kinds.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DriverInterval {
    /// Start, seconds since the first submission.
    pub from_s: f64,
    /// End, seconds since the first submission.
    pub to_s: f64,
    /// All kinds together.
    pub busy: f64,
    /// NM heartbeats (unary and streamed) and the scheduler's node updates they cause.
    pub heartbeats: f64,
    /// AM Allocates.
    pub allocates: f64,
    /// AM finishes.
    pub finishes: f64,
    /// New-application and submit calls.
    pub submissions: f64,
    /// AM and NM registrations.
    pub registers: f64,
    /// The driver's ticks, periodic updates, timeouts and verification slices.
    pub ticks: f64,
    /// Everything else (REST reads, `/metrics` itself, admin).
    pub other: f64,
    /// The store writer's thread, writing transactions (beside the driver, not in `busy`).
    pub store_writes: f64,
    /// Transactions written.
    pub store_transactions: u64,
    /// The last periodic update's duration at the interval's end, ms.
    pub update_ms: Option<f64>,
    /// The kinds that took longest.
    pub top: Vec<KindShare>,
}

fn driver_interval(a: &Scrape, b: &Scrape, start_ms: u64) -> DriverInterval {
    let wall = b.at_ms.saturating_sub(a.at_ms) as f64 / 1000.0;
    let per_wall = |v: f64| if wall > 0.0 { v.max(0.0) / wall } else { 0.0 };
    let mut d = DriverInterval {
        from_s: a.at_ms.saturating_sub(start_ms) as f64 / 1000.0,
        to_s: b.at_ms.saturating_sub(start_ms) as f64 / 1000.0,
        store_writes: per_wall(b.driver.store_write_seconds - a.driver.store_write_seconds),
        store_transactions: (b.driver.store_writes - a.driver.store_writes).max(0.0) as u64,
        update_ms: b.driver.update_seconds.map(|s| s * 1000.0),
        ..DriverInterval::default()
    };
    let mut kinds = Vec::new();
    for (kind, (calls, seconds)) in &b.driver.kinds {
        let (calls_before, seconds_before) = a.driver.kinds.get(kind).copied().unwrap_or_default();
        let share = per_wall(seconds - seconds_before);
        let calls = (calls - calls_before).max(0.0) as u64;
        d.busy += share;
        *match group_of(kind) {
            "heartbeats" => &mut d.heartbeats,
            "allocates" => &mut d.allocates,
            "finishes" => &mut d.finishes,
            "submissions" => &mut d.submissions,
            "registers" => &mut d.registers,
            "ticks" => &mut d.ticks,
            _ => &mut d.other,
        } += share;
        if calls > 0 || share > 0.0 {
            kinds.push(KindShare {
                kind: kind.clone(),
                calls,
                share,
            });
        }
    }
    kinds.sort_by(|x, y| y.share.total_cmp(&x.share));
    kinds.truncate(TOP_KINDS);
    d.top = kinds;
    d
}

/// How the `/metrics` scrapes went.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ScrapeStats {
    /// Scrapes answered.
    pub scrapes: usize,
    /// Scrapes that failed.
    pub failures: u64,
    /// The slowest answer, ms.
    pub max_ms: f64,
    /// The largest answer, bytes.
    pub max_bytes: usize,
}

/// The run's timeline (`timeline` in the JSON report).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TimelineReport {
    /// Seconds each row covers (1, or more in a run longer than 1,200 s).
    pub row_seconds: u64,
    /// When the run stopped, seconds since the first submission: the rows after it are the
    /// wind-down (every AM unregisters, the RM stops their containers).
    pub stop_s: f64,
    /// From the first submission to the end of the wind-down.
    pub rows: Vec<SecondRow>,
    /// Between consecutive `/metrics` scrapes (merged in a long run).
    pub driver: Vec<DriverInterval>,
    /// The scrapes themselves (what they cost the RM).
    pub scrape: ScrapeStats,
}

/// What the timeline is made from.
pub(crate) struct Inputs<'a> {
    /// The first submission, ms since the origin.
    pub(crate) start_ms: u64,
    /// The stop, ms since the origin.
    pub(crate) stop_ms: u64,
    /// The end of the wind-down after the stop (the timeline's last row), ms since the origin.
    pub(crate) end_ms: u64,
    pub(crate) heartbeats: &'a [Sample],
    pub(crate) allocates: &'a [Sample],
    pub(crate) finishes: &'a [Sample],
    pub(crate) submissions: &'a [Sample],
    pub(crate) allocated: &'a Timeline,
    pub(crate) completed: &'a Timeline,
    pub(crate) late: &'a Timeline,
    pub(crate) ticks: &'a [Tick],
    /// `(at_ms, usage)` of the run's observations, in time order.
    pub(crate) usage: &'a [(u64, Option<f64>)],
    pub(crate) scrapes: &'a [Scrape],
    pub(crate) scrape_failures: u64,
}

/// Row width for a run of `run_ms`: whole seconds, at most [`MAX_ROWS`] rows.
pub(crate) fn row_seconds(run_ms: u64) -> u64 {
    run_ms.div_ceil(1000).div_ceil(MAX_ROWS).max(1)
}

struct Rows {
    start_ms: u64,
    width_ms: u64,
    count: usize,
}

impl Rows {
    fn index(&self, at_ms: u64) -> Option<usize> {
        let i = usize::try_from(at_ms.checked_sub(self.start_ms)? / self.width_ms).ok()?;
        (i < self.count).then_some(i)
    }

    /// Sent counts by send time, and latencies by reply time.
    fn calls(&self, samples: &[Sample]) -> (Vec<u64>, Vec<Vec<u32>>) {
        let mut sent = vec![0u64; self.count];
        let mut replies = vec![Vec::new(); self.count];
        for s in samples {
            if let Some(i) = self.index(s.at_ms) {
                sent[i] += 1;
            }
            let reply_ms = s.at_ms + u64::from(s.micros) / 1000;
            if let Some(i) = self.index(reply_ms) {
                replies[i].push(s.micros);
            }
        }
        (sent, replies)
    }

    fn events(&self, t: &Timeline) -> Vec<u64> {
        t.buckets(self.start_ms, self.width_ms, self.count)
    }
}

/// Builds the timeline.
pub(crate) fn build(x: &Inputs<'_>) -> TimelineReport {
    let run_ms = x.end_ms.max(x.stop_ms).saturating_sub(x.start_ms);
    let row_s = row_seconds(run_ms);
    let width_ms = row_s * 1000;
    let rows = Rows {
        start_ms: x.start_ms,
        width_ms,
        count: usize::try_from(run_ms.div_ceil(width_ms)).unwrap_or(0),
    };
    let (hb_sent, hb_replies) = rows.calls(x.heartbeats);
    let (al_sent, al_replies) = rows.calls(x.allocates);
    let (fin_sent, fin_replies) = rows.calls(x.finishes);
    let (_, sub_replies) = rows.calls(x.submissions);
    let allocated = rows.events(x.allocated);
    let completed = rows.events(x.completed);
    let late = rows.events(x.late);
    let tick_at = |t: u64| x.ticks.iter().rfind(|k| k.at_ms <= t);
    let mut out = Vec::with_capacity(rows.count);
    let zipped = hb_replies
        .into_iter()
        .zip(al_replies)
        .zip(fin_replies)
        .zip(sub_replies);
    for (i, (((hb, al), fin), sub)) in zipped.enumerate() {
        let from = x.start_ms + i as u64 * width_ms;
        let to = (from + width_ms).min(x.end_ms.max(x.stop_ms));
        let (a, mut b) = (tick_at(from).or(x.ticks.first()), tick_at(to));
        // A starved bench can miss a tick: the row's CPU then comes from the next tick on.
        if let (Some(ta), Some(tb)) = (a, b) {
            if tb.at_ms <= ta.at_ms {
                b = x.ticks.iter().find(|k| k.at_ms > ta.at_ms).or(b);
            }
        }
        let wall = match (a, b) {
            (Some(a), Some(b)) => b.at_ms.saturating_sub(a.at_ms) as f64 / 1000.0,
            _ => 0.0,
        };
        let cores = |f: fn(&Tick) -> Option<f64>| -> Option<f64> {
            let (a, b) = (a?, b?);
            (wall > 0.0).then_some(())?;
            Some((f(b)? - f(a)?) / wall)
        };
        let rm_cores = cores(|t| t.rm_cpu);
        let bench_cores = cores(|t| t.bench_cpu);
        let sent = hb_sent[i];
        let bench_busy = bench_cores.is_some_and(|c| c >= BENCH_BUSY_CORES)
            || (sent > 0 && late[i] as f64 > LATE_FRACTION * sent as f64);
        out.push(SecondRow {
            at_s: i as u64 * row_s,
            seconds: to.saturating_sub(from) as f64 / 1000.0,
            heartbeats_sent: sent,
            heartbeat: latency(hb),
            allocates_sent: al_sent[i],
            allocate: latency(al),
            allocated: allocated[i],
            completed: completed[i],
            finishes_sent: fin_sent[i],
            finish: latency(fin),
            apps_live: b.map(|t| t.submitted.saturating_sub(t.ams_done)),
            apps_submitted: match (a, b) {
                (Some(a), Some(b)) => Some(b.submitted.saturating_sub(a.submitted)),
                _ => None,
            },
            submitting: b.map(|t| t.submitting),
            submission: latency(sub),
            usage: x.usage.iter().rfind(|(at, _)| *at <= to).and_then(|u| u.1),
            rm_cores,
            bench_cores,
            rm_rss_mib: b
                .and_then(|t| t.rm_rss)
                .map(|r| r as f64 / (1024.0 * 1024.0)),
            late_heartbeats: late[i],
            bench_busy,
        });
    }
    let stride = x.scrapes.len().div_ceil(MAX_DRIVER_INTERVALS).max(1);
    let kept: Vec<&Scrape> = x
        .scrapes
        .iter()
        .enumerate()
        .filter(|(i, _)| i % stride == 0 || *i + 1 == x.scrapes.len())
        .map(|(_, s)| s)
        .collect();
    let driver = kept
        .windows(2)
        .map(|w| driver_interval(w[0], w[1], x.start_ms))
        .collect();
    TimelineReport {
        stop_s: x.stop_ms.saturating_sub(x.start_ms) as f64 / 1000.0,
        row_seconds: row_s,
        rows: out,
        driver,
        scrape: ScrapeStats {
            scrapes: x.scrapes.len(),
            failures: x.scrape_failures,
            max_ms: x.scrapes.iter().map(|s| s.took_ms).fold(0.0, f64::max),
            max_bytes: x.scrapes.iter().map(|s| s.bytes).max().unwrap_or(0),
        },
    }
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x:.digits$}"))
}

fn row_line(r: &SecondRow) -> String {
    format!(
        "{:>5}  {:>6}/{:<6} {:>7.0}/{:<7.0} {:>6}/{:<6} {:>7.0}/{:<7.0} {:>6} {:>6} {:>5}/{:<7.0} {:>6} {:>5}/{:<3} {:>6.0} {:>5} {:>5} {:>5}{}",
        r.at_s,
        r.heartbeats_sent,
        r.heartbeat.count,
        r.heartbeat.p50_ms,
        r.heartbeat.p99_ms,
        r.allocates_sent,
        r.allocate.count,
        r.allocate.p50_ms,
        r.allocate.p99_ms,
        r.allocated,
        r.completed,
        r.finish.count,
        r.finish.p99_ms,
        r.apps_live.map_or_else(|| "-".into(), |v| v.to_string()),
        r.apps_submitted.map_or_else(|| "-".into(), |v| v.to_string()),
        r.submitting.map_or_else(|| "-".into(), |v| v.to_string()),
        r.submission.p99_ms,
        opt(r.rm_cores, 2),
        opt(r.bench_cores, 2),
        opt(r.usage, 2),
        if r.bench_busy { "  bench busy" } else { "" }
    )
}

const HEADER: &str = "    s  hb sent/recv   p50/p99 ms   al sent/recv   p50/p99 ms  alloc   done  fin/p99 ms    live subm/inflt p99 ms RMcpu bench usage";

fn driver_line(d: &DriverInterval) -> String {
    let top: Vec<String> = d
        .top
        .iter()
        .take(3)
        .map(|k| format!("{} {:.0}% ({} calls)", k.kind, k.share * 100.0, k.calls))
        .collect();
    format!(
        "{:>6.0}-{:<6.0} busy {:>3.0}%: hb {:>3.0}% alloc {:>3.0}% finish {:>3.0}% submit {:>3.0}% register {:>3.0}% ticks {:>3.0}% other {:>3.0}%; store {:>3.0}% ({} tx); top: {}",
        d.from_s,
        d.to_s,
        d.busy * 100.0,
        d.heartbeats * 100.0,
        d.allocates * 100.0,
        d.finishes * 100.0,
        d.submissions * 100.0,
        d.registers * 100.0,
        d.ticks * 100.0,
        d.other * 100.0,
        d.store_writes * 100.0,
        d.store_transactions,
        top.join(", ")
    )
}

impl TimelineReport {
    /// The rows with the slowest heartbeat replies (p99), slowest first.
    pub fn worst_rows(&self, n: usize) -> Vec<&SecondRow> {
        let mut rows: Vec<&SecondRow> =
            self.rows.iter().filter(|r| r.heartbeat.count > 0).collect();
        rows.sort_by(|a, b| b.heartbeat.p99_ms.total_cmp(&a.heartbeat.p99_ms));
        rows.truncate(n);
        rows
    }

    /// The worst rows and the driver intervals around them, for people.
    pub fn summary(&self) -> String {
        let mut s = String::from("timeline: the slowest seconds (by heartbeat p99)\n");
        s.push_str(HEADER);
        s.push('\n');
        for r in self.worst_rows(WORST_ROWS) {
            s.push_str(&row_line(r));
            s.push('\n');
            let end = (r.at_s + self.row_seconds) as f64;
            if let Some(d) = self.driver.iter().find(|d| d.to_s >= end && d.from_s < end) {
                s.push_str("       driver ");
                s.push_str(&driver_line(d));
                s.push('\n');
            }
        }
        s
    }

    /// Every row and every driver interval, for people.
    pub fn text(&self) -> String {
        let mut s = format!(
            "timeline: {} s per row, the run stopped at {:.0} s (the wind-down follows)\n{HEADER}\n",
            self.row_seconds, self.stop_s
        );
        for r in &self.rows {
            s.push_str(&row_line(r));
            s.push('\n');
        }
        s.push_str("driver (share of wall time in the scheduler core, per /metrics interval):\n");
        for d in &self.driver {
            s.push_str(&driver_line(d));
            s.push('\n');
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(at_ms: u64, ms: u32) -> Sample {
        Sample {
            at_ms,
            micros: ms * 1000,
        }
    }

    #[test]
    fn driver_families_are_read_and_others_skipped() {
        let text = "# HELP weft_scheduler_calls_total x\n\
            weft_scheduler_calls_total{kind=\"tracker.node_heartbeat\"} 120\n\
            weft_scheduler_call_seconds_total{kind=\"tracker.node_heartbeat\"} 0.5\n\
            weft_scheduler_calls_total{kind=\"update\"} 4\n\
            weft_scheduler_update_duration_seconds 0.012\n\
            weft_store_writes_total 30\n\
            weft_store_write_seconds_total 0.25\n\
            weft_queue_pending{queue=\"root.a\",kind=\"x\"} 9\n";
        let c = parse_driver_counters(text);
        assert_eq!(c.kinds["tracker.node_heartbeat"], (120.0, 0.5));
        assert_eq!(c.kinds["update"], (4.0, 0.0));
        assert_eq!(c.kinds.len(), 2);
        assert_eq!(c.update_seconds, Some(0.012));
        assert_eq!(c.store_writes, 30.0);
        assert_eq!(c.store_write_seconds, 0.25);
    }

    #[test]
    fn kinds_fall_into_groups() {
        assert_eq!(group_of("tracker.node_heartbeat"), "heartbeats");
        assert_eq!(group_of("heartbeat_stream.serve"), "heartbeats");
        assert_eq!(group_of("am_service.allocate"), "allocates");
        assert_eq!(group_of("State.answer"), "allocates");
        assert_eq!(group_of("am_service.finish_application_master"), "finishes");
        assert_eq!(group_of("rest.submit"), "submissions");
        assert_eq!(group_of("rest.new_application"), "submissions");
        assert_eq!(
            group_of("am_service.register_application_master"),
            "registers"
        );
        assert_eq!(group_of("update"), "ticks");
        assert_eq!(group_of("verify"), "ticks");
        assert_eq!(group_of("node_update"), "heartbeats");
        assert_eq!(group_of("web.view"), "other");
    }

    fn scrape(at_ms: u64, hb: (f64, f64), finish: (f64, f64), store: (f64, f64)) -> Scrape {
        let mut kinds = BTreeMap::new();
        kinds.insert("tracker.node_heartbeat".to_string(), hb);
        kinds.insert("am_service.finish_application_master".to_string(), finish);
        Scrape {
            at_ms,
            took_ms: 3.0,
            bytes: 100,
            driver: DriverCounters {
                kinds,
                update_seconds: Some(0.01),
                store_writes: store.0,
                store_write_seconds: store.1,
            },
        }
    }

    #[test]
    fn driver_intervals_are_shares_of_wall_time() {
        let a = scrape(1_000, (100.0, 1.0), (0.0, 0.0), (10.0, 0.1));
        let b = scrape(3_000, (300.0, 1.6), (50.0, 1.0), (30.0, 0.5));
        let d = driver_interval(&a, &b, 1_000);
        assert_eq!((d.from_s, d.to_s), (0.0, 2.0));
        assert!((d.heartbeats - 0.3).abs() < 1e-9);
        assert!((d.finishes - 0.5).abs() < 1e-9);
        assert!((d.busy - 0.8).abs() < 1e-9);
        assert!((d.store_writes - 0.2).abs() < 1e-9);
        assert_eq!(d.store_transactions, 20);
        assert_eq!(d.update_ms, Some(10.0));
        assert_eq!(d.top[0].kind, "am_service.finish_application_master");
        assert_eq!(d.top[0].calls, 50);
        assert_eq!(d.top[1].calls, 200);
    }

    #[test]
    fn rows_count_sends_by_send_time_and_latency_by_reply_time() {
        // Run from 10 s to 13.5 s: four rows, the last half a second.
        let heartbeats = [
            sample(10_100, 5),
            sample(10_200, 7),
            // Sent in row 0, answered in row 2.
            sample(10_900, 1_500),
            sample(12_000, 1),
        ];
        let allocates = [sample(11_000, 20)];
        let finishes = [sample(10_500, 2_000)];
        let mut allocated = Timeline::default();
        allocated.add(11_020, 40);
        allocated.add(13_400, 2);
        let mut late = Timeline::default();
        late.add(12_000, 1);
        let tick = |at_ms, submitted, rm_cpu: f64, bench_cpu: f64| Tick {
            at_ms,
            submitted,
            ams_done: 1,
            submitting: 2,
            rm_cpu: Some(rm_cpu),
            bench_cpu: Some(bench_cpu),
            rm_rss: Some(64 << 20),
        };
        // The tick due at 13 s came late, at 13.6 s.
        let ticks = [
            tick(10_000, 3, 0.0, 0.0),
            tick(11_000, 5, 1.0, 0.5),
            tick(12_000, 6, 1.5, 1.5),
            tick(12_900, 6, 2.5, 1.5),
            tick(13_600, 6, 2.8, 1.5),
        ];
        let usage = [(9_000, Some(0.2)), (12_500, Some(0.9))];
        let t = build(&Inputs {
            start_ms: 10_000,
            stop_ms: 13_000,
            end_ms: 13_500,
            heartbeats: &heartbeats,
            allocates: &allocates,
            finishes: &finishes,
            submissions: &[sample(10_000, 300)],
            allocated: &allocated,
            completed: &Timeline::default(),
            late: &late,
            ticks: &ticks,
            usage: &usage,
            scrapes: &[],
            scrape_failures: 0,
        });
        assert_eq!((t.row_seconds, t.stop_s), (1, 3.0));
        assert_eq!(t.rows.len(), 4);
        let r = &t.rows;
        assert_eq!(r[0].heartbeats_sent, 3);
        assert_eq!(r[0].heartbeat.count, 2);
        assert_eq!(r[0].heartbeat.max_ms, 7.0);
        assert_eq!(r[2].heartbeat.count, 2);
        assert_eq!(r[2].heartbeat.max_ms, 1_500.0);
        assert_eq!(r[1].allocates_sent, 1);
        assert_eq!(r[1].allocate.p50_ms, 20.0);
        assert_eq!(r[1].allocated, 40);
        assert_eq!(r[3].allocated, 2);
        assert_eq!(r[3].seconds, 0.5);
        assert_eq!(r[0].finishes_sent, 1);
        assert_eq!(r[0].finish.count, 0);
        assert_eq!(r[2].finish.p99_ms, 2_000.0);
        assert_eq!(r[0].rm_cores, Some(1.0));
        assert_eq!(r[1].bench_cores, Some(1.0));
        assert!(r[1].bench_busy);
        // One late heartbeat of one sent.
        assert!(r[2].bench_busy);
        assert!(!r[0].bench_busy);
        assert_eq!(r[0].apps_submitted, Some(2));
        assert_eq!(r[0].apps_live, Some(4));
        assert_eq!(r[0].submitting, Some(2));
        assert_eq!(r[0].submission.p50_ms, 300.0);
        assert_eq!(r[0].usage, Some(0.2));
        assert_eq!(r[3].usage, Some(0.9));
        assert_eq!(r[3].rm_rss_mib, Some(64.0));
        // Row 3 (13-13.5 s) has no tick of its own: 0.3 s of CPU over the 0.7 s to the next.
        assert!(r[3].rm_cores.is_some_and(|c| (c - 0.3 / 0.7).abs() < 1e-9));
        assert_eq!(t.worst_rows(1)[0].at_s, 2);
        let text = t.summary();
        assert!(text
            .lines()
            .nth(2)
            .is_some_and(|l| l.trim_start().starts_with('2')));
    }

    #[test]
    fn long_runs_are_coarsened_and_bounded() {
        assert_eq!(row_seconds(110_000), 1);
        assert_eq!(row_seconds(1_200_000), 1);
        assert_eq!(row_seconds(1_200_001), 2);
        assert_eq!(row_seconds(7_200_000), 6);
        let scrapes: Vec<Scrape> = (0..1_500u64)
            .map(|i| {
                let n = i as f64;
                scrape(i * 5_000, (n, n / 10.0), (0.0, 0.0), (n, 0.0))
            })
            .collect();
        let t = build(&Inputs {
            start_ms: 0,
            stop_ms: 7_200_000,
            end_ms: 7_199_000,
            heartbeats: &[sample(3_600_000, 2)],
            allocates: &[],
            finishes: &[],
            submissions: &[],
            allocated: &Timeline::default(),
            completed: &Timeline::default(),
            late: &Timeline::default(),
            ticks: &[],
            usage: &[],
            scrapes: &scrapes,
            scrape_failures: 1,
        });
        assert_eq!(t.rows.len(), 1_200);
        assert!(t.rows.iter().all(|r| r.seconds == 6.0));
        assert_eq!(t.rows[600].heartbeat.count, 1);
        assert!(t.driver.len() <= MAX_DRIVER_INTERVALS);
        // Every merged interval still reads 0.1 s of heartbeats per 5 s of wall time.
        assert!(t.driver.iter().all(|d| (d.heartbeats - 0.02).abs() < 1e-9));
        assert_eq!(t.driver.last().map(|d| d.to_s), Some(7_495.0));
        assert_eq!(t.scrape.scrapes, 1_500);
        assert_eq!(t.scrape.failures, 1);
        let text = t.text();
        assert_eq!(text.lines().count(), 2 + 1_200 + 1 + t.driver.len());
    }
}
