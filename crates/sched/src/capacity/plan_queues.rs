//! The Capacity Scheduler's side of the plan follower (`follower.rs`; Hadoop's
//! `CapacitySchedulerPlanFollower`, `PlanQueue`, `ReservationQueue`): a `reservable` leaf of
//! the file runs as a parent with a `<name>-default` leaf
//! (`CapacityConfig::expand_plan_queues`, at startup and on every refresh), and the
//! follower's reservation leaves join the file and the tree as auto-created leaves do
//! (`refresh::apply_file`, which re-derives every capacity), so a reservation leaf is an
//! ordinary leaf for the walk, user and AM limits and reports. An entitlement is the leaf's
//! capacity and maximum capacity as percentages of the plan queue. A leaf the follower
//! removed from the tree leaves the file at the follower's next call.

use crate::lanes::Resource;
use weft_config::capacity::{CapacityValue, MaxCapacityValue};

use crate::queues::QueueId;

use super::CapacityEngine;

impl CapacityEngine {
    /// The follower's leaf `name` (a full path under a plan queue), created with capacity 0
    /// when missing.
    pub(crate) fn cs_plan_leaf(&mut self, name: &str) -> Result<QueueId, String> {
        self.forget_removed_plan_leaves();
        if let Some(q) = self.queues.lookup(name) {
            return if self.queues.get(q).is_leaf {
                Ok(q)
            } else {
                Err(format!("{name} is a parent queue"))
            };
        }
        let (plan, leaf) = name
            .rsplit_once('.')
            .ok_or_else(|| format!("{name} has no plan queue"))?;
        let mut file = self.rules.file.clone();
        file.add_plan_leaf(plan, leaf)?;
        self.apply_plan_file(file)?;
        self.queues
            .lookup(name)
            .ok_or_else(|| format!("{name} was not created"))
    }

    /// Where a submission naming queue `q` goes: a plan queue's default leaf for a plan
    /// queue (Hadoop's `CapacityScheduler` appends `-default`; an app with a reservation then
    /// goes on to the reservation's leaf, `Engine::reservation_leaf`), else `q`.
    pub(crate) fn plan_default_of(&self, q: QueueId) -> QueueId {
        let queue = self.queues.get(q);
        if queue.is_leaf || !self.rules.file.is_plan_queue(&queue.name) {
            return q;
        }
        self.queues
            .lookup(&crate::follower::default_leaf_of(&queue.name))
            .unwrap_or(q)
    }

    /// Hadoop's `getPlanResources`: the cluster times the plan queue's absolute capacity.
    pub(crate) fn cs_plan_resources(&self, plan: QueueId) -> Resource {
        self.cluster
            .mul_trunc(self.queues.get(plan).rules_cold.abs_capacity)
    }

    /// `setEntitlement`: capacity and maximum capacity, as fractions of the plan queue.
    pub(crate) fn cs_set_entitlement(&mut self, leaf: QueueId, capacity: f64, max: f64) {
        self.forget_removed_plan_leaves();
        let index = self.queues.get(leaf).rules_cold.index;
        let mut file = self.rules.file.clone();
        let Some(q) = file.queues.get_mut(index) else {
            return;
        };
        // Percentages in f32 as the file holds them (Hadoop's queue capacities are floats).
        let capacity = CapacityValue::Percent((capacity * 100.0) as f32);
        let max = MaxCapacityValue::Percent((max * 100.0) as f32);
        if q.capacity == capacity && q.maximum_capacity == max {
            return;
        }
        q.capacity = capacity;
        q.maximum_capacity = max;
        // Only capacities change: `apply_file` cannot refuse this file.
        let _ = self.apply_plan_file(file);
    }

    /// Drops from the file the reservation leaves the follower removed from the tree.
    fn forget_removed_plan_leaves(&mut self) {
        let gone: Vec<String> = self
            .rules
            .file
            .plan_leaves()
            .into_iter()
            .map(|(plan, leaf)| format!("{plan}.{leaf}"))
            .filter(|path| self.queues.lookup(path).is_none())
            .collect();
        if gone.is_empty() {
            return;
        }
        let mut file = self.rules.file.clone();
        for path in &gone {
            file.remove_plan_leaf(path);
        }
        // The tree no longer has them, so the refresh compares like with like.
        self.rules.file = file.clone();
        let _ = self.apply_plan_file(file);
    }

    fn apply_plan_file(
        &mut self,
        file: weft_config::capacity::CapacityConfig,
    ) -> Result<(), String> {
        let (maximum, priority) = (self.properties.maximum_allocation, self.rules.max_priority);
        self.apply_file(file, crate::lanes::outward(maximum), priority)
            .map_err(|e| e.to_string())
    }
}
