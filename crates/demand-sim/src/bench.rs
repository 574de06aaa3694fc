//! §5 D1: the `deadline-mix` comparison over several seeds, summarised per configuration,
//! with §4.4's targets judged against the Fair baseline.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::report::{compare_with, opt, pct, ratio, variants, Comparison, ConfigReport};
use crate::workload::MixParams;
use crate::{Configuration, SimError};

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
