//! Turning a [`ScaleReport`] into what people read: summary rows and the HTML report's input.

use super::metrics::ScaleReport;
use crate::report::{QueueSeries, ReportInput, TimeSeries};

/// How many queues the report draws (the worst by fairness gap).
const REPORT_QUEUES: usize = 8;

/// `(label, value)` rows summarizing a run, in reading order.
pub fn summary_rows(r: &ScaleReport) -> Vec<(String, String)> {
    let ms = |v: Option<u64>| v.map_or_else(|| "never".to_string(), |v| format!("{v} ms"));
    let mut rows = vec![
        ("workload".to_string(), r.workload.clone()),
        ("nodes".to_string(), r.nodes.to_string()),
        ("leaf queues".to_string(), r.queues.to_string()),
        (
            "apps (submitted / finished / rejected)".to_string(),
            format!("{} / {} / {}", r.apps, r.apps_finished, r.apps_rejected),
        ),
        ("virtual time".to_string(), format!("{} ms", r.virtual_ms)),
        (
            "allocations (AM)".to_string(),
            format!("{} ({})", r.allocations, r.am_allocations),
        ),
        ("reservations".to_string(), r.reservations.to_string()),
        (
            "scheduler time".to_string(),
            format!("{:.3} s", r.scheduler_seconds),
        ),
        ("CPS".to_string(), format!("{:.0}", r.cps)),
        ("time to 90% usage".to_string(), ms(r.time_to_90pct_ms)),
        ("time to 99% usage".to_string(), ms(r.time_to_99pct_ms)),
        (
            "validSchedulePerMin (all / after the first minute)".to_string(),
            format!(
                "{:.3} / {:.3}  {:?}",
                r.valid_schedule_per_min,
                r.valid_schedule_after_first_min,
                r.valid_schedule_minutes
            ),
        ),
        (
            "fairness gap (worst / mean)".to_string(),
            format!("{:.3} / {:.4}", r.worst_fairness_gap, r.mean_fairness_gap),
        ),
        (
            "app wait p50 / p99".to_string(),
            format!("{} / {} ms", r.wait_p50_ms, r.wait_p99_ms),
        ),
        (
            "app completion p50 / p99".to_string(),
            format!("{} / {} ms", r.completion_p50_ms, r.completion_p99_ms),
        ),
        (
            "preempted: containers (AM) / warnings".to_string(),
            format!(
                "{} ({}) / {}",
                r.preempted_containers, r.preempted_am_containers, r.preempt_warnings
            ),
        ),
        (
            "work lost to preemption".to_string(),
            format!("{:.1} container-seconds", r.work_lost_container_seconds),
        ),
        (
            "starved leaf to its share p50 / p99 (episodes, open at end)".to_string(),
            format!(
                "{} / {} ms ({}, {})",
                r.starved_to_share_p50_ms,
                r.starved_to_share_p99_ms,
                r.starved_episodes,
                r.starved_at_end
            ),
        ),
        ("drift".to_string(), r.drift.to_string()),
        (
            "queues visited per heartbeat".to_string(),
            format!("{:.2}", r.queues_visited_per_heartbeat),
        ),
        (
            "top-level queues in reach per heartbeat".to_string(),
            format!("{:.2}", r.top_level_reachable_per_heartbeat),
        ),
        (
            "queues per walk: mean / widest / node's pool holds (tree)".to_string(),
            format!(
                "{:.2} / {} / {:.2} ({}), walks wider than their pool: {}",
                r.walk_bound.queues_visited_per_walk,
                r.walk_bound.widest_walk,
                r.walk_bound.pool_queues_per_heartbeat,
                r.walk_bound.tree_queues,
                r.walk_bound.walks_beyond_pool
            ),
        ),
        (
            "hot structures reached per heartbeat (app / queue bytes)".to_string(),
            format!(
                "{:.0} bytes ({:.0} hot), {:.1} lines: {:.2} apps, {:.2} queues ({} / {})",
                r.footprint.visited_bytes_per_heartbeat,
                r.footprint.hot_bytes_per_heartbeat,
                r.footprint.visited_lines_per_heartbeat,
                r.footprint.apps_visited_per_heartbeat,
                r.footprint.queues_visited_per_heartbeat,
                r.footprint.app_bytes,
                r.footprint.queue_bytes
            ),
        ),
    ];
    if let Some(aware) = r.pool_aware_valid_schedule_per_min {
        rows.push((
            "validSchedulePerMin, pool-aware".to_string(),
            format!("{aware:.3}"),
        ));
    }
    for p in &r.pools {
        let name = if p.name.is_empty() {
            "<DEFAULT_PARTITION>"
        } else {
            p.name.as_str()
        };
        rows.push((
            format!("  pool {name}"),
            format!(
                "{} nodes, usage {:.3} mean / {:.3} last, pending {} MB, validSchedulePerMin {:.3}, stranded {:.0} MB-s, foreign {} MB max",
                p.nodes,
                p.usage_mean,
                p.usage_last,
                p.pending_mb,
                p.valid_schedule_per_min,
                p.stranded_mb_seconds,
                p.foreign_used_mb_max
            ),
        ));
    }
    for (name, seconds, events) in &r.phases {
        if *events > 0 {
            rows.push((
                format!("  time in {name}"),
                format!("{seconds:.3} s over {events} events"),
            ));
        }
    }
    rows
}

/// Side-by-side rows comparing runs of one workload (a label per run, e.g. the preemption
/// strategy): `(metric, one value per run)`, what it cost and what it bought.
pub fn comparison_rows(runs: &[(&str, &ScaleReport)]) -> Vec<(String, Vec<String>)> {
    type Metric = fn(&ScaleReport) -> String;
    let metrics: [(&str, Metric); 12] = [
        ("containers preempted", |r| {
            r.preempted_containers.to_string()
        }),
        ("  of which AM containers", |r| {
            r.preempted_am_containers.to_string()
        }),
        ("containers warned", |r| r.preempt_warnings.to_string()),
        ("work lost (container-seconds)", |r| {
            format!("{:.1}", r.work_lost_container_seconds)
        }),
        ("starved leaf to its share p50 (ms)", |r| {
            r.starved_to_share_p50_ms.to_string()
        }),
        ("starved leaf to its share p99 (ms)", |r| {
            r.starved_to_share_p99_ms.to_string()
        }),
        ("starvation episodes (ended / open)", |r| {
            format!("{} / {}", r.starved_episodes, r.starved_at_end)
        }),
        ("fairness gap (worst / mean)", |r| {
            format!("{:.3} / {:.4}", r.worst_fairness_gap, r.mean_fairness_gap)
        }),
        ("app completion p50 / p99 (ms)", |r| {
            format!("{} / {}", r.completion_p50_ms, r.completion_p99_ms)
        }),
        ("apps finished / submitted", |r| {
            format!("{} / {}", r.apps_finished, r.apps)
        }),
        ("allocations", |r| r.allocations.to_string()),
        ("virtual time (ms)", |r| r.virtual_ms.to_string()),
    ];
    let mut rows = vec![(
        "strategy".to_string(),
        runs.iter().map(|(label, _)| label.to_string()).collect(),
    )];
    rows.extend(metrics.iter().map(|(name, metric)| {
        (
            name.to_string(),
            runs.iter().map(|(_, r)| metric(r)).collect(),
        )
    }));
    rows
}

/// The HTML report's input: the summary, the series, the worst queues, waits and phases.
pub fn report_input(r: &ScaleReport, title: &str, extra: &[(String, String)]) -> ReportInput {
    let mut queues: Vec<&super::metrics::QueueSeries> = r.queue_series.iter().collect();
    queues.sort_by(|a, b| {
        b.worst_gap
            .total_cmp(&a.worst_gap)
            .then_with(|| a.name.cmp(&b.name))
    });
    let mut summary = summary_rows(r);
    summary.extend(extra.iter().cloned());
    ReportInput {
        title: title.to_string(),
        summary,
        series: TimeSeries {
            t_ms: r.samples.iter().map(|s| s.t_ms).collect(),
            cluster_usage: r.samples.iter().map(|s| s.usage).collect(),
            pending_containers: r.samples.iter().map(|s| s.pending_containers).collect(),
            cps: r.samples.iter().map(|s| s.cps).collect(),
            valid_schedule_per_min: r.valid_schedule_minutes.iter().map(|v| *v == 1).collect(),
        },
        queues: queues
            .into_iter()
            .take(REPORT_QUEUES)
            .map(|q| QueueSeries {
                name: format!("{} (worst gap {:.2})", q.name, q.worst_gap),
                usage: q.usage.clone(),
                fair_share: q.fair_share.clone(),
            })
            .collect(),
        wait_ms: r.waits_ms.clone(),
        completion_ms: r.completions_ms.clone(),
        phase_seconds: r
            .phases
            .iter()
            .filter(|(_, _, n)| *n > 0)
            .map(|(name, s, _)| (name.clone(), *s))
            .collect(),
    }
}
