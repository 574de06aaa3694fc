//! The spec's `deadline-mix` workload (time-aware-demands §4.2), generated from a seed:
//! production MapReduce jobs with deadlines (40% of the offered load), workflows of 3-5
//! chained stages with loose deadlines (10%) and best-effort SYNTH jobs (50%), each kind a
//! Poisson stream. Job sizes scale with the cluster (the spec's sizes are for 256 nodes), so
//! a smaller cluster sees the same shape: a job takes the same fraction of it.

use serde::Serialize;
use weft_types::Resource;

use crate::rng::Rng;

/// The spec's node: 128 GiB and 32 vcores.
pub const NODE_MEMORY_MB: i64 = 128 * 1024;
/// The spec's node's vcores.
pub const NODE_VCORES: i64 = 32;
/// The node count the spec's job sizes are written for (Rayon's cluster).
const SPEC_NODES: f64 = 256.0;

/// Everything a `deadline-mix` trace depends on.
#[derive(Clone, Debug, Serialize)]
pub struct MixParams {
    /// Nodes of 128 GiB / 32 vcores.
    pub nodes: u32,
    /// Arrivals happen over [0, hours).
    pub hours: f64,
    /// Utilisation is measured from here to the last arrival.
    pub warmup_minutes: f64,
    /// Offered load: the vcore-seconds jobs occupy (tasks, and each job's AM for its run) per
    /// second over the cluster's vcores.
    pub load: f64,
    /// The trace's seed.
    pub seed: u64,
    /// After the last arrival, how long jobs may still run before the run stops.
    pub drain_hours: f64,
    /// The mis-estimation variant (§4.2): each task runs its declared time × LogNormal(mean 1,
    /// sd this); 0 runs every task exactly as declared. Declarations (deadlines, reservations,
    /// demands' Durations) keep the estimate.
    pub misestimate_sd: f64,
    /// The fault variant (§4.2): nodes that stop heartbeating (the RM finds them LOST after
    /// its NM expiry); 0 loses none. The spec loses 8 of 256.
    pub lost_nodes: u32,
    /// When they stop, hours from the start (the spec's 3 h of 6).
    pub loss_at_hours: f64,
}

impl MixParams {
    /// The spec's fault: 8 nodes of 256 (at least one) at half the arrival window.
    pub fn with_spec_node_loss(mut self) -> MixParams {
        self.lost_nodes = ((f64::from(self.nodes) * 8.0 / SPEC_NODES).round() as u32).max(1);
        self.loss_at_hours = self.hours / 2.0;
        self
    }
}

impl Default for MixParams {
    fn default() -> MixParams {
        MixParams {
            nodes: 64,
            hours: 2.0,
            warmup_minutes: 15.0,
            // 85%: at 100% (AMs counted) the best-effort backlog grows without bound and a
            // run takes many minutes; `--load 1.0` measures it.
            load: 0.85,
            seed: 1,
            drain_hours: 1.0,
            misestimate_sd: 0.0,
            lost_nodes: 0,
            loss_at_hours: 1.0,
        }
    }
}

/// What a job is, for the metrics and for how each configuration submits it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum JobKind {
    /// A MapReduce job with a deadline: maps, then reduces.
    Production,
    /// A chain of stages, each after the previous one, with a loose deadline.
    Workflow,
    /// A small SYNTH job with no deadline.
    BestEffort,
}

/// One stage: containers of one size, each with its own run time.
#[derive(Clone, Debug)]
pub struct Stage {
    /// Every container's size.
    pub capability: Resource,
    /// Each task's declared (estimated) run time, ms (the stage has this many containers).
    pub runtimes_ms: Vec<u64>,
    /// Each task's actual run time, ms: the estimate unless the trace mis-estimates.
    pub actual_ms: Vec<u64>,
    /// The YARN priority its asks carry (MapReduce's: maps 20, reduces 10).
    pub priority: i32,
}

impl Stage {
    fn new(capability: Resource, runtimes_ms: Vec<u64>, priority: i32) -> Stage {
        Stage {
            capability,
            actual_ms: runtimes_ms.clone(),
            runtimes_ms,
            priority,
        }
    }

    /// The longest declared task: the stage's duration when every task runs at once.
    pub fn longest_ms(&self) -> u64 {
        self.runtimes_ms.iter().copied().max().unwrap_or(0)
    }

    /// The longest task as it actually runs.
    pub fn longest_actual_ms(&self) -> u64 {
        self.actual_ms.iter().copied().max().unwrap_or(0)
    }

    /// Task vcore-seconds (the load the stage offers).
    fn vcore_seconds(&self) -> f64 {
        let vcores = self.capability.vcores() as f64;
        self.runtimes_ms
            .iter()
            .map(|r| *r as f64 / 1000.0)
            .sum::<f64>()
            * vcores
    }
}

/// One job of the trace.
#[derive(Clone, Debug)]
pub struct Job {
    /// Position in the trace (arrival order).
    pub index: usize,
    /// Its kind.
    pub kind: JobKind,
    /// When it arrives, ms (whole seconds: the driver steps by the heartbeat interval).
    pub arrival_ms: u64,
    /// Its stages, run one after the other.
    pub stages: Vec<Stage>,
    /// Production and workflow jobs: when their last container must have completed.
    pub deadline_ms: Option<u64>,
}

impl Job {
    /// The declared critical path with every stage fully parallel: the sum of the longest
    /// tasks' estimates (what deadlines and plans are made from).
    pub fn ideal_ms(&self) -> u64 {
        self.stages.iter().map(Stage::longest_ms).sum()
    }

    /// The critical path as the tasks actually run (a job's isolated runtime).
    pub fn actual_ideal_ms(&self) -> u64 {
        self.stages.iter().map(Stage::longest_actual_ms).sum()
    }

    /// The queue it is submitted to.
    pub fn queue(&self) -> &'static str {
        match self.kind {
            JobKind::Production | JobKind::Workflow => "root.prod",
            JobKind::BestEffort => "root.adhoc",
        }
    }

    /// The user it runs as.
    pub fn user(&self) -> &'static str {
        match self.kind {
            JobKind::Production => "prod",
            JobKind::Workflow => "etl",
            JobKind::BestEffort => "adhoc",
        }
    }
}

/// The share of the offered load per kind (§4.2).
const PRODUCTION_SHARE: f64 = 0.4;
const WORKFLOW_SHARE: f64 = 0.1;
const BEST_EFFORT_SHARE: f64 = 0.5;

/// Deadline factors and their weights (§4.2): 1.5 (30%), 2 (40%), 4 (30%).
fn deadline_factor(rng: &mut Rng) -> f64 {
    let u = rng.unit();
    if u < 0.3 {
        1.5
    } else if u < 0.7 {
        2.0
    } else {
        4.0
    }
}

/// `count` tasks of `mean ± spread` seconds (uniform), in ms.
fn runtimes(rng: &mut Rng, count: u64, mean_s: u64, spread_s: u64) -> Vec<u64> {
    (0..count)
        .map(|_| rng.between((mean_s - spread_s) * 1000, (mean_s + spread_s) * 1000))
        .collect()
}

fn scale(params: &MixParams) -> f64 {
    f64::from(params.nodes) / SPEC_NODES
}

fn production(rng: &mut Rng, params: &MixParams) -> Vec<Stage> {
    let s = scale(params);
    let maps = rng.lognormal(200.0 * s, 100.0 * s).round().max(1.0) as u64;
    let reduces = maps.div_ceil(5);
    vec![
        Stage::new(Resource::new(2048, 1), runtimes(rng, maps, 60, 20), 20),
        Stage::new(Resource::new(4096, 1), runtimes(rng, reduces, 120, 40), 10),
    ]
}

/// Workflow stages: 3-5 of them, each 10-40 containers at the spec's scale (2 GiB, 60 ± 20 s).
fn workflow_tasks(params: &MixParams) -> (u64, u64) {
    let s = scale(params);
    (
        (10.0 * s).round().max(1.0) as u64,
        (40.0 * s).round().max(1.0) as u64,
    )
}

fn workflow(rng: &mut Rng, params: &MixParams) -> Vec<Stage> {
    let (lo, hi) = workflow_tasks(params);
    let stages = rng.between(3, 5);
    (0..stages)
        .map(|i| {
            let n = rng.between(lo, hi);
            Stage::new(
                Resource::new(2048, 1),
                runtimes(rng, n, 60, 20),
                1 + i as i32,
            )
        })
        .collect()
}

fn best_effort(rng: &mut Rng) -> Vec<Stage> {
    let maps = rng.between(4, 6);
    vec![Stage::new(
        Resource::new(1024, 1),
        runtimes(rng, maps, 10, 2),
        20,
    )]
}

/// What a job occupies, in vcore-seconds: its tasks, plus its AM (1 vcore) for its critical
/// path and about 2 s per stage of asking and launching.
fn occupancy(job_stages: &[Stage]) -> f64 {
    let tasks: f64 = job_stages.iter().map(Stage::vcore_seconds).sum();
    let critical_path: u64 = job_stages.iter().map(Stage::longest_ms).sum();
    tasks + critical_path as f64 / 1000.0 + 2.0 * job_stages.len() as f64
}

/// Mean occupancy per job of a kind, from 4,000 jobs drawn from its own stream (so the
/// arrival rate matches the distributions exactly, whatever the scale).
fn mean_occupancy(kind: JobKind, params: &MixParams) -> f64 {
    let mut rng = Rng::new(0x4D45_414E ^ params.nodes as u64);
    let n = 4000;
    let total: f64 = (0..n)
        .map(|_| {
            let stages = match kind {
                JobKind::Production => production(&mut rng, params),
                JobKind::Workflow => workflow(&mut rng, params),
                JobKind::BestEffort => best_effort(&mut rng),
            };
            occupancy(&stages)
        })
        .sum();
    total / f64::from(n)
}

/// The trace: every job, in arrival order (ties by kind, then generation order).
pub fn deadline_mix(params: &MixParams) -> Vec<Job> {
    let capacity = f64::from(params.nodes) * NODE_VCORES as f64;
    let horizon_s = params.hours * 3600.0;
    let mut jobs = Vec::new();
    let streams = [
        (JobKind::Production, PRODUCTION_SHARE, 0x5052_4F44u64),
        (JobKind::Workflow, WORKFLOW_SHARE, 0x574F_524Bu64),
        (JobKind::BestEffort, BEST_EFFORT_SHARE, 0x4245_5354u64),
    ];
    for (kind, share, salt) in streams {
        let rate = params.load * share * capacity / mean_occupancy(kind, params);
        if rate <= 0.0 || !rate.is_finite() {
            continue;
        }
        let mut rng = Rng::new(params.seed.wrapping_mul(0x9E37_79B9).wrapping_add(salt));
        let mut t = rng.exponential(1.0 / rate);
        while t < horizon_s {
            let arrival_ms = (t.round() as u64) * 1000;
            let stages = match kind {
                JobKind::Production => production(&mut rng, params),
                JobKind::Workflow => workflow(&mut rng, params),
                JobKind::BestEffort => best_effort(&mut rng),
            };
            let mut job = Job {
                index: 0,
                kind,
                arrival_ms,
                stages,
                deadline_ms: None,
            };
            job.deadline_ms = match kind {
                JobKind::Production => {
                    let factor = deadline_factor(&mut rng);
                    Some(arrival_ms + (factor * job.ideal_ms() as f64) as u64)
                }
                // A loose deadline of twice the estimate (§4.2's `+k×estimate`, k = 2).
                JobKind::Workflow => Some(arrival_ms + 2 * job.ideal_ms()),
                JobKind::BestEffort => None,
            };
            jobs.push(job);
            t += rng.exponential(1.0 / rate);
        }
    }
    jobs.sort_by_key(|j| j.arrival_ms);
    for (i, j) in jobs.iter_mut().enumerate() {
        j.index = i;
    }
    misestimate(&mut jobs, params);
    jobs
}

/// The mis-estimation variant: every task's actual time is its estimate × LogNormal(mean 1,
/// sd `misestimate_sd`), drawn from a stream of its own so the estimates (and so the exact
/// trace) do not change.
fn misestimate(jobs: &mut [Job], params: &MixParams) {
    if params.misestimate_sd <= 0.0 || !params.misestimate_sd.is_finite() {
        return;
    }
    let mut rng = Rng::new(
        params
            .seed
            .wrapping_mul(0x9E37_79B9)
            .wrapping_add(0x4D49_5345),
    );
    for stage in jobs.iter_mut().flat_map(|j| j.stages.iter_mut()) {
        for (actual, estimate) in stage.actual_ms.iter_mut().zip(&stage.runtimes_ms) {
            let factor = rng.lognormal(1.0, params.misestimate_sd);
            *actual = ((*estimate as f64) * factor).round().max(1.0) as u64;
        }
    }
}

/// The load a trace offers over its arrival window, as a fraction of the cluster's vcores:
/// (tasks and AMs, tasks alone).
pub fn offered_load(jobs: &[Job], params: &MixParams) -> (f64, f64) {
    let capacity = f64::from(params.nodes) * NODE_VCORES as f64 * params.hours * 3600.0;
    let with_ams: f64 = jobs.iter().map(|j| occupancy(&j.stages)).sum();
    let tasks: f64 = jobs
        .iter()
        .flat_map(|j| j.stages.iter().map(Stage::vcore_seconds))
        .sum();
    (with_ams / capacity, tasks / capacity)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_is_reproducible_and_offers_about_the_load_asked_for() {
        let params = MixParams {
            hours: 6.0,
            ..MixParams::default()
        };
        let a = deadline_mix(&params);
        let b = deadline_mix(&params);
        assert_eq!(a.len(), b.len());
        assert!(a
            .iter()
            .zip(&b)
            .all(|(x, y)| x.arrival_ms == y.arrival_ms && x.stages.len() == y.stages.len()));
        let (load, tasks) = offered_load(&a, &params);
        assert!((load - params.load).abs() < 0.05, "offered load {load}");
        assert!(tasks < load);
        let production = a.iter().filter(|j| j.kind == JobKind::Production).count();
        assert!(production > 0);
        // Every production job: two stages, reduces = ceil(maps / 5), deadline after arrival.
        for j in a.iter().filter(|j| j.kind == JobKind::Production) {
            let maps = j.stages[0].runtimes_ms.len();
            assert_eq!(j.stages[1].runtimes_ms.len(), maps.div_ceil(5));
            assert!(j.deadline_ms.expect("deadline") >= j.arrival_ms + j.ideal_ms() * 3 / 2);
        }
    }

    #[test]
    fn misestimation_keeps_every_estimate_and_scatters_actual_times_around_them() {
        let exact = MixParams {
            nodes: 16,
            hours: 1.0,
            ..MixParams::default()
        };
        let misestimated = MixParams {
            misestimate_sd: 0.2,
            ..exact.clone()
        };
        let a = deadline_mix(&exact);
        let b = deadline_mix(&misestimated);
        assert_eq!(a.len(), b.len());
        let mut ratios = Vec::new();
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.arrival_ms, y.arrival_ms);
            assert_eq!(x.deadline_ms, y.deadline_ms);
            for (s, t) in x.stages.iter().zip(&y.stages) {
                assert_eq!(s.runtimes_ms, t.runtimes_ms);
                assert_eq!(
                    s.actual_ms, s.runtimes_ms,
                    "the exact trace runs as declared"
                );
                ratios.extend(
                    t.actual_ms
                        .iter()
                        .zip(&t.runtimes_ms)
                        .map(|(a, e)| *a as f64 / *e as f64),
                );
            }
        }
        let n = ratios.len() as f64;
        let mean = ratios.iter().sum::<f64>() / n;
        let sd = (ratios.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / n).sqrt();
        assert!(n > 10_000.0, "{n} tasks");
        assert!((mean - 1.0).abs() < 0.01, "mean factor {mean}");
        assert!((sd - 0.2).abs() < 0.01, "sd of the factor {sd}");
    }

    #[test]
    fn the_spec_node_loss_is_8_of_256_nodes_at_half_the_arrivals() {
        let at = |nodes| {
            let p = MixParams {
                nodes,
                hours: 6.0,
                ..MixParams::default()
            }
            .with_spec_node_loss();
            (p.lost_nodes, p.loss_at_hours)
        };
        assert_eq!(at(256), (8, 3.0));
        assert_eq!(at(64), (2, 3.0));
        assert_eq!(at(8), (1, 3.0));
    }
}
