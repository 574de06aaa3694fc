//! §4.1's metrics from a run, the comparison of configurations on one trace, and its table.

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

fn ratio(a: usize, b: usize) -> f64 {
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

fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

fn opt(x: Option<f64>, f: impl Fn(f64) -> String) -> String {
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

/// One configuration over every seed of a [`Bench`]: rates pooled over the seeds' jobs,
/// utilisation and slowdowns averaged over seeds, admission p99 the worst seed's.
#[derive(Clone, Debug, Serialize)]
pub struct ConfigSummary {
    /// The configuration's name.
    pub configuration: String,
    /// Production jobs over every seed.
    pub production_jobs: usize,
    /// Admitted ÷ submitted, pooled (`None` for the baselines).
    pub admission_rate: Option<f64>,
    /// Hits ÷ submitted, pooled: the effective SLA.
    pub hit_rate_submitted: f64,
    /// Hits ÷ admitted, pooled.
    pub hit_rate_admitted: Option<f64>,
    /// Workflows' hit rate, pooled.
    pub workflow_hit_rate: f64,
    /// Dominant-share utilisation, mean over seeds.
    pub utilisation_dominant: f64,
    /// Best-effort p50 slowdown, mean over seeds.
    pub best_effort_slowdown_p50: Option<f64>,
    /// Best-effort p95 slowdown, mean over seeds.
    pub best_effort_slowdown_p95: Option<f64>,
    /// Admitted strict demands that failed, summed over seeds.
    pub honesty_failures: u64,
    /// Their causes.
    pub honesty_causes: BTreeMap<String, u64>,
    /// Admission wall time p99, µs: the worst seed's.
    pub planning_us_p99: Option<f64>,
    /// Task containers killed and the work they lost (vcore-seconds), summed.
    pub containers_killed: u64,
    /// Work lost, vcore-seconds.
    pub work_lost_vcore_s: f64,
    /// Jobs never completed, summed.
    pub unfinished_jobs: usize,
    /// Wall time of the runs, s, summed.
    pub wall_s: f64,
}

/// One of §4.4's targets for one configuration.
#[derive(Clone, Debug, Serialize)]
pub struct TargetCheck {
    /// The configuration judged.
    pub configuration: String,
    /// The target, as §4.4 words it.
    pub target: String,
    /// The measured value (in the bound's unit).
    pub value: Option<f64>,
    /// The bound it is held to.
    pub bound: String,
    /// Met or not; `None` when it cannot be judged here (no Fair run to compare with, a
    /// target of another variant, nothing measured).
    pub pass: Option<bool>,
}

/// §5 D1: the comparison over several seeds, summarised, with §4.4's targets judged.
#[derive(Clone, Debug, Serialize)]
pub struct Bench {
    /// The trace's parameters (its seed is the first of `seeds`).
    pub params: MixParams,
    /// The seeds run.
    pub seeds: Vec<u64>,
    /// Per configuration, over every seed.
    pub summary: Vec<ConfigSummary>,
    /// §4.4's targets for each planned configuration, against the Fair baseline.
    pub targets: Vec<TargetCheck>,
    /// Every seed's comparison.
    pub runs: Vec<Comparison>,
}

fn mean(values: impl Iterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / n as f64)
}

fn summary_of(name: &str, reports: &[&ConfigReport]) -> ConfigSummary {
    let production: usize = reports.iter().map(|r| r.production_jobs).sum();
    let hits: usize = reports.iter().map(|r| r.deadline_hits).sum();
    let admitted: Option<usize> = reports.iter().map(|r| r.production_admitted).sum();
    // Hits among admitted per seed, recovered from the seed's own rate.
    let admitted_hits: Option<f64> = reports
        .iter()
        .map(|r| Some(r.hit_rate_admitted? * r.production_admitted? as f64))
        .sum();
    let workflows: usize = reports.iter().map(|r| r.workflow_jobs).sum();
    let workflow_hits: f64 = reports
        .iter()
        .map(|r| r.workflow_hit_rate * r.workflow_jobs as f64)
        .sum();
    let mut causes = BTreeMap::new();
    for r in reports {
        for (k, v) in &r.honesty_causes {
            *causes.entry(k.clone()).or_insert(0) += v;
        }
    }
    ConfigSummary {
        configuration: name.to_string(),
        production_jobs: production,
        admission_rate: admitted.map(|a| ratio(a, production)),
        hit_rate_submitted: ratio(hits, production),
        hit_rate_admitted: match (admitted_hits, admitted) {
            (Some(h), Some(a)) if a > 0 => Some(h.round() / a as f64),
            _ => None,
        },
        workflow_hit_rate: if workflows == 0 {
            0.0
        } else {
            workflow_hits.round() / workflows as f64
        },
        utilisation_dominant: mean(reports.iter().map(|r| r.utilisation_dominant)).unwrap_or(0.0),
        best_effort_slowdown_p50: mean(reports.iter().filter_map(|r| r.best_effort_slowdown_p50)),
        best_effort_slowdown_p95: mean(reports.iter().filter_map(|r| r.best_effort_slowdown_p95)),
        honesty_failures: reports.iter().map(|r| r.honesty_failures).sum(),
        honesty_causes: causes,
        planning_us_p99: reports
            .iter()
            .filter_map(|r| r.planning_us_p99)
            .reduce(f64::max),
        containers_killed: reports.iter().map(|r| r.containers_killed).sum(),
        work_lost_vcore_s: reports.iter().map(|r| r.work_lost_vcore_s).sum(),
        unfinished_jobs: reports.iter().map(|r| r.unfinished_jobs).sum(),
        wall_s: reports.iter().map(|r| r.wall_s).sum(),
    }
}

/// §4.4's targets for `s` against `fair` (the Fair baseline's summary, if it ran).
fn targets_of(
    s: &ConfigSummary,
    fair: Option<&ConfigSummary>,
    params: &MixParams,
) -> Vec<TargetCheck> {
    let check = |target: &str, value: Option<f64>, bound: String, pass: Option<bool>| TargetCheck {
        configuration: s.configuration.clone(),
        target: target.to_string(),
        value,
        bound,
        pass,
    };
    let faults = params.lost_nodes > 0;
    let misestimated = params.misestimate_sd > 0.0;
    let admitted_floor = if misestimated { 0.995 } else { 1.0 };
    let fair_sla = fair.map(|f| f.hit_rate_submitted);
    let sla_gain = fair_sla.map(|f| 100.0 * (s.hit_rate_submitted - f));
    let util_gap = fair.map(|f| 100.0 * (s.utilisation_dominant - f.utilisation_dominant));
    let p95_ratio = match (
        s.best_effort_slowdown_p95,
        fair.and_then(|f| f.best_effort_slowdown_p95),
    ) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    };
    let p99_ms = s.planning_us_p99.map(|us| us / 1000.0);
    vec![
        check(
            "honesty: 0 admitted strict demands failed without faults",
            Some(s.honesty_failures as f64),
            "= 0".into(),
            (!faults).then_some(s.honesty_failures == 0),
        ),
        check(
            if misestimated {
                "hit rate over admitted (mis-estimation variant)"
            } else {
                "hit rate over admitted (exact estimates)"
            },
            s.hit_rate_admitted.map(|h| 100.0 * h),
            format!(">= {}%", 100.0 * admitted_floor),
            s.hit_rate_admitted
                .filter(|_| !faults)
                .map(|h| h >= admitted_floor - 1e-9),
        ),
        check(
            "effective SLA gain over Fair, points (the spec asks it at load 1.0)",
            sla_gain,
            ">= 20".into(),
            sla_gain.map(|g| g >= 20.0),
        ),
        check(
            "utilisation minus Fair's, points",
            util_gap,
            "within +-2".into(),
            util_gap.map(|g| g.abs() <= 2.0),
        ),
        check(
            "best-effort p95 slowdown over Fair's",
            p95_ratio,
            "<= 1.25".into(),
            p95_ratio.map(|r| r <= 1.25),
        ),
        check(
            "admission p99, ms",
            p99_ms,
            "<= 10".into(),
            p99_ms.map(|ms| ms <= 10.0),
        ),
        check(
            "the seed's picture: this configuration ~100% effective SLA while Fair <= 80%",
            Some(100.0 * s.hit_rate_submitted),
            "fair <= 80% and this >= 99%".into(),
            fair_sla.map(|f| f <= 0.80 && s.hit_rate_submitted >= 0.99),
        ),
    ]
}

/// Runs the comparison on each of `seeds` (the trace of `params` with that seed), one thread
/// per seed (runs share nothing; each is deterministic), and judges §4.4's targets on the
/// summaries; `progress` hears each configuration as it is done.
pub fn bench(
    params: &MixParams,
    seeds: &[u64],
    configurations: &[Configuration],
    progress: impl Fn(u64, &ConfigReport) + Sync,
) -> Result<Bench, SimError> {
    let results: Vec<Result<Comparison, SimError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = seeds
            .iter()
            .map(|seed| {
                let p = MixParams {
                    seed: *seed,
                    ..params.clone()
                };
                let progress = &progress;
                scope.spawn(move || compare_with(&p, configurations, |r| progress(p.seed, r)))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(SimError::Core("a seed's run panicked".into())))
            })
            .collect()
    });
    let runs = results.into_iter().collect::<Result<Vec<_>, _>>()?;
    let summary: Vec<ConfigSummary> = configurations
        .iter()
        .map(|c| {
            let reports: Vec<&ConfigReport> = runs
                .iter()
                .flat_map(|run| run.configurations.iter())
                .filter(|r| r.configuration == c.name())
                .collect();
            summary_of(c.name(), &reports)
        })
        .collect();
    let fair = summary
        .iter()
        .find(|s| s.configuration == Configuration::Fair.name());
    let targets = configurations
        .iter()
        .filter(|c| c.plans())
        .filter_map(|c| summary.iter().find(|s| s.configuration == c.name()))
        .flat_map(|s| targets_of(s, fair, params))
        .collect();
    Ok(Bench {
        params: MixParams {
            seed: seeds.first().copied().unwrap_or(params.seed),
            ..params.clone()
        },
        seeds: seeds.to_vec(),
        summary,
        targets,
        runs,
    })
}

/// A bench's summary and targets as plain text.
pub fn bench_table(b: &Bench) -> String {
    let mut out = String::new();
    let p = &b.params;
    let _ = writeln!(
        out,
        "deadline-mix over seeds {:?}: {} nodes, {} h of arrivals ({} min warm-up), load {}{}",
        b.seeds,
        p.nodes,
        p.hours,
        p.warmup_minutes,
        p.load,
        variants(p)
    );
    let _ = writeln!(
        out,
        "config             prod  admitted  eff.SLA  hit/adm  wf hit  util(dom)  BE p50/p95   honesty  adm p99 us  killed/lost vcore-s  unfinished  wall s"
    );
    for s in &b.summary {
        let _ = writeln!(
            out,
            "{:<18} {:>5}  {:>8}  {:>7}  {:>7}  {:>6}  {:>9}  {:>11}  {:>7}  {:>10}  {:>19}  {:>10}  {:>6.1}",
            s.configuration,
            s.production_jobs,
            opt(s.admission_rate, pct),
            pct(s.hit_rate_submitted),
            opt(s.hit_rate_admitted, pct),
            pct(s.workflow_hit_rate),
            pct(s.utilisation_dominant),
            format!(
                "{}/{}",
                opt(s.best_effort_slowdown_p50, |x| format!("{x:.2}")),
                opt(s.best_effort_slowdown_p95, |x| format!("{x:.2}"))
            ),
            s.honesty_failures,
            opt(s.planning_us_p99, |x| format!("{x:.0}")),
            format!("{}/{:.0}", s.containers_killed, s.work_lost_vcore_s),
            s.unfinished_jobs,
            s.wall_s
        );
    }
    let _ = writeln!(out, "targets (spec §4.4):");
    for t in &b.targets {
        let verdict = match t.pass {
            Some(true) => "PASS",
            Some(false) => "FAIL",
            None => "n/a",
        };
        let _ = writeln!(
            out,
            "  {verdict:<4} {:<18} {}: {} (bound {})",
            t.configuration,
            t.target,
            opt(t.value, |v| format!("{v:.2}")),
            t.bound
        );
    }
    out
}

/// The variants a trace runs, for a table's heading.
fn variants(p: &MixParams) -> String {
    let mut v = String::new();
    if p.misestimate_sd > 0.0 {
        let _ = write!(v, ", mis-estimated (sd {})", p.misestimate_sd);
    }
    if p.lost_nodes > 0 {
        let _ = write!(v, ", {} nodes lost at {} h", p.lost_nodes, p.loss_at_hours);
    }
    v
}

/// Seeds as D1 writes them: `1..10` (both ends included) or a comma list `1,4,7`.
pub fn parse_seeds(text: &str) -> Result<Vec<u64>, SimError> {
    let bad = || SimError::Config(format!("seeds '{text}': expected A..B or a comma list"));
    let seeds: Vec<u64> = if let Some((a, b)) = text.split_once("..") {
        let a: u64 = a.trim().parse().map_err(|_| bad())?;
        let b: u64 = b.trim().parse().map_err(|_| bad())?;
        if b < a || b - a >= 1000 {
            return Err(bad());
        }
        (a..=b).collect()
    } else {
        text.split(',')
            .map(|s| s.trim().parse().map_err(|_| bad()))
            .collect::<Result<_, _>>()?
    };
    if seeds.is_empty() {
        return Err(bad());
    }
    Ok(seeds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_are_a_closed_range_or_a_list() {
        assert_eq!(parse_seeds("1..3").ok(), Some(vec![1, 2, 3]));
        assert_eq!(parse_seeds("4").ok(), Some(vec![4]));
        assert_eq!(parse_seeds("1, 5,7").ok(), Some(vec![1, 5, 7]));
        for bad in ["3..1", "a..2", "", "1..100000", "1,,2"] {
            assert!(parse_seeds(bad).is_err(), "{bad}");
        }
    }

    fn summary(
        name: &str,
        sla: f64,
        util: f64,
        p95: f64,
        honesty: u64,
        p99_us: f64,
    ) -> ConfigSummary {
        ConfigSummary {
            configuration: name.into(),
            production_jobs: 100,
            admission_rate: Some(1.0),
            hit_rate_submitted: sla,
            hit_rate_admitted: Some(sla),
            workflow_hit_rate: 1.0,
            utilisation_dominant: util,
            best_effort_slowdown_p50: Some(1.0),
            best_effort_slowdown_p95: Some(p95),
            honesty_failures: honesty,
            honesty_causes: BTreeMap::new(),
            planning_us_p99: Some(p99_us),
            containers_killed: 0,
            work_lost_vcore_s: 0.0,
            unfinished_jobs: 0,
            wall_s: 0.0,
        }
    }

    #[test]
    fn targets_are_judged_against_the_fair_baseline() {
        let params = MixParams::default();
        let fair = summary("fair", 0.70, 0.85, 4.0, 0, 0.0);
        let good = summary("demands", 1.0, 0.84, 4.8, 0, 2_000.0);
        let verdicts: Vec<Option<bool>> = targets_of(&good, Some(&fair), &params)
            .iter()
            .map(|t| t.pass)
            .collect();
        // honesty, hit/adm, +30 points, -1 point, 1.2x, 2 ms, the seed's picture.
        assert_eq!(verdicts, vec![Some(true); 7]);
        let bad = summary("rayon", 0.88, 0.80, 5.2, 3, 12_000.0);
        let verdicts: Vec<Option<bool>> = targets_of(&bad, Some(&fair), &params)
            .iter()
            .map(|t| t.pass)
            .collect();
        assert_eq!(verdicts, vec![Some(false); 7]);
        // Without a Fair run the comparisons cannot be judged; with faults neither can honesty.
        let faulty = MixParams {
            lost_nodes: 2,
            ..params
        };
        let alone = targets_of(&good, None, &faulty);
        assert_eq!(
            alone.iter().map(|t| t.pass).collect::<Vec<_>>(),
            vec![None, None, None, None, None, Some(true), None]
        );
    }
}
