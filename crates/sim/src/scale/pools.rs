//! Per resource pool figures of a scale run (resource-pools spec §12): each pool's usage and
//! valid pending demand over time, validSchedule judged on the pool alone, and the pool-aware
//! cluster figure (a minute is valid when every pool's is).
//!
//! A pool's validSchedule is seed 003's definition applied to the pool: its usage (dominant
//! share of its own capacity) is at least [`VALID_USAGE`](super::metrics::VALID_USAGE), or
//! nothing valid is pending in its queues (min(pending, max quota) summed over them).

use serde::Serialize;
use std::collections::BTreeMap;
use weft_sched::Scheduler;
use weft_types::{Resource, Time};

use super::metrics::{dominant_share, schedule_minute, valid_schedule};

/// One pool's figures over a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PoolFigures {
    /// The pool (`""`: DEFAULT, the nodes in no pool).
    pub name: String,
    /// Its nodes at the last sample.
    pub nodes: u32,
    /// Its capacity at the last sample: memory (MB) and vcores.
    pub capacity_mb: i64,
    /// See `capacity_mb`.
    pub capacity_vcores: i64,
    /// Usage (dominant share of the pool's capacity), mean over samples.
    pub usage_mean: f64,
    /// Usage at the last sample.
    pub usage_last: f64,
    /// Valid pending demand of its queues at the last sample (memory MB, vcores).
    pub pending_mb: i64,
    /// See `pending_mb`.
    pub pending_vcores: i64,
    /// Fraction of virtual minutes valid for this pool.
    pub valid_schedule_per_min: f64,
    /// Per virtual minute: 1 valid, 0 not.
    pub valid_schedule_minutes: Vec<u8>,
}

#[derive(Debug)]
struct PoolSeries {
    name: String,
    nodes: u32,
    capacity: Resource,
    usage_sum: f64,
    usage_last: f64,
    pending: Resource,
    samples: u64,
    minutes: BTreeMap<u64, bool>,
}

/// Collects the per-pool figures at each metrics sample (nothing while the scheduler has no
/// pools).
#[derive(Debug, Default)]
pub(crate) struct PoolRecorder {
    pools: Vec<PoolSeries>,
    index: BTreeMap<String, usize>,
    aware_minutes: BTreeMap<u64, bool>,
}

impl PoolRecorder {
    pub(crate) fn sample(&mut self, now: Time, sched: &Scheduler) {
        let stats = sched.pool_stats();
        if stats.is_empty() {
            return;
        }
        for s in &stats {
            let i = *self.index.entry(s.name.clone()).or_insert_with(|| {
                self.pools.push(PoolSeries {
                    name: s.name.clone(),
                    nodes: 0,
                    capacity: Resource::ZERO,
                    usage_sum: 0.0,
                    usage_last: 0.0,
                    pending: Resource::ZERO,
                    samples: 0,
                    minutes: BTreeMap::new(),
                });
                self.pools.len() - 1
            });
            let p = &mut self.pools[i];
            p.nodes = s.nodes;
            p.capacity = s.capacity;
            p.usage_last = dominant_share(s.used, s.capacity);
            p.usage_sum += p.usage_last;
            p.samples += 1;
            p.pending = Resource::ZERO;
        }
        let (index, pools) = (&self.index, &mut self.pools);
        sched.visit_leaf_queues(|q| {
            if let Some(p) = index.get(q.pool).and_then(|i| pools.get_mut(*i)) {
                // Demand is capped at the max share: demand - usage is min(pending, max quota).
                p.pending = p.pending.saturating_add(q.demand.saturating_sub(q.usage));
            }
        });
        let minute = schedule_minute(now.as_millis());
        let mut all_valid = true;
        for p in &mut self.pools {
            // DEFAULT without nodes and without demand is no pool anyone can be judged on.
            if p.name.is_empty() && p.nodes == 0 && !p.pending.any_positive() {
                continue;
            }
            let valid = valid_schedule(p.usage_last, p.pending.any_positive());
            *p.minutes.entry(minute).or_insert(true) &= valid;
            all_valid &= valid;
        }
        *self.aware_minutes.entry(minute).or_insert(true) &= all_valid;
    }

    /// Each pool's figures, and the pool-aware cluster validSchedule per minute (`None`
    /// without pools).
    pub(crate) fn finish(self) -> (Vec<PoolFigures>, Option<f64>) {
        if self.pools.is_empty() {
            return (Vec::new(), None);
        }
        let figures = self
            .pools
            .into_iter()
            .map(|p| {
                let minutes: Vec<u8> = p.minutes.values().map(|v| u8::from(*v)).collect();
                PoolFigures {
                    capacity_mb: p.capacity.memory_mb(),
                    capacity_vcores: p.capacity.vcores(),
                    usage_mean: if p.samples > 0 {
                        p.usage_sum / p.samples as f64
                    } else {
                        0.0
                    },
                    usage_last: p.usage_last,
                    pending_mb: p.pending.memory_mb(),
                    pending_vcores: p.pending.vcores(),
                    valid_schedule_per_min: fraction_valid(&minutes),
                    valid_schedule_minutes: minutes,
                    name: p.name,
                    nodes: p.nodes,
                }
            })
            .collect();
        let aware: Vec<u8> = self.aware_minutes.values().map(|v| u8::from(*v)).collect();
        (figures, Some(fraction_valid(&aware)))
    }
}

/// The fraction of minutes marked 1 (1.0 when there are none).
pub(crate) fn fraction_valid(minutes: &[u8]) -> f64 {
    if minutes.is_empty() {
        1.0
    } else {
        minutes.iter().map(|v| f64::from(*v)).sum::<f64>() / minutes.len() as f64
    }
}
