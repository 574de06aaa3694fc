//! What a scale run measures: CPS (allocations per second of scheduler time), validSchedule
//! (seed 003's definition), time to 90% / 99% usage, fairness against the instantaneous fair
//! share, app waits, scheduler time by event kind, verification drift, and what preemption
//! cost and bought: containers preempted, the work they lost, and how long starved leaves took
//! to reach their share.
//!
//! Starvation, as measured here (the same yardstick for both strategies): at a sample, a leaf
//! is *starved* when its usage (dominant share of the cluster) is below [`STARVED_BELOW`] of
//! what it is entitled to, min(fair share, demand); the episode ends at the first sample where
//! its usage reaches [`REACHED_SHARE`] of that (containers come in whole sizes, so the full
//! share is often out of reach by a fraction of one). Measured at the sample period.

use super::apps::AppRun;
use super::footprint::FootprintFigures;
use super::pools::{PoolFigures, PoolRecorder};
use super::walk_bound::WalkBoundFigures;
use crate::workload::Workload;
use serde::Serialize;
use std::collections::BTreeMap;
use weft_sched::Scheduler;
use weft_types::{Resource, Time};

pub use crate::driver::EventKind;

/// Below this fraction of its entitled share a leaf counts as starved (Hadoop's default
/// `fairSharePreemptionThreshold`).
pub const STARVED_BELOW: f64 = 0.5;
/// At this fraction of its entitled share a starved leaf counts as having reached it.
pub const REACHED_SHARE: f64 = 0.9;

/// Seed 003's usage bar: at or above this share of the cluster a minute is valid whatever is
/// pending (below it, small fragments left on every node may fit no ask).
pub const VALID_USAGE: f64 = 0.9;

/// Seed 003's validSchedule for one observation: the cluster's usage (dominant share) is at
/// least [`VALID_USAGE`], or nothing valid is pending (validPending = min(queue pending, the
/// queue's max quota), summed over the queues, is zero). A minute is valid when every
/// observation in it is; the simulator and `weft rm-bench` both judge with this.
pub fn valid_schedule(usage: f64, valid_pending: bool) -> bool {
    usage >= VALID_USAGE || !valid_pending
}

/// The minute (0-based) an observation at `t_ms` counts toward: minute `m` is `(60m, 60(m+1)]`
/// seconds, so the observation at exactly one minute closes minute 0.
pub fn schedule_minute(t_ms: u64) -> u64 {
    t_ms.saturating_sub(1) / 60_000
}

/// One metrics sample.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sample {
    /// Virtual time.
    pub t_ms: u64,
    /// Dominant share of the cluster in use (0..1).
    pub usage: f64,
    /// Outstanding container asks.
    pub pending_containers: u64,
    /// Whether some queue has valid pending demand (min(pending, max quota) > 0).
    pub valid_pending: bool,
    /// Allocations per second of scheduler time since the previous sample.
    pub cps: f64,
    /// Apps submitted and not finished.
    pub live_apps: u64,
}

/// A leaf queue's dominant-share usage and fair share over time.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct QueueSeries {
    /// Full name.
    pub name: String,
    /// Usage (dominant share of the cluster) at each sample.
    pub usage: Vec<f64>,
    /// Instantaneous fair share (dominant share of the cluster) at each sample.
    pub fair_share: Vec<f64>,
    /// The worst shortfall seen (see [`ScaleReport::worst_fairness_gap`]).
    pub worst_gap: f64,
    /// The sample at which its current starvation episode began, if it is starved.
    #[serde(skip)]
    pub starved_since_ms: Option<u64>,
}

/// Everything a scale run reports.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScaleReport {
    /// Workload name.
    pub workload: String,
    /// Nodes.
    pub nodes: u64,
    /// Apps submitted.
    pub apps: u64,
    /// Apps that finished.
    pub apps_finished: u64,
    /// Apps the scheduler rejected.
    pub apps_rejected: u64,
    /// Leaf queues seen.
    pub queues: u64,
    /// Containers allocated (AM containers included).
    pub allocations: u64,
    /// AM containers among them.
    pub am_allocations: u64,
    /// Reservations made.
    pub reservations: u64,
    /// Virtual time simulated.
    pub virtual_ms: u64,
    /// Time spent inside the scheduler's event handling.
    pub scheduler_seconds: f64,
    /// Allocations per second of scheduler time.
    pub cps: f64,
    /// First time the cluster's dominant usage reached 90% (`None`: never).
    pub time_to_90pct_ms: Option<u64>,
    /// First time it reached 99%.
    pub time_to_99pct_ms: Option<u64>,
    /// Fraction of virtual minutes that were valid (seed 003's validSchedulePerMin, averaged).
    pub valid_schedule_per_min: f64,
    /// The same over the minutes after the first (the ramp-up minute excluded).
    pub valid_schedule_after_first_min: f64,
    /// Per virtual minute: 1 valid, 0 not.
    pub valid_schedule_minutes: Vec<u8>,
    /// Seed 003's validSchedulePerDay: valid minutes / 1440 (meaningful for day-long runs).
    pub valid_schedule_per_day: f64,
    /// The worst relative shortfall of a queue's usage under min(fair share, demand), over
    /// samples once the cluster first reached 90% usage (0 = never under its share).
    pub worst_fairness_gap: f64,
    /// The mean of that shortfall over queues and samples.
    pub mean_fairness_gap: f64,
    /// Per-app wait from submission to first container: p50 and p99 (ms).
    pub wait_p50_ms: u64,
    /// See `wait_p50_ms`.
    pub wait_p99_ms: u64,
    /// Per-app time from submission to finish: p50 and p99 (ms), finished apps only.
    pub completion_p50_ms: u64,
    /// See `completion_p50_ms`.
    pub completion_p99_ms: u64,
    /// Containers warned for preemption.
    pub preempt_warnings: u64,
    /// Containers preempted (killed).
    pub preempted_containers: u64,
    /// AM containers among them.
    pub preempted_am_containers: u64,
    /// Work lost: the run time preempted containers had behind them, in container-seconds.
    pub work_lost_container_seconds: f64,
    /// Starvation episodes that ended (see the module's definition).
    pub starved_episodes: u64,
    /// Episodes still open when the run stopped.
    pub starved_at_end: u64,
    /// Time from a leaf becoming starved to reaching its share, over ended episodes: p50 and
    /// p99 (ms).
    pub starved_to_share_p50_ms: u64,
    /// See `starved_to_share_p50_ms`.
    pub starved_to_share_p99_ms: u64,
    /// Scheduler seconds by event kind (name, seconds, events).
    pub phases: Vec<(String, f64, u64)>,
    /// Aggregate or ordering mismatches found by verification (must be 0).
    pub drift: u64,
    /// The first few mismatches, if any.
    pub drift_examples: Vec<String>,
    /// Queues the heartbeat walks entered (root included), over the run.
    pub queues_visited: u64,
    /// That per heartbeat: what one heartbeat costs in tree visits (with resource pools, a
    /// heartbeat descends only its node's pool).
    pub queues_visited_per_heartbeat: f64,
    /// Summed over the heartbeat walks: the top-level queues with something to schedule each
    /// could descend to (with pools, only its node's pool's).
    pub top_level_reachable: u64,
    /// That per heartbeat: the breadth of the tree a heartbeat draws from. A walk stops at
    /// the first queue that allocates, so `queues_visited_per_heartbeat` shrinks with pools
    /// only where walks find nothing; this figure shrinks with the pool's share of the tree.
    pub top_level_reachable_per_heartbeat: f64,
    /// Each heartbeat's widest walk against the queues of its node's pool (resource-pools
    /// spec §14 scenario 31), and the walks' mean width.
    pub walk_bound: WalkBoundFigures,
    /// The scheduler's hot structures and the bytes of them a heartbeat's walks reach.
    pub footprint: FootprintFigures,
    /// Per resource pool: usage, valid pending, validSchedule (empty without pools).
    pub pools: Vec<PoolFigures>,
    /// With pools: the fraction of minutes in which every pool's validSchedule held (the
    /// pool-aware cluster figure; `valid_schedule_per_min` is the naive whole-cluster one).
    pub pool_aware_valid_schedule_per_min: Option<f64>,
    /// Verifications run (each recomputes every aggregate and order from scratch).
    pub verifications: u64,
    /// Seconds they took in all, as the injected clock measured them.
    pub verify_seconds: f64,
    /// Seconds the longest one took.
    pub verify_max_seconds: f64,
    /// Sliced verification rounds run (`ScaleOptions::verify_slice_budget`).
    pub sliced_rounds: u64,
    /// Their slices.
    pub slices: u64,
    /// Seconds all their slices took.
    pub slice_seconds: f64,
    /// The longest slice's seconds.
    pub slice_max_seconds: f64,
    /// The longest slice's seconds by the phase it started in (`VerifyCursor::phase`, the
    /// engine's numbering).
    pub slice_max_seconds_by_phase: Vec<f64>,
    /// The samples.
    #[serde(skip)]
    pub samples: Vec<Sample>,
    /// Leaf queues' usage against fair share over time (all leaves).
    #[serde(skip)]
    pub queue_series: Vec<QueueSeries>,
    /// Per-app waits (ms).
    #[serde(skip)]
    pub waits_ms: Vec<u64>,
    /// Per-app completion times (ms).
    #[serde(skip)]
    pub completions_ms: Vec<u64>,
}

/// Collects metrics as the run goes.
pub(crate) struct Recorder {
    name: String,
    nodes: u64,
    allocations: u64,
    am_allocations: u64,
    reservations: u64,
    submitted: u64,
    finished: u64,
    rejected: u64,
    pending: u64,
    nanos: [u64; EventKind::ALL.len()],
    events: [u64; EventKind::ALL.len()],
    window_allocations: u64,
    window_nanos: u64,
    time_to_90: Option<u64>,
    time_to_99: Option<u64>,
    samples: Vec<Sample>,
    minutes: BTreeMap<u64, bool>,
    queue_index: BTreeMap<String, usize>,
    queues: Vec<QueueSeries>,
    gap_sum: f64,
    gap_count: u64,
    waits: Vec<u64>,
    completions: Vec<u64>,
    drift: u64,
    drift_examples: Vec<String>,
    verifications: u64,
    verify_nanos: u64,
    verify_max_nanos: u64,
    sliced_rounds: u64,
    slices: u64,
    slice_nanos: u64,
    slice_max_nanos: u64,
    slice_phase_max_nanos: [u64; 8],
    preempt_warnings: u64,
    preempted: u64,
    preempted_am: u64,
    work_lost_ms: u64,
    starved_episodes_ms: Vec<u64>,
    pools: PoolRecorder,
}

impl Recorder {
    pub(crate) fn new(workload: &Workload) -> Recorder {
        Recorder {
            name: workload.name.clone(),
            nodes: workload.nodes.len() as u64,
            allocations: 0,
            am_allocations: 0,
            reservations: 0,
            submitted: 0,
            finished: 0,
            rejected: 0,
            pending: 0,
            nanos: [0; EventKind::ALL.len()],
            events: [0; EventKind::ALL.len()],
            window_allocations: 0,
            window_nanos: 0,
            time_to_90: None,
            time_to_99: None,
            samples: Vec::new(),
            minutes: BTreeMap::new(),
            queue_index: BTreeMap::new(),
            queues: Vec::new(),
            gap_sum: 0.0,
            gap_count: 0,
            waits: Vec::new(),
            completions: Vec::new(),
            drift: 0,
            drift_examples: Vec::new(),
            verifications: 0,
            verify_nanos: 0,
            verify_max_nanos: 0,
            sliced_rounds: 0,
            slices: 0,
            slice_nanos: 0,
            slice_max_nanos: 0,
            slice_phase_max_nanos: [0; 8],
            preempt_warnings: 0,
            preempted: 0,
            preempted_am: 0,
            work_lost_ms: 0,
            starved_episodes_ms: Vec::new(),
            pools: PoolRecorder::default(),
        }
    }

    pub(crate) fn preempt_warning(&mut self) {
        self.preempt_warnings += 1;
    }

    /// A container was preempted after running `ran` (the work it loses).
    pub(crate) fn preempted(&mut self, am: bool, ran: weft_types::Duration) {
        self.preempted += 1;
        if am {
            self.preempted_am += 1;
        }
        self.work_lost_ms = self.work_lost_ms.saturating_add(ran.as_millis());
    }

    pub(crate) fn add_time(&mut self, kind: EventKind, nanos: u64) {
        let k = kind as usize;
        self.nanos[k] += nanos;
        self.events[k] += 1;
        self.window_nanos += nanos;
    }

    pub(crate) fn live_apps(&self) -> u64 {
        self.submitted - self.finished - self.rejected
    }

    /// Apps that finished or were rejected.
    pub(crate) fn ended_apps(&self) -> u64 {
        self.finished + self.rejected
    }

    pub(crate) fn last_sample_at(&self) -> Option<Time> {
        self.samples.last().map(|s| Time(s.t_ms))
    }

    pub(crate) fn app_submitted(&mut self) {
        self.submitted += 1;
    }

    pub(crate) fn app_rejected(&mut self) {
        self.rejected += 1;
    }

    pub(crate) fn app_finished(&mut self, app: &AppRun) {
        self.finished += 1;
        if let (Some(s), Some(f)) = (app.submitted, app.finished) {
            self.completions.push(f.since(s).as_millis());
        }
    }

    pub(crate) fn asked(&mut self, containers: u64) {
        self.pending += containers;
    }

    pub(crate) fn reserved(&mut self) {
        self.reservations += 1;
    }

    /// A container was allocated; `used` and `capacity` are the cluster's after it.
    pub(crate) fn allocated(
        &mut self,
        now: Time,
        app: &AppRun,
        am: bool,
        used: Resource,
        capacity: Resource,
    ) {
        self.allocations += 1;
        self.window_allocations += 1;
        if am {
            self.am_allocations += 1;
        } else {
            self.pending = self.pending.saturating_sub(1);
        }
        if app.first_container.is_none() {
            if let Some(s) = app.submitted {
                self.waits.push(now.since(s).as_millis());
            }
        }
        if self.time_to_99.is_none() {
            let share = dominant_share(used, capacity);
            if share >= 0.9 && self.time_to_90.is_none() {
                self.time_to_90 = Some(now.as_millis());
            }
            if share >= 0.99 {
                self.time_to_99 = Some(now.as_millis());
            }
        }
    }

    pub(crate) fn sample(&mut self, now: Time, sched: &Scheduler) {
        let capacity = sched.cluster_capacity();
        let usage = dominant_share(sched.cluster_used(), capacity);
        let mut valid_pending = false;
        let ramped = self.time_to_90.is_some();
        let index = &mut self.queue_index;
        let queues = &mut self.queues;
        let samples_so_far = self.samples.len();
        let mut gap_sum = 0.0;
        let mut gap_count = 0;
        let episodes = &mut self.starved_episodes_ms;
        sched.visit_leaf_queues(|q| {
            // Demand is capped at the max share, so demand - usage is min(pending, max quota).
            if q.demand.saturating_sub(q.usage).any_positive() {
                valid_pending = true;
            }
            let i = *index.entry(q.name.to_string()).or_insert_with(|| {
                queues.push(QueueSeries {
                    name: q.name.to_string(),
                    usage: vec![0.0; samples_so_far],
                    fair_share: vec![0.0; samples_so_far],
                    worst_gap: 0.0,
                    starved_since_ms: None,
                });
                queues.len() - 1
            });
            let series = &mut queues[i];
            let used = dominant_share(q.usage, capacity);
            let fair = dominant_share(q.fair_share, capacity);
            series.usage.push(used);
            series.fair_share.push(fair);
            let entitled = dominant_share(q.fair_share.cw_min(q.demand), capacity);
            // A leaf without running apps has nobody to starve (its demand is as of the last
            // update, so it can outlive the apps by an update period).
            let starved_now = q.running_apps > 0 && used < STARVED_BELOW * entitled;
            match series.starved_since_ms {
                None if starved_now => {
                    series.starved_since_ms = Some(now.as_millis());
                }
                Some(since) if q.running_apps == 0 || used >= REACHED_SHARE * entitled => {
                    episodes.push(now.as_millis() - since);
                    series.starved_since_ms = None;
                }
                _ => {}
            }
            if ramped && entitled > 0.0 {
                let gap = ((entitled - used) / fair.max(entitled)).max(0.0);
                series.worst_gap = series.worst_gap.max(gap);
                gap_sum += gap;
                gap_count += 1;
            }
        });
        self.gap_sum += gap_sum;
        self.gap_count += gap_count;
        let t_now = now.as_millis();
        for q in &mut self.queues {
            // Queues that vanished (dynamic queues removed) get zeros to stay aligned.
            if q.usage.len() <= samples_so_far {
                q.usage.push(0.0);
                q.fair_share.push(0.0);
                // A queue that is gone is no longer starved (it has no demand).
                if let Some(since) = q.starved_since_ms.take() {
                    self.starved_episodes_ms.push(t_now - since);
                }
            }
        }
        let cps = if self.window_nanos > 0 {
            self.window_allocations as f64 / (self.window_nanos as f64 / 1e9)
        } else {
            0.0
        };
        self.window_allocations = 0;
        self.window_nanos = 0;
        let t = now.as_millis();
        let minute = schedule_minute(t);
        let valid = valid_schedule(usage, valid_pending);
        let entry = self.minutes.entry(minute).or_insert(true);
        *entry &= valid;
        self.pools.sample(now, sched);
        self.samples.push(Sample {
            t_ms: t,
            usage,
            pending_containers: self.pending,
            valid_pending,
            cps,
            live_apps: self.live_apps(),
        });
    }

    /// One verification's findings and the CPU time it took.
    pub(crate) fn drift(&mut self, problems: Vec<String>, nanos: u64) {
        self.verifications += 1;
        self.verify_nanos += nanos;
        self.verify_max_nanos = self.verify_max_nanos.max(nanos);
        self.drift += problems.len() as u64;
        for p in problems {
            if self.drift_examples.len() < 5 {
                self.drift_examples.push(p);
            }
        }
    }

    /// One sliced verification round's findings and its slices' CPU time.
    pub(crate) fn sliced_drift(
        &mut self,
        problems: Vec<String>,
        timing: crate::driver::SliceTiming,
    ) {
        self.sliced_rounds += 1;
        self.slices += timing.slices;
        self.slice_nanos += timing.total_nanos;
        self.slice_max_nanos = self.slice_max_nanos.max(timing.max_nanos);
        for (kept, new) in self
            .slice_phase_max_nanos
            .iter_mut()
            .zip(timing.phase_max_nanos)
        {
            *kept = (*kept).max(new);
        }
        self.drift += problems.len() as u64;
        for p in problems {
            if self.drift_examples.len() < 5 {
                self.drift_examples.push(format!("sliced: {p}"));
            }
        }
    }

    /// The report; `walks` is the scheduler's walk counters at the end (queues visited,
    /// top-level queues reachable).
    pub(crate) fn finish(self, now: Time, walks: (u64, u64)) -> ScaleReport {
        let (queues_visited, top_level_reachable) = walks;
        let per_heartbeat = |n: u64| {
            let heartbeats = self.events[EventKind::Heartbeat as usize];
            if heartbeats > 0 {
                n as f64 / heartbeats as f64
            } else {
                0.0
            }
        };
        let (pools, pool_aware_valid_schedule_per_min) = self.pools.finish();
        let scheduler_nanos: u64 = self.nanos.iter().sum();
        let scheduler_seconds = scheduler_nanos as f64 / 1e9;
        let minutes: Vec<u8> = self.minutes.values().map(|v| u8::from(*v)).collect();
        let fraction = |m: &[u8]| {
            if m.is_empty() {
                1.0
            } else {
                m.iter().map(|v| f64::from(*v)).sum::<f64>() / m.len() as f64
            }
        };
        let valid_minutes: f64 = minutes.iter().map(|v| f64::from(*v)).sum();
        let worst = self.queues.iter().map(|q| q.worst_gap).fold(0.0, f64::max);
        let mut waits = self.waits;
        waits.sort_unstable();
        let mut completions = self.completions;
        completions.sort_unstable();
        let mut starved = self.starved_episodes_ms;
        starved.sort_unstable();
        let starved_at_end = self
            .queues
            .iter()
            .filter(|q| q.starved_since_ms.is_some())
            .count() as u64;
        let phases = EventKind::ALL
            .iter()
            .map(|k| {
                (
                    k.name().to_string(),
                    self.nanos[*k as usize] as f64 / 1e9,
                    self.events[*k as usize],
                )
            })
            .collect();
        ScaleReport {
            workload: self.name,
            nodes: self.nodes,
            apps: self.submitted,
            apps_finished: self.finished,
            apps_rejected: self.rejected,
            queues: self.queues.len() as u64,
            allocations: self.allocations,
            am_allocations: self.am_allocations,
            reservations: self.reservations,
            virtual_ms: now.as_millis(),
            scheduler_seconds,
            cps: if scheduler_seconds > 0.0 {
                self.allocations as f64 / scheduler_seconds
            } else {
                0.0
            },
            time_to_90pct_ms: self.time_to_90,
            time_to_99pct_ms: self.time_to_99,
            valid_schedule_per_min: fraction(&minutes),
            valid_schedule_after_first_min: fraction(minutes.get(1..).unwrap_or(&[])),
            valid_schedule_per_day: valid_minutes / 1440.0,
            valid_schedule_minutes: minutes,
            worst_fairness_gap: worst,
            mean_fairness_gap: if self.gap_count > 0 {
                self.gap_sum / self.gap_count as f64
            } else {
                0.0
            },
            wait_p50_ms: percentile(&waits, 0.50),
            wait_p99_ms: percentile(&waits, 0.99),
            completion_p50_ms: percentile(&completions, 0.50),
            completion_p99_ms: percentile(&completions, 0.99),
            preempt_warnings: self.preempt_warnings,
            preempted_containers: self.preempted,
            preempted_am_containers: self.preempted_am,
            work_lost_container_seconds: self.work_lost_ms as f64 / 1000.0,
            starved_episodes: starved.len() as u64,
            starved_at_end,
            starved_to_share_p50_ms: percentile(&starved, 0.50),
            starved_to_share_p99_ms: percentile(&starved, 0.99),
            phases,
            drift: self.drift,
            drift_examples: self.drift_examples,
            queues_visited,
            queues_visited_per_heartbeat: per_heartbeat(queues_visited),
            top_level_reachable,
            top_level_reachable_per_heartbeat: per_heartbeat(top_level_reachable),
            walk_bound: WalkBoundFigures::default(),
            footprint: FootprintFigures::default(),
            pools,
            pool_aware_valid_schedule_per_min,
            verifications: self.verifications,
            verify_seconds: self.verify_nanos as f64 / 1e9,
            verify_max_seconds: self.verify_max_nanos as f64 / 1e9,
            sliced_rounds: self.sliced_rounds,
            slices: self.slices,
            slice_seconds: self.slice_nanos as f64 / 1e9,
            slice_max_seconds: self.slice_max_nanos as f64 / 1e9,
            slice_max_seconds_by_phase: self
                .slice_phase_max_nanos
                .iter()
                .map(|n| *n as f64 / 1e9)
                .collect(),
            samples: self.samples,
            queue_series: self.queues,
            waits_ms: waits,
            completions_ms: completions,
        }
    }
}

/// The largest share of any resource type (types the cluster has none of are skipped).
pub fn dominant_share(r: Resource, capacity: Resource) -> f64 {
    r.values()
        .iter()
        .zip(capacity.values())
        .filter(|(_, c)| **c > 0)
        .map(|(v, c)| *v as f64 / *c as f64)
        .fold(0.0, f64::max)
}

/// The nearest-rank percentile of sorted values (0 when empty).
fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_schedule_is_high_usage_or_nothing_valid_pending() {
        assert!(valid_schedule(0.95, true));
        assert!(valid_schedule(0.9, true));
        assert!(!valid_schedule(0.89, true));
        assert!(valid_schedule(0.1, false));
        assert_eq!(schedule_minute(0), 0);
        assert_eq!(schedule_minute(60_000), 0);
        assert_eq!(schedule_minute(60_001), 1);
    }

    #[test]
    fn dominant_share_takes_the_largest_type() {
        let cap = Resource::new(1000, 10);
        assert_eq!(dominant_share(Resource::new(500, 1), cap), 0.5);
        assert_eq!(dominant_share(Resource::new(100, 9), cap), 0.9);
        assert_eq!(dominant_share(Resource::new(5, 5), Resource::ZERO), 0.0);
    }

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&v, 0.5), 50);
        assert_eq!(percentile(&v, 0.99), 99);
        assert_eq!(percentile(&[7], 0.99), 7);
        assert_eq!(percentile(&[], 0.5), 0);
    }
}
