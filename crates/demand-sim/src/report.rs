//! §4.1's metrics from a run, the comparison of configurations on one trace, and its table
//! (the multi-seed bench is in [`crate::bench`]).

pub use crate::bench::{bench_table, parse_seeds, Bench, ConfigSummary, TargetCheck};

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::driver::{run, RunOptions, RunOutput};
use crate::workload::{deadline_mix, offered_load, Job, JobKind, MixParams};
use crate::{Configuration, SimError};

/// One configuration's metrics.
#[derive(Clone, Debug, Serialize)]
pub struct ConfigReport {
    /// The configuration's name.
    pub configuration: String,
    /// Production (deadline-bearing, strict) jobs submitted.
    pub production_jobs: usize,
    /// Of those, admitted (reservation or demands accepted); `None` for the baseline.
    pub production_admitted: Option<usize>,
    /// admitted ÷ submitted; 100% by construction for the baseline (`None`).
    pub admission_rate: Option<f64>,
    /// Production jobs whose last container completed by the deadline.
    pub deadline_hits: usize,
    /// hits ÷ submitted: also the effective SLA.
    pub hit_rate_submitted: f64,
    /// hits among admitted ÷ admitted.
    pub hit_rate_admitted: Option<f64>,
    /// Workflows (loose deadlines): submitted, and the share that ended by their deadline.
    pub workflow_jobs: usize,
    /// Workflows' hit rate.
    pub workflow_hit_rate: f64,
    /// Best-effort jobs submitted and completed.
    pub best_effort_jobs: usize,
    /// Best-effort jobs completed.
    pub best_effort_completed: usize,
    /// p50 of completion time ÷ isolated runtime over completed best-effort jobs.
    pub best_effort_slowdown_p50: Option<f64>,
    /// p95 of the same.
    pub best_effort_slowdown_p95: Option<f64>,
    /// ∫ allocated ÷ ∫ capacity over [warm-up end, last arrival]: memory, vcores, dominant.
    pub utilisation_memory: f64,
    /// Vcores.
    pub utilisation_vcores: f64,
    /// Dominant share.
    pub utilisation_dominant: f64,
    /// Admitted strict demands that ended FAILED (must be 0 without faults).
    pub honesty_failures: u64,
    /// Their causes (the demands' reasons).
    pub honesty_causes: BTreeMap<String, u64>,
    /// Admission wall time, µs: p50 and p99 (`None` when nothing was planned).
    pub planning_us_p50: Option<f64>,
    /// p99.
    pub planning_us_p99: Option<f64>,
    /// Refused admissions by reason.
    pub refusals: BTreeMap<String, u64>,
    /// AM Allocate calls refused as a whole by reason (the AM asks again a step later).
    pub ask_refusals: BTreeMap<String, u64>,
    /// Demands whose timeline names a planner decision.
    pub planner_decisions: u64,
    /// Jobs whose stages overlapped (a stage allocated before its predecessor ended).
    pub order_violations: usize,
    /// Jobs that never completed every task (failed, or still running when the run stopped).
    pub unfinished_jobs: usize,
    /// Containers handed to AMs.
    pub allocations: u64,
    /// §4.1's preemption cost: task containers killed (preempted, lost with a node, killed
    /// for a demand) and the vcore-seconds of work they had run.
    pub containers_killed: u64,
    /// The work they lost, vcore-seconds.
    pub work_lost_vcore_s: f64,
    /// Nodes the RM held LOST at the end (the fault variant).
    pub nodes_lost: usize,
    /// When the run stopped, virtual seconds.
    pub virtual_end_s: f64,
    /// The run's wall time, s.
    pub wall_s: f64,
}

/// Every configuration on one trace.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    /// The trace's parameters.
    pub params: MixParams,
    /// Jobs in the trace, by kind.
    pub jobs: BTreeMap<String, usize>,
    /// The load the trace offers over its arrivals: vcore-seconds of tasks and AMs ÷ the
    /// cluster's.
    pub offered_load: f64,
    /// The same counting tasks only.
    pub offered_task_load: f64,
    /// The driver's own latency from arrival to a job's first task, measured on an empty
    /// cluster: a job's isolated runtime is this plus its critical path.
    pub isolated_overhead_ms: u64,
    /// One report per configuration, in the order asked.
    pub configurations: Vec<ConfigReport>,
}

/// Nearest-rank percentile of sorted values.
fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    Some(sorted[rank - 1])
}

pub(crate) fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(f64::total_cmp);
    v
}

/// §4.1's metrics of one run; `overhead_ms` as in [`Comparison::isolated_overhead_ms`].
pub fn summarise(output: &RunOutput, overhead_ms: u64, wall_s: f64) -> ConfigReport {
    let of = |kind: JobKind| output.jobs.iter().filter(move |j| j.kind == kind);
    let production: Vec<_> = of(JobKind::Production).collect();
    let hits = production.iter().filter(|j| j.hit()).count();
    let planned = output.configuration.plans();
    let admitted: Vec<_> = production
        .iter()
        .filter(|j| j.admitted == Some(true))
        .collect();
    let admitted_hits = admitted.iter().filter(|j| j.hit()).count();
    let workflows: Vec<_> = of(JobKind::Workflow).collect();
    let best_effort: Vec<_> = of(JobKind::BestEffort).collect();
    let slowdowns = sorted(
        best_effort
            .iter()
            .filter_map(|j| {
                let c = j.completion_ms?;
                let isolated = (j.ideal_ms + overhead_ms).max(1);
                Some(c.saturating_sub(j.arrival_ms) as f64 / isolated as f64)
            })
            .collect(),
    );
    let planning = sorted(output.planning_us.clone());
    let u = output.usage;
    let share = |(a, b): (f64, f64)| if b > 0.0 { a / b } else { 0.0 };
    ConfigReport {
        configuration: output.configuration.name().to_string(),
        production_jobs: production.len(),
        production_admitted: planned.then_some(admitted.len()),
        admission_rate: planned.then(|| ratio(admitted.len(), production.len())),
        deadline_hits: hits,
        hit_rate_submitted: ratio(hits, production.len()),
        hit_rate_admitted: (planned && !admitted.is_empty())
            .then(|| ratio(admitted_hits, admitted.len())),
        workflow_jobs: workflows.len(),
        workflow_hit_rate: ratio(
            workflows.iter().filter(|j| j.hit()).count(),
            workflows.len(),
        ),
        best_effort_jobs: best_effort.len(),
        best_effort_completed: slowdowns.len(),
        best_effort_slowdown_p50: percentile(&slowdowns, 0.5),
        best_effort_slowdown_p95: percentile(&slowdowns, 0.95),
        utilisation_memory: share(u.memory),
        utilisation_vcores: share(u.vcores),
        utilisation_dominant: share(u.dominant),
        honesty_failures: output.honesty.values().sum(),
        honesty_causes: output.honesty.clone(),
        planning_us_p50: percentile(&planning, 0.5),
        planning_us_p99: percentile(&planning, 0.99),
        refusals: output.refusals.clone(),
        ask_refusals: output.ask_refusals.clone(),
        planner_decisions: output.planner_decisions,
        order_violations: output.jobs.iter().filter(|j| !j.order_respected).count(),
        unfinished_jobs: output
            .jobs
            .iter()
            .filter(|j| j.completion_ms.is_none())
            .count(),
        allocations: output.allocations,
        containers_killed: output.containers_killed,
        work_lost_vcore_s: output.work_lost_vcore_s,
        nodes_lost: output.nodes_lost,
        virtual_end_s: output.end_ms as f64 / 1000.0,
        wall_s,
    }
}

/// The driver's latency on an empty cluster: one best-effort job alone, its response time
/// minus its critical path.
fn isolated_overhead(jobs: &[Job]) -> Result<u64, SimError> {
    let Some(sample) = jobs.iter().find(|j| j.kind == JobKind::BestEffort) else {
        return Ok(0);
    };
    let mut alone = sample.clone();
    alone.index = 0;
    alone.arrival_ms = 0;
    let params = MixParams {
        nodes: 1,
        hours: 0.0,
        warmup_minutes: 0.0,
        drain_hours: 1.0,
        ..MixParams::default()
    };
    let out = run(
        &params,
        &[alone.clone()],
        RunOptions::new(Configuration::Fair),
    )?;
    let done = out.jobs[0]
        .completion_ms
        .ok_or_else(|| SimError::Core("the calibration job did not complete".into()))?;
    Ok(done.saturating_sub(alone.actual_ideal_ms()))
}

/// Runs the `deadline-mix` trace of `params` under each configuration.
pub fn compare(
    params: &MixParams,
    configurations: &[Configuration],
) -> Result<Comparison, SimError> {
    compare_with(params, configurations, |_| {})
}

/// As [`compare`], telling `progress` each configuration's report as it is done (a run at
/// full size takes minutes).
pub fn compare_with(
    params: &MixParams,
    configurations: &[Configuration],
    mut progress: impl FnMut(&ConfigReport),
) -> Result<Comparison, SimError> {
    let jobs = deadline_mix(params);
    let overhead = isolated_overhead(&jobs)?;
    let mut reports = Vec::new();
    for configuration in configurations {
        let started = crate::clock::Stopwatch::start();
        let output = run(params, &jobs, RunOptions::new(*configuration))?;
        let report = summarise(&output, overhead, started.seconds());
        progress(&report);
        reports.push(report);
    }
    let mut counts = BTreeMap::new();
    for j in &jobs {
        *counts.entry(format!("{:?}", j.kind)).or_insert(0) += 1;
    }
    let (offered, offered_tasks) = offered_load(&jobs, params);
    Ok(Comparison {
        params: params.clone(),
        jobs: counts,
        offered_load: offered,
        offered_task_load: offered_tasks,
        isolated_overhead_ms: overhead,
        configurations: reports,
    })
}

pub(crate) fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

pub(crate) fn opt(x: Option<f64>, f: impl Fn(f64) -> String) -> String {
    x.map_or_else(|| "-".to_string(), f)
}

/// The comparison as a plain table, one row per configuration.
pub fn table(c: &Comparison) -> String {
    let mut out = String::new();
    let p = &c.params;
    let _ = writeln!(
        out,
        "deadline-mix: {} nodes, {} h of arrivals ({} min warm-up), load {} (offered {:.2} with AMs, {:.2} tasks), seed {}{}; jobs {:?}",
        p.nodes, p.hours, p.warmup_minutes, p.load, c.offered_load, c.offered_task_load, p.seed, variants(p), c.jobs
    );
    let header = [
        "config",
        "admitted",
        "hit/sub",
        "hit/adm",
        "eff.SLA",
        "wf hit",
        "util(dom)",
        "util mem/vc",
        "BE p50",
        "BE p95",
        "honesty",
        "plan p50/p99 us",
        "killed/lost vcore-s",
        "unfinished",
        "wall s",
    ];
    let rows: Vec<Vec<String>> = c
        .configurations
        .iter()
        .map(|r| {
            vec![
                r.configuration.clone(),
                opt(r.admission_rate, pct),
                pct(r.hit_rate_submitted),
                opt(r.hit_rate_admitted, pct),
                pct(r.hit_rate_submitted),
                pct(r.workflow_hit_rate),
                pct(r.utilisation_dominant),
                format!(
                    "{}/{}",
                    pct(r.utilisation_memory),
                    pct(r.utilisation_vcores)
                ),
                opt(r.best_effort_slowdown_p50, |x| format!("{x:.2}")),
                opt(r.best_effort_slowdown_p95, |x| format!("{x:.2}")),
                if r.honesty_causes.is_empty() {
                    "0".to_string()
                } else {
                    format!("{} {:?}", r.honesty_failures, r.honesty_causes)
                },
                match (r.planning_us_p50, r.planning_us_p99) {
                    (Some(a), Some(b)) => format!("{a:.0}/{b:.0}"),
                    _ => "-".to_string(),
                },
                format!("{}/{:.0}", r.containers_killed, r.work_lost_vcore_s),
                r.unfinished_jobs.to_string(),
                format!("{:.1}", r.wall_s),
            ]
        })
        .collect();
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            rows.iter()
                .map(|r| r[i].len())
                .chain([header[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: Vec<String>| {
        cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_string()
    };
    let _ = writeln!(
        out,
        "{}",
        line(header.iter().map(|h| h.to_string()).collect())
    );
    for r in rows {
        let _ = writeln!(out, "{}", line(r));
    }
    out
}

/// The variants a trace runs, for a table's heading.
pub(crate) fn variants(p: &MixParams) -> String {
    let mut v = String::new();
    if p.misestimate_sd > 0.0 {
        let _ = write!(v, ", mis-estimated (sd {})", p.misestimate_sd);
    }
    if p.lost_nodes > 0 {
        let _ = write!(v, ", {} nodes lost at {} h", p.lost_nodes, p.loss_at_hours);
    }
    v
}
