//! Whether each heartbeat's walks stay inside the heartbeating node's resource pool
//! (resource-pools spec §14 scenario 31): after every heartbeat the widest walk it made (queues
//! entered, root included) is compared with the queues of the node's pool (root, the pool's
//! top-level queues and everything below them). Without pools the "pool" is the whole tree.
//!
//! A walk enters each queue at most once and stops at the first that allocates, so the widest
//! walk is usually the tree's depth; the bound matters on heartbeats that search (asks that
//! fit few nodes), where a walk without pools could enter every queue of the cluster.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use weft_sched::Scheduler;
use weft_types::NodeId;

/// The figures of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct WalkBoundFigures {
    /// Heartbeats checked.
    pub heartbeats: u64,
    /// Walks from the root over the run (one per container assigned, plus the one per
    /// heartbeat that finds nothing more).
    pub walks: u64,
    /// Queues entered per walk, mean.
    pub queues_visited_per_walk: f64,
    /// The most queues one walk entered.
    pub widest_walk: u64,
    /// The queues of the heartbeating node's pool, mean over heartbeats: the most a walk may
    /// enter (without pools, the whole tree).
    pub pool_queues_per_heartbeat: f64,
    /// Queues in the tree (root included).
    pub tree_queues: u64,
    /// Heartbeats with a walk wider than the node's pool (must be 0).
    pub walks_beyond_pool: u64,
}

/// Checks each heartbeat against its node's pool.
#[derive(Debug, Default)]
pub(crate) struct WalkBound {
    /// Queues per pool name (`""`: DEFAULT, or the whole tree without pools), rebuilt at every
    /// sample so queues made by placement rules are counted.
    pool_queues: BTreeMap<String, u64>,
    tree_queues: u64,
    fresh: bool,
    heartbeats: u64,
    widest_walk: u64,
    pool_queue_sum: u64,
    beyond_pool: u64,
}

impl WalkBound {
    /// The queue tree may have changed: count the pools' queues again before the next check.
    pub(crate) fn stale(&mut self) {
        self.fresh = false;
    }

    fn count(&mut self, sched: &Scheduler) {
        let mut per_pool: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let mut tree: BTreeSet<String> = BTreeSet::new();
        sched.visit_leaf_queues(|leaf| {
            let set = per_pool.entry(leaf.pool.to_string()).or_default();
            let mut end = 0;
            for part in leaf.name.split('.') {
                end += part.len();
                let prefix = &leaf.name[..end];
                set.insert(prefix.to_string());
                tree.insert(prefix.to_string());
                end += 1;
            }
        });
        self.pool_queues = per_pool
            .into_iter()
            .map(|(pool, queues)| (pool, queues.len() as u64))
            .collect();
        self.tree_queues = tree.len() as u64;
        self.fresh = true;
    }

    /// After `node`'s heartbeat.
    pub(crate) fn heartbeat(&mut self, sched: &Scheduler, node: NodeId) {
        if !self.fresh {
            self.count(sched);
        }
        let widest = sched.last_heartbeat_widest_walk();
        let bound = match sched.node_pool(node) {
            Some(pool) => self.pool_queues.get(pool).copied().unwrap_or(1),
            None => self.tree_queues,
        };
        self.heartbeats += 1;
        self.pool_queue_sum += bound;
        self.widest_walk = self.widest_walk.max(widest);
        if widest > bound {
            self.beyond_pool += 1;
        }
    }

    /// The figures, given the scheduler's walk counters at the end.
    pub(crate) fn finish(&self, walks: u64, queues_visited: u64) -> WalkBoundFigures {
        let ratio = |n: u64, d: u64| if d > 0 { n as f64 / d as f64 } else { 0.0 };
        WalkBoundFigures {
            heartbeats: self.heartbeats,
            walks,
            queues_visited_per_walk: ratio(queues_visited, walks),
            widest_walk: self.widest_walk,
            pool_queues_per_heartbeat: ratio(self.pool_queue_sum, self.heartbeats),
            tree_queues: self.tree_queues,
            walks_beyond_pool: self.beyond_pool,
        }
    }
}
