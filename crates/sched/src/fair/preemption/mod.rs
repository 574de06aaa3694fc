//! Fair Scheduler preemption (preemption spec Parts A and B) on top of starvation
//! (`fair/starvation.rs`):
//! * `marks`: Fair's side of the layer shared with Capacity (`objects/preemption.rs`: marking
//!   a container (the warning), killing it through the ordinary completion path, the AM's
//!   strict contract), plus the preempted counts;
//! * `targeted`: Hadoop 3.x (Part A): containers chosen for one starved app on one node,
//!   the node earmarked for it, the batch killed by a timer after `waitTimeBeforeKill`;
//! * `handoff`: the earmarks and their hand-off at the node's heartbeat (A.8);
//! * `global`: Hadoop 2.7 (Part B), called from the same place in the update;
//! * `foreign`: resource pools' foreign containers killed at their pool's timeout.
//!
//! The update runs the strategy's pass right after starvation (spec §0.4); kills already due
//! (a `waitTimeBeforeKill` of 0) happen at the end of the update, before any heartbeat of
//! the same instant.

pub(crate) mod foreign;
pub(crate) mod global;
pub(crate) mod handoff;
pub(crate) mod marks;
pub(crate) mod targeted;

use weft_config::PreemptionStrategy;
use weft_types::{AppId, ContainerId, NodeId, Time};

use crate::fair::FairEngine;

/// The preemption state of the Fair Scheduler.
#[derive(Clone, Debug, Default)]
pub(crate) struct PreemptionState {
    /// Apps' starvation state, by id (only apps seen while preemption was on).
    pub(crate) starvation: crate::fair::starvation::AppStarvationTable,
    pub(crate) marks: marks::Marks,
    pub(crate) earmarks: handoff::Earmarks,
    /// Apps the current update offered to the starved-app set (spec A.4), in the order they
    /// were first offered; the targeted pass takes them.
    pub(crate) starved: Vec<AppId>,
    /// The starvation pass's reusable buffer: a leaf's candidates with their order keys.
    pub(crate) scratch_keys: Vec<(crate::order::key::SortKey, AppId)>,
    /// The global strategy's clocks, last check and warned list.
    pub(crate) global: global::GlobalState,
    /// Foreign containers' clocks (resource-pools spec §10).
    pub(crate) foreign: foreign::ForeignClocks,
}

/// Containers marked together, killed together (targeted strategy, spec A.7).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct KillBatch {
    /// In warning order.
    pub(crate) containers: Vec<ContainerId>,
    /// The starved app's leaf queue (the `preempted` decision's `for_queue`).
    pub(crate) for_queue: String,
}

impl FairEngine {
    /// The preemption pass of the update, after starvation (call only with preemption on).
    pub(crate) fn preemption_pass(&mut self, now: Time) {
        match self.rules.config.properties.preemption_strategy {
            PreemptionStrategy::Targeted => targeted::preemption_round(self, now),
            PreemptionStrategy::Global => global::preemption_round(self, now),
        }
        self.rules.preemption.starved.clear();
        // A batch due now (`waitTimeBeforeKill` 0) dies before this instant's heartbeats.
        if self.timers.next_due().is_some_and(|at| at <= now) {
            self.fire_timers(now);
        }
    }

    /// Offers an app to the starved-app set of this update (spec A.4): once per update.
    pub(crate) fn offer_starved(&mut self, app: AppId, already_offered: bool) {
        if !already_offered {
            self.rules.preemption.starved.push(app);
        }
    }

    /// A kill batch came due (spec A.8): each container still live is killed, in warning
    /// order; those that ended since are skipped.
    pub(crate) fn kill_batch(&mut self, batch: KillBatch) {
        for c in batch.containers {
            self.kill_for_preemption(c, &batch.for_queue);
        }
    }

    /// The node left: its earmarks go with it (its containers, and so their marks, went
    /// first).
    pub(crate) fn forget_node_preemption(&mut self) {
        let earmarks = &mut self.rules.preemption.earmarks;
        if earmarks.is_empty() {
            return;
        }
        let nodes = &self.nodes;
        earmarks.retain_nodes(|n: NodeId| nodes.contains_key(&n));
    }

    /// Preemption state that disagrees with the objects, in words (for `verify`).
    pub(crate) fn verify_preemption(&self, drift: &mut Vec<String>) {
        self.verify_marks(drift);
        self.verify_earmarks(drift);
        for a in self.apps.values() {
            let state = self.rules.preemption.starvation.by_app.get(&a.id);
            if state.is_some_and(|s| s.next_check > Time::ZERO) && !a.rules.next_check_set {
                drift.push(format!(
                    "app {}: a next starvation check is set but not flagged",
                    a.id
                ));
            }
            let stored = state.is_some_and(|s| !s.min_share_starvation.is_zero());
            if a.rules.min_share_starved != stored {
                drift.push(format!(
                    "app {}: cached min-share flag {}, stored min-share starvation {}",
                    a.id,
                    a.rules.min_share_starved,
                    if stored { "set" } else { "none" }
                ));
            }
        }
    }
}

#[cfg(all(test, not(weft_two_lanes)))]
mod tests;
