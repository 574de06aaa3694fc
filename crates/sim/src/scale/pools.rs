//! Per resource pool figures of a scale run (resource-pools spec §12): each pool's usage and
//! valid pending demand over time, validSchedule judged on the pool alone, and the pool-aware
//! cluster figure (a minute is valid when every pool's is).
//!
//! A pool's validSchedule is seed 003's definition applied to the pool: its usage (dominant
//! share of its own capacity) is at least [`VALID_USAGE`](super::metrics::VALID_USAGE), or
//! nothing valid is pending in its queues (min(pending, max quota) summed over them).
//!
//! Stranded capacity (spec §12) is what isolation costs: a pool's free resources while it has
//! nothing valid pending and some other pool has valid pending demand, in resource-seconds,
//! summed between samples from the state at the earlier one. §12's text also asks the other
//! pool to be below 90% usage, but its acceptance scenario 27 counts pool2's and DEFAULT's
//! free room while a SATURATED pool1 has demand pending; the scenario's reading is taken (a
//! saturated pool with demand is exactly where idle room elsewhere would have helped).
//! Foreign usage is the part of a pool's usage held by other pools' apps left there by a host
//! move.

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
    /// Free memory stranded in this pool, in MB-seconds (see the module's note).
    pub stranded_mb_seconds: f64,
    /// Free vcores stranded in this pool, in vcore-seconds.
    pub stranded_vcore_seconds: f64,
    /// Memory (MB) of foreign containers on its nodes: the largest sampled, and the last.
    pub foreign_used_mb_max: i64,
    /// See `foreign_used_mb_max`.
    pub foreign_used_mb_last: i64,
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
    /// Free resources stranded at the last sample (accrued until the next one).
    stranded_now: Resource,
    /// Accrued in resource-milliseconds, exact (converted to seconds at the end).
    stranded_mb_ms: i128,
    stranded_vcore_ms: i128,
    foreign_mb_max: i64,
    foreign_mb_last: i64,
}

/// Collects the per-pool figures at each metrics sample (nothing while the scheduler has no
/// pools).
#[derive(Debug, Default)]
pub(crate) struct PoolRecorder {
    pools: Vec<PoolSeries>,
    index: BTreeMap<String, usize>,
    aware_minutes: BTreeMap<u64, bool>,
    last_sample: Option<Time>,
}

impl PoolRecorder {
    pub(crate) fn sample(&mut self, now: Time, sched: &Scheduler) {
        let stats = sched.pool_stats();
        if stats.is_empty() {
            return;
        }
        let ms = i128::from(
            self.last_sample
                .map_or(0, |t| now.as_millis().saturating_sub(t.as_millis())),
        );
        self.last_sample = Some(now);
        for p in &mut self.pools {
            p.stranded_mb_ms += i128::from(p.stranded_now.memory_mb()) * ms;
            p.stranded_vcore_ms += i128::from(p.stranded_now.vcores()) * ms;
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
                    stranded_now: Resource::ZERO,
                    stranded_mb_ms: 0,
                    stranded_vcore_ms: 0,
                    foreign_mb_max: 0,
                    foreign_mb_last: 0,
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
            p.stranded_now = s.capacity.saturating_sub(s.used).clamp_non_negative();
            p.foreign_mb_last = s.foreign_used.memory_mb();
            p.foreign_mb_max = p.foreign_mb_max.max(p.foreign_mb_last);
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
        let mut waiting = 0usize;
        for p in &mut self.pools {
            // DEFAULT without nodes and without demand is no pool anyone can be judged on.
            if p.name.is_empty() && p.nodes == 0 && !p.pending.any_positive() {
                continue;
            }
            let valid = valid_schedule(p.usage_last, p.pending.any_positive());
            *p.minutes.entry(minute).or_insert(true) &= valid;
            all_valid &= valid;
            waiting += usize::from(p.pending.any_positive());
        }
        *self.aware_minutes.entry(minute).or_insert(true) &= all_valid;
        // Free room is stranded where nothing valid waits while some (other) pool has
        // valid demand waiting.
        for p in &mut self.pools {
            if p.pending.any_positive() || waiting == 0 {
                p.stranded_now = Resource::ZERO;
            }
        }
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
                    stranded_mb_seconds: p.stranded_mb_ms as f64 / 1000.0,
                    stranded_vcore_seconds: p.stranded_vcore_ms as f64 / 1000.0,
                    foreign_used_mb_max: p.foreign_mb_max,
                    foreign_used_mb_last: p.foreign_mb_last,
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

#[cfg(test)]
mod tests {
    use super::*;
    use weft_config::alloc_file::parse_allocations;
    use weft_sched::{AskTag, ContainerAsk, Event, SchedulerConfig};
    use weft_types::{AppId, NodeId, ResourceTypes};

    /// Resource pools §14 F27: pool1 (a1, a2) saturated with demand pending, pool2 (b1) and
    /// DEFAULT (u1) idle with nothing pending, over one virtual minute: each pool's
    /// validSchedule is 1 (pool1 is above 90%, the others have nothing pending), so is the
    /// pool-aware figure, and the stranded capacity is the free room of pool2 and DEFAULT for
    /// the minute: 8192 MB x 60 s = 491,520 MB-s each (8 vcores x 60 = 480 vcore-s), none in
    /// pool1.
    #[test]
    fn idle_pools_strand_their_room_while_another_has_demand() {
        let xml = r#"<allocations>
          <resourcePools unboundQueues="defaultPartition">
            <resourcePool name="pool1"><host>a1</host><host>a2</host></resourcePool>
            <resourcePool name="pool2"><host>b1</host></resourcePool>
          </resourcePools>
          <queue name="pool1_ads"/>
          <queue name="pool2_etl"/>
        </allocations>"#;
        let (allocations, _) =
            parse_allocations(xml, &ResourceTypes::default()).expect("valid allocations");
        let mut s = Scheduler::new(
            SchedulerConfig::fair(allocations, Default::default()),
            Default::default(),
        );
        let handle = |s: &mut Scheduler, e: Event| {
            s.handle(Time(0), e).expect("accepted");
            while s.poll_decision().is_some() {}
        };
        for (id, host) in [(1, "a1"), (2, "a2"), (3, "b1"), (4, "u1")] {
            handle(
                &mut s,
                Event::NodeAdded {
                    node: NodeId(id),
                    host: host.into(),
                    port: 0,
                    rack: "/r".into(),
                    capability: Resource::new(8192, 8),
                },
            );
        }
        s.submit(
            Time(0),
            AppId(1),
            "alice".into(),
            Some("pool1_ads".into()),
            None,
        )
        .expect("new id");
        let ask = ContainerAsk {
            priority: 1,
            resources: Resource::new(1024, 1),
            count: 20,
            hosts: vec![],
            racks: vec![],
            relax_locality: true,
            tag: AskTag::NONE,
        };
        handle(&mut s, Event::Ask { app: AppId(1), ask });
        handle(&mut s, Event::Update);
        for _ in 0..8 {
            for node in 1..=4 {
                handle(&mut s, Event::NodeHeartbeat { node: NodeId(node) });
            }
        }
        handle(&mut s, Event::Update);
        let mut recorder = PoolRecorder::default();
        recorder.sample(Time(0), &s);
        recorder.sample(Time(30_000), &s);
        recorder.sample(Time(59_999), &s);
        recorder.sample(Time(60_000), &s);
        let (figures, aware) = recorder.finish();
        let by_name = |n: &str| figures.iter().find(|p| p.name == n).expect("listed");
        let pool1 = by_name("pool1");
        assert_eq!(pool1.usage_last, 1.0, "16 of 16 slots: {pool1:?}");
        assert_eq!(pool1.pending_mb, 4096, "20 asked, 16 run");
        assert_eq!(pool1.stranded_mb_seconds, 0.0);
        for name in ["pool2", ""] {
            let p = by_name(name);
            assert_eq!(p.valid_schedule_minutes, [1], "{name}: nothing pending");
            assert_eq!(p.stranded_mb_seconds, 491_520.0, "{name}");
            assert_eq!(p.stranded_vcore_seconds, 480.0, "{name}");
            assert_eq!(p.foreign_used_mb_max, 0);
        }
        assert_eq!(pool1.valid_schedule_minutes, [1], "saturated");
        assert_eq!(aware, Some(1.0));
    }
}
