//! A preset run's figures: one row per minute and the run's totals, as JSON and as text.

use std::fmt::Write as _;

use serde::Serialize;

use crate::stats::Percentiles;
use crate::timeline::TimelineReport;

/// One minute of a preset run (minute 0 starts at the first submission).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct MinuteRow {
    /// 0-based.
    pub minute: u64,
    /// Seconds of the minute the run covered (the last one may be partial).
    pub seconds: f64,
    /// Cluster usage (dominant share of the RM's allocated over total) at the minute's
    /// observations: lowest and last.
    pub usage_min: Option<f64>,
    /// Usage at the minute's last observation.
    pub usage_last: Option<f64>,
    /// Seed 003's validSchedulePerMin over the minute's observations (`None`: none made).
    pub valid_schedule: Option<bool>,
    /// Observations in the minute.
    pub observations: usize,
    /// Containers the AMs received.
    pub allocated: u64,
    /// Containers per second.
    pub containers_per_sec: f64,
    /// Heartbeat round trips sent in the minute.
    pub heartbeat_latency: Percentiles,
    /// Allocate round trips sent in the minute.
    pub allocate_latency: Percentiles,
    /// RM CPU, cores, between the observations bracketing the minute.
    pub rm_cores: Option<f64>,
    /// Bench CPU, cores.
    pub bench_cores: Option<f64>,
    /// RM CPU per heartbeat, µs.
    pub rm_cpu_us_per_heartbeat: Option<f64>,
    /// RM CPU per container allocated, µs.
    pub rm_cpu_us_per_allocation: Option<f64>,
    /// RM resident memory at the minute's last observation, MiB.
    pub rm_rss_mib: Option<f64>,
    /// Heartbeats the bench sent late (its runtime too busy to send them when due).
    pub late_heartbeats: u64,
    /// Why the bench itself may have been the bottleneck this minute (`None`: it was not).
    pub bench_bottleneck: Option<String>,
}

/// A preset run's results.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FleetReport {
    /// The preset.
    pub preset: String,
    /// Its scale.
    pub scale: f64,
    /// Simulated NMs.
    pub nodes: usize,
    /// Node memory, MB.
    pub node_memory_mb: i64,
    /// Node vcores.
    pub node_vcores: i64,
    /// Apps kept running at once.
    pub apps: u32,
    /// Leaf queues of the allocation file.
    pub queues: usize,
    /// Task run time, ms (the mean with `container_jitter`).
    pub container_ms: u64,
    /// Task run times spread over `container_ms` x [1 - J, 1 + J) (`--container-jitter`).
    pub container_jitter: f64,
    /// How the run's first containers ended (`--start`).
    pub start: crate::Start,
    /// Heartbeat interval the NMs used, ms.
    pub heartbeat_ms: u64,
    /// Pause between an AM's Allocate calls, ms.
    pub am_interval_ms: u64,
    /// CPUs the RM and the bench were pinned to (`--pin`).
    pub pinned: Option<(usize, usize)>,
    /// Worker threads the bench asked of the RM it started (`None`: the RM's default, or an
    /// RM the bench did not start).
    pub rm_worker_threads: Option<usize>,
    /// Seconds from the first submission to the stop.
    pub run_s: f64,
    /// Per minute.
    pub minutes: Vec<MinuteRow>,
    /// Per second (coarser in long runs), with what the RM's driver spent its time on.
    pub timeline: TimelineReport,
    /// validSchedule per minute (1 valid, 0 not; minutes without observations left out).
    pub valid_schedule_minutes: Vec<u8>,
    /// Whether every minute after the first was valid.
    pub valid_after_first_minute: bool,
    /// Containers allocated over the run.
    pub allocated: u64,
    /// Heartbeat round trips over the run.
    pub heartbeat_latency: Percentiles,
    /// Allocate round trips over the run.
    pub allocate_latency: Percentiles,
    /// Answered AM finish calls, the run's last ones included (when every AM finishes at
    /// once); calls left unanswered for 30 s are counted in `apps_failed` instead.
    pub finish_latency: Percentiles,
    /// AM finish calls sent before the stop (apps whose tasks all completed): without the
    /// storm of every AM unregistering at the stop, which dominates `finish_latency`.
    pub finish_latency_in_run: Percentiles,
    /// RM CPU over the run, cores.
    pub rm_cores: Option<f64>,
    /// RM CPU per heartbeat over the run, µs.
    pub rm_cpu_us_per_heartbeat: Option<f64>,
    /// RM CPU per allocation over the run, µs.
    pub rm_cpu_us_per_allocation: Option<f64>,
    /// The RM's core (rm-core and the scheduler) against the whole RM, per heartbeat, over
    /// the window's scrapes (`None` without two scrapes in the window).
    pub core_share: Option<CoreShare>,
    /// The RM's peak resident memory (VmHWM), MiB.
    pub rm_peak_rss_mib: Option<f64>,
    /// Apps submitted.
    pub apps_submitted: u64,
    /// Apps whose every task completed (then replaced).
    pub apps_completed: u64,
    /// Apps unregistered when the run ended.
    pub apps_stopped: u64,
    /// Apps whose AM failed.
    pub apps_failed: u64,
    /// Apps the RM still listed as not finished after the run.
    pub apps_unfinished: u64,
    /// NM re-registrations.
    pub resyncs: u64,
    /// Containers on nodes the bench does not simulate.
    pub unroutable: u64,
    /// Errors over the run.
    pub errors: u64,
    /// The first few.
    pub first_errors: Vec<String>,
    /// WARN/ERROR lines in the child RM's log during the run.
    pub rm_warnings: Vec<String>,
}

/// The sans-IO core's own time per heartbeat beside the whole RM's CPU per heartbeat, both
/// between the same two `/metrics` scrapes, so their ratio is what the process around the
/// core (transport, runtime, kernel, store) multiplies the core's cost by.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CoreShare {
    /// The first scrape, seconds since the first submission.
    pub from_s: f64,
    /// The last scrape, seconds since the first submission.
    pub to_s: f64,
    /// Heartbeats answered between them.
    pub heartbeats: u64,
    /// The driver's time in the core for every kind of call (the RM's
    /// `weft_scheduler_call_seconds_total`) per heartbeat, µs.
    pub core_us_per_heartbeat: f64,
    /// The RM process's CPU per heartbeat over the same interval, µs.
    pub rm_cpu_us_per_heartbeat: f64,
    /// `rm_cpu_us_per_heartbeat / core_us_per_heartbeat`.
    pub rm_over_core: f64,
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x:.digits$}"))
}

impl FleetReport {
    /// A table for people: one line per minute, then the totals.
    pub fn text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "preset {} at scale {}: {} NMs ({} MB, {} vcores), {} apps in {} queues, tasks {} ms{} ({} start), heartbeat {} ms, AM Allocate every {} ms{}",
            self.preset,
            self.scale,
            self.nodes,
            self.node_memory_mb,
            self.node_vcores,
            self.apps,
            self.queues,
            self.container_ms,
            if self.container_jitter > 0.0 {
                format!(" +-{:.0}%", self.container_jitter * 100.0)
            } else {
                String::new()
            },
            match self.start {
                crate::Start::Steady => "steady",
                crate::Start::Cold => "cold",
            },
            self.heartbeat_ms,
            self.am_interval_ms,
            match self.pinned {
                Some((rm, bench)) => format!(", RM on CPU {rm}, bench on CPU {bench}"),
                None => String::new(),
            } + &self
                .rm_worker_threads
                .map(|n| format!(", RM worker threads {n}"))
                .unwrap_or_default()
        );
        let _ = writeln!(
            s,
            "min  usage(min/last) valid  alloc/s  hb p50/p99 ms  alloc p50/p99 ms  RM cores  RM us/hb  RM us/alloc  RM RSS MiB  bench cores  late hb"
        );
        for m in &self.minutes {
            let _ = writeln!(
                s,
                "{:>3}  {:>5}/{:<5}     {:<5}  {:>7.0}  {:>6.1}/{:<6.1}  {:>7.1}/{:<7.1}  {:>8}  {:>8}  {:>11}  {:>10}  {:>11}  {:>7}",
                m.minute,
                opt(m.usage_min, 3),
                opt(m.usage_last, 3),
                match m.valid_schedule {
                    Some(true) => "1",
                    Some(false) => "0",
                    None => "-",
                },
                m.containers_per_sec,
                m.heartbeat_latency.p50_ms,
                m.heartbeat_latency.p99_ms,
                m.allocate_latency.p50_ms,
                m.allocate_latency.p99_ms,
                opt(m.rm_cores, 2),
                opt(m.rm_cpu_us_per_heartbeat, 0),
                opt(m.rm_cpu_us_per_allocation, 1),
                opt(m.rm_rss_mib, 0),
                opt(m.bench_cores, 2),
                m.late_heartbeats
            );
        }
        for m in &self.minutes {
            if let Some(why) = &m.bench_bottleneck {
                let _ = writeln!(
                    s,
                    "minute {}: the bench itself was the bottleneck: {why}",
                    m.minute
                );
            }
        }
        let _ = writeln!(
            s,
            "run {:.0} s: {} containers; heartbeat p50 {:.1} ms p99 {:.1} ms; Allocate p50 {:.1} ms p99 {:.1} ms; AM finish p50 {:.1} ms p99 {:.1} ms ({} answered; before the stop p50 {:.1} ms p99 {:.1} ms, {} answered)",
            self.run_s,
            self.allocated,
            self.heartbeat_latency.p50_ms,
            self.heartbeat_latency.p99_ms,
            self.allocate_latency.p50_ms,
            self.allocate_latency.p99_ms,
            self.finish_latency.p50_ms,
            self.finish_latency.p99_ms,
            self.finish_latency.count,
            self.finish_latency_in_run.p50_ms,
            self.finish_latency_in_run.p99_ms,
            self.finish_latency_in_run.count
        );
        let _ = writeln!(
            s,
            "RM: {} cores, {} us CPU per heartbeat, {} us per allocation, peak RSS {} MiB; validSchedule per minute {:?} (every minute after the first: {})",
            opt(self.rm_cores, 2),
            opt(self.rm_cpu_us_per_heartbeat, 0),
            opt(self.rm_cpu_us_per_allocation, 1),
            opt(self.rm_peak_rss_mib, 0),
            self.valid_schedule_minutes,
            self.valid_after_first_minute
        );
        if let Some(c) = &self.core_share {
            let _ = writeln!(
                s,
                "RM core (rm-core and the scheduler) {:.1} us per heartbeat against the whole RM's {:.1} us ({:.1}x), {:.0}-{:.0} s",
                c.core_us_per_heartbeat, c.rm_cpu_us_per_heartbeat, c.rm_over_core, c.from_s, c.to_s
            );
        }
        let _ = writeln!(
            s,
            "apps: {} submitted, {} completed, {} ended by the stop, {} failed, {} unfinished; resyncs {}; errors {}",
            self.apps_submitted,
            self.apps_completed,
            self.apps_stopped,
            self.apps_failed,
            self.apps_unfinished,
            self.resyncs,
            self.errors
        );
        for e in &self.first_errors {
            let _ = writeln!(s, "  error: {e}");
        }
        for w in self.rm_warnings.iter().take(10) {
            let _ = writeln!(s, "  RM log: {w}");
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_has_a_row_per_minute_and_names_a_bench_bottleneck() {
        let r = FleetReport {
            preset: "meituan".into(),
            minutes: vec![
                MinuteRow {
                    minute: 0,
                    valid_schedule: Some(false),
                    ..MinuteRow::default()
                },
                MinuteRow {
                    minute: 1,
                    valid_schedule: Some(true),
                    bench_bottleneck: Some("bench used 0.97 cores".into()),
                    ..MinuteRow::default()
                },
            ],
            ..FleetReport::default()
        };
        let t = r.text();
        assert!(t.contains("minute 1: the bench itself was the bottleneck: bench used 0.97"));
        assert!(!t.contains("minute 0: the bench"));
        assert_eq!(t.lines().count(), 2 + 2 + 1 + 3);
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["minutes"][1]["valid_schedule"], true);
        assert!(json["rm_cores"].is_null());
    }
}
