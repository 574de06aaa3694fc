//! The Fair Scheduler's side of the plan follower (`follower.rs`; Hadoop's
//! `FairSchedulerPlanFollower` and `FairScheduler.setEntitlement`): reservation leaves are
//! ordinary leaves under the plan queue, kept from queue collection while the follower holds
//! them; an entitlement is the leaf's weight. Hadoop's Fair Scheduler drops the maximum ("TODO
//! Does MaxCapacity need to be set for fairScheduler ?"); Weft sets a gang reservation's
//! maximum as its leaf's max share (time-aware-demands spec B6), and under
//! `weft.reservation.enforce=guarantee` the reserved amount as its min share (spec B7): the
//! two places it parts from Hadoop's Fair follower.

use crate::lanes::Resource;
use weft_config::{ConfiguredResource, ReservationEnforcement};

use crate::fair::queues::resolve_max_share;
use crate::fair::FairEngine;
use crate::queues::QueueId;

impl FairEngine {
    /// The follower's leaf `name`, created as a placement would create it, and marked so the
    /// queue collection leaves it alone (a reload clears the mark; the follower runs again
    /// right after every reload).
    pub(crate) fn plan_leaf(&mut self, name: &str) -> Result<QueueId, String> {
        let config = std::sync::Arc::clone(&self.rules.config);
        let caps = self.share_capacities();
        let leaf = self
            .queues
            .get_or_create_leaf(name, &config.allocations, &caps)
            .map_err(|e| e.to_string())?;
        let q = self.queues.get_mut(leaf);
        if !q.configured {
            q.configured = true;
            self.rules.steady_dirty = true;
        }
        Ok(leaf)
    }

    /// Hadoop's `FairSchedulerPlanFollower.getPlanResources`: the plan queue's steady fair
    /// share. The `fair` policy shares memory only, so a type the share leaves at 0 gets the
    /// cluster's amount scaled by the share's memory fraction (as rm-core's plan capacity
    /// does), so that a gang leaf's max share never blocks on vcores.
    pub(crate) fn plan_resources(&mut self, plan: QueueId) -> Resource {
        if self.rules.steady_dirty {
            self.compute_steady_shares();
        }
        let share = self.queues.get(plan).rules_cold.steady_fair_share;
        let cluster = self.cluster;
        let (part, whole) = (
            i128::from(share.memory_mb()),
            i128::from(cluster.memory_mb()),
        );
        let mut out = share;
        for i in 0..crate::lanes::MAX_RESOURCE_TYPES {
            if share.get(i) == 0 && cluster.get(i) > 0 && whole > 0 {
                let scaled = i128::from(cluster.get(i)) * part / whole;
                out.set(i, i64::try_from(scaled).unwrap_or(i64::MAX));
            }
        }
        out
    }

    /// `setEntitlement`: the weight is the capacity fraction; a maximum below the whole plan
    /// caps the leaf's max share at that fraction of the plan's resources. Under
    /// `weft.reservation.enforce=guarantee` a reservation leaf (`reserved` given) also gets
    /// min share = reserved(now) with a min-share preemption timeout of 0 (spec §3.3 "Queue
    /// carrier"): preemption, when on, then takes the reserved amount back at the next update
    /// instead of waiting for fair-share convergence.
    pub(crate) fn set_entitlement(
        &mut self,
        leaf: QueueId,
        capacity: f64,
        max: f64,
        resources: Resource,
        reserved: Option<Resource>,
    ) {
        let caps = self.share_capacities();
        let default_max = self.rules.config.allocations.queue_max_resources_default;
        let guarantee = match reserved {
            Some(amount)
                if self.rules.config.properties.reservation_enforcement
                    == ReservationEnforcement::Guarantee =>
            {
                Some(amount)
            }
            _ => None,
        };
        let parent_child_max = self
            .queues
            .get(leaf)
            .parent
            .and_then(|p| self.queues.get(p).rules_cold.max_child_cfg);
        let q = self.queues.get_mut(leaf);
        let max_cfg = if max < 1.0 {
            ConfiguredResource::Absolute(crate::lanes::outward(resources.mul_trunc(max)))
        } else {
            parent_child_max.unwrap_or(default_max)
        };
        let reweighted = q.rules.weight != capacity;
        let recapped = q.rules_cold.max_share_cfg != max_cfg;
        let guaranteed = guarantee.is_some_and(|amount| {
            q.rules.min_share != amount || q.rules_cold.preemption.min_share_timeout_ms != 0
        });
        if !reweighted && !recapped && !guaranteed {
            return;
        }
        q.rules.weight = capacity;
        q.rules_cold.max_share_cfg = max_cfg;
        if let Some(amount) = guarantee {
            q.rules.min_share = amount;
            q.rules_cold.preemption.min_share_timeout_ms = 0;
        }
        resolve_max_share(q, &caps);
        if recapped || guaranteed {
            // The max share is at least the min share.
            self.queues.refresh_path_bounds();
        }
        self.rules.steady_dirty = true;
        // Weights are in the queues' keys: the order is rebuilt before the next walk.
        self.order_dirty = true;
    }
}
